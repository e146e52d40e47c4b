/* TX jobs: one per stream and TX queue. */
#ifndef TG_TX_H
#define TG_TX_H

#include <stdint.h>

#include "tg_engine.h"

int tg_txjob_init(struct tg_txjob *j, const struct tg_stream_cfg *s, const struct tg_cfg *c,
	uint16_t port, uint16_t queue, uint8_t id, int socket);

int tg_txjob_set_sizes(struct tg_txjob *j, const struct tg_size_mix *m);

void tg_txjob_reset(struct tg_txjob *j);

void tg_tx_poll(struct tg_txjob *j, uint64_t now);

#endif
