/* rte_fib from a route file: see ipfwd_lpm.h. */
#include "ipfwd_lpm.h"

#include <stdio.h>

#include <rte_errno.h>

/* DIR24_8 with 2-byte next hops: a 2^24-entry first level (32 MiB) and a
 * 256-entry group per /24 holding deeper prefixes.  rte_fib keeps its
 * routes in an rte_rib as well, whose node pool rte_fib sizes at
 * 2 x max_routes nodes; IPFWD_LPM_NODE_BYTES bounds a node with its
 * mempool header and trailer. */
#define IPFWD_LPM_NH_BYTES 2
#define IPFWD_LPM_NODE_BYTES 192
#define IPFWD_LPM_TBL8_SPARE 64 /* groups beyond the count the routes need */

static uint32_t
tbl8_groups(const struct ipfwd_routes *r)
{
	return (uint32_t)r->n_tbl8_groups + IPFWD_LPM_TBL8_SPARE;
}

uint64_t
ipfwd_lpm_mem_mb(const struct ipfwd_routes *r)
{
	uint64_t bytes = (1ull << 24) * IPFWD_LPM_NH_BYTES +
		(uint64_t)tbl8_groups(r) * 256 * IPFWD_LPM_NH_BYTES +
		2 * (uint64_t)r->n * IPFWD_LPM_NODE_BYTES;
	return (bytes >> 20) + 16;
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
	snprintf(name, sizeof(name), "ipfwd_fib_%u", serial++);
	struct rte_fib_conf conf = {
		.type = RTE_FIB_DIR24_8,
		.default_nh = IPFWD_LPM_NO_ROUTE,
		.max_routes = (int)r->n,
		.rib_ext_sz = 0,
		.dir24_8 = { .nh_sz = RTE_FIB_DIR24_8_2B, .num_tbl8 = tbl8_groups(r) },
	};
	l->fib = rte_fib_create(name, socket_id, &conf);
	if (l->fib == NULL) {
		snprintf(err, err_len, "rte_fib_create for %zu routes (about %" PRIu64 " MiB): %s",
			r->n, ipfwd_lpm_mem_mb(r), rte_strerror(rte_errno));
		ipfwd_table_free(&l->next_hops);
		return -1;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct ipfwd_route *rt = &r->route[i];
		int rc = rte_fib_add(l->fib, rt->prefix, rt->depth, rt->next_hop);
		if (rc < 0) {
			snprintf(err, err_len,
				"rte_fib_add of route %zu (%u.%u.%u.%u/%u -> %u): %s", i + 1,
				rt->prefix >> 24, rt->prefix >> 16 & 0xff, rt->prefix >> 8 & 0xff,
				rt->prefix & 0xff, rt->depth, rt->next_hop, rte_strerror(-rc));
			ipfwd_lpm_free(l);
			return -1;
		}
	}
	return 0;
}

void
ipfwd_lpm_free(struct ipfwd_lpm *l)
{
	rte_fib_free(l->fib);
	l->fib = NULL;
	ipfwd_table_free(&l->next_hops);
}
