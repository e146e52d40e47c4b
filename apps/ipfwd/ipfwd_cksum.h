/* Incremental IPv4 header checksum update, RFC 1624 equation 3:
 *     HC' = ~(~HC + ~m + m')
 * in one's complement arithmetic, where m is the old value of a 16-bit
 * header word and m' its new value.  One's complement sums do not depend on
 * byte order, so every value is used as stored in the header. */
#ifndef IPFWD_CKSUM_H
#define IPFWD_CKSUM_H

#include <stdint.h>

#include <rte_byteorder.h>

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

/* The checksum after a TTL decrement: the word (TTL, protocol) goes down by
 * 0x0100, new word 0 in the difference form (ipfwd_rewrite).  Stored on a
 * little-endian machine that difference reads 0x0001, and equation 3 comes
 * to hc + 1, except that it turns 0xfffe into 0x0000 and 0xffff into 0x0001
 * (one's complement: no negative zero, end-around carry): hc + 1, plus one
 * more for those two.  Compare and add-with-borrow instead of two
 * complements and a fold. */
static inline uint16_t
ipfwd_cksum_ttl_decrement(uint16_t hc)
{
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	return (uint16_t)(hc + 1u + (hc >= 0xfffe));
#else
	return ipfwd_cksum_update_to_zero(hc, 0x0100);
#endif
}

#endif
