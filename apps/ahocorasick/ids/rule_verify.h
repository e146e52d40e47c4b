/* Rules mode: one fast pattern per rule for the prefilter engine, and the
 * full verification of each candidate rule on a packet.
 *
 * A rule is judged on a packet as follows (README.md, "Rules mode", states
 * the same; tests/rule_reference.py implements it apart from this code):
 *  - header: protocol (tcp, udp; ip = either), source and destination
 *    address and port sets with variables (rule_vars.h); "<>" matches
 *    either direction;
 *  - flow: the packet's direction (from the flow's client or server) and
 *    whether its flow is established (ac_flow_match); dsize on the payload
 *    length; urilen on the URI; flowbits checks on the flow's states;
 *  - the payload options in rule order, with one cursor (a buffer and a
 *    position in it): each reads its buffer (rule_options.h); an option
 *    on a buffer the packet lacks fails, negated or not.  A content has a
 *    window: offset/depth from the start of its buffer, distance/within
 *    from the cursor when the cursor is in the same buffer (else from 0);
 *    both kinds: the intersection, start clamped at 0; it matches when it
 *    lies wholly inside, and moves the cursor to its end.  Every
 *    occurrence is tried in turn (a later option that fails makes the
 *    previous content try its next one); a negated content matches when
 *    its bytes do not occur in its window and moves nothing; a
 *    fast_pattern:only content needs only occur in its buffer.  pcre runs
 *    on its buffer (R: from the cursor when it is in that buffer), takes
 *    its first match and moves the cursor to the match's end; !pcre must
 *    not match.  byte_test, byte_jump, byte_extract and isdataat read the
 *    cursor's buffer when relative (after a cursor move), else the default
 *    buffer (pkt_data, or file_data after file_data); byte_jump and
 *    byte_extract move the cursor;
 *  - a match applies the rule's flowbits changes (set, setx, unset,
 *    toggle, reset); flowbits:noalert rules raise no alert.
 * Within a packet, rules that change flowbits and check none go first,
 * then those that do both, then those that only check, each group in file
 * order, and each sees the changes of those before it.
 *
 * Options that cannot be evaluated (detection_filter, dce_*, byte_*
 * with dce, flow:only_stream without reassembly, file_data of a rule for
 * mail only, without MIME decoding, ...) are left out and the rule is
 * marked partial: its alerts say "partial": true and it is listed at load.
 * A rule for both http and mail that reads file_data is partial on the
 * packets that are not HTTP responses only (ac_vrule.mail_file_data).  A
 * rule is disabled (never alerts, listed) when it is an icmp rule (only
 * TCP/UDP payloads are scanned), its header does not resolve, a pcre does
 * not compile, or it left something out and has no content or pcre. */
#ifndef AC_RULE_VERIFY_H
#define AC_RULE_VERIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "keyword_set.h"
#include "rule_options.h"
#include "rule_vars.h"

struct ac_vcontent {
	const uint8_t *bytes;
	uint32_t len;
	bool nocase, negated, fp_only;
	int32_t offset, depth, distance, within; /* AC_NO_VALUE if absent */
	int8_t var[4]; /* byte_extract variable of offset, depth, distance, within */
};

struct ac_vpcre {
	void *code; /* pcre2_code * */
	bool negated;
	bool relative;
};

/* A payload option in rule order. */
struct ac_vopt {
	uint8_t kind; /* enum ac_ropt_kind */
	uint8_t buf;  /* the buffer it reads (for a relative byte_*: the cursor's) */
	bool same;    /* the cursor is in buf before this option: relative = from it */
	uint32_t idx; /* into c, p or b */
};

/* A flowbits check or change over the verifier's bit words. */
struct ac_vfb {
	uint8_t cmd;     /* enum ac_fb_cmd */
	bool any;        /* checks: any of mask (else all of it) */
	uint64_t *mask;  /* fb_words words */
	uint64_t *group; /* setx: the group's states; reset: NULL = every state */
};

struct ac_vrule {
	const struct ac_rule *rule; /* sid, rev, msg, classtype, line */
	uint32_t order;             /* index in the rules file's enabled rules */
	enum ac_proto proto;
	bool bidirectional;
	bool partial;
	struct ac_netset src, sport, dst, dport;
	struct ac_vcontent *c;
	uint32_t n_c;
	struct ac_vpcre *p;
	uint32_t n_p;
	const struct ac_byteop *b;
	uint32_t n_b;
	struct ac_vopt *o;
	uint32_t n_o;
	uint32_t need_bufs; /* bit per enum ac_buf the rule reads */
	uint8_t flow;       /* AC_FLOW_* to check, 0: none */
	bool has_dsize, has_urilen, urilen_raw;
	struct ac_size_range dsize, urilen;
	struct ac_vfb *fb_check, *fb_change;
	uint32_t n_fb_check, n_fb_change;
	bool noalert;
	bool memo_ok; /* no byte_extract: a content's failures can be remembered */
	/* Reads file_data and names both http and a mail service: its alerts
	 * on a packet that is not an HTTP response are partial (mail's
	 * file_data is decoded MIME in Snort, the payload as sent here). */
	bool mail_file_data;
	/* With reassembly (ids.h): flow:only_stream judges rebuilt PDUs only;
	 * flow:no_stream and dsize raw packets only. */
	bool stream_only, packet_only;
	/* Its only payload option is one plain content in pkt_data (no
	 * position, nothing else), which is its fast pattern: an occurrence
	 * anywhere in a direction's bytes is a match, across PDU ends too. */
	bool streamable;
};

/* One packet as rules see it. */
struct ac_pkt_meta {
	uint8_t ip_proto; /* 6 or 17 */
	ac_addr src, dst; /* IPv4 as ::ffff:a.b.c.d (rule_vars.h) */
	uint16_t sport, dport;
};

struct ac_pkt_view {
	const struct ac_pkt_meta *m;
	const struct ac_span *buf; /* AC_BUF_N buffers (http_parse.h) */
	uint32_t present;          /* bit per present buffer */
	uint8_t pf;                /* AC_PF_* */
	uint64_t *bits;            /* the flow's flowbits (fb_words), changed in place */
	bool bits_changed;
	/* With reassembly (ids.h): a rebuilt PDU (else a raw packet); rules
	 * not to judge again (matched on its raw packets); and where to note
	 * the rules that matched (the first matched_cap of them). */
	bool stream;
	const uint32_t *skip;
	uint32_t n_skip, n_skipped;
	uint32_t *matched;
	uint32_t n_matched, matched_cap;
};

struct ac_verifier {
	struct ac_vrule *rules; /* the enabled rules, flowbits changers first (above) */
	uint32_t n_rules;
	/* Fast patterns: distinct (bytes, nocase), each with its rules
	 * (ac_keyword.rules indexes ac_verifier.rules). */
	struct ac_keyword *fp;
	uint32_t n_fp;
	uint32_t *always; /* rules with no fast pattern: verified on every packet */
	uint32_t n_always;
	/* The same split by the protocol they can match, TCP [0] and UDP [1]
	 * (ip rules in both): a packet walks only its own. */
	uint32_t *always_proto[2];
	uint32_t n_always_proto[2];
	/* Beside each: the one source and destination port range the rule's
	 * header allows (all ports when it is not one range, or "<>"), tested
	 * before the rule itself is touched. */
	struct ac_port_hint {
		uint16_t slo, shi, dlo, dhi;
	} * always_hint[2];
	uint32_t max_contents;
	bool basic;              /* rules mode as before flows: see ac_verifier_build */
	bool streams;            /* rebuilt PDUs exist (reassembly): only_stream is exact */
	uint32_t max_streamable; /* the longest streamable rule's content */
	/* flowbits: state names and the words of one flow's states */
	char **fb_names;
	uint32_t n_fb_names;
	uint32_t fb_words;
	uint32_t n_fb_rules; /* rules with a flowbits check or change */
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
	uint32_t *deferred; /* flowbits rules of this packet, judged in order */
	void *md;           /* pcre2_match_data * */
	uint32_t *memo;
	uint32_t memo_stamp;
	uint32_t memo_len; /* buffer bytes + 1 the memo covers */
	uint64_t pcre_errors;
	uint64_t budget_exceeded; /* rules given up on (too many alternatives) */
	uint64_t noalert_matches;
};

/* Build from a loaded rule set (loaded with keep_all).  basic: rules mode
 * as it was without flow state (the benchmark's baseline, --stateless):
 * every buffer is the payload, and flow, flowbits, byte_*, isdataat,
 * dsize, urilen, http_* buffers, file_data, pcre flags other than i s m x
 * A B and modifiers naming variables are left out.  0, or -1 with err. */
/* streams: reassembly judges rebuilt PDUs (flow:only_stream exact);
 * without, only_stream rules are judged on each packet (partial). */
int ac_verifier_build(struct ac_verifier *v, const struct ac_ruleset *rs,
	const struct ac_vars *vars, bool basic, bool streams, char *err, size_t errlen);
void ac_verifier_free(struct ac_verifier *v);
/* One line: rules enabled, partial, disabled, fast patterns. */
void ac_verifier_print_summary(const struct ac_verifier *v, FILE *out);
void ac_verifier_print_notes(const struct ac_verifier *v, FILE *out);

/* max_payload: the longest buffer verified (larger ones are cut). */
struct ac_vscratch *ac_vscratch_new(const struct ac_verifier *v, uint32_t max_payload);
void ac_vscratch_free(struct ac_vscratch *s);

/* The prefilter engine's callback: ctx is the ac_vscratch. */
void ac_vscratch_on_match(void *ctx, uint32_t fp, uint32_t end);
/* Fast patterns found another way: the bits of a bitmap over them. */
void ac_vscratch_add_bitmap(struct ac_vscratch *s, const uint64_t *bm, uint32_t words);

/* Does rule r (index into v->rules) match this packet?  A match applies
 * its flowbits changes to pv->bits.  Rules with flowbits must be judged in
 * index order within a packet (ac_verify_candidates does). */
bool ac_verify_rule(
	const struct ac_verifier *v, uint32_t r, struct ac_vscratch *s, struct ac_pkt_view *pv);

/* Verify the candidates collected by the engine for one packet, plus the
 * rules without fast pattern; calls fn for each matching rule that alerts
 * (flowbits rules in index order after the others), clears the candidate
 * set.  Returns the number of alerts. */
typedef void (*ac_alert_fn)(void *ctx, uint32_t rule);
uint32_t ac_verify_candidates(const struct ac_verifier *v, struct ac_vscratch *s,
	struct ac_pkt_view *pv, ac_alert_fn fn, void *ctx);

/* A view of a payload alone (no HTTP, no flow: from a client, not
 * established), for the tools and tests that judge bare payloads. */
void ac_pkt_view_bare(struct ac_pkt_view *pv, struct ac_span bufs[AC_BUF_N],
	const struct ac_pkt_meta *m, const uint8_t *data, uint32_t len, uint64_t *bits);

#endif /* AC_RULE_VERIFY_H */
