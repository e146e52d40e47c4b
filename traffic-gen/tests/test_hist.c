/* Histogram: bucket bounds tile the value range, the stated resolution holds,
 * quantiles of known samples land where they should, merging adds up. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "tg_hist.h"

static struct tg_hist h, h2;

int
main(void)
{
	uint64_t lo, hi, prev_hi = 0;

	/* Buckets are contiguous, ordered, and at most 1/64 of their value wide. */
	for (unsigned i = 0; i < TG_HIST_BUCKETS; i++) {
		tg_hist_bounds(i, &lo, &hi);
		CHECK(i == 0 || lo == prev_hi + 1);
		CHECK(hi >= lo);
		CHECK(lo < 2 * TG_HIST_SUB || (double)(hi - lo + 1) <= (double)lo / 64.0);
		CHECK(tg_hist_index(lo) == i && tg_hist_index(hi) == i);
		prev_hi = hi;
	}
	CHECK(prev_hi == (1ULL << TG_HIST_MAX_BITS) - 1);

	/* Uniform 1..100000: p50 ~ 50000, p99 ~ 99000 within the resolution. */
	tg_hist_init(&h);
	for (uint64_t v = 1; v <= 100000; v++)
		tg_hist_add(&h, v);
	CHECK(h.count == 100000 && h.min == 1 && h.max == 100000);
	CHECK(fabs((double)h.sum / (double)h.count - 50000.5) < 1e-9);
	CHECK(fabs(tg_hist_quantile(&h, 0.5) - 50000) / 50000 < 0.008);
	CHECK(fabs(tg_hist_quantile(&h, 0.99) - 99000) / 99000 < 0.008);
	CHECK(fabs(tg_hist_quantile(&h, 0.999) - 99900) / 99900 < 0.008);
	CHECK(tg_hist_quantile(&h, 1.0) <= 100000);
	CHECK(tg_hist_quantile(&h, 0.0) == 1);

	/* Small values are exact. */
	tg_hist_init(&h2);
	for (int i = 0; i < 99; i++)
		tg_hist_add(&h2, 7);
	tg_hist_add(&h2, 1000000);
	CHECK(tg_hist_quantile(&h2, 0.5) == 7 && tg_hist_quantile(&h2, 0.99) == 7);
	CHECK(tg_hist_quantile(&h2, 0.999) == 1000000 ||
		fabs(tg_hist_quantile(&h2, 0.999) - 1e6) / 1e6 < 0.008);

	/* Overflow is counted, not lost. */
	tg_hist_add(&h2, 1ULL << 50);
	CHECK(h2.overflow == 1 && h2.max == 1ULL << 50);

	tg_hist_merge(&h, &h2);
	CHECK(h.count == 100101 && h.min == 1 && h.max == 1ULL << 50);
	return CHECK_DONE();
}
