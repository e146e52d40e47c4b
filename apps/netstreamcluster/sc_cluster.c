/* The clustering core (sc_cluster.h): PARSEC streamcluster's pkmedian in a
 * simpler, deterministic form.
 *
 *  1. A random visiting order of the points (Fisher-Yates, splitmix64).
 *  2. speedy (PARSEC's pspeedy) at facility cost z: the first point of the
 *     order is a centre; each later point opens a centre with probability
 *     min(1, cost / z), cost being its weight x distance to its nearest
 *     centre so far.  z is bisected between 0 and the cost of one centre
 *     until speedy opens kmin..kmax centres (at most SC_Z_STEPS steps; the
 *     random draws are the same for every z; failing that, the highest z
 *     tried, doubled until at most kmax open).
 *  3. Local search (PARSEC's pFL/pgain) at that z: a candidate point x
 *     opens when that saves more than z, taking the points it is nearer
 *     to and closing the centres whose remaining members it takes for less
 *     than z each; passes of min(n, 8 kmax) random candidates, until a pass
 *     gains at most 0.1% of the cost or SC_PASSES passes.  A move that
 *     would take the number of centres out of kmin..kmax (or further out)
 *     is not made. */
#include "sc_cluster.h"

#include <stdlib.h>
#include <string.h>

static uint64_t
next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint64_t
sc_chunk_seed(uint64_t stream_seed, uint64_t chunk)
{
	return stream_seed + (chunk + 1) * 0x9E3779B97F4A7C15ull;
}

uint64_t
sc_final_seed(uint64_t stream_seed)
{
	return stream_seed ^ 0xF1A1F1A1F1A1F1A1ull;
}

#define SEED_SPEEDY 0x5EED000000000001ull
#define SEED_SEARCH 0x5EED000000000002ull

int
sc_work_init(struct sc_work *w, uint32_t cap)
{
	memset(w, 0, sizeof(*w));
	size_t n = cap != 0 ? cap : 1;
	w->cap = cap;
	w->cost = malloc(n * sizeof(double));
	w->xc = malloc(n * sizeof(double));
	w->lower = malloc(n * sizeof(double));
	w->u = malloc(n * sizeof(double));
	w->assign = malloc(n * sizeof(uint32_t));
	w->order = malloc(n * sizeof(uint32_t));
	w->is_open = malloc(n);
	w->sw = malloc(n);
	w->closing = malloc(n);
	if (w->cost == NULL || w->xc == NULL || w->lower == NULL || w->u == NULL ||
		w->assign == NULL || w->order == NULL || w->is_open == NULL || w->sw == NULL ||
		w->closing == NULL) {
		sc_work_fini(w);
		return -1;
	}
	return 0;
}

void
sc_work_fini(struct sc_work *w)
{
	free(w->cost);
	free(w->xc);
	free(w->lower);
	free(w->u);
	free(w->assign);
	free(w->order);
	free(w->is_open);
	free(w->sw);
	free(w->closing);
	memset(w, 0, sizeof(*w));
}

struct pts {
	const float *p;
	unsigned dim;
	const uint64_t *weight;
	uint32_t n;
};

static inline double
wt(const struct pts *s, uint32_t i)
{
	return s->weight != NULL ? (double)s->weight[i] : 1.0;
}

static inline double
wdist(const struct pts *s, uint32_t i, uint32_t x)
{
	return wt(s, i) * sc_dist(s->p + (size_t)i * s->dim, s->p + (size_t)x * s->dim, s->dim);
}

/* Opens centres at facility cost z; gives up once more than limit are
 * open.  Returns the number open. */
static uint32_t
speedy(struct sc_work *w, const struct pts *s, double z, uint32_t limit)
{
	uint32_t n = s->n, first = w->order[0], k = 1;
	memset(w->is_open, 0, n);
	w->is_open[first] = 1;
	for (uint32_t i = 0; i < n; i++) {
		w->cost[i] = wdist(s, i, first);
		w->assign[i] = first;
	}
	for (uint32_t pos = 1; pos < n; pos++) {
		uint32_t p = w->order[pos];
		if (!(w->u[pos] * z < w->cost[p]))
			continue;
		w->is_open[p] = 1;
		if (++k > limit)
			return k;
		for (uint32_t i = 0; i < n; i++) {
			double d = wdist(s, i, p);
			if (d < w->cost[i]) {
				w->cost[i] = d;
				w->assign[i] = p;
			}
		}
	}
	return k;
}

static int
allowed(uint32_t k, uint32_t k2, unsigned kmin, unsigned kmax)
{
	return (k2 >= kmin || k2 >= k) && (k2 <= kmax || k2 <= k);
}

/* Opens x when that saves more than z (see the file's comment); the
 * saving, or 0. */
static double
pgain(struct sc_work *w, const struct pts *s, uint32_t x, double z, uint32_t *k, unsigned kmin,
	unsigned kmax)
{
	uint32_t n = s->n;
	if (w->is_open[x])
		return 0;
	double gain = 0;
	memset(w->lower, 0, n * sizeof(double));
	for (uint32_t i = 0; i < n; i++) {
		double xc = wdist(s, i, x);
		w->xc[i] = xc;
		w->sw[i] = xc < w->cost[i];
		if (w->sw[i])
			gain += w->cost[i] - xc;
		else
			w->lower[w->assign[i]] += xc - w->cost[i];
	}
	uint32_t nclose = 0;
	for (uint32_t f = 0; f < n; f++) {
		w->closing[f] = w->is_open[f] && z > w->lower[f];
		nclose += w->closing[f];
	}
	uint32_t k2 = *k + 1 - nclose;
	if (!allowed(*k, k2, kmin, kmax))
		return 0;
	double total = gain - z;
	for (uint32_t f = 0; f < n; f++)
		if (w->closing[f])
			total += z - w->lower[f];
	if (!(total > 0))
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (w->sw[i] || w->closing[w->assign[i]]) {
			w->cost[i] = w->xc[i];
			w->assign[i] = x;
		}
	for (uint32_t f = 0; f < n; f++)
		if (w->closing[f])
			w->is_open[f] = 0;
	w->is_open[x] = 1;
	w->assign[x] = x;
	*k = k2;
	return total;
}

static double
cost_sum(const struct sc_work *w, uint32_t n)
{
	double c = 0;
	for (uint32_t i = 0; i < n; i++)
		c += w->cost[i];
	return c;
}

void
sc_cluster(struct sc_work *w, const float *pts, unsigned dim, const uint64_t *weight, uint32_t n,
	unsigned kmin, unsigned kmax, uint64_t seed, struct sc_result *res)
{
	const struct pts s = { .p = pts, .dim = dim, .weight = weight, .n = n };
	res->k = 0;
	res->z = 0;
	res->cost = 0;
	if (n == 0)
		return;
	if (n <= kmax) {
		for (uint32_t i = 0; i < n; i++) {
			res->centre[i] = i;
			res->weight[i] = weight != NULL ? weight[i] : 1;
		}
		res->k = n;
		return;
	}
	uint64_t r = seed;
	for (uint32_t i = 0; i < n; i++)
		w->order[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(next(&r) % ((uint64_t)i + 1));
		uint32_t t = w->order[i];
		w->order[i] = w->order[j];
		w->order[j] = t;
	}
	r = seed ^ SEED_SPEEDY;
	for (uint32_t pos = 0; pos < n; pos++)
		w->u[pos] = (double)(next(&r) >> 11) * 0x1p-53;
	double lo = 0, hi = 0, z = 0;
	for (uint32_t i = 0; i < n; i++)
		hi += wdist(&s, i, w->order[0]);
	uint32_t k = 0;
	int found = 0;
	for (unsigned step = 0; step < SC_Z_STEPS && !found; step++) {
		z = (lo + hi) * 0.5;
		k = speedy(w, &s, z, kmax);
		if (k > kmax)
			lo = z;
		else if (k < kmin)
			hi = z;
		else
			found = 1;
	}
	if (!found) {
		/* No z in the steps gave kmin..kmax: the highest tried, raised
		 * until at most kmax open (at z = inf only the first does). */
		z = hi;
		k = speedy(w, &s, z, UINT32_MAX);
		while (k > kmax) {
			z = z > 0 ? z * 2 : 1;
			k = speedy(w, &s, z, UINT32_MAX);
		}
	}
	r = seed ^ SEED_SEARCH;
	uint32_t cands = n < SC_CANDS_PER_K * kmax ? n : SC_CANDS_PER_K * kmax;
	for (unsigned pass = 0; pass < SC_PASSES; pass++) {
		double change = 0;
		for (uint32_t c = 0; c < cands; c++) {
			uint32_t x = (uint32_t)(next(&r) % n);
			change += pgain(w, &s, x, z, &k, kmin, kmax);
		}
		if (change * (1000.0 / SC_STOP_PER_MILLE) <= cost_sum(w, n) + z * (double)k)
			break;
	}
	res->z = z;
	res->cost = cost_sum(w, n);
	uint32_t m = 0;
	for (uint32_t f = 0; f < n; f++)
		if (w->is_open[f]) {
			w->order[f] = m; /* the order is done with: centre index by point */
			res->centre[m] = f;
			res->weight[m++] = 0;
		}
	for (uint32_t i = 0; i < n; i++)
		res->weight[w->order[w->assign[i]]] += weight != NULL ? weight[i] : 1;
	res->k = m;
}
