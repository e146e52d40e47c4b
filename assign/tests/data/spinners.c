/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A small multithreaded program that assign did not write, placed by a
 * `launch = "threads"` workload file in assign/tests/test_program_threads.py
 * (which builds it): N worker threads named spin-0 .. spin-N-1 (and one
 * named helper that idles), each counting units of work; the main thread
 * prints "ops <total>" every 5 ms.  Two workers on one CPU share it, so the
 * total depends on the placement.
 *
 *   spinners N [--die-after S | --die-pinned S] [--die-count FILE K]
 *              [--exit-after S] [--lifetime S]
 *
 * --die-after S: abort() after S seconds (a program that dies mid-run);
 * --die-pinned S: abort() S seconds after worker spin-0 was first moved to
 *   other CPUs (a program that dies inside the window that follows its
 *   placement, however long its start took);
 * --die-count FILE K: only in its first K starts (FILE counts them);
 * --exit-after S: exit(3) after S seconds (one that ends before its window);
 * --lifetime S: end by itself after S seconds (default 300), so that it
 * never outlives a test that lost track of it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 16

struct worker {
	_Alignas(64) _Atomic uint64_t ops;
	unsigned int index;
	volatile uint64_t sink; /* keeps the work from being optimised away */
};

static struct worker workers[MAX_WORKERS];
static atomic_int stop;

static void
on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	uint64_t x = w->index + 1;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		w->sink = x;
		atomic_fetch_add_explicit(&w->ops, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *
idle(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		usleep(20000);
	return NULL;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	double die_after = -1, die_pinned = -1, exit_after = -1, lifetime = 300;
	double pinned_at = -1;
	cpu_set_t first_cpus;
	const char *count_file = NULL;
	int die_starts = 0;
	pthread_t threads[MAX_WORKERS + 1];
	char name[16];
	int n;

	if (argc < 2 || (n = atoi(argv[1])) < 1 || n > MAX_WORKERS) {
		fprintf(stderr,
			"usage: %s N (1..%d) [--die-after S] "
			"[--exit-after S] [--lifetime S]\n",
			argv[0], MAX_WORKERS);
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--die-after") == 0)
			die_after = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--die-pinned") == 0)
			die_pinned = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--exit-after") == 0)
			exit_after = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--lifetime") == 0)
			lifetime = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--die-count") == 0 && i + 2 < argc) {
			count_file = argv[i + 1];
			die_starts = atoi(argv[i + 2]);
			i++;
		}
	}
	if (count_file != NULL) {
		FILE *f = fopen(count_file, "r");
		int starts = 0;

		if (f != NULL) {
			if (fscanf(f, "%d", &starts) != 1)
				starts = 0;
			fclose(f);
		}
		f = fopen(count_file, "w");
		if (f != NULL) {
			fprintf(f, "%d\n", starts + 1);
			fclose(f);
		}
		if (starts + 1 > die_starts)
			die_after = die_pinned = -1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* the helper first: once a worker has its name, every thread has */
	pthread_create(&threads[n], NULL, idle, NULL);
	pthread_setname_np(threads[n], "helper");
	for (int i = 0; i < n; i++) {
		workers[i].index = i;
		pthread_create(&threads[i], NULL, work, &workers[i]);
		snprintf(name, sizeof(name), "spin-%d", i);
		pthread_setname_np(threads[i], name);
	}

	pthread_getaffinity_np(threads[0], sizeof(first_cpus), &first_cpus);
	double start = now();
	while (!atomic_load(&stop)) {
		uint64_t total = 0;
		double t = now() - start;

		for (int i = 0; i < n; i++)
			total += atomic_load_explicit(&workers[i].ops, memory_order_relaxed);
		printf("ops %llu\n", (unsigned long long)total);
		fflush(stdout);
		if (die_after >= 0 && t > die_after)
			abort();
		if (die_pinned >= 0 && pinned_at < 0) {
			cpu_set_t cpus;

			pthread_getaffinity_np(threads[0], sizeof(cpus), &cpus);
			if (!CPU_EQUAL(&cpus, &first_cpus))
				pinned_at = t;
		}
		if (die_pinned >= 0 && pinned_at >= 0 && t > pinned_at + die_pinned)
			abort();
		if (exit_after >= 0 && t > exit_after)
			exit(3);
		if (t > lifetime)
			break;
		usleep(5000);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i <= n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
