/* Flow keys: what identifies a flow, and how it is read out of a frame.
 *
 * A flow is bidirectional, as in nProbe: both directions of a conversation
 * share one key.  The key is canonical (the lower endpoint, compared as
 * address then port, comes first) and the extractor says which direction
 * the frame travelled in, so the table can count each direction apart.
 * IPv4 addresses are stored as IPv4-mapped IPv6 addresses, so one key type
 * serves both families.
 */
#ifndef STATEFUL_FLOW_KEY_H
#define STATEFUL_FLOW_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FLOW_FAMILY_IPV4 4
#define FLOW_FAMILY_IPV6 6

/* 40 bytes, no padding: compared and hashed as raw bytes. */
struct flow_key {
	uint8_t addr_lo[16]; /* network byte order */
	uint8_t addr_hi[16];
	uint16_t port_lo; /* host byte order; 0 for non-TCP/UDP/SCTP and fragments */
	uint16_t port_hi;
	uint16_t vlan;  /* outer 802.1Q VLAN id, 0 if untagged */
	uint8_t proto;  /* IP protocol number (after IPv6 extension headers) */
	uint8_t family; /* FLOW_FAMILY_IPV4 or FLOW_FAMILY_IPV6 */
};
_Static_assert(sizeof(struct flow_key) == 40, "flow_key must have no padding");

/* Result of reading a frame. */
enum flow_parse {
	FLOW_PARSE_OK = 0,
	FLOW_PARSE_NOT_IP,    /* ARP, LLDP, ...: not a flow, forwarded */
	FLOW_PARSE_MALFORMED, /* truncated or inconsistent headers: forwarded */
};

struct flow_pkt {
	struct flow_key key;
	uint8_t dir;       /* 0: source is the key's lo endpoint, 1: hi */
	uint8_t tcp_flags; /* 0 unless TCP with a complete header */
	uint16_t l3_len;   /* bytes from l3 to the end of the frame (capped at 65535) */
	const uint8_t *l3; /* the IP header in the frame (application detection) */
};

/* Read an Ethernet frame (optionally 802.1Q / 802.1ad / QinQ tagged).
 * Never reads past data[len - 1]. */
enum flow_parse flow_parse_frame(const uint8_t *data, size_t len, struct flow_pkt *out);

/* The same result for an IPv4 TCP/UDP packet a caller has parsed already
 * (addresses in network byte order, ports in host byte order, vlan: the
 * outer 802.1Q VLAN id or 0); l3 and l3_len are left for the caller. */
void flow_pkt_from_ipv4(struct flow_pkt *out, const uint8_t src[4], const uint8_t dst[4],
	uint8_t proto, uint16_t sport, uint16_t dport, uint16_t vlan, uint8_t tcp_flags);

/* A constant-size memcmp compiles to a few 64-bit compares. */
static inline bool
flow_key_equal(const struct flow_key *a, const struct flow_key *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* Text form of one key endpoint ("10.0.0.1" or "2001:db8::1"); buf >= 46. */
const char *flow_key_addr_str(const struct flow_key *k, bool hi, char *buf, size_t size);

#endif
