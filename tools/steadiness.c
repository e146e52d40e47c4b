/* pp-steadiness: how steady one context's speed is, for `assign
 * characterize`.  Pinned to CPU, it runs a fixed integer kernel (four
 * independent xorshift chains: issue slots, no memory traffic) in WINDOWS
 * back-to-back windows of WINDOW_MS milliseconds each and prints, as one
 * JSON object, the rate of every window in millions of kernel steps per
 * second.  On a machine of its own the rates agree to a percent or so; on
 * a virtual machine whose host runs other tenants they move with the host,
 * and no measurement taken on that context can be steadier than they are.
 * Usage: pp-steadiness CPU WINDOWS WINDOW_MS */
#include <stdint.h>
#include <stdio.h>

#include "probe.h"

#define MAX_WINDOWS 10000
#define STEPS 4096 /* kernel steps between clock reads */

static int
usage(const char *why, const char *value)
{
	fprintf(stderr, "pp-steadiness: %s '%s'\nusage: pp-steadiness CPU WINDOWS WINDOW_MS\n", why,
		value);
	return 2;
}

static double rates[MAX_WINDOWS];

int
main(int argc, char **argv)
{
	long cpu, windows, ms;

	if (argc != 4)
		return usage("wrong number of arguments, got", argc > 1 ? argv[1] : "");
	if (probe_parse_long(argv[1], 0, CPU_SETSIZE - 1, &cpu) != 0)
		return usage("CPU is not a CPU number:", argv[1]);
	if (probe_parse_long(argv[2], 1, MAX_WINDOWS, &windows) != 0)
		return usage("WINDOWS must be 1 to 10000, got", argv[2]);
	if (probe_parse_long(argv[3], 1, 10000, &ms) != 0)
		return usage("WINDOW_MS must be 1 to 10000, got", argv[3]);
	if (probe_pin(cpu) != 0)
		return usage("cannot pin to CPU", argv[1]);

	uint64_t a = 88172645463325252ull, b = 1, c = 2, d = 3;
	double len = (double)ms / 1000.0, t = probe_now_s();
	for (long w = 0; w < windows; w++) {
		double t0 = t;
		uint64_t steps = 0;
		do {
			for (unsigned i = 0; i < STEPS; i++) {
				a ^= a << 13;
				b ^= b >> 7;
				c ^= c << 17;
				d ^= d >> 9;
				a += d;
				b += c;
			}
			steps += STEPS;
			t = probe_now_s();
		} while (t - t0 < len);
		rates[w] = (double)steps / (t - t0) / 1e6;
	}
	printf("{\"cpu\": %ld, \"window_s\": %.6g, \"unit\": \"million kernel steps per second\", "
	       "\"kind\": \"measured\", \"rates\": [",
		cpu, len);
	for (long w = 0; w < windows; w++)
		printf("%s%.3f", w ? ", " : "", rates[w]);
	printf("]}\n");
	return (a ^ b ^ c ^ d) == 42 ? 3 : 0; /* use the result so the work is not removed */
}
