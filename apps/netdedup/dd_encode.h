/* P's work on one fine chunk: its SHA-1 (nettle), the shared table, and
 * a record in the deduplicated stream (dd_format.h): a reference when the
 * table knew the fingerprint, else the bytes, deflated (zlib, raw deflate)
 * when that makes them smaller.  One encoder per P task: its deflate state
 * is made once and reset per chunk, so nothing is allocated per chunk. */
#ifndef DD_ENCODE_H
#define DD_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#include "dd_format.h"
#include "dd_table.h"

struct dd_encode_counters {
	uint64_t chunks, unique, duplicate, table_full;
	uint64_t raw_bytes, unique_bytes, duplicate_bytes;
	uint64_t stored_bytes; /* payload bytes of 'D' records */
	uint64_t deflated;     /* 'D' records deflate made smaller */
};

struct dd_encoder {
	struct dd_table *table;
	int level; /* 0: store only */
	z_stream z;
	struct dd_encode_counters ctr;
};

/* 0, or -1 when zlib cannot set up (out of memory). */
int dd_encoder_init(struct dd_encoder *e, struct dd_table *table, int level);
void dd_encoder_fini(struct dd_encoder *e);

/* The most one chunk of len bytes can take in the stream. */
static inline size_t
dd_encode_bound(size_t len)
{
	return DD_REC_BYTES + len;
}

/* Appends the chunk's record at out; returns the bytes written (at most
 * dd_encode_bound(len)). */
size_t dd_encode_chunk(struct dd_encoder *e, const uint8_t *chunk, size_t len, uint8_t *out);

/* The 'H' and 'E' records; each returns DD_REC_BYTES. */
size_t dd_encode_header(uint8_t *out, uint64_t stream_id, uint64_t announced);
size_t dd_encode_end(
	uint8_t *out, enum dd_end status, uint64_t received, uint64_t announced, uint32_t chunks);

/* The receipt (DD_RECEIPT_BYTES). */
void dd_encode_receipt(
	uint8_t *out, enum dd_end status, uint64_t stream_id, uint64_t stored, uint64_t announced);

#endif
