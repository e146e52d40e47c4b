/* What the two backends of pp_stack share (internal): the state pp_stack.c
 * makes for each instance and connection slot, a free slot for a new
 * connection, and the DPDK port calls (pp_stack_base.c).  The backends
 * (pp_stack_backend.h) build on this and on nothing else of the stack. */
#ifndef PP_STACK_BASE_H
#define PP_STACK_BASE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "pp_stack.h"

struct pbuf;
struct tcp_pcb;
struct rte_mbuf;
struct rte_mempool;

#define PP_STACK_TXBUF 64 /* frames an instance holds for its tx queue */

/* Per slot, the backend's side of a connection. */
struct pp_conn_impl {
	struct pp_stack_inst *si;
	/* lwIP: the pcb (NULL once lwIP freed it) and what it delivered and
	 * the app has not read yet: pbufs linked through their next
	 * pointers, the first read from off on. */
	struct tcp_pcb *pcb;
	struct pbuf *head, *tail;
	uint16_t off;
	size_t pending;
	/* kernel: the socket (-1: none) */
	int fd;
};

/* Counters of one instance, written by its R only (lwIP: by whichever R
 * holds the stack, which is that instance's). */
struct pp_stack_counters {
	uint64_t rx_frames, rx_frames_dropped; /* dropped: not one plain segment */
	uint64_t tx_frames, tx_frames_dropped; /* dropped: no mbuf, or queue full */
	uint64_t accepted, refused;            /* refused: every slot busy */
	uint64_t bytes_read, bytes_discarded;  /* discarded: unread at release */
	uint64_t polls, timer_runs;
	/* TSC cycles of the polls that moved something (a frame in or out,
	 * bytes read): in the stack before the app (frames in, timers,
	 * accepts), in the app between begin and end (reading, its own
	 * work), in the stack after (frames out); and how many such polls. */
	uint64_t busy_polls, cycles_in, cycles_app, cycles_out;
};

struct pp_stack_inst {
	struct pp_stack *s;
	unsigned index;
	struct pp_conn *conns;
	struct pp_conn_impl *impl;
	uint16_t rx_port, rx_queue, tx_port, tx_queue;
	uint16_t n_tx;
	struct rte_mbuf *tx[PP_STACK_TXBUF];
	uint64_t poll_t0, poll_t1; /* this poll's start, end of its input */
	uint64_t poll_moved0;      /* frames and bytes moved before this poll */
	int listen_fd;             /* kernel */
	uint64_t next_accept_tsc;  /* kernel */
	struct pp_stack_counters ctr;
} __rte_cache_aligned;

struct pp_stack_ops;

struct pp_stack {
	struct pp_stack_conf conf;
	const struct pp_stack_ops *ops; /* the backend of conf.kind */
	struct pp_stack_inst *inst;
	struct tcp_pcb *listener;    /* lwIP */
	struct rte_mempool *tx_pool; /* lwIP */
};

/* A free slot of si for a new connection (state OPEN, gen bumped), or
 * NULL when every slot is busy (counted as refused). */
struct pp_conn *pp_stack_take_slot(struct pp_stack_inst *si);

/* The port calls the lwIP backend makes, in pp_stack_base.c: lwIP's headers
 * and DPDK's rte_ethdev.h (through rte_ip.h and netinet/ip6.h) both define
 * struct ip6_hdr, so no file includes both.  One call per burst. */
uint16_t pp_stack_port_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t pp_stack_port_tx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
int pp_stack_port_mac(uint16_t port, uint8_t mac[6]);
bool pp_stack_port_valid(uint16_t port);

#endif
