/* lwIP's port header for runtime/stack's own lwIP build (Linux, x86-64
 * and other 64-bit little- or big-endian targets with a C11 libc). */
#ifndef PP_LWIP_ARCH_CC_H
#define PP_LWIP_ARCH_CC_H

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>

#define BYTE_ORDER __BYTE_ORDER
#define LWIP_RAND() ((u32_t)random())
#define LWIP_PLATFORM_DIAG(x) \
	do {                  \
		printf x;     \
	} while (0)
/* lwIP's assertions abort: a broken invariant in the stack is a bug. */
#define LWIP_PLATFORM_ASSERT(x)                                                                    \
	do {                                                                                       \
		fprintf(stderr, "lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
		abort();                                                                           \
	} while (0)

#endif
