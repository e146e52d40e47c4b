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
#define IPPROTO_IPIP_ 4u
#define IPPROTO_IPV6_ 41u
#define IPPROTO_GRE_ 47u

#define ETHERTYPE_TEB 0x6558u      /* transparent Ethernet bridging */
#define ETHERTYPE_ERSPAN_2 0x88beu /* ERSPAN type I and II */
#define ETHERTYPE_ERSPAN_3 0x22ebu /* ERSPAN type III */
#define ETHERTYPE_WCCP 0x883eu     /* Cisco WCCP redirection: IPv4 inside */

#define PORT_GTPU 2152u
#define PORT_VXLAN 4789u
#define PORT_GENEVE 6081u

/* What a tunnel header said its payload is, for the next round of
 * decoding.  kind AN_TUN_NONE: no tunnel. */
struct an_next {
	uint8_t kind; /* enum an_tunnel */
	uint8_t eth;  /* the payload starts with Ethernet */
	uint8_t have_id;
	uint16_t ethertype; /* when not eth: IPv4, IPv6 or another type */
	uint32_t id;
	enum an_status err;     /* AN_ERR_TUNNEL_TRUNC: header cut short */
	const uint8_t *h, *end; /* the payload */
};

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
	[AN_ERR_TUNNEL_TRUNC] = "tunnel_truncated",
	[AN_ERR_TUNNEL_DEPTH] = "tunnel_too_deep",
};

const char *const an_tunnel_names[AN_TUN_COUNT] = {
	[AN_TUN_NONE] = "none",
	[AN_TUN_VXLAN] = "vxlan",
	[AN_TUN_GENEVE] = "geneve",
	[AN_TUN_GRE] = "gre",
	[AN_TUN_ERSPAN] = "erspan",
	[AN_TUN_GTPU] = "gtpu",
	[AN_TUN_IPIP] = "ipip",
};

const char *const an_l3_names[AN_L3_COUNT] = {
	[AN_L3_NONE] = "none",
	[AN_L3_IPV4] = "ipv4",
	[AN_L3_IPV6] = "ipv6",
	[AN_L3_OTHER] = "other",
};

static inline uint16_t
rd16(const uint8_t *b)
{
	return (uint16_t)((unsigned)b[0] << 8 | b[1]);
}

/* TCP, UDP, ICMP, ICMPv6 at l4[0 .. end).  Ports are taken as soon as their
 * four bytes are there, even when the rest of the header is cut short, so a
 * snaplen-truncated packet still says which flow it belongs to. */
static enum an_status
decode_l4(const uint8_t *l4, const uint8_t *end, struct an_layers *p)
{
	size_t len = (size_t)(end - l4);

	switch (p->l4_proto) {
	case IPPROTO_TCP_:
	case IPPROTO_UDP_:
		if (len < 4)
			return p->l4_proto == IPPROTO_TCP_ ? AN_ERR_TCP_TRUNC : AN_ERR_UDP_TRUNC;
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

static inline uint32_t
rd32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void
next_payload(struct an_next *nx, uint8_t kind, const uint8_t *h, const uint8_t *end, int eth,
	uint16_t ethertype)
{
	nx->kind = kind;
	nx->h = h;
	nx->end = end;
	nx->eth = (uint8_t)eth;
	nx->ethertype = ethertype;
}

/* GRE (RFC 2784, key and sequence of RFC 2890), version 0, and ERSPAN and
 * WCCP in it.  Version 1 (PPTP) and the source routing of RFC 1701 are not
 * followed: the tunnel is named, its payload not decoded (l3 "none"). */
static void
tunnel_gre(const uint8_t *g, const uint8_t *end, struct an_next *nx)
{
	nx->kind = AN_TUN_GRE;
	if (end - g < 4) {
		nx->err = AN_ERR_TUNNEL_TRUNC;
		return;
	}
	uint16_t fl = rd16(g), proto = rd16(g + 2);
	size_t hl = 4;
	if ((fl & 0x7u) != 0 || (fl & 0x4000u)) { /* version 1; routing */
		next_payload(nx, AN_TUN_GRE, end, end, 0, 0);
		return;
	}
	if (fl & 0x8000u) /* checksum and reserved */
		hl += 4;
	if (fl & 0x2000u) { /* key */
		if ((size_t)(end - g) < hl + 4) {
			nx->err = AN_ERR_TUNNEL_TRUNC;
			return;
		}
		nx->id = rd32(g + hl);
		nx->have_id = 1;
		hl += 4;
	}
	int seq = (fl & 0x1000u) != 0;
	if (seq)
		hl += 4;
	if ((size_t)(end - g) < hl) {
		nx->err = AN_ERR_TUNNEL_TRUNC;
		return;
	}
	const uint8_t *h = g + hl;
	switch (proto) {
	case ETHERTYPE_TEB:
		next_payload(nx, AN_TUN_GRE, h, end, 1, 0);
		return;
	case ETHERTYPE_ERSPAN_2:
	case ETHERTYPE_ERSPAN_3:
		break;
	case ETHERTYPE_WCCP:
		/* The redirected IPv4 packet; WCCPv2 puts its 4-byte redirect
		 * header first.  Told apart as Wireshark and the routers do: a
		 * payload that does not start with IPv4's version nibble has the
		 * header. */
		if (h < end && (h[0] >> 4) != 4) {
			if (end - h < 4) {
				nx->err = AN_ERR_TUNNEL_TRUNC;
				return;
			}
			h += 4;
		}
		next_payload(nx, AN_TUN_GRE, h, end, 0, ETHERTYPE_IPV4);
		return;
	default:
		next_payload(nx, AN_TUN_GRE, h, end, 0, proto);
		return;
	}
	/* ERSPAN: type I (0x88be without a sequence number) is Ethernet
	 * right away; type II has an 8-byte header, type III 12 bytes and 8
	 * more when its O bit says a platform sub-header follows.  Type III
	 * carries Ethernet only with frame type 0. */
	nx->have_id = 0;
	if (proto == ETHERTYPE_ERSPAN_2 && !seq) {
		next_payload(nx, AN_TUN_ERSPAN, h, end, 1, 0);
		return;
	}
	size_t el = proto == ETHERTYPE_ERSPAN_2 ? 8 : 12;
	if ((size_t)(end - h) < el) {
		nx->kind = AN_TUN_ERSPAN;
		nx->err = AN_ERR_TUNNEL_TRUNC;
		return;
	}
	nx->id = rd16(h + 2) & 0x3ffu; /* session ID */
	nx->have_id = 1;
	if (proto == ETHERTYPE_ERSPAN_3) {
		unsigned ft = (h[10] >> 2) & 0x1fu;
		if (h[11] & 1u)
			el += 8;
		if ((size_t)(end - h) < el) {
			nx->kind = AN_TUN_ERSPAN;
			nx->err = AN_ERR_TUNNEL_TRUNC;
			return;
		}
		if (ft != 0) {
			next_payload(nx, AN_TUN_ERSPAN, end, end, 0, 0);
			return;
		}
	}
	next_payload(nx, AN_TUN_ERSPAN, h + el, end, 1, 0);
}

/* IPv4 or IPv6 by the version nibble (GTP-U carries no type field). */
static uint16_t
ip_version_type(const uint8_t *h, const uint8_t *end)
{
	if (end - h < 1)
		return 0;
	switch (h[0] >> 4) {
	case 4:
		return ETHERTYPE_IPV4;
	case 6:
		return ETHERTYPE_IPV6;
	default:
		return 0;
	}
}

/* GTPv1-U (3GPP TS 29.281): the 8-byte header, the 4 optional bytes when
 * E, S or PN is set, the extension headers when E is; a G-PDU (message
 * type 255) carries an IP packet, other messages carry none. */
static void
tunnel_gtpu(const uint8_t *g, const uint8_t *end, struct an_next *nx)
{
	nx->kind = AN_TUN_GTPU;
	if (end - g < 8) {
		nx->err = AN_ERR_TUNNEL_TRUNC;
		return;
	}
	nx->id = rd32(g + 4);
	nx->have_id = 1;
	if ((g[0] >> 5) != 1) { /* not GTPv1 */
		next_payload(nx, AN_TUN_GTPU, end, end, 0, 0);
		return;
	}
	const uint8_t *h = g + 8;
	if (g[0] & 0x07u) {
		if (end - h < 4) {
			nx->err = AN_ERR_TUNNEL_TRUNC;
			return;
		}
		uint8_t next = h[3];
		h += 4;
		for (unsigned n = 0; (g[0] & 0x04u) && next != 0; n++) {
			/* Length in 4-byte units, the next type in the last byte. */
			if (n == AN_MAX_GTP_EXT || end - h < 1 || h[0] == 0 ||
				(size_t)(end - h) < (size_t)h[0] * 4) {
				nx->err = AN_ERR_TUNNEL_TRUNC;
				return;
			}
			size_t len = (size_t)h[0] * 4;
			next = h[len - 1];
			h += len;
		}
	}
	if (g[1] != 0xffu) {
		next_payload(nx, AN_TUN_GTPU, end, end, 0, 0);
		return;
	}
	next_payload(nx, AN_TUN_GTPU, h, end, 0, ip_version_type(h, end));
}

static uint8_t
udp_port_tunnel(uint16_t port)
{
	switch (port) {
	case PORT_VXLAN:
		return AN_TUN_VXLAN;
	case PORT_GENEVE:
		return AN_TUN_GENEVE;
	case PORT_GTPU:
		return AN_TUN_GTPU;
	default:
		return AN_TUN_NONE;
	}
}

/* VXLAN, Geneve and GTP-U by UDP port, the lower port first (as Wireshark
 * tries them); u is the UDP payload. */
static void
tunnel_udp(const struct an_layers *p, const uint8_t *u, const uint8_t *end, struct an_next *nx)
{
	uint16_t lo = p->sport < p->dport ? p->sport : p->dport;
	uint16_t hi = p->sport < p->dport ? p->dport : p->sport;
	uint8_t kind = udp_port_tunnel(lo);
	if (kind == AN_TUN_NONE)
		kind = udp_port_tunnel(hi);
	switch (kind) {
	case AN_TUN_VXLAN:
		nx->kind = kind;
		if (end - u < 8) {
			nx->err = AN_ERR_TUNNEL_TRUNC;
			return;
		}
		nx->id = rd32(u + 4) >> 8;
		nx->have_id = 1;
		next_payload(nx, kind, u + 8, end, 1, 0);
		return;
	case AN_TUN_GENEVE: {
		nx->kind = kind;
		if (end - u < 8) {
			nx->err = AN_ERR_TUNNEL_TRUNC;
			return;
		}
		nx->id = rd32(u + 4) >> 8;
		nx->have_id = 1;
		size_t hl = 8 + (size_t)(u[0] & 0x3fu) * 4; /* with options */
		if ((size_t)(end - u) < hl) {
			nx->err = AN_ERR_TUNNEL_TRUNC;
			return;
		}
		uint16_t proto = rd16(u + 2);
		next_payload(nx, kind, u + hl, end, proto == ETHERTYPE_TEB, proto);
		return;
	}
	case AN_TUN_GTPU:
		tunnel_gtpu(u, end, nx);
		return;
	default:
		return;
	}
}

/* After an IP header whose L4 starts at l4 (the payload ends at end, past
 * any Ethernet padding): is it a tunnel? */
static inline __attribute__((always_inline)) void
find_tunnel(const struct an_layers *p, enum an_status st, const uint8_t *l4, const uint8_t *end,
	struct an_next *nx)
{
	switch (p->l4_proto) {
	case IPPROTO_IPIP_:
		next_payload(nx, AN_TUN_IPIP, l4, end, 0, ETHERTYPE_IPV4);
		return;
	case IPPROTO_IPV6_:
		next_payload(nx, AN_TUN_IPIP, l4, end, 0, ETHERTYPE_IPV6);
		return;
	case IPPROTO_GRE_:
		tunnel_gre(l4, end, nx);
		return;
	case IPPROTO_UDP_:
		if (st != AN_OK)
			return; /* the 8-byte UDP header is not all there */
		/* The UDP length bounds the payload when it is below what
		 * was captured (0: BIG TCP / jumbogram, the frame counts). */
		size_t ulen = rd16(l4 + 4);
		if (ulen >= 8 && (size_t)(end - l4) > ulen)
			end = l4 + ulen;
		tunnel_udp(p, l4 + 8, end, nx);
		return;
	default:
		return;
	}
}

static enum an_status
decode_ipv4(const uint8_t *frame, const uint8_t *ip, const uint8_t *end, struct an_layers *p,
	struct an_next *nx)
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
	enum an_status st = decode_l4(ip + ihl, end, p);
	find_tunnel(p, st, ip + ihl, end, nx);
	return st;
}

static int
is_ipv6_ext(uint8_t nh)
{
	return nh == IPPROTO_HOPOPTS_ || nh == IPPROTO_ROUTING_ || nh == IPPROTO_FRAGMENT_ ||
		nh == IPPROTO_DSTOPTS_ || nh == IPPROTO_AH_;
}

static enum an_status
decode_ipv6(const uint8_t *frame, const uint8_t *ip, const uint8_t *end, struct an_layers *p,
	struct an_next *nx)
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
	enum an_status st = decode_l4(h, end, p);
	find_tunnel(p, st, h, end, nx);
	return st;
}

/* IPv4, IPv6 or another EtherType at h. */
static inline __attribute__((always_inline)) enum an_status
decode_l3(const uint8_t *frame, const uint8_t *h, const uint8_t *end, uint16_t et,
	struct an_layers *p, struct an_next *nx)
{
	p->l3_off = (uint16_t)(h - frame);
	switch (et) {
	case ETHERTYPE_IPV4:
		p->l3 = AN_L3_IPV4;
		return decode_ipv4(frame, h, end, p, nx);
	case ETHERTYPE_IPV6:
		p->l3 = AN_L3_IPV6;
		return decode_ipv6(frame, h, end, p, nx);
	default:
		p->l3 = AN_L3_OTHER;
		return AN_OK;
	}
}

/* Ethernet and its VLAN tags at h, then L3. */
static inline __attribute__((always_inline)) enum an_status
decode_eth(const uint8_t *frame, const uint8_t *h, const uint8_t *end, struct an_layers *p,
	struct an_next *nx)
{
	if (end - h < 14)
		return AN_ERR_ETH_TRUNC;
	memcpy(p->mac_dst, h, 6);
	memcpy(p->mac_src, h + 6, 6);
	uint16_t et = rd16(h + 12);
	h += 14;
	while (et == ETHERTYPE_VLAN || et == ETHERTYPE_QINQ || et == ETHERTYPE_QINQ_OLD) {
		if (p->n_vlan == AN_MAX_VLAN) {
			p->ethertype = et;
			p->have |= AN_HAVE_ETH;
			return AN_ERR_VLAN_DEPTH;
		}
		if (end - h < 4) {
			p->ethertype = et;
			p->have |= AN_HAVE_ETH;
			return AN_ERR_VLAN_TRUNC;
		}
		p->vlan_tci[p->n_vlan++] = rd16(h);
		et = rd16(h + 2);
		h += 4;
	}
	p->ethertype = et;
	p->have |= AN_HAVE_ETH;
	return decode_l3(frame, h, end, et, p, nx);
}

enum an_status
an_decode(const uint8_t *frame, size_t caplen, struct an_packet *p)
{
	/* Only what every packet needs is cleared here (the inner headers,
	 * twice the bytes, when there is a tunnel): this is most of the
	 * decoder's time on a short frame. */
	memset(&p->outer, 0, sizeof(p->outer));
	p->inner.have = 0;
	p->n_tunnel = 0;
	p->tunnel[0] = AN_TUN_NONE;
	p->have_tunnel_id = 0;
	p->tunnel_id = 0;
	const uint8_t *end = frame + caplen;
	struct an_next nx;
	nx.kind = AN_TUN_NONE;
	nx.err = AN_OK;
	nx.have_id = 0;
	enum an_status st = decode_eth(frame, frame, end, &p->outer, &nx);
	p->status = (uint8_t)st;

	/* Each round decodes the payload of one tunnel into p->inner, which
	 * so ends up holding the innermost headers. */
	while (nx.kind != AN_TUN_NONE) {
		if (p->n_tunnel == AN_MAX_TUNNEL) {
			p->inner.status = AN_ERR_TUNNEL_DEPTH;
			break;
		}
		struct an_next cur = nx;
		nx.kind = AN_TUN_NONE;
		nx.err = AN_OK;
		nx.have_id = 0;
		memset(&p->inner, 0, sizeof(p->inner));
		p->tunnel[p->n_tunnel++] = cur.kind;
		p->tunnel_id = cur.have_id ? cur.id : 0;
		p->have_tunnel_id = cur.have_id;
		enum an_status ist;
		if (cur.err != AN_OK)
			ist = cur.err;
		else if (cur.eth)
			ist = decode_eth(frame, cur.h, cur.end, &p->inner, &nx);
		else if (cur.ethertype == 0)
			ist = AN_OK; /* no payload, or one not decoded: l3 none */
		else
			ist = decode_l3(frame, cur.h, cur.end, cur.ethertype, &p->inner, &nx);
		p->inner.status = (uint8_t)ist;
	}
	return st;
}
