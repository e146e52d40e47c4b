/* Target-based overlap resolution (see overlap.h). */
#include "overlap.h"

#include <string.h>

#define MAX_PIECES 256

const char *const ids_policy_name[IDS_POLICY_N] = {
	[IDS_POLICY_FIRST] = "first",
	[IDS_POLICY_LAST] = "last",
	[IDS_POLICY_BSD] = "bsd",
	[IDS_POLICY_LINUX] = "linux",
	[IDS_POLICY_WINDOWS] = "windows",
	[IDS_POLICY_SOLARIS] = "solaris",
};

int
ids_policy_parse(const char *name)
{
	for (int i = 0; i < IDS_POLICY_N; i++)
		if (strcmp(name, ids_policy_name[i]) == 0)
			return i;
	return -1;
}

/* E = [es, ee) starts before N = [ns, ne). */
static bool
left_new_wins(enum ids_policy pol, enum ids_overlap_model model, uint32_t ee, uint32_t ne)
{
	if (pol == IDS_POLICY_LAST)
		return true;
	return model == IDS_OVERLAP_TCP && pol == IDS_POLICY_SOLARIS && ee < ne;
}

/* E = [es, ee) starts at or after ns (N's stretch being placed) and
 * before ne.  prev_end: where the piece before E ends (UINT32_MAX: none). */
static bool
right_new_wins(enum ids_policy pol, enum ids_overlap_model model, uint32_t ns, uint32_t ne,
	uint32_t es, uint32_t ee, uint32_t prev_end)
{
	bool partial = ee > ne;

	if (pol == IDS_POLICY_FIRST)
		return false;
	if (pol == IDS_POLICY_LAST)
		return true;
	if (model == IDS_OVERLAP_FRAG) {
		if (partial)
			return pol == IDS_POLICY_LINUX || (pol == IDS_POLICY_BSD && es != ns);
		switch (pol) {
		case IDS_POLICY_LINUX:
			return true;
		case IDS_POLICY_WINDOWS:
			return ns < es && ne > ee;
		default: /* bsd, solaris */
			return ns < es && ne >= ee;
		}
	}
	if (partial)
		return pol != IDS_POLICY_SOLARIS && es != ns;
	switch (pol) {
	case IDS_POLICY_LINUX:
		return (ns < es && ne >= ee) || (ns == es && ne > ee);
	case IDS_POLICY_SOLARIS:
		/* A repeat of E, same start and end, after a hole: the first. */
		return !(es == ns && ee == ne && prev_end != UINT32_MAX && prev_end != ns);
	default: /* bsd, windows */
		return ns < es && ne >= ee;
	}
}

static void
push(struct ids_piece *a, uint32_t *n, uint32_t s, uint32_t e)
{
	if (s >= e)
		return;
	if (*n > 0 && a[*n - 1].e == s) {
		a[*n - 1].e = e;
		return;
	}
	a[*n].s = s;
	a[(*n)++].e = e;
}

bool
ids_overlap_place(struct ids_piece *pieces, uint32_t *n, uint32_t cap, uint32_t ns, uint32_t ne,
	enum ids_policy pol, enum ids_overlap_model model, struct ids_piece *won, uint32_t *n_won,
	bool *overlapped)
{
	struct ids_piece out[2 * MAX_PIECES + 4], tail[2];
	uint32_t no = 0, nw = 0, nt = 0, i = 0;
	uint32_t cur = ns, run = ns; /* first byte of N not placed; start of N's stretch */
	bool last_won = false;       /* out[no - 1] is N's stretch (merge with it) */

	*overlapped = false;
	*n_won = 0;
	if (ns >= ne)
		return true;
	if (cap > MAX_PIECES)
		cap = MAX_PIECES;
	while (i < *n && pieces[i].e <= ns)
		out[no++] = pieces[i++];
	if (i < *n && pieces[i].s < ns) {
		struct ids_piece l = pieces[i++];
		*overlapped = true;
		if (left_new_wins(pol, model, l.e, ne)) {
			out[no++] = (struct ids_piece){ l.s, ns };
			if (l.e > ne)
				tail[nt++] = (struct ids_piece){ ne, l.e };
		} else {
			out[no++] = l;
			cur = run = l.e < ne ? l.e : ne;
		}
	}
	while (i < *n && pieces[i].s < ne) {
		struct ids_piece p = pieces[i++];
		uint32_t prev_end = no ? out[no - 1].e : UINT32_MAX;
		uint32_t end = p.e < ne ? p.e : ne;
		*overlapped = true;
		if (right_new_wins(pol, model, run, ne, p.s, p.e, prev_end)) {
			/* N's stretch goes on over [cur, end) */
			if (!(last_won && out[no - 1].e == cur))
				out[no++] = (struct ids_piece){ cur, end };
			else
				out[no - 1].e = end;
			push(won, &nw, cur, end);
			last_won = true;
			if (p.e > ne)
				tail[nt++] = (struct ids_piece){ ne, p.e };
		} else {
			if (p.s > cur) {
				if (last_won && out[no - 1].e == cur)
					out[no - 1].e = p.s;
				else
					out[no++] = (struct ids_piece){ cur, p.s };
				push(won, &nw, cur, p.s);
			}
			out[no++] = p;
			last_won = false;
			run = end;
		}
		cur = end;
	}
	if (cur < ne) {
		if (last_won && out[no - 1].e == cur)
			out[no - 1].e = ne;
		else
			out[no++] = (struct ids_piece){ cur, ne };
		push(won, &nw, cur, ne);
	}
	for (uint32_t t = 0; t < nt; t++)
		out[no++] = tail[t];
	while (i < *n && no < 2 * MAX_PIECES + 4)
		out[no++] = pieces[i++];
	if (no > cap)
		return false;
	/* The tails (split pieces) sort after everything before ne. */
	for (uint32_t a = 1; a < no; a++) {
		struct ids_piece x = out[a];
		uint32_t b = a;
		for (; b > 0 && out[b - 1].s > x.s; b--)
			out[b] = out[b - 1];
		out[b] = x;
	}
	memcpy(pieces, out, no * sizeof(*out));
	*n = no;
	*n_won = nw;
	return true;
}
