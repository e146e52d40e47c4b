/* Command-line options that choose the keyword set, shared by the app and
 * the ac-rules tool: --rules FILE, --classtype a,b,c, --dos, --enabled-only,
 * --list-skipped. */
#ifndef AC_RULE_OPTS_H
#define AC_RULE_OPTS_H

#include <stdbool.h>

#include "keyword_set.h"
#include "rule_verify.h"

#define AC_MAX_CLASSTYPES 64

/* Holds pointers into argv only (nothing to free), so the app's set-up can
 * run again on the same options (the runtime's --serve mode). */
struct ac_rule_opts {
	const char *rules_path;    /* NULL: ac_default_rules() */
	const char *classtype_arg; /* --classtype value as given, NULL if none */
	bool dos;
	bool enabled_only;
	bool list_skipped;
	bool keep_all;         /* rules mode: set by the app before loading */
	const char *vars_path; /* --vars FILE, NULL: the defaults */
	bool list_unsupported; /* --list-unsupported */
	bool stateless;        /* --stateless: rules mode without flows (the baseline) */
	bool no_reassembly;    /* --no-reassembly: flows, no defragmentation or streams */
};

#define AC_RULE_OPTS_USAGE                                                                   \
	"  --rules FILE          Snort rules file; default: $PIPEPLACE_RULES if set, else\n" \
	"                        " AC_RULES_INSTALLED "\n"                                   \
	"                        (where the install puts it), else, for a binary in a\n"     \
	"                        build tree, ../shared/data/snort/community.rules beside\n"  \
	"                        the source tree (found from the binary's own place);\n"     \
	"                        none of them: exit status 2\n"                              \
	"  --classtype A,B,...   only rules of these classtypes\n"                           \
	"  --dos                 the paper's set: attempted-dos,denial-of-service,\n"        \
	"                        successful-dos (same as --classtype with those)\n"          \
	"  --enabled-only        ignore rules shipped commented out (\"# alert ...\");\n"    \
	"                        by default they are used, as in the paper's set\n"          \
	"  --list-skipped        print every malformed rule (keywords mode: also\n"          \
	"                        rules without content, ignored negated contents)\n"         \
	"                        as FILE:LINE: sid N: reason (stderr)\n"                     \
	"  --vars FILE           rules mode: header variables, Snort-style lines\n"          \
	"                        'ipvar|portvar|var NAME VALUE' (defaults below)\n"          \
	"  --list-unsupported    rules mode: print every rule evaluated without\n"           \
	"                        options it uses (partial) or disabled, and why, as\n"       \
	"                        FILE:LINE: sid N: partial|disabled: reason (stderr)\n"      \
	"  --stateless           rules mode as it was before flow state: no flow\n"          \
	"                        table, no HTTP buffers; flow, flowbits, http_*,\n"          \
	"                        file_data, byte_*, isdataat, dsize, urilen left out\n"      \
	"                        (rules partial); the baseline the benchmark measures\n"     \
	"                        the flow, HTTP and byte_* work against\n"                   \
	"  --no-reassembly       rules mode with flows but without IP\n"                     \
	"                        defragmentation and TCP reassembly: single packets\n"       \
	"                        only (flow:only_stream rules partial); the baseline\n"      \
	"                        the benchmark measures reassembly against\n"

/* The rules file when --rules is not given (see --help), into buf; NULL
 * when there is none (why printed: give --rules or PIPEPLACE_RULES). */
const char *ac_default_rules(char *buf, size_t size);

/* Same contract as pp_app.parse_opt: entries consumed (1 or 2), 0 if not a
 * rule option, -1 on a bad value (error printed). */
int ac_rule_opt_parse(struct ac_rule_opts *o, int argc, char **argv);

/* Load the selected set; prints the summary line (and the skipped list if
 * asked) to stderr.  0 or -1 (error printed). */
int ac_rule_opts_load(const struct ac_rule_opts *o, struct ac_ruleset *rs);

/* Rules mode: the variables (--vars) and the verifier over a set loaded
 * with keep_all; prints its summary (and the list if asked).  0 or -1. */
int ac_rule_opts_build_verifier(const struct ac_rule_opts *o, const struct ac_ruleset *rs,
	struct ac_vars *vars, struct ac_verifier *v);

/* "all", "dos" or "classtype:a,b" for statistics. */
const char *ac_rule_opts_set_name(const struct ac_rule_opts *o, char *buf, size_t size);

#endif /* AC_RULE_OPTS_H */
