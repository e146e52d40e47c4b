/* L4 payload location on crafted frames: plain, VLAN and QinQ tags, IPv4
 * options, TCP options, Ethernet padding, fragments, truncation, bad
 * header lengths, non-IPv4 and non-TCP/UDP. */
#include <string.h>

#include "check.h"
#include "payload.h"

/* Ethernet (+ tags) / IPv4 (ihl words) / TCP or UDP / payload of plen. */
static uint32_t
build(uint8_t *f, int tags, uint8_t ihl, uint8_t proto, uint8_t tcp_doff, uint32_t plen,
	uint16_t frag, uint32_t pad)
{
	uint32_t o = 12;
	memset(f, 0xee, 2048);
	for (int t = 0; t < tags; t++) {
		f[o] = t == 0 && tags == 2 ? 0x88 : 0x81;
		f[o + 1] = t == 0 && tags == 2 ? 0xa8 : 0x00;
		o += 4;
	}
	f[o] = 0x08;
	f[o + 1] = 0x00;
	o += 2;
	uint32_t l4 = proto == 6 ? tcp_doff * 4u : 8u;
	uint32_t tot = ihl * 4u + l4 + plen;
	f[o] = (uint8_t)(0x40 | ihl);
	f[o + 2] = (uint8_t)(tot >> 8);
	f[o + 3] = (uint8_t)tot;
	f[o + 6] = (uint8_t)(frag >> 8);
	f[o + 7] = (uint8_t)frag;
	f[o + 9] = proto;
	if (proto == 6)
		f[o + ihl * 4u + 12] = (uint8_t)(tcp_doff << 4);
	memset(f + o + ihl * 4u + l4, 'P', plen);
	return o + tot + pad;
}

static void
expect(const char *what, const uint8_t *f, uint32_t len, enum ac_payload_status want, uint32_t off,
	uint32_t plen)
{
	struct ac_payload pl = { 0 };
	enum ac_payload_status s = ac_find_payload(f, len, &pl);
	CHECK(s == want, "%s: status %s, want %s", what, ac_payload_status_name[s],
		ac_payload_status_name[want]);
	if (s == AC_PL_OK && want == AC_PL_OK)
		CHECK(pl.off == off && pl.len == plen, "%s: payload at %u+%u, want %u+%u", what,
			pl.off, pl.len, off, plen);
}

int
main(void)
{
	static uint8_t f[2048];
	uint32_t n;

	n = build(f, 0, 5, 17, 0, 100, 0, 0);
	expect("udp", f, n, AC_PL_OK, 14 + 20 + 8, 100);
	n = build(f, 0, 5, 6, 5, 10, 0, 30);
	expect("tcp with Ethernet padding", f, n, AC_PL_OK, 14 + 20 + 20, 10);
	n = build(f, 0, 7, 6, 8, 33, 0, 0);
	expect("ip and tcp options", f, n, AC_PL_OK, 14 + 28 + 32, 33);
	n = build(f, 1, 5, 17, 0, 5, 0, 0);
	expect("802.1Q", f, n, AC_PL_OK, 18 + 20 + 8, 5);
	n = build(f, 2, 5, 17, 0, 5, 0, 0);
	expect("QinQ", f, n, AC_PL_OK, 22 + 20 + 8, 5);
	n = build(f, 0, 5, 17, 0, 0, 0, 0);
	expect("empty payload", f, n, AC_PL_OK, 42, 0);
	n = build(f, 0, 5, 17, 0, 50, 0x2000, 0);
	expect("first fragment (MF)", f, n, AC_PL_OK, 42, 50);
	n = build(f, 0, 5, 17, 0, 50, 0x0010, 0);
	expect("later fragment", f, n, AC_PL_FRAGMENT, 0, 0);
	n = build(f, 0, 5, 1, 0, 50, 0, 0);
	expect("icmp", f, n, AC_PL_NOT_TCP_UDP, 0, 0);
	n = build(f, 0, 5, 17, 0, 50, 0, 0);
	expect("cut inside the payload", f, n - 1, AC_PL_TRUNCATED, 0, 0);
	expect("cut inside the ip header", f, 14 + 19, AC_PL_TRUNCATED, 0, 0);
	expect("cut inside Ethernet", f, 13, AC_PL_TRUNCATED, 0, 0);
	n = build(f, 0, 5, 6, 5, 0, 0, 0);
	expect("cut inside tcp header", f, n - 1, AC_PL_TRUNCATED, 0, 0);
	n = build(f, 0, 4, 17, 0, 10, 0, 0);
	expect("ihl 4", f, n, AC_PL_BAD_HEADER, 0, 0);
	n = build(f, 0, 5, 6, 4, 10, 0, 0);
	expect("tcp doff 4", f, n, AC_PL_BAD_HEADER, 0, 0);
	n = build(f, 0, 5, 17, 0, 10, 0, 0);
	f[16] = 0;
	f[17] = 19; /* total length < ihl */
	expect("total length < ihl", f, n, AC_PL_BAD_HEADER, 0, 0);
	n = build(f, 0, 5, 17, 0, 10, 0, 0);
	f[14] = 0x65; /* version 6 in an 0x0800 frame */
	expect("version 6", f, n, AC_PL_NOT_IPV4, 0, 0);
	n = build(f, 0, 5, 17, 0, 10, 0, 0);
	f[12] = 0x86;
	f[13] = 0xdd;
	expect("IPv6 ethertype", f, n, AC_PL_NOT_IPV4, 0, 0);
	n = build(f, 1, 5, 17, 0, 10, 0, 0);
	expect("802.1Q cut in the tag", f, 15, AC_PL_TRUNCATED, 0, 0);
	return check_done("test_payload");
}
