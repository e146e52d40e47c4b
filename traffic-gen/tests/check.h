/* Minimal checks for the C unit tests: report every failure, exit non-zero. */
#ifndef TG_CHECK_H
#define TG_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			check_failures++;                                                        \
		}                                                                                \
	} while (0)

#define CHECK_DONE() \
	(check_failures ? (fprintf(stderr, "%d check(s) failed\n", check_failures), 1) : 0)

#endif
