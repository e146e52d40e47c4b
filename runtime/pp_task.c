/* R, P and T poll loops.  Nothing here allocates, locks, logs or prints.
 * Backpressure: R asks the port for no more than the R->P ring can hold and
 * P dequeues no more than the P->T ring can hold, so a ring enqueue never
 * fails and nothing is dropped for lack of room.
 *
 * Fused instances: when R, P and T of one instance run on the same lcore,
 * one poll takes R's burst straight through P and T (no ring round trip);
 * every counter moves as if the three had polled one after another.
 *
 * Counters are written once per burst, never per packet; a task reads the
 * task upstream of it (its done flag, a line that task writes) only when
 * its own ring came up empty.
 *
 * Time: every poll reads the TSC once, when it ends, and hands that to the
 * next poll on the lcore as its start (a fused poll reads it once per
 * role).  A TSC read costs about 32 cycles on the development VM, one
 * cycle per packet of a burst of 32 (the fused layout takes about 80), so
 * no read is spent on a start that the previous end already gives. */
#include "pp_task.h"
#include "pp_profile.h"

#include <assert.h>
#if defined(RTE_ARCH_X86)
#include <cpuid.h>
#endif
#include <sched.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>

uint32_t pp_stop_flag;

#ifdef NDEBUG
#define NDEBUG_BUILD 1
#else
#define NDEBUG_BUILD 0
#endif

/* Counters are read by the main lcore while they change: relaxed atomic
 * stores keep that well defined and compile to plain moves on x86. */
static inline void
bump(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED);
}

/* The three counters of a poll that moved packets. */
static inline void
bump_burst(struct pp_task_counters *c, uint64_t packets, uint64_t cycles)
{
	bump(&c->packets, packets);
	bump(&c->bursts, 1);
	bump(&c->cycles, cycles);
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

/* Acquire: once it reads true, everything the upstream task enqueued
 * before finishing is visible in the ring. */
static inline bool
upstream_done(const struct pp_task *t)
{
	return __atomic_load_n(&t->inst->tasks[t->role - 1].ctr->done, __ATOMIC_ACQUIRE) != 0;
}

/* Some PMDs hand over mbufs whose segments hold fewer bytes than pkt_len
 * (DPDK 22.11 net_pcap keeps the length of frames over 64 KiB in 16 bits).
 * An app that trusts pkt_len would read past the chain: make pkt_len what
 * the chain really holds, and count it.  Called per packet only for bursts
 * in which not_plain() saw a packet that is not one plain segment. */
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

/* Non-zero when the mbuf is anything but one segment holding pkt_len
 * bytes.  Branch-free, on the first mbuf line only (the one the driver has
 * just written).  A single segment whose next is set would break DPDK's
 * own invariant (nb_segs counts the chain): not looked for. */
static inline uint32_t
not_plain(const struct rte_mbuf *m)
{
	return ((uint32_t)m->nb_segs ^ 1u) | ((uint32_t)m->data_len ^ m->pkt_len);
}

/* Fused R: not_plain() over the burst, in the pass that prefetches the
 * packet headers for P, summing pkt_len on the way (T's bytes when every
 * packet goes out, the usual case: no second pass over the mbufs). */
static inline uint32_t
prefetch_and_check(struct rte_mbuf **pkts, unsigned n, uint64_t *bytes)
{
	/* 32 bits hold the sum where it is used: plain packets, each of at
	 * most 65535 bytes (data_len), PP_BURST of them. */
	RTE_BUILD_BUG_ON(PP_BURST > 0xffffffffu / 0xffffu);
	uint32_t odd = 0, sum = 0;
	for (unsigned i = 0; i < n; i++) {
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
		odd |= not_plain(pkts[i]);
		sum += rte_pktmbuf_pkt_len(pkts[i]);
	}
	*bytes = sum;
	return odd;
}

static inline void
repair_burst(struct rte_mbuf **pkts, unsigned n, struct pp_task_counters *c)
{
	for (unsigned i = 0; i < n; i++)
		repair_chain(pkts[i], c);
}

/* P's work on a burst: the app's verdicts, dropped packets freed and
 * counted by reason, forwarded ones packed into fwd (which may be pkts
 * itself: the fused poll packs in place).  Returns how many were
 * forwarded. */
static inline unsigned
process_burst(struct pp_task *t, struct rte_mbuf **pkts, unsigned n, struct rte_mbuf **fwd)
{
	struct pp_instance_rt *in = t->inst;
	uint8_t *verdict = t->verdict;
	in->app->process(in->app_task_state, pkts, (uint16_t)n, verdict);
	/* All forwarded, the usual case: one pass over the verdict bytes. */
	uint8_t any = 0;
	for (unsigned i = 0; i < n; i++)
		any |= verdict[i];
	if (likely(any == PP_VERDICT_FORWARD)) {
		if (fwd != pkts)
			memcpy(fwd, pkts, n * sizeof(*pkts));
		return n;
	}
	/* Some dropped: the rare path.  Counted by reason per burst.  Each
	 * packet is read before fwd[nf] (nf <= i) is written: safe in place. */
	struct rte_mbuf *drop[PP_BURST];
	uint8_t by_reason[PP_MAX_DROP_REASONS];
	unsigned nf = 0, nd = 0, n_reasons = in->app->n_drop_reasons + 1; /* + bad_verdict */
	memset(by_reason, 0, n_reasons);
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		unsigned v = verdict[i];
		if (v == PP_VERDICT_FORWARD) {
			fwd[nf++] = m;
			continue;
		}
		by_reason[v <= in->app->n_drop_reasons ? v - 1 : in->bad_verdict_reason]++;
		drop[nd++] = m;
	}
	for (unsigned k = 0; k < n_reasons; k++)
		if (by_reason[k] != 0)
			bump(&t->ctr->dropped[k], by_reason[k]);
	rte_pktmbuf_free_bulk(drop, nd);
	return nf;
}

/* send_held's held_bytes when the caller does not know them. */
#define BYTES_UNKNOWN UINT64_MAX

/* T: send what it holds (t->held from held_off); the port may take part.
 * Counts what went; after a stop, gives up on a port that takes nothing
 * for a second.  t0: when the poll started; held_bytes: the held packets'
 * pkt_len sum where the caller has it (the fused poll, when P forwarded
 * R's whole burst; apps keep lengths, pp_app.h), else BYTES_UNKNOWN.
 * Sets *sent, returns the TSC when it ends. */
static uint64_t
send_held(struct pp_task *t, uint64_t t0, uint16_t *sent_out, uint64_t held_bytes)
{
	struct pp_instance_rt *in = t->inst;
	struct pp_task_counters *c = t->ctr;
	struct rte_mbuf **pkts = &t->held[t->held_off];
	uint64_t bytes = 0;
	if (held_bytes == BYTES_UNKNOWN || !NDEBUG_BUILD)
		for (unsigned i = 0; i < t->n_held; i++)
			bytes += rte_pktmbuf_pkt_len(pkts[i]);
	/* Builds with assertions (the sanitizer builds the tests use) check
	 * the caller's sum: an app that changed a length would break it. */
	assert(held_bytes == BYTES_UNKNOWN || held_bytes == bytes);
	if (held_bytes != BYTES_UNKNOWN)
		bytes = held_bytes;
	uint16_t sent = in->app->tx != NULL
		? in->app->tx(in->app_task_state, pkts, t->n_held)
		: rte_eth_tx_burst(in->place.tx.port, in->place.tx.queue, pkts, t->n_held);
	for (unsigned i = sent; i < t->n_held; i++)
		bytes -= rte_pktmbuf_pkt_len(pkts[i]);
	t->held_off = (uint16_t)(t->held_off + sent);
	t->n_held = (uint16_t)(t->n_held - sent);
	*sent_out = sent;
	uint64_t end = rte_rdtsc();
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
		return end;
	}
	bump(&c->bytes, bytes);
	bump_burst(c, sent, end - t0);
	return end;
}

static inline bool
r_should_finish(const struct pp_task *t)
{
	const struct pp_instance_rt *in = t->inst;
	return stopping() || (in->packet_limit != 0 && t->ctr->packets >= in->packet_limit);
}

static inline unsigned
r_limit(const struct pp_task *t, unsigned want)
{
	const struct pp_instance_rt *in = t->inst;
	if (in->packet_limit != 0)
		want = (unsigned)RTE_MIN((uint64_t)want, in->packet_limit - t->ctr->packets);
	return want;
}

#if defined(RTE_ARCH_X86)
/* PREFETCHW (a request for ownership: the line comes in the modified
 * state, where a read prefetch leaves it shared) written out by hand:
 * DPDK's pkg-config flags target corei7, which lacks PRFCHW, so
 * rte_prefetch0_write and __builtin_prefetch(p, 1) compile to a read
 * prefetch there.  Only where the CPU has it (CPUID 0x80000001 ECX bit 8):
 * older CPUs may fault on the opcode. */
static bool have_prefetchw;

static void __attribute__((constructor)) detect_prefetchw(void)
{
	unsigned a, b, c, d;
	have_prefetchw = __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & (1u << 8)) != 0;
}

static inline void
prefetch_own(uint64_t addr)
{
	if (have_prefetchw)
		asm volatile("prefetchw %0" : : "m"(*(const volatile char *)(uintptr_t)addr));
}
#else
static inline void
prefetch_own(uint64_t addr)
{
	rte_prefetch0_write((const void *)(uintptr_t)addr);
}
#endif

/* Split R (P or T on another context): take ownership of the lines that
 * the driver's next burst writes first in each of the n buffers this
 * lcore's mempool cache hands out next (its top: the cache is a stack, and
 * the driver allocates from it).  Those buffers last went through P's
 * context: its reads leave the mbuf's first line shared there, its header
 * rewrite leaves the frame's first line modified there.  A driver that
 * writes its buffers on the CPU (net_pcap copies each frame, every driver
 * resets the mbuf header) would wait for each line in turn, since the
 * atomics between its packets drain the store buffer.  Here the first
 * line's invalidations go out together (a plain store of the word that is
 * there: no atomic between them), and the frame's first line is asked for
 * in the modified state (prefetch_own), all n before the driver runs.
 * Measured in apps/ipfwd/notes/2026-11-25-p-alone.md.  The buffers are
 * free and only this lcore takes from its cache: the value-preserving store
 * changes nothing any user can see. */
static inline void
own_next_mbufs(struct rte_mempool *pool, unsigned n)
{
	struct rte_mempool_cache *cache = rte_mempool_default_cache(pool, rte_lcore_id());
	if (cache == NULL || cache->len < n)
		return; /* the driver's get refills the cache from the pool's ring first */
	for (unsigned i = 1; i <= n; i++) {
		volatile uint64_t *w = cache->objs[cache->len - i];
		RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, buf_addr) != 0);
		uint64_t buf_addr = *w; /* the mbuf's first word */
		*w = buf_addr;
		prefetch_own(buf_addr + RTE_PKTMBUF_HEADROOM);
	}
}

/* Split T whose P runs on another context, with an R on T's lcore: the
 * buffers T frees go to the top of the lcore's mempool cache, and that R's
 * port takes them back next and rewrites them (the mbuf's first line, and
 * the frame's, which net_pcap copies into).  P's context last read the
 * first and wrote the second; asking for both in the modified state as T
 * takes the burst puts the transfers in flight while T transmits, one burst
 * ahead of R's receive, where own_next_mbufs only starts them as R's
 * receive begins.  Measured in
 * apps/ipfwd/notes/2026-11-26-t-owns-freed-lines.md.  Where no R runs on
 * T's lcore the buffers go elsewhere, and owning their lines here would
 * only move them away from the R that takes them (mark_owners). */
static inline void
own_freed_lines(struct rte_mbuf *const *pkts, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		prefetch_own((uint64_t)(uintptr_t)pkts[i]);
	for (unsigned i = 0; i < n; i++)
		prefetch_own((uint64_t)(uintptr_t)pkts[i]->buf_addr + pkts[i]->data_off);
}

/* R of an app with its own rx (pp_app.h): the app is asked also when the
 * ring is full (a stack keeps serving its port), and once the run stops
 * it hands over what it holds before R finishes.  Returns how many
 * messages are in pkts, or PP_RX_END. */
static inline int
app_receive(struct pp_task *t, struct rte_mbuf **pkts, unsigned room)
{
	struct pp_instance_rt *in = t->inst;
	int stop = r_should_finish(t);
	int n = in->app->rx(
		in->app_task_state, pkts, (uint16_t)(stop ? room : r_limit(t, room)), stop);
	assert(n == PP_RX_END || (n >= 0 && (unsigned)n <= room));
	return n;
}

static uint64_t
poll_r_app(struct pp_task *t, uint64_t t0)
{
	struct pp_instance_rt *in = t->inst;
	struct pp_task_counters *c = t->ctr;
	struct rte_mbuf *pkts[PP_BURST];
	PP_PROF_START(pt);

	unsigned room = RTE_MIN((unsigned)PP_BURST, rte_ring_free_count(in->r_to_p));
	int n = app_receive(t, pkts, room);
	if (n == PP_RX_END) {
		finish(t);
		return rte_rdtsc();
	}
	if (n == 0) {
		bump(&c->empty_polls, 1);
		PP_PROF_MARK(c, pt, room == 0 ? PP_PROF_BACKPRESSURE : PP_PROF_EMPTY_POLL);
		return rte_rdtsc();
	}
	PP_PROF_MARK(c, pt, PP_PROF_RECEIVE);
	rte_ring_sp_enqueue_burst(in->r_to_p, (void **)pkts, (unsigned)n, NULL);
	uint64_t end = rte_rdtsc();
	bump_burst(c, (uint64_t)n, end - t0);
	PP_PROF_MARK(c, pt, PP_PROF_RING);
	return end;
}

/* The poll functions take the TSC at which the lcore's previous poll
 * ended (this poll's start) and return the TSC at their own end. */
static uint64_t
poll_r(struct pp_task *t, uint64_t t0)
{
	struct pp_instance_rt *in = t->inst;
	struct pp_task_counters *c = t->ctr;
	struct rte_mbuf *pkts[PP_BURST];
	PP_PROF_START(pt);

	if (unlikely(in->app->rx != NULL))
		return poll_r_app(t, t0);
	if (r_should_finish(t)) {
		finish(t);
		return rte_rdtsc();
	}
	unsigned want = r_limit(t, RTE_MIN((unsigned)PP_BURST, rte_ring_free_count(in->r_to_p)));
	uint16_t n = 0;
	if (want != 0) {
		own_next_mbufs(in->rx_pool, want);
		n = rte_eth_rx_burst(in->place.rx.port, in->place.rx.queue, pkts, (uint16_t)want);
	}
	if (n == 0) {
		bump(&c->empty_polls, 1);
		PP_PROF_MARK(c, pt, want == 0 ? PP_PROF_BACKPRESSURE : PP_PROF_EMPTY_POLL);
		return rte_rdtsc();
	}
	uint32_t odd = 0;
	for (unsigned i = 0; i < n; i++)
		odd |= not_plain(pkts[i]);
	if (unlikely(odd != 0))
		repair_burst(pkts, n, c);
	PP_PROF_MARK(c, pt, PP_PROF_RECEIVE);
	/* Single producer and room checked above: all n go in. */
	rte_ring_sp_enqueue_burst(in->r_to_p, (void **)pkts, n, NULL);
	uint64_t end = rte_rdtsc();
	bump_burst(c, n, end - t0);
	PP_PROF_MARK(c, pt, PP_PROF_RING);
	return end;
}

static uint64_t
poll_p(struct pp_task *t, uint64_t t0)
{
	struct pp_instance_rt *in = t->inst;
	struct pp_task_counters *c = t->ctr;
	struct rte_mbuf *pkts[PP_BURST], *fwd[PP_BURST];
	PP_PROF_START(pt);

	unsigned want = RTE_MIN((unsigned)PP_BURST, rte_ring_free_count(in->p_to_t));
	unsigned n =
		want == 0 ? 0 : rte_ring_sc_dequeue_burst(in->r_to_p, (void **)pkts, want, NULL);
	if (n == 0) {
		/* R's done flag, then its ring: a finished R enqueued
		 * everything before setting it, so an empty ring now means
		 * nothing can arrive any more. */
		if (want != 0 && upstream_done(t) && rte_ring_empty(in->r_to_p))
			finish(t);
		else
			bump(&c->empty_polls, 1);
		PP_PROF_MARK(c, pt, want == 0 ? PP_PROF_BACKPRESSURE : PP_PROF_EMPTY_POLL);
		return rte_rdtsc();
	}
	PP_PROF_MARK(c, pt, PP_PROF_RING);
	for (unsigned i = 0; i < n; i++)
		rte_prefetch0(pkts[i]);
	for (unsigned i = 0; i < n; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	unsigned nf = process_burst(t, pkts, n, fwd);
	PP_PROF_MARK(c, pt, PP_PROF_PROCESS);
	if (nf != 0)
		rte_ring_sp_enqueue_burst(in->p_to_t, (void **)fwd, nf, NULL);
	uint64_t end = rte_rdtsc();
	bump_burst(c, n, end - t0);
	PP_PROF_MARK(c, pt, PP_PROF_RING);
	return end;
}

static uint64_t
poll_t(struct pp_task *t, uint64_t t0)
{
	struct pp_instance_rt *in = t->inst;
	PP_PROF_START(pt);

	if (t->n_held == 0) {
		unsigned n =
			rte_ring_sc_dequeue_burst(in->p_to_t, (void **)t->held, PP_BURST, NULL);
		if (n == 0) {
			/* As in poll_p: P's done flag first, then its ring. */
			if (upstream_done(t) && rte_ring_empty(in->p_to_t))
				finish(t);
			else
				bump(&t->ctr->empty_polls, 1);
			PP_PROF_MARK(t->ctr, pt, PP_PROF_EMPTY_POLL);
			return rte_rdtsc();
		}
		t->n_held = (uint16_t)n;
		t->held_off = 0;
		if (t->own_freed)
			own_freed_lines(t->held, n);
		PP_PROF_MARK(t->ctr, pt, PP_PROF_RING);
	}
	uint16_t sent;
	uint64_t end = send_held(t, t0, &sent, BYTES_UNKNOWN);
	PP_PROF_MARK(t->ctr, pt, sent != 0 ? PP_PROF_TRANSMIT : PP_PROF_BACKPRESSURE);
	(void)sent; /* without -Dprofile=true the mark is empty */
	return end;
}

/* R, P and T of one instance on this lcore, as one poll.  Their rings stay
 * empty; T's held packets (a port that took part of a burst) go out before
 * R receives again.  R receives into T's held array and P packs it in
 * place, so the burst is never copied. */
static uint64_t
poll_fused(struct pp_instance_rt *in, uint64_t t0)
{
	struct pp_task *r = &in->tasks[PP_ROLE_R], *p = &in->tasks[PP_ROLE_P],
		       *t = &in->tasks[PP_ROLE_T];
	struct rte_mbuf **pkts = t->held;
	PP_PROF_START(pt);

	uint16_t sent;
	if (unlikely(t->n_held != 0)) {
		t0 = send_held(t, t0, &sent, BYTES_UNKNOWN);
		PP_PROF_MARK(t->ctr, pt, t->n_held != 0 ? PP_PROF_BACKPRESSURE : PP_PROF_TRANSMIT);
		if (t->n_held != 0)
			return t0;
	}
	bool app_rx = in->app->rx != NULL;
	int got = 0;
	if (unlikely(app_rx && !r->finished))
		got = app_receive(r, pkts, PP_BURST);
	if (unlikely(r->finished || got == PP_RX_END || (!app_rx && r_should_finish(r)))) {
		if (!r->finished)
			finish(r);
		finish(p);
		finish(t);
		return rte_rdtsc();
	}
	uint16_t n = app_rx ? (uint16_t)got
			    : rte_eth_rx_burst(in->place.rx.port, in->place.rx.queue, pkts,
				      (uint16_t)r_limit(r, PP_BURST));
	if (n == 0) {
		bump(&r->ctr->empty_polls, 1);
		PP_PROF_MARK(r->ctr, pt, PP_PROF_EMPTY_POLL);
		return rte_rdtsc();
	}
	uint64_t bytes;
	if (unlikely(prefetch_and_check(pkts, n, &bytes) != 0)) {
		repair_burst(pkts, n, r->ctr);
		bytes = BYTES_UNKNOWN; /* lengths repaired */
	}
	uint64_t t1 = rte_rdtsc();
	bump_burst(r->ctr, n, t1 - t0);
	PP_PROF_MARK(r->ctr, pt, PP_PROF_RECEIVE);

	unsigned nf = process_burst(p, pkts, n, pkts);
	uint64_t t2 = rte_rdtsc();
	bump_burst(p->ctr, n, t2 - t1);
	PP_PROF_MARK(p->ctr, pt, PP_PROF_PROCESS);
	if (nf == 0)
		return t2;
	t->n_held = (uint16_t)nf;
	t->held_off = 0;
	uint64_t end = send_held(t, t2, &sent, nf == n ? bytes : BYTES_UNKNOWN);
	PP_PROF_MARK(t->ctr, pt, sent != 0 ? PP_PROF_TRANSMIT : PP_PROF_BACKPRESSURE);
	(void)sent;
	return end;
}

/* Marks the R task of every instance whose R, P and T all run on this
 * lcore (plan_tasks lists an instance's tasks together, R then P then T). */
static void
mark_fused(struct pp_lcore_plan *plan)
{
	for (unsigned i = 0; i < plan->n_tasks; i++)
		plan->tasks[i]->fused = false;
	for (unsigned i = 0; i + 2 < plan->n_tasks; i++) {
		struct pp_task **t = &plan->tasks[i];
		if (t[0]->role == PP_ROLE_R && t[1]->role == PP_ROLE_P && t[2]->role == PP_ROLE_T &&
			t[1]->inst == t[0]->inst && t[2]->inst == t[0]->inst)
			t[0]->fused = true;
	}
}

/* Marks the split T tasks of this lcore that own_freed_lines serves: their
 * P on another context, and an R (of any instance: all take from this
 * lcore's cache) on this one. */
static void
mark_owners(struct pp_lcore_plan *plan)
{
	bool has_r = false;
	for (unsigned i = 0; i < plan->n_tasks; i++)
		has_r |= plan->tasks[i]->role == PP_ROLE_R;
	for (unsigned i = 0; i < plan->n_tasks; i++) {
		struct pp_task *t = plan->tasks[i];
		/* An app's own T (pp_app.h tx) frees its messages to its own
		 * pools, which no port refills. */
		t->own_freed = has_r && t->role == PP_ROLE_T &&
			t->inst->tasks[PP_ROLE_P].context != t->context && t->inst->app->tx == NULL;
	}
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
	mark_fused(plan);
	mark_owners(plan);
	uint64_t now = rte_rdtsc(); /* when the last poll ended */
	for (;;) {
		unsigned active = 0;
		for (unsigned i = 0; i < plan->n_tasks; i++) {
			struct pp_task *t = plan->tasks[i];
			if (t->fused) {
				/* T finishes last: the instance is done then. */
				if (!t->inst->tasks[PP_ROLE_T].finished) {
					active++;
					now = poll_fused(t->inst, now);
				}
				i += 2;
				continue;
			}
			if (t->finished)
				continue;
			active++;
			switch (t->role) {
			case PP_ROLE_R:
				now = poll_r(t, now);
				break;
			case PP_ROLE_P:
				now = poll_p(t, now);
				break;
			default:
				now = poll_t(t, now);
				break;
			}
		}
		if (active == 0)
			return 0;
	}
}
