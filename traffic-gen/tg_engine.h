/* Run-time state: TX jobs (one per stream and TX queue), RX jobs (one per RX
 * queue), the worker lcores that poll them, and one run (a generation period
 * or an RFC 2544 trial).  Types only (and two relaxed-access helpers): the
 * functions are in tg_tx.h, tg_rx.h, tg_pcap.h and tg_worker.h. */
#ifndef TG_ENGINE_H
#define TG_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pp_signal.h"
#include "tg_config.h"
#include "tg_hist.h"
#include "tg_seq.h"
#include "tg_signature.h"

#define TG_BURST 32
#define TG_MAX_TX_JOBS 255
#define TG_MAX_RX_JOBS 16
#define TG_STREAM_IDS 256

/* Header fields of one flow, in network byte order, ready to copy. */
struct tg_flow {
	uint8_t mac[12]; /* destination then source, as on the wire */
	uint32_t sip;
	uint32_t dip;
	uint16_t sport;
	uint16_t dport;
	uint8_t ttl;
	uint8_t proto;
	uint32_t ip_sum;     /* partial IP checksum of the fields above */
	uint64_t sip6, dip6; /* IPv6: the low 64 bits of the addresses, as on the wire */
	uint16_t tci[2];     /* VLAN tags as on the wire: [0] outer (QinQ) or only, [1] inner */
};

/* Counters a worker publishes (relaxed stores) and the main lcore reads. */
struct tg_tx_counters {
	uint64_t packets;   /* accepted by the port */
	uint64_t bytes;     /* frame bytes incl. FCS */
	uint64_t link_full; /* refused by a full TX queue, freed (not with --tx-retry) */
	uint64_t alloc_fail;
	uint64_t stop_tsc; /* when the job finished */
	uint64_t sent_tsc; /* when its last burst really left (catch-up runs past the end) */
};

struct tg_txjob {
	uint16_t port, queue;
	uint8_t id; /* low 8 bits of the signature stream id */
	const struct tg_stream_cfg *cfg;
	struct rte_mempool *pool; /* mbufs pre-filled with the template */
	struct tg_field field[TG_F_COUNT];
	struct tg_flow *flows;
	uint32_t n_flows, flow_idx;
	uint16_t *len; /* data lengths (frame - FCS), in the IMIX order */
	uint32_t n_len, len_idx;
	struct rte_mbuf **pcap; /* replay: loaded once, sent by reference count */
	uint32_t n_pcap, pcap_idx;
	/* timed replay (pcap_timing): each packet's TSC offset in a pass, a
	 * pass's length, and how well the handoffs kept to them */
	uint64_t *due;
	uint64_t pass_tsc;
	uint64_t prev_sent, prev_due; /* the previous packet's handoff and schedule */
	struct tg_hist *gap_err;      /* |handoff gap - asked gap|, TSC cycles */
	struct tg_hist *late;         /* handoff - schedule, TSC cycles */
	unsigned hdr_len;
	unsigned l3, l4; /* offsets of the IP and the UDP/TCP header (after any tags) */
	unsigned tags;   /* VLAN tags: 0, 1, 2 (QinQ) */
	bool v6;
	uint32_t ip_sum_fixed; /* partial IP checksum of the fixed header words */
	uint64_t rearm;        /* the mbuf's rearm word as rte_pktmbuf_reset leaves it */
	bool tcp, signature, retry;
	/* per run */
	double pps; /* 0: as fast as possible */
	double pkts_per_cycle;
	uint64_t limit; /* 0: none */
	uint16_t epoch;
	uint64_t seq;      /* packets offered (next sequence number) */
	uint64_t last_tsc; /* end of the last burst */
	bool done;
	struct tg_tx_counters c;
};

struct tg_rxjob {
	uint16_t port, queue;
	uint16_t epoch; /* current run; other epochs are stale */
	bool done;
	struct tg_seq *seq;      /* [TG_STREAM_IDS] */
	struct tg_hist *hist;    /* [TG_STREAM_IDS], latency in TSC cycles */
	uint64_t packets, bytes; /* everything received (published) */
	uint64_t foreign, foreign_bytes, stale;
	uint64_t no_timestamp;
	uint64_t why[TG_RX_REASONS]; /* foreign packets by reason (tg_signature.h) */
};

struct tg_worker {
	unsigned lcore;
	unsigned n_tx, n_rx;
	struct tg_txjob *tx[TG_MAX_TX_JOBS];
	struct tg_rxjob *rx[TG_MAX_RX_JOBS];
};

struct tg_run {
	uint64_t start_tsc, end_tsc; /* end: UINT64_MAX when no duration */
	volatile int tx_stop;
	volatile int rx_stop;
};

extern struct tg_run tg_run; /* defined in tg_run.c */

static inline void
tg_publish(uint64_t *dst, uint64_t v)
{
	__atomic_store_n(dst, v, __ATOMIC_RELAXED);
}

static inline uint64_t
tg_read(const uint64_t *src)
{
	return __atomic_load_n(src, __ATOMIC_RELAXED);
}

#endif
