/* ac-rules: load a Snort rules file the way the app does and report what
 * keyword set it yields, without starting DPDK. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rule_opts.h"
#include "keyword_set.h"

static const char usage[] =
	"usage: ac-rules [options]\n"
	"Extract the content keywords of Snort rules and say which rules cannot\n"
	"be used and why (the summary line goes to stderr).  With --vars,\n"
	"--list-unsupported or --stateless, load the set as the app's rules mode\n"
	"does and print its summary too.\n" AC_RULE_OPTS_USAGE
	"  --list-keywords       print every distinct keyword (stdout):\n"
	"                        id, nocase flag, Snort-style bytes, sids\n"
	"  -h, --help            this text\n";

int
main(int argc, char **argv)
{
	struct ac_rule_opts o = { 0 };
	struct ac_ruleset rs;
	int list_kw = 0;

	for (int i = 1; i < argc;) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		if (strcmp(argv[i], "--list-keywords") == 0) {
			list_kw = 1;
			i++;
			continue;
		}
		int n = ac_rule_opt_parse(&o, argc - i, argv + i);
		if (n < 0)
			return 2;
		if (n == 0) {
			fprintf(stderr, "ac-rules: unknown option '%s'\n%s", argv[i], usage);
			return 2;
		}
		i += n;
	}
	/* --vars or --list-unsupported: load as rules mode does and print
	 * its summary (and its list). */
	bool rules_mode =
		o.vars_path != NULL || o.list_unsupported || o.stateless || o.no_reassembly;
	o.keep_all = rules_mode;
	if (ac_rule_opts_load(&o, &rs) < 0)
		return 2; /* the rules (or --vars) file the command line names is wrong */
	if (rules_mode) {
		struct ac_vars vars;
		struct ac_verifier v;
		if (ac_rule_opts_build_verifier(&o, &rs, &vars, &v) < 0) {
			ac_ruleset_free(&rs);
			return 1;
		}
		ac_verifier_free(&v);
		ac_vars_free(&vars);
	}
	if (list_kw) {
		char buf[1024];
		for (uint32_t k = 0; k < rs.n_keywords; k++) {
			const struct ac_keyword *kw = &rs.keywords[k];
			printf("%u\t%s\t\"%s\"\t", k, kw->nocase ? "nocase" : "case",
				ac_format_bytes(kw->bytes, kw->len, buf, sizeof(buf)));
			for (uint32_t r = 0; r < kw->n_rules; r++)
				printf("%s%u", r ? "," : "", rs.rules[kw->rules[r]].sid);
			putchar('\n');
		}
	}
	ac_ruleset_free(&rs);
	return 0;
}
