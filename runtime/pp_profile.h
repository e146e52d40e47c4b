/* Per-category TSC accounting of the R, P and T poll loops, for
 * `assign characterize`.  Built only with `meson setup -Dprofile=true`
 * (which defines PP_PROFILE); otherwise every hook below expands to
 * nothing and struct pp_task_counters has no profile field, so the fast
 * path of the default build is the same code as without this file.
 *
 * A poll starts a clock (PP_PROF_START) and charges the cycles since the
 * previous mark to one category at each mark (PP_PROF_MARK).  The
 * categories of a task add up to the cycles of all its polls; what is
 * left out is the lcore loop between polls (a few cycles per poll, the
 * floor `assign characterize` reports), which the task's `cycles` counter
 * includes (each poll counts from the previous poll's end, pp_task.c). */
#ifndef PP_PROFILE_H
#define PP_PROFILE_H

#include <stdint.h>

enum pp_prof_cat {
	PP_PROF_EMPTY_POLL,   /* a poll that found nothing to receive or dequeue */
	PP_PROF_RECEIVE,      /* R: rte_eth_rx_burst and chain checks */
	PP_PROF_RING,         /* ring enqueue and dequeue */
	PP_PROF_PROCESS,      /* P: the app's process() and the verdict split */
	PP_PROF_TRANSMIT,     /* T: rte_eth_tx_burst */
	PP_PROF_BACKPRESSURE, /* no room downstream (R, P) or the port took nothing (T) */
	PP_PROF_N
};

#ifdef PP_PROFILE
#include <rte_cycles.h>

/* Name of a category in the statistics JSON ("profile" of each task). */
static inline const char *
pp_prof_name(int cat)
{
	static const char *const names[PP_PROF_N] = { "empty_poll", "receive", "ring", "process",
		"transmit", "backpressure_wait" };
	return names[cat];
}

#define PP_PROFILE_COUNTERS uint64_t prof[PP_PROF_N];
#define PP_PROF_START(var) uint64_t var = rte_rdtsc()
#define PP_PROF_MARK(ctr, var, cat)                                                                \
	do {                                                                                       \
		uint64_t pp_prof_now_ = rte_rdtsc();                                               \
		__atomic_store_n(&(ctr)->prof[(cat)], (ctr)->prof[(cat)] + (pp_prof_now_ - (var)), \
			__ATOMIC_RELAXED);                                                         \
		(var) = pp_prof_now_;                                                              \
	} while (0)
#else
#define PP_PROFILE_COUNTERS
#define PP_PROF_START(var)
#define PP_PROF_MARK(ctr, var, cat) \
	do {                        \
	} while (0)
#endif

#endif
