/* Matches an engine reports, collected in a growing list and put in one
 * order, so that two engines' (keyword, end offset) lists compare with
 * memcmp.  Shared by the engine agreement tests. */
#ifndef AC_TEST_MATCH_LIST_H
#define AC_TEST_MATCH_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct match {
	uint32_t kw, end;
};

struct match_list {
	struct match *m;
	size_t n, cap;
};

static inline void
collect(void *ctx, uint32_t kw, uint32_t end)
{
	struct match_list *l = ctx;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		l->m = realloc(l->m, l->cap * sizeof(*l->m));
		if (l->m == NULL)
			abort();
	}
	l->m[l->n++] = (struct match){ kw, end };
}

static inline int
cmp_match(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	if (x->kw != y->kw)
		return x->kw < y->kw ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* qsort's pointer must not be NULL even for 0 elements (C11 7.22.5). */
static inline void
sort_matches(struct match_list *l)
{
	if (l->n)
		qsort(l->m, l->n, sizeof(*l->m), cmp_match);
}

#endif /* AC_TEST_MATCH_LIST_H */
