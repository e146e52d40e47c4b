/* Gear-hash chunking (dd_chunk.h). */
#include "dd_chunk.h"

/* 256 fixed pseudo-random words (splitmix64 from a fixed seed): the same
 * boundaries on every machine and in every run. */
static uint64_t gear[256];

static void __attribute__((constructor)) make_gear(void)
{
	uint64_t x = 0x6e65746465647570ull; /* "netdedup" */
	for (unsigned i = 0; i < 256; i++) {
		uint64_t z = (x += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		gear[i] = z ^ (z >> 31);
	}
}

size_t
dd_cdc_scan(struct dd_cdc *st, const uint8_t *p, size_t n, bool *cut)
{
	uint64_t h = st->h;
	uint32_t len = st->len;
	size_t i = 0;
	/* Bytes more than 64 before the minimum cannot reach h where a cut
	 * may first happen (they are shifted out): not hashed. */
	if (len + 64 < DD_MIN_CHUNK) {
		size_t skip = DD_MIN_CHUNK - 64 - len;
		if (skip > n)
			skip = n;
		i = skip;
		len += (uint32_t)skip;
		h = 0;
	}
	for (; i < n; i++) {
		h = (h << 1) + gear[p[i]];
		len++;
		if ((len >= DD_MIN_CHUNK && (h >> (64 - DD_AVG_BITS)) == 0) ||
			len >= DD_MAX_CHUNK) {
			*cut = true;
			dd_cdc_reset(st);
			return i + 1;
		}
	}
	st->h = h;
	st->len = len;
	*cut = false;
	return n;
}
