/* Keyword-set options shared by the app and ac-rules (see rule_opts.h). */
#include "rule_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
ac_rule_opt_parse(struct ac_rule_opts *o, int argc, char **argv)
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
	if (strcmp(opt, "--list-unsupported") == 0) {
		o->list_unsupported = true;
		return 1;
	}
	if (strcmp(opt, "--stateless") == 0) {
		o->stateless = true;
		return 1;
	}
	if (strcmp(opt, "--no-reassembly") == 0) {
		o->no_reassembly = true;
		return 1;
	}
	if (strcmp(opt, "--rules") != 0 && strcmp(opt, "--classtype") != 0 &&
		strcmp(opt, "--vars") != 0)
		return 0;
	if (argc < 2 || argv[1][0] == '\0') {
		fprintf(stderr, "%s needs a value\n", opt);
		return -1;
	}
	/* A file that cannot be read is a usage error, refused before EAL starts
	 * (the loaders say the same later, for the default path). */
	if ((strcmp(opt, "--rules") == 0 || strcmp(opt, "--vars") == 0) &&
		access(argv[1], R_OK) != 0) {
		if (strcmp(opt, "--rules") == 0)
			fprintf(stderr, "cannot read rules file '%s': %s\n", argv[1],
				strerror(errno));
		else
			fprintf(stderr, "--vars: cannot read '%s': %s\n", argv[1], strerror(errno));
		return -1;
	}
	if (strcmp(opt, "--rules") == 0) {
		o->rules_path = argv[1];
		return 2;
	}
	if (strcmp(opt, "--vars") == 0) {
		o->vars_path = argv[1];
		return 2;
	}
	/* --classtype: comma-separated, no empty names, at most 64. */
	unsigned n = 0;
	for (const char *p = argv[1];; p++) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 0) {
			fprintf(stderr, "--classtype '%s': empty classtype name\n", argv[1]);
			return -1;
		}
		if (++n > AC_MAX_CLASSTYPES) {
			fprintf(stderr, "--classtype '%s': more than %d classtypes\n", argv[1],
				AC_MAX_CLASSTYPES);
			return -1;
		}
		if (e == NULL)
			break;
		p = e;
	}
	o->classtype_arg = argv[1];
	return 2;
}

const char *
ac_rule_opts_set_name(const struct ac_rule_opts *o, char *buf, size_t size)
{
	if (o->classtype_arg == NULL)
		snprintf(buf, size, "%s", o->dos ? "dos" : "all");
	else
		snprintf(buf, size, "classtype:%s%s", o->classtype_arg,
			o->dos ? ",attempted-dos,denial-of-service,successful-dos" : "");
	if (o->enabled_only) {
		size_t n = strlen(buf);
		if (n < size)
			snprintf(buf + n, size - n, "%s", ",enabled-only");
	}
	return buf;
}

const char *
ac_default_rules(char *buf, size_t size)
{
	const char *env = getenv("PIPEPLACE_RULES");
	if (env != NULL && env[0] != '\0') {
		if (access(env, R_OK) == 0) {
			snprintf(buf, size, "%s", env);
			return buf;
		}
		fprintf(stderr, "PIPEPLACE_RULES='%s': cannot read it: %s\n", env, strerror(errno));
		return NULL;
	}
	if (access(AC_RULES_INSTALLED, R_OK) == 0) {
		snprintf(buf, size, "%s", AC_RULES_INSTALLED);
		return buf;
	}
	/* A binary in a build tree (BUILD/apps/ahocorasick[/...]/prog): the
	 * shared data beside the source tree holding BUILD. */
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		for (int up = 0; up < 6; up++) {
			char *slash = strrchr(exe, '/');
			if (slash == NULL)
				break;
			*slash = '\0';
			char probe[4400];
			snprintf(probe, sizeof(probe), "%s/../shared/data/snort/community.rules",
				exe);
			if (up >= 2 && access(probe, R_OK) == 0 && realpath(probe, buf) != NULL &&
				strlen(buf) < size)
				return buf;
			snprintf(probe, sizeof(probe), "%s/meson.build", exe);
			if (up >= 2 && access(probe, R_OK) == 0)
				break; /* the source tree's root: no further */
		}
	}
	fprintf(stderr,
		"no rules file: give --rules FILE or set PIPEPLACE_RULES (looked in "
		"%s and beside a build tree)\n",
		AC_RULES_INSTALLED);
	return NULL;
}

int
ac_rule_opts_load(const struct ac_rule_opts *o, struct ac_ruleset *rs)
{
	const char *classes[AC_MAX_CLASSTYPES + 3];
	struct ac_filter f = { NULL, 0, o->enabled_only, o->keep_all };
	char err[512], name[512];
	char *list = NULL;
	char dflt[4096];
	const char *path = o->rules_path ? o->rules_path : ac_default_rules(dflt, sizeof(dflt));
	if (path == NULL)
		return -1;

	if (o->classtype_arg != NULL) {
		list = strdup(o->classtype_arg);
		if (list == NULL) {
			fprintf(stderr, "out of memory\n");
			return -1;
		}
		char *save = NULL;
		for (char *t = strtok_r(list, ",", &save);
			t != NULL && f.n_classtypes < AC_MAX_CLASSTYPES;
			t = strtok_r(NULL, ",", &save))
			classes[f.n_classtypes++] = t;
	}
	for (unsigned i = 0; o->dos && i < ac_n_dos_classtypes; i++)
		classes[f.n_classtypes++] = ac_dos_classtypes[i];
	if (f.n_classtypes > 0)
		f.classtypes = classes;
	int rc = ac_ruleset_load(path, &f, rs, err, sizeof(err));
	free(list);
	if (rc < 0) {
		fprintf(stderr, "%s%s\n", err,
			o->rules_path ? "" : " (the default; pick another with --rules FILE)");
		return -1;
	}
	if (o->list_skipped)
		ac_ruleset_print_skipped(rs, stderr);
	ac_ruleset_print_summary(rs, ac_rule_opts_set_name(o, name, sizeof(name)), stderr);
	return 0;
}

int
ac_rule_opts_build_verifier(const struct ac_rule_opts *o, const struct ac_ruleset *rs,
	struct ac_vars *vars, struct ac_verifier *v)
{
	char err[512];

	if (ac_vars_load(vars, o->vars_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (ac_verifier_build(v, rs, vars, o->stateless, !o->stateless && !o->no_reassembly, err,
		    sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		ac_vars_free(vars);
		return -1;
	}
	if (o->list_unsupported)
		ac_verifier_print_notes(v, stderr);
	ac_verifier_print_summary(v, stderr);
	return 0;
}
