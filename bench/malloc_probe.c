/* LD_PRELOAD probe for bench/netdedup.py: counts the malloc, calloc,
 * realloc and free calls of every thread but the main one (the lcores: the
 * main thread's set-up and teardown are left out) and the TSC cycles spent
 * in them, and writes the totals to $PP_MALLOC_PROBE_OUT at exit.  netdedup's own fast
 * path allocates nothing: what this counts during a run is Debian's lwIP,
 * built with malloc-backed pools (MEM_LIBC_MALLOC, MEMP_MEM_MALLOC).
 * Built by the benchmark (cc -shared -fPIC), never installed. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static uint64_t calls, frees, cycles;
static __thread int counted = -1; /* this thread: not the main one */

static int
is_counted(void)
{
	if (counted < 0)
		counted = syscall(SYS_gettid) != getpid();
	return counted;
}

#define TIMED(expr, counter)                                                    \
	do {                                                                    \
		if (!is_counted()) {                                            \
			expr;                                                   \
			break;                                                  \
		}                                                               \
		uint64_t t0_ = __rdtsc();                                       \
		expr;                                                           \
		__atomic_add_fetch(&cycles, __rdtsc() - t0_, __ATOMIC_RELAXED); \
		__atomic_add_fetch(&(counter), 1, __ATOMIC_RELAXED);            \
	} while (0)

void *
malloc(size_t n)
{
	void *p;
	TIMED(p = __libc_malloc(n), calls);
	return p;
}

void *
calloc(size_t a, size_t b)
{
	void *p;
	TIMED(p = __libc_calloc(a, b), calls);
	return p;
}

void *
realloc(void *q, size_t n)
{
	void *p;
	TIMED(p = __libc_realloc(q, n), calls);
	return p;
}

void
free(void *p)
{
	TIMED(__libc_free(p), frees);
}

static void __attribute__((destructor)) report(void)
{
	const char *path = getenv("PP_MALLOC_PROBE_OUT");
	FILE *f = path != NULL ? fopen(path, "w") : NULL;
	if (f == NULL)
		return;
	fprintf(f, "{\"allocs\": %lu, \"frees\": %lu, \"cycles\": %lu}\n", (unsigned long)calls,
		(unsigned long)frees, (unsigned long)cycles);
	fclose(f);
}
