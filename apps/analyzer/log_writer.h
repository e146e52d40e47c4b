/* The log writer: one plain pthread, off the task contexts, draining every P
 * task's record rings into the CSV/JSONL log and the pcap file. */
#ifndef AN_LOG_WRITER_H
#define AN_LOG_WRITER_H

#include "analyzer.h"

/* Start the writer thread; its CPU set is every online CPU that runs no
 * worker lcore (all online CPUs when none is left).  0 or -errno. */
int an_writer_start(struct an_state *st);

/* Wait (up to timeout_ms) until the writer has taken every record the P
 * tasks had enqueued when called.  0, or -ETIMEDOUT. */
int an_writer_sync(struct an_state *st, unsigned timeout_ms);

/* Stop the writer after it drained every ring; flush the files. */
void an_writer_stop(struct an_state *st);

#endif
