/* pp-steadiness: how steady one context's speed is, for `assign
 * characterize`.  Pinned to CPU, it runs a fixed kernel in WINDOWS
 * back-to-back windows of WINDOW_MS milliseconds each and prints, as one
 * JSON object, the rate of every window.  KERNEL:
 *   compute  (default) four independent xorshift chains: issue slots, no
 *            memory traffic; millions of kernel steps per second
 *   memory   one chain of dependent loads, a random cycle over the cache
 *            lines of a 64 MiB buffer (larger than the last-level cache):
 *            the latency of the memory the host's tenants share; millions
 *            of loads per second.  With MIB, a buffer of MIB MiB instead:
 *            a size the last-level cache holds reads as its latency, one it
 *            does not as the memory's, so a few sizes show how much of that
 *            cache the host leaves this machine now.  The buffer asks for
 *            transparent huge pages, so that page walks do not count
 *   handoff  one cache line passed back and forth between CPU and
 *            PEER_CPU (a second thread pinned there): a round trip needs
 *            both contexts running at once, as a pipeline split over them
 *            does (R hands P a burst through a ring); millions of round
 *            trips per second.  A host that runs one of the two virtual
 *            CPUs while the other waits stalls it, which neither kernel
 *            above sees.
 * On a machine of its own the rates agree to a percent or so; on a virtual
 * machine whose host runs other tenants they move with the host, and no
 * measurement taken on that context can be steadier than they are.  The
 * compute kernel does not see the host's memory side, which moves a
 * memory-bound workload on its own.
 * Usage: pp-steadiness CPU WINDOWS WINDOW_MS [compute|memory [MIB]|handoff PEER_CPU] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "probe.h"

#define MAX_WINDOWS 10000
#define STEPS 4096 /* kernel steps between clock reads */
#define MEM_MIB 64 /* the memory kernel's buffer without MIB */
#define MAX_MIB 4096
#define LINE 64

static int
usage(const char *why, const char *value)
{
	fprintf(stderr,
		"pp-steadiness: %s '%s'\nusage: pp-steadiness CPU WINDOWS WINDOW_MS "
		"[compute|memory [MIB]|handoff PEER_CPU]\n",
		why, value);
	return 2;
}

static double rates[MAX_WINDOWS];

/* handoff: the ball (odd: the peer's turn, even: ours) on a line of its
 * own, and the stop flag on another, so the peer's spin reads only them. */
static _Alignas(64) uint64_t ball;
static _Alignas(64) uint32_t stop, ready; /* ready: 1 pinned, 2 could not pin */
#define HANDOFF_STEPS 256                 /* round trips between clock reads */

static void *
peer(void *arg)
{
	if (probe_pin(*(const long *)arg) != 0) {
		__atomic_store_n(&ready, 2, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		uint64_t v = __atomic_load_n(&ball, __ATOMIC_ACQUIRE);
		if (v & 1)
			__atomic_store_n(&ball, v + 1, __ATOMIC_RELEASE);
		else if (__atomic_load_n(&stop, __ATOMIC_RELAXED))
			return NULL;
	}
}

/* n round trips: hand the ball over, wait until it comes back. */
static void
handoff(unsigned n)
{
	uint64_t v = __atomic_load_n(&ball, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < n; i++) {
		__atomic_store_n(&ball, v + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&ball, __ATOMIC_ACQUIRE) != v + 2)
			;
		v += 2;
	}
}

/* The cache lines of buf as one random cycle (Sattolo's algorithm): each
 * line's first word holds the index of the next, so every load waits for
 * the one before it and no prefetcher can guess the next line. */
static size_t *
chase_buffer(size_t bytes)
{
	size_t lines = bytes / LINE, stride = LINE / sizeof(size_t);
	size_t huge = 2u << 20,
	       room = (bytes + huge - 1) / huge * huge; /* C11: a multiple of the alignment */
	size_t *buf = aligned_alloc(huge, room), *order = malloc(lines * sizeof(size_t));
	if (buf == NULL || order == NULL) {
		free(buf);
		free(order);
		return NULL;
	}
	(void)madvise(buf, room, MADV_HUGEPAGE); /* a hint: 4 KiB pages where refused */
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

	if (argc < 4 || argc > 6)
		return usage("wrong number of arguments, got", argc > 1 ? argv[1] : "");
	if (probe_parse_long(argv[1], 0, CPU_SETSIZE - 1, &cpu) != 0)
		return usage("CPU is not a CPU number:", argv[1]);
	if (probe_parse_long(argv[2], 1, MAX_WINDOWS, &windows) != 0)
		return usage("WINDOWS must be 1 to 10000, got", argv[2]);
	if (probe_parse_long(argv[3], 1, 10000, &ms) != 0)
		return usage("WINDOW_MS must be 1 to 10000, got", argv[3]);
	const char *kernel = argc >= 5 ? argv[4] : "compute";
	int memory = strcmp(kernel, "memory") == 0, pass = strcmp(kernel, "handoff") == 0;
	if (!memory && !pass && strcmp(kernel, "compute") != 0)
		return usage("KERNEL must be compute, memory or handoff, got", kernel);
	long peer_cpu = -1, mib = MEM_MIB;
	if (pass && argc != 6)
		return usage("handoff needs PEER_CPU after it, got", kernel);
	if (argc == 6 && !pass && !memory)
		return usage("only handoff takes a PEER_CPU and memory a MIB, got", argv[5]);
	if (pass &&
		(probe_parse_long(argv[5], 0, CPU_SETSIZE - 1, &peer_cpu) != 0 || peer_cpu == cpu))
		return usage("PEER_CPU must be a CPU number other than CPU, got", argv[5]);
	if (memory && argc == 6 && probe_parse_long(argv[5], 1, MAX_MIB, &mib) != 0)
		return usage("MIB must be 1 to 4096, got", argv[5]);
	if (probe_pin(cpu) != 0)
		return usage("cannot pin to CPU", argv[1]);
	pthread_t peer_thread;
	if (pass && pthread_create(&peer_thread, NULL, peer, &peer_cpu) != 0) {
		fprintf(stderr, "pp-steadiness: cannot start the handoff thread\n");
		return 1;
	}
	uint32_t peer_state = 0;
	while (pass && (peer_state = __atomic_load_n(&ready, __ATOMIC_ACQUIRE)) == 0)
		;
	if (peer_state == 2) {
		pthread_join(peer_thread, NULL);
		return usage("cannot pin to PEER_CPU", argv[5]);
	}
	size_t *buf = memory ? chase_buffer((size_t)mib << 20) : NULL;
	if (memory && buf == NULL) {
		fprintf(stderr, "pp-steadiness: cannot allocate the %ld MiB buffer\n", mib);
		return 1;
	}

	uint64_t a = 88172645463325252ull, b = 1, c = 2, d = 3;
	size_t at = 0;
	double len = (double)ms / 1000.0, t = probe_now_s();
	for (long w = 0; w < windows; w++) {
		double t0 = t;
		uint64_t steps = 0;
		do {
			unsigned done = STEPS;
			if (pass) {
				handoff(HANDOFF_STEPS);
				done = HANDOFF_STEPS;
			} else if (memory) {
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
			steps += done;
			t = probe_now_s();
		} while (t - t0 < len);
		rates[w] = (double)steps / (t - t0) / 1e6;
	}
	if (pass) {
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		pthread_join(peer_thread, NULL);
	}
	printf("{\"cpu\": %ld, \"kernel\": \"%s\", \"window_s\": %.6g, \"unit\": \"%s\", ", cpu,
		kernel, len,
		memory         ? "million dependent loads per second"
			: pass ? "million round trips per second"
			       : "million kernel steps per second");
	if (pass)
		printf("\"peer_cpu\": %ld, ", peer_cpu);
	if (memory)
		printf("\"buffer_mib\": %ld, ", mib);
	printf("\"kind\": \"measured\", \"rates\": [");
	/* significant digits: a window whose peer was starved is small, not 0 */
	for (long w = 0; w < windows; w++)
		printf("%s%.6g", w ? ", " : "", rates[w]);
	printf("]}\n");
	free(buf);
	/* use the results so the work is not removed */
	return (a ^ b ^ c ^ d) == 42 || at == (size_t)-1 ? 3 : 0;
}
