/* netstreamcluster's R: the stack, the client protocol (a 32-byte header,
 * then records of dim float32), messages of whole records, receipts.
 *
 * A message never spans two chunks: chunks are cut by point count (the
 * header's chunk), never where TCP segments end, so the result does not
 * depend on how the stream was segmented.  A record split across segments
 * simply waits in the message until its last byte comes.  Nothing is
 * refused or dropped: when the ring or the message pool is full the bytes
 * wait in the stack and the TCP window closes. */
#include <string.h>

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sc_app.h"

static uint64_t
rec_bytes(const struct sc_r_slot *rs)
{
	return 4ull * rs->h.dim;
}

static struct rte_mbuf *
new_msg(struct sc_task *t, struct sc_r_slot *rs)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(t->app->msg_pool);
	if (m == NULL) {
		t->r.ctr.msg_waits++;
		return NULL;
	}
	struct sc_msg *d = sc_msg(m);
	d->h = rs->h;
	d->stream_id = rs->stream_id;
	d->first_point = rs->points;
	d->chunk = rs->chunk;
	d->out = NULL;
	d->gen = rs->gen;
	d->slot = (uint16_t)(rs - t->r.slots);
	d->flags = rs->first ? SC_MSG_FIRST : 0;
	d->status = 0;
	rs->first = false;
	/* whole records, at most msg_bytes, never past the chunk's end */
	uint64_t per = t->app->cfg->msg_bytes / rec_bytes(rs);
	uint64_t left = RTE_MIN(rs->h.chunk - rs->in_chunk, rs->h.points - rs->points);
	rs->msg_target = (unsigned)(RTE_MIN(per, left) * rec_bytes(rs));
	return m;
}

static void
hand_over(struct sc_task *t, struct sc_r_slot *rs, struct rte_mbuf **out, unsigned *n)
{
	struct rte_mbuf *m = rs->cur;
	m->pkt_len = m->data_len;
	out[(*n)++] = m;
	rs->cur = NULL;
	t->r.ctr.msgs++;
}

/* The stream's last message, flagged with how it ended (a record cut by
 * the end is dropped and counted).  false: no room or no message now. */
static bool
end_stream(struct sc_task *t, struct sc_r_slot *rs, enum sc_end status, struct rte_mbuf **out,
	unsigned *n, unsigned room)
{
	if (*n == room || (rs->cur == NULL && (rs->cur = new_msg(t, rs)) == NULL))
		return false;
	struct rte_mbuf *m = rs->cur;
	unsigned part = (unsigned)(m->data_len % rec_bytes(rs));
	t->r.ctr.partial_record_bytes += part;
	m->data_len = (uint16_t)(m->data_len - part);
	struct sc_msg *d = sc_msg(m);
	d->flags |= SC_MSG_END;
	if (m->data_len != 0 || rs->in_chunk != 0)
		d->flags |= SC_MSG_CHUNK_END; /* the last chunk, maybe short */
	d->status = (uint8_t)status;
	hand_over(t, rs, out, n);
	struct sc_r_counters *c = &t->r.ctr;
	switch (status) {
	case SC_END_COMPLETE:
		c->streams.complete++;
		break;
	case SC_END_SHORT:
		c->streams.short_++;
		break;
	case SC_END_RESET:
		c->streams.reset++;
		break;
	default:
		c->streams.cut++;
		break;
	}
	if (rs->h.points == 0)
		c->empty++;
	rs->receipts_pending++;
	rs->phase = SC_HEADER;
	return true;
}

/* The header read: a stream to take, or false (counted) for one that
 * cannot be framed or clustered here. */
static bool
take_header(struct sc_task *t, struct sc_r_slot *rs)
{
	const struct sc_cfg *cfg = t->app->cfg;
	struct sc_header *h = &rs->h;
	memcpy(&h->dim, rs->hdr + 4, 4);
	memcpy(&h->points, rs->hdr + 8, 8);
	memcpy(&h->chunk, rs->hdr + 16, 4);
	memcpy(&h->kmin, rs->hdr + 20, 2);
	memcpy(&h->kmax, rs->hdr + 22, 2);
	memcpy(&h->seed, rs->hdr + 24, 8);
	if (memcmp(rs->hdr, "PPSC", 4) != 0 || h->dim == 0 || h->dim > cfg->max_dim ||
		h->chunk == 0 || h->chunk > cfg->max_chunk || h->kmin == 0 || h->kmin > h->kmax ||
		h->kmax > SC_MAX_K || h->points > SC_MAX_POINTS) {
		t->r.ctr.bad_header++;
		return false;
	}
	uint64_t chunks = (h->points + h->chunk - 1) / h->chunk;
	if (chunks * h->kmax > cfg->max_centres) {
		t->r.ctr.too_many_centres++;
		return false;
	}
	return true;
}

static unsigned
serve_slot(struct sc_task *t, unsigned slot, struct rte_mbuf **out, unsigned room, bool stopping)
{
	struct pp_conn *c = pp_stack_conn(t->r.si, slot);
	struct sc_r_slot *rs = &t->r.slots[slot];
	struct sc_cfg *cfg = t->app->cfg;
	unsigned n = 0;

	if (c->state == PP_CONN_FREE)
		return 0;
	if (rs->phase == SC_IDLE || rs->gen != c->gen) {
		rs->gen = c->gen;
		rs->phase = SC_HEADER;
		rs->hdr_have = 0;
		rs->receipts_pending = 0;
	}
	for (;;) {
		if (rs->phase == SC_HEADER) {
			if (stopping)
				break;
			rs->hdr_have = (uint8_t)(rs->hdr_have +
				pp_conn_read(
					c, rs->hdr + rs->hdr_have, SC_HEADER_BYTES - rs->hdr_have));
			if (rs->hdr_have < SC_HEADER_BYTES)
				break;
			rs->hdr_have = 0;
			if (!take_header(t, rs)) {
				/* what follows cannot be framed: reset, counted */
				pp_conn_release(c);
				rs->phase = SC_IDLE;
				return n;
			}
			rs->stream_id = __atomic_fetch_add(&cfg->next_stream, 1, __ATOMIC_RELAXED);
			rs->points = 0;
			rs->in_chunk = 0;
			rs->chunk = 0;
			rs->first = true;
			rs->phase = SC_DATA;
			t->r.ctr.streams.started++;
		}
		if (rs->phase != SC_DATA)
			break;
		if (rs->points == rs->h.points) {
			if (!end_stream(t, rs, SC_END_COMPLETE, out, &n, room))
				break;
			continue;
		}
		if (n == room)
			break;
		if (rs->cur == NULL && (rs->cur = new_msg(t, rs)) == NULL)
			break;
		struct rte_mbuf *m = rs->cur;
		size_t got = pp_conn_read(c, rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len),
			rs->msg_target - m->data_len);
		uint64_t rb = rec_bytes(rs);
		uint64_t whole = (m->data_len + got) / rb - m->data_len / rb;
		m->data_len = (uint16_t)(m->data_len + got);
		t->r.ctr.input_bytes += got;
		rs->points += whole;
		rs->in_chunk += whole;
		t->r.ctr.points += whole;
		if (m->data_len == rs->msg_target) {
			if (rs->in_chunk == rs->h.chunk || rs->points == rs->h.points) {
				sc_msg(m)->flags |= SC_MSG_CHUNK_END;
				rs->in_chunk = 0;
				rs->chunk++;
			}
			if (rs->points == rs->h.points)
				continue; /* the end message follows (empty) */
			hand_over(t, rs, out, &n);
			continue;
		}
		if (got != 0)
			continue;
		if (stopping) {
			if (!end_stream(t, rs, SC_END_CUT, out, &n, room))
				break;
			rs->phase = SC_DONE;
			break;
		}
		if (c->state == PP_CONN_PEER_CLOSED || c->state == PP_CONN_RESET) {
			if (!end_stream(t, rs,
				    c->state == PP_CONN_RESET ? SC_END_RESET : SC_END_SHORT, out,
				    &n, room))
				break;
			continue;
		}
		break;
	}
	if (!stopping && rs->phase == SC_HEADER &&
		(c->state == PP_CONN_PEER_CLOSED || c->state == PP_CONN_RESET)) {
		if (rs->hdr_have != 0) {
			t->r.ctr.streams.truncated_header++;
			rs->hdr_have = 0;
		}
		if (c->state == PP_CONN_RESET || rs->receipts_pending == 0) {
			pp_conn_release(c);
			rs->phase = SC_IDLE;
		}
	}
	return n;
}

static void
send_receipts(struct sc_task *t)
{
	struct sc_done d;
	while (rte_ring_sc_dequeue_elem(t->done, &d, sizeof(d)) == 0) {
		struct pp_conn *c = pp_stack_conn(t->r.si, d.slot);
		struct sc_r_slot *rs = &t->r.slots[d.slot];
		uint8_t rec[SC_RECEIPT_BYTES] = { 'P', 'P', 'S', 'R', d.status };
		bool same = c->state != PP_CONN_FREE && c->gen == d.gen && rs->gen == d.gen &&
			rs->phase != SC_IDLE;
		if (same)
			rs->receipts_pending--;
		memcpy(rec + 8, &d.stream_id, 8);
		memcpy(rec + 16, &d.points, 8);
		memcpy(rec + 24, &d.announced, 8);
		pp_server_send_receipt(c, same, rec, sizeof(rec), &t->r.ctr.receipts);
	}
}

static bool
streams_open(const struct sc_task *t)
{
	unsigned k = pp_stack_max_conns(t->app->stack);
	for (unsigned i = 0; i < k; i++)
		if (t->r.slots[i].phase == SC_DATA)
			return true;
	return false;
}

static bool
slot_busy(const void *task, unsigned k)
{
	const struct sc_r_slot *rs = &((const struct sc_task *)task)->r.slots[k];
	return rs->phase == SC_DATA || rs->receipts_pending != 0;
}

/* --streams N: every stream done; then the run ends when every receipt
 * of this instance has reached its client (acknowledged by its TCP, or
 * the client closed), or --linger seconds later. */
static bool
input_ended(struct sc_task *t)
{
	if (t->app->cfg->srv.streams == 0) /* the common case, at every idle poll */
		return false;
	return pp_server_input_ended(&t->app->cfg->srv,
		__atomic_load_n(&t->app->streams_done, __ATOMIC_ACQUIRE), !rte_ring_empty(t->done),
		t->r.si, pp_stack_max_conns(t->app->stack), slot_busy, t, &t->r.end_tsc);
}

int
sc_r_rx(void *task, struct rte_mbuf **pkts, uint16_t max, int stopping)
{
	struct sc_task *t = task;
	unsigned n = 0, k = pp_stack_max_conns(t->app->stack);
	pp_stack_poll_begin(t->r.si, !stopping);
	if (!stopping)
		send_receipts(t);
	for (unsigned i = 0; i < k && n < max; i++)
		n += serve_slot(t, (t->r.next_slot + i) % k, pkts + n, max - n, stopping != 0);
	t->r.next_slot = (t->r.next_slot + 1) % k;
	int ret = (int)n;
	if (n == 0 && (stopping ? !streams_open(t) : input_ended(t)))
		ret = PP_RX_END;
	pp_stack_poll_end(t->r.si);
	return ret;
}
