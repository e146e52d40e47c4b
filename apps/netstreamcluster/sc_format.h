/* netstreamcluster's client protocol, its receipt and what P hands to T.
 * README.md describes them for other readers.  Little-endian.
 *
 * A stream: a 32-byte header, then `points` records of `dim` float32:
 *   "PPSC", u32 dim, u64 points, u32 chunk (points per chunk), u16 kmin,
 *   u16 kmax, u64 seed
 * Several streams may follow one another on a connection.  Once T has
 * written a stream's result, R answers a 32-byte receipt:
 *   "PPSR", u8 status (enum sc_end), 3 zero bytes, u64 stream id,
 *   u64 points received, u64 points announced. */
#ifndef SC_FORMAT_H
#define SC_FORMAT_H

#include <stdint.h>

#define SC_HEADER_BYTES 32
#define SC_RECEIPT_BYTES 32
#define SC_MAX_POINTS (1ull << 40) /* larger counts are refused (reset) */

struct sc_header {
	uint32_t dim;
	uint64_t points;
	uint32_t chunk;
	uint16_t kmin, kmax;
	uint64_t seed;
};

/* How a stream ended (receipt status, the result's "status"). */
enum sc_end {
	SC_END_COMPLETE = 0,     /* every announced point received and clustered */
	SC_END_SHORT = 1,        /* the client closed before the announced count */
	SC_END_RESET = 2,        /* the client reset the connection mid-stream */
	SC_END_CUT = 3,          /* the run ended mid-stream */
	SC_END_STORE_FAILED = 4, /* receipt only: the result could not be written */
};

#endif
