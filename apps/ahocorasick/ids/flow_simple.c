/* A single-threaded flow table for the tools (see flow_simple.h). */
#include "flow_simple.h"

#include <stdlib.h>
#include <string.h>

#include "flow_key.h"

#define NIL UINT32_MAX

struct rec {
	struct flow_key key;
	uint32_t hash, next;
	uint64_t last;
	uint8_t fins, closed;
};

struct flow_simple {
	struct rec *r;
	uint8_t *state;
	uint32_t cap, state_bytes, mask, free_head, in_use;
	uint32_t *bucket;
	uint64_t idle;
	flow_simple_end_fn on_end;
	void *ctx;
};

struct flow_simple *
flow_simple_new(uint32_t capacity, uint32_t state_bytes, uint64_t idle, flow_simple_end_fn on_end,
	void *ctx)
{
	struct flow_simple *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	uint32_t nb = 1;
	while (nb < capacity)
		nb <<= 1;
	f->cap = capacity;
	f->state_bytes = (state_bytes + 7) & ~7u;
	f->mask = nb - 1;
	f->idle = idle;
	f->on_end = on_end;
	f->ctx = ctx;
	f->r = calloc(capacity, sizeof(*f->r));
	f->state = calloc(capacity, f->state_bytes ? f->state_bytes : 8);
	f->bucket = malloc(nb * sizeof(*f->bucket));
	if (f->r == NULL || f->state == NULL || f->bucket == NULL) {
		flow_simple_free(f);
		return NULL;
	}
	for (uint32_t i = 0; i < nb; i++)
		f->bucket[i] = NIL;
	for (uint32_t i = 0; i < capacity; i++)
		f->r[i].next = i + 1 < capacity ? i + 1 : NIL;
	f->free_head = 0;
	return f;
}

void
flow_simple_free(struct flow_simple *f)
{
	if (f == NULL)
		return;
	free(f->r);
	free(f->state);
	free(f->bucket);
	free(f);
}

uint32_t
flow_simple_in_use(const struct flow_simple *f)
{
	return f->in_use;
}

static void *
state_of(struct flow_simple *f, uint32_t i)
{
	return f->state + (size_t)i * f->state_bytes;
}

/* End record i (found through *link). */
static void
end(struct flow_simple *f, uint32_t *link, uint32_t i, uint64_t now)
{
	if (f->on_end != NULL)
		f->on_end(f->ctx, state_of(f, i), &f->r[i].key, now);
	*link = f->r[i].next;
	f->r[i].next = f->free_head;
	f->free_head = i;
	f->in_use--;
}

static uint32_t
simple_hash(void *table, const struct flow_key *k)
{
	(void)table;
	const uint8_t *b = (const uint8_t *)k;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static void
track(struct rec *r, const struct flow_pkt *p)
{
	if (p->key.proto != 6)
		return;
	if (p->tcp_flags & 0x04)
		r->closed = 1;
	else if (p->tcp_flags & 0x01) {
		r->fins |= (uint8_t)(1u << p->dir);
		r->closed = r->fins == 3;
	}
}

static enum ids_flow_update
simple_update(void *table, const struct flow_pkt *p, uint32_t hash, uint32_t wire_len, uint64_t now,
	void *counters, ids_visit_fn fn, void *arg)
{
	struct flow_simple *f = table;
	(void)wire_len;
	(void)counters;
	uint32_t *link = &f->bucket[hash & f->mask];
	while (*link != NIL) {
		uint32_t i = *link;
		struct rec *r = &f->r[i];
		if (f->idle && now - r->last > f->idle) {
			end(f, link, i, now);
			continue;
		}
		if (r->hash == hash && flow_key_equal(&r->key, &p->key)) {
			r->last = now;
			track(r, p);
			fn(state_of(f, i), false, arg);
			if (r->closed)
				end(f, link, i, now);
			return IDS_FLOW_HIT;
		}
		link = &r->next;
	}
	if (f->free_head == NIL)
		return IDS_FLOW_UNTRACKED;
	uint32_t i = f->free_head;
	struct rec *r = &f->r[i];
	f->free_head = r->next;
	memset(r, 0, sizeof(*r));
	r->key = p->key;
	r->hash = hash;
	r->last = now;
	memset(state_of(f, i), 0, f->state_bytes);
	f->in_use++;
	track(r, p);
	r->next = f->bucket[hash & f->mask];
	f->bucket[hash & f->mask] = i;
	fn(state_of(f, i), true, arg);
	if (r->closed)
		end(f, &f->bucket[hash & f->mask], i, now);
	return IDS_FLOW_CREATED;
}

static bool
simple_visit(void *table, const struct flow_key *k, uint32_t hash, ids_visit_fn fn, void *arg)
{
	struct flow_simple *f = table;
	for (uint32_t i = f->bucket[hash & f->mask]; i != NIL; i = f->r[i].next)
		if (f->r[i].hash == hash && flow_key_equal(&f->r[i].key, k)) {
			fn(state_of(f, i), false, arg);
			return true;
		}
	return false;
}

void
flow_simple_end_all(struct flow_simple *f, uint64_t now)
{
	for (uint32_t b = 0; b <= f->mask; b++)
		while (f->bucket[b] != NIL)
			end(f, &f->bucket[b], f->bucket[b], now);
}

const struct ids_flow_ops flow_simple_ops = {
	.hash = simple_hash,
	.update = simple_update,
	.visit = simple_visit,
	.prefetch = NULL,
};
