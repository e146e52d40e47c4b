/* The flow table shared by every instance of an app (apps/stateful, and
 * apps/ahocorasick's rules mode for flow state and flowbits).
 *
 * 2^16 buckets (the paper's size), each a spinlock and the head of a chain of
 * flow records.  Records come from a pool preallocated at set-up (capacity
 * fixed then, default 2^16 records); the free list is a multi-producer
 * multi-consumer rte_ring of record indices, so creating or reclaiming a
 * flow never allocates.
 *
 * Why a spinlock per bucket and not a seqlock: every packet of a flow WRITES
 * its record (counters, last seen, flags), so there are no read-only lookups
 * for a seqlock's optimistic readers to speed up; writers would still need
 * mutual exclusion, and retrying readers would only add work.  The critical
 * section is one short chain walk plus a few stores.
 *
 * Expiry: a record idle for longer than idle_tsc is reclaimed (1) lazily,
 * when a lookup walks past it in its chain, and (2) by flow_table_sweep(),
 * which the app calls for a few buckets per burst so that flows in buckets
 * no packet visits again are reclaimed too.
 *
 * Table full (no free record): the packet's flow is not tracked, the caller
 * counts it (table_full) and forwards the packet anyway: a monitor must not
 * become a denial of service for the traffic it watches.
 */
#ifndef STATEFUL_FLOW_TABLE_H
#define STATEFUL_FLOW_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_prefetch.h>
#include <rte_spinlock.h>

#include "flow_hash.h"
#include "flow_key.h"

#define FLOW_TABLE_BUCKETS (1u << 16)
#define FLOW_TABLE_BUCKET_MASK (FLOW_TABLE_BUCKETS - 1)
#define FLOW_NIL UINT32_MAX
#define FLOW_CHAIN_HIST 17 /* chain lengths 0..15 and >= 16 */

enum flow_state {
	FLOW_STATE_NONE = 0,    /* not TCP */
	FLOW_STATE_NEW,         /* TCP, not yet acknowledged both ways */
	FLOW_STATE_ESTABLISHED, /* TCP, ACK seen from both sides */
	FLOW_STATE_CLOSING,     /* TCP, FIN seen from one side */
	FLOW_STATE_CLOSED,      /* TCP, RST seen, or FIN from both sides */
};

#define TCP_FLAG_FIN 0x01
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_ACK 0x10

/* Directions are relative to the flow's initiator (the sender of its first
 * packet seen): 0 = initiator -> responder, 1 = back. */
struct flow_record {
	/* first cache line: what a chain walk reads */
	struct flow_key key;
	uint32_t hash;
	uint32_t next;     /* pool index of the next record in the chain */
	uint64_t last_tsc; /* last seen (rte_rdtsc) */
	uint8_t init_dir;  /* flow_pkt.dir of the first packet */
	uint8_t tcp_flags; /* OR of every packet's flags */
	uint8_t state;     /* enum flow_state */
	uint8_t dir_bits;  /* bit d: ACK seen in direction d; bit 2+d: FIN */
	/* second cache line */
	uint64_t first_tsc; /* first seen */
	uint64_t packets[2];
	uint64_t bytes[2];
	uint8_t dflags[2]; /* TCP flags per direction (OR) */
	/* Application detection (flow_dpi.h); all zero without an inspector. */
	void *app_state;     /* per-flow detector state while inspecting */
	uint16_t app_master; /* detected protocol: master (e.g. TLS) ... */
	uint16_t app_proto;  /* ... and application (e.g. Google) ids */
	uint8_t app_status;  /* enum flow_app_status */
	uint8_t app_packets; /* packets the detector has seen */
} __rte_cache_aligned;
_Static_assert(sizeof(struct flow_record) == 2 * RTE_CACHE_LINE_SIZE, "flow_record: two lines");

/* Where a flow's application detection stands. */
enum flow_app_status {
	FLOW_APP_FRESH = 0,     /* not looked at yet */
	FLOW_APP_INSPECTING,    /* app_state holds the detector's state */
	FLOW_APP_DONE,          /* app_master/app_proto final */
	FLOW_APP_NOT_INSPECTED, /* no detector state was free at creation */
};

/* Why a flow ended: the values of IPFIX flowEndReason (IE 136). */
enum flow_end_reason {
	FLOW_END_IDLE = 1,   /* idle timeout */
	FLOW_END_ACTIVE = 2, /* active timeout: the flow goes on, counts restart */
	FLOW_END_EOF = 3,    /* TCP FIN from both sides, or RST */
	FLOW_END_FORCED = 4, /* shutdown */
	FLOW_END_LACK = 5,   /* table pressure: evicted for a new flow */
};

struct flow_bucket {
	rte_spinlock_t lock;
	uint32_t head;
};

/* Counters of one caller (one P task): never shared, never locked. */
struct flow_counters {
	uint64_t lookups;   /* packets looked up */
	uint64_t probes;    /* records examined by those lookups */
	uint64_t max_probe; /* longest chain walk seen */
	uint64_t hits;      /* packets of an existing flow */
	uint64_t created;
	uint64_t expired;
	uint64_t table_full;     /* packets whose flow could not be created */
	uint64_t ended[6];       /* flows handed to the end hook, by flow_end_reason */
	uint64_t evicted;        /* flows ended for table pressure (also in ended[5]) */
	uint64_t export_queued;  /* ended flows the export hook queued */
	uint64_t export_dropped; /* ended flows lost: export queue full */
};

struct flow_table;

/* Called under the bucket lock for every flow that ends, when the table has
 * an end hook (flow export).  FAST PATH: it must not block, allocate or
 * print; it copies what it needs (the record is reused afterwards). */
typedef void (*flow_end_fn)(
	const struct flow_record *r, enum flow_end_reason why, struct flow_counters *c, void *arg);

/* Application detection hooks (flow_table_set_inspector), called under the
 * bucket lock.  c is the calling task's counters: a caller that embeds them
 * in its own state finds that state with container_of.  FAST PATH.
 * on_packet: for every accounted packet of a flow whose app_status is below
 * FLOW_APP_DONE (the record is already updated with the packet).
 * on_finish: when a flow whose app_status is below FLOW_APP_DONE ends or its
 * record is reclaimed, before the end hook sees it; it must settle the
 * application and release app_state. */
typedef void (*flow_app_packet_fn)(
	struct flow_record *r, const struct flow_pkt *p, uint64_t now, struct flow_counters *c);
typedef void (*flow_app_finish_fn)(struct flow_record *r, struct flow_counters *c);

/* Called under the bucket lock with the packet's record once the packet is
 * accounted (and before a TCP end removes the record), with the record's
 * extension area (flow_table_create_ext; NULL without one), zeroed when the
 * record was made for this packet (created).  FAST PATH, as the hooks above. */
typedef void (*flow_visit_fn)(struct flow_record *r, void *ext, bool created, void *arg);

struct rte_ring;

struct flow_table {
	struct flow_bucket *buckets;
	struct flow_record *pool;
	struct rte_ring *free_ring;
	uint32_t capacity;
	uint64_t idle_tsc; /* 0: never expire */
	struct flow_hasher hasher;
	/* Export (flow_table_set_end_hook); all zero/NULL without it. */
	flow_end_fn on_end;
	void *on_end_arg;
	uint64_t active_tsc; /* 0: no active timeout */
	/* Application detection (flow_table_set_inspector); NULL without. */
	flow_app_packet_fn on_app_packet;
	flow_app_finish_fn on_app_finish;
	/* Per-record extension area of ext_size bytes (0: none), indexed as
	 * the pool: what a caller keeps per flow beside the record. */
	uint8_t *ext;
	uint32_t ext_size;
};

enum flow_update {
	FLOW_UPDATE_FULL = 0, /* no free record: not tracked */
	FLOW_UPDATE_HIT,
	FLOW_UPDATE_CREATED,
};

/* Allocate the table on socket_id (rte_zmalloc_socket, rte_ring).  Needs the
 * EAL.  capacity: records in the pool, 1 .. 2^26.  Returns NULL on failure
 * (rte_errno set). */
struct flow_table *flow_table_create(
	uint32_t capacity, uint64_t idle_tsc, const struct flow_hasher *hasher, int socket_id);
/* The same with an extension area of ext_size bytes per record (0 .. 4096),
 * allocated with the pool and zeroed whenever a record starts a flow. */
struct flow_table *flow_table_create_ext(uint32_t capacity, uint64_t idle_tsc,
	const struct flow_hasher *hasher, int socket_id, uint32_t ext_size);
void flow_table_free(struct flow_table *t);

/* Make the table a flow meter that reports ended flows to fn: idle expiry,
 * active timeout (active_tsc, 0: none; the record is reported and its counts
 * restart), TCP end (FIN both ways or RST: reported and removed at once, so a
 * later packet of the same 5-tuple starts a new flow), and table pressure
 * (no free record: the least recently seen flow of the packet's bucket is
 * reported and reused).  Set before any update. */
void flow_table_set_end_hook(struct flow_table *t, uint64_t active_tsc, flow_end_fn fn, void *arg);

/* Run an application detector on the flows (see flow_app_packet_fn).  Set
 * before any update. */
void flow_table_set_inspector(
	struct flow_table *t, flow_app_packet_fn on_packet, flow_app_finish_fn on_finish);

/* Find the packet's flow (creating it if new) and account one packet of
 * wire_len bytes seen at now.  Takes the bucket's lock.  Thread-safe. */
enum flow_update flow_table_update(struct flow_table *t, const struct flow_pkt *p, uint32_t hash,
	uint32_t wire_len, uint64_t now, struct flow_counters *c);

/* flow_table_update, and fn on the record under the same lock (not called
 * when the table is full).  Thread-safe. */
enum flow_update flow_table_update_visit(struct flow_table *t, const struct flow_pkt *p,
	uint32_t hash, uint32_t wire_len, uint64_t now, struct flow_counters *c, flow_visit_fn fn,
	void *arg);

/* fn on the record of key k under its bucket lock, accounting nothing (no
 * packet, no expiry).  Returns false when the table has no such flow.
 * Thread-safe. */
bool flow_table_visit(
	struct flow_table *t, const struct flow_key *k, uint32_t hash, flow_visit_fn fn, void *arg);

/* Warm the cache for a lookup of hash soon: the bucket, then (once the
 * bucket is in) the record at its head and that record's extension area.
 * Reads the head without the lock: only to prefetch.  FAST PATH. */
static inline void
flow_table_prefetch_bucket(const struct flow_table *t, uint32_t hash)
{
	rte_prefetch0(&t->buckets[hash & FLOW_TABLE_BUCKET_MASK]);
}

static inline void
flow_table_prefetch_head(const struct flow_table *t, uint32_t hash)
{
	uint32_t idx =
		__atomic_load_n(&t->buckets[hash & FLOW_TABLE_BUCKET_MASK].head, __ATOMIC_RELAXED);
	if (idx < t->capacity) {
		rte_prefetch0(&t->pool[idx]);
		if (t->ext != NULL)
			rte_prefetch0(t->ext + (size_t)idx * t->ext_size);
	}
}

/* Reclaim idle records in n buckets from *cursor on (wrapping); advances
 * *cursor.  Thread-safe.  Returns the number reclaimed. */
uint32_t flow_table_sweep(
	struct flow_table *t, uint32_t *cursor, uint32_t n, uint64_t now, struct flow_counters *c);

/* Visit every record.  Only while no thread updates the table (after the
 * tasks stopped); a concurrent caller may see a record twice or miss one.
 * Returns records visited. */
uint32_t flow_table_foreach(
	const struct flow_table *t, void (*fn)(const struct flow_record *r, void *arg), void *arg);

/* hist[i] = buckets whose chain holds i records (i < 16), hist[16]: >= 16.
 * Same caveat as flow_table_foreach.  Returns the longest chain. */
uint32_t flow_table_chain_histogram(const struct flow_table *t, uint64_t hist[FLOW_CHAIN_HIST]);

const char *flow_state_name(enum flow_state s);

#endif
