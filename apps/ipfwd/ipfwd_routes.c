/* Route file reader (IPv4 and IPv6): see ipfwd_routes.h. */
#include "ipfwd_routes.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 256

/* Decimal in [0, max] spanning exactly [s, end). */
static int
parse_dec(const char *s, const char *end, unsigned max, unsigned *out)
{
	unsigned v = 0;
	if (s == end || end - s > 10)
		return -1;
	for (const char *p = s; p < end; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Distinct /24s with a route deeper than /24: the tbl8 groups DIR24_8 needs. */
static size_t
count_tbl8_groups(const struct ipfwd_routes *r)
{
	size_t n = 0, k = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->route[i].depth > 24;
	if (n == 0)
		return 0;
	uint32_t *s = malloc(n * sizeof(*s));
	if (s == NULL)
		return n; /* an upper bound */
	for (size_t i = 0; i < r->n; i++)
		if (r->route[i].depth > 24)
			s[k++] = r->route[i].prefix >> 8;
	qsort(s, n, sizeof(*s), cmp_u32);
	size_t groups = 1;
	for (size_t i = 1; i < n; i++)
		groups += s[i] != s[i - 1];
	free(s);
	return groups;
}

static int
cmp_addr6(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

/* The tbl8 groups rte_fib6's TRIE fills: below its 2^24-entry first level,
 * one 256-entry group per byte of address, so one group for every
 * distinct L-bit prefix (L = 24, 32, ..., 120) holding a route deeper than
 * L.  An estimate of what the FIB is built with (ipfwd_lpm.c): the TRIE's
 * own reservation can ask for more. */
static size_t
count_tbl8_groups6(const struct ipfwd_routes *r)
{
	size_t groups = 0;
	uint8_t(*key)[16] = malloc((r->n6 > 0 ? r->n6 : 1) * sizeof(*key));
	if (key == NULL) {
		for (size_t i = 0; i < r->n6; i++)
			groups += r->route6[i].depth > 24 ? (r->route6[i].depth - 17) / 8 : 0;
		return groups; /* an upper bound */
	}
	for (unsigned level = 24; level < 128; level += 8) {
		size_t k = 0;
		for (size_t i = 0; i < r->n6; i++) {
			if (r->route6[i].depth <= level)
				continue;
			memset(key[k], 0, 16);
			memcpy(key[k], r->route6[i].prefix, level / 8);
			k++;
		}
		if (k == 0)
			break; /* no route deeper than this level: none deeper than the next */
		qsort(key, k, sizeof(*key), cmp_addr6);
		groups++;
		for (size_t i = 1; i < k; i++)
			groups += memcmp(key[i], key[i - 1], 16) != 0;
	}
	free(key);
	return groups;
}

/* Whether the bits of a (16 bytes) beyond depth are all zero; if not,
 * masked gets a with them cleared. */
static bool
prefix6_clean(const uint8_t *a, unsigned depth, uint8_t *masked)
{
	bool clean = true;
	for (unsigned i = 0; i < 16; i++) {
		unsigned keep = depth >= 8 * (i + 1) ? 8 : depth > 8 * i ? depth - 8 * i : 0;
		uint8_t mask = (uint8_t)(0xff00u >> keep);
		masked[i] = a[i] & mask;
		clean &= masked[i] == a[i];
	}
	return clean;
}

/* One line without its newline: 0 (route stored in *rt or *rt6, *family
 * 4 or 6; or nothing on the line, *family 0), or -1 with err set. */
static int
parse_line(char *line, const char *path, unsigned long lineno, struct ipfwd_route *rt,
	struct ipfwd_route6 *rt6, int *family, char *err, size_t err_len)
{
	char *p = line;
	*family = 0;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	char *end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		*--end = '\0';
	if (*p != 'R') {
		snprintf(err, err_len,
			"%s line %lu: '%s': a route line starts with 'R' (R<address>/<depth> "
			"<next hop>), a comment with '#'",
			path, lineno, p);
		return -1;
	}
	char *addr = p + 1, *slash = strchr(addr, '/');
	char *ws = addr + strcspn(addr, " \t");
	if (slash == NULL || slash > ws) {
		snprintf(err, err_len, "%s line %lu: '%s': expected R<address>/<depth> <next hop>",
			path, lineno, p);
		return -1;
	}
	*slash = '\0';
	bool v6 = strchr(addr, ':') != NULL;
	struct in_addr in;
	uint8_t in6[16];
	if (v6 ? inet_pton(AF_INET6, addr, in6) != 1 : inet_pton(AF_INET, addr, &in) != 1) {
		snprintf(err, err_len, "%s line %lu: address '%s' is not %s", path, lineno, addr,
			v6 ? "an IPv6 address" : "a dotted-quad IPv4 address");
		return -1;
	}
	unsigned depth, nh, max_depth = v6 ? 128 : 32;
	char *dep = slash + 1;
	if (parse_dec(dep, ws, max_depth, &depth) < 0) {
		*ws = '\0';
		snprintf(err, err_len, "%s line %lu: depth '%s' is not a number from 0 to %u", path,
			lineno, dep, max_depth);
		return -1;
	}
	char *hop = ws;
	while (*hop == ' ' || *hop == '\t')
		hop++;
	char *hop_end = hop + strcspn(hop, " \t");
	if (*hop_end != '\0') {
		snprintf(err, err_len,
			"%s line %lu: '%s' after the next hop: one route per line, "
			"R<address>/<depth> <next hop>",
			path, lineno, hop_end + strspn(hop_end, " \t"));
		return -1;
	}
	if (parse_dec(hop, hop_end, IPFWD_ROUTE_MAX_NEXT_HOP, &nh) < 0) {
		snprintf(err, err_len,
			"%s line %lu: next hop '%s' is not a number from 0 to %u (l3fwd's port "
			"range)",
			path, lineno, hop, IPFWD_ROUTE_MAX_NEXT_HOP);
		return -1;
	}
	if (v6) {
		uint8_t masked[16];
		char shown[INET6_ADDRSTRLEN];
		if (!prefix6_clean(in6, depth, masked)) {
			inet_ntop(AF_INET6, masked, shown, sizeof(shown));
			snprintf(err, err_len,
				"%s line %lu: %s/%u has address bits set beyond the depth (the "
				"prefix is %s/%u)",
				path, lineno, addr, depth, shown, depth);
			return -1;
		}
		memcpy(rt6->prefix, in6, 16);
		rt6->depth = (uint8_t)depth;
		rt6->next_hop = (uint8_t)nh;
		*family = 6;
		return 0;
	}
	uint32_t a = ntohl(in.s_addr);
	uint32_t mask = depth == 0 ? 0 : ~0u << (32 - depth);
	if ((a & ~mask) != 0) {
		snprintf(err, err_len,
			"%s line %lu: %s/%u has address bits set beyond the depth (the prefix "
			"is %u.%u.%u.%u/%u)",
			path, lineno, addr, depth, (a & mask) >> 24, (a & mask) >> 16 & 0xff,
			(a & mask) >> 8 & 0xff, (a & mask) & 0xff, depth);
		return -1;
	}
	rt->prefix = a;
	rt->depth = (uint8_t)depth;
	rt->next_hop = (uint8_t)nh;
	*family = 4;
	return 0;
}

/* Room for one more route of each family.  0, or -1 (out of memory). */
static int
make_room(struct ipfwd_routes *r)
{
	if (r->n == r->cap) {
		size_t ncap = r->cap == 0 ? 4096 : 2 * r->cap;
		struct ipfwd_route *nr = realloc(r->route, ncap * sizeof(*nr));
		if (nr == NULL)
			return -1;
		r->route = nr;
		r->cap = ncap;
	}
	if (r->n6 == r->cap6) {
		size_t ncap = r->cap6 == 0 ? 1024 : 2 * r->cap6;
		struct ipfwd_route6 *nr = realloc(r->route6, ncap * sizeof(*nr));
		if (nr == NULL)
			return -1;
		r->route6 = nr;
		r->cap6 = ncap;
	}
	return 0;
}

int
ipfwd_routes_load(const char *path, struct ipfwd_routes *r, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	size_t n0 = r->n, n60 = r->n6;
	char line[LINE_MAX_BYTES + 2];
	unsigned long lineno = 0;
	int rc = -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		size_t len = strlen(line);
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		else if (!feof(f)) {
			snprintf(err, err_len, "%s line %lu: longer than %d bytes", path, lineno,
				LINE_MAX_BYTES);
			goto out;
		}
		if (make_room(r) < 0) {
			snprintf(err, err_len, "%s: out of memory at line %lu", path, lineno);
			goto out;
		}
		int family;
		if (parse_line(line, path, lineno, &r->route[r->n], &r->route6[r->n6], &family, err,
			    err_len) < 0)
			goto out;
		r->n += family == 4;
		r->n6 += family == 6;
	}
	if (ferror(f)) {
		snprintf(err, err_len, "%s: read error: %s", path, strerror(errno));
		goto out;
	}
	if (r->n == n0 && r->n6 == n60) {
		snprintf(err, err_len, "%s: no routes (lines R<address>/<depth> <next hop>)", path);
		goto out;
	}
	r->n_tbl8_groups = count_tbl8_groups(r);
	r->n6_tbl8_groups = count_tbl8_groups6(r);
	rc = 0;
out:
	fclose(f);
	if (rc < 0) {
		r->n = n0; /* this file's routes are not kept */
		r->n6 = n60;
	}
	return rc;
}

void
ipfwd_routes_free(struct ipfwd_routes *r)
{
	free(r->route);
	free(r->route6);
	memset(r, 0, sizeof(*r));
}
