/* Where the bytes to scan are in an Ethernet frame: the L4 payload of an
 * IPv4 TCP or UDP packet.  Works on plain bytes so that the app (on mbufs)
 * and the pcap test (on libpcap buffers) share it. */
#ifndef AC_PAYLOAD_H
#define AC_PAYLOAD_H

#include <stdint.h>

enum ac_payload_status {
	AC_PL_OK = 0,
	AC_PL_NOT_IPV4,    /* not Ethernet(/VLAN)/IPv4 */
	AC_PL_NOT_TCP_UDP, /* IPv4 carrying another protocol */
	AC_PL_FRAGMENT,    /* IPv4 fragment other than the first: no L4 header */
	AC_PL_TRUNCATED,   /* a header or the IPv4 total length runs past the frame */
	AC_PL_BAD_HEADER,  /* IHL < 5, TCP data offset < 5, total length < IHL */
	AC_PL_N_STATUS,
};

extern const char *const ac_payload_status_name[AC_PL_N_STATUS];

struct ac_payload {
	uint32_t off;    /* L4 payload offset in the frame */
	uint32_t len;    /* L4 payload bytes (0 is possible) */
	uint32_t l3_off; /* IPv4 header offset (valid when status is OK) */
	uint32_t l4_off; /* TCP or UDP header offset */
	uint16_t vlan;   /* outer VLAN id, 0 if untagged (the flow key's) */
};

/* Ethernet with up to two VLAN tags (802.1Q, 802.1ad, 0x9100), then IPv4.
 * The payload ends at the IPv4 total length (Ethernet padding excluded). */
enum ac_payload_status ac_find_payload(const uint8_t *frame, uint32_t len, struct ac_payload *pl);

#endif /* AC_PAYLOAD_H */
