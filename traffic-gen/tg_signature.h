/* The signature pp-tgen writes right after the L4 header of every template
 * packet, and looks for in every received packet:
 *
 *   offset 0  magic   4 bytes  "PPtg"
 *          4  stream  2 bytes  bits 15..8: run epoch (RFC 2544 trial), 7..0: stream
 *          6  seq     4 bytes  per-stream sequence number, from 0
 *         10  tsc     8 bytes  TSC when the burst was handed to the port; 0 = none
 *
 * 18 bytes, host byte order (sender and receiver share the host and its TSC):
 * a 64-byte UDP frame (42 header bytes + 18 + 4 FCS) holds it exactly.  RX
 * finds it behind up to two VLAN tags, IPv4 or IPv6 (tg_rx_decode). */
#ifndef TG_SIGNATURE_H
#define TG_SIGNATURE_H

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>

#define TG_SIG_LEN 18
#define TG_SIG_MAGIC 0x67745050u /* "PPtg" read as little-endian */

struct tg_sig {
	uint32_t magic;
	uint16_t stream;
	uint32_t seq;
	uint64_t tsc;
} __attribute__((packed));

_Static_assert(sizeof(struct tg_sig) == TG_SIG_LEN, "signature layout");

/* Why a received frame carries no signature: each is counted
 * (rx.foreign_by_reason) and the frame dropped.  TG_RX_SIGNED: it has one
 * (its magic is still to be checked). */
enum tg_rx_reason {
	TG_RX_SIGNED,
	TG_RX_TRUNCATED_L2,       /* shorter than an Ethernet header */
	TG_RX_VLAN_NO_PAYLOAD,    /* an 802.1Q/802.1ad tag and nothing after it */
	TG_RX_NOT_IP,             /* neither IPv4 nor IPv6 after the tags */
	TG_RX_TRUNCATED_L3,       /* the IP header cut short */
	TG_RX_BAD_IP_HEADER,      /* IPv4 version/IHL, IPv6 version wrong */
	TG_RX_IPV6_EXT_TRUNCATED, /* an IPv6 extension header chain cut short or too long */
	TG_RX_NO_L4,              /* a later fragment, or IPv6 "no next header" */
	TG_RX_TRUNCATED_L4,       /* the UDP/TCP header cut short, or a TCP data offset < 5 */
	TG_RX_NO_SIGNATURE,       /* no room for a signature after the L4 header, or no magic */
	TG_RX_REASONS
};

static const char *const tg_rx_reason_name[TG_RX_REASONS] = {
	"signed",
	"truncated_l2",
	"vlan_no_payload",
	"not_ip",
	"truncated_l3",
	"bad_ip_header",
	"ipv6_ext_truncated",
	"no_l4",
	"truncated_l4",
	"no_signature",
};

#define TG_RX_MAX_TAGS 2 /* 802.1Q, or QinQ (802.1ad outer, 802.1Q inner) */
#define TG_RX_MAX_EXT 8  /* IPv6 extension headers walked before giving up */

static inline uint16_t
tg_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* L4 header at `off` (protocol `proto`): where the signature would start. */
static inline enum tg_rx_reason
tg_rx_l4(const uint8_t *p, unsigned len, unsigned off, unsigned proto, unsigned *sig)
{
	if (proto == 6) {
		if (off + 20 > len)
			return TG_RX_TRUNCATED_L4;
		if ((p[off + 12] >> 4) < 5)
			return TG_RX_TRUNCATED_L4;
		off += (p[off + 12] >> 4) * 4u;
	} else {
		off += 8; /* UDP, or any other protocol in pp-tgen's UDP-shaped header */
	}
	if (off > len)
		return TG_RX_TRUNCATED_L4;
	if (off + TG_SIG_LEN > len)
		return TG_RX_NO_SIGNATURE;
	*sig = off;
	return TG_RX_SIGNED;
}

/* Decodes Ethernet, up to two VLAN tags, IPv4 or IPv6 (with its extension
 * headers) and UDP/TCP; sets *sig to where the signature starts when the
 * result is TG_RX_SIGNED.  Reads nothing at or past p[len]. */
static inline enum tg_rx_reason
tg_rx_decode(const uint8_t *p, unsigned len, unsigned *sig)
{
	unsigned off = 12, type, tags = 0;

	if (len < 14)
		return TG_RX_TRUNCATED_L2;
	type = tg_be16(p + 12);
	while ((type == 0x8100 || type == 0x88a8 || type == 0x9100) && tags < TG_RX_MAX_TAGS) {
		if (off + 8 > len)
			return TG_RX_VLAN_NO_PAYLOAD;
		off += 4;
		type = tg_be16(p + off);
		tags++;
	}
	off += 2;
	if (tags && off >= len)
		return TG_RX_VLAN_NO_PAYLOAD;
	if (type == 0x0800) {
		unsigned ihl;

		if (off + 20 > len)
			return TG_RX_TRUNCATED_L3;
		ihl = (p[off] & 0xfu) * 4u;
		if ((p[off] >> 4) != 4 || ihl < 20)
			return TG_RX_BAD_IP_HEADER;
		if (off + ihl > len)
			return TG_RX_TRUNCATED_L3;
		if (tg_be16(p + off + 6) & 0x1fff)
			return TG_RX_NO_L4;
		return tg_rx_l4(p, len, off + ihl, p[off + 9], sig);
	}
	if (type == 0x86dd) {
		unsigned nh;

		if (off + 40 > len)
			return TG_RX_TRUNCATED_L3;
		if ((p[off] >> 4) != 6)
			return TG_RX_BAD_IP_HEADER;
		nh = p[off + 6];
		off += 40;
		for (unsigned k = 0;; k++) {
			unsigned hl;

			if (nh != 0 && nh != 43 && nh != 44 && nh != 51 && nh != 60)
				break;
			if (k == TG_RX_MAX_EXT || off + 8 > len)
				return TG_RX_IPV6_EXT_TRUNCATED;
			if (nh == 44) {
				if (tg_be16(p + off + 2) & 0xfff8)
					return TG_RX_NO_L4;
				hl = 8;
			} else {
				hl = nh == 51 ? (p[off + 1] + 2u) * 4u : (p[off + 1] + 1u) * 8u;
			}
			if (off + hl > len)
				return TG_RX_IPV6_EXT_TRUNCATED;
			nh = p[off];
			off += hl;
		}
		if (nh == 59)
			return TG_RX_NO_L4;
		return tg_rx_l4(p, len, off, nh, sig);
	}
	return TG_RX_NOT_IP;
}

#endif
