/* netdedup (PARSEC 3.0's netdedup) on the pipeplace runtime: clients on the
 * kernel stack stream data over TCP; R terminates TCP on the user-level
 * stack (runtime/stack, lwIP over a DPDK port; --stack kernel: the kernel's
 * sockets, the anchor) and cuts coarse chunks; P cuts content-defined fine
 * chunks, fingerprints them (SHA-1) against one table shared by every
 * instance and deflates the new ones; T writes the deduplicated stream.
 * apps/netdedup/README.md: the protocol, the stream format, the figures. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
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

#include "dd_app.h"
#include "pp_app.h"

#define DEFAULT_ADDR "198.18.41.1/24"
#define DEFAULT_PORT 9041
#define DONE_RING 1024
#define POOL_OVERHEAD 256 /* mbuf header, mempool header, alignment: rough */

static unsigned n_runs; /* pool and ring names are unique per run */

static void
set_defaults(struct dd_cfg *c)
{
	if (c->srv.max_conns != 0)
		return; /* set already (the runtime zeroes the configuration) */
	pp_server_opts_init(&c->srv, DEFAULT_ADDR, DEFAULT_PORT, 16);
	c->coarse = 32 * 1024;
	c->table_entries = 1u << 20;
	c->level = 1;
	c->msgs = 256;
}

static int
dd_parse_opt(void *cfg, int argc, char **argv)
{
	struct dd_cfg *c = cfg;
	set_defaults(c);
	int r = pp_server_opts_parse(&c->srv, argc, argv);
	if (r != 0)
		return r;
	static const char *const known[] = { "--coarse-kib", "--table-entries", "--zlib-level",
		"--msgs", NULL };
	r = pp_server_known_opt(argc, argv, known);
	if (r <= 0)
		return r;
	const char *o = argv[0], *v = argv[1];
	uint64_t u;
	if (strcmp(o, "--coarse-kib") == 0) {
		if (pp_parse_u64(o, v, 4, 32, &u) < 0)
			return -1;
		c->coarse = (unsigned)u * 1024;
	} else if (strcmp(o, "--table-entries") == 0) {
		if (pp_parse_u64(o, v, 64, 1ull << 30, &u) < 0)
			return -1;
		if ((u & (u - 1)) != 0) {
			fprintf(stderr, "--table-entries %s: expected a power of two\n", v);
			return -1;
		}
		c->table_entries = u;
	} else if (strcmp(o, "--zlib-level") == 0) {
		if (pp_parse_u64(o, v, 0, 9, &u) < 0)
			return -1;
		c->level = (int)u;
	} else {
		if (pp_parse_u64(o, v, 64, 1u << 20, &u) < 0)
			return -1;
		c->msgs = (unsigned)u;
	}
	return 2;
}

static uint64_t
msg_room(const struct dd_cfg *c)
{
	return c->coarse + RTE_PKTMBUF_HEADROOM;
}

static uint64_t
out_room(const struct dd_cfg *c)
{
	return DD_OUT_ROOM((uint64_t)c->coarse) + RTE_PKTMBUF_HEADROOM;
}

static int64_t
dd_dpdk_mem_mb(const void *cfgp)
{
	struct dd_cfg *c = (struct dd_cfg *)(uintptr_t)cfgp;
	set_defaults(c);
	_Static_assert(DD_OUT_ROOM(32 * 1024) + RTE_PKTMBUF_HEADROOM <= 65535,
		"the output of a 32 KiB message fits one mbuf");
	uint64_t bytes = (uint64_t)c->msgs * (msg_room(c) + out_room(c) + 2 * POOL_OVERHEAD) +
		c->table_entries * sizeof(struct dd_entry);
	return (int64_t)(bytes >> 20) + 1 + pp_stack_mem_mb(c->srv.stack);
}

static void
free_state(struct dd_state *s)
{
	pp_stack_close(s->stack);
	rte_mempool_free(s->msg_pool);
	rte_mempool_free(s->out_pool);
	rte_free(s->table_mem);
	free(s);
}

static void
free_task(struct dd_task *t, unsigned max_conns)
{
	for (unsigned k = 0; t->r.slots != NULL && k < max_conns; k++)
		rte_pktmbuf_free(t->r.slots[k].cur);
	for (unsigned k = 0; t->t.slots != NULL && k < max_conns; k++)
		if (t->t.slots[k].fd >= 0)
			close(t->t.slots[k].fd);
	dd_encoder_fini(&t->p.enc);
	rte_ring_free(t->done);
	rte_free(t->r.slots);
	rte_free(t->p.slots);
	rte_free(t->p.carry_mem);
	rte_free(t->t.slots);
	rte_free(t);
}

static int
dd_setup(void *cfgp, const struct pp_setup_info *info, void **app_state)
{
	struct dd_cfg *c = cfgp;
	set_defaults(c);
	struct dd_state *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->cfg = c;
	s->n_instances = info->n_instances;
	int socket = (int)info->socket_id;
	unsigned run = n_runs++;
	char name[RTE_MEMPOOL_NAMESIZE];

	s->table_mem = rte_zmalloc_socket("dd_table", c->table_entries * sizeof(struct dd_entry),
		RTE_CACHE_LINE_SIZE, socket);
	snprintf(name, sizeof(name), "dd_msg%u", run);
	s->msg_pool = rte_pktmbuf_pool_create(name, c->msgs, 32,
		RTE_ALIGN(sizeof(struct dd_msg), RTE_MBUF_PRIV_ALIGN), (uint16_t)msg_room(c),
		socket);
	snprintf(name, sizeof(name), "dd_out%u", run);
	/* No per-lcore cache: P takes what T frees on another lcore, and a
	 * cache there would hold back buffers P needs (one per message). */
	s->out_pool = rte_pktmbuf_pool_create(name, c->msgs, 0, 0, (uint16_t)out_room(c), socket);
	if (s->table_mem == NULL || s->msg_pool == NULL || s->out_pool == NULL) {
		fprintf(stderr,
			"netdedup: cannot allocate the table (%" PRIu64 " entries) and %u messages "
			"of %u KiB: %s\n",
			c->table_entries, c->msgs, c->coarse / 1024, rte_strerror(rte_errno));
		free_state(s);
		return -ENOMEM;
	}
	dd_table_init(&s->table, s->table_mem, c->table_entries);
	if (pp_server_stack_open(&s->stack, &c->srv, info, "netdedup") < 0) {
		free_state(s);
		return -EINVAL;
	}
	*app_state = s;
	return 0;
}

static int
dd_task_init(void *app_state, unsigned instance, void **task_state)
{
	struct dd_state *s = app_state;
	const struct dd_cfg *c = s->cfg;
	struct dd_task *t = rte_zmalloc("dd_task", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL)
		return -ENOMEM;
	t->app = s;
	t->instance = instance;
	t->r.si = pp_stack_inst(s->stack, instance);
	t->r.slots = rte_zmalloc("dd_r_slots", c->srv.max_conns * sizeof(*t->r.slots), 0);
	t->p.slots = rte_zmalloc("dd_p_slots", c->srv.max_conns * sizeof(*t->p.slots), 0);
	t->p.carry_mem = rte_malloc("dd_carry", (size_t)c->srv.max_conns * DD_MAX_CHUNK, 0);
	t->t.slots = rte_zmalloc("dd_t_slots", c->srv.max_conns * sizeof(*t->t.slots), 0);
	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "dd_done%u_%u", n_runs, instance);
	t->done = rte_ring_create_elem(name, sizeof(struct dd_done), DONE_RING, SOCKET_ID_ANY,
		RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (t->r.slots == NULL || t->p.slots == NULL || t->p.carry_mem == NULL ||
		t->t.slots == NULL || t->done == NULL) {
		free_task(t, 0);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < c->srv.max_conns; k++) {
		t->p.slots[k].carry = t->p.carry_mem + (size_t)k * DD_MAX_CHUNK;
		t->t.slots[k].fd = -1;
	}
	if (dd_encoder_init(&t->p.enc, &s->table, c->level) < 0) {
		fprintf(stderr, "netdedup: zlib cannot set up deflate (level %d)\n", c->level);
		t->p.enc.level = 0; /* nothing to end */
		free_task(t, c->srv.max_conns);
		return -ENOMEM;
	}
	*task_state = t;
	return 0;
}

_Static_assert(sizeof(struct dd_r_counters) % 8 == 0 &&
		sizeof(struct dd_encode_counters) % 8 == 0 && sizeof(struct dd_t_counters) % 8 == 0,
	"counters are uint64_t only");

static void
dd_stats(void *app_state, void *const *task_states, unsigned n_tasks, json_t *out)
{
	const struct dd_state *s = app_state;
	const struct dd_cfg *c = s->cfg;
	struct dd_r_counters r = { 0 };
	struct dd_encode_counters p = { 0 };
	struct dd_t_counters t = { 0 };
	uint64_t out_missing = 0, lat_max_ns = 0;
	for (unsigned i = 0; i < n_tasks; i++) {
		const struct dd_task *k = task_states[i];
		pp_counters_add(&r, &k->r.ctr, sizeof(r));
		pp_counters_add(&p, &k->p.enc.ctr, sizeof(p));
		pp_counters_add(&t, &k->t.ctr, sizeof(t));
		out_missing += k->p.out_missing;
		lat_max_ns = RTE_MAX(lat_max_ns, k->t.lat_max_ns);
	}
	json_object_set_new(out, "kind", json_string("measured"));
	const struct pp_json_count refused[] = { { "bad_length_reset", r.bad_length } };
	json_object_set_new(out, "streams", pp_streams_json(&r.streams, refused, 1, &t.store));
	json_object_set_new(out, "receipts", pp_receipts_json(&r.receipts));
	pp_json_set_u64(out, "input_bytes", r.input_bytes);
	json_t *ch = json_object();
	pp_json_set_u64(ch, "coarse", r.msgs);
	pp_json_set_u64(ch, "coarse_bytes", (uint64_t)c->coarse);
	pp_json_set_u64(ch, "message_buffer_waits", r.msg_waits);
	pp_json_set_u64(ch, "fine", p.chunks);
	pp_json_set_u64(ch, "unique", p.unique);
	pp_json_set_u64(ch, "duplicate", p.duplicate);
	pp_json_set_u64(ch, "table_full", p.table_full);
	pp_json_set_u64(ch, "raw_bytes", p.raw_bytes);
	pp_json_set_u64(ch, "unique_bytes", p.unique_bytes);
	pp_json_set_u64(ch, "duplicate_bytes", p.duplicate_bytes);
	pp_json_set_u64(ch, "stored_bytes", p.stored_bytes);
	pp_json_set_u64(ch, "deflated", p.deflated);
	json_object_set_new(out, "chunks", ch);
	json_t *tb = json_object();
	pp_json_set_u64(tb, "entries", c->table_entries);
	pp_json_set_u64(tb, "used", dd_table_used(&s->table));
	pp_json_set_u64(tb, "bytes", c->table_entries * sizeof(struct dd_entry));
	json_object_set_new(out, "table", tb);
	json_t *o = pp_store_json(c->srv.out_dir, &t.store);
	pp_json_set_u64(o, "messages_without_output", t.no_output + out_missing);
	json_object_set_new(out, "output", o);
	json_object_set_new(out, "latency_us",
		pp_latency_json(&t.lat, lat_max_ns,
			"coarse chunk, R hands it over to T has written it (measured; "
			"quantiles are upper edges of quarter-octave buckets)",
			"chunks", (const unsigned[]){ 50, 90, 99, 0 }));
	json_object_set_new(out, "zlib_level", json_integer(c->level));
	pp_stack_json(out, s->stack);
}

static int
dd_teardown(void *app_state, void **task_states, unsigned n_tasks)
{
	struct dd_state *s = app_state;
	uint64_t failed = 0;
	for (unsigned i = 0; i < n_tasks; i++) {
		struct dd_task *t = task_states[i];
		failed += t->t.ctr.store.failed;
		free_task(t, s->cfg->srv.max_conns);
	}
	int rc = pp_store_report(
		"netdedup", s->cfg->srv.out_dir, failed, "stream(s) not written whole");
	free_state(s);
	return rc;
}

/* The server's options (pp_server.h), then the app's own. */
#define USAGE                                                                             \
	PP_SERVER_USAGE(DEFAULT_ADDR, PP_SERVER_STR(DEFAULT_PORT), "16",                  \
		"write each stream to DIR/stream-<id>.pdd (without it\n"                  \
		"                       the stream is made and counted, not written)")    \
	"  --coarse-kib N       coarse chunk (message) size, 4..32 KiB (32)\n"            \
	"  --table-entries N    dedup table slots, a power of two (1048576; 32 B each)\n" \
	"  --zlib-level N       deflate level for new chunks, 0 = store (1)\n"            \
	"  --msgs N             coarse chunk buffers, all instances together (256)\n"     \
	"  client protocol: u64 length (big-endian), then the bytes; after the\n"         \
	"  stream is written the server answers a 32-byte receipt (README.md)\n"

static const struct pp_app netdedup_app = {
	.name = "netdedup",
	.drop_reasons = NULL, /* P forwards every message */
	.n_drop_reasons = 0,
	.usage = USAGE,
	.cfg_size = sizeof(struct dd_cfg),
	.parse_opt = dd_parse_opt,
	.setup = dd_setup,
	.task_init = dd_task_init,
	.process = dd_p_process,
	.stats = dd_stats,
	.teardown = dd_teardown,
	.dpdk_mem_mb = dd_dpdk_mem_mb,
	.rx = dd_r_rx,
	.tx = dd_t_tx,
};

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, &netdedup_app);
}
