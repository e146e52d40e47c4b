/* netstreamcluster's T: collects each stream's weighted chunk centres in
 * stream order (an instance's rings are FIFO and its one P keeps a
 * stream's messages in order; T checks the sequence through the points'
 * offsets), and at the stream's end clusters them (sc_cluster, seeded by
 * the stream's seed), writes the result to --out DIR/stream-<id>.json and
 * tells R (which sends the receipt).  The final clustering and the file
 * are per stream, not per message; their buffers were allocated at
 * start-up. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sc_app.h"

static const char *const end_names[] = { "complete", "short", "reset", "cut_by_run_end",
	"store_failed" };

/* Appends to the result's text; false when it does not fit. */
static bool put(struct sc_task *t, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool
put(struct sc_task *t, size_t *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(t->t.json + *at, t->t.json_cap - *at, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= t->t.json_cap - *at)
		return false;
	*at += (size_t)k;
	return true;
}

/* The final clustering and its file. */
static void
finish(struct sc_task *t, struct sc_t_slot *ts, const struct sc_msg *d, uint64_t points)
{
	struct sc_t_counters *c = &t->t.ctr;
	unsigned dim = d->h.dim;
	struct sc_result res = { .centre = t->t.centre, .weight = t->t.weight };
	sc_cluster(&t->t.work, ts->pts, dim, ts->weight, ts->n, d->h.kmin, d->h.kmax,
		sc_final_seed(d->h.seed), &res);
	c->finals++;
	c->final_centres_in += ts->n;
	const char *dir = t->app->cfg->srv.out_dir;
	if (dir == NULL || ts->failed)
		return;
	size_t at = 0;
	bool ok = put(t, &at,
		"{\"stream\": %" PRIu64 ", \"status\": \"%s\", \"points\": %" PRIu64
		", \"announced\": %" PRIu64 ", \"dim\": %u, \"chunk\": %u, \"kmin\": %u, "
		"\"kmax\": %u, \"seed\": %" PRIu64 ", \"chunks\": %" PRIu64
		", \"chunk_centres\": %u, \"k\": %u, \"z\": %.17g, \"cost\": %.17g, "
		"\"centres\": [",
		d->stream_id, end_names[d->status], points, d->h.points, dim, d->h.chunk, d->h.kmin,
		d->h.kmax, d->h.seed, ts->chunks, ts->n, res.k, res.z, res.cost);
	for (uint32_t i = 0; ok && i < res.k; i++) {
		const float *p = ts->pts + (size_t)res.centre[i] * dim;
		ok = put(t, &at, "%s{\"weight\": %" PRIu64 ", \"coords\": [", i ? ", " : "",
			res.weight[i]);
		for (unsigned j = 0; ok && j < dim; j++)
			ok = put(t, &at, "%s%.9g", j ? ", " : "", (double)p[j]);
		ok = ok && put(t, &at, "]}");
	}
	ok = ok && put(t, &at, "]}\n");
	char path[4096];
	snprintf(path, sizeof(path), "%s/stream-%" PRIu64 ".json", dir, d->stream_id);
	int fd = ok ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
	if (fd < 0) {
		c->store.open_errors++;
		ts->failed = true;
		return;
	}
	c->store.files++;
	if (!pp_write_all(fd, t->t.json, at) || close(fd) != 0) {
		c->store.write_errors++;
		ts->failed = true;
		return;
	}
	c->store.bytes += at;
}

uint16_t
sc_t_tx(void *task, struct rte_mbuf **pkts, uint16_t n)
{
	struct sc_task *t = task;
	struct sc_t_counters *c = &t->t.ctr;
	const struct sc_cfg *cfg = t->app->cfg;
	uint16_t i;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct sc_msg *d = sc_msg(m);
		if ((d->flags & SC_MSG_END) && rte_ring_full(t->done))
			break;
		struct sc_t_slot *ts = &t->t.slots[d->slot];
		unsigned dim = d->h.dim;
		if (d->flags & SC_MSG_FIRST) {
			ts->failed = false;
			ts->n = 0;
			ts->chunks = 0;
			ts->next_point = 0;
		}
		if (d->first_point != ts->next_point) {
			c->store.sequence_gaps++;
			ts->failed = true;
		}
		ts->next_point = d->first_point + m->data_len / (4 * dim);
		if (d->out != NULL) {
			const uint8_t *o = rte_pktmbuf_mtod(d->out, const uint8_t *);
			uint32_t k;
			memcpy(&k, o, 4);
			o += 8;
			if (ts->n + k > cfg->max_centres) {
				c->overflow++; /* R's header check prevents it */
				ts->failed = true;
			} else {
				for (uint32_t j = 0; j < k; j++) {
					memcpy(&ts->weight[ts->n], o, 8);
					memcpy(ts->pts + (size_t)ts->n * dim, o + 8,
						4 * (size_t)dim);
					ts->n++;
					o += 8 + 4 * (size_t)dim;
				}
			}
			ts->chunks++;
			rte_pktmbuf_free(d->out);
			d->out = NULL;
		} else if (d->flags & SC_MSG_CHUNK_END) {
			c->no_output++;
			ts->failed = true;
		}
		if (d->flags & SC_MSG_END) {
			finish(t, ts, d, ts->next_point);
			struct sc_done done = {
				.stream_id = d->stream_id,
				.points = ts->next_point,
				.announced = d->h.points,
				.gen = d->gen,
				.slot = d->slot,
				.status = ts->failed ? SC_END_STORE_FAILED : d->status,
			};
			if (ts->failed)
				c->store.failed++;
			else
				c->store.stored++;
			rte_ring_sp_enqueue_elem(t->done, &done, sizeof(done));
			__atomic_fetch_add(&t->app->streams_done, 1, __ATOMIC_RELEASE);
		}
		rte_pktmbuf_free(m);
	}
	return i;
}
