/* Next-hop table: contents follow the documented formula, lookups return
 * the entry of the documented hash (vectors computed independently in
 * Python; IPv4 and IPv6), indexes stay in range and spread evenly, and the
 * variant sizes follow the cache sizes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ipfwd_table.h"

static int failures;
#define CHECK(c, ...)                                                \
	do {                                                         \
		if (!(c)) {                                          \
			failures++;                                  \
			fprintf(stderr, "FAIL line %d: ", __LINE__); \
			fprintf(stderr, __VA_ARGS__);                \
			fputc('\n', stderr);                         \
		}                                                    \
	} while (0)

int
main(void)
{
	/* (((dst * 0x9E3779B1) mod 2^32) * n) >> 32, from Python. */
	CHECK(ipfwd_table_index(0x0A000001, 1024) == 544, "10.0.0.1 in 1024");
	CHECK(ipfwd_table_index(0xC0A80101, 1u << 23) == 3730581, "192.168.1.1 in 2^23");
	CHECK(ipfwd_table_index(0xFFFFFFFF, 1000) == 381, "255.255.255.255 in 1000");

	struct ipfwd_table t;
	CHECK(ipfwd_table_create(&t, 0) != 0, "a table of 0 entries was created");
	CHECK(ipfwd_table_create(&t, 1000) == 0, "cannot create 1000 entries");
	CHECK(sizeof(struct ipfwd_next_hop) == 16, "entry is %zu bytes",
		sizeof(struct ipfwd_next_hop));
	const struct ipfwd_next_hop *e = ipfwd_lookup(&t, 0xFFFFFFFF);
	CHECK(e->index == 381, "lookup returned entry %u", e->index);
	static const uint8_t dst381[6] = { 0x02, 0x00, 0, 0, 0x01, 0x7d };
	static const uint8_t src381[6] = { 0x02, 0x01, 0, 0, 0x01, 0x7d };
	CHECK(memcmp(e->dst_mac.addr_bytes, dst381, 6) == 0, "dst MAC of entry 381");
	CHECK(memcmp(e->src_mac.addr_bytes, src381, 6) == 0, "src MAC of entry 381");

	/* 2^20 destinations over 1000 buckets: every bucket within 20% of the mean. */
	static unsigned count[1000];
	uint32_t x = 12345;
	for (unsigned i = 0; i < (1u << 20); i++) {
		x = x * 1664525u + 1013904223u;
		uint64_t k = ipfwd_table_index(x, 1000);
		CHECK(k < 1000, "index %" PRIu64 " out of range", k);
		count[k]++;
	}
	unsigned lo = ~0u, hi = 0;
	for (unsigned i = 0; i < 1000; i++) {
		lo = count[i] < lo ? count[i] : lo;
		hi = count[i] > hi ? count[i] : hi;
	}
	CHECK(lo > 1049 * 0.8 && hi < 1049 * 1.2, "uneven spread: buckets %u..%u", lo, hi);
	/* Sequential addresses (a /22) land in distinct entries of a big table. */
	static uint8_t seen[1u << 16];
	unsigned dup = 0;
	for (uint32_t a = 0x0A000000; a < 0x0A000400; a++) {
		uint64_t k = ipfwd_table_index(a, 1u << 16);
		dup += seen[k]++ != 0;
	}
	CHECK(dup < 16, "%u collisions among 1024 consecutive addresses in 65536 entries", dup);

	/* IPv6: ((hi * M64) xor lo) * M64 mod 2^64, top 32 bits, then * n >> 32
	 * (vectors from Python, apps/ipfwd/tests/ipfwd_reference.py hash6). */
	static const struct {
		uint8_t a[16];
		uint64_t n, want;
	} v6[] = {
		{ { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, 1024, 33 },
		{ { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, [15] = 0x2a }, 1u << 23, 2052867 },
		{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			  0xff, 0xff, 0xff },
			1000, 254 },
		{ { 0 }, 1000, 0 },
	};
	for (unsigned i = 0; i < sizeof(v6) / sizeof(v6[0]); i++)
		CHECK(ipfwd_table_index6(v6[i].a, v6[i].n) == v6[i].want,
			"IPv6 vector %u: %" PRIu64 ", want %" PRIu64, i,
			ipfwd_table_index6(v6[i].a, v6[i].n), v6[i].want);
	/* A /64's hosts 0..1023 (the low bits only) spread over 65536 entries. */
	memset(seen, 0, sizeof(seen));
	dup = 0;
	for (unsigned h = 0; h < 1024; h++) {
		uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, [14] = (uint8_t)(h >> 8), (uint8_t)h };
		uint64_t k = ipfwd_table_index6(a, 1u << 16);
		dup += seen[k]++ != 0;
	}
	CHECK(dup < 16, "%u collisions among 1024 IPv6 hosts of one /64 in 65536 entries", dup);
	ipfwd_table_free(&t);

	CHECK(ipfwd_table_entries_l1(32768) * 16 == 16384, "l1: half of 32 KiB");
	CHECK(ipfwd_table_entries_l1(49152) * 16 <= 24576, "l1: half of 48 KiB");
	uint64_t m = ipfwd_table_entries_mem(32u << 20);
	CHECK(m * 16 >= 4ull * (32u << 20) && (m & (m - 1)) == 0, "mem: %" PRIu64 " entries", m);
	CHECK(ipfwd_table_entries_mem(36u << 20) * 16 >= 4ull * (36u << 20), "mem: 36 MiB LLC");
	printf("%s\n", failures ? "FAILED" : "lookup checks passed");
	return failures != 0;
}
