/* netferret (PARSEC 3.0's netferret) on the pipeplace runtime: a content-
 * based image search server.  Clients on the kernel stack send query
 * JPEGs over TCP, one connection each; R terminates TCP on the user-level
 * stack (runtime/stack, lwIP over a DPDK port; --stack kernel: kernel
 * sockets) and reads each query whole; P decodes, segments, extracts
 * region features, looks them up in the LSH index and ranks the candidate
 * images by EMD against one database every instance shares read-only; T
 * formats the answer, which R writes back on the query's connection.
 * apps/netferret/README.md: the protocol, the stages, the figures. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "nf_app.h"
#include "pp_app.h"

#define DEFAULT_ADDR "198.18.43.1/24"
#define DEFAULT_PORT 42285 /* PARSEC's netferret */
#define POOL_OVERHEAD 256

static unsigned n_runs;

static const char *const r_error_names[NF_ANS_N - NF_STATUS_N] = { "too_long", "bad_length",
	"truncated_query" };

const char *
nf_answer_error_name(unsigned e)
{
	return e < NF_STATUS_N ? nf_status_names[e] : r_error_names[e - NF_STATUS_N];
}

static void
set_defaults(struct nf_cfg *c)
{
	if (c->srv.max_conns != 0)
		return; /* set already (the runtime zeroes the configuration) */
	pp_server_opts_init(&c->srv, DEFAULT_ADDR, DEFAULT_PORT, 16);
	c->max_query = 16 * 1024;
	c->msgs = 256;
	c->idle_s = 10.0;
}

static int
nf_parse_opt(void *cfg, int argc, char **argv)
{
	struct nf_cfg *c = cfg;
	set_defaults(c);
	int r = pp_server_opts_parse(&c->srv, argc, argv);
	if (r != 0)
		return r;
	static const char *const known[] = { "--db", "--k", "--max-query-kib", "--msgs",
		"--idle-timeout", NULL };
	r = pp_server_known_opt(argc, argv, known);
	if (r <= 0)
		return r;
	const char *o = argv[0], *v = argv[1];
	uint64_t u;
	if (strcmp(o, "--db") == 0) {
		c->db_path = v;
	} else if (strcmp(o, "--k") == 0) {
		if (pp_parse_u64(o, v, 1, NF_MAX_K, &u) < 0)
			return -1;
		c->k = (unsigned)u;
	} else if (strcmp(o, "--max-query-kib") == 0) {
		if (pp_parse_u64(o, v, 1, 63, &u) < 0)
			return -1;
		c->max_query = (unsigned)u * 1024;
	} else if (strcmp(o, "--idle-timeout") == 0) {
		if (pp_parse_seconds(o, v, 3600, &c->idle_s) < 0)
			return -1;
	} else {
		if (pp_parse_u64(o, v, 64, 1u << 16, &u) < 0)
			return -1;
		c->msgs = (unsigned)u;
	}
	return 2;
}

static unsigned
msg_room(const struct nf_cfg *c)
{
	return RTE_MAX(c->max_query, (unsigned)NF_ANSWER_MAX);
}

static int64_t
nf_dpdk_mem_mb(const void *cfgp)
{
	struct nf_cfg *c = (struct nf_cfg *)(uintptr_t)cfgp;
	set_defaults(c);
	if (c->db_path == NULL) {
		fprintf(stderr,
			"netferret: --db FILE is required (a tier's db.bin: "
			"apps/netferret/netferret_input.py makes it)\n");
		return -1;
	}
	if (access(c->db_path, R_OK) != 0) {
		fprintf(stderr, "netferret: --db %s: %s\n", c->db_path, strerror(errno));
		return -1;
	}
	uint64_t bytes = (uint64_t)c->msgs *
		(msg_room(c) + RTE_PKTMBUF_HEADROOM + sizeof(struct nf_msg) + POOL_OVERHEAD);
	return (int64_t)(bytes >> 20) + 1 + pp_stack_mem_mb(c->srv.stack);
}

static void
free_state(struct nf_state *s)
{
	pp_stack_close(s->stack);
	rte_mempool_free(s->msg_pool);
	nf_db_close(&s->db);
	free(s);
}

static uint64_t
free_task(struct nf_task *t, unsigned max_conns)
{
	uint64_t left = 0;
	struct rte_mbuf *m;
	for (unsigned k = 0; t->r.slots != NULL && k < max_conns; k++)
		rte_pktmbuf_free(t->r.slots[k].cur);
	while (t->answers != NULL && rte_ring_dequeue(t->answers, (void **)&m) == 0) {
		rte_pktmbuf_free(m);
		left++;
	}
	if (t->p.work != NULL) {
		nf_work_fini(t->p.work);
		free(t->p.work);
	}
	rte_ring_free(t->answers);
	rte_free(t->r.slots);
	rte_free(t);
	return left;
}

static int
nf_setup(void *cfgp, const struct pp_setup_info *info, void **app_state)
{
	struct nf_cfg *c = cfgp;
	set_defaults(c);
	struct nf_state *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->cfg = c;
	s->n_instances = info->n_instances;
	char err[512];
	uint64_t t0 = rte_rdtsc();
	if (nf_db_open(&s->db, c->db_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "netferret: --db %s\n", err);
		free(s);
		return -EINVAL;
	}
	const struct nf_db_header *h = (const struct nf_db_header *)s->db.base;
	s->k = c->k != 0 ? c->k : h->top_k;
	if (s->k == 0 || s->k > NF_MAX_K) {
		fprintf(stderr, "netferret: --db %s gives top K %u: give --k 1..%d\n", c->db_path,
			h->top_k, NF_MAX_K);
		free_state(s);
		return -EINVAL;
	}
	fprintf(stderr,
		"netferret: database %s: %u images, %u vectors, %.1f MB, mapped and checked in "
		"%.2f s (measured)\n",
		c->db_path, s->db.n_images, s->db.n_vectors, (double)s->db.bytes / 1e6,
		(double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz());
	int socket = (int)info->socket_id;
	unsigned run = n_runs++;
	char name[RTE_MEMPOOL_NAMESIZE];
	snprintf(name, sizeof(name), "nf_msg%u", run);
	s->msg_pool = rte_pktmbuf_pool_create(name, c->msgs, 0,
		RTE_ALIGN(sizeof(struct nf_msg), RTE_MBUF_PRIV_ALIGN),
		(uint16_t)(msg_room(c) + RTE_PKTMBUF_HEADROOM), socket);
	if (s->msg_pool == NULL) {
		fprintf(stderr, "netferret: cannot allocate %u messages of %u bytes: %s\n", c->msgs,
			msg_room(c), rte_strerror(rte_errno));
		free_state(s);
		return -ENOMEM;
	}
	if (pp_server_stack_open(&s->stack, &c->srv, info, "netferret") < 0) {
		free_state(s);
		return -EINVAL;
	}
	*app_state = s;
	return 0;
}

static int
nf_task_init(void *app_state, unsigned instance, void **task_state)
{
	struct nf_state *s = app_state;
	const struct nf_cfg *c = s->cfg;
	struct nf_task *t = rte_zmalloc("nf_task", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL)
		return -ENOMEM;
	t->app = s;
	t->instance = instance;
	t->r.si = pp_stack_inst(s->stack, instance);
	t->r.idle_tsc = (uint64_t)(c->idle_s * (double)rte_get_tsc_hz());
	t->r.slots = rte_zmalloc("nf_r_slots", c->srv.max_conns * sizeof(*t->r.slots), 0);
	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "nf_ans%u_%u", n_runs, instance);
	t->answers = rte_ring_create(
		name, rte_align32pow2(c->msgs + 1), SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	t->p.work = malloc(sizeof(*t->p.work));
	if (t->p.work != NULL && nf_work_init(t->p.work, &s->db) != 0) {
		free(t->p.work);
		t->p.work = NULL;
	}
	if (t->r.slots == NULL || t->answers == NULL || t->p.work == NULL) {
		fprintf(stderr, "netferret: cannot allocate instance %u's buffers\n", instance);
		free_task(t, c->srv.max_conns);
		return -ENOMEM;
	}
	*task_state = t;
	return 0;
}

_Static_assert(sizeof(struct nf_r_counters) % 8 == 0 && sizeof(struct nf_p_counters) % 8 == 0 &&
		sizeof(struct nf_t_counters) % 8 == 0,
	"counters are uint64_t only");

static void
nf_stats(void *app_state, void *const *task_states, unsigned n_tasks, json_t *out)
{
	const struct nf_state *s = app_state;
	const struct nf_cfg *c = s->cfg;
	struct nf_r_counters r = { 0 };
	struct nf_p_counters p = { 0 };
	struct nf_t_counters t = { 0 };
	uint64_t lat_max_ns = 0, pivots = 0, capped = 0, warnings = 0;
	for (unsigned i = 0; i < n_tasks; i++) {
		const struct nf_task *k = task_states[i];
		pp_counters_add(&r, &k->r.ctr, sizeof(r));
		pp_counters_add(&p, &k->p.ctr, sizeof(p));
		pp_counters_add(&t, &k->t.ctr, sizeof(t));
		lat_max_ns = RTE_MAX(lat_max_ns, k->t.lat_max_ns);
		pivots += k->p.work->emd->pivots;
		capped += k->p.work->emd->capped;
		warnings += k->p.work->dec.warnings;
	}
	json_object_set_new(out, "kind", json_string("measured"));
	json_t *q = json_object();
	pp_json_set_u64(q, "connections", r.connections);
	pp_json_set_u64(q, "received", r.queries);
	pp_json_set_u64(q, "answered", t.answers);
	for (int k = 0; k < NF_STATUS_N; k++)
		pp_json_set_u64(q, nf_status_names[k], p.status[k]);
	pp_json_set_u64(q, "too_long", r.too_long);
	pp_json_set_u64(q, "bad_length", r.bad_length);
	pp_json_set_u64(q, "truncated_query", r.truncated_query);
	pp_json_set_u64(q, "truncated_length", r.truncated_length);
	pp_json_set_u64(q, "reset_mid_query", r.reset_mid_query);
	pp_json_set_u64(q, "cut_by_run_end", r.cut_by_run_end);
	pp_json_set_u64(q, "idle_closed", r.idle_closed);
	pp_json_set_u64(q, "end_tags", r.end_tags);
	json_object_set_new(out, "queries", q);
	json_t *an = pp_receipts_json(&r.answers);
	pp_json_set_u64(an, "errors_sent", r.error_answers_sent);
	pp_json_set_u64(an, "errors_not_sent", r.error_answers_no_room);
	pp_json_set_u64(an, "bytes", t.answer_bytes);
	json_object_set_new(out, "answers", an);
	pp_json_set_u64(out, "input_bytes", r.input_bytes);
	pp_json_set_u64(out, "discarded_bytes", r.discarded_bytes);
	pp_json_set_u64(out, "message_buffer_waits", r.msg_waits);
	json_t *res = json_object();
	pp_json_set_u64(res, "regions", p.regions);
	pp_json_set_u64(res, "vectors_examined", p.examined);
	pp_json_set_u64(res, "candidate_images", p.candidates);
	pp_json_set_u64(res, "results", p.results);
	pp_json_set_u64(res, "emd_pivots", pivots);
	pp_json_set_u64(res, "emd_pivot_cap_reached", capped);
	pp_json_set_u64(res, "jpeg_warnings", warnings);
	json_object_set_new(out, "work", res);
	/* P's cycles per stage (TSC, measured around each stage of every query) */
	json_t *st = json_object(), *cy = json_object(), *sh = json_object(), *pq = json_object();
	uint64_t all = 0;
	for (int k = 0; k < NF_ST_N; k++)
		all += p.ticks[k];
	for (int k = 0; k < NF_ST_N; k++) {
		pp_json_set_u64(cy, nf_stage_names[k], p.ticks[k]);
		json_object_set_new(sh, nf_stage_names[k],
			json_real(all ? (double)p.ticks[k] / (double)all : 0.0));
		json_object_set_new(pq, nf_stage_names[k],
			json_real(p.queries ? (double)p.ticks[k] / (double)p.queries : 0.0));
	}
	json_object_set_new(st, "what",
		json_string("P's TSC cycles in each stage, every query (measured): decode = "
			    "libjpeg, resize and HSV; index = LSH and the exact 2K nearest; rank = "
			    "EMD"));
	json_object_set_new(st, "cycles", cy);
	json_object_set_new(st, "share", sh);
	json_object_set_new(st, "cycles_per_query", pq);
	json_object_set_new(out, "stages", st);
	json_object_set_new(out, "latency_us",
		pp_latency_json(&t.lat, lat_max_ns,
			"query, R hands it to P until T has formatted its answer (measured; "
			"quantiles are upper edges of quarter-octave buckets)",
			"queries", (const unsigned[]){ 50, 99, 0 }));
	json_t *db = json_object();
	json_object_set_new(db, "path", json_string(c->db_path));
	pp_json_set_u64(db, "images", s->db.n_images);
	pp_json_set_u64(db, "vectors", s->db.n_vectors);
	pp_json_set_u64(db, "bytes", s->db.bytes);
	pp_json_set_u64(db, "lsh_tables", s->db.lsh.L);
	pp_json_set_u64(db, "lsh_functions", s->db.lsh.M);
	json_object_set_new(db, "lsh_w", json_real(s->db.lsh.W));
	pp_json_set_u64(db, "lsh_buckets", s->db.lsh.H);
	json_object_set_new(out, "db", db);
	json_t *lim = json_object();
	pp_json_set_u64(lim, "k", s->k);
	pp_json_set_u64(lim, "max_query_bytes", c->max_query);
	json_object_set_new(lim, "idle_timeout_s", json_real(c->idle_s));
	json_object_set_new(out, "limits", lim);
	pp_stack_json(out, s->stack);
}

static int
nf_teardown(void *app_state, void **task_states, unsigned n_tasks)
{
	struct nf_state *s = app_state;
	uint64_t left = 0;
	for (unsigned i = 0; i < n_tasks; i++)
		left += free_task(task_states[i], s->cfg->srv.max_conns);
	if (left != 0)
		fprintf(stderr,
			"netferret: %" PRIu64 " answer(s) made after the run's end, not sent\n",
			left);
	free_state(s);
	return 0;
}

/* The server's options (pp_server.h), then the app's own. */
#define USAGE                                                                          \
	PP_SERVER_USAGE(DEFAULT_ADDR, PP_SERVER_STR(DEFAULT_PORT), "16",               \
		"(not used: answers go back on the connections)")                      \
	"  --db FILE            the database (a tier's db.bin), required; mapped\n"    \
	"                       read-only once and shared by every instance\n"         \
	"  --k N                results per query, 1..100 (default: the database's,\n" \
	"                       its tier's top K)\n"                                   \
	"  --max-query-kib N    a query's JPEG at most, 1..63 KiB (16); longer ones\n" \
	"                       are answered \"!too_long\"\n"                          \
	"  --idle-timeout S     close a connection quiet this long (10)\n"             \
	"  --msgs N             query buffers, all instances together (256)\n"         \
	"  --streams N          (above) here: end after N queries answered\n"          \
	"  client protocol: an int32 length (host byte order) and that many bytes\n"   \
	"  of JPEG per query, -1 alone to end the run; the answer is an int32\n"       \
	"  length and \"\\t<image>:<distance>\" per result, or \"!<why>\" (README.md)\n"

static const struct pp_app netferret_app = {
	.name = "netferret",
	.drop_reasons = NULL,
	.n_drop_reasons = 0,
	.usage = USAGE,
	.cfg_size = sizeof(struct nf_cfg),
	.parse_opt = nf_parse_opt,
	.setup = nf_setup,
	.task_init = nf_task_init,
	.process = nf_p_process,
	.stats = nf_stats,
	.teardown = nf_teardown,
	.dpdk_mem_mb = nf_dpdk_mem_mb,
	.rx = nf_r_rx,
	.tx = nf_t_tx,
};

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, &netferret_app);
}
