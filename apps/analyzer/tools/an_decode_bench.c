/* an-decode-bench: the analyzer's per-packet work without the pipeline, for
 * bench/apps-analyzer.py: decode (+ BPF filter) and record formatting over the
 * frames of a capture, many passes, the fastest pass reported.  The fastest
 * pass is the one least disturbed by other processes, so this figure stays
 * meaningful on a shared machine where the through-the-app figures do not.
 *
 * usage: an-decode-bench [--filter EXPR] [--passes N] FILE
 * prints one JSON object (measured). */
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode.h"
#include "filter.h"
#include "log_record.h"

struct frame {
	const uint8_t *data;
	uint32_t caplen, len;
};

static double
now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int
main(int argc, char **argv)
{
	const char *expr = NULL;
	unsigned passes = 20;
	static const struct option opts[] = {
		{ "filter", required_argument, NULL, 'f' },
		{ "passes", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'f') {
			expr = optarg;
		} else if (c == 'p') {
			passes = (unsigned)strtoul(optarg, NULL, 10);
			if (passes == 0) {
				fprintf(stderr,
					"an-decode-bench: --passes '%s': "
					"expected a positive integer\n",
					optarg);
				return 2;
			}
		} else {
			fprintf(stderr,
				"usage: an-decode-bench [--filter EXPR] "
				"[--passes N] FILE\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr,
			"usage: an-decode-bench [--filter EXPR] "
			"[--passes N] FILE\n");
		return 2;
	}
	char err[PCAP_ERRBUF_SIZE + 64];
	pcap_t *pc = pcap_open_offline(argv[optind], err);
	if (pc == NULL) {
		fprintf(stderr, "an-decode-bench: %s: %s\n", argv[optind], err);
		return 2;
	}
	struct bpf_program prog;
	if (expr != NULL && an_filter_compile(expr, &prog, err, sizeof(err)) != 0) {
		fprintf(stderr, "an-decode-bench: --filter '%s': %s\n", expr, err);
		return 2;
	}
	size_t n = 0, cap = 1024;
	struct frame *f = malloc(cap * sizeof(*f));
	struct pcap_pkthdr *h;
	const u_char *d;
	while (pcap_next_ex(pc, &h, &d) == 1) {
		if (n == cap)
			f = realloc(f, (cap *= 2) * sizeof(*f));
		uint8_t *copy = malloc(h->caplen ? h->caplen : 1);
		memcpy(copy, d, h->caplen);
		f[n++] = (struct frame){ copy, h->caplen, h->len };
	}
	pcap_close(pc);
	if (n == 0) {
		fprintf(stderr, "an-decode-bench: %s: no frames\n", argv[optind]);
		return 2;
	}
	struct an_log_record *recs = calloc(n, sizeof(*recs));
	double best_dec = 1e300, best_fmt = 1e300;
	unsigned long passed = 0;
	char line[AN_LOG_LINE_MAX];
	size_t bytes = 0;
	for (unsigned p = 0; p < passes; p++) {
		double t0 = now_ns();
		passed = 0;
		for (size_t i = 0; i < n; i++) {
			an_decode(f[i].data, f[i].caplen, &recs[i].pkt);
			if (expr == NULL ||
				bpf_filter(prog.bf_insns, f[i].data, f[i].len, f[i].caplen))
				passed++;
		}
		double t1 = now_ns();
		for (size_t i = 0; i < n; i++)
			bytes += an_log_format_line(AN_LOG_CSV, &recs[i], line, sizeof(line));
		double t2 = now_ns();
		if (t1 - t0 < best_dec)
			best_dec = t1 - t0;
		if (t2 - t1 < best_fmt)
			best_fmt = t2 - t1;
	}
	printf("{\"kind\": \"measured\", \"frames\": %zu, \"passes\": %u, "
	       "\"filter\": %s%s%s, \"filter_passed\": %lu, "
	       "\"decode_ns_per_packet\": %.2f, \"decode_mpps\": %.3f, "
	       "\"csv_format_ns_per_record\": %.2f, \"csv_records_per_s\": %.0f, "
	       "\"csv_bytes\": %zu}\n",
		n, passes, expr ? "\"" : "", expr ? expr : "null", expr ? "\"" : "", passed,
		best_dec / (double)n, (double)n / best_dec * 1e3, best_fmt / (double)n,
		(double)n / best_fmt * 1e9, bytes);
	if (expr != NULL)
		pcap_freecode(&prog);
	for (size_t i = 0; i < n; i++)
		free((void *)f[i].data);
	free(f);
	free(recs);
	return 0;
}
