/* libFuzzer target: the rules-mode verifier.  The input is a rule line, a
 * newline, then a payload.  The rule is parsed, resolved against the
 * default variables and compiled (PCRE2 included); the payload's HTTP
 * buffers are parsed (http_parse.h); the rule is verified directly and
 * through the prefilter path with both engines (which scan the payload and
 * every buffer that is not a slice of it); the three must agree (a rule
 * can only match where its fast pattern occurs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "http_parse.h"
#include "rule_verify.h"
#include "rule_vars.h"

static struct ac_vars vars;
static struct ac_http http;
static uint64_t bits[64];

/* A fresh view of the packet: flowbits cleared, the flow state from pf. */
static struct ac_pkt_view
view(const struct ac_verifier *v, const struct ac_pkt_meta *m, uint8_t pf)
{
	struct ac_pkt_view pv = { .m = m, .buf = http.buf, .pf = pf, .bits = bits };
	memset(bits, 0, sizeof(bits));
	(void)v;
	for (int b = 0; b < AC_BUF_N; b++)
		if (http.buf[b].present)
			pv.present |= 1u << b;
	return pv;
}

static void
hit(void *ctx, uint32_t rule)
{
	(void)rule;
	(*(uint32_t *)ctx)++;
}

static uint32_t
via_engine(enum ac_engine_kind kind, const struct ac_verifier *v, struct ac_vscratch *vs,
	const struct ac_pkt_meta *m, uint8_t pf, const uint8_t *p, uint32_t len)
{
	char err[256];
	uint32_t n = 0;
	struct ac_pkt_view pv = view(v, m, pf);

	if (v->n_fp == 0) {
		ac_verify_candidates(v, vs, &pv, hit, &n);
		return n;
	}
	/* Budget 1: the AC engine in its compact layout (the direct path and
	 * Hyperscan check it). */
	struct ac_engine *e = ac_engine_build_opt(kind, v->fp, v->n_fp, true, 1, err, sizeof(err));
	if (e == NULL)
		abort();
	struct ac_scratch *s = ac_scratch_new(e, err, sizeof(err));
	if (s == NULL)
		abort();
	ac_engine_scan(e, s, p, len, ac_vscratch_on_match, vs);
	for (int b = 0; b < AC_BUF_N; b++)
		if (http.not_slices & (1u << b))
			ac_engine_scan(
				e, s, http.buf[b].p, http.buf[b].len, ac_vscratch_on_match, vs);
	if (ac_scratch_errors(s, NULL) != 0)
		abort();
	ac_verify_candidates(v, vs, &pv, hit, &n);
	ac_scratch_free(s);
	ac_engine_free(e);
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	const uint8_t *nl = memchr(data, '\n', size);
	size_t rl = nl ? (size_t)(nl - data) : size;
	const uint8_t *payload = nl ? nl + 1 : data + size;
	uint32_t plen = (uint32_t)(size - (size_t)(payload - data));

	if (vars.n == 0 && ac_vars_load(&vars, NULL, err, sizeof(err)) < 0)
		abort();
	struct ac_rule r;
	if (ac_rule_parse_line((const char *)data, rl, &r, err, sizeof(err)) != AC_LINE_RULE)
		return 0;
	r.line = 1;
	struct ac_ruleset rs = { 0 };
	rs.path = (char *)"fuzz";
	rs.rules = &r;
	rs.n_rules = 1;
	struct ac_verifier v;
	if (ac_verifier_build(&v, &rs, &vars, false, false, err, sizeof(err)) == 0) {
		struct ac_vscratch *vs = ac_vscratch_new(&v, plen);
		uint8_t *scratch = malloc(AC_HTTP_SCRATCH(plen));
		if (vs == NULL || scratch == NULL || v.fb_words > 64)
			abort();
		struct ac_pkt_meta m = { 6, ac_addr_v4(0x0a000001), ac_addr_v4(0x0a000002), 1234,
			80 };
		if (r.proto == AC_PROTO_UDP)
			m.ip_proto = 17;
		/* the flow state from the payload's length: every combination */
		uint8_t pf = (uint8_t)(plen & (AC_PF_FROM_CLIENT | AC_PF_ESTABLISHED));
		ac_http_parse(payload, plen, m.ip_proto == 6, scratch, &http);
		struct ac_pkt_view pv = view(&v, &m, pf);
		bool direct = ac_verify_rule(&v, 0, vs, &pv) && !v.rules[0].noalert;
		uint32_t a = via_engine(AC_ENGINE_AC, &v, vs, &m, pf, payload, plen);
		uint32_t h = via_engine(AC_ENGINE_HS, &v, vs, &m, pf, payload, plen);
		if (a != (uint32_t)direct || h != (uint32_t)direct)
			abort();
		free(scratch);
		ac_vscratch_free(vs);
		ac_verifier_free(&v);
	}
	ac_rule_free(&r);
	return 0;
}
