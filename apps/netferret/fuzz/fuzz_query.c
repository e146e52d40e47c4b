/* libFuzzer target for netferret's query path: any bytes as a query's JPEG
 * through the five stages (decode, resize, SRM, features, LSH lookup, EMD
 * ranking) and the answer's formatting, against a small database made at
 * start-up.  Every input must end in a status and an answer that fits,
 * never in a crash, a sanitizer report or a hang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nf_db.h"
#include "nf_query.h"

static struct nf_db db;
static struct nf_work *w;

static void
init(void)
{
	enum {
		N = 40,
		R = 6
	};
	static float vec[N * R * NF_DIM], wt[N * R];
	static uint32_t sz[N * R];
	static char names[N][16];
	struct nf_db_image img[N];
	uint64_t s = 99;
	for (unsigned i = 0; i < N * R * NF_DIM; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		vec[i] = (float)((s >> 40) % 4000) / 1000.0f;
	}
	for (unsigned i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "img%02u.jpg", i);
		for (unsigned k = 0; k < R; k++) {
			wt[i * R + k] = 1.0f / (1 + i % R);
			sz[i * R + k] = 100;
		}
		img[i] = (struct nf_db_image){ names[i], 1 + i % R, vec + i * R * NF_DIM,
			wt + i * R, sz + i * R };
	}
	uint8_t *buf;
	size_t bytes;
	char err[256];
	w = malloc(sizeof(*w));
	if (nf_db_build(img, N, 3, 10, &buf, &bytes, err, sizeof(err)) != 0 ||
		nf_db_parse(&db, buf, bytes, err, sizeof(err)) != 0 || w == NULL ||
		nf_work_init(w, &db) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nf_match top[NF_MAX_K];
	static char answer[NF_ANSWER_MAX];
	if (w == NULL)
		init();
	unsigned n = 99;
	enum nf_status st = nf_query(w, &db, data, size, 10, top, &n);
	if (st >= NF_STATUS_N || n > 10 || (st != NF_OK && n != 0))
		abort();
	if (st == NF_OK) {
		if (w->n_regions == 0 || w->n_regions > NF_MAX_REGIONS)
			abort();
		for (unsigned i = 1; i < n; i++)
			if (top[i].dist < top[i - 1].dist)
				abort();
		if (n != 0 && nf_format_answer(answer, sizeof(answer), &db, top, n) == 0)
			abort();
	}
	return 0;
}
