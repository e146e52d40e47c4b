/* stateful: the P stage tracks every packet's flow in one table shared by all
 * instances (see README.md and flow_table.h).  Every packet is forwarded:
 * non-IP, malformed and untrackable (table full) packets are counted, not
 * dropped, because a monitor must not cut the traffic it watches. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#ifdef STATEFUL_HAVE_NDPI
#include "flow_dpi.h"
#endif
#include "flow_export.h"
#include "flow_hash.h"
#include "flow_key.h"
#include "flow_table.h"
#include "pp_app.h"
#include "pp_outfile.h"
#include "pp_task.h" /* pp_stop_flag: stats after the stop flush the export */

/* Buckets each P task sweeps for idle flows after a burst: a full lap of the
 * 2^16 buckets every 32768 bursts (about 1 s at 1 Mpps per instance). */
#define SWEEP_PER_BURST 2
#define DEFAULT_IDLE_TIMEOUT_S 30.0 /* nProbe's default idle timeout */
#define DEFAULT_MAX_FLOWS (1u << 16)
#define MAX_MAX_FLOWS (1u << 26)
#define DEFAULT_ACTIVE_TIMEOUT_S 120.0 /* nProbe's default lifetime (-t) */
#define DEFAULT_EXPORT_QUEUE 65536
#define DEFAULT_TEMPLATE_INTERVAL_S 60.0

struct stateful_cfg {
	const char *hash;      /* "nprobe" (default) or "keyed" */
	const char *hash_key;  /* 32 hex digits, or NULL: random */
	double idle_timeout_s; /* 0: never expire */
	bool idle_timeout_set;
	uint32_t max_flows;          /* 0: default */
	const char *dump_flows;      /* NULL: no dump */
	const char *ipfix_collector; /* HOST:PORT, or NULL */
	const char *ipfix_file;      /* or NULL */
	double active_timeout_s;     /* 0: none; only with export */
	bool active_timeout_set;
	uint64_t export_queue;      /* 0: default */
	double template_interval_s; /* 0: default */
	bool dpi;                   /* --dpi */
	uint64_t dpi_tcp_packets;   /* 0: default */
	uint64_t dpi_udp_packets;   /* 0: default */
	uint64_t dpi_flows;         /* 0: default */
};

struct stateful_state {
	struct flow_table *table;
	struct stateful_cfg cfg;
	unsigned socket_id;
	unsigned n_instances;
	bool dump;                      /* --dump-flows given, its path checked at set-up */
	struct flow_exporter *exporter; /* NULL: no export */
#ifdef STATEFUL_HAVE_NDPI
	struct flow_dpi *dpi;                               /* NULL: no --dpi */
	struct flow_dpi_worker *dpi_workers[RTE_MAX_LCORE]; /* by instance */
#endif
};

struct stateful_task {
	struct flow_table *table;
	struct flow_counters c;
	uint64_t non_ip;    /* not IPv4/IPv6: forwarded untracked */
	uint64_t malformed; /* headers cut or inconsistent: forwarded untracked */
	uint32_t sweep_cursor;
	unsigned instance;
#ifdef STATEFUL_HAVE_NDPI
	struct flow_dpi_worker *dpi; /* NULL: no --dpi */
#endif
} __rte_cache_aligned;

#ifdef STATEFUL_HAVE_NDPI
/* The table's inspector hooks: c is the task's own counters. */
static void
dpi_on_packet(
	struct flow_record *r, const struct flow_pkt *p, uint64_t now, struct flow_counters *c)
{
	struct stateful_task *t = container_of(c, struct stateful_task, c);

	flow_dpi_packet(t->dpi, r, p, now);
}

static void
dpi_on_finish(struct flow_record *r, struct flow_counters *c)
{
	struct stateful_task *t = container_of(c, struct stateful_task, c);

	flow_dpi_finish(t->dpi, r);
}
#endif

static const char stateful_usage[] =
	"  --hash nprobe|keyed  flow hash (default nprobe: the source paper's, from\n"
	"                       nProbe; floodable by anyone who chooses packets).\n"
	"                       keyed: SipHash-2-4 (libsodium) with a secret key;\n"
	"                       use it on any network you do not control\n"
	"  --hash-key HEX       keyed hash key, 32 hex digits (default: random per run)\n"
	"  --idle-timeout S     reclaim flows idle for S seconds (default 30; 0: never)\n"
	"  --max-flows N        flow records preallocated, shared by all instances\n"
	"                       (default 65536); when all are in use new flows are\n"
	"                       counted in flows_dropped_table_full, not tracked, and\n"
	"                       their packets still forwarded\n"
	"  --dump-flows FILE    write every flow record as JSON at the end of the run\n"
	"                       (to $TMPDIR/stateful-flows-* if FILE cannot take it)\n"
	"  --ipfix-collector HOST:PORT  export ended flows as IPFIX over UDP\n"
	"  --ipfix-file FILE    export ended flows as an IPFIX file (RFC 7011)\n"
	"                       With either: flows end on idle timeout, active\n"
	"                       timeout, TCP FIN both ways or RST, table pressure\n"
	"                       (the bucket's least recently seen flow is evicted)\n"
	"                       and shutdown; one uniflow record per direction\n"
	"  --active-timeout S   export a flow that lasts S seconds and count it afresh\n"
	"                       (like nProbe -t; default 120; 0: never). The idle\n"
	"                       timeout is nProbe's -d\n"
	"  --export-queue N     ended flows queued for the IPFIX writer (default 65536);\n"
	"                       when full they are counted in export_dropped_queue_full\n"
	"  --template-interval S  resend the IPFIX templates every S s (default 60)\n"
	"  --dpi                application detection with nDPI on the first packets of\n"
	"                       each flow (ndpiReader's loop); per-application flow\n"
	"                       counts in the statistics (dpi), the application in\n"
	"                       the IPFIX records (applicationId, applicationName)\n"
	"                       and in --dump-flows. Needs a build with libndpi-dev\n"
	"  --dpi-tcp-packets N  give up on a TCP flow once it had more than N packets\n"
	"                       (1..254, default 80; ndpiReader's -T, same count)\n"
	"  --dpi-udp-packets N  same for UDP and other flows (default 24, ndpiReader -U)\n"
	"  --dpi-flows N        nDPI flow states preallocated (default 16384): flows\n"
	"                       being inspected at once; a flow that finds none free\n"
	"                       is counted in dpi.flows_not_inspected\n";

static int
stateful_parse_opt(void *cfgp, int argc, char **argv)
{
	struct stateful_cfg *cfg = cfgp;
	const char *o = argv[0], *v = argc > 1 ? argv[1] : NULL;

	if (strcmp(o, "--dpi") == 0) {
#ifndef STATEFUL_HAVE_NDPI
		fprintf(stderr,
			"stateful: --dpi: this build lacks nDPI (libndpi was not found "
			"when it was configured; install libndpi-dev and rebuild)\n");
		return -1;
#endif
		cfg->dpi = true;
		return 1;
	}
	if (strcmp(o, "--hash") != 0 && strcmp(o, "--hash-key") != 0 &&
		strcmp(o, "--dpi-tcp-packets") != 0 && strcmp(o, "--dpi-udp-packets") != 0 &&
		strcmp(o, "--dpi-flows") != 0 && strcmp(o, "--idle-timeout") != 0 &&
		strcmp(o, "--max-flows") != 0 && strcmp(o, "--dump-flows") != 0 &&
		strcmp(o, "--ipfix-collector") != 0 && strcmp(o, "--ipfix-file") != 0 &&
		strcmp(o, "--active-timeout") != 0 && strcmp(o, "--export-queue") != 0 &&
		strcmp(o, "--template-interval") != 0)
		return 0;
	if (v == NULL) {
		fprintf(stderr, "stateful: %s needs a value\n", o);
		return -1;
	}
	if (strcmp(o, "--hash") == 0) {
		if (strcmp(v, "nprobe") != 0 && strcmp(v, "keyed") != 0) {
			fprintf(stderr, "stateful: --hash '%s': expected nprobe or keyed\n", v);
			return -1;
		}
		cfg->hash = v;
	} else if (strcmp(o, "--hash-key") == 0) {
		cfg->hash_key = v;
	} else if (strcmp(o, "--idle-timeout") == 0) {
		if (pp_parse_seconds(o, v, 1e6, &cfg->idle_timeout_s) < 0)
			return -1;
		cfg->idle_timeout_set = true;
	} else if (strcmp(o, "--max-flows") == 0) {
		uint64_t n;

		if (pp_parse_u64(o, v, 1, MAX_MAX_FLOWS, &n) < 0)
			return -1;
		cfg->max_flows = (uint32_t)n;
	} else if (strcmp(o, "--dpi-tcp-packets") == 0) {
		if (pp_parse_u64(o, v, 1, 254, &cfg->dpi_tcp_packets) < 0)
			return -1;
	} else if (strcmp(o, "--dpi-udp-packets") == 0) {
		if (pp_parse_u64(o, v, 1, 254, &cfg->dpi_udp_packets) < 0)
			return -1;
	} else if (strcmp(o, "--dpi-flows") == 0) {
		if (pp_parse_u64(o, v, 1, 1u << 24, &cfg->dpi_flows) < 0)
			return -1;
	} else if (strcmp(o, "--ipfix-collector") == 0) {
		cfg->ipfix_collector = v;
	} else if (strcmp(o, "--ipfix-file") == 0) {
		cfg->ipfix_file = v;
	} else if (strcmp(o, "--active-timeout") == 0) {
		if (pp_parse_seconds(o, v, 1e6, &cfg->active_timeout_s) < 0)
			return -1;
		cfg->active_timeout_set = true;
	} else if (strcmp(o, "--export-queue") == 0) {
		if (pp_parse_u64(o, v, 2, 1u << 24, &cfg->export_queue) < 0)
			return -1;
	} else if (strcmp(o, "--template-interval") == 0) {
		if (pp_parse_seconds(o, v, 86400, &cfg->template_interval_s) < 0)
			return -1;
		if (cfg->template_interval_s <= 0) {
			fprintf(stderr, "stateful: --template-interval '%s': must be > 0\n", v);
			return -1;
		}
	} else {
		cfg->dump_flows = v;
	}
	return 2;
}

/* Options that go together and values the command line names, checked
 * before EAL starts (a usage error, exit status 2); the app asks for no
 * DPDK memory beyond what the runtime sizes.  Set-up checks the files
 * again for every run of a --serve process. */
static int64_t
stateful_options_check(const void *cfgp)
{
	const struct stateful_cfg *cfg = cfgp;
	struct flow_hasher hasher;
	char err[256];

	if (!cfg->dpi && (cfg->dpi_tcp_packets || cfg->dpi_udp_packets || cfg->dpi_flows)) {
		fprintf(stderr,
			"stateful: --dpi-tcp-packets, --dpi-udp-packets and --dpi-flows "
			"need --dpi\n");
		return -1;
	}
	if (flow_hasher_init(&hasher, cfg->hash != NULL ? cfg->hash : "nprobe", cfg->hash_key, err,
		    sizeof(err)) != 0) {
		fprintf(stderr, "stateful: %s\n", err);
		return -1;
	}
	if (cfg->dump_flows != NULL && pp_outfile_check(cfg->dump_flows, err, sizeof(err)) != 0) {
		fprintf(stderr, "stateful: --dump-flows '%s': %s\n", cfg->dump_flows, err);
		return -1;
	}
	if (cfg->ipfix_file != NULL && pp_outfile_check(cfg->ipfix_file, err, sizeof(err)) != 0) {
		fprintf(stderr, "stateful: --ipfix-file '%s': %s\n", cfg->ipfix_file, err);
		return -1;
	}
	return 0;
}

static int
stateful_setup(void *cfgp, const struct pp_setup_info *info, void **app_state)
{
	const struct stateful_cfg *cfg = cfgp;
	struct stateful_state *st;
	struct flow_hasher hasher;
	char err[256];
	double idle_s = cfg->idle_timeout_set ? cfg->idle_timeout_s : DEFAULT_IDLE_TIMEOUT_S;

	if (flow_hasher_init(&hasher, cfg->hash != NULL ? cfg->hash : "nprobe", cfg->hash_key, err,
		    sizeof(err)) != 0) {
		fprintf(stderr, "stateful: %s\n", err);
		return -EINVAL;
	}
	st = rte_zmalloc_socket(
		"stateful_state", sizeof(*st), RTE_CACHE_LINE_SIZE, (int)info->socket_id);
	if (st == NULL)
		return -ENOMEM;
	st->cfg = *cfg;
	st->socket_id = info->socket_id;
	st->n_instances = info->n_instances;
	if (cfg->dump_flows != NULL) {
		/* checked now, written at the end: a file of an earlier run is
		 * kept until this one has flow records to replace it with */
		char why[256];

		if (pp_outfile_check(cfg->dump_flows, why, sizeof(why)) != 0) {
			int e = errno;

			fprintf(stderr, "stateful: --dump-flows '%s': %s\n", cfg->dump_flows, why);
			rte_free(st);
			return -(e ? e : EINVAL);
		}
		st->dump = true;
	}
	st->table = flow_table_create(cfg->max_flows ? cfg->max_flows : DEFAULT_MAX_FLOWS,
		(uint64_t)(idle_s * (double)rte_get_tsc_hz()), &hasher, (int)info->socket_id);
	if (st->table == NULL) {
		fprintf(stderr,
			"stateful: cannot allocate the flow table (%u records) on socket %u\n",
			cfg->max_flows ? cfg->max_flows : DEFAULT_MAX_FLOWS, info->socket_id);
		rte_free(st);
		return -ENOMEM;
	}
#ifdef STATEFUL_HAVE_NDPI
	if (cfg->dpi) {
		struct flow_dpi_cfg dc = {
			.max_tcp_packets = cfg->dpi_tcp_packets ? (uint32_t)cfg->dpi_tcp_packets
								: FLOW_DPI_DEFAULT_TCP_PACKETS,
			.max_udp_packets = cfg->dpi_udp_packets ? (uint32_t)cfg->dpi_udp_packets
								: FLOW_DPI_DEFAULT_UDP_PACKETS,
			.states =
				cfg->dpi_flows ? (uint32_t)cfg->dpi_flows : FLOW_DPI_DEFAULT_STATES,
		};

		st->dpi = flow_dpi_create(&dc, (int)info->socket_id, err, sizeof(err));
		if (st->dpi == NULL) {
			fprintf(stderr, "stateful: %s\n", err);
			flow_table_free(st->table);
			rte_free(st);
			return -ENOMEM;
		}
		flow_table_set_inspector(st->table, dpi_on_packet, dpi_on_finish);
	}
#endif
	if (cfg->ipfix_collector != NULL || cfg->ipfix_file != NULL) {
		struct flow_export_cfg xc = {
			.collector = cfg->ipfix_collector,
			.file = cfg->ipfix_file,
			.queue_size = cfg->export_queue ? (uint32_t)cfg->export_queue
							: DEFAULT_EXPORT_QUEUE,
			.template_interval_s = cfg->template_interval_s > 0
				? cfg->template_interval_s
				: DEFAULT_TEMPLATE_INTERVAL_S,
			.observation_domain = 1,
#ifdef STATEFUL_HAVE_NDPI
			.app_name = st->dpi != NULL ? flow_dpi_name : NULL,
			.app_name_arg = st->dpi,
#endif
		};
		double active_s =
			cfg->active_timeout_set ? cfg->active_timeout_s : DEFAULT_ACTIVE_TIMEOUT_S;

		st->exporter = flow_export_create(&xc, (int)info->socket_id, err, sizeof(err));
		if (st->exporter == NULL) {
			fprintf(stderr, "stateful: %s\n", err);
#ifdef STATEFUL_HAVE_NDPI
			flow_dpi_free(st->dpi);
#endif
			flow_table_free(st->table);
			rte_free(st);
			return -EINVAL;
		}
		flow_table_set_end_hook(st->table, (uint64_t)(active_s * (double)rte_get_tsc_hz()),
			flow_export_hook, st->exporter);
	}
	*app_state = st;
	return 0;
}

static int
stateful_task_init(void *app_state, unsigned instance, void **task_state)
{
	struct stateful_state *st = app_state;
	struct stateful_task *t;

	t = rte_zmalloc_socket(
		"stateful_task", sizeof(*t), RTE_CACHE_LINE_SIZE, (int)st->socket_id);
	if (t == NULL)
		return -ENOMEM;
	t->table = st->table;
	t->instance = instance;
#ifdef STATEFUL_HAVE_NDPI
	if (st->dpi != NULL) {
		if (instance >= RTE_MAX_LCORE) {
			rte_free(t);
			return -EINVAL;
		}
		t->dpi = flow_dpi_worker_create(st->dpi, (int)st->socket_id);
		if (t->dpi == NULL) {
			fprintf(stderr, "stateful: --dpi: cannot create nDPI's detection module\n");
			rte_free(t);
			return -ENOMEM;
		}
		st->dpi_workers[instance] = t->dpi;
	}
#endif
	/* Instances start their sweeps apart so they rarely meet on a lock. */
	t->sweep_cursor = st->n_instances
		? (uint32_t)(((uint64_t)instance * FLOW_TABLE_BUCKETS) / st->n_instances)
		: 0;
	*task_state = t;
	return 0;
}

/* FAST PATH.  Two passes: parse and hash the burst, prefetching each
 * packet's bucket, then look up / update under the bucket locks. */
static void
stateful_process(void *task_state, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	struct stateful_task *t = task_state;
	struct flow_table *tab = t->table;
	struct flow_pkt fp[PP_BURST];
	uint32_t hash[PP_BURST];
	uint8_t ok[PP_BURST];
	uint64_t now = rte_rdtsc();
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		enum flow_parse r;

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], const void *));
		verdict[i] = PP_VERDICT_FORWARD;
		r = flow_parse_frame(
			rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &fp[i]);
		ok[i] = r == FLOW_PARSE_OK;
		if (!ok[i]) {
			t->non_ip += r == FLOW_PARSE_NOT_IP;
			t->malformed += r == FLOW_PARSE_MALFORMED;
			continue;
		}
		hash[i] = flow_hash(&tab->hasher, &fp[i].key);
		rte_prefetch0(&tab->buckets[hash[i] & FLOW_TABLE_BUCKET_MASK]);
	}
	for (i = 0; i < n; i++) {
		if (ok[i])
			flow_table_update(
				tab, &fp[i], hash[i], rte_pktmbuf_pkt_len(pkts[i]), now, &t->c);
	}
	flow_table_sweep(tab, &t->sweep_cursor, SWEEP_PER_BURST, now, &t->c);
}

/* After the tasks stopped: settle the application of every flow still being
 * inspected (as ndpiReader does at the end of a capture). */
static void
dpi_finish_all(const struct stateful_state *st)
{
#ifdef STATEFUL_HAVE_NDPI
	if (st->dpi != NULL && st->dpi_workers[0] != NULL)
		flow_dpi_finish_all(st->dpi_workers[0], st->table);
#else
	(void)st;
#endif
}

static void
export_stats(const struct stateful_state *st, const struct flow_counters *sum, json_t *out)
{
	static const char *const reasons[6] = { NULL, "idle_timeout", "active_timeout",
		"end_of_flow", "forced_end", "lack_of_resources" };
	struct flow_export_stats xs;
	json_t *x = json_object(), *ended = json_object();
	unsigned k;

	/* After the tasks stopped (not on a SIGUSR1 snapshot): report the flows
	 * still in the table and wait for the writer, so the figures are final. */
	if (__atomic_load_n(&pp_stop_flag, __ATOMIC_ACQUIRE)) {
		dpi_finish_all(st);
		flow_export_finish(st->exporter, st->table);
	}
	flow_export_get_stats(st->exporter, &xs);
	for (k = 1; k < 6; k++)
		json_object_set_new(ended, reasons[k], json_integer((json_int_t)sum->ended[k]));
	json_object_set_new(x, "kind", json_string("measured"));
	json_object_set_new(x, "collector",
		st->cfg.ipfix_collector ? json_string(st->cfg.ipfix_collector) : json_null());
	json_object_set_new(
		x, "file", st->cfg.ipfix_file ? json_string(st->cfg.ipfix_file) : json_null());
	json_object_set_new(x, "active_timeout_s",
		json_real(st->cfg.active_timeout_set ? st->cfg.active_timeout_s
						     : DEFAULT_ACTIVE_TIMEOUT_S));
	json_object_set_new(x, "flows_ended_in_run", ended);
	json_object_set_new(
		x, "flows_evicted_table_pressure", json_integer((json_int_t)sum->evicted));
	json_object_set_new(x, "flows_queued_in_run", json_integer((json_int_t)sum->export_queued));
	json_object_set_new(x, "export_dropped_queue_full",
		json_integer((json_int_t)(sum->export_dropped + xs.forced_dropped)));
	json_object_set_new(x, "flows_dequeued", json_integer((json_int_t)xs.flows_dequeued));
	json_object_set_new(x, "records_exported", json_integer((json_int_t)xs.records_exported));
	json_object_set_new(x, "records_lost", json_integer((json_int_t)xs.records_lost));
	json_object_set_new(x, "template_sends", json_integer((json_int_t)xs.templates_sent));
	json_object_set_new(x, "finished", json_boolean(xs.finished));
	json_object_set_new(
		x, "first_error", xs.first_error[0] ? json_string(xs.first_error) : json_null());
	json_object_set_new(out, "ipfix", x);
}

static void
stateful_stats(void *app_state, void *const *task_states, unsigned n_tasks, json_t *out)
{
	const struct stateful_state *st = app_state;
	struct flow_counters sum = { 0 };
	uint64_t non_ip = 0, malformed = 0, hist[FLOW_CHAIN_HIST];
	json_t *jhist = json_array();
	uint32_t longest;
	unsigned i;

	for (i = 0; i < n_tasks; i++) {
		const struct stateful_task *t = task_states[i];

		if (t == NULL)
			continue;
		sum.lookups += t->c.lookups;
		sum.probes += t->c.probes;
		sum.hits += t->c.hits;
		sum.created += t->c.created;
		sum.expired += t->c.expired;
		sum.table_full += t->c.table_full;
		sum.evicted += t->c.evicted;
		sum.export_queued += t->c.export_queued;
		sum.export_dropped += t->c.export_dropped;
		for (unsigned k = 0; k < 6; k++)
			sum.ended[k] += t->c.ended[k];
		if (t->c.max_probe > sum.max_probe)
			sum.max_probe = t->c.max_probe;
		non_ip += t->non_ip;
		malformed += t->malformed;
	}
	longest = flow_table_chain_histogram(st->table, hist);
	for (i = 0; i < FLOW_CHAIN_HIST; i++)
		json_array_append_new(jhist, json_integer((json_int_t)hist[i]));

	json_object_set_new(out, "kind", json_string("measured"));
	json_object_set_new(out, "hash",
		json_string(st->table->hasher.kind == FLOW_HASH_KEYED ? "keyed" : "nprobe"));
	json_object_set_new(out, "table_buckets", json_integer(FLOW_TABLE_BUCKETS));
	json_object_set_new(out, "table_capacity", json_integer(st->table->capacity));
	json_object_set_new(out, "idle_timeout_s",
		json_real(st->cfg.idle_timeout_set ? st->cfg.idle_timeout_s
						   : DEFAULT_IDLE_TIMEOUT_S));
	json_object_set_new(out, "flows_created", json_integer((json_int_t)sum.created));
	json_object_set_new(out, "flows_expired", json_integer((json_int_t)sum.expired));
	json_object_set_new(
		out, "flows_active", json_integer((json_int_t)(sum.created - sum.expired)));
	json_object_set_new(
		out, "flows_dropped_table_full", json_integer((json_int_t)sum.table_full));
	json_object_set_new(out, "lookups", json_integer((json_int_t)sum.lookups));
	json_object_set_new(out, "lookup_hits", json_integer((json_int_t)sum.hits));
	json_object_set_new(out, "avg_probe_length",
		json_real(sum.lookups ? (double)sum.probes / (double)sum.lookups : 0));
	json_object_set_new(out, "max_probe_length", json_integer((json_int_t)sum.max_probe));
	json_object_set_new(out, "chain_length_histogram", jhist);
	json_object_set_new(out, "longest_chain", json_integer(longest));
	json_object_set_new(out, "tsc_hz", json_integer((json_int_t)rte_get_tsc_hz()));
	json_object_set_new(out, "non_ip_packets", json_integer((json_int_t)non_ip));
	if (st->exporter != NULL)
		export_stats(st, &sum, out);
	json_object_set_new(out, "malformed_packets", json_integer((json_int_t)malformed));
#ifdef STATEFUL_HAVE_NDPI
	if (st->dpi != NULL) {
		if (__atomic_load_n(&pp_stop_flag, __ATOMIC_ACQUIRE))
			dpi_finish_all(st);
		flow_dpi_stats(st->dpi, st->dpi_workers, st->n_instances, out);
	}
#endif
}

static const char *const proto_names[256] = {
	[1] = "icmp", [6] = "tcp", [17] = "udp", [58] = "icmpv6", [132] = "sctp"
};

struct dump_ctx {
	const struct stateful_state *st;
	json_t *flows;
};

static void
dump_one(const struct flow_record *r, void *arg)
{
	const struct dump_ctx *d = arg;
	json_t *flows = d->flows, *f = json_object();
	/* The initiator (first packet's sender) is reported as the source. */
	bool src_hi = r->init_dir == 1;
	char src[64], dst[64];

	flow_key_addr_str(&r->key, src_hi, src, sizeof(src));
	flow_key_addr_str(&r->key, !src_hi, dst, sizeof(dst));
	json_object_set_new(f, "family", json_integer(r->key.family));
	json_object_set_new(f, "vlan", json_integer(r->key.vlan));
	json_object_set_new(f, "proto", json_integer(r->key.proto));
	json_object_set_new(f, "proto_name",
		json_string(proto_names[r->key.proto] ? proto_names[r->key.proto] : "other"));
	json_object_set_new(f, "src", json_string(src));
	json_object_set_new(f, "dst", json_string(dst));
	json_object_set_new(f, "sport", json_integer(src_hi ? r->key.port_hi : r->key.port_lo));
	json_object_set_new(f, "dport", json_integer(src_hi ? r->key.port_lo : r->key.port_hi));
	json_object_set_new(
		f, "packets", json_integer((json_int_t)(r->packets[0] + r->packets[1])));
	json_object_set_new(f, "bytes", json_integer((json_int_t)(r->bytes[0] + r->bytes[1])));
	json_object_set_new(f, "packets_src_to_dst", json_integer((json_int_t)r->packets[0]));
	json_object_set_new(f, "packets_dst_to_src", json_integer((json_int_t)r->packets[1]));
	json_object_set_new(f, "bytes_src_to_dst", json_integer((json_int_t)r->bytes[0]));
	json_object_set_new(f, "bytes_dst_to_src", json_integer((json_int_t)r->bytes[1]));
	json_object_set_new(f, "first_seen_tsc", json_integer((json_int_t)r->first_tsc));
	json_object_set_new(f, "last_seen_tsc", json_integer((json_int_t)r->last_tsc));
	json_object_set_new(f, "tcp_flags", json_integer(r->tcp_flags));
	json_object_set_new(f, "state", json_string(flow_state_name((enum flow_state)r->state)));
#ifdef STATEFUL_HAVE_NDPI
	if (d->st->dpi != NULL) {
		char name[64];

		if (r->app_status == FLOW_APP_DONE) {
			json_object_set_new(f, "application",
				json_string(flow_dpi_name(d->st->dpi, r->app_master, r->app_proto,
					name, sizeof(name))));
			json_object_set_new(
				f, "application_master_id", json_integer(r->app_master));
			json_object_set_new(f, "application_id", json_integer(r->app_proto));
		} else {
			json_object_set_new(f, "application", json_string("NotInspected"));
		}
		json_object_set_new(f, "application_packets", json_integer(r->app_packets));
	}
#endif
	json_array_append_new(flows, f);
}

/* root to f, closed; 0, or -1 with errno's value in *err */
static int
write_json(const json_t *root, FILE *f, int *err)
{
	int rc = json_dumpf(root, f, JSON_INDENT(1));
	rc |= fputc('\n', f) == EOF;
	rc |= fflush(f);
	if (rc != 0)
		*err = errno ? errno : EIO;
	if (fclose(f) != 0 && rc == 0) {
		*err = errno;
		rc = -1;
	}
	return rc ? -1 : 0;
}

/* 0 when the records are in --dump-flows' file, -1 when they went elsewhere
 * or were lost (said on stderr). */
static int
dump_flows(const struct stateful_state *st)
{
	json_t *root = json_object(), *flows = json_array();
	struct dump_ctx d = { .st = st, .flows = flows };

	dpi_finish_all(st);
	flow_table_foreach(st->table, dump_one, &d);
	json_object_set_new(root, "app", json_string("stateful"));
	json_object_set_new(root, "kind", json_string("measured"));
	json_object_set_new(root, "hash",
		json_string(st->table->hasher.kind == FLOW_HASH_KEYED ? "keyed" : "nprobe"));
	json_object_set_new(root, "tsc_hz", json_integer((json_int_t)rte_get_tsc_hz()));
	json_object_set_new(root, "flows", flows);
	FILE *f = fopen(st->cfg.dump_flows, "w");
	int e = errno;
	if (f != NULL && write_json(root, f, &e) == 0) {
		json_decref(root);
		return 0;
	}
	/* The records were measured: a full disk or a path gone since set-up
	 * must not lose them.  They go to a file of their own in $TMPDIR. */
	const char *dir = getenv("TMPDIR");
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s/stateful-flows-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(tmp), e2 = errno;
	FILE *g = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (g != NULL && write_json(root, g, &e2) == 0)
		fprintf(stderr,
			"stateful: --dump-flows '%s': cannot write: %s; the %zu flow records "
			"are in %s\n",
			st->cfg.dump_flows, strerror(e), json_array_size(flows), tmp);
	else
		fprintf(stderr,
			"stateful: --dump-flows '%s': cannot write: %s; nor %s: %s: the %zu flow "
			"records are lost\n",
			st->cfg.dump_flows, strerror(e), tmp, strerror(e2), json_array_size(flows));
	if (g == NULL && fd >= 0)
		close(fd);
	json_decref(root);
	return -1;
}

static int
stateful_teardown(void *app_state, void **task_states, unsigned n_tasks)
{
	struct stateful_state *st = app_state;
	unsigned i;
	int rc = 0;

	if (st == NULL)
		return 0;
	if (st->dump && dump_flows(st) != 0)
		rc = -1;
	if (st->exporter != NULL) {
		flow_export_finish(st->exporter, st->table);
		if (flow_export_file_failed(st->exporter))
			rc = -1;
		flow_export_free(st->exporter);
	}
	for (i = 0; i < n_tasks; i++) {
#ifdef STATEFUL_HAVE_NDPI
		if (task_states[i] != NULL)
			flow_dpi_worker_free(((struct stateful_task *)task_states[i])->dpi);
#endif
		rte_free(task_states[i]);
	}
#ifdef STATEFUL_HAVE_NDPI
	flow_dpi_free(st->dpi);
#endif
	flow_table_free(st->table);
	rte_free(st);
	return rc;
}

static const struct pp_app stateful_app = {
	.name = "stateful",
	.variants = NULL,
	.drop_reasons = NULL,
	.n_drop_reasons = 0,
	.usage = stateful_usage,
	.cfg_size = sizeof(struct stateful_cfg),
	.parse_opt = stateful_parse_opt,
	.setup = stateful_setup,
	.task_init = stateful_task_init,
	.process = stateful_process,
	.stats = stateful_stats,
	.teardown = stateful_teardown,
	.dpdk_mem_mb = stateful_options_check,
};

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, &stateful_app);
}
