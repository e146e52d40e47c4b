/* Profiles (JSON) and flags share one setter per key, so every profile key is
 * also a flag (--src-ip = "src_ip") and errors name the key and its source. */
#include "tg_config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pp_parse.h"
#include "tg_sig.h"
#include "tg_yaml.h"

const char *const tg_field_key[TG_F_COUNT] = {
	[TG_F_DST_MAC] = "dst_mac", [TG_F_SRC_MAC] = "src_mac", [TG_F_SRC_IP] = "src_ip",
	[TG_F_DST_IP] = "dst_ip",   [TG_F_SPORT] = "sport",     [TG_F_DPORT] = "dport",
	[TG_F_TTL] = "ttl",         [TG_F_PROTO] = "proto",
};

static const enum tg_field_kind field_kind[TG_F_COUNT] = {
	TG_KIND_MAC, TG_KIND_MAC, TG_KIND_IPV4, TG_KIND_IPV4,
	TG_KIND_PORT, TG_KIND_PORT, TG_KIND_U8, TG_KIND_PROTO,
};

static const char *const field_default[TG_F_COUNT] = {
	"02:00:00:00:00:02", "02:00:00:00:00:01", "10.0.0.1", "10.1.0.1",
	"1024", "1024", "64", "udp",
};

void
tg_stream_defaults(struct tg_stream_cfg *s, unsigned index)
{
	char err[128];

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "stream%u", index);
	for (int i = 0; i < TG_F_COUNT; i++)
		tg_field_parse(&s->field[i], field_kind[i], field_default[i], err, sizeof(err));
	s->sizes.n = 1;
	s->sizes.size[0] = 64;
	s->sizes.weight[0] = 1;
	s->rate_kind = TG_RATE_MAX;
	s->signature = true;
}

void
tg_cfg_defaults(struct tg_cfg *c)
{
	static const uint16_t rfc[] = {64, 128, 256, 512, 1024, 1280, 1518};

	memset(c, 0, sizeof(*c));
	c->mode = TG_MODE_GEN;
	c->tx_port = 0;
	c->rx_port = -1;
	c->tx_queues = 1;
	c->rx_queues = 1;
	c->drain_s = 0.2;
	c->link_wait_s = 10;
	c->mbufs = 4095;
	c->n_rfc_sizes = sizeof(rfc) / sizeof(rfc[0]);
	memcpy(c->rfc_size, rfc, sizeof(rfc));
	c->trial_s = 10;
	c->resolution_pct = 0.1;
	c->out_port = -1;
	c->capacity_burst = 32;
}

/* ---- value parsers ---------------------------------------------------- */

/* "100000", "1.5M", "250k", "40%", "max" */
static int
parse_rate(const char *t, enum tg_rate_kind *kind, double *rate)
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
static int
parse_sizes(const char *t, struct tg_size_mix *m, char *err, size_t errlen)
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
static int
parse_bytes(const char *t, uint8_t *out, size_t cap, size_t *len, char *err, size_t errlen)
{
	size_t n = *len;

	for (const char *p = t; *p; p++) {
		unsigned v = (unsigned char)*p;

		if (*p == '\\') {
			p++;
			switch (*p) {
			case 'x': {
				char hex[3] = {0};
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
			case 'n': v = '\n'; break;
			case 't': v = '\t'; break;
			case 'r': v = '\r'; break;
			case '0': v = 0; break;
			case '\\': v = '\\'; break;
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

static int
parse_rfc_sizes(const char *t, struct tg_cfg *c, char *err, size_t errlen)
{
	struct tg_size_mix m;

	if (parse_sizes(t, &m, err, errlen))
		return -1;
	c->n_rfc_sizes = m.n;
	memcpy(c->rfc_size, m.size, sizeof(m.size[0]) * m.n);
	return 0;
}

/* ---- keys -------------------------------------------------------------- */

/* 1: KEY is a stream key and was applied, 0: not a stream key, -1: bad value */
static int
set_stream_key(struct tg_stream_cfg *s, const char *key, const char *val, char *err,
	       size_t errlen)
{
	uint64_t u;

	for (int i = 0; i < TG_F_COUNT; i++)
		if (!strcmp(key, tg_field_key[i]))
			return tg_field_parse(&s->field[i], field_kind[i], val, err, errlen) ? -1 : 1;
	if (!strcmp(key, "name")) {
		snprintf(s->name, sizeof(s->name), "%s", val);
		return 1;
	}
	if (!strcmp(key, "size"))
		return parse_sizes(val, &s->sizes, err, errlen) ? -1 : 1;
	if (!strcmp(key, "rate")) {
		if (parse_rate(val, &s->rate_kind, &s->rate)) {
			snprintf(err, errlen,
				 "'%s' is not a rate (PPS like 100000 or 1.5M, PERCENT%% of the link, or max)",
				 val);
			return -1;
		}
		return 1;
	}
	if (!strcmp(key, "flows")) {
		if (pp_parse_u64_value(val, 0, 1u << 20, &u)) {
			snprintf(err, errlen, "'%s' is not a flow count in 0..1048576", val);
			return -1;
		}
		s->flows = (uint32_t)u;
		return 1;
	}
	if (!strcmp(key, "payload")) {
		size_t len = s->payload_len;

		if (parse_bytes(val, s->payload, sizeof(s->payload), &len, err, errlen))
			return -1;
		s->payload_len = (uint16_t)len;
		return 1;
	}
	if (!strcmp(key, "fill")) {
		if (pp_parse_u64_value(val, 0, 255, &u)) {
			snprintf(err, errlen, "'%s' is not a byte value 0..255", val);
			return -1;
		}
		s->fill = (uint8_t)u;
		return 1;
	}
	if (!strcmp(key, "pcap")) {
		if (strlen(val) >= sizeof(s->pcap)) {
			snprintf(err, errlen, "path too long");
			return -1;
		}
		strcpy(s->pcap, val);
		return 1;
	}
	if (!strcmp(key, "loops")) {
		if (pp_parse_u64_value(val, 0, UINT64_MAX, &s->loops)) {
			snprintf(err, errlen, "'%s' is not a loop count (0 = until stopped)", val);
			return -1;
		}
		return 1;
	}
	if (!strcmp(key, "signature")) {
		if (pp_parse_bool_value(val, &s->signature)) {
			snprintf(err, errlen, "'%s' is not true or false", val);
			return -1;
		}
		return 1;
	}
	return 0;
}

static int
set_global_key(struct tg_cfg *c, const char *key, const char *val, char *err, size_t errlen)
{
	uint64_t u;
	double d;

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
	if (!strcmp(key, "mode")) {
		if (!strcmp(val, "gen"))
			c->mode = TG_MODE_GEN;
		else if (!strcmp(val, "rfc2544"))
			c->mode = TG_MODE_RFC2544;
		else if (!strcmp(val, "delay"))
			c->mode = TG_MODE_DELAY;
		else
			BAD("'%s' is not a mode (gen, rfc2544, delay)", val);
		return 1;
	}
	if (!strcmp(key, "tx_port") || !strcmp(key, "rx_port") || !strcmp(key, "out_port")) {
		int *p = key[0] == 't' ? &c->tx_port : key[0] == 'r' ? &c->rx_port : &c->out_port;

		if (!strcmp(val, "none")) {
			*p = -1;
			return 1;
		}
		if (pp_parse_u64_value(val, 0, 1023, &u))
			BAD("'%s' is not a port index (0..1023) or none", val);
		*p = (int)u;
		return 1;
	}
	if (!strcmp(key, "tx_queues") || !strcmp(key, "rx_queues")) {
		if (pp_parse_u64_value(val, 1, 16, &u))
			BAD("'%s' is not a queue count in 1..16", val);
		*(key[0] == 't' ? &c->tx_queues : &c->rx_queues) = (unsigned)u;
		return 1;
	}
	if (!strcmp(key, "duration")) {
		if (pp_parse_double_value(val, 0, 1e7, &c->duration_s))
			BAD("'%s' is not a duration in seconds", val);
		return 1;
	}
	if (!strcmp(key, "packets")) {
		if (pp_parse_u64_value(val, 0, UINT64_MAX, &c->packets))
			BAD("'%s' is not a packet count", val);
		return 1;
	}
	if (!strcmp(key, "link_gbps")) {
		if (pp_parse_double_value(val, 1e-6, 10000, &c->link_gbps))
			BAD("'%s' is not a link speed in Gb/s", val);
		return 1;
	}
	if (!strcmp(key, "drain")) {
		if (pp_parse_double_value(val, 0, 60, &c->drain_s))
			BAD("'%s' is not a drain time in seconds (0..60)", val);
		return 1;
	}
	if (!strcmp(key, "start_after")) {
		if (pp_parse_double_value(val, 0, 3600, &c->start_after_s))
			BAD("'%s' is not a time in seconds (0..3600)", val);
		return 1;
	}
	if (!strcmp(key, "peer_wait")) {
		if (pp_parse_double_value(val, 0, 3600, &c->peer_wait_s))
			BAD("'%s' is not a time in seconds (0..3600)", val);
		return 1;
	}
	if (!strcmp(key, "link_wait")) {
		if (pp_parse_double_value(val, 0, 3600, &c->link_wait_s))
			BAD("'%s' is not a time in seconds (0..3600)", val);
		return 1;
	}
	if (!strcmp(key, "stats")) {
		if (strlen(val) >= sizeof(c->stats_path))
			BAD("path too long");
		strcpy(c->stats_path, val);
		return 1;
	}
	if (!strcmp(key, "live") || !strcmp(key, "tx_retry")) {
		if (pp_parse_bool_value(val, key[0] == 'l' ? &c->live : &c->tx_retry))
			BAD("'%s' is not true or false", val);
		return 1;
	}
	if (!strcmp(key, "mbufs")) {
		if (pp_parse_u64_value(val, 255, 1u << 20, &u))
			BAD("'%s' is not a pool size in 255..1048576", val);
		c->mbufs = (unsigned)u;
		return 1;
	}
	if (!strcmp(key, "frame_sizes"))
		return parse_rfc_sizes(val, c, err, errlen) ? -1 : 1;
	if (!strcmp(key, "trial")) {
		if (pp_parse_double_value(val, 0.01, 3600, &c->trial_s))
			BAD("'%s' is not a trial duration in seconds (0.01..3600)", val);
		return 1;
	}
	if (!strcmp(key, "resolution")) {
		if (pp_parse_double_value(val, 1e-4, 50, &c->resolution_pct))
			BAD("'%s' is not a resolution in percent of the search's upper bound (0.0001..50)", val);
		return 1;
	}
	if (!strcmp(key, "loss_tolerance")) {
		if (pp_parse_double_value(val, 0, 100, &c->loss_tolerance_pct))
			BAD("'%s' is not a loss tolerance in percent (0..100)", val);
		return 1;
	}
	if (!strcmp(key, "delay_us")) {
		if (pp_parse_double_value(val, 0, 1e7, &d))
			BAD("'%s' is not a delay in microseconds", val);
		c->delay_us = d;
		return 1;
	}
	if (!strcmp(key, "capacity_burst")) {
		if (pp_parse_double_value(val, 1, 1e9, &c->capacity_burst))
			BAD("'%s' is not a bucket depth in packets (>= 1)", val);
		return 1;
	}
	if (!strcmp(key, "capacity_pps")) {
		if (pp_parse_double_value(val, 0, 1e10, &c->capacity_pps))
			BAD("'%s' is not a packet rate", val);
		return 1;
	}
#undef BAD
	return 0;
}

/* ---- JSON profile ------------------------------------------------------ */

/* Scalars become the same text a flag would carry. */
static int
json_text(json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.17g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else
		return -1;
	return 0;
}

static int
load_stream(struct tg_stream_cfg *s, json_t *obj, const char *path, unsigned idx)
{
	const char *key;
	json_t *v;
	char text[2048], err[256];

	if (!json_is_object(obj)) {
		fprintf(stderr, "pp-tgen: profile %s: streams[%u]: expected an object\n", path, idx);
		return -1;
	}
	json_object_foreach(obj, key, v) {
		int r;

		if (!strcmp(key, "payload") && json_is_array(v)) {
			size_t i;
			json_t *e;

			s->payload_len = 0;
			json_array_foreach(v, i, e) {
				if (!json_is_string(e)) {
					fprintf(stderr,
						"pp-tgen: profile %s: streams[%u].payload[%zu]: expected a string\n",
						path, idx, i);
					return -1;
				}
				if (set_stream_key(s, "payload", json_string_value(e), err,
						   sizeof(err)) < 0) {
					fprintf(stderr, "pp-tgen: profile %s: streams[%u].payload[%zu]: %s\n",
						path, idx, i, err);
					return -1;
				}
			}
			continue;
		}
		if (json_text(v, text, sizeof(text))) {
			fprintf(stderr, "pp-tgen: profile %s: streams[%u].%s: expected a string, number or boolean\n",
				path, idx, key);
			return -1;
		}
		if (!strcmp(key, "payload"))
			s->payload_len = 0;
		r = set_stream_key(s, key, text, err, sizeof(err));
		if (r == 0) {
			fprintf(stderr, "pp-tgen: profile %s: streams[%u]: unknown key '%s'\n", path, idx,
				key);
			return -1;
		}
		if (r < 0) {
			fprintf(stderr, "pp-tgen: profile %s: streams[%u].%s: %s\n", path, idx, key, err);
			return -1;
		}
	}
	return 0;
}

static bool
is_yaml(const char *path)
{
	size_t n = strlen(path);

	return (n > 5 && !strcmp(path + n - 5, ".yaml")) || (n > 4 && !strcmp(path + n - 4, ".yml"));
}

int
tg_profile_load(struct tg_cfg *c, const char *path)
{
	json_error_t jerr;
	json_t *root, *v;
	const char *key;
	char text[2048], err[256];
	int rc = -1;

	if (is_yaml(path)) {
		root = tg_yaml_load(path, err, sizeof(err));
		if (!root) {
			fprintf(stderr, "pp-tgen: profile %s: %s\n", path, err);
			return -1;
		}
	} else {
		root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
		if (!root) {
			fprintf(stderr, "pp-tgen: profile %s: line %d column %d: %s\n", path,
				jerr.line, jerr.column, jerr.text);
			return -1;
		}
	}
	if (!json_is_object(root)) {
		fprintf(stderr, "pp-tgen: profile %s: the top level must be an object\n", path);
		goto out;
	}
	json_object_foreach(root, key, v) {
		int r;

		if (!strcmp(key, "streams")) {
			size_t i;
			json_t *e;

			if (!json_is_array(v) || json_array_size(v) == 0 ||
			    json_array_size(v) > TG_MAX_STREAMS) {
				fprintf(stderr,
					"pp-tgen: profile %s: streams: expected an array of 1..%d objects\n",
					path, TG_MAX_STREAMS);
				goto out;
			}
			c->n_streams = (unsigned)json_array_size(v);
			json_array_foreach(v, i, e) {
				tg_stream_defaults(&c->stream[i], (unsigned)i);
				if (load_stream(&c->stream[i], e, path, (unsigned)i))
					goto out;
			}
			continue;
		}
		if (!strcmp(key, "comment"))
			continue;
		if (json_text(v, text, sizeof(text))) {
			fprintf(stderr, "pp-tgen: profile %s: %s: expected a string, number or boolean\n",
				path, key);
			goto out;
		}
		r = set_global_key(c, key, text, err, sizeof(err));
		if (r == 0) {
			fprintf(stderr, "pp-tgen: profile %s: unknown key '%s'\n", path, key);
			goto out;
		}
		if (r < 0) {
			fprintf(stderr, "pp-tgen: profile %s: %s: %s\n", path, key, err);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

/* ---- command line ------------------------------------------------------ */

static const char usage[] =
"usage: pp-tgen [EAL options] -- [options]\n"
"\n"
"Generates IPv4 UDP/TCP traffic or replays pcaps on DPDK ports, receives it\n"
"back and measures loss, reordering, duplicates and latency; finds the RFC 2544\n"
"throughput; or acts as a delay line.  Every profile key is also a flag:\n"
"key foo_bar is --foo-bar VALUE.  Stream flags apply to every stream of the\n"
"profile (or define the only stream when no profile is given).\n"
"\n"
"General:\n"
"  --profile FILE        JSON profile: {global keys..., \"streams\": [{stream keys}]},\n"
"                        or the same in YAML (FILE ending in .yaml or .yml)\n"
"  --mode gen|rfc2544|delay   (default gen)\n"
"  --tx-port N|none      port to transmit on (default 0)\n"
"  --rx-port N|none      port to receive and measure on (default none)\n"
"  --tx-queues N         TX queues per stream, spread over the worker lcores\n"
"                        (default 1)\n"
"  --rx-queues N         RX queues (default 1)\n"
"  --duration S          seconds to transmit (0 = until --packets or Ctrl-C)\n"
"  --packets N           packets per stream (0 = unlimited)\n"
"  --link-gbps G         link speed for % rates (default: the port's reported\n"
"                        speed for physical ports, 10 for virtual ones)\n"
"  --drain S             seconds to keep receiving after TX stops, and then\n"
"                        until nothing arrived for 0.1 s (at most 5 s more)\n"
"                        (default 0.2)\n"
"  --link-wait S         wait this long for links to come up (default 10)\n"
"  --start-after S       then wait this long before the first packet, so that\n"
"                        a peer that just connected is polling (default 0)\n"
"  --peer-wait S         at the end, stop polling and keep the ports open until\n"
"                        every link is down (the peer left) or S seconds passed\n"
"                        (default 0): with net_memif, the side that finishes\n"
"                        first must not leave while its peer still polls\n"
"  --stats FILE          final statistics JSON (default: stdout)\n"
"  --live                one line of statistics per second on stderr (default\n"
"                        when stderr is a terminal)\n"
"  --tx-retry            retry when the TX queue is full (back-pressure) instead\n"
"                        of dropping and counting the packet as link_full\n"
"  --mbufs N             mbufs per TX queue pool (default 4095)\n"
"\n"
"Stream (template) keys:\n"
"  --dst-mac --src-mac --src-ip --dst-ip --sport --dport --ttl --proto FIELD\n"
"      FIELD: VALUE | MIN-MAX (incrementing) | MIN-MAX/inc | MIN-MAX/random | random\n"
"      proto: udp, tcp or 0-255 (one stream may not mix tcp with others)\n"
"  --size S              frame size incl. FCS (64..1518), 'imix' (64:7,570:4,1518:1)\n"
"                        or SIZE:WEIGHT,... (default 64)\n"
"  --rate R              pps (100000, 250k, 1.5M), PERCENT% of the link, or max\n"
"                        (% counts 20 bytes of preamble+IFG per frame)\n"
"  --flows N             cycle over N precomputed flows (random fields drawn once\n"
"                        per flow); 0 = fields advance every packet (default)\n"
"  --payload BYTES       bytes after the signature (\\xNN escapes); repeat to append\n"
"  --fill N              byte filling the rest of the payload (default 0)\n"
"  --signature BOOL      sequence/timestamp signature (default true)\n"
"  --no-signature        same as --signature false\n"
"  --name NAME           stream name in the statistics\n"
"  --pcap FILE           replay this pcap/pcapng instead of a template\n"
"  --loops N             pcap passes (0 = until duration/packets)\n"
"\n"
"RFC 2544 throughput (--mode rfc2544; needs --rx-port):\n"
"  --frame-sizes LIST    default 64,128,256,512,1024,1280,1518\n"
"  --trial S             trial duration (default 10; RFC 2544 asks 60)\n"
"  --resolution PCT      search stops when the pass/fail interval is this % of\n"
"                        the upper bound (the link rate, or --rate) (0.1)\n"
"  --loss-tolerance PCT  highest loss a passing trial may have (default 0)\n"
"\n"
"Delay line (--mode delay): receive on --rx-port, hold each packet --delay-us\n"
"microseconds, send on --out-port (default the same port); --capacity-pps drops\n"
"what exceeds a rate (a device under test of known capacity), with a token\n"
"bucket --capacity-burst packets deep (default 32).\n"
"\n"
"Every figure printed is measured on this run and labelled so.\n";

int
tg_cli_parse(struct tg_cfg *c, int argc, char **argv)
{
	char key[64], err[256];
	int first_stream_flag = 1;

	/* The profile first, so that flags override it wherever they appear. */
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 1;
		}
		if (!strcmp(argv[i], "--profile")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "pp-tgen: --profile needs a file\n");
				return -1;
			}
			if (tg_profile_load(c, argv[i + 1]))
				return -1;
		}
	}
	if (c->n_streams == 0) {
		c->n_streams = 1;
		tg_stream_defaults(&c->stream[0], 0);
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *val;
		int r = 0;
		size_t k;

		if (strncmp(a, "--", 2) || strlen(a) - 2 >= sizeof(key)) {
			fprintf(stderr, "pp-tgen: unexpected argument '%s' (see --help)\n", a);
			return -1;
		}
		if (!strcmp(a, "--profile")) {
			i++;
			continue;
		}
		for (k = 0; a[k + 2]; k++)
			key[k] = a[k + 2] == '-' ? '_' : a[k + 2];
		key[k] = '\0';
		if (!strcmp(key, "live") || !strcmp(key, "tx_retry")) {
			val = "true";
		} else if (!strcmp(key, "no_signature")) {
			strcpy(key, "signature");
			val = "false";
		} else {
			if (i + 1 >= argc) {
				fprintf(stderr, "pp-tgen: %s needs a value (see --help)\n", a);
				return -1;
			}
			val = argv[++i];
		}
		r = set_global_key(c, key, val, err, sizeof(err));
		if (r == 0) {
			for (unsigned s = 0; s < c->n_streams; s++) {
				/* A repeated --payload appends; the first one replaces the profile's. */
				if (!strcmp(key, "payload") && first_stream_flag)
					c->stream[s].payload_len = 0;
				r = set_stream_key(&c->stream[s], key, val, err, sizeof(err));
				if (r <= 0)
					break;
			}
			if (!strcmp(key, "payload"))
				first_stream_flag = 0;
		}
		if (r == 0) {
			fprintf(stderr, "pp-tgen: unknown option '%s' (see --help)\n", a);
			return -1;
		}
		if (r < 0) {
			fprintf(stderr, "pp-tgen: %s: %s\n", a, err);
			return -1;
		}
	}
	return 0;
}

unsigned
tg_stream_hdr_len(const struct tg_stream_cfg *s)
{
	return 14 + 20 + (s->field[TG_F_PROTO].min == 6 ? 20 : 8);
}

double
tg_mix_mean_size(const struct tg_size_mix *m)
{
	double sum = 0, w = 0;

	for (unsigned i = 0; i < m->n; i++) {
		sum += (double)m->size[i] * m->weight[i];
		w += m->weight[i];
	}
	return sum / w;
}

int
tg_cfg_check(struct tg_cfg *c)
{
	if (c->mode == TG_MODE_RFC2544 && c->tx_port < 0) {
		fprintf(stderr, "pp-tgen: --mode rfc2544 needs --tx-port\n");
		return -1;
	}
	if (c->mode == TG_MODE_RFC2544 && c->rx_port < 0) {
		fprintf(stderr, "pp-tgen: --mode rfc2544 needs --rx-port (where the DUT sends back)\n");
		return -1;
	}
	if (c->mode == TG_MODE_DELAY && c->rx_port < 0) {
		fprintf(stderr, "pp-tgen: --mode delay needs --rx-port\n");
		return -1;
	}
	if (c->mode == TG_MODE_RFC2544 && c->n_streams != 1) {
		fprintf(stderr, "pp-tgen: --mode rfc2544 takes one stream (the profile has %u)\n",
			c->n_streams);
		return -1;
	}
	for (unsigned i = 0; i < c->n_streams; i++) {
		struct tg_stream_cfg *s = &c->stream[i];
		struct tg_field *p = &s->field[TG_F_PROTO];
		unsigned need = tg_stream_hdr_len(s) + TG_SIG_LEN + TG_FCS_LEN;

		if (s->pcap[0]) {
			if (c->mode == TG_MODE_RFC2544) {
				fprintf(stderr, "pp-tgen: stream '%s': rfc2544 needs a template stream, not a pcap\n",
					s->name);
				return -1;
			}
			continue;
		}
		if ((p->min == 6 || p->max == 6) && p->min != p->max) {
			fprintf(stderr,
				"pp-tgen: stream '%s': proto: a range may not mix tcp (6) with other protocols; use two streams\n",
				s->name);
			return -1;
		}
		if (!s->signature)
			continue;
		for (unsigned k = 0; k < s->sizes.n; k++)
			if (s->sizes.size[k] < need) {
				fprintf(stderr,
					"pp-tgen: stream '%s': size %u is below %u bytes, the smallest %s frame that holds the %d-byte signature (use --no-signature)\n",
					s->name, s->sizes.size[k], need, p->min == 6 ? "TCP" : "UDP", TG_SIG_LEN);
				return -1;
			}
		if (c->mode == TG_MODE_RFC2544)
			for (unsigned k = 0; k < c->n_rfc_sizes; k++)
				if (c->rfc_size[k] < need) {
					fprintf(stderr,
						"pp-tgen: --frame-sizes: %u is below %u bytes, the smallest %s frame with the signature\n",
						c->rfc_size[k], need, p->min == 6 ? "TCP" : "UDP");
					return -1;
				}
	}
	if (c->n_streams * c->tx_queues > 255) {
		fprintf(stderr, "pp-tgen: streams x tx-queues is above 255\n");
		return -1;
	}
	return 0;
}
