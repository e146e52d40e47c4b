/* Frame -> flow key.  Every read is bounds-checked against the captured
 * length: the shared test captures include truncated and fuzzed frames. */
#include "flow_key.h"

#include <arpa/inet.h>
#include <string.h>

#define ETHER_HDR_LEN 14
#define ETHER_TYPE_IPV4 0x0800
#define ETHER_TYPE_IPV6 0x86dd
#define ETHER_TYPE_VLAN 0x8100
#define ETHER_TYPE_QINQ 0x88a8
#define ETHER_TYPE_QINQ_OLD 0x9100
#define MAX_VLAN_TAGS 4
#define MAX_IPV6_EXT_HEADERS 8

#define IPPROTO_NUM_TCP 6
#define IPPROTO_NUM_UDP 17
#define IPPROTO_NUM_SCTP 132
#define IPPROTO_NUM_UDPLITE 136

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static bool
has_ports(uint8_t proto)
{
	return proto == IPPROTO_NUM_TCP || proto == IPPROTO_NUM_UDP || proto == IPPROTO_NUM_SCTP ||
		proto == IPPROTO_NUM_UDPLITE;
}

/* Fill ports and TCP flags from the L4 header at l4 (l4_len bytes captured).
 * Returns false when a protocol with ports has no room for them. */
static bool
read_l4(const uint8_t *l4, size_t l4_len, uint8_t proto, bool fragment, uint16_t *sport,
	uint16_t *dport, uint8_t *tcp_flags)
{
	*sport = 0;
	*dport = 0;
	*tcp_flags = 0;
	/* Fragments are keyed without ports: only the first one carries them,
	 * and all fragments of a datagram must land in the same flow. */
	if (fragment || !has_ports(proto))
		return true;
	if (l4_len < 4)
		return false;
	*sport = rd16(l4);
	*dport = rd16(l4 + 2);
	/* A header cut by the capture's snap length still names the flow;
	 * its flags are unknown and left 0. */
	if (proto == IPPROTO_NUM_TCP && l4_len >= 14)
		*tcp_flags = l4[13];
	return true;
}

static void
canonicalize(struct flow_pkt *out, const uint8_t src[16], const uint8_t dst[16], uint16_t sport,
	uint16_t dport)
{
	int c = memcmp(src, dst, 16);
	bool src_is_lo = c < 0 || (c == 0 && sport <= dport);

	if (src_is_lo) {
		memcpy(out->key.addr_lo, src, 16);
		memcpy(out->key.addr_hi, dst, 16);
		out->key.port_lo = sport;
		out->key.port_hi = dport;
		out->dir = 0;
	} else {
		memcpy(out->key.addr_lo, dst, 16);
		memcpy(out->key.addr_hi, src, 16);
		out->key.port_lo = dport;
		out->key.port_hi = sport;
		out->dir = 1;
	}
}

static void
v4_mapped(uint8_t out[16], const uint8_t v4[4])
{
	memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	memcpy(out + 12, v4, 4);
}

void
flow_pkt_from_ipv4(struct flow_pkt *out, const uint8_t src[4], const uint8_t dst[4], uint8_t proto,
	uint16_t sport, uint16_t dport, uint16_t vlan, uint8_t tcp_flags)
{
	uint8_t s16[16], d16[16];

	memset(out, 0, sizeof(*out));
	out->key.proto = proto;
	out->key.family = FLOW_FAMILY_IPV4;
	out->key.vlan = vlan;
	out->tcp_flags = tcp_flags;
	v4_mapped(s16, src);
	v4_mapped(d16, dst);
	canonicalize(out, s16, d16, sport, dport);
}

static enum flow_parse
parse_ipv4(const uint8_t *ip, size_t len, struct flow_pkt *out)
{
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	size_t ihl, total, l4_len;
	bool fragment;

	if (len < 20 || (ip[0] >> 4) != 4)
		return FLOW_PARSE_MALFORMED;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	total = rd16(ip + 2);
	if (ihl < 20 || ihl > len || total < ihl)
		return FLOW_PARSE_MALFORMED;
	/* Ethernet padding may follow the datagram; a snap length may cut it. */
	l4_len = (total < len ? total : len) - ihl;
	fragment = (rd16(ip + 6) & 0x3fff) != 0; /* MF flag or offset */

	out->key.proto = ip[9];
	out->key.family = FLOW_FAMILY_IPV4;
	if (!read_l4(ip + ihl, l4_len, ip[9], fragment, &sport, &dport, &out->tcp_flags))
		return FLOW_PARSE_MALFORMED;
	v4_mapped(src, ip + 12);
	v4_mapped(dst, ip + 16);
	canonicalize(out, src, dst, sport, dport);
	return FLOW_PARSE_OK;
}

static enum flow_parse
parse_ipv6(const uint8_t *ip, size_t len, struct flow_pkt *out)
{
	uint16_t sport, dport;
	size_t off = 40, end;
	uint8_t nh;
	bool fragment = false;
	int i;

	if (len < 40 || (ip[0] >> 4) != 6)
		return FLOW_PARSE_MALFORMED;
	end = 40 + (size_t)rd16(ip + 4);
	if (end > len)
		end = len; /* snap length */
	nh = ip[6];
	for (i = 0; i < MAX_IPV6_EXT_HEADERS; i++) {
		size_t hlen;

		if (nh == 0 || nh == 43 || nh == 60) { /* hop-by-hop, routing, dest opts */
			if (off + 2 > end)
				return FLOW_PARSE_MALFORMED;
			hlen = ((size_t)ip[off + 1] + 1) * 8;
		} else if (nh == 44) { /* fragment */
			if (off + 8 > end)
				return FLOW_PARSE_MALFORMED;
			hlen = 8;
			if ((rd16(ip + off + 2) & 0xfff9) != 0) /* offset or M flag */
				fragment = true;
		} else if (nh == 51) { /* authentication header */
			if (off + 2 > end)
				return FLOW_PARSE_MALFORMED;
			hlen = ((size_t)ip[off + 1] + 2) * 4;
		} else {
			break;
		}
		if (off + hlen > end)
			return FLOW_PARSE_MALFORMED;
		nh = ip[off];
		off += hlen;
	}
	if (i == MAX_IPV6_EXT_HEADERS)
		return FLOW_PARSE_MALFORMED;

	out->key.proto = nh;
	out->key.family = FLOW_FAMILY_IPV6;
	if (!read_l4(ip + off, end - off, nh, fragment, &sport, &dport, &out->tcp_flags))
		return FLOW_PARSE_MALFORMED;
	canonicalize(out, ip + 8, ip + 24, sport, dport);
	return FLOW_PARSE_OK;
}

enum flow_parse
flow_parse_frame(const uint8_t *data, size_t len, struct flow_pkt *out)
{
	size_t off = ETHER_HDR_LEN;
	uint16_t type;
	int tags = 0;

	memset(out, 0, sizeof(*out));
	if (len < ETHER_HDR_LEN)
		return FLOW_PARSE_MALFORMED;
	type = rd16(data + 12);
	while (type == ETHER_TYPE_VLAN || type == ETHER_TYPE_QINQ || type == ETHER_TYPE_QINQ_OLD) {
		if (++tags > MAX_VLAN_TAGS || off + 4 > len)
			return FLOW_PARSE_MALFORMED;
		if (tags == 1)
			out->key.vlan = rd16(data + off) & 0x0fff;
		type = rd16(data + off + 2);
		off += 4;
	}
	if (type != ETHER_TYPE_IPV4 && type != ETHER_TYPE_IPV6)
		return FLOW_PARSE_NOT_IP;
	out->l3 = data + off;
	out->l3_len = (uint16_t)(len - off < UINT16_MAX ? len - off : UINT16_MAX);
	if (type == ETHER_TYPE_IPV4)
		return parse_ipv4(data + off, len - off, out);
	return parse_ipv6(data + off, len - off, out);
}

const char *
flow_key_addr_str(const struct flow_key *k, bool hi, char *buf, size_t size)
{
	const uint8_t *a = hi ? k->addr_hi : k->addr_lo;

	if (k->family == FLOW_FAMILY_IPV4)
		return inet_ntop(AF_INET, a + 12, buf, (socklen_t)size);
	return inet_ntop(AF_INET6, a, buf, (socklen_t)size);
}
