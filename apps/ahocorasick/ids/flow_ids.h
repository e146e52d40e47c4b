/* Rules mode's state of one flow, kept in the extension area of the shared
 * flow table's record (runtime/flow/flow_table.h): which side is the
 * client, how far the TCP handshake got, the UDP directions seen, and the
 * flow's flowbits.  No DPDK: the unit tests call it directly.
 *
 * The client is the sender of a first packet that is a SYN without ACK,
 * the receiver of a first SYN+ACK, else the sender of the first packet
 * seen (a flow picked up mid-stream).  A TCP flow is established from the
 * client's ACK (without SYN) that answers the server's SYN+ACK that
 * answered the client's SYN, all seen in this flow: a flow whose handshake
 * was not seen is never established.  A UDP flow is established from the
 * first packet of the second direction on.  The table ends a TCP flow at a
 * RST, or once both sides have sent a FIN (that packet still belongs to
 * it); a later packet of the same 5-tuple starts a new flow.  The flow's
 * flowbits and stream state follow this struct in the record (ids.c). */
#ifndef AC_FLOW_IDS_H
#define AC_FLOW_IDS_H

#include <stdbool.h>
#include <stdint.h>

#include "rule_options.h"

#define AC_TCP_FIN 0x01
#define AC_TCP_SYN 0x02
#define AC_TCP_RST 0x04
#define AC_TCP_ACK 0x10

struct ac_flow_ext {
	uint8_t client_dir; /* the key direction (flow_pkt.dir) of the client's packets */
	uint8_t tcp_hs;     /* 0 none, 1 SYN seen, 2 SYN+ACK after it, 3 established */
	uint8_t udp_seen;   /* bit 0: a packet from the client, bit 1: from the server */
	uint8_t ttl_seen;   /* bit d: ttl[d] is key direction d's first TTL (ids.h) */
	uint8_t ttl[2];
	uint8_t pad[2];
};

/* Account one packet of the flow (dir: its key direction) and return the
 * flow state rules see on it (AC_PF_*).  created: the flow starts with it. */
static inline uint8_t
ac_flow_track(struct ac_flow_ext *x, bool created, uint8_t ip_proto, uint8_t dir, uint8_t flags)
{
	bool syn = flags & AC_TCP_SYN, ack = flags & AC_TCP_ACK, rst = flags & AC_TCP_RST;

	if (created) {
		x->client_dir = dir;
		if (ip_proto == 6 && syn && ack)
			x->client_dir = dir ^ 1;
		if (ip_proto == 6 && syn && !ack && !rst)
			x->tcp_hs = 1;
	}
	bool from_client = dir == x->client_dir;
	uint8_t pf = from_client ? AC_PF_FROM_CLIENT : 0;
	if (ip_proto == 6) {
		if (x->tcp_hs == 1 && !from_client && syn && ack && !rst)
			x->tcp_hs = 2;
		else if (x->tcp_hs == 2 && from_client && ack && !syn && !rst)
			x->tcp_hs = 3;
		if (x->tcp_hs == 3)
			pf |= AC_PF_ESTABLISHED;
	} else {
		x->udp_seen |= from_client ? 1 : 2;
		if (x->udp_seen == 3)
			pf |= AC_PF_ESTABLISHED;
	}
	return pf;
}

#endif /* AC_FLOW_IDS_H */
