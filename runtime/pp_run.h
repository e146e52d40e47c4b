/* Running one placement: ports, rings, tasks on lcores, stop, drain,
 * accounting, statistics.  Kept callable repeatedly in one process (a
 * serve mode runs many placements one after another on the same EAL). */
#ifndef PP_RUN_H
#define PP_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "pp_app.h"
#include "pp_placement.h"
#include "pp_topology.h"

#define PP_MAX_CONTEXTS 1024 /* OS indexes of contexts a run may use */
#define PP_MAX_PORTS (PP_MAX_PORT + 1)

struct rte_mempool;

struct pp_run_opts {
	uint64_t packets;         /* per instance; 0 = no limit */
	double duration_s;        /* 0 = no limit */
	double warmup_s;          /* packets before this are outside the window */
	unsigned ring_size;       /* R->P and P->T ring slots (power of two) */
	const char *stats_path;   /* SIGUSR1 and final statistics; NULL = stdout */
	bool snapshots_to_stderr; /* serve mode: stdout carries one line per run */
};

/* What stays between runs: the EAL lcore of every context, the pool. */
struct pp_runtime {
	const struct pp_app *app;
	void *app_cfg; /* parsed app options (app->cfg_size bytes) */
	const struct pp_topology *topo;
	struct rte_mempool *pool;
	unsigned lcore_of_context[PP_MAX_CONTEXTS]; /* 0 = none */
	unsigned n_runs;
	/* Queues each port was configured with by an earlier run: reused
	 * as they are when enough (net_pcap cannot set its queues up twice). */
	uint16_t port_rx_queues[PP_MAX_PORTS], port_tx_queues[PP_MAX_PORTS];
	/* Serve mode: ports stay started between runs (pp_run_close_ports
	 * stops them); otherwise every run stops the ports it started. */
	bool keep_ports_up;
	bool port_started[PP_MAX_PORTS];
	/* What the last run did to the ports: starts and (re)configurations
	 * (both 0 when it found every port it uses up and configured). */
	unsigned run_port_starts, run_port_configures;
};

/* Run `pl` to its end (app setup, launch, stop, drain, app teardown) (packets, duration, or a stop signal).  On success
 * *stats receives the statistics (contract 2).  Returns 0, 1 for an error
 * (message printed; stats still set when the run was measured and only the
 * app's own output is incomplete: its teardown said so), 2 when the
 * accounting check failed (stats still set). */
int pp_run_placement(struct pp_runtime *rt, const struct pp_placement *pl, const char *origin,
	const char *variant, const struct pp_run_opts *opts, json_t **stats);

/* Serve mode's end: every started port's rx queues are read until they
 * are empty (three empty polls in a row, at most 65536 packets per queue),
 * the packets freed and counted, and the port stopped.  Call with no run
 * on.  Returns the report: {"kind", "drained_packets", "queues": [{"port",
 * "queue", "packets", "capped"}], "ports": [{"port", "ipackets", "imissed",
 * "ierrors", "rx_nombuf", "opackets", "oerrors"}]} ("capped": the queue
 * never ran dry, as a net_pcap infinite_rx replay does not; "ports": the
 * port's own counters over its life, before the stop). */
json_t *pp_run_close_ports(struct pp_runtime *rt);

/* Set from signal handlers (runtime/base/pp_signal.c counts SIGINT and
 * SIGTERM); polled by the main lcore while a run is on. */
void pp_request_stop(void);
void pp_request_stats(void);
bool pp_stop_requested(void); /* a stop signal came (serve mode ends then) */

#endif
