/* The clustering core (sc_cluster.c): the same result for the same input
 * and seed, every point's weight in some centre, k in kmin..kmax, every
 * point a centre when there are at most kmax, one centre for identical
 * points, and well-separated blobs found whole.
 *
 *   test_sc_core            the checks
 *   test_sc_core FILE       FILE's stream (the client protocol) clustered
 *                           as the app does, the result as JSON on stdout
 *                           (for the comparison with sc_reference.py) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_cluster.h"

static int failures;

#define CHECK(c)                                                                \
	do {                                                                    \
		if (!(c)) {                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); \
			failures++;                                             \
		}                                                               \
	} while (0)

static uint64_t rng_state = 42;

static double
unif(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng_state >> 11) * 0x1p-53;
}

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return 2;
	}
	uint8_t h[32];
	if (fread(h, 1, 32, f) != 32 || memcmp(h, "PPSC", 4) != 0) {
		fprintf(stderr, "%s: not a stream\n", path);
		fclose(f);
		return 2;
	}
	uint32_t dim, chunk;
	uint64_t points, seed;
	uint16_t kmin, kmax;
	memcpy(&dim, h + 4, 4);
	memcpy(&points, h + 8, 8);
	memcpy(&chunk, h + 16, 4);
	memcpy(&kmin, h + 20, 2);
	memcpy(&kmax, h + 22, 2);
	memcpy(&seed, h + 24, 8);
	float *pts = malloc((size_t)points * dim * 4);
	uint64_t nchunks = (points + chunk - 1) / chunk;
	float *cen = malloc((size_t)nchunks * kmax * dim * 4 + 4);
	uint64_t *cw = malloc((size_t)nchunks * kmax * 8 + 8);
	uint32_t cap = chunk > nchunks * kmax ? chunk : (uint32_t)(nchunks * kmax);
	uint32_t *rc = malloc((size_t)cap * 4);
	uint64_t *rw = malloc((size_t)cap * 8);
	struct sc_work w;
	if (pts == NULL || cen == NULL || cw == NULL || rc == NULL || rw == NULL ||
		fread(pts, 4 * dim, points, f) != points || sc_work_init(&w, cap) != 0) {
		fprintf(stderr, "%s: cut short, or no memory\n", path);
		fclose(f);
		return 2;
	}
	fclose(f);
	uint32_t m = 0;
	for (uint64_t c = 0; c < nchunks; c++) {
		uint64_t p0 = c * chunk, n = points - p0 < chunk ? points - p0 : chunk;
		struct sc_result r = { .centre = rc, .weight = rw };
		sc_cluster(&w, pts + p0 * dim, dim, NULL, (uint32_t)n, kmin, kmax,
			sc_chunk_seed(seed, c), &r);
		for (uint32_t i = 0; i < r.k; i++, m++) {
			memcpy(cen + (size_t)m * dim, pts + (p0 + r.centre[i]) * dim, 4 * dim);
			cw[m] = r.weight[i];
		}
	}
	struct sc_result r = { .centre = rc, .weight = rw };
	sc_cluster(&w, cen, dim, cw, m, kmin, kmax, sc_final_seed(seed), &r);
	printf("{\"points\": %" PRIu64 ", \"dim\": %u, \"chunks\": %" PRIu64
	       ", \"chunk_centres\": %u, \"k\": %u, \"z\": %.17g, \"cost\": %.17g, \"centres\": [",
		points, dim, nchunks, m, r.k, r.z, r.cost);
	for (uint32_t i = 0; i < r.k; i++) {
		printf("%s{\"weight\": %" PRIu64 ", \"coords\": [", i ? ", " : "", r.weight[i]);
		for (unsigned j = 0; j < dim; j++)
			printf("%s%.9g", j ? ", " : "", (double)cen[(size_t)r.centre[i] * dim + j]);
		printf("]}");
	}
	printf("]}\n");
	sc_work_fini(&w);
	free(pts);
	free(cen);
	free(cw);
	free(rc);
	free(rw);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1)
		return run_file(argv[1]);
	enum {
		N = 600,
		D = 4
	};
	static float pts[N * D];
	static uint32_t c1[N], c2[N];
	static uint64_t w1[N], w2[N], wts[N];
	struct sc_work w;
	CHECK(sc_work_init(&w, N) == 0);
	/* four blobs far apart, 150 points each */
	for (unsigned i = 0; i < N; i++)
		for (unsigned j = 0; j < D; j++)
			pts[i * D + j] = (float)((i % 4) * 1000.0 * (j == i % 4 % D) + unif() * 10);
	struct sc_result a = { .centre = c1, .weight = w1 }, b = { .centre = c2, .weight = w2 };
	sc_cluster(&w, pts, D, NULL, N, 4, 4, 7, &a);
	sc_cluster(&w, pts, D, NULL, N, 4, 4, 7, &b);
	CHECK(a.k == 4 && b.k == 4);
	CHECK(a.cost == b.cost && a.z == b.z);
	CHECK(memcmp(c1, c2, a.k * 4) == 0 && memcmp(w1, w2, a.k * 8) == 0);
	for (unsigned i = 0; i < a.k; i++)
		CHECK(w1[i] == N / 4); /* each blob whole */
	/* k within range, weights sum to n, for every seed tried */
	for (uint64_t seed = 0; seed < 20; seed++) {
		sc_cluster(&w, pts, D, NULL, N, 3, 8, seed, &a);
		uint64_t sum = 0;
		for (unsigned i = 0; i < a.k; i++) {
			sum += w1[i];
			CHECK(i == 0 || c1[i] > c1[i - 1]);
		}
		CHECK(a.k >= 3 && a.k <= 8 && sum == N);
	}
	/* weighted: the weights are carried */
	for (unsigned i = 0; i < N; i++)
		wts[i] = 1 + i % 3;
	sc_cluster(&w, pts, D, wts, N, 4, 4, 1, &a);
	uint64_t sum = 0;
	for (unsigned i = 0; i < a.k; i++)
		sum += w1[i];
	CHECK(a.k == 4 && sum == N * 2);
	/* at most kmax points: each its own centre */
	sc_cluster(&w, pts, D, wts, 5, 2, 5, 1, &a);
	CHECK(a.k == 5 && a.cost == 0 && w1[4] == wts[4] && c1[4] == 4);
	sc_cluster(&w, pts, D, NULL, 0, 2, 5, 1, &a);
	CHECK(a.k == 0);
	/* identical points: one centre with all the weight */
	static float same[N * D];
	sc_cluster(&w, same, D, NULL, N, 2, 5, 3, &a);
	CHECK(a.k == 1 && w1[0] == N && a.cost == 0);
	sc_work_fini(&w);
	if (failures == 0)
		printf("sc_core: all checks passed\n");
	return failures != 0;
}
