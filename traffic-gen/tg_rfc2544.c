/* RFC 2544 section 26.1 throughput: per frame size, the highest offered rate
 * at which loss stays within the tolerance, by binary search over trials. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "pp_kif.h"
#include "tg_ctx.h"
#include "tg_report.h"
#include "tg_rfc2544.h"
#include "tg_run.h"
#include "tg_tx.h"

struct trial {
	double asked_pps, offered_pps, loss_pct;
	uint64_t offered, received, link_full;
	bool pass, generator_limited;
	struct tg_hist lat;
};

static int
run_trial(struct tg_ctx *x, double pps, struct tg_result *r, struct trial *t)
{
	uint64_t unique = 0, offered;

	x->epoch = (uint16_t)((x->epoch + 1) & 0xff);
	for (unsigned i = 0; i < x->n_tx; i++)
		x->tx[i].pps = pps / x->n_tx;
	if (tg_run_once(x, x->cfg->trial_s, r))
		return -1;
	for (unsigned i = 0; i < TG_STREAM_IDS; i++)
		if (r->s[i].local)
			unique += tg_seq_unique(&r->s[i].seq);
	offered = r->tx_packets + r->link_full; /* a full DUT ingress queue is the DUT's loss */
	memset(t, 0, sizeof(*t));
	t->asked_pps = pps;
	t->offered = offered;
	t->link_full = r->link_full;
	t->received = unique;
	/* Over the window the packets really left in: a port slower than the
	 * asked rate makes the jobs catch up past the trial's end. */
	t->offered_pps = (double)offered / (r->sent_window_s > 0 ? r->sent_window_s : 1e-9);
	t->loss_pct = offered
		? (double)(offered > unique ? offered - unique : 0) * 100 / (double)offered
		: 100;
	t->pass = offered > 0 && t->loss_pct <= x->cfg->loss_tolerance_pct;
	t->generator_limited = t->offered_pps < 0.99 * pps;
	t->lat = r->all;
	fprintf(stderr,
		"[measured] rfc2544 trial: asked %.0f pps, offered %.0f pps (link_full %llu), loss "
		"%.4f%% -> %s%s\n",
		pps, t->offered_pps, (unsigned long long)t->link_full, t->loss_pct,
		t->pass ? "pass" : "fail",
		t->generator_limited ? " (generator below the asked rate)" : "");
	return 0;
}

static json_t *
trial_json(const struct trial *t, double hz)
{
	return json_pack("{s:s, s:f, s:f, s:I, s:I, s:I, s:f, s:b, s:b, s:o}", "kind", "measured",
		"asked_pps", t->asked_pps, "offered_pps", t->offered_pps, "offered_packets",
		(json_int_t)t->offered, "link_full", (json_int_t)t->link_full, "received_unique",
		(json_int_t)t->received, "loss_pct", t->loss_pct, "pass", t->pass,
		"generator_limited", t->generator_limited, "latency_ns",
		tg_report_latency(&t->lat, hz));
}

int
tg_rfc2544(struct tg_ctx *x)
{
	const struct tg_cfg *c = x->cfg;
	const struct tg_stream_cfg *s = &c->stream[0];
	struct tg_result *r = calloc(1, sizeof(*r));
	json_t *root, *results = json_array();
	FILE *table = c->stats_path[0] ? stdout : stderr;
	int rc = 0;

	if (!r) {
		fprintf(stderr, "pp-tgen: out of memory\n");
		return -1;
	}
	for (unsigned k = 0; k < c->n_rfc_sizes && !pp_stop_signals; k++) {
		uint16_t size = c->rfc_size[k];
		struct tg_size_mix one = { .n = 1, .size = { size }, .weight = { 1 } };
		double line = x->link_bps / ((size + TG_WIRE_OVERHEAD) * 8.0);
		double hi = line, lo = 0, step;
		struct trial t, best = { 0 };
		bool have_best = false;
		json_t *trials = json_array(), *res;

		if (s->rate_kind == TG_RATE_PPS && s->rate < hi)
			hi = s->rate;
		else if (s->rate_kind == TG_RATE_PCT)
			hi = line * s->rate / 100;
		step = hi * c->resolution_pct / 100;
		for (unsigned i = 0; i < x->n_tx; i++)
			if (tg_txjob_set_sizes(&x->tx[i], &one))
				rc = -1;
		if (rc) {
			json_decref(trials);
			break;
		}
		/* First the upper bound itself; then halve the interval. */
		double rate = hi, upper = hi;
		while (!pp_stop_signals) {
			if (run_trial(x, rate, r, &t)) {
				rc = -1;
				break;
			}
			json_array_append_new(trials, trial_json(&t, x->hz));
			if (t.pass) {
				lo = rate;
				best = t;
				have_best = true;
			} else {
				upper = rate;
			}
			if (upper - lo <= step)
				break;
			rate = (lo + upper) / 2;
		}
		res = json_pack("{s:i, s:s, s:f, s:f, s:f, s:o}", "frame_size", size, "kind",
			"measured", "line_rate_pps", line, "search_upper_pps", hi, "resolution_pps",
			step, "trials", trials);
		if (have_best) {
			double wire = best.offered_pps * (size + TG_WIRE_OVERHEAD) * 8;

			json_object_set_new(res, "throughput_pps", json_real(best.offered_pps));
			json_object_set_new(res, "throughput_asked_pps", json_real(best.asked_pps));
			json_object_set_new(res, "throughput_bps_wire", json_real(wire));
			json_object_set_new(
				res, "throughput_pct_of_link", json_real(wire / x->link_bps * 100));
			json_object_set_new(res, "loss_pct", json_real(best.loss_pct));
			json_object_set_new(
				res, "generator_limited", json_boolean(best.generator_limited));
			json_object_set_new(res, "latency_ns", tg_report_latency(&best.lat, x->hz));
		} else {
			json_object_set_new(res, "throughput_pps", json_real(0));
		}
		json_array_append_new(results, res);
		if (k == 0)
			fprintf(table,
				"\nRFC 2544 throughput (measured; loss tolerance %.4g%%, trial "
				"%.3g s)\n"
				"%6s %14s %14s %10s %10s %12s\n",
				c->loss_tolerance_pct, c->trial_s, "frame", "pps", "Mb/s(wire)",
				"% link", "loss %", "lat p50 us");
		fprintf(table, "%6u %14.0f %14.2f %10.3f %10.4f %12.2f%s\n", size,
			have_best ? best.offered_pps : 0.0,
			have_best ? best.offered_pps * (size + TG_WIRE_OVERHEAD) * 8 / 1e6 : 0.0,
			have_best ? best.offered_pps * (size + TG_WIRE_OVERHEAD) * 8 / x->link_bps *
					100
				  : 0.0,
			have_best ? best.loss_pct : 100.0,
			have_best ? tg_hist_quantile(&best.lat, 0.5) * 1e6 / x->hz : 0.0,
			have_best && best.generator_limited ? "  (generator-limited)" : "");
	}
	fflush(table);
	root = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:s, s:o}", "tool", "pp-tgen", "mode",
		"rfc2544", "kind", "measured", "link_gbps", x->link_bps / 1e9, "trial_s",
		c->trial_s, "loss_tolerance_pct", c->loss_tolerance_pct, "resolution_pct",
		c->resolution_pct, "link_speed_from", x->link_source, "results", results);
	json_object_set_new(root, "attached", pp_kif_json());
	if (pp_stop_signals)
		json_object_set_new(root, "interrupted", json_true());
	if (tg_report_write(c, root))
		rc = -1;
	json_decref(root);
	free(r);
	return rc;
}
