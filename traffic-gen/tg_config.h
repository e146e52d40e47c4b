/* What the user asked for: streams (templates or pcap replay), ports, rate,
 * duration, mode.  Filled from a profile (tg_profile.c) and/or command-line
 * flags (tg_cli.c); defaults and checks in tg_config.c. */
#ifndef TG_CONFIG_H
#define TG_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "tg_field.h"

#define TG_MAX_STREAMS 16
#define TG_MAX_SIZES 16
#define TG_MAX_PAYLOAD 1600
#define TG_MAX_RFC_SIZES 16
#define TG_FCS_LEN 4        /* frame sizes count the Ethernet FCS, as RFC 2544 does */
#define TG_WIRE_OVERHEAD 20 /* preamble + SFD (8) + inter-frame gap (12) per frame */
#define TG_MIN_FRAME 64
#define TG_MAX_FRAME 1518
#define TG_MAX_ATTACH 8

enum tg_mode {
	TG_MODE_GEN,
	TG_MODE_RFC2544,
	TG_MODE_DELAY
};

enum tg_field_id {
	TG_F_DST_MAC,
	TG_F_SRC_MAC,
	TG_F_SRC_IP,
	TG_F_DST_IP,
	TG_F_SPORT,
	TG_F_DPORT,
	TG_F_TTL,
	TG_F_PROTO,
	TG_F_VLAN,  /* 802.1Q tag's VLAN id (TPID 0x8100), when vlan_tags >= 1 */
	TG_F_SVLAN, /* QinQ outer tag's (802.1ad, TPID 0x88a8), when vlan_tags == 2 */
	TG_F_COUNT
};

struct tg_size_mix {
	unsigned n;
	uint16_t size[TG_MAX_SIZES]; /* frame size including FCS */
	uint32_t weight[TG_MAX_SIZES];
};

enum tg_rate_kind {
	TG_RATE_MAX,
	TG_RATE_PPS,
	TG_RATE_PCT
};

struct tg_stream_cfg {
	char name[32];
	struct tg_field field[TG_F_COUNT];
	struct tg_size_mix sizes;
	enum tg_rate_kind rate_kind;
	double rate;    /* pps or percent of link */
	uint32_t flows; /* 0: fields advance per packet */
	uint8_t payload[TG_MAX_PAYLOAD];
	uint16_t payload_len;
	uint8_t fill;
	char pcap[PATH_MAX]; /* non-empty: replay this file instead */
	uint64_t loops;      /* pcap passes; 0 = until duration/packets */
	double pcap_speed; /* >0: replay at the capture's own gaps divided by this (1 = original) */
	bool signature;
	unsigned vlan_tags; /* 0, 1 (vlan given) or 2 (svlan too: QinQ) */
	bool vlan_set, svlan_set;
};

struct tg_cfg {
	enum tg_mode mode;
	struct tg_stream_cfg stream[TG_MAX_STREAMS];
	unsigned n_streams;
	int tx_port;        /* -1: no transmit (sink only) */
	int rx_port;        /* -1: no receive */
	unsigned tx_queues; /* per stream */
	unsigned rx_queues;
	double duration_s; /* 0: until packets or signal */
	uint64_t packets;  /* total per stream, 0: unlimited */
	double link_gbps;  /* 0: port's reported speed, else 10 */
	double drain_s;
	double start_after_s; /* idle time after links are up (peer start-up) */
	double link_wait_s;   /* how long to wait for links to come up */
	double peer_wait_s;   /* at the end, idle until the links go down */
	char stats_path[PATH_MAX];
	bool live;
	bool tx_retry;
	unsigned mbufs; /* per TX queue pool */
	/* rfc2544 */
	unsigned n_rfc_sizes;
	uint16_t rfc_size[TG_MAX_RFC_SIZES];
	double trial_s;
	double resolution_pct;
	double loss_tolerance_pct;
	/* delay line */
	double delay_us;
	double capacity_pps;   /* 0: unlimited */
	double capacity_burst; /* token bucket depth (packets) */
	int out_port;          /* -1: same as rx port */
	/* kernel interfaces attached as ports after the EAL's (pp_kif.h) */
	char attach[TG_MAX_ATTACH][96];
	unsigned n_attach;
	int attach_mode; /* enum pp_kif_mode */
};

void tg_cfg_defaults(struct tg_cfg *c);
void tg_stream_defaults(struct tg_stream_cfg *s, unsigned index);
/* Cross-field checks once everything is set; 0 or -1 after printing. */
int tg_cfg_check(struct tg_cfg *c);
/* Header bytes before the signature for this stream's protocol. */
unsigned tg_stream_hdr_len(const struct tg_stream_cfg *s);
double tg_mix_mean_size(const struct tg_size_mix *m);

extern const char *const tg_field_key[TG_F_COUNT];
extern const enum tg_field_kind tg_field_kinds[TG_F_COUNT];

#endif
