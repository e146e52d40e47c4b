/* Transmit jobs: template mbufs are pre-filled once (mempool object init), so
 * the fast path allocates a burst and rewrites only what varies per packet:
 * lengths, flow fields, IP checksum, signature. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "tg_engine.h"
#include "tg_pcap.h"
#include "tg_tx.h"
#include "tg_signature.h"

static void
flow_make(struct tg_field *f, struct tg_flow *out, unsigned tags)
{
	uint16_t vlan = (uint16_t)tg_field_next(&f[TG_F_VLAN]);
	uint16_t svlan = (uint16_t)tg_field_next(&f[TG_F_SVLAN]);

	out->tci[0] = rte_cpu_to_be_16(tags == 2 ? svlan : vlan);
	out->tci[1] = rte_cpu_to_be_16(vlan);
	if (f[TG_F_SRC_IP].v6) {
		out->sip6 = rte_cpu_to_be_64(tg_field_next(&f[TG_F_SRC_IP]));
		out->dip6 = rte_cpu_to_be_64(tg_field_next(&f[TG_F_DST_IP]));
	}
	uint64_t d = tg_field_next(&f[TG_F_DST_MAC]), s = tg_field_next(&f[TG_F_SRC_MAC]);

	for (int i = 0; i < 6; i++) {
		out->mac[i] = (uint8_t)(d >> (40 - 8 * i));
		out->mac[6 + i] = (uint8_t)(s >> (40 - 8 * i));
	}
	if (!f[TG_F_SRC_IP].v6) {
		out->sip = rte_cpu_to_be_32((uint32_t)tg_field_next(&f[TG_F_SRC_IP]));
		out->dip = rte_cpu_to_be_32((uint32_t)tg_field_next(&f[TG_F_DST_IP]));
	}
	out->sport = rte_cpu_to_be_16((uint16_t)tg_field_next(&f[TG_F_SPORT]));
	out->dport = rte_cpu_to_be_16((uint16_t)tg_field_next(&f[TG_F_DPORT]));
	out->ttl = (uint8_t)tg_field_next(&f[TG_F_TTL]);
	out->proto = (uint8_t)tg_field_next(&f[TG_F_PROTO]);
	/* One's-complement sum of the flow's IP header words, as they lie in
	 * memory; the per-packet checksum adds only the length. */
	out->ip_sum = (uint32_t)(out->sip & 0xffff) + (out->sip >> 16) + (out->dip & 0xffff) +
		(out->dip >> 16) + (uint32_t)(out->ttl | out->proto << 8);
}

/* Writes the parts of the template that never change into one mbuf. */
static void
template_init(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	struct tg_txjob *j = arg;
	struct rte_mbuf *m = obj;
	uint8_t *p = (uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM;
	uint16_t room = (uint16_t)(rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + j->l3);
	struct tg_flow f;
	struct tg_field fields[TG_F_COUNT];
	const struct tg_stream_cfg *s = j->cfg;
	unsigned off, l4 = j->l4;
	uint16_t type = rte_cpu_to_be_16(j->v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);

	(void)idx;
	memcpy(fields, j->field, sizeof(fields));
	flow_make(fields, &f, j->tags);
	memset(p, s->fill, room);
	memcpy(p, f.mac, 12);
	off = 12;
	for (unsigned t = 0; t < j->tags; t++) { /* QinQ: 802.1ad outside, 802.1Q inside */
		uint16_t tpid = rte_cpu_to_be_16(
			j->tags == 2 && t == 0 ? RTE_ETHER_TYPE_QINQ : RTE_ETHER_TYPE_VLAN);

		memcpy(p + off, &tpid, 2);
		memcpy(p + off + 2, &f.tci[t], 2);
		off += 4;
	}
	memcpy(p + off, &type, 2);
	if (j->v6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(p + j->l3);
		const struct tg_field *sa = &j->field[TG_F_SRC_IP], *da = &j->field[TG_F_DST_IP];
		uint64_t shi = rte_cpu_to_be_64(sa->hi), dhi = rte_cpu_to_be_64(da->hi);

		memset(ip6, 0, sizeof(*ip6));
		ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip6->proto = f.proto;
		ip6->hop_limits = f.ttl;
		memcpy(ip6->src_addr, &shi, 8);
		memcpy(ip6->src_addr + 8, &f.sip6, 8);
		memcpy(ip6->dst_addr, &dhi, 8);
		memcpy(ip6->dst_addr + 8, &f.dip6, 8);
	} else {
		memset(ip, 0, sizeof(*ip));
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = f.ttl;
		ip->next_proto_id = f.proto;
		ip->src_addr = f.sip;
		ip->dst_addr = f.dip;
	}
	if (j->tcp) {
		struct rte_tcp_hdr *t = (struct rte_tcp_hdr *)(p + l4);

		memset(t, 0, sizeof(*t));
		t->data_off = 5 << 4;
		t->tcp_flags = RTE_TCP_ACK_FLAG;
		t->rx_win = rte_cpu_to_be_16(8192);
	} else {
		memset(p + l4, 0, 8);
	}
	memcpy(p + l4, &f.sport, 2); /* TCP and UDP both start with the ports */
	memcpy(p + l4 + 2, &f.dport, 2);
	off = j->hdr_len;
	if (j->signature) {
		struct tg_sig sig = { .magic = TG_SIG_MAGIC };

		memcpy(p + off, &sig, sizeof(sig));
		off += TG_SIG_LEN;
	}
	if (off < room)
		memcpy(p + off, s->payload, RTE_MIN((unsigned)s->payload_len, room - off));
}

/* Smooth weighted round robin: 64:7,570:4,1518:1 interleaves sizes rather
 * than sending seven 64-byte frames in a row. */
int
tg_txjob_set_sizes(struct tg_txjob *j, const struct tg_size_mix *m)
{
	int64_t cur[TG_MAX_SIZES] = { 0 };
	int64_t total = 0;

	for (unsigned i = 0; i < m->n; i++)
		total += m->weight[i];
	rte_free(j->len);
	j->len = rte_malloc("tg_len", sizeof(uint16_t) * (size_t)total, 0);
	if (!j->len) {
		fprintf(stderr, "pp-tgen: no memory for a size pattern of %lld frames\n",
			(long long)total);
		return -1;
	}
	j->n_len = (uint32_t)total;
	j->len_idx = 0;
	for (int64_t k = 0; k < total; k++) {
		unsigned best = 0;

		for (unsigned i = 0; i < m->n; i++) {
			cur[i] += m->weight[i];
			if (cur[i] > cur[best])
				best = i;
		}
		cur[best] -= total;
		j->len[k] = (uint16_t)(m->size[best] - TG_FCS_LEN);
	}
	return 0;
}

/* Timed replay: the capture's gaps in TSC cycles, divided by the speed
 * factor.  A pass lasts from the first packet to the last plus one mean gap,
 * so that a looped capture keeps its rhythm across the seam (1 ms for a
 * capture of one packet). */
static int
timed_init(struct tg_txjob *j, const struct tg_stream_cfg *s)
{
	uint64_t *ns = tg_pcap_times(s->pcap, j->n_pcap);
	double k = (double)rte_get_tsc_hz() / 1e9 / s->pcap_speed;

	if (ns == NULL)
		return -1;
	j->due = rte_malloc("tg_due", sizeof(*j->due) * j->n_pcap, 0);
	j->gap_err = malloc(sizeof(*j->gap_err));
	j->late = malloc(sizeof(*j->late));
	if (!j->due || !j->gap_err || !j->late) {
		fprintf(stderr, "pp-tgen: no memory for the replay's schedule\n");
		rte_free(ns);
		return -1;
	}
	for (uint32_t i = 0; i < j->n_pcap; i++)
		j->due[i] = (uint64_t)((double)ns[i] * k);
	j->pass_tsc = j->n_pcap > 1
		? j->due[j->n_pcap - 1] + j->due[j->n_pcap - 1] / (j->n_pcap - 1)
		: rte_get_tsc_hz() / 1000;
	if (j->pass_tsc == 0)
		j->pass_tsc = 1;
	rte_free(ns);
	return 0;
}

/* When packet `seq` of the run is due, in TSC cycles after the start. */
static inline uint64_t
due_at(const struct tg_txjob *j, uint64_t seq)
{
	return seq / j->n_pcap * j->pass_tsc + j->due[seq % j->n_pcap];
}

int
tg_txjob_init(struct tg_txjob *j, const struct tg_stream_cfg *s, const struct tg_cfg *c,
	uint16_t port, uint16_t queue, uint8_t id, int socket)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	bool varies = false;

	memset(j, 0, sizeof(*j));
	j->port = port;
	j->queue = queue;
	j->id = id;
	j->cfg = s;
	j->retry = c->tx_retry;
	memcpy(j->field, s->field, sizeof(j->field));
	snprintf(name, sizeof(name), "tg_tx%u", id);
	if (s->pcap[0]) {
		if (tg_pcap_load(s->pcap, name, socket, &j->pool, &j->pcap, &j->n_pcap))
			return -1;
		return s->pcap_speed > 0 ? timed_init(j, s) : 0;
	}

	j->tcp = s->field[TG_F_PROTO].min == 6;
	j->hdr_len = tg_stream_hdr_len(s);
	j->tags = s->vlan_tags;
	j->v6 = s->field[TG_F_SRC_IP].v6;
	j->l3 = 14 + 4 * j->tags;
	j->l4 = j->l3 + (j->v6 ? 40 : 20);
	j->signature = s->signature;
	for (int i = 0; i < TG_F_COUNT; i++)
		varies |= s->field[i].mode != TG_FIELD_FIXED;
	j->n_flows = s->flows ? s->flows : varies ? 0 : 1;
	if (j->n_flows) {
		j->flows = rte_malloc("tg_flows", sizeof(*j->flows) * j->n_flows, 0);
		if (!j->flows) {
			fprintf(stderr, "pp-tgen: no memory for %u flows\n", j->n_flows);
			return -1;
		}
		for (uint32_t i = 0; i < j->n_flows; i++)
			flow_make(j->field, &j->flows[i], j->tags);
	}
	if (tg_txjob_set_sizes(j, &s->sizes))
		return -1;
	j->pool =
		rte_pktmbuf_pool_create(name, c->mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (!j->pool) {
		fprintf(stderr, "pp-tgen: cannot create TX pool %s (%u mbufs): %s\n", name,
			c->mbufs, rte_strerror(rte_errno));
		return -1;
	}
	for (int i = 0; i < TG_F_COUNT; i++)
		tg_field_reset(&j->field[i]);
	rte_mempool_obj_iter(j->pool, template_init, j);
	{
		struct rte_mbuf def = { .buf_len = RTE_MBUF_DEFAULT_BUF_SIZE };

		rte_pktmbuf_reset(&def);
		rte_mbuf_refcnt_set(&def, 1);
		memcpy(&j->rearm, (const char *)&def + offsetof(struct rte_mbuf, rearm_data),
			sizeof(j->rearm));
	}
	{
		/* version/IHL + TOS, packet id, flags/fragment offset: fixed */
		uint16_t w0 = rte_cpu_to_be_16(RTE_IPV4_VHL_DEF << 8);
		uint16_t w3 = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);

		j->ip_sum_fixed = (uint32_t)w0 + w3;
	}
	return 0;
}

void
tg_txjob_reset(struct tg_txjob *j)
{
	memset(&j->c, 0, sizeof(j->c));
	j->seq = 0;
	j->done = false;
	j->pcap_idx = 0;
	j->flow_idx = 0;
	j->len_idx = 0;
	j->pkts_per_cycle = j->pps / (double)rte_get_tsc_hz();
	if (j->due) {
		tg_hist_init(j->gap_err);
		tg_hist_init(j->late);
	}
}

static inline void
fill(struct tg_txjob *j, struct rte_mbuf *m, uint64_t seq, uint64_t tsc)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + j->l3);
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(p + j->l3);
	uint8_t *l4 = p + j->l4;
	const struct tg_flow *f;
	struct tg_flow tmp;
	uint16_t len = j->len[j->len_idx];

	if (++j->len_idx == j->n_len)
		j->len_idx = 0;
	if (j->n_flows) {
		f = &j->flows[j->flow_idx];
		if (++j->flow_idx == j->n_flows)
			j->flow_idx = 0;
	} else {
		flow_make(j->field, &tmp, j->tags);
		f = &tmp;
	}
	/* A raw get (tg_tx_poll): what rte_pktmbuf_reset would set that a
	 * port may have changed, in one store (data_off, refcnt 1, one
	 * segment, port); a freed mbuf has no next segment, and nothing on
	 * the way out writes the other fields the template set. */
	memcpy((char *)m + offsetof(struct rte_mbuf, rearm_data), &j->rearm, sizeof(j->rearm));
	m->data_len = len;
	m->pkt_len = len;
	if (j->n_flows != 1) { /* one flow: the template in the mbuf has it already */
		memcpy(p, f->mac, 12);
		if (j->tags)
			memcpy(p + 14, &f->tci[0], 2);
		if (j->tags == 2)
			memcpy(p + 18, &f->tci[1], 2);
		memcpy(l4, &f->sport, 2);
		memcpy(l4 + 2, &f->dport, 2);
	}
	if (j->v6) {
		ip6->payload_len = rte_cpu_to_be_16((uint16_t)(len - j->l4));
		if (j->n_flows != 1) {
			ip6->hop_limits = f->ttl;
			ip6->proto = f->proto;
			memcpy(ip6->src_addr + 8, &f->sip6, 8);
			memcpy(ip6->dst_addr + 8, &f->dip6, 8);
		}
	} else {
		ip->total_length = rte_cpu_to_be_16((uint16_t)(len - j->l3));
		if (j->n_flows != 1) {
			ip->time_to_live = f->ttl;
			ip->next_proto_id = f->proto;
			ip->src_addr = f->sip;
			ip->dst_addr = f->dip;
		}
		/* From registers, not by re-reading the header just written: the
		 * narrow stores above would stall a wide reload. */
		uint32_t sum = j->ip_sum_fixed + f->ip_sum + ip->total_length;

		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip->hdr_checksum = (uint16_t)~sum;
	}
	if (!j->tcp) {
		uint16_t ulen = rte_cpu_to_be_16((uint16_t)(len - j->l4));

		memcpy(l4 + 4, &ulen, 2); /* IPv4: UDP checksum stays 0 (none, legal) */
	}
	if (j->signature) {
		struct tg_sig *s = (struct tg_sig *)(p + j->hdr_len);

		s->stream = (uint16_t)(j->epoch << 8 | j->id);
		s->seq = (uint32_t)seq;
		s->tsc = tsc;
	}
	if (j->tcp || j->v6) {
		/* TCP, and UDP over IPv6 (where a zero checksum is not allowed):
		 * summed in software over the whole segment */
		uint16_t *ck = (uint16_t *)(l4 + (j->tcp ? 16 : 6));

		*ck = 0;
		*ck = j->v6 ? rte_ipv6_udptcp_cksum(ip6, l4) : rte_ipv4_udptcp_cksum(ip, l4);
	}
}

static inline uint16_t
tx_send(struct tg_txjob *j, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = rte_eth_tx_burst(j->port, j->queue, pkts, n);

	if (unlikely(sent < n)) {
		if (j->retry) {
			while (sent < n && !tg_run.tx_stop)
				sent += rte_eth_tx_burst(
					j->port, j->queue, pkts + sent, (uint16_t)(n - sent));
		}
		if (sent < n) {
			rte_pktmbuf_free_bulk(pkts + sent, n - sent);
			j->c.link_full += n - sent;
		}
	}
	return sent;
}

/* One burst if one is due: the pacer allows floor(elapsed * rate) + 1
 * packets by now, counted from the run's start, so the average rate is
 * exact and a late burst (preemption) is caught up at once. */
void
tg_tx_poll(struct tg_txjob *j, uint64_t now)
{
	struct rte_mbuf *pkts[TG_BURST];
	uint16_t lens[TG_BURST];
	uint64_t n = TG_BURST, bytes = 0;
	uint16_t sent;

	if (now < tg_run.start_tsc)
		return;
	/* Past the end, a paced job still sends what was due by the end (a
	 * descheduled poll must not cut the count short), then stops. */
	if (now >= tg_run.end_tsc && j->pps > 0 && !tg_run.tx_stop &&
		(uint64_t)((double)(tg_run.end_tsc - tg_run.start_tsc) * j->pkts_per_cycle) >
			j->seq &&
		!(j->limit && j->seq >= j->limit))
		now = tg_run.end_tsc - 1;
	if (now >= tg_run.end_tsc || tg_run.tx_stop || (j->limit && j->seq >= j->limit)) {
		/* The window ends at the asked end, or after the last burst when a
		 * packet limit ended it; not when this (maybe descheduled) poll ran. */
		j->c.stop_tsc = now >= tg_run.end_tsc      ? tg_run.end_tsc
			: (j->limit && j->seq >= j->limit) ? j->last_tsc
							   : now;
		__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
		return;
	}
	if (j->pps > 0) {
		uint64_t due = (uint64_t)((double)(now - tg_run.start_tsc) * j->pkts_per_cycle) + 1;

		if (due <= j->seq)
			return;
		n = RTE_MIN(n, due - j->seq);
	}
	if (j->limit)
		n = RTE_MIN(n, j->limit - j->seq);
	if (j->due) { /* timed replay: what is due by now, no earlier */
		uint64_t t = now - tg_run.start_tsc, k = 0;

		while (k < n && due_at(j, j->seq + k) <= t)
			k++;
		if (k == 0)
			return;
		n = k;
	}

	if (j->pcap) {
		for (uint64_t i = 0; i < n; i++) {
			struct rte_mbuf *m = j->pcap[j->pcap_idx];

			if (++j->pcap_idx == j->n_pcap)
				j->pcap_idx = 0;
			rte_mbuf_refcnt_update(m, 1); /* the port's free drops it back to 1 */
			lens[i] = (uint16_t)m->pkt_len;
			pkts[i] = m;
		}
	} else {
		/* Raw, as testpmd's txonly: fill() sets what the reset in
		 * rte_pktmbuf_alloc_bulk would, and only that. */
		if (unlikely(rte_mempool_get_bulk(j->pool, (void **)pkts, (unsigned)n))) {
			tg_publish(&j->c.alloc_fail, j->c.alloc_fail + 1);
			return;
		}
		uint64_t stamp = rte_rdtsc(); /* fresh: the poll's TSC may be stale */

		for (uint64_t i = 0; i < n; i++) {
			if (i + 1 < n)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
			fill(j, pkts[i], j->seq + i, stamp);
			lens[i] = (uint16_t)pkts[i]->pkt_len;
		}
	}
	if (j->due) {
		/* The handoff to the port is the time this generator controls
		 * (the wire's is the PMD's): every packet of a burst gets it. */
		uint64_t stamp = rte_rdtsc();

		for (uint64_t i = 0; i < n; i++) {
			uint64_t at = tg_run.start_tsc + due_at(j, j->seq + i);

			tg_hist_add(j->late, stamp - at);
			if (j->seq + i > 0) {
				uint64_t got = stamp - j->prev_sent, asked = at - j->prev_due;

				tg_hist_add(j->gap_err, got > asked ? got - asked : asked - got);
			}
			j->prev_sent = stamp;
			j->prev_due = at;
		}
	}
	sent = tx_send(j, pkts, (uint16_t)n);
	for (uint16_t i = 0; i < sent; i++)
		bytes += lens[i] + TG_FCS_LEN;
	j->seq += n;
	j->last_tsc = now;
	tg_publish(&j->c.sent_tsc, rte_rdtsc());
	tg_publish(&j->c.packets, j->c.packets + sent);
	tg_publish(&j->c.bytes, j->c.bytes + bytes);
	tg_publish(&j->c.link_full, j->c.link_full);
}
