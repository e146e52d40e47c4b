/* Target-based overlap resolution, shared by IP defragmentation (defrag.h)
 * and TCP reassembly (stream.h): when a new fragment or segment overlaps
 * data already held, whose bytes does the target keep?  The policies are
 * Snort's (frag3 for fragments, stream for segments), named after the
 * stacks Novak and Sturges measured ("Target-Based Fragmentation
 * Reassembly", 2005; "Target-Based TCP Stream Reassembly", 2007):
 *
 * Held data is a sorted list of pieces, each the surviving part of one
 * fragment or segment.  A new one N = [ns, ne) meets a held piece E = [es, ee):
 *  - E starts before N (left overlap):      fragments: N wins for last only;
 *    segments: N wins for last, and for solaris unless E covers N's end;
 *  - E starts inside N and ends after it (right, partial):
 *    fragments: N wins for last and linux, for bsd unless es == ns;
 *    segments: N wins for last, for linux, bsd, windows unless es == ns;
 *  - E lies inside N (full):
 *    fragments: N wins for last and linux; for windows when ns < es and
 *    ne > ee; for bsd and solaris when ns < es and ne >= ee;
 *    segments: N wins for last; for linux when ns < es and ne >= ee, or
 *    ns == es and ne > ee; for bsd and windows when ns < es and ne >= ee;
 *    for solaris unless it repeats E exactly (same start and end) after a
 *    hole;
 *  - first keeps the held data everywhere.
 * ns is the start of N's bytes still being placed: after E wins a stretch,
 * N's next stretch starts where E ends.  The published Sturges-Novak
 * fragment tests give these results for each policy (tests/test_defrag.c). */
#ifndef IDS_OVERLAP_H
#define IDS_OVERLAP_H

#include <stdbool.h>
#include <stdint.h>

enum ids_policy {
	IDS_POLICY_FIRST,
	IDS_POLICY_LAST,
	IDS_POLICY_BSD,
	IDS_POLICY_LINUX,
	IDS_POLICY_WINDOWS,
	IDS_POLICY_SOLARIS,
	IDS_POLICY_N,
};
#define IDS_POLICY_DEFAULT IDS_POLICY_LINUX

extern const char *const ids_policy_name[IDS_POLICY_N];
/* "first", "last", ...; -1 if unknown. */
int ids_policy_parse(const char *name);

enum ids_overlap_model {
	IDS_OVERLAP_FRAG,
	IDS_OVERLAP_TCP,
};

struct ids_piece {
	uint32_t s, e; /* [s, e) */
};

/* Place N = [ns, ne) among the n held pieces (sorted, disjoint; cap at
 * most): pieces N wins are trimmed, split or removed, and N's winning
 * stretches are added as pieces.  won[0..*n_won) receive those stretches
 * (the bytes to copy from N; at most won_cap, 2 * cap + 2 is enough).
 * Returns false, changing nothing, when the result would exceed cap
 * pieces.  *overlapped: N met held data. */
bool ids_overlap_place(struct ids_piece *pieces, uint32_t *n, uint32_t cap, uint32_t ns,
	uint32_t ne, enum ids_policy pol, enum ids_overlap_model model, struct ids_piece *won,
	uint32_t *n_won, bool *overlapped);

#endif /* IDS_OVERLAP_H */
