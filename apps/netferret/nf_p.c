/* netferret's P: each query through the five stages (nf_query.h) against
 * the database every instance shares, read-only; its top K (or why there
 * are none) into the message's private area for T.  Everything a query
 * needs was allocated at start-up (nf_work_init) except libjpeg's own
 * per-image pools, which libjpeg takes from malloc and gives back at the
 * end of each image (README.md, "Memory"). */
#include "nf_app.h"

void
nf_p_process(void *task, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	struct nf_task *t = task;
	struct nf_p_counters *c = &t->p.ctr;
	struct nf_work *w = t->p.work;
	const struct nf_state *s = t->app;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct nf_msg *d = nf_msg(m);
		unsigned got = 0;
		verdict[i] = PP_VERDICT_FORWARD;
		enum nf_status st = nf_query(w, &s->db, rte_pktmbuf_mtod(m, const uint8_t *),
			m->data_len, s->k, d->match, &got);
		d->status = (uint8_t)st;
		d->n = (uint8_t)got;
		c->queries++;
		c->status[st]++;
		for (int k = 0; k < NF_ST_N; k++)
			c->ticks[k] += w->ticks[k];
		if (st == NF_OK) {
			c->regions += w->n_regions;
			c->examined += w->examined;
			c->candidates += w->n_cand;
			c->results += got;
		}
	}
}
