/* The two engines report the same (keyword, end offset) multiset, with a
 * real Snort keyword set, on
 *   1. generated payloads with planted keywords (random positions, adjacent
 *      and overlapping plants, random case flips), and
 *   2. every packet of every capture given (files, or directories of
 *      .pcap / .pcapng files): the whole captured frame, and the L4 payload
 *      the app scans.
 * usage: pcap_agree --rules FILE [--dos | --classtype a,b] PCAP|DIR... */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "check.h"
#include "engine.h"
#include "match_list.h"
#include "payload.h"
#include "keyword_set.h"

struct ctx {
	const struct ac_ruleset *rs;
	struct ac_engine *ac, *hs;
	struct ac_scratch *sa, *sh;
	struct match_list la, lh;
	uint64_t buffers, bytes, matches, mismatches;
	uint64_t files, files_unreadable, packets;
};

static void
compare(struct ctx *c, const uint8_t *d, uint32_t len, const char *where, uint64_t pkt)
{
	c->la.n = c->lh.n = 0;
	ac_engine_scan(c->ac, c->sa, d, len, collect, &c->la);
	ac_engine_scan(c->hs, c->sh, d, len, collect, &c->lh);
	sort_matches(&c->la);
	sort_matches(&c->lh);
	c->buffers++;
	c->bytes += len;
	c->matches += c->la.n;
	if (c->la.n != c->lh.n ||
		(c->la.n && memcmp(c->la.m, c->lh.m, c->la.n * sizeof(struct match)))) {
		c->mismatches++;
		if (c->mismatches <= 10)
			fprintf(stderr, "MISMATCH %s packet %llu: ac %zu matches, hs %zu\n", where,
				(unsigned long long)pkt, c->la.n, c->lh.n);
	}
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void
generated(struct ctx *c, unsigned payloads)
{
	uint8_t *d = malloc(9000);
	const struct ac_ruleset *rs = c->rs;

	for (unsigned p = 0; p < payloads; p++) {
		uint32_t len = 1 + rnd(p % 10 == 0 ? 9000 : 1500);
		for (uint32_t i = 0; i < len; i++) /* text-like and binary bytes */
			d[i] = rnd(4) ? (uint8_t)(' ' + rnd(95)) : (uint8_t)rnd(256);
		uint32_t at = rnd(len);
		for (unsigned k = 0; k < 1 + len / 40; k++) {
			const struct ac_keyword *kw = &rs->keywords[rnd(rs->n_keywords)];
			/* Next plant right after, or overlapping, this one. */
			if (rnd(2))
				at = rnd(len);
			if (at + kw->len > len)
				continue;
			for (uint32_t i = 0; i < kw->len; i++) {
				uint8_t b = kw->bytes[i];
				if (rnd(4) == 0 && (b | 32) >= 'a' && (b | 32) <= 'z')
					b ^= 32;
				d[at + i] = b;
			}
			at += kw->len > 2 ? kw->len - rnd(3) : kw->len;
		}
		compare(c, d, len, "generated", p);
	}
	free(d);
}

static void
one_capture(struct ctx *c, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, errbuf);
	struct pcap_pkthdr *h;
	const u_char *data;
	int r;

	if (p == NULL) {
		/* Some captures in tcpdump's suite are broken on purpose. */
		printf("unreadable capture (libpcap: %s)\n", errbuf);
		c->files_unreadable++;
		return;
	}
	c->files++;
	int ether = pcap_datalink(p) == DLT_EN10MB;
	while ((r = pcap_next_ex(p, &h, &data)) == 1) {
		c->packets++;
		compare(c, data, h->caplen, path, c->packets);
		struct ac_payload pl;
		if (ether && ac_find_payload(data, h->caplen, &pl) == AC_PL_OK)
			compare(c, data + pl.off, pl.len, path, c->packets);
	}
	if (r == PCAP_ERROR)
		printf("%s: read stopped: %s\n", path, pcap_geterr(p));
	pcap_close(p);
}

static int
is_capture(const char *name)
{
	size_t n = strlen(name);
	return (n > 5 && strcmp(name + n - 5, ".pcap") == 0) ||
		(n > 7 && strcmp(name + n - 7, ".pcapng") == 0);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
walk(struct ctx *c, const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	if (dir == NULL) {
		one_capture(c, path);
		return;
	}
	while ((e = readdir(dir)) != NULL) {
		if (!is_capture(e->d_name))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (names == NULL || asprintf(&names[n], "%s/%s", path, e->d_name) < 0)
			abort();
		n++;
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		one_capture(c, names[i]);
		free(names[i]);
	}
	free(names);
}

int
main(int argc, char **argv)
{
	const char *rules = NULL;
	struct ac_filter filter = { 0 };
	const char *classes[64];
	struct ac_ruleset rs;
	struct ctx c = { 0 };
	char err[256];
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc) {
			rules = argv[++i];
		} else if (strcmp(argv[i], "--dos") == 0) {
			filter.classtypes = ac_dos_classtypes;
			filter.n_classtypes = ac_n_dos_classtypes;
		} else if (strcmp(argv[i], "--classtype") == 0 && i + 1 < argc) {
			char *list = argv[++i];
			filter.n_classtypes = 0;
			for (char *t = strtok(list, ","); t && filter.n_classtypes < 64;
				t = strtok(NULL, ","))
				classes[filter.n_classtypes++] = t;
			filter.classtypes = classes;
		} else {
			fprintf(stderr, "pcap_agree: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (rules == NULL || i == argc) {
		fprintf(stderr, "usage: %s --rules FILE [--dos|--classtype a,b] PCAP|DIR...\n",
			argv[0]);
		return 2;
	}
	if (ac_ruleset_load(rules, &filter, &rs, err, sizeof(err)) < 0) {
		fprintf(stderr, "pcap_agree: %s\n", err);
		return 1;
	}
	c.rs = &rs;
	c.ac = ac_engine_build(AC_ENGINE_AC, rs.keywords, rs.n_keywords, err, sizeof(err));
	CHECK(c.ac != NULL, "AC build: %s", err);
	c.hs = ac_engine_build(AC_ENGINE_HS, rs.keywords, rs.n_keywords, err, sizeof(err));
	CHECK(c.hs != NULL, "HS build: %s", err);
	if (c.ac == NULL || c.hs == NULL)
		return check_done("pcap_agree");
	c.sa = ac_scratch_new(c.ac, err, sizeof(err));
	c.sh = ac_scratch_new(c.hs, err, sizeof(err));
	printf("%u keywords from %u rules; AC: %u states x %u classes, %u-byte entries, "
	       "%zu bytes; Hyperscan database %zu bytes\n",
		rs.n_keywords, rs.n_rules, ac_engine_states(c.ac), ac_engine_classes(c.ac),
		ac_engine_entry_bytes(c.ac), ac_engine_size(c.ac), ac_engine_size(c.hs));

	generated(&c, 3000);
	uint64_t gen_matches = c.matches;
	CHECK(c.mismatches == 0, "%llu generated payloads where the engines disagree",
		(unsigned long long)c.mismatches);
	CHECK(gen_matches > 3000, "generated payloads gave only %llu matches",
		(unsigned long long)gen_matches);

	for (; i < argc; i++)
		walk(&c, argv[i]);
	printf("%llu captures (%llu unreadable), %llu packets, %llu buffers, %llu bytes, "
	       "%llu matches (%llu in generated payloads), %llu disagreements\n",
		(unsigned long long)c.files, (unsigned long long)c.files_unreadable,
		(unsigned long long)c.packets, (unsigned long long)c.buffers,
		(unsigned long long)c.bytes, (unsigned long long)c.matches,
		(unsigned long long)gen_matches, (unsigned long long)c.mismatches);
	CHECK(c.mismatches == 0, "%llu buffers where the engines disagree",
		(unsigned long long)c.mismatches);
	int last = 0;
	CHECK(ac_scratch_errors(c.sh, &last) == 0, "Hyperscan scans failed (last error %d)", last);
	CHECK(c.files > 0 && c.packets > 0, "no capture read");
	CHECK(c.matches > gen_matches, "captures gave no match at all");
	free(c.la.m);
	free(c.lh.m);
	ac_scratch_free(c.sa);
	ac_scratch_free(c.sh);
	ac_engine_free(c.ac);
	ac_engine_free(c.hs);
	ac_ruleset_free(&rs);
	return check_done("pcap_agree");
}
