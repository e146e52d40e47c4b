/* Values of pp-tgen's keys that are more than a number or a boolean (those
 * are runtime/base/pp_parse.h's): rates, size mixes, payload bytes. */
#include "tg_value.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_parse.h"

/* "100000", "1.5M", "250k", "40%", "max" */
int
tg_parse_rate(const char *t, enum tg_rate_kind *kind, double *rate)
{
	char buf[64];
	size_t n = strlen(t);
	double mult = 1;

	if (!strcmp(t, "max")) {
		*kind = TG_RATE_MAX;
		*rate = 0;
		return 0;
	}
	if (n == 0 || n >= sizeof(buf))
		return -1;
	strcpy(buf, t);
	if (buf[n - 1] == '%') {
		buf[n - 1] = '\0';
		*kind = TG_RATE_PCT;
		return pp_parse_double_value(buf, 1e-6, 100, rate);
	}
	if (buf[n - 1] == 'k' || buf[n - 1] == 'M') {
		mult = buf[n - 1] == 'k' ? 1e3 : 1e6;
		buf[n - 1] = '\0';
	}
	*kind = TG_RATE_PPS;
	if (pp_parse_double_value(buf, 1e-9, 1e12, rate))
		return -1;
	*rate *= mult;
	if (*rate < 1)
		return -1;
	return 0;
}

/* "64", "imix" (7:4:1 of 64/570/1518) or "SIZE:WEIGHT,SIZE:WEIGHT,..." */
int
tg_parse_sizes(const char *t, struct tg_size_mix *m, char *err, size_t errlen)
{
	char buf[256], *tok, *save = NULL;
	uint64_t v, w;

	if (!strcmp(t, "imix"))
		t = "64:7,570:4,1518:1";
	if (strlen(t) >= sizeof(buf)) {
		snprintf(err, errlen, "size list too long");
		return -1;
	}
	strcpy(buf, t);
	m->n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');

		w = 1;
		if (colon) {
			*colon++ = '\0';
			if (pp_parse_u64_value(colon, 1, 1000000, &w)) {
				snprintf(err, errlen, "weight '%s' is not an integer in 1..1000000",
					colon);
				return -1;
			}
		}
		if (pp_parse_u64_value(tok, TG_MIN_FRAME, TG_MAX_FRAME, &v)) {
			snprintf(err, errlen,
				"frame size '%s' is not an integer in %d..%d (bytes, FCS included)",
				tok, TG_MIN_FRAME, TG_MAX_FRAME);
			return -1;
		}
		if (m->n == TG_MAX_SIZES) {
			snprintf(err, errlen, "more than %d sizes", TG_MAX_SIZES);
			return -1;
		}
		m->size[m->n] = (uint16_t)v;
		m->weight[m->n] = (uint32_t)w;
		m->n++;
	}
	if (m->n == 0) {
		snprintf(err, errlen, "empty size list");
		return -1;
	}
	return 0;
}

/* C-style escapes: \xNN, \n, \t, \r, \0, \\ */
int
tg_parse_bytes(const char *t, uint8_t *out, size_t cap, size_t *len, char *err, size_t errlen)
{
	size_t n = *len;

	for (const char *p = t; *p; p++) {
		unsigned v = (unsigned char)*p;

		if (*p == '\\') {
			p++;
			switch (*p) {
			case 'x': {
				char hex[3] = { 0 };
				char *end;

				if (!p[1] || !p[2]) {
					snprintf(err, errlen, "'\\x' needs two hex digits");
					return -1;
				}
				hex[0] = p[1];
				hex[1] = p[2];
				v = (unsigned)strtoul(hex, &end, 16);
				if (*end) {
					snprintf(err, errlen, "'\\x%s' is not a hex byte", hex);
					return -1;
				}
				p += 2;
				break;
			}
			case 'n':
				v = '\n';
				break;
			case 't':
				v = '\t';
				break;
			case 'r':
				v = '\r';
				break;
			case '0':
				v = 0;
				break;
			case '\\':
				v = '\\';
				break;
			default:
				snprintf(err, errlen, "unknown escape '\\%c'", *p ? *p : ' ');
				return -1;
			}
		}
		if (n == cap) {
			snprintf(err, errlen, "payload longer than %zu bytes", cap);
			return -1;
		}
		out[n++] = (uint8_t)v;
	}
	*len = n;
	return 0;
}

int
tg_parse_rfc_sizes(const char *t, struct tg_cfg *c, char *err, size_t errlen)
{
	struct tg_size_mix m;

	if (tg_parse_sizes(t, &m, err, errlen))
		return -1;
	c->n_rfc_sizes = m.n;
	memcpy(c->rfc_size, m.size, sizeof(m.size[0]) * m.n);
	return 0;
}
