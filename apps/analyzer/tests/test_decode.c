/* Unit tests of the analyzer decoder on crafted frames: each header kind,
 * malformed fields, and truncation at every byte offset (each truncated copy
 * lives in a heap block of exactly its length, so an ASan build reports any
 * read past the end). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

#include "frame_build.h"

static struct an_packet
dec(const struct fb *f)
{
	/* Exact-size heap copy: ASan sees any overread. */
	uint8_t *copy = malloc(f->n ? f->n : 1);
	memcpy(copy, f->b, f->n);
	struct an_packet p;
	an_decode(copy, f->n, &p);
	free(copy);
	return p;
}

static void
test_ipv4_tcp(void)
{
	struct fb f = { 0 };
	eth(&f, 0x0800);
	ipv4(&f, 5, 40, 0x4000 /* DF */, 64, 6);
	tcp(&f, 12345, 80, 5);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK(memcmp(p.mac_dst, MAC_D, 6) == 0);
	CHECK(memcmp(p.mac_src, MAC_S, 6) == 0);
	CHECK_EQ(p.ethertype, 0x0800);
	CHECK_EQ(p.l3, AN_L3_IPV4);
	CHECK_EQ(p.ttl, 64);
	CHECK_EQ(p.l4_proto, 6);
	CHECK_EQ(p.sport, 12345);
	CHECK_EQ(p.dport, 80);
	CHECK_EQ(p.have, AN_HAVE_ETH | AN_HAVE_IP | AN_HAVE_L4PROTO | AN_HAVE_PORTS);
	CHECK_EQ(p.flags, 0);
	CHECK_EQ(p.l3_off, 14);
	CHECK_EQ(p.l4_off, 34);
	CHECK(memcmp(p.src, "\xc0\xa8\x00\x01", 4) == 0);
	CHECK(memcmp(p.dst, "\x0a\x00\x00\x02", 4) == 0);
}

static void
test_vlan_udp(void)
{
	struct fb f = { 0 };
	eth(&f, 0x8100);
	vlan(&f, 0x2064 /* prio 1, VID 100 */, 0x0800);
	ipv4(&f, 5, 28, 0, 17, 17);
	udp(&f, 53, 5353, 8);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.n_vlan, 1);
	CHECK_EQ(p.vlan_tci[0] & 0xfff, 100);
	CHECK_EQ(p.ethertype, 0x0800);
	CHECK_EQ(p.l3_off, 18);
	CHECK_EQ(p.ttl, 17);
	CHECK_EQ(p.l4_proto, 17);
	CHECK_EQ(p.sport, 53);
	CHECK_EQ(p.dport, 5353);
}

static void
test_qinq_ipv6_tcp(void)
{
	static const unsigned outer[] = { 0x88a8, 0x9100, 0x8100 };
	for (unsigned i = 0; i < 3; i++) {
		struct fb f = { 0 };
		eth(&f, outer[i]);
		vlan(&f, 10, 0x8100);
		vlan(&f, 20, 0x86dd);
		ipv6(&f, 20, 6, 255);
		tcp(&f, 443, 50000, 5);
		struct an_packet p = dec(&f);
		CHECK_EQ(p.status, AN_OK);
		CHECK_EQ(p.n_vlan, 2);
		CHECK_EQ(p.vlan_tci[0], 10);
		CHECK_EQ(p.vlan_tci[1], 20);
		CHECK_EQ(p.l3, AN_L3_IPV6);
		CHECK_EQ(p.l3_off, 22);
		CHECK_EQ(p.ttl, 255);
		CHECK(memcmp(p.src, V6_S, 16) == 0);
		CHECK(memcmp(p.dst, V6_D, 16) == 0);
		CHECK_EQ(p.sport, 443);
		CHECK_EQ(p.dport, 50000);
	}
}

static void
test_too_many_tags(void)
{
	struct fb f = { 0 };
	eth(&f, 0x88a8);
	vlan(&f, 1, 0x8100);
	vlan(&f, 2, 0x8100);
	vlan(&f, 3, 0x0800);
	ipv4(&f, 5, 20, 0, 1, 6);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_ERR_VLAN_DEPTH);
	CHECK_EQ(p.have, AN_HAVE_ETH);
}

static void
test_ipv4_options_and_padding(void)
{
	/* IHL 7 (8 bytes of options), UDP, padded to 60 bytes on the wire:
	 * the padding is not UDP payload. */
	struct fb f = { 0 };
	eth(&f, 0x0800);
	ipv4(&f, 7, 28 + 8, 0, 3, 17);
	udp(&f, 1, 2, 8);
	zeros(&f, 60 - f.n);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK(p.flags & AN_FLAG_IPV4_OPTS);
	CHECK_EQ(p.l4_off, 14 + 28);
	CHECK_EQ(p.sport, 1);
	CHECK_EQ(p.dport, 2);

	/* Total length says the UDP header is cut after 4 bytes, even though
	 * padding bytes follow in the frame. */
	struct fb g = { 0 };
	eth(&g, 0x0800);
	ipv4(&g, 5, 24, 0, 3, 17);
	udp(&g, 7, 9, 8);
	zeros(&g, 60 - g.n);
	p = dec(&g);
	CHECK_EQ(p.status, AN_ERR_UDP_TRUNC);
	CHECK(p.have & AN_HAVE_PORTS);
	CHECK_EQ(p.sport, 7);
}

static void
test_ipv4_fragments(void)
{
	struct fb f = { 0 };
	eth(&f, 0x0800);
	ipv4(&f, 5, 1500, 0x2000 /* MF, offset 0 */, 64, 6);
	tcp(&f, 1000, 2000, 5);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK(p.flags & AN_FLAG_FRAGMENT);
	CHECK(!(p.flags & AN_FLAG_LATER_FRAG));
	CHECK(p.have & AN_HAVE_PORTS);
	CHECK_EQ(p.sport, 1000);

	struct fb g = { 0 };
	eth(&g, 0x0800);
	ipv4(&g, 5, 40, 185 /* offset 1480 bytes, last */, 64, 6);
	tcp(&g, 1000, 2000, 5); /* looks like TCP but is payload */
	p = dec(&g);
	CHECK_EQ(p.status, AN_OK);
	CHECK(p.flags & AN_FLAG_LATER_FRAG);
	CHECK(p.have & AN_HAVE_L4PROTO);
	CHECK_EQ(p.l4_proto, 6);
	CHECK(!(p.have & AN_HAVE_PORTS));
	CHECK_EQ(p.sport, 0);
}

static void
test_ipv4_malformed(void)
{
	struct fb f = { 0 };
	eth(&f, 0x0800);
	ipv4(&f, 5, 40, 0, 64, 6);
	tcp(&f, 1, 2, 5);

	struct fb g = f;
	g.b[14] = 0x65; /* version 6 in an IPv4 EtherType */
	CHECK_EQ(dec(&g).status, AN_ERR_IPV4_VERSION);
	g = f;
	g.b[14] = 0x44; /* IHL 4 */
	CHECK_EQ(dec(&g).status, AN_ERR_IPV4_IHL);
	g = f;
	g.b[14] = 0x4f; /* IHL 15: 60 bytes, more than the frame holds */
	CHECK_EQ(dec(&g).status, AN_ERR_IPV4_TRUNC);
	g = f;
	g.b[16] = 0;
	g.b[17] = 19; /* total length below the header */
	struct an_packet p = dec(&g);
	CHECK_EQ(p.status, AN_ERR_IPV4_TOTLEN);
	CHECK(p.have & AN_HAVE_IP);
	CHECK(!(p.have & AN_HAVE_PORTS));
	g = f;
	g.b[16] = 0;
	g.b[17] = 0; /* total length 0: segmentation offload, frame length holds */
	p = dec(&g);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.sport, 1);
	CHECK_EQ(p.dport, 2);
	g = f;
	g.b[14 + 20 + 12] = 0x40; /* TCP data offset 4 */
	p = dec(&g);
	CHECK_EQ(p.status, AN_ERR_TCP_DOFF);
	CHECK(p.have & AN_HAVE_PORTS);
	g = f;
	g.b[14 + 20 + 12] = 0x60; /* data offset 6: options cut short */
	CHECK_EQ(dec(&g).status, AN_ERR_TCP_TRUNC);
}

/* IPv6 with every extension header kind before TCP. */
static struct fb
ipv6_ext_chain_tcp(void)
{
	struct fb f = { 0 };
	eth(&f, 0x86dd);
	ipv6(&f, 8 + 24 + 8 + 16 + 8 + 24, 0 /* hop-by-hop */, 7);
	put8(&f, 43);
	put8(&f, 0);
	zeros(&f, 6); /* HBH, 8 B */
	put8(&f, 60);
	put8(&f, 2);
	put8(&f, 0);
	put8(&f, 1); /* routing, 24 B */
	zeros(&f, 20);
	put8(&f, 51);
	put8(&f, 0);
	zeros(&f, 6); /* dest opts, 8 B */
	put8(&f, 44);
	put8(&f, 2);
	zeros(&f, 14); /* AH, (2+2)*4 = 16 B */
	put8(&f, 6);
	put8(&f, 0);
	put16(&f, 0x0001); /* fragment, first, MF */
	put32(&f, 77);
	tcp(&f, 8080, 22, 6); /* with 4 B options */
	return f;
}

static void
test_ipv6_ext_headers(void)
{
	struct fb f = ipv6_ext_chain_tcp();
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK(p.flags & AN_FLAG_IPV6_EXT);
	CHECK(p.flags & AN_FLAG_FRAGMENT);
	CHECK(!(p.flags & AN_FLAG_LATER_FRAG));
	CHECK_EQ(p.ttl, 7);
	CHECK_EQ(p.l4_proto, 6);
	CHECK_EQ(p.l4_off, 14 + 40 + 8 + 24 + 8 + 16 + 8);
	CHECK_EQ(p.sport, 8080);
	CHECK_EQ(p.dport, 22);

	/* A later fragment: protocol known, no ports. */
	struct fb g = { 0 };
	eth(&g, 0x86dd);
	ipv6(&g, 8 + 8, 44, 9);
	put8(&g, 17);
	put8(&g, 0);
	put16(&g, 0x0100);
	put32(&g, 5);
	udp(&g, 1, 2, 8);
	p = dec(&g);
	CHECK_EQ(p.status, AN_OK);
	CHECK(p.flags & AN_FLAG_LATER_FRAG);
	CHECK_EQ(p.l4_proto, 17);
	CHECK(!(p.have & AN_HAVE_PORTS));

	/* ESP and no-next-header end the walk. */
	static const unsigned stop[] = { 50, 59 };
	for (unsigned i = 0; i < 2; i++) {
		struct fb h = { 0 };
		eth(&h, 0x86dd);
		ipv6(&h, 8 + 16, 60, 1);
		put8(&h, stop[i]);
		put8(&h, 0);
		zeros(&h, 6);
		zeros(&h, 16);
		p = dec(&h);
		CHECK_EQ(p.status, AN_OK);
		CHECK_EQ(p.l4_proto, stop[i]);
		CHECK_EQ(p.l4_off, 14 + 48);
		CHECK(!(p.have & AN_HAVE_PORTS));
	}

	/* An endless chain of destination options is cut off. */
	struct fb e = { 0 };
	eth(&e, 0x86dd);
	ipv6(&e, 8 * (AN_MAX_IPV6_EXT + 1), 60, 1);
	for (unsigned i = 0; i <= AN_MAX_IPV6_EXT; i++) {
		put8(&e, 60);
		put8(&e, 0);
		zeros(&e, 6);
	}
	CHECK_EQ(dec(&e).status, AN_ERR_IPV6_EXT_DEPTH);

	struct fb v = f;
	v.b[14] = 0x40; /* version 4 in an IPv6 EtherType */
	CHECK_EQ(dec(&v).status, AN_ERR_IPV6_VERSION);
}

static void
test_icmp(void)
{
	struct fb f = { 0 };
	eth(&f, 0x0800);
	ipv4(&f, 5, 28, 0, 64, 1);
	put8(&f, 8);
	put8(&f, 0);
	zeros(&f, 6); /* echo request */
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK(p.have & AN_HAVE_ICMP);
	CHECK_EQ(p.icmp_type, 8);
	CHECK(!(p.have & AN_HAVE_PORTS));

	struct fb g = { 0 };
	eth(&g, 0x86dd);
	ipv6(&g, 8, 58, 255);
	put8(&g, 135);
	put8(&g, 0);
	zeros(&g, 6); /* neighbour solicitation */
	p = dec(&g);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.l4_proto, 58);
	CHECK_EQ(p.icmp_type, 135);

	g.n = 14 + 40 + 1;
	CHECK_EQ(dec(&g).status, AN_ERR_ICMP_TRUNC);
}

static void
test_other_ethertype(void)
{
	struct fb f = { 0 };
	eth(&f, 0x0806); /* ARP */
	zeros(&f, 28);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.l3, AN_L3_OTHER);
	CHECK_EQ(p.have, AN_HAVE_ETH);
}

/* Cut a full frame at every length 0..n: no overread (ASan), never AN_OK
 * before the end of the last header, and every field reported valid equals
 * the field of the full decode. */
static void
truncate_everywhere(const struct fb *full, size_t hdr_end, const char *what)
{
	struct an_packet whole = dec(full);
	CHECK_EQ(whole.status, AN_OK);
	for (size_t len = 0; len <= full->n; len++) {
		struct fb cut = *full;
		cut.n = len;
		struct an_packet p = dec(&cut);
		if (len < hdr_end && p.status == AN_OK) {
			fprintf(stderr, "%s cut at %zu: status ok\n", what, len);
			failures++;
		}
		if (len >= hdr_end)
			CHECK_EQ(p.status, AN_OK);
		if (p.have & AN_HAVE_ETH)
			CHECK(memcmp(p.mac_src, whole.mac_src, 6) == 0);
		if (p.have & AN_HAVE_IP) {
			CHECK_EQ(p.ttl, whole.ttl);
			CHECK(memcmp(p.src, whole.src, 16) == 0);
			CHECK(memcmp(p.dst, whole.dst, 16) == 0);
		}
		if (p.have & AN_HAVE_L4PROTO)
			CHECK_EQ(p.l4_proto, whole.l4_proto);
		if (p.have & AN_HAVE_PORTS) {
			CHECK(len >= whole.l4_off + 4u);
			CHECK_EQ(p.sport, whole.sport);
			CHECK_EQ(p.dport, whole.dport);
		} else if (whole.have & AN_HAVE_PORTS) {
			CHECK(len < whole.l4_off + 4u);
		}
	}
}

static void
test_truncation(void)
{
	struct fb v6 = ipv6_ext_chain_tcp();
	truncate_everywhere(&v6, v6.n, "ipv6+ext+tcp");

	struct fb v4 = { 0 };
	eth(&v4, 0x8100);
	vlan(&v4, 5, 0x0800);
	ipv4(&v4, 6, 24 + 28, 0, 64, 6);
	tcp(&v4, 99, 100, 7);
	truncate_everywhere(&v4, v4.n, "vlan+ipv4opts+tcp");

	struct fb u = { 0 };
	eth(&u, 0x88a8);
	vlan(&u, 1, 0x8100);
	vlan(&u, 2, 0x86dd);
	ipv6(&u, 8, 17, 64);
	udp(&u, 5, 6, 8);
	truncate_everywhere(&u, u.n, "qinq+ipv6+udp");
}

/* ---- tunnels ---- */

static void
patch16(struct fb *f, size_t off, unsigned v)
{
	f->b[off] = (uint8_t)(v >> 8);
	f->b[off + 1] = (uint8_t)v;
}

/* Fix the IPv4 total length at ip_off and the UDP length at udp_off (when
 * non-zero) once the frame is complete. */
static void
fix_lengths(struct fb *f, size_t ip_off, size_t udp_off)
{
	patch16(f, ip_off + 2, (unsigned)(f->n - ip_off));
	if (udp_off)
		patch16(f, udp_off + 4, (unsigned)(f->n - udp_off));
}

static const uint8_t IMAC_D[6] = { 0x02, 0, 0, 0, 0, 0xd0 };
static const uint8_t IMAC_S[6] = { 0x02, 0, 0, 0, 0, 0x50 };

static void
inner_eth(struct fb *f, unsigned ethertype)
{
	put(f, IMAC_D, 6);
	put(f, IMAC_S, 6);
	put16(f, ethertype);
}

/* Inner IPv4 10.9.8.7 -> 10.9.8.6, TTL 33, TCP 1111 -> 2222. */
static void
inner_ipv4_tcp(struct fb *f)
{
	size_t ip = f->n;
	put8(f, 0x45);
	put8(f, 0);
	put16(f, 40);
	put16(f, 1);
	put16(f, 0);
	put8(f, 33);
	put8(f, 6);
	put16(f, 0);
	put32(f, 0x0a090807ul);
	put32(f, 0x0a090806ul);
	tcp(f, 1111, 2222, 5);
	patch16(f, ip + 2, (unsigned)(f->n - ip));
}

static void
check_inner_ipv4_tcp(const struct an_packet *p)
{
	CHECK_EQ(p->inner.status, AN_OK);
	CHECK_EQ(p->inner.l3, AN_L3_IPV4);
	CHECK_EQ(p->inner.ttl, 33);
	CHECK_EQ(p->inner.l4_proto, 6);
	CHECK_EQ(p->inner.src[0], 10);
	CHECK_EQ(p->inner.src[3], 7);
	CHECK_EQ(p->inner.dst[3], 6);
	CHECK_EQ(p->inner.sport, 1111);
	CHECK_EQ(p->inner.dport, 2222);
	CHECK(p->inner.have & AN_HAVE_PORTS);
}

static void
check_inner_eth(const struct an_packet *p)
{
	CHECK(p->inner.have & AN_HAVE_ETH);
	CHECK(memcmp(p->inner.mac_dst, IMAC_D, 6) == 0);
	CHECK(memcmp(p->inner.mac_src, IMAC_S, 6) == 0);
}

/* Outer Ethernet / IPv4 / UDP sport -> dport; returns the UDP offset. */
static size_t
outer_udp(struct fb *f, unsigned sport, unsigned dport)
{
	eth(f, 0x0800);
	ipv4(f, 5, 0, 0, 64, 17);
	size_t u = f->n;
	udp(f, sport, dport, 0);
	return u;
}

static struct fb
vxlan_frame(void)
{
	struct fb f = { 0 };
	size_t u = outer_udp(&f, 50000, 4789);
	put32(&f, 0x08000000ul);
	put32(&f, 0x12345600ul); /* VNI 0x123456 */
	inner_eth(&f, 0x0800);
	inner_ipv4_tcp(&f);
	fix_lengths(&f, 14, u);
	return f;
}

static void
test_vxlan(void)
{
	struct fb f = vxlan_frame();
	struct an_packet p = dec(&f);
	/* The outer columns keep their meaning: the outer UDP header. */
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.l3, AN_L3_IPV4);
	CHECK_EQ(p.l4_proto, 17);
	CHECK_EQ(p.sport, 50000);
	CHECK_EQ(p.dport, 4789);
	CHECK_EQ(p.ttl, 64);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.tunnel[0], AN_TUN_VXLAN);
	CHECK_EQ(p.have_tunnel_id, 1);
	CHECK_EQ(p.tunnel_id, 0x123456);
	check_inner_eth(&p);
	check_inner_ipv4_tcp(&p);
	/* The lower port decides, as in Wireshark: VXLAN from 4789 too. */
	struct fb r = f;
	patch16(&r, 34, 4789);
	patch16(&r, 36, 50000);
	p = dec(&r);
	CHECK_EQ(p.n_tunnel, 1);
	check_inner_ipv4_tcp(&p);
}

static void
test_geneve(void)
{
	/* Two option words, Ethernet inside, IPv6 UDP. */
	struct fb f = { 0 };
	size_t u = outer_udp(&f, 40000, 6081);
	put8(&f, 0x02); /* version 0, 2 option words */
	put8(&f, 0);
	put16(&f, 0x6558);
	put32(&f, 0x00abcd00ul);
	zeros(&f, 8);
	inner_eth(&f, 0x86dd);
	ipv6(&f, 8, 17, 9);
	udp(&f, 53, 5353, 8);
	fix_lengths(&f, 14, u);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.dport, 6081);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.tunnel[0], AN_TUN_GENEVE);
	CHECK_EQ(p.tunnel_id, 0xabcd);
	check_inner_eth(&p);
	CHECK_EQ(p.inner.status, AN_OK);
	CHECK_EQ(p.inner.l3, AN_L3_IPV6);
	CHECK_EQ(p.inner.ttl, 9);
	CHECK_EQ(p.inner.sport, 53);
	CHECK_EQ(p.inner.dport, 5353);

	/* IPv4 right after the Geneve header: no inner Ethernet. */
	struct fb g = { 0 };
	u = outer_udp(&g, 40000, 6081);
	put8(&g, 0);
	put8(&g, 0);
	put16(&g, 0x0800);
	put32(&g, 0x00000100ul);
	inner_ipv4_tcp(&g);
	fix_lengths(&g, 14, u);
	p = dec(&g);
	CHECK_EQ(p.tunnel[0], AN_TUN_GENEVE);
	CHECK_EQ(p.tunnel_id, 1);
	CHECK(!(p.inner.have & AN_HAVE_ETH));
	check_inner_ipv4_tcp(&p);

	/* Options longer than the frame: the tunnel header is cut short. */
	g.b[42] = 0x3f;
	p = dec(&g);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.inner.status, AN_ERR_TUNNEL_TRUNC);
	CHECK_EQ(p.inner.l3, AN_L3_NONE);
}

static void
gre(struct fb *f, unsigned flags, unsigned proto)
{
	eth(f, 0x0800);
	ipv4(f, 5, 0, 0, 64, 47);
	put16(f, flags);
	put16(f, proto);
	if (flags & 0x8000u)
		put32(f, 0); /* checksum, reserved */
	if (flags & 0x2000u)
		put32(f, 0xcafe0001ul); /* key */
	if (flags & 0x1000u)
		put32(f, 7); /* sequence */
}

static void
test_gre(void)
{
	struct fb f = { 0 };
	gre(&f, 0xb000, 0x0800); /* checksum, key, sequence */
	inner_ipv4_tcp(&f);
	fix_lengths(&f, 14, 0);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.l4_proto, 47);
	CHECK(!(p.have & AN_HAVE_PORTS));
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.tunnel[0], AN_TUN_GRE);
	CHECK_EQ(p.have_tunnel_id, 1);
	CHECK_EQ(p.tunnel_id, 0xcafe0001ul);
	CHECK(!(p.inner.have & AN_HAVE_ETH));
	check_inner_ipv4_tcp(&p);

	struct fb t = { 0 };
	gre(&t, 0, 0x6558); /* transparent Ethernet bridging */
	inner_eth(&t, 0x8100);
	vlan(&t, 42, 0x0800);
	inner_ipv4_tcp(&t);
	fix_lengths(&t, 14, 0);
	p = dec(&t);
	CHECK_EQ(p.have_tunnel_id, 0);
	check_inner_eth(&p);
	CHECK_EQ(p.inner.n_vlan, 1);
	CHECK_EQ(p.inner.vlan_tci[0], 42);
	check_inner_ipv4_tcp(&p);

	/* A payload that is not decoded (NHRP): l3 other. */
	struct fb n = { 0 };
	gre(&n, 0, 0x2001);
	zeros(&n, 20);
	p = dec(&n);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.inner.status, AN_OK);
	CHECK_EQ(p.inner.l3, AN_L3_OTHER);

	/* Version 1 (PPTP) is not followed. */
	struct fb v = { 0 };
	gre(&v, 0x2001, 0x880b);
	zeros(&v, 8);
	p = dec(&v);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.inner.l3, AN_L3_NONE);

	/* Key announced, frame ends inside it. */
	struct fb k = { 0 };
	gre(&k, 0x2000, 0x0800);
	k.n -= 2;
	p = dec(&k);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.inner.status, AN_ERR_TUNNEL_TRUNC);
}

static void
test_erspan(void)
{
	/* Type I: 0x88be without a sequence number, Ethernet at once. */
	struct fb a = { 0 };
	gre(&a, 0, 0x88be);
	inner_eth(&a, 0x0800);
	inner_ipv4_tcp(&a);
	struct an_packet p = dec(&a);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.tunnel[0], AN_TUN_ERSPAN);
	CHECK_EQ(p.have_tunnel_id, 0);
	check_inner_eth(&p);
	check_inner_ipv4_tcp(&p);

	/* Type II: sequence number, 8-byte header, session 0x155. */
	struct fb b = { 0 };
	gre(&b, 0x1000, 0x88be);
	put32(&b, 0x10640155ul);
	put32(&b, 0);
	inner_eth(&b, 0x0800);
	inner_ipv4_tcp(&b);
	p = dec(&b);
	CHECK_EQ(p.tunnel[0], AN_TUN_ERSPAN);
	CHECK_EQ(p.have_tunnel_id, 1);
	CHECK_EQ(p.tunnel_id, 0x155);
	check_inner_eth(&p);
	check_inner_ipv4_tcp(&p);

	/* Type III with the platform sub-header (O bit), frame type 0. */
	struct fb c = { 0 };
	gre(&c, 0x1000, 0x22eb);
	put32(&c, 0x20000003ul); /* session 3 */
	put32(&c, 0);            /* timestamp */
	put32(&c, 0x00000001ul); /* sgt 0, ft 0, O */
	zeros(&c, 8);
	inner_eth(&c, 0x0800);
	inner_ipv4_tcp(&c);
	p = dec(&c);
	CHECK_EQ(p.tunnel_id, 3);
	check_inner_eth(&p);
	check_inner_ipv4_tcp(&p);

	/* Type III, frame type 7: not Ethernet, not decoded. */
	c.b[14 + 20 + 8 + 10] = 7 << 2;
	c.b[14 + 20 + 8 + 11] = 0;
	p = dec(&c);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.inner.status, AN_OK);
	CHECK_EQ(p.inner.l3, AN_L3_NONE);
}

static void
test_gtpu(void)
{
	/* G-PDU with a sequence number and one extension header. */
	struct fb f = { 0 };
	size_t u = outer_udp(&f, 2152, 2152);
	put8(&f, 0x36); /* version 1, PT, E, S */
	put8(&f, 0xff);
	put16(&f, 0);
	put32(&f, 0xdeadbeeful);
	put16(&f, 9);   /* sequence */
	put8(&f, 0);    /* N-PDU */
	put8(&f, 0x85); /* next: PDU session container */
	put8(&f, 1);    /* 4 bytes */
	put8(&f, 0);
	put8(&f, 9);
	put8(&f, 0); /* no more */
	inner_ipv4_tcp(&f);
	fix_lengths(&f, 14, u);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.tunnel[0], AN_TUN_GTPU);
	CHECK_EQ(p.tunnel_id, 0xdeadbeeful);
	CHECK(!(p.inner.have & AN_HAVE_ETH));
	check_inner_ipv4_tcp(&p);

	/* An extension header of length 0 would loop: cut short instead. */
	struct fb z = f;
	z.b[14 + 20 + 8 + 12] = 0;
	p = dec(&z);
	CHECK_EQ(p.inner.status, AN_ERR_TUNNEL_TRUNC);

	/* Echo request: the tunnel, nothing in it. */
	struct fb e = { 0 };
	u = outer_udp(&e, 2152, 2152);
	put8(&e, 0x32);
	put8(&e, 1);
	put16(&e, 4);
	put32(&e, 0);
	put32(&e, 0);
	fix_lengths(&e, 14, u);
	p = dec(&e);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.inner.status, AN_OK);
	CHECK_EQ(p.inner.l3, AN_L3_NONE);
}

static void
test_ip_in_ip(void)
{
	/* IPv4 in IPv4. */
	struct fb f = { 0 };
	eth(&f, 0x0800);
	ipv4(&f, 5, 0, 0, 64, 4);
	inner_ipv4_tcp(&f);
	fix_lengths(&f, 14, 0);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.l4_proto, 4);
	CHECK_EQ(p.n_tunnel, 1);
	CHECK_EQ(p.tunnel[0], AN_TUN_IPIP);
	CHECK_EQ(p.have_tunnel_id, 0);
	check_inner_ipv4_tcp(&p);

	/* IPv6 in IPv6 (with a destination options header on the outer). */
	struct fb g = { 0 };
	eth(&g, 0x86dd);
	ipv6(&g, 8 + 40 + 8, 60, 64);
	put8(&g, 41);
	put8(&g, 0);
	zeros(&g, 6);
	ipv6(&g, 8, 17, 7);
	udp(&g, 1, 2, 8);
	p = dec(&g);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.l4_proto, 41);
	CHECK_EQ(p.tunnel[0], AN_TUN_IPIP);
	CHECK_EQ(p.inner.l3, AN_L3_IPV6);
	CHECK_EQ(p.inner.ttl, 7);
	CHECK_EQ(p.inner.sport, 1);
	CHECK_EQ(p.inner.dport, 2);

	/* IPv6 in IPv4 and IPv4 in IPv6. */
	struct fb h = { 0 };
	eth(&h, 0x0800);
	ipv4(&h, 5, 0, 0, 64, 41);
	ipv6(&h, 8, 17, 7);
	udp(&h, 1, 2, 8);
	fix_lengths(&h, 14, 0);
	p = dec(&h);
	CHECK_EQ(p.inner.l3, AN_L3_IPV6);
	CHECK_EQ(p.inner.dport, 2);
	struct fb k = { 0 };
	eth(&k, 0x86dd);
	ipv6(&k, 40, 4, 64);
	inner_ipv4_tcp(&k);
	p = dec(&k);
	check_inner_ipv4_tcp(&p);

	/* A later fragment of the outer header carries no inner header. */
	struct fb l = f;
	patch16(&l, 14 + 6, 0x0010);
	p = dec(&l);
	CHECK_EQ(p.n_tunnel, 0);
}

static void
test_nesting(void)
{
	/* GRE carrying IPv4/UDP/VXLAN: both tunnels, the innermost headers. */
	struct fb f = { 0 };
	gre(&f, 0x2000, 0x0800);
	size_t ip = f.n;
	ipv4(&f, 5, 0, 0, 5, 17);
	size_t u = f.n;
	udp(&f, 1000, 4789, 0);
	put32(&f, 0x08000000ul);
	put32(&f, 0x00000700ul);
	inner_eth(&f, 0x0800);
	inner_ipv4_tcp(&f);
	fix_lengths(&f, ip, u);
	fix_lengths(&f, 14, 0);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.n_tunnel, 2);
	CHECK_EQ(p.tunnel[0], AN_TUN_GRE);
	CHECK_EQ(p.tunnel[1], AN_TUN_VXLAN);
	CHECK_EQ(p.tunnel_id, 7);
	check_inner_eth(&p);
	check_inner_ipv4_tcp(&p);

	/* IPv4 in IPv4 six deep: four tunnels are followed, then the limit. */
	struct fb d = { 0 };
	eth(&d, 0x0800);
	for (int i = 0; i < 6; i++)
		ipv4(&d, 5, 0, 0, 64, 4);
	inner_ipv4_tcp(&d);
	p = dec(&d);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.n_tunnel, AN_MAX_TUNNEL);
	CHECK_EQ(p.inner.status, AN_ERR_TUNNEL_DEPTH);
	CHECK_EQ(p.inner.l3, AN_L3_IPV4);
	CHECK_EQ(p.inner.l4_proto, 4);
}

/* A tunnel frame cut at every length: no overread (ASan), the outer checks
 * of truncate_everywhere, and every inner field reported valid equal to the
 * full decode's; inner ok only with every byte there. */
static void
truncate_tunnel(const struct fb *full, size_t outer_end, const char *what)
{
	truncate_everywhere(full, outer_end, what);
	struct an_packet whole = dec(full);
	CHECK_EQ(whole.inner.status, AN_OK);
	for (size_t len = 0; len <= full->n; len++) {
		struct fb cut = *full;
		cut.n = len;
		struct an_packet p = dec(&cut);
		if (len < full->n && p.n_tunnel > 0 && p.inner.status == AN_OK) {
			fprintf(stderr, "%s cut at %zu: inner status ok\n", what, len);
			failures++;
		}
		if (p.n_tunnel == 0)
			continue;
		CHECK_EQ(p.tunnel[0], whole.tunnel[0]);
		if (p.have_tunnel_id)
			CHECK_EQ(p.tunnel_id, whole.tunnel_id);
		if (p.inner.have & AN_HAVE_ETH)
			CHECK(memcmp(p.inner.mac_src, whole.inner.mac_src, 6) == 0);
		if (p.inner.have & AN_HAVE_IP) {
			CHECK_EQ(p.inner.ttl, whole.inner.ttl);
			CHECK(memcmp(p.inner.src, whole.inner.src, 16) == 0);
		}
		if (p.inner.have & AN_HAVE_PORTS) {
			CHECK(len >= whole.inner.l4_off + 4u);
			CHECK_EQ(p.inner.sport, whole.inner.sport);
			CHECK_EQ(p.inner.dport, whole.inner.dport);
		}
	}
}

static void
test_tunnel_truncation(void)
{
	struct fb v = vxlan_frame();
	truncate_tunnel(&v, 14 + 20 + 8, "vxlan");
	struct fb g = { 0 };
	gre(&g, 0xb000, 0x0800);
	inner_ipv4_tcp(&g);
	fix_lengths(&g, 14, 0);
	truncate_tunnel(&g, 14 + 20, "gre");
}

int
main(void)
{
	test_ipv4_tcp();
	test_vlan_udp();
	test_qinq_ipv6_tcp();
	test_too_many_tags();
	test_ipv4_options_and_padding();
	test_ipv4_fragments();
	test_ipv4_malformed();
	test_ipv6_ext_headers();
	test_icmp();
	test_other_ethertype();
	test_truncation();
	test_vxlan();
	test_geneve();
	test_gre();
	test_erspan();
	test_gtpu();
	test_ip_in_ip();
	test_nesting();
	test_tunnel_truncation();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	puts("analyzer decode: all checks passed");
	return 0;
}
