/* RFC 1624 incremental checksum against full recomputation, on random IPv4
 * headers (20 to 60 bytes): after a TTL decrement as ipfwd does it, and
 * after arbitrary changes of any one 16-bit word; and the one-fold update
 * to zero and the TTL decrement's form against the general update on every
 * checksum value. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "../ipfwd_cksum.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* Full recomputation: one's complement of the one's complement sum of the
 * header's 16-bit words with the checksum field taken as zero. */
static uint16_t
full_cksum(const uint8_t *h, unsigned len)
{
	uint32_t sum = 0;
	for (unsigned i = 0; i < len; i += 2)
		if (i != 10)
			sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint16_t
word_at(const uint8_t *h, unsigned off)
{
	uint16_t w;
	memcpy(&w, h + off, 2);
	return w;
}

int
main(void)
{
	unsigned failures = 0, n = 1000000;
	uint8_t h[60];
	for (unsigned it = 0; it < n; it++) {
		unsigned len = 20 + 4 * (rnd() % 11);
		for (unsigned i = 0; i < len; i++)
			h[i] = (uint8_t)rnd();
		if (it % 16 == 0) /* sums near the wrap-around: many 0xff bytes */
			memset(h, 0xff, len - (rnd() % len));
		h[0] = (uint8_t)(0x40 | len / 4);
		h[8] = (uint8_t)(2 + rnd() % 254); /* TTL >= 2 as ipfwd forwards it */
		uint16_t c = full_cksum(h, len);
		h[10] = (uint8_t)(c >> 8);
		h[11] = (uint8_t)c;

		/* TTL decrement, the way ipfwd_forward does it (the word goes
		 * down by the stored form of 0x0100), and with the whole word. */
		uint16_t old = word_at(h, 8);
		h[8]--;
		uint16_t inc = ipfwd_cksum_ttl_decrement(word_at(h, 10));
		uint16_t inc_word = ipfwd_cksum_update(word_at(h, 10), old, word_at(h, 8));
		if (inc != inc_word && failures++ < 10)
			fprintf(stderr, "TTL: len %u by difference %04x, by word %04x\n", len, inc,
				inc_word);
		uint16_t want = full_cksum(h, len);
		uint16_t want_be = (uint16_t)(want >> 8 | want << 8);
		if (inc != want_be && failures++ < 10)
			fprintf(stderr, "TTL: len %u incremental %04x, full %04x\n", len, inc,
				want);
		memcpy(h + 10, &inc, 2);

		/* Any other word changed to anything. */
		unsigned off;
		do
			off = 2 * (rnd() % (len / 2));
		while (off == 10);
		old = word_at(h, off);
		uint16_t nw = (uint16_t)rnd();
		if (it % 7 == 0)
			nw = (uint16_t)~old;
		memcpy(h + off, &nw, 2);
		inc = ipfwd_cksum_update(word_at(h, 10), old, nw);
		want = full_cksum(h, len);
		want_be = (uint16_t)(want >> 8 | want << 8);
		if (inc != want_be && failures++ < 10)
			fprintf(stderr, "word %u: len %u incremental %04x, full %04x\n", off, len,
				inc, want);
	}
	/* The one-fold form against the general one, every checksum and word. */
	unsigned differ = 0;
	for (uint32_t hc = 0; hc <= 0xffff; hc++)
		for (uint32_t m = 0; m <= 0xffff; m += 1 + (hc & 0xff))
			if (ipfwd_cksum_update_to_zero((uint16_t)hc, (uint16_t)m) !=
					ipfwd_cksum_update((uint16_t)hc, (uint16_t)m, 0) &&
				differ++ < 10)
				fprintf(stderr, "to zero: hc %04x m %04x: %04x, general %04x\n", hc,
					m, ipfwd_cksum_update_to_zero((uint16_t)hc, (uint16_t)m),
					ipfwd_cksum_update((uint16_t)hc, (uint16_t)m, 0));
	/* The TTL decrement's form against the general update, every checksum. */
	for (uint32_t hc = 0; hc <= 0xffff; hc++)
		if (ipfwd_cksum_ttl_decrement((uint16_t)hc) !=
				ipfwd_cksum_update((uint16_t)hc, RTE_BE16(0x0100), 0) &&
			differ++ < 10)
			fprintf(stderr, "TTL decrement: hc %04x: %04x, general %04x\n", hc,
				ipfwd_cksum_ttl_decrement((uint16_t)hc),
				ipfwd_cksum_update((uint16_t)hc, RTE_BE16(0x0100), 0));
	failures += differ;
	printf("%u random headers, %u mismatches; one-fold update to zero and TTL decrement: %u "
	       "differences\n",
		n, failures - differ, differ);
	return failures != 0;
}
