/* Application detection with nDPI (--dpi) on the first packets of each flow.
 *
 * Per-flow nDPI state (struct ndpi_flow_struct, 688 bytes in nDPI 4.2) comes
 * from an rte_mempool preallocated at set-up (--dpi-flows states, with a
 * per-lcore cache); a flow takes one when it is created and gives it back
 * as soon as its application is settled, so the pool only has to cover the
 * flows being inspected at once.  A flow that finds the pool empty is not
 * inspected (counted in flows_not_inspected).
 *
 * Each P task has its own nDPI detection module (nDPI's module keeps caches
 * that are not thread-safe); the flow's state is only touched under its
 * bucket lock, so instances may take turns on one flow.
 *
 * The detection loop is ndpiReader's (nDPI 4.2, reader_util.c): every packet
 * goes to ndpi_detection_process_packet until an application is found (and
 * nDPI wants no extra packets, e.g. for a TLS certificate) or the flow has
 * had max_tcp_packets / max_udp_packets packets (ndpiReader's -T / -U,
 * defaults 80 / 24); then, if still unknown, ndpi_detection_giveup with
 * protocol guessing on, as ndpiReader does.  A flow that ends or is
 * reclaimed while still inspecting is settled the same way.
 *
 * nDPI's own heap allocations (a few dissectors keep strings such as a TLS
 * server name or an HTTP URL in the flow) go through set_ndpi_malloc /
 * set_ndpi_free / set_ndpi_flow_malloc hooks that count them: they happen
 * only while a flow is inspected, so at most max_*_packets times per flow,
 * and are all freed (ndpi_free_flow_data) when the flow's detection is
 * settled.  The counts are in the statistics (ndpi_heap_allocs_packets:
 * after set-up; ndpi_heap_allocs_setup: the modules themselves).  The
 * detection modules themselves are allocated at set-up.
 */
#ifndef STATEFUL_FLOW_DPI_H
#define STATEFUL_FLOW_DPI_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "flow_table.h"

#define FLOW_DPI_DEFAULT_TCP_PACKETS 80 /* ndpiReader -T */
#define FLOW_DPI_DEFAULT_UDP_PACKETS 24 /* ndpiReader -U */
#define FLOW_DPI_MAX_PACKETS 255        /* app_packets is 8 bits */
#define FLOW_DPI_DEFAULT_STATES 16384

struct flow_dpi_cfg {
	uint32_t max_tcp_packets; /* 1 .. FLOW_DPI_MAX_PACKETS */
	uint32_t max_udp_packets; /* also used for other IP protocols */
	uint32_t states;          /* per-flow states preallocated */
};

struct flow_dpi;        /* shared: the state pool, the configuration */
struct flow_dpi_worker; /* one per P task: its nDPI module and counters */

/* Creates the state pool and installs nDPI's memory hooks.  On error writes a
 * message into err and returns NULL. */
struct flow_dpi *flow_dpi_create(
	const struct flow_dpi_cfg *cfg, int socket_id, char *err, size_t errlen);
void flow_dpi_free(struct flow_dpi *d);

/* One nDPI detection module (every protocol enabled).  Not thread-safe
 * (nDPI's initialisation is not): call from set-up or task_init only. */
struct flow_dpi_worker *flow_dpi_worker_create(struct flow_dpi *d, int socket_id);
void flow_dpi_worker_free(struct flow_dpi_worker *w);

/* FAST PATH, under the flow's bucket lock (flow_app_packet_fn's work). */
void flow_dpi_packet(
	struct flow_dpi_worker *w, struct flow_record *r, const struct flow_pkt *p, uint64_t now);

/* Under the flow's bucket lock: settle a flow still inspecting (giveup) and
 * release its state (flow_app_finish_fn's work). */
void flow_dpi_finish(struct flow_dpi_worker *w, struct flow_record *r);

/* After the tasks stopped: settle every flow of the table still inspecting,
 * so that the flow dump and the shutdown export carry their application. */
void flow_dpi_finish_all(struct flow_dpi_worker *w, struct flow_table *t);

/* "master.app" as ndpiReader prints it ("TLS.Google", "DNS", "Unknown");
 * arg: the struct flow_dpi (a flow_app_name_fn).  Thread-safe: it reads
 * the protocol names of a module kept for that alone. */
const char *flow_dpi_name(void *arg, uint16_t master, uint16_t app, char *buf, size_t size);

/* Statistics of all workers: flows by application, packets inspected,
 * state pool use, nDPI heap allocations. */
void flow_dpi_stats(
	const struct flow_dpi *d, struct flow_dpi_worker *const *w, unsigned n, json_t *out);

#endif
