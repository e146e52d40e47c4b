/* libFuzzer target: any bytes as a received frame through pp-tgen's RX
 * decoder (tg_rx_decode: Ethernet, VLAN/QinQ tags, IPv4, IPv6 and its
 * extension headers, UDP/TCP).  No crash and no read past the frame (ASan
 * sees the exact-size copy); a signature is only ever found inside it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg_signature.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *frame;
	unsigned off = 0;
	enum tg_rx_reason why;

	if (size > 65535)
		return 0;
	frame = malloc(size ? size : 1); /* exactly the frame: any overread is caught */
	if (frame == NULL)
		return 0;
	memcpy(frame, data, size);
	why = tg_rx_decode(frame, (unsigned)size, &off);
	if ((unsigned)why >= TG_RX_REASONS || tg_rx_reason_name[why] == NULL)
		abort();
	if (why == TG_RX_SIGNED) {
		struct tg_sig sig;

		if (off < 14 + 20 + 8 || off + TG_SIG_LEN > size)
			abort();
		memcpy(&sig, frame + off, sizeof(sig));
	}
	free(frame);
	return 0;
}
