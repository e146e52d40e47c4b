/* Test helpers shared by the analyzer's C unit tests: CHECK macros and a
 * builder for crafted Ethernet frames. */
#ifndef AN_TEST_FRAME_BUILD_H
#define AN_TEST_FRAME_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, \
				__func__, #cond);                                            \
			failures++;                                                          \
		}                                                                            \
	} while (0)
#define CHECK_EQ(a, b)                                                     \
	do {                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);        \
		if (a_ != b_) {                                            \
			fprintf(stderr,                                    \
				"%s:%d: %s: %s == %lld, expected "         \
				"%lld\n",                                  \
				__FILE__, __LINE__, __func__, #a, a_, b_); \
			failures++;                                        \
		}                                                          \
	} while (0)

/* A frame under construction. */
struct fb {
	uint8_t b[512];
	size_t n;
};

static inline void
put(struct fb *f, const void *d, size_t n)
{
	memcpy(f->b + f->n, d, n);
	f->n += n;
}
static inline void
put8(struct fb *f, unsigned v)
{
	f->b[f->n++] = (uint8_t)v;
}
static inline void
put16(struct fb *f, unsigned v)
{
	put8(f, v >> 8);
	put8(f, v & 0xff);
}
static inline void
put32(struct fb *f, unsigned long v)
{
	put16(f, (unsigned)(v >> 16));
	put16(f, (unsigned)(v & 0xffff));
}
static inline void
zeros(struct fb *f, size_t n)
{
	memset(f->b + f->n, 0, n);
	f->n += n;
}

static const uint8_t MAC_D[6] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t MAC_S[6] = { 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb };
static const uint8_t V6_S[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t V6_D[16] = { 0x20, 0x01, 0x0d, 0xb8, [14] = 0xab, 2 };

static inline void
eth(struct fb *f, unsigned ethertype)
{
	put(f, MAC_D, 6);
	put(f, MAC_S, 6);
	put16(f, ethertype);
}
/* A VLAN tag: TCI, then the EtherType that follows it. */
static inline void
vlan(struct fb *f, unsigned tci, unsigned next)
{
	put16(f, tci);
	put16(f, next);
}
/* IPv4 header: ihl in 32-bit words, options zero-filled. */
static inline void
ipv4(struct fb *f, unsigned ihl, unsigned totlen, unsigned frag, unsigned ttl, unsigned proto)
{
	put8(f, 0x40 | ihl);
	put8(f, 0);
	put16(f, totlen);
	put16(f, 0x1234);
	put16(f, frag);
	put8(f, ttl);
	put8(f, proto);
	put16(f, 0);
	put32(f, 0xc0a80001ul); /* 192.168.0.1 */
	put32(f, 0x0a000002ul); /* 10.0.0.2 */
	zeros(f, (ihl - 5) * 4);
}
static inline void
ipv6(struct fb *f, unsigned plen, unsigned nh, unsigned hlim)
{
	put32(f, 0x60000000ul);
	put16(f, plen);
	put8(f, nh);
	put8(f, hlim);
	put(f, V6_S, 16);
	put(f, V6_D, 16);
}
static inline void
tcp(struct fb *f, unsigned sport, unsigned dport, unsigned doff)
{
	put16(f, sport);
	put16(f, dport);
	put32(f, 1);
	put32(f, 0);
	put8(f, doff << 4);
	put8(f, 0x02);
	put16(f, 1024);
	put16(f, 0);
	put16(f, 0);
	zeros(f, doff > 5 ? (doff - 5) * 4 : 0);
}
static inline void
udp(struct fb *f, unsigned sport, unsigned dport, unsigned len)
{
	put16(f, sport);
	put16(f, dport);
	put16(f, len);
	put16(f, 0);
}

#endif
