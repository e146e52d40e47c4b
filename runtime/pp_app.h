/* The interface between the pipeplace runtime and an application.
 *
 * An app is the P stage of an R -> P -> T pipeline: the runtime owns ports,
 * rings, lcores, placement, counters and statistics; the app owns what it
 * does to a burst of packets.  An app's main() is just
 *
 *     int main(int argc, char **argv) { return pp_main(argc, argv, &my_app); }
 *
 * Verdicts: for each packet the P stage writes one byte, 0 = forward to T,
 * k > 0 = drop, counted under drop_reasons[k-1].  The runtime frees dropped
 * packets; the app never frees or keeps an mbuf.
 */
#ifndef PP_APP_H
#define PP_APP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct rte_mbuf;

#define PP_VERDICT_FORWARD 0u

/* What the placement gives an instance: the port queue R reads and the one
 * T writes.  An app with its own R and T (rx/tx below) drives them itself. */
struct pp_queue_pair {
	uint16_t rx_port, rx_queue;
	uint16_t tx_port, tx_queue;
};

/* rx() return value: the app's input has ended; R finishes (the run ends
 * when every instance has drained). */
#define PP_RX_END (-1)

/* Topology facts an app may size itself with (from hwloc, real or synthetic). */
struct pp_setup_info {
	size_t l1d_bytes;     /* L1 data cache of the first context used by a P task */
	size_t l2_bytes;      /* 0 when the level does not exist */
	size_t llc_bytes;     /* last-level cache (largest data cache) */
	unsigned n_instances; /* instances in the placement */
	unsigned socket_id;   /* NUMA socket of the first P task (for allocation) */
	const char *variant;  /* placement "variant" or --variant, NULL if none */
	const struct pp_queue_pair *queues; /* per instance, n_instances of them */
};

struct pp_app {
	const char *name;                /* must equal placement "app" */
	const char *const *variants;     /* NULL-terminated list, or NULL: any/none */
	const char *const *drop_reasons; /* names; index = verdict - 1 */
	unsigned n_drop_reasons;
	const char *usage; /* app options text for --help */
	size_t cfg_size;   /* runtime allocates and zeroes cfg */

	/* Called for every option after "--" the runtime does not know.
	 * argv[0] is the option, argv[1] (if argc > 1) its value.
	 * Returns the number of argv entries consumed (1 or 2), 0 for an
	 * unknown option, -1 for a bad value (after printing an error that
	 * names the option and the value).  May be NULL. */
	int (*parse_opt)(void *cfg, int argc, char **argv);

	/* Main lcore, after EAL init, at the start of every run of a placement
	 * (a process may run several placements one after another).
	 * 0 or -errno. */
	int (*setup)(void *cfg, const struct pp_setup_info *info, void **app_state);

	/* Once per P task (instance), before launch, on the main lcore.
	 * Allocate per-task state on the socket_id setup was given.
	 * 0 or -errno. */
	int (*task_init)(void *app_state, unsigned instance, void **task_state);

	/* FAST PATH: n <= PP_BURST packets; write verdict[i] for each.
	 * No allocation, locking, logging or printing here.  A packet's bytes
	 * may be rewritten in place, its length and segments not: the fused
	 * layout counts T's bytes from what R received (checked where
	 * assertions are on, as in the sanitizer builds). */
	void (*process)(void *task_state, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict);

	/* App figures, added to the JSON object `out`, which the runtime
	 * places under "app_stats" in the statistics ("app" is the app's name
	 * there).  Called after the tasks stopped and before teardown, or
	 * from the main lcore on SIGUSR1 while they run (read-only).
	 * May be NULL. */
	void (*stats)(void *app_state, void *const *task_states, unsigned n_tasks, json_t *out);

	/* End of a run: free everything setup and task_init made (n_tasks may
	 * be fewer than instances when a task_init failed).  0, or -1 when an
	 * output the app was asked to write (a log, a dump) is not complete
	 * where it was asked for, after printing what is missing or where it
	 * went instead: the run's status is then 1, its statistics still
	 * written (a script that reads the output must not take it as whole).
	 * May be NULL. */
	int (*teardown)(void *app_state, void **task_states, unsigned n_tasks);

	/* After the options are parsed, before EAL start: the DPDK memory (MiB)
	 * setup will allocate, added to the runtime's own when it sizes the
	 * --no-huge fallback and checks the free hugepages; or -1 for options
	 * that do not go together or a file named on the command line that
	 * cannot be used (after printing why): a usage error, exit status 2.
	 * May be NULL. */
	int64_t (*dpdk_mem_mb)(const void *cfg);

	/* Optional: an app that terminates connections rather than forwarding
	 * frames (a user-level TCP/IP stack in R, a file in T) supplies its own
	 * R and T.  Both are FAST PATH and get the state task_init made for
	 * the instance; the mbufs they pass are the app's messages (from its
	 * own pools), and T's bytes are their pkt_len as for frames.  Both or
	 * neither; the instance's port queues are the app's to use
	 * (pp_setup_info.queues).
	 *
	 * rx: called by R where it would read its rx queue, also when the R->P
	 * ring has no room (max 0: a stack must keep polling its port).  Puts
	 * up to max messages in pkts and returns how many, or PP_RX_END when
	 * the input has ended.  stopping: the run is ending (stop flag or
	 * --packets reached): take no new input, hand over what is held, and
	 * return PP_RX_END once nothing is left.
	 *
	 * tx: called by T where it would send; consumes (and frees) the first
	 * k of the n messages and returns k; the rest come again. */
	int (*rx)(void *task_state, struct rte_mbuf **pkts, uint16_t max, int stopping);
	uint16_t (*tx)(void *task_state, struct rte_mbuf **pkts, uint16_t n);
};

/* Burst size used by every stage; process() never sees more. */
#define PP_BURST 32

/* Parse EAL and runtime options, build the topology, validate the placement,
 * launch, run, print statistics.  Returns the process exit status. */
int pp_main(int argc, char **argv, const struct pp_app *app);

/* Option values for parse_opt (pp_parse_u64, pp_parse_seconds), checked the
 * way the runtime checks its own: runtime/base/pp_parse.h. */
#include "pp_parse.h"

#endif /* PP_APP_H */
