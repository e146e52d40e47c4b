/* netferret's R: the stack, the client protocol (an int32 length, host
 * byte order, then that many bytes of JPEG; -1 alone: the end tag), the
 * answers T wrote, and what happens to bad clients.
 *
 * A connection may carry several queries one after another (PARSEC's
 * client sends one and closes); R reads a query's bytes into one message
 * and hands it to P, then reads nothing more from that connection until
 * its answer is written.  Errors R finds (a length over the limit, a
 * negative length, a close before the query's end) are answered with
 * "!<word>" and the connection is drained until the answer is
 * acknowledged, then closed: what follows cannot be framed.  A connection
 * quiet for --idle-timeout seconds between queries (or inside one) is
 * closed and counted, so a client that never sends (or never closes)
 * does not hold a slot. */
#include <string.h>

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "nf_app.h"

static void
release(struct nf_r_slot *rs, struct pp_conn *c)
{
	rte_pktmbuf_free(rs->cur);
	rs->cur = NULL;
	pp_conn_release(c);
	rs->phase = NF_IDLE;
}

static void
answer_error(struct nf_task *t, struct nf_r_slot *rs, struct pp_conn *c, unsigned e)
{
	char buf[64];
	const char *word = nf_answer_error_name(e);
	int32_t len = (int32_t)(1 + strlen(word));
	memcpy(buf, &len, 4);
	buf[4] = '!';
	memcpy(buf + 5, word, (size_t)len - 1);
	if (c->state != PP_CONN_RESET && pp_conn_write(c, buf, 4 + (size_t)len) == 0)
		t->r.ctr.error_answers_sent++;
	else
		t->r.ctr.error_answers_no_room++;
	rte_pktmbuf_free(rs->cur);
	rs->cur = NULL;
	rs->phase = NF_DRAIN;
}

static void
hand_over(struct nf_task *t, struct nf_r_slot *rs, struct rte_mbuf **out, unsigned *n)
{
	struct rte_mbuf *m = rs->cur;
	struct nf_msg *d = nf_msg(m);
	m->pkt_len = m->data_len;
	d->r_tsc = rte_rdtsc();
	d->gen = rs->gen;
	d->slot = (uint16_t)(rs - t->r.slots);
	d->status = 0;
	d->n = 0;
	out[(*n)++] = m;
	rs->cur = NULL;
	rs->phase = NF_WAIT;
	t->r.ctr.queries++;
	__atomic_fetch_add(&t->app->queries_started, 1, __ATOMIC_RELAXED);
}

/* The length read: what comes next. */
static void
take_length(struct nf_task *t, struct nf_r_slot *rs, struct pp_conn *c)
{
	int32_t len;
	memcpy(&len, rs->lenb, 4);
	rs->len_have = 0;
	if (len == -1) {
		t->r.ctr.end_tags++;
		/* the queries started before it are what the run waits for */
		__atomic_store_n(&t->app->end_seen, 1, __ATOMIC_RELEASE);
		release(rs, c);
	} else if (len < 0) {
		t->r.ctr.bad_length++;
		answer_error(t, rs, c, NF_ANS_BAD_LENGTH);
	} else if ((uint32_t)len > t->app->cfg->max_query) {
		t->r.ctr.too_long++;
		answer_error(t, rs, c, NF_ANS_TOO_LONG);
	} else {
		rs->want = (uint32_t)len;
		rs->phase = NF_BODY;
	}
}

static unsigned
serve_slot(struct nf_task *t, unsigned slot, struct rte_mbuf **out, unsigned room, bool stopping,
	uint64_t now)
{
	struct pp_conn *c = pp_stack_conn(t->r.si, slot);
	struct nf_r_slot *rs = &t->r.slots[slot];
	unsigned n = 0;

	if (c->state == PP_CONN_FREE)
		return 0;
	if (rs->phase == NF_IDLE || rs->gen != c->gen) {
		rte_pktmbuf_free(rs->cur);
		rs->cur = NULL;
		rs->gen = c->gen;
		rs->phase = NF_LEN;
		rs->len_have = 0;
		rs->last_tsc = now;
		t->r.ctr.connections++;
	}
	bool closed = c->state == PP_CONN_PEER_CLOSED || c->state == PP_CONN_RESET;
	bool idle = now - rs->last_tsc > t->r.idle_tsc;
	switch (rs->phase) {
	case NF_LEN: {
		if (stopping)
			break;
		size_t got = pp_conn_read(c, rs->lenb + rs->len_have, 4u - rs->len_have);
		rs->len_have = (uint8_t)(rs->len_have + got);
		if (got != 0)
			rs->last_tsc = now;
		if (rs->len_have == 4) {
			take_length(t, rs, c);
			break;
		}
		if (closed || idle) {
			if (rs->len_have != 0)
				t->r.ctr.truncated_length++;
			else if (!closed)
				t->r.ctr.idle_closed++;
			release(rs, c);
		}
		break;
	}
	case NF_BODY: {
		if (n == room)
			break;
		if (rs->cur == NULL) {
			rs->cur = rte_pktmbuf_alloc(t->app->msg_pool);
			if (rs->cur == NULL) {
				t->r.ctr.msg_waits++; /* the bytes wait in the stack */
				break;
			}
		}
		struct rte_mbuf *m = rs->cur;
		size_t got = pp_conn_read(c, rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len),
			rs->want - m->data_len);
		m->data_len = (uint16_t)(m->data_len + got);
		t->r.ctr.input_bytes += got;
		if (got != 0)
			rs->last_tsc = now;
		if (m->data_len == rs->want) {
			hand_over(t, rs, out, &n);
		} else if (stopping) {
			t->r.ctr.cut_by_run_end++;
			release(rs, c);
		} else if (c->state == PP_CONN_RESET) {
			t->r.ctr.reset_mid_query++;
			release(rs, c);
		} else if (closed) {
			t->r.ctr.truncated_query++;
			answer_error(t, rs, c, NF_ANS_TRUNCATED);
		} else if (idle) {
			t->r.ctr.idle_closed++;
			release(rs, c);
		}
		break;
	}
	case NF_DRAIN: {
		uint8_t sink[512];
		size_t got;
		while ((got = pp_conn_read(c, sink, sizeof(sink))) != 0)
			t->r.ctr.discarded_bytes += got;
		if (closed || !pp_conn_unacked(c) || idle)
			release(rs, c);
		break;
	}
	default: /* NF_WAIT: the answer comes through t->answers */
		break;
	}
	return n;
}

/* Writes the answers T made, on their connections. */
static void
send_answers(struct nf_task *t, uint64_t now)
{
	struct rte_mbuf *m;
	while (rte_ring_sc_dequeue(t->answers, (void **)&m) == 0) {
		struct nf_msg *d = nf_msg(m);
		struct pp_conn *c = pp_stack_conn(t->r.si, d->slot);
		struct nf_r_slot *rs = &t->r.slots[d->slot];
		bool same = c->state != PP_CONN_FREE && c->gen == d->gen && rs->gen == d->gen &&
			rs->phase == NF_WAIT;
		pp_server_send_receipt(
			c, same, rte_pktmbuf_mtod(m, const void *), m->data_len, &t->r.ctr.answers);
		rte_pktmbuf_free(m);
		if (!same)
			continue;
		rs->last_tsc = now;
		if (c->state == PP_CONN_RESET)
			release(rs, c);
		else
			rs->phase = NF_LEN; /* the next query, or the client's close */
	}
}

static bool
slot_busy(const void *task, unsigned k)
{
	uint8_t ph = ((const struct nf_task *)task)->r.slots[k].phase;
	return ph == NF_BODY || ph == NF_WAIT || ph == NF_DRAIN;
}

/* --streams N (queries answered) or an end tag (every query started is
 * answered): then the run ends when every answer of this instance has
 * reached its client (acknowledged by its TCP, or the client closed), or
 * --linger seconds later. */
static bool
input_ended(struct nf_task *t)
{
	const struct nf_state *s = t->app;
	uint64_t done = __atomic_load_n(&s->queries_done, __ATOMIC_ACQUIRE);
	bool end = (s->cfg->srv.streams != 0 && done >= s->cfg->srv.streams) ||
		(__atomic_load_n(&s->end_seen, __ATOMIC_ACQUIRE) &&
			done >= __atomic_load_n(&s->queries_started, __ATOMIC_ACQUIRE));
	if (!end)
		return false;
	struct pp_server_opts o = s->cfg->srv;
	o.streams = 1;
	return pp_server_input_ended(&o, 1, !rte_ring_empty(t->answers), t->r.si,
		pp_stack_max_conns(s->stack), slot_busy, t, &t->r.end_tsc);
}

int
nf_r_rx(void *task, struct rte_mbuf **pkts, uint16_t max, int stopping)
{
	struct nf_task *t = task;
	unsigned n = 0, k = pp_stack_max_conns(t->app->stack);
	uint64_t now = rte_rdtsc();
	pp_stack_poll_begin(t->r.si, !stopping);
	send_answers(t, now);
	for (unsigned i = 0; i < k && n < max; i++)
		n += serve_slot(t, (t->r.next_slot + i) % k, pkts + n, max - n, stopping != 0, now);
	t->r.next_slot = (t->r.next_slot + 1) % k;
	/* stopping: partial queries were let go above; answers still on
	 * their way from P and T are counted at teardown */
	int ret = (int)n;
	if (n == 0 && (stopping || input_ended(t)))
		ret = PP_RX_END;
	pp_stack_poll_end(t->r.si);
	return ret;
}
