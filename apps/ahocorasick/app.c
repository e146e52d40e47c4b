/* ahocorasick P stage.
 * --mode rules (default): rules mode's engine (ids/ids.h) judges each frame:
 * IPv4 and IPv6 defragmentation, the flow in the table the instances share
 * (runtime/flow; client/server side, handshake, flowbits, and each TCP
 * direction's reassembly), the HTTP buffers, one fast pattern per Snort
 * rule as prefilter, every candidate rule verified in full on the packet
 * and on the PDUs rebuilt from its stream; alerts are counted per sid and
 * logged (alert_log.h).  --mode keywords (the paper's benchmark): every
 * occurrence of every content keyword, counted per keyword and per packet.
 * Then forward, drop or mark (see README.md).  This file is the pipeline's
 * hooks: options, set-up, the P stage's loop, statistics. */
#include "app.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "alert_log.h"
#include "engine.h"
#include "flow_hash.h"
#include "flow_ids.h"
#include "flow_key.h"
#include "flow_table.h"
#include "ids.h"
#include "ids_opts.h"
#include "payload.h"
#include "rule_opts.h"
#include "keyword_set.h"
#include "stats_json.h"
#define HIST_BUCKETS 18    /* matches per packet: 0, 1, 2-3, 4-7, ... , >= 2^16 */
#define LINEAR_BYTES 65536 /* multi-segment packets are copied here to scan */
#define DEFAULT_TOP 20
#define DEFAULT_MAX_FLOWS (1u << 16)
#define MAX_MAX_FLOWS (1u << 24)
#define DEFAULT_FLOW_TIMEOUT_S 180.0 /* Snort 2.9's snort.conf: stream5 timeout 180 */
/* Buckets each P task sweeps for idle flows after a burst (as stateful). */
#define SWEEP_PER_BURST 2

enum ac_verdict_mode {
	VERDICT_FORWARD,
	VERDICT_DROP,
	VERDICT_MARK
};
static const char *const verdict_names[] = { "forward", "drop-on-match", "mark" };
static const char *const on_alert_names[] = { "forward", "drop", "mark" };

enum ac_mode {
	MODE_RULES,
	MODE_KEYWORDS
};

struct ac_cfg {
	struct ac_rule_opts rules;
	enum ac_verdict_mode verdict;
	uint8_t mark_dscp;
	bool scan_all_frames;
	unsigned top;
	enum ac_mode mode;
	const char *alert_log; /* NULL: no log */
	unsigned ac_layout;    /* 0 auto, 1 full, 2 compact */
	uint64_t max_flows;    /* 0: DEFAULT_MAX_FLOWS */
	bool measure_cpu;
	double flow_timeout_s;
	bool flow_timeout_set;
	struct ids_opts ids; /* rules mode's reassembly */
	bool ids_init;       /* ids holds its defaults */
};

static const char *const layout_names[] = { "auto", "full", "compact" };

struct ac_state {
	struct ac_cfg *cfg;
	struct ac_ruleset rs;
	struct ac_engine *engine;
	enum ac_engine_kind kind;
	unsigned socket_id;
	double build_s;
	char set_name[512];
	struct ac_vars vars;     /* rules mode */
	struct ac_verifier ver;  /* rules mode */
	struct ac_alert_log log; /* rules mode with --alert-log */
	bool log_on;
	size_t ac_budget;         /* 0: full table whatever its size */
	struct flow_table *flows; /* rules mode without --stateless */
	double flow_timeout_s;
	unsigned n_instances;
	struct ids_engine *ids; /* rules mode */
	struct ids_target_policy tp;
	bool ended;                                /* the flows left at the end were judged */
	struct ac_task *tasks[AC_ALERT_MAX_TASKS]; /* rules mode, for the end */
	unsigned n_tasks;
};

struct ac_task {
	const struct ac_engine *engine;
	struct ac_scratch *scratch;
	uint64_t *kw_hits; /* per keyword */
	uint8_t *linear;
	enum ac_verdict_mode verdict;
	uint8_t mark_dscp;
	bool scan_all_frames;
	bool pending_linear; /* t->linear holds a payload not scanned yet */
	unsigned instance;
	/* counters, read by stats() from the main lcore */
	uint64_t scanned;                   /* packets whose L4 payload was scanned */
	uint64_t whole_frames;              /* packets scanned whole (--scan-all-frames) */
	uint64_t unscanned[AC_PL_N_STATUS]; /* by reason; [AC_PL_OK] unused */
	uint64_t bytes_scanned;
	uint64_t matches;
	uint64_t packets_matched;
	uint64_t marked;
	uint64_t copied;       /* multi-segment packets linearised */
	uint64_t short_chains; /* of which segments hold < pkt_len bytes */
	uint64_t hist[HIST_BUCKETS];
	/* rules mode: the engine's task (its counters are there) */
	struct ids_task *ids;
	bool rules_mode;
	struct rte_ring *alert_ring;
	uint64_t alerts_logged_enq, alerts_log_dropped;
	struct flow_table *flows;
	struct flow_counters fc; /* the flow table's end hook finds the task from it */
	uint32_t sweep_cursor;
	uint8_t cur_action; /* 1: the packet judged is dropped (--on-alert drop) */
	bool measure_cpu;
	uint64_t cpu_ns; /* --measure-cpu: thread CPU time in the process step */
} __rte_cache_aligned;

static const char *const ac_variants[] = { "ac", "hs", "hs-literal", NULL };
static const char *const ac_drop_reasons[] = { "keyword_match", "rule_alert" };

static const char ac_usage[] =
	"  variants: ac (classic Aho-Corasick DFA, the paper's; default), hs (Hyperscan),\n"
	"            hs-literal (Hyperscan's literal API: Hyperscan 5.4 fails some\n"
	"            scans with it, counted in engine_scan_errors; see README)\n"
	"  --mode M              rules (default): IPv4 and IPv6 fragments put back\n"
	"                        together and each TCP direction reassembled, overlaps\n"
	"                        resolved by the target's policy (--target-policy);\n"
	"                        flows tracked in a table shared by the instances\n"
	"                        (flow, flowbits, streams), HTTP buffers parsed per\n"
	"                        packet and per PDU, bodies dechunked and inflated,\n"
	"                        one fast pattern per rule prefilters (streaming over\n"
	"                        each direction's bytes), candidate rules are\n"
	"                        verified in full on packets and PDUs (contents with\n"
	"                        their buffers and positions, pcre with every flag,\n"
	"                        byte_test/jump/extract, isdataat, dsize, urilen,\n"
	"                        protocol, addresses, ports), alerts per sid;\n"
	"                        keywords: every occurrence of every content\n"
	"                        keyword (the paper's benchmark; assign uses it).\n"
	"                        Rules mode: options that cannot be evaluated\n"
	"                        (detection_filter, dce_*, ...) are left out and the\n"
	"                        rule is marked partial (alerts say so); icmp rules,\n"
	"                        unresolvable headers, pcres that do not compile and\n"
	"                        partial rules with no content or pcre are disabled;\n"
	"                        the summary line counts both (README: Rules "
	"mode)\n" AC_RULE_OPTS_USAGE
	"  --max-flows N         rules mode: flow records shared by the instances,\n"
	"                        preallocated (default 65536; 1..16777216); a full\n"
	"                        table evicts the least recently seen flow of the\n"
	"                        bucket (counted)\n"
	"  --flow-timeout S      rules mode: a flow idle for S seconds ends (default\n"
	"                        180, Snort 2.9's stream timeout; 0: never)\n"
	"  --alert-log FILE      rules mode: alerts as JSON lines (eve.json-like:\n"
	"                        timestamp, src_ip/src_port/dest_ip/dest_port, proto,\n"
	"                        direction (to_server/to_client), flow_state\n"
	"                        (established/not_established/untracked),\n"
	"                        alert.signature_id/rev/signature/category/action/\n"
	"                        partial), written by a thread off the fast path; a\n"
	"                        full queue drops the record (alerts_log_dropped)\n"
	"  --on-alert V          rules mode: forward (default), drop (drop reason\n"
	"                        rule_alert) or mark (DSCP, see --mark-dscp) packets\n"
	"                        with at least one alert\n"
	"  --verdict V           keywords mode: forward (default): count only; drop-on-match: "
	"drop\n"
	"                        packets with at least one match (drop reason\n"
	"                        keyword_match); mark: forward, and set the IPv4 DSCP\n"
	"                        of packets with a match (header checksum updated)\n"
	"  --mark-dscp N         DSCP written by --verdict mark, 0..63 (default 1)\n"
	"  --scan-all-frames     keywords mode: scan the whole frame of packets that\n"
	"                        are not IPv4 TCP/UDP or are truncated (default:\n"
	"                        forward them unscanned, counted by reason)\n"
	"  --top N               keywords (rules mode: sids) listed in the statistics,\n"
	"                        most hits first (default 20; 0: none)\n"
	"  --measure-cpu         time each P task's process step with its thread's CPU\n"
	"                        clock (two system calls a burst; for benchmarks on a\n"
	"                        loaded machine): process_cpu_ns in the statistics\n"
	"  rules mode's header variables and their defaults (--vars FILE overrides):\n"
	"    ipvar HOME_NET any, ipvar EXTERNAL_NET any, ipvar *_SERVERS $HOME_NET\n"
	"    (DNS SMTP HTTP SQL TELNET SSH FTP SIP), portvar HTTP_PORTS [80,81,...,8080,\n"
	"    ...] (Snort 2.9's list), SHELLCODE_PORTS !80, ORACLE_PORTS 1024:,\n"
	"    SSH_PORTS 22, FTP_PORTS [21,2100,3535], SIP_PORTS [5060,5061,5600],\n"
	"    FILE_DATA_PORTS [$HTTP_PORTS,110,143], GTP_PORTS [2123,2152,3386]\n"
	"  --ac-layout L         ac variant's automaton: full (one table row per\n"
	"                        state), compact (trie edges and failure links, ~13\n"
	"                        bytes a state) or auto (default): rules mode takes\n"
	"                        full when the table fits the P context's L2 cache,\n"
	"                        else compact; keywords mode takes full (the paper's)\n"
	"  the automaton's memory and layout are printed at start and in the\n"
	"  statistics (engine_bytes, ac_layout, ac_full_table_bytes)\n";

static int
parse_uint_opt(const char *o, const char *v, unsigned max, unsigned *out)
{
	uint64_t x;

	if (pp_parse_u64(o, v, 0, max, &x) < 0)
		return -1;
	*out = (unsigned)x;
	return 0;
}

static int
ac_parse_opt(void *cfgp, int argc, char **argv)
{
	struct ac_cfg *cfg = cfgp;
	const char *o = argv[0];
	unsigned x;

	if (!cfg->ids_init) {
		ids_opts_init(&cfg->ids);
		cfg->ids_init = true;
	}
	int n = ac_rule_opt_parse(&cfg->rules, argc, argv);
	if (n == 0)
		n = ids_opt_parse(&cfg->ids, argc, argv);
	if (n != 0)
		return n;
	if (strcmp(o, "--scan-all-frames") == 0) {
		cfg->scan_all_frames = true;
		return 1;
	}
	if (strcmp(o, "--measure-cpu") == 0) {
		cfg->measure_cpu = true;
		return 1;
	}
	if (strcmp(o, "--verdict") != 0 && strcmp(o, "--mark-dscp") != 0 &&
		strcmp(o, "--top") != 0 && strcmp(o, "--mode") != 0 &&
		strcmp(o, "--alert-log") != 0 && strcmp(o, "--on-alert") != 0 &&
		strcmp(o, "--ac-layout") != 0 && strcmp(o, "--max-flows") != 0 &&
		strcmp(o, "--flow-timeout") != 0)
		return 0;
	if (argc < 2 || argv[1][0] == '\0') {
		fprintf(stderr, "%s needs a value\n", o);
		return -1;
	}
	const char *v = argv[1];
	if (strcmp(o, "--max-flows") == 0)
		return pp_parse_u64(o, v, 1, MAX_MAX_FLOWS, &cfg->max_flows) < 0 ? -1 : 2;
	if (strcmp(o, "--flow-timeout") == 0) {
		if (pp_parse_seconds(o, v, 1e6, &cfg->flow_timeout_s) < 0)
			return -1;
		cfg->flow_timeout_set = true;
		return 2;
	}
	if (strcmp(o, "--ac-layout") == 0) {
		for (unsigned i = 0; i < 3; i++)
			if (strcmp(v, layout_names[i]) == 0) {
				cfg->ac_layout = i;
				return 2;
			}
		fprintf(stderr, "--ac-layout '%s': expected auto, full or compact\n", v);
		return -1;
	}
	if (strcmp(o, "--mode") == 0) {
		if (strcmp(v, "rules") == 0)
			cfg->mode = MODE_RULES;
		else if (strcmp(v, "keywords") == 0)
			cfg->mode = MODE_KEYWORDS;
		else {
			fprintf(stderr, "--mode '%s': expected rules or keywords\n", v);
			return -1;
		}
		return 2;
	}
	if (strcmp(o, "--alert-log") == 0) {
		cfg->alert_log = v;
		return 2;
	}
	if (strcmp(o, "--on-alert") == 0) {
		for (unsigned i = 0; i < 3; i++)
			if (strcmp(v, on_alert_names[i]) == 0) {
				cfg->verdict = (enum ac_verdict_mode)i;
				return 2;
			}
		fprintf(stderr, "--on-alert '%s': expected forward, drop or mark\n", v);
		return -1;
	}
	if (strcmp(o, "--verdict") == 0) {
		for (unsigned i = 0; i < 3; i++)
			if (strcmp(v, verdict_names[i]) == 0) {
				cfg->verdict = (enum ac_verdict_mode)i;
				return 2;
			}
		fprintf(stderr, "--verdict '%s': expected forward, drop-on-match or mark\n", v);
		return -1;
	}
	if (strcmp(o, "--mark-dscp") == 0) {
		if (parse_uint_opt(o, v, 63, &x) < 0)
			return -1;
		cfg->mark_dscp = (uint8_t)(x + 1); /* 0 in cfg = not given */
		return 2;
	}
	if (parse_uint_opt(o, v, 100000, &x) < 0)
		return -1;
	cfg->top = x + 1; /* 0 in cfg = not given */
	return 2;
}

static double
now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* runtime/flow's table behind the engine's flow operations (ids.h). */
struct rt_visit {
	ids_visit_fn fn;
	void *arg;
};

static void
rt_visit_cb(struct flow_record *r, void *ext, bool created, void *arg)
{
	struct rt_visit *v = arg;
	(void)r;
	v->fn(ext, created, v->arg);
}

static uint32_t
rt_hash(void *table, const struct flow_key *k)
{
	return flow_hash(&((struct flow_table *)table)->hasher, k);
}

static enum ids_flow_update
rt_update(void *table, const struct flow_pkt *p, uint32_t hash, uint32_t wire_len, uint64_t now,
	void *counters, ids_visit_fn fn, void *arg)
{
	struct rt_visit v = { fn, arg };
	switch (flow_table_update_visit(table, p, hash, wire_len, now, counters, rt_visit_cb, &v)) {
	case FLOW_UPDATE_HIT:
		return IDS_FLOW_HIT;
	case FLOW_UPDATE_CREATED:
		return IDS_FLOW_CREATED;
	default:
		return IDS_FLOW_UNTRACKED;
	}
}

static bool
rt_visit(void *table, const struct flow_key *k, uint32_t hash, ids_visit_fn fn, void *arg)
{
	struct rt_visit v = { fn, arg };
	return flow_table_visit(table, k, hash, rt_visit_cb, &v);
}

static void
rt_prefetch(void *table, uint32_t hash)
{
	flow_table_prefetch_bucket(table, hash);
}

static const struct ids_flow_ops rt_flow_ops = {
	.hash = rt_hash,
	.update = rt_update,
	.visit = rt_visit,
	.prefetch = rt_prefetch,
};

static void *
ext_of_record(const struct flow_table *ft, const struct flow_record *r)
{
	return ft->ext + (size_t)(r - ft->pool) * ft->ext_size;
}

/* The table ends a flow (TCP end, idle, evicted), under its bucket lock,
 * on the task whose lookup or sweep found it: what its streams still hold
 * is judged there (ids.h). */
static void
ids_flow_end(
	const struct flow_record *r, enum flow_end_reason why, struct flow_counters *c, void *arg)
{
	struct ac_state *st = arg;
	struct ac_task *t = container_of(c, struct ac_task, fc);
	(void)why;
	uint8_t action = t->cur_action;
	t->cur_action = 0; /* not this packet's alerts */
	ids_flow_ended(t->ids, ext_of_record(st->flows, r), &r->key, r->last_tsc);
	t->cur_action = action;
}

/* The flow table shared by the instances: keyed SipHash (a random key:
 * flows cannot be aimed at one bucket), an extension area per record for
 * the engine's state of the flow (ids.h: flow_ids.h's, the streams', the
 * flowbits). */
static int
ids_flows_create(struct ac_state *st, const struct ac_cfg *cfg, char *err, size_t errlen)
{
	struct flow_hasher hasher;
	if (flow_hasher_init(&hasher, "keyed", NULL, err, errlen) < 0)
		return -1;
	double idle_s = cfg->flow_timeout_set ? cfg->flow_timeout_s : DEFAULT_FLOW_TIMEOUT_S;
	uint32_t ext = ids_engine_state_bytes(st->ids);
	uint32_t cap = cfg->max_flows ? (uint32_t)cfg->max_flows : DEFAULT_MAX_FLOWS;
	st->flows = flow_table_create_ext(cap, (uint64_t)(idle_s * (double)rte_get_tsc_hz()),
		&hasher, (int)st->socket_id, ext);
	if (st->flows == NULL) {
		snprintf(err, errlen, "cannot make a flow table of %u records of %u + %u bytes: %s",
			cap, (unsigned)sizeof(struct flow_record), ext, rte_strerror(rte_errno));
		return -1;
	}
	flow_table_set_end_hook(st->flows, 0, ids_flow_end, st);
	st->flow_timeout_s = idle_s;
	fprintf(stderr,
		"ahocorasick: flow table: %u records (+%u bytes each for state, streams and %u "
		"flowbits states), idle timeout %g s, keyed hash\n",
		cap, ext, st->ver.n_fb_names, idle_s);
	return 0;
}

static void
state_free(struct ac_state *st)
{
	flow_table_free(st->flows);
	ids_engine_free(st->ids);
	ids_target_policy_free(&st->tp);
	ac_engine_free(st->engine);
	ac_verifier_free(&st->ver);
	ac_vars_free(&st->vars);
	ac_ruleset_free(&st->rs);
	free(st);
}

static int64_t ac_options_check(const void *cfgp);

static int
ac_setup(void *cfgp, const struct pp_setup_info *info, void **app_state)
{
	struct ac_cfg *cfg = cfgp;
	struct ac_state *st = calloc(1, sizeof(*st));
	char err[512];

	if (st == NULL)
		return -ENOMEM;
	if (!cfg->ids_init) {
		ids_opts_init(&cfg->ids);
		cfg->ids_init = true;
	}
	st->cfg = cfg;
	st->socket_id = info->socket_id;
	st->kind = AC_ENGINE_AC;
	ids_target_policy_init(&st->tp);
	if (info->variant != NULL)
		st->kind = (enum ac_engine_kind)ac_engine_kind_parse(info->variant);
	bool rules = cfg->mode == MODE_RULES;
	if (ac_options_check(cfg) < 0) {
		free(st);
		return -EINVAL;
	}
	cfg->rules.keep_all = rules;
	if (ac_rule_opts_load(&cfg->rules, &st->rs) < 0) {
		free(st);
		return -EINVAL;
	}
	ac_rule_opts_set_name(&cfg->rules, st->set_name, sizeof(st->set_name));
	if (rules && ac_rule_opts_build_verifier(&cfg->rules, &st->rs, &st->vars, &st->ver) < 0) {
		ac_ruleset_free(&st->rs);
		free(st);
		return -EINVAL;
	}
	/* The AC layout: auto = the full table if it fits the L2 cache of the
	 * first P context (the scan is one dependent table load per byte),
	 * else the compact one; keywords mode's auto keeps the full table
	 * (the paper's benchmark, unchanged). */
	size_t cache = info->l2_bytes ? info->l2_bytes : info->llc_bytes;
	if (cfg->ac_layout == 2)
		st->ac_budget = 1;
	else if (cfg->ac_layout == 0 && rules)
		st->ac_budget = cache ? cache : 1024 * 1024;
	double t0 = now_s();
	if (rules)
		st->engine = st->ver.n_fp == 0
			? NULL
			: ac_engine_build_opt(st->kind, st->ver.fp, st->ver.n_fp, true,
				  st->ac_budget, err, sizeof(err));
	else
		st->engine = ac_engine_build_opt(st->kind, st->rs.keywords, st->rs.n_keywords,
			false, st->ac_budget, err, sizeof(err));
	st->build_s = now_s() - t0;
	if (st->engine == NULL && !(rules && st->ver.n_fp == 0)) {
		fprintf(stderr, "ahocorasick: %s\n", err);
		state_free(st);
		return -EINVAL;
	}
	st->n_instances = info->n_instances;
	if (rules) {
		struct ids_engine_cfg c = { .ver = &st->ver,
			.engine = st->engine,
			.flows = !cfg->rules.stateless,
			.reassembly = !cfg->rules.stateless && !cfg->rules.no_reassembly };
		if (ids_opts_apply(&cfg->ids, &st->vars, (double)rte_get_tsc_hz(), &st->tp, &c, err,
			    sizeof(err)) < 0 ||
			(st->ids = ids_engine_new(&c, err, sizeof(err))) == NULL ||
			(c.flows && ids_flows_create(st, cfg, err, sizeof(err)) < 0)) {
			fprintf(stderr, "ahocorasick: %s\n", err);
			state_free(st);
			return -EINVAL;
		}
		const struct ids_slot_pool *pool = ids_engine_pool(st->ids);
		if (pool != NULL)
			fprintf(stderr,
				"ahocorasick: reassembly: %u stream slots of %u bytes' window "
				"(%zu bytes, the memory cap), %u target policies (default %s)\n",
				ids_slot_pool_slots(pool), ids_slot_pool_cfg(pool)->window,
				ids_slot_pool_bytes(pool), st->tp.n, ids_policy_name[st->tp.dflt]);
	}
	if (rules && cfg->alert_log != NULL) {
		if (ac_alert_log_start(&st->log, cfg->alert_log, &st->ver) < 0) {
			state_free(st);
			return -EINVAL;
		}
		st->log_on = true;
	}
	if (st->engine == NULL)
		fprintf(stderr,
			"ahocorasick: no fast pattern: every rule verified on every packet\n");
	else if (st->kind == AC_ENGINE_AC)
		fprintf(stderr,
			"ahocorasick: engine ac: %u states x %u input classes, %s layout "
			"(full table %zu bytes, budget %zu%s), %zu bytes, built in %.3f s\n",
			ac_engine_states(st->engine), ac_engine_classes(st->engine),
			ac_engine_layout(st->engine), ac_engine_full_bytes(st->engine),
			st->ac_budget, st->ac_budget ? "" : ": none", ac_engine_size(st->engine),
			st->build_s);
	else
		fprintf(stderr, "ahocorasick: engine hs: database %zu bytes, built in %.3f s\n",
			ac_engine_size(st->engine), st->build_s);
	*app_state = st;
	return 0;
}

static void on_ids_alert(void *ctx, const struct ids_alert *a);
static void end_flows(struct ac_state *st);

static int
ac_task_init(void *app_state, unsigned instance, void **task_state)
{
	struct ac_state *st = app_state;
	struct ac_task *t;
	char err[256];

	t = rte_zmalloc_socket("ac_task", sizeof(*t), RTE_CACHE_LINE_SIZE, (int)st->socket_id);
	if (t == NULL)
		return -ENOMEM;
	t->rules_mode = st->cfg->mode == MODE_RULES;
	t->linear = rte_malloc_socket(
		"ac_linear", LINEAR_BYTES, RTE_CACHE_LINE_SIZE, (int)st->socket_id);
	strcpy(err, "out of memory");
	if (t->rules_mode) {
		t->flows = st->flows;
		t->ids = ids_task_new(st->ids, st->flows, &rt_flow_ops, &t->fc, on_ids_alert, t,
			err, sizeof(err));
		if (st->log_on)
			t->alert_ring = ac_alert_log_ring(&st->log, instance, (int)st->socket_id);
		/* Instances start their sweeps apart so they rarely meet on a lock. */
		t->sweep_cursor = st->n_instances
			? (uint32_t)(((uint64_t)instance * FLOW_TABLE_BUCKETS) / st->n_instances)
			: 0;
	} else {
		t->kw_hits =
			rte_zmalloc_socket("ac_kw_hits", st->rs.n_keywords * sizeof(uint64_t) + 8,
				RTE_CACHE_LINE_SIZE, (int)st->socket_id);
		/* One scratch per P task: Hyperscan scratch must not be shared. */
		t->scratch = ac_scratch_new(st->engine, err, sizeof(err));
	}
	if (t->linear == NULL || (t->rules_mode && t->ids == NULL) ||
		(!t->rules_mode && (t->kw_hits == NULL || t->scratch == NULL)) ||
		(st->log_on && t->alert_ring == NULL) || instance >= AC_ALERT_MAX_TASKS) {
		fprintf(stderr, "ahocorasick: instance %u: %s\n", instance, err);
		ids_task_free(t->ids);
		ac_scratch_free(t->scratch);
		rte_free(t->kw_hits);
		rte_free(t->linear);
		rte_free(t);
		return -ENOMEM;
	}
	if (t->rules_mode) {
		st->tasks[instance] = t;
		if (instance + 1 > st->n_tasks)
			st->n_tasks = instance + 1;
	}
	t->engine = st->engine;
	t->verdict = st->cfg->verdict;
	t->mark_dscp = st->cfg->mark_dscp ? (uint8_t)(st->cfg->mark_dscp - 1) : 1;
	t->scan_all_frames = st->cfg->scan_all_frames;
	t->measure_cpu = st->cfg->measure_cpu;
	t->instance = instance;
	*task_state = t;
	return 0;
}

static void
count_hit(void *ctx, uint32_t kw, uint32_t end)
{
	(void)end;
	((uint64_t *)ctx)[kw]++;
}

static unsigned
hist_bucket(uint64_t m)
{
	unsigned b = m == 0 ? 0 : 64u - (unsigned)__builtin_clzll(m);
	return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

/* The packet's DSCP: IPv4 (header checksum updated) or IPv6 (traffic
 * class), ECN bits kept. */
static void
mark(struct rte_mbuf *m, uint32_t l3_off, uint8_t dscp)
{
	if (rte_pktmbuf_data_len(m) < l3_off + sizeof(struct rte_ipv4_hdr))
		return; /* header not in the first segment: never with IPv4 found */
	uint8_t *v6 = rte_pktmbuf_mtod_offset(m, uint8_t *, l3_off);
	if (v6[0] >> 4 == 6) {
		uint8_t tc = (uint8_t)(dscp << 2 | ((v6[1] >> 4) & 3));
		v6[0] = (uint8_t)(0x60 | tc >> 4);
		v6[1] = (uint8_t)((tc & 15) << 4 | (v6[1] & 15));
		return;
	}
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, l3_off);
	if (rte_pktmbuf_data_len(m) < l3_off + rte_ipv4_hdr_len(ip))
		return;
	ip->type_of_service = (uint8_t)(dscp << 2 | (ip->type_of_service & 3));
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/* Scan the ns collected payloads as one burst, then count and judge. */
static void
scan_pending(struct ac_task *t, struct rte_mbuf **pkts, const uint8_t *const *data,
	const uint32_t *len, const uint32_t *l3_off, uint64_t *hits, const uint16_t *idx,
	unsigned ns, uint8_t *verdict)
{
	t->pending_linear = false;
	if (ns == 0)
		return;
	ac_engine_scan_burst(t->engine, t->scratch, data, len, ns, count_hit, t->kw_hits, hits);
	for (unsigned j = 0; j < ns; j++) {
		t->bytes_scanned += len[j];
		t->hist[hist_bucket(hits[j])]++;
		if (hits[j] == 0)
			continue;
		t->matches += hits[j];
		t->packets_matched++;
		if (t->verdict == VERDICT_DROP) {
			verdict[idx[j]] = 1; /* keyword_match */
		} else if (t->verdict == VERDICT_MARK && l3_off[j] != UINT32_MAX) {
			mark(pkts[idx[j]], l3_off[j], t->mark_dscp);
			t->marked++;
		}
	}
}

/* Copy a segmented packet into buf (LINEAR_BYTES), following the segments
 * themselves rather than trusting pkt_len: a PMD that sets pkt_len beyond
 * its chain must not make the scan read past it.  Returns bytes copied. */
static uint32_t
linearise(const struct rte_mbuf *m, uint8_t *buf, uint64_t *short_chains)
{
	uint32_t n = 0;
	uint32_t want = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)LINEAR_BYTES);

	for (const struct rte_mbuf *s = m; s != NULL && n < want; s = s->next) {
		uint32_t l = RTE_MIN((uint32_t)rte_pktmbuf_data_len(s), want - n);
		memcpy(buf + n, rte_pktmbuf_mtod(s, const uint8_t *), l);
		n += l;
	}
	*short_chains += n < want;
	return n;
}

/* The engine's alert: onto the task's ring for the log (a full ring drops
 * the record and counts it, never blocks). */
static void
on_ids_alert(void *ctx, const struct ids_alert *a)
{
	struct ac_task *t = ctx;
	if (t->alert_ring == NULL)
		return;
	struct ac_alert_rec r = { .a = *a, .tsc = rte_rdtsc(), .action = t->cur_action };
	if (rte_ring_sp_enqueue_elem(t->alert_ring, &r, sizeof(r)) == 0)
		t->alerts_logged_enq++;
	else
		t->alerts_log_dropped++;
}

/* Rules mode: each frame through the engine, then the verdict. */
static void
process_rules(struct ac_task *t, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	uint64_t now = rte_rdtsc();

	if (t->flows != NULL)
		flow_table_sweep(t->flows, &t->sweep_cursor, SWEEP_PER_BURST, now, &t->fc);
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		verdict[i] = PP_VERDICT_FORWARD;
		const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t flen = rte_pktmbuf_data_len(m);
		if (unlikely(m->next != NULL)) {
			flen = linearise(m, t->linear, &t->short_chains);
			frame = t->linear;
			t->copied++;
		}
		uint32_t l3;
		t->cur_action = t->verdict == VERDICT_DROP;
		uint32_t a = ids_process(t->ids, frame, flen, now, &l3);
		t->cur_action = 0;
		if (a == 0)
			continue;
		if (t->verdict == VERDICT_DROP) {
			verdict[i] = 2; /* rule_alert */
		} else if (t->verdict == VERDICT_MARK && l3 != UINT32_MAX && frame != t->linear) {
			mark(m, l3, t->mark_dscp);
			t->marked++;
		}
	}
}

static void process_keywords(
	struct ac_task *t, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict);

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
ac_process(void *task_state, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	struct ac_task *t = task_state;
	/* --measure-cpu: the thread's CPU clock around the burst (a system
	 * call each side; off by default).  Unlike the runtime's busy cycles it
	 * does not count the time the context was preempted. */
	uint64_t c0 = t->measure_cpu ? thread_cpu_ns() : 0;
	if (t->rules_mode)
		process_rules(t, pkts, n, verdict);
	else
		process_keywords(t, pkts, n, verdict);
	if (t->measure_cpu)
		t->cpu_ns += thread_cpu_ns() - c0;
}

static void
process_keywords(struct ac_task *t, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	const uint8_t *data[PP_BURST];
	uint32_t len[PP_BURST], l3_off[PP_BURST];
	uint64_t hits[PP_BURST];
	uint16_t idx[PP_BURST]; /* burst position of each buffer to scan */
	unsigned ns = 0;

	/* 1. Locate each packet's payload. */
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		verdict[i] = PP_VERDICT_FORWARD;
		const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t flen = rte_pktmbuf_data_len(m);
		if (unlikely(m->next != NULL)) {
			/* One linear buffer per task: at most one segmented
			 * packet per scan pass, so flush the pending ones first. */
			if (t->pending_linear) {
				scan_pending(t, pkts, data, len, l3_off, hits, idx, ns, verdict);
				ns = 0;
			}
			flen = linearise(m, t->linear, &t->short_chains);
			frame = t->linear;
			t->copied++;
			t->pending_linear = true;
		}
		struct ac_payload pl;
		enum ac_payload_status s = ac_find_payload(frame, flen, &pl);
		if (s != AC_PL_OK) {
			if (!t->scan_all_frames) {
				t->unscanned[s]++;
				continue;
			}
			pl.off = 0;
			pl.len = flen;
			pl.l3_off = UINT32_MAX; /* nothing to mark */
			t->whole_frames++;
		} else {
			t->scanned++;
		}
		data[ns] = frame + pl.off;
		len[ns] = pl.len;
		l3_off[ns] = pl.l3_off;
		idx[ns++] = i;
	}
	/* 2. Scan them together, 3. verdicts. */
	scan_pending(t, pkts, data, len, l3_off, hits, idx, ns, verdict);
}

/* Packets not scanned, by why (the payload status names). */
static json_t *
unscanned_json(const struct ac_task *sum)
{
	json_t *o = json_object();
	for (int r = 1; r < AC_PL_N_STATUS; r++)
		json_object_set_new(
			o, ac_payload_status_name[r], json_integer((json_int_t)sum->unscanned[r]));
	return o;
}

/* A per-packet count histogram: buckets "0", "1", "2-3", "4-7", ...; the
 * last one is open-ended. */
static json_t *
histogram_json(const uint64_t *hist)
{
	json_t *o = json_object();
	for (int b = 0; b < HIST_BUCKETS; b++) {
		char label[48];
		uint64_t lo = b == 0 ? 0 : 1ull << (b - 1), hi = b == 0 ? 0 : (1ull << b) - 1;
		if (b == HIST_BUCKETS - 1)
			snprintf(label, sizeof(label), "%" PRIu64 "+", lo);
		else if (lo == hi)
			snprintf(label, sizeof(label), "%" PRIu64, lo);
		else
			snprintf(label, sizeof(label), "%" PRIu64 "-%" PRIu64, lo, hi);
		json_object_set_new(o, label, json_integer((json_int_t)hist[b]));
	}
	return o;
}

/* --measure-cpu: the task's CPU time in its process step, summed in *total. */
static void
cpu_json(const struct ac_task *t, json_t *tj, uint64_t *total)
{
	if (!t->measure_cpu)
		return;
	json_object_set_new(tj, "process_cpu_ns", json_integer((json_int_t)t->cpu_ns));
	*total += t->cpu_ns;
}

/* A count of one keyword or rule, for the "top" lists: most first, then
 * by id. */
struct id_count {
	uint32_t id;
	uint64_t n;
};

static int
count_cmp(const void *a, const void *b)
{
	const struct id_count *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void
engine_stats(const struct ac_state *st, json_t *out)
{
	json_object_set_new(out, "engine", json_string(ac_engine_kind_name(st->kind)));
	if (st->engine == NULL) {
		json_object_set_new(out, "engine_bytes", json_integer(0));
		return;
	}
	json_object_set_new(
		out, "engine_bytes", json_integer((json_int_t)ac_engine_size(st->engine)));
	json_object_set_new(out, "engine_build_s", json_real(st->build_s));
	if (st->kind == AC_ENGINE_AC) {
		json_object_set_new(out, "ac_states", json_integer(ac_engine_states(st->engine)));
		json_object_set_new(out, "ac_classes", json_integer(ac_engine_classes(st->engine)));
		json_object_set_new(
			out, "ac_entry_bytes", json_integer(ac_engine_entry_bytes(st->engine)));
		json_object_set_new(out, "ac_layout", json_string(ac_engine_layout(st->engine)));
		json_object_set_new(out, "ac_full_table_bytes",
			json_integer((json_int_t)ac_engine_full_bytes(st->engine)));
		json_object_set_new(
			out, "ac_layout_budget_bytes", json_integer((json_int_t)st->ac_budget));
	}
}

/* What both modes' statistics open with: kind, mode, the TSC rate (lets a
 * reader turn the runtime's per-task cycles into seconds), the engine and
 * the rule file. */
static void
common_stats(const struct ac_state *st, json_t *out, const char *mode, uint64_t scan_errors,
	int last_error)
{
	json_object_set_new(out, "kind", json_string("measured"));
	json_object_set_new(out, "mode", json_string(mode));
	json_object_set_new(out, "tsc_hz", json_integer((json_int_t)rte_get_tsc_hz()));
	engine_stats(st, out);
	json_object_set_new(out, "engine_scan_errors", json_integer((json_int_t)scan_errors));
	if (scan_errors)
		json_object_set_new(out, "engine_last_error", json_integer(last_error));
	json_object_set_new(out, "rules_file", json_string(st->rs.path));
	json_object_set_new(out, "rule_set", json_string(st->set_name));
}

/* After the run (every worker stopped): the flows still in the table end
 * (Snort flushes its streams at shutdown), judged on the first task. */
struct end_walk {
	struct ac_state *st;
	struct ac_task *t;
	uint64_t now;
};

static void
end_one(const struct flow_record *r, void *arg)
{
	struct end_walk *w = arg;
	ids_flow_ended(w->t->ids, ext_of_record(w->st->flows, r), &r->key, w->now);
}

static void
end_flows(struct ac_state *st)
{
	unsigned lc;
	if (st->ended || st->flows == NULL || st->n_tasks == 0 || st->tasks[0] == NULL)
		return;
	RTE_LCORE_FOREACH_WORKER(lc)
	if (rte_eal_get_lcore_state(lc) == RUNNING)
		return; /* a snapshot while the run goes on */
	struct end_walk w = { st, st->tasks[0], rte_rdtsc() };
	flow_table_foreach(st->flows, end_one, &w);
	st->ended = true;
}

static json_t *
events_json(const uint64_t *ev)
{
	json_t *o = json_object();
	for (int k = 0; k < IDS_EV_N; k++)
		json_object_set_new(o, ids_event_info[k].name, json_integer((json_int_t)ev[k]));
	return o;
}

static void
stats_rules(struct ac_state *st, void *const *task_states, unsigned n_tasks, json_t *out)
{
	const struct ac_verifier *v = &st->ver;
	struct ids_task_stats sum = { 0 };
	struct ids_defrag_stats ds = { 0 };
	struct flow_counters fc = { 0 };
	struct ac_task tsum = { 0 };
	uint64_t scan_errors = 0, pcre_errors = 0, noalert = 0, budget = 0, cpu_ns = 0;
	int last_error = 0;
	struct id_count *per = calloc(v->n_rules + 1, sizeof(*per));
	json_t *per_task = json_array();

	end_flows(st);
	if (st->log_on)
		ac_alert_log_drain(&st->log, 2000);
	for (unsigned i = 0; i < n_tasks; i++) {
		const struct ac_task *t = task_states[i];
		if (t == NULL)
			continue;
		const struct ids_task_stats *s = ids_task_stats(t->ids);
		uint64_t *a = (uint64_t *)&sum, *b = (uint64_t *)s;
		/* every counter but the per-rule array: plain uint64_t fields */
		for (size_t k = 0; k < offsetof(struct ids_task_stats, rule_alerts) / 8; k++)
			a[k] += b[k];
		a = (uint64_t *)&sum.stream;
		b = (uint64_t *)&s->stream;
		for (size_t k = 0; k < sizeof(sum.stream) / 8; k++)
			a[k] += b[k];
		a = (uint64_t *)&sum.http;
		b = (uint64_t *)&s->http;
		for (size_t k = 0; k < sizeof(sum.http) / 8; k++)
			a[k] += b[k];
		const struct ids_defrag_stats *d = ids_task_defrag_stats(t->ids);
		if (d != NULL) {
			a = (uint64_t *)&ds;
			b = (uint64_t *)d;
			for (size_t k = 0; k < sizeof(ds) / 8; k++)
				a[k] = k * 8 == offsetof(struct ids_defrag_stats, bytes_held_max)
					? RTE_MAX(a[k], b[k])
					: a[k] + b[k];
		}
		tsum.marked += t->marked;
		tsum.copied += t->copied;
		tsum.short_chains += t->short_chains;
		tsum.alerts_logged_enq += t->alerts_logged_enq;
		tsum.alerts_log_dropped += t->alerts_log_dropped;
		fc.lookups += t->fc.lookups;
		fc.hits += t->fc.hits;
		fc.created += t->fc.created;
		fc.expired += t->fc.expired;
		fc.evicted += t->fc.evicted;
		fc.table_full += t->fc.table_full;
		for (int e = 0; e < 6; e++)
			fc.ended[e] += t->fc.ended[e];
		const struct ac_vscratch *vs = ids_task_vscratch(t->ids);
		noalert += vs->noalert_matches;
		budget += vs->budget_exceeded;
		pcre_errors += vs->pcre_errors;
		if (ids_task_scratch(t->ids) != NULL)
			scan_errors += ac_scratch_errors(ids_task_scratch(t->ids), &last_error);
		for (uint32_t r = 0; per != NULL && r < v->n_rules; r++)
			per[r].n += s->rule_alerts[r];
		json_t *tj = json_pack("{s:I, s:I, s:I, s:I}", "instance", (json_int_t)t->instance,
			"packets_scanned", (json_int_t)s->packets_judged, "bytes_scanned",
			(json_int_t)s->bytes_judged, "alerts", (json_int_t)s->alerts);
		cpu_json(t, tj, &cpu_ns);
		json_array_append_new(per_task, tj);
	}
	/* Counted per sid (a sid given to several rules adds them up). */
	json_t *by_sid = json_object();
	for (uint32_t r = 0; per != NULL && r < v->n_rules; r++) {
		per[r].id = v->rules[r].rule->sid;
		if (per[r].n == 0)
			continue;
		char key[16];
		snprintf(key, sizeof(key), "%u", per[r].id);
		json_t *old = json_object_get(by_sid, key);
		json_object_set_new(by_sid, key,
			json_integer((json_int_t)per[r].n + (old ? json_integer_value(old) : 0)));
	}
	json_t *top = json_array();
	unsigned want = st->cfg->top ? st->cfg->top - 1 : DEFAULT_TOP;
	if (per != NULL) {
		qsort(per, v->n_rules, sizeof(*per), count_cmp);
		for (uint32_t j = 0; j < v->n_rules && j < want && per[j].n > 0; j++)
			json_array_append_new(top,
				json_pack("{s:I, s:I}", "sid", (json_int_t)per[j].id, "alerts",
					(json_int_t)per[j].n));
	}
	free(per);
	json_t *unscanned = json_object();
	for (int r = 1; r < IDS_PKT_N_STATUS; r++)
		json_object_set_new(
			unscanned, ids_status_name[r], json_integer((json_int_t)sum.unscanned[r]));
	/* not judged alone: a fragment (its datagram is, once whole), a TTL
	 * insertion (never reaches the target) */
	json_object_set_new(
		unscanned, "fragment_held", json_integer((json_int_t)sum.fragments_held));
	json_object_set_new(
		unscanned, "ttl_insertion", json_integer((json_int_t)sum.ttl_insertions));
	json_t *hist = histogram_json(sum.hist);
	common_stats(st, out, "rules", scan_errors, last_error);
	json_object_set_new(out, "vars_file",
		st->cfg->rules.vars_path ? json_string(st->cfg->rules.vars_path) : json_null());
	json_object_set_new(out, "rules_seen", json_integer(st->rs.rules_seen));
	json_object_set_new(
		out, "rules_selected", json_integer(st->rs.rules_seen - st->rs.rules_filtered));
	json_object_set_new(out, "rules_malformed", json_integer(st->rs.rules_unusable));
	json_object_set_new(out, "rules_enabled", json_integer(v->n_rules));
	json_object_set_new(out, "rules_partial", json_integer(v->n_partial));
	json_object_set_new(out, "rules_disabled", json_integer(v->n_disabled));
	json_t *left = json_object();
	for (unsigned i = 0; i < v->n_left_out; i++)
		json_object_set_new(left, v->left_out[i].name, json_integer(v->left_out[i].rules));
	json_object_set_new(out, "rules_partial_by_option", left);
	json_object_set_new(out, "fast_patterns", json_integer(v->n_fp));
	json_object_set_new(out, "rules_without_fast_pattern", json_integer(v->n_always));
	json_object_set_new(out, "pcres", json_integer(v->n_pcre));
	json_object_set_new(out, "pcre_errors", json_integer((json_int_t)pcre_errors));
	json_object_set_new(out, "on_alert", json_string(on_alert_names[st->cfg->verdict]));
	json_object_set_new(out, "packets_scanned", json_integer((json_int_t)sum.packets_judged));
	json_object_set_new(out, "packets_unscanned", unscanned);
	json_object_set_new(out, "tunnels", ids_tunnels_json(&sum));
	json_object_set_new(out, "packets_linearised", json_integer((json_int_t)tsum.copied));
	json_object_set_new(out, "packets_segments_short_of_pkt_len",
		json_integer((json_int_t)tsum.short_chains));
	json_object_set_new(out, "bytes_scanned", json_integer((json_int_t)sum.bytes_judged));
	json_object_set_new(out, "fast_pattern_hits", json_integer((json_int_t)sum.candidates));
	json_object_set_new(out, "alerts", json_integer((json_int_t)sum.alerts));
	json_object_set_new(out, "packets_alerted", json_integer((json_int_t)sum.packets_alerted));
	json_object_set_new(out, "packets_marked", json_integer((json_int_t)tsum.marked));
	json_object_set_new(out, "alerts_by_sid", by_sid);
	json_object_set_new(out, "top_sids", top);
	json_object_set_new(out, "alerts_per_packet_histogram", hist);
	json_object_set_new(out, "alert_log", st->log_on ? json_string(st->log.path) : json_null());
	json_object_set_new(
		out, "alerts_log_enqueued", json_integer((json_int_t)tsum.alerts_logged_enq));
	json_object_set_new(
		out, "alerts_log_dropped", json_integer((json_int_t)tsum.alerts_log_dropped));
	json_object_set_new(out, "alerts_logged",
		json_integer((json_int_t)__atomic_load_n(&st->log.written, __ATOMIC_RELAXED)));
	json_object_set_new(out, "stateless", json_boolean(st->cfg->rules.stateless));
	if (st->cfg->measure_cpu)
		json_object_set_new(out, "process_cpu_ns", json_integer((json_int_t)cpu_ns));
	json_object_set_new(out, "flowbits_states", json_integer(v->n_fb_names));
	json_object_set_new(out, "rules_with_flowbits", json_integer(v->n_fb_rules));
	json_object_set_new(out, "noalert_matches", json_integer((json_int_t)noalert));
	json_object_set_new(
		out, "alerts_partial_on_packet", json_integer((json_int_t)sum.alerts_partial_here));
	json_object_set_new(out, "verify_budget_exceeded", json_integer((json_int_t)budget));
	if (st->flows != NULL) {
		json_t *ended = json_pack("{s:I, s:I, s:I}", "idle_timeout",
			(json_int_t)fc.ended[FLOW_END_IDLE], "tcp_end",
			(json_int_t)fc.ended[FLOW_END_EOF], "evicted",
			(json_int_t)fc.ended[FLOW_END_LACK]);
		json_object_set_new(out, "flows",
			json_pack("{s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:I}", "records",
				(json_int_t)st->flows->capacity, "idle_timeout_s",
				st->flow_timeout_s, "lookups", (json_int_t)fc.lookups, "created",
				(json_int_t)fc.created, "hits", (json_int_t)fc.hits, "ended_total",
				(json_int_t)fc.expired, "evicted", (json_int_t)fc.evicted, "ended",
				ended, "untracked", (json_int_t)sum.untracked,
				"flowbits_written_back", (json_int_t)sum.bits_written));
		json_object_set_new(out, "http",
			json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "requests",
				(json_int_t)sum.http_requests, "responses",
				(json_int_t)sum.http_responses, "extra_buffer_scans",
				(json_int_t)sum.extra_scans, "dechunked",
				(json_int_t)sum.http.dechunked, "decompressed",
				(json_int_t)sum.http.decompressed, "decode_errors",
				(json_int_t)sum.http.decode_errors, "decompression_bound_hit",
				(json_int_t)sum.http.bound_hit));
	}
	const struct ids_slot_pool *pool = ids_engine_pool(st->ids);
	json_object_set_new(out, "reassembly", json_boolean(pool != NULL));
	if (pool != NULL) {
		json_object_set_new(out, "stream",
			json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
				  "s:I, s:I, s:I, s:I, s:I, s:I}",
				"memcap_bytes", (json_int_t)ids_slot_pool_bytes(pool), "slots",
				(json_int_t)ids_slot_pool_slots(pool), "slots_in_use",
				(json_int_t)ids_slot_pool_in_use(pool), "window",
				(json_int_t)ids_slot_pool_cfg(pool)->window, "segments",
				(json_int_t)sum.stream.segments, "bytes_in_order",
				(json_int_t)sum.stream.bytes_in_order, "retransmitted",
				(json_int_t)sum.stream.retransmitted, "overlaps",
				(json_int_t)sum.stream.overlaps, "beyond_window",
				(json_int_t)sum.stream.beyond_window, "no_slot",
				(json_int_t)sum.stream.no_slot, "shed", (json_int_t)sum.stream.shed,
				"lost_bytes", (json_int_t)sum.stream.lost_bytes, "pdus",
				(json_int_t)sum.pdus, "pdu_bytes", (json_int_t)sum.pdu_bytes,
				"pdus_rescanned", (json_int_t)sum.pdus_rescanned, "straddles",
				(json_int_t)sum.straddles, "dedup_skipped",
				(json_int_t)sum.dedup_skipped, "alerts_stream",
				(json_int_t)sum.alerts_stream));
		json_object_set_new(out, "defrag",
			json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "fragments",
				(json_int_t)ds.fragments, "reassembled", (json_int_t)ds.reassembled,
				"fragments_held", (json_int_t)sum.fragments_held, "timeouts",
				(json_int_t)ds.timeouts, "evicted_full",
				(json_int_t)ds.evicted_full, "evicted_memcap",
				(json_int_t)ds.evicted_memcap, "dropped", (json_int_t)ds.dropped,
				"datagrams_bad", (json_int_t)ds.datagrams_bad, "bytes_held_max",
				(json_int_t)ds.bytes_held_max));
		json_object_set_new(
			out, "ttl_insertions", json_integer((json_int_t)sum.ttl_insertions));
		json_object_set_new(out, "events", events_json(sum.events));
		json_object_set_new(
			out, "alerts_events", json_integer((json_int_t)sum.alerts_events));
		json_object_set_new(out, "alerts_at_flow_end",
			json_integer((json_int_t)sum.alerts_at_flow_end));
		json_object_set_new(
			out, "target_policy_default", json_string(ids_policy_name[st->tp.dflt]));
	}
	json_object_set_new(out, "tasks", per_task);
}

static void
ac_stats(void *app_state, void *const *task_states, unsigned n_tasks, json_t *out)
{
	struct ac_state *st = app_state;
	if (st->cfg->mode == MODE_RULES) {
		stats_rules(st, task_states, n_tasks, out);
		return;
	}
	struct ac_task sum = { 0 };
	uint64_t scan_errors = 0, cpu_ns = 0;
	int last_error = 0;
	uint32_t n_kw = st->rs.n_keywords;
	struct id_count *top = calloc(n_kw, sizeof(*top));
	json_t *per_task = json_array();

	for (uint32_t k = 0; top != NULL && k < n_kw; k++)
		top[k].id = k;
	for (unsigned i = 0; i < n_tasks; i++) {
		const struct ac_task *t = task_states[i];
		if (t == NULL)
			continue;
		sum.scanned += t->scanned;
		sum.whole_frames += t->whole_frames;
		for (int r = 0; r < AC_PL_N_STATUS; r++)
			sum.unscanned[r] += t->unscanned[r];
		sum.bytes_scanned += t->bytes_scanned;
		sum.matches += t->matches;
		sum.packets_matched += t->packets_matched;
		sum.marked += t->marked;
		sum.copied += t->copied;
		scan_errors += ac_scratch_errors(t->scratch, &last_error);
		sum.short_chains += t->short_chains;
		for (int b = 0; b < HIST_BUCKETS; b++)
			sum.hist[b] += t->hist[b];
		for (uint32_t k = 0; top != NULL && k < n_kw; k++)
			top[k].n += t->kw_hits[k];
		json_t *tj = json_pack("{s:I, s:I, s:I, s:I}", "instance", (json_int_t)t->instance,
			"packets_scanned", (json_int_t)(t->scanned + t->whole_frames),
			"bytes_scanned", (json_int_t)t->bytes_scanned, "matches",
			(json_int_t)t->matches);
		cpu_json(t, tj, &cpu_ns);
		json_array_append_new(per_task, tj);
	}
	json_t *unscanned = unscanned_json(&sum);
	json_t *hist = histogram_json(sum.hist);
	uint32_t hit_kw = 0;
	for (uint32_t k = 0; top != NULL && k < n_kw; k++)
		hit_kw += top[k].n > 0;
	json_t *topj = json_array();
	unsigned want = st->cfg->top ? st->cfg->top - 1 : DEFAULT_TOP;
	if (top != NULL) {
		qsort(top, n_kw, sizeof(*top), count_cmp);
		char buf[256];
		for (uint32_t j = 0; j < n_kw && j < want && top[j].n > 0; j++) {
			const struct ac_keyword *kw = &st->rs.keywords[top[j].id];
			json_t *sids = json_array();
			for (uint32_t r = 0; r < kw->n_rules; r++)
				json_array_append_new(
					sids, json_integer(st->rs.rules[kw->rules[r]].sid));
			json_array_append_new(topj,
				json_pack("{s:I, s:s, s:b, s:I, s:o}", "keyword",
					(json_int_t)top[j].id, "content",
					ac_format_bytes(kw->bytes, kw->len, buf, sizeof(buf)),
					"nocase", kw->nocase, "hits", (json_int_t)top[j].n, "sids",
					sids));
		}
	}
	free(top);

	common_stats(st, out, "keywords", scan_errors, last_error);
	json_object_set_new(out, "rules_seen", json_integer(st->rs.rules_seen));
	json_object_set_new(
		out, "rules_selected", json_integer(st->rs.rules_seen - st->rs.rules_filtered));
	json_object_set_new(out, "rules_used", json_integer(st->rs.n_rules));
	json_object_set_new(out, "rules_unusable", json_integer(st->rs.rules_unusable));
	json_object_set_new(out, "negated_contents_ignored", json_integer(st->rs.contents_negated));
	json_object_set_new(out, "keywords", json_integer(n_kw));
	json_object_set_new(out, "verdict", json_string(verdict_names[st->cfg->verdict]));
	json_object_set_new(out, "packets_scanned", json_integer((json_int_t)sum.scanned));
	json_object_set_new(
		out, "packets_scanned_whole_frame", json_integer((json_int_t)sum.whole_frames));
	json_object_set_new(out, "packets_unscanned", unscanned);
	json_object_set_new(out, "packets_linearised", json_integer((json_int_t)sum.copied));
	json_object_set_new(out, "packets_segments_short_of_pkt_len",
		json_integer((json_int_t)sum.short_chains));
	json_object_set_new(out, "bytes_scanned", json_integer((json_int_t)sum.bytes_scanned));
	json_object_set_new(out, "matches", json_integer((json_int_t)sum.matches));
	json_object_set_new(out, "packets_matched", json_integer((json_int_t)sum.packets_matched));
	json_object_set_new(out, "packets_marked", json_integer((json_int_t)sum.marked));
	json_object_set_new(out, "keywords_hit", json_integer(hit_kw));
	json_object_set_new(out, "matches_per_packet_histogram", hist);
	json_object_set_new(out, "top_keywords", topj);
	if (st->cfg->measure_cpu)
		json_object_set_new(out, "process_cpu_ns", json_integer((json_int_t)cpu_ns));
	json_object_set_new(out, "tasks", per_task);
}

static int
ac_teardown(void *app_state, void **task_states, unsigned n_tasks)
{
	struct ac_state *st = app_state;
	int rc = 0;

	if (st != NULL)
		end_flows(st); /* when no statistics were asked for */
	if (st != NULL && st->log_on)
		rc = ac_alert_log_stop(&st->log);
	for (unsigned i = 0; i < n_tasks; i++) {
		struct ac_task *t = task_states[i];
		if (t == NULL)
			continue;
		ids_task_free(t->ids);
		ac_scratch_free(t->scratch);
		rte_free(t->kw_hits);
		rte_free(t->linear);
		rte_free(t);
		task_states[i] = NULL;
	}
	if (st == NULL)
		return 0;
	state_free(st);
	return rc;
}

/* Options that go together, checked before EAL starts so that a wrong
 * pair is a usage error (exit status 2, README.md "Exit status"); set-up
 * says the same for every run of a --serve process.  No DPDK memory of the
 * app's own beyond what the runtime sizes. */
static int64_t
ac_options_check(const void *cfgp)
{
	const struct ac_cfg *cfg = cfgp;
	bool rules = cfg->mode == MODE_RULES;
	char dflt[4096];

	if (cfg->rules.rules_path == NULL && ac_default_rules(dflt, sizeof(dflt)) == NULL)
		return -1; /* said why: give --rules or set PIPEPLACE_RULES */
	if (rules && cfg->scan_all_frames) {
		fprintf(stderr,
			"ahocorasick: --scan-all-frames is for --mode keywords only (rules "
			"need the IP TCP/UDP header)\n");
		return -1;
	}
	if (!rules &&
		(cfg->alert_log != NULL || cfg->rules.vars_path != NULL ||
			cfg->rules.list_unsupported || cfg->rules.stateless ||
			cfg->rules.no_reassembly || cfg->max_flows || cfg->flow_timeout_set ||
			cfg->ids.any)) {
		fprintf(stderr,
			"ahocorasick: --alert-log, --vars, --list-unsupported, --stateless, "
			"--no-reassembly, --max-flows, --flow-timeout and the reassembly options "
			"are for --mode rules only\n");
		return -1;
	}
	if (cfg->rules.stateless && (cfg->max_flows || cfg->flow_timeout_set)) {
		fprintf(stderr,
			"ahocorasick: --max-flows and --flow-timeout need flows; "
			"--stateless has none\n");
		return -1;
	}
	if ((cfg->rules.stateless || cfg->rules.no_reassembly) && cfg->ids.any) {
		fprintf(stderr,
			"ahocorasick: the reassembly options (--target-policy, --stream-*, "
			"--frag-*, --http-*, --ttl-limit, --decoder-alerts) need reassembly; "
			"%s has none\n",
			cfg->rules.stateless ? "--stateless" : "--no-reassembly");
		return -1;
	}
	return 0;
}

const struct pp_app ac_app = {
	.name = "ahocorasick",
	.variants = ac_variants,
	.drop_reasons = ac_drop_reasons,
	.n_drop_reasons = 2,
	.usage = ac_usage,
	.cfg_size = sizeof(struct ac_cfg),
	.parse_opt = ac_parse_opt,
	.setup = ac_setup,
	.task_init = ac_task_init,
	.process = ac_process,
	.stats = ac_stats,
	.teardown = ac_teardown,
	.dpdk_mem_mb = ac_options_check,
};
