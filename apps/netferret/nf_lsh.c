/* nf_lsh.h: p-stable LSH. */
#include "nf_lsh.h"

#include <math.h>
#include <string.h>

uint32_t
nf_lsh_bucket(const struct nf_lsh *x, unsigned l, const float *v)
{
	uint32_t key = 0;
	for (unsigned j = 0; j < x->M; j++) {
		const double *a = x->a + ((size_t)l * x->M + j) * NF_DIM;
		double dot = 0.0;
		for (int d = 0; d < NF_DIM; d++)
			dot = dot + a[d] * (double)v[d];
		double h = floor((dot + x->b[l * x->M + j]) / x->W);
		/* vectors are small: h is far inside int32 (clamped all the same) */
		int32_t hi = h < -2147483648.0 ? INT32_MIN
			: h > 2147483647.0     ? INT32_MAX
					       : (int32_t)h;
		key += x->r[l * x->M + j] * (uint32_t)hi;
	}
	return key & (x->H - 1);
}

static uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double
uniform(uint64_t *s)
{
	return (double)(splitmix64(s) >> 11) * 0x1.0p-53;
}

void
nf_lsh_draw(uint64_t seed, unsigned L, unsigned M, double W, double *a, double *b, uint32_t *r)
{
	uint64_t s = seed;
	for (unsigned k = 0; k < L * M; k++) {
		for (int d = 0; d < NF_DIM; d++) {
			double u1 = 1.0 - uniform(&s), u2 = uniform(&s);
			a[(size_t)k * NF_DIM + d] = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
		}
		b[k] = uniform(&s) * W;
		r[k] = (uint32_t)(splitmix64(&s) >> 32);
	}
}

uint32_t
nf_lsh_buckets(uint32_t n)
{
	uint32_t h = 1;
	while (h < n && h < (1u << 31))
		h <<= 1;
	return h;
}

void
nf_lsh_fill(const struct nf_lsh *x, const float *vec, uint32_t n, uint32_t *start, uint32_t *entry,
	uint32_t *bucket_of, uint32_t *count)
{
	for (unsigned l = 0; l < x->L; l++) {
		uint32_t *st = start + (size_t)l * (x->H + 1), *en = entry + (size_t)l * n;
		memset(count, 0, sizeof(uint32_t) * (x->H + 1));
		for (uint32_t v = 0; v < n; v++) {
			bucket_of[v] = nf_lsh_bucket(x, l, vec + (size_t)v * NF_DIM);
			count[bucket_of[v] + 1]++;
		}
		for (uint32_t k = 1; k <= x->H; k++)
			count[k] += count[k - 1];
		memcpy(st, count, sizeof(uint32_t) * (x->H + 1));
		for (uint32_t v = 0; v < n; v++)
			en[count[bucket_of[v]]++] = v;
	}
}
