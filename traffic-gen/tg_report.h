/* The statistics JSON of a run, and where it goes. */
#ifndef TG_REPORT_H
#define TG_REPORT_H

#include <jansson.h>

#include "tg_ctx.h"

json_t *tg_report_latency(const struct tg_hist *h, double hz);

json_t *tg_report_run(const struct tg_ctx *x, const struct tg_result *r);

/* To --stats FILE or stdout; 0, or -1 after saying why. */
int tg_report_write(const struct tg_cfg *c, json_t *root);

#endif
