/* TCP reassembly of one direction, slots from a shared pool (stream.h). */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include "errbuf.h"

#define OWNED 4u
#define BUSY 2u
#define REF 1u
#define GEN(w) ((uint32_t)((w) >> 32))

struct ids_slot_pool {
	struct ids_stream_cfg cfg;
	uint8_t *mem;
	size_t slot_bytes;
	uint32_t n;
	size_t cand_off, data_off;
	_Atomic uint32_t hand;
	_Atomic uint32_t in_use;
	struct ids_piece *won_unused;
};

void
ids_stream_cfg_default(struct ids_stream_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->window = 16384;
	c->history = 256;
	c->max_segs = 64;
	c->memcap = 64u << 20;
}

static inline struct ids_slot *
slot_at(const struct ids_slot_pool *p, uint32_t i)
{
	return (struct ids_slot *)(p->mem + (size_t)i * p->slot_bytes);
}

uint64_t *
ids_slot_cand(const struct ids_slot_pool *p, struct ids_slot *s)
{
	return (uint64_t *)((uint8_t *)s + p->cand_off);
}

uint8_t *
ids_slot_data(const struct ids_slot_pool *p, struct ids_slot *s)
{
	return (uint8_t *)s + p->data_off;
}

struct ids_slot_pool *
ids_slot_pool_new(const struct ids_stream_cfg *c, char *err, size_t errlen)
{
	struct ids_slot_pool *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		ac_set_err(err, errlen, "out of memory for the stream pool");
		return NULL;
	}
	p->cfg = *c;
	if (c->window < 1024 || c->window > (1u << 24) || c->max_segs < 1 || c->max_segs > 254 ||
		c->history > 65536) {
		ac_set_err(err, errlen,
			"stream: window 1024 .. 16777216 bytes, segments 1 .. 254, history "
			"<= 65536");
		free(p);
		return NULL;
	}
	p->cand_off = sizeof(struct ids_slot) + (c->max_segs + 2) * sizeof(struct ids_piece);
	p->cand_off = (p->cand_off + 7) & ~(size_t)7;
	p->data_off = p->cand_off + 8 * (size_t)c->fp_words;
	p->slot_bytes = (p->data_off + c->history + c->window + 63) & ~(size_t)63;
	size_t n = c->memcap / p->slot_bytes;
	if (n < 2 || n > UINT32_MAX / 2) {
		ac_set_err(err, errlen,
			"stream: a memory cap of %zu bytes holds %zu slots of %zu bytes (window "
			"%u): give at least two",
			c->memcap, n, p->slot_bytes, c->window);
		free(p);
		return NULL;
	}
	p->n = (uint32_t)n;
	p->mem = aligned_alloc(64, n * p->slot_bytes);
	if (p->mem == NULL) {
		ac_set_err(err, errlen, "out of memory for %zu bytes of stream slots",
			n * p->slot_bytes);
		free(p);
		return NULL;
	}
	for (uint32_t i = 0; i < p->n; i++)
		atomic_init(&slot_at(p, i)->word, (uint64_t)1 << 32);
	return p;
}

void
ids_slot_pool_free(struct ids_slot_pool *p)
{
	if (p == NULL)
		return;
	free(p->mem);
	free(p);
}

const struct ids_stream_cfg *
ids_slot_pool_cfg(const struct ids_slot_pool *p)
{
	return &p->cfg;
}

uint32_t
ids_slot_pool_slots(const struct ids_slot_pool *p)
{
	return p->n;
}

uint32_t
ids_slot_pool_in_use(const struct ids_slot_pool *p)
{
	return atomic_load_explicit(&p->in_use, memory_order_relaxed);
}

size_t
ids_slot_pool_bytes(const struct ids_slot_pool *p)
{
	return (size_t)p->n * p->slot_bytes;
}

/* A slot for a direction: a free one, else the first one the CLOCK hand
 * finds unreferenced since its last pass (and not busy).  Returned busy. */
static uint32_t
take(struct ids_slot_pool *p, struct ids_stream_stats *st, uint32_t *gen)
{
	for (uint32_t step = 0; step < 3 * p->n; step++) {
		uint32_t i = atomic_fetch_add_explicit(&p->hand, 1, memory_order_relaxed) % p->n;
		struct ids_slot *s = slot_at(p, i);
		uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
		if (w & BUSY)
			continue;
		if (!(w & OWNED)) {
			uint64_t nw = (w & ~(uint64_t)0xffffffff) | OWNED | BUSY | REF;
			if (atomic_compare_exchange_strong(&s->word, &w, nw)) {
				atomic_fetch_add_explicit(&p->in_use, 1, memory_order_relaxed);
				*gen = GEN(nw);
				return i;
			}
			continue;
		}
		if (w & REF) {
			uint64_t nw = w & ~(uint64_t)REF;
			atomic_compare_exchange_strong(&s->word, &w, nw);
			continue;
		}
		uint64_t nw = ((uint64_t)(GEN(w) + 1) << 32) | OWNED | BUSY | REF;
		if (atomic_compare_exchange_strong(&s->word, &w, nw)) {
			st->shed++;
			*gen = GEN(nw);
			return i;
		}
	}
	return UINT32_MAX;
}

static void
reset_lost(struct ids_sdir *d, struct ids_stream_stats *st, uint32_t *lost)
{
	uint32_t n = d->next - d->base;
	st->lost_bytes += n;
	if (lost != NULL)
		*lost = n;
	d->slot = 0;
	d->base = d->next;
	d->gap = 1;
}

struct ids_slot *
ids_sdir_get(struct ids_slot_pool *p, struct ids_sdir *d, bool create, struct ids_stream_stats *st,
	uint32_t *lost)
{
	if (lost != NULL)
		*lost = 0;
	if (d->slot != 0) {
		struct ids_slot *s = slot_at(p, d->slot - 1);
		uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
		for (;;) {
			if (GEN(w) != d->gen || !(w & OWNED) || (w & BUSY)) {
				reset_lost(d, st, lost);
				break;
			}
			if (atomic_compare_exchange_weak(&s->word, &w, w | BUSY | REF))
				return s;
		}
	}
	if (!create)
		return NULL;
	uint32_t gen, i = take(p, st, &gen);
	if (i == UINT32_MAX) {
		st->no_slot++;
		return NULL;
	}
	struct ids_slot *s = slot_at(p, i);
	s->hist = s->pdu = s->n_pieces = s->cand_lost = 0;
	memset(ids_slot_cand(p, s), 0, 8 * (size_t)p->cfg.fp_words);
	d->slot = i + 1;
	d->gen = gen;
	d->base = d->next;
	return s;
}

void
ids_sdir_put(struct ids_slot_pool *p, struct ids_slot *s)
{
	(void)p;
	atomic_fetch_and_explicit(&s->word, ~(uint64_t)BUSY, memory_order_release);
}

void
ids_sdir_release(struct ids_slot_pool *p, struct ids_sdir *d)
{
	if (d->slot == 0)
		return;
	struct ids_slot *s = slot_at(p, d->slot - 1);
	uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
	while (GEN(w) == d->gen && (w & OWNED)) {
		if (atomic_compare_exchange_weak(&s->word, &w, (uint64_t)(GEN(w) + 1) << 32)) {
			atomic_fetch_sub_explicit(&p->in_use, 1, memory_order_relaxed);
			break;
		}
	}
	d->slot = 0;
}

uint32_t
ids_sdir_insert(struct ids_slot_pool *p, struct ids_sdir *d, struct ids_slot *s, uint32_t seq,
	const uint8_t *data, uint32_t len, struct ids_stream_stats *st, uint32_t *ev)
{
	uint8_t *buf = ids_slot_data(p, s) + s->hist;
	uint32_t edge = s->pdu, win = p->cfg.window;
	int64_t rel = (int32_t)(seq - d->base);

	st->segments++;
	if (rel < (int64_t)edge) {
		/* The target has these bytes already: they stay. */
		int64_t from = rel < 0 ? 0 : rel, to = rel + len < edge ? rel + len : edge;
		if (from < to &&
			memcmp(buf + from, data + (from - rel), (size_t)(to - from)) != 0) {
			*ev |= 1u << IDS_EV_STREAM_CONFLICT;
			st->events[IDS_EV_STREAM_CONFLICT]++;
		}
		if (rel + len <= edge) {
			st->retransmitted++;
			return 0;
		}
		data += edge - rel;
		len -= (uint32_t)(edge - rel);
		rel = edge;
	}
	if (rel >= win) {
		st->beyond_window++;
		return 0;
	}
	if (rel + len > win) {
		st->beyond_window++;
		len = (uint32_t)(win - rel);
	}
	struct ids_piece won[2 * 256 + 4], *pc = ids_slot_pieces(s);
	uint32_t nw;
	bool ov;
	if (!ids_overlap_place(pc, &s->n_pieces, p->cfg.max_segs + 2, (uint32_t)rel,
		    (uint32_t)rel + len, (enum ids_policy)d->policy, IDS_OVERLAP_TCP, won, &nw,
		    &ov)) {
		*ev |= 1u << IDS_EV_STREAM_OVERLAP;
		st->events[IDS_EV_STREAM_OVERLAP]++;
		return 0;
	}
	st->overlaps += ov;
	for (uint32_t i = 0; i < nw; i++)
		memcpy(buf + won[i].s, data + (won[i].s - rel), won[i].e - won[i].s);
	uint32_t k = 0;
	while (k < s->n_pieces && pc[k].s == edge)
		edge = pc[k++].e;
	if (k > 0) {
		memmove(pc, pc + k, (s->n_pieces - k) * sizeof(*pc));
		s->n_pieces -= k;
	}
	if (s->n_pieces > p->cfg.max_segs) {
		/* Too many held out of order: the farthest goes. */
		*ev |= 1u << IDS_EV_STREAM_OVERLAP;
		st->events[IDS_EV_STREAM_OVERLAP]++;
		s->n_pieces = p->cfg.max_segs;
	}
	uint32_t n = edge - s->pdu;
	s->pdu = edge;
	d->next = d->base + edge;
	st->bytes_in_order += n;
	return n;
}

void
ids_sdir_flushed(struct ids_slot_pool *p, struct ids_sdir *d, struct ids_slot *s, uint32_t n)
{
	uint8_t *data = ids_slot_data(p, s);
	struct ids_piece *pc = ids_slot_pieces(s);
	uint32_t keep = s->hist + n < p->cfg.history ? s->hist + n : p->cfg.history;
	uint32_t end = s->pdu;
	if (s->n_pieces > 0 && pc[s->n_pieces - 1].e > end)
		end = pc[s->n_pieces - 1].e;
	uint32_t from = s->hist + n - keep;
	memmove(data, data + from, s->hist + end - from);
	s->hist = keep;
	s->pdu -= n;
	for (uint32_t i = 0; i < s->n_pieces; i++) {
		pc[i].s -= n;
		pc[i].e -= n;
	}
	d->base += n;
}

void
ids_sdir_fin(struct ids_slot_pool *p, struct ids_sdir *d, struct ids_slot *s)
{
	d->next++;
	d->base = d->next;
	if (s == NULL)
		return;
	/* What is held out of order moves down one sequence number. */
	uint8_t *data = ids_slot_data(p, s) + s->hist;
	struct ids_piece *pc = ids_slot_pieces(s);
	uint32_t k = 0, end = s->n_pieces ? pc[s->n_pieces - 1].e : 0;
	if (end > 1)
		memmove(data, data + 1, end - 1);
	for (uint32_t i = 0; i < s->n_pieces; i++) {
		if (pc[i].e <= 1)
			continue;
		pc[k].s = pc[i].s ? pc[i].s - 1 : 0;
		pc[k++].e = pc[i].e - 1;
	}
	s->n_pieces = k;
}
