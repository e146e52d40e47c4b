/* Rules mode's engine, a frame in and alerts out, with no DPDK in it: the
 * app (app.c, on mbufs and runtime/flow's shared flow table), the ac-ids
 * tool and the tests (on capture files and flow_simple.h's table) and the
 * fuzzers all run it.
 *
 * Per frame: decode (decode.h); an IP fragment goes to defragmentation
 * (defrag.h) and the datagram, once whole, goes on in its place; the flow
 * is found in the caller's flow table (ids_flow_ops) and tracked
 * (flow_ids.h); then the rules judge:
 *  - the raw packet: every rule but flow:only_stream ones; with reassembly,
 *    a TCP segment only when its bytes are what the target takes as they
 *    are (in order, overlapping nothing held): one out of order, a
 *    retransmission or an overlap is judged in its PDU only, with the bytes
 *    the target's policy keeps;
 *  - with reassembly, a TCP flow's bytes in each direction are put in order
 *    (stream.h) and judged again as PDUs, Snort's rebuilt packets: every
 *    rule but flow:no_stream and dsize ones (dsize fails on rebuilt packets
 *    in Snort), with the HTTP buffers of the PDU.  A rule that matched on a
 *    raw packet of the direction since its last PDU is not judged again on
 *    the PDU (one alert per attack).  A PDU ends (is flushed) where Snort's
 *    flush would put it: at the end of an HTTP message (protocol-aware
 *    flushing: request or response headers, then a Content-Length body or
 *    chunks), when the other direction sends data, at a FIN or RST, when
 *    it fills the window, and when the flow ends.  A rule whose only
 *    payload option is one plain content (no position, no pcre, no byte_*)
 *    is also found across PDU ends: the prefilter runs in streaming mode
 *    over each direction's bytes (Aho-Corasick state or Hyperscan stream
 *    kept per flow), so a keyword split at any byte is found;
 *  - TCP segments with data whose TTL is more than ttl_limit below the
 *    highest of their direction's never reach the target (Ptacek-Newsham's
 *    TTL insertion): not judged, not reassembled.
 * With reassembly, a TCP flow's packets are judged under its bucket lock
 * (the stream must see them in order); otherwise as before, the flowbits
 * copied out and written back. */
#ifndef IDS_IDS_H
#define IDS_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "defrag.h"
#include "engine.h"
#include "events.h"
#include "flow_ids.h"
#include "http_parse.h"
#include "rule_verify.h"
#include "stream.h"
#include "target_policy.h"

struct flow_key;
struct flow_pkt;

#define IDS_MAX_FRAME 65536 /* the largest frame judged */

/* What the engine needs of a flow table (runtime/flow's for the app,
 * flow_simple.h's for the tools).  state: the record's extension area of
 * ids_engine_state_bytes() bytes, zeroed when the flow starts.  A table
 * that ends a flow (TCP end, idle, eviction, shutdown) calls
 * ids_flow_ended under the same lock first. */
typedef void (*ids_visit_fn)(void *state, bool created, void *arg);
enum ids_flow_update {
	IDS_FLOW_UNTRACKED = 0, /* no record could be had: fn not called */
	IDS_FLOW_HIT,
	IDS_FLOW_CREATED,
};
struct ids_flow_ops {
	uint32_t (*hash)(void *table, const struct flow_key *k);
	enum ids_flow_update (*update)(void *table, const struct flow_pkt *p, uint32_t hash,
		uint32_t wire_len, uint64_t now, void *counters, ids_visit_fn fn, void *arg);
	bool (*visit)(
		void *table, const struct flow_key *k, uint32_t hash, ids_visit_fn fn, void *arg);
	void (*prefetch)(void *table, uint32_t hash); /* may be NULL */
};

/* One alert, as the app logs it. */
#define IDS_ALERT_TRACKED 0x80   /* the packet's flow is in the table */
#define IDS_ALERT_UNTRACKED 0x40 /* the table was full: judged as a new flow's first packet */
#define IDS_ALERT_PARTIAL 0x20   /* partial on this packet (ac_vrule.mail_file_data) */
struct ids_alert {
	ac_addr src, dst;
	uint32_t rule;  /* index into the verifier's rules; UINT32_MAX: an event */
	uint16_t event; /* enum ids_event, for an event */
	uint16_t sport, dport;
	uint8_t ip_proto;
	uint8_t flow;   /* AC_PF_* | IDS_ALERT_*; 0 without flows */
	uint8_t stream; /* on a PDU rebuilt from the stream (or a keyword across PDUs) */
};
typedef void (*ids_alert_fn)(void *ctx, const struct ids_alert *a);

struct ids_engine_cfg {
	const struct ac_verifier *ver;
	struct ac_engine *engine; /* the fast patterns' matcher; NULL: none */
	bool flows;               /* a flow table (not --stateless) */
	bool reassembly;          /* defragmentation and TCP reassembly */
	bool decoder_alerts;      /* events raise alerts (gid 123, 129) */
	uint8_t ttl_limit;        /* TTL insertion: see above; 0 off */
	struct ids_defrag_cfg defrag;
	struct ids_stream_cfg stream;
	struct ids_http_limits http;
	const struct ids_target_policy *policy;
};

struct ids_engine;
struct ids_task;

/* Built once, shared by the tasks: the stream pool, the streaming matcher
 * (ac_engine_enable_stream).  NULL with err. */
struct ids_engine *ids_engine_new(const struct ids_engine_cfg *c, char *err, size_t errlen);
void ids_engine_free(struct ids_engine *e);
/* The flow record's extension area the engine needs. */
uint32_t ids_engine_state_bytes(const struct ids_engine *e);
const struct ids_slot_pool *ids_engine_pool(const struct ids_engine *e);

/* One per thread.  table, ops: the flow table (flows only); counters:
 * handed to ops->update (the app's per-task counters). */
struct ids_task *ids_task_new(struct ids_engine *e, void *table, const struct ids_flow_ops *ops,
	void *counters, ids_alert_fn fn, void *ctx, char *err, size_t errlen);
void ids_task_free(struct ids_task *t);

/* Judge one frame seen at now (the flow table's time units).  Returns
 * the alerts raised by it (its own, and those of the PDUs it flushed of
 * its flow), for the verdict; *l3_off: its (outermost) IP header (UINT32_MAX when it
 * was not decoded), for marking. */
uint32_t ids_process(
	struct ids_task *t, const uint8_t *frame, uint32_t len, uint64_t now, uint32_t *l3_off);

/* The table ends a flow (under its lock): the bytes it still holds are
 * judged as PDUs, its slots go back.  key: the flow's. */
void ids_flow_ended(struct ids_task *t, void *state, const struct flow_key *key, uint64_t now);

/* Each PDU judged, its bytes (the tools dump the streams with it); gap:
 * bytes were lost before it. */
void ids_task_set_pdu_hook(struct ids_task *t,
	void (*fn)(void *ctx, const struct ac_pkt_meta *m, const uint8_t *p, uint32_t n, bool gap),
	void *ctx);

/* Counters, read when the tasks have stopped (or racily, for progress). */
struct ids_task_stats {
	uint64_t packets_judged, bytes_judged;
	uint64_t unscanned[IDS_PKT_N_STATUS];
	uint64_t tunneled[2];                  /* frames decapsulated: VXLAN, Geneve (decode.h) */
	uint64_t tunnel_errors[IDS_TUN_N_ERR]; /* not decapsulated, by why ([0] unused) */
	uint64_t fragments_held;               /* fragments kept for a datagram not yet whole */
	uint64_t datagrams;                    /* reassembled datagrams judged */
	uint64_t ttl_insertions; /* packets not judged: TTL far below their direction's */
	uint64_t raw_skipped;    /* TCP segments not judged alone (out of order, overlapping):
				       their bytes are judged in the PDU */
	uint64_t candidates;     /* rules verified */
	uint64_t alerts, packets_alerted, alerts_stream, alerts_events, alerts_at_flow_end;
	uint64_t alerts_partial_here;
	uint64_t pdus, pdu_bytes, pdus_rescanned, straddles, straddles_unverifiable;
	uint64_t dedup_skipped; /* rule judgements skipped on a PDU: matched on a raw packet */
	uint64_t http_requests, http_responses, extra_scans, bits_written, untracked;
	uint64_t engine_stream_errors;
	uint64_t events[IDS_EV_N];
	uint64_t hist[18];     /* alerts per packet: 0, 1, 2-3, ... */
	uint64_t *rule_alerts; /* per verifier rule */
	struct ids_stream_stats stream;
	struct ids_http_stats http;
};
const struct ids_task_stats *ids_task_stats(const struct ids_task *t);
const struct ids_defrag_stats *ids_task_defrag_stats(const struct ids_task *t);
const struct ac_vscratch *ids_task_vscratch(const struct ids_task *t);
const struct ac_scratch *ids_task_scratch(const struct ids_task *t);

/* The flow key of a decoded packet (as runtime/flow's flow_key.h reads a
 * frame: canonical, IPv4 as IPv4-mapped IPv6) and its direction in it. */
void ids_flow_key(const struct ids_pkt *p, struct flow_pkt *out);

#endif /* IDS_IDS_H */
