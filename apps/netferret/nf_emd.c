/* nf_emd.h: the transportation simplex. */
#include "nf_emd.h"

#include <math.h>
#include <stdlib.h>

#define EPS 1e-12 /* reduced costs above -EPS are taken as optimal */

/* Cell i before cell j: by cost, then index. */
static int
before(const double *c, uint32_t i, uint32_t j)
{
	return c[i] < c[j] || (c[i] == c[j] && i < j);
}

static void
sift(uint32_t *a, unsigned root, unsigned n, const double *c)
{
	for (;;) {
		unsigned child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && before(c, a[child], a[child + 1]))
			child++;
		if (!before(c, a[root], a[child]))
			return;
		uint32_t t = a[root];
		a[root] = a[child];
		a[child] = t;
		root = child;
	}
}

/* Heapsort of the cells by cost: in place (glibc's qsort may malloc). */
static void
sort_cells(uint32_t *a, unsigned n, const double *c)
{
	for (unsigned k = n / 2; k-- > 0;)
		sift(a, k, n, c);
	for (unsigned end = n; end-- > 1;) {
		uint32_t t = a[0];
		a[0] = a[end];
		a[end] = t;
		sift(a, 0, end, c);
	}
}

/* The least-cost initial basis: n + m - 1 cells, each allocation crossing
 * out exactly one row or column (the row when both are exhausted, unless
 * it is the last row), so the cells form a spanning tree. */
static unsigned
initial_basis(struct nf_emd_work *w, unsigned n, unsigned m)
{
	unsigned cells = n * m, nb = 0, rows_left = n, cols_left = m;
	for (unsigned k = 0; k < cells; k++) {
		w->sorted[k] = k;
		w->basic[k] = 0;
		w->flow[k] = 0.0;
	}
	sort_cells(w->sorted, cells, w->cost);
	for (unsigned i = 0; i < n; i++)
		w->row_done[i] = 0;
	for (unsigned j = 0; j < m; j++)
		w->col_done[j] = 0;
	for (unsigned k = 0; k < cells && nb < n + m - 1; k++) {
		unsigned c = w->sorted[k], i = c / m, j = c % m;
		if (w->row_done[i] || w->col_done[j])
			continue;
		double x = w->a[i] < w->b[j] ? w->a[i] : w->b[j];
		w->flow[c] = x;
		w->basic[c] = 1;
		w->cell[nb++] = c;
		if ((w->a[i] <= w->b[j] && rows_left > 1) || cols_left == 1) {
			w->row_done[i] = 1;
			rows_left--;
			w->b[j] -= x;
			w->a[i] = 0.0;
		} else {
			w->col_done[j] = 1;
			cols_left--;
			w->a[i] -= x;
			w->b[j] = 0.0;
		}
	}
	return nb;
}

/* Duals u, v (u_0 = 0) over the tree, with each node's parent; false when
 * the basis does not span (cannot happen; guarded all the same). */
static int
duals(struct nf_emd_work *w, unsigned n, unsigned m, unsigned nb)
{
	unsigned nodes = n + m;
	for (unsigned k = 0; k <= nodes; k++)
		w->adj_start[k] = 0;
	for (unsigned k = 0; k < nb; k++) {
		unsigned c = w->cell[k];
		w->adj_start[c / m + 1]++;
		w->adj_start[n + c % m + 1]++;
	}
	for (unsigned k = 1; k <= nodes; k++)
		w->adj_start[k] += w->adj_start[k - 1];
	for (unsigned k = 0; k < nodes; k++)
		w->queue[k] = (uint16_t)w->adj_start[k]; /* fill cursors, before the search */
	for (unsigned k = 0; k < nb; k++) {
		unsigned c = w->cell[k];
		w->adj[w->queue[c / m]++] = c;
		w->adj[w->queue[n + c % m]++] = c;
	}
	for (unsigned k = 0; k < nodes; k++)
		w->up[k] = -2;
	unsigned head = 0, tail = 0;
	w->up[0] = -1;
	w->depth[0] = 0;
	w->u[0] = 0.0;
	w->queue[tail++] = 0;
	while (head < tail) {
		unsigned x = w->queue[head++];
		for (unsigned e = w->adj_start[x]; e < w->adj_start[x + 1]; e++) {
			unsigned c = w->adj[e], i = c / m, j = c % m;
			unsigned y = x < n ? n + j : i;
			if (w->up[y] != -2)
				continue;
			w->up[y] = (int32_t)x;
			w->up_cell[y] = c;
			w->depth[y] = (uint16_t)(w->depth[x] + 1);
			if (y >= n)
				w->v[j] = w->cost[c] - w->u[i];
			else
				w->u[i] = w->cost[c] - w->v[j];
			w->queue[tail++] = (uint16_t)y;
		}
	}
	return tail == nodes;
}

double
nf_emd(struct nf_emd_work *w, const float *qa, const float *wa, unsigned n, const float *qb,
	const float *wb, unsigned m)
{
	double sa = 0.0, sb = 0.0;
	for (unsigned i = 0; i < n; i++)
		sa = sa + wa[i];
	for (unsigned j = 0; j < m; j++)
		sb = sb + wb[j];
	for (unsigned i = 0; i < n; i++)
		w->a[i] = wa[i] / sa;
	for (unsigned j = 0; j < m; j++)
		w->b[j] = wb[j] / sb;
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < m; j++)
			w->cost[i * m + j] =
				sqrt(nf_dist2(qa + (size_t)i * NF_DIM, qb + (size_t)j * NF_DIM));
	unsigned nb = initial_basis(w, n, m);
	for (unsigned pivot = 0;; pivot++) {
		if (pivot == NF_EMD_MAX_PIVOTS) {
			w->capped++;
			break;
		}
		if (nb != n + m - 1 || !duals(w, n, m, nb))
			break; /* not a spanning basis: cannot happen */
		double best = -EPS;
		unsigned enter = UINT32_MAX;
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < m; j++) {
				unsigned c = i * m + j;
				if (w->basic[c])
					continue;
				double r = w->cost[c] - w->u[i] - w->v[j];
				if (r < best) {
					best = r;
					enter = c;
				}
			}
		if (enter == UINT32_MAX)
			break;
		w->pivots++;
		/* the tree path from column j to row i: cells alternate -, +, ..., - */
		unsigned x = n + enter % m, y = enter / m, kx = 0, ky = 0;
		uint32_t *px = w->path, *py = w->path + (n + m);
		while (w->depth[x] > w->depth[y]) {
			px[kx++] = w->up_cell[x];
			x = (unsigned)w->up[x];
		}
		while (w->depth[y] > w->depth[x]) {
			py[ky++] = w->up_cell[y];
			y = (unsigned)w->up[y];
		}
		while (x != y) {
			px[kx++] = w->up_cell[x];
			x = (unsigned)w->up[x];
			py[ky++] = w->up_cell[y];
			y = (unsigned)w->up[y];
		}
		/* the path in order: px[0..kx), then py reversed */
		unsigned len = kx + ky, leave_at = 0;
		double theta = INFINITY;
		for (unsigned k = 0; k < len; k += 2) {
			uint32_t c = k < kx ? px[k] : py[len - 1 - k];
			if (w->flow[c] < theta) {
				theta = w->flow[c];
				leave_at = k;
			}
		}
		for (unsigned k = 0; k < len; k++) {
			uint32_t c = k < kx ? px[k] : py[len - 1 - k];
			w->flow[c] += (k & 1) ? theta : -theta;
		}
		uint32_t leave = leave_at < kx ? px[leave_at] : py[len - 1 - leave_at];
		w->flow[leave] = 0.0;
		w->basic[leave] = 0;
		w->flow[enter] = theta;
		w->basic[enter] = 1;
		for (unsigned k = 0; k < nb; k++)
			if (w->cell[k] == leave) {
				w->cell[k] = enter;
				break;
			}
	}
	double cost = 0.0, flow = 0.0;
	for (unsigned k = 0; k < nb; k++) {
		uint32_t c = w->cell[k];
		cost = cost + w->flow[c] * w->cost[c];
		flow = flow + w->flow[c];
	}
	return flow > 0.0 ? cost / flow : 0.0;
}
