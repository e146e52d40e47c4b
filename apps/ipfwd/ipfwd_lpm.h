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

/* FAST PATH: check every packet, look up the valid ones' destinations in
 * one bulk call per family, rewrite the routed ones.
 * n <= IPFWD_LPM_MAX_BURST. */
static inline void
ipfwd_lpm_process(const struct ipfwd_lpm *l, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	struct rte_ipv4_hdr *ip[IPFWD_LPM_MAX_BURST];
	struct rte_ipv6_hdr *ip6[IPFWD_LPM_MAX_BURST];
	uint32_t dst[IPFWD_LPM_MAX_BURST];
	uint8_t dst6[IPFWD_LPM_MAX_BURST][RTE_FIB6_IPV6_ADDR_SIZE];
	uint64_t hop[IPFWD_LPM_MAX_BURST], hop6[IPFWD_LPM_MAX_BURST];
	uint16_t idx[IPFWD_LPM_MAX_BURST], idx6[IPFWD_LPM_MAX_BURST];
	unsigned k = 0, k6 = 0;
	for (uint16_t i = 0; i < n; i++) {
		void *hdr;
		uint8_t v = ipfwd_check(pkts[i], &hdr);
		if (v == IPFWD_FORWARD) {
			ip[k] = hdr;
			dst[k] = rte_be_to_cpu_32(ip[k]->dst_addr);
			idx[k++] = i;
		} else if (v == IPFWD_VALID_IPV6) {
			ip6[k6] = hdr;
			memcpy(dst6[k6], ip6[k6]->dst_addr, RTE_FIB6_IPV6_ADDR_SIZE);
			idx6[k6++] = i;
			v = IPFWD_FORWARD;
		}
		verdict[i] = v;
	}
	if (k > 0) {
		if (likely(l->fib != NULL))
			rte_fib_lookup_bulk(l->fib, dst, hop, k);
		else
			for (unsigned j = 0; j < k; j++)
				hop[j] = IPFWD_LPM_NO_ROUTE;
		for (unsigned j = 0; j < k; j++) {
			if (hop[j] >= IPFWD_LPM_NO_ROUTE)
				verdict[idx[j]] = IPFWD_NO_ROUTE;
			else
				ipfwd_rewrite(ip[j], &l->next_hops.entries[hop[j]]);
		}
	}
	if (k6 > 0) {
		if (likely(l->fib6 != NULL))
			rte_fib6_lookup_bulk(l->fib6, dst6, hop6, k6);
		else
			for (unsigned j = 0; j < k6; j++)
				hop6[j] = IPFWD_LPM_NO_ROUTE;
		for (unsigned j = 0; j < k6; j++) {
			if (hop6[j] >= IPFWD_LPM_NO_ROUTE)
				verdict[idx6[j]] = IPFWD_NO_ROUTE;
			else
				ipfwd6_rewrite(ip6[j], &l->next_hops.entries[hop6[j]]);
		}
	}
}

#endif
