/* Receive jobs: find the signature behind the L4 header, then count the
 * packet against its stream (sequence, latency) or as foreign. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "tg_engine.h"
#include "tg_rx.h"
#include "tg_signature.h"

int
tg_rxjob_init(struct tg_rxjob *j, uint16_t port, uint16_t queue)
{
	memset(j, 0, sizeof(*j));
	j->port = port;
	j->queue = queue;
	/* Plain memory: 8 MiB of counters need not sit in hugepages. */
	j->seq = aligned_alloc(64, sizeof(*j->seq) * TG_STREAM_IDS);
	j->hist = aligned_alloc(64, sizeof(*j->hist) * TG_STREAM_IDS);
	if (!j->seq || !j->hist) {
		fprintf(stderr, "pp-tgen: no memory for RX statistics\n");
		return -1;
	}
	tg_rxjob_reset(j, 0);
	return 0;
}

void
tg_rxjob_reset(struct tg_rxjob *j, uint16_t epoch)
{
	memset(j->seq, 0, sizeof(*j->seq) * TG_STREAM_IDS);
	for (unsigned i = 0; i < TG_STREAM_IDS; i++)
		tg_hist_init(&j->hist[i]);
	j->epoch = epoch;
	j->done = false;
	j->packets = j->bytes = j->foreign = j->foreign_bytes = j->stale = j->no_timestamp = 0;
	memset(j->why, 0, sizeof(j->why));
}

void
tg_rx_poll(struct tg_rxjob *j)
{
	struct rte_mbuf *pkts[TG_BURST];
	uint16_t n = rte_eth_rx_burst(j->port, j->queue, pkts, TG_BURST);
	uint64_t now, bytes = 0;

	if (n == 0)
		return;
	now = rte_rdtsc();
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
		unsigned len = rte_pktmbuf_data_len(m), off = 0;
		enum tg_rx_reason why;
		uint32_t flen = m->pkt_len + TG_FCS_LEN;
		struct tg_sig sig;

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		bytes += flen;
		why = tg_rx_decode(p, len, &off);
		if (why == TG_RX_SIGNED) {
			memcpy(&sig, p + off, sizeof(sig));
			if (sig.magic != TG_SIG_MAGIC)
				why = TG_RX_NO_SIGNATURE;
		}
		if (why != TG_RX_SIGNED) {
			j->why[why]++;
			j->foreign++;
			j->foreign_bytes += flen;
			continue;
		}
		if ((sig.stream >> 8) != j->epoch) {
			j->stale++;
			continue;
		}
		{
			struct tg_seq *t = &j->seq[sig.stream & 0xff];

			tg_seq_add(t, tg_seq_widen(t->next, sig.seq), flen);
		}
		if (sig.tsc && sig.tsc <= now)
			tg_hist_add(&j->hist[sig.stream & 0xff], now - sig.tsc);
		else
			j->no_timestamp++;
	}
	rte_pktmbuf_free_bulk(pkts, n);
	tg_publish(&j->packets, j->packets + n);
	tg_publish(&j->bytes, j->bytes + bytes);
}
