/* The whole generator: configuration, ports, jobs, workers; and what one run
 * measured.  Types only: the functions are in tg_setup.h, tg_run.h,
 * tg_report.h, tg_rfc2544.h and tg_delay.h. */
#ifndef TG_CTX_H
#define TG_CTX_H

#include <jansson.h>

#include "tg_engine.h"

struct tg_ctx {
	struct tg_cfg *cfg;
	struct tg_txjob *tx;
	unsigned n_tx;
	unsigned n_txq; /* TX queues on the TX port (jobs share them past that) */
	struct tg_rxjob *rx;
	unsigned n_rx;
	struct tg_worker *w;
	unsigned n_w;
	double hz;
	double link_bps;         /* for % rates; nominal for virtual ports */
	const char *link_source; /* "port" / "flag" / "nominal" */
	uint16_t epoch;
	bool live;
};

struct tg_stream_result {
	bool local; /* sent by this process */
	uint64_t tx_packets, tx_bytes, link_full, alloc_fail;
	double asked_pps;
	struct tg_seq seq; /* counters only (window not merged) */
	struct tg_hist hist;
};

struct tg_result {
	double duration_s;  /* TX window: run start to last TX job stop */
	double rx_window_s; /* run start to end of drain */
	/* run start to the last burst that really left: past duration_s when
	 * a job still caught up after the end (a port slower than asked) */
	double sent_window_s;
	uint64_t tx_packets, tx_bytes, link_full, alloc_fail;
	uint64_t rx_packets, rx_bytes, foreign, foreign_bytes, stale, no_timestamp;
	uint64_t why[TG_RX_REASONS];
	uint64_t rx_unique, rx_duplicates, rx_reordered, rx_late_unchecked, rx_lost;
	struct tg_hist all;
	struct tg_stream_result s[TG_STREAM_IDS];
};

#endif
