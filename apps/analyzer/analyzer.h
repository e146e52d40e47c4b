/* State shared by the analyzer's P tasks, its log writer and its stats. */
#ifndef AN_ANALYZER_H
#define AN_ANALYZER_H

#include <pcap/pcap.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_ring.h>

#include "decode.h"
#include "log_record.h"

#define AN_DEFAULT_SNAPLEN 2048u
#define AN_MAX_SNAPLEN 16384u
#define AN_DEFAULT_LOG_RING 4096u

/* L4 classes counted by the decoder statistics. */
enum an_l4_class {
	AN_L4_TCP,
	AN_L4_UDP,
	AN_L4_ICMP,
	AN_L4_ICMPV6,
	AN_L4_OTHER,
	AN_L4_NONE,
	AN_L4_COUNT
};

/* Command-line configuration (zeroed by the runtime, filled by analyzer_parse_opt). */
struct an_cfg {
	const char *filter_expr;   /* NULL: log every packet */
	struct bpf_program filter; /* compiled when filter_expr is set */
	bool filter_compiled;
	const char *log_path;
	enum an_log_format log_format;
	const char *pcap_path;
	unsigned snaplen;  /* 0: AN_DEFAULT_SNAPLEN */
	unsigned log_ring; /* 0: AN_DEFAULT_LOG_RING */
	bool drop_unmatched;
	unsigned runs; /* setups so far (--serve runs many) */
};

/* One slot of a pcap ring: header, then snaplen bytes of packet. */
struct an_pcap_slot {
	uint64_t tsc;
	uint32_t wire_len;
	uint32_t cap_len;
	uint8_t data[];
};

/* Per P task.  The first block is written only by the P task, the second
 * only by the writer; each on its own cache lines. */
struct an_task {
	unsigned instance;
	const struct bpf_insn *filter; /* NULL: no filter */
	struct rte_ring *log_ring;     /* NULL: no --log */
	struct rte_ring *pcap_ring;    /* NULL: no --pcap-out */
	unsigned pcap_esize;
	unsigned snaplen;
	bool drop_unmatched;

	/* P task counters. */
	uint64_t packets __rte_cache_aligned;
	uint64_t by_l3[AN_L3_COUNT];
	uint64_t by_l4[AN_L4_COUNT];
	uint64_t by_status[AN_STATUS_COUNT];
	uint64_t by_tunnel[AN_TUN_COUNT]; /* by the outermost tunnel */
	uint64_t filter_passed, filter_failed;
	uint64_t log_enqueued, log_lost; /* atomically stored: the writer syncs on them */
	uint64_t pcap_enqueued, pcap_lost;

	/* Writer counters. */
	uint64_t log_dequeued __rte_cache_aligned;
	uint64_t pcap_dequeued;
};

struct an_state {
	struct an_cfg *cfg; /* not read by the writer (see writer_stuck) */
	enum an_log_format log_format;
	unsigned n_tasks;
	struct an_task **tasks; /* published by task_init (release) */

	FILE *log_file;
	pcap_t *pcap_dead;
	pcap_dumper_t *pcap_dumper;
	unsigned pcap_esize; /* bytes per pcap ring slot */

	/* TSC -> wall clock, taken once at setup. */
	uint64_t tsc0, hz;
	int64_t ns0;

	pthread_t writer;
	bool writer_running;
	bool writer_stuck;                  /* left blocked: its state is never freed */
	uint8_t *pcap_buf;                  /* the writer's dequeue buffer for pcap slots */
	uint64_t flush_req, flush_done;     /* atomic: flushes asked for / done */
	int flush_failed;                   /* atomic: a flush reported an error */
	int writer_stop;                    /* atomic */
	uint64_t log_written, pcap_written; /* atomic: written by the writer */
	uint64_t log_write_errors, pcap_write_errors;
	char writer_cpus[64]; /* where the writer may run, for stats */
};

#endif
