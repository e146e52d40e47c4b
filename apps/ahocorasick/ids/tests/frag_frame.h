/* One IP fragment in an Ethernet frame, for the defragmentation test and
 * fuzzer: IPv4 (198.18.0.1 -> 198.18.0.2, or 10/8 addresses: the same
 * bytes) or IPv6 (2001:db8::1 -> ::2) with a fragment header, protocol
 * proto, len bytes of data all equal to fill at byte offset off (a
 * multiple of 8).  Returns the frame's length (buf: 14 + 48 + len bytes). */
#ifndef IDS_TEST_FRAG_FRAME_H
#define IDS_TEST_FRAG_FRAME_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t
frag_frame(uint8_t *f, int family, uint32_t id, uint32_t off, bool more, uint8_t fill, uint32_t len,
	uint8_t ttl, uint8_t proto)
{
	uint32_t o = 14;
	memset(f, 0, 14);
	if (family == 4) {
		f[12] = 0x08;
		uint8_t *ip = f + o;
		memset(ip, 0, 20);
		ip[0] = 0x45;
		ip[2] = (uint8_t)((20 + len) >> 8);
		ip[3] = (uint8_t)(20 + len);
		ip[4] = (uint8_t)(id >> 8);
		ip[5] = (uint8_t)id;
		uint16_t fo = (uint16_t)(off / 8 | (more ? 0x2000 : 0));
		ip[6] = (uint8_t)(fo >> 8);
		ip[7] = (uint8_t)fo;
		ip[8] = ttl;
		ip[9] = proto;
		ip[12] = ip[16] = 198;
		ip[13] = ip[17] = 18;
		ip[15] = 1;
		ip[19] = 2;
		o += 20;
	} else {
		f[12] = 0x86;
		f[13] = 0xdd;
		uint8_t *ip = f + o;
		memset(ip, 0, 48);
		ip[0] = 0x60;
		ip[4] = (uint8_t)((8 + len) >> 8);
		ip[5] = (uint8_t)(8 + len);
		ip[6] = 44;
		ip[7] = ttl;
		ip[8] = ip[24] = 0x20;
		ip[9] = ip[25] = 0x01;
		ip[10] = ip[26] = 0x0d;
		ip[11] = ip[27] = 0xb8;
		ip[23] = 1;
		ip[39] = 2;
		ip[40] = proto;
		uint16_t fo = (uint16_t)(off | (more ? 1 : 0));
		ip[42] = (uint8_t)(fo >> 8);
		ip[43] = (uint8_t)fo;
		ip[44] = (uint8_t)(id >> 24);
		ip[45] = (uint8_t)(id >> 16);
		ip[46] = (uint8_t)(id >> 8);
		ip[47] = (uint8_t)id;
		o += 48;
	}
	memset(f + o, fill, len);
	return o + len;
}

#endif /* IDS_TEST_FRAG_FRAME_H */
