/* netferret's index (ferret's LSH.c, LSH_query.c): p-stable locality-
 * sensitive hashing (E2LSH) of the 14-dimensional region vectors.  L = 8
 * tables, each keyed by M = 17 hash functions h(v) = floor((a.v + b) / W),
 * W = 4.0708, a ~ N(0,1)^14, b ~ U[0, W); a table's bucket is
 * (sum_j r_j h_j mod 2^32) mod H, r_j random 32-bit, H the power of two at
 * or above the vectors.  A query reads only its home bucket in each table
 * (PARSEC's multi-probe is off: its query string carries a typo).  The
 * parameters are drawn from a seed (splitmix64, Box-Muller) when the
 * database is built and stored in it; the tables are buckets in CSR form
 * (a start per bucket, vector ids ascending within one). */
#ifndef NF_LSH_H
#define NF_LSH_H

#include <stdint.h>

#include "nf_extract.h"

#define NF_LSH_L 8
#define NF_LSH_M 17
#define NF_LSH_W 4.0708
#define NF_LSH_MAX_L 16
#define NF_LSH_MAX_M 32

struct nf_lsh {
	unsigned L, M;
	double W;
	uint32_t H;
	const double *a;       /* L x M x NF_DIM */
	const double *b;       /* L x M */
	const uint32_t *r;     /* L x M */
	const uint32_t *start; /* L x (H + 1) */
	const uint32_t *entry; /* L x n_vectors */
	uint32_t n_vectors;
};

/* Table l's bucket of v. */
uint32_t nf_lsh_bucket(const struct nf_lsh *x, unsigned l, const float *v);

/* The parameters from seed: a, b, r (arrays of the sizes above). */
void nf_lsh_draw(
	uint64_t seed, unsigned L, unsigned M, double W, double *a, double *b, uint32_t *r);

/* The smallest power of two >= n (1 for 0). */
uint32_t nf_lsh_buckets(uint32_t n);

/* Fills start and entry for n vectors (x->a, b, r, H set); count is
 * scratch of H + 1 entries. */
void nf_lsh_fill(const struct nf_lsh *x, const float *vec, uint32_t n, uint32_t *start,
	uint32_t *entry, uint32_t *bucket_of, uint32_t *count);

#endif
