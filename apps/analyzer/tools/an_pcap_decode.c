/* an-pcap-decode: run the analyzer's decoder over a capture file and print
 * one record per frame, prefixed with the 1-based frame number (the number
 * tshark gives it).  The bridge between the decoder and independent decoders
 * in the tests; also counts frames a BPF filter matches (--filter).
 *
 * Exit: 0 all frames read; 2 usage or cannot open; 3 not an Ethernet
 * capture; 4 the file broke off mid-way (frames before it were printed). */
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "log_record.h"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: an-pcap-decode [--format csv|jsonl] [--filter EXPR] "
		"[--count] FILE\n"
		"  Decode every frame of an Ethernet capture (pcap or pcapng)\n"
		"  with the analyzer's decoder and print one line per frame:\n"
		"  the frame number, then the analyzer's log record.\n"
		"  --filter EXPR  only frames matching the BPF expression (libpcap)\n"
		"  --count        print only the number of frames printed\n");
}

int
main(int argc, char **argv)
{
	enum an_log_format fmt = AN_LOG_CSV;
	const char *filter = NULL;
	int count_only = 0;
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "filter", required_argument, NULL, 'F' },
		{ "count", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "csv") == 0)
				fmt = AN_LOG_CSV;
			else if (strcmp(optarg, "jsonl") == 0)
				fmt = AN_LOG_JSONL;
			else {
				fprintf(stderr,
					"an-pcap-decode: --format '%s': "
					"expected csv or jsonl\n",
					optarg);
				return 2;
			}
			break;
		case 'F':
			filter = optarg;
			break;
		case 'c':
			count_only = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	const char *path = argv[optind];
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	if (pc == NULL) {
		fprintf(stderr, "an-pcap-decode: %s: %s\n", path, err);
		return 2;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		fprintf(stderr,
			"an-pcap-decode: %s: link type %s (%d), not "
			"Ethernet\n",
			path, pcap_datalink_val_to_name(pcap_datalink(pc)), pcap_datalink(pc));
		pcap_close(pc);
		return 3;
	}
	struct bpf_program prog;
	if (filter != NULL && pcap_compile(pc, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		fprintf(stderr, "an-pcap-decode: --filter '%s': %s\n", filter, pcap_geterr(pc));
		pcap_close(pc);
		return 2;
	}
	if (!count_only && fmt == AN_LOG_CSV)
		printf("frame,%s", an_log_header(fmt));

	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned long frame = 0, printed = 0;
	int rc;
	char line[AN_LOG_LINE_MAX];
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		frame++;
		if (filter != NULL && !pcap_offline_filter(&prog, h, data))
			continue;
		printed++;
		if (count_only)
			continue;
		struct an_log_record r = {
			.ts_ns = (uint64_t)h->ts.tv_sec * 1000000000u +
				(uint64_t)h->ts.tv_usec * 1000u,
			.wire_len = h->len,
			.cap_len = h->caplen,
		};
		an_decode(data, h->caplen, &r.pkt);
		size_t n = an_log_format_line(fmt, &r, line, sizeof(line));
		if (fmt == AN_LOG_CSV)
			printf("%lu,%.*s", frame, (int)n, line);
		else /* frame number as the first JSON member */
			printf("{\"frame\":%lu,%.*s", frame, (int)n - 1, line + 1);
	}
	if (count_only)
		printf("%lu\n", printed);
	int status = 0;
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "an-pcap-decode: %s: after frame %lu: %s\n", path, frame,
			pcap_geterr(pc));
		status = 4;
	}
	if (filter != NULL)
		pcap_freecode(&prog);
	pcap_close(pc);
	return status;
}
