/* Flow table: per-bucket locked chains over a preallocated record pool. */
#include "flow_table.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#define FLOW_TABLE_MAX_CAPACITY (1u << 26)
#define FLOW_TABLE_MAX_EXT 4096

struct flow_table *
flow_table_create(
	uint32_t capacity, uint64_t idle_tsc, const struct flow_hasher *hasher, int socket_id)
{
	return flow_table_create_ext(capacity, idle_tsc, hasher, socket_id, 0);
}

struct flow_table *
flow_table_create_ext(uint32_t capacity, uint64_t idle_tsc, const struct flow_hasher *hasher,
	int socket_id, uint32_t ext_size)
{
	static atomic_uint serial;
	char ring_name[RTE_RING_NAMESIZE];
	struct flow_table *t;
	uint32_t i;

	if (capacity == 0 || capacity > FLOW_TABLE_MAX_CAPACITY || ext_size > FLOW_TABLE_MAX_EXT) {
		rte_errno = EINVAL;
		return NULL;
	}
	t = rte_zmalloc_socket("flow_table", sizeof(*t), RTE_CACHE_LINE_SIZE, socket_id);
	if (t == NULL)
		return NULL;
	t->capacity = capacity;
	t->idle_tsc = idle_tsc;
	t->hasher = *hasher;
	t->buckets = rte_zmalloc_socket("flow_buckets", sizeof(*t->buckets) * FLOW_TABLE_BUCKETS,
		RTE_CACHE_LINE_SIZE, socket_id);
	t->pool = rte_zmalloc_socket("flow_records", sizeof(*t->pool) * (size_t)capacity,
		RTE_CACHE_LINE_SIZE, socket_id);
	if (ext_size != 0) {
		t->ext_size = ext_size;
		t->ext = rte_zmalloc_socket(
			"flow_ext", (size_t)ext_size * capacity, RTE_CACHE_LINE_SIZE, socket_id);
	}
	snprintf(ring_name, sizeof(ring_name), "flow_free_%u", atomic_fetch_add(&serial, 1));
	t->free_ring = rte_ring_create_elem(
		ring_name, sizeof(uint32_t), capacity, socket_id, RING_F_EXACT_SZ);
	if (t->buckets == NULL || t->pool == NULL || t->free_ring == NULL ||
		(ext_size != 0 && t->ext == NULL)) {
		flow_table_free(t);
		rte_errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < FLOW_TABLE_BUCKETS; i++) {
		rte_spinlock_init(&t->buckets[i].lock);
		t->buckets[i].head = FLOW_NIL;
	}
	for (i = 0; i < capacity; i++) {
		if (rte_ring_enqueue_elem(t->free_ring, &i, sizeof(i)) != 0) {
			flow_table_free(t);
			rte_errno = ENOSPC;
			return NULL;
		}
	}
	return t;
}

void
flow_table_set_end_hook(struct flow_table *t, uint64_t active_tsc, flow_end_fn fn, void *arg)
{
	t->active_tsc = active_tsc;
	t->on_end_arg = arg;
	t->on_end = fn;
}

void
flow_table_set_inspector(
	struct flow_table *t, flow_app_packet_fn on_packet, flow_app_finish_fn on_finish)
{
	t->on_app_packet = on_packet;
	t->on_app_finish = on_finish;
}

void
flow_table_free(struct flow_table *t)
{
	if (t == NULL)
		return;
	rte_ring_free(t->free_ring);
	rte_free(t->ext);
	rte_free(t->pool);
	rte_free(t->buckets);
	rte_free(t);
}

static inline void *
ext_of(const struct flow_table *t, uint32_t idx)
{
	return t->ext != NULL ? t->ext + (size_t)idx * t->ext_size : NULL;
}

static inline bool
is_idle(const struct flow_table *t, const struct flow_record *r, uint64_t now)
{
	/* Signed: another core's TSC may be a little behind this one's. */
	return t->idle_tsc != 0 && (int64_t)(now - r->last_tsc) > (int64_t)t->idle_tsc;
}

/* Settle the flow's application before it is reported or reused. */
static inline void
app_finish(struct flow_table *t, struct flow_record *r, struct flow_counters *c)
{
	if (t->on_app_finish != NULL && r->app_status < FLOW_APP_DONE)
		t->on_app_finish(r, c);
}

static inline void
release(struct flow_table *t, uint32_t idx)
{
	/* The ring holds every index, so this cannot fail. */
	rte_ring_mp_enqueue_elem(t->free_ring, &idx, sizeof(idx));
}

static inline void account(
	struct flow_record *r, const struct flow_pkt *p, uint32_t wire_len, uint64_t now);

static inline void
flow_end(struct flow_table *t, struct flow_record *r, enum flow_end_reason why,
	struct flow_counters *c)
{
	app_finish(t, r, c);
	if (t->on_end != NULL) {
		c->ended[why]++;
		t->on_end(r, why, c, t->on_end_arg);
	}
}

/* A new record for the packet's flow in r (taken from the pool or evicted). */
static inline void
flow_init(struct flow_record *r, const struct flow_pkt *p, uint32_t hash, uint32_t wire_len,
	uint64_t now)
{
	memset(r, 0, sizeof(*r));
	r->key = p->key;
	r->hash = hash;
	r->init_dir = p->dir;
	r->first_tsc = now;
	r->state = p->key.proto == 6 ? FLOW_STATE_NEW : FLOW_STATE_NONE;
	account(r, p, wire_len, now);
}

static inline void
tcp_track(struct flow_record *r, uint8_t flags, unsigned rdir)
{
	if (r->state == FLOW_STATE_CLOSED)
		return;
	if (flags & TCP_FLAG_RST) {
		r->state = FLOW_STATE_CLOSED;
		return;
	}
	if (flags & TCP_FLAG_FIN) {
		r->dir_bits |= (uint8_t)(4u << rdir);
		r->state = (r->dir_bits & 0x0c) == 0x0c ? FLOW_STATE_CLOSED : FLOW_STATE_CLOSING;
		return;
	}
	if (r->state == FLOW_STATE_NEW && (flags & TCP_FLAG_ACK)) {
		r->dir_bits |= (uint8_t)(1u << rdir);
		if ((r->dir_bits & 0x03) == 0x03)
			r->state = FLOW_STATE_ESTABLISHED;
	}
}

static inline void
account(struct flow_record *r, const struct flow_pkt *p, uint32_t wire_len, uint64_t now)
{
	unsigned rdir = p->dir != r->init_dir;

	r->packets[rdir]++;
	r->bytes[rdir] += wire_len;
	r->last_tsc = now;
	if (p->key.proto == 6) {
		r->tcp_flags |= p->tcp_flags;
		r->dflags[rdir] |= p->tcp_flags;
		tcp_track(r, p->tcp_flags, rdir);
	}
}

static inline enum flow_update
update(struct flow_table *t, const struct flow_pkt *p, uint32_t hash, uint32_t wire_len,
	uint64_t now, struct flow_counters *c, flow_visit_fn fn, void *arg)
{
	struct flow_bucket *b = &t->buckets[hash & FLOW_TABLE_BUCKET_MASK];
	struct flow_record *r;
	uint32_t *link, idx, probes = 0;
	uint32_t *lru_link = NULL;
	uint64_t lru_tsc = UINT64_MAX;
	enum flow_update res;

	rte_spinlock_lock(&b->lock);
	link = &b->head;
	idx = *link;
	while (idx != FLOW_NIL) {
		r = &t->pool[idx];
		probes++;
		if (r->next != FLOW_NIL)
			rte_prefetch0(&t->pool[r->next]);
		if (is_idle(t, r, now)) {
			/* Lazy expiry; an idle record with this very key is an
			 * old flow, and the packet starts a new one. */
			flow_end(t, r, FLOW_END_IDLE, c);
			*link = r->next;
			release(t, idx);
			c->expired++;
			idx = *link;
			continue;
		}
		if (r->hash == hash && flow_key_equal(&r->key, &p->key)) {
			if (t->active_tsc != 0 &&
				(int64_t)(now - r->first_tsc) >= (int64_t)t->active_tsc) {
				/* Active timeout: report, then count afresh. */
				flow_end(t, r, FLOW_END_ACTIVE, c);
				r->packets[0] = r->packets[1] = 0;
				r->bytes[0] = r->bytes[1] = 0;
				r->tcp_flags = r->dflags[0] = r->dflags[1] = 0;
				r->first_tsc = now;
			}
			account(r, p, wire_len, now);
			if (t->on_app_packet != NULL && r->app_status < FLOW_APP_DONE)
				t->on_app_packet(r, p, now, c);
			if (fn != NULL)
				fn(r, ext_of(t, idx), false, arg);
			res = FLOW_UPDATE_HIT;
			c->hits++;
			if (t->on_end != NULL && r->state == FLOW_STATE_CLOSED) {
				flow_end(t, r, FLOW_END_EOF, c);
				*link = r->next;
				release(t, idx);
				c->expired++;
			}
			goto out;
		}
		/* <=: on a tie (one timestamp per burst) the record further
		 * down the chain, which is older, is the one to evict. */
		if (r->last_tsc <= lru_tsc) {
			lru_tsc = r->last_tsc;
			lru_link = link;
		}
		link = &r->next;
		idx = *link;
	}

	if (rte_ring_mc_dequeue_elem(t->free_ring, &idx, sizeof(idx)) != 0) {
		if (t->on_end == NULL || lru_link == NULL) {
			c->table_full++;
			res = FLOW_UPDATE_FULL;
			goto out;
		}
		/* Table pressure: the bucket's least recently seen flow ends
		 * and its record carries the new one. */
		idx = *lru_link;
		r = &t->pool[idx];
		flow_end(t, r, FLOW_END_LACK, c);
		c->evicted++;
		c->expired++;
		*lru_link = r->next;
	}
	r = &t->pool[idx];
	flow_init(r, p, hash, wire_len, now);
	if (t->ext != NULL)
		memset(ext_of(t, idx), 0, t->ext_size);
	if (t->on_app_packet != NULL)
		t->on_app_packet(r, p, now, c);
	if (fn != NULL)
		fn(r, ext_of(t, idx), true, arg);
	c->created++;
	res = FLOW_UPDATE_CREATED;
	if (t->on_end != NULL && r->state == FLOW_STATE_CLOSED) {
		/* A lone RST: a flow of one packet, ended at once. */
		flow_end(t, r, FLOW_END_EOF, c);
		release(t, idx);
		c->expired++;
		goto out;
	}
	/* Insert at the head: new flows are the likeliest to be hit next. */
	r->next = b->head;
	b->head = idx;
out:
	rte_spinlock_unlock(&b->lock);
	c->lookups++;
	c->probes += probes;
	if (probes > c->max_probe)
		c->max_probe = probes;
	return res;
}

enum flow_update
flow_table_update(struct flow_table *t, const struct flow_pkt *p, uint32_t hash, uint32_t wire_len,
	uint64_t now, struct flow_counters *c)
{
	return update(t, p, hash, wire_len, now, c, NULL, NULL);
}

enum flow_update
flow_table_update_visit(struct flow_table *t, const struct flow_pkt *p, uint32_t hash,
	uint32_t wire_len, uint64_t now, struct flow_counters *c, flow_visit_fn fn, void *arg)
{
	return update(t, p, hash, wire_len, now, c, fn, arg);
}

bool
flow_table_visit(
	struct flow_table *t, const struct flow_key *k, uint32_t hash, flow_visit_fn fn, void *arg)
{
	struct flow_bucket *b = &t->buckets[hash & FLOW_TABLE_BUCKET_MASK];
	bool found = false;

	rte_spinlock_lock(&b->lock);
	for (uint32_t idx = b->head; idx != FLOW_NIL; idx = t->pool[idx].next) {
		struct flow_record *r = &t->pool[idx];
		if (r->hash == hash && flow_key_equal(&r->key, k)) {
			fn(r, ext_of(t, idx), false, arg);
			found = true;
			break;
		}
	}
	rte_spinlock_unlock(&b->lock);
	return found;
}

uint32_t
flow_table_sweep(
	struct flow_table *t, uint32_t *cursor, uint32_t n, uint64_t now, struct flow_counters *c)
{
	uint32_t reclaimed = 0, k;

	if (t->idle_tsc == 0)
		return 0;
	for (k = 0; k < n; k++) {
		struct flow_bucket *b = &t->buckets[*cursor & FLOW_TABLE_BUCKET_MASK];
		uint32_t *link, idx;

		*cursor = (*cursor + 1) & FLOW_TABLE_BUCKET_MASK;
		rte_spinlock_lock(&b->lock);
		link = &b->head;
		idx = *link;
		while (idx != FLOW_NIL) {
			struct flow_record *r = &t->pool[idx];

			if (is_idle(t, r, now)) {
				flow_end(t, r, FLOW_END_IDLE, c);
				*link = r->next;
				release(t, idx);
				reclaimed++;
			} else {
				link = &r->next;
			}
			idx = *link;
		}
		rte_spinlock_unlock(&b->lock);
	}
	c->expired += reclaimed;
	return reclaimed;
}

uint32_t
flow_table_foreach(
	const struct flow_table *t, void (*fn)(const struct flow_record *r, void *arg), void *arg)
{
	uint32_t visited = 0, i;

	for (i = 0; i < FLOW_TABLE_BUCKETS; i++) {
		uint32_t idx = t->buckets[i].head;

		/* Bounded by the pool size in case of a concurrent writer. */
		while (idx != FLOW_NIL && idx < t->capacity && visited < t->capacity) {
			fn(&t->pool[idx], arg);
			visited++;
			idx = t->pool[idx].next;
		}
	}
	return visited;
}

uint32_t
flow_table_chain_histogram(const struct flow_table *t, uint64_t hist[FLOW_CHAIN_HIST])
{
	uint32_t longest = 0, i;

	memset(hist, 0, sizeof(uint64_t) * FLOW_CHAIN_HIST);
	for (i = 0; i < FLOW_TABLE_BUCKETS; i++) {
		uint32_t idx = t->buckets[i].head, len = 0;

		while (idx != FLOW_NIL && idx < t->capacity && len < t->capacity) {
			len++;
			idx = t->pool[idx].next;
		}
		hist[len < FLOW_CHAIN_HIST - 1 ? len : FLOW_CHAIN_HIST - 1]++;
		if (len > longest)
			longest = len;
	}
	return longest;
}

const char *
flow_state_name(enum flow_state s)
{
	switch (s) {
	case FLOW_STATE_NONE:
		return "none";
	case FLOW_STATE_NEW:
		return "new";
	case FLOW_STATE_ESTABLISHED:
		return "established";
	case FLOW_STATE_CLOSING:
		return "closing";
	case FLOW_STATE_CLOSED:
		return "closed";
	}
	return "unknown";
}
