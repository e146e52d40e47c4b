/* R, P and T poll loops.  Nothing here allocates, locks, logs or prints.
 * Backpressure: R asks the port for no more than the R->P ring can hold and
 * P dequeues no more than the P->T ring can hold, so a ring enqueue never
 * fails and nothing is dropped for lack of room. */
#include "pp_task.h"
#include "pp_profile.h"

#include <sched.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_prefetch.h>

uint32_t pp_stop_flag;

/* Counters are read by the main lcore while they change: relaxed atomic
 * stores keep that well defined and compile to plain moves on x86. */
static inline void
bump(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED);
}

static inline bool
stopping(void)
{
	return __atomic_load_n(&pp_stop_flag, __ATOMIC_RELAXED) != 0;
}

static void
finish(struct pp_task *t)
{
	__atomic_store_n(&t->ctr->done_tsc, rte_rdtsc(), __ATOMIC_RELAXED);
	__atomic_store_n(&t->ctr->done, 1, __ATOMIC_RELEASE);
	t->finished = true;
}

static inline bool
upstream_done(const struct pp_task *t)
{
	return __atomic_load_n(&t->inst->tasks[t->role - 1].ctr->done, __ATOMIC_ACQUIRE) != 0;
}

/* Some PMDs hand over mbufs whose segments hold fewer bytes than pkt_len
 * (DPDK 22.11 net_pcap keeps the length of frames over 64 KiB in 16 bits).
 * An app that trusts pkt_len would read past the chain: make pkt_len what
 * the chain really holds, and count it.  Costs one compare per packet on
 * the mbuf line the driver has just written. */
static inline void
repair_chain(struct rte_mbuf *m, struct pp_task_counters *c)
{
	if (likely(m->nb_segs == 1 && m->data_len == m->pkt_len && m->next == NULL))
		return;
	uint32_t held = 0;
	uint16_t segs = 0;
	for (struct rte_mbuf *s = m; s != NULL; s = s->next, segs++)
		held += s->data_len;
	if (held != m->pkt_len || segs != m->nb_segs) {
		m->pkt_len = held;
		m->nb_segs = segs;
		bump(&c->chains_repaired, 1);
	}
}

static void
poll_r(struct pp_task *t)
{
	struct pp_instance_rt *in = t->inst;
	struct pp_task_counters *c = t->ctr;
	struct rte_mbuf *pkts[PP_BURST];
	PP_PROF_START(pt);

	if (stopping() || (in->packet_limit != 0 && c->packets >= in->packet_limit)) {
		finish(t);
		return;
	}
	unsigned want = RTE_MIN((unsigned)PP_BURST, rte_ring_free_count(in->r_to_p));
	if (in->packet_limit != 0)
		want = (unsigned)RTE_MIN((uint64_t)want, in->packet_limit - c->packets);
	uint64_t t0 = rte_rdtsc();
	uint16_t n = want == 0
		? 0
		: rte_eth_rx_burst(in->place.rx.port, in->place.rx.queue, pkts, (uint16_t)want);
	if (n == 0) {
		bump(&c->empty_polls, 1);
		PP_PROF_MARK(c, pt, want == 0 ? PP_PROF_BACKPRESSURE : PP_PROF_EMPTY_POLL);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		repair_chain(pkts[i], c);
	PP_PROF_MARK(c, pt, PP_PROF_RECEIVE);
	/* Single producer and room checked above: all n go in. */
	rte_ring_sp_enqueue_burst(in->r_to_p, (void **)pkts, n, NULL);
	bump(&c->packets, n);
	bump(&c->bursts, 1);
	bump(&c->cycles, rte_rdtsc() - t0);
	PP_PROF_MARK(c, pt, PP_PROF_RING);
}

static void
poll_p(struct pp_task *t)
{
	struct pp_instance_rt *in = t->inst;
	struct pp_task_counters *c = t->ctr;
	struct rte_mbuf *pkts[PP_BURST], *fwd[PP_BURST], *drop[PP_BURST];
	bool r_done = upstream_done(t); /* read before the dequeue: see below */
	PP_PROF_START(pt);

	unsigned want = RTE_MIN((unsigned)PP_BURST, rte_ring_free_count(in->p_to_t));
	uint64_t t0 = rte_rdtsc();
	unsigned n =
		want == 0 ? 0 : rte_ring_sc_dequeue_burst(in->r_to_p, (void **)pkts, want, NULL);
	if (n == 0) {
		/* R finished before we looked and its ring is empty: nothing
		 * can arrive any more. */
		if (r_done && want != 0 && rte_ring_empty(in->r_to_p))
			finish(t);
		else
			bump(&c->empty_polls, 1);
		PP_PROF_MARK(c, pt, want == 0 ? PP_PROF_BACKPRESSURE : PP_PROF_EMPTY_POLL);
		return;
	}
	PP_PROF_MARK(c, pt, PP_PROF_RING);
	for (unsigned i = 0; i < n; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	in->app->process(in->app_task_state, pkts, (uint16_t)n, t->verdict);
	unsigned nf = 0, nd = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned v = t->verdict[i];
		if (v == PP_VERDICT_FORWARD) {
			fwd[nf++] = pkts[i];
		} else {
			unsigned reason =
				v <= in->app->n_drop_reasons ? v - 1 : in->bad_verdict_reason;
			bump(&c->dropped[reason], 1);
			drop[nd++] = pkts[i];
		}
	}
	if (nd != 0)
		rte_pktmbuf_free_bulk(drop, nd);
	PP_PROF_MARK(c, pt, PP_PROF_PROCESS);
	if (nf != 0)
		rte_ring_sp_enqueue_burst(in->p_to_t, (void **)fwd, nf, NULL);
	bump(&c->packets, n);
	bump(&c->bursts, 1);
	bump(&c->cycles, rte_rdtsc() - t0);
	PP_PROF_MARK(c, pt, PP_PROF_RING);
}

static void
poll_t(struct pp_task *t)
{
	struct pp_instance_rt *in = t->inst;
	struct pp_task_counters *c = t->ctr;
	bool p_done = upstream_done(t);
	uint64_t t0 = rte_rdtsc();
	PP_PROF_START(pt);

	if (t->n_held == 0) {
		unsigned n =
			rte_ring_sc_dequeue_burst(in->p_to_t, (void **)t->held, PP_BURST, NULL);
		if (n == 0) {
			if (p_done && rte_ring_empty(in->p_to_t))
				finish(t);
			else
				bump(&c->empty_polls, 1);
			PP_PROF_MARK(c, pt, PP_PROF_EMPTY_POLL);
			return;
		}
		t->n_held = (uint16_t)n;
		t->held_off = 0;
		PP_PROF_MARK(c, pt, PP_PROF_RING);
	}
	struct rte_mbuf **pkts = &t->held[t->held_off];
	uint64_t bytes = 0;
	for (unsigned i = 0; i < t->n_held; i++)
		bytes += rte_pktmbuf_pkt_len(pkts[i]);
	uint16_t sent = rte_eth_tx_burst(in->place.tx.port, in->place.tx.queue, pkts, t->n_held);
	for (unsigned i = sent; i < t->n_held; i++)
		bytes -= rte_pktmbuf_pkt_len(pkts[i]);
	t->held_off = (uint16_t)(t->held_off + sent);
	t->n_held = (uint16_t)(t->n_held - sent);
	if (sent == 0) {
		bump(&c->empty_polls, 1);
		/* A port that takes nothing for a second after the stop would
		 * keep the run from ending: give up on what it holds. */
		if (stopping()) {
			if (t->stop_seen_tsc == 0)
				t->stop_seen_tsc = t0;
			else if (t0 - t->stop_seen_tsc > rte_get_tsc_hz()) {
				rte_pktmbuf_free_bulk(pkts, t->n_held);
				bump(&c->dropped[in->tx_failed_reason], t->n_held);
				t->n_held = 0;
			}
		}
		PP_PROF_MARK(c, pt, PP_PROF_BACKPRESSURE);
		return;
	}
	bump(&c->packets, sent);
	bump(&c->bytes, bytes);
	bump(&c->bursts, 1);
	bump(&c->cycles, rte_rdtsc() - t0);
	PP_PROF_MARK(c, pt, PP_PROF_TRANSMIT);
}

int
pp_lcore_main(void *arg)
{
	struct pp_lcore_plan *plan = arg;
	rte_cpuset_t set;

	/* Re-pin on every run: a later run may give this lcore another context. */
	CPU_ZERO(&set);
	CPU_SET(plan->context, &set);
	if (rte_thread_set_affinity(&set) != 0)
		return -1;
	int cpu = sched_getcpu();
	for (unsigned i = 0; i < plan->n_tasks; i++)
		__atomic_store_n(&plan->tasks[i]->ctr->observed_cpu, cpu, __ATOMIC_RELAXED);
	for (;;) {
		unsigned active = 0;
		for (unsigned i = 0; i < plan->n_tasks; i++) {
			struct pp_task *t = plan->tasks[i];
			if (t->finished)
				continue;
			active++;
			switch (t->role) {
			case PP_ROLE_R:
				poll_r(t);
				break;
			case PP_ROLE_P:
				poll_p(t);
				break;
			default:
				poll_t(t);
				break;
			}
		}
		if (active == 0)
			return 0;
	}
}
