/* Hyperscan literal matcher: every keyword compiled with
 * hs_compile_lit_multi (bytes taken literally, HS_FLAG_CASELESS for nocase),
 * block mode, end offsets only (no start-of-match tracking needed). */
#ifndef AC_HS_ENGINE_H
#define AC_HS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

struct hs_engine;
struct hs_engine_scratch;

struct hs_engine *hs_engine_build(const struct ac_keyword *kw, uint32_t n_kw,
				  char *err, size_t errlen);
void hs_engine_free(struct hs_engine *h);
struct hs_engine_scratch *hs_engine_scratch_new(const struct hs_engine *h,
						char *err, size_t errlen);
void hs_engine_scratch_free(struct hs_engine_scratch *s);
uint64_t hs_engine_scan(const struct hs_engine *h, struct hs_engine_scratch *s,
			const uint8_t *data, uint32_t len, ac_match_fn fn,
			void *ctx);
size_t hs_engine_size(const struct hs_engine *h);

#endif /* AC_HS_ENGINE_H */
