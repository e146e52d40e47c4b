/* What the statistics of an app that serves TCP in R share (netdedup,
 * netstreamcluster, netferret): per-task counter structs summed over the
 * instances, T's latency histogram (filled on the fast path: static inline
 * here) with its quantiles, a stream server's counts of its streams and of
 * the files T stored them in, and the JSON objects every such app writes
 * the same way (each keeps its own keys, and their order). */
#ifndef PP_SERVER_STATS_H
#define PP_SERVER_STATS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct pp_stack;
struct pp_receipt_counters;

static inline void
pp_json_set_u64(json_t *o, const char *key, uint64_t v)
{
	json_object_set_new(o, key, json_integer((json_int_t)v));
}

/* Sums counter structs made of uint64_t only (read while their tasks may
 * write them: a SIGUSR1 snapshot; 64-bit loads are not torn here). */
void pp_counters_add(void *sum, const void *add, size_t bytes);

/* Latency in nanoseconds, PP_LATENCY_SUB buckets per octave (from the two
 * bits below the top one). */
#define PP_LATENCY_SUB 4
#define PP_LATENCY_BUCKETS (64 * PP_LATENCY_SUB)

/* uint64_t only: a member of a counter struct that pp_counters_add sums.
 * The maximum is kept apart by the app (it is not summed). */
struct pp_latency {
	uint64_t hist[PP_LATENCY_BUCKETS];
	uint64_t sum_ns, n;
};

static inline unsigned
pp_latency_bucket(uint64_t ns)
{
	if (ns < 2)
		return 0;
	unsigned lg = 63u - (unsigned)__builtin_clzll(ns);
	unsigned sub = lg >= 2 ? (unsigned)((ns >> (lg - 2)) & (PP_LATENCY_SUB - 1)) : 0;
	return lg * PP_LATENCY_SUB + sub;
}

/* One message's latency, counted by T. */
static inline void
pp_latency_add(struct pp_latency *l, uint64_t *max_ns, uint64_t ns)
{
	l->hist[pp_latency_bucket(ns)]++;
	l->sum_ns += ns;
	l->n++;
	if (ns > *max_ns)
		*max_ns = ns;
}

/* The quantile q in microseconds: the upper edge of its bucket. */
double pp_latency_quantile_us(const struct pp_latency *l, double q);

/* A "latency_us" object: "what", count_key (the messages timed), "mean",
 * "p<P>" for each P of pct (percentiles, ended by 0), "max"; measured, in
 * microseconds. */
json_t *pp_latency_json(const struct pp_latency *l, uint64_t max_ns, const char *what,
	const char *count_key, const unsigned *pct);

/* A stream server's R (netdedup, netstreamcluster: a length or a header,
 * then the stream's bytes; a receipt when it is stored): the streams it
 * took and how they ended. */
struct pp_stream_counters {
	uint64_t started, complete, short_, reset, cut;
	uint64_t truncated_header; /* the client closed inside a header */
};

/* Its T: what it stored of them, a file per stream under --out. */
struct pp_store_counters {
	uint64_t stored, failed; /* streams */
	uint64_t open_errors, write_errors, sequence_gaps;
	uint64_t bytes, files;
};

/* A count an app adds to a shared object, under its key. */
struct pp_json_count {
	const char *key;
	uint64_t v;
};

/* The "streams" object: started, complete, short, reset, cut_by_run_end,
 * then the app's own counts (own[0..n_own-1], e.g. streams refused),
 * truncated_header, stored, store_failed. */
json_t *pp_streams_json(const struct pp_stream_counters *r, const struct pp_json_count *own,
	unsigned n_own, const struct pp_store_counters *t);

/* The "output" object: dir (null without --out), bytes, files,
 * open_errors, write_errors, sequence_gaps. */
json_t *pp_store_json(const char *dir, const struct pp_store_counters *t);

/* At teardown: 0 when every stream was stored (or nothing was to be
 * written: dir NULL); else -1, said on stderr as "APP: N WHAT to DIR". */
int pp_store_report(const char *app, const char *dir, uint64_t failed, const char *what);

/* An object of what became of the receipts: "sent", "not_sent_peer_gone",
 * "not_sent_no_room". */
json_t *pp_receipts_json(const struct pp_receipt_counters *c);

/* The stack's own statistics (pp_stack_stats) as out's "stack" (an empty
 * object before the stack was opened). */
void pp_stack_json(json_t *out, const struct pp_stack *st);

#endif
