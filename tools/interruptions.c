/* pp-interruptions: how often, and for how long, one context stops running
 * a thread that never sleeps, as a polling DPDK lcore never does: the floor
 * under any timing a thread on that context keeps (pp-tgen's timed replay,
 * bench/tgen-timing.py).  Pinned to CPU, it reads the TSC back to back for
 * SECONDS and keeps every gap between two reads of at least MIN_NS
 * nanoseconds (an interrupt, the host running another virtual CPU, the
 * scheduler giving the context to another task).  Prints one JSON object:
 *   interruptions, per_s      the gaps of at least MIN_NS, and their rate
 *   stalled_fraction          their share of the time
 *   gap_ns                    their p50, p99 and max
 *   lateness_ns               p99 and p99.9 of how late a thread that wants
 *                             to act at a random instant acts (0 unless the
 *                             instant falls in a gap: the rest of that gap)
 * Usage: pp-interruptions CPU SECONDS [MIN_NS]   (MIN_NS default 1000) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>

#include "probe.h"

#define MAX_GAPS (1u << 22)

static int
usage(const char *why, const char *value)
{
	fprintf(stderr,
		"pp-interruptions: %s '%s'\nusage: pp-interruptions CPU SECONDS "
		"[MIN_NS]\n",
		why, value);
	return 2;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The x at which the time spent more than x into a gap, sum(max(0, g - x)),
 * is share * total: the (1 - share) quantile of a random instant's
 * lateness.  g sorted ascending. */
static double
lateness(const uint64_t *g, size_t n, double total, double share)
{
	double want = share * total, tail = 0;

	/* walk down from the longest gap: between g[i-1] and g[i] the tail
	 * grows by (n - i) per unit of x */
	for (size_t i = n; i > 0; i--) {
		double lo = i > 1 ? (double)g[i - 2] : 0, hi = (double)g[i - 1];
		double k = (double)(n - i + 1), span = hi - lo;
		if (tail + k * span >= want)
			return hi - (want - tail) / k;
		tail += k * span;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	long cpu, seconds, min_ns = 1000;

	if (argc < 3 || argc > 4)
		return usage("wrong number of arguments, got", argc > 1 ? argv[1] : "");
	if (probe_parse_long(argv[1], 0, CPU_SETSIZE - 1, &cpu) != 0)
		return usage("CPU is not a CPU number:", argv[1]);
	if (probe_parse_long(argv[2], 1, 3600, &seconds) != 0)
		return usage("SECONDS must be 1 to 3600, got", argv[2]);
	if (argc == 4 && probe_parse_long(argv[3], 50, 1000000000, &min_ns) != 0)
		return usage("MIN_NS must be 50 to 10^9, got", argv[3]);
	if (probe_pin(cpu) != 0)
		return usage("cannot pin to CPU", argv[1]);
	uint64_t *gaps = malloc(MAX_GAPS * sizeof(*gaps));
	if (gaps == NULL) {
		fprintf(stderr, "pp-interruptions: no memory for %u gaps\n", MAX_GAPS);
		return 1;
	}

	double hz = probe_tsc_hz(rte_rdtsc, 0.2);
	uint64_t min = (uint64_t)((double)min_ns * hz / 1e9), n = 0, lost = 0;
	uint64_t start = rte_rdtsc(), end = start + (uint64_t)(seconds * hz), prev = start, now;
	do {
		now = rte_rdtsc();
		if (now - prev >= min) {
			if (n < MAX_GAPS)
				gaps[n] = now - prev;
			else
				lost++;
			n++;
		}
		prev = now;
	} while (now < end);

	size_t kept = n < MAX_GAPS ? n : MAX_GAPS;
	double total = (double)(now - start), stalled = 0, ns = 1e9 / hz;
	for (size_t i = 0; i < kept; i++)
		stalled += (double)gaps[i];
	qsort(gaps, kept, sizeof(*gaps), cmp_u64);
	printf("{\"cpu\": %ld, \"seconds\": %.3f, \"min_ns\": %ld, \"kind\": \"measured\", "
	       "\"interruptions\": %llu, \"per_s\": %.1f, \"stalled_fraction\": %.6g, ",
		cpu, total / hz, min_ns, (unsigned long long)n, (double)n * hz / total,
		stalled / total);
	printf("\"gap_ns\": {\"p50\": %.0f, \"p99\": %.0f, \"max\": %.0f}, ",
		kept ? (double)gaps[kept / 2] * ns : 0,
		kept ? (double)gaps[kept * 99 / 100] * ns : 0,
		kept ? (double)gaps[kept - 1] * ns : 0);
	printf("\"lateness_ns\": {\"p99\": %.0f, \"p99_9\": %.0f}, \"gaps_not_kept\": %llu}\n",
		lateness(gaps, kept, total, 0.01) * ns, lateness(gaps, kept, total, 0.001) * ns,
		(unsigned long long)lost);
	free(gaps);
	return 0;
}
