/* One run: start every worker at a common TSC, watch them (live line each
 * second), stop TX at the end, let RX drain, and collect what was measured. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "tg_ctx.h"
#include "tg_run.h"
#include "tg_rx.h"
#include "tg_tx.h"
#include "tg_worker.h"

struct tg_run tg_run;

static bool
tx_all_done(const struct tg_ctx *x)
{
	for (unsigned i = 0; i < x->n_tx; i++)
		if (!__atomic_load_n(&x->tx[i].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static void
sums(const struct tg_ctx *x, uint64_t *txp, uint64_t *txb, uint64_t *rxp, uint64_t *lf)
{
	*txp = *txb = *rxp = *lf = 0;
	for (unsigned i = 0; i < x->n_tx; i++) {
		*txp += tg_read(&x->tx[i].c.packets);
		*txb += tg_read(&x->tx[i].c.bytes);
		*lf += tg_read(&x->tx[i].c.link_full);
	}
	for (unsigned i = 0; i < x->n_rx; i++)
		*rxp += tg_read(&x->rx[i].packets);
}

static void
live_line(const struct tg_ctx *x, double t, uint64_t dtx, uint64_t dtxb, uint64_t drx, uint64_t txp,
	uint64_t rxp, uint64_t lf, double dt)
{
	fprintf(stderr,
		"[measured] %6.1fs  tx %10.3f kpps %9.2f Mb/s  rx %10.3f kpps  total tx %llu rx "
		"%llu link_full %llu\n",
		t, dtx / dt / 1e3, dtxb * 8.0 / dt / 1e6, drx / dt / 1e3, (unsigned long long)txp,
		(unsigned long long)rxp, (unsigned long long)lf);
	(void)x;
}

static void
collect(const struct tg_ctx *x, struct tg_result *r, uint64_t end_tsc)
{
	uint64_t last = tg_run.start_tsc, sent = tg_run.start_tsc;

	memset(r, 0, sizeof(*r));
	tg_hist_init(&r->all);
	for (unsigned i = 0; i < TG_STREAM_IDS; i++)
		tg_hist_init(&r->s[i].hist);
	for (unsigned i = 0; i < x->n_tx; i++) {
		const struct tg_txjob *j = &x->tx[i];
		struct tg_stream_result *s = &r->s[j->id];

		s->local = true;
		s->tx_packets = j->c.packets;
		s->tx_bytes = j->c.bytes;
		s->link_full = j->c.link_full;
		s->alloc_fail = j->c.alloc_fail;
		s->asked_pps = j->pps;
		r->tx_packets += j->c.packets;
		r->tx_bytes += j->c.bytes;
		r->link_full += j->c.link_full;
		r->alloc_fail += j->c.alloc_fail;
		if (j->c.stop_tsc > last)
			last = j->c.stop_tsc;
		if (j->c.sent_tsc > sent)
			sent = j->c.sent_tsc;
	}
	r->duration_s = (double)(last - tg_run.start_tsc) / x->hz;
	r->sent_window_s = (double)(RTE_MAX(last, sent) - tg_run.start_tsc) / x->hz;
	r->rx_window_s = (double)(end_tsc - tg_run.start_tsc) / x->hz;
	for (unsigned q = 0; q < x->n_rx; q++) {
		const struct tg_rxjob *j = &x->rx[q];

		r->rx_packets += j->packets;
		r->rx_bytes += j->bytes;
		r->foreign += j->foreign;
		r->foreign_bytes += j->foreign_bytes;
		r->stale += j->stale;
		r->no_timestamp += j->no_timestamp;
		for (unsigned k = 0; k < TG_RX_REASONS; k++)
			r->why[k] += j->why[k];
		for (unsigned i = 0; i < TG_STREAM_IDS; i++) {
			tg_seq_merge(&r->s[i].seq, &j->seq[i]);
			tg_hist_merge(&r->s[i].hist, &j->hist[i]);
		}
	}
	for (unsigned i = 0; i < TG_STREAM_IDS; i++) {
		struct tg_stream_result *s = &r->s[i];
		uint64_t unique = tg_seq_unique(&s->seq);
		uint64_t expected = s->local ? s->tx_packets : s->seq.next;

		r->rx_unique += unique;
		r->rx_duplicates += s->seq.duplicates;
		r->rx_reordered += s->seq.reordered;
		r->rx_late_unchecked += s->seq.late_unchecked;
		if (x->n_rx)
			r->rx_lost += expected > unique ? expected - unique : 0;
		tg_hist_merge(&r->all, &s->hist);
	}
}

int
tg_run_once(struct tg_ctx *x, double duration_s, struct tg_result *r)
{
	uint64_t hz = rte_get_tsc_hz(), next_live, prev_tx = 0, prev_txb = 0, prev_rx = 0;
	uint64_t txp, txb, rxp, lf, drain_end = 0, now, last_rx = UINT64_MAX, quiet_until = 0;

	for (unsigned i = 0; i < x->n_tx; i++) {
		x->tx[i].epoch = x->epoch;
		tg_txjob_reset(&x->tx[i]);
	}
	for (unsigned i = 0; i < x->n_rx; i++)
		tg_rxjob_reset(&x->rx[i], x->epoch);
	tg_run.tx_stop = 0;
	tg_run.rx_stop = 0;
	/* A common start 20 ms ahead, so that every job counts from the same TSC. */
	tg_run.start_tsc = rte_rdtsc() + hz / 50 + (uint64_t)(x->cfg->start_after_s * (double)hz);
	tg_run.end_tsc = duration_s > 0 ? tg_run.start_tsc + (uint64_t)(duration_s * (double)hz)
					: UINT64_MAX;
	rte_smp_wmb();
	for (unsigned i = 0; i < x->n_w; i++)
		if (x->w[i].n_tx || x->w[i].n_rx)
			rte_eal_remote_launch(tg_worker_main, &x->w[i], x->w[i].lcore);
	next_live = tg_run.start_tsc + hz;
	for (;;) {
		usleep(2000);
		now = rte_rdtsc();
		if (pp_stop_signals)
			tg_run.tx_stop = 1;
		if (x->live && now >= next_live) {
			sums(x, &txp, &txb, &rxp, &lf);
			live_line(x, (double)(now - tg_run.start_tsc) / (double)hz, txp - prev_tx,
				txb - prev_txb, rxp - prev_rx, txp, rxp, lf,
				(double)(now - next_live + hz) / (double)hz);
			prev_tx = txp;
			prev_txb = txb;
			prev_rx = rxp;
			next_live = now + hz;
		}
		if (x->n_tx == 0) { /* sink only: receive for --duration or until a signal */
			if (pp_stop_signals || now >= tg_run.end_tsc)
				break;
			continue;
		}
		if (!drain_end && tx_all_done(x)) {
			drain_end = now + (uint64_t)(x->cfg->drain_s * (double)hz);
			if (x->n_rx == 0)
				break;
		}
		if (drain_end && now >= drain_end) {
			/* Past the drain time, go on while packets still arrive (a
			 * DUT emptying its queues), up to 5 s more: a packet of this
			 * run must not turn up stale in the next. */
			sums(x, &txp, &txb, &rxp, &lf);
			if (rxp != last_rx && now < drain_end + 5 * hz) {
				last_rx = rxp;
				quiet_until = now + hz / 10;
			} else if (now >= quiet_until) {
				break;
			}
		}
		if (pp_stop_signals > 1)
			break;
	}
	tg_run.rx_stop = 1;
	rte_eal_mp_wait_lcore();
	x->cfg->start_after_s = 0; /* only before the first run */
	collect(x, r, rte_rdtsc());
	return 0;
}
