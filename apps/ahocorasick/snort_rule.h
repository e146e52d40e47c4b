/* Snort rule parsing: one rule line into a struct ac_rule.
 *
 * Only what keyword matching needs is interpreted: the header (action and
 * protocol), content strings (text and |hex| bytes, escapes, negation) and
 * their nocase modifier, classtype, sid and rev.  The positional modifiers
 * (depth, offset, distance, within) are recorded but the matchers ignore
 * them: every occurrence anywhere in the payload is reported. */
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
};

struct ac_rule {
	uint32_t sid, rev;
	unsigned line;      /* 1-based line in its file */
	bool disabled;      /* written as "# alert ..." (commented out) */
	char classtype[64]; /* "" if none */
	struct ac_content *contents;
	unsigned n_contents;
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
