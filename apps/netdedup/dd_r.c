/* netdedup's R: the stack, the client protocol (u64 length, big-endian,
 * then the bytes), coarse chunks, receipts.
 *
 * Coarse chunks are cut at a fixed size (--coarse-kib): P's content-defined
 * boundaries run across them (P carries the tail of one into the next), so
 * the coarse size sets the message rate, not what deduplicates.  Nothing is
 * refused or dropped here: when the ring or the message pool is full, the
 * bytes wait in the stack and the TCP window closes. */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "dd_app.h"

static struct rte_mbuf *
new_msg(struct dd_task *t, struct dd_r_slot *rs)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(t->app->msg_pool);
	if (m == NULL) {
		t->r.ctr.msg_waits++;
		return NULL;
	}
	struct dd_msg *d = dd_msg(m);
	d->stream_id = rs->stream_id;
	d->announced = rs->announced;
	d->offset = rs->received;
	d->out = NULL;
	d->gen = rs->gen;
	d->slot = (uint16_t)(rs - t->r.slots);
	d->flags = rs->first ? DD_MSG_FIRST : 0;
	d->status = 0;
	rs->first = false;
	return m;
}

static void
hand_over(struct dd_task *t, struct dd_r_slot *rs, struct rte_mbuf **out, unsigned *n)
{
	struct rte_mbuf *m = rs->cur;
	m->pkt_len = m->data_len;
	dd_msg(m)->r_tsc = rte_rdtsc();
	out[(*n)++] = m;
	rs->cur = NULL;
	t->r.ctr.msgs++;
}

/* The stream's last message, flagged with how it ended.  false: no room or
 * no message now (tried again next poll). */
static bool
end_stream(struct dd_task *t, struct dd_r_slot *rs, enum dd_end status, struct rte_mbuf **out,
	unsigned *n, unsigned room)
{
	if (*n == room || (rs->cur == NULL && (rs->cur = new_msg(t, rs)) == NULL))
		return false;
	dd_msg(rs->cur)->flags |= DD_MSG_END;
	dd_msg(rs->cur)->status = (uint8_t)status;
	hand_over(t, rs, out, n);
	struct dd_r_counters *c = &t->r.ctr;
	switch (status) {
	case DD_END_COMPLETE:
		c->streams.complete++;
		break;
	case DD_END_SHORT:
		c->streams.short_++;
		break;
	case DD_END_RESET:
		c->streams.reset++;
		break;
	default:
		c->streams.cut++;
		break;
	}
	rs->receipts_pending++;
	rs->phase = DD_HEADER;
	return true;
}

/* One connection slot: read what it has into messages.  Returns how many
 * messages it put in out (at most room). */
static unsigned
serve_slot(struct dd_task *t, unsigned slot, struct rte_mbuf **out, unsigned room, bool stopping)
{
	struct pp_conn *c = pp_stack_conn(t->r.si, slot);
	struct dd_r_slot *rs = &t->r.slots[slot];
	struct dd_cfg *cfg = t->app->cfg;
	unsigned n = 0;

	if (c->state == PP_CONN_FREE)
		return 0;
	if (rs->phase == DD_IDLE || rs->gen != c->gen) {
		/* A new connection in this slot (the last one's stream ended
		 * before it was released). */
		rs->gen = c->gen;
		rs->phase = DD_HEADER;
		rs->hdr_have = 0;
		rs->receipts_pending = 0;
	}
	for (;;) {
		if (rs->phase == DD_HEADER) {
			if (stopping)
				break; /* no new stream once the run ends */
			rs->hdr_have = (uint8_t)(rs->hdr_have +
				pp_conn_read(
					c, rs->hdr + rs->hdr_have, DD_LENGTH_BYTES - rs->hdr_have));
			if (rs->hdr_have < DD_LENGTH_BYTES)
				break;
			uint64_t len;
			memcpy(&len, rs->hdr, sizeof(len));
			len = rte_be_to_cpu_64(len);
			rs->hdr_have = 0;
			if (len > DD_MAX_ANNOUNCED) {
				/* Not a length a client means: what follows
				 * cannot be framed.  Reset, counted. */
				t->r.ctr.bad_length++;
				pp_conn_release(c);
				rs->phase = DD_IDLE;
				return n;
			}
			rs->stream_id = __atomic_fetch_add(&cfg->next_stream, 1, __ATOMIC_RELAXED);
			rs->announced = len;
			rs->received = 0;
			rs->first = true;
			rs->phase = DD_DATA;
			t->r.ctr.streams.started++;
		}
		if (rs->phase != DD_DATA)
			break;
		if (rs->received == rs->announced) {
			if (!end_stream(t, rs, DD_END_COMPLETE, out, &n, room))
				break;
			continue;
		}
		if (n == room)
			break;
		if (rs->cur == NULL && (rs->cur = new_msg(t, rs)) == NULL)
			break;
		struct rte_mbuf *m = rs->cur;
		size_t want = RTE_MIN(
			(uint64_t)(cfg->coarse - m->data_len), rs->announced - rs->received);
		size_t got =
			pp_conn_read(c, rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len), want);
		m->data_len = (uint16_t)(m->data_len + got);
		rs->received += got;
		t->r.ctr.input_bytes += got;
		if (rs->received == rs->announced)
			continue; /* ended above */
		if (m->data_len == cfg->coarse) {
			hand_over(t, rs, out, &n);
			continue;
		}
		if (got != 0)
			continue;
		/* Nothing more to read now. */
		if (stopping) {
			if (!end_stream(t, rs, DD_END_CUT, out, &n, room))
				break;
			rs->phase = DD_DONE;
			break;
		}
		if (c->state == PP_CONN_PEER_CLOSED || c->state == PP_CONN_RESET) {
			if (!end_stream(t, rs,
				    c->state == PP_CONN_RESET ? DD_END_RESET : DD_END_SHORT, out,
				    &n, room))
				break;
			continue;
		}
		break;
	}
	/* A connection that ended between streams: released once its receipts
	 * went out (a reset one gets none). */
	if (!stopping && rs->phase == DD_HEADER &&
		(c->state == PP_CONN_PEER_CLOSED || c->state == PP_CONN_RESET)) {
		if (rs->hdr_have != 0) {
			t->r.ctr.streams.truncated_header++;
			rs->hdr_have = 0;
		}
		if (c->state == PP_CONN_RESET || rs->receipts_pending == 0) {
			pp_conn_release(c);
			rs->phase = DD_IDLE;
		}
	}
	return n;
}

/* Streams T has written: their receipts. */
static void
send_receipts(struct dd_task *t)
{
	struct dd_done d;
	while (rte_ring_sc_dequeue_elem(t->done, &d, sizeof(d)) == 0) {
		struct pp_conn *c = pp_stack_conn(t->r.si, d.slot);
		struct dd_r_slot *rs = &t->r.slots[d.slot];
		uint8_t rec[DD_RECEIPT_BYTES];
		bool same = c->state != PP_CONN_FREE && c->gen == d.gen && rs->gen == d.gen &&
			rs->phase != DD_IDLE;
		if (same)
			rs->receipts_pending--;
		dd_encode_receipt(rec, (enum dd_end)d.status, d.stream_id, d.stored, d.announced);
		pp_server_send_receipt(c, same, rec, sizeof(rec), &t->r.ctr.receipts);
	}
}

static bool
streams_open(const struct dd_task *t)
{
	unsigned k = pp_stack_max_conns(t->app->stack);
	for (unsigned i = 0; i < k; i++)
		if (t->r.slots[i].phase == DD_DATA)
			return true;
	return false;
}

static bool
slot_busy(const void *task, unsigned k)
{
	const struct dd_r_slot *rs = &((const struct dd_task *)task)->r.slots[k];
	return rs->phase == DD_DATA || rs->receipts_pending != 0;
}

/* --streams N: every stream done; then the run ends when every receipt
 * of this instance has reached its client (acknowledged by its TCP, or
 * the client closed), or --linger seconds later. */
static bool
input_ended(struct dd_task *t)
{
	if (t->app->cfg->srv.streams == 0) /* the common case, at every idle poll */
		return false;
	return pp_server_input_ended(&t->app->cfg->srv,
		__atomic_load_n(&t->app->streams_done, __ATOMIC_ACQUIRE), !rte_ring_empty(t->done),
		t->r.si, pp_stack_max_conns(t->app->stack), slot_busy, t, &t->r.end_tsc);
}

int
dd_r_rx(void *task, struct rte_mbuf **pkts, uint16_t max, int stopping)
{
	struct dd_task *t = task;
	unsigned n = 0, k = pp_stack_max_conns(t->app->stack);
	pp_stack_poll_begin(t->r.si, !stopping);
	if (!stopping)
		send_receipts(t);
	for (unsigned i = 0; i < k && n < max; i++)
		n += serve_slot(t, (t->r.next_slot + i) % k, pkts + n, max - n, stopping != 0);
	t->r.next_slot = (t->r.next_slot + 1) % k; /* fair when the ring fills */
	int ret = (int)n;
	if (n == 0 && (stopping ? !streams_open(t) : input_ended(t)))
		ret = PP_RX_END;
	pp_stack_poll_end(t->r.si);
	return ret;
}
