/* IP defragmentation with target-based overlap policies (see defrag.h). */
#include "defrag.h"

#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "overlap.h"

#define BLOCK 2048u
#define N_BLOCKS 32u /* 64 KiB of data */
#define HDR_MAX 256u
#define NIL UINT32_MAX
#define EXPIRE_PER_CALL 4

#define GOT_FIRST 1
#define GOT_LAST 2

struct tracker {
	uint8_t family, proto, policy, ttl;
	uint8_t flags;
	uint16_t vlan;
	uint8_t src[16], dst[16];
	uint32_t id, hash;
	uint32_t hnext, prev, next; /* hash chain; least recently used list */
	uint64_t last;
	uint32_t total; /* data bytes, once the last fragment came */
	uint32_t n_pieces, n_overlaps;
	uint16_t hdr_len, l3_off, nh_byte;
	uint32_t blocks[N_BLOCKS]; /* block index + 1, 0: none */
	uint8_t hdr[HDR_MAX];      /* link and IP headers of the first fragment */
};

struct ids_defrag {
	struct ids_defrag_cfg cfg;
	struct tracker *t;
	struct ids_piece *pieces; /* cfg.max_frags per tracker */
	uint32_t *bucket, mask;
	uint32_t free_t; /* free trackers, chained by next */
	uint32_t lru_head, lru_tail;
	uint8_t *data;
	uint32_t *free_b, n_free_b, n_blocks;
	struct ids_piece *won;
	struct ids_defrag_stats st;
};

void
ids_defrag_cfg_default(struct ids_defrag_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->max_datagrams = 2048;
	c->max_frags = 256;
	c->memcap = 4u << 20;
	c->min_ttl = 1;
	c->ttl_limit = 5;
}

struct ids_defrag *
ids_defrag_new(const struct ids_defrag_cfg *c, char *err, size_t errlen)
{
	struct ids_defrag *d = calloc(1, sizeof(*d));
	if (d == NULL)
		goto oom;
	d->cfg = *c;
	if (d->cfg.max_frags < 2 || d->cfg.max_frags > 256 || d->cfg.max_datagrams == 0 ||
		d->cfg.memcap < BLOCK) {
		ac_set_err(err, errlen,
			"defragmentation: fragments per datagram 2..256, datagrams >= 1, "
			"memory >= %u bytes",
			BLOCK);
		free(d);
		return NULL;
	}
	uint32_t nb = 1;
	while (nb < 2 * d->cfg.max_datagrams)
		nb <<= 1;
	d->mask = nb - 1;
	d->n_blocks = (uint32_t)(d->cfg.memcap / BLOCK);
	d->t = calloc(d->cfg.max_datagrams, sizeof(*d->t));
	d->pieces = calloc((size_t)d->cfg.max_datagrams * d->cfg.max_frags, sizeof(*d->pieces));
	d->bucket = malloc(nb * sizeof(*d->bucket));
	d->data = malloc((size_t)d->n_blocks * BLOCK);
	d->free_b = malloc(d->n_blocks * sizeof(*d->free_b));
	d->won = malloc((2 * (size_t)d->cfg.max_frags + 4) * sizeof(*d->won));
	if (d->t == NULL || d->pieces == NULL || d->bucket == NULL || d->data == NULL ||
		d->free_b == NULL || d->won == NULL) {
		ids_defrag_free(d);
		goto oom;
	}
	for (uint32_t i = 0; i < nb; i++)
		d->bucket[i] = NIL;
	for (uint32_t i = 0; i < d->cfg.max_datagrams; i++)
		d->t[i].next = i + 1 < d->cfg.max_datagrams ? i + 1 : NIL;
	d->free_t = 0;
	d->lru_head = d->lru_tail = NIL;
	for (uint32_t i = 0; i < d->n_blocks; i++)
		d->free_b[i] = d->n_blocks - 1 - i;
	d->n_free_b = d->n_blocks;
	return d;
oom:
	ac_set_err(err, errlen, "out of memory for the defragmentation tables");
	return NULL;
}

void
ids_defrag_free(struct ids_defrag *d)
{
	if (d == NULL)
		return;
	free(d->t);
	free(d->pieces);
	free(d->bucket);
	free(d->data);
	free(d->free_b);
	free(d->won);
	free(d);
}

const struct ids_defrag_stats *
ids_defrag_stats(const struct ids_defrag *d)
{
	return &d->st;
}

static uint32_t
key_hash(const struct ids_pkt *p)
{
	uint32_t h = 2166136261u;
	const uint8_t *parts[2] = { p->src, p->dst };
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < (p->family == 4 ? 4 : 16); i++)
			h = (h ^ parts[k][i]) * 16777619u;
	h = (h ^ p->frag_id) * 16777619u;
	h = (h ^ p->vlan) * 16777619u;
	return (h ^ (p->family == 4 ? p->proto : 0)) * 16777619u;
}

static bool
key_equal(const struct tracker *t, const struct ids_pkt *p, uint32_t hash)
{
	size_t al = p->family == 4 ? 4 : 16;
	return t->hash == hash && t->id == p->frag_id && t->family == p->family &&
		t->vlan == p->vlan && (p->family == 6 || t->proto == p->proto) &&
		memcmp(t->src, p->src, al) == 0 && memcmp(t->dst, p->dst, al) == 0;
}

static void
lru_unlink(struct ids_defrag *d, uint32_t i)
{
	struct tracker *t = &d->t[i];
	if (t->prev != NIL)
		d->t[t->prev].next = t->next;
	else
		d->lru_head = t->next;
	if (t->next != NIL)
		d->t[t->next].prev = t->prev;
	else
		d->lru_tail = t->prev;
}

static void
lru_append(struct ids_defrag *d, uint32_t i)
{
	struct tracker *t = &d->t[i];
	t->prev = d->lru_tail;
	t->next = NIL;
	if (d->lru_tail != NIL)
		d->t[d->lru_tail].next = i;
	else
		d->lru_head = i;
	d->lru_tail = i;
}

/* Blocks back to the pool, pieces gone: the tracker starts afresh. */
static void
clear(struct ids_defrag *d, struct tracker *t)
{
	for (uint32_t b = 0; b < N_BLOCKS; b++)
		if (t->blocks[b]) {
			d->free_b[d->n_free_b++] = t->blocks[b] - 1;
			t->blocks[b] = 0;
		}
	d->st.bytes_held = (uint64_t)(d->n_blocks - d->n_free_b) * BLOCK;
	t->n_pieces = t->n_overlaps = t->total = 0;
	t->flags = 0;
	t->hdr_len = 0;
}

static void
release(struct ids_defrag *d, uint32_t i)
{
	struct tracker *t = &d->t[i];
	clear(d, t);
	uint32_t *link = &d->bucket[t->hash & d->mask];
	while (*link != i)
		link = &d->t[*link].hnext;
	*link = t->hnext;
	lru_unlink(d, i);
	t->next = d->free_t;
	d->free_t = i;
	d->st.in_flight--;
}

static uint32_t
lookup(struct ids_defrag *d, const struct ids_pkt *p, uint32_t hash)
{
	for (uint32_t i = d->bucket[hash & d->mask]; i != NIL; i = d->t[i].hnext)
		if (key_equal(&d->t[i], p, hash))
			return i;
	return NIL;
}

static uint32_t
create(struct ids_defrag *d, const struct ids_pkt *p, uint32_t hash)
{
	if (d->free_t == NIL) {
		d->st.evicted_full++;
		release(d, d->lru_head);
	}
	uint32_t i = d->free_t;
	struct tracker *t = &d->t[i];
	d->free_t = t->next;
	memset(t, 0, offsetof(struct tracker, blocks));
	t->family = p->family;
	t->proto = p->family == 4 ? p->proto : 0;
	t->vlan = p->vlan;
	memcpy(t->src, p->src, 16);
	memcpy(t->dst, p->dst, 16);
	t->id = p->frag_id;
	t->hash = hash;
	t->ttl = p->ttl;
	ac_addr dst = p->family == 4
		? ac_addr_v4((uint32_t)p->dst[0] << 24 | (uint32_t)p->dst[1] << 16 |
			  (uint32_t)p->dst[2] << 8 | p->dst[3])
		: ac_addr_v6(p->dst);
	t->policy = d->cfg.policy ? ids_target_policy_of(d->cfg.policy, dst) : IDS_POLICY_DEFAULT;
	t->hnext = d->bucket[hash & d->mask];
	d->bucket[hash & d->mask] = i;
	lru_append(d, i);
	d->st.in_flight++;
	return i;
}

/* Copy n bytes of the datagram's data at off from src, taking blocks as
 * needed (other datagrams, least recently used first, give theirs up when
 * the pool is empty).  False when even that leaves none. */
static bool
store(struct ids_defrag *d, uint32_t ti, uint32_t off, const uint8_t *src, uint32_t n)
{
	struct tracker *t = &d->t[ti];
	while (n > 0) {
		uint32_t b = off / BLOCK, o = off % BLOCK, k = BLOCK - o < n ? BLOCK - o : n;
		if (t->blocks[b] == 0) {
			while (d->n_free_b == 0) {
				uint32_t victim = d->lru_head;
				if (victim == ti)
					victim = d->t[victim].next;
				if (victim == NIL)
					return false;
				d->st.evicted_memcap++;
				release(d, victim);
			}
			t->blocks[b] = d->free_b[--d->n_free_b] + 1;
			d->st.bytes_held = (uint64_t)(d->n_blocks - d->n_free_b) * BLOCK;
			if (d->st.bytes_held > d->st.bytes_held_max)
				d->st.bytes_held_max = d->st.bytes_held;
		}
		memcpy(d->data + (size_t)(t->blocks[b] - 1) * BLOCK + o, src, k);
		off += k;
		src += k;
		n -= k;
	}
	return true;
}

static bool
complete(const struct tracker *t, const struct ids_piece *pc)
{
	if ((t->flags & (GOT_FIRST | GOT_LAST)) != (GOT_FIRST | GOT_LAST))
		return false;
	uint32_t pos = 0;
	for (uint32_t i = 0; i < t->n_pieces && pos < t->total; i++) {
		if (pc[i].s > pos)
			return false;
		if (pc[i].e > pos)
			pos = pc[i].e;
	}
	return pos >= t->total;
}

static uint16_t
ip_cksum(const uint8_t *h, uint32_t n)
{
	uint32_t s = 0;
	for (uint32_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The whole datagram's frame into out; its length. */
static uint32_t
rebuild(struct ids_defrag *d, const struct tracker *t, uint8_t *out)
{
	memcpy(out, t->hdr, t->hdr_len);
	for (uint32_t off = 0; off < t->total; off += BLOCK) {
		uint32_t k = t->total - off < BLOCK ? t->total - off : BLOCK;
		memcpy(out + t->hdr_len + off,
			d->data + (size_t)(t->blocks[off / BLOCK] - 1) * BLOCK, k);
	}
	uint8_t *ip = out + t->l3_off;
	if (t->family == 4) {
		uint32_t ihl = (ip[0] & 15u) * 4u, tot = ihl + t->total;
		ip[2] = (uint8_t)(tot >> 8);
		ip[3] = (uint8_t)tot;
		ip[6] = ip[7] = 0;
		ip[10] = ip[11] = 0;
		uint16_t c = ip_cksum(ip, ihl);
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	} else {
		uint32_t plen = t->hdr_len - t->l3_off - 40u + t->total;
		ip[4] = (uint8_t)(plen >> 8);
		ip[5] = (uint8_t)plen;
		out[t->nh_byte] = t->proto;
	}
	return t->hdr_len + t->total;
}

static uint32_t
drop(struct ids_defrag *d, uint32_t *ev, enum ids_event e)
{
	*ev |= 1u << e;
	d->st.events[e]++;
	d->st.dropped++;
	return 0;
}

void
ids_defrag_expire(struct ids_defrag *d, uint64_t now)
{
	for (int k = 0; k < EXPIRE_PER_CALL && d->lru_head != NIL; k++) {
		const struct tracker *t = &d->t[d->lru_head];
		if (d->cfg.timeout == 0 || now - t->last <= d->cfg.timeout)
			return;
		d->st.timeouts++;
		release(d, d->lru_head);
	}
}

uint32_t
ids_defrag_add(struct ids_defrag *d, const uint8_t *frame, const struct ids_pkt *p, uint64_t now,
	uint8_t *out, uint32_t *ev)
{
	d->st.fragments++;
	ids_defrag_expire(d, now);
	if (p->ttl < d->cfg.min_ttl)
		return drop(d, ev, IDS_EV_FRAG_MIN_TTL);
	uint32_t flen = p->ip_end - p->frag_data, fo = p->frag_off, fe = fo + flen;
	if (flen == 0)
		return drop(d, ev, IDS_EV_FRAG_ZERO);
	if (fe > 65535)
		return drop(d, ev, IDS_EV_FRAG_TOO_LARGE);
	if (p->frag_more) {
		if (fe & 7) {
			*ev |= 1u << IDS_EV_FRAG_SHORT;
			d->st.events[IDS_EV_FRAG_SHORT]++;
			fe &= ~7u;
			if (fe <= fo)
				return drop(d, ev, IDS_EV_FRAG_ZERO);
		}
		if (d->cfg.tiny && flen <= d->cfg.tiny) {
			*ev |= 1u << IDS_EV_FRAG_TINY;
			d->st.events[IDS_EV_FRAG_TINY]++;
		}
	}
	uint32_t hash = key_hash(p), ti = lookup(d, p, hash);
	if (ti != NIL && d->cfg.timeout && now - d->t[ti].last > d->cfg.timeout) {
		d->st.timeouts++;
		release(d, ti);
		ti = NIL;
	}
	if (ti == NIL)
		ti = create(d, p, hash);
	struct tracker *t = &d->t[ti];
	struct ids_piece *pc = d->pieces + (size_t)ti * d->cfg.max_frags;
	/* TTL insertion: a fragment far below the highest TTL of its datagram
	 * expires before the target.  One far above it shows that everything
	 * held so far (all of it below) was such: it goes. */
	if (d->cfg.ttl_limit) {
		if ((int)p->ttl + d->cfg.ttl_limit < (int)t->ttl)
			return drop(d, ev, IDS_EV_FRAG_TTL_DELTA);
		if ((int)p->ttl > (int)t->ttl + d->cfg.ttl_limit && (t->n_pieces || t->flags)) {
			*ev |= 1u << IDS_EV_FRAG_TTL_DELTA;
			d->st.events[IDS_EV_FRAG_TTL_DELTA]++;
			clear(d, t);
		}
	}
	if (p->ttl > t->ttl)
		t->ttl = p->ttl;
	if (!p->frag_more) {
		if ((t->flags & GOT_LAST) && t->total != fe)
			return drop(d, ev, IDS_EV_FRAG_OVERSIZE);
		if (t->n_pieces && pc[t->n_pieces - 1].e > fe) {
			/* data held past this end: the datagram cannot be */
			d->st.datagrams_bad++;
			release(d, ti);
			return drop(d, ev, IDS_EV_FRAG_OVERSIZE);
		}
	} else if ((t->flags & GOT_LAST) && fe > t->total) {
		return drop(d, ev, IDS_EV_FRAG_OVERSIZE);
	}
	if (fo == 0 && !(t->flags & GOT_FIRST)) {
		/* The headers from the fragment's own Ethernet header on: a
		 * fragment inside a tunnel comes back as the inner frame alone
		 * (the flow is the inner one's), with an Ethernet header made
		 * up for IP carried bare in Geneve. */
		uint32_t hl = p->family == 4 ? p->frag_data : p->frag_hdr;
		uint32_t from = p->l2_off == IDS_NO_L2 ? p->l3_off : p->l2_off;
		uint32_t pre = p->l2_off == IDS_NO_L2 ? 14 : 0;
		if (pre + hl - from > HDR_MAX ||
			(p->family == 6 && p->frag_data - p->frag_hdr != 8))
			return drop(d, ev, IDS_EV_FRAG_TOO_LARGE);
		if (pre != 0) {
			memset(t->hdr, 0, 12);
			t->hdr[12] = p->family == 4 ? 0x08 : 0x86;
			t->hdr[13] = p->family == 4 ? 0x00 : 0xdd;
		}
		memcpy(t->hdr + pre, frame + from, hl - from);
		t->hdr_len = (uint16_t)(pre + hl - from);
		t->l3_off = (uint16_t)(pre + p->l3_off - from);
		t->nh_byte = (uint16_t)(pre + p->frag_nh_byte - from);
		if (p->family == 6)
			t->proto = p->proto;
	}
	uint32_t nw;
	bool ov;
	if (!ids_overlap_place(pc, &t->n_pieces, d->cfg.max_frags, fo, fe,
		    (enum ids_policy)t->policy, IDS_OVERLAP_FRAG, d->won, &nw, &ov)) {
		d->st.datagrams_bad++;
		release(d, ti);
		return drop(d, ev, IDS_EV_FRAG_TOO_MANY);
	}
	if (fo == 0)
		t->flags |= GOT_FIRST;
	if (!p->frag_more) {
		t->flags |= GOT_LAST;
		t->total = fe;
	}
	if (ov) {
		*ev |= 1u << IDS_EV_FRAG_OVERLAP;
		d->st.events[IDS_EV_FRAG_OVERLAP]++;
		if (d->cfg.max_overlaps && ++t->n_overlaps >= d->cfg.max_overlaps) {
			d->st.datagrams_bad++;
			release(d, ti);
			return drop(d, ev, IDS_EV_FRAG_MANY_OVERLAP);
		}
	}
	for (uint32_t w = 0; w < nw; w++)
		if (!store(d, ti, d->won[w].s, frame + p->frag_data + (d->won[w].s - fo),
			    d->won[w].e - d->won[w].s)) {
			d->st.evicted_memcap++;
			release(d, ti);
			d->st.dropped++;
			return 0;
		}
	t->last = now;
	lru_unlink(d, ti);
	lru_append(d, ti);
	if (!complete(t, pc))
		return 0;
	uint32_t n = rebuild(d, t, out);
	d->st.reassembled++;
	release(d, ti);
	return n;
}
