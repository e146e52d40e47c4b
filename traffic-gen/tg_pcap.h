/* Replay: a capture loaded into mbufs. */
#ifndef TG_PCAP_H
#define TG_PCAP_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

/* Loads every packet of PATH into mbufs of a new pool. */
int tg_pcap_load(const char *path, const char *pool_name, int socket, struct rte_mempool **pool,
	struct rte_mbuf ***pkts, uint32_t *n);

#endif
