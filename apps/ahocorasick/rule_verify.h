/* Rules mode: one fast pattern per rule for the prefilter engine, and the
 * full verification of each candidate rule on a packet.
 *
 * A rule is evaluated as follows (README.md, "Rules mode", says the same):
 *  - header: protocol (tcp, udp; ip = either), source and destination
 *    address and port sets with variables (rule_vars.h); "<>" matches
 *    either direction;
 *  - contents, in rule order, on the L4 payload.  Each content has a window
 *    [start, end): offset/depth give [offset, offset + depth) (depth absent:
 *    to the end); distance/within are relative to the end E of the match of
 *    the previous non-negated content (0 before the first): [E + distance,
 *    E + distance + within); both kinds present: the intersection; start is
 *    clamped at 0.  A content matches when it lies wholly inside its
 *    window.  The rule's contents match when some choice of positions
 *    satisfies them all (every alternative is tried, as Snort's recursion
 *    does).  A negated content matches when its bytes do not occur in its
 *    window and moves nothing; a fast_pattern:only content only needs to
 *    occur anywhere and moves nothing;
 *  - each pcre with the flags i s m x A B (PCRE2, JIT) on the whole
 *    payload; !pcre must not match.
 * Options that cannot be evaluated (flow, flowbits, byte_test, http_*
 * buffers, pcre flags other than those above, modifiers naming byte_extract
 * variables, ...) are left out and the rule is marked partial: it is
 * evaluated without them, its alerts say "partial": true, and it is listed
 * at load.  A rule is disabled (never alerts, listed) when it is an icmp
 * rule (only TCP/UDP payloads are scanned), its header does not resolve, a
 * pcre does not compile, or nothing is left to evaluate (no content and no
 * pcre). */
#ifndef AC_RULE_VERIFY_H
#define AC_RULE_VERIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "keyword_set.h"
#include "rule_vars.h"

struct ac_vcontent {
	const uint8_t *bytes;
	uint32_t len;
	bool nocase, negated, fp_only;
	int32_t offset, depth, distance, within; /* AC_NO_VALUE if absent */
};

struct ac_vpcre {
	void *code; /* pcre2_code * */
	bool negated;
};

struct ac_vrule {
	const struct ac_rule *rule; /* sid, rev, msg, classtype, line */
	enum ac_proto proto;
	bool bidirectional;
	bool partial;
	struct ac_netset src, sport, dst, dport;
	struct ac_vcontent *c;
	uint32_t n_c;
	struct ac_vpcre *p;
	uint32_t n_p;
};

/* One packet's header fields (host byte order). */
struct ac_pkt_meta {
	uint8_t ip_proto; /* 6 or 17 */
	uint32_t src, dst;
	uint16_t sport, dport;
};

struct ac_verifier {
	struct ac_vrule *rules; /* the enabled rules */
	uint32_t n_rules;
	/* Fast patterns: distinct (bytes, nocase), each with its rules
	 * (ac_keyword.rules indexes ac_verifier.rules). */
	struct ac_keyword *fp;
	uint32_t n_fp;
	uint32_t *always; /* rules with no fast pattern: verified on every packet */
	uint32_t n_always;
	uint32_t max_contents;
	/* Load summary. */
	uint32_t n_disabled, n_partial, n_pcre;
	char **notes; /* "FILE:LINE: sid N: disabled|partial: reason", one per rule */
	uint32_t n_notes;
	/* Partial rules per option left out, most first after the build. */
	struct ac_opt_count {
		char name[40];
		uint32_t rules;
	} left_out[64];
	unsigned n_left_out;
};

/* Per-task state: candidate set of one packet, PCRE2 match data and the
 * verifier's memo.  Allocated once; nothing is allocated per packet. */
struct ac_vscratch {
	uint64_t *seen; /* bitmap over fast patterns */
	uint32_t *cand; /* fast patterns seen in this packet */
	uint32_t n_cand;
	void *md; /* pcre2_match_data * */
	uint32_t *memo;
	uint32_t memo_stamp;
	uint32_t memo_len; /* payload bytes + 1 the memo covers */
	uint64_t pcre_errors;
};

/* Build from a loaded rule set (loaded with keep_all).  0, or -1 with err. */
int ac_verifier_build(struct ac_verifier *v, const struct ac_ruleset *rs,
	const struct ac_vars *vars, char *err, size_t errlen);
void ac_verifier_free(struct ac_verifier *v);
/* One line: rules enabled, partial, disabled, fast patterns. */
void ac_verifier_print_summary(const struct ac_verifier *v, FILE *out);
void ac_verifier_print_notes(const struct ac_verifier *v, FILE *out);

/* max_payload: the longest payload verified (larger ones are cut). */
struct ac_vscratch *ac_vscratch_new(const struct ac_verifier *v, uint32_t max_payload);
void ac_vscratch_free(struct ac_vscratch *s);

/* The prefilter engine's callback: ctx is the ac_vscratch. */
void ac_vscratch_on_match(void *ctx, uint32_t fp, uint32_t end);

/* Does rule r (index into v->rules) match this packet? */
bool ac_verify_rule(const struct ac_verifier *v, uint32_t r, struct ac_vscratch *s,
	const struct ac_pkt_meta *m, const uint8_t *data, uint32_t len);

/* Verify the candidates collected by the engine for one packet, plus the
 * rules without fast pattern; calls fn for each matching rule (in no set
 * order), clears the candidate set.  Returns the number of alerts. */
typedef void (*ac_alert_fn)(void *ctx, uint32_t rule);
uint32_t ac_verify_candidates(const struct ac_verifier *v, struct ac_vscratch *s,
	const struct ac_pkt_meta *m, const uint8_t *data, uint32_t len, ac_alert_fn fn, void *ctx);

#endif /* AC_RULE_VERIFY_H */
