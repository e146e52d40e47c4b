/* IPv6 in ipfwd: the header checks with the walk over extension headers,
 * and the rewrite (MACs from the next hop, hop limit minus one; IPv6 has
 * no header checksum, and the hop limit is not in any upper-layer
 * checksum's pseudo-header).
 *
 * Extension headers are walked, not processed: a packet whose chain lies
 * whole inside its payload length is forwarded like any other, on its
 * destination address (a transit router acts on none of them, RFC 8200
 * section 4; a Routing header's segments are for the node the destination
 * names).  The walk stops at the first Next Header that is not an
 * extension header, at ESP (encrypted) and No Next Header (59), and after
 * a Fragment header with a non-zero offset (what follows is fragment data).
 * A chain that runs past the payload length is dropped as
 * ipv6_ext_truncated; a Hop-by-Hop Options header anywhere but first
 * (RFC 8200 section 4.1) as ipv6_hop_by_hop_not_first. */
#ifndef IPFWD_IPV6_H
#define IPFWD_IPV6_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "ipfwd_table.h"
#include "ipfwd_verdict.h"

#define IPFWD6_HOP_BY_HOP 0
#define IPFWD6_FRAGMENT 44
#define IPFWD6_AH 51

/* Next Header values walked as extension headers (IANA's IPv6 Extension
 * Header Types): Hop-by-Hop 0, Routing 43, Fragment 44, AH 51, Destination
 * Options 60, Mobility 135, HIP 139, Shim6 140, experimental 253 and 254. */
static inline bool
ipfwd6_is_ext(uint8_t nh)
{
	static const uint64_t ext[4] = {
		1ull << 0 | 1ull << 43 | 1ull << 44 | 1ull << 51 | 1ull << 60,
		0,
		1ull << (135 - 128) | 1ull << (139 - 128) | 1ull << (140 - 128),
		1ull << (253 - 192) | 1ull << (254 - 192),
	};
	return (ext[nh >> 6] >> (nh & 63)) & 1;
}

/* The usual IPv6 frame (fixed header in the first segment, version 6, a
 * payload length that fits, hop limit >= 2, no extension header): one
 * test.  Its header, or NULL for any other frame. */
static inline struct rte_ipv6_hdr *
ipfwd6_usual(struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(eth + 1);
	if (unlikely(rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip6)))
		return NULL;
	/* EtherType and version, frame bytes 12-14, in one load. */
	uint32_t type_v;
	memcpy(&type_v, &eth->ether_type, sizeof(type_v));
	unsigned plen = rte_be_to_cpu_16(ip6->payload_len);
	if (likely((type_v & RTE_BE32(0xfffff000)) == RTE_BE32(0x86dd6000) &&
		    plen + sizeof(*ip6) + sizeof(*eth) <= rte_pktmbuf_pkt_len(m) &&
		    ip6->hop_limits > 1 && !ipfwd6_is_ext(ip6->proto)))
		return ip6;
	return NULL;
}

/* The checks of a frame with EtherType 0x86DD (at least 14 bytes) in the
 * order that decides the verdict: IPFWD_VALID_IPV6 (*hdr set to the IPv6
 * header) or a drop reason.  Headers must lie in the first segment, as
 * for IPv4. */
static __rte_noinline uint8_t
ipfwd6_check_ordered(struct rte_mbuf *m, void **hdr)
{
	uint32_t len = rte_pktmbuf_data_len(m);
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(eth + 1);
	if (len < sizeof(*eth) + sizeof(*ip6))
		return IPFWD_TRUNCATED;
	if ((rte_be_to_cpu_32(ip6->vtc_flow) >> 28) != 6)
		return IPFWD_IPV6_BAD_VERSION;
	/* Offsets from the start of the IPv6 header. */
	uint32_t end = sizeof(*ip6) + rte_be_to_cpu_16(ip6->payload_len);
	if (end > rte_pktmbuf_pkt_len(m) - sizeof(*eth))
		return IPFWD_TRUNCATED;
	uint32_t seg = len - sizeof(*eth), off = sizeof(*ip6);
	const uint8_t *base = (const uint8_t *)ip6;
	uint8_t nh = ip6->proto;
	/* Every extension header is at least 8 bytes: the walk ends within
	 * payload length / 8 steps. */
	while (ipfwd6_is_ext(nh)) {
		if (nh == IPFWD6_HOP_BY_HOP && off != sizeof(*ip6))
			return IPFWD_IPV6_HBH_NOT_FIRST;
		if (off + 8 > end)
			return IPFWD_IPV6_EXT_TRUNCATED;
		if (off + 8 > seg)
			return IPFWD_TRUNCATED;
		const uint8_t *h = base + off;
		uint32_t hlen;
		bool data_follows = false;
		if (nh == IPFWD6_FRAGMENT) {
			hlen = 8;
			data_follows = ((h[2] << 8 | h[3]) & 0xfff8) != 0;
		} else if (nh == IPFWD6_AH) {
			hlen = ((uint32_t)h[1] + 2) * 4; /* in 4-byte units (RFC 4302) */
		} else {
			hlen = ((uint32_t)h[1] + 1) * 8;
		}
		if (off + hlen > end)
			return IPFWD_IPV6_EXT_TRUNCATED;
		if (off + hlen > seg)
			return IPFWD_TRUNCATED;
		nh = h[0];
		off += hlen;
		if (data_follows)
			break;
	}
	if (ip6->hop_limits <= 1)
		return IPFWD_HOP_LIMIT_EXPIRED;
	*hdr = ip6;
	return IPFWD_VALID_IPV6;
}

/* MACs from the next hop, hop limit minus one (ip6: checked, >= 2). */
static inline void
ipfwd6_rewrite(struct rte_ipv6_hdr *ip6, const struct ipfwd_next_hop *nh)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)ip6 - 1;
	memcpy(eth, nh, 2 * RTE_ETHER_ADDR_LEN);
	ip6->hop_limits--;
}

#endif
