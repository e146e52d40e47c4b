/* Incremental IPv4 header checksum update, RFC 1624 equation 3:
 *     HC' = ~(~HC + ~m + m')
 * in one's complement arithmetic, where m is the old value of a 16-bit
 * header word and m' its new value.  One's complement sums do not depend on
 * byte order, so every value is used as stored in the header. */
#ifndef IPFWD_CKSUM_H
#define IPFWD_CKSUM_H

#include <stdint.h>

static inline uint16_t
ipfwd_cksum_update(uint16_t hc, uint16_t m, uint16_t m_new)
{
	uint32_t sum = (uint32_t)(uint16_t)~hc + (uint16_t)~m + m_new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The same update where the word's new value is 0 (m' = 0): two 16-bit
 * addends sum to at most 0x1fffe, so one end-around carry folds it. */
static inline uint16_t
ipfwd_cksum_update_to_zero(uint16_t hc, uint16_t m)
{
	uint32_t sum = (uint32_t)(uint16_t)~hc + (uint16_t)~m;
	return (uint16_t) ~((sum & 0xffff) + (sum >> 16));
}

#endif
