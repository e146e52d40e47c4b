/* Hyperscan keyword matcher: block mode, HS_FLAG_CASELESS for nocase
 * keywords, end offsets only (no start-of-match tracking needed).
 *
 * Two ways to compile the same keywords:
 *   HS_COMPILE_REGEX (default): each keyword as a pattern of \xHH escapes,
 *     through hs_compile_multi;
 *   HS_COMPILE_LITERAL: the bytes through hs_compile_lit_multi.
 * The literal API is the natural one, but Hyperscan 5.4.0 (Debian 12) makes
 * hs_scan fail with HS_UNKNOWN_ERROR on some sets of long literals (found by
 * the rule-parser fuzzer; tests/data/hs_literal_scan_error.rules reproduces
 * it), after reporting only part of the matches.  The escaped patterns
 * describe exactly the same byte strings and do not hit that path. */
#ifndef AC_HS_ENGINE_H
#define AC_HS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

struct hs_engine;
struct hs_engine_scratch;

enum hs_compile_mode {
	HS_COMPILE_REGEX,
	HS_COMPILE_LITERAL
};

struct hs_engine *hs_engine_build(const struct ac_keyword *kw, uint32_t n_kw,
	enum hs_compile_mode mode, bool single_match, char *err, size_t errlen);
void hs_engine_free(struct hs_engine *h);
struct hs_engine_scratch *hs_engine_scratch_new(
	const struct hs_engine *h, char *err, size_t errlen);
void hs_engine_scratch_free(struct hs_engine_scratch *s);
uint64_t hs_engine_scan(const struct hs_engine *h, struct hs_engine_scratch *s, const uint8_t *data,
	uint32_t len, ac_match_fn fn, void *ctx);
size_t hs_engine_size(const struct hs_engine *h);
/* Streaming mode beside block mode (rules mode's reassembly): a second
 * database of the same keywords (no single-match flag).  Scratches made
 * afterwards serve both.  0, or -1 with err. */
int hs_engine_enable_stream(struct hs_engine *h, const struct ac_keyword *kw, uint32_t n_kw,
	enum hs_compile_mode mode, char *err, size_t errlen);
/* Bytes of a stream's state kept by the caller (0: streaming not enabled):
 * hs_compress_stream's form, expanded into the scratch's one working
 * stream for each chunk and compressed back, so no stream is allocated
 * per flow. */
size_t hs_engine_stream_bytes(const struct hs_engine *h);
void hs_engine_stream_init(void *state);
uint64_t hs_engine_scan_stream(const struct hs_engine *h, struct hs_engine_scratch *s, void *state,
	const uint8_t *data, uint32_t len, ac_match_fn fn, void *ctx);
/* Failed hs_scan calls on this scratch, and the last error code. */
uint64_t hs_engine_scan_errors(const struct hs_engine_scratch *s, int *last);

#endif /* AC_HS_ENGINE_H */
