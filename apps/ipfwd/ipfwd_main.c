/* ipfwd: IPv4 and IPv6 forwarding as the P stage of the pipeplace runtime.
 * Variants size the next-hop table from the machine's caches:
 *   l1  - half the L1 data cache (lookups hit L1);
 *   mem - at least 4x the last-level cache (lookups of spread-out
 *         destinations miss every cache).
 * --lookup lpm replaces the hashed table with longest-prefix match on
 * route files (ipfwd_lpm.h); the variant then only names the run. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "ipfwd_forward.h"
#include "ipfwd_lpm.h"
#include "ipfwd_routes.h"
#include "ipfwd_table.h"
#include "pp_app.h"

_Static_assert(PP_BURST <= IPFWD_LPM_MAX_BURST, "ipfwd_lpm_process takes at most 64 packets");

static const char *const variants[] = { "l1", "mem", NULL };
static const char *const drop_reasons[IPFWD_N_VERDICTS - 1] = {
	"not_ip",
	"truncated",
	"bad_version_or_ihl",
	"bad_checksum",
	"ttl_expired",
	"no_route",
	"ipv6_bad_version",
	"hop_limit_expired",
	"ipv6_ext_truncated",
	"ipv6_hop_by_hop_not_first",
};

#define IPFWD_MAX_ROUTE_FILES 8

struct ipfwd_cfg {
	uint64_t table_entries; /* 0: from the variant and the topology */
	bool lpm;               /* --lookup lpm */
	const char *routes_path[IPFWD_MAX_ROUTE_FILES];
	unsigned n_routes_files;
	const struct ipfwd_routes *routes; /* &process_routes once read */
};

/* The --routes files, read at option time and kept for the whole process
 * (serve mode builds the FIBs from them for every placement); freed at
 * exit. */
static struct ipfwd_routes process_routes;

static void
free_process_routes(void)
{
	ipfwd_routes_free(&process_routes);
}

struct ipfwd_state {
	struct ipfwd_table table;
	struct ipfwd_lpm lpm; /* --lookup lpm; table unused then */
	const struct ipfwd_cfg *cfg;
	const char *variant;
	const char *sizing; /* how the table size was chosen */
	size_t l1d_bytes, llc_bytes;
};

struct ipfwd_task {
	const struct ipfwd_table *table; /* NULL: --lookup lpm */
	const struct ipfwd_lpm *lpm;
	bool prefetch; /* hashed table larger than the L1 data cache */
};

static int
ipfwd_parse_opt(void *cfg, int argc, char **argv)
{
	struct ipfwd_cfg *c = cfg;
	if (strcmp(argv[0], "--table-entries") != 0 && strcmp(argv[0], "--lookup") != 0 &&
		strcmp(argv[0], "--routes") != 0)
		return 0;
	if (argc < 2) {
		fprintf(stderr, "%s: missing value\n", argv[0]);
		return -1;
	}
	if (strcmp(argv[0], "--lookup") == 0) {
		if (strcmp(argv[1], "hash") != 0 && strcmp(argv[1], "lpm") != 0) {
			fprintf(stderr, "--lookup %s: expected hash or lpm\n", argv[1]);
			return -1;
		}
		c->lpm = strcmp(argv[1], "lpm") == 0;
		return 2;
	}
	if (strcmp(argv[0], "--routes") == 0) {
		char err[512];
		for (unsigned i = 0; i < c->n_routes_files; i++) {
			if (strcmp(c->routes_path[i], argv[1]) == 0) {
				fprintf(stderr, "--routes %s: given twice\n", argv[1]);
				return -1;
			}
		}
		if (c->n_routes_files == IPFWD_MAX_ROUTE_FILES) {
			fprintf(stderr, "--routes %s: more than %d route files\n", argv[1],
				IPFWD_MAX_ROUTE_FILES);
			return -1;
		}
		if (c->n_routes_files == 0)
			atexit(free_process_routes);
		if (ipfwd_routes_load(argv[1], &process_routes, err, sizeof(err)) < 0) {
			fprintf(stderr, "--routes: %s\n", err);
			return -1;
		}
		c->routes = &process_routes;
		c->routes_path[c->n_routes_files++] = argv[1];
		return 2;
	}
	uint64_t v;
	if (pp_parse_u64(argv[0], argv[1], 1, 1ull << 32, &v) < 0)
		return -1;
	c->table_entries = v;
	return 2;
}

/* Options that go together, and the FIB's DPDK memory. */
static int64_t
ipfwd_dpdk_mem_mb(const void *cfg)
{
	const struct ipfwd_cfg *c = cfg;
	if (c->lpm && c->n_routes_files == 0) {
		fprintf(stderr, "--lookup lpm: give the route file with --routes FILE\n");
		return -1;
	}
	if (!c->lpm && c->n_routes_files > 0) {
		fprintf(stderr, "--routes %s: only used with --lookup lpm\n", c->routes_path[0]);
		return -1;
	}
	if (c->lpm && c->table_entries != 0) {
		fprintf(stderr, "--table-entries: sizes the hash table; --lookup lpm has none\n");
		return -1;
	}
	return c->lpm ? (int64_t)ipfwd_lpm_mem_mb(c->routes) : 0;
}

static int
ipfwd_setup(void *cfg, const struct pp_setup_info *info, void **app_state)
{
	const struct ipfwd_cfg *c = cfg;
	struct ipfwd_state *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->variant = info->variant != NULL ? info->variant : "l1";
	s->l1d_bytes = info->l1d_bytes;
	s->llc_bytes = info->llc_bytes;
	s->cfg = c;
	if (c->lpm) {
		char err[512];
		if (ipfwd_lpm_create(&s->lpm, c->routes, (int)info->socket_id, err, sizeof(err)) <
			0) {
			fprintf(stderr, "ipfwd --routes %s%s: %s\n", c->routes_path[0],
				c->n_routes_files > 1 ? " (and the other --routes files)" : "",
				err);
			free(s);
			return -ENOMEM;
		}
		s->sizing = "--lookup lpm";
		*app_state = s;
		return 0;
	}
	uint64_t n;
	if (c->table_entries != 0) {
		n = c->table_entries;
		s->sizing = "--table-entries";
	} else if (strcmp(s->variant, "mem") == 0) {
		if (info->llc_bytes == 0) {
			fprintf(stderr,
				"ipfwd mem: the topology reports no last-level cache; give "
				"--table-entries\n");
			free(s);
			return -EINVAL;
		}
		n = ipfwd_table_entries_mem(info->llc_bytes);
		s->sizing = ">= 4 x last-level cache (hwloc)";
	} else {
		if (info->l1d_bytes == 0) {
			fprintf(stderr,
				"ipfwd l1: the topology reports no L1 data cache; give "
				"--table-entries\n");
			free(s);
			return -EINVAL;
		}
		n = ipfwd_table_entries_l1(info->l1d_bytes);
		s->sizing = "half the L1 data cache (hwloc)";
	}
	if (ipfwd_table_create(&s->table, n) != 0) {
		fprintf(stderr,
			"ipfwd: cannot allocate a table of %" PRIu64 " entries (%" PRIu64 " MiB)\n",
			n, n * sizeof(struct ipfwd_next_hop) >> 20);
		free(s);
		return -ENOMEM;
	}
	*app_state = s;
	return 0;
}

static int
ipfwd_task_init(void *app_state, unsigned instance, void **task_state)
{
	(void)instance;
	struct ipfwd_state *s = app_state;
	struct ipfwd_task *t = rte_zmalloc("ipfwd_task", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL)
		return -ENOMEM;
	t->table = s->cfg->lpm ? NULL : &s->table;
	t->lpm = s->cfg->lpm ? &s->lpm : NULL;
	t->prefetch =
		!s->cfg->lpm && s->table.n_entries * sizeof(struct ipfwd_next_hop) > s->l1d_bytes;
	*task_state = t;
	return 0;
}

/* The runtime prefetched the packet headers.  A table larger than L1 (the
 * mem variant) gets the next hops of the whole burst (IPv4 and IPv6)
 * prefetched first, so that their misses overlap instead of following one
 * another: the mem variant still pays for memory, but once per burst
 * rather than per packet. */
static void
ipfwd_process(void *task_state, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	const struct ipfwd_task *t = task_state;
	if (t->lpm != NULL) {
		ipfwd_lpm_process(t->lpm, pkts, n, verdict);
		return;
	}
	/* A local copy: the packet stores cannot alias it, so its two fields
	 * stay in registers instead of being reloaded for every packet. */
	const struct ipfwd_table table = *t->table;
	if (t->prefetch) {
		for (uint16_t i = 0; i < n; i++) {
			const struct ipfwd_next_hop *e = ipfwd_peek_entry(pkts[i], &table);
			if (e != NULL)
				rte_prefetch0(e);
		}
	}
	for (uint16_t i = 0; i < n; i++)
		verdict[i] = ipfwd_forward(pkts[i], &table);
}

static void
ipfwd_stats(void *app_state, void *const *task_states, unsigned n_tasks, json_t *out)
{
	(void)task_states;
	(void)n_tasks;
	const struct ipfwd_state *s = app_state;
	if (s->cfg->lpm) {
		const struct ipfwd_routes *r = s->cfg->routes;
		char fib[96];
		json_t *files = json_array();
		for (unsigned i = 0; i < s->cfg->n_routes_files; i++)
			json_array_append_new(files, json_string(s->cfg->routes_path[i]));
		json_object_set_new(out, "lookup", json_string("lpm"));
		json_object_set_new(out, "routes_files", files);
		json_object_set_new(out, "routes", json_integer((json_int_t)(r->n + r->n6)));
		json_object_set_new(out, "routes_ipv4", json_integer((json_int_t)r->n));
		json_object_set_new(out, "routes_ipv6", json_integer((json_int_t)r->n6));
		snprintf(fib, sizeof(fib),
			"rte_fib DIR24_8, %u-byte next hops, %" PRIu64 " tbl8 groups",
			s->lpm.nh_bytes, s->lpm.tbl8_groups);
		json_object_set_new(out, "fib", r->n > 0 ? json_string(fib) : json_null());
		snprintf(fib, sizeof(fib),
			"rte_fib6 TRIE, %u-byte next hops, %" PRIu64 " tbl8 groups",
			s->lpm.nh_bytes6, s->lpm.tbl8_groups6);
		json_object_set_new(out, "fib6", r->n6 > 0 ? json_string(fib) : json_null());
		json_object_set_new(
			out, "fib6_tbl8_groups", json_integer((json_int_t)s->lpm.tbl8_groups6));
		json_object_set_new(out, "l1d_bytes", json_integer((json_int_t)s->l1d_bytes));
		json_object_set_new(out, "llc_bytes", json_integer((json_int_t)s->llc_bytes));
		return;
	}
	json_object_set_new(out, "lookup", json_string("hash"));
	json_object_set_new(out, "table_entries", json_integer((json_int_t)s->table.n_entries));
	json_object_set_new(out, "table_bytes",
		json_integer((json_int_t)(s->table.n_entries * sizeof(struct ipfwd_next_hop))));
	json_object_set_new(out, "table_sizing", json_string(s->sizing));
	json_object_set_new(out, "l1d_bytes", json_integer((json_int_t)s->l1d_bytes));
	json_object_set_new(out, "llc_bytes", json_integer((json_int_t)s->llc_bytes));
}

static int
ipfwd_teardown(void *app_state, void **task_states, unsigned n_tasks)
{
	for (unsigned i = 0; i < n_tasks; i++)
		rte_free(task_states[i]);
	struct ipfwd_state *s = app_state;
	if (s != NULL) {
		if (s->cfg->lpm)
			ipfwd_lpm_free(&s->lpm);
		else
			ipfwd_table_free(&s->table);
		free(s);
	}
	return 0; /* ipfwd writes no output of its own */
}

static const struct pp_app ipfwd_app = {
	.name = "ipfwd",
	.variants = variants,
	.drop_reasons = drop_reasons,
	.n_drop_reasons = IPFWD_N_VERDICTS - 1,
	.usage = "  IPv4 and IPv6 (EtherType 0x0800 and 0x86DD) in one process; IPv6\n"
		 "  extension headers are walked (not processed): a chain inside the payload\n"
		 "  length is forwarded, a truncated one dropped as ipv6_ext_truncated\n"
		 "  --table-entries N   next-hop table entries (default from the variant:\n"
		 "                      l1: half the L1 data cache, mem: >= 4x the last-level\n"
		 "                      cache; 16 bytes per entry)\n"
		 "  --lookup hash|lpm   next-hop lookup (default hash: the variants' hashed\n"
		 "                      table); lpm: longest-prefix match in DPDK's rte_fib\n"
		 "                      (IPv4, DIR24_8) and rte_fib6 (IPv6, TRIE) over\n"
		 "                      --routes; no prefix: drop no_route\n"
		 "  --routes FILE       routes for --lookup lpm in l3fwd's rule format (its\n"
		 "                      --rule_ipv4 and --rule_ipv6 lines): R<address>/<depth>\n"
		 "                      <next hop 0-255>, the address IPv4 or IPv6, '#'\n"
		 "                      comments; may be given up to 8 times; next hop k\n"
		 "                      rewrites the MACs to 02:00 + k, 02:01 + k (k as 4\n"
		 "                      big-endian bytes)\n"
		 "  variant defaults to l1 when neither the placement nor --variant gives one\n",
	.cfg_size = sizeof(struct ipfwd_cfg),
	.parse_opt = ipfwd_parse_opt,
	.setup = ipfwd_setup,
	.task_init = ipfwd_task_init,
	.process = ipfwd_process,
	.stats = ipfwd_stats,
	.teardown = ipfwd_teardown,
	.dpdk_mem_mb = ipfwd_dpdk_mem_mb,
};

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, &ipfwd_app);
}
