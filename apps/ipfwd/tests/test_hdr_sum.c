/* ipfwd_hdr_cksum_ok (for a 20-byte header, a divisibility test on the sum
 * of five 32-bit words) against DPDK's rte_raw_cksum(...) == 0xffff on
 * random IPv4 headers of 20 to 60 bytes, half of them given a right
 * checksum, on sums near the wrap-around, on all-zero and all-ones headers,
 * and on headers one bit away from right; then ipfwd_check's checksum
 * verdict with the port's Rx checksum flags (good, bad, unknown). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_ip.h>

#include "ipfwd_forward.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* ipfwd_check on one frame (Ethernet + 20-byte IPv4 header) with a right or
 * a wrong header checksum under each Rx checksum flag: the port's GOOD and
 * BAD decide, UNKNOWN leaves it to the software. */
static int
check_flags(void)
{
	static const struct {
		uint64_t flag;
		bool right;
		uint8_t want;
	} cases[] = {
		{ RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN, true, IPFWD_FORWARD },
		{ RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN, false, IPFWD_BAD_CHECKSUM },
		{ RTE_MBUF_F_RX_IP_CKSUM_GOOD, false, IPFWD_FORWARD },
		{ RTE_MBUF_F_RX_IP_CKSUM_BAD, true, IPFWD_BAD_CHECKSUM },
		{ RTE_MBUF_F_RX_IP_CKSUM_NONE, false, IPFWD_BAD_CHECKSUM },
	};
	int bad = 0;
	for (unsigned i = 0; i < RTE_DIM(cases); i++) {
		uint8_t frame[64] = { 0 };
		struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
		eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
		ip->version_ihl = 0x45;
		ip->total_length = RTE_BE16(46);
		ip->time_to_live = 64;
		ip->next_proto_id = 17;
		ip->dst_addr = RTE_BE32(0x0a000001);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		if (!cases[i].right)
			ip->hdr_checksum ^= 0x0101;
		struct rte_mbuf m;
		memset(&m, 0, sizeof(m));
		m.buf_addr = frame;
		m.data_len = sizeof(frame);
		m.pkt_len = sizeof(frame);
		m.ol_flags = cases[i].flag;
		void *got_ip = NULL;
		uint8_t got = ipfwd_check(&m, &got_ip);
		if (got != cases[i].want) {
			fprintf(stderr, "Rx flags %#" PRIx64 ", %s checksum: verdict %u, want %u\n",
				cases[i].flag, cases[i].right ? "right" : "wrong", got,
				cases[i].want);
			bad = 1;
		}
	}
	printf("%zu Rx checksum flag cases, %s\n", RTE_DIM(cases), bad ? "FAILED" : "all right");
	return bad;
}

int
main(void)
{
	unsigned failures = 0, valid = 0, n = 1000000, flipped = 0;
	uint8_t buf[64];
	for (unsigned it = 0; it < n; it++) {
		unsigned len = it % 2 ? 20 : 20 + 4 * (rnd() % 11);
		uint8_t *h = buf + (rnd() % 4); /* any alignment, as in a frame */
		for (unsigned i = 0; i < len; i++)
			h[i] = (uint8_t)rnd();
		if (it % 16 == 0) /* sums near the wrap-around: many 0xff bytes */
			memset(h, 0xff, len - (rnd() % len));
		if (it <= 1) /* 20 bytes when odd */
			memset(h, 0, len);
		if (it == 2 || it == 3)
			memset(h, 0xff, len);
		if (it % 4 >= 2 && it > 3) { /* a right checksum in bytes 10-11 */
			h[10] = h[11] = 0;
			uint16_t c = (uint16_t)~rte_raw_cksum(h, len);
			memcpy(h + 10, &c, 2);
		}
		if (it % 8 == 6) { /* right but for one bit */
			h[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
			flipped++;
		}
		bool got = ipfwd_hdr_cksum_ok(h, len), want = rte_raw_cksum(h, len) == 0xffff;
		valid += want;
		if (got != want && failures++ < 10)
			fprintf(stderr, "len %u: ipfwd_hdr_cksum_ok %d, rte_raw_cksum %04x\n", len,
				got, rte_raw_cksum(h, len));
	}
	printf("%u random headers (%u with a right checksum, %u one bit off), %u mismatches\n", n,
		valid, flipped, failures);
	if (valid < n / 3) {
		fprintf(stderr, "only %u headers with a right checksum\n", valid);
		failures++;
	}
	return check_flags() + (failures != 0);
}
