/* Minimal assertion helpers for the C unit tests: a failed CHECK prints
 * where and why and makes the test exit non-zero, without stopping it. */
#ifndef AC_CHECK_H
#define AC_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond, ...)                                                                         \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			check_failures++;                                                        \
			fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                            \
			fputc('\n', stderr);                                                     \
		}                                                                                \
	} while (0)

static inline int
check_done(const char *name)
{
	if (check_failures)
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
	else
		printf("%s: all checks passed\n", name);
	return check_failures ? 1 : 0;
}

#endif /* AC_CHECK_H */
