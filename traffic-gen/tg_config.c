/* pp-tgen's configuration: the defaults of every key and the cross-field
 * checks once a profile and the flags have set it. */
#include "tg_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pp_outfile.h"
#include "tg_signature.h"

const char *const tg_field_key[TG_F_COUNT] = {
	[TG_F_DST_MAC] = "dst_mac",
	[TG_F_SRC_MAC] = "src_mac",
	[TG_F_SRC_IP] = "src_ip",
	[TG_F_DST_IP] = "dst_ip",
	[TG_F_SPORT] = "sport",
	[TG_F_DPORT] = "dport",
	[TG_F_TTL] = "ttl",
	[TG_F_PROTO] = "proto",
	[TG_F_VLAN] = "vlan",
	[TG_F_SVLAN] = "svlan",
};

const enum tg_field_kind tg_field_kinds[TG_F_COUNT] = {
	TG_KIND_MAC,
	TG_KIND_MAC,
	TG_KIND_IPV4,
	TG_KIND_IPV4,
	TG_KIND_PORT,
	TG_KIND_PORT,
	TG_KIND_U8,
	TG_KIND_PROTO,
	TG_KIND_VLAN,
	TG_KIND_VLAN,
};

static const char *const field_default[TG_F_COUNT] = {
	"02:00:00:00:00:02",
	"02:00:00:00:00:01",
	"10.0.0.1",
	"10.1.0.1",
	"1024",
	"1024",
	"64",
	"udp",
	"0",
	"0",
};

void
tg_stream_defaults(struct tg_stream_cfg *s, unsigned index)
{
	char err[128];

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "stream%u", index);
	for (int i = 0; i < TG_F_COUNT; i++)
		tg_field_parse(&s->field[i], tg_field_kinds[i], field_default[i], err, sizeof(err));
	s->sizes.n = 1;
	s->sizes.size[0] = 64;
	s->sizes.weight[0] = 1;
	s->rate_kind = TG_RATE_MAX;
	s->signature = true;
}

void
tg_cfg_defaults(struct tg_cfg *c)
{
	static const uint16_t rfc[] = { 64, 128, 256, 512, 1024, 1280, 1518 };

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

unsigned
tg_stream_hdr_len(const struct tg_stream_cfg *s)
{
	return 14 + 4 * s->vlan_tags + (s->field[TG_F_SRC_IP].v6 ? 40 : 20) +
		(s->field[TG_F_PROTO].min == 6 ? 20 : 8);
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
	char err[128];
	if (c->stats_path[0] && pp_outfile_check(c->stats_path, err, sizeof(err))) {
		fprintf(stderr, "pp-tgen: --stats %s: %s\n", c->stats_path, err);
		return -1;
	}
	if (c->mode == TG_MODE_RFC2544 && c->tx_port < 0) {
		fprintf(stderr, "pp-tgen: --mode rfc2544 needs --tx-port\n");
		return -1;
	}
	if (c->mode == TG_MODE_RFC2544 && c->rx_port < 0) {
		fprintf(stderr,
			"pp-tgen: --mode rfc2544 needs --rx-port (where the DUT sends back)\n");
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

		if (s->pcap_speed > 0 && !s->pcap[0]) {
			fprintf(stderr, "pp-tgen: stream '%s': --pcap-timing needs --pcap\n",
				s->name);
			return -1;
		}
		if (s->pcap_speed > 0 && s->rate_kind != TG_RATE_MAX) {
			fprintf(stderr,
				"pp-tgen: stream '%s': --pcap-timing and --rate both set the pace: "
				"give one\n",
				s->name);
			return -1;
		}
		if (s->pcap[0]) {
			if (c->mode == TG_MODE_RFC2544) {
				fprintf(stderr,
					"pp-tgen: stream '%s': rfc2544 needs a template stream, "
					"not a pcap\n",
					s->name);
				return -1;
			}
			/* unreadable: the command line's (or profile's) fault, said before
			 * any port starts */
			if (access(s->pcap, R_OK) != 0) {
				fprintf(stderr, "pp-tgen: stream '%s': pcap %s: %s\n", s->name,
					s->pcap, strerror(errno));
				return -1;
			}
			continue;
		}
		if (s->field[TG_F_SRC_IP].v6 != s->field[TG_F_DST_IP].v6) {
			fprintf(stderr,
				"pp-tgen: stream '%s': src_ip and dst_ip: give both IPv4 or both "
				"IPv6\n",
				s->name);
			return -1;
		}
		s->vlan_tags = s->svlan_set ? 2 : s->vlan_set ? 1 : 0;
		if (s->svlan_set && !s->vlan_set) {
			fprintf(stderr,
				"pp-tgen: stream '%s': svlan (QinQ's outer tag) needs vlan (the "
				"inner one)\n",
				s->name);
			return -1;
		}
		need = tg_stream_hdr_len(s) + TG_SIG_LEN + TG_FCS_LEN;
		if ((p->min == 6 || p->max == 6) && p->min != p->max) {
			fprintf(stderr,
				"pp-tgen: stream '%s': proto: a range may not mix tcp (6) with "
				"other protocols; use two streams\n",
				s->name);
			return -1;
		}
		if (!s->signature)
			continue;
		for (unsigned k = 0; k < s->sizes.n; k++)
			if (s->sizes.size[k] < need) {
				fprintf(stderr,
					"pp-tgen: stream '%s': size %u is below %u bytes, the "
					"smallest %s frame that holds the %d-byte signature (use "
					"--no-signature)\n",
					s->name, s->sizes.size[k], need,
					p->min == 6 ? "TCP" : "UDP", TG_SIG_LEN);
				return -1;
			}
		if (c->mode == TG_MODE_RFC2544)
			for (unsigned k = 0; k < c->n_rfc_sizes; k++)
				if (c->rfc_size[k] < need) {
					fprintf(stderr,
						"pp-tgen: --frame-sizes: %u is below %u bytes, the "
						"smallest %s frame with the signature\n",
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
