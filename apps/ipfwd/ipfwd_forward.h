/* What ipfwd does to one packet: check the Ethernet and IP headers (IPv4,
 * or IPv6 with its extension headers walked: ipfwd_ipv6.h), look up the
 * next hop, rewrite the MACs, decrement the TTL or hop limit and, for
 * IPv4, patch the header checksum incrementally.  Returns 0 (forward) or a
 * drop reason.  The IPv4 header checksum is the port's verdict where it
 * checks it (Rx IPv4 checksum offload: RTE_MBUF_F_RX_IP_CKSUM_GOOD or
 * _BAD), the software's otherwise.
 * ipfwd_check and the rewrites are the two halves around the lookup, for
 * lookups done a burst at a time (ipfwd_lpm.h). */
#ifndef IPFWD_FORWARD_H
#define IPFWD_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "ipfwd_cksum.h"
#include "ipfwd_ipv6.h"
#include "ipfwd_table.h"
#include "ipfwd_verdict.h"

/* Whether an IPv4 header of hlen bytes (a multiple of 4) has a right
 * checksum: its one's complement sum, folded to 16 bits, is 0xffff.
 * Folding keeps a sum's value modulo 0xffff (2^16 and 2^32 are both 1
 * modulo 0xffff) and turns no non-zero sum into 0, so for the usual
 * 20-byte header the fold is skipped: the five 32-bit words' plain sum s
 * folds to 0xffff exactly when s is a non-zero multiple of 0xffff, which
 * the compiler tests with one multiply by the inverse and one compare.
 * The same verdict as rte_raw_cksum(hdr, hlen) == 0xffff (a one's
 * complement sum does not depend on word size or byte order). */
static inline bool
ipfwd_hdr_cksum_ok(const void *hdr, unsigned hlen)
{
	if (unlikely(hlen != 20))
		return rte_raw_cksum(hdr, hlen) == 0xffff;
	/* Unaligned 32-bit loads straight from the frame (no copy). */
	typedef uint32_t u32_any __attribute__((aligned(1), may_alias));
	const u32_any *w = hdr;
	uint64_t s = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	return s != 0 && s % 0xffff == 0;
}

/* The table entry an IPv4 or IPv6 packet's destination would pick, read
 * before any check, for a prefetch; NULL when the EtherType is neither or
 * the first segment is too short to hold the address. */
static inline const struct ipfwd_next_hop *
ipfwd_peek_entry(const struct rte_mbuf *m, const struct ipfwd_table *t)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint32_t len = rte_pktmbuf_data_len(m);
	if (len < sizeof(*eth) + sizeof(struct rte_ipv4_hdr))
		return NULL;
	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
		return ipfwd_lookup(t, rte_be_to_cpu_32(ip->dst_addr));
	}
	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6) &&
		len >= sizeof(*eth) + sizeof(struct rte_ipv6_hdr)) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)(eth + 1);
		return ipfwd_lookup6(t, ip6->dst_addr);
	}
	return NULL;
}

/* The header checks one by one, in the order that decides the verdict:
 * IPFWD_FORWARD (valid IPv4), IPFWD_VALID_IPV6 (valid IPv6), *hdr then set
 * to the IP header; or a drop reason.  Every frame that ipfwd_usual and
 * ipfwd6_usual do not pass comes here. */
static __rte_noinline uint8_t
ipfwd_check_ordered(struct rte_mbuf *m, void **hdr)
{
	uint32_t len = rte_pktmbuf_data_len(m); /* headers must be in the first segment */
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	if (len < sizeof(*eth))
		return IPFWD_TRUNCATED;
	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6))
		return ipfwd6_check_ordered(m, hdr);
	if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return IPFWD_NOT_IP;
	if (len < sizeof(*eth) + sizeof(*ip))
		return IPFWD_TRUNCATED;
	unsigned ihl = ip->version_ihl & 0x0f;
	if ((ip->version_ihl >> 4) != 4 || ihl < 5)
		return IPFWD_BAD_VERSION_OR_IHL;
	unsigned hlen = ihl * 4;
	if (len < sizeof(*eth) + hlen)
		return IPFWD_TRUNCATED;
	unsigned total = rte_be_to_cpu_16(ip->total_length);
	if (total < hlen)
		return IPFWD_BAD_VERSION_OR_IHL;
	if (total > rte_pktmbuf_pkt_len(m) - sizeof(*eth))
		return IPFWD_TRUNCATED;
	/* A port with Rx IPv4 checksum offload has checked the header
	 * (pp_port asks for it where offered); otherwise, in software. */
	uint64_t ck = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	if (ck == RTE_MBUF_F_RX_IP_CKSUM_BAD ||
		(ck != RTE_MBUF_F_RX_IP_CKSUM_GOOD && !ipfwd_hdr_cksum_ok(ip, hlen)))
		return IPFWD_BAD_CHECKSUM;
	if (ip->time_to_live <= 1)
		return IPFWD_TTL_EXPIRED;
	*hdr = ip;
	return IPFWD_FORWARD;
}

/* The usual frame (both headers in the first segment, IPv4, version 4, a
 * 20-byte header, a total length that fits, a right checksum by the port's
 * flag or the software's sum, TTL >= 2): one test with few branches and no
 * verdict order to keep.  Its IPv4 header, or NULL for any other frame. */
static inline struct rte_ipv4_hdr *
ipfwd_usual(struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	if (unlikely(rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip)))
		return NULL;
	/* EtherType and version/IHL, frame bytes 12-14, in one load. */
	uint32_t type_vihl;
	memcpy(&type_vihl, &eth->ether_type, sizeof(type_vihl));
	unsigned total = rte_be_to_cpu_16(ip->total_length);
	uint64_t ck = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	if (likely((type_vihl & RTE_BE32(0xffffff00)) == RTE_BE32(0x08004500) &&
		    total >= sizeof(*ip) && total + sizeof(*eth) <= rte_pktmbuf_pkt_len(m) &&
		    ip->time_to_live > 1 &&
		    (likely(ck == RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN)
				    ? ipfwd_hdr_cksum_ok(ip, sizeof(*ip))
				    : ck == RTE_MBUF_F_RX_IP_CKSUM_GOOD)))
		return ip;
	return NULL;
}

/* The header checks: IPFWD_FORWARD (valid IPv4), IPFWD_VALID_IPV6 (valid
 * IPv6), *hdr then set to the IP header; or a drop reason.  A frame that
 * the usual tests do not pass is decided by ipfwd_check_ordered, so the
 * verdict is the same either way. */
static inline uint8_t
ipfwd_check(struct rte_mbuf *m, void **hdr)
{
	struct rte_ipv4_hdr *ip = ipfwd_usual(m);
	if (likely(ip != NULL)) {
		*hdr = ip;
		return IPFWD_FORWARD;
	}
	struct rte_ipv6_hdr *ip6 = ipfwd6_usual(m);
	if (likely(ip6 != NULL)) {
		*hdr = ip6;
		return IPFWD_VALID_IPV6;
	}
	return ipfwd_check_ordered(m, hdr);
}

/* MACs from the next hop, TTL decrement, checksum patch (ip: checked). */
static inline void
ipfwd_rewrite(struct rte_ipv4_hdr *ip, const struct ipfwd_next_hop *nh)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)ip - 1;
	/* Destination then source MAC, contiguous in the entry and the frame. */
	RTE_BUILD_BUG_ON(offsetof(struct ipfwd_next_hop, src_mac) != RTE_ETHER_ADDR_LEN ||
		offsetof(struct rte_ether_hdr, src_addr) != RTE_ETHER_ADDR_LEN);
	memcpy(eth, nh, 2 * RTE_ETHER_ADDR_LEN);
	/* TTL minus one: its 16-bit header word (TTL, protocol) goes down by
	 * the stored form of 0x0100 (no borrow: TTL >= 2), so RFC 1624 needs
	 * only that difference (ipfwd_cksum_ttl_decrement). */
	ip->time_to_live--;
	ip->hdr_checksum = ipfwd_cksum_ttl_decrement(ip->hdr_checksum);
}

/* Every frame that is not the usual IPv4 frame, with the hashed table; out
 * of line, so that the usual IPv4 frame's loop stays as short as it was
 * before IPv6 (an IPv6 frame pays a call). */
static __rte_noinline uint8_t
ipfwd_forward_other(struct rte_mbuf *m, const struct ipfwd_table *t)
{
	void *hdr;
	uint8_t v;
	struct rte_ipv6_hdr *ip6 = ipfwd6_usual(m);
	if (likely(ip6 != NULL)) {
		ipfwd6_rewrite(ip6, ipfwd_lookup6(t, ip6->dst_addr));
		return IPFWD_FORWARD;
	}
	v = ipfwd_check_ordered(m, &hdr);
	if (v == IPFWD_VALID_IPV6) {
		ip6 = hdr;
		ipfwd6_rewrite(ip6, ipfwd_lookup6(t, ip6->dst_addr));
		return IPFWD_FORWARD;
	}
	if (v == IPFWD_FORWARD) {
		struct rte_ipv4_hdr *ip = hdr;
		ipfwd_rewrite(ip, ipfwd_lookup(t, rte_be_to_cpu_32(ip->dst_addr)));
	}
	return v;
}

static inline uint8_t
ipfwd_forward(struct rte_mbuf *m, const struct ipfwd_table *t)
{
	/* The usual IPv4 frame's header stays in a register: only the other
	 * frames take an address for the ordered checks to fill. */
	struct rte_ipv4_hdr *ip = ipfwd_usual(m);
	if (unlikely(ip == NULL))
		return ipfwd_forward_other(m, t);
	ipfwd_rewrite(ip, ipfwd_lookup(t, rte_be_to_cpu_32(ip->dst_addr)));
	return IPFWD_FORWARD;
}

#endif
