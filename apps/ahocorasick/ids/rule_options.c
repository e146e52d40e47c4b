/* Parsing and evaluation of byte_test, byte_jump, byte_extract, isdataat,
 * dsize/urilen ranges, flow and flowbits (see rule_options.h). */
#include "rule_options.h"
#include "errbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ac_buf_name[AC_BUF_N] = {
	[AC_BUF_PKT] = "pkt_data",
	[AC_BUF_FILE] = "file_data",
	[AC_BUF_URI] = "http_uri",
	[AC_BUF_RAW_URI] = "http_raw_uri",
	[AC_BUF_HEADER] = "http_header",
	[AC_BUF_RAW_HEADER] = "http_raw_header",
	[AC_BUF_COOKIE] = "http_cookie",
	[AC_BUF_RAW_COOKIE] = "http_raw_cookie",
	[AC_BUF_CLIENT_BODY] = "http_client_body",
	[AC_BUF_METHOD] = "http_method",
	[AC_BUF_STAT_CODE] = "http_stat_code",
	[AC_BUF_STAT_MSG] = "http_stat_msg",
};

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Trim spaces around [*s, *s + *n). */
static void
trim(const char **s, size_t *n)
{
	while (*n > 0 && is_space(**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && is_space((*s)[*n - 1]))
		(*n)--;
}

/* Split on commas into at most max fields (trimmed); the count, or -1 when
 * there are more. */
struct field {
	const char *s;
	size_t n;
};

static int
split_commas(const char *v, size_t n, struct field *f, int max)
{
	int k = 0;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && v[i] != ',')
			continue;
		if (k == max)
			return -1;
		f[k].s = v + start;
		f[k].n = i - start;
		trim(&f[k].s, &f[k].n);
		k++;
		start = i + 1;
	}
	return k;
}

static bool
eq(const struct field *f, const char *want)
{
	return strlen(want) == f->n && memcmp(f->s, want, f->n) == 0;
}

/* An unsigned decimal or 0x-hex number <= max; -1 if not one. */
static int
parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;
	unsigned base = 10;
	size_t i = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n || n - i > 20)
		return -1;
	for (; i < n; i++) {
		int d;
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (base == 16 && isxdigit((unsigned char)s[i]))
			d = tolower((unsigned char)s[i]) - 'a' + 10;
		else
			return -1;
		x = x * base + (uint64_t)d;
		if (x > max)
			return -1;
	}
	*out = x;
	return 0;
}

/* A signed decimal in [-65535, 65535]. */
static int
parse_offset(const char *s, size_t n, int32_t *out)
{
	uint64_t x;
	bool neg = n > 0 && s[0] == '-';
	if (neg || (n > 0 && s[0] == '+')) {
		s++;
		n--;
	}
	if (n == 0 || (n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ||
		parse_u64(s, n, 65535, &x) < 0)
		return -1;
	*out = neg ? -(int32_t)x : (int32_t)x;
	return 0;
}

static bool
is_var_name(const char *s, size_t n)
{
	if (n == 0 || n >= 32 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

static int
find_var(char names[AC_MAX_VARS][32], unsigned n_names, const char *s, size_t n)
{
	for (unsigned i = 0; i < n_names; i++)
		if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
			return (int)i;
	return -1;
}

/* A number or a byte_extract variable already defined.  0 or -1 (err). */
static int
number_or_var(const struct field *f, const char *what, bool is_offset, uint64_t max,
	char names[AC_MAX_VARS][32], unsigned n_names, int32_t *num, uint32_t *unum, int8_t *var,
	char *err, size_t errlen)
{
	char ex[48];
	*var = AC_VAR_NONE;
	if (f->n > 0 && (isalpha((unsigned char)f->s[0]) || f->s[0] == '_')) {
		int k = find_var(names, n_names, f->s, f->n);
		if (k < 0) {
			ac_set_err(err, errlen,
				"%s '%s' is neither a number nor a byte_extract variable defined "
				"before it",
				what, ac_excerpt(f->s, f->n, ex, sizeof(ex)));
			return -1;
		}
		*var = (int8_t)k;
		return 0;
	}
	if (is_offset) {
		if (parse_offset(f->s, f->n, num) < 0) {
			ac_set_err(err, errlen, "bad %s '%s' (want an integer in -65535..65535)",
				what, ac_excerpt(f->s, f->n, ex, sizeof(ex)));
			return -1;
		}
		return 0;
	}
	uint64_t x;
	if (parse_u64(f->s, f->n, max, &x) < 0) {
		ac_set_err(err, errlen, "bad %s '%s' (want 0..%llu)", what,
			ac_excerpt(f->s, f->n, ex, sizeof(ex)), (unsigned long long)max);
		return -1;
	}
	*unum = (uint32_t)x;
	return 0;
}

/* "name N" (a keyword and its number, one field). */
static bool
keyword_arg(const struct field *f, const char *kw, struct field *arg)
{
	size_t l = strlen(kw);
	if (f->n <= l || memcmp(f->s, kw, l) != 0 || !is_space(f->s[l]))
		return false;
	arg->s = f->s + l;
	arg->n = f->n - l;
	trim(&arg->s, &arg->n);
	return true;
}

static const char *const kind_name[] = { "byte_test", "byte_jump", "byte_extract", "isdataat" };

int
ac_byteop_parse(enum ac_byteop_kind kind, const char *v, size_t n, struct ac_byteop *op,
	char names[AC_MAX_VARS][32], unsigned *n_names, char *why, size_t whylen, char *err,
	size_t errlen)
{
	struct field f[16];
	char ex[64], ex2[48];
	const char *kn = kind_name[kind];
	int nf = split_commas(v, n, f, 16);
	uint64_t x;
	int first_flag;

	memset(op, 0, sizeof(*op));
	op->kind = (uint8_t)kind;
	op->offset_var = op->value_var = op->var = AC_VAR_NONE;
	op->multiplier = 1;
	if (nf < 0) {
		ac_set_err(err, errlen, "%s value has too many fields: '%s'", kn,
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	if (kind == AC_BOP_ISDATAAT) {
		struct field nf0 = f[0];
		if (nf0.n > 0 && nf0.s[0] == '!') {
			op->negate = true;
			nf0.s++;
			nf0.n--;
			trim(&nf0.s, &nf0.n);
		}
		if (number_or_var(&nf0, "isdataat location", false, 65535, names, *n_names, NULL,
			    &op->value, &op->offset_var, err, errlen) < 0)
			return -1;
		op->offset = (int32_t)op->value;
		op->value = 0;
		for (int i = 1; i < nf; i++) {
			if (eq(&f[i], "relative"))
				op->relative = true;
			else if (eq(&f[i], "rawbytes"))
				; /* the raw payload is what every buffer here is cut from */
			else {
				ac_set_err(err, errlen, "unknown isdataat argument '%s' in '%s'",
					ac_excerpt(f[i].s, f[i].n, ex2, sizeof(ex2)),
					ac_excerpt(v, n, ex, sizeof(ex)));
				return -1;
			}
		}
		return 0;
	}
	int need = kind == AC_BOP_TEST ? 4 : kind == AC_BOP_JUMP ? 2 : 3;
	if (nf < need) {
		ac_set_err(err, errlen, "%s value '%s' has %d fields, needs at least %d", kn,
			ac_excerpt(v, n, ex, sizeof(ex)), nf, need);
		return -1;
	}
	if (parse_u64(f[0].s, f[0].n, 10, &x) < 0 || x == 0) {
		ac_set_err(err, errlen, "bad %s byte count '%s' (want 1..10)", kn,
			ac_excerpt(f[0].s, f[0].n, ex, sizeof(ex)));
		return -1;
	}
	op->nbytes = (uint8_t)x;
	if (kind == AC_BOP_TEST) {
		const char *o = f[1].s;
		size_t on = f[1].n;
		if (on > 0 && o[0] == '!') {
			op->negate = true;
			o++;
			on--;
		}
		if (on == 0 && op->negate)
			op->op = '=';
		else if (on == 1 && strchr("<>=&^", o[0]) != NULL)
			op->op = (uint8_t)o[0];
		else if (on == 2 && o[0] == '<' && o[1] == '=')
			op->op = 'l';
		else if (on == 2 && o[0] == '>' && o[1] == '=')
			op->op = 'g';
		else {
			ac_set_err(err, errlen,
				"bad byte_test operator '%s' (want [!] and one of < > = & ^ <= >=)",
				ac_excerpt(f[1].s, f[1].n, ex, sizeof(ex)));
			return -1;
		}
		if (number_or_var(&f[2], "byte_test value", false, UINT32_MAX, names, *n_names,
			    NULL, &op->value, &op->value_var, err, errlen) < 0 ||
			number_or_var(&f[3], "byte_test offset", true, 0, names, *n_names,
				&op->offset, NULL, &op->offset_var, err, errlen) < 0)
			return -1;
		first_flag = 4;
	} else if (kind == AC_BOP_JUMP) {
		if (number_or_var(&f[1], "byte_jump offset", true, 0, names, *n_names, &op->offset,
			    NULL, &op->offset_var, err, errlen) < 0)
			return -1;
		first_flag = 2;
	} else {
		if (number_or_var(&f[1], "byte_extract offset", true, 0, names, *n_names,
			    &op->offset, NULL, &op->offset_var, err, errlen) < 0)
			return -1;
		if (!is_var_name(f[2].s, f[2].n)) {
			ac_set_err(err, errlen, "bad byte_extract variable name '%s'",
				ac_excerpt(f[2].s, f[2].n, ex, sizeof(ex)));
			return -1;
		}
		if (find_var(names, *n_names, f[2].s, f[2].n) < 0 && *n_names == AC_MAX_VARS) {
			ac_set_err(err, errlen, "more than %d byte_extract variables in one rule",
				AC_MAX_VARS);
			return -1;
		}
		first_flag = 3;
	}
	bool dce = false, string = false;
	for (int i = first_flag; i < nf; i++) {
		struct field arg;
		if (eq(&f[i], "relative"))
			op->relative = true;
		else if (eq(&f[i], "big"))
			op->little = false;
		else if (eq(&f[i], "little"))
			op->little = true;
		else if (eq(&f[i], "string"))
			string = true;
		else if (eq(&f[i], "hex"))
			op->base = 16;
		else if (eq(&f[i], "dec"))
			op->base = 10;
		else if (eq(&f[i], "oct"))
			op->base = 8;
		else if (eq(&f[i], "dce"))
			dce = true;
		else if (keyword_arg(&f[i], "bitmask", &arg)) {
			if (parse_u64(arg.s, arg.n, UINT32_MAX, &x) < 0 || x == 0) {
				ac_set_err(err, errlen, "bad %s bitmask '%s'", kn,
					ac_excerpt(arg.s, arg.n, ex, sizeof(ex)));
				return -1;
			}
			op->bitmask = (uint32_t)x;
		} else if (kind != AC_BOP_TEST && keyword_arg(&f[i], "multiplier", &arg)) {
			if (parse_u64(arg.s, arg.n, 65535, &x) < 0 || x == 0) {
				ac_set_err(err, errlen, "bad %s multiplier '%s' (want 1..65535)",
					kn, ac_excerpt(arg.s, arg.n, ex, sizeof(ex)));
				return -1;
			}
			op->multiplier = (uint32_t)x;
		} else if (kind == AC_BOP_JUMP && eq(&f[i], "align"))
			op->align = 4;
		else if (kind == AC_BOP_EXTRACT && keyword_arg(&f[i], "align", &arg)) {
			if (!(arg.n == 1 && (arg.s[0] == '2' || arg.s[0] == '4'))) {
				ac_set_err(err, errlen, "bad byte_extract align '%s' (want 2 or 4)",
					ac_excerpt(arg.s, arg.n, ex, sizeof(ex)));
				return -1;
			}
			op->align = (uint8_t)(arg.s[0] - '0');
		} else if (kind == AC_BOP_JUMP && eq(&f[i], "from_beginning"))
			op->from_beginning = true;
		else if (kind == AC_BOP_JUMP && keyword_arg(&f[i], "post_offset", &arg)) {
			if (parse_offset(arg.s, arg.n, &op->post_offset) < 0) {
				ac_set_err(err, errlen,
					"bad byte_jump post_offset '%s' (want -65535..65535)",
					ac_excerpt(arg.s, arg.n, ex, sizeof(ex)));
				return -1;
			}
		} else {
			ac_set_err(err, errlen, "unknown %s argument '%s' in '%s'", kn,
				ac_excerpt(f[i].s, f[i].n, ex2, sizeof(ex2)),
				ac_excerpt(v, n, ex, sizeof(ex)));
			return -1;
		}
	}
	if (op->base != 0 && !string) {
		ac_set_err(err, errlen, "%s '%s': hex, dec and oct need 'string'", kn,
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	if (string && op->base == 0)
		op->base = 10;
	if (!string && op->nbytes > 4) {
		ac_set_err(err, errlen, "%s '%s': more than 4 bytes need 'string'", kn,
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	if (kind == AC_BOP_EXTRACT) {
		/* A name extracted again is overwritten, as in Snort. */
		int k = find_var(names, *n_names, f[2].s, f[2].n);
		if (k < 0) {
			k = (int)(*n_names)++;
			memcpy(names[k], f[2].s, f[2].n);
			names[k][f[2].n] = '\0';
		}
		op->var = (int8_t)k;
	}
	if (dce) {
		/* The byte order comes from the DCE/RPC session, which is not
		 * decoded here. */
		snprintf(why, whylen, "%s/dce", kn);
		return 1;
	}
	return 0;
}

static int
digit_of(uint8_t c, unsigned base)
{
	int d;
	if (c >= '0' && c <= '9')
		d = c - '0';
	else if (c >= 'a' && c <= 'f')
		d = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		d = c - 'A' + 10;
	else
		return -1;
	return d < (int)base ? d : -1;
}

bool
ac_byte_read(
	const struct ac_byteop *op, const uint8_t *buf, uint32_t len, int64_t at, uint32_t *out)
{
	uint32_t v = 0;

	if (at < 0 || at + op->nbytes > (int64_t)len)
		return false;
	const uint8_t *p = buf + at;
	if (op->base == 0) {
		for (unsigned i = 0; i < op->nbytes; i++)
			v = v << 8 | p[op->little ? op->nbytes - 1 - i : i];
	} else {
		unsigned k = 0;
		for (; k < op->nbytes; k++) {
			int d = digit_of(p[k], op->base);
			if (d < 0)
				break;
			v = v * op->base + (uint32_t)d; /* modulo 2^32 */
		}
		if (k == 0)
			return false;
	}
	if (op->bitmask != 0)
		v = (v & op->bitmask) >> __builtin_ctz(op->bitmask);
	*out = v;
	return true;
}

static int64_t
offset_of(const struct ac_byteop *op, const uint32_t *vars)
{
	return op->offset_var != AC_VAR_NONE ? (int64_t)vars[(int)op->offset_var] : op->offset;
}

bool
ac_byte_test(const struct ac_byteop *op, const uint8_t *buf, uint32_t len, int64_t base,
	const uint32_t *vars)
{
	uint32_t v;
	int64_t at = (op->relative ? base : 0) + offset_of(op, vars);
	if (!ac_byte_read(op, buf, len, at, &v))
		return false;
	uint32_t t = op->value_var != AC_VAR_NONE ? vars[(int)op->value_var] : op->value;
	bool r;
	switch (op->op) {
	case '<':
		r = v < t;
		break;
	case '>':
		r = v > t;
		break;
	case 'l':
		r = v <= t;
		break;
	case 'g':
		r = v >= t;
		break;
	case '&':
		r = (v & t) != 0;
		break;
	case '^':
		r = (v ^ t) != 0;
		break;
	default:
		r = v == t;
	}
	return r != op->negate;
}

bool
ac_byte_jump(const struct ac_byteop *op, const uint8_t *buf, uint32_t len, int64_t base,
	const uint32_t *vars, int64_t *cursor)
{
	uint32_t v;
	int64_t at = (op->relative ? base : 0) + offset_of(op, vars);
	if (!ac_byte_read(op, buf, len, at, &v))
		return false;
	int64_t j = (int64_t)v * op->multiplier;
	if (op->align)
		j = (j + 3) & ~(int64_t)3;
	int64_t c = (op->from_beginning ? 0 : at + op->nbytes) + j + op->post_offset;
	if (c < 0 || c > (int64_t)len)
		return false;
	*cursor = c;
	return true;
}

bool
ac_byte_extract(const struct ac_byteop *op, const uint8_t *buf, uint32_t len, int64_t base,
	const uint32_t *vars, uint32_t *out, int64_t *cursor)
{
	uint32_t v;
	int64_t at = (op->relative ? base : 0) + offset_of(op, vars);
	if (!ac_byte_read(op, buf, len, at, &v))
		return false;
	uint64_t x = (uint64_t)v * op->multiplier;
	if (op->align)
		x = (x + op->align - 1) / op->align * op->align;
	*out = (uint32_t)x;
	*cursor = at + op->nbytes;
	return true;
}

bool
ac_isdataat(const struct ac_byteop *op, uint32_t len, int64_t base, const uint32_t *vars)
{
	int64_t p = (op->relative ? base : 0) + offset_of(op, vars);
	bool r = p >= 0 && p < (int64_t)len;
	return r != op->negate;
}

int
ac_range_parse(const char *v, size_t n, struct ac_size_range *r, char *err, size_t errlen)
{
	char ex[48];
	uint64_t a, b;
	const char *s = v;
	size_t sn = n;

	trim(&s, &sn);
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i + 1 < sn; i++) {
		if (s[i] != '<' || (s[i + 1] != '>' && s[i + 1] != '='))
			continue;
		if (i == 0)
			break; /* a leading operator, below */
		size_t w = s[i + 1] == '>' ? 2 : 3;
		if (w == 3 && (i + 2 >= sn || s[i + 2] != '>'))
			break;
		const char *x = s, *y = s + i + w;
		size_t xn = i, yn = sn - i - w;
		trim(&x, &xn);
		trim(&y, &yn);
		if (parse_u64(x, xn, 65535, &a) < 0 || parse_u64(y, yn, 65535, &b) < 0 || a > b)
			goto bad;
		r->op = w == 2 ? AC_RANGE_IN_EXCL : AC_RANGE_IN_INCL;
		r->lo = (uint32_t)a;
		r->hi = (uint32_t)b;
		return 0;
	}
	r->op = AC_RANGE_EQ;
	if (sn >= 2 && s[0] == '<' && s[1] == '=') {
		r->op = AC_RANGE_LE;
		s += 2;
		sn -= 2;
	} else if (sn >= 2 && s[0] == '>' && s[1] == '=') {
		r->op = AC_RANGE_GE;
		s += 2;
		sn -= 2;
	} else if (sn >= 2 && s[0] == '!' && s[1] == '=') {
		r->op = AC_RANGE_NE;
		s += 2;
		sn -= 2;
	} else if (sn >= 1 && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '!')) {
		r->op = s[0] == '<'   ? AC_RANGE_LT
			: s[0] == '>' ? AC_RANGE_GT
			: s[0] == '!' ? AC_RANGE_NE
				      : AC_RANGE_EQ;
		s++;
		sn--;
	}
	trim(&s, &sn);
	if (parse_u64(s, sn, 65535, &a) < 0)
		goto bad;
	r->lo = r->hi = (uint32_t)a;
	return 0;
bad:
	ac_set_err(err, errlen,
		"bad size range '%s' (want [<|>|=|!|<=|>=]N, N<>M or N<=>M, numbers 0..65535)",
		ac_excerpt(v, n, ex, sizeof(ex)));
	return -1;
}

bool
ac_range_match(const struct ac_size_range *r, uint32_t x)
{
	switch (r->op) {
	case AC_RANGE_NE:
		return x != r->lo;
	case AC_RANGE_LT:
		return x < r->lo;
	case AC_RANGE_GT:
		return x > r->lo;
	case AC_RANGE_LE:
		return x <= r->lo;
	case AC_RANGE_GE:
		return x >= r->lo;
	case AC_RANGE_IN_EXCL:
		return x > r->lo && x < r->hi;
	case AC_RANGE_IN_INCL:
		return x >= r->lo && x <= r->hi;
	default:
		return x == r->lo;
	}
}

int
ac_flow_parse(const char *v, size_t n, uint8_t *flags, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		uint8_t bit;
	} words[] = {
		{ "to_server", AC_FLOW_TO_SERVER },
		{ "from_client", AC_FLOW_TO_SERVER },
		{ "to_client", AC_FLOW_TO_CLIENT },
		{ "from_server", AC_FLOW_TO_CLIENT },
		{ "established", AC_FLOW_ESTABLISHED },
		{ "not_established", AC_FLOW_NOT_ESTABLISHED },
		{ "stateless", AC_FLOW_STATELESS },
		{ "only_stream", AC_FLOW_ONLY_STREAM },
		{ "no_stream", AC_FLOW_NO_STREAM },
	};
	struct field f[12];
	char ex[64], ex2[48];
	int nf = split_commas(v, n, f, 12);

	*flags = 0;
	if (nf < 0) {
		ac_set_err(err, errlen, "flow value has too many fields: '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	for (int i = 0; i < nf; i++) {
		size_t k = 0;
		while (k < sizeof(words) / sizeof(words[0]) && !eq(&f[i], words[k].name))
			k++;
		if (k == sizeof(words) / sizeof(words[0])) {
			ac_set_err(err, errlen, "unknown flow argument '%s' in '%s'",
				ac_excerpt(f[i].s, f[i].n, ex2, sizeof(ex2)),
				ac_excerpt(v, n, ex, sizeof(ex)));
			return -1;
		}
		*flags |= words[k].bit;
	}
	uint8_t both = AC_FLOW_TO_SERVER | AC_FLOW_TO_CLIENT;
	uint8_t est = AC_FLOW_ESTABLISHED | AC_FLOW_NOT_ESTABLISHED;
	uint8_t streams = AC_FLOW_ONLY_STREAM | AC_FLOW_NO_STREAM;
	if ((*flags & both) == both || (*flags & est) == est || (*flags & streams) == streams ||
		((*flags & AC_FLOW_STATELESS) && (*flags & est))) {
		ac_set_err(err, errlen, "contradictory flow arguments '%s'",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	return 0;
}

static bool
fb_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

void
ac_fbop_free(struct ac_fbop *op)
{
	for (unsigned i = 0; i < op->n_names; i++)
		free(op->names[i]);
	free(op->names);
	free(op->group);
	memset(op, 0, sizeof(*op));
}

int
ac_fbop_parse(const char *v, size_t n, struct ac_fbop *op, char *err, size_t errlen)
{
	static const char *const cmds[] = { "set", "setx", "unset", "toggle", "reset", "isset",
		"isnotset", "noalert" };
	struct field f[4];
	char ex[64];
	int nf = split_commas(v, n, f, 4);

	memset(op, 0, sizeof(*op));
	if (nf < 1 || nf > 3) {
		ac_set_err(err, errlen, "bad flowbits value '%s' (want CMD[,STATES[,GROUP]])",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	unsigned c = 0;
	while (c < sizeof(cmds) / sizeof(cmds[0]) && !eq(&f[0], cmds[c]))
		c++;
	if (c == sizeof(cmds) / sizeof(cmds[0])) {
		ac_set_err(err, errlen,
			"unknown flowbits command in '%s' (want set, setx, unset, toggle, reset, "
			"isset, isnotset or noalert)",
			ac_excerpt(v, n, ex, sizeof(ex)));
		return -1;
	}
	op->cmd = (uint8_t)c;
	bool check = c == AC_FB_ISSET || c == AC_FB_ISNOTSET;
	if (c == AC_FB_NOALERT) {
		if (nf != 1)
			goto bad;
		return 0;
	}
	if (c == AC_FB_RESET) {
		if (nf > 2)
			goto bad;
		if (nf == 2) {
			if (!fb_name_ok(f[1].s, f[1].n))
				goto bad;
			op->group = strndup(f[1].s, f[1].n);
			if (op->group == NULL)
				goto oom;
		}
		return 0;
	}
	if (nf < 2)
		goto bad;
	if (nf == 3) {
		if (!fb_name_ok(f[2].s, f[2].n))
			goto bad;
		op->group = strndup(f[2].s, f[2].n);
		if (op->group == NULL)
			goto oom;
	}
	if (eq(&f[1], "any") || eq(&f[1], "all")) {
		/* Every state of the group. */
		bool any = eq(&f[1], "any");
		if (op->group == NULL || (!check && any) ||
			(c != AC_FB_UNSET && c != AC_FB_TOGGLE && !check))
			goto bad;
		op->any = any;
		op->all_grp = !any;
		return 0;
	}
	if (c == AC_FB_SETX && op->group == NULL)
		goto bad;
	bool amp = memchr(f[1].s, '&', f[1].n) != NULL, bar = memchr(f[1].s, '|', f[1].n) != NULL;
	if ((amp && bar) || (bar && !check))
		goto bad;
	op->any = bar;
	op->names = calloc(AC_FB_MAX_NAMES, sizeof(char *));
	if (op->names == NULL)
		goto oom;
	const char *s = f[1].s, *end = f[1].s + f[1].n;
	while (s <= end) {
		const char *e = s;
		while (e < end && *e != '&' && *e != '|')
			e++;
		const char *ns = s;
		size_t nn = (size_t)(e - s);
		trim(&ns, &nn);
		if (!fb_name_ok(ns, nn) || op->n_names == AC_FB_MAX_NAMES)
			goto bad;
		op->names[op->n_names] = strndup(ns, nn);
		if (op->names[op->n_names] == NULL)
			goto oom;
		op->n_names++;
		s = e + 1;
	}
	return 0;
bad:
	ac_fbop_free(op);
	ac_set_err(err, errlen,
		"bad flowbits value '%s' (states: names of letters, digits, '.', '_', '-' "
		"joined by & or, for isset/isnotset, |; setx needs a group; any/all need a "
		"group)",
		ac_excerpt(v, n, ex, sizeof(ex)));
	return -1;
oom:
	ac_fbop_free(op);
	ac_set_err(err, errlen, "out of memory");
	return -1;
}
