/* Delay line: receive, hold for a fixed time, send on. */
#ifndef TG_DELAY_H
#define TG_DELAY_H

#include "tg_ctx.h"

int tg_delay_line(struct tg_ctx *x);

#endif
