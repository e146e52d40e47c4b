/* Syncing with and parking the EAL interrupt thread: see pp_intr.h.  One
 * eventfd of ours is registered with the interrupt thread; a write to it
 * makes the thread run our callback, which it can only do after the
 * callback under way (and the unregistrations it left pending) is done. */
#include "pp_intr.h"

#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_interrupts.h>

static struct rte_intr_handle *handle;
static int efd = -1;
static unsigned ran;  /* callbacks run so far */
static int want_park; /* the next callback stays */
static int parked;

static void
on_kick(void *arg)
{
	uint64_t n;

	(void)arg;
	if (read(efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: a second event for one write; nothing to consume */
	}
	__atomic_add_fetch(&ran, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&want_park, __ATOMIC_ACQUIRE))
		for (;;)
			pause();
}

static int
registered(void)
{
	if (handle != NULL)
		return 0;
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		return -1;
	handle = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (handle == NULL || rte_intr_fd_set(handle, efd) != 0 ||
		rte_intr_type_set(handle, RTE_INTR_HANDLE_EXT) != 0 ||
		rte_intr_callback_register(handle, on_kick, NULL) != 0) {
		rte_intr_instance_free(handle);
		handle = NULL;
		close(efd);
		efd = -1;
		return -1;
	}
	return 0;
}

static int
kick_and_wait(double timeout_s)
{
	uint64_t end = rte_get_timer_cycles() + (uint64_t)(timeout_s * (double)rte_get_timer_hz());
	uint64_t one = 1;
	unsigned before;

	if (parked || registered() != 0)
		return -1;
	before = __atomic_load_n(&ran, __ATOMIC_ACQUIRE);
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		return -1;
	while (__atomic_load_n(&ran, __ATOMIC_ACQUIRE) == before) {
		if (rte_get_timer_cycles() > end)
			return -1;
		rte_delay_us_sleep(1000);
	}
	return 0;
}

int
pp_intr_sync(double timeout_s)
{
	return kick_and_wait(timeout_s);
}

int
pp_intr_park(double timeout_s)
{
	if (parked)
		return 0;
	__atomic_store_n(&want_park, 1, __ATOMIC_RELEASE);
	if (kick_and_wait(timeout_s) != 0)
		return -1;
	parked = 1;
	return 0;
}
