/* Values of pp-tgen's keys that are more than a number or a boolean (those:
 * runtime/base/pp_parse.h).  Each returns 0, or -1 (with a message in err
 * where it takes one). */
#ifndef TG_VALUE_H
#define TG_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "tg_config.h"

/* "100000", "1.5M", "250k", "40%", "max" */
int tg_parse_rate(const char *t, enum tg_rate_kind *kind, double *rate);

/* "64", "imix" (7:4:1 of 64/570/1518) or "SIZE:WEIGHT,SIZE:WEIGHT,..." */
int tg_parse_sizes(const char *t, struct tg_size_mix *m, char *err, size_t errlen);

/* C-style escapes: \xNN, \n, \t, \r, \0, \\ */
int tg_parse_bytes(const char *t, uint8_t *out, size_t cap, size_t *len, char *err, size_t errlen);

/* The RFC 2544 frame sizes, as a size list */
int tg_parse_rfc_sizes(const char *t, struct tg_cfg *c, char *err, size_t errlen);

#endif
