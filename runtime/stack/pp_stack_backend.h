/* The operations of a pp_stack backend (internal): pp_stack.c reaches lwIP
 * (pp_stack_lwip.c) and the kernel's sockets (pp_stack_kernel.c) through
 * one table each, and the backends call nothing of pp_stack.c; what they
 * share is pp_stack_base.h.  Each operation is the backend's part of the
 * pp_stack.h call of the same name; the counters pp_stack.c keeps around
 * them (bytes read, bytes discarded, a poll's cycles) are not theirs. */
#ifndef PP_STACK_BACKEND_H
#define PP_STACK_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pp_stack_base.h"

struct pp_stack_ops {
	/* For the statistics: what the stack is; whether it counts frames
	 * (a user-level stack does, the kernel's sockets see none). */
	const char *describe;
	bool counts_frames;
	unsigned mem_mb; /* the DPDK memory open allocates, in MiB */

	/* s's instances and slots are made; 0, or -1 with a message in err
	 * (pp_stack.c then calls close). */
	int (*open)(struct pp_stack *s, char *err, size_t errlen);
	/* Every connection still up reset and its slot freed, the listener
	 * closed; also after a failed or partial open. */
	void (*close)(struct pp_stack *s);
	void (*poll_begin)(struct pp_stack_inst *si, bool input);
	void (*poll_end)(struct pp_stack_inst *si);
	size_t (*read)(struct pp_conn *c, void *dst, size_t max);
	int (*write)(struct pp_conn *c, const void *buf, size_t len);
	bool (*unacked)(struct pp_conn *c);
	/* c is not free; returns the bytes discarded unread.  pp_stack.c
	 * frees the slot. */
	uint64_t (*release)(struct pp_conn *c);
};

extern const struct pp_stack_ops pp_stack_lwip_ops;
extern const struct pp_stack_ops pp_stack_kernel_ops;

#endif
