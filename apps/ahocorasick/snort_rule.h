/* Snort rule parsing: one rule line into a struct ac_rule.
 *
 * Interpreted: the header (action, protocol, addresses, ports, direction),
 * content strings (text and |hex| bytes, escapes, negation) with nocase,
 * rawbytes, depth, offset, distance, within and fast_pattern, pcre, msg,
 * classtype, sid and rev.  Keywords mode uses the contents only (every
 * occurrence anywhere); rules mode evaluates the rest (rule_verify.h).
 * Any other option is recorded by name in ac_rule.unsupported. */
#ifndef AC_SNORT_RULE_H
#define AC_SNORT_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AC_NO_VALUE INT32_MIN /* positional modifier absent */

struct ac_content {
	uint8_t *bytes;
	uint32_t len;
	bool nocase;
	bool negated;
	int32_t depth, offset, distance, within; /* AC_NO_VALUE if absent */
	bool pos_var;                            /* a modifier named a byte_extract variable */
	bool fast_pattern;                       /* fast_pattern given */
	bool fp_only;                            /* fast_pattern:only */
	uint32_t fp_off; /* fast_pattern:OFF,LEN (fp_len 0: the whole content) */
	uint32_t fp_len;
};

/* pcre:"[!]/re/flags": the expression and its Snort flags as written. */
struct ac_pcre {
	char *re; /* NUL-terminated */
	char flags[32];
	bool negated;
};

enum ac_proto {
	AC_PROTO_TCP,
	AC_PROTO_UDP,
	AC_PROTO_ICMP,
	AC_PROTO_IP
};

#define AC_UNSUPPORTED_MAX 256

struct ac_rule {
	uint32_t sid, rev;
	unsigned line;      /* 1-based line in its file */
	bool disabled;      /* written as "# alert ..." (commented out) */
	char classtype[64]; /* "" if none */
	struct ac_content *contents;
	unsigned n_contents;
	/* Header and the options rules mode evaluates (rule_verify.h). */
	enum ac_proto proto;
	bool bidirectional;              /* "<>" */
	char *src, *sport, *dst, *dport; /* header fields as written */
	char *msg;                       /* NULL if none */
	struct ac_pcre *pcres;
	unsigned n_pcres;
	/* Options that cannot be evaluated, by name, comma-separated ("flow,
	 * byte_test"); "" if none.  n_unsupported counts them. */
	char unsupported[AC_UNSUPPORTED_MAX];
	unsigned n_unsupported;
};

enum ac_line_kind {
	AC_LINE_RULE,    /* *rule filled; free with ac_rule_free() */
	AC_LINE_IGNORED, /* blank line or comment that is not a rule */
	AC_LINE_ERROR,   /* malformed rule; err says why */
};

/* Parse one (already joined) rule line of len bytes; it need not be
 * NUL-terminated and may contain any byte. */
enum ac_line_kind ac_rule_parse_line(
	const char *line, size_t len, struct ac_rule *rule, char *err, size_t errlen);
void ac_rule_free(struct ac_rule *rule);

/* Print bytes Snort-style ("text|0D 0A|") into buf; returns buf. */
char *ac_format_bytes(const uint8_t *b, uint32_t len, char *buf, size_t size);

#endif /* AC_SNORT_RULE_H */
