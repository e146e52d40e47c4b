/* Lock-free fingerprint table (dd_table.h). */
#include "dd_table.h"

#include <stdbool.h>
#include <string.h>

#include <rte_pause.h>

#define DD_SLOT_EMPTY 0u
#define DD_SLOT_BUSY 1u
#define DD_SLOT_READY 2u

void
dd_table_init(struct dd_table *t, void *mem, uint64_t entries)
{
	t->e = mem;
	t->mask = entries - 1;
}

enum dd_lookup
dd_table_insert(struct dd_table *t, const uint8_t key[DD_SHA1_BYTES])
{
	uint64_t h;
	memcpy(&h, key, sizeof(h)); /* SHA-1 bits are uniform: no further hashing */
	for (unsigned i = 0; i < DD_PROBE; i++) {
		struct dd_entry *e = &t->e[(h + i) & t->mask];
		uint64_t s = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
		if (s == DD_SLOT_EMPTY) {
			uint64_t expect = DD_SLOT_EMPTY;
			if (__atomic_compare_exchange_n(&e->state, &expect, DD_SLOT_BUSY, false,
				    __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
				memcpy(e->key, key, DD_SHA1_BYTES);
				__atomic_store_n(&e->state, DD_SLOT_READY, __ATOMIC_RELEASE);
				return DD_NEW;
			}
			s = expect; /* another P task claimed it first */
		}
		while (s == DD_SLOT_BUSY) {
			rte_pause();
			s = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
		}
		if (memcmp(e->key, key, DD_SHA1_BYTES) == 0)
			return DD_DUP;
	}
	return DD_FULL;
}

uint64_t
dd_table_used(const struct dd_table *t)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i <= t->mask; i++)
		n += __atomic_load_n(&t->e[i].state, __ATOMIC_RELAXED) != DD_SLOT_EMPTY;
	return n;
}
