/* libFuzzer target: TCP reassembly of one direction (stream.h).  The
 * input is a policy byte, a window byte, then operations of 4 bytes: a
 * segment (sequence offset (2), length (1)) or a flush of part of the PDU.
 * Segment i's data bytes are all i (mod 256): every byte in order must
 * name a segment that covered its sequence number, and a byte once in
 * order never changes (the target has it).  The slot's pieces stay
 * sorted, disjoint, within the window and their count; the pool never
 * grows.  A crash, a sanitizer report or a broken invariant fails. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

#define SPACE 70000
#define MAX_OPS 400

static uint8_t delivered[SPACE], seg_data[256];
static uint8_t known[SPACE];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct ids_stream_cfg c;
	char err[256];
	ids_stream_cfg_default(&c);
	c.window = 1024u << (data[1] % 4);
	c.max_segs = 4 + data[1] % 16;
	c.memcap = 1u << 18;
	c.fp_words = 1;
	struct ids_slot_pool *p = ids_slot_pool_new(&c, err, sizeof(err));
	if (p == NULL)
		abort();
	struct ids_stream_stats st = { 0 };
	struct ids_sdir d = { .on = 1, .policy = (uint8_t)(data[0] % IDS_POLICY_N) };
	struct {
		uint32_t s, e;
	} seg[MAX_OPS];
	uint32_t n = 0, flushed = 0, old_pdu_end = 0;
	memset(known, 0, sizeof(known));
	struct ids_slot *s = ids_sdir_get(p, &d, true, &st, NULL);
	if (s == NULL)
		abort();
	for (size_t i = 2; i + 4 <= size && n < MAX_OPS; i += 4) {
		uint32_t seq = (uint32_t)(data[i] << 8 | data[i + 1]), len = data[i + 2] + 1u;
		if ((data[i + 3] & 3) == 3) {
			uint32_t k = s->pdu * (data[i + 3] >> 2) / 63;
			if (k > 0) {
				ids_sdir_flushed(p, &d, s, k);
				flushed += k;
			}
			continue;
		}
		memset(seg_data, (uint8_t)n, len);
		seg[n].s = seq;
		seg[n++].e = seq + len;
		uint32_t ev = 0;
		if (old_pdu_end < d.base)
			old_pdu_end = d.base;
		ids_sdir_insert(p, &d, s, seq, seg_data, len, &st, &ev);
		/* the slot's shape */
		const struct ids_piece *pc = ids_slot_pieces(s);
		if (d.next != d.base + s->pdu || s->n_pieces > c.max_segs || s->hist > c.history ||
			s->pdu > c.window)
			abort();
		for (uint32_t k = 0; k < s->n_pieces; k++)
			if (pc[k].s >= pc[k].e || pc[k].e > c.window || pc[k].s <= s->pdu ||
				(k > 0 && pc[k].s < pc[k - 1].e))
				abort();
		/* the bytes in order: new ones came from a segment that covered
		 * them; older ones (every 16th operation) never changed */
		const uint8_t *b = ids_slot_data(p, s) + s->hist;
		for (uint32_t x = (n % 16 == 0) ? 0 : old_pdu_end - d.base; x < s->pdu; x++) {
			uint32_t at = d.base + x;
			if (at >= SPACE)
				break;
			if (known[at] && delivered[at] != b[x])
				abort();
			if (known[at])
				continue;
			known[at] = 1;
			delivered[at] = b[x];
			int ok = 0;
			for (uint32_t j = b[x]; j < n && !ok; j += 256)
				ok = seg[j].s <= at && at < seg[j].e;
			if (!ok)
				abort();
		}
		old_pdu_end = d.next;
	}
	(void)flushed;
	ids_sdir_put(p, s);
	ids_sdir_release(p, &d);
	if (ids_slot_pool_in_use(p) != 0)
		abort();
	ids_slot_pool_free(p);
	return 0;
}
