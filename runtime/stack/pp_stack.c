/* pp_stack.h on two backends, reached through their tables of operations
 * (pp_stack_backend.h): the instances and connection slots, the counters
 * kept around the backends' calls, the statistics. */
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "pp_stack_backend.h"

/* Every backend is reached through its table; any kind but lwIP is the
 * kernel's. */
static const struct pp_stack_ops *
backend(enum pp_stack_kind kind)
{
	return kind == PP_STACK_LWIP ? &pp_stack_lwip_ops : &pp_stack_kernel_ops;
}

unsigned
pp_stack_mem_mb(enum pp_stack_kind kind)
{
	return backend(kind)->mem_mb;
}

/* The instances and slots pp_stack_open made (some may be missing). */
static void
free_stack(struct pp_stack *s)
{
	if (s == NULL)
		return;
	if (s->inst != NULL)
		for (unsigned i = 0; i < s->conf.n_instances; i++) {
			rte_free(s->inst[i].conns);
			rte_free(s->inst[i].impl);
		}
	rte_free(s->inst);
	free(s);
}

int
pp_stack_open(struct pp_stack **out, const struct pp_stack_conf *conf, char *err, size_t errlen)
{
	*out = NULL;
	if (conf->n_instances == 0 || conf->max_conns == 0) {
		snprintf(err, errlen, "stack: no instances or no connection slots");
		return -1;
	}
	struct pp_stack *s = calloc(1, sizeof(*s));
	if (s == NULL)
		goto nomem;
	s->conf = *conf;
	s->ops = backend(conf->kind);
	s->inst = rte_zmalloc_socket("pp_stack_inst", conf->n_instances * sizeof(*s->inst),
		RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (s->inst == NULL)
		goto nomem;
	for (unsigned i = 0; i < conf->n_instances; i++) {
		struct pp_stack_inst *si = &s->inst[i];
		si->s = s;
		si->index = i;
		si->listen_fd = -1;
		si->rx_port = conf->queues[i].rx_port;
		si->rx_queue = conf->queues[i].rx_queue;
		si->tx_port = conf->queues[i].tx_port;
		si->tx_queue = conf->queues[i].tx_queue;
		si->conns = rte_zmalloc_socket("pp_stack_conns",
			conf->max_conns * sizeof(*si->conns), RTE_CACHE_LINE_SIZE, conf->socket_id);
		si->impl = rte_zmalloc_socket("pp_stack_impl", conf->max_conns * sizeof(*si->impl),
			RTE_CACHE_LINE_SIZE, conf->socket_id);
		if (si->conns == NULL || si->impl == NULL)
			goto nomem;
		for (unsigned k = 0; k < conf->max_conns; k++) {
			si->conns[k].slot = k;
			si->conns[k].impl = &si->impl[k];
			si->impl[k].si = si;
			si->impl[k].fd = -1;
		}
	}
	if (s->ops->open(s, err, errlen) < 0) {
		pp_stack_close(s);
		return -1;
	}
	*out = s;
	return 0;
nomem:
	snprintf(err, errlen, "stack: out of memory for %u instances of %u connections",
		conf->n_instances, conf->max_conns);
	free_stack(s); /* no backend opened: nothing of it to close */
	return -1;
}

void
pp_stack_close(struct pp_stack *s)
{
	if (s == NULL)
		return;
	s->ops->close(s);
	free_stack(s);
}

struct pp_stack_inst *
pp_stack_inst(struct pp_stack *s, unsigned instance)
{
	return &s->inst[instance];
}

unsigned
pp_stack_max_conns(const struct pp_stack *s)
{
	return s->conf.max_conns;
}

struct pp_conn *
pp_stack_conn(struct pp_stack_inst *si, unsigned slot)
{
	return &si->conns[slot];
}

static inline uint64_t
moved(const struct pp_stack_counters *c)
{
	return c->rx_frames + c->tx_frames + c->bytes_read + c->accepted;
}

void
pp_stack_poll_begin(struct pp_stack_inst *si, bool input)
{
	si->ctr.polls++;
	si->poll_moved0 = moved(&si->ctr);
	si->poll_t0 = rte_rdtsc();
	si->s->ops->poll_begin(si, input);
	si->poll_t1 = rte_rdtsc();
}

void
pp_stack_poll_end(struct pp_stack_inst *si)
{
	uint64_t t2 = rte_rdtsc();
	si->s->ops->poll_end(si);
	if (moved(&si->ctr) == si->poll_moved0)
		return;
	uint64_t t3 = rte_rdtsc();
	si->ctr.busy_polls++;
	si->ctr.cycles_in += si->poll_t1 - si->poll_t0;
	si->ctr.cycles_app += t2 - si->poll_t1;
	si->ctr.cycles_out += t3 - t2;
}

size_t
pp_conn_read(struct pp_conn *c, void *dst, size_t max)
{
	struct pp_stack_inst *si = c->impl->si;
	size_t n = si->s->ops->read(c, dst, max);
	c->bytes_read += n;
	si->ctr.bytes_read += n;
	return n;
}

int
pp_conn_write(struct pp_conn *c, const void *buf, size_t len)
{
	return c->impl->si->s->ops->write(c, buf, len);
}

bool
pp_conn_unacked(struct pp_conn *c)
{
	return c->impl->si->s->ops->unacked(c);
}

uint64_t
pp_conn_release(struct pp_conn *c)
{
	if (c->state == PP_CONN_FREE)
		return 0;
	struct pp_stack_inst *si = c->impl->si;
	uint64_t lost = si->s->ops->release(c);
	si->ctr.bytes_discarded += lost;
	c->state = PP_CONN_FREE;
	return lost;
}

void
pp_stack_stats(const struct pp_stack *s, json_t *out)
{
	struct pp_stack_counters t = { 0 };
	for (unsigned i = 0; i < s->conf.n_instances; i++) {
		const struct pp_stack_counters *c = &s->inst[i].ctr;
		/* Read while R may write them (SIGUSR1 snapshots): plain 64-bit
		 * loads, torn values are impossible on the 64-bit targets. */
		t.rx_frames += c->rx_frames;
		t.rx_frames_dropped += c->rx_frames_dropped;
		t.tx_frames += c->tx_frames;
		t.tx_frames_dropped += c->tx_frames_dropped;
		t.accepted += c->accepted;
		t.refused += c->refused;
		t.bytes_read += c->bytes_read;
		t.bytes_discarded += c->bytes_discarded;
		t.polls += c->polls;
		t.timer_runs += c->timer_runs;
		t.busy_polls += c->busy_polls;
		t.cycles_in += c->cycles_in;
		t.cycles_app += c->cycles_app;
		t.cycles_out += c->cycles_out;
	}
	json_object_set_new(out, "stack", json_string(s->ops->describe));
	if (s->ops->counts_frames) {
		json_object_set_new(out, "rx_frames", json_integer((json_int_t)t.rx_frames));
		json_object_set_new(
			out, "rx_frames_dropped", json_integer((json_int_t)t.rx_frames_dropped));
		json_object_set_new(out, "tx_frames", json_integer((json_int_t)t.tx_frames));
		json_object_set_new(
			out, "tx_frames_dropped", json_integer((json_int_t)t.tx_frames_dropped));
		json_object_set_new(out, "timer_runs", json_integer((json_int_t)t.timer_runs));
	}
	json_object_set_new(out, "connections_accepted", json_integer((json_int_t)t.accepted));
	json_object_set_new(out, "connections_refused", json_integer((json_int_t)t.refused));
	json_object_set_new(out, "bytes_read", json_integer((json_int_t)t.bytes_read));
	json_object_set_new(
		out, "bytes_discarded_unread", json_integer((json_int_t)t.bytes_discarded));
	json_object_set_new(out, "polls", json_integer((json_int_t)t.polls));
	json_t *cy = json_object();
	json_object_set_new(cy, "what",
		json_string("TSC cycles of R's polls that moved frames or bytes (measured): "
			    "stack_in = frames in, timers, accepts; app = the app's reading and "
			    "chunking; stack_out = frames out"));
	json_object_set_new(cy, "busy_polls", json_integer((json_int_t)t.busy_polls));
	json_object_set_new(cy, "stack_in", json_integer((json_int_t)t.cycles_in));
	json_object_set_new(cy, "app", json_integer((json_int_t)t.cycles_app));
	json_object_set_new(cy, "stack_out", json_integer((json_int_t)t.cycles_out));
	json_object_set_new(out, "r_cycles", cy);
}
