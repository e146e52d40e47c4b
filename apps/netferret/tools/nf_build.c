/* nf-build: a netferret database from a pack of JPEGs (netferret_input.py
 * makes the pack): every image through the server's own load, segment
 * and extract stages (nf_query.h), then the LSH index (nf_db.h), written
 * to OUT atomically.  Prints one JSON line: images, vectors, regions per
 * image, bytes, seconds.
 *
 *     nf-build IMAGES.pack OUT.db [--seed N] [--k K]
 *
 * --k: the tier's results per query, kept in the database as the server's
 * default. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nf_db.h"
#include "nf_pack.h"
#include "nf_query.h"

static int
write_file(const char *path, const uint8_t *b, size_t n)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	if (f == NULL)
		return -1;
	int ok = fwrite(b, 1, n, f) == n;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		remove(tmp);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t seed = 1, k = 10;
	for (int i = 3; i < argc; i += 2) {
		char *end = NULL;
		uint64_t *v = strcmp(argv[i], "--seed") == 0 ? &seed
			: strcmp(argv[i], "--k") == 0        ? &k
							     : NULL;
		if (v != NULL && i + 1 < argc) {
			errno = 0;
			*v = strtoull(argv[i + 1], &end, 0);
		}
		if (v == NULL || end == NULL || errno != 0 || *end != '\0' ||
			argv[i + 1][0] == '\0' || (v == &k && (k == 0 || k > NF_MAX_K))) {
			fprintf(stderr, "nf-build: %s%s%s: expected --seed N or --k 1..%d\n",
				argv[i], i + 1 < argc ? " " : "", i + 1 < argc ? argv[i + 1] : "",
				NF_MAX_K);
			return 2;
		}
	}
	if (argc < 3) {
		fprintf(stderr, "usage: nf-build IMAGES.pack OUT.db [--seed N] [--k K]\n");
		return 2;
	}
	char err[512];
	struct nf_pack pk;
	if (nf_pack_open(&pk, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "nf-build: %s\n", err);
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct nf_db_image *img = calloc(pk.count ? pk.count : 1, sizeof(*img));
	float *vec =
		malloc(sizeof(float) * NF_DIM * NF_MAX_REGIONS * (size_t)(pk.count ? pk.count : 1));
	float *wt = malloc(sizeof(float) * NF_MAX_REGIONS * (size_t)(pk.count ? pk.count : 1));
	uint32_t *sz =
		malloc(sizeof(uint32_t) * NF_MAX_REGIONS * (size_t)(pk.count ? pk.count : 1));
	char *names = malloc(65 * (size_t)(pk.count ? pk.count : 1));
	/* a database with no images cannot be queried: the work's stamps need one */
	static struct nf_db fake = { .n_images = 1, .n_vectors = 1 };
	struct nf_work *w = malloc(sizeof(*w));
	if (img == NULL || vec == NULL || wt == NULL || sz == NULL || names == NULL || w == NULL ||
		nf_work_init(w, &fake) != 0) {
		fprintf(stderr, "nf-build: out of memory for %u images\n", pk.count);
		return 1;
	}
	struct nf_pack_item it;
	size_t nv = 0;
	unsigned n = 0, rmin = NF_MAX_REGIONS, rmax = 0;
	int r;
	while ((r = nf_pack_next(&pk, &it, err, sizeof(err))) == 1) {
		enum nf_status st = nf_query_features(w, it.data, it.len);
		if (st != NF_OK) {
			fprintf(stderr, "nf-build: %s (image %u of %s): %s\n", it.name, n, argv[1],
				nf_status_names[st]);
			return 1;
		}
		unsigned k = w->n_regions;
		memcpy(vec + nv * NF_DIM, w->vec, sizeof(float) * NF_DIM * k);
		memcpy(wt + nv, w->weight, sizeof(float) * k);
		memcpy(sz + nv, w->size, sizeof(uint32_t) * k);
		memcpy(names + 65 * (size_t)n, it.name, 65);
		img[n] = (struct nf_db_image){ names + 65 * (size_t)n, k, vec + nv * NF_DIM,
			wt + nv, sz + nv };
		nv += k;
		rmin = k < rmin ? k : rmin;
		rmax = k > rmax ? k : rmax;
		n++;
	}
	if (r < 0) {
		fprintf(stderr, "nf-build: %s: %s\n", argv[1], err);
		return 1;
	}
	uint8_t *db;
	size_t bytes;
	if (nf_db_build(img, n, seed, (unsigned)k, &db, &bytes, err, sizeof(err)) < 0) {
		fprintf(stderr, "nf-build: %s\n", err);
		return 1;
	}
	if (write_file(argv[2], db, bytes) < 0) {
		fprintf(stderr, "nf-build: %s: cannot write it: %s\n", argv[2], strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("{\"images\": %u, \"vectors\": %zu, \"regions_min\": %u, \"regions_max\": %u, "
	       "\"regions_mean\": %.3f, \"bytes\": %zu, \"seed\": %" PRIu64
	       ", \"jpeg_warnings\": %" PRIu64 ", \"seconds\": %.3f}\n",
		n, nv, n ? rmin : 0, rmax, n ? (double)nv / n : 0.0, bytes, seed, w->dec.warnings,
		(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	nf_work_fini(w);
	free(w);
	free(db);
	free(img);
	free(vec);
	free(wt);
	free(sz);
	free(names);
	nf_pack_close(&pk);
	return 0;
}
