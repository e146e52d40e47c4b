/* IPv4 and IPv6 defragmentation before the rules see a packet, with the
 * target-based overlap policies of overlap.h, chosen by the datagram's
 * destination (target_policy.h).
 *
 * Why not DPDK's rte_ip_frag: it gives up a datagram whose fragments
 * overlap (the very case an evasion uses), so it cannot model a target's
 * choice; it works on mbufs while this engine has no DPDK in it (the
 * tools, tests and fuzzers run it on plain bytes).  Its model is kept
 * where it fits: one table per P task (no lock: fragments of one datagram
 * reach one RX queue, as RSS hashes fragments on their addresses), a
 * fixed number of datagrams in flight, a timeout, the least recently used
 * datagram given up when the table or the memory is full.
 *
 * Limits (each hit counted in ids_defrag_stats and raised as an event,
 * events.h): datagrams in flight, fragments per datagram, overlaps per
 * datagram, bytes of fragment data held (memcap, in 2 KiB blocks), the
 * timeout, a minimum TTL and a TTL delta (a fragment whose TTL is far
 * below the highest of its datagram never reaches the target:
 * Ptacek-Newsham's TTL insertion; one far above it shows that what was
 * held was such, and it is dropped), and tiny non-last fragments.  Nothing is allocated
 * after ids_defrag_new. */
#ifndef IDS_DEFRAG_H
#define IDS_DEFRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "events.h"
#include "target_policy.h"

#define IDS_DEFRAG_MAX_FRAME (65535 + 256) /* a datagram and its headers */

struct ids_defrag_cfg {
	uint32_t max_datagrams; /* in flight (default 4096) */
	uint32_t max_frags;     /* pieces per datagram (default 64, at most 256) */
	uint32_t max_overlaps;  /* per datagram, 0: no limit */
	uint64_t timeout;       /* in the caller's time units; 0: never */
	size_t memcap;          /* bytes of fragment data (default 4 MiB) */
	uint8_t min_ttl;        /* fragments below are not used (default 1) */
	uint8_t ttl_limit; /* more below the first fragment's TTL: not used (default 5; 0 off) */
	uint16_t tiny;     /* a non-last fragment of at most this many bytes is tiny (0: off) */
	const struct ids_target_policy *policy;
};

struct ids_defrag_stats {
	uint64_t fragments;      /* fragments seen */
	uint64_t reassembled;    /* datagrams put back together */
	uint64_t timeouts;       /* datagrams given up after the timeout */
	uint64_t evicted_full;   /* given up: datagrams in flight at the limit */
	uint64_t evicted_memcap; /* given up: fragment memory at the cap */
	uint64_t dropped;        /* fragments not used (anomaly, limit, TTL) */
	uint64_t datagrams_bad;  /* datagrams given up for an anomaly */
	uint64_t events[IDS_EV_N];
	uint64_t in_flight;  /* now */
	uint64_t bytes_held; /* now: bytes of blocks in use */
	uint64_t bytes_held_max;
};

struct ids_defrag;

void ids_defrag_cfg_default(struct ids_defrag_cfg *c);
/* Everything preallocated here (malloc).  NULL with err. */
struct ids_defrag *ids_defrag_new(const struct ids_defrag_cfg *c, char *err, size_t errlen);
void ids_defrag_free(struct ids_defrag *d);

/* Add the fragment p (ids_decode said IDS_PKT_FRAGMENT) of frame at time
 * now.  Returns the length of the whole datagram's frame written to out
 * (IDS_DEFRAG_MAX_FRAME bytes: the first fragment's link and IP headers,
 * lengths and next header fixed, the data), or 0 while it is incomplete
 * or when the fragment was not used.  *ev: a bit per event raised. */
uint32_t ids_defrag_add(struct ids_defrag *d, const uint8_t *frame, const struct ids_pkt *p,
	uint64_t now, uint8_t *out, uint32_t *ev);

/* Give up datagrams idle longer than the timeout (a few per call). */
void ids_defrag_expire(struct ids_defrag *d, uint64_t now);

const struct ids_defrag_stats *ids_defrag_stats(const struct ids_defrag *d);

#endif /* IDS_DEFRAG_H */
