/* rte_fib and rte_fib6 from route files: see ipfwd_lpm.h. */
#include "ipfwd_lpm.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <arpa/inet.h>
#include <string.h>

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

/* rte_fib6's TRIE: a 2^24-entry first level (tbl24) and a 256-entry group
 * per further byte of address where deeper routes need one; 2-byte next
 * hops while the group indexes fit in 15 bits, 4-byte above.  It reserves
 * groups per route as it adds them (trie_modify: every route below a
 * covering one reserves the levels between them, even where a sibling
 * already made the upper groups), more than it fills: the FIB starts with
 * half more than ipfwd_routes counts (n6_tbl8_groups; tools/routegen.py's
 * 200,000-route table fills about 231,000 groups and reserves about
 * 311,000) and is rebuilt with half as many again when an add runs out
 * (ENOSPC), up to IPFWD_LPM6_REBUILDS times.  A group is 1 KiB with 4-byte
 * next hops, so the margin is kept small.  rte_rib6 nodes are bounded
 * like rte_rib's. */
#define IPFWD_LPM6_TBL8_MAX ((1u << 31) - 1)
#define IPFWD_LPM6_REBUILDS 3

static uint64_t
first_tbl8_groups(const struct ipfwd_routes *r)
{
	return 2 * (uint64_t)r->n_tbl8_groups + IPFWD_LPM_TBL8_SPARE;
}

static uint64_t
first_tbl8_groups6(const struct ipfwd_routes *r)
{
	return RTE_MIN((uint64_t)r->n6_tbl8_groups + r->n6_tbl8_groups / 2 + IPFWD_LPM_TBL8_SPARE,
		IPFWD_LPM6_TBL8_MAX);
}

static uint64_t
next_tbl8_groups6(uint64_t groups)
{
	return RTE_MIN(groups + groups / 2, IPFWD_LPM6_TBL8_MAX);
}

static unsigned
nh_bytes(uint64_t tbl8_groups)
{
	return tbl8_groups <= IPFWD_LPM_TBL8_2B_MAX ? 2 : 4;
}

uint64_t
ipfwd_lpm_mem_mb(const struct ipfwd_routes *r)
{
	/* The largest FIBs the rebuilds may reach (each is freed before the
	 * next one is made). */
	uint64_t bytes = 0;
	if (r->n > 0) {
		uint64_t groups =
			RTE_MIN(first_tbl8_groups(r) << IPFWD_LPM_REBUILDS, IPFWD_LPM_TBL8_MAX);
		unsigned nh = nh_bytes(groups);
		bytes += (1ull << 24) * nh + groups * 256 * nh +
			2 * (uint64_t)r->n * IPFWD_LPM_NODE_BYTES;
	}
	if (r->n6 > 0) {
		uint64_t groups = first_tbl8_groups6(r);
		for (int i = 0; i < IPFWD_LPM6_REBUILDS; i++)
			groups = next_tbl8_groups6(groups);
		unsigned nh = nh_bytes(groups);
		bytes += (1ull << 24) * nh + (groups + 1) * (256 * nh + 4) +
			2 * (uint64_t)r->n6 * IPFWD_LPM_NODE_BYTES;
	}
	return (bytes >> 20) + 16;
}

/* Route indexes by depth, shortest first, file order within a depth
 * (counting sort: stable, so a prefix given twice still keeps its last
 * next hop); the same order for IPv6.  Adding routes in this order means no route is ever added
 * below a more specific one: DPDK 22.11's DIR24_8 then never walks the
 * more specifics of the new route (modify_fib), where a range reaching
 * 255.255.255.255 wraps its left edge to 0 and rewrites the whole table
 * (seen here: 0.0.0.0/1, 191.192.0.0/12, 128.0.0.0/1, then 0.0.0.0/0
 * sent 191.201.38.206 to the default route). */
static size_t *
shortest_first(const struct ipfwd_routes *r, bool v6)
{
	size_t start[RTE_FIB6_MAXDEPTH + 2] = { 0 };
	size_t n = v6 ? r->n6 : r->n;
	size_t *order = malloc((n > 0 ? n : 1) * sizeof(*order));
	if (order == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		start[(v6 ? r->route6[i].depth : r->route[i].depth) + 1]++;
	for (unsigned d = 1; d <= RTE_FIB6_MAXDEPTH + 1; d++)
		start[d] += start[d - 1];
	for (size_t i = 0; i < n; i++)
		order[start[v6 ? r->route6[i].depth : r->route[i].depth]++] = i;
	return order;
}

/* The IPv4 FIB: 0, or -1 with err set. */
static int
create_fib(
	struct ipfwd_lpm *l, const struct ipfwd_routes *r, int socket_id, char *err, size_t err_len)
{
	static unsigned serial; /* rte_fib names are global to the process */
	char name[RTE_MEMZONE_NAMESIZE];
	size_t *order = shortest_first(r, false);
	if (order == NULL) {
		snprintf(err, err_len, "out of memory sorting %zu IPv4 routes", r->n);
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
			free(order);
			return -1;
		}
		size_t i;
		int rc = 0;
		for (i = 0; i < r->n && rc == 0; i++)
			rc = rte_fib_add(l->fib, r->route[order[i]].prefix,
				r->route[order[i]].depth, r->route[order[i]].next_hop);
		if (rc == 0) {
			l->tbl8_groups = groups;
			l->nh_bytes = nh_bytes(groups);
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
		free(order);
		return -1;
	}
}

/* The IPv6 FIB: 0, or -1 with err set. */
static int
create_fib6(
	struct ipfwd_lpm *l, const struct ipfwd_routes *r, int socket_id, char *err, size_t err_len)
{
	static unsigned serial;
	char name[RTE_MEMZONE_NAMESIZE];
	size_t *order = shortest_first(r, true);
	if (order == NULL) {
		snprintf(err, err_len, "out of memory sorting %zu IPv6 routes", r->n6);
		return -1;
	}
	uint64_t groups = first_tbl8_groups6(r);
	for (int attempt = 0;; attempt++, groups = next_tbl8_groups6(groups)) {
		snprintf(name, sizeof(name), "ipfwd_fib6_%u", serial++);
		struct rte_fib6_conf conf = {
			.type = RTE_FIB6_TRIE,
			.default_nh = IPFWD_LPM_NO_ROUTE,
			.max_routes = (int)r->n6,
			.rib_ext_sz = 0,
			.trie = { .nh_sz = nh_bytes(groups) == 2 ? RTE_FIB6_TRIE_2B
								 : RTE_FIB6_TRIE_4B,
				.num_tbl8 = (uint32_t)groups },
		};
		l->fib6 = rte_fib6_create(name, socket_id, &conf);
		if (l->fib6 == NULL) {
			snprintf(err, err_len,
				"rte_fib6_create for %zu routes, %" PRIu64
				" tbl8 groups (at most about %" PRIu64
				" MiB with the IPv4 FIB): %s",
				r->n6, groups, ipfwd_lpm_mem_mb(r), rte_strerror(rte_errno));
			free(order);
			return -1;
		}
		size_t i;
		int rc = 0;
		for (i = 0; i < r->n6 && rc == 0; i++)
			rc = rte_fib6_add(l->fib6, r->route6[order[i]].prefix,
				r->route6[order[i]].depth, r->route6[order[i]].next_hop);
		if (rc == 0) {
			l->tbl8_groups6 = groups;
			l->nh_bytes6 = nh_bytes(groups);
			free(order);
			return 0;
		}
		rte_fib6_free(l->fib6);
		l->fib6 = NULL;
		if (rc == -ENOSPC && attempt < IPFWD_LPM6_REBUILDS && groups < IPFWD_LPM6_TBL8_MAX)
			continue;
		const struct ipfwd_route6 *rt = &r->route6[order[i - 1]];
		char addr[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, rt->prefix, addr, sizeof(addr));
		snprintf(err, err_len, "rte_fib6_add of IPv6 route %zu (%s/%u -> %u): %s",
			order[i - 1] + 1, addr, rt->depth, rt->next_hop, rte_strerror(-rc));
		free(order);
		return -1;
	}
}

int
ipfwd_lpm_create(
	struct ipfwd_lpm *l, const struct ipfwd_routes *r, int socket_id, char *err, size_t err_len)
{
	memset(l, 0, sizeof(*l));
	if (ipfwd_table_create(&l->next_hops, IPFWD_ROUTE_MAX_NEXT_HOP + 1) != 0) {
		snprintf(err, err_len, "out of memory for the next-hop table");
		return -1;
	}
	if ((r->n > 0 && create_fib(l, r, socket_id, err, err_len) < 0) ||
		(r->n6 > 0 && create_fib6(l, r, socket_id, err, err_len) < 0)) {
		ipfwd_lpm_free(l);
		return -1;
	}
	return 0;
}

void
ipfwd_lpm_free(struct ipfwd_lpm *l)
{
	rte_fib_free(l->fib);
	l->fib = NULL;
	rte_fib6_free(l->fib6);
	l->fib6 = NULL;
	ipfwd_table_free(&l->next_hops);
}
