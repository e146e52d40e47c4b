/* Parsing and formatting of header field specifications. */
#include "tg_field.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t kind_max[] = {
	[TG_KIND_MAC] = 0xffffffffffffULL,
	[TG_KIND_IPV4] = 0xffffffffULL,
	[TG_KIND_PORT] = 0xffff,
	[TG_KIND_U8] = 0xff,
	[TG_KIND_PROTO] = 0xff,
	[TG_KIND_VLAN] = 0xfff,
};

static const char *const kind_name[] = {
	[TG_KIND_MAC] = "a MAC address (aa:bb:cc:dd:ee:ff)",
	[TG_KIND_IPV4] = "an IPv4 address (a.b.c.d)",
	[TG_KIND_PORT] = "a port (0-65535)",
	[TG_KIND_U8] = "an 8-bit value (0-255)",
	[TG_KIND_PROTO] = "a protocol (udp, tcp or 0-255)",
	[TG_KIND_VLAN] = "a VLAN id (0-4095)",
};

/* "a:b::c" into its high and low 64 bits; 0 or -1. */
static int
parse_v6(const char *text, uint64_t *hi, uint64_t *lo)
{
	uint8_t a[16];

	if (inet_pton(AF_INET6, text, a) != 1)
		return -1;
	*hi = *lo = 0;
	for (int i = 0; i < 8; i++) {
		*hi = *hi << 8 | a[i];
		*lo = *lo << 8 | a[8 + i];
	}
	return 0;
}

static int
field_parse_v6(struct tg_field *f, const char *text, char *err, size_t errlen)
{
	char buf[128], *slash, *dash;
	uint64_t hi2;

	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "'%.40s...' is too long for an IPv6 address", text);
		return -1;
	}
	strcpy(buf, text);
	f->v6 = 1;
	f->mode = TG_FIELD_FIXED;
	slash = strchr(buf, '/');
	if (slash) {
		*slash++ = '\0';
		if (!strcmp(slash, "random"))
			f->mode = TG_FIELD_RANDOM;
		else if (!strcmp(slash, "inc"))
			f->mode = TG_FIELD_INC;
		else {
			snprintf(err, errlen,
				"'%s': unknown mode '%s' (expected MIN-MAX/inc or MIN-MAX/random)",
				text, slash);
			return -1;
		}
	}
	dash = strchr(buf, '-');
	if (!dash) {
		if (slash || parse_v6(buf, &f->hi, &f->min)) {
			snprintf(err, errlen, "'%s' is not an IPv6 address%s", text,
				slash ? " (a mode needs a range MIN-MAX)" : "");
			return -1;
		}
		f->max = f->cur = f->min;
		return 0;
	}
	*dash++ = '\0';
	if (parse_v6(buf, &f->hi, &f->min) || parse_v6(dash, &hi2, &f->max)) {
		snprintf(err, errlen, "'%s' is not a range MIN-MAX of IPv6 addresses", text);
		return -1;
	}
	if (hi2 != f->hi) {
		snprintf(err, errlen,
			"'%s': an IPv6 range varies the low 64 bits only: both ends need the "
			"same first 64 bits",
			text);
		return -1;
	}
	if (f->min > f->max) {
		snprintf(err, errlen, "'%s': range start is above its end", text);
		return -1;
	}
	if (!slash)
		f->mode = TG_FIELD_INC;
	f->cur = f->min;
	return 0;
}

static int
parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

int
tg_value_parse(enum tg_field_kind kind, const char *text, uint64_t *out)
{
	unsigned a[6];
	char tail;

	switch (kind) {
	case TG_KIND_MAC:
		if (strlen(text) != 17 ||
			sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &a[0], &a[1], &a[2], &a[3], &a[4],
				&a[5], &tail) != 6)
			return -1;
		*out = 0;
		for (int i = 0; i < 6; i++)
			*out = (*out << 8) | a[i];
		return 0;
	case TG_KIND_IPV4: {
		uint64_t v = 0, part;
		const char *p = text;
		char buf[4];

		for (int i = 0; i < 4; i++) {
			size_t n = strspn(p, "0123456789");
			if (n == 0 || n > 3)
				return -1;
			memcpy(buf, p, n);
			buf[n] = '\0';
			if (parse_uint(buf, 255, &part))
				return -1;
			v = (v << 8) | part;
			p += n;
			if (i < 3 && *p++ != '.')
				return -1;
		}
		if (*p)
			return -1;
		*out = v;
		return 0;
	}
	case TG_KIND_PROTO:
		if (!strcmp(text, "udp")) {
			*out = 17;
			return 0;
		}
		if (!strcmp(text, "tcp")) {
			*out = 6;
			return 0;
		}
		/* fall through */
	default:
		return parse_uint(text, kind_max[kind], out);
	}
}

int
tg_field_parse(
	struct tg_field *f, enum tg_field_kind kind, const char *text, char *err, size_t errlen)
{
	char buf[128];
	char *slash, *dash;
	enum tg_field_mode mode = TG_FIELD_INC;

	memset(f, 0, sizeof(*f));
	if (kind == TG_KIND_IPV4 && strchr(text, ':'))
		return field_parse_v6(f, text, err, errlen);
	if (!strcmp(text, "random")) {
		f->mode = TG_FIELD_RANDOM;
		f->max = kind_max[kind];
		return 0;
	}
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "'%.40s...' is too long for %s", text, kind_name[kind]);
		return -1;
	}
	strcpy(buf, text);
	slash = strchr(buf, '/');
	if (slash) {
		*slash++ = '\0';
		if (!strcmp(slash, "random"))
			mode = TG_FIELD_RANDOM;
		else if (strcmp(slash, "inc")) {
			snprintf(err, errlen,
				"'%s': unknown mode '%s' (expected MIN-MAX/inc or MIN-MAX/random)",
				text, slash);
			return -1;
		}
	}
	dash = strchr(buf, '-');
	if (!dash) {
		if (slash) {
			snprintf(err, errlen, "'%s': a mode needs a range MIN-MAX", text);
			return -1;
		}
		if (tg_value_parse(kind, buf, &f->min)) {
			snprintf(err, errlen, "'%s' is not %s", text, kind_name[kind]);
			return -1;
		}
		f->mode = TG_FIELD_FIXED;
		f->max = f->cur = f->min;
		return 0;
	}
	*dash++ = '\0';
	if (tg_value_parse(kind, buf, &f->min) || tg_value_parse(kind, dash, &f->max)) {
		snprintf(err, errlen, "'%s' is not a range MIN-MAX of %s", text, kind_name[kind]);
		return -1;
	}
	if (f->min > f->max) {
		snprintf(err, errlen, "'%s': range start is above its end", text);
		return -1;
	}
	f->mode = mode;
	f->cur = f->min;
	return 0;
}

static void
format_value(enum tg_field_kind kind, uint64_t v, char *buf, size_t len)
{
	switch (kind) {
	case TG_KIND_MAC:
		snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", (unsigned)(v >> 40) & 0xff,
			(unsigned)(v >> 32) & 0xff, (unsigned)(v >> 24) & 0xff,
			(unsigned)(v >> 16) & 0xff, (unsigned)(v >> 8) & 0xff, (unsigned)v & 0xff);
		break;
	case TG_KIND_IPV4:
		snprintf(buf, len, "%u.%u.%u.%u", (unsigned)(v >> 24) & 0xff,
			(unsigned)(v >> 16) & 0xff, (unsigned)(v >> 8) & 0xff, (unsigned)v & 0xff);
		break;
	default:
		snprintf(buf, len, "%" PRIu64, v);
	}
}

void
tg_field_format(const struct tg_field *f, enum tg_field_kind kind, char *buf, size_t len)
{
	char a[48], b[48];

	if (f->v6) {
		uint8_t x[16];

		for (int k = 0; k < 2; k++) {
			uint64_t lo = k ? f->max : f->min;

			for (int i = 0; i < 8; i++) {
				x[i] = (uint8_t)(f->hi >> (56 - 8 * i));
				x[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
			}
			inet_ntop(AF_INET6, x, k ? b : a, sizeof(a));
		}
		if (f->mode == TG_FIELD_FIXED)
			snprintf(buf, len, "%s", a);
		else
			snprintf(buf, len, "%s-%s/%s", a, b,
				f->mode == TG_FIELD_INC ? "inc" : "random");
		return;
	}
	format_value(kind, f->min, a, sizeof(a));
	if (f->mode == TG_FIELD_FIXED) {
		snprintf(buf, len, "%s", a);
		return;
	}
	format_value(kind, f->max, b, sizeof(b));
	snprintf(buf, len, "%s-%s/%s", a, b, f->mode == TG_FIELD_INC ? "inc" : "random");
}
