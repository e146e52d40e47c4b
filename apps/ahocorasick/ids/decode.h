/* An Ethernet frame as rules mode sees it: Ethernet with up to two VLAN
 * tags, IPv4 (options skipped) or IPv6 (hop-by-hop, routing, destination
 * options, authentication and atomic fragment headers walked), then TCP or
 * UDP.  The payload ends at the IPv4 total length or the IPv6 payload
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

struct ids_pkt {
	uint8_t family;    /* 4 or 6 */
	uint8_t proto;     /* 6 or 17 (IDS_PKT_OK); the fragment's protocol for a fragment */
	uint8_t ttl;       /* IPv4 TTL, IPv6 hop limit */
	uint8_t tcp_flags; /* 0 for UDP */
	uint16_t vlan;     /* outer VLAN id, 0 if untagged */
	uint16_t sport, dport;
	uint8_t src[16], dst[16]; /* network order; IPv4 in the first 4 bytes */
	uint32_t l3_off;          /* the IP header */
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
 * IDS_PKT_FRAGMENT). */
enum ids_status ids_decode_first_fragment(const uint8_t *frame, struct ids_pkt *p);

#endif /* IDS_DECODE_H */
