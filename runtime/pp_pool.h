/* The runtime's mbuf pool (one per process, shared by every instance). */
#ifndef PP_POOL_H
#define PP_POOL_H

struct rte_mempool;

/* LIFO: a buffer freed on another context comes back while still warm in
 * some cache, where the ring's FIFO hands out the coldest (assign/research/pool-ops.py,
 * runtime/README.md "The pool's driver"). */
#define PP_DEFAULT_POOL_OPS "stack"

/* n mbufs of data_room bytes (headroom added) on NUMA node socket, on the
 * mempool driver `ops` (pp_pool_ops_choose's choice).  NULL (message on
 * stderr) on failure. */
struct rte_mempool *pp_pool_create(const char *ops, unsigned n, unsigned data_room, int socket);

/* The mempool driver ops_opt names (--pool-ops), else the one EAL's
 * --mbuf-pool-ops-name names, else PP_DEFAULT_POOL_OPS; after EAL start
 * (drivers register while EAL loads its plugins).  A name this DPDK lacks
 * is refused with the list of those it has, a single-producer or
 * single-consumer ring refused: NULL, a usage error (message on stderr).
 * A default it lacks falls back to DPDK's own choice, and says so. */
const char *pp_pool_ops_choose(const char *ops_opt);

#endif
