/* What ipfwd does to one packet: check the Ethernet and IPv4 headers,
 * look up the next hop, rewrite the MACs, decrement the TTL and patch the
 * header checksum incrementally.  Returns 0 (forward) or a drop reason.
 * ipfwd_check and ipfwd_rewrite are the two halves around the lookup, for
 * lookups done a burst at a time (ipfwd_lpm.h). */
#ifndef IPFWD_FORWARD_H
#define IPFWD_FORWARD_H

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "ipfwd_cksum.h"
#include "ipfwd_table.h"

enum ipfwd_verdict {
	IPFWD_FORWARD = 0,
	IPFWD_NOT_IPV4,           /* EtherType is not 0x0800 */
	IPFWD_TRUNCATED,          /* headers or IP total length beyond the data */
	IPFWD_BAD_VERSION_OR_IHL, /* version != 4, IHL < 5, total length < IHL */
	IPFWD_BAD_CHECKSUM,
	IPFWD_TTL_EXPIRED, /* TTL <= 1: it would reach 0 here */
	IPFWD_NO_ROUTE,    /* --lookup lpm: no prefix covers the destination */
	IPFWD_N_VERDICTS
};

/* The header checks: 0 (valid, *ipp set) or a drop reason. */
static inline uint8_t
ipfwd_check(struct rte_mbuf *m, struct rte_ipv4_hdr **ipp)
{
	uint32_t len = rte_pktmbuf_data_len(m); /* headers must be in the first segment */
	if (len < sizeof(struct rte_ether_hdr))
		return IPFWD_TRUNCATED;
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return IPFWD_NOT_IPV4;
	if (len < sizeof(*eth) + sizeof(struct rte_ipv4_hdr))
		return IPFWD_TRUNCATED;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
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
	if (rte_raw_cksum(ip, hlen) != 0xffff)
		return IPFWD_BAD_CHECKSUM;
	if (ip->time_to_live <= 1)
		return IPFWD_TTL_EXPIRED;
	*ipp = ip;
	return IPFWD_FORWARD;
}

/* MACs from the next hop, TTL decrement, checksum patch (ip: checked). */
static inline void
ipfwd_rewrite(struct rte_ipv4_hdr *ip, const struct ipfwd_next_hop *nh)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)ip - 1;
	rte_ether_addr_copy(&nh->dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(&nh->src_mac, &eth->src_addr);
	/* TTL shares its 16-bit word with the protocol field. */
	uint16_t old_word, new_word;
	memcpy(&old_word, &ip->time_to_live, sizeof(old_word));
	ip->time_to_live--;
	memcpy(&new_word, &ip->time_to_live, sizeof(new_word));
	ip->hdr_checksum = ipfwd_cksum_update(ip->hdr_checksum, old_word, new_word);
}

static inline uint8_t
ipfwd_forward(struct rte_mbuf *m, const struct ipfwd_table *t)
{
	struct rte_ipv4_hdr *ip;
	uint8_t v = ipfwd_check(m, &ip);
	if (v != IPFWD_FORWARD)
		return v;
	ipfwd_rewrite(ip, ipfwd_lookup(t, rte_be_to_cpu_32(ip->dst_addr)));
	return IPFWD_FORWARD;
}

#endif
