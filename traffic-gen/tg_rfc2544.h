/* RFC 2544 throughput search, frame size by frame size. */
#ifndef TG_RFC2544_H
#define TG_RFC2544_H

#include "tg_ctx.h"

int tg_rfc2544(struct tg_ctx *x);

#endif
