/* netferret's ranking distance (ferret's emd.c): the Earth Mover's
 * Distance (Rubner, Tomasi and Guibas 1998) between two weighted sets of
 * region vectors, ground distance Euclidean, solved as a transportation
 * problem by the simplex method (least-cost initial basis, then MODI
 * pivots on the most negative reduced cost).  Supplies and demands are
 * each normalized to sum 1 first; the result is the optimal total cost
 * over the total flow.  nf_reference.py and the tests check it against an
 * independent solver (POT's network simplex, scipy's linprog). */
#ifndef NF_EMD_H
#define NF_EMD_H

#include <stdint.h>

#include "nf_extract.h"

#define NF_EMD_MAX NF_MAX_REGIONS /* regions on either side */
#define NF_EMD_MAX_PIVOTS 100000  /* a cap against cycling (never met in the tests) */

struct nf_emd_work {
	double cost[NF_EMD_MAX * NF_EMD_MAX];
	double flow[NF_EMD_MAX * NF_EMD_MAX];
	uint8_t basic[NF_EMD_MAX * NF_EMD_MAX];
	double a[NF_EMD_MAX], b[NF_EMD_MAX];
	double u[NF_EMD_MAX], v[NF_EMD_MAX];
	/* the basis: n + m - 1 cells (i * m + j), a spanning tree over the
	 * rows (nodes 0..n-1) and the columns (nodes n..n+m-1) */
	uint32_t cell[2 * NF_EMD_MAX];
	uint32_t adj_start[2 * NF_EMD_MAX + 1];
	uint32_t adj[4 * NF_EMD_MAX];     /* per node: the basic cells at it */
	int32_t up[2 * NF_EMD_MAX];       /* parent node in the tree, -1 at the root */
	uint32_t up_cell[2 * NF_EMD_MAX]; /* the cell joining a node to its parent */
	uint16_t depth[2 * NF_EMD_MAX];
	uint16_t queue[2 * NF_EMD_MAX];
	uint32_t path[2 * NF_EMD_MAX];
	uint32_t sorted[NF_EMD_MAX * NF_EMD_MAX];
	uint8_t row_done[NF_EMD_MAX], col_done[NF_EMD_MAX];
	uint64_t pivots, capped; /* all calls, for the statistics */
};

/* EMD between n vectors qa (weights wa) and m vectors qb (weights wb),
 * 1 <= n, m <= NF_EMD_MAX, NF_DIM floats each. */
double nf_emd(struct nf_emd_work *w, const float *qa, const float *wa, unsigned n, const float *qb,
	const float *wb, unsigned m);

/* Euclidean distance of two vectors, in double, dimension by dimension. */
static inline double
nf_dist2(const float *a, const float *b)
{
	double s = 0.0;
	for (int i = 0; i < NF_DIM; i++) {
		double d = (double)a[i] - (double)b[i];
		s = s + d * d;
	}
	return s;
}

#endif
