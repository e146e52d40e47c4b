/* pp-tgen's command line (after the EAL's "--") and its usage text. */
#include "tg_cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_keys.h"
#include "tg_profile.h"

static const char usage[] =
	"usage: pp-tgen [EAL options] -- [options]\n"
	"\n"
	"Generates IPv4/IPv6 UDP/TCP traffic (802.1Q, QinQ) or replays pcaps on DPDK\n"
	"ports, receives it\n"
	"back and measures loss, reordering, duplicates and latency; finds the RFC 2544\n"
	"throughput; or acts as a delay line.  Every profile key is also a flag:\n"
	"key foo_bar is --foo-bar VALUE.  Stream flags apply to every stream of the\n"
	"profile (or define the only stream when no profile is given).\n"
	"\n"
	"General:\n"
	"  --profile FILE        JSON profile: {global keys..., \"streams\": [{stream keys}]},\n"
	"                        or the same in YAML (FILE ending in .yaml or .yml)\n"
	"  --mode gen|rfc2544|delay   (default gen)\n"
	"  --tx-port N|none      port to transmit on (default 0)\n"
	"  --rx-port N|none      port to receive and measure on (default none)\n"
	"  --tx-queues N         TX queues per stream, spread over the worker lcores\n"
	"                        (default 1)\n"
	"  --rx-queues N         RX queues (default 1)\n"
	"  --duration S          seconds to transmit (0 = until --packets or Ctrl-C)\n"
	"  --packets N           packets per stream (0 = unlimited)\n"
	"  --link-gbps G         link speed for % rates (default: the port's reported\n"
	"                        speed for physical ports, 10 for virtual ones)\n"
	"  --drain S             seconds to keep receiving after TX stops, and then\n"
	"                        until nothing arrived for 0.1 s (at most 5 s more)\n"
	"                        (default 0.2)\n"
	"  --link-wait S         wait this long for links to come up (default 10)\n"
	"  --start-after S       then wait this long before the first packet, so that\n"
	"                        a peer that just connected is polling (default 0)\n"
	"  --peer-wait S         at the end, stop polling and keep the ports open until\n"
	"                        every link is down (the peer left) or S seconds passed\n"
	"                        (default 0): with net_memif, the side that finishes\n"
	"                        first must not leave while its peer still polls; a\n"
	"                        first SIGINT/SIGTERM ends the sending and keeps this\n"
	"                        wait, a second one ends the wait too\n"
	"  --stats FILE          final statistics JSON (default: stdout)\n"
	"  --live                one line of statistics per second on stderr (default\n"
	"                        when stderr is a terminal)\n"
	"  --tx-retry            retry when the TX queue is full (back-pressure) instead\n"
	"                        of dropping and counting the packet as link_full\n"
	"  --mbufs N             mbufs per TX queue pool (default 4095)\n"
	"  --attach [NETNS/]IFACE  a kernel interface (a veth end) as the next port,\n"
	"                        after the EAL's: net_af_xdp, or net_af_packet where\n"
	"                        the kernel refuses XDP; NETNS: an `ip netns` name\n"
	"                        (repeat: up to 8; each line on stderr and the JSON\n"
	"                        say which driver each got)\n"
	"  --attach-mode M       auto (default), af_xdp (or fail), af_packet\n"
	"\n"
	"Stream (template) keys:\n"
	"  --dst-mac --src-mac --src-ip --dst-ip --sport --dport --ttl --proto FIELD\n"
	"      FIELD: VALUE | MIN-MAX (incrementing) | MIN-MAX/inc | MIN-MAX/random | random\n"
	"      proto: udp, tcp or 0-255 (one stream may not mix tcp with others)\n"
	"      src/dst-ip: IPv4, or IPv6 (both; a range varies the low 64 bits)\n"
	"  --vlan FIELD          an 802.1Q tag with this VLAN id (0-4095)\n"
	"  --svlan FIELD         QinQ: an 802.1ad outer tag (0x88a8) around --vlan's\n"
	"  --size S              frame size incl. FCS (64..1518), 'imix' (64:7,570:4,1518:1)\n"
	"                        or SIZE:WEIGHT,... (default 64)\n"
	"  --rate R              pps (100000, 250k, 1.5M), PERCENT% of the link, or max\n"
	"                        (% counts 20 bytes of preamble+IFG per frame)\n"
	"  --flows N             cycle over N precomputed flows (random fields drawn once\n"
	"                        per flow); 0 = fields advance every packet (default)\n"
	"  --payload BYTES       bytes after the signature (\\xNN escapes); repeat to append\n"
	"  --fill N              byte filling the rest of the payload (default 0)\n"
	"  --signature BOOL      sequence/timestamp signature (default true)\n"
	"  --no-signature        same as --signature false\n"
	"  --name NAME           stream name in the statistics\n"
	"  --pcap FILE           replay this pcap/pcapng instead of a template\n"
	"  --loops N             pcap passes (0 = until duration/packets)\n"
	"  --pcap-timing T       none (default: full speed or --rate), original (the\n"
	"                        capture's own gaps) or a speed factor F (gaps divided\n"
	"                        by F: 2 = twice as fast); the JSON reports each\n"
	"                        stream's gap error and lateness percentiles (measured\n"
	"                        at the handoff to the port)\n"
	"\n"
	"RFC 2544 throughput (--mode rfc2544; needs --rx-port):\n"
	"  --frame-sizes LIST    default 64,128,256,512,1024,1280,1518\n"
	"  --trial S             trial duration (default 10; RFC 2544 asks 60)\n"
	"  --resolution PCT      search stops when the pass/fail interval is this % of\n"
	"                        the upper bound (the link rate, or --rate) (0.1)\n"
	"  --loss-tolerance PCT  highest loss a passing trial may have (default 0)\n"
	"\n"
	"Delay line (--mode delay): receive on --rx-port, hold each packet --delay-us\n"
	"microseconds, send on --out-port (default the same port); --capacity-pps drops\n"
	"what exceeds a rate (a device under test of known capacity), with a token\n"
	"bucket --capacity-burst packets deep (default 32).\n"
	"\n"
	"Every figure printed is measured on this run and labelled so.\n";

/* Whether KEY names an option (a global or a stream key), tried on a copy
 * so that nothing in c changes: an unknown flag at the end of the command
 * line is then called unknown, not short of a value. */
static bool
known_key(const struct tg_cfg *c, const char *key)
{
	char err[256];
	struct tg_cfg *scratch = malloc(sizeof(*scratch));
	if (scratch == NULL)
		return true;
	memcpy(scratch, c, sizeof(*scratch));
	bool known = tg_set_global_key(scratch, key, "", err, sizeof(err)) != 0 ||
		tg_set_stream_key(&scratch->stream[0], key, "", err, sizeof(err)) != 0;
	free(scratch);
	return known;
}

int
tg_cli_parse(struct tg_cfg *c, int argc, char **argv)
{
	char key[64], err[256];
	int first_stream_flag = 1;

	/* The profile first, so that flags override it wherever they appear. */
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 1;
		}
		if (!strcmp(argv[i], "--profile")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "pp-tgen: --profile needs a file\n");
				return -1;
			}
			if (tg_profile_load(c, argv[i + 1]))
				return -1;
		}
	}
	if (c->n_streams == 0) {
		c->n_streams = 1;
		tg_stream_defaults(&c->stream[0], 0);
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *val;
		int r = 0;
		size_t k;

		if (strncmp(a, "--", 2) || strlen(a) - 2 >= sizeof(key)) {
			fprintf(stderr, "pp-tgen: unexpected argument '%s' (see --help)\n", a);
			return -1;
		}
		if (!strcmp(a, "--profile")) {
			i++;
			continue;
		}
		for (k = 0; a[k + 2]; k++)
			key[k] = a[k + 2] == '-' ? '_' : a[k + 2];
		key[k] = '\0';
		if (!strcmp(key, "live") || !strcmp(key, "tx_retry")) {
			val = "true";
		} else if (!strcmp(key, "no_signature")) {
			strcpy(key, "signature");
			val = "false";
		} else {
			if (i + 1 >= argc) {
				fprintf(stderr,
					known_key(c, key)
						? "pp-tgen: %s needs a value (see --help)\n"
						: "pp-tgen: unknown option '%s' (see --help)\n",
					a);
				return -1;
			}
			val = argv[++i];
		}
		r = tg_set_global_key(c, key, val, err, sizeof(err));
		if (r == 0) {
			for (unsigned s = 0; s < c->n_streams; s++) {
				/* A repeated --payload appends; the first one replaces the profile's. */
				if (!strcmp(key, "payload") && first_stream_flag)
					c->stream[s].payload_len = 0;
				r = tg_set_stream_key(&c->stream[s], key, val, err, sizeof(err));
				if (r <= 0)
					break;
			}
			if (!strcmp(key, "payload"))
				first_stream_flag = 0;
		}
		if (r == 0) {
			fprintf(stderr, "pp-tgen: unknown option '%s' (see --help)\n", a);
			return -1;
		}
		if (r < 0) {
			fprintf(stderr, "pp-tgen: %s: %s\n", a, err);
			return -1;
		}
	}
	return 0;
}
