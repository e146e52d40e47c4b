/* RX jobs: one per RX queue. */
#ifndef TG_RX_H
#define TG_RX_H

#include <stdint.h>

#include "tg_engine.h"

int tg_rxjob_init(struct tg_rxjob *j, uint16_t port, uint16_t queue);

void tg_rxjob_reset(struct tg_rxjob *j, uint16_t epoch);

void tg_rx_poll(struct tg_rxjob *j);

#endif
