/* stateful-flood: replay generated traffic through the flow table with the
 * nProbe hash and with the keyed hash, ordinary traffic and a hash flood
 * (every flow has the same nProbe sum: source address + k, source port - k),
 * and print throughput and probe lengths side by side (all measured).
 *
 * Each packet takes the app's P-stage path minus the mbuf: parse the frame,
 * hash the key, look up / update / create under the bucket lock.
 *
 * Throughput is packets per second of this thread's CPU time (not wall
 * time), so that a shared, busy machine preempting the replay does not
 * masquerade as a slow table.
 *
 * --check turns the structural facts into assertions (exit 1 if one fails):
 * under the flood every nProbe flow sits in one chain and lookups walk it,
 * while the keyed table's chains stay short.  Timings are never asserted. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_malloc.h>

#include "flow_hash.h"
#include "flow_key.h"
#include "flow_table.h"
#include "tests/frame_build.h"

#define FRAME_SIZE 64
#define MAX_FLOWS 50000u /* colliding ports count down from 60000 */
#define SHORT_CHAIN 12   /* keyed or ordinary: P(chain > 12) is negligible */

struct result {
	const char *traffic, *hash;
	uint64_t packets;
	double seconds, mpps, avg_probe;
	uint32_t longest_chain;
	uint64_t created, table_full;
};

static uint64_t
xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
build_traffic(uint8_t *frames, uint32_t n, bool colliding)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint32_t k;

	for (k = 0; k < n; k++) {
		uint32_t src;
		uint16_t sport;

		if (colliding) {
			/* sum(src, sport) constant: one nProbe bucket */
			src = 0x0a000000u + k;
			sport = (uint16_t)(60000u - k);
		} else {
			src = 0x0a000000u | (uint32_t)(xorshift64(&seed) & 0x00ffffffu);
			sport = (uint16_t)(1024 + xorshift64(&seed) % 64000);
		}
		build_ipv4(frames + (size_t)k * FRAME_SIZE, FRAME_SIZE, -1, src, 0xc0a80001u, 6,
			sport, 80, TCP_FLAG_ACK);
	}
}

static int
replay(const uint8_t *frames, uint32_t n_flows, uint32_t rounds, const struct flow_hasher *h,
	struct result *res)
{
	struct flow_table *t = flow_table_create(n_flows, 0, h, 0);
	struct flow_counters c = { 0 };
	uint64_t hist[FLOW_CHAIN_HIST];
	struct timespec t0, t1;
	uint32_t r, k;

	if (t == NULL) {
		fprintf(stderr, "stateful-flood: cannot allocate a %u-record table\n", n_flows);
		return -1;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < n_flows; k++) {
			struct flow_pkt p;

			if (flow_parse_frame(frames + (size_t)k * FRAME_SIZE, FRAME_SIZE, &p) !=
				FLOW_PARSE_OK)
				continue;
			flow_table_update(t, &p, flow_hash(h, &p.key), FRAME_SIZE, rte_rdtsc(), &c);
		}
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	res->packets = c.lookups;
	res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	res->mpps = (double)c.lookups / res->seconds / 1e6;
	res->avg_probe = c.lookups ? (double)c.probes / (double)c.lookups : 0;
	res->longest_chain = flow_table_chain_histogram(t, hist);
	res->created = c.created;
	res->table_full = c.table_full;
	flow_table_free(t);
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: stateful-flood [EAL options] -- [--flows N] [--rounds R] [--check] "
		"[--json]\n"
		"  Replays N flows R times through the 2^16-bucket flow table with the\n"
		"  nProbe hash and the keyed hash (SipHash, random key), for ordinary\n"
		"  traffic and for a flood whose flows all share one nProbe hash value.\n"
		"  --flows N   flows per traffic kind, 1..%u (default 4096)\n"
		"  --rounds R  times each flow's packet is replayed (default 32)\n"
		"  --check     assert the structural facts (chain and probe lengths);\n"
		"              exit 1 if one does not hold\n"
		"  --json      print the results as one JSON object instead of text\n"
		"  All figures are measured on this machine; Mpps is per second of\n"
		"  this thread's CPU time.\n",
		MAX_FLOWS);
}

static int
parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "stateful-flood: %s '%s': expected an integer in %u..%u\n", opt, s,
			lo, hi);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "flows", required_argument, NULL, 'f' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "check", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t n_flows = 4096, rounds = 32, i;
	bool check = false, json = false;
	struct flow_hasher hashers[2];
	struct result res[4];
	uint8_t *frames;
	char err[256];
	int ret, opt, failed = 0;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr,
			"stateful-flood: EAL init failed (try --in-memory --no-huge --no-pci)\n");
		return 2;
	}
	argc -= ret;
	argv += ret;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (parse_u32("--flows", optarg, 1, MAX_FLOWS, &n_flows) < 0)
				return 2;
			break;
		case 'r':
			if (parse_u32("--rounds", optarg, 1, 1u << 20, &rounds) < 0)
				return 2;
			break;
		case 'c':
			check = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "stateful-flood: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (flow_hasher_init(&hashers[0], "nprobe", NULL, err, sizeof(err)) != 0 ||
		flow_hasher_init(&hashers[1], "keyed", NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "stateful-flood: %s\n", err);
		return 2;
	}
	frames = malloc((size_t)n_flows * FRAME_SIZE);
	if (frames == NULL)
		return 2;
	for (i = 0; i < 4; i++) {
		bool colliding = i >= 2;

		build_traffic(frames, n_flows, colliding);
		res[i].traffic = colliding ? "colliding" : "ordinary";
		res[i].hash = (i & 1) ? "keyed" : "nprobe";
		if (replay(frames, n_flows, rounds, &hashers[i & 1], &res[i]) < 0)
			return 2;
	}
	free(frames);

	if (json) {
		printf("{\"kind\": \"measured\", \"flows\": %u, \"rounds\": %u, \"results\": [",
			n_flows, rounds);
		for (i = 0; i < 4; i++)
			printf("%s{\"traffic\": \"%s\", \"hash\": \"%s\", \"packets\": %" PRIu64
			       ", \"seconds\": %.6f, \"mpps\": %.4f, \"avg_probe\": %.3f"
			       ", \"longest_chain\": %u, \"created\": %" PRIu64 "}",
				i ? ", " : "", res[i].traffic, res[i].hash, res[i].packets,
				res[i].seconds, res[i].mpps, res[i].avg_probe, res[i].longest_chain,
				res[i].created);
		printf("]}\n");
	} else {
		printf("flow table replay, %u flows x %u rounds (measured; Mpps per CPU second)\n",
			n_flows, rounds);
		printf("%-10s %-7s %10s %9s %10s %8s\n", "traffic", "hash", "packets", "Mpps",
			"avg_probe", "longest");
		for (i = 0; i < 4; i++)
			printf("%-10s %-7s %10" PRIu64 " %9.3f %10.2f %8u\n", res[i].traffic,
				res[i].hash, res[i].packets, res[i].mpps, res[i].avg_probe,
				res[i].longest_chain);
		printf("under the flood, keyed/nprobe throughput ratio: %.1f (measured)\n",
			res[3].mpps / res[2].mpps);
	}

	if (check) {
		/* [2] colliding+nprobe, [3] colliding+keyed, [0],[1] ordinary */
		struct {
			bool ok;
			const char *what;
		} facts[] = {
			{ res[2].longest_chain == n_flows,
				"nprobe flood: every flow in one chain" },
			{ res[2].avg_probe >= n_flows / 4.0,
				"nprobe flood: lookups walk the chain (avg probe >= flows/4)" },
			{ res[3].longest_chain <= SHORT_CHAIN, "keyed flood: chains stay short" },
			{ res[3].avg_probe <= 3.0, "keyed flood: avg probe <= 3" },
			{ res[0].longest_chain <= SHORT_CHAIN,
				"ordinary nprobe: chains stay short" },
			{ res[1].longest_chain <= SHORT_CHAIN,
				"ordinary keyed: chains stay short" },
			{ n_flows < 64 || res[2].avg_probe >= 16 * res[3].avg_probe,
				"flood: nprobe walks >= 16x more records than keyed" },
		};
		for (i = 0; i < RTE_DIM(facts); i++) {
			if (!facts[i].ok) {
				fprintf(stderr, "CHECK failed: %s\n", facts[i].what);
				failed = 1;
			}
		}
		for (i = 0; i < 4; i++) {
			if (res[i].created != n_flows || res[i].table_full != 0) {
				fprintf(stderr,
					"CHECK failed: %s/%s created %" PRIu64 " of %u flows\n",
					res[i].traffic, res[i].hash, res[i].created, n_flows);
				failed = 1;
			}
		}
	}
	rte_eal_cleanup();
	return failed;
}
