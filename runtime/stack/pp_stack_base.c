/* What the two backends of pp_stack share (pp_stack_base.h): a free slot
 * for a new connection, and the DPDK port calls. */
#include <string.h>

#include <rte_ethdev.h>

#include "pp_stack_base.h"

struct pp_conn *
pp_stack_take_slot(struct pp_stack_inst *si)
{
	for (unsigned k = 0; k < si->s->conf.max_conns; k++) {
		struct pp_conn *c = &si->conns[k];
		if (c->state == PP_CONN_FREE) {
			c->state = PP_CONN_OPEN;
			c->gen++;
			c->bytes_read = 0;
			si->ctr.accepted++;
			return c;
		}
	}
	si->ctr.refused++;
	return NULL;
}

uint16_t
pp_stack_port_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, queue, pkts, n);
}

uint16_t
pp_stack_port_tx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(port, queue, pkts, n);
}

int
pp_stack_port_mac(uint16_t port, uint8_t mac[6])
{
	struct rte_ether_addr a;
	if (rte_eth_macaddr_get(port, &a) != 0)
		return -1;
	memcpy(mac, a.addr_bytes, RTE_ETHER_ADDR_LEN);
	return 0;
}

bool
pp_stack_port_valid(uint16_t port)
{
	return rte_eth_dev_is_valid_port(port) != 0;
}
