/* Port set-up and teardown: see pp_port.h. */
#include "pp_port.h"
#include "pp_kif.h"

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_errno.h>
#include <rte_lcore.h>

static int configure(uint16_t port, const struct pp_port_conf *c, const char *who);

/* Each call runs in the namespace of the port's interface where it has one
 * (pp_kif.h): the kernel-interface PMDs resolve it by name. */
int
pp_port_configure(uint16_t port, const struct pp_port_conf *c, const char *who)
{
	int h = pp_kif_enter(port);
	int rc = configure(port, c, who);

	pp_kif_leave(h);
	if (rc < 0 &&
		pp_kif_fallback(port,
			"queue set-up failed: the kernel refused the AF_XDP "
			"socket or its XDP program (DPDK's af_xdp messages "
			"above say which)") == 0) {
		h = pp_kif_enter(port);
		rc = configure(port, c, who);
		pp_kif_leave(h);
	}
	return rc;
}

static int
configure(uint16_t port, const struct pp_port_conf *c, const char *who)
{
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	const char *sep = who != NULL ? ": " : "";
	uint16_t nb_rxd = c->rx_desc, nb_txd = c->tx_desc;
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	int rc, socket;

	if (who == NULL)
		who = "";
	rte_eth_dev_get_name_by_port(port, name);
	memset(&conf, 0, sizeof(conf));
	struct pp_port_conf pairs = *c;
	if (rte_eth_dev_info_get(port, &info) == 0 && strcmp(info.driver_name, "net_af_xdp") == 0) {
		/* An AF_XDP socket is a queue pair: as many rx as tx queues. */
		pairs.n_rx = pairs.n_tx = RTE_MAX(RTE_MAX(c->n_rx, c->n_tx), (uint16_t)1);
		c = &pairs;
	}
	if (rte_eth_dev_info_get(port, &info) == 0) {
		if (c->rss && c->n_rx > 1) {
			conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads &
				(RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP);
			if (conf.rx_adv_conf.rss_conf.rss_hf != 0)
				conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		}
		/* Where the port checks IPv4 header checksums, its verdict comes
		 * in each mbuf's ol_flags and an app need not sum the header
		 * again (ipfwd); ports without it leave the flags unknown. */
		conf.rxmode.offloads |= info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
	}
	rc = rte_eth_dev_configure(port, c->n_rx, c->n_tx, &conf);
	if (rc < 0) {
		fprintf(stderr, "%s%sport %u (%s): cannot configure %u rx / %u tx queues: %s\n",
			who, sep, port, name, c->n_rx, c->n_tx, rte_strerror(-rc));
		return -1;
	}
	if (c->adjust_desc) {
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
		if (rc < 0) {
			fprintf(stderr,
				"%s%sport %u (%s): cannot adjust %u rx / %u tx descriptors: %s\n",
				who, sep, port, name, c->rx_desc, c->tx_desc, rte_strerror(-rc));
			return -1;
		}
	}
	socket = rte_eth_dev_socket_id(port);
	if (socket < 0)
		socket = (int)rte_socket_id();
	for (uint16_t q = 0; q < c->n_rx; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nb_rxd, (unsigned)socket, NULL, c->pool);
		if (rc < 0) {
			fprintf(stderr, "%s%sport %u (%s): rx queue %u setup failed: %s\n", who,
				sep, port, name, q, rte_strerror(-rc));
			return -1;
		}
	}
	for (uint16_t q = 0; q < c->n_tx; q++) {
		rc = rte_eth_tx_queue_setup(port, q, nb_txd, (unsigned)socket, NULL);
		if (rc < 0) {
			fprintf(stderr, "%s%sport %u (%s): tx queue %u setup failed: %s\n", who,
				sep, port, name, q, rte_strerror(-rc));
			return -1;
		}
	}
	return 0;
}

int
pp_port_start(uint16_t port, bool promiscuous)
{
	int h = pp_kif_enter(port);
	int rc = rte_eth_dev_start(port);

	if (rc == 0 && promiscuous)
		rte_eth_promiscuous_enable(port); /* not every PMD has it: not an error */
	pp_kif_leave(h);
	return rc;
}

void
pp_port_stop(uint16_t port, bool close)
{
	int h = pp_kif_enter(port);

	rte_eth_dev_stop(port);
	if (close)
		rte_eth_dev_close(port); /* af_xdp: removes its XDP program, by interface index */
	pp_kif_leave(h);
}
