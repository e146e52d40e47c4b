/* Unit tests of the analyzer decoder on crafted frames: each header kind,
 * malformed fields, and truncation at every byte offset (each truncated copy
 * lives in a heap block of exactly its length, so an ASan build reports any
 * read past the end). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

#include "frame_build.h"

static struct an_packet dec(const struct fb *f)
{
	/* Exact-size heap copy: ASan sees any overread. */
	uint8_t *copy = malloc(f->n ? f->n : 1);
	memcpy(copy, f->b, f->n);
	struct an_packet p;
	an_decode(copy, f->n, &p);
	free(copy);
	return p;
}

static void test_ipv4_tcp(void)
{
	struct fb f = {0};
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
	CHECK_EQ(p.have, AN_HAVE_ETH | AN_HAVE_IP | AN_HAVE_L4PROTO |
				 AN_HAVE_PORTS);
	CHECK_EQ(p.flags, 0);
	CHECK_EQ(p.l3_off, 14);
	CHECK_EQ(p.l4_off, 34);
	CHECK(memcmp(p.src, "\xc0\xa8\x00\x01", 4) == 0);
	CHECK(memcmp(p.dst, "\x0a\x00\x00\x02", 4) == 0);
}

static void test_vlan_udp(void)
{
	struct fb f = {0};
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

static void test_qinq_ipv6_tcp(void)
{
	static const unsigned outer[] = {0x88a8, 0x9100, 0x8100};
	for (unsigned i = 0; i < 3; i++) {
		struct fb f = {0};
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

static void test_too_many_tags(void)
{
	struct fb f = {0};
	eth(&f, 0x88a8);
	vlan(&f, 1, 0x8100);
	vlan(&f, 2, 0x8100);
	vlan(&f, 3, 0x0800);
	ipv4(&f, 5, 20, 0, 1, 6);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_ERR_VLAN_DEPTH);
	CHECK_EQ(p.have, AN_HAVE_ETH);
}

static void test_ipv4_options_and_padding(void)
{
	/* IHL 7 (8 bytes of options), UDP, padded to 60 bytes on the wire:
	 * the padding is not UDP payload. */
	struct fb f = {0};
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
	struct fb g = {0};
	eth(&g, 0x0800);
	ipv4(&g, 5, 24, 0, 3, 17);
	udp(&g, 7, 9, 8);
	zeros(&g, 60 - g.n);
	p = dec(&g);
	CHECK_EQ(p.status, AN_ERR_UDP_TRUNC);
	CHECK(p.have & AN_HAVE_PORTS);
	CHECK_EQ(p.sport, 7);
}

static void test_ipv4_fragments(void)
{
	struct fb f = {0};
	eth(&f, 0x0800);
	ipv4(&f, 5, 1500, 0x2000 /* MF, offset 0 */, 64, 6);
	tcp(&f, 1000, 2000, 5);
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK(p.flags & AN_FLAG_FRAGMENT);
	CHECK(!(p.flags & AN_FLAG_LATER_FRAG));
	CHECK(p.have & AN_HAVE_PORTS);
	CHECK_EQ(p.sport, 1000);

	struct fb g = {0};
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

static void test_ipv4_malformed(void)
{
	struct fb f = {0};
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
static struct fb ipv6_ext_chain_tcp(void)
{
	struct fb f = {0};
	eth(&f, 0x86dd);
	ipv6(&f, 8 + 24 + 8 + 16 + 8 + 24, 0 /* hop-by-hop */, 7);
	put8(&f, 43); put8(&f, 0); zeros(&f, 6);            /* HBH, 8 B */
	put8(&f, 60); put8(&f, 2); put8(&f, 0); put8(&f, 1); /* routing, 24 B */
	zeros(&f, 20);
	put8(&f, 51); put8(&f, 0); zeros(&f, 6);            /* dest opts, 8 B */
	put8(&f, 44); put8(&f, 2); zeros(&f, 14);           /* AH, (2+2)*4 = 16 B */
	put8(&f, 6); put8(&f, 0); put16(&f, 0x0001);        /* fragment, first, MF */
	put32(&f, 77);
	tcp(&f, 8080, 22, 6);                               /* with 4 B options */
	return f;
}

static void test_ipv6_ext_headers(void)
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
	struct fb g = {0};
	eth(&g, 0x86dd);
	ipv6(&g, 8 + 8, 44, 9);
	put8(&g, 17); put8(&g, 0); put16(&g, 0x0100); put32(&g, 5);
	udp(&g, 1, 2, 8);
	p = dec(&g);
	CHECK_EQ(p.status, AN_OK);
	CHECK(p.flags & AN_FLAG_LATER_FRAG);
	CHECK_EQ(p.l4_proto, 17);
	CHECK(!(p.have & AN_HAVE_PORTS));

	/* ESP and no-next-header end the walk. */
	static const unsigned stop[] = {50, 59};
	for (unsigned i = 0; i < 2; i++) {
		struct fb h = {0};
		eth(&h, 0x86dd);
		ipv6(&h, 8 + 16, 60, 1);
		put8(&h, stop[i]); put8(&h, 0); zeros(&h, 6);
		zeros(&h, 16);
		p = dec(&h);
		CHECK_EQ(p.status, AN_OK);
		CHECK_EQ(p.l4_proto, stop[i]);
		CHECK_EQ(p.l4_off, 14 + 48);
		CHECK(!(p.have & AN_HAVE_PORTS));
	}

	/* An endless chain of destination options is cut off. */
	struct fb e = {0};
	eth(&e, 0x86dd);
	ipv6(&e, 8 * (AN_MAX_IPV6_EXT + 1), 60, 1);
	for (unsigned i = 0; i <= AN_MAX_IPV6_EXT; i++) {
		put8(&e, 60); put8(&e, 0); zeros(&e, 6);
	}
	CHECK_EQ(dec(&e).status, AN_ERR_IPV6_EXT_DEPTH);

	struct fb v = f;
	v.b[14] = 0x40; /* version 4 in an IPv6 EtherType */
	CHECK_EQ(dec(&v).status, AN_ERR_IPV6_VERSION);
}

static void test_icmp(void)
{
	struct fb f = {0};
	eth(&f, 0x0800);
	ipv4(&f, 5, 28, 0, 64, 1);
	put8(&f, 8); put8(&f, 0); zeros(&f, 6); /* echo request */
	struct an_packet p = dec(&f);
	CHECK_EQ(p.status, AN_OK);
	CHECK(p.have & AN_HAVE_ICMP);
	CHECK_EQ(p.icmp_type, 8);
	CHECK(!(p.have & AN_HAVE_PORTS));

	struct fb g = {0};
	eth(&g, 0x86dd);
	ipv6(&g, 8, 58, 255);
	put8(&g, 135); put8(&g, 0); zeros(&g, 6); /* neighbour solicitation */
	p = dec(&g);
	CHECK_EQ(p.status, AN_OK);
	CHECK_EQ(p.l4_proto, 58);
	CHECK_EQ(p.icmp_type, 135);

	g.n = 14 + 40 + 1;
	CHECK_EQ(dec(&g).status, AN_ERR_ICMP_TRUNC);
}

static void test_other_ethertype(void)
{
	struct fb f = {0};
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
static void truncate_everywhere(const struct fb *full, size_t hdr_end,
				const char *what)
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
		} else {
			CHECK(len < whole.l4_off + 4u);
		}
	}
}

static void test_truncation(void)
{
	struct fb v6 = ipv6_ext_chain_tcp();
	truncate_everywhere(&v6, v6.n, "ipv6+ext+tcp");

	struct fb v4 = {0};
	eth(&v4, 0x8100);
	vlan(&v4, 5, 0x0800);
	ipv4(&v4, 6, 24 + 28, 0, 64, 6);
	tcp(&v4, 99, 100, 7);
	truncate_everywhere(&v4, v4.n, "vlan+ipv4opts+tcp");

	struct fb u = {0};
	eth(&u, 0x88a8);
	vlan(&u, 1, 0x8100);
	vlan(&u, 2, 0x86dd);
	ipv6(&u, 8, 17, 64);
	udp(&u, 5, 6, 8);
	truncate_everywhere(&u, u.n, "qinq+ipv6+udp");
}

int main(void)
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
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	puts("analyzer decode: all checks passed");
	return 0;
}
