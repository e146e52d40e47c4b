/* Aho-Corasick DFA construction and scan (see ac_dfa.h for the layout). */
#include "ac_dfa.h"
#include "errbuf.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AC_OUT 0x80000000u
#define AC_OUT16 0x8000u

struct ac_dfa {
	uint32_t *delta;   /* n_states rows of n_classes + 1 entries: next row
			    * offset | AC_OUT, then the state's own id */
	uint16_t *delta16; /* the same with 16-bit entries (AC_OUT16), used
			    * instead when every row offset fits 15 bits */
	uint32_t n_states;
	uint32_t n_classes;
	uint32_t row;      /* n_classes + 1 */
	uint8_t cls[256];  /* input byte -> class (case folded) */
	uint32_t *out_off; /* n_states + 1: outputs of state s are */
	uint32_t *out_kw;  /* out_kw[out_off[s] .. out_off[s+1]) */
	uint32_t n_kw;
	uint32_t *kw_len;
	uint32_t *kw_off; /* into kw_bytes */
	uint8_t *kw_nocase;
	uint8_t *kw_bytes;
	/* Compact layout (delta and delta16 NULL): the trie's edges with
	 * failure links.  Children of state s are c_label/c_next[c_first[s] ..
	 * c_first[s + 1]); the root's row is full (c_root). */
	bool compact;
	uint32_t *c_first, *c_next, *c_fail;
	uint8_t *c_label;
	uint32_t c_root[256];
};

static uint8_t
fold(uint8_t b)
{
	return (b >= 'A' && b <= 'Z') ? (uint8_t)(b + 32) : b;
}

void
ac_dfa_free(struct ac_dfa *d)
{
	if (d == NULL)
		return;
	free(d->delta);
	free(d->delta16);
	free(d->out_off);
	free(d->out_kw);
	free(d->kw_len);
	free(d->kw_off);
	free(d->kw_nocase);
	free(d->kw_bytes);
	free(d->c_first);
	free(d->c_next);
	free(d->c_fail);
	free(d->c_label);
	free(d);
}

/* Full table bytes for n states over nc columns (what the full layout
 * would take, without outputs and keyword copies). */
static size_t
full_table_bytes(uint32_t n, uint32_t nc)
{
	return (size_t)n * nc * ((uint64_t)n * nc <= AC_OUT16 ? 2 : 4);
}

struct ac_dfa *
ac_dfa_build(const struct ac_keyword *kw, uint32_t n_kw, char *err, size_t errlen)
{
	return ac_dfa_build_layout(kw, n_kw, 0, err, errlen);
}

struct ac_dfa *
ac_dfa_build_layout(
	const struct ac_keyword *kw, uint32_t n_kw, size_t budget, char *err, size_t errlen)
{
	struct ac_dfa *d = calloc(1, sizeof(*d));
	uint64_t total = 0;
	/* Trie, with child lists: only needed while building. */
	uint32_t *first_child = NULL, *sibling = NULL, *own_head = NULL;
	uint32_t *kw_next = NULL, *fail = NULL, *queue = NULL, *out_n = NULL;
	uint8_t *label = NULL;
	bool used[256] = { false };

	if (d == NULL)
		goto oom;
	if (n_kw == 0) {
		ac_set_err(err, errlen, "no keyword to build an automaton from");
		goto fail;
	}
	for (uint32_t k = 0; k < n_kw; k++) {
		if (kw[k].len == 0) {
			ac_set_err(err, errlen, "keyword %u is empty", k);
			goto fail;
		}
		total += kw[k].len;
		for (uint32_t i = 0; i < kw[k].len; i++)
			used[fold(kw[k].bytes[i])] = true;
	}
	if (total + 1 > UINT32_MAX / 2) {
		ac_set_err(err, errlen, "keywords too long in total (%llu bytes)",
			(unsigned long long)total);
		goto fail;
	}

	/* Alphabet: class 0 for bytes no keyword uses, one class per folded
	 * byte that some keyword uses. */
	uint8_t fcls[256] = { 0 };
	d->n_classes = 1;
	for (unsigned b = 0; b < 256; b++)
		if (used[b])
			fcls[b] = (uint8_t)d->n_classes++;
	/* 256 used bytes would need class 256: impossible, since folding
	 * removes 26 values. */
	for (unsigned b = 0; b < 256; b++)
		d->cls[b] = fcls[fold((uint8_t)b)];

	/* Keyword copies for the exact compare of case-sensitive keywords. */
	d->n_kw = n_kw;
	d->kw_len = malloc(n_kw * sizeof(uint32_t));
	d->kw_off = malloc(n_kw * sizeof(uint32_t));
	d->kw_nocase = malloc(n_kw);
	d->kw_bytes = malloc(total);
	if (!d->kw_len || !d->kw_off || !d->kw_nocase || !d->kw_bytes)
		goto oom;

	uint32_t max_states = (uint32_t)total + 1, n = 1;
	first_child = malloc(max_states * sizeof(uint32_t));
	sibling = malloc(max_states * sizeof(uint32_t));
	own_head = malloc(max_states * sizeof(uint32_t));
	label = malloc(max_states);
	kw_next = malloc(n_kw * sizeof(uint32_t));
	if (!first_child || !sibling || !own_head || !label || !kw_next)
		goto oom;
	first_child[0] = sibling[0] = own_head[0] = UINT32_MAX;
	uint32_t off = 0;
	for (uint32_t k = 0; k < n_kw; k++) {
		uint32_t s = 0;
		for (uint32_t i = 0; i < kw[k].len; i++) {
			uint8_t c = fcls[fold(kw[k].bytes[i])];
			uint32_t t = first_child[s];
			while (t != UINT32_MAX && label[t] != c)
				t = sibling[t];
			if (t == UINT32_MAX) {
				t = n++;
				label[t] = c;
				first_child[t] = own_head[t] = UINT32_MAX;
				sibling[t] = first_child[s];
				first_child[s] = t;
			}
			s = t;
		}
		kw_next[k] = own_head[s];
		own_head[s] = k;
		d->kw_len[k] = kw[k].len;
		d->kw_off[k] = off;
		d->kw_nocase[k] = kw[k].nocase;
		memcpy(d->kw_bytes + off, kw[k].bytes, kw[k].len);
		off += kw[k].len;
	}
	d->n_states = n;
	d->row = d->n_classes + 1;
	if ((uint64_t)n * d->row >= AC_OUT) {
		ac_set_err(err, errlen,
			"automaton too large: %u states x %u classes does not fit 31-bit offsets",
			n, d->n_classes);
		goto fail;
	}

	/* Breadth-first: failure links, full transition rows, output counts.
	 * A state's failure target is shallower, so its row and outputs are
	 * complete before the state itself is reached. */
	uint32_t nc = d->row;
	d->delta = malloc((size_t)n * nc * sizeof(uint32_t));
	fail = malloc(n * sizeof(uint32_t));
	queue = malloc(n * sizeof(uint32_t));
	out_n = calloc(n, sizeof(uint32_t));
	d->out_off = calloc((size_t)n + 1, sizeof(uint32_t));
	if (!d->delta || !fail || !queue || !out_n || !d->out_off)
		goto oom;
	uint32_t qh = 0, qt = 0;
	fail[0] = 0;
	queue[qt++] = 0;
	uint64_t out_total = 0;
	while (qh < qt) {
		uint32_t s = queue[qh++];
		uint32_t *row = d->delta + (size_t)s * nc;
		if (s == 0)
			memset(row, 0, nc * sizeof(uint32_t));
		else
			memcpy(row, d->delta + (size_t)fail[s] * nc, nc * sizeof(uint32_t));
		row[nc - 1] = s;
		for (uint32_t t = first_child[s]; t != UINT32_MAX; t = sibling[t]) {
			fail[t] = s == 0 ? 0 : d->delta[(size_t)fail[s] * nc + label[t]];
			row[label[t]] = t;
			queue[qt++] = t;
		}
		uint32_t own = 0;
		for (uint32_t k = own_head[s]; k != UINT32_MAX; k = kw_next[k])
			own++;
		out_n[s] = own + (s == 0 ? 0 : out_n[fail[s]]);
		out_total += out_n[s];
	}
	if (out_total >= UINT32_MAX) {
		ac_set_err(err, errlen, "too many automaton outputs (%llu)",
			(unsigned long long)out_total);
		goto fail;
	}
	for (uint32_t s = 0; s < n; s++)
		d->out_off[s + 1] = d->out_off[s] + out_n[s];
	d->out_kw = malloc((out_total ? out_total : 1) * sizeof(uint32_t));
	if (d->out_kw == NULL)
		goto oom;
	for (uint32_t q = 0; q < n; q++) {
		uint32_t s = queue[q], o = d->out_off[s];
		for (uint32_t k = own_head[s]; k != UINT32_MAX; k = kw_next[k])
			d->out_kw[o++] = k;
		if (s != 0)
			for (uint32_t j = d->out_off[fail[s]]; j < d->out_off[fail[s] + 1]; j++)
				d->out_kw[o++] = d->out_kw[j];
	}
	if (budget != 0 && full_table_bytes(n, nc) > budget) {
		/* Compact: keep the trie edges and failure links only. */
		d->compact = true;
		d->c_first = calloc((size_t)n + 1, sizeof(uint32_t));
		d->c_next = malloc(n * sizeof(uint32_t));
		d->c_label = malloc(n);
		d->c_fail = fail;
		fail = NULL;
		if (!d->c_first || !d->c_next || !d->c_label)
			goto oom;
		for (uint32_t st = 0; st < n; st++) {
			uint32_t e = d->c_first[st];
			for (uint32_t t = first_child[st]; t != UINT32_MAX; t = sibling[t]) {
				d->c_next[e] = t;
				d->c_label[e++] = label[t];
			}
			d->c_first[st + 1] = e;
		}
		for (uint32_t c = 0; c < 256; c++)
			d->c_root[c] = 0;
		for (uint32_t t = first_child[0]; t != UINT32_MAX; t = sibling[t])
			d->c_root[label[t]] = t;
		free(d->delta);
		d->delta = NULL;
		goto done;
	}
	/* State ids -> premultiplied row offsets with the output flag (the
	 * last column keeps the plain id, read only to find outputs). */
	for (size_t i = 0; i < (size_t)n * nc; i++) {
		uint32_t t = d->delta[i];
		if (i % nc != nc - 1)
			d->delta[i] = t * nc | (out_n[t] ? AC_OUT : 0);
	}
	/* Small automata (the DoS set: 450 states x 72 entries) get 16-bit
	 * entries: half the cache footprint, same scan loop. */
	if ((uint64_t)n * nc <= AC_OUT16) {
		d->delta16 = malloc((size_t)n * nc * sizeof(uint16_t));
		if (d->delta16 == NULL)
			goto oom;
		for (size_t i = 0; i < (size_t)n * nc; i++) {
			uint32_t v = d->delta[i];
			d->delta16[i] = (uint16_t)((v & AC_OUT ? AC_OUT16 : 0) | (v & ~AC_OUT));
		}
		free(d->delta);
		d->delta = NULL;
	}
	goto done;
oom:
	ac_set_err(err, errlen, "out of memory building the Aho-Corasick automaton");
fail:
	ac_dfa_free(d);
	d = NULL;
done:
	free(first_child);
	free(sibling);
	free(own_head);
	free(label);
	free(kw_next);
	free(fail);
	free(queue);
	free(out_n);
	return d;
}

/* Outputs of state s, ending at data[end - 1].  chunk: a streaming scan,
 * where a case-sensitive keyword longer than end began in an earlier chunk
 * whose bytes are gone: it is reported unchecked (a candidate). */
static inline uint64_t
report_in(const struct ac_dfa *d, uint32_t s, const uint8_t *data, uint32_t end, ac_match_fn fn,
	void *ctx, bool chunk)
{
	uint64_t m = 0;

	for (uint32_t j = d->out_off[s]; j < d->out_off[s + 1]; j++) {
		uint32_t k = d->out_kw[j], len = d->kw_len[k];
		if (!d->kw_nocase[k] && (!chunk || len <= end) &&
			memcmp(data + end - len, d->kw_bytes + d->kw_off[k], len) != 0)
			continue;
		fn(ctx, k, end);
		m++;
	}
	return m;
}

static uint64_t
report(const struct ac_dfa *d, uint32_t s, const uint8_t *data, uint32_t end, ac_match_fn fn,
	void *ctx)
{
	return report_in(d, s, data, end, fn, ctx, false);
}

/* The scan loops, once per entry width.  scan_from: data[i, len) from row
 * s.  scan_pair: two buffers in lockstep; each byte's table load depends on
 * the previous one of the same buffer only, so two independent chains
 * overlap their load latency (the scan is latency-bound once the table is
 * not in L1).  The state id for the outputs is in the row's last column. */
#define DEFINE_SCAN(W, T, TABLE, OUT)                                                            \
	static uint64_t scan_from##W(const struct ac_dfa *d, uint32_t s, const uint8_t *data,    \
		uint32_t i, uint32_t len, ac_match_fn fn, void *ctx)                             \
	{                                                                                        \
		const T *delta = d->TABLE;                                                       \
		const uint8_t *cls = d->cls;                                                     \
		uint64_t m = 0;                                                                  \
		for (; i < len; i++) {                                                           \
			uint32_t t = delta[s + cls[data[i]]];                                    \
			s = t & ~(uint32_t)(OUT);                                                \
			if (__builtin_expect(t & (OUT), 0))                                      \
				m += report(d, delta[s + d->n_classes], data, i + 1, fn, ctx);   \
		}                                                                                \
		return m;                                                                        \
	}                                                                                        \
	static void scan_pair##W(const struct ac_dfa *d, const uint8_t *a, uint32_t la,          \
		const uint8_t *b, uint32_t lb, ac_match_fn fn, void *ctx, uint64_t *ma,          \
		uint64_t *mb)                                                                    \
	{                                                                                        \
		const T *delta = d->TABLE;                                                       \
		const uint8_t *cls = d->cls;                                                     \
		uint32_t sa = 0, sb = 0, n = la < lb ? la : lb, i;                               \
		uint64_t ca = 0, cb = 0;                                                         \
		for (i = 0; i < n; i++) {                                                        \
			uint32_t ta = delta[sa + cls[a[i]]];                                     \
			uint32_t tb = delta[sb + cls[b[i]]];                                     \
			sa = ta & ~(uint32_t)(OUT);                                              \
			sb = tb & ~(uint32_t)(OUT);                                              \
			if (__builtin_expect((ta | tb) & (OUT), 0)) {                            \
				if (ta & (OUT))                                                  \
					ca += report(                                            \
						d, delta[sa + d->n_classes], a, i + 1, fn, ctx); \
				if (tb & (OUT))                                                  \
					cb += report(                                            \
						d, delta[sb + d->n_classes], b, i + 1, fn, ctx); \
			}                                                                        \
		}                                                                                \
		*ma = ca + scan_from##W(d, sa, a, i, la, fn, ctx);                               \
		*mb = cb + scan_from##W(d, sb, b, i, lb, fn, ctx);                               \
	}

DEFINE_SCAN(32, uint32_t, delta, AC_OUT)
DEFINE_SCAN(16, uint16_t, delta16, AC_OUT16)

/* Compact layout: follow failure links until a state has an edge for the
 * byte's class (the root has every class). */
static uint64_t
scan_compact(const struct ac_dfa *d, const uint8_t *data, uint32_t len, ac_match_fn fn, void *ctx)
{
	uint32_t s = 0;
	uint64_t m = 0;

	for (uint32_t i = 0; i < len; i++) {
		uint8_t c = d->cls[data[i]];
		for (;;) {
			if (s == 0) {
				s = d->c_root[c];
				break;
			}
			uint32_t j = d->c_first[s], e = d->c_first[s + 1];
			while (j < e && d->c_label[j] != c)
				j++;
			if (j < e) {
				s = d->c_next[j];
				break;
			}
			s = d->c_fail[s];
		}
		if (__builtin_expect(d->out_off[s + 1] != d->out_off[s], 0))
			m += report(d, s, data, i + 1, fn, ctx);
	}
	return m;
}

static uint64_t
report_stream(const struct ac_dfa *d, uint32_t s, const uint8_t *data, uint32_t end, ac_match_fn fn,
	void *ctx)
{
	return report_in(d, s, data, end, fn, ctx, true);
}

/* One step of the compact layout from state s on class c. */
static inline uint32_t
compact_next(const struct ac_dfa *d, uint32_t s, uint8_t c)
{
	for (;;) {
		if (s == 0)
			return d->c_root[c];
		uint32_t j = d->c_first[s], e = d->c_first[s + 1];
		while (j < e && d->c_label[j] != c)
			j++;
		if (j < e)
			return d->c_next[j];
		s = d->c_fail[s];
	}
}

uint64_t
ac_dfa_scan_stream(const struct ac_dfa *d, uint32_t *state, const uint8_t *data, uint32_t len,
	ac_match_fn fn, void *ctx)
{
	uint32_t s = *state;
	uint64_t m = 0;

	if (d->compact) {
		for (uint32_t i = 0; i < len; i++) {
			s = compact_next(d, s, d->cls[data[i]]);
			if (__builtin_expect(d->out_off[s + 1] != d->out_off[s], 0))
				m += report_stream(d, s, data, i + 1, fn, ctx);
		}
	} else if (d->delta16 != NULL) {
		for (uint32_t i = 0; i < len; i++) {
			uint32_t t = d->delta16[s + d->cls[data[i]]];
			s = t & ~(uint32_t)AC_OUT16;
			if (__builtin_expect(t & AC_OUT16, 0))
				m += report_stream(
					d, d->delta16[s + d->n_classes], data, i + 1, fn, ctx);
		}
	} else {
		for (uint32_t i = 0; i < len; i++) {
			uint32_t t = d->delta[s + d->cls[data[i]]];
			s = t & ~(uint32_t)AC_OUT;
			if (__builtin_expect(t & AC_OUT, 0))
				m += report_stream(
					d, d->delta[s + d->n_classes], data, i + 1, fn, ctx);
		}
	}
	*state = s;
	return m;
}

uint64_t
ac_dfa_scan(const struct ac_dfa *d, const uint8_t *data, uint32_t len, ac_match_fn fn, void *ctx)
{
	if (d->compact)
		return scan_compact(d, data, len, fn, ctx);
	if (d->delta16 != NULL)
		return scan_from16(d, 0, data, 0, len, fn, ctx);
	return scan_from32(d, 0, data, 0, len, fn, ctx);
}

void
ac_dfa_scan_burst(const struct ac_dfa *d, const uint8_t *const *data, const uint32_t *len,
	unsigned n, ac_match_fn fn, void *ctx, uint64_t *matches)
{
	unsigned i = 0;

	if (d->compact) {
		for (; i < n; i++)
			matches[i] = scan_compact(d, data[i], len[i], fn, ctx);
		return;
	}
	if (d->delta16 != NULL) {
		for (; i + 1 < n; i += 2)
			scan_pair16(d, data[i], len[i], data[i + 1], len[i + 1], fn, ctx,
				&matches[i], &matches[i + 1]);
	} else {
		for (; i + 1 < n; i += 2)
			scan_pair32(d, data[i], len[i], data[i + 1], len[i + 1], fn, ctx,
				&matches[i], &matches[i + 1]);
	}
	if (i < n)
		matches[i] = ac_dfa_scan(d, data[i], len[i], fn, ctx);
}

uint32_t
ac_dfa_entry_bytes(const struct ac_dfa *d)
{
	return d->compact ? 0 : d->delta16 != NULL ? 2 : 4;
}

const char *
ac_dfa_layout(const struct ac_dfa *d)
{
	return d->compact ? "compact" : "full";
}

size_t
ac_dfa_full_bytes(const struct ac_dfa *d)
{
	return full_table_bytes(d->n_states, d->row);
}

size_t
ac_dfa_size(const struct ac_dfa *d)
{
	size_t table = d->compact
		? (size_t)d->n_states * (3 * sizeof(uint32_t) + 1) + sizeof(d->c_root)
		: full_table_bytes(d->n_states, d->row);
	return table + ((size_t)d->n_states + 1) * sizeof(uint32_t) +
		(size_t)d->out_off[d->n_states] * sizeof(uint32_t) + sizeof(d->cls) +
		(size_t)d->n_kw * (2 * sizeof(uint32_t) + 1) +
		(d->n_kw ? d->kw_off[d->n_kw - 1] + d->kw_len[d->n_kw - 1] : 0);
}

uint32_t
ac_dfa_states(const struct ac_dfa *d)
{
	return d->n_states;
}

uint32_t
ac_dfa_classes(const struct ac_dfa *d)
{
	return d->n_classes;
}
