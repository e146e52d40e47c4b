/* L2-L4 decoder; see decode.h.  Every read is preceded by a length check
 * against `end`, the first byte past what may be read. */
#include "decode.h"

#include <string.h>

#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_IPV6 0x86ddu
#define ETHERTYPE_VLAN 0x8100u
#define ETHERTYPE_QINQ 0x88a8u
#define ETHERTYPE_QINQ_OLD 0x9100u

#define IPPROTO_HOPOPTS_ 0u
#define IPPROTO_ICMP_ 1u
#define IPPROTO_TCP_ 6u
#define IPPROTO_UDP_ 17u
#define IPPROTO_ROUTING_ 43u
#define IPPROTO_FRAGMENT_ 44u
#define IPPROTO_AH_ 51u
#define IPPROTO_ICMPV6_ 58u
#define IPPROTO_DSTOPTS_ 60u

const char *const an_status_names[AN_STATUS_COUNT] = {
	[AN_OK] = "ok",
	[AN_ERR_ETH_TRUNC] = "eth_truncated",
	[AN_ERR_VLAN_TRUNC] = "vlan_truncated",
	[AN_ERR_VLAN_DEPTH] = "vlan_too_many_tags",
	[AN_ERR_IPV4_TRUNC] = "ipv4_truncated",
	[AN_ERR_IPV4_VERSION] = "ipv4_bad_version",
	[AN_ERR_IPV4_IHL] = "ipv4_bad_ihl",
	[AN_ERR_IPV4_TOTLEN] = "ipv4_bad_total_length",
	[AN_ERR_IPV6_TRUNC] = "ipv6_truncated",
	[AN_ERR_IPV6_VERSION] = "ipv6_bad_version",
	[AN_ERR_IPV6_EXT_TRUNC] = "ipv6_ext_truncated",
	[AN_ERR_IPV6_EXT_DEPTH] = "ipv6_ext_too_many",
	[AN_ERR_TCP_TRUNC] = "tcp_truncated",
	[AN_ERR_TCP_DOFF] = "tcp_bad_data_offset",
	[AN_ERR_UDP_TRUNC] = "udp_truncated",
	[AN_ERR_ICMP_TRUNC] = "icmp_truncated",
};

const char *const an_l3_names[AN_L3_COUNT] = {
	[AN_L3_NONE] = "none",
	[AN_L3_IPV4] = "ipv4",
	[AN_L3_IPV6] = "ipv6",
	[AN_L3_OTHER] = "other",
};

static inline uint16_t rd16(const uint8_t *b)
{
	return (uint16_t)((unsigned)b[0] << 8 | b[1]);
}

/* TCP, UDP, ICMP, ICMPv6 at l4[0 .. end).  Ports are taken as soon as their
 * four bytes are there, even when the rest of the header is cut short, so a
 * snaplen-truncated packet still says which flow it belongs to. */
static enum an_status decode_l4(const uint8_t *l4, const uint8_t *end,
				struct an_packet *p)
{
	size_t len = (size_t)(end - l4);

	switch (p->l4_proto) {
	case IPPROTO_TCP_:
	case IPPROTO_UDP_:
		if (len < 4)
			return p->l4_proto == IPPROTO_TCP_ ? AN_ERR_TCP_TRUNC
							   : AN_ERR_UDP_TRUNC;
		p->sport = rd16(l4);
		p->dport = rd16(l4 + 2);
		p->have |= AN_HAVE_PORTS;
		if (p->l4_proto == IPPROTO_UDP_)
			return len < 8 ? AN_ERR_UDP_TRUNC : AN_OK;
		if (len < 20)
			return AN_ERR_TCP_TRUNC;
		if ((l4[12] >> 4) < 5)
			return AN_ERR_TCP_DOFF;
		return len < (size_t)(l4[12] >> 4) * 4 ? AN_ERR_TCP_TRUNC : AN_OK;
	case IPPROTO_ICMP_:
	case IPPROTO_ICMPV6_:
		if (len < 2)
			return AN_ERR_ICMP_TRUNC;
		p->icmp_type = l4[0];
		p->icmp_code = l4[1];
		p->have |= AN_HAVE_ICMP;
		return AN_OK;
	default:
		return AN_OK;
	}
}

static enum an_status decode_ipv4(const uint8_t *frame, const uint8_t *ip,
				  const uint8_t *end, struct an_packet *p)
{
	if (end - ip < 20)
		return AN_ERR_IPV4_TRUNC;
	if ((ip[0] >> 4) != 4)
		return AN_ERR_IPV4_VERSION;
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20)
		return AN_ERR_IPV4_IHL;
	if ((size_t)(end - ip) < ihl)
		return AN_ERR_IPV4_TRUNC;
	p->ttl = ip[8];
	p->l4_proto = ip[9];
	memcpy(p->src, ip + 12, 4);
	memcpy(p->dst, ip + 16, 4);
	p->have |= AN_HAVE_IP | AN_HAVE_L4PROTO;
	if (ihl > 20)
		p->flags |= AN_FLAG_IPV4_OPTS;

	/* Total length 0 is what segmentation offload (Linux BIG TCP, TSO
	 * captures) writes: the frame's own length holds, as in tcpdump and
	 * Wireshark. */
	size_t totlen = rd16(ip + 2);
	if (totlen != 0 && totlen < ihl)
		return AN_ERR_IPV4_TOTLEN;
	/* Ethernet pads short frames: the L4 header ends at total length. */
	if (totlen != 0 && (size_t)(end - ip) > totlen)
		end = ip + totlen;

	uint16_t frag = rd16(ip + 6);
	if (frag & 0x3fffu) /* MF or a non-zero offset */
		p->flags |= AN_FLAG_FRAGMENT;
	if (frag & 0x1fffu) { /* later fragment: no L4 header */
		p->flags |= AN_FLAG_LATER_FRAG;
		return AN_OK;
	}
	p->l4_off = (uint16_t)(ip + ihl - frame);
	return decode_l4(ip + ihl, end, p);
}

static int is_ipv6_ext(uint8_t nh)
{
	return nh == IPPROTO_HOPOPTS_ || nh == IPPROTO_ROUTING_ ||
	       nh == IPPROTO_FRAGMENT_ || nh == IPPROTO_DSTOPTS_ ||
	       nh == IPPROTO_AH_;
}

static enum an_status decode_ipv6(const uint8_t *frame, const uint8_t *ip,
				  const uint8_t *end, struct an_packet *p)
{
	if (end - ip < 40)
		return AN_ERR_IPV6_TRUNC;
	if ((ip[0] >> 4) != 6)
		return AN_ERR_IPV6_VERSION;
	p->ttl = ip[7];
	memcpy(p->src, ip + 8, 16);
	memcpy(p->dst, ip + 24, 16);
	p->have |= AN_HAVE_IP;

	/* Padding after the payload is not L4 data.  Payload length 0
	 * (jumbogram, or BIG TCP/TSO captures that drop the jumbo option):
	 * the captured bytes are all we know. */
	size_t plen = rd16(ip + 4);
	if (plen != 0 && (size_t)(end - ip) > 40 + plen)
		end = ip + 40 + plen;

	uint8_t nh = ip[6];
	const uint8_t *h = ip + 40;
	for (unsigned depth = 0; is_ipv6_ext(nh); depth++) {
		if (depth == AN_MAX_IPV6_EXT)
			return AN_ERR_IPV6_EXT_DEPTH;
		p->flags |= AN_FLAG_IPV6_EXT;
		if (end - h < 8) /* every extension header is >= 8 bytes */
			return AN_ERR_IPV6_EXT_TRUNC;
		size_t hlen;
		if (nh == IPPROTO_FRAGMENT_) {
			hlen = 8;
			p->flags |= AN_FLAG_FRAGMENT;
			if (rd16(h + 2) & 0xfff8u) { /* offset != 0 */
				p->flags |= AN_FLAG_LATER_FRAG;
				p->l4_proto = h[0];
				p->have |= AN_HAVE_L4PROTO;
				return AN_OK;
			}
		} else if (nh == IPPROTO_AH_) {
			hlen = ((size_t)h[1] + 2) * 4;
		} else {
			hlen = ((size_t)h[1] + 1) * 8;
		}
		if ((size_t)(end - h) < hlen)
			return AN_ERR_IPV6_EXT_TRUNC;
		nh = h[0];
		h += hlen;
	}
	/* ESP (50) and no-next-header (59) end the walk like any L4. */
	p->l4_proto = nh;
	p->have |= AN_HAVE_L4PROTO;
	p->l4_off = (uint16_t)(h - frame);
	return decode_l4(h, end, p);
}

enum an_status an_decode(const uint8_t *frame, size_t caplen,
			 struct an_packet *p)
{
	memset(p, 0, sizeof(*p));
	const uint8_t *end = frame + caplen;
	enum an_status st;

	if (caplen < 14) {
		st = AN_ERR_ETH_TRUNC;
		goto out;
	}
	memcpy(p->mac_dst, frame, 6);
	memcpy(p->mac_src, frame + 6, 6);
	uint16_t et = rd16(frame + 12);
	const uint8_t *h = frame + 14;
	while (et == ETHERTYPE_VLAN || et == ETHERTYPE_QINQ ||
	       et == ETHERTYPE_QINQ_OLD) {
		if (p->n_vlan == AN_MAX_VLAN) {
			p->ethertype = et;
			p->have |= AN_HAVE_ETH;
			st = AN_ERR_VLAN_DEPTH;
			goto out;
		}
		if (end - h < 4) {
			p->ethertype = et;
			p->have |= AN_HAVE_ETH;
			st = AN_ERR_VLAN_TRUNC;
			goto out;
		}
		p->vlan_tci[p->n_vlan++] = rd16(h);
		et = rd16(h + 2);
		h += 4;
	}
	p->ethertype = et;
	p->have |= AN_HAVE_ETH;
	p->l3_off = (uint16_t)(h - frame);

	switch (et) {
	case ETHERTYPE_IPV4:
		p->l3 = AN_L3_IPV4;
		st = decode_ipv4(frame, h, end, p);
		break;
	case ETHERTYPE_IPV6:
		p->l3 = AN_L3_IPV6;
		st = decode_ipv6(frame, h, end, p);
		break;
	default:
		p->l3 = AN_L3_OTHER;
		st = AN_OK;
		break;
	}
out:
	p->status = (uint8_t)st;
	return st;
}
