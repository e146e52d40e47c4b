/* The keyword set the matchers are built from: a rules file parsed rule by
 * rule (snort_rule.h), filtered, its contents merged into distinct
 * (bytes, nocase) keywords with the rules that contain each. */
#ifndef AC_KEYWORD_SET_H
#define AC_KEYWORD_SET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "snort_rule.h"

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
	bool keep_all;     /* rules mode: keep rules without a usable content too */
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
	uint32_t rules_seen;       /* rule lines parsed, filtered or not */
	uint32_t rules_filtered;   /* left out by classtype / enabled_only */
	uint32_t rules_unusable;   /* malformed, or no usable content */
	uint32_t contents_used;    /* content strings that became keywords */
	uint32_t contents_negated; /* negated contents ignored in used rules */
	bool keep_all;             /* loaded for rules mode */
};

/* Read a rules file.  Lines ending in '\' continue on the next line.
 * Returns 0, or -1 with err set (file unreadable, no keyword at all). */
int ac_ruleset_load(const char *path, const struct ac_filter *filter, struct ac_ruleset *rs,
	char *err, size_t errlen);
void ac_ruleset_free(struct ac_ruleset *rs);

/* The paper's set: attempted-dos, denial-of-service, successful-dos. */
extern const char *const ac_dos_classtypes[];
extern const unsigned ac_n_dos_classtypes;

/* Human-readable summary (one line) and the skipped list ("file:line: sid N:
 * reason", one a line) of a loaded set. */
void ac_ruleset_print_summary(const struct ac_ruleset *rs, const char *set_name, FILE *out);
void ac_ruleset_print_skipped(const struct ac_ruleset *rs, FILE *out);

#endif /* AC_KEYWORD_SET_H */
