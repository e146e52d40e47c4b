/* Rule header variables and address/port sets (see rule_vars.h). */
#include "rule_vars.h"
#include "errbuf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Snort 2.9's snort.conf defaults, with every network "any" (the app does
 * not know the protected network: give it with --vars). */
const char ac_vars_default_text[] =
	"ipvar HOME_NET any\n"
	"ipvar EXTERNAL_NET any\n"
	"ipvar DNS_SERVERS $HOME_NET\n"
	"ipvar SMTP_SERVERS $HOME_NET\n"
	"ipvar HTTP_SERVERS $HOME_NET\n"
	"ipvar SQL_SERVERS $HOME_NET\n"
	"ipvar TELNET_SERVERS $HOME_NET\n"
	"ipvar SSH_SERVERS $HOME_NET\n"
	"ipvar FTP_SERVERS $HOME_NET\n"
	"ipvar SIP_SERVERS $HOME_NET\n"
	"portvar HTTP_PORTS "
	"[80,81,311,383,591,593,901,1220,1414,1741,1830,2301,2381,2809,3037,3128,3702,4343,"
	"4848,5250,6988,7000,7001,7144,7145,7510,7777,7779,8000,8008,8014,8028,8080,8085,8088,"
	"8090,8118,8123,8180,8181,8243,8280,8300,8800,8888,8899,9000,9060,9080,9090,9091,9443,"
	"9999,11371,34443,34444,41080,50002,55555]\n"
	"portvar SHELLCODE_PORTS !80\n"
	"portvar ORACLE_PORTS 1024:\n"
	"portvar SSH_PORTS 22\n"
	"portvar FTP_PORTS [21,2100,3535]\n"
	"portvar SIP_PORTS [5060,5061,5600]\n"
	"portvar FILE_DATA_PORTS [$HTTP_PORTS,110,143]\n"
	"portvar GTP_PORTS [2123,2152,3386]\n";

#define MAX_DEPTH 16

static int
set_var(struct ac_vars *vars, const char *name, size_t nl, const char *value, size_t vl)
{
	char *n = strndup(name, nl), *v = strndup(value, vl);

	if (n == NULL || v == NULL)
		goto oom;
	for (unsigned i = 0; i < vars->n; i++)
		if (strcmp(vars->v[i].name, n) == 0) {
			free(n);
			free(vars->v[i].value);
			vars->v[i].value = v;
			return 0;
		}
	struct ac_var *nv = realloc(vars->v, (vars->n + 1) * sizeof(*nv));
	if (nv == NULL)
		goto oom;
	vars->v = nv;
	vars->v[vars->n].name = n;
	vars->v[vars->n++].value = v;
	return 0;
oom:
	free(n);
	free(v);
	return -1;
}

/* One "ipvar|portvar|var NAME VALUE" line; 1 if blank or comment. */
static int
parse_line(struct ac_vars *vars, const char *line, char *err, size_t errlen, const char *where)
{
	const char *p = line;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 1;
	const char *kw = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	size_t kl = (size_t)(p - kw);
	if (!((kl == 5 && memcmp(kw, "ipvar", 5) == 0) ||
		    (kl == 7 && memcmp(kw, "portvar", 7) == 0) ||
		    (kl == 3 && memcmp(kw, "var", 3) == 0))) {
		ac_set_err(
			err, errlen, "%s: '%.*s' is not ipvar, portvar or var", where, (int)kl, kw);
		return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	const char *name = p;
	while (*p && (isalnum((unsigned char)*p) || *p == '_'))
		p++;
	size_t nl = (size_t)(p - name);
	if (nl == 0 || (*p && !isspace((unsigned char)*p))) {
		ac_set_err(err, errlen, "%s: bad variable name in '%s'", where, line);
		return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	size_t vl = strlen(p);
	while (vl > 0 && isspace((unsigned char)p[vl - 1]))
		vl--;
	if (vl == 0) {
		ac_set_err(err, errlen, "%s: variable %.*s has no value", where, (int)nl, name);
		return -1;
	}
	if (set_var(vars, name, nl, p, vl) < 0) {
		ac_set_err(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int
ac_vars_load(struct ac_vars *vars, const char *path, char *err, size_t errlen)
{
	char where[512];
	memset(vars, 0, sizeof(*vars));

	char *defs = strdup(ac_vars_default_text);
	if (defs == NULL) {
		ac_set_err(err, errlen, "out of memory");
		return -1;
	}
	char *save = NULL;
	for (char *l = strtok_r(defs, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (parse_line(vars, l, err, errlen, "defaults") < 0) {
			free(defs);
			ac_vars_free(vars);
			return -1;
		}
	free(defs);
	if (path == NULL)
		return 0;
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		ac_set_err(err, errlen, "--vars: cannot read '%s': %s", path, strerror(errno));
		ac_vars_free(vars);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int rc = 0;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (parse_line(vars, line, err, errlen, where) < 0) {
			rc = -1;
			break;
		}
	}
	free(line);
	fclose(f);
	if (rc < 0)
		ac_vars_free(vars);
	return rc;
}

void
ac_vars_free(struct ac_vars *vars)
{
	for (unsigned i = 0; i < vars->n; i++) {
		free(vars->v[i].name);
		free(vars->v[i].value);
	}
	free(vars->v);
	memset(vars, 0, sizeof(*vars));
}

const char *
ac_addr_str(ac_addr a, char *buf, size_t size)
{
	if (ac_addr_is_v4(a)) {
		struct in_addr ia = { .s_addr = htonl((uint32_t)a) };
		return inet_ntop(AF_INET, &ia, buf, (socklen_t)size);
	}
	struct in6_addr i6;
	for (int i = 15; i >= 0; i--, a >>= 8)
		i6.s6_addr[i] = (uint8_t)a;
	return inet_ntop(AF_INET6, &i6, buf, (socklen_t)size);
}

static int
push_range(struct ac_range **a, uint32_t *n, ac_addr lo, ac_addr hi)
{
	struct ac_range *na = realloc(*a, (*n + 1) * sizeof(*na));
	if (na == NULL)
		return -1;
	*a = na;
	na[*n].lo = lo;
	na[(*n)++].hi = hi;
	return 0;
}

struct parse_ctx {
	const struct ac_vars *vars;
	bool is_port;
	char *err;
	size_t errlen;
	const char *field;
};

static int parse_elem(struct parse_ctx *c, const char *s, size_t n, bool negated,
	struct ac_netset *out, int depth);

/* A single address[/bits] or port[:port]. */
static int
parse_atom(struct parse_ctx *c, const char *s, size_t n, ac_addr *lo, ac_addr *hi)
{
	char buf[64];
	if (n == 0 || n >= sizeof(buf))
		goto bad;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (c->is_port) {
		char *colon = strchr(buf, ':');
		long a = 0, b = 65535;
		char *e;
		if (colon == NULL) {
			a = b = strtol(buf, &e, 10);
			if (*e || e == buf)
				goto bad;
		} else {
			*colon = '\0';
			if (buf[0]) {
				a = strtol(buf, &e, 10);
				if (*e)
					goto bad;
			}
			if (colon[1]) {
				b = strtol(colon + 1, &e, 10);
				if (*e)
					goto bad;
			}
		}
		if (a < 0 || b > 65535 || a > b)
			goto bad;
		*lo = (uint32_t)a;
		*hi = (uint32_t)b;
		return 0;
	}
	char *slash = strchr(buf, '/');
	bool v6 = strchr(buf, ':') != NULL;
	long bits = v6 ? 128 : 32;
	if (slash != NULL) {
		char *e;
		*slash = '\0';
		bits = strtol(slash + 1, &e, 10);
		if (*e || e == slash + 1 || bits < 0 || bits > (v6 ? 128 : 32))
			goto bad;
	}
	ac_addr a;
	if (v6) {
		struct in6_addr i6;
		if (inet_pton(AF_INET6, buf, &i6) != 1)
			goto bad;
		a = ac_addr_v6(i6.s6_addr);
	} else {
		struct in_addr ia;
		if (inet_pton(AF_INET, buf, &ia) != 1)
			goto bad;
		a = ac_addr_v4(ntohl(ia.s_addr));
		bits += 96;
	}
	ac_addr mask = bits == 0 ? 0 : ~(ac_addr)0 << (128 - bits);
	*lo = a & mask;
	*hi = (a & mask) | ~mask;
	return 0;
bad:
	ac_set_err(c->err, c->errlen, "bad %s '%.*s' in %s", c->is_port ? "port" : "address",
		(int)n, s, c->field);
	return -1;
}

/* A comma-separated list (without its brackets). */
static int
parse_list(struct parse_ctx *c, const char *s, size_t n, bool negated, struct ac_netset *out,
	int depth)
{
	size_t i = 0;
	while (i <= n) {
		size_t st = i;
		int nest = 0;
		while (i < n && (nest > 0 || s[i] != ',')) {
			nest += s[i] == '[';
			nest -= s[i] == ']';
			i++;
		}
		if (parse_elem(c, s + st, i - st, negated, out, depth + 1) < 0)
			return -1;
		i++;
	}
	return 0;
}

static int
parse_elem(struct parse_ctx *c, const char *s, size_t n, bool negated, struct ac_netset *out,
	int depth)
{
	if (depth > MAX_DEPTH) {
		ac_set_err(c->err, c->errlen, "%s: lists or variables nested too deep", c->field);
		return -1;
	}
	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0) {
		ac_set_err(c->err, c->errlen, "empty element in %s", c->field);
		return -1;
	}
	if (s[0] == '!') {
		/* !x of a set with negations in it cannot be written as
		 * ranges here (and Snort rejects most of them too). */
		struct ac_netset inner = { 0 };
		int rc = parse_elem(c, s + 1, n - 1, false, &inner, depth + 1);
		if (rc == 0 && (inner.n_neg > 0 || inner.none_match)) {
			ac_set_err(c->err, c->errlen,
				"%s: negation of '%.*s', which has negations itself, is not "
				"supported",
				c->field, (int)(n - 1), s + 1);
			rc = -1;
		}
		if (rc == 0 && inner.n_pos == 0) { /* !any */
			if (negated)
				rc = 0; /* !!any: any */
			else
				out->none_match = true;
		}
		for (uint32_t i = 0; rc == 0 && i < inner.n_pos; i++)
			rc = negated ? push_range(&out->pos, &out->n_pos, inner.pos[i].lo,
					       inner.pos[i].hi)
				     : push_range(&out->neg, &out->n_neg, inner.pos[i].lo,
					       inner.pos[i].hi);
		ac_netset_free(&inner);
		return rc;
	}
	if (s[0] == '[') {
		if (s[n - 1] != ']') {
			ac_set_err(c->err, c->errlen, "unclosed '[' in %s", c->field);
			return -1;
		}
		return parse_list(c, s + 1, n - 2, negated, out, depth);
	}
	if (s[0] == '$') {
		for (unsigned i = 0; i < c->vars->n; i++)
			if (strlen(c->vars->v[i].name) == n - 1 &&
				memcmp(c->vars->v[i].name, s + 1, n - 1) == 0)
				return parse_elem(c, c->vars->v[i].value,
					strlen(c->vars->v[i].value), negated, out, depth + 1);
		ac_set_err(c->err, c->errlen, "unknown variable '%.*s' in %s (define it in --vars)",
			(int)n, s, c->field);
		return -1;
	}
	ac_addr lo, hi;
	if (n == 3 && memcmp(s, "any", 3) == 0) {
		lo = 0;
		hi = c->is_port ? 65535 : ~(ac_addr)0;
	} else if (parse_atom(c, s, n, &lo, &hi) < 0) {
		return -1;
	}
	if (negated)
		return push_range(&out->neg, &out->n_neg, lo, hi);
	return push_range(&out->pos, &out->n_pos, lo, hi);
}

int
ac_netset_parse(struct ac_netset *set, const char *text, bool is_port, const struct ac_vars *vars,
	char *err, size_t errlen)
{
	struct parse_ctx c = { vars, is_port, err, errlen, text };
	memset(set, 0, sizeof(*set));
	if (parse_elem(&c, text, strlen(text), false, set, 0) < 0) {
		ac_netset_free(set);
		return -1;
	}
	/* "any" among the positives: every value. */
	ac_addr top = is_port ? 65535 : ~(ac_addr)0;
	for (uint32_t i = 0; i < set->n_pos; i++)
		if (set->pos[i].lo == 0 && set->pos[i].hi == top) {
			free(set->pos);
			set->pos = NULL;
			set->n_pos = 0;
			break;
		}
	return 0;
}

void
ac_netset_free(struct ac_netset *set)
{
	free(set->pos);
	free(set->neg);
	memset(set, 0, sizeof(*set));
}
