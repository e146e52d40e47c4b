/* pp-stressor: a co-runner for `assign characterize`, pinned to one CPU,
 * running until SECONDS have passed (or it is killed).
 *   mem      streams reads and writes over a 64 MiB buffer (larger than
 *            the last-level cache): memory-bandwidth and cache pressure
 *   compute  integer and floating-point arithmetic in registers: issue
 *            slots and execution units, almost no memory traffic
 * Usage: pp-stressor mem|compute CPU SECONDS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define MEM_BYTES (64u << 20)

static int
usage(const char *why, const char *value)
{
	fprintf(stderr, "pp-stressor: %s '%s'\nusage: pp-stressor mem|compute CPU SECONDS\n", why,
		value);
	return 2;
}

int
main(int argc, char **argv)
{
	if (argc != 4)
		return usage("wrong number of arguments, got", argc > 1 ? argv[1] : "");
	int mem = strcmp(argv[1], "mem") == 0;
	if (!mem && strcmp(argv[1], "compute") != 0)
		return usage("kind must be mem or compute, got", argv[1]);
	long cpu;
	if (probe_parse_long(argv[2], 0, CPU_SETSIZE - 1, &cpu) != 0)
		return usage("CPU is not a CPU number:", argv[2]);
	char *end;
	double seconds = strtod(argv[3], &end);
	if (*end != '\0' || !(seconds > 0))
		return usage("SECONDS must be a number > 0, got", argv[3]);
	if (probe_pin(cpu) != 0)
		return usage("cannot pin to CPU", argv[2]);

	double stop = probe_now_s() + seconds;
	uint64_t sink = 0;
	if (mem) {
		uint64_t *buf = malloc(MEM_BYTES);
		if (buf == NULL) {
			fprintf(stderr, "pp-stressor: cannot allocate %u bytes\n", MEM_BYTES);
			return 1;
		}
		size_t n = MEM_BYTES / sizeof(uint64_t);
		memset(buf, 1, MEM_BYTES);
		while (probe_now_s() < stop)
			for (size_t i = 0; i < n; i += 8) { /* one cache line per step */
				sink += buf[i];
				buf[i] = sink;
			}
		free(buf);
	} else {
		double x = 1.0, y = 1.000001;
		uint64_t k = 88172645463325252ull;
		while (probe_now_s() < stop)
			for (unsigned i = 0; i < 1000000; i++) {
				k ^= k << 13;
				k ^= k >> 7;
				k ^= k << 17;
				x = x * y + 1e-9;
			}
		sink = k + (uint64_t)x;
	}
	return sink == 42 ? 3 : 0; /* use the result so the work is not removed */
}
