/* The worker lcores: each polls its TX and RX jobs. */
#ifndef TG_WORKER_H
#define TG_WORKER_H

/* rte_eal_remote_launch entry; arg is a struct tg_worker. */
int tg_worker_main(void *arg);

#endif
