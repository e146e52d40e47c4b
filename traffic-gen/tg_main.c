/* pp-tgen: DPDK traffic generator and sink.  See README.md and --help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pp_eal.h"
#include "pp_kif.h"
#include "pp_parse.h"
#include "pp_signal.h"
#include "tg_ctx.h"
#include "tg_cli.h"
#include "tg_delay.h"
#include "tg_report.h"
#include "tg_rfc2544.h"
#include "tg_run.h"
#include "tg_setup.h"

/* Memory the EAL gets when it must run without hugepages (--no-huge -m
 * TG_EAL_NEED_MB + 64): ample for the default pools. */
#define TG_EAL_NEED_MB 448

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
		if (pp_stop_signals)
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
	int dashdash, rc;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			tg_cfg_defaults(&cfg);
			return tg_cli_parse(&cfg, 1, &argv[i]) == 1 ? 0 : PP_EXIT_USAGE;
		}
	/* Without enough free hugepages, run from ordinary memory (as the apps
	 * do).  The EAL gets the arguments before "--", the rest are ours. */
	for (dashdash = 1; dashdash < argc && strcmp(argv[dashdash], "--"); dashdash++)
		;
	rc = pp_eal_start(dashdash, argv, NULL, TG_EAL_NEED_MB, "pp-tgen");
	if (rc < 0)
		return rc == PP_EAL_USAGE ? PP_EXIT_USAGE : 1;
	argc -= dashdash; /* argv[0] is now "--", or the end when there is none */
	argv += dashdash;
	tg_cfg_defaults(&cfg);
	rc = tg_cli_parse(&cfg, argc > 0 ? argc - 1 : 0, argv + 1);
	if (rc == 0)
		rc = tg_cfg_check(&cfg);
	if (rc) {
		pp_eal_stop();
		return rc > 0 ? 0 : PP_EXIT_USAGE;
	}
	cfg.live = cfg.live || isatty(STDERR_FILENO);
	pp_signal_setup(NULL);
	for (unsigned i = 0; i < cfg.n_attach; i++)
		if (pp_kif_attach(cfg.attach[i], (enum pp_kif_mode)cfg.attach_mode, "pp-tgen")) {
			pp_eal_stop();
			return 1;
		}
	if (tg_setup(&ctx, &cfg)) {
		pp_eal_stop();
		return 1;
	}
	pp_kif_report("pp-tgen"); /* after set-up: af_xdp may have fallen back there */
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
	pp_eal_stop();
	return rc ? 1 : 0;
}
