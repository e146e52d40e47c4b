/* netstreamcluster (PARSEC 3.0's netstreamcluster) on the pipeplace
 * runtime: clients on the kernel stack stream points over TCP; R
 * terminates TCP on the user-level stack (runtime/stack, lwIP over a DPDK
 * port; --stack kernel: kernel sockets) and cuts messages of whole points,
 * chunk by chunk; P clusters each chunk (online k-median, sc_cluster.c)
 * into weighted centres; T clusters a stream's centres at its end and
 * writes the result.  apps/netstreamcluster/README.md: the protocol, the
 * output, the figures. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "pp_app.h"
#include "sc_app.h"

#define DEFAULT_ADDR "198.18.42.1/24"
#define DEFAULT_PORT 9042
#define DONE_RING 1024
#define POOL_OVERHEAD 256
#define MAX_DIM_LIMIT 240 /* a chunk's centres fit one output mbuf */

static unsigned n_runs;

static void
set_defaults(struct sc_cfg *c)
{
	if (c->srv.max_conns != 0)
		return; /* set already (the runtime zeroes the configuration) */
	pp_server_opts_init(&c->srv, DEFAULT_ADDR, DEFAULT_PORT, 4);
	c->msg_bytes = 32 * 1024;
	c->max_dim = 128;
	c->max_chunk = 4096;
	c->max_centres = 8192;
	c->msgs = 256;
}

static int
sc_parse_opt(void *cfg, int argc, char **argv)
{
	struct sc_cfg *c = cfg;
	set_defaults(c);
	int r = pp_server_opts_parse(&c->srv, argc, argv);
	if (r != 0)
		return r;
	static const char *const known[] = { "--msg-kib", "--max-dim", "--max-chunk",
		"--max-centres", "--msgs", NULL };
	r = pp_server_known_opt(argc, argv, known);
	if (r <= 0)
		return r;
	const char *o = argv[0], *v = argv[1];
	uint64_t u;
	if (strcmp(o, "--msg-kib") == 0) {
		if (pp_parse_u64(o, v, 1, 32, &u) < 0)
			return -1;
		c->msg_bytes = (unsigned)u * 1024;
	} else if (strcmp(o, "--max-dim") == 0) {
		if (pp_parse_u64(o, v, 1, MAX_DIM_LIMIT, &u) < 0)
			return -1;
		c->max_dim = (unsigned)u;
	} else if (strcmp(o, "--max-chunk") == 0) {
		if (pp_parse_u64(o, v, 1, 1u << 20, &u) < 0)
			return -1;
		c->max_chunk = (unsigned)u;
	} else if (strcmp(o, "--max-centres") == 0) {
		if (pp_parse_u64(o, v, SC_MAX_K, 1u << 22, &u) < 0)
			return -1;
		c->max_centres = (unsigned)u;
	} else {
		if (pp_parse_u64(o, v, 64, 1u << 20, &u) < 0)
			return -1;
		c->msgs = (unsigned)u;
	}
	return 2;
}

static uint64_t
out_room(const struct sc_cfg *c)
{
	return SC_OUT_ROOM(c->max_dim) + RTE_PKTMBUF_HEADROOM;
}

static uint64_t
slot_bytes(const struct sc_cfg *c)
{
	return (uint64_t)c->max_chunk * c->max_dim * 4 +
		(uint64_t)c->max_centres * (c->max_dim * 4 + 8);
}

static int64_t
sc_dpdk_mem_mb(const void *cfgp)
{
	struct sc_cfg *c = (struct sc_cfg *)(uintptr_t)cfgp;
	set_defaults(c);
	_Static_assert(SC_OUT_ROOM(MAX_DIM_LIMIT) + RTE_PKTMBUF_HEADROOM <= 65535,
		"a chunk's centres fit one mbuf");
	/* per instance: the slots' point buffers; instances are not known
	 * here: reckoned for 4 */
	uint64_t bytes = (uint64_t)c->msgs *
			(c->msg_bytes + RTE_PKTMBUF_HEADROOM + out_room(c) + 2 * POOL_OVERHEAD) +
		4 * (uint64_t)c->srv.max_conns * slot_bytes(c);
	return (int64_t)(bytes >> 20) + 1 + pp_stack_mem_mb(c->srv.stack);
}

static void
free_state(struct sc_state *s)
{
	pp_stack_close(s->stack);
	rte_mempool_free(s->msg_pool);
	rte_mempool_free(s->out_pool);
	free(s);
}

static void
free_task(struct sc_task *t, unsigned max_conns)
{
	for (unsigned k = 0; t->r.slots != NULL && k < max_conns; k++)
		rte_pktmbuf_free(t->r.slots[k].cur);
	for (unsigned k = 0; t->p.slots != NULL && k < max_conns; k++)
		rte_free(t->p.slots[k].pts);
	for (unsigned k = 0; t->t.slots != NULL && k < max_conns; k++) {
		rte_free(t->t.slots[k].pts);
		rte_free(t->t.slots[k].weight);
	}
	sc_work_fini(&t->p.work);
	sc_work_fini(&t->t.work);
	rte_ring_free(t->done);
	rte_free(t->r.slots);
	rte_free(t->p.slots);
	rte_free(t->p.centre);
	rte_free(t->p.weight);
	rte_free(t->t.slots);
	rte_free(t->t.centre);
	rte_free(t->t.weight);
	rte_free(t->t.json);
	rte_free(t);
}

static int
sc_setup(void *cfgp, const struct pp_setup_info *info, void **app_state)
{
	struct sc_cfg *c = cfgp;
	set_defaults(c);
	if (c->msg_bytes < 4 * c->max_dim) {
		fprintf(stderr, "netstreamcluster: --msg-kib %u holds no record of --max-dim %u\n",
			c->msg_bytes / 1024, c->max_dim);
		return -EINVAL;
	}
	struct sc_state *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->cfg = c;
	s->n_instances = info->n_instances;
	int socket = (int)info->socket_id;
	unsigned run = n_runs++;
	char name[RTE_MEMPOOL_NAMESIZE];
	snprintf(name, sizeof(name), "sc_msg%u", run);
	s->msg_pool = rte_pktmbuf_pool_create(name, c->msgs, 32,
		RTE_ALIGN(sizeof(struct sc_msg), RTE_MBUF_PRIV_ALIGN),
		(uint16_t)(c->msg_bytes + RTE_PKTMBUF_HEADROOM), socket);
	snprintf(name, sizeof(name), "sc_out%u", run);
	s->out_pool = rte_pktmbuf_pool_create(name, c->msgs, 0, 0, (uint16_t)out_room(c), socket);
	if (s->msg_pool == NULL || s->out_pool == NULL) {
		fprintf(stderr, "netstreamcluster: cannot allocate %u messages of %u KiB: %s\n",
			c->msgs, c->msg_bytes / 1024, rte_strerror(rte_errno));
		free_state(s);
		return -ENOMEM;
	}
	if (pp_server_stack_open(&s->stack, &c->srv, info, "netstreamcluster") < 0) {
		free_state(s);
		return -EINVAL;
	}
	*app_state = s;
	return 0;
}

static int
sc_task_init(void *app_state, unsigned instance, void **task_state)
{
	struct sc_state *s = app_state;
	const struct sc_cfg *c = s->cfg;
	struct sc_task *t = rte_zmalloc("sc_task", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL)
		return -ENOMEM;
	t->app = s;
	t->instance = instance;
	t->r.si = pp_stack_inst(s->stack, instance);
	t->r.slots = rte_zmalloc("sc_r_slots", c->srv.max_conns * sizeof(*t->r.slots), 0);
	t->p.slots = rte_zmalloc("sc_p_slots", c->srv.max_conns * sizeof(*t->p.slots), 0);
	t->t.slots = rte_zmalloc("sc_t_slots", c->srv.max_conns * sizeof(*t->t.slots), 0);
	t->p.centre = rte_malloc("sc_p_centre", c->max_chunk * sizeof(uint32_t), 0);
	t->p.weight = rte_malloc("sc_p_weight", c->max_chunk * sizeof(uint64_t), 0);
	t->t.centre = rte_malloc("sc_t_centre", c->max_centres * sizeof(uint32_t), 0);
	t->t.weight = rte_malloc("sc_t_weight", c->max_centres * sizeof(uint64_t), 0);
	t->t.json_cap = 1024 + SC_MAX_K * (64 + 18 * (size_t)c->max_dim);
	t->t.json = rte_malloc("sc_json", t->t.json_cap, 0);
	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "sc_done%u_%u", n_runs, instance);
	t->done = rte_ring_create_elem(name, sizeof(struct sc_done), DONE_RING, SOCKET_ID_ANY,
		RING_F_SP_ENQ | RING_F_SC_DEQ);
	bool ok = t->r.slots != NULL && t->p.slots != NULL && t->t.slots != NULL &&
		t->p.centre != NULL && t->p.weight != NULL && t->t.centre != NULL &&
		t->t.weight != NULL && t->t.json != NULL && t->done != NULL;
	for (unsigned k = 0; ok && k < c->srv.max_conns; k++) {
		t->p.slots[k].pts = rte_malloc("sc_chunk",
			(size_t)c->max_chunk * c->max_dim * sizeof(float), RTE_CACHE_LINE_SIZE);
		t->t.slots[k].pts = rte_malloc("sc_centres",
			(size_t)c->max_centres * c->max_dim * sizeof(float), RTE_CACHE_LINE_SIZE);
		t->t.slots[k].weight = rte_malloc("sc_cweight",
			(size_t)c->max_centres * sizeof(uint64_t), RTE_CACHE_LINE_SIZE);
		ok = t->p.slots[k].pts != NULL && t->t.slots[k].pts != NULL &&
			t->t.slots[k].weight != NULL;
	}
	ok = ok && sc_work_init(&t->p.work, c->max_chunk) == 0;
	ok = ok && sc_work_init(&t->t.work, c->max_centres) == 0;
	if (!ok) {
		fprintf(stderr,
			"netstreamcluster: cannot allocate instance %u's buffers (%u connections "
			"of %u points x %u dims, %u centres)\n",
			instance, c->srv.max_conns, c->max_chunk, c->max_dim, c->max_centres);
		free_task(t, c->srv.max_conns);
		return -ENOMEM;
	}
	*task_state = t;
	return 0;
}

_Static_assert(sizeof(struct sc_r_counters) % 8 == 0 && sizeof(struct sc_p_counters) % 8 == 0 &&
		sizeof(struct sc_t_counters) % 8 == 0,
	"counters are uint64_t only");

static void
sc_stats(void *app_state, void *const *task_states, unsigned n_tasks, json_t *out)
{
	const struct sc_state *s = app_state;
	const struct sc_cfg *c = s->cfg;
	struct sc_r_counters r = { 0 };
	struct sc_p_counters p = { 0 };
	struct sc_t_counters t = { 0 };
	for (unsigned i = 0; i < n_tasks; i++) {
		const struct sc_task *k = task_states[i];
		pp_counters_add(&r, &k->r.ctr, sizeof(r));
		pp_counters_add(&p, &k->p.ctr, sizeof(p));
		pp_counters_add(&t, &k->t.ctr, sizeof(t));
	}
	json_object_set_new(out, "kind", json_string("measured"));
	const struct pp_json_count own[] = { { "empty", r.empty },
		{ "bad_header_reset", r.bad_header },
		{ "too_many_centres_reset", r.too_many_centres } };
	json_object_set_new(
		out, "streams", pp_streams_json(&r.streams, own, RTE_DIM(own), &t.store));
	json_object_set_new(out, "receipts", pp_receipts_json(&r.receipts));
	pp_json_set_u64(out, "input_bytes", r.input_bytes);
	pp_json_set_u64(out, "points", r.points);
	pp_json_set_u64(out, "partial_record_bytes", r.partial_record_bytes);
	json_t *ms = json_object();
	pp_json_set_u64(ms, "count", r.msgs);
	pp_json_set_u64(ms, "bytes_max", c->msg_bytes);
	pp_json_set_u64(ms, "message_buffer_waits", r.msg_waits);
	json_object_set_new(out, "messages", ms);
	json_t *ch = json_object();
	pp_json_set_u64(ch, "clustered", p.chunks);
	pp_json_set_u64(ch, "points", p.points);
	pp_json_set_u64(ch, "centres", p.centres);
	pp_json_set_u64(ch, "without_output", p.out_missing + t.no_output);
	json_object_set_new(out, "chunks", ch);
	json_t *fi = json_object();
	pp_json_set_u64(fi, "clusterings", t.finals);
	pp_json_set_u64(fi, "centres_in", t.final_centres_in);
	pp_json_set_u64(fi, "overflow", t.overflow);
	json_object_set_new(out, "final", fi);
	json_object_set_new(out, "output", pp_store_json(c->srv.out_dir, &t.store));
	json_t *lim = json_object();
	pp_json_set_u64(lim, "max_dim", c->max_dim);
	pp_json_set_u64(lim, "max_chunk", c->max_chunk);
	pp_json_set_u64(lim, "max_centres", c->max_centres);
	pp_json_set_u64(lim, "max_k", SC_MAX_K);
	json_object_set_new(out, "limits", lim);
	pp_stack_json(out, s->stack);
}

static int
sc_teardown(void *app_state, void **task_states, unsigned n_tasks)
{
	struct sc_state *s = app_state;
	uint64_t failed = 0;
	for (unsigned i = 0; i < n_tasks; i++) {
		struct sc_task *t = task_states[i];
		failed += t->t.ctr.store.failed;
		free_task(t, s->cfg->srv.max_conns);
	}
	int rc = pp_store_report(
		"netstreamcluster", s->cfg->srv.out_dir, failed, "stream result(s) not written");
	free_state(s);
	return rc;
}

/* The server's options (pp_server.h), then the app's own. */
#define USAGE                                                                         \
	PP_SERVER_USAGE(DEFAULT_ADDR, PP_SERVER_STR(DEFAULT_PORT), "4",               \
		"write each stream's result to DIR/stream-<id>.json")                 \
	"  --msg-kib N          message size, 1..32 KiB of whole points (32)\n"       \
	"  --max-dim N          largest dimension a stream may have (128, <= 240)\n"  \
	"  --max-chunk N        largest chunk (points) a stream may ask for (4096)\n" \
	"  --max-centres N      chunk centres a stream may keep for its final\n"      \
	"                       clustering (8192): chunks x kmax at most\n"           \
	"  --msgs N             message buffers, all instances together (256)\n"      \
	"  client protocol: a 32-byte header (\"PPSC\", u32 dim, u64 points, u32\n"   \
	"  chunk, u16 kmin, u16 kmax, u64 seed), then the points as float32; the\n"   \
	"  server answers a 32-byte receipt once the result is written (README.md)\n"

static const struct pp_app netstreamcluster_app = {
	.name = "netstreamcluster",
	.drop_reasons = NULL,
	.n_drop_reasons = 0,
	.usage = USAGE,
	.cfg_size = sizeof(struct sc_cfg),
	.parse_opt = sc_parse_opt,
	.setup = sc_setup,
	.task_init = sc_task_init,
	.process = sc_p_process,
	.stats = sc_stats,
	.teardown = sc_teardown,
	.dpdk_mem_mb = sc_dpdk_mem_mb,
	.rx = sc_r_rx,
	.tx = sc_t_tx,
};

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, &netstreamcluster_app);
}
