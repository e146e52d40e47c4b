/* nf_srm.h: Statistical Region Merging. */
#include "nf_srm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
nf_srm_init(struct nf_srm_work *w)
{
	const double q = NF_SRM_Q, big = 2.0 * log(6.0 * NF_PIXELS);
	w->b2[0] = 0.0;
	for (unsigned n = 1; n <= NF_PIXELS; n++) {
		double g = n < 256 ? (double)n : 256.0;
		w->b2[n] = 65536.0 / (2.0 * q * n) * (g * log(1.0 + n) + big);
	}
}

static uint32_t
find(uint32_t *parent, uint32_t p)
{
	uint32_t r = p;
	while (parent[r] != r)
		r = parent[r];
	while (parent[p] != r) {
		uint32_t n = parent[p];
		parent[p] = r;
		p = n;
	}
	return r;
}

/* a and b roots; the one of lower rank joins the other (a wins a tie). */
static void
unite(struct nf_srm_work *w, uint32_t a, uint32_t b)
{
	if (w->rank[a] < w->rank[b]) {
		uint32_t t = a;
		a = b;
		b = t;
	} else if (w->rank[a] == w->rank[b]) {
		w->rank[a]++;
	}
	w->parent[b] = a;
	w->size[a] += w->size[b];
	for (int c = 0; c < 3; c++)
		w->sum[a][c] += w->sum[b][c];
}

static int
similar(const struct nf_srm_work *w, uint32_t a, uint32_t b)
{
	double na = w->size[a], nb = w->size[b];
	double bound = sqrt(w->b2[w->size[a]] + w->b2[w->size[b]]);
	for (int c = 0; c < 3; c++)
		if (!(fabs(w->sum[a][c] / na - w->sum[b][c] / nb) < bound))
			return 0;
	return 1;
}

static unsigned
weight(const uint8_t *rgb, uint32_t p, uint32_t q)
{
	unsigned m = 0;
	for (int c = 0; c < 3; c++) {
		int d = abs((int)rgb[3 * p + c] - (int)rgb[3 * q + c]);
		if ((unsigned)d > m)
			m = (unsigned)d;
	}
	return m;
}

unsigned
nf_srm(struct nf_srm_work *w, const uint8_t *rgb, uint8_t *labels)
{
	const uint32_t side = NF_SIDE;
	unsigned n_edges = 0;
	memset(w->count, 0, sizeof(w->count));
	for (uint32_t p = 0; p < NF_PIXELS; p++) {
		w->parent[p] = p;
		w->size[p] = 1;
		w->rank[p] = 0;
		for (int c = 0; c < 3; c++)
			w->sum[p][c] = rgb[3 * p + c];
		uint32_t x = p % side, y = p / side;
		if (x + 1 < side) {
			w->edges[n_edges++] = p << 1;
			w->count[weight(rgb, p, p + 1) + 1]++;
		}
		if (y + 1 < side) {
			w->edges[n_edges++] = p << 1 | 1;
			w->count[weight(rgb, p, p + side) + 1]++;
		}
	}
	for (unsigned b = 1; b <= 256; b++)
		w->count[b] += w->count[b - 1];
	for (unsigned i = 0; i < n_edges; i++) {
		uint32_t e = w->edges[i], p = e >> 1, q = (e & 1) ? p + side : p + 1;
		w->order[w->count[weight(rgb, p, q)]++] = e;
	}
	for (unsigned i = 0; i < n_edges; i++) {
		uint32_t e = w->order[i], p = e >> 1, q = (e & 1) ? p + side : p + 1;
		uint32_t a = find(w->parent, p), b = find(w->parent, q);
		if (a != b && similar(w, a, b))
			unite(w, a, b);
	}
	for (uint32_t y = 0; y < side; y++)
		for (uint32_t x = 1; x < side; x++) {
			uint32_t p = y * side + x;
			uint32_t a = find(w->parent, p - 1), b = find(w->parent, p);
			if (a != b && (w->size[a] < NF_MIN_REGION || w->size[b] < NF_MIN_REGION))
				unite(w, a, b);
		}
	/* labels in raster order of first pixels (order[]: a root's label) */
	unsigned n = 0;
	for (uint32_t p = 0; p < NF_PIXELS; p++)
		w->order[p] = UINT32_MAX;
	for (uint32_t p = 0; p < NF_PIXELS; p++) {
		uint32_t r = find(w->parent, p);
		if (w->order[r] == UINT32_MAX)
			w->order[r] = n++;
		labels[p] = (uint8_t)w->order[r];
	}
	return n;
}
