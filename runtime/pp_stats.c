/* Statistics JSON.  Counters are read with relaxed atomic loads because a
 * SIGUSR1 snapshot reads them while their owners write them. */
#include "pp_stats.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ring.h>

#include "pp_outfile.h"
#include "pp_task.h"

static uint64_t
rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static const char *
reason_name(const struct pp_app *app, unsigned r)
{
	if (r < app->n_drop_reasons)
		return app->drop_reasons[r];
	return r == app->n_drop_reasons ? "bad_verdict" : "tx_failed";
}

json_t *
pp_stats_build(const struct pp_app *app, void *app_state, void *const *task_states,
	const struct pp_placement *pl, const struct pp_instance_rt *inst, unsigned n,
	double window_s, const uint64_t *tx0, const uint64_t *b0, const uint64_t *tx1,
	const uint64_t *b1, bool in_progress)
{
	unsigned n_reasons = app->n_drop_reasons + 2;
	uint64_t tot_repaired = 0;
	uint64_t tot_rx = 0, tot_tx = 0, tot_drop = 0, tot_q = 0, tot_win = 0, tot_bytes = 0,
		 tot_tx_bytes = 0;
	uint64_t tot_by[PP_MAX_DROP_REASONS] = { 0 };
	bool ok = true;
	json_t *root = json_object();
	json_t *instances = json_array(), *tasks = json_array();

	json_object_set_new(root, "app", json_string(app->name));
	json_object_set_new(
		root, "variant", pl->variant[0] ? json_string(pl->variant) : json_null());
	json_object_set_new(root, "kind", json_string("measured"));
	json_object_set_new(root, "duration_s", json_real(window_s));
	/* Apps and tools turn the per-task cycle counts into time with it. */
	json_object_set_new(root, "tsc_hz", json_integer((json_int_t)rte_get_tsc_hz()));
	/* 4 KiB pages (--no-huge, asked for or the fallback) slow a memory-bound app by
	 * tens of percent: a figure says which memory it was measured on */
	json_object_set_new(root, "hugepages", json_boolean(rte_eal_has_hugepages()));
	for (unsigned i = 0; i < n; i++) {
		const struct pp_instance_rt *in = &inst[i];
		const struct pp_task_counters *r = in->tasks[PP_ROLE_R].ctr;
		const struct pp_task_counters *p = in->tasks[PP_ROLE_P].ctr;
		const struct pp_task_counters *t = in->tasks[PP_ROLE_T].ctr;
		uint64_t rx = rd(&r->packets), tx = rd(&t->packets), drop = 0;
		uint64_t by[PP_MAX_DROP_REASONS];
		for (unsigned k = 0; k < n_reasons; k++) {
			by[k] = rd(&p->dropped[k]) + rd(&t->dropped[k]);
			drop += by[k];
		}
		uint64_t queued = rte_ring_count(in->r_to_p) + rte_ring_count(in->p_to_t) +
			in->tasks[PP_ROLE_T].n_held;
		uint64_t win = (tx1 ? tx1[i] : tx) - (tx0 ? tx0[i] : 0);
		uint64_t bytes = (b1 ? b1[i] : rd(&t->bytes)) - (b0 ? b0[i] : 0);
		json_t *jby = json_object();
		for (unsigned k = 0; k < n_reasons; k++) {
			json_object_set_new(
				jby, reason_name(app, k), json_integer((json_int_t)by[k]));
			tot_by[k] += by[k];
		}
		json_t *ji = json_object();
		json_object_set_new(ji, "index", json_integer(i));
		json_object_set_new(ji, "rx_packets", json_integer((json_int_t)rx));
		json_object_set_new(ji, "tx_packets", json_integer((json_int_t)tx));
		uint64_t tx_bytes = rd(&t->bytes);
		tot_tx_bytes += tx_bytes;
		json_object_set_new(ji, "tx_bytes", json_integer((json_int_t)tx_bytes));
		json_object_set_new(ji, "dropped_packets", json_integer((json_int_t)drop));
		json_object_set_new(ji, "dropped_by_reason", jby);
		json_object_set_new(ji, "queued_packets", json_integer((json_int_t)queued));
		json_object_set_new(ji, "window_tx_packets", json_integer((json_int_t)win));
		uint64_t repaired = rd(&r->chains_repaired);
		tot_repaired += repaired;
		json_object_set_new(ji, "rx_chains_repaired", json_integer((json_int_t)repaired));
		json_object_set_new(
			ji, "pps", json_real(window_s > 0 ? (double)win / window_s : 0));
		json_object_set_new(ji, "accounting_ok",
			in_progress ? json_null() : json_boolean(rx == tx + drop + queued));
		json_array_append_new(instances, ji);
		ok = ok && rx == tx + drop + queued;
		tot_rx += rx;
		tot_tx += tx;
		tot_drop += drop;
		tot_q += queued;
		tot_win += win;
		tot_bytes += bytes;
		for (int role = 0; role < PP_N_ROLES; role++) {
			const struct pp_task *tk = &in->tasks[role];
			json_t *jt = json_object();
			json_object_set_new(jt, "instance", json_integer(i));
			json_object_set_new(jt, "role", json_string(pp_role_names[role]));
			json_object_set_new(jt, "context", json_integer(tk->context));
			json_object_set_new(jt, "observed_cpu",
				json_integer(
					__atomic_load_n(&tk->ctr->observed_cpu, __ATOMIC_RELAXED)));
			json_object_set_new(
				jt, "packets", json_integer((json_int_t)rd(&tk->ctr->packets)));
			json_object_set_new(
				jt, "bursts", json_integer((json_int_t)rd(&tk->ctr->bursts)));
			json_object_set_new(jt, "empty_polls",
				json_integer((json_int_t)rd(&tk->ctr->empty_polls)));
			json_object_set_new(
				jt, "cycles", json_integer((json_int_t)rd(&tk->ctr->cycles)));
#ifdef PP_PROFILE
			json_t *jp = json_object();
			for (int k = 0; k < PP_PROF_N; k++)
				json_object_set_new(jp, pp_prof_name(k),
					json_integer((json_int_t)rd(&tk->ctr->prof[k])));
			json_object_set_new(jt, "profile", jp);
#endif
			json_array_append_new(tasks, jt);
		}
	}
	json_t *total = json_object(), *jby = json_object();
	for (unsigned k = 0; k < n_reasons; k++)
		json_object_set_new(jby, reason_name(app, k), json_integer((json_int_t)tot_by[k]));
	json_object_set_new(total, "rx_packets", json_integer((json_int_t)tot_rx));
	json_object_set_new(total, "tx_packets", json_integer((json_int_t)tot_tx));
	json_object_set_new(total, "tx_bytes", json_integer((json_int_t)tot_tx_bytes));
	json_object_set_new(total, "dropped_packets", json_integer((json_int_t)tot_drop));
	json_object_set_new(total, "dropped_by_reason", jby);
	json_object_set_new(total, "queued_packets", json_integer((json_int_t)tot_q));
	json_object_set_new(total, "window_tx_packets", json_integer((json_int_t)tot_win));
	json_object_set_new(total, "rx_chains_repaired", json_integer((json_int_t)tot_repaired));
	json_object_set_new(total, "pps", json_real(window_s > 0 ? (double)tot_win / window_s : 0));
	json_object_set_new(
		total, "bps", json_real(window_s > 0 ? 8.0 * (double)tot_bytes / window_s : 0));
	json_object_set_new(root, "total", total);
	json_object_set_new(root, "instances", instances);
	json_object_set_new(root, "tasks", tasks);
	if (app->stats != NULL) {
		json_t *a = json_object();
		app->stats(app_state, task_states, n, a);
		json_object_set_new(root, "app_stats", a);
	}
	json_object_set_new(root, "in_progress", json_boolean(in_progress));
	json_object_set_new(root, "accounting_ok", in_progress ? json_null() : json_boolean(ok));
	return root;
}

int
pp_stats_check_path(const char *path)
{
	char err[128];
	if (path == NULL || strcmp(path, "-") == 0 || pp_outfile_check(path, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "--stats %s: %s\n", path, err);
	return -1;
}

int
pp_stats_write(const json_t *stats, const char *path)
{
	bool out = path == NULL || strcmp(path, "-") == 0;
	FILE *f = out ? stdout : fopen(path, "w");
	int rc = -1, err = errno;
	if (f != NULL) {
		rc = json_dumpf(stats, f, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
		rc |= fputc('\n', f) == EOF;
		rc |= fflush(f);
		if (!out)
			rc |= fclose(f);
		err = errno;
	}
	if (rc == 0)
		return 0;
	if (out) {
		fprintf(stderr, "--stats: cannot write the statistics to stdout: %s\n",
			strerror(err));
		return -1;
	}
	/* What was measured is not lost: it goes to stdout instead. */
	fprintf(stderr, "--stats %s: cannot %s: %s; writing the statistics to stdout\n", path,
		f == NULL ? "open for writing" : "write", strerror(err));
	pp_stats_write(stats, NULL);
	return -1;
}
