/* Rules mode: fast patterns and full rule verification (see rule_verify.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "rule_verify.h"
#include "errbuf.h"

#include <pcre2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Content alternatives one rule may try on one packet when failures cannot
 * be remembered (rules with byte_extract); beyond it the rule is given up
 * on and counted (budget_exceeded). */
#define AC_VERIFY_BUDGET 65536

static uint8_t lower[256];

static void
init_lower(void)
{
	for (int i = 0; i < 256; i++)
		lower[i] = (uint8_t)(i >= 'A' && i <= 'Z' ? i + 32 : i);
}

static int add_note(struct ac_verifier *v, const struct ac_ruleset *rs, const struct ac_rule *r,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int
add_note(struct ac_verifier *v, const struct ac_ruleset *rs, const struct ac_rule *r,
	const char *fmt, ...)
{
	char msg[512], *line;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (asprintf(&line, "%s:%u: sid %u: %s", rs->path, r->line, r->sid, msg) < 0)
		return -1;
	char **nn = realloc(v->notes, (v->n_notes + 1) * sizeof(*nn));
	if (nn == NULL) {
		free(line);
		return -1;
	}
	v->notes = nn;
	v->notes[v->n_notes++] = line;
	return 0;
}

/* Append name to a comma-separated list once. */
static void
add_reason(char *list, size_t size, const char *name)
{
	size_t n = strlen(name), have = strlen(list);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == n && memcmp(p, name, n) == 0)
			return;
		p = e ? e + 1 : p + l;
	}
	if (have + n + 2 < size) {
		if (have)
			list[have++] = ',';
		memcpy(list + have, name, n + 1);
	}
}

static void
vrule_free(struct ac_vrule *vr)
{
	ac_netset_free(&vr->src);
	ac_netset_free(&vr->sport);
	ac_netset_free(&vr->dst);
	ac_netset_free(&vr->dport);
	for (uint32_t i = 0; i < vr->n_p; i++)
		pcre2_code_free(vr->p[i].code);
	for (uint32_t i = 0; i < vr->n_fb_check; i++)
		free(vr->fb_check[i].mask);
	for (uint32_t i = 0; i < vr->n_fb_change; i++) {
		free(vr->fb_change[i].mask);
		free(vr->fb_change[i].group);
	}
	free(vr->fb_check);
	free(vr->fb_change);
	free(vr->p);
	free(vr->c);
	free(vr->o);
	memset(vr, 0, sizeof(*vr));
}

/* Compile pcre k of the rule into vr->p; *kept says whether it is used.
 * 1 if it does not compile (reason in why), -1 out of memory. */
static int
compile_pcre(struct ac_vrule *vr, const struct ac_rule *r, unsigned k, bool basic, char *left,
	size_t leftlen, bool *kept, char *why, size_t whylen)
{
	const struct ac_pcre *p = &r->pcres[k];
	uint32_t opts = 0;

	*kept = false;
	for (const char *f = p->flags; *f; f++) {
		if (basic && strchr("ismxAB", *f) == NULL) {
			char name[16];
			snprintf(name, sizeof(name), "pcre/%c", *f);
			add_reason(left, leftlen, name);
			return 0;
		}
		switch (*f) {
		case 'i':
			opts |= PCRE2_CASELESS;
			break;
		case 's':
			opts |= PCRE2_DOTALL;
			break;
		case 'm':
			opts |= PCRE2_MULTILINE;
			break;
		case 'x':
			opts |= PCRE2_EXTENDED;
			break;
		case 'A':
			opts |= PCRE2_ANCHORED;
			break;
		case 'E':
			opts |= PCRE2_DOLLAR_ENDONLY;
			break;
		case 'G':
			opts |= PCRE2_UNGREEDY;
			break;
		default: /* R, the buffer flags, O: not compile options */
			break;
		}
	}
	int ec;
	PCRE2_SIZE eo;
	pcre2_code *code =
		pcre2_compile((PCRE2_SPTR)p->re, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, NULL);
	if (code == NULL) {
		PCRE2_UCHAR msg[160];
		pcre2_get_error_message(ec, msg, sizeof(msg));
		snprintf(why, whylen, "pcre \"/%s/%s\" does not compile: %s at %zu", p->re,
			p->flags, (const char *)msg, (size_t)eo);
		return 1;
	}
	pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* else interpreted */
	vr->p[vr->n_p].code = code;
	vr->p[vr->n_p].negated = p->negated;
	vr->p[vr->n_p].relative = p->relative && !basic;
	vr->n_p++;
	*kept = true;
	return 0;
}

/* Count each option of a partial rule's comma-separated list. */
static void
count_left_out(struct ac_verifier *v, const char *list)
{
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		unsigned i = 0;
		while (i < v->n_left_out &&
			!(strlen(v->left_out[i].name) == n &&
				memcmp(v->left_out[i].name, p, n) == 0))
			i++;
		if (i == v->n_left_out && i < sizeof(v->left_out) / sizeof(v->left_out[0]) &&
			n < sizeof(v->left_out[0].name)) {
			memcpy(v->left_out[i].name, p, n);
			v->left_out[i].name[n] = '\0';
			v->left_out[i].rules = 0;
			v->n_left_out++;
		}
		if (i < v->n_left_out)
			v->left_out[i].rules++;
		p = e ? e + 1 : p + n;
	}
}

static int
count_cmp(const void *a, const void *b)
{
	const struct ac_opt_count *x = a, *y = b;
	if (x->rules != y->rules)
		return x->rules > y->rules ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
fp_cmp(const void *a, const void *b)
{
	const struct ac_keyword *x = a, *y = b;
	if (x->nocase != y->nocase)
		return x->nocase - y->nocase;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	int c = memcmp(x->bytes, y->bytes, x->len);
	if (c != 0)
		return c;
	return x->rules[0] < y->rules[0] ? -1 : x->rules[0] > y->rules[0];
}

/* The one port range a port set allows, or all ports. */
static void
port_range(const struct ac_netset *ns, uint16_t *lo, uint16_t *hi)
{
	*lo = 0;
	*hi = 65535;
	if (ns->n_pos == 1 && ns->n_neg == 0 && !ns->none_match) {
		*lo = (uint16_t)ns->pos[0].lo;
		*hi = (uint16_t)ns->pos[0].hi;
	}
}

static struct ac_port_hint
port_hint(const struct ac_vrule *vr)
{
	struct ac_port_hint h = { 0, 65535, 0, 65535 };
	if (!vr->bidirectional) {
		port_range(&vr->sport, &h.slo, &h.shi);
		port_range(&vr->dport, &h.dlo, &h.dhi);
	}
	return h;
}

/* One keyword per rule with a fast pattern, then merged into distinct ones.
 * Any non-negated content is a necessary condition: the prefilter scans
 * the payload and every buffer that is not a slice of it. */
static int
build_fast_patterns(struct ac_verifier *v)
{
	struct ac_keyword *all = calloc(v->n_rules ? v->n_rules : 1, sizeof(*all));
	uint32_t n = 0;

	v->always = calloc(v->n_rules ? v->n_rules : 1, sizeof(*v->always));
	for (int p = 0; p < 2; p++) {
		v->always_proto[p] = calloc(v->n_rules ? v->n_rules : 1, sizeof(uint32_t));
		v->always_hint[p] =
			calloc(v->n_rules ? v->n_rules : 1, sizeof(struct ac_port_hint));
	}
	if (all == NULL || v->always == NULL || v->always_proto[0] == NULL ||
		v->always_proto[1] == NULL || v->always_hint[0] == NULL ||
		v->always_hint[1] == NULL) {
		free(all);
		return -1;
	}
	for (uint32_t i = 0; i < v->n_rules; i++) {
		const struct ac_vrule *vr = &v->rules[i];
		const struct ac_rule *r = vr->rule;
		const struct ac_content *best = NULL;
		for (unsigned k = 0; k < r->n_contents; k++) {
			const struct ac_content *c = &r->contents[k];
			if (c->negated)
				continue;
			if (c->fast_pattern) {
				best = c;
				break;
			}
			if (best == NULL || c->len > best->len)
				best = c;
		}
		/* No fast pattern, or one of one byte: such a byte occurs in
		 * most payloads, so prefiltering on it saves nearly nothing
		 * and costs the engine much more (README, "Fast pattern"). */
		if (best == NULL || (best->fp_len ? best->fp_len : best->len) == 1) {
			v->always[v->n_always++] = i;
			for (int p = 0; p < 2; p++)
				if (vr->proto == AC_PROTO_IP || (int)vr->proto == p) {
					v->always_hint[p][v->n_always_proto[p]] = port_hint(vr);
					v->always_proto[p][v->n_always_proto[p]++] = i;
				}
			continue;
		}
		/* The fast pattern is the rule's whole and only payload option. */
		if (v->streams && r->n_contents == 1 && vr->n_o == 1 && vr->n_p == 0 &&
			vr->n_b == 0 && !vr->has_dsize && !vr->has_urilen && !best->negated &&
			best->buf == AC_BUF_PKT && best->offset == AC_NO_VALUE &&
			best->depth == AC_NO_VALUE && best->distance == AC_NO_VALUE &&
			best->within == AC_NO_VALUE && best->var[0] == AC_VAR_NONE &&
			best->var[1] == AC_VAR_NONE && best->var[2] == AC_VAR_NONE &&
			best->var[3] == AC_VAR_NONE &&
			(best->fp_len == 0 || best->fp_len == best->len)) {
			v->rules[i].streamable = true;
			if (best->len > v->max_streamable)
				v->max_streamable = best->len;
		}
		struct ac_keyword *kw = &all[n++];
		kw->bytes = best->bytes + best->fp_off;
		kw->len = best->fp_len ? best->fp_len : best->len;
		kw->nocase = best->nocase;
		kw->rules = malloc(sizeof(uint32_t));
		if (kw->rules == NULL) {
			n--;
			goto oom;
		}
		kw->rules[0] = i;
		kw->n_rules = 1;
	}
	qsort(all, n, sizeof(*all), fp_cmp);
	v->fp = calloc(n ? n : 1, sizeof(*v->fp));
	if (v->fp == NULL)
		goto oom;
	for (uint32_t i = 0; i < n; i++) {
		struct ac_keyword *last = v->n_fp ? &v->fp[v->n_fp - 1] : NULL;
		if (last != NULL && last->nocase == all[i].nocase && last->len == all[i].len &&
			memcmp(last->bytes, all[i].bytes, all[i].len) == 0) {
			uint32_t *nr = realloc(last->rules, (last->n_rules + 1) * sizeof(*nr));
			if (nr == NULL)
				goto oom;
			last->rules = nr;
			last->rules[last->n_rules++] = all[i].rules[0];
			free(all[i].rules);
			all[i].rules = NULL;
			continue;
		}
		struct ac_keyword *kw = &v->fp[v->n_fp++];
		*kw = all[i];
		kw->bytes = malloc(all[i].len);
		if (kw->bytes == NULL)
			goto oom;
		memcpy(kw->bytes, all[i].bytes, all[i].len);
		all[i].rules = NULL;
	}
	free(all);
	return 0;
oom:
	for (uint32_t i = 0; i < n; i++)
		free(all[i].rules);
	free(all);
	return -1;
}

/* The payload options of a rule, with the cursor's buffer before each
 * (static: every option before it ran). */
static int
build_options(struct ac_vrule *vr, const struct ac_rule *r, bool basic, const bool *pcre_kept,
	const uint32_t *pcre_slot, char *left, size_t leftlen)
{
	uint8_t cur = AC_BUF_NONE;

	vr->o = calloc(r->n_opts ? r->n_opts : 1, sizeof(*vr->o));
	if (vr->o == NULL)
		return -1;
	vr->memo_ok = true;
	for (unsigned i = 0; i < r->n_opts; i++) {
		const struct ac_ropt *ro = &r->opts[i];
		struct ac_vopt *o = &vr->o[vr->n_o];
		if (ro->kind == AC_ROPT_CONTENT) {
			const struct ac_vcontent *c = &vr->c[ro->idx];
			o->kind = AC_ROPT_CONTENT;
			o->idx = ro->idx;
			o->buf = basic ? AC_BUF_PKT : r->contents[ro->idx].buf;
			o->same = cur == o->buf;
			if (!c->negated && !c->fp_only)
				cur = o->buf;
		} else if (ro->kind == AC_ROPT_PCRE) {
			if (!pcre_kept[ro->idx])
				continue;
			o->kind = AC_ROPT_PCRE;
			o->idx = pcre_slot[ro->idx];
			o->buf = basic ? AC_BUF_PKT : r->pcres[ro->idx].buf;
			o->same = cur == o->buf;
			if (!r->pcres[ro->idx].negated)
				cur = o->buf;
		} else {
			const struct ac_byteop *b = &r->bops[ro->idx];
			static const char *const names[] = { "byte_test", "byte_jump",
				"byte_extract", "isdataat" };
			if (basic) {
				add_reason(left, leftlen, names[b->kind]);
				continue;
			}
			o->kind = AC_ROPT_BYTE;
			o->idx = ro->idx;
			if (b->relative && cur != AC_BUF_NONE) {
				o->buf = cur;
				o->same = true;
			} else {
				o->buf = ro->buf;
				o->same = false;
			}
			if (b->kind == AC_BOP_JUMP || b->kind == AC_BOP_EXTRACT)
				cur = o->buf;
			if (b->kind == AC_BOP_EXTRACT)
				vr->memo_ok = false;
		}
		vr->need_bufs |= 1u << o->buf;
		vr->n_o++;
	}
	return 0;
}

/* --- flowbits ------------------------------------------------------------ */
struct fb_group {
	char *name;
	uint64_t *mask;
};

struct fb_dict {
	char **names;
	uint32_t n;
	struct fb_group *groups;
	uint32_t n_groups;
};

static int
fb_name_id(struct fb_dict *d, const char *name, bool add)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (strcmp(d->names[i], name) == 0)
			return (int)i;
	if (!add)
		return -1;
	char **nn = realloc(d->names, (d->n + 1) * sizeof(*nn));
	if (nn == NULL)
		return -2;
	d->names = nn;
	if ((d->names[d->n] = strdup(name)) == NULL)
		return -2;
	return (int)d->n++;
}

static struct fb_group *
fb_group_of(struct fb_dict *d, const char *name, uint32_t words, bool add)
{
	for (uint32_t i = 0; i < d->n_groups; i++)
		if (strcmp(d->groups[i].name, name) == 0)
			return &d->groups[i];
	if (!add)
		return NULL;
	struct fb_group *ng = realloc(d->groups, (d->n_groups + 1) * sizeof(*ng));
	if (ng == NULL)
		return NULL;
	d->groups = ng;
	struct fb_group *g = &d->groups[d->n_groups];
	g->name = strdup(name);
	g->mask = calloc(words ? words : 1, sizeof(uint64_t));
	if (g->name == NULL || g->mask == NULL) {
		free(g->name);
		free(g->mask);
		return NULL;
	}
	d->n_groups++;
	return g;
}

static void
fb_dict_free(struct fb_dict *d)
{
	for (uint32_t i = 0; i < d->n_groups; i++) {
		free(d->groups[i].name);
		free(d->groups[i].mask);
	}
	free(d->groups);
	memset(d, 0, sizeof(*d));
}

/* Names, then groups (members: the states a set or setx names with it). */
static int
fb_collect(struct ac_verifier *v, struct fb_dict *d)
{
	for (uint32_t i = 0; i < v->n_rules; i++) {
		const struct ac_rule *r = v->rules[i].rule;
		for (unsigned k = 0; k < r->n_fbops; k++)
			for (unsigned j = 0; j < r->fbops[k].n_names; j++)
				if (fb_name_id(d, r->fbops[k].names[j], true) < 0)
					return -1;
	}
	v->fb_words = (d->n + 63) / 64;
	for (uint32_t i = 0; i < v->n_rules; i++) {
		const struct ac_rule *r = v->rules[i].rule;
		for (unsigned k = 0; k < r->n_fbops; k++) {
			const struct ac_fbop *op = &r->fbops[k];
			if (op->group == NULL)
				continue;
			struct fb_group *g = fb_group_of(d, op->group, v->fb_words, true);
			if (g == NULL)
				return -1;
			if (op->cmd != AC_FB_SET && op->cmd != AC_FB_SETX)
				continue;
			for (unsigned j = 0; j < op->n_names; j++) {
				int id = fb_name_id(d, op->names[j], false);
				g->mask[id / 64] |= 1ull << (id % 64);
			}
		}
	}
	return 0;
}

static int
fb_compile_rule(struct ac_verifier *v, struct fb_dict *d, struct ac_vrule *vr)
{
	const struct ac_rule *r = vr->rule;
	uint32_t w = v->fb_words ? v->fb_words : 1;

	vr->fb_check = calloc(r->n_fbops ? r->n_fbops : 1, sizeof(*vr->fb_check));
	vr->fb_change = calloc(r->n_fbops ? r->n_fbops : 1, sizeof(*vr->fb_change));
	if (vr->fb_check == NULL || vr->fb_change == NULL)
		return -1;
	for (unsigned k = 0; k < r->n_fbops; k++) {
		const struct ac_fbop *op = &r->fbops[k];
		if (op->cmd == AC_FB_NOALERT) {
			vr->noalert = true;
			continue;
		}
		bool check = op->cmd == AC_FB_ISSET || op->cmd == AC_FB_ISNOTSET;
		struct ac_vfb *f =
			check ? &vr->fb_check[vr->n_fb_check++] : &vr->fb_change[vr->n_fb_change++];
		f->cmd = op->cmd;
		f->any = op->any;
		f->mask = calloc(w, sizeof(uint64_t));
		if (f->mask == NULL)
			return -1;
		const struct fb_group *g = op->group ? fb_group_of(d, op->group, w, false) : NULL;
		if (op->n_names > 0) {
			for (unsigned j = 0; j < op->n_names; j++) {
				int id = fb_name_id(d, op->names[j], false);
				f->mask[id / 64] |= 1ull << (id % 64);
			}
		} else if (g != NULL) {
			/* any/all of a group, or reset of one */
			memcpy(f->mask, g->mask, w * sizeof(uint64_t));
		} else {
			/* reset: every state */
			memset(f->mask, 0xff, w * sizeof(uint64_t));
		}
		if (op->cmd == AC_FB_SETX) {
			f->group = calloc(w, sizeof(uint64_t));
			if (f->group == NULL)
				return -1;
			memcpy(f->group, g->mask, w * sizeof(uint64_t));
		}
	}
	return 0;
}

/* 0: no flowbits; 1: changes only; 2: both; 3: checks only. */
static unsigned
fb_rank(const struct ac_vrule *vr)
{
	if (vr->n_fb_check == 0 && vr->n_fb_change == 0)
		return 0;
	if (vr->n_fb_check == 0)
		return 1;
	return vr->n_fb_change ? 2 : 3;
}

static int
rule_order_cmp(const void *a, const void *b)
{
	const struct ac_vrule *x = a, *y = b;
	unsigned rx = fb_rank(x), ry = fb_rank(y);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int
build_flowbits(struct ac_verifier *v)
{
	struct fb_dict d = { 0 };

	if (fb_collect(v, &d) < 0)
		goto oom;
	for (uint32_t i = 0; i < v->n_rules; i++) {
		if (fb_compile_rule(v, &d, &v->rules[i]) < 0)
			goto oom;
		v->n_fb_rules += fb_rank(&v->rules[i]) != 0;
	}
	v->fb_names = d.names;
	v->n_fb_names = d.n;
	d.names = NULL;
	fb_dict_free(&d);
	/* Changers first, then both, then checkers; file order within. */
	qsort(v->rules, v->n_rules, sizeof(*v->rules), rule_order_cmp);
	return 0;
oom:
	for (uint32_t i = 0; i < d.n; i++)
		free(d.names[i]);
	free(d.names);
	fb_dict_free(&d);
	return -1;
}

/* --- build --------------------------------------------------------------- */
static bool
reads_file_data(const struct ac_vrule *vr)
{
	return (vr->need_bufs & (1u << AC_BUF_FILE)) != 0;
}

int
ac_verifier_build(struct ac_verifier *v, const struct ac_ruleset *rs, const struct ac_vars *vars,
	bool basic, bool streams, char *err, size_t errlen)
{
	char why[512], left[AC_UNSUPPORTED_MAX + 128];
	bool *pcre_kept = NULL;
	uint32_t *pcre_slot = NULL;

	init_lower();
	memset(v, 0, sizeof(*v));
	v->basic = basic;
	v->streams = streams && !basic;
	v->rules = calloc(rs->n_rules ? rs->n_rules : 1, sizeof(*v->rules));
	if (v->rules == NULL)
		goto oom;
	for (uint32_t i = 0; i < rs->n_rules; i++) {
		const struct ac_rule *r = &rs->rules[i];
		struct ac_vrule *vr = &v->rules[v->n_rules];
		memset(vr, 0, sizeof(*vr));
		vr->rule = r;
		vr->order = i;
		vr->proto = r->proto;
		vr->bidirectional = r->bidirectional;
		why[0] = '\0';
		snprintf(left, sizeof(left), "%s", r->unsupported);
		if (r->proto == AC_PROTO_ICMP) {
			snprintf(why, sizeof(why),
				"icmp rule (only TCP and UDP payloads are scanned)");
		} else if (ac_netset_parse(&vr->src, r->src, false, vars, why, sizeof(why)) < 0 ||
			ac_netset_parse(&vr->sport, r->sport, true, vars, why, sizeof(why)) < 0 ||
			ac_netset_parse(&vr->dst, r->dst, false, vars, why, sizeof(why)) < 0 ||
			ac_netset_parse(&vr->dport, r->dport, true, vars, why, sizeof(why)) < 0) {
			/* why set */
		} else {
			vr->p = calloc(r->n_pcres ? r->n_pcres : 1, sizeof(*vr->p));
			vr->c = calloc(r->n_contents ? r->n_contents : 1, sizeof(*vr->c));
			free(pcre_kept);
			free(pcre_slot);
			pcre_kept = calloc(r->n_pcres + 1, sizeof(*pcre_kept));
			pcre_slot = calloc(r->n_pcres + 1, sizeof(*pcre_slot));
			if (vr->p == NULL || vr->c == NULL || pcre_kept == NULL ||
				pcre_slot == NULL) {
				vrule_free(vr);
				goto oom;
			}
			for (unsigned k = 0; k < r->n_pcres && why[0] == '\0'; k++) {
				pcre_slot[k] = vr->n_p;
				int rc = compile_pcre(vr, r, k, basic, left, sizeof(left),
					&pcre_kept[k], why, sizeof(why));
				if (rc < 0) {
					vrule_free(vr);
					goto oom;
				}
			}
		}
		if (why[0] == '\0') {
			for (unsigned k = 0; k < r->n_contents; k++) {
				const struct ac_content *c = &r->contents[k];
				struct ac_vcontent *vc = &vr->c[vr->n_c++];
				vc->bytes = c->bytes;
				vc->len = c->len;
				vc->nocase = c->nocase;
				vc->negated = c->negated;
				vc->fp_only = c->fp_only && !c->negated;
				vc->offset = c->offset;
				vc->depth = c->depth;
				vc->distance = c->distance;
				vc->within = c->within;
				static const char *const mod[] = { "offset:variable",
					"depth:variable", "distance:variable", "within:variable" };
				for (int m = 0; m < 4; m++) {
					vc->var[m] = basic ? AC_VAR_NONE : c->var[m];
					if (basic && c->var[m] != AC_VAR_NONE)
						add_reason(left, sizeof(left), mod[m]);
				}
				if (basic && c->buf != AC_BUF_PKT)
					add_reason(left, sizeof(left), ac_buf_name[c->buf]);
			}
			if (build_options(vr, r, basic, pcre_kept, pcre_slot, left, sizeof(left)) <
				0) {
				vrule_free(vr);
				goto oom;
			}
			if ((r->flow & AC_FLOW_ONLY_STREAM) && !v->streams)
				/* No rebuilt PDUs: judged on each packet instead. */
				add_reason(left, sizeof(left), "flow:only_stream");
			if (v->streams) {
				vr->stream_only = (r->flow & AC_FLOW_ONLY_STREAM) != 0;
				vr->packet_only = (r->flow & AC_FLOW_NO_STREAM) || r->has_dsize;
			}
			if (basic) {
				if (r->flow)
					add_reason(left, sizeof(left), "flow");
				if (r->n_fbops)
					add_reason(left, sizeof(left), "flowbits");
				if (r->has_dsize)
					add_reason(left, sizeof(left), "dsize");
				if (r->has_urilen)
					add_reason(left, sizeof(left), "urilen");
			} else {
				vr->flow = r->flow &
					(AC_FLOW_TO_SERVER | AC_FLOW_TO_CLIENT |
						AC_FLOW_ESTABLISHED | AC_FLOW_NOT_ESTABLISHED);
				vr->has_dsize = r->has_dsize;
				vr->dsize = r->dsize;
				vr->has_urilen = r->has_urilen;
				vr->urilen = r->urilen;
				vr->urilen_raw = r->urilen_raw;
				if (r->has_urilen)
					vr->need_bufs |= 1u
						<< (r->urilen_raw ? AC_BUF_RAW_URI : AC_BUF_URI);
				/* Mail's file_data is decoded MIME in Snort; here it is
				 * the payload as sent. */
				if (r->mail_service && reads_file_data(vr)) {
					if (r->http_service)
						vr->mail_file_data = true;
					else
						add_reason(left, sizeof(left), "file_data/mail");
				}
			}
			vr->b = r->bops;
			vr->n_b = r->n_bops;
			/* A rule that left something out, and has no content or
			 * pcre, would alert on its header alone (the basic mode
			 * has nothing else either). */
			if ((left[0] != '\0' || basic) && vr->n_c == 0 && vr->n_p == 0)
				snprintf(why, sizeof(why),
					"nothing left to evaluate (no content, no usable pcre; "
					"cannot evaluate: %s)",
					left[0] ? left : "-");
		}
		if (why[0] != '\0') {
			v->n_disabled++;
			vrule_free(vr);
			if (add_note(v, rs, r, "disabled: %s", why) < 0)
				goto oom;
			continue;
		}
		if (vr->n_c > v->max_contents)
			v->max_contents = vr->n_c;
		v->n_pcre += vr->n_p;
		if (left[0] != '\0') {
			count_left_out(v, left);
			vr->partial = true;
			v->n_partial++;
			if (add_note(v, rs, r, "partial: evaluated without %s", left) < 0)
				goto oom;
		}
		v->n_rules++;
	}
	free(pcre_kept);
	free(pcre_slot);
	pcre_kept = NULL;
	pcre_slot = NULL;
	if (v->n_rules == 0) {
		ac_set_err(err, errlen, "rules file '%s': no rule left to evaluate (%u disabled)",
			rs->path, v->n_disabled);
		ac_verifier_free(v);
		return -1;
	}
	if (!basic && build_flowbits(v) < 0)
		goto oom;
	if (build_fast_patterns(v) < 0)
		goto oom;
	qsort(v->left_out, v->n_left_out, sizeof(v->left_out[0]), count_cmp);
	return 0;
oom:
	free(pcre_kept);
	free(pcre_slot);
	ac_set_err(err, errlen, "out of memory building the rule verifier");
	ac_verifier_free(v);
	return -1;
}

void
ac_verifier_free(struct ac_verifier *v)
{
	for (uint32_t i = 0; i < v->n_rules; i++)
		vrule_free(&v->rules[i]);
	for (uint32_t i = 0; i < v->n_fp; i++) {
		free(v->fp[i].bytes);
		free(v->fp[i].rules);
	}
	for (uint32_t i = 0; i < v->n_notes; i++)
		free(v->notes[i]);
	for (uint32_t i = 0; i < v->n_fb_names; i++)
		free(v->fb_names[i]);
	free(v->fb_names);
	free(v->notes);
	free(v->fp);
	free(v->always);
	for (int p = 0; p < 2; p++) {
		free(v->always_proto[p]);
		free(v->always_hint[p]);
	}
	free(v->rules);
	memset(v, 0, sizeof(*v));
}

void
ac_verifier_print_summary(const struct ac_verifier *v, FILE *out)
{
	fprintf(out,
		"rules mode%s: %u rules enabled (%u partial: evaluated without options that "
		"cannot be evaluated), %u disabled (listed by --list-unsupported); %u fast "
		"patterns, %u rules without one (verified on every packet), %u pcre, %u flowbits "
		"states\n",
		v->basic ? " (--stateless)" : "", v->n_rules, v->n_partial, v->n_disabled, v->n_fp,
		v->n_always, v->n_pcre, v->n_fb_names);
	if (v->n_left_out == 0)
		return;
	fprintf(out, "rules mode: left out of partial rules (rules):");
	for (unsigned i = 0; i < v->n_left_out && i < 12; i++)
		fprintf(out, "%s %s %u", i ? "," : "", v->left_out[i].name, v->left_out[i].rules);
	fprintf(out, "%s\n", v->n_left_out > 12 ? ", ..." : "");
}

void
ac_verifier_print_notes(const struct ac_verifier *v, FILE *out)
{
	for (uint32_t i = 0; i < v->n_notes; i++)
		fprintf(out, "%s\n", v->notes[i]);
}

struct ac_vscratch *
ac_vscratch_new(const struct ac_verifier *v, uint32_t max_payload)
{
	struct ac_vscratch *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->seen = calloc((v->n_fp + 63) / 64 + 1, sizeof(uint64_t));
	s->cand = calloc(v->n_fp + 1, sizeof(uint32_t));
	s->deferred = calloc(v->n_rules + 1, sizeof(uint32_t));
	s->md = pcre2_match_data_create(1, NULL);
	s->memo_len = max_payload + 1;
	s->memo = calloc((size_t)(v->max_contents + 1) * s->memo_len, sizeof(uint32_t));
	if (s->seen == NULL || s->cand == NULL || s->deferred == NULL || s->md == NULL ||
		s->memo == NULL) {
		ac_vscratch_free(s);
		return NULL;
	}
	return s;
}

void
ac_vscratch_free(struct ac_vscratch *s)
{
	if (s == NULL)
		return;
	free(s->seen);
	free(s->cand);
	free(s->deferred);
	pcre2_match_data_free(s->md);
	free(s->memo);
	free(s);
}

void
ac_vscratch_on_match(void *ctx, uint32_t fp, uint32_t end)
{
	struct ac_vscratch *s = ctx;
	uint64_t bit = 1ull << (fp & 63);

	(void)end;
	if (s->seen[fp >> 6] & bit)
		return;
	s->seen[fp >> 6] |= bit;
	s->cand[s->n_cand++] = fp;
}

void
ac_vscratch_add_bitmap(struct ac_vscratch *s, const uint64_t *bm, uint32_t words)
{
	for (uint32_t w = 0; w < words; w++)
		for (uint64_t x = bm[w] & ~s->seen[w]; x != 0; x &= x - 1) {
			uint32_t fp = w * 64 + (uint32_t)__builtin_ctzll(x);
			s->seen[w] |= 1ull << (fp & 63);
			s->cand[s->n_cand++] = fp;
		}
}

/* --- evaluation ---------------------------------------------------------- */

/* First position p in [from, last] where c occurs at data[p]; -1 if none. */
static int64_t
find_at(const struct ac_vcontent *c, const uint8_t *data, int64_t from, int64_t last)
{
	if (from > last)
		return -1;
	if (!c->nocase) {
		while (from <= last) {
			const uint8_t *p =
				memchr(data + from, c->bytes[0], (size_t)(last - from + 1));
			if (p == NULL)
				return -1;
			int64_t pos = p - data;
			if (memcmp(p, c->bytes, c->len) == 0)
				return pos;
			from = pos + 1;
		}
		return -1;
	}
	uint8_t first = lower[c->bytes[0]];
	for (int64_t p = from; p <= last; p++) {
		if (lower[data[p]] != first)
			continue;
		uint32_t k = 1;
		while (k < c->len && lower[data[p + k]] == lower[c->bytes[k]])
			k++;
		if (k == c->len)
			return p;
	}
	return -1;
}

struct eval {
	const struct ac_vrule *vr;
	struct ac_vscratch *s;
	const struct ac_pkt_view *pv;
	uint32_t vars[AC_MAX_VARS];
	uint32_t budget;
	bool gave_up;
};

/* A modifier's value: the number, or its byte_extract variable. */
static int64_t
mod_value(const struct eval *e, const struct ac_vcontent *c, int m, int32_t num)
{
	if (c->var[m] != AC_VAR_NONE)
		return (int64_t)e->vars[(int)c->var[m]];
	return num == AC_NO_VALUE ? INT64_MIN : num;
}

/* Window [*ws, *we) of content c in a buffer of len bytes, relative
 * options counted from base. */
static void
window(const struct eval *e, const struct ac_vcontent *c, int64_t base, uint32_t len, int64_t *ws,
	int64_t *we)
{
	int64_t off = mod_value(e, c, 0, c->offset), dep = mod_value(e, c, 1, c->depth);
	int64_t dis = mod_value(e, c, 2, c->distance), wit = mod_value(e, c, 3, c->within);
	int64_t s = 0, en = len;
	if (off != INT64_MIN)
		s = off;
	if (dep != INT64_MIN)
		en = s + dep;
	if (dis != INT64_MIN || wit != INT64_MIN) {
		int64_t rs = base + (dis != INT64_MIN ? dis : 0);
		int64_t re = wit != INT64_MIN ? rs + wit : (int64_t)len;
		if (rs > s)
			s = rs;
		if (re < en)
			en = re;
	}
	if (s < 0)
		s = 0;
	if (en > (int64_t)len)
		en = len;
	*ws = s;
	*we = en;
}

static bool eval_from(struct eval *e, uint32_t i, int64_t cpos);

static bool
eval_content(struct eval *e, uint32_t i, int64_t cpos)
{
	const struct ac_vopt *o = &e->vr->o[i];
	const struct ac_vcontent *c = &e->vr->c[o->idx];
	const struct ac_span *b = &e->pv->buf[o->buf];
	int64_t base = o->same ? cpos : 0, ws, we;

	if (c->fp_only)
		return c->len <= b->len && find_at(c, b->p, 0, (int64_t)b->len - c->len) >= 0 &&
			eval_from(e, i + 1, cpos);
	window(e, c, base, b->len, &ws, &we);
	int64_t last = we - c->len;
	if (c->negated)
		return !(ws <= last && find_at(c, b->p, ws, last) >= 0) &&
			eval_from(e, i + 1, cpos);
	/* A failure from (content, base) is remembered for this rule and
	 * packet: every alternative is tried at most once. */
	uint32_t *memo = NULL;
	if (e->vr->memo_ok) {
		memo = &e->s->memo[(size_t)o->idx * e->s->memo_len + (size_t)base];
		if (*memo == e->s->memo_stamp)
			return false;
	}
	for (int64_t p = ws; p <= last; p++) {
		p = find_at(c, b->p, p, last);
		if (p < 0)
			break;
		if (!e->vr->memo_ok && e->budget-- == 0) {
			e->gave_up = true;
			return false;
		}
		if (eval_from(e, i + 1, p + c->len))
			return true;
		if (e->gave_up)
			return false;
	}
	if (memo != NULL)
		*memo = e->s->memo_stamp;
	return false;
}

/* Options i.. on; cpos: the cursor's position (in vr->o[i]'s buffer when
 * vr->o[i].same). */
static bool
eval_from(struct eval *e, uint32_t i, int64_t cpos)
{
	static const uint8_t empty[1];
	const struct ac_vrule *vr = e->vr;

	for (; i < vr->n_o; i++) {
		const struct ac_vopt *o = &vr->o[i];
		const struct ac_span *b = &e->pv->buf[o->buf];
		if (o->kind == AC_ROPT_CONTENT)
			return eval_content(e, i, cpos);
		if (o->kind == AC_ROPT_PCRE) {
			const struct ac_vpcre *pc = &vr->p[o->idx];
			int64_t start = pc->relative && o->same ? cpos : 0;
			uint32_t n = b->len - (uint32_t)start;
			int rc = pcre2_match(
				pc->code, n ? b->p + start : empty, n, 0, 0, e->s->md, NULL);
			if (rc < PCRE2_ERROR_NOMATCH)
				e->s->pcre_errors++; /* match limit etc.: counted as no match */
			if (pc->negated) {
				if (rc >= 0)
					return false;
				continue;
			}
			if (rc < 0)
				return false;
			cpos = start + (int64_t)pcre2_get_ovector_pointer(e->s->md)[1];
			continue;
		}
		const struct ac_byteop *op = &vr->b[o->idx];
		int64_t base = o->same ? cpos : 0, nc;
		uint32_t val;
		switch (op->kind) {
		case AC_BOP_TEST:
			if (!ac_byte_test(op, b->p, b->len, base, e->vars))
				return false;
			break;
		case AC_BOP_JUMP:
			if (!ac_byte_jump(op, b->p, b->len, base, e->vars, &nc))
				return false;
			cpos = nc;
			break;
		case AC_BOP_EXTRACT:
			if (!ac_byte_extract(op, b->p, b->len, base, e->vars, &val, &nc))
				return false;
			e->vars[(int)op->var] = val;
			cpos = nc;
			break;
		default:
			if (!ac_isdataat(op, b->len, base, e->vars))
				return false;
		}
	}
	return true;
}

/* Addresses and ports (the protocol is checked first, by the caller). */
static bool
header_matches(const struct ac_vrule *vr, const struct ac_pkt_meta *m)
{
	if (ac_netset_has(&vr->src, m->src) && ac_netset_has(&vr->sport, m->sport) &&
		ac_netset_has(&vr->dst, m->dst) && ac_netset_has(&vr->dport, m->dport))
		return true;
	return vr->bidirectional && ac_netset_has(&vr->src, m->dst) &&
		ac_netset_has(&vr->sport, m->dport) && ac_netset_has(&vr->dst, m->src) &&
		ac_netset_has(&vr->dport, m->sport);
}

static bool
fb_check(const struct ac_vfb *f, const uint64_t *bits, uint32_t words)
{
	bool all = true, any = false;
	for (uint32_t w = 0; w < words; w++) {
		uint64_t x = bits[w] & f->mask[w];
		all &= x == f->mask[w];
		any |= x != 0;
	}
	if (f->cmd == AC_FB_ISSET)
		return f->any ? any : all;
	/* isnotset: "a&b" none of them set, "a|b" (or any) one of them not set */
	return f->any ? !all : !any;
}

static void
fb_change(const struct ac_vfb *f, uint64_t *bits, uint32_t words)
{
	for (uint32_t w = 0; w < words; w++) {
		switch (f->cmd) {
		case AC_FB_SET:
			bits[w] |= f->mask[w];
			break;
		case AC_FB_SETX:
			bits[w] = (bits[w] & ~f->group[w]) | f->mask[w];
			break;
		case AC_FB_TOGGLE:
			bits[w] ^= f->mask[w];
			break;
		default: /* unset, reset */
			bits[w] &= ~f->mask[w];
		}
	}
}

bool
ac_verify_rule(
	const struct ac_verifier *v, uint32_t r, struct ac_vscratch *s, struct ac_pkt_view *pv)
{
	const struct ac_vrule *vr = &v->rules[r];

	if (pv->stream ? vr->packet_only : vr->stream_only)
		return false;
	for (uint32_t i = 0; i < pv->n_skip; i++)
		if (pv->skip[i] == r) {
			pv->n_skipped++;
			return false;
		}
	/* The cheapest tests first: one compare each. */
	if ((vr->proto == AC_PROTO_TCP && pv->m->ip_proto != 6) ||
		(vr->proto == AC_PROTO_UDP && pv->m->ip_proto != 17))
		return false;
	if (vr->flow && !ac_flow_match(vr->flow, pv->pf))
		return false;
	if ((vr->need_bufs & ~pv->present) != 0)
		return false;
	if (vr->has_dsize && !ac_range_match(&vr->dsize, pv->buf[AC_BUF_PKT].len))
		return false;
	if (!header_matches(vr, pv->m))
		return false;
	if (vr->has_urilen &&
		!ac_range_match(
			&vr->urilen, pv->buf[vr->urilen_raw ? AC_BUF_RAW_URI : AC_BUF_URI].len))
		return false;
	for (uint32_t i = 0; i < vr->n_fb_check; i++)
		if (!fb_check(&vr->fb_check[i], pv->bits, v->fb_words))
			return false;
	if (vr->n_o > 0) {
		struct eval e = { .vr = vr, .s = s, .pv = pv, .budget = AC_VERIFY_BUDGET };
		if (vr->memo_ok && vr->n_c > 0 && ++s->memo_stamp == 0) {
			memset(s->memo, 0,
				(size_t)(v->max_contents + 1) * s->memo_len * sizeof(uint32_t));
			s->memo_stamp = 1;
		}
		bool ok = eval_from(&e, 0, 0);
		if (e.gave_up)
			s->budget_exceeded++;
		if (!ok)
			return false;
	}
	for (uint32_t i = 0; i < vr->n_fb_change; i++) {
		fb_change(&vr->fb_change[i], pv->bits, v->fb_words);
		pv->bits_changed = true;
	}
	if (pv->n_matched < pv->matched_cap)
		pv->matched[pv->n_matched++] = r;
	return true;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Judge rule r now, or keep it for the ordered pass when it has flowbits. */
static uint32_t
judge(const struct ac_verifier *v, struct ac_vscratch *s, struct ac_pkt_view *pv, uint32_t r,
	uint32_t *n_def, ac_alert_fn fn, void *ctx)
{
	const struct ac_vrule *vr = &v->rules[r];
	if (vr->n_fb_check != 0 || vr->n_fb_change != 0) {
		s->deferred[(*n_def)++] = r;
		return 0;
	}
	if (!ac_verify_rule(v, r, s, pv))
		return 0;
	if (vr->noalert) {
		s->noalert_matches++;
		return 0;
	}
	fn(ctx, r);
	return 1;
}

uint32_t
ac_verify_candidates(const struct ac_verifier *v, struct ac_vscratch *s, struct ac_pkt_view *pv,
	ac_alert_fn fn, void *ctx)
{
	uint32_t alerts = 0, n_def = 0;

	for (uint32_t i = 0; i < s->n_cand; i++) {
		const struct ac_keyword *kw = &v->fp[s->cand[i]];
		s->seen[s->cand[i] >> 6] = 0;
		for (uint32_t k = 0; k < kw->n_rules; k++)
			alerts += judge(v, s, pv, kw->rules[k], &n_def, fn, ctx);
	}
	s->n_cand = 0;
	int p = pv->m->ip_proto == 6 ? 0 : 1;
	uint16_t sp = pv->m->sport, dp = pv->m->dport;
	for (uint32_t i = 0; i < v->n_always_proto[p]; i++) {
		const struct ac_port_hint *h = &v->always_hint[p][i];
		if (sp < h->slo || sp > h->shi || dp < h->dlo || dp > h->dhi)
			continue;
		alerts += judge(v, s, pv, v->always_proto[p][i], &n_def, fn, ctx);
	}
	if (n_def == 0)
		return alerts;
	/* Rules are numbered in the order flowbits rules must be judged. */
	if (n_def > 1)
		qsort(s->deferred, n_def, sizeof(uint32_t), u32_cmp);
	for (uint32_t i = 0; i < n_def; i++) {
		uint32_t r = s->deferred[i];
		if (!ac_verify_rule(v, r, s, pv))
			continue;
		if (v->rules[r].noalert) {
			s->noalert_matches++;
			continue;
		}
		fn(ctx, r);
		alerts++;
	}
	return alerts;
}

void
ac_pkt_view_bare(struct ac_pkt_view *pv, struct ac_span bufs[AC_BUF_N], const struct ac_pkt_meta *m,
	const uint8_t *data, uint32_t len, uint64_t *bits)
{
	memset(bufs, 0, sizeof(struct ac_span) * AC_BUF_N);
	bufs[AC_BUF_PKT] = (struct ac_span){ data, len, true };
	bufs[AC_BUF_FILE] = bufs[AC_BUF_PKT];
	memset(pv, 0, sizeof(*pv));
	pv->m = m;
	pv->buf = bufs;
	pv->present = 1u << AC_BUF_PKT | 1u << AC_BUF_FILE;
	pv->pf = AC_PF_FROM_CLIENT;
	pv->bits = bits;
}
