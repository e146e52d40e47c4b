/* L2-L4 packet decoder for the analyzer: Ethernet (VLAN, QinQ), IPv4
 * (options, fragments), IPv6 (extension headers), TCP, UDP, ICMP, ICMPv6.
 *
 * Pure C, no allocation, no DPDK: it reads `caplen` bytes and never one more.
 * Decoding goes as far as the bytes allow; `status` says where and why it
 * stopped early, and `have` says which fields are valid, so a truncated packet
 * still reports what was decoded before the cut.
 */
#ifndef AN_DECODE_H
#define AN_DECODE_H

#include <stddef.h>
#include <stdint.h>

enum an_status {
	AN_OK = 0,
	AN_ERR_ETH_TRUNC,        /* fewer than 14 bytes */
	AN_ERR_VLAN_TRUNC,       /* VLAN/QinQ tag cut short */
	AN_ERR_VLAN_DEPTH,       /* more tags than AN_MAX_VLAN */
	AN_ERR_IPV4_TRUNC,       /* IPv4 header (with options) cut short */
	AN_ERR_IPV4_VERSION,     /* version field is not 4 */
	AN_ERR_IPV4_IHL,         /* header length below 20 bytes */
	AN_ERR_IPV4_TOTLEN,      /* total length below header length */
	AN_ERR_IPV6_TRUNC,       /* fixed IPv6 header cut short */
	AN_ERR_IPV6_VERSION,     /* version field is not 6 */
	AN_ERR_IPV6_EXT_TRUNC,   /* an extension header cut short */
	AN_ERR_IPV6_EXT_DEPTH,   /* more extension headers than AN_MAX_IPV6_EXT */
	AN_ERR_TCP_TRUNC,        /* TCP header cut short */
	AN_ERR_TCP_DOFF,         /* TCP data offset below 5 words */
	AN_ERR_UDP_TRUNC,        /* UDP header cut short */
	AN_ERR_ICMP_TRUNC,       /* ICMP/ICMPv6 type and code missing */
	AN_STATUS_COUNT
};

/* Short names for statistics and logs, indexed by enum an_status. */
extern const char *const an_status_names[AN_STATUS_COUNT];

enum an_l3 {
	AN_L3_NONE = 0,   /* no L3 decoded (truncated Ethernet) */
	AN_L3_IPV4,
	AN_L3_IPV6,
	AN_L3_OTHER,      /* an EtherType we do not decode (ARP, MPLS, ...) */
	AN_L3_COUNT
};
extern const char *const an_l3_names[AN_L3_COUNT];

/* Validity bits of struct an_packet.have. */
#define AN_HAVE_ETH      0x01u  /* mac_dst, mac_src, ethertype */
#define AN_HAVE_IP       0x02u  /* ttl, src, dst (IPv4 or IPv6 header complete) */
#define AN_HAVE_L4PROTO  0x04u  /* l4_proto (after IPv6 extension headers) */
#define AN_HAVE_PORTS    0x08u  /* sport, dport (TCP or UDP) */
#define AN_HAVE_ICMP     0x10u  /* icmp_type, icmp_code */

/* Flags of struct an_packet.flags. */
#define AN_FLAG_FRAGMENT   0x01u /* IPv4 MF/offset or IPv6 fragment header */
#define AN_FLAG_LATER_FRAG 0x02u /* not the first fragment: no L4 header here */
#define AN_FLAG_IPV4_OPTS  0x04u /* IPv4 header carries options */
#define AN_FLAG_IPV6_EXT   0x08u /* IPv6 extension headers were walked */

#define AN_MAX_VLAN 2       /* one tag, or QinQ outer + inner */
#define AN_MAX_IPV6_EXT 8   /* bound on the extension-header walk */

struct an_packet {
	uint8_t mac_dst[6];
	uint8_t mac_src[6];
	uint16_t ethertype;     /* after the VLAN tags, host order */
	uint16_t vlan_tci[AN_MAX_VLAN]; /* outer first, host order */
	uint8_t n_vlan;
	uint8_t l3;             /* enum an_l3 */
	uint8_t l4_proto;       /* IP protocol number of the L4 header */
	uint8_t ttl;            /* IPv4 TTL or IPv6 hop limit */
	uint8_t have;           /* AN_HAVE_* */
	uint8_t flags;          /* AN_FLAG_* */
	uint8_t status;         /* enum an_status */
	uint8_t icmp_type, icmp_code;
	uint16_t sport, dport;  /* host order */
	uint16_t l3_off, l4_off;/* byte offsets into the frame (0 when absent) */
	uint8_t src[16], dst[16]; /* IPv4 uses the first 4 bytes */
};

/* Decode `caplen` bytes of an Ethernet frame into *p (fully overwritten).
 * Returns p->status. Reads nothing outside frame[0 .. caplen-1]. */
enum an_status an_decode(const uint8_t *frame, size_t caplen,
			 struct an_packet *p);

#endif
