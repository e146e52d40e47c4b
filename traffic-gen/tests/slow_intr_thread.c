/* LD_PRELOAD shim for test_tgen_memif_teardown.py (not part of any product
 * binary).  It turns two races with DPDK's interrupt thread into certainties:
 *  - munmap() on the interrupt thread takes 300 ms longer, and another
 *    thread that unmaps the same region meanwhile (a port stop racing the
 *    PMD's own disconnect) is reported on stderr as OVERLAP;
 *  - epoll_create() on the interrupt thread (it rebuilds its wait list,
 *    reading every registered handle) takes 300 ms longer, and the process
 *    lingers 1 s at exit, so that a rebuild after rte_eal_cleanup has
 *    unmapped DPDK memory crashes (under ASan, a SEGV report) instead of
 *    being cut short by the exit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

static void *volatile intr_addr; /* what the interrupt thread is unmapping */

static int
on_intr_thread(void)
{
	char name[17] = { 0 };

	prctl(PR_GET_NAME, name);
	return !strcmp(name, "eal-intr-thread");
}

static void
say(const char *what, void *addr, size_t len)
{
	char b[160];
	int k = snprintf(b, sizeof(b), "slow-intr-thread: %s %p %zu\n", what, addr, len);

	if (k > 0)
		(void)!write(STDERR_FILENO, b, (size_t)k);
}

int
munmap(void *addr, size_t len)
{
	static int (*real)(void *, size_t);
	int intr = on_intr_thread(), rc;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "munmap");
	if (intr) {
		intr_addr = addr;
		usleep(300000);
	} else if (addr != NULL && addr == intr_addr) {
		say("OVERLAP", addr, len);
	}
	rc = real(addr, len);
	if (intr) {
		intr_addr = NULL;
		say("intr-unmapped", addr, len);
	}
	return rc;
}

int
epoll_create(int size)
{
	static int (*real)(int);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "epoll_create");
	if (on_intr_thread())
		usleep(300000);
	return real(size);
}

__attribute__((destructor)) static void
linger(void)
{
	usleep(1000000);
}
