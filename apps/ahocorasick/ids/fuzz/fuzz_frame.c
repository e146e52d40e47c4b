/* libFuzzer target: frame decoding (decode.h) on any bytes, tunnels
 * (VXLAN, Geneve) and MPLS included.  The input is a frame.  Every offset
 * the decoder gives stays inside the frame and in order (outermost IP,
 * innermost IP, L4 header, payload), the nesting within its bound; a
 * fragment goes to a defragmenter kept across inputs (tunnelled ones come
 * back as their inner frame), and a datagram it puts back together that
 * decodes as a fragment again (a tunnel's inner packet cut as well as the
 * outer datagram) goes to the defragmenter in turn, as in ids_process.  A
 * crash, a sanitizer report or a broken invariant fails. */
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
	/* as ids_process: a datagram put back together that decodes as a
	 * fragment again (a tunnel's inner packet cut too) goes to the
	 * defragmenter in turn, IDS_TUNNEL_MAX_DEPTH + 1 times at most */
	const uint8_t *in = frame;
	for (int level = 0; level <= IDS_TUNNEL_MAX_DEPTH; level++) {
		uint32_t ev = 0, n = ids_defrag_add(defrag, in, &p, ++now, out, &ev);
		if (n == 0)
			return 0;
		st = ids_decode(out, n, &p);
		check(&p, st, n);
		if (st != IDS_PKT_FRAGMENT)
			return 0;
		in = out;
	}
	return 0;
}
