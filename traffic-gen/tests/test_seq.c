/* Sequence tracking: in order, loss, reordering, duplicates, a big gap, and
 * 32-bit wrap-around, each counted exactly. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tg_seq.h"

static struct tg_seq t;

static void
feed(const uint64_t *s, unsigned n)
{
	memset(&t, 0, sizeof(t));
	for (unsigned i = 0; i < n; i++)
		tg_seq_add(&t, tg_seq_widen(t.next, (uint32_t)s[i]), 64);
}

int
main(void)
{
	/* in order */
	uint64_t a[] = { 0, 1, 2, 3, 4 };
	feed(a, 5);
	CHECK(t.received == 5 && t.duplicates == 0 && t.reordered == 0 && t.next == 5);
	CHECK(t.bytes == 5 * 64);

	/* 2 and 5 lost */
	uint64_t b[] = { 0, 1, 3, 4, 6 };
	feed(b, 5);
	CHECK(t.next - tg_seq_unique(&t) == 2 && t.reordered == 0);

	/* 2 and 3 swapped: one reordered, no loss */
	uint64_t c[] = { 0, 1, 3, 2, 4 };
	feed(c, 5);
	CHECK(t.reordered == 1 && t.duplicates == 0 && t.next - tg_seq_unique(&t) == 0);

	/* 1 twice, 3 twice (once late): two duplicates */
	uint64_t d[] = { 0, 1, 1, 2, 3, 4, 3 };
	feed(d, 7);
	CHECK(t.duplicates == 2 && t.reordered == 0 && tg_seq_unique(&t) == 5);

	/* a gap wider than the window, then a packet from inside the gap */
	memset(&t, 0, sizeof(t));
	tg_seq_add(&t, 0, 64);
	tg_seq_add(&t, 3 * TG_SEQ_WINDOW, 64);
	tg_seq_add(&t, 3 * TG_SEQ_WINDOW - 5, 64); /* late, inside the window: not a dup */
	CHECK(t.reordered == 1 && t.duplicates == 0);
	tg_seq_add(&t, 3 * TG_SEQ_WINDOW - 5, 64); /* now it is */
	CHECK(t.duplicates == 1);
	tg_seq_add(&t, 10, 64); /* older than the window */
	CHECK(t.late_unchecked == 1 && t.reordered == 2);

	/* the bitmap forgets numbers a gap skipped: no false duplicate after wrap of the window */
	memset(&t, 0, sizeof(t));
	for (uint64_t s = 0; s < 3 * TG_SEQ_WINDOW; s += 2)
		tg_seq_add(&t, s, 64);
	tg_seq_add(&t, 3 * TG_SEQ_WINDOW - 3, 64); /* odd: never seen */
	CHECK(t.duplicates == 0 && t.reordered == 1);

	/* 32-bit wire numbers widen across the wrap */
	CHECK(tg_seq_widen(0xfffffff0ULL, 0xfffffff5u) == 0xfffffff5ULL);
	CHECK(tg_seq_widen(0xfffffff0ULL, 0x00000003u) == 0x100000003ULL);
	CHECK(tg_seq_widen(0x100000010ULL, 0xfffffff0u) == 0xfffffff0ULL);
	CHECK(tg_seq_widen(0, 5) == 5);

	/* merge adds counters and keeps the highest number */
	struct tg_seq *m = calloc(1, sizeof(*m));
	feed(c, 5);
	tg_seq_merge(m, &t);
	tg_seq_merge(m, &t);
	CHECK(m->received == 10 && m->reordered == 2 && m->next == 5);
	free(m);
	return CHECK_DONE();
}
