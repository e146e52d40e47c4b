/* ipfwd_hdr_sum (five 32-bit words for a 20-byte header) against DPDK's
 * rte_raw_cksum on random IPv4 headers of 20 to 60 bytes, on sums near the
 * wrap-around, and on all-zero and all-ones headers. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_ip.h>

#include "ipfwd_forward.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

int
main(void)
{
	unsigned failures = 0, n = 1000000;
	uint8_t buf[64];
	for (unsigned it = 0; it < n; it++) {
		unsigned len = it % 2 ? 20 : 20 + 4 * (rnd() % 11);
		uint8_t *h = buf + (rnd() % 4); /* any alignment, as in a frame */
		for (unsigned i = 0; i < len; i++)
			h[i] = (uint8_t)rnd();
		if (it % 16 == 0) /* sums near the wrap-around: many 0xff bytes */
			memset(h, 0xff, len - (rnd() % len));
		if (it == 0)
			memset(h, 0, len);
		if (it == 2)
			memset(h, 0xff, len);
		uint16_t got = ipfwd_hdr_sum(h, len), want = rte_raw_cksum(h, len);
		if (got != want && failures++ < 10)
			fprintf(stderr, "len %u: ipfwd_hdr_sum %04x, rte_raw_cksum %04x\n", len,
				got, want);
	}
	printf("%u random headers, %u mismatches\n", n, failures);
	return failures != 0;
}
