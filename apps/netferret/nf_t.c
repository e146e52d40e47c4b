/* netferret's T: formats each query's answer, as ferret's output stage
 * does (an int32 length, host byte order, then "\t<image>:<distance>" per
 * result, or "!<word>" saying why there are none), into the message's own
 * data (its room holds the longest answer), and passes the message back
 * to its instance's R, which owns the connection and writes it.  The
 * query's latency R -> T goes into a histogram here. */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include "nf_app.h"

uint16_t
nf_t_tx(void *task, struct rte_mbuf **pkts, uint16_t n)
{
	struct nf_task *t = task;
	struct nf_t_counters *c = &t->t.ctr;
	const struct nf_state *s = t->app;
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	uint16_t i;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct nf_msg *d = nf_msg(m);
		char *out = rte_pktmbuf_mtod(m, char *);
		size_t room = rte_pktmbuf_data_room_size(m->pool) - RTE_PKTMBUF_HEADROOM, len;
		if (d->status == NF_OK) {
			len = nf_format_answer(out + 4, room - 4, &s->db, d->match, d->n);
			if (len == 0 && d->n != 0)
				c->no_room++; /* cannot happen: the room is NF_ANSWER_MAX at least */
		} else {
			const char *word = nf_status_names[d->status];
			len = 1 + strlen(word);
			out[4] = '!';
			memcpy(out + 5, word, len - 1);
		}
		int32_t l32 = (int32_t)len;
		memcpy(out, &l32, 4);
		m->data_len = (uint16_t)(4 + len);
		m->pkt_len = m->data_len;
		c->answers++;
		c->answer_bytes += 4 + len;
		uint64_t ns = (uint64_t)((double)(now - d->r_tsc) * 1e9 / (double)hz);
		pp_latency_add(&c->lat, &t->t.lat_max_ns, ns);
		/* sized for every message: never full */
		if (rte_ring_sp_enqueue(t->answers, m) != 0)
			break;
		__atomic_fetch_add(&t->app->queries_done, 1, __ATOMIC_RELEASE);
	}
	return i;
}
