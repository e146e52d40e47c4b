/* L2-L4 packet decoder for the analyzer: Ethernet (VLAN, QinQ), IPv4
 * (options, fragments), IPv6 (extension headers), TCP, UDP, ICMP, ICMPv6,
 * and the tunnels VXLAN, Geneve, GRE (with ERSPAN I, II, III), GTP-U and
 * IP-in-IP (IPv4 or IPv6 in IPv4 or IPv6) down to the inner headers.
 *
 * Pure C, no allocation, no DPDK: it reads `caplen` bytes and never one more.
 * Decoding goes as far as the bytes allow; `status` says where and why it
 * stopped early, and `have` says which fields are valid, so a truncated packet
 * still reports what was decoded before the cut.  The work per packet is
 * bounded: at most AN_MAX_TUNNEL tunnels, each header walk bounded too.
 */
#ifndef AN_DECODE_H
#define AN_DECODE_H

#include <stddef.h>
#include <stdint.h>

enum an_status {
	AN_OK = 0,
	AN_ERR_ETH_TRUNC,      /* fewer than 14 bytes */
	AN_ERR_VLAN_TRUNC,     /* VLAN/QinQ tag cut short */
	AN_ERR_VLAN_DEPTH,     /* more tags than AN_MAX_VLAN */
	AN_ERR_IPV4_TRUNC,     /* IPv4 header (with options) cut short */
	AN_ERR_IPV4_VERSION,   /* version field is not 4 */
	AN_ERR_IPV4_IHL,       /* header length below 20 bytes */
	AN_ERR_IPV4_TOTLEN,    /* total length below header length */
	AN_ERR_IPV6_TRUNC,     /* fixed IPv6 header cut short */
	AN_ERR_IPV6_VERSION,   /* version field is not 6 */
	AN_ERR_IPV6_EXT_TRUNC, /* an extension header cut short */
	AN_ERR_IPV6_EXT_DEPTH, /* more extension headers than AN_MAX_IPV6_EXT */
	AN_ERR_TCP_TRUNC,      /* TCP header cut short */
	AN_ERR_TCP_DOFF,       /* TCP data offset below 5 words */
	AN_ERR_UDP_TRUNC,      /* UDP header cut short */
	AN_ERR_ICMP_TRUNC,     /* ICMP/ICMPv6 type and code missing */
	AN_ERR_TUNNEL_TRUNC,   /* inner only: a tunnel header cut short */
	AN_ERR_TUNNEL_DEPTH,   /* inner only: more tunnels than AN_MAX_TUNNEL */
	AN_STATUS_COUNT
};

/* Short names for statistics and logs, indexed by enum an_status. */
extern const char *const an_status_names[AN_STATUS_COUNT];

enum an_l3 {
	AN_L3_NONE = 0, /* no L3 decoded (truncated Ethernet) */
	AN_L3_IPV4,
	AN_L3_IPV6,
	AN_L3_OTHER, /* an EtherType we do not decode (ARP, MPLS, ...) */
	AN_L3_COUNT
};
extern const char *const an_l3_names[AN_L3_COUNT];

/* Validity bits of struct an_packet.have. */
#define AN_HAVE_ETH 0x01u     /* mac_dst, mac_src, ethertype */
#define AN_HAVE_IP 0x02u      /* ttl, src, dst (IPv4 or IPv6 header complete) */
#define AN_HAVE_L4PROTO 0x04u /* l4_proto (after IPv6 extension headers) */
#define AN_HAVE_PORTS 0x08u   /* sport, dport (TCP or UDP) */
#define AN_HAVE_ICMP 0x10u    /* icmp_type, icmp_code */

/* Flags of struct an_packet.flags. */
#define AN_FLAG_FRAGMENT 0x01u   /* IPv4 MF/offset or IPv6 fragment header */
#define AN_FLAG_LATER_FRAG 0x02u /* not the first fragment: no L4 header here */
#define AN_FLAG_IPV4_OPTS 0x04u  /* IPv4 header carries options */
#define AN_FLAG_IPV6_EXT 0x08u   /* IPv6 extension headers were walked */

#define AN_MAX_VLAN 2     /* one tag, or QinQ outer + inner */
#define AN_MAX_IPV6_EXT 8 /* bound on the extension-header walk */
#define AN_MAX_TUNNEL 4   /* bound on nested tunnels */
#define AN_MAX_GTP_EXT 8  /* bound on GTP-U extension headers */

enum an_tunnel {
	AN_TUN_NONE = 0,
	AN_TUN_VXLAN,  /* UDP port 4789 */
	AN_TUN_GENEVE, /* UDP port 6081 */
	AN_TUN_GRE,    /* IP protocol 47 (version 0) */
	AN_TUN_ERSPAN, /* GRE 0x88be (type I, II) or 0x22eb (type III) */
	AN_TUN_GTPU,   /* UDP port 2152, GTPv1-U */
	AN_TUN_IPIP,   /* IP protocol 4 or 41: IPv4 or IPv6 in IPv4 or IPv6 */
	AN_TUN_COUNT
};
extern const char *const an_tunnel_names[AN_TUN_COUNT];

/* One stack of headers, Ethernet (when there is one) to L4: the frame's
 * outer (or only) headers, or the innermost ones inside the tunnels. */
#define AN_LAYER_FIELDS                                                             \
	uint8_t mac_dst[6];                                                         \
	uint8_t mac_src[6];                                                         \
	uint16_t ethertype;             /* after the VLAN tags, host order */       \
	uint16_t vlan_tci[AN_MAX_VLAN]; /* outer first, host order */               \
	uint8_t n_vlan;                                                             \
	uint8_t l3;       /* enum an_l3 */                                          \
	uint8_t l4_proto; /* IP protocol number of the L4 header */                 \
	uint8_t ttl;      /* IPv4 TTL or IPv6 hop limit */                          \
	uint8_t have;     /* AN_HAVE_* */                                           \
	uint8_t flags;    /* AN_FLAG_* */                                           \
	uint8_t status;   /* enum an_status */                                      \
	uint8_t icmp_type, icmp_code;                                               \
	uint16_t sport, dport;    /* host order */                                  \
	uint16_t l3_off, l4_off;  /* byte offsets into the frame (0 when absent) */ \
	uint8_t src[16], dst[16]; /* IPv4 uses the first 4 bytes */

struct an_layers {
	AN_LAYER_FIELDS
};

struct an_packet {
	/* The outer (or only) headers, as fields of their own (p->ttl) or as
	 * one struct (p->outer): the same bytes. */
	union {
		struct {
			AN_LAYER_FIELDS
		};
		struct an_layers outer;
	};
	/* When n_tunnel > 0: the headers inside the last tunnel listed.  Their
	 * status is inner.status (the outer status is not changed by what a
	 * tunnel carries); no Ethernet (AN_HAVE_ETH unset) for tunnels that
	 * carry IP. */
	struct an_layers inner;
	uint32_t tunnel_id;            /* VNI, GRE key, ERSPAN session, GTP TEID */
	uint8_t tunnel[AN_MAX_TUNNEL]; /* enum an_tunnel, outer first */
	uint8_t n_tunnel;
	uint8_t have_tunnel_id; /* tunnel_id is that of the last tunnel */
};

/* Decode `caplen` bytes of an Ethernet frame into *p (fully overwritten).
 * Returns p->status. Reads nothing outside frame[0 .. caplen-1]. */
enum an_status an_decode(const uint8_t *frame, size_t caplen, struct an_packet *p);

#endif
