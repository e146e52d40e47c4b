/* IPv4 route files in DPDK l3fwd's LPM rule format (--rule_ipv4 of
 * examples/l3fwd, lpm_route_parse.c in DPDK 22.11):
 *
 *     # comment
 *     R198.18.0.0/24 0
 *
 * one route per line: 'R', the prefix address, '/', the depth (0-32),
 * white space, the next hop (0-255: l3fwd's output port).  Blank lines and
 * lines starting with '#' are skipped.  Stricter than l3fwd: address bits
 * beyond the depth must be zero and nothing may follow the next hop.  A
 * prefix given twice keeps the last next hop (as rte_lpm_add and
 * rte_fib_add do). */
#ifndef IPFWD_ROUTES_H
#define IPFWD_ROUTES_H

#include <stddef.h>
#include <stdint.h>

#define IPFWD_ROUTE_MAX_NEXT_HOP 255u

struct ipfwd_route {
	uint32_t prefix; /* host byte order, bits beyond depth zero */
	uint8_t depth;
	uint8_t next_hop;
};

struct ipfwd_routes {
	struct ipfwd_route *route;
	size_t n;
	size_t n_tbl8_groups; /* distinct /24s holding a route deeper than /24 */
};

/* Read a whole route file.  0, or -1 with err set to a message naming the
 * file, the line and the value. */
int ipfwd_routes_load(const char *path, struct ipfwd_routes *r, char *err, size_t err_len);
void ipfwd_routes_free(struct ipfwd_routes *r);

#endif
