/* One run of one placement.  The main lcore sets things up, launches the
 * workers, watches the clock and the signals, and after the workers drained
 * checks that every packet is accounted for. */
#include "pp_run.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "pp_kif.h"
#include "pp_port.h"
#include "pp_signal.h"
#include "pp_stats.h"
#include "pp_task.h"

static volatile sig_atomic_t stats_requested;

void
pp_request_stop(void)
{
	pp_signal_request_stop();
}
void
pp_request_stats(void)
{
	stats_requested = 1;
}
bool
pp_stop_requested(void)
{
	return pp_stop_signals != 0;
}

struct port_use {
	uint16_t n_rx, n_tx; /* queues the placement uses: highest index + 1 */
	bool used;
	bool started; /* a start was attempted: stop it at the end */
};

static int
setup_ports(struct pp_runtime *rt, const struct pp_placement *pl, const char *origin,
	const struct pp_run_opts *opts, struct port_use *use)
{
	for (unsigned i = 0; i < pl->n_instances; i++) {
		const struct pp_instance_placement *ip = &pl->instances[i];
		const struct pp_port_queue *pq[2] = { &ip->rx, &ip->tx };
		for (int d = 0; d < 2; d++) {
			if (!rte_eth_dev_is_valid_port(pq[d]->port)) {
				fprintf(stderr,
					"%s: instance %u %s: port %u does not exist (%u DPDK "
					"port(s); add them with EAL --vdev, e.g. --vdev "
					"net_pcap0,rx_pcap=in.pcap,infinite_rx=1)\n",
					origin, i, d == 0 ? "rx" : "tx", pq[d]->port,
					rte_eth_dev_count_avail());
				return -1;
			}
			struct port_use *u = &use[pq[d]->port];
			u->used = true;
			if (d == 0)
				u->n_rx = RTE_MAX(u->n_rx, (uint16_t)(pq[d]->queue + 1));
			else
				u->n_tx = RTE_MAX(u->n_tx, (uint16_t)(pq[d]->queue + 1));
		}
	}
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++) {
		if (!use[p].used)
			continue;
		use[p].started = true;
		struct rte_eth_dev_info info;
		char name[RTE_ETH_NAME_MAX_LEN] = "?";
		rte_eth_dev_get_name_by_port(p, name);
		if (rte_eth_dev_info_get(p, &info) != 0) {
			fprintf(stderr, "port %u (%s): cannot read device info\n", p, name);
			return -1;
		}
		if (use[p].n_rx > info.max_rx_queues || use[p].n_tx > info.max_tx_queues) {
			bool rx = use[p].n_rx > info.max_rx_queues;
			for (unsigned i = 0; i < pl->n_instances; i++) {
				const struct pp_port_queue *pq =
					rx ? &pl->instances[i].rx : &pl->instances[i].tx;
				if (pq->port == p &&
					pq->queue >=
						(rx ? info.max_rx_queues : info.max_tx_queues)) {
					fprintf(stderr,
						"%s: instance %u %s: queue %u does not exist on "
						"port %u (%s has %u %s queue(s)%s)\n",
						origin, i, rx ? "rx" : "tx", pq->queue, p, name,
						rx ? info.max_rx_queues : info.max_tx_queues,
						rx ? "rx" : "tx",
						rx ? "; net_pcap has one rx queue per rx_pcap="
						   : "");
					return -1;
				}
			}
		}
		int rc;
		bool enough = use[p].n_rx <= rt->port_rx_queues[p] &&
			use[p].n_tx <= rt->port_tx_queues[p];
		if (enough && rt->port_started[p])
			continue; /* kept up from an earlier run (serve mode) */
		if (enough)
			goto start;
		if (rt->port_started[p]) {
			/* More queues than the port has: reconfigure it. */
			pp_port_stop(p, false);
			rt->port_started[p] = false;
		}
		use[p].n_rx = RTE_MAX(use[p].n_rx, rt->port_rx_queues[p]);
		use[p].n_tx = RTE_MAX(use[p].n_tx, rt->port_tx_queues[p]);
		const struct pp_port_conf conf = {
			.n_rx = use[p].n_rx,
			.n_tx = use[p].n_tx,
			.rx_desc = (uint16_t)opts->ring_size,
			.tx_desc = (uint16_t)opts->ring_size,
			.pool = rt->pool,
		};
		if (pp_port_configure(p, &conf, NULL) < 0)
			return -1;
		rt->port_rx_queues[p] = use[p].n_rx;
		rt->port_tx_queues[p] = use[p].n_tx;
		rt->run_port_configures++;
	start:
		rc = pp_port_start(p, false);
		if (rc < 0) {
			fprintf(stderr,
				"port %u (%s): start failed: %s (net_pcap with infinite_rx loads "
				"the whole capture into mbufs: a pool of %u may be too small, see "
				"--mbufs)\n",
				p, name, rte_strerror(-rc),
				rte_mempool_avail_count(rt->pool) +
					rte_mempool_in_use_count(rt->pool));
			return -1;
		}
		rt->port_started[p] = true;
		rt->run_port_starts++;
	}
	/* Once, when the ports first came up: af_xdp may have fallen back to
	 * af_packet in their set-up. */
	static bool reported;
	if (!reported)
		pp_kif_report("pipeplace");
	reported = true;
	return 0;
}

/* Ports stop after every run, except in serve mode (rt->keep_ports_up),
 * where they stay up until pp_run_close_ports. */
static void
stop_ports(struct pp_runtime *rt, const struct port_use *use)
{
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (use[p].started && rt->port_started[p]) {
			pp_port_stop(p, false);
			rt->port_started[p] = false;
		}
}

#define CLOSE_DRAIN_CAP 65536 /* per queue: a source that never runs dry is not a backlog */

json_t *
pp_run_close_ports(struct pp_runtime *rt)
{
	json_t *queues = json_array(), *port_stats = json_array(), *rep = json_object();
	uint64_t total = 0;
	struct rte_mbuf *pkts[PP_BURST];

	for (uint16_t p = 0; p < PP_MAX_PORTS; p++) {
		if (!rt->port_started[p])
			continue;
		for (uint16_t q = 0; q < rt->port_rx_queues[p]; q++) {
			uint64_t n = 0;
			unsigned idle = 0;
			/* Until the queue reads empty three times in a row. */
			while (idle < 3 && n < CLOSE_DRAIN_CAP) {
				uint16_t k = rte_eth_rx_burst(p, q, pkts, PP_BURST);
				idle = k == 0 ? idle + 1 : 0;
				if (k != 0)
					rte_pktmbuf_free_bulk(pkts, k);
				n += k;
			}
			total += n;
			json_t *o = json_object();
			json_object_set_new(o, "port", json_integer(p));
			json_object_set_new(o, "queue", json_integer(q));
			json_object_set_new(o, "packets", json_integer((json_int_t)n));
			json_object_set_new(o, "capped", json_boolean(n >= CLOSE_DRAIN_CAP));
			json_array_append_new(queues, o);
		}
		/* What the port itself counted over its life (net_memif, net_null
		 * and NICs count; what a NIC had no room for is imissed). */
		struct rte_eth_stats st;
		if (rte_eth_stats_get(p, &st) == 0) {
			json_t *o = json_object();
			json_object_set_new(o, "port", json_integer(p));
			json_object_set_new(o, "ipackets", json_integer((json_int_t)st.ipackets));
			json_object_set_new(o, "imissed", json_integer((json_int_t)st.imissed));
			json_object_set_new(o, "ierrors", json_integer((json_int_t)st.ierrors));
			json_object_set_new(o, "rx_nombuf", json_integer((json_int_t)st.rx_nombuf));
			json_object_set_new(o, "opackets", json_integer((json_int_t)st.opackets));
			json_object_set_new(o, "oerrors", json_integer((json_int_t)st.oerrors));
			json_array_append_new(port_stats, o);
		}
		pp_port_stop(p, false);
		rt->port_started[p] = false;
	}
	json_object_set_new(rep, "ports", port_stats);
	json_object_set_new(rep, "kind", json_string("measured"));
	json_object_set_new(rep, "drained_packets", json_integer((json_int_t)total));
	json_object_set_new(rep, "queues", queues);
	return rep;
}

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
snapshot_tx(const struct pp_instance_rt *inst, unsigned n, uint64_t *tx, uint64_t *bytes)
{
	for (unsigned i = 0; i < n; i++) {
		const struct pp_task_counters *c = inst[i].tasks[PP_ROLE_T].ctr;
		tx[i] = __atomic_load_n(&c->packets, __ATOMIC_RELAXED);
		bytes[i] = __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
	}
}

static bool
all_done(const struct pp_instance_rt *inst, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!__atomic_load_n(&inst[i].tasks[PP_ROLE_T].ctr->done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* Everything one run owns; release_run frees what was made. */
struct run {
	struct pp_runtime *rt;
	const struct pp_placement *pl;
	const char *origin;
	const struct pp_run_opts *opts;
	unsigned n;                   /* instances */
	struct port_use *use;         /* per port */
	struct pp_instance_rt *inst;  /* per instance */
	struct pp_task_counters *ctr; /* per task, cache-line aligned */
	struct pp_lcore_plan *plans;  /* per lcore */
	void **task_states;           /* per instance, from app->task_init */
	void *app_state;
	unsigned n_inited; /* task_init calls that succeeded */
	bool set_up, ports_up, launched;
	uint64_t *tx0, *b0, *tx1, *b1; /* window start/end: packets, bytes */
	struct pp_queue_pair *queues;  /* per instance, for the app's setup */
	double t_launch;               /* before the first worker was launched: */
	uint64_t tsc_launch;           /* a window without warm-up starts here */
};

static int
alloc_run(struct run *r)
{
	unsigned n = r->n;
	r->use = calloc(RTE_MAX_ETHPORTS, sizeof(*r->use));
	r->inst = rte_zmalloc("pp_instances", n * sizeof(*r->inst), RTE_CACHE_LINE_SIZE);
	r->ctr = rte_zmalloc(
		"pp_counters", (size_t)n * PP_N_ROLES * sizeof(*r->ctr), RTE_CACHE_LINE_SIZE);
	r->plans = calloc(RTE_MAX_LCORE, sizeof(*r->plans));
	r->task_states = calloc(n, sizeof(*r->task_states));
	r->tx0 = calloc(n, sizeof(uint64_t));
	r->b0 = calloc(n, sizeof(uint64_t));
	r->tx1 = calloc(n, sizeof(uint64_t));
	r->b1 = calloc(n, sizeof(uint64_t));
	r->queues = calloc(n, sizeof(*r->queues));
	if (r->queues == NULL || r->use == NULL || r->inst == NULL || r->ctr == NULL ||
		r->plans == NULL || r->task_states == NULL || r->tx0 == NULL || r->b0 == NULL ||
		r->tx1 == NULL || r->b1 == NULL) {
		fprintf(stderr, "%s: out of memory for %u instances\n", r->origin, n);
		return -1;
	}
	return 0;
}

/* Tasks of every instance, grouped per lcore in instance then role order,
 * which is also their round-robin order when co-located. */
static int
plan_tasks(struct run *r)
{
	const struct pp_app *app = r->rt->app;
	for (unsigned i = 0; i < r->n; i++) {
		struct pp_instance_rt *in = &r->inst[i];
		in->place = r->pl->instances[i];
		in->packet_limit = r->opts->packets;
		in->app = app;
		in->bad_verdict_reason = app->n_drop_reasons;
		in->tx_failed_reason = app->n_drop_reasons + 1;
		for (int role = 0; role < PP_N_ROLES; role++) {
			struct pp_task *t = &in->tasks[role];
			t->role = (enum pp_role)role;
			t->instance = i;
			t->context = in->place.context[role];
			t->inst = in;
			t->ctr = &r->ctr[i * PP_N_ROLES + (unsigned)role];
			t->ctr->observed_cpu = -1;
			unsigned lc = t->context < PP_MAX_CONTEXTS
				? r->rt->lcore_of_context[t->context]
				: 0;
			if (lc == 0) {
				fprintf(stderr,
					"%s: instance %u task %s: context %u has no worker lcore "
					"in this process\n",
					r->origin, i, pp_role_names[role], t->context);
				return -1;
			}
			struct pp_lcore_plan *p = &r->plans[lc];
			if (p->tasks == NULL) {
				p->lcore_id = lc;
				p->context = t->context;
				p->tasks = calloc((size_t)r->n * PP_N_ROLES, sizeof(*p->tasks));
				if (p->tasks == NULL)
					return -1;
			}
			p->tasks[p->n_tasks++] = t;
		}
	}
	return 0;
}

/* Per instance: its rx pool, the two SP/SC rings and the app's task state. */
static int
create_instances(struct run *r)
{
	const struct pp_app *app = r->rt->app;
	for (unsigned i = 0; i < r->n; i++) {
		struct pp_instance_rt *in = &r->inst[i];
		in->rx_pool = r->rt->pool; /* the one pool every rx queue fills from */
		char name[RTE_RING_NAMESIZE];
		int socket = (int)rte_lcore_to_socket_id(
			r->rt->lcore_of_context[in->place.context[PP_ROLE_P]]);
		snprintf(name, sizeof(name), "pp%u_rp%u", r->rt->n_runs, i);
		in->r_to_p = rte_ring_create(
			name, r->opts->ring_size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "pp%u_pt%u", r->rt->n_runs, i);
		in->p_to_t = rte_ring_create(
			name, r->opts->ring_size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (in->r_to_p == NULL || in->p_to_t == NULL) {
			fprintf(stderr, "instance %u: cannot create rings of %u slots: %s\n", i,
				r->opts->ring_size, rte_strerror(rte_errno));
			return -1;
		}
		if (app->task_init(r->app_state, i, &r->task_states[i]) != 0) {
			fprintf(stderr, "app %s: task init of instance %u failed\n", app->name, i);
			return -1;
		}
		in->app_task_state = r->task_states[i];
		r->n_inited++;
	}
	return 0;
}

static int
launch(struct run *r)
{
	__atomic_store_n(&pp_stop_flag, 0, __ATOMIC_RELEASE);
	for (unsigned lc = 0; lc < RTE_MAX_LCORE; lc++) {
		if (r->plans[lc].n_tasks == 0)
			continue;
		if (rte_eal_remote_launch(pp_lcore_main, &r->plans[lc], lc) != 0) {
			fprintf(stderr, "lcore %u: cannot launch (busy?)\n", lc);
			r->launched = true; /* those before it run: release_run stops them */
			return -1;
		}
		r->launched = true;
	}
	return 0;
}

/* The pool's driver changes how fast buffers freed on another context come
 * back warm: a figure says which one it was measured with. */
static void
note_pool(json_t *stats, const struct rte_mempool *pool)
{
	if (stats != NULL && pool != NULL)
		json_object_set_new(
			stats, "pool_ops", json_string(rte_mempool_get_ops(pool->ops_index)->name));
}

static void
write_snapshot(struct run *r, double window_s, bool in_window)
{
	json_t *s = pp_stats_build(r->rt->app, r->app_state, r->task_states, r->pl, r->inst, r->n,
		window_s, in_window ? r->tx0 : NULL, in_window ? r->b0 : NULL, NULL, NULL, true);
	if (s == NULL)
		return;
	note_pool(s, r->rt->pool);
	if (r->opts->snapshots_to_stderr) {
		json_dumpf(s, stderr, JSON_COMPACT);
		fputc('\n', stderr);
	} else {
		pp_stats_write(s, r->opts->stats_path);
	}
	json_decref(s);
}

/* The main lcore while the workers run: warm-up, window, stop, snapshots.
 * Returns the measurement window in seconds, once every T has drained. */
static double
watch(struct run *r)
{
	const struct pp_run_opts *o = r->opts;
	/* From the launch, not from here: the workers may have moved packets
	 * before the main lcore got here (a small --packets window with no
	 * warm-up would otherwise be timed too short). */
	double t_start = r->t_launch, t_win0 = t_start, t_stop = 0;
	bool in_window = o->warmup_s <= 0;
	uint64_t tsc_win0 = r->tsc_launch;

	stats_requested = 0;
	while (!all_done(r->inst, r->n)) {
		double t = now_s();
		if (!in_window && t - t_start >= o->warmup_s) {
			snapshot_tx(r->inst, r->n, r->tx0, r->b0);
			t_win0 = t;
			tsc_win0 = rte_rdtsc();
			in_window = true;
		}
		if (t_stop == 0 &&
			(pp_stop_signals ||
				(o->duration_s > 0 && in_window && t - t_win0 >= o->duration_s))) {
			snapshot_tx(r->inst, r->n, r->tx1, r->b1);
			t_stop = t;
			__atomic_store_n(&pp_stop_flag, 1, __ATOMIC_RELEASE);
		}
		if (stats_requested) {
			stats_requested = 0;
			write_snapshot(r, t - (in_window ? t_win0 : t_start), in_window);
		}
		rte_delay_us_sleep(1000);
	}
	rte_eal_mp_wait_lcore();
	r->launched = false;
	if (t_stop != 0)
		return t_stop - t_win0;
	/* Packet limit reached: the window ends when the last T drained. */
	if (!in_window)
		fprintf(stderr,
			"warning: the run ended during the %.3g s warm-up; the window covers the "
			"whole run\n",
			o->warmup_s);
	uint64_t last = 0;
	for (unsigned i = 0; i < r->n; i++)
		last = RTE_MAX(last, r->inst[i].tasks[PP_ROLE_T].ctr->done_tsc);
	snapshot_tx(r->inst, r->n, r->tx1, r->b1);
	return last > tsc_win0 ? (double)(last - tsc_win0) / (double)rte_get_tsc_hz() : 0;
}

/* Everything the run holds given back; the app's teardown status (0 or -1). */
static int
release_run(struct run *r)
{
	int trc = 0;

	if (r->launched) {
		__atomic_store_n(&pp_stop_flag, 1, __ATOMIC_RELEASE);
		rte_eal_mp_wait_lcore();
	}
	if (r->ports_up && !r->rt->keep_ports_up)
		stop_ports(r->rt, r->use);
	for (unsigned i = 0; r->inst != NULL && i < r->n; i++) {
		struct rte_mbuf *m;
		struct rte_ring *rings[2] = { r->inst[i].r_to_p, r->inst[i].p_to_t };
		for (int k = 0; k < 2; k++) {
			if (rings[k] == NULL)
				continue;
			while (rte_ring_sc_dequeue(rings[k], (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(rings[k]);
		}
		struct pp_task *t = &r->inst[i].tasks[PP_ROLE_T];
		if (t->n_held != 0)
			rte_pktmbuf_free_bulk(&t->held[t->held_off], t->n_held);
	}
	if (r->rt->app->teardown != NULL && r->set_up)
		trc = r->rt->app->teardown(r->app_state, r->task_states, r->n_inited);
	for (unsigned lc = 0; r->plans != NULL && lc < RTE_MAX_LCORE; lc++)
		free(r->plans[lc].tasks);
	free(r->plans);
	free(r->task_states);
	free(r->use);
	free(r->tx0);
	free(r->b0);
	free(r->tx1);
	free(r->b1);
	free(r->queues);
	rte_free(r->inst);
	rte_free(r->ctr);
	return trc;
}

int
pp_run_placement(struct pp_runtime *rt, const struct pp_placement *pl, const char *origin,
	const char *variant, const struct pp_run_opts *opts, json_t **stats)
{
	const struct pp_app *app = rt->app;
	struct run r = { .rt = rt, .pl = pl, .origin = origin, .opts = opts, .n = pl->n_instances };
	int rc = 1;

	*stats = NULL;
	if (app->n_drop_reasons + 2 > PP_MAX_DROP_REASONS) {
		fprintf(stderr, "app %s: too many drop reasons (%u)\n", app->name,
			app->n_drop_reasons);
		return 1;
	}
	rt->n_runs++;
	rt->run_port_starts = rt->run_port_configures = 0;
	if (alloc_run(&r) < 0 || plan_tasks(&r) < 0)
		goto out;

	if ((app->rx == NULL) != (app->tx == NULL)) {
		fprintf(stderr, "app %s: gives %s but not %s (pp_app.h: both or neither)\n",
			app->name, app->rx ? "rx" : "tx", app->rx ? "tx" : "rx");
		goto out;
	}
	for (unsigned i = 0; i < r.n; i++) {
		const struct pp_instance_placement *ip = &pl->instances[i];
		r.queues[i] = (struct pp_queue_pair){ .rx_port = ip->rx.port,
			.rx_queue = ip->rx.queue,
			.tx_port = ip->tx.port,
			.tx_queue = ip->tx.queue };
	}
	unsigned first_p = pl->instances[0].context[PP_ROLE_P];
	struct pp_setup_info info = {
		.l1d_bytes = pp_topology_cache_bytes(rt->topo, first_p, 1),
		.l2_bytes = pp_topology_cache_bytes(rt->topo, first_p, 2),
		.llc_bytes = pp_topology_llc_bytes(rt->topo, first_p),
		.n_instances = r.n,
		.socket_id = pp_topology_numa_node(rt->topo, first_p),
		.variant = variant,
		.queues = r.queues,
	};
	if (app->setup(rt->app_cfg, &info, &r.app_state) != 0) {
		fprintf(stderr, "app %s: setup failed\n", app->name);
		goto out;
	}
	r.set_up = true;
	if (create_instances(&r) < 0)
		goto out;
	r.ports_up = true; /* even a failed setup_ports may have started some */
	if (setup_ports(rt, pl, origin, opts, r.use) < 0)
		goto out;
	r.t_launch = now_s();
	r.tsc_launch = rte_rdtsc();
	if (launch(&r) < 0)
		goto out;

	double window = watch(&r);
	*stats = pp_stats_build(app, r.app_state, r.task_states, pl, r.inst, r.n, window, r.tx0,
		r.b0, r.tx1, r.b1, false);
	if (*stats == NULL) {
		fprintf(stderr, "cannot build the statistics JSON\n");
		goto out;
	}
	note_pool(*stats, rt->pool);
	rc = json_is_true(json_object_get(*stats, "accounting_ok")) ? 0 : 2;
	if (rc == 2)
		fprintf(stderr,
			"accounting violated: rx != tx + dropped + queued (see \"instances\" in "
			"the statistics)\n");
out:
	if (release_run(&r) != 0 && rc == 0)
		rc = 1; /* measured, but the app's output is incomplete */
	return rc;
}
