/* One setter per key, shared by profiles and flags: 1 when KEY is one of
 * theirs and was applied, 0 when it is not, -1 on a bad value (message in
 * err, to be prefixed with the key and its source). */
#ifndef TG_KEYS_H
#define TG_KEYS_H

#include <stddef.h>

#include "tg_config.h"

/* A stream key (src_ip, size, rate, ...). */
int tg_set_stream_key(
	struct tg_stream_cfg *s, const char *key, const char *val, char *err, size_t errlen);

/* A key of the whole run (tx_port, duration, mode, ...). */
int tg_set_global_key(struct tg_cfg *c, const char *key, const char *val, char *err, size_t errlen);

#endif
