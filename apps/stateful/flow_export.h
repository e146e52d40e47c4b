/* IPFIX export of ended flows (RFC 7011, through libfixbuf).
 *
 * The P tasks never talk to the network: the table's end hook
 * (flow_export_hook) copies the ended record into a multi-producer,
 * single-consumer rte_ring of fixed-size elements and returns; when the ring
 * is full the record is counted in export_dropped_queue_full and the packet
 * goes on.  One writer thread (a plain pthread, like the analyzer's log
 * writer) drains the ring, turns each biflow into one or two uniflow IPFIX
 * records (initiator -> responder, and back when the responder sent
 * anything) and appends them through libfixbuf to a UDP collector and/or an
 * IPFIX file.  Templates go out at start and again every template_interval
 * seconds (UDP has no session to remember them).  Records libfixbuf could
 * not send are counted in records_lost, with the first error printed once.
 */
#ifndef STATEFUL_FLOW_EXPORT_H
#define STATEFUL_FLOW_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flow_table.h"

struct flow_exporter;

/* The name of a detected application, for the writer thread. */
typedef const char *(*flow_app_name_fn)(
	void *arg, uint16_t master, uint16_t app, char *buf, size_t size);

struct flow_export_cfg {
	const char *collector;      /* "HOST:PORT" (UDP), or NULL */
	const char *file;           /* IPFIX file path, or NULL */
	uint32_t queue_size;        /* ring elements (power of two not needed) */
	double template_interval_s; /* > 0 */
	uint32_t observation_domain;
	/* --dpi: export the application too (applicationId, applicationName);
	 * NULL: no application fields in the templates. */
	flow_app_name_fn app_name;
	void *app_name_arg;
};

/* Checks the addresses (resolves HOST, parses PORT), opens the exporters
 * and starts the writer thread.  On error writes a message naming the value
 * into err and returns NULL. */
struct flow_exporter *flow_export_create(
	const struct flow_export_cfg *cfg, int socket_id, char *err, size_t errlen);

/* The table's end hook (arg: the exporter).  FAST PATH. */
void flow_export_hook(
	const struct flow_record *r, enum flow_end_reason why, struct flow_counters *c, void *arg);

/* Off the fast path, after the tasks stopped: reports every flow still in the
 * table (reason: forced end), waiting for room in the queue rather than
 * dropping, then waits until the writer sent everything and stops it. */
void flow_export_finish(struct flow_exporter *x, const struct flow_table *t);

struct flow_export_stats {
	uint64_t flows_dequeued;   /* biflows the writer took from the queue */
	uint64_t records_exported; /* IPFIX records libfixbuf accepted and sent */
	uint64_t records_lost;     /* IPFIX records that could not be sent */
	uint64_t templates_sent;   /* template (re)sends, per exporter */
	uint64_t forced_dropped;   /* shutdown reports that found no room */
	bool finished;
	char first_error[200];
};
void flow_export_get_stats(const struct flow_exporter *x, struct flow_export_stats *s);

/* After flow_export_finish: whether a write to the --ipfix-file failed (its
 * first error was printed; the file misses records).  A collector over UDP
 * is not asked: datagrams may be lost on the way anyway, and it is counted. */
bool flow_export_file_failed(const struct flow_exporter *x);

void flow_export_free(struct flow_exporter *x);

#endif
