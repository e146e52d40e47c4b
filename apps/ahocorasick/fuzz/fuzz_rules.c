/* libFuzzer target: the Snort rule line parser, and a keyword set built
 * from whatever it accepts fed to both engines on the input itself (the
 * engines must agree on every match count). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "keyword_set.h"

static void
count(void *ctx, uint32_t kw, uint32_t end)
{
	(void)kw;
	(void)end;
	(*(uint64_t *)ctx)++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ac_rule r;
	char err[256];

	if (ac_rule_parse_line((const char *)data, size, &r, err, sizeof(err)) != AC_LINE_RULE)
		return 0;
	struct ac_keyword kw[16];
	uint32_t n = 0;
	for (unsigned i = 0; i < r.n_contents && n < 16; i++) {
		const struct ac_content *c = &r.contents[i];
		if (c->len == 0)
			abort(); /* the parser promises non-empty contents */
		int dup = 0;
		for (uint32_t j = 0; j < n; j++)
			dup |= kw[j].len == c->len && kw[j].nocase == c->nocase &&
				memcmp(kw[j].bytes, c->bytes, c->len) == 0;
		if (!dup)
			kw[n++] = (struct ac_keyword){ c->bytes, c->len, c->nocase, NULL, 0 };
	}
	if (n > 0) {
		struct ac_engine *a = ac_engine_build(AC_ENGINE_AC, kw, n, err, sizeof(err));
		struct ac_engine *h = ac_engine_build(AC_ENGINE_HS, kw, n, err, sizeof(err));
		if (a == NULL || h == NULL)
			abort();
		struct ac_scratch *sa = ac_scratch_new(a, err, sizeof(err));
		struct ac_scratch *sh = ac_scratch_new(h, err, sizeof(err));
		uint64_t ma = 0, mh = 0;
		ac_engine_scan(a, sa, data, (uint32_t)size, count, &ma);
		ac_engine_scan(h, sh, data, (uint32_t)size, count, &mh);
		if (ma != mh || ac_scratch_errors(sh, NULL) != 0)
			abort();
		ac_scratch_free(sa);
		ac_scratch_free(sh);
		ac_engine_free(a);
		ac_engine_free(h);
	}
	ac_rule_free(&r);
	return 0;
}
