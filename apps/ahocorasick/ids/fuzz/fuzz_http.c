/* libFuzzer target: the HTTP parser and the byte_* evaluators of rules mode.
 * The input is an option line ("byte_test:2,>,1,0,relative", "byte_jump:
 * ...", "byte_extract:...", "isdataat:..."), a newline, then a payload.
 * The payload's HTTP buffers are parsed as TCP and as UDP and its URI
 * normalised: every buffer must lie inside the payload, or in the scratch
 * when it is marked as not a slice of it, and be no longer than the
 * payload.  The option is parsed and, when valid, evaluated on every
 * present buffer from several cursors: a cursor it moves must stay within
 * the buffer.  A crash, a sanitizer report or a broken bound fails. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_parse.h"
#include "rule_options.h"

static void
check_buffers(const struct ac_http *h, const uint8_t *pl, uint32_t len, const uint8_t *scratch)
{
	for (int b = 0; b < AC_BUF_N; b++) {
		const struct ac_span *s = &h->buf[b];
		if (!s->present)
			continue;
		if (s->len > len)
			abort();
		bool in_payload = s->len == 0 || (s->p >= pl && s->p + s->len <= pl + len);
		bool in_scratch =
			s->p >= scratch && s->p + s->len <= scratch + AC_HTTP_SCRATCH(len);
		if (!in_payload && !((h->not_slices >> b & 1) && in_scratch))
			abort();
	}
	if (!h->buf[AC_BUF_PKT].present || h->buf[AC_BUF_PKT].len != len)
		abort();
}

static void
evaluate(const struct ac_byteop *op, const struct ac_span *s, const uint32_t *vars)
{
	int64_t bases[3] = { 0, s->len / 2, s->len };
	for (int i = 0; i < 3; i++) {
		int64_t c = -1;
		uint32_t v;
		switch (op->kind) {
		case AC_BOP_TEST:
			(void)ac_byte_test(op, s->p, s->len, bases[i], vars);
			break;
		case AC_BOP_JUMP:
			if (ac_byte_jump(op, s->p, s->len, bases[i], vars, &c) &&
				(c < 0 || c > (int64_t)s->len))
				abort();
			break;
		case AC_BOP_EXTRACT:
			if (ac_byte_extract(op, s->p, s->len, bases[i], vars, &v, &c) &&
				(c < 0 || c > (int64_t)s->len))
				abort();
			break;
		default:
			(void)ac_isdataat(op, s->len, bases[i], vars);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const kinds[] = {
		"byte_test:", "byte_jump:", "byte_extract:", "isdataat:"
	};
	const uint8_t *nl = memchr(data, '\n', size);
	size_t ll = nl ? (size_t)(nl - data) : 0;
	const uint8_t *pl = nl ? nl + 1 : data;
	uint32_t len = (uint32_t)(size - (size_t)(pl - data));
	uint8_t *scratch = malloc(AC_HTTP_SCRATCH(len));
	uint8_t *copy = malloc(len + 1); /* the payload alone, so that ASan sees its end */
	struct ac_http h;

	if (scratch == NULL || copy == NULL)
		abort();
	memcpy(copy, pl, len);
	for (int tcp = 0; tcp < 2; tcp++) {
		ac_http_parse(copy, len, tcp, scratch, &h);
		check_buffers(&h, copy, len, scratch);
	}
	uint8_t *out = malloc(len + 1), *tmp = malloc(6 * (size_t)len + 16);
	if (out == NULL || tmp == NULL)
		abort();
	if (ac_uri_normalize(copy, len, out, tmp) > len)
		abort();
	free(out);
	free(tmp);

	ac_http_parse(copy, len, true, scratch, &h);
	for (int k = 0; k < 4; k++) {
		size_t kl = strlen(kinds[k]);
		if (ll < kl || memcmp(data, kinds[k], kl) != 0)
			continue;
		char names[AC_MAX_VARS][32] = { "a", "b" };
		unsigned n_names = 2;
		char why[64], err[256];
		struct ac_byteop op;
		if (ac_byteop_parse((enum ac_byteop_kind)k, (const char *)data + kl, ll - kl, &op,
			    names, &n_names, why, sizeof(why), err, sizeof(err)) != 0)
			break;
		if (n_names > AC_MAX_VARS || (op.kind == AC_BOP_EXTRACT && op.var >= (int)n_names))
			abort();
		/* variables from the payload's first bytes: any value */
		uint32_t vars[AC_MAX_VARS] = { 0 };
		for (uint32_t i = 0; i < len && i < 4 * AC_MAX_VARS; i++)
			vars[i / 4] = vars[i / 4] << 8 | copy[i];
		for (int b = 0; b < AC_BUF_N; b++)
			if (h.buf[b].present)
				evaluate(&op, &h.buf[b], vars);
		break;
	}
	free(copy);
	free(scratch);
	return 0;
}
