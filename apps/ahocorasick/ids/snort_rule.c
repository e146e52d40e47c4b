/* Snort rule parser: one rule line into a struct ac_rule (the subset
 * keyword matching needs). */
#include "snort_rule.h"
#include "errbuf.h"
#include "hex.h"

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

/* Decode a content value: [!] "text|hex|text" (quotes mandatory). */
static int
parse_content(const char *v, size_t n, struct ac_content *c, char *err, size_t errlen)
{
	size_t i = 0;
	char ex[64];

	memset(c, 0, sizeof(*c));
	c->depth = c->offset = c->distance = c->within = AC_NO_VALUE;
	c->var[0] = c->var[1] = c->var[2] = c->var[3] = AC_VAR_NONE;
	if (i < n && v[i] == '!') {
		c->negated = true;
		i++;
		while (i < n && is_space(v[i]))
			i++;
	}
	if (i >= n || v[i] != '"') {
		ac_set_err(err, errlen, "content value not in double quotes: '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
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
					ac_excerpt(v, n, ex, sizeof(ex)));
				return -1;
			}
			if (ch == '|') {
				if (hi >= 0) {
					ac_set_err(err, errlen,
						"odd number of hex digits in content '%s'",
						ac_excerpt(v, n, ex, sizeof(ex)));
					return -1;
				}
				hex = false;
			} else if (is_space(ch)) {
				if (hi >= 0) {
					ac_set_err(err, errlen,
						"hex byte split by a space in content '%s'",
						ac_excerpt(v, n, ex, sizeof(ex)));
					return -1;
				}
			} else if (ac_hex_digit((uint8_t)ch) >= 0) {
				if (hi < 0) {
					hi = ac_hex_digit((uint8_t)ch);
				} else {
					c->bytes[c->len++] =
						(uint8_t)(hi << 4 | ac_hex_digit((uint8_t)ch));
					hi = -1;
				}
			} else {
				ac_set_err(err, errlen, "bad hex character 0x%02x in content '%s'",
					(unsigned char)ch, ac_excerpt(v, n, ex, sizeof(ex)));
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
					ac_excerpt(v, n, ex, sizeof(ex)));
				return -1;
			}
			ch = v[++i];
		}
		c->bytes[c->len++] = (uint8_t)ch;
	}
	if (hex) {
		ac_set_err(err, errlen, "unterminated |hex| block in content '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	if (!closed) {
		ac_set_err(err, errlen, "unterminated quoted content '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	while (i < n && is_space(v[i]))
		i++;
	if (i < n) {
		ac_set_err(err, errlen, "text after the closing quote of content '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
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
 * name (*is_var set, value absent).  -1 on anything else. */
static int
modifier_value(const char *v, size_t n, int32_t *out, bool *is_var)
{
	char buf[24];
	char *end;

	*is_var = false;
	if (n == 0)
		return -1;
	if (isalpha((unsigned char)v[0]) || v[0] == '_') {
		for (size_t i = 1; i < n; i++)
			if (!isalnum((unsigned char)v[i]) && v[i] != '_')
				return -1;
		*is_var = true;
		*out = AC_NO_VALUE;
		return 0;
	}
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	long x = strtol(buf, &end, 10);
	if (*end != '\0' || errno != 0 || x <= INT32_MIN || x > INT32_MAX || x < -65535 ||
		x > 65535)
		return -1;
	*out = (int32_t)x;
	return 0;
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
add_ropt(struct ac_rule *r, uint8_t kind, uint8_t buf, uint32_t idx)
{
	struct ac_ropt *no = realloc(r->opts, (r->n_opts + 1) * sizeof(*no));
	if (no == NULL)
		return -1;
	r->opts = no;
	r->opts[r->n_opts++] = (struct ac_ropt){ kind, buf, idx };
	return 0;
}

static int
add_content(struct ac_rule *r, const struct ac_content *c)
{
	struct ac_content *nc = realloc(r->contents, (r->n_contents + 1) * sizeof(*nc));
	if (nc == NULL)
		return -1;
	r->contents = nc;
	r->contents[r->n_contents] = *c;
	r->contents[r->n_contents].buf = r->default_buf;
	if (add_ropt(r, AC_ROPT_CONTENT, 0, r->n_contents) < 0)
		return -1;
	r->n_contents++;
	return 0;
}

static void
note_unsupported(struct ac_rule *r, const char *name, size_t n)
{
	size_t have = strlen(r->unsupported);

	/* Each name once. */
	for (const char *p = r->unsupported; *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == n && memcmp(p, name, n) == 0)
			return;
		p = e ? e + 1 : p + l;
	}
	r->n_unsupported++;
	if (have + n + 2 < sizeof(r->unsupported)) {
		if (have)
			r->unsupported[have++] = ',';
		memcpy(r->unsupported + have, name, n);
		r->unsupported[have + n] = '\0';
	}
}

/* Options with no effect on detection (metadata for the analyst; tag
 * logs packets after an alert, which decides nothing). */
static const char *const no_effect_opts[] = { "reference", "priority", "gid", "tag" };

/* Snort 2.9's pcre flags; those that pick a buffer, and which. */
static const char pcre_flags_known[] = "ismxAEGRUIPHDMCKSYBO";
static const struct {
	char flag;
	uint8_t buf;
} pcre_buf_flags[] = {
	{ 'U', AC_BUF_URI },
	{ 'I', AC_BUF_RAW_URI },
	{ 'P', AC_BUF_CLIENT_BODY },
	{ 'H', AC_BUF_HEADER },
	{ 'D', AC_BUF_RAW_HEADER },
	{ 'M', AC_BUF_METHOD },
	{ 'C', AC_BUF_COOKIE },
	{ 'K', AC_BUF_RAW_COOKIE },
	{ 'S', AC_BUF_STAT_CODE },
	{ 'Y', AC_BUF_STAT_MSG },
	{ 'B', AC_BUF_PKT },
};

/* The content modifiers that pick an HTTP buffer. */
static const struct {
	const char *name;
	uint8_t buf;
} http_modifiers[] = {
	{ "http_uri", AC_BUF_URI },
	{ "http_raw_uri", AC_BUF_RAW_URI },
	{ "http_header", AC_BUF_HEADER },
	{ "http_raw_header", AC_BUF_RAW_HEADER },
	{ "http_cookie", AC_BUF_COOKIE },
	{ "http_raw_cookie", AC_BUF_RAW_COOKIE },
	{ "http_client_body", AC_BUF_CLIENT_BODY },
	{ "http_method", AC_BUF_METHOD },
	{ "http_stat_code", AC_BUF_STAT_CODE },
	{ "http_stat_msg", AC_BUF_STAT_MSG },
};

static int
parse_pcre(struct ac_rule *r, const char *v, size_t n, char *err, size_t errlen)
{
	char ex[64];
	struct ac_pcre p = { 0 };
	size_t i = 0;

	if (n > 0 && v[0] == '!') {
		p.negated = true;
		i++;
	}
	if (n < i + 4 || v[i] != '"' || v[n - 1] != '"' || v[i + 1] != '/') {
		ac_set_err(err, errlen, "pcre value not \"/regex/flags\": '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	const char *re = v + i + 2, *end = v + n - 1;
	const char *slash = end - 1;
	while (slash >= re && *slash != '/')
		slash--;
	if (slash < re) {
		ac_set_err(err, errlen, "pcre has no closing '/': '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	size_t fl = (size_t)(end - slash - 1);
	if (fl >= sizeof(p.flags)) {
		ac_set_err(err, errlen, "pcre has too many flags: '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	bool have_buf = false;
	p.buf = r->default_buf;
	for (size_t k = 0; k < fl; k++) {
		char c = slash[1 + k];
		if (strchr(pcre_flags_known, c) == NULL || c == '\0') {
			ac_set_err(err, errlen, "unknown pcre flag '%c' in '%s'", c,
				ac_excerpt(v, n, ex, sizeof(ex)));
			return -1;
		}
		for (size_t b = 0; b < sizeof(pcre_buf_flags) / sizeof(pcre_buf_flags[0]); b++) {
			if (pcre_buf_flags[b].flag != c)
				continue;
			if (have_buf && p.buf != pcre_buf_flags[b].buf) {
				ac_set_err(err, errlen, "pcre flags name two buffers in '%s'",
					ac_excerpt(v, n, ex, sizeof(ex)));
				return -1;
			}
			have_buf = true;
			p.buf = pcre_buf_flags[b].buf;
		}
		p.relative |= c == 'R';
		p.flags[k] = c;
	}
	size_t rl = (size_t)(slash - re);
	if (rl == 0) {
		ac_set_err(err, errlen, "empty pcre expression: '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	p.re = malloc(rl + 1);
	struct ac_pcre *np = realloc(r->pcres, (r->n_pcres + 1) * sizeof(*np));
	if (p.re == NULL || np == NULL) {
		free(p.re);
		if (np != NULL)
			r->pcres = np;
		ac_set_err(err, errlen, "out of memory");
		return -1;
	}
	memcpy(p.re, re, rl);
	p.re[rl] = '\0';
	r->pcres = np;
	r->pcres[r->n_pcres] = p;
	if (add_ropt(r, AC_ROPT_PCRE, 0, r->n_pcres) < 0) {
		free(p.re);
		ac_set_err(err, errlen, "out of memory");
		return -1;
	}
	r->n_pcres++;
	return 0;
}

/* byte_test, byte_jump, byte_extract, isdataat. */
static int
parse_byteop(struct ac_rule *r, enum ac_byteop_kind kind, const char *name, size_t name_len,
	const char *v, size_t n, char *err, size_t errlen)
{
	struct ac_byteop op;
	char why[64];
	int rc = ac_byteop_parse(
		kind, v, n, &op, r->vars, &r->n_vars, why, sizeof(why), err, errlen);

	(void)name;
	(void)name_len;
	if (rc < 0)
		return -1;
	if (rc > 0) {
		note_unsupported(r, why, strlen(why));
		return 0;
	}
	struct ac_byteop *nb = realloc(r->bops, (r->n_bops + 1) * sizeof(*nb));
	if (nb == NULL ||
		(r->bops = nb, add_ropt(r, AC_ROPT_BYTE, r->default_buf, r->n_bops) < 0)) {
		ac_set_err(err, errlen, "out of memory");
		return -1;
	}
	r->bops[r->n_bops++] = op;
	return 0;
}

/* metadata: note the mail and http services (file_data of mail is decoded
 * MIME in Snort). */
static void
parse_metadata(struct ac_rule *r, const char *v, size_t n)
{
	static const char *const mail[] = { "smtp", "pop3", "imap" };
	for (size_t i = 0; i + 8 < n; i++) {
		if (memcmp(v + i, "service ", 8) != 0 ||
			(i > 0 && v[i - 1] != ' ' && v[i - 1] != ','))
			continue;
		const char *s = v + i + 8;
		size_t l = 0;
		while (s + l < v + n && s[l] != ',' && !is_space(s[l]))
			l++;
		for (size_t k = 0; k < 3; k++)
			if (name_is(s, l, mail[k]))
				r->mail_service = true;
		if (name_is(s, l, "http"))
			r->http_service = true;
	}
}

/* fast_pattern[:only|:OFF,LEN] on the last content. */
static int
parse_fast_pattern(struct ac_content *c, const char *v, size_t n, char *err, size_t errlen)
{
	char ex[64];
	uint32_t off, len;
	const char *comma = memchr(v, ',', n);

	c->fast_pattern = true;
	if (n == 0)
		return 0;
	if (name_is(v, n, "only")) {
		c->fp_only = true;
		return 0;
	}
	if (comma != NULL && parse_uint(v, (size_t)(comma - v), &off) == 0 &&
		parse_uint(comma + 1, n - (size_t)(comma - v) - 1, &len) == 0 && len > 0 &&
		(uint64_t)off + len <= c->len) {
		c->fp_off = off;
		c->fp_len = len;
		return 0;
	}
	ac_set_err(err, errlen,
		"bad fast_pattern value '%s' (want nothing, 'only' or OFFSET,LENGTH within the "
		"%u-byte content)",
		ac_excerpt(v, n, ex, sizeof(ex)), c->len);
	return -1;
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
	bool fp = name_is(name, name_len, "fast_pattern");
	int32_t *pos = NULL;
	if (name_is(name, name_len, "depth"))
		pos = last ? &last->depth : NULL;
	else if (name_is(name, name_len, "offset"))
		pos = last ? &last->offset : NULL;
	else if (name_is(name, name_len, "distance"))
		pos = last ? &last->distance : NULL;
	else if (name_is(name, name_len, "within"))
		pos = last ? &last->within : NULL;
	bool is_pos = name_is(name, name_len, "depth") || name_is(name, name_len, "offset") ||
		name_is(name, name_len, "distance") || name_is(name, name_len, "within");
	bool http_mod = name_len > 5 && memcmp(name, "http_", 5) == 0;
	if (nocase || fp || is_pos || http_mod) {
		if (last == NULL) {
			ac_set_err(err, errlen, "'%s' before any content",
				ac_excerpt(name, name_len, ex, sizeof(ex)));
			return -1;
		}
		if (nocase) {
			last->nocase = true;
		} else if (fp) {
			return parse_fast_pattern(last, v, vn, err, errlen);
		} else if (http_mod) {
			size_t k = 0;
			while (k < sizeof(http_modifiers) / sizeof(http_modifiers[0]) &&
				!name_is(name, name_len, http_modifiers[k].name))
				k++;
			if (k < sizeof(http_modifiers) / sizeof(http_modifiers[0]))
				last->buf = http_modifiers[k].buf;
			else
				note_unsupported(r, name, name_len);
		} else {
			bool is_var;
			if (modifier_value(v, vn, pos, &is_var) < 0) {
				ac_set_err(err, errlen,
					"bad %s value '%s' (want an integer in -65535..65535 or a "
					"byte_extract variable)",
					ac_excerpt(name, name_len, ex, sizeof(ex)),
					ac_excerpt(v, vn, ex + 32, sizeof(ex) - 32));
				return -1;
			}
			if (is_var) {
				int slot = pos == &last->offset  ? 0
					: pos == &last->depth    ? 1
					: pos == &last->distance ? 2
								 : 3;
				int k = -1;
				for (unsigned i = 0; i < r->n_vars; i++)
					if (strlen(r->vars[i]) == vn &&
						memcmp(r->vars[i], v, vn) == 0)
						k = (int)i;
				if (k < 0) {
					ac_set_err(err, errlen,
						"%.*s names '%s', no byte_extract variable defined "
						"before it",
						(int)name_len, name,
						ac_excerpt(v, vn, ex, sizeof(ex)));
					return -1;
				}
				last->var[slot] = (int8_t)k;
			}
		}
		return 0;
	}
	if (name_is(name, name_len, "classtype")) {
		if (vn == 0 || vn >= sizeof(r->classtype)) {
			ac_set_err(err, errlen, "bad classtype '%s'",
				ac_excerpt(v, vn, ex, sizeof(ex)));
			return -1;
		}
		memcpy(r->classtype, v, vn);
		r->classtype[vn] = '\0';
	} else if (name_is(name, name_len, "sid")) {
		if (parse_uint(v, vn, &r->sid) < 0) {
			ac_set_err(err, errlen, "bad sid '%s'", ac_excerpt(v, vn, ex, sizeof(ex)));
			return -1;
		}
	} else if (name_is(name, name_len, "rev")) {
		if (parse_uint(v, vn, &r->rev) < 0) {
			ac_set_err(err, errlen, "bad rev '%s'", ac_excerpt(v, vn, ex, sizeof(ex)));
			return -1;
		}
	} else if (name_is(name, name_len, "msg")) {
		if (vn < 2 || v[0] != '"' || v[vn - 1] != '"') {
			ac_set_err(err, errlen, "msg value not in double quotes: '%s'",
				ac_excerpt(v, vn, ex, sizeof(ex)));
			return -1;
		}
		free(r->msg);
		r->msg = malloc(vn - 1);
		if (r->msg == NULL) {
			ac_set_err(err, errlen, "out of memory");
			return -1;
		}
		/* Unescape \" \; \\ and the like. */
		size_t o = 0;
		for (size_t i = 1; i + 1 < vn; i++) {
			if (v[i] == '\\' && i + 2 < vn)
				i++;
			r->msg[o++] = v[i];
		}
		r->msg[o] = '\0';
	} else if (name_is(name, name_len, "pcre")) {
		return parse_pcre(r, v, vn, err, errlen);
	} else if (name_is(name, name_len, "byte_test")) {
		return parse_byteop(r, AC_BOP_TEST, name, name_len, v, vn, err, errlen);
	} else if (name_is(name, name_len, "byte_jump")) {
		return parse_byteop(r, AC_BOP_JUMP, name, name_len, v, vn, err, errlen);
	} else if (name_is(name, name_len, "byte_extract")) {
		return parse_byteop(r, AC_BOP_EXTRACT, name, name_len, v, vn, err, errlen);
	} else if (name_is(name, name_len, "isdataat")) {
		return parse_byteop(r, AC_BOP_ISDATAAT, name, name_len, v, vn, err, errlen);
	} else if (name_is(name, name_len, "file_data")) {
		if (vn != 0 && !name_is(v, vn, "mime")) {
			ac_set_err(err, errlen, "bad file_data value '%s' (want none or mime)",
				ac_excerpt(v, vn, ex, sizeof(ex)));
			return -1;
		}
		r->default_buf = AC_BUF_FILE;
	} else if (name_is(name, name_len, "pkt_data")) {
		r->default_buf = AC_BUF_PKT;
	} else if (name_is(name, name_len, "rawbytes")) {
		if (last != NULL)
			last->buf = AC_BUF_PKT;
	} else if (name_is(name, name_len, "flow")) {
		uint8_t f;
		if (ac_flow_parse(v, vn, &f, err, errlen) < 0)
			return -1;
		r->flow |= f; /* only_stream: the verifier says whether it is exact */
	} else if (name_is(name, name_len, "flowbits")) {
		struct ac_fbop op;
		if (ac_fbop_parse(v, vn, &op, err, errlen) < 0)
			return -1;
		struct ac_fbop *nf = realloc(r->fbops, (r->n_fbops + 1) * sizeof(*nf));
		if (nf == NULL) {
			ac_fbop_free(&op);
			ac_set_err(err, errlen, "out of memory");
			return -1;
		}
		r->fbops = nf;
		r->fbops[r->n_fbops++] = op;
	} else if (name_is(name, name_len, "dsize")) {
		if (ac_range_parse(v, vn, &r->dsize, err, errlen) < 0)
			return -1;
		r->has_dsize = true;
	} else if (name_is(name, name_len, "urilen")) {
		const char *comma = memchr(v, ',', vn);
		size_t rn = comma ? (size_t)(comma - v) : vn;
		r->urilen_raw = true; /* Snort 2.9's default: the raw URI */
		if (comma != NULL) {
			const char *b = comma + 1;
			size_t bn = vn - rn - 1;
			while (bn > 0 && is_space(*b)) {
				b++;
				bn--;
			}
			if (name_is(b, bn, "norm"))
				r->urilen_raw = false;
			else if (!name_is(b, bn, "raw")) {
				ac_set_err(err, errlen, "bad urilen buffer '%s' (want norm or raw)",
					ac_excerpt(b, bn, ex, sizeof(ex)));
				return -1;
			}
		}
		if (ac_range_parse(v, rn, &r->urilen, err, errlen) < 0)
			return -1;
		r->has_urilen = true;
	} else if (name_is(name, name_len, "metadata")) {
		parse_metadata(r, v, vn);
	} else if (name_len == 0) {
		ac_set_err(err, errlen, "empty option name before '%s'",
			ac_excerpt(v, vn, ex, sizeof(ex)));
		return -1;
	} else {
		bool no_effect = false;
		for (size_t k = 0; k < sizeof(no_effect_opts) / sizeof(no_effect_opts[0]); k++)
			no_effect |= name_is(name, name_len, no_effect_opts[k]);
		if (!no_effect)
			note_unsupported(r, name, name_len);
	}
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
			ac_excerpt(hdr, len - i, ex, sizeof(ex)));
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
			ac_excerpt(tok[0], tlen[0], ex, sizeof(ex)));
		return AC_LINE_ERROR;
	}
	ok = false;
	for (size_t a = 0; a < sizeof(protocols) / sizeof(protocols[0]); a++)
		ok |= name_is(tok[1], tlen[1], protocols[a]);
	if (!ok) {
		ac_set_err(err, errlen, "unknown protocol '%s'",
			ac_excerpt(tok[1], tlen[1], ex, sizeof(ex)));
		return AC_LINE_ERROR;
	}
	if (!name_is(tok[4], tlen[4], "->") && !name_is(tok[4], tlen[4], "<>")) {
		ac_set_err(err, errlen, "bad direction '%s' (want -> or <>)",
			ac_excerpt(tok[4], tlen[4], ex, sizeof(ex)));
		return AC_LINE_ERROR;
	}
	for (int a = 0; a < 4; a++)
		if (name_is(tok[1], tlen[1], protocols[a]))
			rule->proto = (enum ac_proto)a;
	rule->bidirectional = name_is(tok[4], tlen[4], "<>");
	rule->src = strndup(tok[2], tlen[2]);
	rule->sport = strndup(tok[3], tlen[3]);
	rule->dst = strndup(tok[5], tlen[5]);
	rule->dport = strndup(tok[6], tlen[6]);
	if (!rule->src || !rule->sport || !rule->dst || !rule->dport) {
		ac_set_err(err, errlen, "out of memory");
		goto fail;
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
	for (unsigned i = 0; i < rule->n_pcres; i++)
		free(rule->pcres[i].re);
	free(rule->pcres);
	rule->pcres = NULL;
	rule->n_pcres = 0;
	free(rule->opts);
	rule->opts = NULL;
	rule->n_opts = 0;
	free(rule->bops);
	rule->bops = NULL;
	rule->n_bops = 0;
	for (unsigned i = 0; i < rule->n_fbops; i++)
		ac_fbop_free(&rule->fbops[i]);
	free(rule->fbops);
	rule->fbops = NULL;
	rule->n_fbops = 0;
	free(rule->src);
	free(rule->sport);
	free(rule->dst);
	free(rule->dport);
	free(rule->msg);
	rule->src = rule->sport = rule->dst = rule->dport = rule->msg = NULL;
}
