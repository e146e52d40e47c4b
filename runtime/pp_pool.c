/* The runtime's mbuf pool and the mempool driver it sits on. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "pp_pool.h"

/* Whether this DPDK registered a mempool driver of that name (drivers
 * register while EAL loads its plugins). */
static bool
pool_ops_known(const char *name)
{
	for (unsigned i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, name) == 0)
			return true;
	return false;
}

static void
list_pool_ops(FILE *out)
{
	for (unsigned i = 0; i < rte_mempool_ops_table.num_ops; i++)
		fprintf(out, " %s", rte_mempool_ops_table.ops[i].name);
}

const char *
pp_pool_ops_choose(const char *ops_opt)
{
	const char *ops = ops_opt;
	const char *from = "--pool-ops";
	if (ops == NULL) {
		ops = rte_mbuf_user_mempool_ops();
		from = "EAL --mbuf-pool-ops-name";
	}
	if (ops == NULL) {
		ops = PP_DEFAULT_POOL_OPS;
		from = NULL;
	}
	if (from != NULL && !pool_ops_known(ops)) {
		fprintf(stderr, "%s %s: this DPDK has no such mempool driver; it has:", from, ops);
		list_pool_ops(stderr);
		fputc('\n', stderr);
		return NULL;
	}
	/* every lcore puts and gets (caches flush and refill from any of them) */
	if (strcmp(ops, "ring_sp_sc") == 0 || strcmp(ops, "ring_mp_sc") == 0 ||
		strcmp(ops, "ring_sp_mc") == 0) {
		fprintf(stderr,
			"%s %s: a single-producer or single-consumer pool breaks when the "
			"runtime's lcores free and allocate buffers at once; use a "
			"multi-thread-safe driver (stack, ring_mp_mc)\n",
			from != NULL ? from : "pool", ops);
		return NULL;
	}
	if (from == NULL && !pool_ops_known(ops)) {
		fprintf(stderr,
			"pipeplace: this DPDK has no \"%s\" mempool driver; the pool uses "
			"\"%s\" (see --pool-ops)\n",
			ops, rte_mbuf_best_mempool_ops());
		ops = rte_mbuf_best_mempool_ops();
	}
	return ops;
}

struct rte_mempool *
pp_pool_create(const char *ops, unsigned n, unsigned data_room, int socket)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create_by_ops(
		"pp_pool", n, 256, 0, (uint16_t)(data_room + RTE_PKTMBUF_HEADROOM), socket, ops);
	if (mp == NULL)
		fprintf(stderr,
			"cannot create a pool of %u mbufs of %u bytes on mempool driver %s: %s "
			"(see --mbufs, --mbuf-size, --pool-ops, EAL -m)\n",
			n, data_room, ops, rte_strerror(rte_errno));
	return mp;
}
