/* An Ethernet frame as rules mode sees it: Ethernet with up to two VLAN
 * tags, an MPLS label stack or not, IPv4 (options skipped) or IPv6
 * (hop-by-hop, routing, destination options, authentication and atomic
 * fragment headers walked), then TCP or UDP.
 *
 * Tunnels: UDP to port 4789 (VXLAN) or 6081 (Geneve, its options skipped)
 * is decapsulated, IDS_TUNNEL_MAX_DEPTH levels deep at most, and the frame
 * it carries (Ethernet, or IP bare in Geneve) is decoded in its place: the
 * packet is then the inner one, its flow keyed by the inner VLAN and
 * 5-tuple alone.  The outer headers are transport: not judged, not part of
 * the key (the same inner 5-tuple on two VNIs is one flow), their only
 * trace outer_l3_off (what the app marks) and the tunnel counters.  A
 * malformed tunnel header (tun_err) is not decapsulated: the datagram is
 * judged as the UDP it is.  The payload ends at the IPv4 total length or the IPv6 payload
 * length (Ethernet padding excluded).  An IP fragment is located, not
 * decoded further: defrag.h puts it back together and the datagram is
 * decoded again.  Plain bytes, no DPDK: the app, the tools, the tests and
 * the fuzzers share it. */
#ifndef IDS_DECODE_H
#define IDS_DECODE_H

#include <stdbool.h>
#include <stdint.h>

enum ids_status {
	IDS_PKT_OK = 0,
	IDS_PKT_NOT_IP,      /* not Ethernet(/VLAN)/IPv4 or IPv6, or a bad version nibble */
	IDS_PKT_NOT_TCP_UDP, /* another protocol (ICMP, ESP, no next header, ...) */
	IDS_PKT_FRAGMENT,    /* an IP fragment (defrag.h) */
	IDS_PKT_TRUNCATED,   /* a header or the IP length runs past the frame */
	IDS_PKT_BAD_HEADER,  /* IHL < 5, TCP data offset < 5, total length < IHL, jumbogram,
				an IPv6 extension header past the payload, too many of them */
	IDS_PKT_N_STATUS,
};

extern const char *const ids_status_name[IDS_PKT_N_STATUS];

#define IDS_TUNNEL_MAX_DEPTH 2 /* tunnels inside tunnels, this many levels */
#define IDS_TUN_VXLAN 1        /* ids_pkt.tun_kinds */
#define IDS_TUN_GENEVE 2
#define IDS_NO_L2 UINT32_MAX /* ids_pkt.l2_off: IP carried bare in Geneve */

/* Why a UDP datagram to a tunnel port was not decapsulated. */
enum ids_tunnel_err {
	IDS_TUN_OK = 0,
	IDS_TUN_TRUNCATED,     /* the tunnel header or Geneve's options run past the datagram */
	IDS_TUN_BAD_HEADER,    /* VXLAN without its I flag, a Geneve version not 0 */
	IDS_TUN_UNKNOWN_PROTO, /* Geneve carrying neither Ethernet nor IPv4/IPv6 */
	IDS_TUN_TOO_DEEP,      /* inside IDS_TUNNEL_MAX_DEPTH tunnels already */
	IDS_TUN_N_ERR,
};

extern const char *const ids_tunnel_err_name[IDS_TUN_N_ERR];

struct ids_pkt {
	uint8_t family;    /* 4 or 6 */
	uint8_t proto;     /* 6 or 17 (IDS_PKT_OK); the fragment's protocol for a fragment */
	uint8_t ttl;       /* IPv4 TTL, IPv6 hop limit */
	uint8_t tcp_flags; /* 0 for UDP */
	uint16_t vlan;     /* the (innermost) frame's outer VLAN id, 0 if untagged */
	uint8_t tunnels;   /* tunnel headers decapsulated */
	uint8_t tun_kinds; /* IDS_TUN_VXLAN | IDS_TUN_GENEVE among them */
	uint8_t tun_err;   /* enum ids_tunnel_err: a tunnel header not decapsulated */
	uint16_t sport, dport;
	uint8_t src[16], dst[16]; /* network order; IPv4 in the first 4 bytes */
	uint32_t l2_off;          /* the (innermost) Ethernet header, or IDS_NO_L2 */
	uint32_t l3_off;          /* the (innermost) IP header */
	uint32_t outer_l3_off;    /* the outermost IP header (l3_off without a tunnel) */
	uint32_t l4_off;          /* the TCP or UDP header */
	uint32_t off, len;        /* the L4 payload */
	uint32_t ip_end;          /* end of the IP datagram in the frame */
	uint32_t seq, ack;        /* TCP */
	/* IDS_PKT_FRAGMENT */
	uint32_t frag_id;   /* IPv4 identification or IPv6 fragment id */
	uint32_t frag_off;  /* bytes */
	bool frag_more;     /* MF / M */
	uint32_t frag_data; /* the fragment's data: [frag_data, ip_end) */
	uint32_t frag_hdr; /* IPv6: the fragment header's offset (end of the unfragmentable part) */
	uint32_t frag_nh_byte; /* IPv6: offset of the next-header byte that names it */
};

/* Decode frame[0, len).  Fields are valid as far as the status says:
 * OK: all but the fragment ones; FRAGMENT: addresses, ttl, vlan, l3_off,
 * ip_end and the fragment fields. */
enum ids_status ids_decode(const uint8_t *frame, uint32_t len, struct ids_pkt *p);

/* Without defragmentation: a first fragment's TCP or UDP header and
 * payload as far as the fragment goes (a later fragment stays
 * IDS_PKT_FRAGMENT); a tunnel in it is not decapsulated. */
enum ids_status ids_decode_first_fragment(const uint8_t *frame, struct ids_pkt *p);

#endif /* IDS_DECODE_H */
