/* nf_db.h: the database file. */
#include "nf_db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

uint64_t
nf_fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The bytes of each section for the header's counts. */
static void
section_bytes(const struct nf_db_header *h, uint64_t *len)
{
	uint64_t lm = (uint64_t)h->L * h->M;
	len[NF_SEC_IMG_FIRST] = 4ull * (h->n_images + 1ull);
	len[NF_SEC_OWNER] = 4ull * h->n_vectors;
	len[NF_SEC_VEC] = 4ull * NF_DIM * h->n_vectors;
	len[NF_SEC_WEIGHT] = 4ull * h->n_vectors;
	len[NF_SEC_SIZE] = 4ull * h->n_vectors;
	len[NF_SEC_NAME_OFF] = 4ull * h->n_images;
	len[NF_SEC_NAMES] = h->names_bytes;
	len[NF_SEC_LSH_A] = 8ull * NF_DIM * lm;
	len[NF_SEC_LSH_B] = 8ull * lm;
	len[NF_SEC_LSH_R] = 4ull * lm;
	len[NF_SEC_START] = 4ull * h->L * ((uint64_t)h->H + 1);
	len[NF_SEC_ENTRY] = 4ull * h->L * h->n_vectors;
}

int
nf_db_parse(struct nf_db *db, const uint8_t *base, size_t bytes, char *err, size_t errlen)
{
	struct nf_db_header h;
	memset(db, 0, sizeof(*db));
	if (bytes < NF_DB_HEADER_BYTES)
		return fail(err, errlen, "%zu bytes: shorter than a header", bytes);
	memcpy(&h, base, sizeof(h));
	if (memcmp(h.magic, NF_DB_MAGIC, 8) != 0)
		return fail(err, errlen, "not a netferret database (magic)");
	if (h.dim != NF_DIM || h.L == 0 || h.L > NF_LSH_MAX_L || h.M == 0 || h.M > NF_LSH_MAX_M ||
		!(h.W > 0.0) || h.H == 0 || (h.H & (h.H - 1)) != 0 || h.n_images == 0 ||
		h.n_vectors < h.n_images || h.n_vectors > (1u << 28))
		return fail(err, errlen,
			"bad parameters (dim %u, L %u, M %u, W %g, H %u, images %u, vectors %u)",
			h.dim, h.L, h.M, h.W, h.H, h.n_images, h.n_vectors);
	if (h.file_bytes != bytes)
		return fail(err, errlen, "%zu bytes, the header says %llu (cut short?)", bytes,
			(unsigned long long)h.file_bytes);
	uint64_t len[NF_SEC_N];
	section_bytes(&h, len);
	for (int s = 0; s < NF_SEC_N; s++)
		if (h.off[s] % 64 != 0 || h.off[s] < NF_DB_HEADER_BYTES || h.off[s] > bytes ||
			len[s] > bytes - h.off[s])
			return fail(err, errlen, "section %d outside the file", s);
	uint64_t sum = nf_fnv1a(base + NF_DB_HEADER_BYTES, bytes - NF_DB_HEADER_BYTES);
	if (sum != h.checksum)
		return fail(err, errlen, "checksum %016llx, the header says %016llx (damaged)",
			(unsigned long long)sum, (unsigned long long)h.checksum);
	db->base = base;
	db->bytes = bytes;
	db->n_images = h.n_images;
	db->n_vectors = h.n_vectors;
	db->seed = h.seed;
	db->img_first = (const uint32_t *)(base + h.off[NF_SEC_IMG_FIRST]);
	db->owner = (const uint32_t *)(base + h.off[NF_SEC_OWNER]);
	db->vec = (const float *)(base + h.off[NF_SEC_VEC]);
	db->weight = (const float *)(base + h.off[NF_SEC_WEIGHT]);
	db->size = (const uint32_t *)(base + h.off[NF_SEC_SIZE]);
	db->name_off = (const uint32_t *)(base + h.off[NF_SEC_NAME_OFF]);
	db->names = (const char *)(base + h.off[NF_SEC_NAMES]);
	struct nf_lsh *x = &db->lsh;
	x->L = h.L;
	x->M = h.M;
	x->W = h.W;
	x->H = h.H;
	x->n_vectors = h.n_vectors;
	x->a = (const double *)(base + h.off[NF_SEC_LSH_A]);
	x->b = (const double *)(base + h.off[NF_SEC_LSH_B]);
	x->r = (const uint32_t *)(base + h.off[NF_SEC_LSH_R]);
	x->start = (const uint32_t *)(base + h.off[NF_SEC_START]);
	x->entry = (const uint32_t *)(base + h.off[NF_SEC_ENTRY]);
	/* what the query path relies on without checking again */
	if (db->img_first[0] != 0 || db->img_first[h.n_images] != h.n_vectors)
		return fail(err, errlen, "image vector ranges do not cover the vectors");
	for (uint32_t i = 0; i < h.n_images; i++) {
		uint32_t k = db->img_first[i + 1] - db->img_first[i];
		if (db->img_first[i + 1] <= db->img_first[i] || k > NF_MAX_REGIONS)
			return fail(
				err, errlen, "image %u: %u regions (1..%d)", i, k, NF_MAX_REGIONS);
		for (uint32_t v = db->img_first[i]; v < db->img_first[i + 1]; v++)
			if (db->owner[v] != i)
				return fail(err, errlen, "vector %u: owner %u, not %u", v,
					db->owner[v], i);
		uint32_t o = db->name_off[i];
		if (o >= h.names_bytes ||
			memchr(db->names + o, '\0',
				(h.names_bytes - o < NF_MAX_NAME + 1 ? h.names_bytes - o
								     : NF_MAX_NAME + 1)) == NULL)
			return fail(err, errlen, "image %u: name not within the names", i);
	}
	for (uint32_t v = 0; v < h.n_vectors; v++)
		if (!(db->weight[v] > 0.0f) || db->size[v] == 0)
			return fail(err, errlen, "vector %u: weight %g, size %u", v,
				(double)db->weight[v], db->size[v]);
	for (unsigned l = 0; l < h.L; l++) {
		const uint32_t *st = x->start + (size_t)l * (h.H + 1);
		const uint32_t *en = x->entry + (size_t)l * h.n_vectors;
		if (st[0] != 0 || st[h.H] != h.n_vectors)
			return fail(err, errlen, "table %u: buckets do not cover the vectors", l);
		for (uint32_t b = 0; b < h.H; b++)
			if (st[b + 1] < st[b])
				return fail(err, errlen,
					"table %u: bucket %u ends before it starts", l, b);
		for (uint32_t k = 0; k < h.n_vectors; k++)
			if (en[k] >= h.n_vectors)
				return fail(err, errlen, "table %u: entry %u out of range", l, k);
	}
	return 0;
}

int
nf_db_open(struct nf_db *db, const char *path, char *err, size_t errlen)
{
	memset(db, 0, sizeof(*db));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return fail(err, errlen, "%s: not a regular, non-empty file", path);
	}
	size_t bytes = (size_t)st.st_size;
	void *p = mmap(NULL, bytes, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return fail(err, errlen, "%s: mmap: %s", path, strerror(errno));
	char why[256];
	if (nf_db_parse(db, p, bytes, why, sizeof(why)) < 0) {
		munmap(p, bytes);
		return fail(err, errlen, "%s: %s", path, why);
	}
	db->mapped = 1;
	return 0;
}

void
nf_db_close(struct nf_db *db)
{
	if (db->mapped && db->base != NULL)
		munmap((void *)(uintptr_t)db->base, db->bytes);
	memset(db, 0, sizeof(*db));
}

int
nf_db_build(const struct nf_db_image *img, uint32_t n, uint64_t seed, unsigned top_k, uint8_t **out,
	size_t *bytes, char *err, size_t errlen)
{
	struct nf_db_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, NF_DB_MAGIC, 8);
	h.dim = NF_DIM;
	h.n_images = n;
	h.L = NF_LSH_L;
	h.M = NF_LSH_M;
	h.W = NF_LSH_W;
	h.seed = seed;
	h.top_k = top_k;
	uint64_t nv = 0, nb = 0;
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strlen(img[i].name);
		if (img[i].n == 0 || img[i].n > NF_MAX_REGIONS || len == 0 || len > NF_MAX_NAME)
			return fail(err, errlen, "image %u (%s): %u regions, name of %zu bytes", i,
				img[i].name, img[i].n, len);
		nv += img[i].n;
		nb += len + 1;
	}
	if (n == 0 || nv > (1u << 28) || nb > UINT32_MAX)
		return fail(err, errlen, "%u images, %llu vectors: out of range", n,
			(unsigned long long)nv);
	h.n_vectors = (uint32_t)nv;
	h.names_bytes = (uint32_t)nb;
	h.H = nf_lsh_buckets(h.n_vectors);
	uint64_t len[NF_SEC_N], at = NF_DB_HEADER_BYTES;
	section_bytes(&h, len);
	for (int s = 0; s < NF_SEC_N; s++) {
		h.off[s] = at;
		at = (at + len[s] + 63) / 64 * 64;
	}
	h.file_bytes = at;
	uint8_t *b = calloc(1, at);
	uint32_t *count = malloc(sizeof(uint32_t) * ((size_t)h.H + 1));
	uint32_t *bucket_of = malloc(sizeof(uint32_t) * (h.n_vectors + 1ull));
	if (b == NULL || count == NULL || bucket_of == NULL) {
		free(b);
		free(count);
		free(bucket_of);
		return fail(err, errlen, "%llu bytes: out of memory", (unsigned long long)at);
	}
	uint32_t *first = (uint32_t *)(b + h.off[NF_SEC_IMG_FIRST]);
	uint32_t *owner = (uint32_t *)(b + h.off[NF_SEC_OWNER]);
	float *vec = (float *)(b + h.off[NF_SEC_VEC]);
	float *weight = (float *)(b + h.off[NF_SEC_WEIGHT]);
	uint32_t *size = (uint32_t *)(b + h.off[NF_SEC_SIZE]);
	uint32_t *name_off = (uint32_t *)(b + h.off[NF_SEC_NAME_OFF]);
	char *names = (char *)(b + h.off[NF_SEC_NAMES]);
	uint32_t v = 0, no = 0;
	for (uint32_t i = 0; i < n; i++) {
		first[i] = v;
		memcpy(vec + (size_t)v * NF_DIM, img[i].vec, sizeof(float) * NF_DIM * img[i].n);
		memcpy(weight + v, img[i].weight, sizeof(float) * img[i].n);
		memcpy(size + v, img[i].size, sizeof(uint32_t) * img[i].n);
		for (unsigned k = 0; k < img[i].n; k++)
			owner[v + k] = i;
		v += img[i].n;
		name_off[i] = no;
		size_t l = strlen(img[i].name) + 1;
		memcpy(names + no, img[i].name, l);
		no += (uint32_t)l;
	}
	first[n] = v;
	double *a = (double *)(b + h.off[NF_SEC_LSH_A]), *bb = (double *)(b + h.off[NF_SEC_LSH_B]);
	uint32_t *r = (uint32_t *)(b + h.off[NF_SEC_LSH_R]);
	nf_lsh_draw(seed, h.L, h.M, h.W, a, bb, r);
	struct nf_lsh x = { .L = h.L,
		.M = h.M,
		.W = h.W,
		.H = h.H,
		.a = a,
		.b = bb,
		.r = r,
		.n_vectors = h.n_vectors };
	nf_lsh_fill(&x, vec, h.n_vectors, (uint32_t *)(b + h.off[NF_SEC_START]),
		(uint32_t *)(b + h.off[NF_SEC_ENTRY]), bucket_of, count);
	free(count);
	free(bucket_of);
	h.checksum = nf_fnv1a(b + NF_DB_HEADER_BYTES, at - NF_DB_HEADER_BYTES);
	memcpy(b, &h, sizeof(h));
	*out = b;
	*bytes = at;
	return 0;
}
