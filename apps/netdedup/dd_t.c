/* netdedup's T: writes each stream's records, in order, to its file
 * (--out DIR: DIR/stream-<id>.pdd), times each coarse chunk from R to here,
 * and tells R when a stream is written (R sends the receipt).  The order
 * needs no reordering buffer: an instance's R -> P -> T rings are FIFO and
 * its one P keeps a stream's messages in order; T checks the sequence
 * through each stream's offsets and counts a gap as a failed store.
 * (PARSEC's reorder stage exists because its stages are thread pools.) */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "dd_app.h"

static void
open_stream(struct dd_task *t, struct dd_t_slot *ts, uint64_t stream_id)
{
	const char *dir = t->app->cfg->srv.out_dir;
	ts->failed = false;
	ts->fd = -1;
	if (dir == NULL)
		return;
	char path[4096];
	snprintf(path, sizeof(path), "%s/stream-%" PRIu64 ".pdd", dir, stream_id);
	ts->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (ts->fd < 0) {
		t->t.ctr.store.open_errors++;
		ts->failed = true;
		return;
	}
	t->t.ctr.store.files++;
}

uint16_t
dd_t_tx(void *task, struct rte_mbuf **pkts, uint16_t n)
{
	struct dd_task *t = task;
	struct dd_t_counters *c = &t->t.ctr;
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	uint16_t i;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct dd_msg *d = dd_msg(m);
		/* R takes the notice off the ring; until it has room the
		 * message waits (nothing is done to it before this check). */
		if ((d->flags & DD_MSG_END) && rte_ring_full(t->done))
			break;
		struct dd_t_slot *ts = &t->t.slots[d->slot];
		if (d->flags & DD_MSG_FIRST) {
			open_stream(t, ts, d->stream_id);
			ts->next_offset = 0;
		}
		if (d->offset != ts->next_offset) {
			c->store.sequence_gaps++;
			ts->failed = true;
		}
		ts->next_offset = d->offset + m->data_len;
		if (d->out != NULL) {
			uint16_t len = d->out->data_len;
			if (ts->fd >= 0 && !ts->failed &&
				!pp_write_all(ts->fd, rte_pktmbuf_mtod(d->out, uint8_t *), len)) {
				c->store.write_errors++;
				ts->failed = true;
			}
			c->store.bytes += len;
			rte_pktmbuf_free(d->out);
			d->out = NULL;
		} else {
			c->no_output++;
			ts->failed = true;
		}
		/* in double, as nf_t.c: the cycles times 10^9 overflowed 64 bits past about 6 s at 3 GHz */
		uint64_t ns = (uint64_t)((double)(now - d->r_tsc) * 1e9 / (double)hz);
		pp_latency_add(&c->lat, &t->t.lat_max_ns, ns);
		if (d->flags & DD_MSG_END) {
			if (ts->fd >= 0 && close(ts->fd) != 0 && !ts->failed) {
				c->store.write_errors++;
				ts->failed = true;
			}
			ts->fd = -1;
			struct dd_done done = {
				.stream_id = d->stream_id,
				.stored = d->offset + m->data_len,
				.announced = d->announced,
				.gen = d->gen,
				.slot = d->slot,
				.status = ts->failed ? DD_END_STORE_FAILED : d->status,
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
