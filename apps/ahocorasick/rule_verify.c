/* Rules mode: fast patterns and full rule verification (see rule_verify.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "rule_verify.h"
#include "errbuf.h"

#include <pcre2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

static void
vrule_free(struct ac_vrule *vr)
{
	ac_netset_free(&vr->src);
	ac_netset_free(&vr->sport);
	ac_netset_free(&vr->dst);
	ac_netset_free(&vr->dport);
	for (uint32_t i = 0; i < vr->n_p; i++)
		pcre2_code_free(vr->p[i].code);
	free(vr->p);
	free(vr->c);
	memset(vr, 0, sizeof(*vr));
}

/* Compile the rule's pcres; 1 if one does not compile (reason in why). */
static int
compile_pcres(struct ac_vrule *vr, const struct ac_rule *r, char *why, size_t whylen)
{
	vr->p = calloc(r->n_pcres ? r->n_pcres : 1, sizeof(*vr->p));
	if (vr->p == NULL)
		return -1;
	for (unsigned i = 0; i < r->n_pcres; i++) {
		const struct ac_pcre *p = &r->pcres[i];
		uint32_t opts = 0;
		bool usable = true;
		for (const char *f = p->flags; *f; f++) {
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
			case 'B':
				break;
			default:
				usable = false; /* listed in r->unsupported by the parser */
			}
		}
		if (!usable)
			continue;
		int ec;
		PCRE2_SIZE eo;
		pcre2_code *code = pcre2_compile(
			(PCRE2_SPTR)p->re, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, NULL);
		if (code == NULL) {
			PCRE2_UCHAR msg[160];
			pcre2_get_error_message(ec, msg, sizeof(msg));
			snprintf(why, whylen, "pcre \"/%s/%s\" does not compile: %s at %zu", p->re,
				p->flags, (const char *)msg, (size_t)eo);
			return 1;
		}
		pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* else interpreted */
		vr->p[vr->n_p].code = code;
		vr->p[vr->n_p++].negated = p->negated;
	}
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

/* One keyword per rule with a fast pattern, then merged into distinct ones. */
static int
build_fast_patterns(struct ac_verifier *v)
{
	struct ac_keyword *all = calloc(v->n_rules ? v->n_rules : 1, sizeof(*all));
	uint32_t n = 0;

	v->always = calloc(v->n_rules ? v->n_rules : 1, sizeof(*v->always));
	if (all == NULL || v->always == NULL) {
		free(all);
		return -1;
	}
	for (uint32_t i = 0; i < v->n_rules; i++) {
		const struct ac_rule *r = v->rules[i].rule;
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
			continue;
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

int
ac_verifier_build(struct ac_verifier *v, const struct ac_ruleset *rs, const struct ac_vars *vars,
	char *err, size_t errlen)
{
	char why[512];

	init_lower();
	memset(v, 0, sizeof(*v));
	v->rules = calloc(rs->n_rules ? rs->n_rules : 1, sizeof(*v->rules));
	if (v->rules == NULL)
		goto oom;
	for (uint32_t i = 0; i < rs->n_rules; i++) {
		const struct ac_rule *r = &rs->rules[i];
		struct ac_vrule *vr = &v->rules[v->n_rules];
		memset(vr, 0, sizeof(*vr));
		vr->rule = r;
		vr->proto = r->proto;
		vr->bidirectional = r->bidirectional;
		why[0] = '\0';
		int rc = 0;
		if (r->proto == AC_PROTO_ICMP)
			snprintf(why, sizeof(why),
				"icmp rule (only TCP and UDP payloads are scanned)");
		else if (ac_netset_parse(&vr->src, r->src, false, vars, why, sizeof(why)) < 0 ||
			ac_netset_parse(&vr->sport, r->sport, true, vars, why, sizeof(why)) < 0 ||
			ac_netset_parse(&vr->dst, r->dst, false, vars, why, sizeof(why)) < 0 ||
			ac_netset_parse(&vr->dport, r->dport, true, vars, why, sizeof(why)) < 0)
			; /* why set */
		else if ((rc = compile_pcres(vr, r, why, sizeof(why))) < 0)
			goto oom;
		else if (rc == 0 && r->n_contents == 0 && vr->n_p == 0)
			snprintf(why, sizeof(why),
				"nothing left to evaluate (no content, no usable pcre; "
				"cannot evaluate: %s)",
				r->unsupported[0] ? r->unsupported : "-");
		if (why[0] != '\0') {
			v->n_disabled++;
			vrule_free(vr);
			if (add_note(v, rs, r, "disabled: %s", why) < 0)
				goto oom;
			continue;
		}
		vr->c = calloc(r->n_contents ? r->n_contents : 1, sizeof(*vr->c));
		if (vr->c == NULL) {
			vrule_free(vr);
			goto oom;
		}
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
		}
		if (vr->n_c > v->max_contents)
			v->max_contents = vr->n_c;
		v->n_pcre += vr->n_p;
		if (r->n_unsupported > 0) {
			count_left_out(v, r->unsupported);
			vr->partial = true;
			v->n_partial++;
			if (add_note(v, rs, r, "partial: evaluated without %s", r->unsupported) < 0)
				goto oom;
		}
		v->n_rules++;
	}
	if (v->n_rules == 0) {
		ac_set_err(err, errlen, "rules file '%s': no rule left to evaluate (%u disabled)",
			rs->path, v->n_disabled);
		ac_verifier_free(v);
		return -1;
	}
	if (build_fast_patterns(v) < 0)
		goto oom;
	qsort(v->left_out, v->n_left_out, sizeof(v->left_out[0]), count_cmp);
	return 0;
oom:
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
	free(v->notes);
	free(v->fp);
	free(v->always);
	free(v->rules);
	memset(v, 0, sizeof(*v));
}

void
ac_verifier_print_summary(const struct ac_verifier *v, FILE *out)
{
	fprintf(out,
		"rules mode: %u rules enabled (%u partial: evaluated without options that cannot "
		"be evaluated), %u disabled (listed by --list-unsupported); %u fast patterns, "
		"%u rules without one (verified on every packet), %u pcre\n",
		v->n_rules, v->n_partial, v->n_disabled, v->n_fp, v->n_always, v->n_pcre);
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
	s->md = pcre2_match_data_create(1, NULL);
	s->memo_len = max_payload + 1;
	s->memo = calloc((size_t)(v->max_contents + 1) * s->memo_len, sizeof(uint32_t));
	if (s->seen == NULL || s->cand == NULL || s->md == NULL || s->memo == NULL) {
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

/* First position p in [from, last] where c occurs at data[p]; -1 if none. */
static int64_t
find_at(const struct ac_vcontent *c, const uint8_t *data, int64_t from, int64_t last)
{
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

/* Window [*ws, *we) of content c after a match ending at prev_end. */
static void
window(const struct ac_vcontent *c, int64_t prev_end, uint32_t len, int64_t *ws, int64_t *we)
{
	int64_t s = 0, e = len;
	if (c->offset != AC_NO_VALUE)
		s = c->offset;
	if (c->depth != AC_NO_VALUE)
		e = s + c->depth;
	if (c->distance != AC_NO_VALUE || c->within != AC_NO_VALUE) {
		int64_t rs = prev_end + (c->distance != AC_NO_VALUE ? c->distance : 0);
		int64_t re = c->within != AC_NO_VALUE ? rs + c->within : (int64_t)len;
		if (rs > s)
			s = rs;
		if (re < e)
			e = re;
	}
	if (s < 0)
		s = 0;
	if (e > (int64_t)len)
		e = len;
	*ws = s;
	*we = e;
}

static bool
contents_from(const struct ac_vrule *vr, uint32_t i, int64_t prev_end, struct ac_vscratch *s,
	const uint8_t *data, uint32_t len)
{
	for (; i < vr->n_c; i++) {
		const struct ac_vcontent *c = &vr->c[i];
		int64_t ws, we;
		if (c->fp_only) {
			if (c->len > len || find_at(c, data, 0, (int64_t)len - c->len) < 0)
				return false;
			continue;
		}
		window(c, prev_end, len, &ws, &we);
		int64_t last = we - c->len;
		if (c->negated) {
			if (ws <= last && find_at(c, data, ws, last) >= 0)
				return false;
			continue;
		}
		/* A failure from (i, prev_end) is remembered for this rule and
		 * packet: every alternative is tried at most once. */
		uint32_t *memo = &s->memo[(size_t)i * s->memo_len + (size_t)prev_end];
		if (*memo == s->memo_stamp)
			return false;
		for (int64_t p = ws; p <= last; p++) {
			p = find_at(c, data, p, last);
			if (p < 0)
				break;
			if (contents_from(vr, i + 1, p + c->len, s, data, len))
				return true;
		}
		*memo = s->memo_stamp;
		return false;
	}
	return true;
}

static bool
header_matches(const struct ac_vrule *vr, const struct ac_pkt_meta *m)
{
	if ((vr->proto == AC_PROTO_TCP && m->ip_proto != 6) ||
		(vr->proto == AC_PROTO_UDP && m->ip_proto != 17))
		return false;
	if (ac_netset_has(&vr->src, m->src) && ac_netset_has(&vr->sport, m->sport) &&
		ac_netset_has(&vr->dst, m->dst) && ac_netset_has(&vr->dport, m->dport))
		return true;
	return vr->bidirectional && ac_netset_has(&vr->src, m->dst) &&
		ac_netset_has(&vr->sport, m->dport) && ac_netset_has(&vr->dst, m->src) &&
		ac_netset_has(&vr->dport, m->sport);
}

bool
ac_verify_rule(const struct ac_verifier *v, uint32_t r, struct ac_vscratch *s,
	const struct ac_pkt_meta *m, const uint8_t *data, uint32_t len)
{
	const struct ac_vrule *vr = &v->rules[r];

	if (!header_matches(vr, m))
		return false;
	if (len + 1 > s->memo_len)
		len = s->memo_len - 1;
	if (vr->n_c > 0) {
		if (++s->memo_stamp == 0) {
			memset(s->memo, 0,
				(size_t)(v->max_contents + 1) * s->memo_len * sizeof(uint32_t));
			s->memo_stamp = 1;
		}
		if (!contents_from(vr, 0, 0, s, data, len))
			return false;
	}
	static const uint8_t empty[1];
	for (uint32_t i = 0; i < vr->n_p; i++) {
		int rc = pcre2_match(vr->p[i].code, len ? data : empty, len, 0, 0, s->md, NULL);
		if (rc < PCRE2_ERROR_NOMATCH)
			s->pcre_errors++; /* match limit etc.: counted as no match */
		bool hit = rc >= 0;
		if (hit == vr->p[i].negated)
			return false;
	}
	return true;
}

uint32_t
ac_verify_candidates(const struct ac_verifier *v, struct ac_vscratch *s,
	const struct ac_pkt_meta *m, const uint8_t *data, uint32_t len, ac_alert_fn fn, void *ctx)
{
	uint32_t alerts = 0;

	for (uint32_t i = 0; i < s->n_cand; i++) {
		const struct ac_keyword *kw = &v->fp[s->cand[i]];
		s->seen[s->cand[i] >> 6] = 0;
		for (uint32_t k = 0; k < kw->n_rules; k++)
			if (ac_verify_rule(v, kw->rules[k], s, m, data, len)) {
				fn(ctx, kw->rules[k]);
				alerts++;
			}
	}
	s->n_cand = 0;
	for (uint32_t i = 0; i < v->n_always; i++)
		if (ac_verify_rule(v, v->always[i], s, m, data, len)) {
			fn(ctx, v->always[i]);
			alerts++;
		}
	return alerts;
}
