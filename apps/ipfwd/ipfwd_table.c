/* Next-hop table allocation and sizing. */
#include "ipfwd_table.h"

#include <stdlib.h>
#include <string.h>

int
ipfwd_table_create(struct ipfwd_table *t, uint64_t n)
{
	t->entries = NULL;
	t->n_entries = 0;
	if (n == 0 || n > (1ull << 32))
		return -1;
	size_t bytes = (size_t)n * sizeof(*t->entries);
	/* Page aligned; ordinary pages on purpose: the mem variant should miss
	 * the TLBs as well as the caches. */
	if (posix_memalign((void **)&t->entries, 4096, bytes) != 0)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		struct ipfwd_next_hop *e = &t->entries[i];
		uint8_t be[4] = { (uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8),
			(uint8_t)i };
		e->dst_mac.addr_bytes[0] = 0x02;
		e->dst_mac.addr_bytes[1] = 0x00;
		e->src_mac.addr_bytes[0] = 0x02;
		e->src_mac.addr_bytes[1] = 0x01;
		memcpy(&e->dst_mac.addr_bytes[2], be, 4);
		memcpy(&e->src_mac.addr_bytes[2], be, 4);
		e->index = (uint32_t)i;
	}
	t->n_entries = n;
	return 0;
}

void
ipfwd_table_free(struct ipfwd_table *t)
{
	free(t->entries);
	t->entries = NULL;
	t->n_entries = 0;
}

uint64_t
ipfwd_table_entries_l1(size_t l1d_bytes)
{
	uint64_t n = l1d_bytes / 2 / sizeof(struct ipfwd_next_hop);
	return n > 0 ? n : 1;
}

uint64_t
ipfwd_table_entries_mem(size_t llc_bytes)
{
	uint64_t want = 4 * (uint64_t)llc_bytes / sizeof(struct ipfwd_next_hop), n = 1;
	while (n < want)
		n <<= 1;
	return n;
}
