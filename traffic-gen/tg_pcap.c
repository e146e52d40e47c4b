/* Loads a pcap or pcapng file (libpcap reads both) into mbufs up front, so
 * that replay never touches the file system. */
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "tg_engine.h"
#include "tg_pcap.h"

#define TG_PCAP_MAX_PACKETS (1u << 22)

uint64_t *
tg_pcap_times(const char *path, uint32_t n)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t *t = rte_malloc("tg_pcap_times", sizeof(*t) * n, 0), first = 0, prev = 0;
	uint32_t i = 0;
	pcap_t *pc;

	if (t == NULL) {
		fprintf(stderr, "pp-tgen: pcap %s: no memory for %u timestamps\n", path, n);
		return NULL;
	}
	pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	if (!pc) {
		fprintf(stderr, "pp-tgen: pcap %s: %s\n", path, err);
		rte_free(t);
		return NULL;
	}
	while (i < n && pcap_next_ex(pc, &h, &data) == 1) {
		uint64_t ns = (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec;

		if (i == 0)
			first = ns;
		ns = ns < first ? 0 : ns - first;
		prev = ns > prev ? ns : prev;
		t[i++] = prev;
	}
	pcap_close(pc);
	if (i != n) {
		fprintf(stderr, "pp-tgen: pcap %s: changed while being read\n", path);
		rte_free(t);
		return NULL;
	}
	return t;
}

int
tg_pcap_load(const char *path, const char *pool_name, int socket, struct rte_mempool **pool,
	struct rte_mbuf ***pkts, uint32_t *n)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t count = 0, i = 0;
	pcap_t *pc;
	int r;
	const uint16_t room = RTE_MBUF_DEFAULT_DATAROOM;

	/* Pass 1: validate and count. */
	pc = pcap_open_offline(path, err);
	if (!pc) {
		fprintf(stderr, "pp-tgen: pcap %s: %s\n", path, err);
		return -1;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		fprintf(stderr,
			"pp-tgen: pcap %s: link type %s, only Ethernet (EN10MB) is replayed\n",
			path, pcap_datalink_val_to_name(pcap_datalink(pc)));
		pcap_close(pc);
		return -1;
	}
	while ((r = pcap_next_ex(pc, &h, &data)) == 1) {
		if (h->caplen < h->len) {
			fprintf(stderr,
				"pp-tgen: pcap %s: packet %u: only %u of its %u bytes were "
				"captured (snap length); refusing to replay cut frames\n",
				path, count + 1, h->caplen, h->len);
			pcap_close(pc);
			return -1;
		}
		if (h->caplen > room || h->caplen < 14) {
			fprintf(stderr, "pp-tgen: pcap %s: packet %u: %u bytes, outside 14..%u\n",
				path, count + 1, h->caplen, room);
			pcap_close(pc);
			return -1;
		}
		if (++count > TG_PCAP_MAX_PACKETS) {
			fprintf(stderr, "pp-tgen: pcap %s: more than %u packets\n", path,
				TG_PCAP_MAX_PACKETS);
			pcap_close(pc);
			return -1;
		}
	}
	if (r == -1) {
		fprintf(stderr, "pp-tgen: pcap %s: after packet %u: %s\n", path, count,
			pcap_geterr(pc));
		pcap_close(pc);
		return -1;
	}
	pcap_close(pc);
	if (count == 0) {
		fprintf(stderr, "pp-tgen: pcap %s: no packets\n", path);
		return -1;
	}

	*pool = rte_pktmbuf_pool_create(pool_name, count, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	*pkts = rte_malloc("tg_pcap", sizeof(**pkts) * count, 0);
	if (!*pool || !*pkts || rte_pktmbuf_alloc_bulk(*pool, *pkts, count)) {
		fprintf(stderr, "pp-tgen: pcap %s: no memory for %u packets: %s\n", path, count,
			rte_strerror(rte_errno));
		return -1;
	}
	/* Pass 2: copy. */
	pc = pcap_open_offline(path, err);
	if (!pc) {
		fprintf(stderr, "pp-tgen: pcap %s: %s\n", path, err);
		return -1;
	}
	while (i < count && pcap_next_ex(pc, &h, &data) == 1) {
		struct rte_mbuf *m = (*pkts)[i++];

		memcpy(rte_pktmbuf_mtod(m, void *), data, h->caplen);
		m->data_len = (uint16_t)h->caplen;
		m->pkt_len = h->caplen;
	}
	pcap_close(pc);
	if (i != count) {
		fprintf(stderr, "pp-tgen: pcap %s: changed while being read\n", path);
		return -1;
	}
	*n = count;
	return 0;
}
