/* Profiles (JSON, YAML) and flags share one setter per key, so every
 * profile key is also a flag (--src-ip = "src_ip") and errors name the key
 * and its source. */
#include "tg_keys.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_kif.h"
#include "pp_parse.h"
#include "tg_value.h"

/* 1: KEY is a stream key and was applied, 0: not a stream key, -1: bad value */
int
tg_set_stream_key(
	struct tg_stream_cfg *s, const char *key, const char *val, char *err, size_t errlen)
{
	uint64_t u;

	for (int i = 0; i < TG_F_COUNT; i++)
		if (!strcmp(key, tg_field_key[i])) {
			if (tg_field_parse(&s->field[i], tg_field_kinds[i], val, err, errlen))
				return -1;
			s->vlan_set |= i == TG_F_VLAN;
			s->svlan_set |= i == TG_F_SVLAN;
			return 1;
		}
	if (!strcmp(key, "name")) {
		snprintf(s->name, sizeof(s->name), "%s", val);
		return 1;
	}
	if (!strcmp(key, "size"))
		return tg_parse_sizes(val, &s->sizes, err, errlen) ? -1 : 1;
	if (!strcmp(key, "rate")) {
		if (tg_parse_rate(val, &s->rate_kind, &s->rate)) {
			snprintf(err, errlen,
				"'%s' is not a rate (PPS like 100000 or 1.5M, PERCENT%% of the "
				"link, or max)",
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

		if (tg_parse_bytes(val, s->payload, sizeof(s->payload), &len, err, errlen))
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
	if (!strcmp(key, "pcap_timing")) {
		double f;

		if (!strcmp(val, "none")) {
			s->pcap_speed = 0;
			return 1;
		}
		if (!strcmp(val, "original")) {
			s->pcap_speed = 1;
			return 1;
		}
		if (pp_parse_double_value(val, 1e-3, 1e3, &f)) {
			snprintf(err, errlen,
				"'%s' is not none, original or a speed factor 0.001..1000 (2: "
				"twice "
				"as fast, every gap halved)",
				val);
			return -1;
		}
		s->pcap_speed = f;
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

int
tg_set_global_key(struct tg_cfg *c, const char *key, const char *val, char *err, size_t errlen)
{
	uint64_t u;
	double d;

#define BAD(...)                                    \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return -1;                          \
	} while (0)
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
		return tg_parse_rfc_sizes(val, c, err, errlen) ? -1 : 1;
	if (!strcmp(key, "trial")) {
		if (pp_parse_double_value(val, 0.01, 3600, &c->trial_s))
			BAD("'%s' is not a trial duration in seconds (0.01..3600)", val);
		return 1;
	}
	if (!strcmp(key, "resolution")) {
		if (pp_parse_double_value(val, 1e-4, 50, &c->resolution_pct))
			BAD("'%s' is not a resolution in percent of the search's upper bound "
			    "(0.0001..50)",
				val);
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
	if (!strcmp(key, "attach")) {
		if (c->n_attach == TG_MAX_ATTACH)
			BAD("'%s': at most %d interfaces", val, TG_MAX_ATTACH);
		if (pp_kif_check_spec(val, err, errlen))
			return -1;
		snprintf(c->attach[c->n_attach++], sizeof(c->attach[0]), "%s", val);
		return 1;
	}
	if (!strcmp(key, "attach_mode")) {
		enum pp_kif_mode m;

		if (pp_kif_parse_mode(val, &m))
			BAD("'%s' is not an attach mode (auto, af_xdp, af_packet)", val);
		c->attach_mode = (int)m;
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
