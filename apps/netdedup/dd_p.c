/* netdedup's P: content-defined fine chunks across the coarse chunks of a
 * stream (the tail of one message is carried into the next), each chunk
 * through dd_encode (SHA-1, the shared table, deflate); the records go to
 * T in an output mbuf hung on the message.  A chunk that lies within one
 * message is read where it is; only one that spans two is copied (into the
 * slot's carry buffer). */
#include <string.h>

#include <rte_mempool.h>

#include "dd_app.h"

static void
encode_message(struct dd_task *t, struct rte_mbuf *m)
{
	struct dd_msg *d = dd_msg(m);
	struct dd_p_slot *ps = &t->p.slots[d->slot];
	struct rte_mbuf *out = rte_pktmbuf_alloc(t->app->out_pool);
	if (out == NULL) {
		/* Cannot happen with the pools sized alike (one output per
		 * message); should it, T marks the stream's store failed. */
		t->p.out_missing++;
		d->out = NULL;
		if (d->flags & DD_MSG_FIRST)
			ps->carry_len = 0;
		return;
	}
	uint8_t *o = rte_pktmbuf_mtod(out, uint8_t *), *o0 = o;
	if (d->flags & DD_MSG_FIRST) {
		dd_cdc_reset(&ps->cdc);
		ps->carry_len = 0;
		ps->chunks = 0;
		o += dd_encode_header(o, d->stream_id, d->announced);
	}
	const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t n = m->data_len, pos = 0;
	while (pos < n) {
		bool cut;
		size_t k = dd_cdc_scan(&ps->cdc, data + pos, n - pos, &cut);
		if (!cut) {
			/* The chunk goes on in the next message (at most
			 * DD_MAX_CHUNK in all: the scan cuts there). */
			memcpy(ps->carry + ps->carry_len, data + pos, k);
			ps->carry_len += (uint32_t)k;
		} else if (ps->carry_len != 0) {
			memcpy(ps->carry + ps->carry_len, data + pos, k);
			o += dd_encode_chunk(&t->p.enc, ps->carry, ps->carry_len + k, o);
			ps->carry_len = 0;
			ps->chunks++;
		} else {
			o += dd_encode_chunk(&t->p.enc, data + pos, k, o);
			ps->chunks++;
		}
		pos += k;
	}
	if (d->flags & DD_MSG_END) {
		if (ps->carry_len != 0) {
			o += dd_encode_chunk(&t->p.enc, ps->carry, ps->carry_len, o);
			ps->chunks++;
		}
		ps->carry_len = 0;
		dd_cdc_reset(&ps->cdc);
		o += dd_encode_end(
			o, (enum dd_end)d->status, d->offset + n, d->announced, ps->chunks);
	}
	out->data_len = (uint16_t)(o - o0);
	out->pkt_len = out->data_len;
	d->out = out;
}

void
dd_p_process(void *task, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	struct dd_task *t = task;
	for (uint16_t i = 0; i < n; i++) {
		encode_message(t, pkts[i]);
		verdict[i] = PP_VERDICT_FORWARD;
	}
}
