/* rte_fib from a route file: see ipfwd_lpm.h. */
#include "ipfwd_lpm.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_errno.h>

/* DIR24_8: a 2^24-entry first level and 256-entry groups (tbl8) for /24s
 * holding deeper prefixes; 2-byte next hops (a 32 MiB first level) while
 * the group indexes fit in them (15 bits: one bit marks "extended"),
 * 4-byte above.  While it installs routes DIR24_8 may hold more groups
 * than there are /24s with deeper routes: the FIB starts with twice that
 * count and is rebuilt with twice as many when an add runs out (ENOSPC).
 * rte_fib keeps its routes in an rte_rib as well, with a pool of
 * 2 x max_routes nodes; IPFWD_LPM_NODE_BYTES bounds a node with its
 * mempool header and trailer. */
#define IPFWD_LPM_NODE_BYTES 192
#define IPFWD_LPM_TBL8_SPARE 64
#define IPFWD_LPM_TBL8_2B_MAX 32767u
#define IPFWD_LPM_TBL8_MAX (1u << 24)
#define IPFWD_LPM_REBUILDS 4

static uint64_t
first_tbl8_groups(const struct ipfwd_routes *r)
{
	return 2 * (uint64_t)r->n_tbl8_groups + IPFWD_LPM_TBL8_SPARE;
}

static unsigned
nh_bytes(uint64_t tbl8_groups)
{
	return tbl8_groups <= IPFWD_LPM_TBL8_2B_MAX ? 2 : 4;
}

uint64_t
ipfwd_lpm_mem_mb(const struct ipfwd_routes *r)
{
	/* The largest FIB the rebuilds may reach (each is freed before the
	 * next one is made). */
	uint64_t groups = RTE_MIN(first_tbl8_groups(r) << IPFWD_LPM_REBUILDS, IPFWD_LPM_TBL8_MAX);
	unsigned nh = nh_bytes(groups);
	uint64_t bytes =
		(1ull << 24) * nh + groups * 256 * nh + 2 * (uint64_t)r->n * IPFWD_LPM_NODE_BYTES;
	return (bytes >> 20) + 16;
}

/* Route indexes by depth, shortest first, file order within a depth
 * (counting sort: stable, so a prefix given twice still keeps its last
 * next hop).  Adding routes in this order means no route is ever added
 * below a more specific one: DPDK 22.11's DIR24_8 then never walks the
 * more specifics of the new route (modify_fib), where a range reaching
 * 255.255.255.255 wraps its left edge to 0 and rewrites the whole table
 * (seen here: 0.0.0.0/1, 191.192.0.0/12, 128.0.0.0/1, then 0.0.0.0/0
 * sent 191.201.38.206 to the default route). */
static size_t *
shortest_first(const struct ipfwd_routes *r)
{
	size_t start[RTE_FIB_MAXDEPTH + 2] = { 0 };
	size_t *order = malloc((r->n > 0 ? r->n : 1) * sizeof(*order));
	if (order == NULL)
		return NULL;
	for (size_t i = 0; i < r->n; i++)
		start[r->route[i].depth + 1]++;
	for (unsigned d = 1; d <= RTE_FIB_MAXDEPTH + 1; d++)
		start[d] += start[d - 1];
	for (size_t i = 0; i < r->n; i++)
		order[start[r->route[i].depth]++] = i;
	return order;
}

int
ipfwd_lpm_create(
	struct ipfwd_lpm *l, const struct ipfwd_routes *r, int socket_id, char *err, size_t err_len)
{
	static unsigned serial; /* rte_fib names are global to the process */
	char name[RTE_MEMZONE_NAMESIZE];
	l->fib = NULL;
	if (ipfwd_table_create(&l->next_hops, IPFWD_ROUTE_MAX_NEXT_HOP + 1) != 0) {
		snprintf(err, err_len, "out of memory for the next-hop table");
		return -1;
	}
	size_t *order = shortest_first(r);
	if (order == NULL) {
		snprintf(err, err_len, "out of memory sorting %zu routes", r->n);
		ipfwd_table_free(&l->next_hops);
		return -1;
	}
	uint64_t groups = first_tbl8_groups(r);
	for (int attempt = 0;; attempt++, groups = RTE_MIN(2 * groups, IPFWD_LPM_TBL8_MAX)) {
		snprintf(name, sizeof(name), "ipfwd_fib_%u", serial++);
		struct rte_fib_conf conf = {
			.type = RTE_FIB_DIR24_8,
			.default_nh = IPFWD_LPM_NO_ROUTE,
			.max_routes = (int)r->n,
			.rib_ext_sz = 0,
			.dir24_8 = { .nh_sz = nh_bytes(groups) == 2 ? RTE_FIB_DIR24_8_2B
								    : RTE_FIB_DIR24_8_4B,
				.num_tbl8 = (uint32_t)groups },
		};
		l->fib = rte_fib_create(name, socket_id, &conf);
		if (l->fib == NULL) {
			snprintf(err, err_len,
				"rte_fib_create for %zu routes, %" PRIu64
				" tbl8 groups (at most about %" PRIu64 " MiB): %s",
				r->n, groups, ipfwd_lpm_mem_mb(r), rte_strerror(rte_errno));
			ipfwd_table_free(&l->next_hops);
			free(order);
			return -1;
		}
		size_t i;
		int rc = 0;
		for (i = 0; i < r->n && rc == 0; i++)
			rc = rte_fib_add(l->fib, r->route[order[i]].prefix,
				r->route[order[i]].depth, r->route[order[i]].next_hop);
		if (rc == 0) {
			free(order);
			return 0;
		}
		rte_fib_free(l->fib);
		l->fib = NULL;
		if (rc == -ENOSPC && attempt < IPFWD_LPM_REBUILDS && groups < IPFWD_LPM_TBL8_MAX)
			continue;
		const struct ipfwd_route *rt = &r->route[order[i - 1]];
		snprintf(err, err_len, "rte_fib_add of route %zu (%u.%u.%u.%u/%u -> %u): %s",
			order[i - 1] + 1, rt->prefix >> 24, rt->prefix >> 16 & 0xff,
			rt->prefix >> 8 & 0xff, rt->prefix & 0xff, rt->depth, rt->next_hop,
			rte_strerror(-rc));
		ipfwd_table_free(&l->next_hops);
		free(order);
		return -1;
	}
}

void
ipfwd_lpm_free(struct ipfwd_lpm *l)
{
	rte_fib_free(l->fib);
	l->fib = NULL;
	ipfwd_table_free(&l->next_hops);
}
