/* ipfwd's verdicts: 0 forwards the packet, any other value is the drop
 * reason it is counted under (ipfwd_main.c names them in this order). */
#ifndef IPFWD_VERDICT_H
#define IPFWD_VERDICT_H

enum ipfwd_verdict {
	IPFWD_FORWARD = 0,
	IPFWD_NOT_IP,             /* EtherType neither 0x0800 nor 0x86DD */
	IPFWD_TRUNCATED,          /* headers or IP length beyond the data */
	IPFWD_BAD_VERSION_OR_IHL, /* IPv4: version != 4, IHL < 5, total length < IHL */
	IPFWD_BAD_CHECKSUM,       /* IPv4 header checksum */
	IPFWD_TTL_EXPIRED,        /* IPv4 TTL <= 1: it would reach 0 here */
	IPFWD_NO_ROUTE,           /* --lookup lpm: no prefix covers the destination */
	IPFWD_IPV6_BAD_VERSION,   /* EtherType 0x86DD, version != 6 */
	IPFWD_HOP_LIMIT_EXPIRED,  /* IPv6 hop limit <= 1 */
	IPFWD_IPV6_EXT_TRUNCATED, /* an extension header runs past the payload length */
	IPFWD_IPV6_HBH_NOT_FIRST, /* Hop-by-Hop Options after another extension header */
	IPFWD_N_VERDICTS
};

/* Not a verdict: what the header checks return for a valid IPv6 packet
 * (IPFWD_FORWARD for a valid IPv4 one), before the lookup. */
#define IPFWD_VALID_IPV6 0xffu

#endif
