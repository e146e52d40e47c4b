/* Rules mode's reassembly options (see ids_opts.h). */
#include "ids_opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
ids_opts_init(struct ids_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->ttl_limit = 5;
	o->stream_window = 16384;
	o->stream_memcap = 64u << 20;
	o->stream_segments = 64;
	o->frag_memcap = 4u << 20;
	o->frag_max = 2048;
	o->frag_timeout_s = 60;
	o->http_max_body = 65536;
	o->http_max_ratio = 100;
}

static int
number(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *e;
	errno = 0;
	unsigned long long x = strtoull(v, &e, 10);
	if (errno != 0 || e == v || *e != '\0' || v[0] == '-' || x < lo || x > hi) {
		fprintf(stderr, "%s '%s': expected a whole number, %llu .. %llu\n", opt, v,
			(unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = x;
	return 0;
}

int
ids_opt_parse(struct ids_opts *o, int argc, char **argv)
{
	const char *opt = argv[0];
	if (strcmp(opt, "--decoder-alerts") == 0) {
		o->decoder_alerts = o->any = true;
		return 1;
	}
	if (strcmp(opt, "--no-http-decode") == 0) {
		o->no_http_decode = o->any = true;
		return 1;
	}
	static const char *const valued[] = { "--target-policy", "--ttl-limit", "--stream-window",
		"--stream-memcap", "--stream-segments", "--frag-timeout", "--frag-max",
		"--frag-memcap", "--frag-tiny", "--frag-max-overlaps", "--http-max-body",
		"--http-max-ratio" };
	unsigned k = 0;
	while (k < sizeof(valued) / sizeof(valued[0]) && strcmp(opt, valued[k]) != 0)
		k++;
	if (k == sizeof(valued) / sizeof(valued[0]))
		return 0;
	if (argc < 2 || argv[1][0] == '\0') {
		fprintf(stderr, "%s needs a value\n", opt);
		return -1;
	}
	const char *v = argv[1];
	o->any = true;
	int rc = 0;
	switch (k) {
	case 0:
		if (o->n_policy == IDS_MAX_POLICY_SPECS) {
			fprintf(stderr, "--target-policy: at most %d\n", IDS_MAX_POLICY_SPECS);
			return -1;
		}
		o->policy[o->n_policy++] = v;
		break;
	case 1:
		rc = number(opt, v, 0, 255, &o->ttl_limit);
		break;
	case 2:
		rc = number(opt, v, 1024, 1u << 24, &o->stream_window);
		break;
	case 3:
		rc = number(opt, v, 65536, 1ull << 40, &o->stream_memcap);
		break;
	case 4:
		rc = number(opt, v, 1, 254, &o->stream_segments);
		break;
	case 5: {
		char *e;
		double s = strtod(v, &e);
		if (e == v || *e != '\0' || !isfinite(s) || s <= 0 || s > 86400) {
			fprintf(stderr, "%s '%s': expected seconds, above 0, at most 86400\n", opt,
				v);
			return -1;
		}
		o->frag_timeout_s = s;
		break;
	}
	case 6:
		rc = number(opt, v, 1, 1u << 20, &o->frag_max);
		break;
	case 7:
		rc = number(opt, v, 4096, 1ull << 36, &o->frag_memcap);
		break;
	case 8:
		rc = number(opt, v, 0, 65535, &o->frag_tiny);
		break;
	case 9:
		rc = number(opt, v, 0, 65535, &o->frag_overlaps);
		break;
	case 10:
		rc = number(opt, v, 1024, 1u << 30, &o->http_max_body);
		break;
	default:
		rc = number(opt, v, 1, 1u << 20, &o->http_max_ratio);
	}
	return rc < 0 ? -1 : 2;
}

int
ids_opts_apply(const struct ids_opts *o, const struct ac_vars *vars, double ticks_per_s,
	struct ids_target_policy *tp, struct ids_engine_cfg *c, char *err, size_t errlen)
{
	ids_target_policy_init(tp);
	for (unsigned i = 0; i < o->n_policy; i++)
		if (ids_target_policy_add(tp, o->policy[i], vars, err, errlen) < 0) {
			ids_target_policy_free(tp);
			return -1;
		}
	c->policy = tp;
	c->decoder_alerts = o->decoder_alerts;
	c->ttl_limit = (uint8_t)o->ttl_limit;
	ids_defrag_cfg_default(&c->defrag);
	c->defrag.max_datagrams = (uint32_t)o->frag_max;
	c->defrag.memcap = (size_t)o->frag_memcap;
	c->defrag.timeout = (uint64_t)(o->frag_timeout_s * ticks_per_s);
	c->defrag.tiny = (uint16_t)o->frag_tiny;
	c->defrag.max_overlaps = (uint32_t)o->frag_overlaps;
	c->defrag.ttl_limit = (uint8_t)o->ttl_limit;
	ids_stream_cfg_default(&c->stream);
	c->stream.window = (uint32_t)o->stream_window;
	c->stream.memcap = (size_t)o->stream_memcap;
	c->stream.max_segs = (uint32_t)o->stream_segments;
	c->http.decode = !o->no_http_decode;
	c->http.max_decoded = (uint32_t)o->http_max_body;
	c->http.max_ratio = (uint32_t)o->http_max_ratio;
	return 0;
}
