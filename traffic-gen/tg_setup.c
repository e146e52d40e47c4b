/* Ports, TX/RX jobs and their worker lcores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "tg_ctx.h"
#include "tg_rx.h"
#include "pp_intr.h"
#include "pp_port.h"
#include "tg_setup.h"
#include "tg_tx.h"

#define RX_DESC 1024
#define TX_DESC 1024

static struct rte_mempool *rx_pool;

static int
port_setup(uint16_t port, uint16_t nrx, uint16_t ntx)
{
	const struct pp_port_conf conf = {
		.n_rx = nrx,
		.n_tx = ntx,
		.rx_desc = RX_DESC,
		.tx_desc = TX_DESC,
		.pool = rx_pool,
		.rss = true,
		.adjust_desc = true,
	};
	struct rte_eth_dev_info info;
	int r;

	if (!rte_eth_dev_is_valid_port(port)) {
		fprintf(stderr,
			"pp-tgen: port %u does not exist (%u ports; give --vdev or PCI devices to "
			"the EAL)\n",
			port, rte_eth_dev_count_avail());
		return -1;
	}
	r = rte_eth_dev_info_get(port, &info);
	if (r == 0 && (nrx > info.max_rx_queues || ntx > info.max_tx_queues)) {
		fprintf(stderr,
			"pp-tgen: port %u (%s) has at most %u RX / %u TX queues; asked %u / %u\n",
			port, info.driver_name, info.max_rx_queues, info.max_tx_queues, nrx, ntx);
		return -1;
	}
	if (pp_port_configure(port, &conf, "pp-tgen"))
		return -1;
	r = pp_port_start(port, true);
	if (r) {
		fprintf(stderr, "pp-tgen: port %u: start failed: %s\n", port, rte_strerror(-r));
		return -1;
	}
	return 0;
}

/* A memif peer or a NIC takes a while to come up; sending before that
 * would count every packet as link_full. */
static int
wait_link(uint16_t port, double wait_s)
{
	struct rte_eth_link link;
	uint64_t end = rte_rdtsc() + (uint64_t)(wait_s * (double)rte_get_tsc_hz());

	do {
		if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status)
			return 0;
		rte_delay_us_sleep(10000);
	} while (rte_rdtsc() < end && pp_stop_signals < 2);
	fprintf(stderr,
		"pp-tgen: port %u: link still down after %.1f s (--link-wait); is the peer "
		"running?\n",
		port, wait_s);
	return -1;
}

/* Physical ports report their speed; virtual ones (vdev bus) get the
 * nominal 10 Gb/s unless --link-gbps says otherwise. */
static void
link_speed(struct tg_ctx *x, int port)
{
	struct rte_eth_dev_info info;
	struct rte_eth_link link;

	x->link_bps = 10e9;
	x->link_source = "nominal (virtual port)";
	if (x->cfg->link_gbps > 0) {
		x->link_bps = x->cfg->link_gbps * 1e9;
		x->link_source = "--link-gbps";
		return;
	}
	if (port < 0 || !rte_eth_dev_is_valid_port((uint16_t)port) ||
		rte_eth_dev_info_get((uint16_t)port, &info))
		return;
	if (strcmp(rte_bus_name(rte_dev_bus(info.device)), "vdev") != 0 &&
		rte_eth_link_get_nowait((uint16_t)port, &link) == 0 && link.link_speed != 0 &&
		link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN) {
		x->link_bps = link.link_speed * 1e6;
		x->link_source = "port";
	}
}

double
tg_stream_pps(const struct tg_ctx *x, const struct tg_stream_cfg *s)
{
	switch (s->rate_kind) {
	case TG_RATE_PPS:
		return s->rate;
	case TG_RATE_PCT:
		return x->link_bps * s->rate / 100.0 /
			((tg_mix_mean_size(&s->sizes) + TG_WIRE_OVERHEAD) * 8.0);
	default:
		return 0;
	}
}

int
tg_setup(struct tg_ctx *x, struct tg_cfg *c)
{
	unsigned nports = rte_eth_dev_count_avail();
	uint16_t nrxq[RTE_MAX_ETHPORTS] = { 0 }, ntxq[RTE_MAX_ETHPORTS] = { 0 };
	bool used[RTE_MAX_ETHPORTS] = { false };
	unsigned lcores[RTE_MAX_LCORE], n_lcores = 0, lc, next = 0;
	int socket = (int)rte_socket_id();

	memset(x, 0, sizeof(*x));
	x->cfg = c;
	x->hz = (double)rte_get_tsc_hz();
	if (nports == 0) {
		fprintf(stderr,
			"pp-tgen: no ports: give the EAL --vdev=net_null0 (or net_memif, net_pcap, "
			"a PCI device)\n");
		return -1;
	}
	RTE_LCORE_FOREACH_WORKER(lc)
	lcores[n_lcores++] = lc;
	if (n_lcores == 0) {
		fprintf(stderr,
			"pp-tgen: needs at least one worker lcore besides the main one (EAL -l "
			"0,1)\n");
		return -1;
	}
	{
		const int ports[] = { c->tx_port, c->rx_port, c->out_port };
		const char *const names[] = { "--tx-port", "--rx-port", "--out-port" };

		for (int i = 0; i < 3; i++)
			if (ports[i] >= 0 &&
				(ports[i] >= RTE_MAX_ETHPORTS ||
					!rte_eth_dev_is_valid_port((uint16_t)ports[i]))) {
				fprintf(stderr,
					"pp-tgen: %s %d: no such port (%u ports; give --vdev or "
					"PCI devices to the EAL)\n",
					names[i], ports[i], nports);
				return -1;
			}
	}
	rx_pool = rte_pktmbuf_pool_create("tg_rx", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (!rx_pool) {
		fprintf(stderr, "pp-tgen: cannot create the RX pool: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	link_speed(x, c->mode == TG_MODE_DELAY ? c->rx_port : c->tx_port);

	if (c->mode == TG_MODE_DELAY) {
		int out = c->out_port >= 0 ? c->out_port : c->rx_port;

		used[c->rx_port] = used[out] = true;
		nrxq[c->rx_port] = 1;
		ntxq[out] = 1;
	} else {
		if (c->tx_port >= 0) {
			struct rte_eth_dev_info info;

			x->n_tx = c->n_streams * c->tx_queues;
			used[c->tx_port] = true;
			ntxq[c->tx_port] = (uint16_t)x->n_tx;
			/* More jobs than the port has queues: jobs share queues, and
			 * the jobs of one queue share one worker lcore. */
			if (rte_eth_dev_is_valid_port((uint16_t)c->tx_port) &&
				rte_eth_dev_info_get((uint16_t)c->tx_port, &info) == 0 &&
				info.max_tx_queues < ntxq[c->tx_port])
				ntxq[c->tx_port] = info.max_tx_queues;
			if (c->tx_queues > ntxq[c->tx_port]) {
				fprintf(stderr,
					"pp-tgen: --tx-queues %u: port %d has %u TX queues\n",
					c->tx_queues, c->tx_port, ntxq[c->tx_port]);
				return -1;
			}
			x->n_txq = ntxq[c->tx_port];
		}
		if (c->rx_port >= 0) {
			x->n_rx = c->rx_queues;
			used[c->rx_port] = true;
			nrxq[c->rx_port] = (uint16_t)c->rx_queues;
		}
		if (x->n_tx == 0 && x->n_rx == 0) {
			fprintf(stderr,
				"pp-tgen: neither --tx-port nor --rx-port: nothing to do\n");
			return -1;
		}
	}
	for (unsigned p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (used[p] && port_setup((uint16_t)p, nrxq[p], ntxq[p]))
			return -1;
	for (unsigned p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (used[p] && wait_link((uint16_t)p, c->link_wait_s))
			return -1;
	if (c->mode == TG_MODE_DELAY)
		return 0;

	x->tx = rte_zmalloc("tg_txjobs", sizeof(*x->tx) * (x->n_tx + 1), RTE_CACHE_LINE_SIZE);
	x->rx = rte_zmalloc("tg_rxjobs", sizeof(*x->rx) * (x->n_rx + 1), RTE_CACHE_LINE_SIZE);
	x->n_w = n_lcores;
	x->w = rte_zmalloc("tg_workers", sizeof(*x->w) * n_lcores, RTE_CACHE_LINE_SIZE);
	if (!x->tx || !x->rx || !x->w) {
		fprintf(stderr, "pp-tgen: out of memory\n");
		return -1;
	}
	for (unsigned i = 0; i < n_lcores; i++)
		x->w[i].lcore = lcores[i];
	for (unsigned s = 0; s < c->n_streams; s++) {
		const struct tg_stream_cfg *sc = &c->stream[s];
		double pps = tg_stream_pps(x, sc);

		for (unsigned q = 0; q < c->tx_queues && c->tx_port >= 0; q++) {
			unsigned id = s * c->tx_queues + q;
			struct tg_txjob *j = &x->tx[id];
			uint64_t limit = 0;

			if (tg_txjob_init(j, sc, c, (uint16_t)c->tx_port, (uint16_t)(id % x->n_txq),
				    (uint8_t)id, socket)) {
				if (sc->pcap[0])
					return -1;
				fprintf(stderr, "pp-tgen: stream '%s': set-up failed\n", sc->name);
				return -1;
			}
			j->pps = pps / c->tx_queues;
			if (c->packets)
				limit = c->packets / c->tx_queues + (q < c->packets % c->tx_queues);
			if (j->pcap && sc->loops) {
				uint64_t l = (uint64_t)j->n_pcap * sc->loops;

				limit = limit ? RTE_MIN(limit, l) : l;
			}
			j->limit = limit;
			x->w[j->queue % n_lcores].tx[x->w[j->queue % n_lcores].n_tx++] = j;
		}
	}
	next = x->n_txq;
	for (unsigned q = 0; q < x->n_rx; q++) {
		struct tg_worker *w = &x->w[next % n_lcores];

		if (tg_rxjob_init(&x->rx[q], (uint16_t)c->rx_port, (uint16_t)q))
			return -1;
		w->rx[w->n_rx++] = &x->rx[q];
		next++;
	}
	return 0;
}

/* DPDK 22.11's memif PMD unmaps the shared region when the peer leaves,
 * under a peer lcore that may be inside rx/tx_burst (seen as a SEGV in the
 * PMD).  Quiesce, then disconnect: our workers have stopped polling; keep
 * the ports open until the peer has closed its side, so that neither side
 * polls while the other leaves.  The PMD marks the link down when it starts
 * handling the peer's leaving (on the interrupt thread) and frees the region
 * after: wait for that to finish too, or our own stop frees it again at the
 * same time (test_tgen_memif_teardown.py).  The first stop signal
 * (which ended the sending) keeps this wait: a peer told "stop sending" next
 * reads what is still queued, then leaves; a second signal ends the wait. */
static void
wait_peers_gone(double wait_s)
{
	struct rte_eth_link link;
	uint64_t end = rte_rdtsc() + (uint64_t)(wait_s * (double)rte_get_tsc_hz());
	uint16_t p;
	bool up;

	do {
		up = false;
		RTE_ETH_FOREACH_DEV(p)
		up |= rte_eth_link_get_nowait(p, &link) == 0 && link.link_status;
		if (!up) {
			if (pp_intr_sync(10) != 0)
				fprintf(stderr,
					"pp-tgen: warning: the interrupt thread did not "
					"finish the peer's disconnect within 10 s\n");
			return;
		}
		rte_delay_us_sleep(10000);
	} while (rte_rdtsc() < end && pp_stop_signals < 2);
}

void
tg_teardown(struct tg_ctx *x)
{
	uint16_t p;

	if (x->cfg->peer_wait_s > 0)
		wait_peers_gone(x->cfg->peer_wait_s);
	RTE_ETH_FOREACH_DEV(p)
	pp_port_stop(p, true);
	for (unsigned i = 0; i < x->n_tx; i++) {
		free(x->tx[i].gap_err);
		free(x->tx[i].late);
	}
	for (unsigned i = 0; i < x->n_rx; i++) {
		free(x->rx[i].seq);
		free(x->rx[i].hist);
	}
}
