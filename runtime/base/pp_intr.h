/* The EAL interrupt thread, seen from a program that is about to tear its
 * ports and the EAL down.  DPDK 22.11 runs PMD control work there (net_memif
 * handles its peer leaving on it) and never stops it: rte_eal_cleanup unmaps
 * DPDK memory while it may still run, and net_memif leaves its listener
 * socket registered with its handle in that memory.  Under ASan that was a
 * SEGV on the interrupt thread at exit, seen in CI. */
#ifndef PP_INTR_H
#define PP_INTR_H

/* Returns 0 once the interrupt thread has finished the callback it was
 * running when this was called (a PMD's handling of a link event, say), or
 * -1 after timeout_s or where that cannot be known. */
int pp_intr_sync(double timeout_s);

/* Makes the interrupt thread wait, in a callback of ours, until the process
 * exits, so that it touches no DPDK memory from then on.  Call it just
 * before rte_eal_cleanup: no interrupt or alarm callback runs after it.
 * 0 once parked; -1 after timeout_s (the caller goes on regardless). */
int pp_intr_park(double timeout_s);

#endif
