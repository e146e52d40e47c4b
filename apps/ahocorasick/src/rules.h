/* Snort rule parsing and the keyword set the matchers are built from.
 *
 * Only what keyword matching needs is interpreted: the header (action and
 * protocol), content strings (text and |hex| bytes, escapes, negation) and
 * their nocase modifier, classtype, sid and rev.  The positional modifiers
 * (depth, offset, distance, within) are recorded but the matchers ignore
 * them: every occurrence anywhere in the payload is reported. */
#ifndef AC_RULES_H
#define AC_RULES_H

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
	unsigned line;          /* 1-based line in its file */
	bool disabled;          /* written as "# alert ..." (commented out) */
	char classtype[64];     /* "" if none */
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
enum ac_line_kind ac_rule_parse_line(const char *line, size_t len,
				     struct ac_rule *rule, char *err,
				     size_t errlen);
void ac_rule_free(struct ac_rule *rule);

/* A distinct (bytes, nocase) pair, and the rules that contain it. */
struct ac_keyword {
	uint8_t *bytes;
	uint32_t len;
	bool nocase;
	uint32_t *rules; /* indexes into ac_ruleset.rules */
	uint32_t n_rules;
};

/* A rule, a negated content, or a line that is not used, and why. */
struct ac_skip {
	unsigned line;
	uint32_t sid; /* 0 if unknown */
	char reason[192];
};

struct ac_filter {
	const char *const *classtypes; /* NULL: every class */
	unsigned n_classtypes;
	bool enabled_only; /* ignore commented-out ("# alert ...") rules */
};

struct ac_ruleset {
	char *path;
	struct ac_rule *rules; /* rules that gave at least one keyword */
	uint32_t n_rules;
	struct ac_keyword *keywords;
	uint32_t n_keywords;
	struct ac_skip *skipped; /* unusable rules and ignored contents */
	uint32_t n_skipped;
	/* Summary counts. */
	uint32_t lines;
	uint32_t rules_seen;        /* rule lines parsed, filtered or not */
	uint32_t rules_filtered;    /* left out by classtype / enabled_only */
	uint32_t rules_unusable;    /* malformed, or no usable content */
	uint32_t contents_used;     /* content strings that became keywords */
	uint32_t contents_negated;  /* negated contents ignored in used rules */
};

/* Read a rules file.  Lines ending in '\' continue on the next line.
 * Returns 0, or -1 with err set (file unreadable, no keyword at all). */
int ac_ruleset_load(const char *path, const struct ac_filter *filter,
		    struct ac_ruleset *rs, char *err, size_t errlen);
void ac_ruleset_free(struct ac_ruleset *rs);

/* The paper's set: attempted-dos, denial-of-service, successful-dos. */
extern const char *const ac_dos_classtypes[];
extern const unsigned ac_n_dos_classtypes;

/* Print bytes Snort-style ("text|0D 0A|") into buf; returns buf. */
char *ac_format_bytes(const uint8_t *b, uint32_t len, char *buf, size_t size);

/* Human-readable summary (one line) and the skipped list ("file:line: sid N:
 * reason", one a line) of a loaded set. */
void ac_ruleset_print_summary(const struct ac_ruleset *rs, const char *set_name,
			      FILE *out);
void ac_ruleset_print_skipped(const struct ac_ruleset *rs, FILE *out);

#endif /* AC_RULES_H */
