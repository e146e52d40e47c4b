/* Dispatch of the engine interface to the AC DFA or Hyperscan. */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ac_dfa.h"
#include "hs_engine.h"

/* Rules mode's Hyperscan prefilter (single_match) keeps one-byte keywords
 * out of the database: Hyperscan slows down several times with them (on
 * random payloads, the community set's fast patterns: 1.9 against 8.7 Gb/s
 * per CPU second, measured), while a byte-presence pass over the payload
 * finds them at a fraction of that cost. */
struct byte_keywords {
	uint8_t bytes[256]; /* distinct byte values with a keyword, in order */
	unsigned n_bytes;
	uint32_t start[257]; /* CSR over byte values: keyword ids of byte b */
	uint32_t *ids;
};

struct ac_engine {
	enum ac_engine_kind kind;
	struct ac_dfa *dfa;
	struct hs_engine *hs;      /* NULL when every keyword is one byte long */
	uint32_t *hs_ids;          /* hs id -> keyword id; NULL: identity */
	struct byte_keywords *one; /* NULL unless single_match Hyperscan */
};

struct ac_scratch {
	struct hs_engine_scratch *hs; /* NULL for the AC engine (stateless scan) */
};

/* Carries the caller's callback through the hs id -> keyword id map. */
struct remap {
	ac_match_fn fn;
	void *ctx;
	const uint32_t *ids;
};

static void
remap_match(void *ctx, uint32_t id, uint32_t end)
{
	const struct remap *r = ctx;
	r->fn(r->ctx, r->ids[id], end);
}

static void
byte_keywords_free(struct byte_keywords *b)
{
	if (b != NULL)
		free(b->ids);
	free(b);
}

/* Split kw: one-byte keywords into a byte table, the others (with their
 * ids) for Hyperscan.  0 or -1 (out of memory). */
static int
split_one_byte(struct ac_engine *e, const struct ac_keyword *kw, uint32_t n_kw,
	struct ac_keyword **rest, uint32_t *n_rest)
{
	struct byte_keywords *b = calloc(1, sizeof(*b));
	uint32_t count[256] = { 0 };

	*rest = calloc(n_kw ? n_kw : 1, sizeof(**rest));
	e->hs_ids = calloc(n_kw ? n_kw : 1, sizeof(*e->hs_ids));
	if (b == NULL || *rest == NULL || e->hs_ids == NULL)
		goto oom;
	*n_rest = 0;
	uint32_t n_one = 0;
	for (uint32_t k = 0; k < n_kw; k++) {
		if (kw[k].len != 1) {
			e->hs_ids[*n_rest] = k;
			(*rest)[(*n_rest)++] = kw[k];
			continue;
		}
		uint8_t c = kw[k].bytes[0];
		count[c]++;
		n_one++;
		if (kw[k].nocase && c >= 'a' && c <= 'z')
			count[c - 32]++, n_one++;
		else if (kw[k].nocase && c >= 'A' && c <= 'Z')
			count[c + 32]++, n_one++;
	}
	b->ids = calloc(n_one ? n_one : 1, sizeof(*b->ids));
	if (b->ids == NULL)
		goto oom;
	for (unsigned c = 0; c < 256; c++) {
		b->start[c + 1] = b->start[c] + count[c];
		if (count[c])
			b->bytes[b->n_bytes++] = (uint8_t)c;
	}
	uint32_t fill[256] = { 0 };
	for (uint32_t k = 0; k < n_kw; k++) {
		if (kw[k].len != 1)
			continue;
		uint8_t c = kw[k].bytes[0];
		b->ids[b->start[c] + fill[c]++] = k;
		if (kw[k].nocase && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
			uint8_t o = c ^ 0x20;
			b->ids[b->start[o] + fill[o]++] = k;
		}
	}
	e->one = b;
	return 0;
oom:
	byte_keywords_free(b);
	return -1;
}

/* Report each one-byte keyword whose byte occurs (once per scan). */
static uint64_t
scan_one_byte(
	const struct byte_keywords *b, const uint8_t *data, uint32_t len, ac_match_fn fn, void *ctx)
{
	uint8_t seen[256];
	uint64_t n = 0;

	if (b->n_bytes == 0)
		return 0;
	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 0; i < len; i++)
		seen[data[i]] = 1;
	for (unsigned j = 0; j < b->n_bytes; j++) {
		uint8_t c = b->bytes[j];
		if (!seen[c])
			continue;
		for (uint32_t k = b->start[c]; k < b->start[c + 1]; k++) {
			fn(ctx, b->ids[k], 0);
			n++;
		}
	}
	return n;
}

int
ac_engine_kind_parse(const char *name)
{
	if (strcmp(name, "ac") == 0)
		return AC_ENGINE_AC;
	if (strcmp(name, "hs") == 0)
		return AC_ENGINE_HS;
	if (strcmp(name, "hs-literal") == 0)
		return AC_ENGINE_HS_LITERAL;
	return -1;
}

const char *
ac_engine_kind_name(enum ac_engine_kind kind)
{
	return kind == AC_ENGINE_AC ? "ac" : kind == AC_ENGINE_HS ? "hs" : "hs-literal";
}

struct ac_engine *
ac_engine_build(enum ac_engine_kind kind, const struct ac_keyword *kw, uint32_t n_kw, char *err,
	size_t errlen)
{
	return ac_engine_build_opt(kind, kw, n_kw, false, 0, err, errlen);
}

struct ac_engine *
ac_engine_build_opt(enum ac_engine_kind kind, const struct ac_keyword *kw, uint32_t n_kw,
	bool single_match, size_t ac_budget, char *err, size_t errlen)
{
	struct ac_engine *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->kind = kind;
	if (kind == AC_ENGINE_AC) {
		e->dfa = ac_dfa_build_layout(kw, n_kw, ac_budget, err, errlen);
	} else if (single_match) {
		struct ac_keyword *rest = NULL;
		uint32_t n_rest = 0;
		if (split_one_byte(e, kw, n_kw, &rest, &n_rest) < 0) {
			free(rest);
			snprintf(err, errlen, "out of memory building the engine");
			ac_engine_free(e);
			return NULL;
		}
		if (n_rest > 0)
			e->hs = hs_engine_build(rest, n_rest,
				kind == AC_ENGINE_HS ? HS_COMPILE_REGEX : HS_COMPILE_LITERAL, true,
				err, errlen);
		free(rest);
		if (n_rest > 0 && e->hs == NULL) {
			ac_engine_free(e);
			return NULL;
		}
		return e;
	} else {
		e->hs = hs_engine_build(kw, n_kw,
			kind == AC_ENGINE_HS ? HS_COMPILE_REGEX : HS_COMPILE_LITERAL, false, err,
			errlen);
	}
	if (e->dfa == NULL && e->hs == NULL) {
		free(e);
		return NULL;
	}
	return e;
}

void
ac_engine_free(struct ac_engine *e)
{
	if (e == NULL)
		return;
	ac_dfa_free(e->dfa);
	hs_engine_free(e->hs);
	free(e->hs_ids);
	byte_keywords_free(e->one);
	free(e);
}

struct ac_scratch *
ac_scratch_new(const struct ac_engine *e, char *err, size_t errlen)
{
	struct ac_scratch *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	if (e->hs != NULL) {
		s->hs = hs_engine_scratch_new(e->hs, err, errlen);
		if (s->hs == NULL) {
			free(s);
			return NULL;
		}
	}
	return s;
}

void
ac_scratch_free(struct ac_scratch *s)
{
	if (s == NULL)
		return;
	hs_engine_scratch_free(s->hs);
	free(s);
}

uint64_t
ac_engine_scan(const struct ac_engine *e, struct ac_scratch *s, const uint8_t *data, uint32_t len,
	ac_match_fn fn, void *ctx)
{
	if (e->kind == AC_ENGINE_AC)
		return ac_dfa_scan(e->dfa, data, len, fn, ctx);
	if (e->one == NULL)
		return hs_engine_scan(e->hs, s->hs, data, len, fn, ctx);
	uint64_t n = scan_one_byte(e->one, data, len, fn, ctx);
	if (e->hs != NULL) {
		struct remap r = { fn, ctx, e->hs_ids };
		n += hs_engine_scan(e->hs, s->hs, data, len, remap_match, &r);
	}
	return n;
}

void
ac_engine_scan_burst(const struct ac_engine *e, struct ac_scratch *s, const uint8_t *const *data,
	const uint32_t *len, unsigned n, ac_match_fn fn, void *ctx, uint64_t *matches)
{
	if (e->kind == AC_ENGINE_AC) {
		ac_dfa_scan_burst(e->dfa, data, len, n, fn, ctx, matches);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		matches[i] = ac_engine_scan(e, s, data[i], len[i], fn, ctx);
}

uint64_t
ac_scratch_errors(const struct ac_scratch *s, int *last_error)
{
	if (s->hs == NULL) {
		if (last_error != NULL)
			*last_error = 0;
		return 0;
	}
	return hs_engine_scan_errors(s->hs, last_error);
}

size_t
ac_engine_size(const struct ac_engine *e)
{
	if (e->kind == AC_ENGINE_AC)
		return ac_dfa_size(e->dfa);
	return (e->hs ? hs_engine_size(e->hs) : 0) + (e->one ? sizeof(*e->one) : 0);
}

uint32_t
ac_engine_states(const struct ac_engine *e)
{
	return e->kind == AC_ENGINE_AC ? ac_dfa_states(e->dfa) : 0;
}

uint32_t
ac_engine_classes(const struct ac_engine *e)
{
	return e->kind == AC_ENGINE_AC ? ac_dfa_classes(e->dfa) : 0;
}

uint32_t
ac_engine_entry_bytes(const struct ac_engine *e)
{
	return e->kind == AC_ENGINE_AC ? ac_dfa_entry_bytes(e->dfa) : 0;
}

const char *
ac_engine_layout(const struct ac_engine *e)
{
	return e->kind == AC_ENGINE_AC ? ac_dfa_layout(e->dfa) : "";
}

size_t
ac_engine_full_bytes(const struct ac_engine *e)
{
	return e->kind == AC_ENGINE_AC ? ac_dfa_full_bytes(e->dfa) : 0;
}
