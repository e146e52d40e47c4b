/* Classic Aho-Corasick automaton as a full DFA (failure links folded into
 * the transition table), over a compressed, case-folded input alphabet.
 *
 * Case: the automaton is built from every keyword folded to lower case
 * (ASCII), so one pass finds every candidate occurrence of both nocase and
 * case-sensitive keywords; a case-sensitive keyword is reported only after
 * its exact bytes are compared at the candidate end offset.  This keeps one
 * table and one pass per payload (two automata would cost two passes and
 * twice the cache; expanding nocase keywords into all case variants is
 * exponential in their letters).  The compare happens only on candidate
 * matches, which are rare next to the bytes scanned.
 *
 * Layout: input bytes map to classes (bytes no keyword uses share one
 * class, upper and lower case letters share one), so a row is n_classes
 * 32-bit entries instead of 256.  Entries hold the next state's row offset
 * (state * (n_classes + 1), so the scan loop does no multiply) with bit 31
 * set when that state has outputs, so the loop tests one bit per byte; the
 * extra last column of each row holds the state's id, which the match path
 * uses to find the state's outputs without a division.  When every row
 * offset fits 15 bits (the DoS set: 450 states x 72 entries) the entries
 * are 16-bit (flag in bit 15): half the footprint, the same loop. */
#ifndef AC_DFA_H
#define AC_DFA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

struct ac_dfa;

struct ac_dfa *ac_dfa_build(const struct ac_keyword *kw, uint32_t n_kw, char *err, size_t errlen);
/* budget: when the full table would take more bytes than this, build the
 * compact layout instead: the trie's edges (a class and a next state each,
 * children of a state contiguous) with failure links, followed at scan
 * time until a state has an edge for the byte (the root's row is full);
 * the same matches, about 13 bytes per state instead of a row.  0: always
 * full. */
struct ac_dfa *ac_dfa_build_layout(
	const struct ac_keyword *kw, uint32_t n_kw, size_t budget, char *err, size_t errlen);
/* "full" or "compact", and the full table's bytes (either layout). */
const char *ac_dfa_layout(const struct ac_dfa *d);
size_t ac_dfa_full_bytes(const struct ac_dfa *d);
void ac_dfa_free(struct ac_dfa *d);
uint64_t ac_dfa_scan(
	const struct ac_dfa *d, const uint8_t *data, uint32_t len, ac_match_fn fn, void *ctx);
/* Streaming: *state (0 at a stream's start) carries the automaton across
 * chunks of one stream; end offsets are relative to this chunk's data.  A
 * case-sensitive keyword that began in an earlier chunk is reported
 * without comparing its bytes (a candidate; the verifier decides). */
uint64_t ac_dfa_scan_stream(const struct ac_dfa *d, uint32_t *state, const uint8_t *data,
	uint32_t len, ac_match_fn fn, void *ctx);
/* n buffers, scanned two at a time in lockstep; matches[i] per buffer. */
void ac_dfa_scan_burst(const struct ac_dfa *d, const uint8_t *const *data, const uint32_t *len,
	unsigned n, ac_match_fn fn, void *ctx, uint64_t *matches);
size_t ac_dfa_size(const struct ac_dfa *d);
uint32_t ac_dfa_states(const struct ac_dfa *d);
uint32_t ac_dfa_classes(const struct ac_dfa *d);
/* Bytes per transition-table entry: 2 or 4 (0: compact layout). */
uint32_t ac_dfa_entry_bytes(const struct ac_dfa *d);

#endif /* AC_DFA_H */
