/* netferret's state, shared by its three stages (netferret_main.c wires
 * them to the runtime; nf_r.c, nf_p.c and nf_t.c are the stages). */
#ifndef NF_APP_H
#define NF_APP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "nf_db.h"
#include "nf_query.h"
#include "pp_server.h"
#include "pp_server_stats.h"
#include "pp_stack.h"

struct rte_mempool;
struct rte_ring;

struct nf_cfg {
	struct pp_server_opts srv; /* --stack, --ip, --streams (queries), ... (pp_server.h) */
	const char *db_path;       /* --db */
	unsigned k;                /* --k (0: the database's) */
	unsigned max_query;        /* bytes of a query's JPEG at most */
	unsigned msgs;
	double idle_s;
};

/* Why a query has no results: P's decode statuses (nf_image.h), then R's. */
enum nf_answer_error {
	NF_ANS_TOO_LONG = NF_STATUS_N, /* its length is over --max-query-kib */
	NF_ANS_BAD_LENGTH,             /* a negative length other than -1 (the end tag) */
	NF_ANS_TRUNCATED,              /* the client closed (FIN) before the query's end */
	NF_ANS_N,
};

/* A query from R to P to T, then (its answer written into its data by T)
 * back to R: in the mbuf's private area. */
struct nf_msg {
	uint64_t r_tsc;
	uint32_t gen;
	uint16_t slot;
	uint8_t status; /* enum nf_status, from P */
	uint8_t n;      /* matches */
	struct nf_match match[NF_MAX_K];
};

static inline struct nf_msg *
nf_msg(struct rte_mbuf *m)
{
	return rte_mbuf_to_priv(m);
}

enum nf_phase {
	NF_IDLE,  /* no connection */
	NF_LEN,   /* reading a query's length */
	NF_BODY,  /* reading its JPEG */
	NF_WAIT,  /* P and T have it; its answer comes back through t->answers */
	NF_DRAIN, /* an error answered: input discarded until the answer is acknowledged */
};

struct nf_r_slot {
	uint32_t gen;
	uint8_t phase; /* enum nf_phase */
	uint8_t len_have;
	uint8_t lenb[4];
	uint32_t want; /* the JPEG's bytes */
	struct rte_mbuf *cur;
	uint64_t last_tsc; /* the last byte, or the last answer */
};

struct nf_r_counters {
	uint64_t connections, queries, input_bytes, end_tags, msg_waits;
	uint64_t too_long, bad_length, truncated_query, truncated_length, reset_mid_query;
	uint64_t cut_by_run_end, idle_closed, discarded_bytes;
	uint64_t error_answers_sent, error_answers_no_room;
	struct pp_receipt_counters answers;
};

struct nf_p_counters {
	uint64_t queries, status[NF_STATUS_N];
	uint64_t regions, examined, candidates, results;
	uint64_t ticks[NF_ST_N];
};

struct nf_t_counters {
	uint64_t answers, answer_bytes, no_room;
	struct pp_latency lat; /* query latency R -> T */
};

struct nf_state;

struct nf_task {
	struct nf_state *app;
	unsigned instance;
	struct rte_ring *answers; /* T -> R: messages whose answer is written */
	struct {
		struct pp_stack_inst *si;
		struct nf_r_slot *slots;
		unsigned next_slot;
		uint64_t end_tsc, idle_tsc;
		struct nf_r_counters ctr;
	} r __rte_cache_aligned;
	struct {
		struct nf_work *work;
		struct nf_p_counters ctr;
	} p __rte_cache_aligned;
	struct {
		uint64_t lat_max_ns;
		struct nf_t_counters ctr;
	} t __rte_cache_aligned;
};

struct nf_state {
	struct nf_cfg *cfg;
	unsigned n_instances, k;
	struct nf_db db; /* mapped read-only once, read by every instance's P */
	struct pp_stack *stack;
	struct rte_mempool *msg_pool;
	uint64_t queries_started, queries_done; /* all instances */
	uint32_t end_seen;                      /* an end tag came */
};

int nf_r_rx(void *task, struct rte_mbuf **pkts, uint16_t max, int stopping);
void nf_p_process(void *task, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict);
uint16_t nf_t_tx(void *task, struct rte_mbuf **pkts, uint16_t n);

/* The answer's error word (nf_status_names, then R's). */
const char *nf_answer_error_name(unsigned e);

#endif
