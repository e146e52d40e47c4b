/* netstreamcluster's P: gathers each chunk's messages into the slot's
 * chunk buffer and, at the chunk's last message, clusters the chunk
 * (sc_cluster, seeded by the stream's seed and the chunk's index) and
 * hangs its weighted centres on that message for T.  Every buffer was
 * allocated at start-up: nothing is allocated here but the output mbuf
 * from its pool. */
#include <string.h>

#include <rte_mempool.h>

#include "sc_app.h"

static void
chunk_done(struct sc_task *t, struct sc_msg *d, struct sc_p_slot *ps)
{
	unsigned dim = d->h.dim;
	struct rte_mbuf *out = rte_pktmbuf_alloc(t->app->out_pool);
	if (out == NULL) {
		/* Cannot happen with the pools sized alike (at most one output
		 * per message); should it, T marks the stream's store failed. */
		t->p.ctr.out_missing++;
		ps->fill = 0;
		return;
	}
	struct sc_result res = { .centre = t->p.centre, .weight = t->p.weight };
	sc_cluster(&t->p.work, ps->pts, dim, NULL, ps->fill, d->h.kmin, d->h.kmax,
		sc_chunk_seed(d->h.seed, d->chunk), &res);
	uint8_t *o = rte_pktmbuf_mtod(out, uint8_t *), *o0 = o;
	uint32_t k = res.k, zero = 0;
	memcpy(o, &k, 4);
	memcpy(o + 4, &zero, 4);
	o += 8;
	for (uint32_t i = 0; i < k; i++) {
		memcpy(o, &res.weight[i], 8);
		memcpy(o + 8, ps->pts + (size_t)res.centre[i] * dim, 4 * (size_t)dim);
		o += 8 + 4 * (size_t)dim;
	}
	out->data_len = (uint16_t)(o - o0);
	out->pkt_len = out->data_len;
	d->out = out;
	t->p.ctr.chunks++;
	t->p.ctr.points += ps->fill;
	t->p.ctr.centres += k;
	ps->fill = 0;
}

void
sc_p_process(void *task, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	struct sc_task *t = task;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct sc_msg *d = sc_msg(m);
		struct sc_p_slot *ps = &t->p.slots[d->slot];
		verdict[i] = PP_VERDICT_FORWARD;
		d->out = NULL;
		if (d->flags & SC_MSG_FIRST)
			ps->fill = 0;
		uint32_t recs = m->data_len / (4 * d->h.dim);
		memcpy(ps->pts + (size_t)ps->fill * d->h.dim, rte_pktmbuf_mtod(m, const float *),
			(size_t)recs * 4 * d->h.dim);
		ps->fill += recs;
		if (d->flags & SC_MSG_CHUNK_END)
			chunk_done(t, d, ps);
	}
}
