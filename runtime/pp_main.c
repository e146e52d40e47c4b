/* The command line every app shares (contract 3):
 *   <app> [EAL options] -- --placement FILE [--packets N | --duration S]
 *         [--warmup S] [--stats FILE] [--variant V] [app options]
 * The runtime builds the EAL lcore map from the placement itself, and falls
 * back to --no-huge when no hugepages are free. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pp_app.h"
#include "pp_eal.h"
#include "pp_kif.h"
#include "pp_parse.h"
#include "pp_pcap_check.h"
#include "pp_placement.h"
#include "pp_placement_builtin.h"
#include "pp_pool.h"
#include "pp_run.h"
#include "pp_signal.h"
#include "pp_stats.h"
#include "pp_topology.h"

#define DEFAULT_RING_SIZE 1024
#define MBUF_OVERHEAD 512 /* mbuf header, headroom, mempool header: rough */

struct cli {
	const char *placement_path;
	const char *topology;
	const char *stats_path;
	const char *variant;
	bool check_only;
	bool serve;
	unsigned mbufs;
	unsigned mbuf_data;
	const char *pool_ops; /* NULL: EAL's --mbuf-pool-ops-name, else PP_DEFAULT_POOL_OPS */
	struct pp_run_opts run;
	const char *attach[PP_KIF_MAX]; /* --attach [NETNS/]IFACE, in port order */
	unsigned n_attach;
	enum pp_kif_mode attach_mode;
};

static void
usage(const struct pp_app *app, FILE *out)
{
	fprintf(out,
		"usage: %s [EAL options] -- [--placement FILE] [--packets N | --duration S]\n"
		"          [--warmup S] [--stats FILE] [--variant V] [runtime options] [app "
		"options]\n"
		"\n"
		"Runs the %s pipeline (R -> P -> T per instance) with each task pinned to the\n"
		"hardware context the placement gives (format: runtime/PLACEMENT.md).\n"
		"Do not give -l/-c/--lcores: the runtime builds the lcore map from the placement.\n"
		"Without free hugepages it adds --no-huge -m N itself and says so.\n"
		"\n"
		"runtime options:\n"
		"  --placement FILE    placement JSON%s\n"
		"  --packets N         stop after N packets received per instance\n"
		"  --duration S        stop S seconds after the warm-up (default: run until\n"
		"                      --packets, SIGINT or SIGTERM)\n"
		"  --warmup S          seconds whose packets are not in the measured window (0)\n"
		"  --stats FILE        write the statistics JSON here (default: stdout);\n"
		"                      SIGUSR1 writes an in-progress snapshot. Checked\n"
		"                      before the run; should the write fail after it, the\n"
		"                      statistics go to stdout\n"
		"  --variant V         app variant (overrides the placement's \"variant\")\n"
		"  --topology DESC     hwloc synthetic topology, e.g. \"pack:1 core:8 group:2 "
		"pu:4\"\n"
		"                      (only with --check-placement)\n"
		"  --check-placement   validate the placement, print it, exit without running\n"
		"  --serve             read one placement JSON per line on stdin, run each (with\n"
		"                      --warmup and --duration or --packets), print one\n"
		"                      statistics JSON line per input line (or {\"line\": N,\n"
		"                      \"error\": ...}); exit at end of input (status 1 if any\n"
		"                      line failed); SIGUSR1 snapshots go to stderr. Workers\n"
		"                      exist on every context this process may use. Ports,\n"
		"                      queues and the pool stay up from one line to the next\n"
		"                      (reconfigured only when a placement needs more queues);\n"
		"                      at the end what the rx queues still hold is counted on\n"
		"                      stderr (\"pipeplace: serve end: {...}\") and freed\n"
		"  --mbufs N           mbufs in the pool (default: enough for the rings; add the\n"
		"                      packets of every capture net_pcap replays with "
		"infinite_rx)\n"
		"  --mbuf-size B       mbuf data room in bytes, headroom not included (%u);\n"
		"                      longer packets are chained over several mbufs\n"
		"  --ring-size N       slots of each R->P and P->T ring, power of two (%u)\n"
		"  --pool-ops NAME     mempool driver of the mbuf pool (" PP_DEFAULT_POOL_OPS
		", a LIFO;\n"
		"                      DPDK's own default is ring_mp_mc, a FIFO); without\n"
		"                      it, EAL's --mbuf-pool-ops-name where given\n"
		"  --attach [NETNS/]IFACE  a kernel interface (a veth end) as the next port,\n"
		"                      after the EAL's: net_af_xdp, or net_af_packet where\n"
		"                      the kernel refuses XDP; NETNS: an `ip netns` name\n"
		"                      (repeat, up to 8; stderr and the statistics say which\n"
		"                      driver each got)\n"
		"  --attach-mode M     auto (default), af_xdp (or fail), af_packet\n"
		"  --help              this text\n"
		"\n"
		"%s options:\n%s",
		app->name, app->name,
		PP_HAVE_BUILTIN_PLACEMENT
			? " (default: the one compiled in, " PP_BUILTIN_PLACEMENT_ORIGIN ")"
			: "",
		RTE_MBUF_DEFAULT_DATAROOM, DEFAULT_RING_SIZE, app->name,
		app->usage != NULL ? app->usage : "  (none)\n");
	if (app->variants != NULL) {
		fprintf(out, "\nvariants:");
		for (const char *const *v = app->variants; *v != NULL; v++)
			fprintf(out, " %s", *v);
		fputc('\n', out);
	}
}

/* Returns 0 to go on, 1 when --help was printed, -1 on error. */
static int
parse_cli(int argc, char **argv, const struct pp_app *app, void *app_cfg, struct cli *c)
{
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = strcmp(o, "--placement") == 0 || strcmp(o, "--packets") == 0 ||
			strcmp(o, "--duration") == 0 || strcmp(o, "--warmup") == 0 ||
			strcmp(o, "--stats") == 0 || strcmp(o, "--variant") == 0 ||
			strcmp(o, "--topology") == 0 || strcmp(o, "--mbufs") == 0 ||
			strcmp(o, "--mbuf-size") == 0 || strcmp(o, "--ring-size") == 0 ||
			strcmp(o, "--pool-ops") == 0 || strcmp(o, "--attach") == 0 ||
			strcmp(o, "--attach-mode") == 0;
		if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
			usage(app, stdout);
			return 1;
		}
		if (strcmp(o, "--check-placement") == 0) {
			c->check_only = true;
			continue;
		}
		if (strcmp(o, "--serve") == 0) {
			c->serve = true;
			continue;
		}
		if (takes && v == NULL) {
			fprintf(stderr, "%s: missing value\n", o);
			return -1;
		}
		uint64_t u;
		if (strcmp(o, "--placement") == 0) {
			c->placement_path = v;
		} else if (strcmp(o, "--stats") == 0) {
			c->stats_path = v;
		} else if (strcmp(o, "--variant") == 0) {
			c->variant = v;
		} else if (strcmp(o, "--attach") == 0) {
			char err[256];
			if (c->n_attach == PP_KIF_MAX) {
				fprintf(stderr, "--attach %s: at most %d interfaces\n", v,
					PP_KIF_MAX);
				return -1;
			}
			if (pp_kif_check_spec(v, err, sizeof(err)) < 0) {
				fprintf(stderr, "--attach %s\n", err);
				return -1;
			}
			c->attach[c->n_attach++] = v;
		} else if (strcmp(o, "--attach-mode") == 0) {
			if (pp_kif_parse_mode(v, &c->attach_mode) < 0) {
				fprintf(stderr,
					"--attach-mode %s: expected auto, af_xdp or af_packet\n",
					v);
				return -1;
			}
		} else if (strcmp(o, "--topology") == 0) {
			c->topology = v;
		} else if (strcmp(o, "--pool-ops") == 0) {
			if (v[0] == '\0' || strlen(v) >= RTE_MEMPOOL_OPS_NAMESIZE) {
				fprintf(stderr,
					"--pool-ops \"%s\": expected a mempool driver name\n", v);
				return -1;
			}
			c->pool_ops = v;
		} else if (strcmp(o, "--packets") == 0) {
			if (pp_parse_u64(o, v, 1, UINT64_MAX / 2, &c->run.packets) < 0)
				return -1;
		} else if (strcmp(o, "--duration") == 0) {
			if (pp_parse_seconds(o, v, 1e7, &c->run.duration_s) < 0)
				return -1;
		} else if (strcmp(o, "--warmup") == 0) {
			if (pp_parse_seconds(o, v, 1e7, &c->run.warmup_s) < 0)
				return -1;
		} else if (strcmp(o, "--mbufs") == 0) {
			if (pp_parse_u64(o, v, 1024, 1u << 26, &u) < 0)
				return -1;
			c->mbufs = (unsigned)u;
		} else if (strcmp(o, "--mbuf-size") == 0) {
			if (pp_parse_u64(o, v, 128, 65535 - RTE_PKTMBUF_HEADROOM, &u) < 0)
				return -1;
			c->mbuf_data = (unsigned)u;
		} else if (strcmp(o, "--ring-size") == 0) {
			if (pp_parse_u64(o, v, 64, 1u << 20, &u) < 0)
				return -1;
			if ((u & (u - 1)) != 0) {
				fprintf(stderr, "--ring-size %s: expected a power of two\n", v);
				return -1;
			}
			c->run.ring_size = (unsigned)u;
		} else {
			int used = app->parse_opt != NULL
				? app->parse_opt(app_cfg, argc - i, argv + i)
				: 0;
			if (used < 0)
				return -1;
			if (used == 0) {
				fprintf(stderr, "unknown option %s (see --help)\n", o);
				return -1;
			}
			i += used - 1;
			continue;
		}
		i++;
	}
	if (c->run.packets != 0 && c->run.duration_s > 0) {
		fprintf(stderr, "--packets and --duration: give one of them\n");
		return -1;
	}
	return 0;
}

static bool
variant_known(const struct pp_app *app, const char *v)
{
	if (app->variants == NULL)
		return true;
	for (const char *const *p = app->variants; *p != NULL; p++)
		if (strcmp(*p, v) == 0)
			return true;
	return false;
}

static void
print_placement(const struct pp_placement *pl, const struct pp_topology *t, const char *origin)
{
	printf("placement %s: app %s, variant %s, %u instance(s), co-location %s, valid on %s\n",
		origin, pl->app, pl->variant[0] ? pl->variant : "(none)", pl->n_instances,
		pl->allow_colocate ? "allowed" : "off", t->source);
	pp_topology_print_summary(t, stdout);
	for (unsigned i = 0; i < pl->n_instances; i++) {
		const struct pp_instance_placement *ip = &pl->instances[i];
		printf("instance %u: rx port %u queue %u, tx port %u queue %u\n", i, ip->rx.port,
			ip->rx.queue, ip->tx.port, ip->tx.queue);
		for (int r = 0; r < PP_N_ROLES; r++) {
			printf("  %s on ", pp_role_names[r]);
			pp_topology_print_context(t, ip->context[r], stdout);
			putchar('\n');
		}
	}
}

static volatile sig_atomic_t dummy;
static void
on_usr1(int sig)
{
	(void)sig;
	pp_request_stats();
	dummy = 1;
}

/* Check a parsed placement against the app and the topology and settle its
 * variant (--variant wins).  0, or -1 with a message in err. */
static int
settle_placement(struct pp_placement *pl, const char *origin, const struct pp_app *app,
	const struct pp_topology *topo, const char *variant_opt, char *err, size_t errlen)
{
	if (pp_placement_validate(pl, origin, app->name, topo, err, errlen) < 0)
		return -1;
	if (variant_opt != NULL)
		snprintf(pl->variant, sizeof(pl->variant), "%s", variant_opt);
	if (pl->variant[0] != '\0' && !variant_known(app, pl->variant)) {
		snprintf(err, errlen, "%s: variant \"%s\" is not one of %s's variants (see --help)",
			variant_opt != NULL ? "--variant" : origin, pl->variant, app->name);
		return -1;
	}
	return 0;
}

/* "0@(cpus the process may use),1@c1,2@c2,...": the main lcore floats, one
 * worker lcore per context. */
static char *
lcore_map(const unsigned *ctxs, unsigned n_ctx)
{
	size_t cap = 64 + 16 * ((size_t)CPU_SETSIZE + n_ctx), off;
	char *m = malloc(cap);
	cpu_set_t allowed;
	if (m == NULL)
		return NULL;
	CPU_ZERO(&allowed);
	sched_getaffinity(0, sizeof(allowed), &allowed);
	off = (size_t)snprintf(m, cap, "0@(");
	for (unsigned cpu = 0, first = 1; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &allowed)) {
			off += (size_t)snprintf(m + off, cap - off, "%s%u", first ? "" : ",", cpu);
			first = 0;
		}
	off += (size_t)snprintf(m + off, cap - off, ")");
	for (unsigned k = 0; k < n_ctx; k++)
		off += (size_t)snprintf(m + off, cap - off, ",%u@%u", k + 1, ctxs[k]);
	return m;
}

/* --serve: one placement per stdin line, one statistics line per run. */
static int
serve(struct pp_runtime *rt, const struct pp_topology *topo, struct cli *c)
{
	char *line = NULL, err[512], origin[64];
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0, failed = 0;
	while ((len = getline(&line, &cap, stdin)) >= 0) {
		lineno++;
		if (strspn(line, " \t\r\n") == (size_t)len)
			continue;
		snprintf(origin, sizeof(origin), "stdin line %u", lineno);
		struct pp_placement pl;
		json_t *out = NULL;
		int rc = pp_placement_parse(line, (size_t)len, origin, &pl, err, sizeof(err));
		if (rc == 0) {
			rc = settle_placement(
				&pl, origin, rt->app, topo, c->variant, err, sizeof(err));
			if (rc == 0) {
				rc = pp_run_placement(rt, &pl, origin,
					pl.variant[0] ? pl.variant : NULL, &c->run, &out);
				if (rc == 1 && out != NULL)
					snprintf(err, sizeof(err),
						"%s: measured, but the app's output is incomplete "
						"(messages on stderr)",
						origin);
				else if (rc == 1)
					snprintf(err, sizeof(err),
						"%s: the run failed (messages on stderr)", origin);
				else if (rc == 2)
					snprintf(err, sizeof(err), "%s: accounting violated",
						origin);
			}
			pp_placement_free(&pl);
		}
		if (out == NULL) {
			out = json_object();
			json_object_set_new(out, "error", json_string(err));
		} else {
			/* Whether this run found its ports up (kept from the run
			 * before) or had to start / reconfigure them. */
			json_t *ports = json_object();
			json_object_set_new(
				ports, "kept_up", json_boolean(rt->run_port_starts == 0));
			json_object_set_new(ports, "started", json_integer(rt->run_port_starts));
			json_object_set_new(
				ports, "reconfigured", json_integer(rt->run_port_configures));
			json_object_set_new(out, "ports", ports);
			if (rc == 1)
				json_object_set_new(out, "error", json_string(err));
		}
		json_object_set_new(out, "line", json_integer(lineno));
		json_dumpf(out, stdout, JSON_COMPACT | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(out);
		failed += rc != 0;
		if (fflush(stdout) != 0 || ferror(stdout)) {
			/* The reader went away (EPIPE, SIGPIPE is ignored): end cleanly. */
			fprintf(stderr,
				"pipeplace: cannot write to stdout (%s): stopping at line %u\n",
				strerror(errno), lineno);
			failed++;
			break;
		}
		if (pp_stop_requested())
			break;
	}
	free(line);
	/* Packets the ports received after the last run: counted, freed. */
	json_t *end = pp_run_close_ports(rt);
	if (end != NULL) {
		json_object_set_new(end, "lines", json_integer(lineno));
		fputs("pipeplace: serve end: ", stderr);
		json_dumpf(end, stderr, JSON_COMPACT);
		fputc('\n', stderr);
		json_decref(end);
	}
	return failed != 0;
}

int
pp_main(int argc, char **argv, const struct pp_app *app)
{
	int dashdash = argc;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dashdash = i;
			break;
		}
	/* --help before "--" too: a user asking for help should get it. */
	for (int i = 1; i < dashdash; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(app, stdout);
			return 0;
		}
	void *app_cfg = calloc(1, app->cfg_size > 0 ? app->cfg_size : 1);
	struct cli c = { .run = { .ring_size = DEFAULT_RING_SIZE },
		.mbuf_data = RTE_MBUF_DEFAULT_DATAROOM };
	struct pp_topology topo = { 0 };
	struct pp_placement pl = { 0 };
	char err[512], *lcores = NULL;
	const char *origin = NULL;
	bool eal_up = false;
	/* Exit status: 2 for what the command line (or a file or value it
	 * names) gets wrong, found before anything runs; 1 for a failure while
	 * running.  Every check up to EAL start is of the first kind. */
	int rc = PP_EXIT_USAGE;

	if (app_cfg == NULL)
		return 1;
	int prc = dashdash < argc
		? parse_cli(argc - dashdash - 1, argv + dashdash + 1, app, app_cfg, &c)
		: 0;
	if (prc != 0) {
		free(app_cfg);
		return prc > 0 ? 0 : PP_EXIT_USAGE;
	}
	int64_t app_mb = app->dpdk_mem_mb != NULL ? app->dpdk_mem_mb(app_cfg) : 0;
	if (app_mb < 0) {
		free(app_cfg);
		return PP_EXIT_USAGE;
	}
	c.run.stats_path = c.stats_path;
	if (pp_stats_check_path(c.stats_path) < 0) {
		free(app_cfg);
		return PP_EXIT_USAGE;
	}
	if (pp_topology_load(&topo, c.topology, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		/* hwloc failing to read this machine is not the user's doing */
		rc = c.topology != NULL ? PP_EXIT_USAGE : 1;
		goto out;
	}
	if (c.serve && (c.placement_path != NULL || c.check_only || c.stats_path != NULL)) {
		fprintf(stderr,
			"--serve reads placements on stdin and writes statistics on stdout: no "
			"--placement, --check-placement or --stats with it\n");
		goto out;
	}
	if (c.serve && c.run.packets == 0 && c.run.duration_s <= 0) {
		fprintf(stderr,
			"--serve needs --duration S or --packets N: every run must end by "
			"itself\n");
		goto out;
	}
	c.run.snapshots_to_stderr = c.serve;
	if (!c.serve) {
		int r;
		if (c.placement_path != NULL) {
			origin = c.placement_path;
			r = pp_placement_load_file(origin, &pl, err, sizeof(err));
		} else if (PP_HAVE_BUILTIN_PLACEMENT) {
			origin = PP_BUILTIN_PLACEMENT_ORIGIN;
			r = pp_placement_parse(pp_builtin_placement,
				sizeof(pp_builtin_placement) - 1, origin, &pl, err, sizeof(err));
		} else {
			fprintf(stderr, "no placement: give --placement FILE (see --help)\n");
			goto out;
		}
		if (r == 0)
			r = settle_placement(&pl, origin, app, &topo, c.variant, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "%s\n", err);
			goto out;
		}
		if (c.check_only) {
			print_placement(&pl, &topo, origin);
			rc = 0;
			goto out;
		}
	}
	if (topo.synthetic) {
		fprintf(stderr,
			"--topology %s: a synthetic topology cannot run tasks; use it with "
			"--check-placement\n",
			c.topology);
		goto out;
	}
	static const char *const lcore_opts[] = { "-l", "-c", "--lcores", "--main-lcore",
		"--master-lcore", NULL };
	if (pp_eal_has_arg(dashdash, argv, lcore_opts)) {
		fprintf(stderr,
			"EAL options: do not give -l, -c, --lcores or --main-lcore: the lcore map "
			"comes from the placement\n");
		goto out;
	}

	/* Worker lcores: the placement's contexts, or in serve mode every
	 * context this process may use (any later placement may want it). */
	static unsigned ctxs[PP_MAX_CONTEXTS];
	unsigned n_ctx = 0;
	if (c.serve) {
		cpu_set_t allowed;
		CPU_ZERO(&allowed);
		sched_getaffinity(0, sizeof(allowed), &allowed);
		for (unsigned k = 0; k < topo.n_contexts && n_ctx < PP_MAX_CONTEXTS; k++)
			if (topo.contexts[k] < CPU_SETSIZE && CPU_ISSET(topo.contexts[k], &allowed))
				ctxs[n_ctx++] = topo.contexts[k];
	} else {
		n_ctx = pp_placement_contexts(&pl, ctxs, PP_MAX_CONTEXTS);
	}
	for (unsigned k = 0; k < n_ctx; k++)
		if (ctxs[k] >= PP_MAX_CONTEXTS) {
			fprintf(stderr, "context %u: this build handles context numbers below %d\n",
				ctxs[k], PP_MAX_CONTEXTS);
			goto out;
		}
	if (n_ctx + 1 > RTE_MAX_LCORE || n_ctx == 0) {
		fprintf(stderr, "%u contexts to use; this DPDK has at most %d lcores\n", n_ctx,
			RTE_MAX_LCORE - 1);
		goto out;
	}
	lcores = lcore_map(ctxs, n_ctx);
	if (lcores == NULL) {
		rc = 1;
		goto out;
	}

	/* Pool: full rings and a burst in every stage of every instance; a
	 * smaller pool is safe (ports then receive less), a larger one is
	 * needed for captures net_pcap replays with infinite_rx (it keeps them
	 * in mbufs). */
	unsigned n_inst = c.serve ? n_ctx : pl.n_instances;
	if (c.mbufs == 0)
		c.mbufs = RTE_MAX(8191u, n_inst * (2 * c.run.ring_size + 3 * PP_BURST) + 4096);
	uint64_t need_mb = ((uint64_t)c.mbufs * (c.mbuf_data + MBUF_OVERHEAD) >> 20) + 64 +
		(uint64_t)app_mb + (uint64_t)n_inst * 2 * c.run.ring_size * 8 / (1 << 20);
	const char *const eal_extra[] = { "--lcores", lcores, NULL };
	struct pp_pcap_frames pcap_frames;
	pp_pcap_check(dashdash, argv, c.mbuf_data, "pipeplace", &pcap_frames);
	int erc = pp_eal_start(dashdash, argv, eal_extra, need_mb, "pipeplace");
	if (erc < 0) {
		rc = erc == PP_EAL_USAGE ? PP_EXIT_USAGE : 1;
		goto out;
	}
	eal_up = true;
	const char *pool_ops = pp_pool_ops_choose(c.pool_ops);
	if (pool_ops == NULL)
		goto out; /* a driver name this DPDK lacks or cannot use: still usage */
	rc = 1;
	pp_signal_setup(on_usr1);
	for (unsigned k = 0; k < c.n_attach; k++)
		if (pp_kif_attach(c.attach[k], c.attach_mode, "pipeplace") < 0)
			goto out;

	struct pp_runtime rt;
	memset(&rt, 0, sizeof(rt));
	rt.app = app;
	rt.app_cfg = app_cfg;
	rt.topo = &topo;
	rt.keep_ports_up = c.serve;
	for (unsigned k = 0; k < n_ctx; k++)
		rt.lcore_of_context[ctxs[k]] = k + 1;
	rt.pool = pp_pool_create(
		pool_ops, c.mbufs, c.mbuf_data, (int)pp_topology_numa_node(&topo, ctxs[0]));
	if (rt.pool == NULL)
		goto out;
	if (c.serve) {
		rc = serve(&rt, &topo, &c);
	} else {
		json_t *stats = NULL;
		rc = pp_run_placement(
			&rt, &pl, origin, pl.variant[0] ? pl.variant : NULL, &c.run, &stats);
		if (rc == 2)
			rc = 1; /* accounting violated: a failure while running, stats written */
		if (stats != NULL) {
			if (c.n_attach > 0)
				json_object_set_new(stats, "attached", pp_kif_json());
			if (pp_stats_write(stats, c.stats_path) < 0 && rc == 0)
				rc = 1;
			json_decref(stats);
		}
	}
out:
	if (eal_up) {
		pp_kif_close_all();
		pp_eal_stop();
	}
	free(lcores);
	pp_placement_free(&pl);
	pp_topology_free(&topo);
	free(app_cfg);
	return rc;
}
