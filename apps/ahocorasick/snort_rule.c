/* Snort rule parser: one rule line into a struct ac_rule (the subset
 * keyword matching needs). */
#include "snort_rule.h"
#include "errbuf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const actions[] = {
	"alert",
	"log",
	"pass",
	"drop",
	"reject",
	"sdrop",
	"activate",
	"dynamic",
};
static const char *const protocols[] = { "tcp", "udp", "icmp", "ip" };

char *
ac_format_bytes(const uint8_t *b, uint32_t len, char *buf, size_t size)
{
	size_t o = 0;
	bool hex = false;

	if (size == 0)
		return buf;
	for (uint32_t i = 0; i < len && o + 8 < size; i++) {
		bool printable = b[i] >= 0x20 && b[i] < 0x7f && b[i] != '|' && b[i] != '"' &&
			b[i] != ';' && b[i] != '\\';
		if (printable) {
			if (hex)
				buf[o++] = '|';
			hex = false;
			buf[o++] = (char)b[i];
		} else {
			o += (size_t)snprintf(buf + o, size - o, hex ? " %02X" : "|%02X", b[i]);
			hex = true;
		}
	}
	if (hex && o + 1 < size)
		buf[o++] = '|';
	buf[o < size ? o : size - 1] = '\0';
	return buf;
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static int
hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Printable rendering of (part of) a value for error messages. */
static const char *
excerpt(const char *s, size_t n, char *buf, size_t size)
{
	size_t o = 0, i = 0;

	for (; i < n && o + 8 < size; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	if (i < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* Decode a content value: [!] "text|hex|text" (quotes mandatory). */
static int
parse_content(const char *v, size_t n, struct ac_content *c, char *err, size_t errlen)
{
	size_t i = 0;
	char ex[64];

	memset(c, 0, sizeof(*c));
	c->depth = c->offset = c->distance = c->within = AC_NO_VALUE;
	if (i < n && v[i] == '!') {
		c->negated = true;
		i++;
		while (i < n && is_space(v[i]))
			i++;
	}
	if (i >= n || v[i] != '"') {
		ac_set_err(err, errlen, "content value not in double quotes: '%s'",
			excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	i++;
	c->bytes = malloc(n + 1); /* decoded length <= source length */
	if (c->bytes == NULL) {
		ac_set_err(err, errlen, "out of memory");
		return -1;
	}
	bool hex = false, closed = false;
	int hi = -1; /* pending high nibble in hex mode */
	for (; i < n; i++) {
		char ch = v[i];
		if (hex) {
			if (ch == '"') {
				ac_set_err(err, errlen, "unterminated |hex| block in content '%s'",
					excerpt(v, n, ex, sizeof(ex)));
				return -1;
			}
			if (ch == '|') {
				if (hi >= 0) {
					ac_set_err(err, errlen,
						"odd number of hex digits in content '%s'",
						excerpt(v, n, ex, sizeof(ex)));
					return -1;
				}
				hex = false;
			} else if (is_space(ch)) {
				if (hi >= 0) {
					ac_set_err(err, errlen,
						"hex byte split by a space in content '%s'",
						excerpt(v, n, ex, sizeof(ex)));
					return -1;
				}
			} else if (hex_val(ch) >= 0) {
				if (hi < 0) {
					hi = hex_val(ch);
				} else {
					c->bytes[c->len++] = (uint8_t)(hi << 4 | hex_val(ch));
					hi = -1;
				}
			} else {
				ac_set_err(err, errlen, "bad hex character 0x%02x in content '%s'",
					(unsigned char)ch, excerpt(v, n, ex, sizeof(ex)));
				return -1;
			}
			continue;
		}
		if (ch == '"') {
			closed = true;
			i++;
			break;
		}
		if (ch == '|') {
			hex = true;
			continue;
		}
		if (ch == '\\') {
			if (i + 1 >= n) {
				ac_set_err(err, errlen, "content ends in a lone backslash: '%s'",
					excerpt(v, n, ex, sizeof(ex)));
				return -1;
			}
			ch = v[++i];
		}
		c->bytes[c->len++] = (uint8_t)ch;
	}
	if (hex) {
		ac_set_err(err, errlen, "unterminated |hex| block in content '%s'",
			excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	if (!closed) {
		ac_set_err(err, errlen, "unterminated quoted content '%s'",
			excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	while (i < n && is_space(v[i]))
		i++;
	if (i < n) {
		ac_set_err(err, errlen, "text after the closing quote of content '%s'",
			excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	if (c->len == 0) {
		ac_set_err(err, errlen, "empty content \"\"");
		return -1;
	}
	return 0;
}

static bool
name_is(const char *name, size_t nlen, const char *want)
{
	return strlen(want) == nlen && memcmp(name, want, nlen) == 0;
}

/* A positional modifier's value: an integer, or a byte_extract variable
 * (recorded as absent; matching ignores these modifiers anyway). */
static int32_t
modifier_value(const char *v, size_t n)
{
	char buf[24];
	char *end;

	if (n == 0 || n >= sizeof(buf))
		return AC_NO_VALUE;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	long x = strtol(buf, &end, 10);
	if (*end != '\0' || errno != 0 || x <= INT32_MIN || x > INT32_MAX)
		return AC_NO_VALUE;
	return (int32_t)x;
}

static int
parse_uint(const char *v, size_t n, uint32_t *out)
{
	uint64_t x = 0;

	if (n == 0 || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	if (x > UINT32_MAX)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

static int
add_content(struct ac_rule *r, const struct ac_content *c)
{
	struct ac_content *nc = realloc(r->contents, (r->n_contents + 1) * sizeof(*nc));
	if (nc == NULL)
		return -1;
	r->contents = nc;
	r->contents[r->n_contents++] = *c;
	return 0;
}

/* One "name[:value]" option of the rule body. */
static int
parse_option(struct ac_rule *r, const char *o, size_t n, char *err, size_t errlen)
{
	size_t nl = 0;
	char ex[64];

	while (nl < n && o[nl] != ':')
		nl++;
	const char *name = o;
	size_t name_len = nl;
	while (name_len > 0 && is_space(name[name_len - 1]))
		name_len--;
	const char *v = nl < n ? o + nl + 1 : o + n;
	size_t vn = nl < n ? n - nl - 1 : 0;
	while (vn > 0 && is_space(*v)) {
		v++;
		vn--;
	}
	while (vn > 0 && is_space(v[vn - 1]))
		vn--;

	struct ac_content *last = r->n_contents ? &r->contents[r->n_contents - 1] : NULL;
	if (name_is(name, name_len, "content")) {
		struct ac_content c;
		if (parse_content(v, vn, &c, err, errlen) < 0) {
			free(c.bytes);
			return -1;
		}
		if (add_content(r, &c) < 0) {
			free(c.bytes);
			ac_set_err(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	bool nocase = name_is(name, name_len, "nocase");
	int32_t *pos = NULL;
	if (last != NULL) {
		if (name_is(name, name_len, "depth"))
			pos = &last->depth;
		else if (name_is(name, name_len, "offset"))
			pos = &last->offset;
		else if (name_is(name, name_len, "distance"))
			pos = &last->distance;
		else if (name_is(name, name_len, "within"))
			pos = &last->within;
	}
	if (nocase || pos != NULL) {
		if (last == NULL) {
			ac_set_err(err, errlen, "'%s' before any content",
				excerpt(name, name_len, ex, sizeof(ex)));
			return -1;
		}
		if (nocase)
			last->nocase = true;
		else
			*pos = modifier_value(v, vn);
		return 0;
	}
	if (name_is(name, name_len, "depth") || name_is(name, name_len, "offset") ||
		name_is(name, name_len, "distance") || name_is(name, name_len, "within")) {
		ac_set_err(err, errlen, "'%s' before any content",
			excerpt(name, name_len, ex, sizeof(ex)));
		return -1;
	}
	if (name_is(name, name_len, "classtype")) {
		if (vn == 0 || vn >= sizeof(r->classtype)) {
			ac_set_err(
				err, errlen, "bad classtype '%s'", excerpt(v, vn, ex, sizeof(ex)));
			return -1;
		}
		memcpy(r->classtype, v, vn);
		r->classtype[vn] = '\0';
	} else if (name_is(name, name_len, "sid")) {
		if (parse_uint(v, vn, &r->sid) < 0) {
			ac_set_err(err, errlen, "bad sid '%s'", excerpt(v, vn, ex, sizeof(ex)));
			return -1;
		}
	} else if (name_is(name, name_len, "rev")) {
		if (parse_uint(v, vn, &r->rev) < 0) {
			ac_set_err(err, errlen, "bad rev '%s'", excerpt(v, vn, ex, sizeof(ex)));
			return -1;
		}
	} else if (name_len == 0) {
		ac_set_err(err, errlen, "empty option name before '%s'",
			excerpt(v, vn, ex, sizeof(ex)));
		return -1;
	}
	/* Everything else (msg, flow, pcre, http_* buffers, fast_pattern, ...)
	 * does not change the keyword set. */
	return 0;
}

/* Does s (n bytes) start with an action word followed by a space? */
static bool
starts_with_action(const char *s, size_t n)
{
	for (size_t a = 0; a < sizeof(actions) / sizeof(actions[0]); a++) {
		size_t l = strlen(actions[a]);
		if (n > l && memcmp(s, actions[a], l) == 0 && is_space(s[l]))
			return true;
	}
	return false;
}

enum ac_line_kind
ac_rule_parse_line(const char *line, size_t len, struct ac_rule *rule, char *err, size_t errlen)
{
	size_t i = 0;
	char ex[64];

	memset(rule, 0, sizeof(*rule));
	while (i < len && is_space(line[i]))
		i++;
	while (len > i && is_space(line[len - 1]))
		len--;
	if (i == len)
		return AC_LINE_IGNORED;
	if (line[i] == '#') {
		/* "# alert tcp ... (...)" is a rule shipped disabled; any other
		 * comment is prose. */
		i++;
		while (i < len && is_space(line[i]))
			i++;
		if (!starts_with_action(line + i, len - i) ||
			memchr(line + i, '(', len - i) == NULL)
			return AC_LINE_IGNORED;
		rule->disabled = true;
	}
	const char *hdr = line + i;
	const char *open = memchr(hdr, '(', len - i);
	if (open == NULL) {
		ac_set_err(err, errlen, "no '(' opening the rule options in '%s'",
			excerpt(hdr, len - i, ex, sizeof(ex)));
		return AC_LINE_ERROR;
	}
	if (line[len - 1] != ')') {
		ac_set_err(err, errlen, "rule does not end with ')'");
		return AC_LINE_ERROR;
	}

	/* Header: action proto src sport dir dst dport. */
	const char *tok[8];
	size_t tlen[8];
	unsigned nt = 0;
	for (const char *p = hdr; p < open;) {
		while (p < open && is_space(*p))
			p++;
		if (p >= open)
			break;
		const char *s = p;
		while (p < open && !is_space(*p))
			p++;
		if (nt == 8) {
			nt++;
			break;
		}
		tok[nt] = s;
		tlen[nt++] = (size_t)(p - s);
	}
	if (nt != 7) {
		if (nt > 8)
			ac_set_err(err, errlen,
				"rule header has more than 8 fields, want 7 (action proto src "
				"sport dir dst dport)");
		else
			ac_set_err(err, errlen,
				"rule header has %u fields, want 7 (action proto src sport dir dst "
				"dport)",
				nt);
		return AC_LINE_ERROR;
	}
	bool ok = false;
	for (size_t a = 0; a < sizeof(actions) / sizeof(actions[0]); a++)
		ok |= name_is(tok[0], tlen[0], actions[a]);
	if (!ok) {
		ac_set_err(err, errlen, "unknown rule action '%s'",
			excerpt(tok[0], tlen[0], ex, sizeof(ex)));
		return AC_LINE_ERROR;
	}
	ok = false;
	for (size_t a = 0; a < sizeof(protocols) / sizeof(protocols[0]); a++)
		ok |= name_is(tok[1], tlen[1], protocols[a]);
	if (!ok) {
		ac_set_err(err, errlen, "unknown protocol '%s'",
			excerpt(tok[1], tlen[1], ex, sizeof(ex)));
		return AC_LINE_ERROR;
	}
	if (!name_is(tok[4], tlen[4], "->") && !name_is(tok[4], tlen[4], "<>")) {
		ac_set_err(err, errlen, "bad direction '%s' (want -> or <>)",
			excerpt(tok[4], tlen[4], ex, sizeof(ex)));
		return AC_LINE_ERROR;
	}

	/* Body: options split on ';' outside quotes; '\' escapes one char. */
	const char *body = open + 1, *end = line + len - 1;
	const char *start = body;
	bool quoted = false;
	for (const char *p = body; p <= end; p++) {
		if (p < end && *p == '\\') {
			if (p + 1 < end)
				p++;
			continue;
		}
		if (p < end && *p == '"') {
			quoted = !quoted;
			continue;
		}
		if (p == end && quoted) {
			ac_set_err(err, errlen, "unterminated quote in rule options");
			goto fail;
		}
		if (p == end || (*p == ';' && !quoted)) {
			const char *s = start, *e = p;
			while (s < e && is_space(*s))
				s++;
			while (e > s && is_space(e[-1]))
				e--;
			if (e > s && parse_option(rule, s, (size_t)(e - s), err, errlen) < 0)
				goto fail;
			start = p + 1;
		}
	}
	return AC_LINE_RULE;
fail:
	ac_rule_free(rule);
	return AC_LINE_ERROR;
}

void
ac_rule_free(struct ac_rule *rule)
{
	for (unsigned i = 0; i < rule->n_contents; i++)
		free(rule->contents[i].bytes);
	free(rule->contents);
	rule->contents = NULL;
	rule->n_contents = 0;
}
