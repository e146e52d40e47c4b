/* Both engines against a naive search, on random keyword sets and random
 * payloads with planted keywords: overlapping keywords, keywords that are
 * prefixes and suffixes of others, self-overlapping ones ("aaa"), the same
 * bytes with and without nocase, case variants of case-sensitive keywords
 * (which must not match), NUL and 0xff bytes. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "match_list.h"

static uint8_t
fold(uint8_t b)
{
	return (b >= 'A' && b <= 'Z') ? (uint8_t)(b + 32) : b;
}

static void
naive(const struct ac_keyword *kw, uint32_t n_kw, const uint8_t *d, uint32_t len,
	struct match_list *out)
{
	for (uint32_t k = 0; k < n_kw; k++)
		for (uint32_t end = kw[k].len; end <= len; end++) {
			const uint8_t *p = d + end - kw[k].len;
			uint32_t i = 0;
			for (; i < kw[k].len; i++)
				if (kw[k].nocase ? fold(p[i]) != fold(kw[k].bytes[i])
						 : p[i] != kw[k].bytes[i])
					break;
			if (i == kw[k].len)
				collect(out, k, end);
		}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t
rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static const uint8_t small_alpha[] = { 'a', 'b', 'A', 'B', 'c', 0, 0xff, '|' };

static uint8_t
rand_byte(int wide)
{
	return wide ? (uint8_t)rnd(256) : small_alpha[rnd(sizeof(small_alpha))];
}

/* A random keyword set; duplicates of (bytes, nocase) are avoided as the
 * rule loader deduplicates them, but the same bytes with the other nocase
 * value, and case variants, are added on purpose. */
static uint32_t
make_keywords(struct ac_keyword *kw, uint32_t want, int wide)
{
	uint32_t n = 0;

	while (n < want) {
		struct ac_keyword k = { 0 };
		uint32_t r = rnd(10);
		if (r < 2 && n > 0) { /* variant of an earlier keyword */
			const struct ac_keyword *o = &kw[rnd(n)];
			k.len = o->len;
			k.bytes = malloc(k.len);
			memcpy(k.bytes, o->bytes, k.len);
			if (r == 0) {
				k.nocase = !o->nocase;
			} else {
				for (uint32_t i = 0; i < k.len; i++)
					if (rnd(2) &&
						((k.bytes[i] | 32) >= 'a' &&
							(k.bytes[i] | 32) <= 'z'))
						k.bytes[i] ^= 32;
				k.nocase = o->nocase;
			}
		} else {
			k.len = 1 + rnd(wide ? 24 : 6);
			k.bytes = malloc(k.len);
			for (uint32_t i = 0; i < k.len; i++)
				k.bytes[i] = rand_byte(wide);
			k.nocase = rnd(2);
		}
		int dup = 0;
		for (uint32_t j = 0; j < n && !dup; j++)
			dup = kw[j].len == k.len && kw[j].nocase == k.nocase &&
				memcmp(kw[j].bytes, k.bytes, k.len) == 0;
		if (dup) {
			free(k.bytes);
			continue;
		}
		kw[n++] = k;
	}
	return n;
}

static void
plant(uint8_t *d, uint32_t len, const struct ac_keyword *kw, uint32_t n_kw, int wide)
{
	for (uint32_t i = 0; i < len; i++)
		d[i] = rand_byte(wide);
	uint32_t plants = len / 16;
	for (uint32_t p = 0; p < plants; p++) {
		const struct ac_keyword *k = &kw[rnd(n_kw)];
		if (k->len > len)
			continue;
		uint32_t at = rnd(len - k->len + 1);
		for (uint32_t i = 0; i < k->len; i++) {
			uint8_t b = k->bytes[i];
			/* Flip case at random: a match for nocase keywords,
			 * a near miss for case-sensitive ones. */
			if (rnd(3) == 0 && (b | 32) >= 'a' && (b | 32) <= 'z')
				b ^= 32;
			d[at + i] = b;
		}
	}
}

static int
same(struct match_list *a, struct match_list *b)
{
	sort_matches(a);
	sort_matches(b);
	return a->n == b->n && (a->n == 0 || memcmp(a->m, b->m, a->n * sizeof(*a->m)) == 0);
}

static unsigned widths_seen[5]; /* AC table entry widths exercised */

static void
run_round(uint32_t n_kw_want, int wide, uint32_t payloads, uint64_t *total_matches)
{
	struct ac_keyword kw[256];
	char err[256];
	uint32_t n_kw = make_keywords(kw, n_kw_want, wide);
	struct ac_engine *ac = ac_engine_build(AC_ENGINE_AC, kw, n_kw, err, sizeof(err));
	CHECK(ac != NULL, "AC build: %s", err);
	struct ac_engine *hs = ac_engine_build(AC_ENGINE_HS, kw, n_kw, err, sizeof(err));
	CHECK(hs != NULL, "HS build: %s", err);
	if (ac == NULL || hs == NULL)
		return;
	widths_seen[ac_engine_entry_bytes(ac)]++;
	struct ac_scratch *sa = ac_scratch_new(ac, err, sizeof(err));
	struct ac_scratch *sh = ac_scratch_new(hs, err, sizeof(err));
	CHECK(sa && sh, "scratch: %s", err);
	uint8_t *d = malloc(4096);
	for (uint32_t p = 0; p < payloads; p++) {
		uint32_t len = p == 0 ? 0 : rnd(p % 7 == 0 ? 4096 : 600);
		plant(d, len, kw, n_kw, wide);
		struct match_list want = { 0 }, got_ac = { 0 }, got_hs = { 0 };
		naive(kw, n_kw, d, len, &want);
		uint64_t mac = ac_engine_scan(ac, sa, d, len, collect, &got_ac);
		uint64_t mhs = ac_engine_scan(hs, sh, d, len, collect, &got_hs);
		CHECK(mac == got_ac.n && mhs == got_hs.n, "returned counts match callbacks");
		struct match_list w2 = { 0 };
		naive(kw, n_kw, d, len, &w2);
		CHECK(same(&want, &got_ac), "AC: %zu matches, naive %zu (len %u, %u keywords)",
			got_ac.n, want.n, len, n_kw);
		CHECK(same(&w2, &got_hs), "HS: %zu matches, naive %zu (len %u, %u keywords)",
			got_hs.n, w2.n, len, n_kw);
		*total_matches += want.n;
		free(want.m);
		free(w2.m);
		free(got_ac.m);
		free(got_hs.m);
	}
	free(d);
	/* Bursts (the app's path; AC scans two buffers in lockstep): same
	 * matches per buffer as the naive search, odd counts, empty buffers
	 * and unequal lengths included. */
	for (int b = 0; b < 10; b++) {
		const uint8_t *bufs[33];
		uint32_t lens[33];
		uint64_t per_ac[33], per_hs[33];
		unsigned nb = b == 0 ? 1 : 1 + rnd(33);
		struct match_list want = { 0 }, got_ac = { 0 }, got_hs = { 0 };
		for (unsigned i = 0; i < nb; i++) {
			lens[i] = rnd(5) == 0 ? 0 : rnd(1500);
			uint8_t *p = malloc(lens[i] + 1);
			plant(p, lens[i], kw, n_kw, wide);
			bufs[i] = p;
		}
		ac_engine_scan_burst(ac, sa, bufs, lens, nb, collect, &got_ac, per_ac);
		ac_engine_scan_burst(hs, sh, bufs, lens, nb, collect, &got_hs, per_hs);
		for (unsigned i = 0; i < nb; i++) {
			size_t before = want.n;
			naive(kw, n_kw, bufs[i], lens[i], &want);
			CHECK(per_ac[i] == want.n - before && per_hs[i] == want.n - before,
				"burst buffer %u/%u (len %u): ac %llu, hs %llu, naive %zu", i, nb,
				lens[i], (unsigned long long)per_ac[i],
				(unsigned long long)per_hs[i], want.n - before);
			free((void *)bufs[i]);
		}
		struct match_list w2 = { 0 };
		w2.m = malloc(want.n * sizeof(*w2.m) + 1);
		memcpy(w2.m, want.m, want.n * sizeof(*w2.m));
		w2.n = w2.cap = want.n;
		CHECK(same(&want, &got_ac) && same(&w2, &got_hs),
			"burst of %u: multisets differ (ac %zu, hs %zu, naive %zu)", nb, got_ac.n,
			got_hs.n, want.n);
		*total_matches += want.n;
		free(want.m);
		free(w2.m);
		free(got_ac.m);
		free(got_hs.m);
	}
	ac_scratch_free(sa);
	ac_scratch_free(sh);
	ac_engine_free(ac);
	ac_engine_free(hs);
	for (uint32_t k = 0; k < n_kw; k++)
		free(kw[k].bytes);
}

/* Hand-written cases whose answer is known without a reference. */
static void
test_known(void)
{
	struct ac_keyword kw[] = {
		{ (uint8_t *)"he", 2, false, NULL, 0 },
		{ (uint8_t *)"she", 3, false, NULL, 0 },
		{ (uint8_t *)"his", 3, false, NULL, 0 },
		{ (uint8_t *)"hers", 4, false, NULL, 0 },
		{ (uint8_t *)"aa", 2, false, NULL, 0 },
		{ (uint8_t *)"HE", 2, true, NULL, 0 },
	};
	const char *text = "ushers aaaa sHe";
	const struct match want[] = {
		/* sorted by keyword, end */
		{ 0, 4 },
		{ 1, 4 },
		{ 3, 6 },
		{ 4, 9 },
		{ 4, 10 },
		{ 4, 11 },
		{ 5, 4 },
		{ 5, 15 },
	};
	char err[256];

	for (int e = 0; e < 2; e++) {
		struct ac_engine *eng =
			ac_engine_build(e ? AC_ENGINE_HS : AC_ENGINE_AC, kw, 6, err, sizeof(err));
		CHECK(eng != NULL, "build: %s", err);
		if (eng == NULL)
			continue;
		struct ac_scratch *s = ac_scratch_new(eng, err, sizeof(err));
		struct match_list got = { 0 };
		ac_engine_scan(
			eng, s, (const uint8_t *)text, (uint32_t)strlen(text), collect, &got);
		sort_matches(&got);
		CHECK(got.n == sizeof(want) / sizeof(want[0]) &&
				memcmp(got.m, want, sizeof(want)) == 0,
			"%s: %zu matches on '%s', want 8", e ? "hs" : "ac", got.n, text);
		free(got.m);
		ac_scratch_free(s);
		ac_engine_free(eng);
	}
}

/* A rule line (found by the fuzzer) whose long contents make Hyperscan
 * 5.4.0's literal API fail mid-scan; the default hs engine must agree with
 * AC on it, without scan errors. */
static void
test_hs_literal_regression(const char *path)
{
	static uint8_t buf[65536];
	struct ac_rule r;
	struct ac_keyword kw[16];
	char err[256];
	uint32_t n = 0;
	FILE *f = fopen(path, "rb");

	CHECK(f != NULL, "cannot open %s", path);
	if (f == NULL)
		return;
	size_t len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	CHECK(ac_rule_parse_line((const char *)buf, len, &r, err, sizeof(err)) == AC_LINE_RULE,
		"%s: %s", path, err);
	for (unsigned i = 0; i < r.n_contents && n < 16; i++) {
		int dup = 0;
		for (uint32_t j = 0; j < n; j++)
			dup |= kw[j].len == r.contents[i].len &&
				memcmp(kw[j].bytes, r.contents[i].bytes, kw[j].len) == 0;
		if (!dup)
			kw[n++] = (struct ac_keyword){ r.contents[i].bytes, r.contents[i].len,
				r.contents[i].nocase, NULL, 0 };
	}
	struct match_list l[3] = { { 0 } };
	uint64_t errors[3] = { 0 };
	const enum ac_engine_kind kinds[3] = { AC_ENGINE_AC, AC_ENGINE_HS, AC_ENGINE_HS_LITERAL };
	for (int e = 0; e < 3; e++) {
		struct ac_engine *eng = ac_engine_build(kinds[e], kw, n, err, sizeof(err));
		CHECK(eng != NULL, "build %s: %s", ac_engine_kind_name(kinds[e]), err);
		if (eng == NULL)
			continue;
		struct ac_scratch *s = ac_scratch_new(eng, err, sizeof(err));
		ac_engine_scan(eng, s, buf, (uint32_t)len, collect, &l[e]);
		errors[e] = ac_scratch_errors(s, NULL);
		ac_scratch_free(s);
		ac_engine_free(eng);
	}
	CHECK(l[0].n >= 9, "AC found %zu matches of the rule's contents in itself", l[0].n);
	CHECK(errors[1] == 0 && same(&l[0], &l[1]), "hs: %zu matches, %llu errors; ac %zu", l[1].n,
		(unsigned long long)errors[1], l[0].n);
	printf("hs-literal on the regression input: %zu of %zu matches, %llu scan error(s)%s\n",
		l[2].n, l[0].n, (unsigned long long)errors[2],
		errors[2] ? " (the Hyperscan 5.4 bug is still there)" : "");
	for (int e = 0; e < 3; e++)
		free(l[e].m);
	ac_rule_free(&r);
}

/* Streaming: payloads cut in random chunks (1-byte ones among them) and
 * scanned chunk after chunk with the state carried find, at their
 * absolute end offsets, what the naive search finds in the whole: exactly
 * for Hyperscan; for the automaton (both layouts) the same plus only
 * case-sensitive keywords that began in an earlier chunk (reported
 * unchecked: candidates). */
struct abs_ctx {
	struct match_list *l;
	uint32_t base;
	uint32_t *chunk_of; /* absolute end -> the chunk's start */
};

static void
collect_abs(void *ctx, uint32_t kw, uint32_t end)
{
	struct abs_ctx *c = ctx;
	collect(c->l, kw, c->base + end);
}

static void
stream_round(uint32_t n_kw_want, int wide, uint64_t *total)
{
	struct ac_keyword kw[256];
	uint32_t n_kw = make_keywords(kw, n_kw_want, wide);
	char err[256];
	struct ac_engine *e[3] = {
		ac_engine_build_opt(AC_ENGINE_AC, kw, n_kw, false, 0, err, sizeof(err)),
		ac_engine_build_opt(AC_ENGINE_AC, kw, n_kw, false, 1, err, sizeof(err)),
		ac_engine_build_opt(AC_ENGINE_HS, kw, n_kw, false, 0, err, sizeof(err)),
	};
	struct ac_scratch *sc[3];
	for (int k = 0; k < 3; k++) {
		CHECK(e[k] != NULL &&
				ac_engine_enable_stream(e[k], kw, n_kw, err, sizeof(err)) == 0,
			"stream build: %s", err);
		sc[k] = ac_scratch_new(e[k], err, sizeof(err));
		CHECK(sc[k] != NULL, "scratch: %s", err);
	}
	uint8_t d[2048];
	uint32_t starts[2048];
	for (int p = 0; p < 40; p++) {
		uint32_t len = 1 + rnd(sizeof(d));
		plant(d, len, kw, n_kw, wide);
		struct match_list want = { 0 };
		naive(kw, n_kw, d, len, &want);
		/* chunk starts: every byte's chunk */
		uint32_t at = 0;
		while (at < len) {
			uint32_t n = rnd(4) == 0 ? 1 : 1 + rnd(64);
			for (uint32_t i = at; i < at + n && i < len; i++)
				starts[i] = at;
			at += n;
		}
		for (int k = 0; k < 3; k++) {
			struct match_list got = { 0 };
			uint64_t state[512] = { 0 };
			CHECK(ac_engine_stream_bytes(e[k]) <= sizeof(state),
				"stream state of %zu bytes", ac_engine_stream_bytes(e[k]));
			ac_engine_stream_init(e[k], state);
			struct abs_ctx c = { &got, 0, starts };
			for (uint32_t i = 0; i < len;) {
				uint32_t j = i;
				while (j < len && starts[j] == i)
					j++;
				c.base = i;
				ac_engine_scan_stream(
					e[k], sc[k], state, d + i, j - i, collect_abs, &c);
				i = j;
			}
			sort_matches(&want);
			sort_matches(&got);
			/* every naive match is there; an extra one only as said above */
			size_t w = 0, extra_bad = 0;
			for (size_t g = 0; g < got.n; g++) {
				if (w < want.n && want.m[w].kw == got.m[g].kw &&
					want.m[w].end == got.m[g].end) {
					w++;
					continue;
				}
				const struct ac_keyword *q = &kw[got.m[g].kw];
				uint32_t end = got.m[g].end;
				bool ok = k < 2 && !q->nocase && end >= q->len &&
					end - q->len < starts[end - 1];
				extra_bad += !ok;
			}
			CHECK(w == want.n && extra_bad == 0,
				"%s stream: %zu of %zu naive matches, %zu bad extra (len %u)",
				k == 0           ? "ac full"
					: k == 1 ? "ac compact"
						 : "hs",
				w, want.n, extra_bad, len);
			if (k == 2)
				CHECK(got.n == want.n, "hs stream: exactly the naive matches");
			*total += want.n;
			free(got.m);
		}
		free(want.m);
	}
	for (int k = 0; k < 3; k++) {
		ac_scratch_free(sc[k]);
		ac_engine_free(e[k]);
	}
	for (uint32_t k = 0; k < n_kw; k++)
		free(kw[k].bytes);
}

int
main(int argc, char **argv)
{
	uint64_t total = 0;

	test_known();
	if (argc > 1)
		test_hs_literal_regression(argv[1]);
	else
		CHECK(0, "usage: %s HS_LITERAL_REGRESSION_RULE_FILE", argv[0]);
	for (int round = 0; round < 12; round++)
		run_round(round % 2 ? 120 : 12, 0, 60, &total);
	for (int round = 0; round < 6; round++)
		run_round(200, 1, 60, &total);
	uint64_t stream_total = 0;
	for (int round = 0; round < 6; round++)
		stream_round(round % 2 ? 120 : 20, round >= 4, &stream_total);
	CHECK(stream_total > 1000, "only %llu matches in the streaming rounds",
		(unsigned long long)stream_total);
	CHECK(widths_seen[2] > 0 && widths_seen[4] > 0,
		"both AC table widths exercised: 16-bit %u rounds, 32-bit %u rounds",
		widths_seen[2], widths_seen[4]);
	/* The random data must actually produce matches to compare. */
	CHECK(total > 10000, "only %llu matches in all rounds", (unsigned long long)total);
	printf("engines agree with naive search on %llu matches\n", (unsigned long long)total);
	return check_done("test_engines_random");
}
