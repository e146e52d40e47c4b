/* Per-stream sequence tracking: loss, duplicates and reordering.
 *
 * The sender numbers the packets of a stream 0, 1, 2, ...  The receiver keeps
 * the highest number seen and a bitmap of the last TG_SEQ_WINDOW numbers, so
 * a packet is exactly one of: in order / ahead (a gap opens), late (arrives
 * after a higher number: reordered, closes part of a gap) or a duplicate.
 * Packets older than the window are counted as reordered without a duplicate
 * check (late_unchecked says how many).
 * Loss = expected - unique, where expected is what the sender says it sent
 * or, for a foreign sender, the highest number seen + 1. */
#ifndef TG_SEQ_H
#define TG_SEQ_H

#include <stdint.h>

#define TG_SEQ_WINDOW (1u << 16)

struct tg_seq {
	uint64_t received; /* every packet of the stream, duplicates included */
	uint64_t bytes;
	uint64_t duplicates;
	uint64_t reordered;      /* arrived after a higher sequence number */
	uint64_t late_unchecked; /* reordered beyond the window */
	uint64_t next;           /* highest sequence number seen + 1; 0 when none */
	uint64_t window[TG_SEQ_WINDOW / 64];
};

/* Widens a 32-bit wire sequence number to the 64-bit value nearest NEXT. */
static inline uint64_t
tg_seq_widen(uint64_t next, uint32_t s32)
{
	uint64_t c = (next & ~0xffffffffULL) | s32;

	if (c > next + 0x80000000ULL && c >= 0x100000000ULL)
		c -= 0x100000000ULL;
	else if (c + 0x80000000ULL < next)
		c += 0x100000000ULL;
	return c;
}

static inline void
tg_seq_bit_set(struct tg_seq *t, uint64_t s)
{
	t->window[(s / 64) % (TG_SEQ_WINDOW / 64)] |= 1ULL << (s % 64);
}

static inline int
tg_seq_bit_test(const struct tg_seq *t, uint64_t s)
{
	return (t->window[(s / 64) % (TG_SEQ_WINDOW / 64)] >> (s % 64)) & 1;
}

void tg_seq_clear_range(struct tg_seq *t, uint64_t from, uint64_t to);

static inline void
tg_seq_add(struct tg_seq *t, uint64_t s, uint32_t len)
{
	t->received++;
	t->bytes += len;
	if (s >= t->next) {
		if (s != t->next)
			tg_seq_clear_range(t, t->next, s);
		t->window[(s / 64) % (TG_SEQ_WINDOW / 64)] &= ~(1ULL << (s % 64));
		tg_seq_bit_set(t, s);
		t->next = s + 1;
		return;
	}
	if (t->next - s > TG_SEQ_WINDOW) {
		t->reordered++;
		t->late_unchecked++;
		return;
	}
	if (tg_seq_bit_test(t, s)) {
		t->duplicates++;
		return;
	}
	tg_seq_bit_set(t, s);
	t->reordered++;
}

/* Merges counters of SRC into DST (the same stream seen on several queues):
 * duplicates across queues are not detected. */
void tg_seq_merge(struct tg_seq *dst, const struct tg_seq *src);

static inline uint64_t
tg_seq_unique(const struct tg_seq *t)
{
	return t->received - t->duplicates;
}

#endif
