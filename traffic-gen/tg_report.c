/* Statistics JSON: everything in it was measured on this run, except the
 * "config" object (what was asked). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pp_kif.h"
#include "tg_ctx.h"
#include "tg_report.h"
#include "tg_setup.h"

#define RESOLUTION_NOTE                                                                          \
	"log-linear histogram of TSC cycles: buckets 1/64 of their value wide (percentiles are " \
	"bucket midpoints, within 0.8%); min, mean, max exact"

json_t *
tg_report_latency(const struct tg_hist *h, double hz)
{
	double ns = 1e9 / hz;

	if (h->count == 0)
		return json_pack("{s:s, s:I}", "kind", "measured", "samples", (json_int_t)0);
	return json_pack("{s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:s}", "kind", "measured",
		"samples", (json_int_t)h->count, "min", (double)h->min * ns, "mean",
		(double)h->sum / (double)h->count * ns, "p50", tg_hist_quantile(h, 0.5) * ns, "p99",
		tg_hist_quantile(h, 0.99) * ns, "p99_9", tg_hist_quantile(h, 0.999) * ns, "max",
		(double)h->max * ns, "overflow", (json_int_t)h->overflow, "resolution",
		RESOLUTION_NOTE);
}

static json_t *
config_json(const struct tg_ctx *x)
{
	const struct tg_cfg *c = x->cfg;
	json_t *streams = json_array();
	char buf[128];

	for (unsigned i = 0; i < c->n_streams; i++) {
		const struct tg_stream_cfg *s = &c->stream[i];
		json_t *o = json_pack("{s:s, s:b}", "name", s->name, "signature", s->signature);

		if (s->pcap[0]) {
			json_object_set_new(o, "pcap", json_string(s->pcap));
			json_object_set_new(o, "loops", json_integer((json_int_t)s->loops));
			json_object_set_new(o, "pcap_timing",
				s->pcap_speed > 0 ? json_real(s->pcap_speed) : json_string("none"));
		} else {
			json_t *sizes = json_array();

			for (int f = 0; f < TG_F_COUNT; f++) {
				if ((f == TG_F_VLAN && s->vlan_tags < 1) ||
					(f == TG_F_SVLAN && s->vlan_tags < 2))
					continue;
				tg_field_format(&s->field[f], tg_field_kinds[f], buf, sizeof(buf));
				json_object_set_new(o, tg_field_key[f], json_string(buf));
			}
			for (unsigned k = 0; k < s->sizes.n; k++)
				json_array_append_new(sizes,
					json_pack("{s:i, s:i}", "size", s->sizes.size[k], "weight",
						s->sizes.weight[k]));
			json_object_set_new(o, "sizes", sizes);
			json_object_set_new(o, "flows", json_integer(s->flows));
			json_object_set_new(o, "payload_bytes", json_integer(s->payload_len));
		}
		json_object_set_new(o, "rate_pps",
			s->rate_kind == TG_RATE_MAX ? json_string("max")
						    : json_real(tg_stream_pps(x, s)));
		if (s->rate_kind == TG_RATE_PCT)
			json_object_set_new(o, "rate_pct_of_link", json_real(s->rate));
		json_array_append_new(streams, o);
	}
	return json_pack("{s:s, s:f, s:s, s:s, s:f, s:I, s:i, s:i, s:i, s:f, s:b, s:o}", "kind",
		"asked", "link_gbps", x->link_bps / 1e9, "link_speed_from", x->link_source,
		"wire_overhead",
		"20 bytes of preamble, SFD and inter-frame gap per frame; frame sizes include the "
		"4-byte FCS",
		"duration_s", c->duration_s, "packets_per_stream", (json_int_t)c->packets,
		"tx_port", c->tx_port, "rx_port", c->rx_port, "tx_queues", c->tx_queues, "drain_s",
		c->drain_s, "tx_retry", c->tx_retry, "streams", streams);
}

static json_t *
config_with_ports(const struct tg_ctx *x)
{
	json_t *o = config_json(x);

	json_object_set_new(o, "attached", pp_kif_json());
	return o;
}

json_t *
tg_report_run(const struct tg_ctx *x, const struct tg_result *r)
{
	json_t *root, *tx, *streams = json_array();
	double d = r->duration_s > 0 ? r->duration_s : 1e-9;
	/* wire bits: frame + 20 bytes preamble/IFG each */
	double wire = ((double)r->tx_bytes + TG_WIRE_OVERHEAD * (double)r->tx_packets) * 8;

	tx = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f}", "kind", "measured",
		"packets", (json_int_t)r->tx_packets, "bytes", (json_int_t)r->tx_bytes,
		"offered_packets", (json_int_t)(r->tx_packets + r->link_full), "link_full",
		(json_int_t)r->link_full, "alloc_fail", (json_int_t)r->alloc_fail, "pps",
		(double)r->tx_packets / d, "bps_l2", (double)r->tx_bytes * 8 / d, "bps_wire",
		wire / d, "link_util_pct", wire / d / x->link_bps * 100);
	root = json_pack("{s:s, s:s, s:s, s:f, s:o, s:o}", "tool", "pp-tgen", "mode",
		x->cfg->mode == TG_MODE_RFC2544 ? "rfc2544" : "gen", "kind", "measured",
		"duration_s", r->duration_s, "config", config_with_ports(x), "tx", tx);
	if (x->n_rx) {
		json_t *rx = json_pack(
			"{s:s, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
			"kind", "measured", "packets", (json_int_t)r->rx_packets, "bytes",
			(json_int_t)r->rx_bytes, "pps",
			(double)r->rx_packets / (x->n_tx ? d : r->rx_window_s), "signed_packets",
			(json_int_t)(r->rx_packets - r->foreign - r->stale), "unique_packets",
			(json_int_t)r->rx_unique, "foreign_packets", (json_int_t)r->foreign,
			"foreign_bytes", (json_int_t)r->foreign_bytes, "stale_packets",
			(json_int_t)r->stale, "lost", (json_int_t)r->rx_lost, "duplicates",
			(json_int_t)r->rx_duplicates, "reordered", (json_int_t)r->rx_reordered,
			"late_unchecked", (json_int_t)r->rx_late_unchecked, "latency_ns",
			tg_report_latency(&r->all, x->hz));
		json_object_set_new(rx, "window_s", json_real(r->rx_window_s));
		json_object_set_new(rx, "no_timestamp", json_integer((json_int_t)r->no_timestamp));
		{
			json_t *w = json_object();

			for (unsigned k = 1; k < TG_RX_REASONS; k++)
				json_object_set_new(w, tg_rx_reason_name[k],
					json_integer((json_int_t)r->why[k]));
			json_object_set_new(rx, "foreign_by_reason", w);
		}
		json_object_set_new(root, "rx", rx);
	}
	for (unsigned i = 0; i < TG_STREAM_IDS; i++) {
		const struct tg_stream_result *s = &r->s[i];
		uint64_t unique = tg_seq_unique(&s->seq);
		json_t *o;

		if (!s->local && s->seq.received == 0)
			continue;
		o = json_pack("{s:i, s:s, s:b}", "id", i, "kind", "measured", "local", s->local);
		if (s->local) {
			const struct tg_txjob *j = NULL;

			for (unsigned k = 0; k < x->n_tx; k++)
				if (x->tx[k].id == i)
					j = &x->tx[k];
			json_object_set_new(o, "name", json_string(j->cfg->name));
			json_object_set_new(o, "queue", json_integer(j->queue));
			json_object_set_new(
				o, "tx_packets", json_integer((json_int_t)s->tx_packets));
			json_object_set_new(o, "tx_bytes", json_integer((json_int_t)s->tx_bytes));
			json_object_set_new(o, "link_full", json_integer((json_int_t)s->link_full));
			json_object_set_new(o, "tx_pps", json_real((double)s->tx_packets / d));
			if (s->asked_pps > 0)
				json_object_set_new(o, "asked_pps", json_real(s->asked_pps));
			if (j->due)
				json_object_set_new(o, "timing",
					json_pack("{s:s, s:f, s:s, s:o, s:o}", "kind", "measured",
						"speed", j->cfg->pcap_speed, "measured_at",
						"handoff to the port (rte_eth_tx_burst), not the "
						"wire",
						"gap_error_ns",
						tg_report_latency(j->gap_err, x->hz), "lateness_ns",
						tg_report_latency(j->late, x->hz)));
		}
		if (x->n_rx) {
			uint64_t expected = s->local ? s->tx_packets : s->seq.next;

			json_object_set_new(o, "expected_from",
				json_string(s->local ? "tx_packets" : "highest sequence + 1"));
			json_object_set_new(
				o, "rx_packets", json_integer((json_int_t)s->seq.received));
			json_object_set_new(o, "rx_bytes", json_integer((json_int_t)s->seq.bytes));
			json_object_set_new(o, "unique", json_integer((json_int_t)unique));
			json_object_set_new(o, "lost",
				json_integer(
					(json_int_t)(expected > unique ? expected - unique : 0)));
			json_object_set_new(
				o, "duplicates", json_integer((json_int_t)s->seq.duplicates));
			json_object_set_new(
				o, "reordered", json_integer((json_int_t)s->seq.reordered));
			json_object_set_new(o, "late_unchecked",
				json_integer((json_int_t)s->seq.late_unchecked));
			json_object_set_new(o, "latency_ns", tg_report_latency(&s->hist, x->hz));
		}
		json_array_append_new(streams, o);
	}
	json_object_set_new(root, "streams", streams);
	return root;
}

/* To --stats FILE (written to FILE.tmp first, then renamed, so a crash
 * never leaves half a file; a link, a device or a pipe, such as
 * /dev/stdout, is written through instead, never replaced) or to stdout. */
int
tg_report_write(const struct tg_cfg *c, json_t *root)
{
	char tmp[PATH_MAX + 8];
	struct stat st;

	if (!c->stats_path[0]) {
		/* A reader that went away gives EPIPE (SIGPIPE is ignored). */
		if (json_dumpf(root, stdout, JSON_INDENT(2)) || fputc('\n', stdout) == EOF ||
			fflush(stdout)) {
			fprintf(stderr, "pp-tgen: cannot write statistics to stdout (%s)\n",
				strerror(errno));
			return -1;
		}
		return 0;
	}
	bool direct = lstat(c->stats_path, &st) == 0 && !S_ISREG(st.st_mode);
	if (direct)
		snprintf(tmp, sizeof(tmp), "%s", c->stats_path);
	else
		snprintf(tmp, sizeof(tmp), "%s.tmp", c->stats_path);
	if (json_dump_file(root, tmp, JSON_INDENT(2)) || (!direct && rename(tmp, c->stats_path))) {
		/* What was measured is not lost: it goes to stdout instead. */
		fprintf(stderr,
			"pp-tgen: cannot write statistics to %s (%s); writing them to stdout\n",
			c->stats_path, strerror(errno));
		if (!direct)
			unlink(tmp);
		json_dumpf(root, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		fflush(stdout);
		return -1;
	}
	return 0;
}
