/* libFuzzer target for ipfwd's per-packet work (ipfwd_forward.h,
 * ipfwd_ipv6.h): the header checks of both families, the IPv6 extension
 * header walk, the hashed lookup and the rewrite, on any bytes.  The first
 * input byte picks the port's Rx checksum flags and whether the frame is
 * the first segment of a longer chain (pkt_len beyond the bytes there); the
 * rest is the frame, in a buffer of exactly its size so that ASan sees any
 * read past it.  Checked: the verdict is a known one and the same as the
 * checks alone give; a forwarded frame changed only where it should
 * (MACs from its table entry; IPv4 TTL minus one with a checksum that
 * still verifies; IPv6 hop limit minus one). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipfwd_forward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint64_t rx_flags[4] = { RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN, RTE_MBUF_F_RX_IP_CKSUM_GOOD,
	RTE_MBUF_F_RX_IP_CKSUM_BAD, RTE_MBUF_F_RX_IP_CKSUM_NONE };

static void
mbuf_over(struct rte_mbuf *m, uint8_t *buf, size_t size, uint8_t ctl)
{
	memset(m, 0, sizeof(*m));
	m->buf_addr = buf;
	m->data_len = (uint16_t)size;
	m->pkt_len = (uint32_t)size + ((ctl & 0x80) ? (ctl & 0x7c) : 0);
	m->nb_segs = m->pkt_len > m->data_len ? 2 : 1;
	m->ol_flags = rx_flags[ctl & 3];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ipfwd_table table;
	if (table.entries == NULL && ipfwd_table_create(&table, 61) != 0)
		abort();
	if (size < 1 || size > 4096)
		return 0;
	uint8_t ctl = data[0];
	data++;
	size--;
	uint8_t *buf = malloc(size ? size : 1), *orig = malloc(size ? size : 1);
	if (buf == NULL || orig == NULL)
		abort();
	memcpy(buf, data, size);
	memcpy(orig, data, size);
	struct rte_mbuf m;

	/* The checks alone, on their own copy. */
	mbuf_over(&m, orig, size, ctl);
	void *hdr = NULL;
	uint8_t checked = ipfwd_check(&m, &hdr);
	if (checked != IPFWD_VALID_IPV6 && checked >= IPFWD_N_VERDICTS)
		abort();
	if ((checked == IPFWD_FORWARD || checked == IPFWD_VALID_IPV6) &&
		(uint8_t *)hdr != orig + sizeof(struct rte_ether_hdr))
		abort();
	if (memcmp(orig, data, size) != 0) /* the checks write nothing */
		abort();

	mbuf_over(&m, buf, size, ctl);
	uint8_t v = ipfwd_forward(&m, &table);
	if (v >= IPFWD_N_VERDICTS || v == IPFWD_NO_ROUTE)
		abort();
	if (v != IPFWD_FORWARD) {
		if (v != checked || memcmp(buf, data, size) != 0)
			abort();
	} else if (checked == IPFWD_FORWARD) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(buf + 14);
		const struct ipfwd_next_hop *e =
			ipfwd_lookup(&table, rte_be_to_cpu_32(ip->dst_addr));
		unsigned hlen = (ip->version_ihl & 0x0f) * 4u;
		if (memcmp(buf, e, 12) != 0 || buf[22] != (uint8_t)(data[22] - 1) ||
			memcmp(buf + 12, data + 12, 10) != 0 || buf[23] != data[23] ||
			memcmp(buf + 26, data + 26, size - 26) != 0)
			abort();
		/* The incremental update leaves a header that verifies when the
		 * old one did (the software checked it: flags unknown or none). */
		if ((ctl & 3) != 1 && rte_raw_cksum(ip, hlen) != 0xffff)
			abort();
	} else if (checked == IPFWD_VALID_IPV6) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)(buf + 14);
		const struct ipfwd_next_hop *e = ipfwd_lookup6(&table, ip6->dst_addr);
		if (memcmp(buf, e, 12) != 0 || buf[21] != (uint8_t)(data[21] - 1) ||
			memcmp(buf + 12, data + 12, 9) != 0 ||
			memcmp(buf + 22, data + 22, size - 22) != 0)
			abort();
	} else {
		abort();
	}
	free(buf);
	free(orig);
	return 0;
}
