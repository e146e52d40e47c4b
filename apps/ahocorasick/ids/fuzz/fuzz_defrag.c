/* libFuzzer target: IP defragmentation (defrag.h).  The input is a policy
 * byte, a family byte, then fragments of 5 bytes each: offset in 8-byte
 * units (2), length (1), flags (more fragments, TTL, datagram id) (1),
 * and a byte reserved.  Fragment i's data bytes are all i, so that in a
 * datagram put back together each byte names the fragment it came from:
 * that fragment must have covered the byte's offset.  The datagram must
 * decode with the length its header says, and the fragment memory must
 * stay within its cap.  A crash, a sanitizer report or a broken invariant
 * fails. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "defrag.h"
#include "frag_frame.h"

#define MAX_FRAGS 200

static uint8_t frame[2048], out[IDS_DEFRAG_MAX_FRAME];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct ids_defrag_cfg c;
	struct ids_target_policy tp;
	char err[256];
	ids_defrag_cfg_default(&c);
	ids_target_policy_init(&tp);
	tp.dflt = (uint8_t)(data[0] % IDS_POLICY_N);
	c.policy = &tp;
	c.max_datagrams = 4;
	c.memcap = 8 * 2048;
	c.max_frags = 8 + data[1] % 64;
	c.max_overlaps = data[1] & 0x80 ? 4 : 0;
	c.timeout = 50;
	c.tiny = 16;
	struct ids_defrag *d = ids_defrag_new(&c, err, sizeof(err));
	if (d == NULL)
		abort();
	int v6 = data[1] & 1;
	struct {
		uint32_t off, end, id;
	} fr[MAX_FRAGS];
	uint32_t n = 0;
	for (size_t i = 2; i + 5 <= size && n < MAX_FRAGS; i += 5, n++) {
		uint32_t off = ((uint32_t)(data[i] << 8 | data[i + 1]) % 2048) * 8;
		uint32_t len = data[i + 2] + 1u, fl = data[i + 3];
		int more = (fl & 1) || off == 0; /* offset 0 and no more: not a fragment */
		uint8_t ttl = (fl & 6) == 6 ? 1 : 64;
		uint32_t id = (fl >> 3) & 1;
		fr[n].off = off;
		fr[n].end = more ? (off + len) & ~7u : off + len;
		fr[n].id = id;
		uint32_t flen =
			frag_frame(frame, v6 ? 6 : 4, id, off, more, (uint8_t)n, len, ttl, 253);
		struct ids_pkt p;
		if (ids_decode(frame, flen, &p) != IDS_PKT_FRAGMENT)
			abort();
		uint32_t ev = 0;
		uint32_t got = ids_defrag_add(d, frame, &p, i, out, &ev);
		if (ids_defrag_stats(d)->bytes_held > c.memcap)
			abort();
		if (got == 0)
			continue;
		struct ids_pkt q;
		enum ids_status st = ids_decode(out, got, &q);
		if (st != IDS_PKT_NOT_TCP_UDP)
			abort();
		uint32_t hdr = v6 ? 54 : 34;
		/* each byte comes from a fragment of this datagram that covered it */
		for (uint32_t x = 0; hdr + x < got; x++) {
			uint32_t k = out[hdr + x];
			int ok = 0;
			for (uint32_t j = k; j < n + 1 && !ok; j += 256)
				ok = fr[j].id == id && fr[j].off <= x && x < fr[j].end;
			if (!ok)
				abort();
		}
	}
	ids_defrag_free(d);
	return 0;
}
