/* The compiled-in placement: the generator embeds the JSON byte for byte
 * (quotes, backslashes, non-ASCII, '?' included) and the runtime parses the
 * embedded copy to the same placement as the file. */
#include <stdio.h>
#include <string.h>

#include "pp_placement.h"
#include BUILTIN_HEADER /* generated from a fixture by gen_placement_header.py */

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s JSON_FILE\n", argv[0]);
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	static char file[1 << 16];
	size_t n = f != NULL ? fread(file, 1, sizeof(file), f) : 0;
	if (f != NULL)
		fclose(f);
	int bad = 0;
	if (!PP_HAVE_BUILTIN_PLACEMENT || n != sizeof(pp_builtin_placement) - 1 ||
		memcmp(file, pp_builtin_placement, n) != 0) {
		fprintf(stderr, "embedded bytes differ from %s (%zu vs %zu bytes)\n", argv[1], n,
			sizeof(pp_builtin_placement) - 1);
		bad = 1;
	}
	if (strstr(PP_BUILTIN_PLACEMENT_ORIGIN, "(compiled in)") == NULL) {
		fprintf(stderr, "origin \"%s\" does not say compiled in\n",
			PP_BUILTIN_PLACEMENT_ORIGIN);
		bad = 1;
	}
	struct pp_placement a, b;
	char err[512];
	if (pp_placement_parse(pp_builtin_placement, sizeof(pp_builtin_placement) - 1,
		    PP_BUILTIN_PLACEMENT_ORIGIN, &a, err, sizeof(err)) != 0 ||
		pp_placement_load_file(argv[1], &b, err, sizeof(err)) != 0) {
		fprintf(stderr, "parse failed: %s\n", err);
		return 1;
	}
	if (a.n_instances != b.n_instances || strcmp(a.app, b.app) != 0 ||
		strcmp(a.variant, b.variant) != 0 || a.allow_colocate != b.allow_colocate ||
		memcmp(a.instances, b.instances, a.n_instances * sizeof(*a.instances)) != 0) {
		fprintf(stderr, "embedded placement parses differently from the file\n");
		bad = 1;
	}
	pp_placement_free(&a);
	pp_placement_free(&b);
	printf("%s\n", bad ? "FAILED" : "compiled-in placement matches the file");
	return bad;
}
