/* netferret's core on cases with known answers (no DPDK): EMD, SRM's
 * properties on images made here, the LSH tables, the database's checks,
 * and JPEGs made here decoded, cut short and damaged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nf_db.h"
#include "nf_query.h"

static int failures;

#define CHECK(c)                                                                              \
	do {                                                                                  \
		if (!(c)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			failures++;                                                           \
		}                                                                             \
	} while (0)

static uint64_t rng = 12345;

static double
rnd(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng >> 11) * 0x1.0p-53;
}

static struct nf_emd_work emd;

static void
test_emd(void)
{
	float a[NF_DIM * 40] = { 0 }, b[NF_DIM * 40] = { 0 }, wa[40], wb[40];
	/* one unit of mass at 0 against halves at 1 and 3 (first dimension) */
	wa[0] = 1.0f;
	b[0] = 1.0f;
	b[NF_DIM] = 3.0f;
	wb[0] = wb[1] = 0.5f;
	CHECK(fabs(nf_emd(&emd, a, wa, 1, b, wb, 2) - 2.0) < 1e-12);
	/* crossing is never cheaper: {0, 10} to {1, 11} moves each by 1 */
	a[0] = 0.0f;
	a[NF_DIM] = 10.0f;
	wa[0] = wa[1] = 0.5f;
	b[0] = 11.0f;
	b[NF_DIM] = 1.0f;
	CHECK(fabs(nf_emd(&emd, a, wa, 2, b, wb, 2) - 1.0) < 1e-12);
	/* random sets: zero against itself, symmetric, a weighted mean of
	 * ground distances (between the closest and the farthest pair) */
	for (int t = 0; t < 20; t++) {
		unsigned n = 1 + (unsigned)(rnd() * 39), m = 1 + (unsigned)(rnd() * 39);
		for (unsigned i = 0; i < NF_DIM * 40; i++) {
			a[i] = (float)rnd();
			b[i] = (float)(rnd() + 0.3);
		}
		for (unsigned i = 0; i < 40; i++) {
			wa[i] = (float)(0.1 + rnd());
			wb[i] = (float)(0.1 + rnd());
		}
		CHECK(nf_emd(&emd, a, wa, n, a, wa, n) < 1e-9);
		double ab = nf_emd(&emd, a, wa, n, b, wb, m), ba = nf_emd(&emd, b, wb, m, a, wa, n);
		CHECK(fabs(ab - ba) < 1e-9 * ab);
		double lo = INFINITY, hi = 0;
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < m; j++) {
				double d = sqrt(nf_dist2(a + i * NF_DIM, b + j * NF_DIM));
				lo = d < lo ? d : lo;
				hi = d > hi ? d : hi;
			}
		CHECK(ab >= lo - 1e-12 && ab <= hi + 1e-12);
	}
	CHECK(emd.capped == 0);
}

static struct nf_work w;

/* every region 4-connected, at least NF_MIN_REGION pixels, labels in
 * raster order of first pixels */
static void
check_partition(const uint8_t *labels, unsigned n)
{
	static uint32_t count[256], queue[NF_PIXELS];
	static uint8_t seen[NF_PIXELS];
	int next = 0;
	memset(count, 0, sizeof(count));
	memset(seen, 0, sizeof(seen));
	for (unsigned p = 0; p < NF_PIXELS; p++) {
		CHECK(labels[p] < n);
		if (labels[p] == next)
			next++;
		CHECK(labels[p] < next);
		count[labels[p]]++;
	}
	CHECK((unsigned)next == n);
	for (unsigned p = 0; p < NF_PIXELS; p++) {
		if (seen[p])
			continue;
		/* the component of p must be its whole region */
		unsigned head = 0, tail = 0, got = 0;
		queue[tail++] = p;
		seen[p] = 1;
		while (head < tail) {
			unsigned q = queue[head++], x = q % NF_SIDE, y = q / NF_SIDE;
			got++;
			unsigned nb[4] = { x > 0 ? q - 1 : q, x + 1 < NF_SIDE ? q + 1 : q,
				y > 0 ? q - NF_SIDE : q, y + 1 < NF_SIDE ? q + NF_SIDE : q };
			for (int k = 0; k < 4; k++)
				if (!seen[nb[k]] && labels[nb[k]] == labels[p]) {
					seen[nb[k]] = 1;
					queue[tail++] = nb[k];
				}
		}
		CHECK(got == count[labels[p]]);
		CHECK(got >= NF_MIN_REGION);
	}
}

static void
test_srm(void)
{
	/* flat: one region, features of a flat image */
	memset(w.rgb, 90, sizeof(w.rgb));
	nf_query_segment(&w);
	CHECK(w.n_regions == 1);
	CHECK(w.size[0] == NF_PIXELS && fabs(w.weight[0] - 1.0f) < 1e-7);
	CHECK(w.vec[1] == 0.0f && w.vec[2] == 0.0f); /* no spread in H */
	/* four flat quadrants of far-apart colours: four regions, known labels */
	for (unsigned p = 0; p < NF_PIXELS; p++) {
		unsigned x = p % NF_SIDE, y = p / NF_SIDE, q = (y >= 64) * 2 + (x >= 64);
		static const uint8_t col[4][3] = { { 200, 20, 20 }, { 20, 200, 20 },
			{ 20, 20, 200 }, { 220, 220, 40 } };
		memcpy(w.rgb + 3 * p, col[q], 3);
	}
	nf_query_segment(&w);
	CHECK(w.n_regions == 4);
	for (unsigned p = 0; p < NF_PIXELS; p++) {
		unsigned x = p % NF_SIDE, y = p / NF_SIDE;
		CHECK(w.labels[p] == (y >= 64) * 2 + (x >= 64));
	}
	/* noise: whatever the regions, they are a proper partition */
	for (int t = 0; t < 3; t++) {
		for (unsigned i = 0; i < sizeof(w.rgb); i++)
			w.rgb[i] = (uint8_t)(rnd() * (t == 0 ? 256 : 40) +
				(t == 2 ? (i / 3 % NF_SIDE) : 0));
		nf_query_segment(&w);
		check_partition(w.labels, w.n_regions);
		double s = 0;
		for (unsigned r = 0; r < w.n_regions; r++)
			s += w.weight[r];
		CHECK(fabs(s - 1.0) < 1e-5);
	}
}

static void
test_db_and_lsh(void)
{
	enum {
		N = 50
	};
	static float vec[N * 3 * NF_DIM], wt[N * 3];
	static uint32_t sz[N * 3];
	static char names[N][16];
	struct nf_db_image img[N];
	for (unsigned i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "img%u", i);
		for (unsigned k = 0; k < 3 * NF_DIM; k++)
			vec[i * 3 * NF_DIM + k] = (float)(rnd() * 4);
		for (unsigned k = 0; k < 3; k++) {
			wt[i * 3 + k] = 1.0f / 3;
			sz[i * 3 + k] = 100;
		}
		img[i] = (struct nf_db_image){ names[i], 1 + i % 3, vec + i * 3 * NF_DIM,
			wt + i * 3, sz + i * 3 };
	}
	uint8_t *buf;
	size_t bytes;
	char err[256];
	CHECK(nf_db_build(img, N, 7, 5, &buf, &bytes, err, sizeof(err)) == 0);
	struct nf_db db;
	CHECK(nf_db_parse(&db, buf, bytes, err, sizeof(err)) == 0);
	CHECK(db.n_images == N && strcmp(nf_db_name(&db, 7), "img7") == 0);
	/* every vector is in its own bucket, in every table */
	for (uint32_t v = 0; v < db.n_vectors; v++)
		for (unsigned l = 0; l < db.lsh.L; l++) {
			uint32_t b = nf_lsh_bucket(&db.lsh, l, db.vec + (size_t)v * NF_DIM);
			const uint32_t *st = db.lsh.start + (size_t)l * (db.lsh.H + 1);
			const uint32_t *en = db.lsh.entry + (size_t)l * db.n_vectors;
			int found = 0;
			for (uint32_t e = st[b]; e < st[b + 1]; e++)
				found |= en[e] == v;
			CHECK(found);
		}
	/* a query equal to an image finds it first, at distance 0 */
	CHECK(nf_work_init(&w, &db) == 0);
	memcpy(w.vec, db.vec + (size_t)db.img_first[9] * NF_DIM, sizeof(float) * NF_DIM);
	w.weight[0] = 1.0f;
	w.n_regions = 1; /* image 9 has 1 + 9 % 3 = 1 region */
	struct nf_match top[5];
	nf_query_index(&w, &db, 5);
	unsigned n = nf_query_rank(&w, &db, 5, top);
	CHECK(n >= 1 && top[0].image == 9 && top[0].dist == 0.0);
	char ans[NF_ANSWER_MAX];
	size_t len = nf_format_answer(ans, sizeof(ans), &db, top, 1);
	CHECK(len == strlen("\timg9:0") && memcmp(ans, "\timg9:0", len) == 0);
	nf_work_fini(&w);
	/* damage is refused: a flipped byte, a cut */
	buf[bytes - 100] ^= 1;
	CHECK(nf_db_parse(&db, buf, bytes, err, sizeof(err)) < 0 && strstr(err, "checksum"));
	buf[bytes - 100] ^= 1;
	CHECK(nf_db_parse(&db, buf, bytes - 64, err, sizeof(err)) < 0);
	free(buf);
}

static void
test_decode(void)
{
	static struct nf_db fake = { .n_images = 1, .n_vectors = 1 };
	CHECK(nf_work_init(&w, &fake) == 0);
	/* a JPEG made here: 100 x 60, a colour ramp */
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr e;
	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	unsigned char *out = NULL;
	unsigned long len = 0;
	jpeg_mem_dest(&c, &out, &len);
	c.image_width = 100;
	c.image_height = 60;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_start_compress(&c, TRUE);
	static uint8_t row[300];
	while (c.next_scanline < 60) {
		for (unsigned x = 0; x < 100; x++) {
			row[3 * x] = (uint8_t)(x * 2);
			row[3 * x + 1] = (uint8_t)(c.next_scanline * 4);
			row[3 * x + 2] = 128;
		}
		JSAMPROW r = row;
		jpeg_write_scanlines(&c, &r, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	CHECK(nf_query_features(&w, out, len) == NF_OK);
	CHECK(w.dec.w == 100 && w.dec.h == 60 && w.n_regions >= 1);
	CHECK(nf_query_features(&w, out, len / 2) == NF_ERR_TRUNCATED);
	CHECK(nf_query_features(&w, out, 40) == NF_ERR_TRUNCATED);
	CHECK(nf_query_features(&w, (const uint8_t *)"GIF89a....", 10) == NF_ERR_NOT_JPEG);
	CHECK(nf_query_features(&w, out, 2) == NF_ERR_NOT_JPEG);
	/* damaged in its header: refused, not crashed; and decodes again after */
	uint8_t *bad = malloc(len);
	memcpy(bad, out, len);
	for (unsigned i = 2; i < 200 && i < len; i++)
		bad[i] = (uint8_t)(bad[i] * 7 + 3);
	enum nf_status st = nf_query_features(&w, bad, len);
	CHECK(st == NF_ERR_BAD_JPEG || st == NF_ERR_TRUNCATED || st == NF_ERR_NOT_JPEG ||
		st == NF_OK);
	CHECK(nf_query_features(&w, out, len) == NF_OK);
	free(bad);
	free(out);
	nf_work_fini(&w);
}

int
main(void)
{
	static struct nf_db fake = { .n_images = 1, .n_vectors = 1 };
	test_emd();
	if (nf_work_init(&w, &fake) != 0)
		return 1;
	test_srm();
	nf_work_fini(&w);
	test_db_and_lsh();
	test_decode();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("nf_core: all checks passed\n");
	return 0;
}
