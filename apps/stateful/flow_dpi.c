/* Application detection with nDPI.  See flow_dpi.h. */
#include "flow_dpi.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ndpi_api.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#define STATE_CACHE 64 /* per-lcore cache of the state pool */

struct flow_dpi {
	uint64_t setup_allocs; /* nDPI heap allocations when the last module was made */
	struct rte_mempool *states;
	struct ndpi_detection_module_struct *names; /* read-only after set-up */
	struct flow_dpi_cfg cfg;
};

struct flow_dpi_worker {
	struct flow_dpi *d;
	struct ndpi_detection_module_struct *mod;
	uint64_t tsc_per_ms;
	uint32_t n_protos;      /* ids 0 .. n_protos - 1 */
	uint64_t *by_app;       /* [master * n_protos + app]: flows settled */
	uint64_t packets;       /* packets given to nDPI */
	uint64_t unreadable;    /* packets not given: datagram cut, or a later fragment */
	uint64_t no_readable;   /* flows that ended with no packet given (Unknown) */
	uint64_t cycles;        /* TSC cycles spent in ndpi_detection_process_packet */
	uint64_t not_inspected; /* no free state at creation */
	uint64_t guessed;       /* settled by giveup with a guessed protocol */
	uint64_t gave_up;       /* settled by giveup (cap reached or flow ended) */
	uint64_t out_of_range;  /* ids >= n_protos, not counted by_app */
};

/* nDPI's heap allocations, counted (see flow_dpi.h). */
static atomic_uint_fast64_t heap_allocs, heap_frees;

static void *
count_malloc(size_t size)
{
	atomic_fetch_add_explicit(&heap_allocs, 1, memory_order_relaxed);
	return malloc(size);
}

static void
count_free(void *p)
{
	if (p != NULL)
		atomic_fetch_add_explicit(&heap_frees, 1, memory_order_relaxed);
	free(p);
}

struct flow_dpi *
flow_dpi_create(const struct flow_dpi_cfg *cfg, int socket_id, char *err, size_t errlen)
{
	static atomic_uint serial;
	struct flow_dpi *d;
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned cache = cfg->states >= 4 * STATE_CACHE ? STATE_CACHE : 0;

	set_ndpi_malloc(count_malloc);
	set_ndpi_free(count_free);
	set_ndpi_flow_malloc(count_malloc);
	set_ndpi_flow_free(count_free);
	d = rte_zmalloc_socket("flow_dpi", sizeof(*d), RTE_CACHE_LINE_SIZE, socket_id);
	if (d == NULL) {
		snprintf(err, errlen, "--dpi: out of memory");
		return NULL;
	}
	d->cfg = *cfg;
	d->names = ndpi_init_detection_module(ndpi_no_prefs);
	if (d->names == NULL) {
		snprintf(err, errlen, "--dpi: nDPI's detection module cannot be created");
		rte_free(d);
		return NULL;
	}
	ndpi_finalize_initialization(d->names);
	snprintf(name, sizeof(name), "dpi_states_%u", atomic_fetch_add(&serial, 1));
	d->states = rte_mempool_create(name, cfg->states, SIZEOF_FLOW_STRUCT, cache, 0, NULL, NULL,
		NULL, NULL, socket_id, 0);
	if (d->states == NULL) {
		snprintf(err, errlen,
			"--dpi-flows %u: cannot preallocate %u nDPI flow states of %zu bytes: %s",
			cfg->states, cfg->states, (size_t)SIZEOF_FLOW_STRUCT,
			rte_strerror(rte_errno));
		ndpi_exit_detection_module(d->names);
		rte_free(d);
		return NULL;
	}
	return d;
}

void
flow_dpi_free(struct flow_dpi *d)
{
	if (d == NULL)
		return;
	rte_mempool_free(d->states);
	ndpi_exit_detection_module(d->names);
	rte_free(d);
}

struct flow_dpi_worker *
flow_dpi_worker_create(struct flow_dpi *d, int socket_id)
{
	struct flow_dpi_worker *w;
	NDPI_PROTOCOL_BITMASK all;

	w = rte_zmalloc_socket("flow_dpi_worker", sizeof(*w), RTE_CACHE_LINE_SIZE, socket_id);
	if (w == NULL)
		return NULL;
	w->d = d;
	w->mod = ndpi_init_detection_module(ndpi_no_prefs);
	if (w->mod == NULL) {
		rte_free(w);
		return NULL;
	}
	NDPI_BITMASK_SET_ALL(all);
	ndpi_set_protocol_detection_bitmask2(w->mod, &all);
	ndpi_finalize_initialization(w->mod);
	w->n_protos = ndpi_get_num_supported_protocols(w->mod);
	w->by_app = rte_zmalloc_socket("flow_dpi_counts",
		sizeof(uint64_t) * w->n_protos * w->n_protos, RTE_CACHE_LINE_SIZE, socket_id);
	w->tsc_per_ms = rte_get_tsc_hz() / 1000;
	if (w->by_app == NULL || w->tsc_per_ms == 0) {
		flow_dpi_worker_free(w);
		return NULL;
	}
	/* Workers are made before any packet: what nDPI allocates from now on
	 * is what the packets cost. */
	d->setup_allocs = atomic_load(&heap_allocs);
	return w;
}

void
flow_dpi_worker_free(struct flow_dpi_worker *w)
{
	if (w == NULL)
		return;
	if (w->mod != NULL)
		ndpi_exit_detection_module(w->mod);
	rte_free(w->by_app);
	rte_free(w);
}

/* The flow's application is final: record it, free nDPI's data, give the
 * state back. */
static void
settle(struct flow_dpi_worker *w, struct flow_record *r, ndpi_protocol proto)
{
	struct ndpi_flow_struct *f = r->app_state;

	r->app_master = proto.master_protocol;
	r->app_proto = proto.app_protocol;
	r->app_status = FLOW_APP_DONE;
	r->app_state = NULL;
	if (proto.master_protocol < w->n_protos && proto.app_protocol < w->n_protos)
		w->by_app[(size_t)proto.master_protocol * w->n_protos + proto.app_protocol]++;
	else
		w->out_of_range++;
	ndpi_free_flow_data(f);
	rte_mempool_put(w->d->states, f);
}

static void
give_up(struct flow_dpi_worker *w, struct flow_record *r)
{
	u_int8_t guessed = 0;
	ndpi_protocol proto = ndpi_detection_giveup(w->mod, r->app_state, 1, &guessed);

	w->gave_up++;
	w->guessed += guessed != 0;
	settle(w, r, proto);
}

/* Whether nDPI can read the packet's IP datagram, which is how ndpiReader
 * picks the packets it hands over (reader_util.c): all of it captured (the
 * total length not cut by the snap length) and, for IPv4, not a later
 * fragment.  nDPI finds nothing in the others, and they would use up the
 * flow's packet budget before the packets it can read arrive.  The flow
 * parser has checked the fixed header is there. */
static inline bool
readable(const struct flow_pkt *p)
{
	const uint8_t *ip = p->l3;

	if (p->key.family == FLOW_FAMILY_IPV4) /* total length 0: BIG TCP, the frame counts */
		return p->l3_len >= ((unsigned)ip[2] << 8 | ip[3]) &&
			(((unsigned)ip[6] << 8 | ip[7]) & 0x1fffu) == 0;
	return p->l3_len >= 40u + ((unsigned)ip[4] << 8 | ip[5]);
}

void
flow_dpi_packet(
	struct flow_dpi_worker *w, struct flow_record *r, const struct flow_pkt *p, uint64_t now)
{
	struct ndpi_flow_struct *f;
	ndpi_protocol proto;
	uint64_t t0;
	uint32_t cap;
	bool enough;

	if (!readable(p)) {
		w->unreadable++;
		return;
	}
	if (r->app_status == FLOW_APP_FRESH) {
		void *s;

		if (rte_mempool_get(w->d->states, &s) != 0) {
			r->app_status = FLOW_APP_NOT_INSPECTED;
			w->not_inspected++;
			return;
		}
		memset(s, 0, SIZEOF_FLOW_STRUCT);
		r->app_state = s;
		r->app_status = FLOW_APP_INSPECTING;
	}
	f = r->app_state;
	if (r->app_packets < UINT8_MAX)
		r->app_packets++;
	t0 = rte_rdtsc();
	proto = ndpi_detection_process_packet(w->mod, f, p->l3, p->l3_len, now / w->tsc_per_ms);
	w->cycles += rte_rdtsc() - t0;
	w->packets++;
	/* ndpiReader: the flow's packet count (this one included) over the cap. */
	cap = p->key.proto == 6 ? w->d->cfg.max_tcp_packets : w->d->cfg.max_udp_packets;
	enough = r->app_packets > cap || f->fail_with_unknown;
	if (!enough && proto.app_protocol == NDPI_PROTOCOL_UNKNOWN)
		return;
	if (!enough && ndpi_extra_dissection_possible(w->mod, f))
		return; /* e.g. waiting for the TLS certificate */
	if (proto.app_protocol == NDPI_PROTOCOL_UNKNOWN)
		give_up(w, r);
	else
		settle(w, r, proto);
}

void
flow_dpi_finish(struct flow_dpi_worker *w, struct flow_record *r)
{
	if (r->app_status == FLOW_APP_INSPECTING) {
		give_up(w, r);
	} else if (r->app_status == FLOW_APP_FRESH) {
		/* No packet nDPI could read: Unknown, as nDPI says of a flow
		 * it found nothing in, and counted apart. */
		r->app_master = 0;
		r->app_proto = 0;
		r->app_status = FLOW_APP_DONE;
		w->by_app[0]++;
		w->no_readable++;
	}
}

void
flow_dpi_finish_all(struct flow_dpi_worker *w, struct flow_table *t)
{
	uint32_t i, idx;

	/* The live flows, by their buckets' chains (a free record of the pool
	 * is FRESH too, and no flow); reclaimed ones were settled when they
	 * were reclaimed.  The tasks have stopped: nothing moves the chains. */
	for (i = 0; i < FLOW_TABLE_BUCKETS; i++)
		for (idx = t->buckets[i].head; idx != FLOW_NIL && idx < t->capacity;
			idx = t->pool[idx].next)
			flow_dpi_finish(w, &t->pool[idx]);
}

const char *
flow_dpi_name(void *arg, uint16_t master, uint16_t app, char *buf, size_t size)
{
	const struct flow_dpi *d = arg;
	ndpi_protocol p = { .master_protocol = master, .app_protocol = app };

	return ndpi_protocol2name(d->names, p, buf, (u_int)size);
}

void
flow_dpi_stats(const struct flow_dpi *d, struct flow_dpi_worker *const *w, unsigned n, json_t *out)
{
	json_t *x = json_object(), *by = json_object();
	uint64_t packets = 0, cycles = 0, not_inspected = 0, guessed = 0, gave_up = 0, oor = 0;
	uint64_t settled = 0, unknown = 0, unreadable = 0, no_readable = 0;
	const struct flow_dpi_worker *w0 = NULL;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (w[i] == NULL)
			continue;
		w0 = w0 != NULL ? w0 : w[i];
		packets += w[i]->packets;
		cycles += w[i]->cycles;
		not_inspected += w[i]->not_inspected;
		guessed += w[i]->guessed;
		gave_up += w[i]->gave_up;
		oor += w[i]->out_of_range;
		unreadable += w[i]->unreadable;
		no_readable += w[i]->no_readable;
	}
	if (w0 != NULL) {
		uint32_t np = w0->n_protos;

		for (size_t k = 0; k < (size_t)np * np; k++) {
			uint64_t cnt = 0;
			char name[64];

			for (i = 0; i < n; i++)
				cnt += w[i] != NULL ? w[i]->by_app[k] : 0;
			if (cnt == 0)
				continue;
			settled += cnt;
			if (k == 0)
				unknown = cnt;
			flow_dpi_name((void *)(uintptr_t)d, (uint16_t)(k / np), (uint16_t)(k % np),
				name, sizeof(name));
			json_object_set_new(by, name,
				json_integer((json_int_t)cnt +
					json_integer_value(json_object_get(by, name))));
		}
	}
	json_object_set_new(x, "kind", json_string("measured"));
	json_object_set_new(x, "engine", json_string("nDPI"));
	json_object_set_new(x, "ndpi_version", json_string(ndpi_revision()));
	json_object_set_new(x, "max_tcp_packets", json_integer(d->cfg.max_tcp_packets));
	json_object_set_new(x, "max_udp_packets", json_integer(d->cfg.max_udp_packets));
	json_object_set_new(x, "flow_states", json_integer(d->cfg.states));
	json_object_set_new(x, "flow_states_in_use",
		json_integer((json_int_t)rte_mempool_in_use_count(d->states)));
	json_object_set_new(x, "flows_settled", json_integer((json_int_t)(settled + oor)));
	json_object_set_new(x, "flows_unknown", json_integer((json_int_t)unknown));
	json_object_set_new(x, "flows_gave_up", json_integer((json_int_t)gave_up));
	json_object_set_new(x, "flows_guessed", json_integer((json_int_t)guessed));
	json_object_set_new(x, "flows_not_inspected", json_integer((json_int_t)not_inspected));
	json_object_set_new(x, "packets_inspected", json_integer((json_int_t)packets));
	json_object_set_new(x, "packets_unreadable", json_integer((json_int_t)unreadable));
	json_object_set_new(
		x, "flows_without_readable_packet", json_integer((json_int_t)no_readable));
	json_object_set_new(x, "ndpi_cycles", json_integer((json_int_t)cycles));
	json_object_set_new(x, "ndpi_cycles_per_inspected_packet",
		json_real(packets ? (double)cycles / (double)packets : 0));
	json_object_set_new(x, "ndpi_heap_allocs_setup", json_integer((json_int_t)d->setup_allocs));
	json_object_set_new(x, "ndpi_heap_allocs_packets",
		json_integer((json_int_t)(atomic_load(&heap_allocs) - d->setup_allocs)));
	json_object_set_new(
		x, "ndpi_heap_frees", json_integer((json_int_t)atomic_load(&heap_frees)));
	json_object_set_new(x, "flows_by_application", by);
	json_object_set_new(out, "dpi", x);
}
