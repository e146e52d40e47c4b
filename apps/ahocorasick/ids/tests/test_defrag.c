/* Defragmentation: the Sturges-Novak fragment test (17 fragments, 9 of
 * them overlapping others) gives, per policy, the datagram Novak and
 * Sturges measured on each stack ("Target-Based Fragmentation
 * Reassembly", 2005; the same vectors as Suricata's defrag tests), over
 * IPv4 and IPv6; then the limits: timeout, datagrams in flight, memory,
 * TTL, tiny and zero fragments, fragments out of order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decode.h"
#include "defrag.h"
#include "frag_frame.h"

static uint8_t frame_buf[2048];

static uint32_t
fragment(int family, uint32_t id, uint32_t off, bool more, char c, uint32_t len, uint8_t ttl)
{
	return frag_frame(frame_buf, family, id, off, more, (uint8_t)c, len, ttl, 17);
}

static uint8_t out[IDS_DEFRAG_MAX_FRAME];

/* Add one fragment; the datagram's length when it completes. */
static uint32_t
add(struct ids_defrag *d, int family, uint32_t id, uint32_t off, bool more, char c, uint32_t len,
	uint64_t now, uint8_t ttl, uint32_t *ev)
{
	uint32_t n = fragment(family, id, off, more, c, len, ttl);
	struct ids_pkt p;
	enum ids_status s = ids_decode(frame_buf, n, &p);
	CHECK(s == IDS_PKT_FRAGMENT, "fragment %u@%u decodes as %s", len, off, ids_status_name[s]);
	*ev = 0;
	return ids_defrag_add(d, frame_buf, &p, now, out, ev);
}

static const struct {
	uint32_t off, len;
	char c;
} novak[17] = {
	{ 0, 24, 'A' },
	{ 32, 16, 'B' },
	{ 48, 24, 'C' },
	{ 80, 8, 'D' },
	{ 104, 16, 'E' },
	{ 120, 24, 'F' },
	{ 144, 16, 'G' },
	{ 160, 16, 'H' },
	{ 176, 8, 'I' },
	{ 8, 32, 'J' },
	{ 48, 24, 'K' },
	{ 72, 24, 'L' },
	{ 96, 24, 'M' },
	{ 128, 8, 'N' },
	{ 152, 8, 'O' },
	{ 160, 8, 'P' },
	{ 176, 16, 'Q' },
};

/* Each 8-byte unit of the published results. */
static const char *const novak_result[IDS_POLICY_N] = {
	[IDS_POLICY_BSD] = "AAAJJBCCCLLLMMMFFFGGHHIQ",
	[IDS_POLICY_LINUX] = "AAAJJBKKKLLLMMMFFFGGPHQQ",
	[IDS_POLICY_WINDOWS] = "AAAJBBCCCLLLMEEFFFGGHHIQ",
	[IDS_POLICY_SOLARIS] = "AAAJBBCCCLLLMMMFFFGGHHIQ",
	[IDS_POLICY_FIRST] = "AAAJBBCCCLDLMEEFFFGGHHIQ",
	[IDS_POLICY_LAST] = "AJJJJBKKKLLLMMMFNFGOPHQQ",
};

static void
sturges_novak(int family, enum ids_policy pol)
{
	struct ids_defrag_cfg c;
	struct ids_target_policy tp;
	char err[256];
	ids_defrag_cfg_default(&c);
	ids_target_policy_init(&tp);
	tp.dflt = (uint8_t)pol;
	c.policy = &tp;
	struct ids_defrag *d = ids_defrag_new(&c, err, sizeof(err));
	CHECK(d != NULL, "%s", err);
	uint32_t n = 0, ev, overlaps = 0;
	for (int i = 0; i < 17; i++) {
		n = add(d, family, 7, novak[i].off, i != 16, novak[i].c, novak[i].len, i, 64, &ev);
		CHECK(i == 16 || n == 0, "complete after fragment %d", i);
		overlaps += (ev >> IDS_EV_FRAG_OVERLAP) & 1;
	}
	CHECK(overlaps >= 8, "%s: %u fragments raised the overlap event", ids_policy_name[pol],
		overlaps);
	struct ids_pkt p;
	enum ids_status s = ids_decode(out, n, &p);
	CHECK(s == IDS_PKT_NOT_TCP_UDP || s == IDS_PKT_OK, "the datagram decodes: %s",
		ids_status_name[s]);
	uint32_t hdr = family == 4 ? 34 : 54;
	char got[25] = { 0 };
	for (int u = 0; u < 24 && hdr + 8 * u + 8 <= n; u++) {
		got[u] = (char)out[hdr + 8 * u];
		for (int k = 1; k < 8; k++)
			if (out[hdr + 8 * u + k] != out[hdr + 8 * u])
				got[u] = '?';
	}
	CHECK(n == hdr + 192 && strcmp(got, novak_result[pol]) == 0, "IPv%d %s: %s, want %s",
		family, ids_policy_name[pol], got, novak_result[pol]);
	if (family == 6)
		CHECK(out[14 + 6] == 17 && (out[18] << 8 | out[19]) == 192,
			"IPv6 next header %u, payload length %u", out[20], out[18] << 8 | out[19]);
	else
		CHECK((out[16] << 8 | out[17]) == 212 && out[20] == 0 && out[21] == 0,
			"IPv4 total length %u", out[16] << 8 | out[17]);
	CHECK(ids_defrag_stats(d)->in_flight == 0 && ids_defrag_stats(d)->bytes_held == 0,
		"everything given back");
	ids_defrag_free(d);
}

static void
limits(void)
{
	struct ids_defrag_cfg c;
	char err[256];
	uint32_t ev;
	ids_defrag_cfg_default(&c);
	c.max_datagrams = 4;
	c.timeout = 100;
	c.memcap = 8 * 2048;
	c.tiny = 16;
	struct ids_defrag *d = ids_defrag_new(&c, err, sizeof(err));
	CHECK(d != NULL, "%s", err);
	const struct ids_defrag_stats *st = ids_defrag_stats(d);
	/* out of order, then complete */
	CHECK(add(d, 4, 1, 16, false, 'c', 5, 0, 64, &ev) == 0, "held");
	CHECK(add(d, 4, 1, 8, true, 'b', 8, 1, 64, &ev) == 0, "held");
	CHECK(add(d, 4, 1, 0, true, 'a', 8, 2, 64, &ev) == 34 + 21, "complete");
	CHECK((ev >> IDS_EV_FRAG_TINY) & 1, "8 bytes is tiny at 16");
	CHECK(memcmp(out + 34, "aaaaaaaabbbbbbbbccccc", 21) == 0, "data in order");
	/* a TTL far below the first fragment's: not used */
	CHECK(add(d, 4, 2, 0, true, 'a', 8, 3, 64, &ev) == 0, "held");
	CHECK(add(d, 4, 2, 8, false, 'X', 8, 4, 3, &ev) == 0 && ((ev >> IDS_EV_FRAG_TTL_DELTA) & 1),
		"TTL 3 after 64: not used");
	CHECK(add(d, 4, 2, 8, false, 'b', 8, 5, 63, &ev) == 50, "the real one completes it");
	CHECK(out[42] == 'b', "not the insertion");
	CHECK(add(d, 4, 3, 0, true, 'a', 8, 6, 0, &ev) == 0 && ((ev >> IDS_EV_FRAG_MIN_TTL) & 1),
		"TTL 0");
	/* zero-length, and beyond 65535 */
	CHECK(add(d, 4, 4, 8, true, 'a', 0, 7, 64, &ev) == 0 && ((ev >> IDS_EV_FRAG_ZERO) & 1),
		"zero");
	CHECK(add(d, 4, 4, 65528, false, 'a', 16, 7, 64, &ev) == 0 &&
			((ev >> IDS_EV_FRAG_TOO_LARGE) & 1),
		"too large");
	/* timeout: an old datagram is given up, a new one starts */
	uint64_t t0 = st->timeouts;
	CHECK(add(d, 4, 5, 0, true, 'a', 8, 10, 64, &ev) == 0, "held");
	CHECK(add(d, 4, 5, 8, false, 'b', 8, 500, 64, &ev) == 0, "too late: given up");
	CHECK(st->timeouts > t0, "timeout counted");
	/* datagrams in flight: the least recently used goes */
	for (uint32_t id = 10; id < 16; id++)
		add(d, 4, id, 0, true, 'a', 8, 600 + id, 64, &ev);
	CHECK(st->in_flight == 4 && st->evicted_full >= 2, "in flight %lu, evicted %lu",
		(unsigned long)st->in_flight, (unsigned long)st->evicted_full);
	ids_defrag_free(d);
	/* memory: 8 blocks; datagrams of 2 blocks each push the oldest out,
	 * never past the cap */
	c.max_datagrams = 64;
	d = ids_defrag_new(&c, err, sizeof(err));
	CHECK(d != NULL, "%s", err);
	st = ids_defrag_stats(d);
	for (uint32_t id = 20; id < 30; id++)
		add(d, 4, id, 1024, true, 'm', 1480, 700 + id, 64, &ev);
	CHECK(st->bytes_held <= 8 * 2048 && st->bytes_held_max <= 8 * 2048 &&
			st->evicted_memcap > 0,
		"held %lu (max %lu), evicted %lu", (unsigned long)st->bytes_held,
		(unsigned long)st->bytes_held_max, (unsigned long)st->evicted_memcap);
	ids_defrag_free(d);
}

int
main(void)
{
	for (int fam = 4; fam <= 6; fam += 2)
		for (int pol = 0; pol < IDS_POLICY_N; pol++)
			sturges_novak(fam, (enum ids_policy)pol);
	limits();
	return check_done("defrag");
}
