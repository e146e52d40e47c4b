/* TCP server connections for apps that terminate TCP in their R task
 * (pp_app.h rx/tx): on lwIP's raw API over a DPDK port (the user-level
 * stack), or on the kernel's sockets (the anchor it is measured against).
 * The app sees the same connection slots either way.
 *
 * lwIP keeps its state in globals and runs single-threaded (its raw API,
 * no tcpip_init): one stack per process.  The R tasks of several instances
 * take turns on it, one spinlock hold per poll (pp_stack_poll_begin ..
 * pp_stack_poll_end); with one instance the lock is never contended.  That
 * shared state (protocol control blocks, buffers, timers) is what a
 * placement of several instances contends for.
 *
 * Where bytes are copied (lwIP):
 *  - receive: none into lwIP.  Each received mbuf becomes a custom pbuf
 *    that points into the mbuf's data (its pbuf header sits in the mbuf's
 *    headroom); lwIP's free of the pbuf frees the mbuf.
 *  - pp_conn_read: one copy, from the pbufs into the app's buffer, after
 *    which the pbufs (and their mbufs) are freed and the window reopened.
 *    The app's buffer must outlive the pbufs and cross to other lcores,
 *    and lwIP's pbufs may only be touched under the stack's lock.
 *  - transmit: one copy of each outgoing frame (lwIP hands over a pbuf it
 *    keeps for retransmission) into an mbuf of the stack's own pool.
 * Checksums and ARP are lwIP's own (computed and answered in software).
 * lwIP's timers run from the poll, at most once a millisecond. */
#ifndef PP_STACK_H
#define PP_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "pp_app.h"

enum pp_stack_kind {
	PP_STACK_LWIP,   /* lwIP on the instance's DPDK port queues */
	PP_STACK_KERNEL, /* kernel sockets, one SO_REUSEPORT listener per instance */
};

struct pp_stack_conf {
	enum pp_stack_kind kind;
	uint32_t addr;        /* IPv4, host order: lwIP's netif; kernel: bound (0: any) */
	unsigned prefix_len;  /* lwIP netif mask */
	uint16_t listen_port; /* TCP port, host order */
	unsigned max_conns;   /* connection slots per instance */
	unsigned n_instances;
	const struct pp_queue_pair *queues; /* per instance (lwIP: one port for all) */
	int socket_id;
	unsigned kernel_rcvbuf; /* kernel: SO_RCVBUF of the sockets (0: the kernel's autotuning) */
};

enum pp_conn_state {
	PP_CONN_FREE,        /* no connection */
	PP_CONN_OPEN,        /* established */
	PP_CONN_PEER_CLOSED, /* the peer sent FIN: what it sent before is still readable */
	PP_CONN_RESET,       /* reset, or failed: what was received is still readable */
};

struct pp_conn_impl;

/* One connection slot of an instance.  gen changes whenever the slot takes
 * a new connection, so the app can tell a new one from the one it knew. */
struct pp_conn {
	enum pp_conn_state state;
	uint32_t gen;
	unsigned slot;
	uint64_t bytes_read;
	struct pp_conn_impl *impl; /* the backend's side */
};

struct pp_stack;
struct pp_stack_inst;

/* Main lcore, from the app's setup: the listener (and, for lwIP, the stack
 * and the netif of the port, made once per process).  0, or -1 with a
 * message in err. */
int pp_stack_open(
	struct pp_stack **out, const struct pp_stack_conf *conf, char *err, size_t errlen);

/* Main lcore, from the app's teardown, with no task running: every
 * connection still open is reset (lwIP: RST sent), the listener closed. */
void pp_stack_close(struct pp_stack *s);

struct pp_stack_inst *pp_stack_inst(struct pp_stack *s, unsigned instance);

/* R's poll: frames in (when input is true) and due timers, connections
 * accepted; then the app reads and writes its connections; then
 * pp_stack_poll_end sends what the poll produced and lets the next
 * instance at the stack. */
void pp_stack_poll_begin(struct pp_stack_inst *si, bool input);
void pp_stack_poll_end(struct pp_stack_inst *si);

/* The instance's slots (max_conns of them). */
struct pp_conn *pp_stack_conn(struct pp_stack_inst *si, unsigned slot);
unsigned pp_stack_max_conns(const struct pp_stack *s);

/* Between poll_begin and poll_end, by the owning instance's R only. */
size_t pp_conn_read(struct pp_conn *c, void *dst, size_t max);
/* Queues len bytes for sending: 0, or -1 when the connection cannot take
 * them (nothing queued: the peer does not read, or it is gone). */
int pp_conn_write(struct pp_conn *c, const void *buf, size_t len);
/* Whether bytes written are still not acknowledged by the peer (lwIP: sent
 * or queued and not acked; kernel: in the socket's send queue). */
bool pp_conn_unacked(struct pp_conn *c);
/* Done with the connection: lwIP closes it gracefully when it is still
 * up (a reset one is only released); what was not read is discarded and
 * returned.  The slot is free again. */
uint64_t pp_conn_release(struct pp_conn *c);

/* Counters of the stack glue (frames, drops, connections) into out. */
void pp_stack_stats(const struct pp_stack *s, json_t *out);

/* The DPDK memory pp_stack_open allocates, in MiB. */
unsigned pp_stack_mem_mb(enum pp_stack_kind kind);

#endif
