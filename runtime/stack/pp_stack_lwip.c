/* pp_stack on lwIP's raw API over a DPDK port (pp_stack.h says where it
 * copies and why).
 *
 * Two lwIP builds (runtime/stack/meson.build):
 * - our own (PP_LWIP_OWN), from Debian's source package with
 *   lwip/lwipopts.h: NO_SYS=1, static pools, a 256 KiB window; sys_now()
 *   below is its clock.
 * - Debian's liblwip, built for the Hurd with NO_SYS=0 (a tcpip thread,
 *   core locking, malloc-backed pools, a 64 KiB window).  Its raw API
 *   still runs from one thread without tcpip_init: the core-locking check
 *   only fires once a tcpip thread has marked itself, which never happens
 *   here.
 * Either way lwIP's cyclic timers run from sys_check_timeouts(), called
 * from the poll. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <lwip/etharp.h>
#include <lwip/init.h>
#include <lwip/ip4_addr.h>
#include <lwip/netif.h>
#include <lwip/pbuf.h>
#include <lwip/sys.h>
#include <lwip/tcp.h>
#include <lwip/timeouts.h>
#include <netif/ethernet.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_prefetch.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>

#include "pp_stack_backend.h"

#define TX_POOL_MBUFS 2047
#define TX_MBUF_ROOM 2048
#define TX_POOL_MB 8 /* the pool above (2,048 frames of 2 KiB) with its overhead */
#define MTU 1500

/* Process-wide, as lwIP's own state is: one stack, one netif per port. */
static bool lwip_started;
static struct netif netifs[RTE_MAX_ETHPORTS];
static bool netif_added[RTE_MAX_ETHPORTS];
static rte_spinlock_t stack_lock = RTE_SPINLOCK_INITIALIZER;
static struct pp_stack_inst *cur; /* the instance whose R holds the stack */
static uint64_t next_timer_tsc, timer_period_tsc;

/* Connections that received data in this poll.  lwIP acknowledges every
 * second full segment at once and leaves the rest to its fast timer, up to
 * 250 ms later: a client whose small writes wait for that ACK (Nagle) would
 * crawl.  A polling stack acknowledges what a poll received by the poll's
 * end instead.  Overflow only leaves an ACK to lwIP's timer. */
#define ACK_LIST 64
static struct pp_conn *ack_list[ACK_LIST];
static unsigned n_ack;
static unsigned n_runs;

#if PP_LWIP_OWN
/* NO_SYS=1: lwIP's timeouts read the time here, in milliseconds (u32_t
 * wraps after 49 days, which lwIP's timeout arithmetic allows for). */
u32_t
sys_now(void)
{
	return (u32_t)(rte_get_tsc_cycles() / (rte_get_tsc_hz() / 1000));
}
#endif

/* A received mbuf as a pbuf: the pbuf header in the mbuf's headroom. */
struct rx_pbuf {
	struct pbuf_custom pc;
	struct rte_mbuf *m;
};

static void
rx_pbuf_free(struct pbuf *p)
{
	rte_pktmbuf_free(((struct rx_pbuf *)(void *)p)->m);
}

static void
flush_tx(struct pp_stack_inst *si)
{
	if (si->n_tx == 0)
		return;
	uint16_t sent = pp_stack_port_tx(si->tx_port, si->tx_queue, si->tx, si->n_tx);
	si->ctr.tx_frames += sent;
	if (sent < si->n_tx)
		memmove(si->tx, si->tx + sent, (size_t)(si->n_tx - sent) * sizeof(si->tx[0]));
	si->n_tx = (uint16_t)(si->n_tx - sent);
}

/* lwIP's frame out: copied into an mbuf (lwIP keeps its pbuf for
 * retransmission), batched until the end of the poll.  A frame that finds
 * no mbuf or no room is lost as on a wire: TCP sends it again. */
static err_t
dp_linkoutput(struct netif *nif, struct pbuf *p)
{
	(void)nif;
	struct pp_stack_inst *si = cur;
	if (si == NULL) {
		/* Outside a poll: the gratuitous ARP of netif_set_link_up, sent
		 * before the port starts.  Lost, as on a wire not yet up. */
		return ERR_OK;
	}
	if (si->n_tx == PP_STACK_TXBUF)
		flush_tx(si);
	struct rte_mbuf *m = si->n_tx < PP_STACK_TXBUF ? rte_pktmbuf_alloc(si->s->tx_pool) : NULL;
	if (m == NULL || p->tot_len > rte_pktmbuf_tailroom(m)) {
		rte_pktmbuf_free(m);
		si->ctr.tx_frames_dropped++;
		return ERR_OK;
	}
	pbuf_copy_partial(p, rte_pktmbuf_mtod(m, void *), p->tot_len, 0);
	m->data_len = p->tot_len;
	m->pkt_len = p->tot_len;
	si->tx[si->n_tx++] = m;
	return ERR_OK;
}

static err_t
dp_netif_init(struct netif *nif)
{
	uint16_t port = (uint16_t)(uintptr_t)nif->state;
	if (pp_stack_port_mac(port, nif->hwaddr) != 0)
		return ERR_IF;
	nif->hwaddr_len = ETH_HWADDR_LEN;
	nif->mtu = MTU;
	nif->name[0] = 'd';
	nif->name[1] = 'p';
	nif->output = etharp_output;
	nif->linkoutput = dp_linkoutput;
	nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
	return ERR_OK;
}

static err_t
on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	(void)err;
	struct pp_conn *c = arg;
	struct pp_conn_impl *ci = c->impl;
	if (p == NULL) {
		if (c->state == PP_CONN_OPEN)
			c->state = PP_CONN_PEER_CLOSED;
		return ERR_OK;
	}
	/* Kept, never refused: the window (TCP_WND) bounds what waits here. */
	bool listed = n_ack > 0 && ack_list[n_ack - 1] == c;
	if (!listed && n_ack < ACK_LIST) {
		ack_list[n_ack++] = c;
		listed = true;
	}
	/* The ACK lwIP would send for every second segment as it arrives
	 * waits for the poll's end, where one ACK says what the burst did.
	 * (An out-of-order segment calls no on_recv: its duplicate ACK goes
	 * at once, as a peer's fast retransmit needs.) */
	if (listed) {
		tcp_clear_flags(pcb, TF_ACK_NOW);
		tcp_set_flags(pcb, TF_ACK_DELAY);
	}
	ci->pending += p->tot_len;
	if (ci->head == NULL)
		ci->head = p;
	else
		ci->tail->next =
			p; /* chains linked, tot_len not summed: read and freed one by one */
	struct pbuf *q = p;
	while (q->next != NULL)
		q = q->next;
	ci->tail = q;
	return ERR_OK;
}

static void
on_err(void *arg, err_t err)
{
	(void)err;
	struct pp_conn *c = arg;
	c->impl->pcb = NULL; /* lwIP freed it */
	c->state = PP_CONN_RESET;
}

static err_t
on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
	(void)arg;
	if (err != ERR_OK || pcb == NULL)
		return ERR_VAL;
	struct pp_conn *c = pp_stack_take_slot(cur);
	if (c == NULL) {
		tcp_abort(pcb);
		return ERR_ABRT;
	}
	struct pp_conn_impl *ci = c->impl;
	ci->pcb = pcb;
	ci->head = ci->tail = NULL;
	ci->off = 0;
	ci->pending = 0;
	tcp_arg(pcb, c);
	tcp_recv(pcb, on_recv);
	tcp_err(pcb, on_err);
	tcp_nagle_disable(pcb); /* replies are small and should go at once */
	return ERR_OK;
}

static int
add_netif(uint16_t port, const struct pp_stack_conf *conf, char *err, size_t errlen)
{
	ip4_addr_t ip, mask, gw;
	ip4_addr_set_u32(&ip, lwip_htonl(conf->addr));
	ip4_addr_set_u32(
		&mask, lwip_htonl(conf->prefix_len == 0 ? 0 : ~0u << (32 - conf->prefix_len)));
	ip4_addr_set_zero(&gw);
	struct netif *nif = &netifs[port];
	if (netif_added[port]) {
		netif_set_addr(nif, &ip, &mask, &gw);
		return 0;
	}
	if (netif_add(nif, &ip, &mask, &gw, (void *)(uintptr_t)port, dp_netif_init,
		    ethernet_input) == NULL) {
		snprintf(err, errlen, "stack: lwIP cannot add a netif on DPDK port %u", port);
		return -1;
	}
	netif_added[port] = true;
	netif_set_up(nif);
	netif_set_link_up(nif);
	return 0;
}

static int
pp_stack_lwip_open(struct pp_stack *s, char *err, size_t errlen)
{
	const struct pp_stack_conf *conf = &s->conf;
	uint16_t port = conf->queues[0].rx_port;
	for (unsigned i = 0; i < conf->n_instances; i++)
		if (conf->queues[i].rx_port != port || conf->queues[i].tx_port != port) {
			snprintf(err, errlen,
				"stack: instance %u reads port %u and writes port %u: the lwIP "
				"stack has one netif, so every instance reads and writes port %u",
				i, conf->queues[i].rx_port, conf->queues[i].tx_port, port);
			return -1;
		}
	if (!pp_stack_port_valid(port)) {
		snprintf(err, errlen, "stack: DPDK port %u does not exist", port);
		return -1;
	}
	char name[RTE_MEMPOOL_NAMESIZE];
	snprintf(name, sizeof(name), "pp_stack_tx%u", n_runs++);
	s->tx_pool = rte_pktmbuf_pool_create(
		name, TX_POOL_MBUFS, 64, 0, TX_MBUF_ROOM + RTE_PKTMBUF_HEADROOM, conf->socket_id);
	if (s->tx_pool == NULL) {
		snprintf(
			err, errlen, "stack: cannot make the tx pool: %s", rte_strerror(rte_errno));
		return -1;
	}
	rte_spinlock_lock(&stack_lock);
	if (!lwip_started) {
		lwip_init();
		lwip_started = true;
		timer_period_tsc = rte_get_tsc_hz() / 1000;
	}
	int rc = add_netif(port, conf, err, errlen);
	if (rc == 0) {
		struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
		err_t e = pcb == NULL ? ERR_MEM : ERR_OK;
		if (pcb != NULL) {
			/* Pcbs of an earlier run in TIME_WAIT hold the port. */
			ip_set_option(pcb, SOF_REUSEADDR);
			e = tcp_bind(pcb, netif_ip_addr4(&netifs[port]), conf->listen_port);
		}
		if (e == ERR_OK)
			s->listener = tcp_listen_with_backlog_and_err(pcb, 64, &e);
		if (s->listener == NULL) {
			if (pcb != NULL)
				tcp_abort(pcb);
			snprintf(err, errlen, "stack: lwIP cannot listen on TCP port %u: %s",
				conf->listen_port, lwip_strerr(e));
			rc = -1;
		} else {
			tcp_arg(s->listener, s);
			tcp_accept(s->listener, on_accept);
		}
	}
	rte_spinlock_unlock(&stack_lock);
	return rc;
}

static void
free_pending(struct pp_conn_impl *ci)
{
	struct pbuf *p = ci->head;
	while (p != NULL) {
		struct pbuf *next = p->next;
		p->next = NULL;
		pbuf_free(p);
		p = next;
	}
	ci->head = ci->tail = NULL;
	ci->pending = 0;
	ci->off = 0;
}

static void
pp_stack_lwip_close(struct pp_stack *s)
{
	rte_spinlock_lock(&stack_lock);
	cur = &s->inst[0];
	for (unsigned i = 0; i < s->conf.n_instances; i++)
		for (unsigned k = 0; k < s->conf.max_conns; k++) {
			struct pp_conn *c = &s->inst[i].conns[k];
			if (c->state == PP_CONN_FREE)
				continue;
			struct pp_conn_impl *ci = c->impl;
			s->inst[i].ctr.bytes_discarded += ci->pending;
			free_pending(ci);
			if (ci->pcb != NULL) {
				tcp_arg(ci->pcb, NULL);
				tcp_recv(ci->pcb, NULL);
				tcp_err(ci->pcb, NULL);
				tcp_abort(ci->pcb); /* sends a RST */
				ci->pcb = NULL;
			}
			c->state = PP_CONN_FREE;
		}
	if (s->listener != NULL) {
		tcp_arg(s->listener, NULL);
		tcp_accept(s->listener, NULL);
		if (tcp_close(s->listener) != ERR_OK)
			tcp_abort(s->listener);
		s->listener = NULL;
	}
	for (unsigned i = 0; i < s->conf.n_instances && s->tx_pool != NULL; i++) {
		struct pp_stack_inst *si = &s->inst[i];
		for (int tries = 0; tries < 1000 && si->n_tx != 0; tries++)
			flush_tx(si);
		si->ctr.tx_frames_dropped += si->n_tx;
		rte_pktmbuf_free_bulk(si->tx, si->n_tx);
		si->n_tx = 0;
	}
	cur = NULL;
	rte_spinlock_unlock(&stack_lock);
	rte_mempool_free(s->tx_pool);
	s->tx_pool = NULL;
}

static void
pp_stack_lwip_begin(struct pp_stack_inst *si, bool input)
{
	rte_spinlock_lock(&stack_lock);
	cur = si;
	if (input) {
		struct rte_mbuf *pkts[PP_BURST];
		struct netif *nif = &netifs[si->rx_port];
		uint16_t n = pp_stack_port_rx(si->rx_port, si->rx_queue, pkts, PP_BURST);
		si->ctr.rx_frames += n;
		for (uint16_t i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			if (i + 1 < n)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
			if (unlikely(m->nb_segs != 1 || m->data_off < sizeof(struct rx_pbuf))) {
				si->ctr.rx_frames_dropped++;
				rte_pktmbuf_free(m);
				continue;
			}
			struct rx_pbuf *rp = m->buf_addr;
			rp->m = m;
			rp->pc.custom_free_function = rx_pbuf_free;
			struct pbuf *p = pbuf_alloced_custom(PBUF_RAW, m->data_len, PBUF_REF,
				&rp->pc, rte_pktmbuf_mtod(m, void *), m->data_len);
			if (nif->input(p, nif) != ERR_OK)
				pbuf_free(p);
		}
	}
	uint64_t now = rte_rdtsc();
	if (now >= next_timer_tsc) {
		next_timer_tsc = now + timer_period_tsc;
		si->ctr.timer_runs++;
		sys_check_timeouts();
	}
}

static void
pp_stack_lwip_end(struct pp_stack_inst *si)
{
	for (unsigned i = 0; i < n_ack; i++) {
		struct tcp_pcb *pcb = ack_list[i]->impl->pcb;
		if (pcb != NULL && (pcb->flags & TF_ACK_DELAY)) {
			tcp_set_flags(pcb, TF_ACK_NOW);
			tcp_output(pcb);
		}
	}
	n_ack = 0;
	flush_tx(si);
	cur = NULL;
	rte_spinlock_unlock(&stack_lock);
}

static size_t
pp_stack_lwip_read(struct pp_conn *c, void *dst, size_t max)
{
	struct pp_conn_impl *ci = c->impl;
	size_t n = 0;
	while (n < max && ci->head != NULL) {
		struct pbuf *p = ci->head;
		size_t take = RTE_MIN((size_t)(p->len - ci->off), max - n);
		memcpy((char *)dst + n, (const char *)p->payload + ci->off, take);
		n += take;
		ci->off = (uint16_t)(ci->off + take);
		if (ci->off == p->len) {
			ci->head = p->next;
			if (ci->head == NULL)
				ci->tail = NULL;
			p->next = NULL;
			pbuf_free(p);
			ci->off = 0;
		}
	}
	ci->pending -= n;
	/* The window reopens by what was read (tcp_recved takes 16 bits). */
	for (size_t left = n; ci->pcb != NULL && left != 0;) {
		uint16_t k = (uint16_t)RTE_MIN(left, (size_t)0xffff);
		tcp_recved(ci->pcb, k);
		left -= k;
	}
	return n;
}

static int
pp_stack_lwip_write(struct pp_conn *c, const void *buf, size_t len)
{
	struct tcp_pcb *pcb = c->impl->pcb;
	if (pcb == NULL || len > 0xffff || tcp_sndbuf(pcb) < len ||
		tcp_write(pcb, buf, (u16_t)len, TCP_WRITE_FLAG_COPY) != ERR_OK)
		return -1;
	tcp_output(pcb);
	return 0;
}

static bool
pp_stack_lwip_unacked(struct pp_conn *c)
{
	const struct tcp_pcb *pcb = c->impl->pcb;
	return pcb != NULL && (pcb->unsent != NULL || pcb->unacked != NULL);
}

static uint64_t
pp_stack_lwip_release(struct pp_conn *c)
{
	struct pp_conn_impl *ci = c->impl;
	uint64_t unread = ci->pending;
	free_pending(ci);
	struct tcp_pcb *pcb = ci->pcb;
	ci->pcb = NULL;
	if (pcb == NULL)
		return unread;
	tcp_arg(pcb, NULL);
	tcp_recv(pcb, NULL);
	tcp_err(pcb, NULL);
	/* Unread data discarded: the peer is told with a RST, as a kernel does. */
	if (unread != 0 || tcp_close(pcb) != ERR_OK)
		tcp_abort(pcb);
	return unread;
}

#if PP_LWIP_OWN
#define LWIP_BUILD                                                                       \
	"lwip 2.1 from Debian's source package, runtime/stack/lwip/lwipopts.h (NO_SYS, " \
	"static pools, 256 KiB window), raw API"
#else
#define LWIP_BUILD "lwip (Debian liblwip 2.1, raw API, no tcpip thread)"
#endif

const struct pp_stack_ops pp_stack_lwip_ops = {
	.describe = LWIP_BUILD,
	.counts_frames = true,
	.mem_mb = TX_POOL_MB,
	.open = pp_stack_lwip_open,
	.close = pp_stack_lwip_close,
	.poll_begin = pp_stack_lwip_begin,
	.poll_end = pp_stack_lwip_end,
	.read = pp_stack_lwip_read,
	.write = pp_stack_lwip_write,
	.unacked = pp_stack_lwip_unacked,
	.release = pp_stack_lwip_release,
};
