/* The dedup table: SHA-1 fingerprints seen in this run, one table shared
 * by every P task, lock-free.  Open addressing with a bounded linear probe
 * (DD_PROBE slots, two cache lines' worth of neighbours per line); a slot
 * goes EMPTY -> BUSY (claimed with a compare-and-swap) -> READY (key
 * written, released).  A reader that meets a BUSY slot waits for the
 * claimer's 20-byte copy.  Fixed size: when the probe finds neither the key
 * nor a free slot the table is full for that key (counted; the chunk is
 * then stored as new data, never lost). */
#ifndef DD_TABLE_H
#define DD_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "dd_format.h"

#define DD_PROBE 32

struct dd_entry {
	uint64_t state; /* DD_SLOT_* */
	uint8_t key[DD_SHA1_BYTES];
	uint32_t pad;
};

struct dd_table {
	struct dd_entry *e;
	uint64_t mask; /* entries - 1 */
};

enum dd_lookup {
	DD_NEW,  /* inserted: the caller stores the chunk */
	DD_DUP,  /* already there: the caller writes a reference */
	DD_FULL, /* not there and no room within the probe */
};

/* entries: a power of two; mem: entries * sizeof(struct dd_entry) zeroed
 * bytes the caller owns (hugepage memory in the app, calloc in tests). */
void dd_table_init(struct dd_table *t, void *mem, uint64_t entries);

enum dd_lookup dd_table_insert(struct dd_table *t, const uint8_t key[DD_SHA1_BYTES]);

/* Entries in use (a scan; not on the fast path). */
uint64_t dd_table_used(const struct dd_table *t);

#endif
