/* Route file reader: see ipfwd_routes.h. */
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

/* One line without its newline: 0 (route stored, or nothing on the line),
 * or -1 with err set. */
static int
parse_line(char *line, const char *path, unsigned long lineno, struct ipfwd_route *rt,
	bool *is_route, char *err, size_t err_len)
{
	char *p = line;
	*is_route = false;
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
	struct in_addr in;
	if (inet_pton(AF_INET, addr, &in) != 1) {
		snprintf(err, err_len,
			"%s line %lu: address '%s' is not a dotted-quad IPv4 address", path, lineno,
			addr);
		return -1;
	}
	unsigned depth, nh;
	char *dep = slash + 1;
	if (parse_dec(dep, ws, 32, &depth) < 0) {
		*ws = '\0';
		snprintf(err, err_len, "%s line %lu: depth '%s' is not a number from 0 to 32", path,
			lineno, dep);
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
	*is_route = true;
	return 0;
}

int
ipfwd_routes_load(const char *path, struct ipfwd_routes *r, char *err, size_t err_len)
{
	memset(r, 0, sizeof(*r));
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 0;
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
		if (r->n == cap) {
			size_t ncap = cap == 0 ? 4096 : 2 * cap;
			struct ipfwd_route *nr = realloc(r->route, ncap * sizeof(*nr));
			if (nr == NULL) {
				snprintf(err, err_len, "%s: out of memory at line %lu", path,
					lineno);
				goto out;
			}
			r->route = nr;
			cap = ncap;
		}
		bool is_route;
		if (parse_line(line, path, lineno, &r->route[r->n], &is_route, err, err_len) < 0)
			goto out;
		r->n += is_route;
	}
	if (ferror(f)) {
		snprintf(err, err_len, "%s: read error: %s", path, strerror(errno));
		goto out;
	}
	if (r->n == 0) {
		snprintf(err, err_len, "%s: no routes (lines R<address>/<depth> <next hop>)", path);
		goto out;
	}
	r->n_tbl8_groups = count_tbl8_groups(r);
	rc = 0;
out:
	fclose(f);
	if (rc < 0)
		ipfwd_routes_free(r);
	return rc;
}

void
ipfwd_routes_free(struct ipfwd_routes *r)
{
	free(r->route);
	r->route = NULL;
	r->n = 0;
}
