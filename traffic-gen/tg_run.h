/* One run of every TX job (with their current pps/limit) and RX job. */
#ifndef TG_RUN_H
#define TG_RUN_H

#include "tg_ctx.h"

int tg_run_once(struct tg_ctx *x, double duration_s, struct tg_result *r);

#endif
