/* The log writer: one plain pthread, off the task contexts, draining every P
 * task's record rings into the CSV/JSONL log and the pcap file. */
#ifndef AN_LOG_WRITER_H
#define AN_LOG_WRITER_H

#include "analyzer.h"

/* Start the writer thread; its CPU set is every online CPU that runs no
 * worker lcore (all online CPUs when none is left).  0 or -errno. */
int an_writer_start(struct an_state *st);

/* Wait (up to timeout_ms, twice) until the writer has taken every record
 * the P tasks had enqueued when called, then until it flushed the files.
 * 0; -ETIMEDOUT (the writer is behind or blocked); -EIO (a write failed). */
int an_writer_sync(struct an_state *st, unsigned timeout_ms);

/* Stop the writer after it drained every ring and flushed the files; a
 * writer still blocked after 10 s is cancelled (writer_stuck). */
void an_writer_stop(struct an_state *st);

#endif
