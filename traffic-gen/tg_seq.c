/* Sequence tracking helpers off the per-packet path. */
#include "tg_seq.h"

/* Marks [from, to) as not seen: they are the numbers a gap skipped, and the
 * bitmap slots still hold numbers one window older. */
void
tg_seq_clear_range(struct tg_seq *t, uint64_t from, uint64_t to)
{
	if (to - from >= TG_SEQ_WINDOW) {
		for (unsigned i = 0; i < TG_SEQ_WINDOW / 64; i++)
			t->window[i] = 0;
		return;
	}
	for (uint64_t s = from; s < to;) {
		if (s % 64 == 0 && to - s >= 64) {
			t->window[(s / 64) % (TG_SEQ_WINDOW / 64)] = 0;
			s += 64;
		} else {
			t->window[(s / 64) % (TG_SEQ_WINDOW / 64)] &= ~(1ULL << (s % 64));
			s++;
		}
	}
}

void
tg_seq_merge(struct tg_seq *dst, const struct tg_seq *src)
{
	dst->received += src->received;
	dst->bytes += src->bytes;
	dst->duplicates += src->duplicates;
	dst->reordered += src->reordered;
	dst->late_unchecked += src->late_unchecked;
	if (src->next > dst->next)
		dst->next = src->next;
}
