/* nf_query.h: the query pipeline. */
#include "nf_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const nf_stage_names[NF_ST_N] = { "decode", "segment", "extract", "index", "rank" };

int
nf_work_init(struct nf_work *w, const struct nf_db *db)
{
	memset(w, 0, sizeof(*w));
	size_t max_hits = (size_t)NF_MAX_REGIONS * 2 * NF_MAX_K;
	w->srm = malloc(sizeof(*w->srm));
	w->emd = malloc(sizeof(*w->emd));
	w->seen = calloc(db->n_vectors, sizeof(uint32_t));
	w->img_seen = calloc(db->n_images, sizeof(uint32_t));
	w->hits = malloc(sizeof(struct nf_hit) * max_hits);
	w->cand = malloc(sizeof(uint32_t) * max_hits);
	w->cand_dist = malloc(sizeof(double) * max_hits);
	if (w->srm == NULL || w->emd == NULL || w->seen == NULL || w->img_seen == NULL ||
		w->hits == NULL || w->cand == NULL || w->cand_dist == NULL ||
		nf_decoder_init(&w->dec) != 0) {
		nf_work_fini(w);
		return -1;
	}
	nf_srm_init(w->srm);
	w->emd->pivots = w->emd->capped = 0;
	return 0;
}

void
nf_work_fini(struct nf_work *w)
{
	nf_decoder_fini(&w->dec);
	free(w->srm);
	free(w->emd);
	free(w->seen);
	free(w->img_seen);
	free(w->hits);
	free(w->cand);
	free(w->cand_dist);
	w->srm = NULL;
	w->emd = NULL;
	w->seen = w->img_seen = w->cand = NULL;
	w->hits = NULL;
	w->cand_dist = NULL;
}

void
nf_query_segment(struct nf_work *w)
{
	uint64_t t0 = nf_ticks();
	w->n_regions = nf_srm(w->srm, w->rgb, w->labels);
	uint64_t t1 = nf_ticks();
	nf_rgb_to_hsv(w->rgb, w->hsv, NF_PIXELS);
	nf_extract(w->hsv, w->labels, w->n_regions, w->vec, w->weight, w->size);
	w->ticks[NF_ST_SEGMENT] = t1 - t0;
	w->ticks[NF_ST_EXTRACT] = nf_ticks() - t1;
}

enum nf_status
nf_query_features(struct nf_work *w, const uint8_t *jpeg, size_t len)
{
	memset(w->ticks, 0, sizeof(w->ticks));
	w->n_regions = 0;
	uint64_t t0 = nf_ticks();
	enum nf_status st = nf_decode(&w->dec, jpeg, len);
	if (st == NF_OK)
		nf_resize(&w->dec, w->rgb);
	w->ticks[NF_ST_DECODE] = nf_ticks() - t0;
	if (st == NF_OK)
		nf_query_segment(w);
	return st;
}

/* h into the region's sorted hits (nearest first, then lower id), keeping
 * at most cap. */
static void
keep(struct nf_hit *hits, unsigned *n, unsigned cap, struct nf_hit h)
{
	unsigned k = *n;
	if (k == cap) {
		const struct nf_hit *last = &hits[k - 1];
		if (h.d2 > last->d2 || (h.d2 == last->d2 && h.id > last->id))
			return;
		k--;
	} else {
		(*n)++;
	}
	while (k > 0 &&
		(hits[k - 1].d2 > h.d2 || (hits[k - 1].d2 == h.d2 && hits[k - 1].id > h.id))) {
		hits[k] = hits[k - 1];
		k--;
	}
	hits[k] = h;
}

static void
new_stamp(uint32_t *stamp, uint32_t *marks, size_t n)
{
	if (++*stamp == 0) { /* wrapped: every mark is stale again */
		memset(marks, 0, sizeof(uint32_t) * n);
		*stamp = 1;
	}
}

void
nf_query_index(struct nf_work *w, const struct nf_db *db, unsigned k)
{
	const struct nf_lsh *x = &db->lsh;
	unsigned cap = 2 * k;
	w->examined = 0;
	w->n_cand = 0;
	if (k == 0 || k > NF_MAX_K)
		return;
	new_stamp(&w->img_stamp, w->img_seen, db->n_images);
	for (unsigned r = 0; r < w->n_regions; r++) {
		const float *q = w->vec + (size_t)r * NF_DIM;
		struct nf_hit *hits = w->hits + (size_t)r * 2 * NF_MAX_K;
		w->n_hits[r] = 0;
		new_stamp(&w->stamp, w->seen, db->n_vectors);
		for (unsigned l = 0; l < x->L; l++) {
			uint32_t b = nf_lsh_bucket(x, l, q);
			const uint32_t *st = x->start + (size_t)l * (x->H + 1);
			const uint32_t *en = x->entry + (size_t)l * x->n_vectors;
			for (uint32_t e = st[b]; e < st[b + 1]; e++) {
				uint32_t id = en[e];
				if (w->seen[id] == w->stamp)
					continue;
				w->seen[id] = w->stamp;
				w->examined++;
				struct nf_hit h = { nf_dist2(q, db->vec + (size_t)id * NF_DIM),
					id };
				keep(hits, &w->n_hits[r], cap, h);
			}
		}
		for (unsigned i = 0; i < w->n_hits[r]; i++) {
			uint32_t img = db->owner[hits[i].id];
			if (w->img_seen[img] != w->img_stamp) {
				w->img_seen[img] = w->img_stamp;
				w->cand[w->n_cand++] = img;
			}
		}
	}
}

static int
before(const struct nf_match *a, const struct nf_match *b)
{
	return a->dist < b->dist || (a->dist == b->dist && a->image < b->image);
}

unsigned
nf_query_rank(struct nf_work *w, const struct nf_db *db, unsigned k, struct nf_match *out)
{
	unsigned n = 0;
	if (k == 0)
		return 0;
	for (unsigned c = 0; c < w->n_cand; c++) {
		uint32_t img = w->cand[c], v0 = db->img_first[img];
		unsigned m = db->img_first[img + 1] - v0;
		double d = nf_emd(w->emd, w->vec, w->weight, w->n_regions,
			db->vec + (size_t)v0 * NF_DIM, db->weight + v0, m);
		w->cand_dist[c] = d;
		struct nf_match x = { d, img };
		if (n == k && !before(&x, &out[n - 1]))
			continue;
		unsigned at = n < k ? n++ : n - 1;
		while (at > 0 && before(&x, &out[at - 1])) {
			out[at] = out[at - 1];
			at--;
		}
		out[at] = x;
	}
	return n;
}

enum nf_status
nf_query(struct nf_work *w, const struct nf_db *db, const uint8_t *jpeg, size_t len, unsigned k,
	struct nf_match *out, unsigned *n_out)
{
	*n_out = 0;
	enum nf_status st = nf_query_features(w, jpeg, len);
	if (st != NF_OK)
		return st;
	uint64_t t0 = nf_ticks();
	nf_query_index(w, db, k);
	uint64_t t1 = nf_ticks();
	*n_out = nf_query_rank(w, db, k, out);
	w->ticks[NF_ST_INDEX] = t1 - t0;
	w->ticks[NF_ST_RANK] = nf_ticks() - t1;
	return NF_OK;
}

size_t
nf_format_answer(
	char *buf, size_t cap, const struct nf_db *db, const struct nf_match *m, unsigned n)
{
	size_t at = 0;
	for (unsigned i = 0; i < n; i++) {
		int k = snprintf(
			buf + at, cap - at, "\t%s:%g", nf_db_name(db, m[i].image), m[i].dist);
		if (k < 0 || (size_t)k >= cap - at)
			return 0;
		at += (size_t)k;
	}
	return at;
}
