/* Option values: see pp_parse.h. */
#include "pp_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
pp_parse_u64_value(const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int
pp_parse_double_value(const char *text, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int
pp_parse_bool_value(const char *text, bool *out)
{
	if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no")) {
		*out = false;
		return 0;
	}
	return -1;
}

int
pp_parse_u64(const char *opt, const char *val, uint64_t min, uint64_t max, uint64_t *out)
{
	if (pp_parse_u64_value(val, min, max, out) < 0) {
		fprintf(stderr, "%s '%s': expected an integer in %" PRIu64 "..%" PRIu64 "\n", opt,
			val, min, max);
		return -1;
	}
	return 0;
}

int
pp_parse_seconds(const char *opt, const char *val, double max, double *out)
{
	if (pp_parse_double_value(val, 0, max, out) < 0) {
		fprintf(stderr, "%s '%s': expected a number of seconds in 0..%g\n", opt, val, max);
		return -1;
	}
	return 0;
}
