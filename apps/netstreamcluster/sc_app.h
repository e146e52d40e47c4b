/* netstreamcluster's state, shared by its three stages
 * (netstreamcluster_main.c wires them to the runtime; sc_r.c, sc_p.c and
 * sc_t.c are the stages). */
#ifndef SC_APP_H
#define SC_APP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "pp_server.h"
#include "pp_server_stats.h"
#include "pp_stack.h"
#include "sc_cluster.h"
#include "sc_format.h"

/* P's output for a chunk, in an mbuf for T: u32 count, u32 zero, then per
 * centre u64 weight and dim float32 (the centre's coordinates). */
#define SC_OUT_ROOM(dim) (8 + SC_MAX_K * (8 + 4 * (size_t)(dim)))

struct rte_mempool;
struct rte_ring;

struct sc_cfg {
	struct pp_server_opts srv; /* --stack, --ip, --out, --streams, ... (pp_server.h) */
	unsigned msg_bytes;        /* message size (whole records of at most this many bytes) */
	unsigned max_dim, max_chunk, max_centres;
	unsigned msgs;
	uint64_t next_stream;
};

/* A message from R to P to T, in the mbuf's private area; its data are
 * whole records of one chunk. */
struct sc_msg {
	struct sc_header h;
	uint64_t stream_id;
	uint64_t first_point; /* of the message, in the stream */
	uint64_t chunk;       /* the chunk's index in the stream */
	struct rte_mbuf *out; /* P's centres for T (a chunk's last message) */
	uint32_t gen;
	uint16_t slot;
	uint8_t flags;  /* SC_MSG_* */
	uint8_t status; /* enum sc_end, with SC_MSG_END */
};
#define SC_MSG_FIRST 1u
#define SC_MSG_END 2u
#define SC_MSG_CHUNK_END 4u

static inline struct sc_msg *
sc_msg(struct rte_mbuf *m)
{
	return rte_mbuf_to_priv(m);
}

/* T -> R: a stream's result is written; R sends its receipt. */
struct sc_done {
	uint64_t stream_id, points, announced;
	uint32_t gen;
	uint16_t slot;
	uint8_t status;
	uint8_t pad;
};

enum sc_phase {
	SC_IDLE,
	SC_HEADER,
	SC_DATA,
	SC_DONE,
};

struct sc_r_slot {
	uint32_t gen;
	uint8_t phase; /* enum sc_phase */
	uint8_t hdr_have;
	bool first;
	uint8_t hdr[SC_HEADER_BYTES];
	struct sc_header h;
	uint64_t stream_id;
	uint64_t points;   /* whole points received */
	uint64_t in_chunk; /* of them, in the current chunk */
	uint64_t chunk;
	unsigned msg_target; /* bytes the current message is to hold */
	struct rte_mbuf *cur;
	unsigned receipts_pending;
};

struct sc_r_counters {
	struct pp_stream_counters streams;
	uint64_t empty, bad_header, too_many_centres;
	struct pp_receipt_counters receipts;
	uint64_t input_bytes, points, partial_record_bytes, msgs, msg_waits;
};

struct sc_p_counters {
	uint64_t chunks, points, centres, out_missing;
};

struct sc_p_slot {
	uint32_t fill; /* points in the chunk buffer */
	float *pts;    /* max_chunk x max_dim */
};

struct sc_t_slot {
	bool failed;
	uint32_t n; /* centres collected */
	uint64_t chunks;
	uint64_t next_point;
	float *pts; /* max_centres x max_dim */
	uint64_t *weight;
};

struct sc_t_counters {
	struct pp_store_counters store; /* each stream's result file */
	uint64_t overflow, no_output, finals, final_centres_in;
};

struct sc_state;

struct sc_task {
	struct sc_state *app;
	unsigned instance;
	struct rte_ring *done; /* T -> R */
	struct {
		struct pp_stack_inst *si;
		struct sc_r_slot *slots;
		unsigned next_slot;
		uint64_t end_tsc;
		struct sc_r_counters ctr;
	} r __rte_cache_aligned;
	struct {
		struct sc_p_slot *slots;
		struct sc_work work;
		uint32_t *centre;
		uint64_t *weight;
		struct sc_p_counters ctr;
	} p __rte_cache_aligned;
	struct {
		struct sc_t_slot *slots;
		struct sc_work work;
		uint32_t *centre;
		uint64_t *weight;
		char *json; /* one result's text */
		size_t json_cap;
		struct sc_t_counters ctr;
	} t __rte_cache_aligned;
};

struct sc_state {
	struct sc_cfg *cfg;
	unsigned n_instances;
	struct pp_stack *stack;
	struct rte_mempool *msg_pool, *out_pool;
	uint64_t streams_done;
};

int sc_r_rx(void *task, struct rte_mbuf **pkts, uint16_t max, int stopping);
void sc_p_process(void *task, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict);
uint16_t sc_t_tx(void *task, struct rte_mbuf **pkts, uint16_t n);

#endif
