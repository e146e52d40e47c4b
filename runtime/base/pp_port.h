/* Port set-up and teardown, shared by the runtime and pp-tgen: configure a
 * port's queues, start it, stop it. */
#ifndef PP_PORT_H
#define PP_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

struct pp_port_conf {
	uint16_t n_rx, n_tx;       /* queues */
	uint16_t rx_desc, tx_desc; /* descriptors per queue */
	struct rte_mempool *pool;  /* RX mbufs */
	bool rss;                  /* RSS over IP/UDP/TCP when n_rx > 1 and the port offers it */
	bool adjust_desc;          /* clamp the descriptor counts to the port's limits */
};

/* Configures `port` and sets up its queues on the port's NUMA socket (the
 * caller's when unknown).  0, or -1 after printing "[who: ]port P (NAME):
 * what failed: why" (who may be NULL). */
int pp_port_configure(uint16_t port, const struct pp_port_conf *c, const char *who);

/* Starts `port`, promiscuous when asked (not an error where the PMD lacks
 * it).  0 or a negative errno; the caller says why in its own terms. */
int pp_port_start(uint16_t port, bool promiscuous);

/* Stops `port`; with close, releases it too (no restart after that). */
void pp_port_stop(uint16_t port, bool close);

#endif
