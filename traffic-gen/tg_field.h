/* Header field generators: a field is fixed, incrementing over a range, or
 * random over a range.  Pure C (plus rte_rand) so that it is unit-tested
 * without EAL. */
#ifndef TG_FIELD_H
#define TG_FIELD_H

#include <stddef.h>
#include <stdint.h>

#include <rte_random.h>

enum tg_field_kind {
	TG_KIND_MAC,   /* 48 bits, aa:bb:cc:dd:ee:ff */
	TG_KIND_IPV4,  /* 32 bits, dotted quad; or IPv6 (below) */
	TG_KIND_PORT,  /* 16 bits, decimal */
	TG_KIND_U8,    /* 8 bits, decimal (TTL) */
	TG_KIND_PROTO, /* 8 bits, "udp", "tcp" or decimal */
	TG_KIND_VLAN,  /* 12 bits, a VLAN id 0-4095 */
};

enum tg_field_mode {
	TG_FIELD_FIXED,
	TG_FIELD_INC,    /* min, min+1, ..., max, min, ... */
	TG_FIELD_RANDOM, /* uniform in [min, max] */
};

/* An IPv6 address (TG_KIND_IPV4 given with ':') varies in its low 64 bits
 * (min..max); the high 64 bits (hi) are fixed, the same at both ends. */
struct tg_field {
	enum tg_field_mode mode;
	uint64_t min;
	uint64_t max;
	uint64_t cur;
	uint64_t hi;
	int v6;
};

/* Parses TEXT as one of:
 *   VALUE               fixed
 *   MIN-MAX             incrementing over [MIN, MAX] (wraps)
 *   MIN-MAX/inc         the same, spelled out
 *   MIN-MAX/random      uniform over [MIN, MAX]
 *   random              uniform over the whole field
 * Returns 0, or -1 with a message in ERR naming what was wrong. */
int tg_field_parse(
	struct tg_field *f, enum tg_field_kind kind, const char *text, char *err, size_t errlen);

/* Parses one value of KIND (no range). */
int tg_value_parse(enum tg_field_kind kind, const char *text, uint64_t *out);

/* Writes the field's textual form (for reports). */
void tg_field_format(const struct tg_field *f, enum tg_field_kind kind, char *buf, size_t len);

static inline uint64_t
tg_field_next(struct tg_field *f)
{
	uint64_t v;

	switch (f->mode) {
	case TG_FIELD_INC:
		v = f->cur;
		f->cur = (v == f->max) ? f->min : v + 1;
		return v;
	case TG_FIELD_RANDOM:
		return f->min + rte_rand_max(f->max - f->min + 1);
	default:
		return f->min;
	}
}

static inline void
tg_field_reset(struct tg_field *f)
{
	f->cur = f->min;
}

#endif
