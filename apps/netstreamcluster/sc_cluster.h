/* netstreamcluster's clustering core: PARSEC streamcluster's online
 * k-median step (pkmedian: a facility-location local search) on one set of
 * weighted points, deterministic from a seed.  P runs it on each chunk of a
 * stream, T on the weighted centres the chunks kept.  No DPDK here: the
 * unit test and the Python reference (sc_reference.py) follow the same
 * steps.
 *
 * Every floating-point operation is done in double, in a fixed order (the
 * distance sums dimension by dimension, every other sum point by point in
 * index order), and the library is built with -ffp-contract=off, so the
 * result is a function of the points, weights, k range and seed alone:
 * sc_reference.py repeats the same operations in the same order with numpy
 * and gets the same bits. */
#ifndef SC_CLUSTER_H
#define SC_CLUSTER_H

#include <stdint.h>

#define SC_MAX_K 64         /* kmax a stream may ask for */
#define SC_Z_STEPS 40       /* bisection steps for the facility cost z */
#define SC_PASSES 8         /* local search passes at most */
#define SC_CANDS_PER_K 8    /* candidates per pass: min(n, SC_CANDS_PER_K * kmax) */
#define SC_STOP_PER_MILLE 1 /* a pass that gains at most 0.1% of the cost ends it */

/* Scratch for up to cap points, allocated once (sc_work_init). */
struct sc_work {
	uint32_t cap;
	double *cost;  /* weight x distance to the assigned centre */
	double *xc;    /* the same to the candidate */
	double *lower; /* per facility: what closing it costs its members */
	double *u;     /* per position of the visiting order: uniform [0, 1) */
	uint32_t *assign, *order;
	uint8_t *is_open, *sw, *closing;
};

struct sc_result {
	uint32_t k;       /* centres */
	double z;         /* the facility cost the search ran at */
	double cost;      /* sum of weight x squared distance to the assigned centre */
	uint32_t *centre; /* k point indices, ascending (the caller's, >= cap) */
	uint64_t *weight; /* their weights: the sum of their members' */
};

int sc_work_init(struct sc_work *w, uint32_t cap);
void sc_work_fini(struct sc_work *w);

/* Clusters n (<= w->cap) points of dim floats each (pts: n * dim, row by
 * row) with weights (NULL: all 1) into kmin..kmax centres (fewer when the
 * points have fewer distinct values; every point when n <= kmax). */
void sc_cluster(struct sc_work *w, const float *pts, unsigned dim, const uint64_t *weight,
	uint32_t n, unsigned kmin, unsigned kmax, uint64_t seed, struct sc_result *res);

/* Seeds: each chunk's from the stream's and the chunk's index; the final
 * clustering's from the stream's. */
uint64_t sc_chunk_seed(uint64_t stream_seed, uint64_t chunk);
uint64_t sc_final_seed(uint64_t stream_seed);

/* Squared Euclidean distance, in double, dimension by dimension. */
static inline double
sc_dist(const float *a, const float *b, unsigned dim)
{
	double s = 0;
	for (unsigned j = 0; j < dim; j++) {
		double d = (double)a[j] - (double)b[j];
		s += d * d;
	}
	return s;
}

#endif
