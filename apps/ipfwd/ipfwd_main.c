/* ipfwd: IPv4 forwarding as the P stage of the pipeplace runtime.
 * Variants size the next-hop table from the machine's caches:
 *   l1  - half the L1 data cache (lookups hit L1);
 *   mem - at least 4x the last-level cache (lookups of spread-out
 *         destinations miss every cache). */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "ipfwd_forward.h"
#include "ipfwd_table.h"
#include "pp_app.h"

static const char *const variants[] = { "l1", "mem", NULL };
static const char *const drop_reasons[IPFWD_N_VERDICTS - 1] = {
	"not_ipv4",
	"truncated",
	"bad_version_or_ihl",
	"bad_checksum",
	"ttl_expired",
};

struct ipfwd_cfg {
	uint64_t table_entries; /* 0: from the variant and the topology */
};

struct ipfwd_state {
	struct ipfwd_table table;
	const char *variant;
	const char *sizing; /* how the table size was chosen */
	size_t l1d_bytes, llc_bytes;
};

struct ipfwd_task {
	const struct ipfwd_table *table;
	bool prefetch; /* the table is larger than the L1 data cache */
};

static int
ipfwd_parse_opt(void *cfg, int argc, char **argv)
{
	struct ipfwd_cfg *c = cfg;
	if (strcmp(argv[0], "--table-entries") != 0)
		return 0;
	if (argc < 2) {
		fprintf(stderr, "--table-entries: missing value\n");
		return -1;
	}
	uint64_t v;
	if (pp_parse_u64(argv[0], argv[1], 1, 1ull << 32, &v) < 0)
		return -1;
	c->table_entries = v;
	return 2;
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
	t->table = &s->table;
	t->prefetch = s->table.n_entries * sizeof(struct ipfwd_next_hop) > s->l1d_bytes;
	*task_state = t;
	return 0;
}

/* The runtime prefetched the packet headers.  A table larger than L1 (the
 * mem variant) gets the next hops of the whole burst prefetched first, so
 * that their misses overlap instead of following one another: the mem
 * variant still pays for memory, but once per burst rather than per
 * packet. */
static void
ipfwd_process(void *task_state, struct rte_mbuf **pkts, uint16_t n, uint8_t *verdict)
{
	const struct ipfwd_task *t = task_state;
	if (t->prefetch) {
		for (uint16_t i = 0; i < n; i++) {
			uint32_t dst;
			if (ipfwd_peek_dst(pkts[i], &dst))
				rte_prefetch0(ipfwd_lookup(t->table, dst));
		}
	}
	for (uint16_t i = 0; i < n; i++)
		verdict[i] = ipfwd_forward(pkts[i], t->table);
}

static void
ipfwd_stats(void *app_state, void *const *task_states, unsigned n_tasks, json_t *out)
{
	(void)task_states;
	(void)n_tasks;
	const struct ipfwd_state *s = app_state;
	json_object_set_new(out, "table_entries", json_integer((json_int_t)s->table.n_entries));
	json_object_set_new(out, "table_bytes",
		json_integer((json_int_t)(s->table.n_entries * sizeof(struct ipfwd_next_hop))));
	json_object_set_new(out, "table_sizing", json_string(s->sizing));
	json_object_set_new(out, "l1d_bytes", json_integer((json_int_t)s->l1d_bytes));
	json_object_set_new(out, "llc_bytes", json_integer((json_int_t)s->llc_bytes));
}

static void
ipfwd_teardown(void *app_state, void **task_states, unsigned n_tasks)
{
	for (unsigned i = 0; i < n_tasks; i++)
		rte_free(task_states[i]);
	struct ipfwd_state *s = app_state;
	if (s != NULL) {
		ipfwd_table_free(&s->table);
		free(s);
	}
}

static const struct pp_app ipfwd_app = {
	.name = "ipfwd",
	.variants = variants,
	.drop_reasons = drop_reasons,
	.n_drop_reasons = IPFWD_N_VERDICTS - 1,
	.usage = "  --table-entries N   next-hop table entries (default from the variant:\n"
		 "                      l1: half the L1 data cache, mem: >= 4x the last-level\n"
		 "                      cache; 16 bytes per entry)\n"
		 "  variant defaults to l1 when neither the placement nor --variant gives one\n",
	.cfg_size = sizeof(struct ipfwd_cfg),
	.parse_opt = ipfwd_parse_opt,
	.setup = ipfwd_setup,
	.task_init = ipfwd_task_init,
	.process = ipfwd_process,
	.stats = ipfwd_stats,
	.teardown = ipfwd_teardown,
};

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, &ipfwd_app);
}
