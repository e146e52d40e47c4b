/* Next-hop table: a destination address (IPv4 or IPv6) hashes to one
 * entry, which holds the MAC addresses of the next hop.  Entries are filled
 * from their index by a fixed formula (ipfwd_table_fill), so any reader
 * (the Python reference of the tests) knows what a lookup must return. */
#ifndef IPFWD_TABLE_H
#define IPFWD_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

struct ipfwd_next_hop {
	struct rte_ether_addr dst_mac; /* 02:00 then the index, big endian */
	struct rte_ether_addr src_mac; /* 02:01 then the index, big endian */
	uint32_t index;                /* pads the entry to 16 bytes */
} __rte_aligned(16);

struct ipfwd_table {
	struct ipfwd_next_hop *entries;
	uint64_t n_entries;
};

#define IPFWD_HASH_MUL 0x9E3779B1u /* Knuth's multiplicative hash (golden ratio) */

/* Fibonacci hashing of the destination (host order), then a multiply-shift
 * into [0, n): uniform over any table size, no division on the fast path. */
static inline uint64_t
ipfwd_table_index(uint32_t dst_host, uint64_t n_entries)
{
	uint32_t h = dst_host * IPFWD_HASH_MUL;
	return ((uint64_t)h * n_entries) >> 32;
}

static inline const struct ipfwd_next_hop *
ipfwd_lookup(const struct ipfwd_table *t, uint32_t dst_host)
{
	return &t->entries[ipfwd_table_index(dst_host, t->n_entries)];
}

#define IPFWD_HASH_MUL64 0x9E3779B97F4A7C15ull /* the same, for 64 bits */

/* An IPv6 destination (16 bytes as on the wire): its two 64-bit halves hi
 * and lo (big endian) mixed as ((hi * M) xor lo) * M mod 2^64, whose top
 * 32 bits pick the entry by the same multiply-shift. */
static inline uint64_t
ipfwd_table_index6(const uint8_t *dst, uint64_t n_entries)
{
	uint64_t hi, lo;
	memcpy(&hi, dst, sizeof(hi));
	memcpy(&lo, dst + 8, sizeof(lo));
	uint64_t h = ((rte_be_to_cpu_64(hi) * IPFWD_HASH_MUL64) ^ rte_be_to_cpu_64(lo)) *
		IPFWD_HASH_MUL64;
	return ((h >> 32) * n_entries) >> 32;
}

static inline const struct ipfwd_next_hop *
ipfwd_lookup6(const struct ipfwd_table *t, const uint8_t *dst)
{
	return &t->entries[ipfwd_table_index6(dst, t->n_entries)];
}

/* Allocate and fill n entries (n <= 2^32).  0, or -1 (out of memory). */
int ipfwd_table_create(struct ipfwd_table *t, uint64_t n_entries);
void ipfwd_table_free(struct ipfwd_table *t);

/* Entry count for a variant from the machine's caches:
 *   l1:  the table fills half the L1 data cache;
 *   mem: the table is at least 4 times the last-level cache (power of two). */
uint64_t ipfwd_table_entries_l1(size_t l1d_bytes);
uint64_t ipfwd_table_entries_mem(size_t llc_bytes);

#endif
