/* Route files in DPDK l3fwd's LPM rule format (--rule_ipv4 and --rule_ipv6
 * of examples/l3fwd, lpm_route_parse.c in DPDK 22.11):
 *
 *     # comment
 *     R198.18.0.0/24 0
 *     R2001:db8::/32 1
 *
 * one route per line: 'R', the prefix address, '/', the depth (0-32 for
 * IPv4, 0-128 for IPv6), white space, the next hop (0-255: l3fwd's output
 * port).  The address says the family: a dotted quad is IPv4, an address
 * with ':' IPv6 (any form inet_pton reads: l3fwd's full form with leading
 * zeros, or compressed).  One file may hold both families, and several
 * files may be read into one table (l3fwd's two files).  Blank lines and
 * lines starting with '#' are skipped.  Stricter than l3fwd: address bits
 * beyond the depth must be zero and nothing may follow the next hop.  A
 * prefix given twice keeps the last next hop (as rte_lpm_add, rte_fib_add
 * and rte_fib6_add do). */
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

struct ipfwd_route6 {
	uint8_t prefix[16]; /* network byte order, bits beyond depth zero */
	uint8_t depth;
	uint8_t next_hop;
};

struct ipfwd_routes {
	struct ipfwd_route *route; /* IPv4, in file order */
	size_t n, cap;
	struct ipfwd_route6 *route6; /* IPv6, in file order */
	size_t n6, cap6;
	size_t n_tbl8_groups;  /* distinct /24s holding an IPv4 route deeper than /24 */
	size_t n6_tbl8_groups; /* rte_fib6 TRIE groups the IPv6 routes fill (see .c) */
};

/* Read a whole route file into r, after the routes already there (r zeroed
 * before the first file).  0, or -1 with err set to a message naming the
 * file, the line and the value; r then holds the earlier files' routes. */
int ipfwd_routes_load(const char *path, struct ipfwd_routes *r, char *err, size_t err_len);
void ipfwd_routes_free(struct ipfwd_routes *r);

#endif
