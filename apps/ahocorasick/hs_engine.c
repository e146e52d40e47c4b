/* Hyperscan behind the engine interface (see hs_engine.h). */
#include "hs_engine.h"
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <hs/hs.h>

struct hs_engine {
	hs_database_t *db;
};

struct hs_engine_scratch {
	hs_scratch_t *scratch;
	uint64_t errors; /* hs_scan calls that failed */
	int last_error;
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

struct hs_engine *
hs_engine_build(const struct ac_keyword *kw, uint32_t n_kw, enum hs_compile_mode mode,
	bool single_match, char *err, size_t errlen)
{
	struct hs_engine *h = calloc(1, sizeof(*h));
	const char **expr = calloc(n_kw ? n_kw : 1, sizeof(*expr));
	unsigned *flags = malloc((n_kw ? n_kw : 1) * sizeof(*flags));
	unsigned *ids = malloc((n_kw ? n_kw : 1) * sizeof(*ids));
	size_t *lens = malloc((n_kw ? n_kw : 1) * sizeof(*lens));
	hs_compile_error_t *cerr = NULL;
	hs_error_t rc;

	if (h == NULL || expr == NULL || flags == NULL || ids == NULL || lens == NULL) {
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
		rc = hs_compile_lit_multi(
			expr, flags, ids, lens, n_kw, HS_MODE_BLOCK, NULL, &h->db, &cerr);
	else
		rc = hs_compile_multi(expr, flags, ids, n_kw, HS_MODE_BLOCK, NULL, &h->db, &cerr);
	if (rc != HS_SUCCESS) {
		ac_set_err(err, errlen, "Hyperscan rejected keyword %d: %s",
			cerr ? cerr->expression : -1, cerr ? cerr->message : "unknown error");
		hs_free_compile_error(cerr);
		goto fail;
	}
	goto done;
fail:
	hs_engine_free(h);
	h = NULL;
done:
	for (uint32_t k = 0; mode == HS_COMPILE_REGEX && expr != NULL && k < n_kw; k++)
		free((char *)expr[k]);
	free(expr);
	free(flags);
	free(ids);
	free(lens);
	return h;
}

void
hs_engine_free(struct hs_engine *h)
{
	if (h == NULL)
		return;
	hs_free_database(h->db);
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
	if (hs_alloc_scratch(h->db, &s->scratch) != HS_SUCCESS) {
		ac_set_err(err, errlen, "hs_alloc_scratch failed");
		free(s);
		return NULL;
	}
	return s;
}

void
hs_engine_scratch_free(struct hs_engine_scratch *s)
{
	if (s == NULL)
		return;
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
