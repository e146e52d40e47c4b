/* Hyperscan behind the engine interface (see hs_engine.h). */
#include "hs_engine.h"
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <hs/hs.h>

struct hs_engine {
	hs_database_t *db;
	hs_database_t *sdb; /* streaming mode, NULL unless asked for */
	size_t state_max;   /* bytes of a compressed stream */
};

struct hs_engine_scratch {
	hs_scratch_t *scratch;
	hs_stream_t *work; /* a stream expanded from, and compressed back to, each caller's state */
	uint64_t errors;   /* hs_scan calls that failed */
	int last_error;
};

/* A stream's state as the caller keeps it: the stream offset (to make end
 * offsets chunk-relative), then hs_compress_stream's bytes. */
struct hs_state {
	uint64_t offset;
	uint32_t len; /* compressed bytes; 0: a fresh stream */
	uint8_t bytes[];
};

/* Carries the caller's callback through hs_scan's. */
struct hs_adapter {
	ac_match_fn fn;
	void *ctx;
	uint64_t matches;
};

/* Keyword bytes as a Hyperscan pattern: every byte escaped (\xHH), so the
 * pattern is the literal whatever the bytes are. */
static char *
escape_literal(const uint8_t *b, uint32_t len)
{
	static const char hex[] = "0123456789abcdef";
	char *p = malloc((size_t)len * 4 + 1);

	if (p == NULL)
		return NULL;
	for (uint32_t i = 0; i < len; i++) {
		p[4 * i] = '\\';
		p[4 * i + 1] = 'x';
		p[4 * i + 2] = hex[b[i] >> 4];
		p[4 * i + 3] = hex[b[i] & 15];
	}
	p[(size_t)len * 4] = '\0';
	return p;
}

static hs_database_t *compile_db(const struct ac_keyword *kw, uint32_t n_kw,
	enum hs_compile_mode mode, bool single_match, unsigned hs_mode, char *err, size_t errlen);

struct hs_engine *
hs_engine_build(const struct ac_keyword *kw, uint32_t n_kw, enum hs_compile_mode mode,
	bool single_match, char *err, size_t errlen)
{
	struct hs_engine *h = calloc(1, sizeof(*h));
	if (h == NULL) {
		ac_set_err(err, errlen, "out of memory building the Hyperscan database");
		return NULL;
	}
	h->db = compile_db(kw, n_kw, mode, single_match, HS_MODE_BLOCK, err, errlen);
	if (h->db == NULL) {
		free(h);
		return NULL;
	}
	return h;
}

int
hs_engine_enable_stream(struct hs_engine *h, const struct ac_keyword *kw, uint32_t n_kw,
	enum hs_compile_mode mode, char *err, size_t errlen)
{
	h->sdb = compile_db(kw, n_kw, mode, false, HS_MODE_STREAM, err, errlen);
	if (h->sdb == NULL)
		return -1;
	size_t ss = 0;
	hs_stream_size(h->sdb, &ss);
	/* hs_compress_stream's output is never above the stream's size plus
	 * its own header; measured, the compressed state is about half. */
	h->state_max = ss + 64;
	return 0;
}

static hs_database_t *
compile_db(const struct ac_keyword *kw, uint32_t n_kw, enum hs_compile_mode mode, bool single_match,
	unsigned hs_mode, char *err, size_t errlen)
{
	hs_database_t *db = NULL;
	const char **expr = calloc(n_kw ? n_kw : 1, sizeof(*expr));
	unsigned *flags = malloc((n_kw ? n_kw : 1) * sizeof(*flags));
	unsigned *ids = malloc((n_kw ? n_kw : 1) * sizeof(*ids));
	size_t *lens = malloc((n_kw ? n_kw : 1) * sizeof(*lens));
	hs_compile_error_t *cerr = NULL;
	hs_error_t rc;

	if (expr == NULL || flags == NULL || ids == NULL || lens == NULL) {
		ac_set_err(err, errlen, "out of memory building the Hyperscan database");
		goto fail;
	}
	if (n_kw == 0) {
		ac_set_err(err, errlen, "no keyword to build a Hyperscan database from");
		goto fail;
	}
	for (uint32_t k = 0; k < n_kw; k++) {
		if (mode == HS_COMPILE_LITERAL) {
			expr[k] = (const char *)kw[k].bytes;
		} else if ((expr[k] = escape_literal(kw[k].bytes, kw[k].len)) == NULL) {
			ac_set_err(err, errlen, "out of memory building the Hyperscan database");
			goto fail;
		}
		lens[k] = kw[k].len;
		flags[k] = (kw[k].nocase ? HS_FLAG_CASELESS : 0) |
			(single_match ? HS_FLAG_SINGLEMATCH : 0);
		ids[k] = k;
	}
	if (mode == HS_COMPILE_LITERAL)
		rc = hs_compile_lit_multi(expr, flags, ids, lens, n_kw, hs_mode, NULL, &db, &cerr);
	else
		rc = hs_compile_multi(expr, flags, ids, n_kw, hs_mode, NULL, &db, &cerr);
	if (rc != HS_SUCCESS) {
		ac_set_err(err, errlen, "Hyperscan rejected keyword %d: %s",
			cerr ? cerr->expression : -1, cerr ? cerr->message : "unknown error");
		hs_free_compile_error(cerr);
		goto fail;
	}
	goto done;
fail:
	db = NULL;
done:
	for (uint32_t k = 0; mode == HS_COMPILE_REGEX && expr != NULL && k < n_kw; k++)
		free((char *)expr[k]);
	free(expr);
	free(flags);
	free(ids);
	free(lens);
	return db;
}

void
hs_engine_free(struct hs_engine *h)
{
	if (h == NULL)
		return;
	hs_free_database(h->db);
	hs_free_database(h->sdb);
	free(h);
}

struct hs_engine_scratch *
hs_engine_scratch_new(const struct hs_engine *h, char *err, size_t errlen)
{
	struct hs_engine_scratch *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		ac_set_err(err, errlen, "out of memory for Hyperscan scratch");
		return NULL;
	}
	if (hs_alloc_scratch(h->db, &s->scratch) != HS_SUCCESS ||
		(h->sdb != NULL &&
			(hs_alloc_scratch(h->sdb, &s->scratch) != HS_SUCCESS ||
				hs_open_stream(h->sdb, 0, &s->work) != HS_SUCCESS))) {
		ac_set_err(err, errlen, "hs_alloc_scratch failed");
		hs_engine_scratch_free(s);
		return NULL;
	}
	return s;
}

void
hs_engine_scratch_free(struct hs_engine_scratch *s)
{
	if (s == NULL)
		return;
	if (s->work != NULL)
		hs_close_stream(s->work, s->scratch, NULL, NULL);
	hs_free_scratch(s->scratch);
	free(s);
}

static int
on_match(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void *ctx)
{
	struct hs_adapter *a = ctx;

	(void)from;
	(void)flags;
	a->fn(a->ctx, id, (uint32_t)to);
	a->matches++;
	return 0;
}

uint64_t
hs_engine_scan(const struct hs_engine *h, struct hs_engine_scratch *s, const uint8_t *data,
	uint32_t len, ac_match_fn fn, void *ctx)
{
	struct hs_adapter a = { fn, ctx, 0 };
	static const uint8_t empty[1];

	hs_error_t rc = hs_scan(
		h->db, (const char *)(len ? data : empty), len, 0, s->scratch, on_match, &a);
	if (__builtin_expect(rc != HS_SUCCESS, 0)) {
		/* The scan stopped early: counted, so that short match
		 * counts are never silent. */
		s->errors++;
		s->last_error = rc;
	}
	return a.matches;
}

size_t
hs_engine_stream_bytes(const struct hs_engine *h)
{
	return h->sdb ? sizeof(struct hs_state) + h->state_max : 0;
}

void
hs_engine_stream_init(void *state)
{
	struct hs_state *st = state;
	st->offset = 0;
	st->len = 0;
}

/* Relative end offsets for the caller. */
struct hs_stream_adapter {
	ac_match_fn fn;
	void *ctx;
	uint64_t base, matches;
};

static int
on_stream_match(
	unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void *ctx)
{
	struct hs_stream_adapter *a = ctx;

	(void)from;
	(void)flags;
	a->fn(a->ctx, id, (uint32_t)(to - a->base));
	a->matches++;
	return 0;
}

uint64_t
hs_engine_scan_stream(const struct hs_engine *h, struct hs_engine_scratch *s, void *state,
	const uint8_t *data, uint32_t len, ac_match_fn fn, void *ctx)
{
	struct hs_state *st = state;
	struct hs_stream_adapter a = { fn, ctx, st->offset, 0 };
	hs_error_t rc;

	if (len == 0)
		return 0;
	if (st->len == 0)
		rc = hs_reset_stream(s->work, 0, s->scratch, NULL, NULL);
	else
		rc = hs_reset_and_expand_stream(
			s->work, (const char *)st->bytes, st->len, s->scratch, NULL, NULL);
	if (rc == HS_SUCCESS)
		rc = hs_scan_stream(
			s->work, (const char *)data, len, 0, s->scratch, on_stream_match, &a);
	size_t used = 0;
	if (rc == HS_SUCCESS)
		rc = hs_compress_stream(s->work, (char *)st->bytes, h->state_max, &used);
	st->offset += len;
	if (__builtin_expect(rc != HS_SUCCESS, 0)) {
		/* The stream starts afresh: a keyword across this point may
		 * be missed, and the failure is counted. */
		s->errors++;
		s->last_error = rc;
		st->len = 0;
		return a.matches;
	}
	st->len = (uint32_t)used;
	return a.matches;
}

uint64_t
hs_engine_scan_errors(const struct hs_engine_scratch *s, int *last)
{
	if (last != NULL)
		*last = s->last_error;
	return s->errors;
}

size_t
hs_engine_size(const struct hs_engine *h)
{
	size_t sz = 0;

	if (hs_database_size(h->db, &sz) != HS_SUCCESS)
		return 0;
	return sz;
}
