/* The poll loop of a worker lcore: its TX jobs (paced) and RX jobs, until
 * the main lcore ends the run. */
#include <rte_cycles.h>
#include <rte_pause.h>

#include "tg_engine.h"
#include "tg_rx.h"
#include "tg_tx.h"
#include "tg_worker.h"

int
tg_worker_main(void *arg)
{
	struct tg_worker *w = arg;

	for (;;) {
		uint64_t now = rte_rdtsc();
		unsigned busy = 0;

		for (unsigned i = 0; i < w->n_tx; i++)
			if (!w->tx[i]->done) {
				tg_tx_poll(w->tx[i], now);
				busy++;
			}
		for (unsigned i = 0; i < w->n_rx; i++)
			tg_rx_poll(w->rx[i]);
		if (tg_run.rx_stop || (busy == 0 && w->n_rx == 0))
			break;
	}
	for (unsigned i = 0; i < w->n_rx; i++)
		__atomic_store_n(&w->rx[i]->done, true, __ATOMIC_RELEASE);
	return 0;
}
