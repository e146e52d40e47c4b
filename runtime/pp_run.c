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

#include "pp_stats.h"
#include "pp_task.h"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t stats_requested;

void pp_request_stop(void) { stop_requested = 1; }
void pp_request_stats(void) { stats_requested = 1; }
bool pp_stop_requested(void) { return stop_requested != 0; }

struct port_use {
	uint16_t n_rx, n_tx; /* queues the placement uses: highest index + 1 */
	bool used;
	bool started;   /* a start was attempted: stop it at the end */
};

static int setup_ports(struct pp_runtime *rt, const struct pp_placement *pl,
		       const char *origin, const struct pp_run_opts *opts,
		       struct port_use *use)
{
	for (unsigned i = 0; i < pl->n_instances; i++) {
		const struct pp_instance_placement *ip = &pl->instances[i];
		const struct pp_port_queue *pq[2] = {&ip->rx, &ip->tx};
		for (int d = 0; d < 2; d++) {
			if (!rte_eth_dev_is_valid_port(pq[d]->port)) {
				fprintf(stderr,
					"%s: instance %u %s: port %u does not exist (%u DPDK port(s); add them with EAL --vdev, e.g. --vdev net_pcap0,rx_pcap=in.pcap,infinite_rx=1)\n",
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
				const struct pp_port_queue *pq = rx ? &pl->instances[i].rx : &pl->instances[i].tx;
				if (pq->port == p && pq->queue >= (rx ? info.max_rx_queues : info.max_tx_queues)) {
					fprintf(stderr,
						"%s: instance %u %s: queue %u does not exist on port %u (%s has %u %s queue(s)%s)\n",
						origin, i, rx ? "rx" : "tx", pq->queue, p, name,
						rx ? info.max_rx_queues : info.max_tx_queues, rx ? "rx" : "tx",
						rx ? "; net_pcap has one rx queue per rx_pcap=" : "");
					return -1;
				}
			}
		}
		int rc;
		if (use[p].n_rx <= rt->port_rx_queues[p] && use[p].n_tx <= rt->port_tx_queues[p])
			goto start;
		use[p].n_rx = RTE_MAX(use[p].n_rx, rt->port_rx_queues[p]);
		use[p].n_tx = RTE_MAX(use[p].n_tx, rt->port_tx_queues[p]);
		struct rte_eth_conf conf;
		memset(&conf, 0, sizeof(conf));
		rc = rte_eth_dev_configure(p, use[p].n_rx, use[p].n_tx, &conf);
		if (rc < 0) {
			fprintf(stderr, "port %u (%s): cannot configure %u rx / %u tx queues: %s\n",
				p, name, use[p].n_rx, use[p].n_tx, rte_strerror(-rc));
			return -1;
		}
		int socket = rte_eth_dev_socket_id(p);
		if (socket < 0)
			socket = (int)rte_socket_id();
		for (uint16_t q = 0; q < use[p].n_rx; q++) {
			rc = rte_eth_rx_queue_setup(p, q, opts->ring_size, (unsigned)socket, NULL, rt->pool);
			if (rc < 0) {
				fprintf(stderr, "port %u (%s): rx queue %u setup failed: %s\n",
					p, name, q, rte_strerror(-rc));
				return -1;
			}
		}
		for (uint16_t q = 0; q < use[p].n_tx; q++) {
			rc = rte_eth_tx_queue_setup(p, q, opts->ring_size, (unsigned)socket, NULL);
			if (rc < 0) {
				fprintf(stderr, "port %u (%s): tx queue %u setup failed: %s\n",
					p, name, q, rte_strerror(-rc));
				return -1;
			}
		}
		rt->port_rx_queues[p] = use[p].n_rx;
		rt->port_tx_queues[p] = use[p].n_tx;
start:
		rc = rte_eth_dev_start(p);
		if (rc < 0) {
			fprintf(stderr,
				"port %u (%s): start failed: %s (net_pcap with infinite_rx loads the whole capture into mbufs: a pool of %u may be too small, see --mbufs)\n",
				p, name, rte_strerror(-rc), rte_mempool_avail_count(rt->pool) + rte_mempool_in_use_count(rt->pool));
			return -1;
		}
	}
	return 0;
}

static void stop_ports(const struct port_use *use)
{
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (use[p].started)
			rte_eth_dev_stop(p);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void snapshot_tx(const struct pp_instance_rt *inst, unsigned n, uint64_t *tx, uint64_t *bytes)
{
	for (unsigned i = 0; i < n; i++) {
		const struct pp_task_counters *c = inst[i].tasks[PP_ROLE_T].ctr;
		tx[i] = __atomic_load_n(&c->packets, __ATOMIC_RELAXED);
		bytes[i] = __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
	}
}

static bool all_done(const struct pp_instance_rt *inst, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!__atomic_load_n(&inst[i].tasks[PP_ROLE_T].ctr->done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

int pp_run_placement(struct pp_runtime *rt, const struct pp_placement *pl,
		     const char *origin, const char *variant, const struct pp_run_opts *opts,
		     json_t **stats)
{
	const struct pp_app *app = rt->app;
	unsigned n = pl->n_instances;
	int rc = 1;
	struct port_use *use = calloc(RTE_MAX_ETHPORTS, sizeof(*use));
	struct pp_instance_rt *inst = rte_zmalloc("pp_instances", n * sizeof(*inst), RTE_CACHE_LINE_SIZE);
	struct pp_task_counters *ctr = rte_zmalloc("pp_counters", (size_t)n * PP_N_ROLES * sizeof(*ctr),
						   RTE_CACHE_LINE_SIZE);
	struct pp_lcore_plan *plans = calloc(RTE_MAX_LCORE, sizeof(*plans));
	struct pp_task **task_ptrs = calloc((size_t)n * PP_N_ROLES, sizeof(*task_ptrs));
	void **task_states = calloc(n, sizeof(*task_states));
	uint64_t *tx0 = calloc(n, sizeof(uint64_t)), *b0 = calloc(n, sizeof(uint64_t));
	uint64_t *tx1 = calloc(n, sizeof(uint64_t)), *b1 = calloc(n, sizeof(uint64_t));
	unsigned n_inited = 0;
	bool ports_up = false, launched = false, set_up = false;
	void *app_state = NULL;

	*stats = NULL;
	if (use == NULL || inst == NULL || ctr == NULL || plans == NULL || task_ptrs == NULL ||
	    task_states == NULL || tx0 == NULL || b0 == NULL || tx1 == NULL || b1 == NULL) {
		fprintf(stderr, "%s: out of memory for %u instances\n", origin, n);
		goto out;
	}
	if (app->n_drop_reasons + 2 > PP_MAX_DROP_REASONS) {
		fprintf(stderr, "app %s: too many drop reasons (%u)\n", app->name, app->n_drop_reasons);
		goto out;
	}
	rt->n_runs++;

	struct pp_setup_info info = {
		.l1d_bytes = pp_topology_cache_bytes(rt->topo, pl->instances[0].context[PP_ROLE_P], 1),
		.l2_bytes = pp_topology_cache_bytes(rt->topo, pl->instances[0].context[PP_ROLE_P], 2),
		.llc_bytes = pp_topology_llc_bytes(rt->topo, pl->instances[0].context[PP_ROLE_P]),
		.n_instances = n,
		.socket_id = pp_topology_numa_node(rt->topo, pl->instances[0].context[PP_ROLE_P]),
		.variant = variant,
	};
	if (app->setup(rt->app_cfg, &info, &app_state) != 0) {
		fprintf(stderr, "app %s: setup failed\n", app->name);
		goto out;
	}
	set_up = true;

	/* Lcore plans: tasks grouped by context, in instance then role order,
	 * which is also their round-robin order when co-located. */
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		struct pp_instance_rt *in = &inst[i];
		in->place = pl->instances[i];
		in->packet_limit = opts->packets;
		in->app = app;
		in->bad_verdict_reason = app->n_drop_reasons;
		in->tx_failed_reason = app->n_drop_reasons + 1;
		for (int r = 0; r < PP_N_ROLES; r++) {
			struct pp_task *t = &in->tasks[r];
			t->role = (enum pp_role)r;
			t->instance = i;
			t->context = in->place.context[r];
			t->inst = in;
			t->ctr = &ctr[i * PP_N_ROLES + (unsigned)r];
			t->ctr->observed_cpu = -1;
			task_ptrs[k++] = t;
		}
	}
	for (unsigned j = 0; j < k; j++) {
		unsigned c = task_ptrs[j]->context;
		unsigned lc = c < PP_MAX_CONTEXTS ? rt->lcore_of_context[c] : 0;
		if (lc == 0) {
			fprintf(stderr, "%s: instance %u task %s: context %u has no worker lcore in this process\n",
				origin, task_ptrs[j]->instance, pp_role_names[task_ptrs[j]->role], c);
			goto out;
		}
		struct pp_lcore_plan *p = &plans[lc];
		if (p->n_tasks == 0) {
			p->lcore_id = lc;
			p->context = c;
			p->tasks = calloc(k, sizeof(*p->tasks));
			if (p->tasks == NULL)
				goto out;
		}
		p->tasks[p->n_tasks++] = task_ptrs[j];
	}

	for (unsigned i = 0; i < n; i++) {
		char name[RTE_RING_NAMESIZE];
		int socket = (int)rte_lcore_to_socket_id(rt->lcore_of_context[inst[i].place.context[PP_ROLE_P]]);
		snprintf(name, sizeof(name), "pp%u_rp%u", rt->n_runs, i);
		inst[i].r_to_p = rte_ring_create(name, opts->ring_size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "pp%u_pt%u", rt->n_runs, i);
		inst[i].p_to_t = rte_ring_create(name, opts->ring_size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (inst[i].r_to_p == NULL || inst[i].p_to_t == NULL) {
			fprintf(stderr, "instance %u: cannot create rings of %u slots: %s\n",
				i, opts->ring_size, rte_strerror(rte_errno));
			goto out;
		}
		if (app->task_init(app_state, i, &task_states[i]) != 0) {
			fprintf(stderr, "app %s: task init of instance %u failed\n", app->name, i);
			goto out;
		}
		inst[i].app_task_state = task_states[i];
		n_inited++;
	}

	if (setup_ports(rt, pl, origin, opts, use) < 0) {
		ports_up = true; /* some may have started */
		goto out;
	}
	ports_up = true;

	stats_requested = 0;
	__atomic_store_n(&pp_stop_flag, 0, __ATOMIC_RELEASE);
	for (unsigned lc = 0; lc < RTE_MAX_LCORE; lc++) {
		if (plans[lc].n_tasks == 0)
			continue;
		if (rte_eal_remote_launch(pp_lcore_main, &plans[lc], lc) != 0) {
			fprintf(stderr, "lcore %u: cannot launch (busy?)\n", lc);
			__atomic_store_n(&pp_stop_flag, 1, __ATOMIC_RELEASE);
			rte_eal_mp_wait_lcore();
			goto out;
		}
	}
	launched = true;

	double t_start = now_s();
	double t_win0 = t_start, t_stop = 0;
	bool in_window = opts->warmup_s <= 0;
	uint64_t tsc_win0 = rte_rdtsc();
	while (!all_done(inst, n)) {
		double t = now_s();
		if (!in_window && t - t_start >= opts->warmup_s) {
			snapshot_tx(inst, n, tx0, b0);
			t_win0 = t;
			tsc_win0 = rte_rdtsc();
			in_window = true;
		}
		if (t_stop == 0 && (stop_requested ||
				    (opts->duration_s > 0 && in_window && t - t_win0 >= opts->duration_s))) {
			snapshot_tx(inst, n, tx1, b1);
			t_stop = t;
			__atomic_store_n(&pp_stop_flag, 1, __ATOMIC_RELEASE);
		}
		if (stats_requested) {
			stats_requested = 0;
			json_t *s = pp_stats_build(app, app_state, task_states, pl, inst, n,
						   t - (in_window ? t_win0 : t_start),
						   in_window ? tx0 : NULL, in_window ? b0 : NULL,
						   NULL, NULL, true);
			if (s != NULL) {
				if (opts->snapshots_to_stderr) {
					json_dumpf(s, stderr, JSON_COMPACT);
					fputc('\n', stderr);
				} else {
					pp_stats_write(s, opts->stats_path);
				}
				json_decref(s);
			}
		}
		rte_delay_us_sleep(1000);
	}
	rte_eal_mp_wait_lcore();
	launched = false;

	double window;
	if (t_stop != 0) {
		window = t_stop - t_win0;
	} else {
		/* Packet limit reached: the window ends when the last T drained. */
		uint64_t last = 0;
		for (unsigned i = 0; i < n; i++)
			last = RTE_MAX(last, inst[i].tasks[PP_ROLE_T].ctr->done_tsc);
		if (!in_window) {
			memset(tx0, 0, n * sizeof(uint64_t));
			memset(b0, 0, n * sizeof(uint64_t));
			fprintf(stderr, "warning: the run ended during the %.3g s warm-up; the window covers the whole run\n",
				opts->warmup_s);
		}
		window = last > tsc_win0 ? (double)(last - tsc_win0) / (double)rte_get_tsc_hz() : 0;
		if (!in_window)
			window = now_s() - t_start;
		snapshot_tx(inst, n, tx1, b1);
	}
	*stats = pp_stats_build(app, app_state, task_states, pl, inst, n, window,
				tx0, b0, tx1, b1, false);
	if (*stats == NULL) {
		fprintf(stderr, "cannot build the statistics JSON\n");
		goto out;
	}
	rc = json_is_true(json_object_get(*stats, "accounting_ok")) ? 0 : 2;
	if (rc == 2)
		fprintf(stderr, "accounting violated: rx != tx + dropped + queued (see \"instances\" in the statistics)\n");
out:
	if (launched) {
		__atomic_store_n(&pp_stop_flag, 1, __ATOMIC_RELEASE);
		rte_eal_mp_wait_lcore();
	}
	if (ports_up)
		stop_ports(use);
	for (unsigned i = 0; inst != NULL && i < n; i++) {
		struct rte_mbuf *m;
		struct rte_ring *rings[2] = {inst[i].r_to_p, inst[i].p_to_t};
		for (int r = 0; r < 2; r++) {
			if (rings[r] == NULL)
				continue;
			while (rte_ring_sc_dequeue(rings[r], (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(rings[r]);
		}
		struct pp_task *t = &inst[i].tasks[PP_ROLE_T];
		if (t->n_held != 0)
			rte_pktmbuf_free_bulk(&t->held[t->held_off], t->n_held);
	}
	if (app->teardown != NULL && set_up)
		app->teardown(app_state, task_states, n_inited);
	for (unsigned lc = 0; plans != NULL && lc < RTE_MAX_LCORE; lc++)
		free(plans[lc].tasks);
	free(plans);
	free(task_ptrs);
	free(task_states);
	free(use);
	free(tx0); free(b0); free(tx1); free(b1);
	rte_free(inst);
	rte_free(ctr);
	return rc;
}
