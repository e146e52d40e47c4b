/* netferret's P: one query from JPEG bytes to its top K images, in the
 * five stages of ferret (load = decode, resize, HSV; segment; extract;
 * index = LSH lookup and the exact 2K nearest vectors of each region;
 * rank = EMD of every candidate image, the top K).  The server's P, the
 * offline tool nf-query and the fuzzer run this; everything a query needs
 * is allocated once, by nf_work_init, for the database it will query. */
#ifndef NF_QUERY_H
#define NF_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "nf_db.h"
#include "nf_emd.h"
#include "nf_image.h"
#include "nf_srm.h"

#define NF_MAX_K 100 /* results a query may ask for (native's is 50) */

enum nf_stage {
	NF_ST_DECODE,
	NF_ST_SEGMENT,
	NF_ST_EXTRACT,
	NF_ST_INDEX,
	NF_ST_RANK,
	NF_ST_N,
};
extern const char *const nf_stage_names[NF_ST_N];

struct nf_hit {
	double d2; /* squared distance */
	uint32_t id;
};

struct nf_match {
	double dist;
	uint32_t image;
};

struct nf_work {
	struct nf_decoder dec;
	struct nf_srm_work *srm;
	struct nf_emd_work *emd;
	uint8_t rgb[NF_PIXELS * 3], hsv[NF_PIXELS * 3], labels[NF_PIXELS];
	unsigned n_regions;
	float vec[NF_MAX_REGIONS * NF_DIM], weight[NF_MAX_REGIONS];
	uint32_t size[NF_MAX_REGIONS];
	uint32_t *seen, *img_seen; /* stamps per vector, per image */
	uint32_t stamp, img_stamp;
	struct nf_hit *hits; /* per region, 2K of them at most, nearest first */
	unsigned n_hits[NF_MAX_REGIONS];
	uint32_t *cand; /* candidate images, in order of first appearance */
	double *cand_dist;
	unsigned n_cand;
	uint64_t examined;       /* vectors whose distance a query computed (the last) */
	uint64_t ticks[NF_ST_N]; /* the last query's, per stage (TSC) */
};

int nf_work_init(struct nf_work *w, const struct nf_db *db);
void nf_work_fini(struct nf_work *w);

/* Stages one to three: w->vec, weight, size and n_regions. */
enum nf_status nf_query_features(struct nf_work *w, const uint8_t *jpeg, size_t len);
/* Stage two and three alone, from w->rgb (128 x 128 RGB). */
void nf_query_segment(struct nf_work *w);
/* Stage four: w->hits, n_hits, cand, n_cand (k: the query's top K). */
void nf_query_index(struct nf_work *w, const struct nf_db *db, unsigned k);
/* Stage five: w->cand_dist of every candidate; the top k into out
 * (ascending distance, then image); returns how many. */
unsigned nf_query_rank(struct nf_work *w, const struct nf_db *db, unsigned k, struct nf_match *out);

/* All five, with w->ticks. */
enum nf_status nf_query(struct nf_work *w, const struct nf_db *db, const uint8_t *jpeg, size_t len,
	unsigned k, struct nf_match *out, unsigned *n_out);

/* The answer's text (without its length): "\t<image>:<distance %g>" per
 * match, as ferret writes its output; returns its bytes (at most
 * NF_ANSWER_MAX - 4), or 0 when cap is too small. */
#define NF_ANSWER_MAX (4 + NF_MAX_K * (2 + NF_MAX_NAME + 14))
size_t nf_format_answer(
	char *buf, size_t cap, const struct nf_db *db, const struct nf_match *m, unsigned n);

static inline uint64_t
nf_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

#endif
