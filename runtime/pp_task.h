/* The three generic stages and their counters.  A task's counters are
 * written by that task only (one cache line group each, no false sharing);
 * the main lcore reads them.  With the stop flag they are the only state
 * shared between lcores. */
#ifndef PP_TASK_H
#define PP_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "pp_app.h"
#include "pp_placement.h"
#include "pp_profile.h"

#define PP_MAX_DROP_REASONS 30 /* app reasons + the runtime's own */

struct pp_task_counters {
	uint64_t packets;                      /* R: received, P: processed, T: transmitted */
	uint64_t bytes;                        /* T: bytes transmitted */
	uint64_t bursts;                       /* polls that moved at least one packet */
	uint64_t empty_polls;                  /* polls that moved nothing */
	uint64_t cycles;                       /* TSC cycles of the polls that moved packets,
	                                        * each from the lcore's previous poll's end */
	uint64_t chains_repaired;              /* R: mbufs whose segments held less than pkt_len */
	uint64_t dropped[PP_MAX_DROP_REASONS]; /* P: by reason index; T: tx_failed */
	uint64_t done_tsc;                     /* when the task finished draining */
	uint32_t done;        /* set once, release; the task will not move packets again */
	int32_t observed_cpu; /* CPU the task's lcore found itself on after pinning */
	PP_PROFILE_COUNTERS   /* -Dprofile=true only: TSC cycles by category (pp_profile.h) */
} __rte_cache_aligned;

struct pp_instance_rt;

struct pp_task {
	enum pp_role role;
	unsigned instance;
	unsigned context;
	struct pp_instance_rt *inst;
	struct pp_task_counters *ctr;
	bool finished;             /* local copy of ctr->done */
	bool fused;                /* R whose P and T run on its lcore: one poll for all three */
	bool own_freed;            /* T: see own_freed_lines (pp_task.c) */
	uint64_t stop_seen_tsc;    /* T: when it first saw the stop flag */
	uint16_t n_held, held_off; /* T: packets the port did not take yet */
	struct rte_mbuf *held[PP_BURST];
	uint8_t verdict[PP_BURST];
};

struct pp_instance_rt {
	struct pp_instance_placement place;
	struct rte_ring *r_to_p, *p_to_t;
	struct rte_mempool *rx_pool; /* the pool R's rx queue fills buffers from */
	uint64_t packet_limit;       /* 0 = none */
	const struct pp_app *app;
	void *app_task_state;
	unsigned tx_failed_reason; /* index into dropped[] for T's failures */
	unsigned bad_verdict_reason;
	struct pp_task tasks[PP_N_ROLES];
};

/* Tasks of one lcore, run round-robin (one when not co-located).  An
 * instance with all three tasks here runs fused: R's burst goes straight
 * through P and T without the rings, with the same counters. */
struct pp_lcore_plan {
	unsigned lcore_id;
	unsigned context;
	unsigned n_tasks;
	struct pp_task **tasks;
};

extern uint32_t pp_stop_flag; /* written by the main lcore only */

/* lcore entry point (rte_eal_remote_launch): pins itself to plan->context,
 * then polls its tasks until every one of them has drained. */
int pp_lcore_main(void *plan);

#endif
