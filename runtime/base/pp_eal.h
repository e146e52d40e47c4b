/* EAL start, shared by the runtime and pp-tgen: the caller's EAL arguments,
 * its own additions, and --no-huge -m N when the free hugepages (in a
 * mounted hugetlbfs) are fewer than the memory the program needs. */
#ifndef PP_EAL_H
#define PP_EAL_H

#include <stdbool.h>
#include <stdint.h>

/* Bytes of hugepage memory free in a mounted hugetlbfs, 0 when none.  The
 * pages of files no process holds (a DPDK process that ended leaves its
 * hugepage files behind) count as free: EAL's start removes those files
 * before it allocates.  Counted as used, they made a program that followed
 * others fall back to --no-huge, and a memory-bound app ran 40% slower. */
uint64_t pp_eal_free_hugepage_bytes(void);

/* Bytes allocated to the hugepage files ("*map_*") in dir that no process
 * holds a lock on. */
uint64_t pp_eal_unused_hugepage_bytes(const char *dir);

/* Whether argv[1..argc) holds one of `names` (NULL-terminated), alone or
 * as "--name=value"; a short option ("-m") also matches "-m512". */
bool pp_eal_has_arg(int argc, char **argv, const char *const *names);

/* rte_eal_init on argv[0..argc) followed by `extra` (NULL-terminated, may
 * be NULL), by "-d DIR" when the environment has PIPEPLACE_DPDK_DRIVERS=DIR
 * (DPDK's drivers on a test bed without DPDK's packages, where EAL's own
 * plugin directory is missing: tools/testbed-bundle.sh; not a directory:
 * refused, naming it), and by "--no-huge -m N" with N = need_mb + 64 when
 * the EAL arguments give no memory option and the free hugepages hold
 * fewer than need_mb MiB (said on stderr, prefixed with `who`).  argv past argc (the
 * program's own options after "--") is not passed.  Returns what
 * rte_eal_init returns, after printing why on failure; PP_EAL_USAGE where
 * the arguments or PIPEPLACE_DPDK_DRIVERS are wrong (EAL's rte_errno
 * EINVAL: arguments it does not take, a -d it cannot load from), -1 for
 * any other failure. */
#define PP_EAL_USAGE (-2)
int pp_eal_start(
	int argc, char **argv, const char *const *extra, uint64_t need_mb, const char *who);

/* rte_eal_cleanup, and frees what pp_eal_start kept. */
void pp_eal_stop(void);

#endif
