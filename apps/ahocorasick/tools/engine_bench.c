/* Engine micro-benchmark: Gb/s of payload scanned by each engine, with the
 * DoS keyword subset and with the whole rule set, over the same in-memory
 * packet array, measured side by side in one run.
 *
 * Corpora: "captures" = L4 payloads (or whole frames where no IPv4 TCP/UDP
 * payload is found) of every packet of the captures given; "random-1460" =
 * 1460-byte payloads of random printable and binary bytes (seeded).
 * Sets: "dos" and "all" keywords (every content, every occurrence: keywords
 * mode), and "fp-all": the whole set's fast patterns as rules mode builds
 * them (one per rule, Hyperscan with HS_FLAG_SINGLEMATCH).
 * usage: ac_engine_bench --rules FILE [--seconds S] [--json] PCAP|DIR... */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcap/pcap.h>

#include "engine.h"
#include "payload.h"
#include "keyword_set.h"
#include "rule_verify.h"

struct corpus {
	const char *name;
	uint8_t **buf;
	uint32_t *len;
	uint32_t n;
	uint64_t bytes;
};

static void
corpus_add(struct corpus *c, const uint8_t *d, uint32_t len)
{
	c->buf = realloc(c->buf, (c->n + 1) * sizeof(*c->buf));
	c->len = realloc(c->len, (c->n + 1) * sizeof(*c->len));
	if (c->buf == NULL || c->len == NULL || (c->buf[c->n] = malloc(len + 1)) == NULL)
		abort();
	memcpy(c->buf[c->n], d, len);
	c->len[c->n++] = len;
	c->bytes += len;
}

static void
add_capture(struct corpus *c, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, errbuf);
	struct pcap_pkthdr *h;
	const u_char *d;

	if (p == NULL)
		return;
	int ether = pcap_datalink(p) == DLT_EN10MB;
	while (pcap_next_ex(p, &h, &d) == 1) {
		struct ac_payload pl;
		if (ether && ac_find_payload(d, h->caplen, &pl) == AC_PL_OK)
			corpus_add(c, d + pl.off, pl.len);
		else
			corpus_add(c, d, h->caplen);
	}
	pcap_close(p);
}

static void
add_path(struct corpus *c, const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	char full[4096];

	if (dir == NULL) {
		add_capture(c, path);
		return;
	}
	while ((e = readdir(dir)) != NULL) {
		size_t n = strlen(e->d_name);
		if ((n > 5 && strcmp(e->d_name + n - 5, ".pcap") == 0) ||
			(n > 7 && strcmp(e->d_name + n - 7, ".pcapng") == 0)) {
			snprintf(full, sizeof(full), "%s/%s", path, e->d_name);
			add_capture(c, full);
		}
	}
	closedir(dir);
}

static void
count(void *ctx, uint32_t kw, uint32_t end)
{
	(void)end;
	((uint64_t *)ctx)[kw]++;
}

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double
cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* gbps: per wall second; cpu_gbps: per CPU second of this thread (what one
 * core does, whatever else the shared machine runs). */
struct result {
	double gbps, mpps, cpu_gbps;
	uint64_t matches;
};

/* burst = 0: one buffer at a time (ac_engine_scan); else bursts of 32
 * through ac_engine_scan_burst, as the app scans. */
static struct result
run(const struct ac_engine *e, struct ac_scratch *s, const struct corpus *c, uint64_t *hits,
	double seconds, int burst)
{
	struct result r = { 0 };
	uint64_t bytes = 0, pkts = 0, per[32];
	double t0 = now(), c0 = cpu_now(), t;

	do {
		if (!burst) {
			for (uint32_t i = 0; i < c->n; i++)
				r.matches +=
					ac_engine_scan(e, s, c->buf[i], c->len[i], count, hits);
		} else {
			for (uint32_t i = 0; i < c->n; i += 32) {
				unsigned n = c->n - i < 32 ? c->n - i : 32;
				ac_engine_scan_burst(e, s, (const uint8_t *const *)&c->buf[i],
					&c->len[i], n, count, hits, per);
				for (unsigned j = 0; j < n; j++)
					r.matches += per[j];
			}
		}
		bytes += c->bytes;
		pkts += c->n;
		t = now() - t0;
	} while (t < seconds);
	r.gbps = (double)bytes * 8 / t / 1e9;
	r.cpu_gbps = (double)bytes * 8 / (cpu_now() - c0) / 1e9;
	r.mpps = (double)pkts / t / 1e6;
	return r;
}

int
main(int argc, char **argv)
{
	const char *rules = NULL;
	double seconds = 1.0;
	int json = 0, i = 1;
	char err[256];

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc)
			rules = argv[++i];
		else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else {
			fprintf(stderr, "ac_engine_bench: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (rules == NULL || !(seconds > 0)) {
		fprintf(stderr, "usage: %s --rules FILE [--seconds S>0] [--json] PCAP|DIR...\n",
			argv[0]);
		return 2;
	}
	struct corpus corp[2] = { { .name = "captures" }, { .name = "random-1460" } };
	for (; i < argc; i++)
		add_path(&corp[0], argv[i]);
	uint64_t rng = 0x243f6a8885a308d3ull;
	uint8_t pkt[1460];
	for (int p = 0; p < 2000; p++) {
		for (size_t b = 0; b < sizeof(pkt); b++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			pkt[b] =
				(rng & 3) ? (uint8_t)(' ' + (rng >> 8) % 95) : (uint8_t)(rng >> 16);
		}
		corpus_add(&corp[1], pkt, sizeof(pkt));
	}
	unsigned n_corp = corp[0].n ? 2 : 1;
	struct corpus *cs = corp[0].n ? corp : &corp[1];

	const char *set_name[3] = { "dos", "all", "fp-all" };
	struct ac_filter dos = { ac_dos_classtypes, ac_n_dos_classtypes, false, false };
	if (json)
		printf("[\n");
	else
		printf("%-12s %-4s %-9s %9s %9s %12s %10s %12s  (all measured)\n", "corpus", "set",
			"eng", "keywords", "Gb/s", "Mpkt/s", "matches/pkt", "engine bytes");
	int first = 1;
	struct ac_filter keep = { NULL, 0, false, true };
	for (int set = 0; set < 3; set++) {
		struct ac_ruleset rs;
		struct ac_vars vars = { 0 };
		struct ac_verifier ver = { 0 };
		if (ac_ruleset_load(rules,
			    set == 0           ? &dos
				    : set == 2 ? &keep
					       : NULL,
			    &rs, err, sizeof(err)) < 0 ||
			(set == 2 &&
				(ac_vars_load(&vars, NULL, err, sizeof(err)) < 0 ||
					ac_verifier_build(&ver, &rs, &vars, false, true, err,
						sizeof(err)) < 0))) {
			fprintf(stderr, "ac_engine_bench: %s\n", err);
			return 1;
		}
		const struct ac_keyword *kws = set == 2 ? ver.fp : rs.keywords;
		uint32_t n_kws = set == 2 ? ver.n_fp : rs.n_keywords;
		struct ac_engine *e[2];
		struct ac_scratch *s[2];
		for (int k = 0; k < 2; k++) {
			e[k] = ac_engine_build_opt(k ? AC_ENGINE_HS : AC_ENGINE_AC, kws, n_kws,
				set == 2, 0, err, sizeof(err));
			if (e[k] == NULL ||
				(s[k] = ac_scratch_new(e[k], err, sizeof(err))) == NULL) {
				fprintf(stderr, "ac_engine_bench: %s\n", err);
				return 1;
			}
		}
		uint64_t *hits = calloc(n_kws, sizeof(uint64_t));
		/* Rows: AC and Hyperscan in bursts of 32 (the app's path), and AC
		 * one buffer at a time (the plain DFA loop, no interleaving). */
		static const struct {
			int engine, burst;
			const char *name;
		} rows[3] = { { 0, 1, "ac" }, { 1, 1, "hs" }, { 0, 0, "ac-single" } };
		for (unsigned ci = 0; ci < n_corp; ci++) {
			/* Alternate in short slices so that every row sees the
			 * same machine load (the machine is shared). */
			struct result acc[3] = { { 0 } };
			const int slices = 4;
			for (int sl = 0; sl < slices; sl++)
				for (int k = 0; k < 3; k++) {
					int en = rows[k].engine;
					struct result x = run(e[en], s[en], &cs[ci], hits,
						seconds / slices, rows[k].burst);
					acc[k].gbps += x.gbps / slices;
					acc[k].mpps += x.mpps / slices;
					acc[k].cpu_gbps += x.cpu_gbps / slices;
				}
			for (int k = 0; k < 3; k++) {
				int en = rows[k].engine;
				uint64_t m = 0; /* matches per packet, from one pass */
				for (uint32_t p = 0; p < cs[ci].n; p++)
					m += ac_engine_scan(e[en], s[en], cs[ci].buf[p],
						cs[ci].len[p], count, hits);
				double mpp = (double)m / cs[ci].n;
				if (json)
					printf("%s {\"kind\": \"measured\", \"corpus\": \"%s\", "
					       "\"packets\": %u, \"bytes\": %llu, \"set\": \"%s\", "
					       "\"engine\": \"%s\", \"keywords\": %u, \"gbps\": "
					       "%.3f, "
					       "\"mpps\": %.3f, \"matches_per_packet\": %.3f, "
					       "\"cpu_gbps\": %.3f, \"engine_bytes\": %zu}\n",
						first ? " " : ",", cs[ci].name, cs[ci].n,
						(unsigned long long)cs[ci].bytes, set_name[set],
						rows[k].name, n_kws, acc[k].gbps, acc[k].mpps, mpp,
						acc[k].cpu_gbps, ac_engine_size(e[en]));
				else
					printf("%-12s %-4s %-9s %9u %9.3f %12.3f %10.3f %12zu\n",
						cs[ci].name, set_name[set], rows[k].name, n_kws,
						acc[k].gbps, acc[k].mpps, mpp,
						ac_engine_size(e[en]));
				first = 0;
			}
			if (!json)
				printf("%-12s %-4s hs/ac %.2f, ac burst/single %.2f\n", cs[ci].name,
					set_name[set], acc[1].gbps / acc[0].gbps,
					acc[0].gbps / acc[2].gbps);
		}
		free(hits);
		for (int k = 0; k < 2; k++) {
			ac_scratch_free(s[k]);
			ac_engine_free(e[k]);
		}
		ac_verifier_free(&ver);
		ac_vars_free(&vars);
		ac_ruleset_free(&rs);
	}
	if (json)
		printf("]\n");
	return 0;
}
