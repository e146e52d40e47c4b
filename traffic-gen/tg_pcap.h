/* Replay: a capture loaded into mbufs. */
#ifndef TG_PCAP_H
#define TG_PCAP_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

/* Loads every packet of PATH into mbufs of a new pool. */
int tg_pcap_load(const char *path, const char *pool_name, int socket, struct rte_mempool **pool,
	struct rte_mbuf ***pkts, uint32_t *n);

/* The packets' capture times, in ns from the first (pcap_timing): a
 * rte_malloc'd array of n, or NULL after saying why.  A time before the
 * previous packet's counts as that packet's (never a negative gap). */
uint64_t *tg_pcap_times(const char *path, uint32_t n);

#endif
