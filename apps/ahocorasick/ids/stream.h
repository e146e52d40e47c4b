/* TCP stream reassembly, one direction of one flow at a time: the bytes
 * put in sequence order, retransmissions and overlaps resolved by the
 * target's policy (overlap.h, stream model), held in a bounded window
 * until the caller flushes them as a PDU (ids.h says when).
 *
 * Memory: one global pool of slots, preallocated to the memory cap
 * (--stream-memcap) and never grown.  A direction takes a slot when it
 * first holds data: history (the last bytes of its previous PDU, so a
 * keyword across two PDUs can be checked), the PDU's bytes in order, the
 * out-of-order segments beyond them (at most max_segs, within the window),
 * and the PDU's fast-pattern candidates.  With no free slot, the least
 * recently used one (approximated by the CLOCK algorithm over the pool) is
 * taken from its direction, whatever flow and task own it: that direction
 * loses the bytes it held (counted as shed, said in the statistics) and
 * goes on from its next segment.  Slots are shared by the P tasks without
 * a lock: each carries a generation and a busy bit in one atomic word; a
 * direction's reference is (slot, generation), so a taken slot is seen as
 * gone, never used by two.  The direction state itself (ids_sdir) lives in
 * the flow's record and is used under the flow table's bucket lock. */
#ifndef IDS_STREAM_H
#define IDS_STREAM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "overlap.h"

#define IDS_DEDUP 8 /* rules remembered per direction between flushes */

/* One direction's state, in the flow record (ids_flow_state). */
struct ids_sdir {
	uint32_t next;  /* next sequence number in order (valid when on) */
	uint32_t base;  /* sequence number of the PDU's first byte */
	uint32_t slot;  /* slot index + 1; 0: none */
	uint32_t gen;   /* the slot's generation when taken */
	uint8_t on;     /* next is known (a SYN or a first segment seen) */
	uint8_t ttl;    /* the direction's first TTL */
	uint8_t policy; /* enum ids_policy of the receiver */
	uint8_t fin;    /* a FIN came: the PDU was flushed at it */
	uint8_t gap;    /* bytes were lost (shed, or beyond the window) */
	uint8_t n_dedup;
	uint8_t pad[2];
	uint32_t isn;              /* the SYN's sequence number, when one started it */
	uint32_t dedup[IDS_DEDUP]; /* rules matched on raw packets since the last flush */
};

struct ids_slot {
	_Atomic uint64_t word; /* generation << 32 | OWNED | BUSY | REF */
	uint32_t hist;         /* history bytes at data[0, hist) */
	uint32_t pdu;          /* the PDU at data[hist, hist + pdu) */
	uint32_t n_pieces;     /* out-of-order pieces, offsets from the PDU's start */
	uint32_t cand_lost;    /* the candidate set is incomplete: rescan at flush */
			       /* then: struct ids_piece pieces[max_segs]; uint64_t cand[fp_words];
	 * uint8_t data[history + window] */
};

struct ids_stream_cfg {
	uint32_t window;   /* PDU plus out-of-order span per direction (default 16384) */
	uint32_t history;  /* bytes kept from the previous PDU (default 256) */
	uint32_t max_segs; /* out-of-order segments per direction (default 64, at most 256) */
	size_t memcap;     /* the pool's bytes (default 64 MiB) */
	uint32_t fp_words; /* 64-bit words of a fast-pattern bitmap */
};

struct ids_stream_stats {
	uint64_t segments; /* TCP segments with data */
	uint64_t bytes_in_order;
	uint64_t retransmitted; /* segments wholly below the in-order edge */
	uint64_t overlaps;      /* segments that met held data */
	uint64_t beyond_window; /* segments (or parts) dropped: past the window */
	uint64_t no_slot;       /* segments not reassembled: no slot could be had */
	uint64_t shed;          /* slots taken from a direction (oldest first) */
	uint64_t lost_bytes;    /* bytes those directions lost */
	uint64_t events[IDS_EV_N];
};

struct ids_slot_pool;

void ids_stream_cfg_default(struct ids_stream_cfg *c);
struct ids_slot_pool *ids_slot_pool_new(const struct ids_stream_cfg *c, char *err, size_t errlen);
void ids_slot_pool_free(struct ids_slot_pool *p);
const struct ids_stream_cfg *ids_slot_pool_cfg(const struct ids_slot_pool *p);
uint32_t ids_slot_pool_slots(const struct ids_slot_pool *p);
uint32_t ids_slot_pool_in_use(const struct ids_slot_pool *p);
size_t ids_slot_pool_bytes(const struct ids_slot_pool *p);

static inline struct ids_piece *
ids_slot_pieces(struct ids_slot *s)
{
	return (struct ids_piece *)(s + 1);
}
uint64_t *ids_slot_cand(const struct ids_slot_pool *p, struct ids_slot *s);
uint8_t *ids_slot_data(const struct ids_slot_pool *p, struct ids_slot *s);

/* The direction's slot, marked busy (ids_sdir_put when done); one is
 * taken (maybe from another direction) when it has none and create.
 * NULL: none could be had (no_slot), or its slot was taken away: then its
 * held bytes are gone, d is reset (gap) and *lost says how many. */
struct ids_slot *ids_sdir_get(struct ids_slot_pool *p, struct ids_sdir *d, bool create,
	struct ids_stream_stats *st, uint32_t *lost);
void ids_sdir_put(struct ids_slot_pool *p, struct ids_slot *s);
/* The direction ends: its slot goes back to the pool. */
void ids_sdir_release(struct ids_slot_pool *p, struct ids_sdir *d);

/* Put a segment's len bytes at sequence number seq into the direction (s
 * its busy slot).  Bytes below the in-order edge are the target's already
 * and stay (a conflicting retransmission is an event); the rest is placed
 * by the direction's policy.  Returns the bytes that came into order (the
 * PDU grew by them: data[hist + pdu - n, hist + pdu)).  *ev: events. */
uint32_t ids_sdir_insert(struct ids_slot_pool *p, struct ids_sdir *d, struct ids_slot *s,
	uint32_t seq, const uint8_t *data, uint32_t len, struct ids_stream_stats *st, uint32_t *ev);

/* The PDU's first n bytes were judged: they become history (its last
 * cfg.history bytes kept), what follows moves to the PDU's start. */
void ids_sdir_flushed(struct ids_slot_pool *p, struct ids_sdir *d, struct ids_slot *s, uint32_t n);

/* A FIN in order (the PDU flushed): it takes one sequence number. */
void ids_sdir_fin(struct ids_slot_pool *p, struct ids_sdir *d, struct ids_slot *s);

#endif /* IDS_STREAM_H */
