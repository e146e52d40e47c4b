/* pp_server_stats.h: the statistics a TCP-serving app's stats callback
 * writes the same way as every other such app. */
#include "pp_server_stats.h"

#include <inttypes.h>
#include <stdio.h>

#include "pp_server.h"
#include "pp_stack.h"

void
pp_counters_add(void *sum, const void *add, size_t bytes)
{
	uint64_t *d = sum;
	const uint64_t *a = add;
	for (size_t i = 0; i < bytes / sizeof(uint64_t); i++)
		d[i] += a[i];
}

double
pp_latency_quantile_us(const struct pp_latency *l, double q)
{
	uint64_t want = (uint64_t)(q * (double)l->n), seen = 0;
	for (unsigned b = 0; b < PP_LATENCY_BUCKETS; b++) {
		seen += l->hist[b];
		if (seen > want || (seen == l->n && l->hist[b] != 0)) {
			unsigned lg = b / PP_LATENCY_SUB, sub = b % PP_LATENCY_SUB;
			double lo = lg >= 2 ? (double)(1ull << lg) * (1.0 + sub / 4.0)
					    : (double)(1ull << lg);
			return (lo + (lg >= 2 ? (double)(1ull << lg) / 4.0 : 1.0)) / 1000.0;
		}
	}
	return 0;
}

json_t *
pp_latency_json(const struct pp_latency *l, uint64_t max_ns, const char *what,
	const char *count_key, const unsigned *pct)
{
	json_t *o = json_object();
	json_object_set_new(o, "what", json_string(what));
	pp_json_set_u64(o, count_key, l->n);
	json_object_set_new(
		o, "mean", json_real(l->n ? (double)l->sum_ns / (double)l->n / 1000.0 : 0.0));
	for (; *pct != 0; pct++) {
		char key[16];
		snprintf(key, sizeof(key), "p%u", *pct);
		json_object_set_new(o, key, json_real(pp_latency_quantile_us(l, *pct / 100.0)));
	}
	json_object_set_new(o, "max", json_real((double)max_ns / 1000.0));
	return o;
}

json_t *
pp_streams_json(const struct pp_stream_counters *r, const struct pp_json_count *own, unsigned n_own,
	const struct pp_store_counters *t)
{
	json_t *o = json_object();
	pp_json_set_u64(o, "started", r->started);
	pp_json_set_u64(o, "complete", r->complete);
	pp_json_set_u64(o, "short", r->short_);
	pp_json_set_u64(o, "reset", r->reset);
	pp_json_set_u64(o, "cut_by_run_end", r->cut);
	for (unsigned k = 0; k < n_own; k++)
		pp_json_set_u64(o, own[k].key, own[k].v);
	pp_json_set_u64(o, "truncated_header", r->truncated_header);
	pp_json_set_u64(o, "stored", t->stored);
	pp_json_set_u64(o, "store_failed", t->failed);
	return o;
}

json_t *
pp_store_json(const char *dir, const struct pp_store_counters *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "dir", dir != NULL ? json_string(dir) : json_null());
	pp_json_set_u64(o, "bytes", t->bytes);
	pp_json_set_u64(o, "files", t->files);
	pp_json_set_u64(o, "open_errors", t->open_errors);
	pp_json_set_u64(o, "write_errors", t->write_errors);
	pp_json_set_u64(o, "sequence_gaps", t->sequence_gaps);
	return o;
}

int
pp_store_report(const char *app, const char *dir, uint64_t failed, const char *what)
{
	if (dir == NULL || failed == 0)
		return 0;
	fprintf(stderr, "%s: %" PRIu64 " %s to %s (see app_stats.output)\n", app, failed, what,
		dir);
	return -1;
}

json_t *
pp_receipts_json(const struct pp_receipt_counters *c)
{
	json_t *o = json_object();
	pp_json_set_u64(o, "sent", c->sent);
	pp_json_set_u64(o, "not_sent_peer_gone", c->peer_gone);
	pp_json_set_u64(o, "not_sent_no_room", c->no_room);
	return o;
}

void
pp_stack_json(json_t *out, const struct pp_stack *st)
{
	json_t *sk = json_object();
	if (st != NULL)
		pp_stack_stats(st, sk);
	json_object_set_new(out, "stack", sk);
}
