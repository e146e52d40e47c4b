/* Log-linear latency histogram over TSC cycles (HdrHistogram-style).
 *
 * Values below 2^(TG_HIST_SUB_BITS+1) cycles have a bucket each; above that,
 * every power of two is split into 2^TG_HIST_SUB_BITS equal buckets, so a
 * bucket is at most 1/64 of its value wide: a percentile reported as the
 * bucket midpoint is within 0.8% (+1 cycle) of the true sample.  Min, max and
 * mean are exact.  Values at or above 2^TG_HIST_MAX_BITS cycles land in the
 * last bucket (counted as overflow). */
#ifndef TG_HIST_H
#define TG_HIST_H

#include <stdint.h>

#define TG_HIST_SUB_BITS 6
#define TG_HIST_SUB (1u << TG_HIST_SUB_BITS)
#define TG_HIST_MAX_BITS 48
#define TG_HIST_BUCKETS (2 * TG_HIST_SUB + (TG_HIST_MAX_BITS - TG_HIST_SUB_BITS - 1) * TG_HIST_SUB)

struct tg_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t overflow;
	uint64_t bucket[TG_HIST_BUCKETS];
};

void tg_hist_init(struct tg_hist *h);
void tg_hist_merge(struct tg_hist *dst, const struct tg_hist *src);
/* Value (cycles) at quantile q in [0,1]: midpoint of the bucket holding the
 * ceil(q*count)-th smallest sample, clamped to [min, max]; 0 when empty. */
double tg_hist_quantile(const struct tg_hist *h, double q);
/* Bucket index and bounds, exposed for tests. */
unsigned tg_hist_index(uint64_t v);
void tg_hist_bounds(unsigned idx, uint64_t *lo, uint64_t *hi);

static inline void
tg_hist_add(struct tg_hist *h, uint64_t v)
{
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	if (v >> TG_HIST_MAX_BITS) {
		h->overflow++;
		h->bucket[TG_HIST_BUCKETS - 1]++;
		return;
	}
	h->bucket[tg_hist_index(v)]++;
}

#endif
