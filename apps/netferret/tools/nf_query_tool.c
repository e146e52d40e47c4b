/* nf-query: the server's P on files, no DPDK: each query of a pack
 * through the five stages against a database, one JSON line per query
 * (its top K with full-precision distances, the answer text the server
 * sends, the stages' TSC ticks).  --trace adds what the tests compare
 * with the Python reference: the query's region vectors, weights and
 * sizes, each region's 2K nearest vectors (ids), the candidate images and
 * every candidate's EMD; --rgb the 128x128 image after the resize (hex).
 * --seg-rgb FILE: segments and extracts a raw 128x128 RGB image (49,152
 * bytes) instead, printing its labels, vectors, weights and sizes.
 *
 *     nf-query DB QUERIES.pack --k K [--trace] [--rgb]
 *     nf-query --seg-rgb FILE */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nf_db.h"
#include "nf_pack.h"
#include "nf_query.h"

static void
json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void
regions(const struct nf_work *w)
{
	printf(", \"regions\": %u, \"vec\": [", w->n_regions);
	for (unsigned i = 0; i < w->n_regions * NF_DIM; i++)
		printf("%s%.9g", i ? ", " : "", (double)w->vec[i]);
	printf("], \"weight\": [");
	for (unsigned i = 0; i < w->n_regions; i++)
		printf("%s%.9g", i ? ", " : "", (double)w->weight[i]);
	printf("], \"size\": [");
	for (unsigned i = 0; i < w->n_regions; i++)
		printf("%s%u", i ? ", " : "", w->size[i]);
	printf("]");
}

static int
seg_rgb(const char *path)
{
	static struct nf_db fake = { .n_images = 1, .n_vectors = 1 };
	static struct nf_work w;
	if (nf_work_init(&w, &fake) != 0)
		return 1;
	FILE *f = fopen(path, "rb");
	if (f == NULL || fread(w.rgb, 1, sizeof(w.rgb), f) != sizeof(w.rgb)) {
		fprintf(stderr, "nf-query: %s: not %zu bytes of RGB\n", path, sizeof(w.rgb));
		return 1;
	}
	fclose(f);
	nf_query_segment(&w);
	printf("{\"labels\": [");
	for (unsigned p = 0; p < NF_PIXELS; p++)
		printf("%s%u", p ? "," : "", w.labels[p]);
	printf("]");
	regions(&w);
	printf("}\n");
	nf_work_fini(&w);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--seg-rgb") == 0)
		return seg_rgb(argv[2]);
	unsigned k = 0;
	int trace = 0, rgb = 0;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--k") == 0 && i + 1 < argc)
			k = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--trace") == 0)
			trace = 1;
		else if (strcmp(argv[i], "--rgb") == 0)
			rgb = 1;
		else
			k = 0, argc = 0;
	}
	if (argc < 5 || k == 0 || k > NF_MAX_K) {
		fprintf(stderr,
			"usage: nf-query DB QUERIES.pack --k K (1..%d) [--trace] [--rgb]\n"
			"       nf-query --seg-rgb FILE\n",
			NF_MAX_K);
		return 2;
	}
	char err[512];
	struct nf_db db;
	struct nf_pack pk;
	if (nf_db_open(&db, argv[1], err, sizeof(err)) < 0 ||
		nf_pack_open(&pk, argv[2], err, sizeof(err)) < 0) {
		fprintf(stderr, "nf-query: %s\n", err);
		return 1;
	}
	struct nf_work *w = malloc(sizeof(*w));
	if (w == NULL || nf_work_init(w, &db) != 0) {
		fprintf(stderr, "nf-query: out of memory\n");
		return 1;
	}
	static struct nf_match top[NF_MAX_K];
	static char answer[NF_ANSWER_MAX];
	struct nf_pack_item it;
	int r;
	while ((r = nf_pack_next(&pk, &it, err, sizeof(err))) == 1) {
		unsigned n;
		enum nf_status st = nf_query(w, &db, it.data, it.len, k, top, &n);
		printf("{\"query\": ");
		json_str(it.name);
		printf(", \"status\": \"%s\"", nf_status_names[st]);
		if (st == NF_OK) {
			printf(", \"top\": [");
			for (unsigned i = 0; i < n; i++) {
				printf("%s[", i ? ", " : "");
				json_str(nf_db_name(&db, top[i].image));
				printf(", %.17g]", top[i].dist);
			}
			size_t len = nf_format_answer(answer, sizeof(answer), &db, top, n);
			answer[len] = '\0';
			printf("], \"answer\": ");
			json_str(answer);
		}
		printf(", \"ticks\": {");
		for (int s = 0; s < NF_ST_N; s++)
			printf("%s\"%s\": %" PRIu64, s ? ", " : "", nf_stage_names[s], w->ticks[s]);
		printf("}");
		if (trace && st == NF_OK) {
			regions(w);
			printf(", \"examined\": %" PRIu64 ", \"hits\": [", w->examined);
			for (unsigned g = 0; g < w->n_regions; g++) {
				printf("%s[", g ? ", " : "");
				for (unsigned i = 0; i < w->n_hits[g]; i++)
					printf("%s%u", i ? ", " : "",
						w->hits[(size_t)g * 2 * NF_MAX_K + i].id);
				printf("]");
			}
			printf("], \"cand\": [");
			for (unsigned c = 0; c < w->n_cand; c++)
				printf("%s%u", c ? ", " : "", w->cand[c]);
			printf("], \"cand_dist\": [");
			for (unsigned c = 0; c < w->n_cand; c++)
				printf("%s%.17g", c ? ", " : "", w->cand_dist[c]);
			printf("]");
		}
		if (rgb && st == NF_OK) {
			printf(", \"w\": %u, \"h\": %u, \"rgb\": \"", w->dec.w, w->dec.h);
			for (unsigned i = 0; i < sizeof(w->rgb); i++)
				printf("%02x", w->rgb[i]);
			printf("\"");
		}
		printf("}\n");
	}
	if (r < 0) {
		fprintf(stderr, "nf-query: %s: %s\n", argv[2], err);
		return 1;
	}
	printf("{\"emd_pivots\": %" PRIu64 ", \"emd_capped\": %" PRIu64
	       ", \"jpeg_warnings\": %" PRIu64 "}\n",
		w->emd->pivots, w->emd->capped, w->dec.warnings);
	nf_work_fini(w);
	free(w);
	nf_pack_close(&pk);
	nf_db_close(&db);
	return 0;
}
