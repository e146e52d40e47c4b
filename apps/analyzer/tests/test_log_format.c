/* Unit tests of the analyzer's record text: exact CSV and JSON lines, empty
 * fields for what was not decoded, and IPv6 text equal to inet_ntop's. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "decode.h"
#include "log_record.h"

#include "frame_build.h"

static void
test_format(void)
{
	struct fb f = { 0 };
	eth(&f, 0x8100);
	vlan(&f, 100, 0x0800);
	ipv4(&f, 5, 40, 0, 64, 6);
	tcp(&f, 12345, 80, 5);
	struct an_log_record r = {
		.ts_ns = 1500000000123456789ull, .wire_len = 58, .cap_len = 58, .instance = 3
	};
	an_decode(f.b, f.n, &r.pkt);
	char line[AN_LOG_LINE_MAX];
	size_t n = an_log_format_line(AN_LOG_CSV, &r, line, sizeof(line));
	const char *csv = "1500000000123456789,3,58,58,ok,66:77:88:99:aa:bb,"
			  "00:11:22:33:44:55,100,0x0800,ipv4,64,6,192.168.0.1,"
			  "10.0.0.2,12345,80,,,no,,,,,,,,,,,,,,,,,\n";
	CHECK_EQ(n, strlen(csv));
	CHECK(strcmp(line, csv) == 0);
	n = an_log_format_line(AN_LOG_JSONL, &r, line, sizeof(line));
	const char *js = "{\"ts_ns\":1500000000123456789,\"instance\":3,\"wire_len\":58,"
			 "\"cap_len\":58,\"status\":\"ok\",\"mac_src\":\"66:77:88:99:aa:bb\","
			 "\"mac_dst\":\"00:11:22:33:44:55\",\"vlan\":\"100\","
			 "\"ethertype\":\"0x0800\",\"l3\":\"ipv4\",\"ttl\":64,\"l4_proto\":6,"
			 "\"src\":\"192.168.0.1\",\"dst\":\"10.0.0.2\",\"sport\":12345,"
			 "\"dport\":80,\"icmp_type\":null,\"icmp_code\":null,"
			 "\"fragment\":\"no\",\"tunnel\":null,\"tunnel_id\":null,"
			 "\"inner_status\":null,\"inner_mac_src\":null,"
			 "\"inner_mac_dst\":null,\"inner_vlan\":null,"
			 "\"inner_ethertype\":null,\"inner_l3\":null,\"inner_ttl\":null,"
			 "\"inner_l4_proto\":null,\"inner_src\":null,\"inner_dst\":null,"
			 "\"inner_sport\":null,\"inner_dport\":null,"
			 "\"inner_icmp_type\":null,\"inner_icmp_code\":null,"
			 "\"inner_fragment\":null}\n";
	CHECK_EQ(n, strlen(js));
	CHECK(strcmp(line, js) == 0);
	/* Too small a buffer is refused, not overrun. */
	CHECK_EQ(an_log_format_line(AN_LOG_CSV, &r, line, 20), 0);
	/* A truncated Ethernet frame: empty fields. */
	an_decode(f.b, 10, &r.pkt);
	n = an_log_format_line(AN_LOG_CSV, &r, line, sizeof(line));
	CHECK(strcmp(line,
		      "1500000000123456789,3,58,58,eth_truncated,,,,,none,"
		      ",,,,,,,,no,,,,,,,,,,,,,,,,,\n") == 0);

	/* VXLAN: the outer columns as before, then the tunnel and the
	 * inner Ethernet, IPv4 and UDP. */
	struct fb v = { 0 };
	eth(&v, 0x0800);
	ipv4(&v, 5, 0, 0, 64, 17);
	udp(&v, 50000, 4789, 0);
	put32(&v, 0x08000000ul);
	put32(&v, 0x00002a00ul); /* VNI 42 */
	eth(&v, 0x8100);
	vlan(&v, 7, 0x0800);
	ipv4(&v, 5, 28, 0x2000 /* MF */, 3, 17);
	udp(&v, 53, 1053, 8);
	r.wire_len = r.cap_len = (uint32_t)v.n;
	an_decode(v.b, v.n, &r.pkt);
	n = an_log_format_line(AN_LOG_CSV, &r, line, sizeof(line));
	const char *vx = "1500000000123456789,3,96,96,ok,66:77:88:99:aa:bb,"
			 "00:11:22:33:44:55,,0x0800,ipv4,64,17,192.168.0.1,"
			 "10.0.0.2,50000,4789,,,no,vxlan,42,ok,"
			 "66:77:88:99:aa:bb,00:11:22:33:44:55,7,0x0800,ipv4,3,17,"
			 "192.168.0.1,10.0.0.2,53,1053,,,first\n";
	CHECK_EQ(n, strlen(vx));
	CHECK(strcmp(line, vx) == 0);
	if (strcmp(line, vx) != 0)
		fprintf(stderr, "got  %s", line);
	/* The header names every column of the line. */
	const char *hdr = an_log_header(AN_LOG_CSV);
	size_t hc = 0, lc = 0;
	for (const char *c = hdr; *c; c++)
		hc += *c == ',';
	for (const char *c = line; *c; c++)
		lc += *c == ',';
	CHECK_EQ(hc, lc);
}

/* The src column of the CSV line for an IPv6 record with address a. */
static void
ipv6_text(const uint8_t a[16], char *out, size_t len)
{
	struct an_log_record r;
	memset(&r, 0, sizeof(r));
	r.pkt.have = AN_HAVE_ETH | AN_HAVE_IP;
	r.pkt.l3 = AN_L3_IPV6;
	memcpy(r.pkt.src, a, 16);
	char line[AN_LOG_LINE_MAX];
	an_log_format_line(AN_LOG_CSV, &r, line, sizeof(line));
	/* src is the 13th column */
	const char *c = line;
	for (int i = 0; i < 12; i++)
		c = strchr(c, ',') + 1;
	size_t n = (size_t)(strchr(c, ',') - c);
	snprintf(out, len, "%.*s", (int)n, c);
}

static void
test_ipv6_text(void)
{
	static const uint8_t fixed[][16] = {
		{ 0 }, { [15] = 1 }, { [10] = 0xff, [11] = 0xff, 192, 0, 2, 1 }, /* v4-mapped */
		{ [12] = 1, 2, 3, 4 },                                           /* v4-compatible */
		{ 0x20, 0x01, 0x0d, 0xb8, [15] = 1 },
		{ 0x20, 0x01, [4] = 0, 0, [8] = 0, 0, 0, 1 }, /* equal zero runs */
		{ 0xfe, 0x80, [8] = 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55 },
		{ 0xff, 0x02, [15] = 0x0c }, { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
		{ 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0 }, /* single zero groups */
	};
	char ours[64], ref[INET6_ADDRSTRLEN];
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		ipv6_text(fixed[i], ours, sizeof(ours));
		inet_ntop(AF_INET6, fixed[i], ref, sizeof(ref));
		if (strcmp(ours, ref) != 0) {
			fprintf(stderr, "ipv6 text %s, inet_ntop %s\n", ours, ref);
			failures++;
		}
	}
	/* Random addresses whose groups are mostly zero: every run shape. */
	srand(7);
	for (int k = 0; k < 20000; k++) {
		uint8_t a[16];
		for (int g = 0; g < 8; g++) {
			unsigned v = rand() % 3 == 0 ? (unsigned)rand() & 0xffff : 0;
			a[2 * g] = (uint8_t)(v >> 8);
			a[2 * g + 1] = (uint8_t)v;
		}
		ipv6_text(a, ours, sizeof(ours));
		inet_ntop(AF_INET6, a, ref, sizeof(ref));
		if (strcmp(ours, ref) != 0) {
			fprintf(stderr, "ipv6 text %s, inet_ntop %s\n", ours, ref);
			failures++;
			break;
		}
	}
}

int
main(void)
{
	test_format();
	test_ipv6_text();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	puts("analyzer log format: all checks passed");
	return 0;
}
