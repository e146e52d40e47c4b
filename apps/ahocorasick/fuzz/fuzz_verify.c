/* libFuzzer target: the rules-mode verifier.  The input is a rule line, a
 * newline, then a payload.  The rule is parsed, resolved against the
 * default variables and compiled (PCRE2 included), then verified on the
 * payload directly and through the prefilter path with both engines; the
 * three must agree (a rule can only match where its fast pattern occurs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rule_verify.h"
#include "rule_vars.h"

static struct ac_vars vars;

static void
hit(void *ctx, uint32_t rule)
{
	(void)rule;
	(*(uint32_t *)ctx)++;
}

static uint32_t
via_engine(enum ac_engine_kind kind, const struct ac_verifier *v, struct ac_vscratch *vs,
	const struct ac_pkt_meta *m, const uint8_t *p, uint32_t len)
{
	char err[256];
	uint32_t n = 0;

	if (v->n_fp == 0)
		return ac_verify_candidates(v, vs, m, p, len, hit, &n);
	/* Budget 1: the AC engine in its compact layout (the direct path and
	 * Hyperscan check it). */
	struct ac_engine *e = ac_engine_build_opt(kind, v->fp, v->n_fp, true, 1, err, sizeof(err));
	if (e == NULL)
		abort();
	struct ac_scratch *s = ac_scratch_new(e, err, sizeof(err));
	if (s == NULL)
		abort();
	ac_engine_scan(e, s, p, len, ac_vscratch_on_match, vs);
	if (ac_scratch_errors(s, NULL) != 0)
		abort();
	ac_verify_candidates(v, vs, m, p, len, hit, &n);
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
	if (ac_verifier_build(&v, &rs, &vars, err, sizeof(err)) == 0) {
		struct ac_vscratch *vs = ac_vscratch_new(&v, plen);
		if (vs == NULL)
			abort();
		struct ac_pkt_meta m = { 6, 0x0a000001, 0x0a000002, 1234, 80 };
		if (r.proto == AC_PROTO_UDP)
			m.ip_proto = 17;
		bool direct = ac_verify_rule(&v, 0, vs, &m, payload, plen);
		uint32_t a = via_engine(AC_ENGINE_AC, &v, vs, &m, payload, plen);
		uint32_t h = via_engine(AC_ENGINE_HS, &v, vs, &m, payload, plen);
		if (a != (uint32_t)direct || h != (uint32_t)direct)
			abort();
		ac_vscratch_free(vs);
		ac_verifier_free(&v);
	}
	ac_rule_free(&r);
	return 0;
}
