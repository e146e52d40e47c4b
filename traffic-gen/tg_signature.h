/* The signature pp-tgen writes right after the L4 header of every template
 * packet, and looks for in every received packet:
 *
 *   offset 0  magic   4 bytes  "PPtg"
 *          4  stream  2 bytes  bits 15..8: run epoch (RFC 2544 trial), 7..0: stream
 *          6  seq     4 bytes  per-stream sequence number, from 0
 *         10  tsc     8 bytes  TSC when the burst was handed to the port; 0 = none
 *
 * 18 bytes, host byte order (sender and receiver share the host and its TSC):
 * a 64-byte UDP frame (42 header bytes + 18 + 4 FCS) holds it exactly. */
#ifndef TG_SIGNATURE_H
#define TG_SIGNATURE_H

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>

#define TG_SIG_LEN 18
#define TG_SIG_MAGIC 0x67745050u /* "PPtg" read as little-endian */

struct tg_sig {
	uint32_t magic;
	uint16_t stream;
	uint32_t seq;
	uint64_t tsc;
} __attribute__((packed));

_Static_assert(sizeof(struct tg_sig) == TG_SIG_LEN, "signature layout");

/* Offset of the signature, or 0 when the packet is not IPv4 UDP-shaped/TCP. */
static inline unsigned
tg_sig_offset(const uint8_t *p, unsigned len)
{
	unsigned off = 14, ihl;
	uint16_t type;

	if (len < 14 + 20 + 8 + TG_SIG_LEN)
		return 0;
	memcpy(&type, p + 12, 2);
	if (type == rte_cpu_to_be_16(0x8100)) {
		memcpy(&type, p + 16, 2);
		off += 4;
	}
	if (type != rte_cpu_to_be_16(0x0800) || (p[off] >> 4) != 4)
		return 0;
	ihl = (p[off] & 0xf) * 4u;
	if (ihl < 20)
		return 0;
	if (p[off + 9] == 6) {
		if (off + ihl + 13 > len)
			return 0;
		off += ihl + (p[off + ihl + 12] >> 4) * 4u;
	} else {
		off += ihl + 8;
	}
	return off + TG_SIG_LEN <= len ? off : 0;
}

#endif
