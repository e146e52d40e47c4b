/* pp-steadiness: how steady one context's speed is, for `assign
 * characterize`.  Pinned to CPU, it runs a fixed kernel in WINDOWS
 * back-to-back windows of WINDOW_MS milliseconds each and prints, as one
 * JSON object, the rate of every window.  KERNEL:
 *   compute  (default) four independent xorshift chains: issue slots, no
 *            memory traffic; millions of kernel steps per second
 *   memory   one chain of dependent loads, a random cycle over the cache
 *            lines of a 64 MiB buffer (larger than the last-level cache):
 *            the latency of the memory the host's tenants share; millions
 *            of loads per second
 * On a machine of its own the rates agree to a percent or so; on a virtual
 * machine whose host runs other tenants they move with the host, and no
 * measurement taken on that context can be steadier than they are.  The
 * compute kernel does not see the host's memory side, which moves a
 * memory-bound workload on its own.
 * Usage: pp-steadiness CPU WINDOWS WINDOW_MS [compute|memory] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define MAX_WINDOWS 10000
#define STEPS 4096 /* kernel steps between clock reads */
#define MEM_BYTES (64u << 20)
#define LINE 64

static int
usage(const char *why, const char *value)
{
	fprintf(stderr,
		"pp-steadiness: %s '%s'\nusage: pp-steadiness CPU WINDOWS WINDOW_MS "
		"[compute|memory]\n",
		why, value);
	return 2;
}

static double rates[MAX_WINDOWS];

/* The cache lines of buf as one random cycle (Sattolo's algorithm): each
 * line's first word holds the index of the next, so every load waits for
 * the one before it and no prefetcher can guess the next line. */
static size_t *
chase_buffer(void)
{
	size_t lines = MEM_BYTES / LINE, stride = LINE / sizeof(size_t);
	size_t *buf = malloc(MEM_BYTES), *order = malloc(lines * sizeof(size_t));
	if (buf == NULL || order == NULL)
		return NULL;
	for (size_t i = 0; i < lines; i++)
		order[i] = i;
	uint64_t x = 88172645463325252ull;
	for (size_t i = lines - 1; i > 0; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t j = (size_t)(x % i), tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	for (size_t i = 0; i < lines; i++)
		buf[order[i] * stride] = order[(i + 1) % lines] * stride;
	free(order);
	return buf;
}

int
main(int argc, char **argv)
{
	long cpu, windows, ms;

	if (argc != 4 && argc != 5)
		return usage("wrong number of arguments, got", argc > 1 ? argv[1] : "");
	if (probe_parse_long(argv[1], 0, CPU_SETSIZE - 1, &cpu) != 0)
		return usage("CPU is not a CPU number:", argv[1]);
	if (probe_parse_long(argv[2], 1, MAX_WINDOWS, &windows) != 0)
		return usage("WINDOWS must be 1 to 10000, got", argv[2]);
	if (probe_parse_long(argv[3], 1, 10000, &ms) != 0)
		return usage("WINDOW_MS must be 1 to 10000, got", argv[3]);
	const char *kernel = argc == 5 ? argv[4] : "compute";
	int memory = strcmp(kernel, "memory") == 0;
	if (!memory && strcmp(kernel, "compute") != 0)
		return usage("KERNEL must be compute or memory, got", kernel);
	if (probe_pin(cpu) != 0)
		return usage("cannot pin to CPU", argv[1]);
	size_t *buf = memory ? chase_buffer() : NULL;
	if (memory && buf == NULL) {
		fprintf(stderr, "pp-steadiness: cannot allocate the %u MiB buffer\n",
			MEM_BYTES >> 20);
		return 1;
	}

	uint64_t a = 88172645463325252ull, b = 1, c = 2, d = 3;
	size_t at = 0;
	double len = (double)ms / 1000.0, t = probe_now_s();
	for (long w = 0; w < windows; w++) {
		double t0 = t;
		uint64_t steps = 0;
		do {
			if (memory) {
				for (unsigned i = 0; i < STEPS; i++)
					at = buf[at];
			} else {
				for (unsigned i = 0; i < STEPS; i++) {
					a ^= a << 13;
					b ^= b >> 7;
					c ^= c << 17;
					d ^= d >> 9;
					a += d;
					b += c;
				}
			}
			steps += STEPS;
			t = probe_now_s();
		} while (t - t0 < len);
		rates[w] = (double)steps / (t - t0) / 1e6;
	}
	printf("{\"cpu\": %ld, \"kernel\": \"%s\", \"window_s\": %.6g, \"unit\": \"%s\", "
	       "\"kind\": \"measured\", \"rates\": [",
		cpu, kernel, len,
		memory ? "million dependent loads per second" : "million kernel steps per second");
	for (long w = 0; w < windows; w++)
		printf("%s%.3f", w ? ", " : "", rates[w]);
	printf("]}\n");
	free(buf);
	/* use the results so the work is not removed */
	return (a ^ b ^ c ^ d) == 42 || at == (size_t)-1 ? 3 : 0;
}
