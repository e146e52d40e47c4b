/* netdedup's state, shared by its three stages (netdedup_main.c wires
 * them to the runtime; dd_r.c, dd_p.c and dd_t.c are the stages). */
#ifndef DD_APP_H
#define DD_APP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "dd_chunk.h"
#include "dd_encode.h"
#include "dd_format.h"
#include "dd_table.h"
#include "pp_server.h"
#include "pp_server_stats.h"
#include "pp_stack.h"

struct rte_mempool;
struct rte_ring;

struct dd_cfg {
	struct pp_server_opts srv; /* --stack, --ip, --out, --streams, ... (pp_server.h) */
	unsigned coarse;           /* bytes per coarse chunk (message) */
	uint64_t table_entries;
	int level; /* zlib level, 0: store only */
	unsigned msgs;
	uint64_t next_stream; /* stream ids, unique over every run of the process */
};

/* A message (coarse chunk) from R to P to T, in the mbuf's private area;
 * its data are the chunk's input bytes (pkt_len: T's byte count). */
struct dd_msg {
	uint64_t stream_id, announced;
	uint64_t offset;      /* of the first byte in the stream */
	uint64_t r_tsc;       /* when R handed it over */
	struct rte_mbuf *out; /* P's records for T */
	uint32_t gen;         /* of the connection slot */
	uint16_t slot;
	uint8_t flags;  /* DD_MSG_* */
	uint8_t status; /* enum dd_end, with DD_MSG_END */
};
#define DD_MSG_FIRST 1u
#define DD_MSG_END 2u

static inline struct dd_msg *
dd_msg(struct rte_mbuf *m)
{
	return rte_mbuf_to_priv(m);
}

/* T -> R: a stream is written; R sends its receipt. */
struct dd_done {
	uint64_t stream_id, stored, announced;
	uint32_t gen;
	uint16_t slot;
	uint8_t status;
	uint8_t pad;
};

/* The most P writes for one message of `coarse` bytes: its header, the
 * carried tail and the message as records (each chunk at least
 * DD_MIN_CHUNK but the last two), and the end record. */
#define DD_OUT_ROOM(coarse)                           \
	(2 * DD_REC_BYTES + (coarse) + DD_MAX_CHUNK + \
		DD_REC_BYTES * (((coarse) + DD_MAX_CHUNK) / DD_MIN_CHUNK + 2))

enum dd_phase {
	DD_IDLE,   /* no connection known */
	DD_HEADER, /* reading a stream's length */
	DD_DATA,   /* reading its bytes */
	DD_DONE,   /* the run is ending: this connection takes nothing more */
};

struct dd_r_slot {
	uint32_t gen;
	uint8_t phase; /* enum dd_phase */
	uint8_t hdr_have;
	bool first;
	uint8_t hdr[DD_LENGTH_BYTES];
	uint64_t stream_id, announced, received;
	struct rte_mbuf *cur; /* the message being filled */
	unsigned receipts_pending;
};

struct dd_r_counters {
	struct pp_stream_counters streams;
	uint64_t bad_length; /* announced lengths past DD_MAX_ANNOUNCED: reset */
	struct pp_receipt_counters receipts;
	uint64_t input_bytes, msgs, msg_waits;
};

struct dd_p_slot {
	struct dd_cdc cdc;
	uint32_t carry_len;
	uint32_t chunks;
	uint8_t *carry; /* DD_MAX_CHUNK bytes */
};

struct dd_t_slot {
	int fd;
	bool failed;
	uint64_t next_offset; /* where the stream's next message must start */
};

struct dd_t_counters {
	struct pp_store_counters store; /* each stream's file */
	uint64_t no_output;
	struct pp_latency lat; /* coarse chunk latency R -> T */
};

struct dd_state;

/* One instance: the state of its R, P and T, each on its own lines. */
struct dd_task {
	struct dd_state *app;
	unsigned instance;
	struct rte_ring *done; /* T -> R */
	struct {
		struct pp_stack_inst *si;
		struct dd_r_slot *slots;
		unsigned next_slot;
		uint64_t end_tsc; /* --streams reached: end at the latest then */
		struct dd_r_counters ctr;
	} r __rte_cache_aligned;
	struct {
		struct dd_encoder enc;
		struct dd_p_slot *slots;
		uint8_t *carry_mem;
		uint64_t out_missing;
	} p __rte_cache_aligned;
	struct {
		struct dd_t_slot *slots;
		struct dd_t_counters ctr;
		uint64_t lat_max_ns;
	} t __rte_cache_aligned;
};

struct dd_state {
	struct dd_cfg *cfg;
	unsigned n_instances;
	struct pp_stack *stack;
	struct rte_mempool *msg_pool, *out_pool;
	struct dd_table table;
	void *table_mem;
	uint64_t streams_done; /* written by T tasks (atomic), read by R tasks */
};

/* The three stages (pp_app.h rx, process, tx). */
int dd_r_rx(void *task, struct rte_mbuf **pkts, uint16_t max, int stopping);
void dd_p_process(void *task, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict);
uint16_t dd_t_tx(void *task, struct rte_mbuf **pkts, uint16_t n);

#endif
