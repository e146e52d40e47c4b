/* Frame decoding for rules mode (see decode.h). */
#include "decode.h"

#include <stddef.h>
#include <string.h>

const char *const ids_status_name[IDS_PKT_N_STATUS] = {
	[IDS_PKT_OK] = "scanned",
	[IDS_PKT_NOT_IP] = "not_ip",
	[IDS_PKT_NOT_TCP_UDP] = "not_tcp_udp",
	[IDS_PKT_FRAGMENT] = "fragment",
	[IDS_PKT_TRUNCATED] = "truncated",
	[IDS_PKT_BAD_HEADER] = "bad_header",
};

const char *const ids_tunnel_err_name[IDS_TUN_N_ERR] = {
	[IDS_TUN_OK] = "decapsulated",
	[IDS_TUN_TRUNCATED] = "truncated",
	[IDS_TUN_BAD_HEADER] = "bad_header",
	[IDS_TUN_UNKNOWN_PROTO] = "unknown_protocol",
	[IDS_TUN_TOO_DEEP] = "too_deep",
};

#define MAX_IPV6_EXT 8
#define MAX_MPLS_LABELS 8
#define VXLAN_PORT 4789
#define GENEVE_PORT 6081

static inline uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static enum ids_status decode_l3(const uint8_t *frame, uint32_t len, uint32_t o, uint16_t type,
	struct ids_pkt *p, int depth);
static enum ids_status decode_eth(
	const uint8_t *frame, uint32_t len, uint32_t o, struct ids_pkt *p, int depth);

/* The UDP datagram [l4, end) to a VXLAN or Geneve port: the frame it
 * carries, decoded in its place (its status), or the tunnel header's fault
 * in p->tun_err and IDS_PKT_OK: then the datagram is judged as the UDP it
 * is, so that a malformed header hides nothing from the udp rules. */
static enum ids_status
decapsulate(const uint8_t *frame, uint32_t l4, uint32_t end, struct ids_pkt *p, int depth)
{
	uint32_t o = l4 + 8;
	if (depth >= IDS_TUNNEL_MAX_DEPTH) {
		p->tun_err = IDS_TUN_TOO_DEEP;
		return IDS_PKT_OK;
	}
	if (end < o + 8) {
		p->tun_err = IDS_TUN_TRUNCATED;
		return IDS_PKT_OK;
	}
	if (p->dport == VXLAN_PORT) {
		/* RFC 7348: flags (the I flag: a VNI is present), 24 bits
		 * reserved, VNI, 8 bits reserved; the reserved bits are ignored
		 * on receipt, as the RFC says. */
		if (!(frame[o] & 0x08)) {
			p->tun_err = IDS_TUN_BAD_HEADER;
			return IDS_PKT_OK;
		}
		p->tun_kinds |= IDS_TUN_VXLAN;
		p->tunnels++;
		return decode_eth(frame, end, o + 8, p, depth + 1);
	}
	/* Geneve (RFC 8926): version (2 bits, 0), options length (6 bits, in
	 * 4-byte words), flags, protocol type, VNI, reserved; options follow. */
	uint32_t hl = 8 + (frame[o] & 0x3fu) * 4u;
	uint16_t type = be16(frame + o + 2);
	if (frame[o] >> 6 != 0) {
		p->tun_err = IDS_TUN_BAD_HEADER;
		return IDS_PKT_OK;
	}
	if (end < o + hl) {
		p->tun_err = IDS_TUN_TRUNCATED;
		return IDS_PKT_OK;
	}
	if (type != 0x6558 && type != 0x0800 && type != 0x86dd) {
		p->tun_err = IDS_TUN_UNKNOWN_PROTO;
		return IDS_PKT_OK;
	}
	p->tun_kinds |= IDS_TUN_GENEVE;
	p->tunnels++;
	if (type == 0x6558) /* transparent Ethernet bridging */
		return decode_eth(frame, end, o + hl, p, depth + 1);
	p->l2_off = IDS_NO_L2; /* IP carried bare (AWS's Gateway Load Balancer) */
	p->vlan = 0;
	return decode_l3(frame, end, o + hl, type, p, depth + 1);
}

/* TCP or UDP at l4, the datagram ending at end. */
static enum ids_status
decode_l4(const uint8_t *frame, uint32_t l4, uint32_t end, uint8_t proto, struct ids_pkt *p,
	int depth)
{
	uint32_t hl;

	switch (proto) {
	case 6:
		if (end < l4 + 20)
			return IDS_PKT_TRUNCATED;
		hl = (frame[l4 + 12] >> 4) * 4u;
		if (hl < 20)
			return IDS_PKT_BAD_HEADER;
		if (end < l4 + hl)
			return IDS_PKT_TRUNCATED;
		p->seq = be32(frame + l4 + 4);
		p->ack = be32(frame + l4 + 8);
		p->tcp_flags = frame[l4 + 13];
		break;
	case 17:
		hl = 8;
		if (end < l4 + hl)
			return IDS_PKT_TRUNCATED;
		break;
	default:
		return IDS_PKT_NOT_TCP_UDP;
	}
	p->proto = proto;
	p->l4_off = l4;
	p->sport = be16(frame + l4);
	p->dport = be16(frame + l4 + 2);
	p->off = l4 + hl;
	p->len = end - p->off;
	if (proto == 17 && (p->dport == VXLAN_PORT || p->dport == GENEVE_PORT) && depth >= 0)
		return decapsulate(frame, l4, end, p, depth);
	return IDS_PKT_OK;
}

static enum ids_status
decode_ipv4(const uint8_t *frame, uint32_t len, uint32_t o, struct ids_pkt *p, int depth)
{
	if (len < o + 20)
		return IDS_PKT_TRUNCATED;
	const uint8_t *ip = frame + o;
	if (ip[0] >> 4 != 4)
		return IDS_PKT_NOT_IP;
	uint32_t ihl = (ip[0] & 0x0fu) * 4u, tot = be16(ip + 2);
	if (ihl < 20 || tot < ihl)
		return IDS_PKT_BAD_HEADER;
	if (len < o + tot)
		return IDS_PKT_TRUNCATED;
	p->family = 4;
	p->ttl = ip[8];
	memcpy(p->src, ip + 12, 4);
	memcpy(p->dst, ip + 16, 4);
	p->ip_end = o + tot;
	uint16_t fo = be16(ip + 6);
	if ((fo & 0x3fff) != 0) {
		p->proto = ip[9];
		p->frag_id = be16(ip + 4);
		p->frag_off = (fo & 0x1fffu) * 8u;
		p->frag_more = fo & 0x2000;
		p->frag_data = o + ihl;
		return IDS_PKT_FRAGMENT;
	}
	return decode_l4(frame, o + ihl, o + tot, ip[9], p, depth);
}

static enum ids_status
decode_ipv6(const uint8_t *frame, uint32_t len, uint32_t o, struct ids_pkt *p, int depth)
{
	if (len < o + 40)
		return IDS_PKT_TRUNCATED;
	const uint8_t *ip = frame + o;
	if (ip[0] >> 4 != 6)
		return IDS_PKT_NOT_IP;
	uint32_t plen = be16(ip + 4);
	if (plen == 0) /* a jumbogram (RFC 2675) or nothing: not ours */
		return IDS_PKT_BAD_HEADER;
	uint32_t end = o + 40 + plen;
	if (len < end)
		return IDS_PKT_TRUNCATED;
	p->family = 6;
	p->ttl = ip[7];
	memcpy(p->src, ip + 8, 16);
	memcpy(p->dst, ip + 24, 16);
	p->ip_end = end;
	uint8_t nh = ip[6];
	uint32_t nh_byte = o + 6, off = o + 40;
	for (int i = 0;; i++) {
		uint32_t hl;
		bool ext = nh == 0 || nh == 43 || nh == 60 || nh == 51 || nh == 44;
		if (ext && i == MAX_IPV6_EXT)
			return IDS_PKT_BAD_HEADER;
		if (nh == 0 || nh == 43 || nh == 60) { /* hop-by-hop, routing, dest opts */
			if (end < off + 2)
				return IDS_PKT_BAD_HEADER;
			hl = (frame[off + 1] + 1u) * 8u;
		} else if (nh == 51) { /* authentication header */
			if (end < off + 2)
				return IDS_PKT_BAD_HEADER;
			hl = (frame[off + 1] + 2u) * 4u;
		} else if (nh == 44) { /* fragment */
			if (end < off + 8)
				return IDS_PKT_BAD_HEADER;
			hl = 8;
			uint16_t fo = be16(frame + off + 2);
			if ((fo & 0xfff9) != 0) {
				p->proto = frame[off];
				p->frag_id = be32(frame + off + 4);
				p->frag_off = fo & 0xfff8u;
				p->frag_more = fo & 1;
				p->frag_hdr = off;
				p->frag_nh_byte = nh_byte;
				p->frag_data = off + 8;
				return IDS_PKT_FRAGMENT;
			}
			/* an atomic fragment (RFC 6946): the whole datagram */
		} else {
			break;
		}
		if (end < off + hl)
			return IDS_PKT_BAD_HEADER;
		nh_byte = off;
		nh = frame[off];
		off += hl;
	}
	return decode_l4(frame, off, end, nh, p, depth);
}

/* An MPLS label stack at o (RFC 3032): the labels up to the one with the
 * bottom-of-stack bit, then IPv4 or IPv6 as its version nibble says (a
 * pseudowire's control word or anything else: not IP). */
static enum ids_status
decode_mpls(const uint8_t *frame, uint32_t len, uint32_t o, struct ids_pkt *p, int depth)
{
	for (int i = 0;; i++) {
		if (i == MAX_MPLS_LABELS)
			return IDS_PKT_BAD_HEADER;
		if (len < o + 4)
			return IDS_PKT_TRUNCATED;
		bool bottom = frame[o + 2] & 1;
		o += 4;
		if (bottom)
			break;
	}
	if (len < o + 1)
		return IDS_PKT_TRUNCATED;
	uint8_t v = frame[o] >> 4;
	if (v != 4 && v != 6)
		return IDS_PKT_NOT_IP;
	return decode_l3(frame, len, o, v == 4 ? 0x0800 : 0x86dd, p, depth);
}

/* The network layer of type at o. */
static enum ids_status
decode_l3(
	const uint8_t *frame, uint32_t len, uint32_t o, uint16_t type, struct ids_pkt *p, int depth)
{
	p->l3_off = o;
	if (depth == 0)
		p->outer_l3_off = o;
	if (type == 0x0800)
		return decode_ipv4(frame, len, o, p, depth);
	if (type == 0x86dd)
		return decode_ipv6(frame, len, o, p, depth);
	if (type == 0x8847 || type == 0x8848)
		return decode_mpls(frame, len, o, p, depth);
	return IDS_PKT_NOT_IP;
}

/* Ethernet with up to two VLAN tags at o, the frame ending at len. */
static enum ids_status
decode_eth(const uint8_t *frame, uint32_t len, uint32_t o, struct ids_pkt *p, int depth)
{
	p->l2_off = o;
	p->vlan = 0; /* this frame's own: a tunnel's inner frame has its own tags */
	o += 12;
	if (len < o + 2)
		return IDS_PKT_TRUNCATED;
	uint16_t type = be16(frame + o);
	for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8 || type == 0x9100);
		tags++) {
		o += 4;
		if (len < o + 2)
			return IDS_PKT_TRUNCATED;
		if (tags == 0)
			p->vlan = be16(frame + o - 2) & 0x0fff;
		type = be16(frame + o);
	}
	return decode_l3(frame, len, o + 2, type, p, depth);
}

enum ids_status
ids_decode(const uint8_t *frame, uint32_t len, struct ids_pkt *p)
{
	memset(p, 0, offsetof(struct ids_pkt, frag_id));
	if (len < 14)
		return IDS_PKT_TRUNCATED;
	return decode_eth(frame, len, 0, p, 0);
}

enum ids_status
ids_decode_first_fragment(const uint8_t *frame, struct ids_pkt *p)
{
	if (p->frag_off != 0)
		return IDS_PKT_FRAGMENT;
	/* not decapsulated: the fragment's UDP is judged as it is */
	return decode_l4(frame, p->frag_data, p->ip_end, p->proto, p, -1);
}
