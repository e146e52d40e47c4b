/* libFuzzer target for the flow-key extractor (flow_parse_frame): any bytes,
 * any length, never a read out of bounds; and what it returns is consistent:
 * a canonical key (lo endpoint <= hi endpoint) and a known family. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow_hash.h"
#include "flow_key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes, so ASan sees any overread. */
	uint8_t *buf = malloc(size ? size : 1);
	struct flow_pkt p;
	int c;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (flow_parse_frame(buf, size, &p) == FLOW_PARSE_OK) {
		c = memcmp(p.key.addr_lo, p.key.addr_hi, 16);
		if (c > 0 || (c == 0 && p.key.port_lo > p.key.port_hi))
			abort();
		if (p.key.family != FLOW_FAMILY_IPV4 && p.key.family != FLOW_FAMILY_IPV6)
			abort();
		if (p.dir > 1)
			abort();
		(void)flow_hash_nprobe(&p.key);
	}
	free(buf);
	return 0;
}
