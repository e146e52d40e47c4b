/* One hexadecimal digit's value, or -1 (rule contents, URI escapes, chunk
 * sizes). */
#ifndef AC_IDS_HEX_H
#define AC_IDS_HEX_H

#include <stdint.h>

static inline int
ac_hex_digit(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

#endif
