/* Dispatch of the engine interface to the AC DFA or Hyperscan. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "ac_dfa.h"
#include "hs_engine.h"

struct ac_engine {
	enum ac_engine_kind kind;
	struct ac_dfa *dfa;
	struct hs_engine *hs;
};

struct ac_scratch {
	struct hs_engine_scratch *hs; /* NULL for the AC engine (stateless scan) */
};

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
	if (kind == AC_ENGINE_AC)
		e->dfa = ac_dfa_build_layout(kw, n_kw, ac_budget, err, errlen);
	else
		e->hs = hs_engine_build(kw, n_kw,
			kind == AC_ENGINE_HS ? HS_COMPILE_REGEX : HS_COMPILE_LITERAL, single_match,
			err, errlen);
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
	free(e);
}

struct ac_scratch *
ac_scratch_new(const struct ac_engine *e, char *err, size_t errlen)
{
	struct ac_scratch *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	if (e->kind != AC_ENGINE_AC) {
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
	return hs_engine_scan(e->hs, s->hs, data, len, fn, ctx);
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
		matches[i] = hs_engine_scan(e->hs, s->hs, data[i], len[i], fn, ctx);
}

int
ac_engine_enable_stream(
	struct ac_engine *e, const struct ac_keyword *kw, uint32_t n_kw, char *err, size_t errlen)
{
	if (e->kind == AC_ENGINE_AC)
		return 0;
	return hs_engine_enable_stream(e->hs, kw, n_kw,
		e->kind == AC_ENGINE_HS ? HS_COMPILE_REGEX : HS_COMPILE_LITERAL, err, errlen);
}

size_t
ac_engine_stream_bytes(const struct ac_engine *e)
{
	return e->kind == AC_ENGINE_AC ? 8 : (hs_engine_stream_bytes(e->hs) + 7) & ~(size_t)7;
}

void
ac_engine_stream_init(const struct ac_engine *e, void *state)
{
	if (e->kind == AC_ENGINE_AC)
		*(uint32_t *)state = 0;
	else
		hs_engine_stream_init(state);
}

uint64_t
ac_engine_scan_stream(const struct ac_engine *e, struct ac_scratch *s, void *state,
	const uint8_t *data, uint32_t len, ac_match_fn fn, void *ctx)
{
	if (e->kind == AC_ENGINE_AC)
		return ac_dfa_scan_stream(e->dfa, (uint32_t *)state, data, len, fn, ctx);
	return hs_engine_scan_stream(e->hs, s->hs, state, data, len, fn, ctx);
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
	return e->kind == AC_ENGINE_AC ? ac_dfa_size(e->dfa) : hs_engine_size(e->hs);
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
