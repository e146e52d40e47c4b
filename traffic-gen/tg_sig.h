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
#ifndef TG_SIG_H
#define TG_SIG_H

#include <stdint.h>
#include <string.h>

#define TG_SIG_LEN 18
#define TG_SIG_MAGIC 0x67745050u /* "PPtg" read as little-endian */

struct tg_sig {
	uint32_t magic;
	uint16_t stream;
	uint32_t seq;
	uint64_t tsc;
} __attribute__((packed));

_Static_assert(sizeof(struct tg_sig) == TG_SIG_LEN, "signature layout");

#endif
