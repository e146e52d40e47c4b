/* Hand-built frames for the unit tests and the flooding benchmark: just
 * enough header to be parsed, in network byte order. */
#ifndef STATEFUL_TEST_FRAME_BUILD_H
#define STATEFUL_TEST_FRAME_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)(v >> 16));
	wr16(p + 2, (uint16_t)v);
}

/* Ethernet + IPv4 + TCP/UDP header in buf (>= 64 bytes, zeroed beyond the
 * headers); vlan < 0: untagged.  Returns the frame length (>= 60). */
static inline size_t
build_ipv4(uint8_t *buf, size_t size, int vlan, uint32_t src, uint32_t dst, uint8_t proto,
	uint16_t sport, uint16_t dport, uint8_t tcp_flags)
{
	size_t off = 12, l4_len = proto == 6 ? 20 : 8, len;

	memset(buf, 0, size);
	buf[0] = 0x02;
	buf[6] = 0x02;
	buf[11] = 1;
	if (vlan >= 0) {
		wr16(buf + off, 0x8100);
		wr16(buf + off + 2, (uint16_t)vlan);
		off += 4;
	}
	wr16(buf + off, 0x0800);
	off += 2;
	buf[off] = 0x45;
	wr16(buf + off + 2, (uint16_t)(20 + l4_len));
	buf[off + 8] = 64;
	buf[off + 9] = proto;
	wr32(buf + off + 12, src);
	wr32(buf + off + 16, dst);
	off += 20;
	wr16(buf + off, sport);
	wr16(buf + off + 2, dport);
	if (proto == 6) {
		buf[off + 12] = 0x50;
		buf[off + 13] = tcp_flags;
	} else {
		wr16(buf + off + 4, 8);
	}
	len = off + l4_len;
	return len < 60 ? 60 : len;
}

#endif
