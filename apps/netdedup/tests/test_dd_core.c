/* Unit tests of netdedup's chunking, dedup table and records (no EAL). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha1.h>
#include <zlib.h>

#include "dd_chunk.h"
#include "dd_encode.h"
#include "dd_table.h"

static int failures;

#define CHECK(cond, ...)                                                           \
	do {                                                                       \
		if (!(cond)) {                                                     \
			failures++;                                                \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                              \
			fputc('\n', stderr);                                       \
		}                                                                  \
	} while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)next();
}

/* Chunk ends (offsets after each chunk) of p, scanned in pieces of `piece`. */
static size_t
chunk_ends(const uint8_t *p, size_t n, size_t piece, size_t *ends, size_t max)
{
	struct dd_cdc st;
	dd_cdc_reset(&st);
	size_t k = 0, pos = 0;
	while (pos < n) {
		size_t len = n - pos < piece ? n - pos : piece, off = 0;
		while (off < len) {
			bool cut;
			off += dd_cdc_scan(&st, p + pos + off, len - off, &cut);
			if (cut && k < max)
				ends[k++] = pos + off;
		}
		pos += len;
	}
	return k;
}

static void
test_chunking(void)
{
	enum {
		N = 1 << 20,
		MAXC = 4096
	};
	uint8_t *a = malloc(N + 64), *b = malloc(N + 64);
	static size_t e1[MAXC], e2[MAXC], e3[MAXC];
	fill(a, N);
	size_t n1 = chunk_ends(a, N, N, e1, MAXC);
	CHECK(n1 > N / DD_MAX_CHUNK && n1 < N / DD_MIN_CHUNK, "%zu chunks in 1 MiB", n1);
	size_t prev = 0, lo = SIZE_MAX, hi = 0;
	for (size_t i = 0; i < n1; i++) {
		size_t len = e1[i] - prev;
		lo = len < lo ? len : lo;
		hi = len > hi ? len : hi;
		prev = e1[i];
	}
	CHECK(lo >= DD_MIN_CHUNK && hi <= DD_MAX_CHUNK, "chunk sizes %zu..%zu", lo, hi);
	/* Scanning in pieces (as P does across messages) cuts at the same places. */
	size_t n2 = chunk_ends(a, N, 4093, e2, MAXC);
	CHECK(n2 == n1 && memcmp(e1, e2, n1 * sizeof(*e1)) == 0, "pieces: %zu vs %zu chunks", n2,
		n1);
	/* Zeros: no content boundary, so every chunk is DD_MAX_CHUNK long. */
	memset(b, 0, N);
	size_t n3 = chunk_ends(b, N, N, e3, MAXC);
	CHECK(n3 == N / DD_MAX_CHUNK && e3[0] == DD_MAX_CHUNK, "zeros: %zu chunks, first %zu", n3,
		n3 ? e3[0] : 0);
	/* 7 bytes inserted near the start: the boundaries after it come back
	 * at the same content (shifted by 7). */
	memcpy(b, a, 1000);
	fill(b + 1000, 7);
	memcpy(b + 1007, a + 1000, N - 1000);
	size_t n4 = chunk_ends(b, N, N, e3, MAXC), same = 0;
	for (size_t i = 0, j = 0; i < n1 && j < n4;) {
		if (e3[j] == e1[i] + 7) {
			same++;
			i++;
			j++;
		} else if (e3[j] < e1[i] + 7) {
			j++;
		} else {
			i++;
		}
	}
	CHECK(same + 3 >= n1, "after an insertion %zu of %zu boundaries come back", same, n1);
	free(a);
	free(b);
}

static void
key_of(uint64_t i, uint8_t key[DD_SHA1_BYTES])
{
	struct sha1_ctx s;
	sha1_init(&s);
	sha1_update(&s, sizeof(i), (const uint8_t *)&i);
	sha1_digest(&s, DD_SHA1_BYTES, key);
}

struct racer {
	struct dd_table *t;
	unsigned new_count;
	unsigned start;
};

static void *
race(void *arg)
{
	struct racer *r = arg;
	uint8_t key[DD_SHA1_BYTES];
	for (unsigned i = 0; i < 20000; i++) {
		key_of((i + r->start) % 20000, key);
		r->new_count += dd_table_insert(r->t, key) == DD_NEW;
	}
	return NULL;
}

static void
test_table(void)
{
	uint8_t key[DD_SHA1_BYTES];
	struct dd_table t;
	void *mem = calloc(1 << 16, sizeof(struct dd_entry));
	dd_table_init(&t, mem, 1 << 16);
	unsigned news = 0, dups = 0;
	for (uint64_t i = 0; i < 1000; i++) {
		key_of(i, key);
		news += dd_table_insert(&t, key) == DD_NEW;
	}
	for (uint64_t i = 0; i < 1000; i++) {
		key_of(i, key);
		dups += dd_table_insert(&t, key) == DD_DUP;
	}
	CHECK(news == 1000 && dups == 1000 && dd_table_used(&t) == 1000, "%u new, %u dup", news,
		dups);
	free(mem);

	/* A 64-slot table fills: new keys are then FULL, known ones still DUP. */
	mem = calloc(64, sizeof(struct dd_entry));
	dd_table_init(&t, mem, 64);
	unsigned full = 0;
	for (uint64_t i = 0; i < 200; i++) {
		key_of(i, key);
		full += dd_table_insert(&t, key) == DD_FULL;
	}
	uint64_t used = dd_table_used(&t);
	CHECK(full == 200 - used && used >= 32 && used <= 64, "%u full, %" PRIu64 " used", full,
		used);
	for (uint64_t i = 0; i < 200; i++) {
		key_of(i, key);
		enum dd_lookup l = dd_table_insert(&t, key);
		CHECK(l == DD_DUP || l == DD_FULL, "key %" PRIu64 ": %d", i, (int)l);
	}
	free(mem);

	/* Two threads insert the same keys in different orders: each key is
	 * new exactly once. */
	mem = calloc(1 << 16, sizeof(struct dd_entry));
	dd_table_init(&t, mem, 1 << 16);
	struct racer r[2] = { { &t, 0, 0 }, { &t, 0, 10000 } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, race, &r[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK(r[0].new_count + r[1].new_count == 20000, "%u + %u new of 20000", r[0].new_count,
		r[1].new_count);
	free(mem);
}

static uint32_t
u32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void
test_records(void)
{
	struct dd_table t;
	void *mem = calloc(1024, sizeof(struct dd_entry));
	dd_table_init(&t, mem, 1024);
	struct dd_encoder e;
	CHECK(dd_encoder_init(&e, &t, 1) == 0, "deflate set up");
	static uint8_t text[8192], rnd[8192], out[2 * 8192 + 64], back[8192];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)("netdedup "[i % 9]);
	fill(rnd, sizeof(rnd));

	size_t n = dd_encode_chunk(&e, text, sizeof(text), out);
	CHECK(out[0] == 'D' && out[1] == DD_CODEC_DEFLATE && u32_at(out + 4) == sizeof(text) &&
			n == DD_REC_BYTES + u32_at(out + 8) && n < sizeof(text) / 4,
		"text: type %c codec %u, %zu bytes", out[0], out[1], n);
	uint8_t sha[DD_SHA1_BYTES];
	struct sha1_ctx s;
	sha1_init(&s);
	sha1_update(&s, sizeof(text), text);
	sha1_digest(&s, DD_SHA1_BYTES, sha);
	CHECK(memcmp(out + 12, sha, DD_SHA1_BYTES) == 0, "the key is the chunk's SHA-1");
	z_stream z = { 0 };
	inflateInit2(&z, -15);
	z.next_in = out + DD_REC_BYTES;
	z.avail_in = u32_at(out + 8);
	z.next_out = back;
	z.avail_out = sizeof(back);
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out == sizeof(text) &&
			memcmp(back, text, sizeof(text)) == 0,
		"the deflated bytes inflate back");
	inflateEnd(&z);

	n = dd_encode_chunk(&e, rnd, sizeof(rnd), out);
	CHECK(out[1] == DD_CODEC_STORED && n == DD_REC_BYTES + sizeof(rnd) &&
			memcmp(out + DD_REC_BYTES, rnd, sizeof(rnd)) == 0 &&
			n <= dd_encode_bound(sizeof(rnd)),
		"random bytes are stored as they are (%zu bytes)", n);
	n = dd_encode_chunk(&e, text, sizeof(text), out);
	CHECK(n == DD_REC_BYTES && out[0] == 'R' && u32_at(out + 4) == sizeof(text) &&
			memcmp(out + 12, sha, DD_SHA1_BYTES) == 0,
		"a repeat is a 32-byte reference");
	CHECK(e.ctr.chunks == 3 && e.ctr.unique == 2 && e.ctr.duplicate == 1, "counters");
	CHECK(dd_encode_header(out, 7, 1234) == DD_REC_BYTES && out[0] == 'H' && out[12] == 7 &&
			memcmp(out + 28, "PPDD", 4) == 0,
		"header record");
	CHECK(dd_encode_end(out, DD_END_SHORT, 99, 1234, 3) == DD_REC_BYTES && out[0] == 'E' &&
			out[1] == DD_END_SHORT && out[12] == 99 && out[28] == 3,
		"end record");
	dd_encode_receipt(out, DD_END_COMPLETE, 5, 6, 7);
	CHECK(memcmp(out, "PPDR", 4) == 0 && out[4] == 0 && out[8] == 5 && out[16] == 6 &&
			out[24] == 7,
		"receipt");
	dd_encoder_fini(&e);
	free(mem);
}

int
main(void)
{
	test_chunking();
	test_table();
	test_records();
	if (failures != 0) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	puts("dd_core: all checks passed");
	return 0;
}
