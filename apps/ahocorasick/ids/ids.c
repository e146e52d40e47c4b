/* Rules mode's engine: decode, defragment, track, reassemble, judge (ids.h). */
#include "ids.h"

#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "flow_key.h"
#include "http_body.h"

#define MAX_STRADDLES 64
#define HIST_BUCKETS 18

struct ids_engine {
	struct ids_engine_cfg cfg;
	struct ids_slot_pool *pool; /* NULL without reassembly */
	bool reassembly;
	uint32_t eng_bytes; /* the matcher's stream state, per direction */
	uint32_t sd_off, eng_off, bits_off, state_bytes;
	uint32_t fp_words;
	bool *fp_stream; /* the fast pattern has a streamable rule */
};

struct straddle {
	uint32_t fp, end; /* end: offset in the PDU where the keyword ends */
};

struct ids_task {
	struct ids_engine *e;
	const struct ac_verifier *v;
	const struct ac_engine *engine;
	struct ac_scratch *scratch;
	struct ac_vscratch *vs;
	void *table;
	const struct ids_flow_ops *ops;
	void *counters;
	ids_alert_fn fn;
	void *ctx;
	struct ids_defrag *defrag;
	uint8_t *dgram;
	struct ids_http_decoder *hdec; /* NULL: bodies as sent */
	uint8_t *http_scratch;
	struct ac_http http;
	uint64_t *bits; /* the flowbits of a packet judged outside the lock */
	/* the packet being judged */
	struct ids_pkt p;
	struct ac_pkt_meta meta;
	const uint8_t *pl;
	uint32_t pl_len;
	uint8_t dir; /* its key direction */
	uint32_t pkt_alerts;
	/* what an alert callback needs */
	const struct ac_pkt_meta *am;
	uint8_t aflow;
	bool astream, aresponse, apacket;
	/* a stream scan's hits */
	uint64_t *scan_cand;
	bool scan_raw;
	uint32_t scan_raw_len, scan_pdu_off;
	struct straddle str[MAX_STRADDLES];
	uint32_t n_str;
	uint32_t matched[IDS_DEDUP];
	void (*pdu_hook)(
		void *ctx, const struct ac_pkt_meta *m, const uint8_t *p, uint32_t n, bool gap);
	void *pdu_ctx;
	struct ids_task_stats st;
};

static inline struct ac_flow_ext *
fx_of(void *state)
{
	return state;
}

static inline struct ids_sdir *
sd_of(const struct ids_engine *e, void *state)
{
	return (struct ids_sdir *)((uint8_t *)state + e->sd_off);
}

static inline void *
eng_of(const struct ids_engine *e, void *state, unsigned dir)
{
	return (uint8_t *)state + e->eng_off + dir * e->eng_bytes;
}

static inline uint64_t *
bits_of(const struct ids_engine *e, void *state)
{
	return (uint64_t *)((uint8_t *)state + e->bits_off);
}

/* --- set-up --------------------------------------------------------------- */

struct ids_engine *
ids_engine_new(const struct ids_engine_cfg *c, char *err, size_t errlen)
{
	struct ids_engine *e = calloc(1, sizeof(*e));
	if (e == NULL) {
		ac_set_err(err, errlen, "out of memory");
		return NULL;
	}
	e->cfg = *c;
	const struct ac_verifier *v = c->ver;
	e->reassembly = c->flows && c->reassembly;
	e->fp_words = (v->n_fp + 63) / 64;
	e->sd_off = sizeof(struct ac_flow_ext);
	e->eng_off = e->bits_off = e->sd_off;
	if (e->reassembly) {
		if (c->engine != NULL &&
			ac_engine_enable_stream(c->engine, v->fp, v->n_fp, err, errlen) < 0) {
			free(e);
			return NULL;
		}
		e->eng_bytes = c->engine ? (uint32_t)ac_engine_stream_bytes(c->engine) : 0;
		struct ids_stream_cfg sc = c->stream;
		sc.fp_words = e->fp_words ? e->fp_words : 1;
		/* History enough to check any streamable keyword across PDUs. */
		if (v->max_streamable > sc.history)
			sc.history = v->max_streamable;
		e->pool = ids_slot_pool_new(&sc, err, errlen);
		e->fp_stream = calloc(v->n_fp + 1, sizeof(bool));
		if (e->pool == NULL || e->fp_stream == NULL) {
			ids_engine_free(e);
			return NULL;
		}
		for (uint32_t k = 0; k < v->n_fp; k++)
			for (uint32_t j = 0; j < v->fp[k].n_rules; j++)
				e->fp_stream[k] |= v->rules[v->fp[k].rules[j]].streamable;
		e->eng_off = e->sd_off + 2 * (uint32_t)sizeof(struct ids_sdir);
		e->bits_off = e->eng_off + 2 * e->eng_bytes;
	}
	e->state_bytes = e->bits_off + 8 * v->fb_words;
	return e;
}

void
ids_engine_free(struct ids_engine *e)
{
	if (e == NULL)
		return;
	ids_slot_pool_free(e->pool);
	free(e->fp_stream);
	free(e);
}

uint32_t
ids_engine_state_bytes(const struct ids_engine *e)
{
	return e->state_bytes;
}

const struct ids_slot_pool *
ids_engine_pool(const struct ids_engine *e)
{
	return e->pool;
}

struct ids_task *
ids_task_new(struct ids_engine *e, void *table, const struct ids_flow_ops *ops, void *counters,
	ids_alert_fn fn, void *ctx, char *err, size_t errlen)
{
	struct ids_task *t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto oom;
	t->e = e;
	t->v = e->cfg.ver;
	t->engine = e->cfg.engine;
	t->table = table;
	t->ops = ops;
	t->counters = counters;
	t->fn = fn;
	t->ctx = ctx;
	uint32_t biggest = IDS_MAX_FRAME;
	if (e->reassembly && ids_slot_pool_cfg(e->pool)->window > biggest)
		biggest = ids_slot_pool_cfg(e->pool)->window;
	t->vs = ac_vscratch_new(t->v, biggest);
	t->http_scratch = malloc(AC_HTTP_SCRATCH(biggest));
	t->bits = calloc(t->v->fb_words + 1, 8);
	t->st.rule_alerts = calloc(t->v->n_rules + 1, sizeof(uint64_t));
	if (t->vs == NULL || t->http_scratch == NULL || t->bits == NULL ||
		t->st.rule_alerts == NULL) {
		ids_task_free(t);
		goto oom;
	}
	if (t->engine != NULL && (t->scratch = ac_scratch_new(t->engine, err, errlen)) == NULL) {
		ids_task_free(t);
		return NULL;
	}
	if (e->reassembly) {
		struct ids_defrag_cfg dc = e->cfg.defrag;
		dc.policy = e->cfg.policy;
		t->defrag = ids_defrag_new(&dc, err, errlen);
		t->dgram = malloc(IDS_DEFRAG_MAX_FRAME);
		if (t->defrag == NULL || t->dgram == NULL) {
			ids_task_free(t);
			return NULL;
		}
		if (e->cfg.http.decode &&
			(t->hdec = ids_http_decoder_new(&e->cfg.http, err, errlen)) == NULL) {
			ids_task_free(t);
			return NULL;
		}
	}
	return t;
oom:
	ac_set_err(err, errlen, "out of memory for a task of the rules engine");
	return NULL;
}

void
ids_task_free(struct ids_task *t)
{
	if (t == NULL)
		return;
	ac_scratch_free(t->scratch);
	ac_vscratch_free(t->vs);
	ids_defrag_free(t->defrag);
	ids_http_decoder_free(t->hdec);
	free(t->dgram);
	free(t->http_scratch);
	free(t->bits);
	free(t->st.rule_alerts);
	free(t);
}

const struct ids_task_stats *
ids_task_stats(const struct ids_task *t)
{
	return &t->st;
}

const struct ids_defrag_stats *
ids_task_defrag_stats(const struct ids_task *t)
{
	return t->defrag ? ids_defrag_stats(t->defrag) : NULL;
}

const struct ac_vscratch *
ids_task_vscratch(const struct ids_task *t)
{
	return t->vs;
}

const struct ac_scratch *
ids_task_scratch(const struct ids_task *t)
{
	return t->scratch;
}

void
ids_task_set_pdu_hook(struct ids_task *t,
	void (*fn)(void *ctx, const struct ac_pkt_meta *m, const uint8_t *p, uint32_t n, bool gap),
	void *ctx)
{
	t->pdu_hook = fn;
	t->pdu_ctx = ctx;
}

/* --- keys and addresses --------------------------------------------------- */

static ac_addr
addr_of(const uint8_t *a, uint8_t family)
{
	if (family == 4)
		return ac_addr_v4(
			(uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3]);
	return ac_addr_v6(a);
}

static void
mapped(uint8_t out[16], const uint8_t *a, uint8_t family)
{
	if (family == 6) {
		memcpy(out, a, 16);
		return;
	}
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, a, 4);
}

void
ids_flow_key(const struct ids_pkt *p, struct flow_pkt *out)
{
	uint8_t s[16], d[16];
	mapped(s, p->src, p->family);
	mapped(d, p->dst, p->family);
	memset(out, 0, sizeof(*out));
	out->key.proto = p->proto;
	out->key.family = p->family == 4 ? FLOW_FAMILY_IPV4 : FLOW_FAMILY_IPV6;
	out->key.vlan = p->vlan;
	out->tcp_flags = p->proto == 6 ? p->tcp_flags : 0;
	int c = memcmp(s, d, 16);
	bool lo = c < 0 || (c == 0 && p->sport <= p->dport);
	memcpy(out->key.addr_lo, lo ? s : d, 16);
	memcpy(out->key.addr_hi, lo ? d : s, 16);
	out->key.port_lo = lo ? p->sport : p->dport;
	out->key.port_hi = lo ? p->dport : p->sport;
	out->dir = lo ? 0 : 1;
}

/* The meta of key direction dir of a flow. */
static void
meta_of_key(const struct flow_key *k, unsigned dir, struct ac_pkt_meta *m)
{
	ac_addr lo = ac_addr_v6(k->addr_lo), hi = ac_addr_v6(k->addr_hi);
	m->ip_proto = k->proto;
	m->src = dir ? hi : lo;
	m->dst = dir ? lo : hi;
	m->sport = dir ? k->port_hi : k->port_lo;
	m->dport = dir ? k->port_lo : k->port_hi;
}

static void
swap_meta(const struct ac_pkt_meta *in, struct ac_pkt_meta *out)
{
	out->ip_proto = in->ip_proto;
	out->src = in->dst;
	out->dst = in->src;
	out->sport = in->dport;
	out->dport = in->sport;
}

/* --- alerts --------------------------------------------------------------- */

static void
emit(struct ids_task *t, const struct ac_pkt_meta *m, uint32_t rule, uint16_t event, uint8_t flow,
	bool stream, bool for_packet)
{
	struct ids_alert a = { .src = m->src,
		.dst = m->dst,
		.rule = rule,
		.event = event,
		.sport = m->sport,
		.dport = m->dport,
		.ip_proto = m->ip_proto,
		.flow = flow,
		.stream = stream };
	t->st.alerts++;
	t->st.alerts_stream += stream;
	if (for_packet)
		t->pkt_alerts++;
	else
		t->st.alerts_at_flow_end++;
	if (t->fn != NULL)
		t->fn(t->ctx, &a);
}

static void
on_rule_alert(void *ctx, uint32_t rule)
{
	struct ids_task *t = ctx;
	uint8_t flow = t->aflow;
	t->st.rule_alerts[rule]++;
	if (t->v->rules[rule].mail_file_data && !t->aresponse) {
		flow |= IDS_ALERT_PARTIAL;
		t->st.alerts_partial_here++;
	}
	emit(t, t->am, rule, 0, flow, t->astream, t->apacket);
}

static void
raise_events(struct ids_task *t, uint32_t ev, const struct ac_pkt_meta *m, uint8_t flow)
{
	for (; ev != 0; ev &= ev - 1) {
		unsigned k = (unsigned)__builtin_ctz(ev);
		t->st.events[k]++;
		if (t->e->cfg.decoder_alerts && ids_event_info[k].gid != 0) {
			t->st.alerts_events++;
			emit(t, m, UINT32_MAX, (uint16_t)k, flow, false, true);
		}
	}
}

/* --- judging -------------------------------------------------------------- */

static uint32_t
present_of(const struct ac_http *h)
{
	uint32_t present = 0;
	for (int b = 0; b < AC_BUF_N; b++)
		present |= (uint32_t)h->buf[b].present << b;
	return present;
}

static void
scan_extra(struct ids_task *t)
{
	for (uint32_t ns = t->http.not_slices; ns != 0; ns &= ns - 1) {
		const struct ac_span *b = &t->http.buf[__builtin_ctz(ns)];
		ac_engine_scan(t->engine, t->scratch, b->p, b->len, ac_vscratch_on_match, t->vs);
		t->st.extra_scans++;
	}
}

static uint32_t
verify(struct ids_task *t, struct ac_pkt_view *pv, const struct ac_pkt_meta *m, uint8_t flow,
	bool stream, bool for_packet)
{
	t->am = m;
	t->aflow = flow;
	t->astream = stream;
	t->aresponse = t->http.kind == AC_HTTP_RESPONSE;
	t->apacket = for_packet;
	t->st.candidates += t->vs->n_cand;
	return ac_verify_candidates(t->v, t->vs, pv, on_rule_alert, t);
}

/* The raw packet (t->pl).  cands_ready: the stream scan found its fast
 * patterns.  sd: its direction (the rules that match are remembered for
 * the PDU), or NULL. */
static uint32_t
judge_raw(struct ids_task *t, uint8_t pf, uint8_t flow, uint64_t *bits, bool cands_ready,
	struct ids_sdir *sd, bool *bits_changed)
{
	ac_http_parse(t->pl, t->pl_len, t->meta.ip_proto == 6, t->http_scratch, &t->http);
	if (t->hdec != NULL)
		ids_http_decode_body(t->hdec, &t->http, &t->st.http);
	t->st.http_requests += t->http.kind == AC_HTTP_REQUEST;
	t->st.http_responses += t->http.kind == AC_HTTP_RESPONSE;
	struct ac_pkt_view pv = { .m = &t->meta,
		.buf = t->http.buf,
		.present = present_of(&t->http),
		.pf = pf,
		.bits = bits };
	if (sd != NULL) {
		pv.matched = t->matched;
		pv.matched_cap = IDS_DEDUP;
	}
	if (t->engine != NULL) {
		if (!cands_ready)
			ac_engine_scan(t->engine, t->scratch, t->pl, t->pl_len,
				ac_vscratch_on_match, t->vs);
		scan_extra(t);
	}
	t->st.packets_judged++;
	t->st.bytes_judged += t->pl_len;
	uint32_t a = verify(t, &pv, &t->meta, flow, false, true);
	for (uint32_t i = 0; sd != NULL && i < pv.n_matched; i++) {
		bool have = false;
		for (uint32_t k = 0; k < sd->n_dedup; k++)
			have |= sd->dedup[k] == pv.matched[i];
		if (!have && sd->n_dedup < IDS_DEDUP)
			sd->dedup[sd->n_dedup++] = pv.matched[i];
	}
	*bits_changed = pv.bits_changed;
	return a;
}

static uint8_t
dir_pf(const struct ac_flow_ext *fx, unsigned dir)
{
	return (dir == fx->client_dir ? AC_PF_FROM_CLIENT : 0) |
		(fx->tcp_hs == 3 ? AC_PF_ESTABLISHED : 0);
}

/* A PDU of key direction dir: n bytes at p.  cand: its fast patterns (a
 * bitmap), NULL: scan it.  key: the flow's (at its end), else the packet's
 * meta gives the addresses. */
static void
judge_pdu(struct ids_task *t, void *state, unsigned dir, const uint8_t *p, uint32_t n,
	const uint64_t *cand, const struct flow_key *key, bool gap)
{
	struct ids_engine *e = t->e;
	struct ids_sdir *sd = &sd_of(e, state)[dir];
	struct ac_pkt_meta m;
	if (key != NULL)
		meta_of_key(key, dir, &m);
	else if (dir == t->dir)
		m = t->meta;
	else
		swap_meta(&t->meta, &m);
	if (t->pdu_hook != NULL)
		t->pdu_hook(t->pdu_ctx, &m, p, n, gap);
	uint8_t pf = dir_pf(fx_of(state), dir);
	ac_http_parse(p, n, true, t->http_scratch, &t->http);
	if (t->hdec != NULL)
		ids_http_decode_body(t->hdec, &t->http, &t->st.http);
	struct ac_pkt_view pv = { .m = &m,
		.buf = t->http.buf,
		.present = present_of(&t->http),
		.pf = pf,
		.bits = bits_of(e, state),
		.stream = true,
		.skip = sd->dedup,
		.n_skip = sd->n_dedup };
	if (t->engine != NULL) {
		if (cand != NULL) {
			ac_vscratch_add_bitmap(t->vs, cand, e->fp_words);
		} else {
			ac_engine_scan(t->engine, t->scratch, p, n, ac_vscratch_on_match, t->vs);
			t->st.pdus_rescanned++;
		}
		scan_extra(t);
	}
	t->st.pdus++;
	t->st.pdu_bytes += n;
	verify(t, &pv, &m, pf | IDS_ALERT_TRACKED, true, key == NULL);
	t->st.dedup_skipped += pv.n_skipped;
	sd->n_dedup = 0;
}

/* Judge and drop the first n bytes of the direction's PDU. */
static void
flush(struct ids_task *t, void *state, unsigned dir, struct ids_slot *s, uint32_t n,
	const struct flow_key *key)
{
	struct ids_slot_pool *pool = t->e->pool;
	struct ids_sdir *sd = &sd_of(t->e, state)[dir];
	uint64_t *cand = ids_slot_cand(pool, s);
	judge_pdu(t, state, dir, ids_slot_data(pool, s) + s->hist, n, cand, key, sd->gap);
	sd->gap = 0;
	ids_sdir_flushed(pool, sd, s, n);
	/* The bitmap may keep the rest's fast patterns (a superset is fine). */
	if (s->pdu == 0)
		memset(cand, 0, 8 * (size_t)t->e->fp_words);
}

static void
on_stream_hit(void *ctx, uint32_t fp, uint32_t end)
{
	struct ids_task *t = ctx;
	uint32_t len = t->v->fp[fp].len;
	t->scan_cand[fp >> 6] |= 1ull << (fp & 63);
	if (t->scan_raw && end <= t->scan_raw_len && end >= len)
		ac_vscratch_on_match(t->vs, fp, end);
	if (t->scan_pdu_off + end < len && t->e->fp_stream[fp] && t->n_str < MAX_STRADDLES) {
		t->str[t->n_str].fp = fp;
		t->str[t->n_str++].end = t->scan_pdu_off + end;
	}
}

/* Scan n bytes that came into order at PDU offset from. */
static void
scan_chunk(struct ids_task *t, void *state, unsigned dir, struct ids_slot *s, uint32_t from,
	uint32_t n, bool raw)
{
	if (t->engine == NULL)
		return;
	struct ids_slot_pool *pool = t->e->pool;
	t->scan_cand = ids_slot_cand(pool, s);
	t->scan_raw = raw;
	t->scan_raw_len = t->pl_len;
	t->scan_pdu_off = from;
	ac_engine_scan_stream(t->engine, t->scratch, eng_of(t->e, state, dir),
		ids_slot_data(pool, s) + s->hist + from, n, on_stream_hit, t);
}

/* Keywords found across a PDU's start: their streamable rules, on the
 * keyword's bytes (in the slot's history and PDU). */
static void
judge_straddles(struct ids_task *t, void *state, unsigned dir, struct ids_slot *s)
{
	struct ids_slot_pool *pool = t->e->pool;
	uint8_t pf = dir_pf(fx_of(state), dir);
	for (uint32_t i = 0; i < t->n_str; i++) {
		const struct ac_keyword *kw = &t->v->fp[t->str[i].fp];
		int64_t at = (int64_t)s->hist + t->str[i].end - kw->len;
		if (at < 0) {
			t->st.straddles_unverifiable++;
			continue;
		}
		struct ac_span bufs[AC_BUF_N];
		struct ac_pkt_view pv;
		ac_pkt_view_bare(&pv, bufs, &t->meta, ids_slot_data(pool, s) + at, kw->len,
			bits_of(t->e, state));
		pv.pf = pf;
		pv.stream = true;
		t->am = &t->meta;
		t->aflow = pf | IDS_ALERT_TRACKED;
		t->astream = true;
		t->aresponse = false;
		t->apacket = true;
		for (uint32_t k = 0; k < kw->n_rules; k++) {
			uint32_t r = kw->rules[k];
			if (!t->v->rules[r].streamable)
				continue;
			t->st.straddles++;
			if (ac_verify_rule(t->v, r, t->vs, &pv) && !t->v->rules[r].noalert)
				on_rule_alert(t, r);
		}
	}
	t->n_str = 0;
}

/* --- per packet ----------------------------------------------------------- */

struct visit {
	struct ids_task *t;
	uint8_t pf;
	bool rejected; /* TTL insertion: not judged */
	bool judged;   /* judged in the visit (with reassembly) */
};

/* A TCP segment whose TTL is far below the highest of its direction never
 * reaches the target (UDP datagrams are left alone: a flow of them is only
 * a 5-tuple, which senders of other TTLs share).  (One far above it shows that what came before was
 * such: the caller drops what is held out of order.) */
static bool
ttl_insertion(struct ids_task *t, struct ac_flow_ext *fx, unsigned dir, bool *raised)
{
	uint8_t lim = t->e->cfg.ttl_limit;
	*raised = false;
	/* Packets with data only: a handshake often leaves with its own TTL
	 * (GTSM's 255, SYN cookies), and a packet without data inserts nothing. */
	if (!t->e->reassembly || lim == 0 || t->pl_len == 0 || t->meta.ip_proto != 6)
		return false;
	if (!(fx->ttl_seen & (1u << dir))) {
		fx->ttl_seen |= (uint8_t)(1u << dir);
		fx->ttl[dir] = t->p.ttl;
		return false;
	}
	if ((int)t->p.ttl + lim < (int)fx->ttl[dir]) {
		t->st.ttl_insertions++;
		t->st.events[IDS_EV_STREAM_TTL]++;
		return true;
	}
	if (t->p.ttl > fx->ttl[dir]) {
		*raised = (int)t->p.ttl > (int)fx->ttl[dir] + lim;
		fx->ttl[dir] = t->p.ttl;
	}
	return false;
}

/* UDP, or TCP without reassembly: track, copy the flowbits out. */
static void
visit_plain(void *state, bool created, void *arg)
{
	struct visit *fv = arg;
	struct ids_task *t = fv->t;
	struct ac_flow_ext *fx = fx_of(state);
	fv->pf = ac_flow_track(fx, created, t->meta.ip_proto, t->dir, t->p.tcp_flags);
	bool raised;
	if (ttl_insertion(t, fx, t->dir, &raised)) {
		fv->rejected = true;
		return;
	}
	memcpy(t->bits, bits_of(t->e, state), 8 * (size_t)t->v->fb_words);
}

static void
visit_store(void *state, bool created, void *arg)
{
	struct ids_task *t = arg;
	(void)created;
	memcpy(bits_of(t->e, state), t->bits, 8 * (size_t)t->v->fb_words);
}

static void
sdir_start(struct ids_task *t, void *state, unsigned dir, uint32_t seq)
{
	struct ids_sdir *sd = &sd_of(t->e, state)[dir];
	if (sd->slot != 0)
		ids_sdir_release(t->e->pool, sd);
	memset(sd, 0, sizeof(*sd));
	sd->on = 1;
	sd->next = sd->base = seq;
	sd->policy = t->e->cfg.policy ? ids_target_policy_of(t->e->cfg.policy, t->meta.dst)
				      : IDS_POLICY_DEFAULT;
	if (t->engine != NULL)
		ac_engine_stream_init(t->engine, eng_of(t->e, state, dir));
}

/* Flush what direction dir holds in order. */
static void
flush_all(struct ids_task *t, void *state, unsigned dir)
{
	struct ids_sdir *sd = &sd_of(t->e, state)[dir];
	struct ids_slot *s = ids_sdir_get(t->e->pool, sd, false, &t->st.stream, NULL);
	if (s == NULL)
		return;
	if (s->pdu > 0)
		flush(t, state, dir, s, s->pdu, NULL);
	ids_sdir_put(t->e->pool, s);
}

/* The PDUs the direction holds complete: HTTP messages, a full window. */
static void
flush_ready(struct ids_task *t, void *state, unsigned dir, struct ids_slot *s)
{
	struct ids_slot_pool *pool = t->e->pool;
	uint32_t win = ids_slot_pool_cfg(pool)->window;
	while (s->pdu > 0) {
		uint32_t m = ac_http_message_len(ids_slot_data(pool, s) + s->hist, s->pdu);
		if (m == 0 && s->pdu >= win)
			m = s->pdu;
		if (m == 0)
			break;
		flush(t, state, dir, s, m, NULL);
	}
}

/* TCP with reassembly: everything under the flow's lock. */
static void
visit_stream(void *state, bool created, void *arg)
{
	struct visit *fv = arg;
	struct ids_task *t = fv->t;
	struct ids_engine *e = t->e;
	struct ac_flow_ext *fx = fx_of(state);
	unsigned dir = t->dir, o = dir ^ 1;
	uint8_t fl = t->p.tcp_flags;
	bool syn = fl & AC_TCP_SYN, fin = fl & AC_TCP_FIN, rst = fl & AC_TCP_RST;
	struct ids_sdir *me = &sd_of(e, state)[dir];

	fv->pf = ac_flow_track(fx, created, 6, dir, fl);
	fv->judged = true;
	bool raised;
	if (ttl_insertion(t, fx, dir, &raised)) {
		fv->rejected = true;
		return;
	}
	if (raised && me->slot != 0) {
		/* What is held out of order came below this TTL: insertions. */
		struct ids_slot *h = ids_sdir_get(e->pool, me, false, &t->st.stream, NULL);
		if (h != NULL) {
			h->n_pieces = 0;
			ids_sdir_put(e->pool, h);
		}
	}
	uint8_t flow = fv->pf | IDS_ALERT_TRACKED;
	/* A SYN starts the direction, unless it repeats the one that did. */
	if (syn && !rst && (!me->on || (fx->tcp_hs < 3 && me->isn != t->p.seq))) {
		sdir_start(t, state, dir, t->p.seq + 1);
		me->isn = t->p.seq;
	}
	if (rst) {
		flush_all(t, state, o);
		flush_all(t, state, dir);
	} else if (t->pl_len > 0) {
		flush_all(t, state, o); /* the other side spoke first */
	}
	struct ids_slot *s = NULL;
	bool cands_ready = false, raw = true;
	uint32_t ev = 0;
	if (t->pl_len > 0 && !rst) {
		/* Data on a SYN counts from the SYN's sequence number + 1. */
		uint32_t seq = t->p.seq + (syn ? 1 : 0);
		if (!me->on)
			sdir_start(t, state, dir, seq); /* picked up mid-stream */
		uint32_t lost = 0;
		s = ids_sdir_get(e->pool, me, true, &t->st.stream, &lost);
		if (lost != 0 && t->engine != NULL)
			ac_engine_stream_init(t->engine, eng_of(e, state, dir));
		if (s != NULL) {
			uint32_t win = ids_slot_pool_cfg(e->pool)->window, done = 0;
			bool in_order = seq == me->next, chunked = false, exact = in_order;
			/* An HTTP message starts its own PDU. */
			if (in_order && s->pdu > 0 && ac_http_starts_message(t->pl, t->pl_len))
				flush(t, state, dir, s, s->pdu, NULL);
			while (done < t->pl_len) {
				uint32_t part = t->pl_len - done;
				if (in_order && part > win - s->pdu) {
					/* Bigger than the window's room: in pieces, each
					 * PDU flushed as it fills (a GSO-sized segment). */
					part = win - s->pdu;
					chunked = true;
				}
				uint64_t ov = t->st.stream.overlaps;
				uint32_t n = ids_sdir_insert(e->pool, me, s, seq + done,
					t->pl + done, part, &t->st.stream, &ev);
				exact &= ov == t->st.stream.overlaps && n >= part;
				if (n > 0)
					scan_chunk(
						t, state, dir, s, s->pdu - n, n, exact && !chunked);
				done += part;
				if (!in_order)
					break;
				if (chunked)
					flush_ready(t, state, dir, s);
			}
			cands_ready = exact && !chunked;
			/* Only bytes the target takes as they are, in order, are
			 * judged alone: a segment out of order, retransmitted or
			 * overlapping may not be what the target keeps (its bytes
			 * are judged in the PDU, as the target has them). */
			raw = exact;
			t->st.raw_skipped += !exact;
		}
	}
	raise_events(t, ev, &t->meta, flow);
	bool changed;
	if (raw) {
		judge_raw(t, fv->pf, flow, bits_of(e, state), cands_ready, me, &changed);
	} else {
		t->st.packets_judged++; /* its bytes are judged in the stream */
		t->st.bytes_judged += t->pl_len;
	}
	/* A FIN right at the in-order edge takes its sequence number. */
	bool fin_in_order = fin && me->on && t->p.seq + (syn ? 1 : 0) + t->pl_len == me->next;
	if (s != NULL) {
		judge_straddles(t, state, dir, s);
		flush_ready(t, state, dir, s);
		if (fin && s->pdu > 0)
			flush(t, state, dir, s, s->pdu, NULL);
		if (fin_in_order && !me->fin)
			ids_sdir_fin(e->pool, me, s);
		ids_sdir_put(e->pool, s);
	} else if (fin) {
		flush_all(t, state, dir);
		if (fin_in_order && !me->fin) {
			struct ids_slot *h = ids_sdir_get(e->pool, me, false, &t->st.stream, NULL);
			ids_sdir_fin(e->pool, me, h);
			if (h != NULL)
				ids_sdir_put(e->pool, h);
		}
	}
	t->n_str = 0;
	if (fin)
		me->fin = 1;
}

void
ids_flow_ended(struct ids_task *t, void *state, const struct flow_key *key, uint64_t now)
{
	struct ids_engine *e = t->e;
	(void)now;
	if (!e->reassembly || key->proto != 6)
		return;
	for (unsigned dir = 0; dir < 2; dir++) {
		struct ids_sdir *sd = &sd_of(e, state)[dir];
		struct ids_slot *s = ids_sdir_get(e->pool, sd, false, &t->st.stream, NULL);
		if (s == NULL)
			continue;
		if (s->pdu > 0)
			flush(t, state, dir, s, s->pdu, key);
		/* What is still held out of order: each run after its hole. */
		struct ids_piece *pc = ids_slot_pieces(s);
		uint8_t *data = ids_slot_data(e->pool, s) + s->hist;
		for (uint32_t i = 0; i < s->n_pieces;) {
			uint32_t j = i + 1;
			while (j < s->n_pieces && pc[j].s == pc[j - 1].e)
				j++;
			judge_pdu(t, state, dir, data + pc[i].s, pc[j - 1].e - pc[i].s, NULL, key,
				true);
			i = j;
		}
		s->n_pieces = 0;
		ids_sdir_put(e->pool, s);
		ids_sdir_release(e->pool, sd);
	}
}

/* Frames (or datagrams put back together) decapsulated, and tunnel
 * headers left as UDP by their fault.  Fragments inside a tunnel come
 * back from defragmentation as their inner frame alone: each fragment's
 * frame counts. */
static void
count_tunnels(struct ids_task *t, const struct ids_pkt *p)
{
	t->st.tunneled[0] += (p->tun_kinds & IDS_TUN_VXLAN) != 0;
	t->st.tunneled[1] += (p->tun_kinds & IDS_TUN_GENEVE) != 0;
	if (p->tun_err != IDS_TUN_OK)
		t->st.tunnel_errors[p->tun_err]++;
}

uint32_t
ids_process(struct ids_task *t, const uint8_t *frame, uint32_t len, uint64_t now, uint32_t *l3_off)
{
	struct ids_engine *e = t->e;
	struct ids_pkt *p = &t->p;
	t->pkt_alerts = 0;
	*l3_off = UINT32_MAX;
	enum ids_status st = ids_decode(frame, len, p);
	/* the frame's outermost IP header: a datagram put back together, or
	 * the inner packet of a tunnel, is marked there */
	uint32_t outer_l3 = p->outer_l3_off;
	count_tunnels(t, p);
	if (st == IDS_PKT_FRAGMENT && t->defrag != NULL) {
		/* A datagram put back together may decode as a fragment again:
		 * a tunnel's inner packet cut as well as the outer datagram (else
		 * an attack cut twice would go unscanned).  It goes to the
		 * defragmenter in turn, IDS_TUNNEL_MAX_DEPTH + 1 times at most.
		 * (The defragmenter reads a fragment before it writes a datagram,
		 * so the datagram's buffer can hold the fragment.) */
		for (int level = 0; st == IDS_PKT_FRAGMENT && level <= IDS_TUNNEL_MAX_DEPTH;
			level++) {
			uint32_t ev = 0;
			uint32_t n = ids_defrag_add(t->defrag, frame, p, now, t->dgram, &ev);
			if (ev != 0) {
				struct ac_pkt_meta m = { .ip_proto = p->proto,
					.src = addr_of(p->src, p->family),
					.dst = addr_of(p->dst, p->family) };
				raise_events(t, ev, &m, 0);
			}
			if (n == 0) {
				t->st.fragments_held++;
				return t->pkt_alerts;
			}
			t->st.datagrams++;
			frame = t->dgram;
			len = n;
			st = ids_decode(frame, len, p);
			count_tunnels(t, p); /* a tunnel in a datagram that came in fragments */
		}
	} else if (st == IDS_PKT_FRAGMENT) {
		st = ids_decode_first_fragment(frame, p); /* judged as far as it goes */
	} else if (t->defrag != NULL) {
		ids_defrag_expire(t->defrag, now);
	}
	if (st != IDS_PKT_OK) {
		t->st.unscanned[st]++;
		return t->pkt_alerts;
	}
	*l3_off = outer_l3;
	t->meta.ip_proto = p->proto;
	t->meta.src = addr_of(p->src, p->family);
	t->meta.dst = addr_of(p->dst, p->family);
	t->meta.sport = p->sport;
	t->meta.dport = p->dport;
	t->pl = frame + p->off;
	t->pl_len = p->len;
	if (!e->cfg.flows) {
		struct ac_span bare[AC_BUF_N];
		struct ac_pkt_view pv;
		ac_pkt_view_bare(&pv, bare, &t->meta, t->pl, t->pl_len, t->bits);
		if (t->engine != NULL)
			ac_engine_scan(t->engine, t->scratch, t->pl, t->pl_len,
				ac_vscratch_on_match, t->vs);
		t->http.kind = AC_HTTP_NONE;
		t->st.packets_judged++;
		t->st.bytes_judged += t->pl_len;
		verify(t, &pv, &t->meta, 0, false, true);
		goto out;
	}
	struct flow_pkt fp;
	ids_flow_key(p, &fp);
	t->dir = fp.dir;
	uint32_t hash = t->ops->hash(t->table, &fp.key);
	struct visit fv = { .t = t };
	bool stream = e->reassembly && p->proto == 6;
	enum ids_flow_update u = t->ops->update(t->table, &fp, hash, p->len, now, t->counters,
		stream ? visit_stream : visit_plain, &fv);
	if (u == IDS_FLOW_UNTRACKED) {
		/* Not tracked: judged as the first packet of a new flow. */
		struct ac_flow_ext x = { 0 };
		t->st.untracked++;
		memset(t->bits, 0, 8 * (size_t)t->v->fb_words);
		uint8_t pf = ac_flow_track(&x, true, p->proto, fp.dir, fp.tcp_flags);
		bool changed;
		judge_raw(t, pf, pf | IDS_ALERT_UNTRACKED, t->bits, false, NULL, &changed);
		goto out;
	}
	if (fv.rejected)
		return t->pkt_alerts;
	if (!fv.judged) {
		bool changed = false;
		judge_raw(t, fv.pf, fv.pf | IDS_ALERT_TRACKED, t->bits, false, NULL, &changed);
		if (changed) {
			t->ops->visit(t->table, &fp.key, hash, visit_store, t);
			t->st.bits_written++;
		}
	}
out:;
	uint32_t alerts = t->pkt_alerts;
	unsigned b = alerts == 0 ? 0 : 32u - (unsigned)__builtin_clz(alerts);
	t->st.hist[b < HIST_BUCKETS ? b : HIST_BUCKETS - 1]++;
	t->st.packets_alerted += alerts > 0;
	return alerts;
}
