/* libFuzzer target: frame decoding (decode.h) on any bytes, tunnels
 * (VXLAN, Geneve) and MPLS included.  The input is a frame.  Every offset
 * the decoder gives stays inside the frame and in order (outermost IP,
 * innermost IP, L4 header, payload), the nesting within its bound; a
 * fragment goes to a defragmenter kept across inputs (tunnelled ones come
 * back as their inner frame), and a datagram it puts back together must
 * decode again as no fragment.  A crash, a sanitizer report or a broken
 * invariant fails. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "defrag.h"

static uint8_t out[IDS_DEFRAG_MAX_FRAME];
static struct ids_defrag *defrag;
static uint64_t now;

static void
check(const struct ids_pkt *p, enum ids_status st, uint32_t len)
{
	if (p->tunnels > IDS_TUNNEL_MAX_DEPTH || p->tun_err >= IDS_TUN_N_ERR)
		abort();
	if (st == IDS_PKT_OK) {
		if (p->outer_l3_off > p->l3_off || p->l3_off >= p->l4_off || p->l4_off >= p->off ||
			p->off + p->len > len || p->off + p->len != p->ip_end)
			abort();
		if (p->l2_off != IDS_NO_L2 && p->l2_off + 14 > p->l3_off)
			abort();
	} else if (st == IDS_PKT_FRAGMENT) {
		if (p->l3_off >= p->frag_data || p->frag_data > p->ip_end || p->ip_end > len)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (defrag == NULL) {
		struct ids_defrag_cfg c;
		char err[256];
		ids_defrag_cfg_default(&c);
		c.max_datagrams = 8;
		c.memcap = 16 * 2048;
		c.timeout = 1000;
		defrag = ids_defrag_new(&c, err, sizeof(err));
		if (defrag == NULL)
			abort();
	}
	/* the input itself, exactly size bytes: ASan sees any read past them */
	const uint8_t *frame = data;
	uint32_t len = size < 65536 ? (uint32_t)size : 65536;
	struct ids_pkt p;
	enum ids_status st = ids_decode(frame, len, &p);
	if (st >= IDS_PKT_N_STATUS)
		abort();
	check(&p, st, len);
	if (st != IDS_PKT_FRAGMENT)
		return 0;
	uint32_t ev = 0, n = ids_defrag_add(defrag, frame, &p, ++now, out, &ev);
	if (n == 0)
		return 0;
	struct ids_pkt q;
	st = ids_decode(out, n, &q);
	if (st == IDS_PKT_FRAGMENT)
		abort();
	check(&q, st, n);
	return 0;
}
