/* Rule header variables ($HOME_NET, $HTTP_PORTS, ...) and the address and
 * port sets of a rule header, resolved against them.
 *
 * A vars file holds Snort-style lines "ipvar NAME VALUE", "portvar NAME
 * VALUE" or "var NAME VALUE"; '#' starts a comment.  Values are Snort's
 * syntax: any, a number, an IPv4 or IPv6 address[/bits], a port range
 * lo:hi, :hi or lo:, a list [a,b,...], !negation, and $OTHER variables.
 * Addresses are 128-bit numbers, an IPv4 address as its IPv4-mapped IPv6
 * one (::ffff:a.b.c.d), so an IPv4 prefix never holds an IPv6 address and
 * "any" holds both.  A name not in the
 * file keeps its default (ac_vars_default_text, printed by --help). */
#ifndef AC_RULE_VARS_H
#define AC_RULE_VARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ac_var {
	char *name; /* without the '$' */
	char *value;
};

struct ac_vars {
	struct ac_var *v;
	unsigned n;
};

/* An address: IPv6 in host order, IPv4 as ::ffff:a.b.c.d. */
typedef unsigned __int128 ac_addr;

static inline ac_addr
ac_addr_v4(uint32_t a)
{
	return (ac_addr)0xffff << 32 | a;
}

/* From 16 bytes in network order. */
static inline ac_addr
ac_addr_v6(const uint8_t b[16])
{
	ac_addr a = 0;
	for (int i = 0; i < 16; i++)
		a = a << 8 | b[i];
	return a;
}

static inline bool
ac_addr_is_v4(ac_addr a)
{
	return (a >> 32) == 0xffff;
}

/* Its text form ("10.0.0.1", "2001:db8::1"); buf of 46 bytes or more. */
const char *ac_addr_str(ac_addr a, char *buf, size_t size);

/* A set of addresses (or ports): inclusive ranges.  A value is in the set
 * when it is in some positive range (or there is none: "any") and in no
 * negated range.  An empty set with none_match never matches ("!any"). */
struct ac_range {
	ac_addr lo, hi;
};
struct ac_netset {
	struct ac_range *pos, *neg;
	uint32_t n_pos, n_neg;
	bool none_match;
};

/* The defaults, one "var NAME VALUE" a line, for --help and the README. */
extern const char ac_vars_default_text[];

/* Defaults, then the file's lines (path NULL: defaults only).  0, or -1
 * with err naming the file and line. */
int ac_vars_load(struct ac_vars *vars, const char *path, char *err, size_t errlen);
void ac_vars_free(struct ac_vars *vars);

/* Parse a header field (ports when is_port) into set.  0, or -1 with err
 * (unknown variable, bad address or port, nesting too deep). */
int ac_netset_parse(struct ac_netset *set, const char *text, bool is_port,
	const struct ac_vars *vars, char *err, size_t errlen);
void ac_netset_free(struct ac_netset *set);

static inline bool
ac_netset_has(const struct ac_netset *s, ac_addr x)
{
	if (s->none_match)
		return false;
	bool in = s->n_pos == 0;
	for (uint32_t i = 0; !in && i < s->n_pos; i++)
		in = x >= s->pos[i].lo && x <= s->pos[i].hi;
	for (uint32_t i = 0; in && i < s->n_neg; i++)
		in = !(x >= s->neg[i].lo && x <= s->neg[i].hi);
	return in;
}

#endif /* AC_RULE_VARS_H */
