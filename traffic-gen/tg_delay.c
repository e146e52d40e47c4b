/* Delay line: a stand-in device under test with a known latency (and,
 * optionally, a known capacity).  Each packet is held until its arrival TSC
 * plus --delay-us, then sent on; packets beyond --capacity-pps (token bucket
 * --capacity-burst deep, clocked by the packets' signature send times when
 * they carry one) are dropped and counted.  Used to check the generator's
 * latency and throughput measurements against known answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "tg_ctx.h"
#include "tg_delay.h"
#include "tg_report.h"
#include "tg_signature.h"

#define QUEUE_SLOTS (1u << 16)

struct held {
	struct rte_mbuf *m;
	uint64_t due;
};

struct delay_state {
	uint16_t in, out;
	uint64_t delay_cyc;
	double tokens_per_cycle;
	double burst; /* token bucket depth, packets */
	struct held *q;
	uint32_t head, tail; /* head: next to send; tail: next free */
	uint64_t rx, tx, over_capacity, queue_full, tx_full;
};

static int
delay_main(void *arg)
{
	struct delay_state *d = arg;
	struct rte_mbuf *pkts[TG_BURST];
	double tokens = d->burst;
	uint64_t last = rte_rdtsc();

	while (!pp_stop_signals && rte_rdtsc() < tg_run.end_tsc) {
		uint16_t n = rte_eth_rx_burst(d->in, 0, pkts, TG_BURST), k = 0;
		/* after the receive: a TSC read before it could predate a packet's
		 * arrival by a preemption and release the packet early */
		uint64_t now = rte_rdtsc();

		for (uint16_t i = 0; i < n; i++) {
			if (d->tokens_per_cycle > 0) {
				/* The bucket runs on the packet's send time when it
				 * carries a signature, so that the capacity does not
				 * depend on when this process got the CPU. */
				const uint8_t *p = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
				unsigned off = 0;
				uint64_t t = now;
				struct tg_sig sig;

				if (tg_rx_decode(p, rte_pktmbuf_data_len(pkts[i]), &off) ==
					TG_RX_SIGNED) {
					memcpy(&sig, p + off, sizeof(sig));
					if (sig.magic == TG_SIG_MAGIC && sig.tsc && sig.tsc <= now)
						t = sig.tsc;
				}
				if (t > last) {
					tokens += (double)(t - last) * d->tokens_per_cycle;
					if (tokens > d->burst)
						tokens = d->burst;
					last = t;
				}
				if (tokens < 1) {
					rte_pktmbuf_free(pkts[i]);
					d->over_capacity++;
					continue;
				}
				tokens -= 1;
			}
			if (d->tail - d->head == QUEUE_SLOTS) {
				rte_pktmbuf_free(pkts[i]);
				d->queue_full++;
				continue;
			}
			d->q[d->tail % QUEUE_SLOTS] = (struct held){ pkts[i], now + d->delay_cyc };
			d->tail++;
		}
		d->rx += n;
		while (d->head + k != d->tail && k < TG_BURST &&
			d->q[(d->head + k) % QUEUE_SLOTS].due <= now) {
			pkts[k] = d->q[(d->head + k) % QUEUE_SLOTS].m;
			k++;
		}
		if (k) {
			uint16_t sent = rte_eth_tx_burst(d->out, 0, pkts, k);

			if (sent < k) {
				rte_pktmbuf_free_bulk(pkts + sent, k - sent);
				d->tx_full += k - sent;
			}
			d->tx += sent;
			d->head += k;
		}
	}
	return 0;
}

int
tg_delay_line(struct tg_ctx *x)
{
	const struct tg_cfg *c = x->cfg;
	struct delay_state d = { 0 };
	uint64_t hz = rte_get_tsc_hz(), queued;
	unsigned lcore = rte_get_next_lcore(-1, 1, 0);
	json_t *root;
	int rc;

	d.in = (uint16_t)c->rx_port;
	d.out = (uint16_t)(c->out_port >= 0 ? c->out_port : c->rx_port);
	d.delay_cyc = (uint64_t)(c->delay_us * 1e-6 * (double)hz);
	d.tokens_per_cycle = c->capacity_pps / (double)hz;
	d.burst = c->capacity_burst;
	d.q = calloc(QUEUE_SLOTS, sizeof(*d.q));
	if (!d.q) {
		fprintf(stderr, "pp-tgen: out of memory\n");
		return -1;
	}
	tg_run.start_tsc = rte_rdtsc();
	tg_run.end_tsc = c->duration_s > 0
		? tg_run.start_tsc + (uint64_t)(c->duration_s * (double)hz)
		: UINT64_MAX;
	rte_eal_remote_launch(delay_main, &d, lcore);
	/* Sleep rather than spin: the box may have fewer cores than threads. */
	while (rte_eal_get_lcore_state(lcore) == RUNNING)
		usleep(2000);
	rte_eal_wait_lcore(lcore);
	queued = d.tail - d.head;
	for (uint32_t i = d.head; i != d.tail; i++)
		rte_pktmbuf_free(d.q[i % QUEUE_SLOTS].m);
	root = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:b}",
		"tool", "pp-tgen", "mode", "delay", "kind", "measured", "duration_s",
		(double)(rte_rdtsc() - tg_run.start_tsc) / (double)hz, "delay_us", c->delay_us,
		"capacity_pps", c->capacity_pps, "rx_packets", (json_int_t)d.rx, "tx_packets",
		(json_int_t)d.tx, "dropped_by_reason", "over_capacity", (json_int_t)d.over_capacity,
		"queue_full", (json_int_t)d.queue_full, "tx_full", (json_int_t)d.tx_full,
		"queued_packets", (json_int_t)queued, "accounting_ok",
		d.rx == d.tx + d.over_capacity + d.queue_full + d.tx_full + queued);
	rc = tg_report_write(c, root);
	json_decref(root);
	free(d.q);
	return rc;
}
