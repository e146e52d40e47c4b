/* A look at the captures given to net_pcap before the ports start: which
 * frames DPDK 22.11's net_pcap will hand over cut (R repairs their pkt_len),
 * and which infinite_rx will refuse (see pp_pcap_check.c). */
#ifndef PP_PCAP_CHECK_H
#define PP_PCAP_CHECK_H

#include <stdbool.h>
#include <stdint.h>

/* The largest --mbuf-size (data room without headroom, 16-bit in DPDK). */
#define PP_PCAP_MAX_TAILROOM (65535u - 128u)

struct pp_pcap_frames {
	uint64_t frames;           /* frames libpcap reads */
	uint64_t cut;              /* over 64 KiB, reach R cut: R repairs pkt_len, counts them */
	uint64_t cut_any_tailroom; /* of those, 128 KiB or longer: no --mbuf-size helps */
	uint64_t refused_infinite; /* longer than an mbuf with infinite_rx: port refused */
	uint32_t longest;          /* longest captured length */
	unsigned tailroom_needed;  /* --mbuf-size that receives every cut frame whole */
};

/* Count one frame of captured length caplen, with mbufs of tailroom bytes. */
void pp_pcap_classify(struct pp_pcap_frames *f, uint32_t caplen, unsigned tailroom, bool infinite);

/* Scan every rx_pcap file of every net_pcap --vdev in the EAL arguments
 * argv[1..argc), say on stderr (prefixed who) what will be cut or refused,
 * and sum the counts into total. */
void pp_pcap_check(
	int argc, char **argv, unsigned tailroom, const char *who, struct pp_pcap_frames *total);

#endif
