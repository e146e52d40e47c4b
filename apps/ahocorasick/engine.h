/* One interface over the two multi-keyword matchers.
 *
 * Both report every (keyword index, end offset) pair: keyword k of the set
 * the engine was built from occurs in data[end - len_k, end).  Every
 * occurrence is reported, overlapping ones included, each exactly once. */
#ifndef AC_ENGINE_H
#define AC_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keyword_set.h"

enum ac_engine_kind {
	AC_ENGINE_AC,         /* classic Aho-Corasick DFA (the paper's) */
	AC_ENGINE_HS,         /* Hyperscan, block mode, keywords as escaped patterns */
	AC_ENGINE_HS_LITERAL, /* Hyperscan through hs_compile_lit_multi (see hs_engine.h) */
};

struct ac_engine;
struct ac_scratch; /* per-thread scan state; never shared between lcores */

typedef void (*ac_match_fn)(void *ctx, uint32_t keyword, uint32_t end);

/* "ac" / "hs" / "hs-literal" -> kind; -1 if unknown. */
int ac_engine_kind_parse(const char *name);
const char *ac_engine_kind_name(enum ac_engine_kind kind);

struct ac_engine *ac_engine_build(enum ac_engine_kind kind, const struct ac_keyword *kw,
	uint32_t n_kw, char *err, size_t errlen);
/* single_match (rules mode's prefilter): report each keyword at most once
 * per scan where the engine can (Hyperscan's HS_FLAG_SINGLEMATCH); the AC
 * automaton reports every occurrence regardless (rules mode dedupes with a
 * bitmap). */
/* ac_budget: the AC engine builds its compact layout when the full table
 * would exceed this many bytes (ac_dfa.h); 0: always the full table. */
struct ac_engine *ac_engine_build_opt(enum ac_engine_kind kind, const struct ac_keyword *kw,
	uint32_t n_kw, bool single_match, size_t ac_budget, char *err, size_t errlen);
void ac_engine_free(struct ac_engine *e);
struct ac_scratch *ac_scratch_new(const struct ac_engine *e, char *err, size_t errlen);
void ac_scratch_free(struct ac_scratch *s);

/* Scan len bytes; calls fn for each match; returns the number of matches.
 * No allocation, no locking. */
uint64_t ac_engine_scan(const struct ac_engine *e, struct ac_scratch *s, const uint8_t *data,
	uint32_t len, ac_match_fn fn, void *ctx);

/* Scan n buffers (a burst's payloads); matches[i] = matches in buffer i.
 * Same matches as n ac_engine_scan calls; the AC engine interleaves two
 * buffers at a time to overlap table-load latency. */
void ac_engine_scan_burst(const struct ac_engine *e, struct ac_scratch *s,
	const uint8_t *const *data, const uint32_t *len, unsigned n, ac_match_fn fn, void *ctx,
	uint64_t *matches);

/* Streaming (rules mode's TCP reassembly): the matcher's state between
 * the chunks of one byte stream, ac_engine_stream_bytes(e) bytes (8-byte
 * aligned) the caller keeps per stream: the automaton's state for ac, a
 * compressed Hyperscan stream (hs_engine.h) for hs.  Enable before the
 * scratches are made.  A keyword across chunks is found; end offsets are
 * relative to the chunk (smaller than the keyword's length when it began
 * in an earlier chunk).  The ac engine reports a case-sensitive keyword
 * that began in an earlier chunk without comparing its bytes: a candidate
 * the caller checks; Hyperscan compares them.  0, or -1 with err. */
int ac_engine_enable_stream(
	struct ac_engine *e, const struct ac_keyword *kw, uint32_t n_kw, char *err, size_t errlen);
size_t ac_engine_stream_bytes(const struct ac_engine *e);
void ac_engine_stream_init(const struct ac_engine *e, void *state);
uint64_t ac_engine_scan_stream(const struct ac_engine *e, struct ac_scratch *s, void *state,
	const uint8_t *data, uint32_t len, ac_match_fn fn, void *ctx);

/* Scans on this scratch that failed and stopped early (Hyperscan errors;
 * always 0 for AC), and the last error code. */
uint64_t ac_scratch_errors(const struct ac_scratch *s, int *last_error);

/* Bytes of the compiled matcher (for the README and the stats). */
size_t ac_engine_size(const struct ac_engine *e);
/* AC only: states and input classes (0 for Hyperscan). */
uint32_t ac_engine_states(const struct ac_engine *e);
uint32_t ac_engine_classes(const struct ac_engine *e);
/* AC only: bytes per transition entry, 2 or 4 (0 for Hyperscan and the
 * compact layout). */
uint32_t ac_engine_entry_bytes(const struct ac_engine *e);
/* AC only: "full" or "compact", and what the full table takes. */
const char *ac_engine_layout(const struct ac_engine *e);
size_t ac_engine_full_bytes(const struct ac_engine *e);

#endif /* AC_ENGINE_H */
