/* Keyword-set options shared by the app and ac-rules (see rule_opts.h). */
#include "rule_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ac_rule_opt_parse(struct ac_rule_opts *o, int argc, char **argv)
{
	const char *opt = argv[0];

	if (strcmp(opt, "--dos") == 0) {
		o->dos = true;
		return 1;
	}
	if (strcmp(opt, "--enabled-only") == 0) {
		o->enabled_only = true;
		return 1;
	}
	if (strcmp(opt, "--list-skipped") == 0) {
		o->list_skipped = true;
		return 1;
	}
	if (strcmp(opt, "--rules") != 0 && strcmp(opt, "--classtype") != 0)
		return 0;
	if (argc < 2 || argv[1][0] == '\0') {
		fprintf(stderr, "%s needs a value\n", opt);
		return -1;
	}
	if (strcmp(opt, "--rules") == 0) {
		o->rules_path = argv[1];
		return 2;
	}
	free(o->classtype_arg);
	o->classtype_arg = strdup(argv[1]);
	if (o->classtype_arg == NULL)
		return -1;
	o->n_classtypes = 0;
	char *save = NULL;
	for (char *t = strtok_r(o->classtype_arg, ",", &save); t != NULL;
	     t = strtok_r(NULL, ",", &save)) {
		if (o->n_classtypes == AC_MAX_CLASSTYPES) {
			fprintf(stderr, "--classtype '%s': more than %d classtypes\n",
				argv[1], AC_MAX_CLASSTYPES);
			return -1;
		}
		o->classtypes[o->n_classtypes++] = t;
	}
	if (o->n_classtypes == 0) {
		fprintf(stderr, "--classtype '%s': no classtype named\n", argv[1]);
		return -1;
	}
	return 2;
}

const char *ac_rule_opts_set_name(const struct ac_rule_opts *o, char *buf,
				  size_t size)
{
	if (o->dos && o->n_classtypes == 0) {
		snprintf(buf, size, "dos");
	} else if (o->n_classtypes > 0 || o->dos) {
		size_t n = (size_t)snprintf(buf, size, "classtype:");
		for (unsigned i = 0; i < o->n_classtypes && n < size; i++)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? "," : "",
					      o->classtypes[i]);
		for (unsigned i = 0; o->dos && i < ac_n_dos_classtypes && n < size; i++)
			n += (size_t)snprintf(buf + n, size - n, ",%s", ac_dos_classtypes[i]);
	} else {
		snprintf(buf, size, "all");
	}
	if (o->enabled_only) {
		size_t n = strlen(buf);
		snprintf(buf + n, size - n, "%s", ",enabled-only");
	}
	return buf;
}

int ac_rule_opts_load(const struct ac_rule_opts *o, struct ac_ruleset *rs)
{
	const char *classes[AC_MAX_CLASSTYPES + 3];
	struct ac_filter f = { NULL, 0, o->enabled_only };
	char err[512], name[512];
	const char *path = o->rules_path ? o->rules_path : AC_DEFAULT_RULES;

	if (o->dos || o->n_classtypes > 0) {
		for (unsigned i = 0; i < o->n_classtypes; i++)
			classes[f.n_classtypes++] = o->classtypes[i];
		for (unsigned i = 0; o->dos && i < ac_n_dos_classtypes; i++)
			classes[f.n_classtypes++] = ac_dos_classtypes[i];
		f.classtypes = classes;
	}
	if (ac_ruleset_load(path, &f, rs, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s%s\n", err,
			o->rules_path ? "" : " (the default; pick another with --rules FILE)");
		return -1;
	}
	if (o->list_skipped)
		ac_ruleset_print_skipped(rs, stderr);
	ac_ruleset_print_summary(rs, ac_rule_opts_set_name(o, name, sizeof(name)),
				 stderr);
	return 0;
}

void ac_rule_opts_free(struct ac_rule_opts *o)
{
	free(o->classtype_arg);
	o->classtype_arg = NULL;
}
