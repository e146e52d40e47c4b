/* Ports, jobs and workers from the configuration, and their teardown. */
#ifndef TG_SETUP_H
#define TG_SETUP_H

#include "tg_ctx.h"

int tg_setup(struct tg_ctx *x, struct tg_cfg *c);

/* Packets per second the stream asks for on this link (0: as fast as possible). */
double tg_stream_pps(const struct tg_ctx *x, const struct tg_stream_cfg *s);

void tg_teardown(struct tg_ctx *x);

#endif
