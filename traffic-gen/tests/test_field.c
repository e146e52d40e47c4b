/* Field generators: parsing of every form, bad input refused with a reason,
 * incrementing wraps, random stays inside its range and covers it. */
#include <string.h>

#include "check.h"
#include "tg_field.h"

int
main(void)
{
	struct tg_field f;
	char err[256];
	uint64_t seen[8] = { 0 };

	CHECK(tg_field_parse(&f, TG_KIND_IPV4, "10.0.0.1", err, sizeof(err)) == 0);
	CHECK(f.mode == TG_FIELD_FIXED && f.min == 0x0a000001);
	CHECK(tg_field_next(&f) == 0x0a000001 && tg_field_next(&f) == 0x0a000001);

	CHECK(tg_field_parse(&f, TG_KIND_MAC, "02:00:00:00:00:ff", err, sizeof(err)) == 0);
	CHECK(f.min == 0x0200000000ffULL);

	CHECK(tg_field_parse(&f, TG_KIND_PORT, "1000-1002", err, sizeof(err)) == 0);
	CHECK(f.mode == TG_FIELD_INC);
	CHECK(tg_field_next(&f) == 1000 && tg_field_next(&f) == 1001 && tg_field_next(&f) == 1002);
	CHECK(tg_field_next(&f) == 1000); /* wraps */

	CHECK(tg_field_parse(&f, TG_KIND_IPV4, "10.0.0.250-10.0.1.1/inc", err, sizeof(err)) == 0);
	for (int i = 0; i < 6; i++)
		tg_field_next(&f);
	CHECK(tg_field_next(&f) >= 0x0a0000fa);
	CHECK(f.max == 0x0a000101);

	CHECK(tg_field_parse(&f, TG_KIND_U8, "10-17/random", err, sizeof(err)) == 0);
	CHECK(f.mode == TG_FIELD_RANDOM);
	for (int i = 0; i < 10000; i++) {
		uint64_t v = tg_field_next(&f);

		CHECK(v >= 10 && v <= 17);
		if (v >= 10 && v <= 17)
			seen[v - 10]++;
	}
	for (int i = 0; i < 8; i++)
		CHECK(seen[i] > 1000 && seen[i] < 1500); /* ~1250 each */

	CHECK(tg_field_parse(&f, TG_KIND_PROTO, "tcp", err, sizeof(err)) == 0 && f.min == 6);
	CHECK(tg_field_parse(&f, TG_KIND_PROTO, "udp", err, sizeof(err)) == 0 && f.min == 17);
	CHECK(tg_field_parse(&f, TG_KIND_PORT, "random", err, sizeof(err)) == 0 && f.max == 65535);

	/* Refused, with the offending text in the message. */
	CHECK(tg_field_parse(&f, TG_KIND_IPV4, "10.0.0.256", err, sizeof(err)) == -1);
	CHECK(strstr(err, "10.0.0.256") != NULL);
	CHECK(tg_field_parse(&f, TG_KIND_IPV4, "10.0.0", err, sizeof(err)) == -1);
	CHECK(tg_field_parse(&f, TG_KIND_PORT, "65536", err, sizeof(err)) == -1);
	CHECK(tg_field_parse(&f, TG_KIND_PORT, "20-10", err, sizeof(err)) == -1);
	CHECK(strstr(err, "above") != NULL);
	CHECK(tg_field_parse(&f, TG_KIND_PORT, "10-20/sideways", err, sizeof(err)) == -1);
	CHECK(strstr(err, "sideways") != NULL);
	CHECK(tg_field_parse(&f, TG_KIND_PORT, "10/random", err, sizeof(err)) == -1);
	CHECK(tg_field_parse(&f, TG_KIND_MAC, "02:00:00:00:00", err, sizeof(err)) == -1);
	CHECK(tg_field_parse(&f, TG_KIND_U8, "-1", err, sizeof(err)) == -1);
	CHECK(tg_field_parse(&f, TG_KIND_U8, "", err, sizeof(err)) == -1);

	tg_field_parse(&f, TG_KIND_IPV4, "1.2.3.4-1.2.3.9/random", err, sizeof(err));
	tg_field_format(&f, TG_KIND_IPV4, err, sizeof(err));
	CHECK(strcmp(err, "1.2.3.4-1.2.3.9/random") == 0);
	return CHECK_DONE();
}
