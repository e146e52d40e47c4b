/* pp-tgen: DPDK traffic generator and sink.  See README.md and --help. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "tg_ctx.h"

/* Free hugepages of every size; 0 when none are set up or readable. */
static unsigned long
free_hugepages(void)
{
	static const char *const files[] = {
		"/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
		"/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages",
	};
	unsigned long total = 0, n;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f = fopen(files[i], "r");

		if (f) {
			if (fscanf(f, "%lu", &n) == 1)
				total += n;
			fclose(f);
		}
	}
	return total;
}

static void
on_signal(int sig)
{
	(void)sig;
	tg_signal++;
}

static int
generate(struct tg_ctx *x)
{
	struct tg_result *r = calloc(1, sizeof(*r));
	json_t *root;
	int rc;

	if (!r) {
		fprintf(stderr, "pp-tgen: out of memory\n");
		return -1;
	}
	rc = tg_run_once(x, x->cfg->duration_s, r);
	if (rc == 0) {
		root = tg_report_run(x, r);
		if (tg_signal)
			json_object_set_new(root, "interrupted", json_true());
		rc = tg_report_write(x->cfg, root);
		json_decref(root);
	}
	free(r);
	return rc;
}

int
main(int argc, char **argv)
{
	static struct tg_cfg cfg;
	static struct tg_ctx ctx;
	int n, rc;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			tg_cfg_defaults(&cfg);
			return tg_cli_parse(&cfg, 1, &argv[i]) == 1 ? 0 : 2;
		}
	/* Without free hugepages, run from ordinary memory (as the apps do). */
	{
		static char *nargv[512];
		static char no_huge[] = "--no-huge", mem[] = "-m", mem_mb[] = "512";
		bool asked = false;

		for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
			asked |= !strcmp(argv[i], "--no-huge");
		if (!asked && free_hugepages() == 0 && argc + 3 < (int)(sizeof(nargv) / sizeof(nargv[0]))) {
			fprintf(stderr, "pp-tgen: no free hugepages: adding --no-huge -m 512\n");
			nargv[0] = argv[0];
			nargv[1] = no_huge;
			nargv[2] = mem;
			nargv[3] = mem_mb;
			for (int i = 1; i < argc; i++)
				nargv[i + 3] = argv[i];
			argc += 3;
			argv = nargv;
		}
	}
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "pp-tgen: EAL initialisation failed: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	argc -= n;
	argv += n;
	tg_cfg_defaults(&cfg);
	rc = tg_cli_parse(&cfg, argc - 1, argv + 1);
	if (rc == 0)
		rc = tg_cfg_check(&cfg);
	if (rc) {
		rte_eal_cleanup();
		return rc > 0 ? 0 : 2;
	}
	cfg.live = cfg.live || isatty(STDERR_FILENO);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (tg_setup(&ctx, &cfg)) {
		rte_eal_cleanup();
		return 1;
	}
	ctx.live = cfg.live;
	switch (cfg.mode) {
	case TG_MODE_RFC2544:
		rc = tg_rfc2544(&ctx);
		break;
	case TG_MODE_DELAY:
		rc = tg_delay_line(&ctx);
		break;
	default:
		rc = generate(&ctx);
	}
	tg_teardown(&ctx);
	rte_eal_cleanup();
	return rc ? 1 : 0;
}
