/* The deduplicated stream netdedup's T writes, one file per client stream
 * (DIR/stream-<id>.pdd), and the receipt R sends back.  netdedup_decode.py
 * reads it; README.md describes it for other readers.  Little-endian.
 *
 * Every record starts with a 32-byte header:
 *   u8 type, u8 code, u16 zero, u32 raw_len, u32 stored_len, u8 key[20]
 *   'H' (first): code = version (1); key = u64 stream id, u64 announced
 *       length, "PPDD"
 *   'D' data: code = DD_CODEC_*; raw_len bytes of input whose SHA-1 is
 *       key, then stored_len bytes (raw deflate, or the bytes as they are
 *       when deflate would not make them smaller)
 *   'R' reference: the raw_len bytes whose SHA-1 is key, stored by a 'D'
 *       record of this run (in this stream or another)
 *   'E' end (last): code = DD_END_*; key = u64 bytes received, u64
 *       announced length, u32 chunks
 * A 'D' whose fingerprint the table was too full to hold is written again
 * when its bytes come again (nothing is lost, only deduplication). */
#ifndef DD_FORMAT_H
#define DD_FORMAT_H

#include <stdint.h>

#define DD_REC_BYTES 32
#define DD_SHA1_BYTES 20
#define DD_VERSION 1

#define DD_REC_HEADER 'H'
#define DD_REC_DATA 'D'
#define DD_REC_REF 'R'
#define DD_REC_END 'E'

#define DD_CODEC_STORED 0
#define DD_CODEC_DEFLATE 1

/* How a stream ended ('E' record and receipt status). */
enum dd_end {
	DD_END_COMPLETE = 0,     /* every announced byte received and stored */
	DD_END_SHORT = 1,        /* the client closed before the announced length */
	DD_END_RESET = 2,        /* the client reset the connection mid-stream */
	DD_END_CUT = 3,          /* the run ended mid-stream */
	DD_END_STORE_FAILED = 4, /* receipt only: the stream's file could not be written */
};

/* The receipt: 32 bytes R sends once T has written a stream's end:
 *   "PPDR", u8 status (enum dd_end), 3 zero bytes, u64 stream id,
 *   u64 bytes stored, u64 announced length. */
#define DD_RECEIPT_BYTES 32

/* The client protocol: u64 length, big-endian (network order), then that
 * many bytes; several streams may follow one another on a connection. */
#define DD_LENGTH_BYTES 8
#define DD_MAX_ANNOUNCED (1ull << 48) /* larger lengths are refused (reset) */

#endif
