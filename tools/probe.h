/* What the probes of tools/ share: the clock, pinning to one CPU, and
 * reading a whole-number argument. */
#ifndef PP_PROBE_H
#define PP_PROBE_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline double
probe_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The raw clock, not probe_now_s()'s: NTP slews CLOCK_MONOTONIC, and the
 * TSC rate is read off it. */
static inline double
probe_raw_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* TSC ticks per second over `seconds` of the raw monotonic clock, read
 * with the caller's rdtsc (rte_rdtsc: this header needs no DPDK; and
 * rte_get_tsc_hz() is 0 before rte_eal_init). */
static inline double
probe_tsc_hz(uint64_t (*rdtsc)(void), double seconds)
{
	double s0 = probe_raw_s(), s1;
	uint64_t c0 = rdtsc();

	while ((s1 = probe_raw_s()) - s0 < seconds)
		;
	return (double)(rdtsc() - c0) / (s1 - s0);
}

/* 0, or -1 when s is not a whole number in [lo, hi]. */
static inline int
probe_parse_long(const char *s, long lo, long hi, long *v)
{
	char *end;
	errno = 0;
	*v = strtol(s, &end, 10);
	return errno == 0 && *end == '\0' && end != s && *v >= lo && *v <= hi ? 0 : -1;
}

/* Pin the calling process to CPU: 0, or -1. */
static inline int
probe_pin(long cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

#endif
