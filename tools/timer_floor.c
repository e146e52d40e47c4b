/* pp-timer-floor: the floor of every cycle figure `assign characterize`
 * prints, measured on this machine and printed as one JSON object:
 *   tsc_hz             TSC ticks per second (against CLOCK_MONOTONIC_RAW)
 *   rdtsc_cycles       cost of one rte_rdtsc() (median of back-to-back pairs)
 *   loop_cycles        cost of one iteration of an empty counted loop
 *   mark_cycles        cost of one profile mark (a TSC read and a counter add)
 * Usage: pp-timer-floor [CPU]   (pins itself to CPU when given) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rte_cycles.h>

#include "probe.h"

#define SAMPLES 20001

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t
median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static uint64_t samples[SAMPLES];

int
main(int argc, char **argv)
{
	if (argc > 2) {
		fprintf(stderr, "usage: pp-timer-floor [CPU]\n");
		return 2;
	}
	if (argc == 2) {
		long cpu;
		if (probe_parse_long(argv[1], 0, CPU_SETSIZE - 1, &cpu) != 0) {
			fprintf(stderr, "pp-timer-floor: CPU '%s' is not a CPU number\n", argv[1]);
			return 2;
		}
		if (probe_pin(cpu) != 0) {
			fprintf(stderr, "pp-timer-floor: cannot pin to CPU %ld\n", cpu);
			return 2;
		}
	}
	double hz = probe_tsc_hz(rte_rdtsc, 0.2); /* ticks over 200 ms of the raw clock */

	for (size_t i = 0; i < SAMPLES; i++) {
		uint64_t a = rte_rdtsc();
		uint64_t b = rte_rdtsc();
		samples[i] = b - a;
	}
	uint64_t rdtsc = median(samples, SAMPLES);

	/* Empty loop: 1000 iterations the compiler may not remove. */
	for (size_t i = 0; i < SAMPLES; i++) {
		uint64_t a = rte_rdtsc();
		for (volatile unsigned k = 0; k < 1000; k++)
			;
		samples[i] = rte_rdtsc() - a;
	}
	double loop = (double)(median(samples, SAMPLES) - rdtsc) / 1000.0;

	/* A profile mark: read the TSC, add to a counter, keep the time. */
	volatile uint64_t counter = 0;
	for (size_t i = 0; i < SAMPLES; i++) {
		uint64_t a = rte_rdtsc(), t = a;
		for (unsigned k = 0; k < 100; k++) {
			uint64_t now = rte_rdtsc();
			counter = counter + (now - t);
			t = now;
		}
		samples[i] = rte_rdtsc() - a;
	}
	double mark = (double)median(samples, SAMPLES) / 100.0;

	printf("{\"tsc_hz\": %.0f, \"rdtsc_cycles\": %llu, \"loop_cycles\": %.3f, "
	       "\"mark_cycles\": %.3f, \"kind\": \"measured\"}\n",
		hz, (unsigned long long)rdtsc, loop, mark);
	return 0;
}
