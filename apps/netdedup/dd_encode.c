/* Fine chunk -> record (dd_encode.h). */
#include "dd_encode.h"

#include <string.h>

#include <nettle/sha1.h>
#include <rte_byteorder.h>

_Static_assert(SHA1_DIGEST_SIZE == DD_SHA1_BYTES, "SHA-1 is 20 bytes");

static void
put_u32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_le_32(v);
	memcpy(p, &v, 4);
}

static void
put_u64(uint8_t *p, uint64_t v)
{
	v = rte_cpu_to_le_64(v);
	memcpy(p, &v, 8);
}

static void
put_header(uint8_t *out, uint8_t type, uint8_t code, uint32_t raw_len, uint32_t stored_len)
{
	out[0] = type;
	out[1] = code;
	out[2] = out[3] = 0;
	put_u32(out + 4, raw_len);
	put_u32(out + 8, stored_len);
}

int
dd_encoder_init(struct dd_encoder *e, struct dd_table *table, int level)
{
	memset(e, 0, sizeof(*e));
	e->table = table;
	e->level = level;
	if (level == 0)
		return 0;
	/* Raw deflate (no zlib wrapper: the SHA-1 checks the bytes), a 32 KiB
	 * window, zlib's default memory level. */
	return deflateInit2(&e->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK ? 0 : -1;
}

void
dd_encoder_fini(struct dd_encoder *e)
{
	if (e->level != 0)
		deflateEnd(&e->z);
}

size_t
dd_encode_chunk(struct dd_encoder *e, const uint8_t *chunk, size_t len, uint8_t *out)
{
	struct sha1_ctx sha;
	uint8_t *key = out + 12;
	sha1_init(&sha);
	sha1_update(&sha, len, chunk);
	sha1_digest(&sha, SHA1_DIGEST_SIZE, key);
	e->ctr.chunks++;
	e->ctr.raw_bytes += len;
	enum dd_lookup l = dd_table_insert(e->table, key);
	if (l == DD_DUP) {
		e->ctr.duplicate++;
		e->ctr.duplicate_bytes += len;
		put_header(out, DD_REC_REF, 0, (uint32_t)len, 0);
		return DD_REC_BYTES;
	}
	if (l == DD_FULL)
		e->ctr.table_full++;
	e->ctr.unique++;
	e->ctr.unique_bytes += len;
	uint8_t *data = out + DD_REC_BYTES;
	size_t stored = len;
	uint8_t codec = DD_CODEC_STORED;
	if (e->level != 0 && len > 1) {
		/* Room for less than len bytes: what does not shrink is stored. */
		deflateReset(&e->z);
		e->z.next_in = (Bytef *)(uintptr_t)chunk;
		e->z.avail_in = (uInt)len;
		e->z.next_out = data;
		e->z.avail_out = (uInt)(len - 1);
		if (deflate(&e->z, Z_FINISH) == Z_STREAM_END) {
			stored = e->z.total_out;
			codec = DD_CODEC_DEFLATE;
			e->ctr.deflated++;
		}
	}
	if (codec == DD_CODEC_STORED)
		memcpy(data, chunk, len);
	e->ctr.stored_bytes += stored;
	put_header(out, DD_REC_DATA, codec, (uint32_t)len, (uint32_t)stored);
	return DD_REC_BYTES + stored;
}

size_t
dd_encode_header(uint8_t *out, uint64_t stream_id, uint64_t announced)
{
	put_header(out, DD_REC_HEADER, DD_VERSION, 0, 0);
	put_u64(out + 12, stream_id);
	put_u64(out + 20, announced);
	memcpy(out + 28, "PPDD", 4);
	return DD_REC_BYTES;
}

size_t
dd_encode_end(
	uint8_t *out, enum dd_end status, uint64_t received, uint64_t announced, uint32_t chunks)
{
	put_header(out, DD_REC_END, (uint8_t)status, 0, 0);
	put_u64(out + 12, received);
	put_u64(out + 20, announced);
	put_u32(out + 28, chunks);
	return DD_REC_BYTES;
}

void
dd_encode_receipt(
	uint8_t *out, enum dd_end status, uint64_t stream_id, uint64_t stored, uint64_t announced)
{
	memcpy(out, "PPDR", 4);
	out[4] = (uint8_t)status;
	out[5] = out[6] = out[7] = 0;
	put_u64(out + 8, stream_id);
	put_u64(out + 16, stored);
	put_u64(out + 24, announced);
}
