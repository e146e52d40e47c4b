/* Content-defined chunking with a gear rolling hash (FastCDC's):
 * h = (h << 1) + G[byte].  Bit k of h depends on the last k + 1 bytes
 * only, so h's top DD_AVG_BITS bits depend on the last 64 bytes: a chunk
 * ends where they are all zero (after DD_MIN_CHUNK bytes), or at
 * DD_MAX_CHUNK bytes.  Boundaries follow the content, not its offset:
 * an insertion moves the chunks around it and leaves the rest alone. */
#ifndef DD_CHUNK_H
#define DD_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DD_MIN_CHUNK 1024u
#define DD_MAX_CHUNK 16384u
#define DD_AVG_BITS 12 /* about 4 KiB past the minimum on random data */

/* Where the scan of the current chunk is (carried across buffers). */
struct dd_cdc {
	uint64_t h;
	uint32_t len; /* bytes of the current chunk scanned so far */
};

static inline void
dd_cdc_reset(struct dd_cdc *st)
{
	st->h = 0;
	st->len = 0;
}

/* Scans p[0..n) as the continuation of the current chunk.  Returns how
 * many bytes belong to it; *cut says whether the chunk ends there (the
 * state is then reset for the next chunk) or goes on past p + n. */
size_t dd_cdc_scan(struct dd_cdc *st, const uint8_t *p, size_t n, bool *cut);

#endif
