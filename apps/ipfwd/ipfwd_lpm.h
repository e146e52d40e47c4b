/* --lookup lpm: the next hop is the longest prefix of the destination in a
 * route file (ipfwd_routes.h), looked up a burst at a time in DPDK's
 * rte_fib (DIR24_8, 2-byte next hops).  The next hop selects an entry of a
 * 256-entry next-hop table filled like the hash variants' table
 * (ipfwd_table.h: next hop k rewrites the MACs to 02:00 + k and 02:01 + k);
 * a destination no prefix covers is dropped as no_route. */
#ifndef IPFWD_LPM_H
#define IPFWD_LPM_H

#include <stdint.h>

#include <rte_fib.h>

#include "ipfwd_forward.h"
#include "ipfwd_routes.h"
#include "ipfwd_table.h"

/* What a lookup returns where no prefix covers the address: above every
 * next hop a route file can hold. */
#define IPFWD_LPM_NO_ROUTE (IPFWD_ROUTE_MAX_NEXT_HOP + 1)

struct ipfwd_lpm {
	struct rte_fib *fib;
	struct ipfwd_table next_hops; /* IPFWD_ROUTE_MAX_NEXT_HOP + 1 entries */
};

/* DPDK memory (MiB, rounded up, with margin) the FIB of these routes takes:
 * for the --no-huge fallback's -m. */
uint64_t ipfwd_lpm_mem_mb(const struct ipfwd_routes *r);

/* Build the FIB on a socket from the routes.  0, or -1 with err set. */
int ipfwd_lpm_create(struct ipfwd_lpm *l, const struct ipfwd_routes *r, int socket_id, char *err,
	size_t err_len);
void ipfwd_lpm_free(struct ipfwd_lpm *l);

#define IPFWD_LPM_MAX_BURST 64

/* FAST PATH: check every packet, look up the valid ones' destinations in
 * one bulk call, rewrite the routed ones.  n <= IPFWD_LPM_MAX_BURST. */
static inline void
ipfwd_lpm_process(const struct ipfwd_lpm *l, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	struct rte_ipv4_hdr *ip[IPFWD_LPM_MAX_BURST];
	uint32_t dst[IPFWD_LPM_MAX_BURST];
	uint64_t hop[IPFWD_LPM_MAX_BURST];
	uint16_t idx[IPFWD_LPM_MAX_BURST];
	int k = 0;
	for (uint16_t i = 0; i < n; i++) {
		verdict[i] = ipfwd_check(pkts[i], &ip[k]);
		if (verdict[i] == IPFWD_FORWARD) {
			dst[k] = rte_be_to_cpu_32(ip[k]->dst_addr);
			idx[k++] = i;
		}
	}
	if (k == 0)
		return;
	rte_fib_lookup_bulk(l->fib, dst, hop, k);
	for (int j = 0; j < k; j++) {
		if (hop[j] >= IPFWD_LPM_NO_ROUTE)
			verdict[idx[j]] = IPFWD_NO_ROUTE;
		else
			ipfwd_rewrite(ip[j], &l->next_hops.entries[hop[j]]);
	}
}

#endif
