/* --lookup lpm: the next hop is the longest prefix of the destination in
 * route files (ipfwd_routes.h), looked up a burst at a time: IPv4 in DPDK's
 * rte_fib (DIR24_8), IPv6 in rte_fib6 (TRIE), both in one process.  The
 * next hop selects an entry of a 256-entry next-hop table filled like the
 * hash variants' table (ipfwd_table.h: next hop k rewrites the MACs to
 * 02:00 + k and 02:01 + k); a destination no prefix covers (or a family
 * with no routes at all) is dropped as no_route. */
#ifndef IPFWD_LPM_H
#define IPFWD_LPM_H

#include <stdint.h>

#include <rte_fib.h>
#include <rte_fib6.h>

#include "ipfwd_forward.h"
#include "ipfwd_routes.h"
#include "ipfwd_table.h"

/* What a lookup returns where no prefix covers the address: above every
 * next hop a route file can hold. */
#define IPFWD_LPM_NO_ROUTE (IPFWD_ROUTE_MAX_NEXT_HOP + 1)

struct ipfwd_lpm {
	struct rte_fib *fib;   /* NULL: no IPv4 routes */
	struct rte_fib6 *fib6; /* NULL: no IPv6 routes */
	uint64_t tbl8_groups;  /* what each was built with (app_stats) */
	uint64_t tbl8_groups6;
	unsigned nh_bytes, nh_bytes6;
	struct ipfwd_table next_hops; /* IPFWD_ROUTE_MAX_NEXT_HOP + 1 entries */
};

/* DPDK memory (MiB, rounded up, with margin) the FIBs of these routes
 * take: for the --no-huge fallback's -m. */
uint64_t ipfwd_lpm_mem_mb(const struct ipfwd_routes *r);

/* Build the FIBs on a socket from the routes.  0, or -1 with err set. */
int ipfwd_lpm_create(struct ipfwd_lpm *l, const struct ipfwd_routes *r, int socket_id, char *err,
	size_t err_len);
void ipfwd_lpm_free(struct ipfwd_lpm *l);

#define IPFWD_LPM_MAX_BURST 64

/* The valid packets of a burst, one family: their headers, destinations
 * (as the bulk lookup takes them) and places in the burst. */
struct ipfwd_lpm_batch4 {
	struct rte_ipv4_hdr *ip[IPFWD_LPM_MAX_BURST];
	uint32_t dst[IPFWD_LPM_MAX_BURST];
	uint16_t idx[IPFWD_LPM_MAX_BURST];
	unsigned n;
};

struct ipfwd_lpm_batch6 {
	struct rte_ipv6_hdr *ip[IPFWD_LPM_MAX_BURST];
	uint8_t dst[IPFWD_LPM_MAX_BURST][RTE_FIB6_IPV6_ADDR_SIZE];
	uint16_t idx[IPFWD_LPM_MAX_BURST];
	unsigned n;
};

/* A frame that failed the loop's usual test: the other family's usual
 * test, else the ordered checks; a valid packet joins its family's batch.
 * Its verdict so far.  Out of line, so that the loop keeps few registers
 * (ipfwd_lpm_classify). */
static __rte_noinline uint8_t
ipfwd_lpm_other(
	struct rte_mbuf *m, uint16_t i, struct ipfwd_lpm_batch4 *b4, struct ipfwd_lpm_batch6 *b6)
{
	void *hdr;
	uint8_t v = ipfwd_check(m, &hdr);
	if (v == IPFWD_VALID_IPV6) {
		struct rte_ipv6_hdr *ip6 = hdr;
		b6->ip[b6->n] = ip6;
		memcpy(b6->dst[b6->n], ip6->dst_addr, RTE_FIB6_IPV6_ADDR_SIZE);
		b6->idx[b6->n++] = i;
		return IPFWD_FORWARD;
	}
	if (v == IPFWD_FORWARD) {
		struct rte_ipv4_hdr *ip = hdr;
		b4->ip[b4->n] = ip;
		b4->dst[b4->n] = rte_be_to_cpu_32(ip->dst_addr);
		b4->idx[b4->n++] = i;
	}
	return v;
}

/* The checks of a burst into the two batches, one family's usual frame
 * tested inline (six: IPv6's) and everything else out of line.  Measured
 * with callgrind (instructions per packet of the whole fused loop, 20,000
 * routes): both families' tests inline cost IPv4 7.4 more than the loop
 * before IPv6 (315.5); this costs it 4.3, and IPv6 runs at 330 where the
 * both-inline loop took 344 and an IPv4-only loop with IPv6 out of line
 * 366.  The counts are kept in locals whose address is never taken, so
 * they stay in registers across the verdict stores (which may alias
 * anything). */
static __rte_always_inline void
ipfwd_lpm_classify(struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict,
	struct ipfwd_lpm_batch4 *b4, struct ipfwd_lpm_batch6 *b6, const bool six)
{
	unsigned n4 = 0, n6 = 0;
	for (uint16_t i = 0; i < n; i++) {
		if (six) {
			struct rte_ipv6_hdr *ip6 = ipfwd6_usual(pkts[i]);
			if (likely(ip6 != NULL)) {
				b6->ip[n6] = ip6;
				memcpy(b6->dst[n6], ip6->dst_addr, RTE_FIB6_IPV6_ADDR_SIZE);
				b6->idx[n6++] = i;
				verdict[i] = IPFWD_FORWARD;
				continue;
			}
		} else {
			struct rte_ipv4_hdr *ip = ipfwd_usual(pkts[i]);
			if (likely(ip != NULL)) {
				b4->ip[n4] = ip;
				b4->dst[n4] = rte_be_to_cpu_32(ip->dst_addr);
				b4->idx[n4++] = i;
				verdict[i] = IPFWD_FORWARD;
				continue;
			}
		}
		b4->n = n4;
		b6->n = n6;
		verdict[i] = ipfwd_lpm_other(pkts[i], i, b4, b6);
		n4 = b4->n;
		n6 = b6->n;
	}
	b4->n = n4;
	b6->n = n6;
}

/* One function per loop: two loops in one function shared their entry and
 * moved registers around on every packet. */
static __rte_noinline void
ipfwd_lpm_classify4(struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict,
	struct ipfwd_lpm_batch4 *b4, struct ipfwd_lpm_batch6 *b6)
{
	ipfwd_lpm_classify(pkts, n, verdict, b4, b6, false);
}

static __rte_noinline void
ipfwd_lpm_classify6(struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict,
	struct ipfwd_lpm_batch4 *b4, struct ipfwd_lpm_batch6 *b6)
{
	ipfwd_lpm_classify(pkts, n, verdict, b4, b6, true);
}

/* FAST PATH: check every packet, look up the valid ones' destinations in
 * one bulk call per family, rewrite the routed ones.  The burst's first
 * frame picks which family's test the loop holds inline.
 * n <= IPFWD_LPM_MAX_BURST. */
static inline void
ipfwd_lpm_process(const struct ipfwd_lpm *l, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	struct ipfwd_lpm_batch4 b4;
	struct ipfwd_lpm_batch6 b6;
	uint64_t hop[IPFWD_LPM_MAX_BURST];
	if (n == 0)
		return;
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(pkts[0], const struct rte_ether_hdr *);
	if (rte_pktmbuf_data_len(pkts[0]) >= sizeof(*eth) &&
		eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6))
		ipfwd_lpm_classify6(pkts, n, verdict, &b4, &b6);
	else
		ipfwd_lpm_classify4(pkts, n, verdict, &b4, &b6);
	/* Locals again for the rewrite loops (the verdict stores may alias
	 * the batches' counts). */
	const unsigned n4 = b4.n, n6 = b6.n;
	if (n4 > 0) {
		if (likely(l->fib != NULL))
			rte_fib_lookup_bulk(l->fib, b4.dst, hop, n4);
		else
			for (unsigned j = 0; j < n4; j++)
				hop[j] = IPFWD_LPM_NO_ROUTE;
		for (unsigned j = 0; j < n4; j++) {
			if (hop[j] >= IPFWD_LPM_NO_ROUTE)
				verdict[b4.idx[j]] = IPFWD_NO_ROUTE;
			else
				ipfwd_rewrite(b4.ip[j], &l->next_hops.entries[hop[j]]);
		}
	}
	if (n6 > 0) {
		if (likely(l->fib6 != NULL))
			rte_fib6_lookup_bulk(l->fib6, b6.dst, hop, n6);
		else
			for (unsigned j = 0; j < n6; j++)
				hop[j] = IPFWD_LPM_NO_ROUTE;
		for (unsigned j = 0; j < n6; j++) {
			if (hop[j] >= IPFWD_LPM_NO_ROUTE)
				verdict[b6.idx[j]] = IPFWD_NO_ROUTE;
			else
				ipfwd6_rewrite(b6.ip[j], &l->next_hops.entries[hop[j]]);
		}
	}
}

#endif
