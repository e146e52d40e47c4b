/* L4 payload location in an Ethernet frame (see payload.h). */
#include "payload.h"

const char *const ac_payload_status_name[AC_PL_N_STATUS] = {
	[AC_PL_OK] = "scanned",
	[AC_PL_NOT_IPV4] = "not_ipv4",
	[AC_PL_NOT_TCP_UDP] = "not_tcp_udp",
	[AC_PL_FRAGMENT] = "ipv4_fragment",
	[AC_PL_TRUNCATED] = "truncated",
	[AC_PL_BAD_HEADER] = "bad_header",
};

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

enum ac_payload_status
ac_find_payload(const uint8_t *frame, uint32_t len, struct ac_payload *pl)
{
	uint32_t o = 12;
	uint16_t vlan = 0;

	if (len < 14)
		return AC_PL_TRUNCATED;
	uint16_t type = be16(frame + o);
	for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8 || type == 0x9100);
		tags++) {
		o += 4;
		if (len < o + 2)
			return AC_PL_TRUNCATED;
		if (tags == 0)
			vlan = be16(frame + o - 2) & 0x0fff;
		type = be16(frame + o);
	}
	o += 2;
	if (type != 0x0800)
		return AC_PL_NOT_IPV4;
	if (len < o + 20)
		return AC_PL_TRUNCATED;
	const uint8_t *ip = frame + o;
	if (ip[0] >> 4 != 4)
		return AC_PL_NOT_IPV4;
	uint32_t ihl = (ip[0] & 0x0fu) * 4u;
	uint32_t tot = be16(ip + 2);
	if (ihl < 20 || tot < ihl)
		return AC_PL_BAD_HEADER;
	if (len < o + tot)
		return AC_PL_TRUNCATED;
	if ((be16(ip + 6) & 0x1fffu) != 0)
		return AC_PL_FRAGMENT;
	uint32_t l4 = o + ihl, end = o + tot, hl;
	switch (ip[9]) {
	case 6:
		if (end < l4 + 20)
			return AC_PL_TRUNCATED;
		hl = (frame[l4 + 12] >> 4) * 4u;
		if (hl < 20)
			return AC_PL_BAD_HEADER;
		if (end < l4 + hl)
			return AC_PL_TRUNCATED;
		break;
	case 17:
		hl = 8;
		if (end < l4 + hl)
			return AC_PL_TRUNCATED;
		break;
	default:
		return AC_PL_NOT_TCP_UDP;
	}
	pl->l3_off = o;
	pl->l4_off = l4;
	pl->vlan = vlan;
	pl->off = l4 + hl;
	pl->len = end - pl->off;
	return AC_PL_OK;
}
