/* Flow key -> 32-bit hash.  Two functions:
 *
 * nProbe's: the plain sum vlan + proto + src ip + dst ip + sport + dport, as
 * in nProbe's processFlowPacket() (engine.c) and nDPI's ndpiReader
 * (get_ndpi_flow_info): the hash the source paper's stateful benchmark used.
 * It is symmetric (both directions of a flow share a bucket) and fast, but
 * anyone who chooses packets chooses buckets: keep the sum constant and every
 * flow collides (a hash-flooding attack).
 *
 * Keyed: SipHash-2-4 (libsodium crypto_shorthash) of the canonical key under
 * a secret 128-bit key.  Without the key, an attacker cannot aim at a bucket.
 */
#ifndef STATEFUL_FLOW_HASH_H
#define STATEFUL_FLOW_HASH_H

#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include "flow_key.h"

enum flow_hash_kind {
	FLOW_HASH_NPROBE = 0,
	FLOW_HASH_KEYED,
};

struct flow_hasher {
	enum flow_hash_kind kind;
	unsigned char key[crypto_shorthash_KEYBYTES];
};

/* Addresses as nProbe sums them: IPv4 in host byte order, IPv6 as the sum of
 * its four 32-bit words read in memory order (nProbe's s6_addr32[0..3]). */
static inline uint32_t
flow_hash_nprobe_addr(const struct flow_key *k, const uint8_t a[16])
{
	uint32_t w[4];

	if (k->family == FLOW_FAMILY_IPV4) {
		const uint8_t *v4 = a + 12;
		return ((uint32_t)v4[0] << 24) | ((uint32_t)v4[1] << 16) | ((uint32_t)v4[2] << 8) |
			v4[3];
	}
	memcpy(w, a, 16);
	return w[0] + w[1] + w[2] + w[3];
}

static inline uint32_t
flow_hash_nprobe(const struct flow_key *k)
{
	return (uint32_t)k->vlan + k->proto + flow_hash_nprobe_addr(k, k->addr_lo) +
		flow_hash_nprobe_addr(k, k->addr_hi) + k->port_lo + k->port_hi;
}

static inline uint32_t
flow_hash_keyed(const struct flow_hasher *h, const struct flow_key *k)
{
	unsigned char out[crypto_shorthash_BYTES];
	uint32_t v;

	crypto_shorthash(out, (const unsigned char *)k, sizeof(*k), h->key);
	memcpy(&v, out, sizeof(v));
	return v;
}

static inline uint32_t
flow_hash(const struct flow_hasher *h, const struct flow_key *k)
{
	if (h->kind == FLOW_HASH_KEYED)
		return flow_hash_keyed(h, k);
	return flow_hash_nprobe(k);
}

/* Set up a hasher.  kind "nprobe" or "keyed"; for keyed, hex_key (32 hex
 * digits) fixes the key, NULL draws a random one (randombytes_buf).
 * Returns 0, or -1 after writing a message naming the bad value to err. */
int flow_hasher_init(
	struct flow_hasher *h, const char *kind, const char *hex_key, char *err, size_t err_size);

#endif
