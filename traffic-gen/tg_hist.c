/* Log-linear histogram: bucket arithmetic and quantiles. */
#include "tg_hist.h"

#include <math.h>
#include <string.h>

void
tg_hist_init(struct tg_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned
tg_hist_index(uint64_t v)
{
	unsigned e;

	if (v < 2 * TG_HIST_SUB)
		return (unsigned)v;
	if (v >> TG_HIST_MAX_BITS)
		return TG_HIST_BUCKETS - 1;
	e = 63 - (unsigned)__builtin_clzll(v); /* 2^e <= v < 2^(e+1), e > SUB_BITS */
	return 2 * TG_HIST_SUB + (e - TG_HIST_SUB_BITS - 1) * TG_HIST_SUB +
		(unsigned)((v >> (e - TG_HIST_SUB_BITS)) - TG_HIST_SUB);
}

void
tg_hist_bounds(unsigned idx, uint64_t *lo, uint64_t *hi)
{
	unsigned e, sub;

	if (idx < 2 * TG_HIST_SUB) {
		*lo = *hi = idx;
		return;
	}
	idx -= 2 * TG_HIST_SUB;
	e = idx / TG_HIST_SUB + TG_HIST_SUB_BITS + 1;
	sub = idx % TG_HIST_SUB;
	*lo = (uint64_t)(TG_HIST_SUB + sub) << (e - TG_HIST_SUB_BITS);
	*hi = *lo + (1ULL << (e - TG_HIST_SUB_BITS)) - 1;
}

void
tg_hist_merge(struct tg_hist *dst, const struct tg_hist *src)
{
	dst->count += src->count;
	dst->sum += src->sum;
	dst->overflow += src->overflow;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (unsigned i = 0; i < TG_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
}

double
tg_hist_quantile(const struct tg_hist *h, double q)
{
	uint64_t rank, seen = 0, lo, hi;
	double mid;

	if (h->count == 0)
		return 0;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < TG_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			tg_hist_bounds(i, &lo, &hi);
			mid = ((double)lo + (double)hi) / 2;
			if (mid < (double)h->min)
				mid = (double)h->min;
			if (mid > (double)h->max)
				mid = (double)h->max;
			return mid;
		}
	}
	return (double)h->max;
}
