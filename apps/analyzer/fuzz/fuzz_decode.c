/* libFuzzer target: the analyzer decoder and record formatting on arbitrary
 * bytes.  Build with CC=clang -Dfuzz=true; the sanitizers catch overreads. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decode.h"
#include "log_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct an_log_record r;
	memset(&r, 0, sizeof(r));
	r.wire_len = (uint32_t)size;
	r.cap_len = (uint32_t)size;
	enum an_status st = an_decode(data, size, &r.pkt);
	if ((unsigned)st >= AN_STATUS_COUNT || r.pkt.l3 >= AN_L3_COUNT)
		__builtin_trap();
	/* A port is only claimed when its bytes were inside the frame. */
	if ((r.pkt.have & AN_HAVE_PORTS) && (size_t)r.pkt.l4_off + 4 > size)
		__builtin_trap();
	/* Tunnels: bounded, named, and the inner headers inside the frame
	 * too (after the outer ones). */
	if (r.pkt.n_tunnel > AN_MAX_TUNNEL || r.pkt.inner.status >= AN_STATUS_COUNT ||
		r.pkt.inner.l3 >= AN_L3_COUNT)
		__builtin_trap();
	for (unsigned k = 0; k < r.pkt.n_tunnel; k++)
		if (r.pkt.tunnel[k] == AN_TUN_NONE || r.pkt.tunnel[k] >= AN_TUN_COUNT)
			__builtin_trap();
	if (r.pkt.n_tunnel == 0 && r.pkt.inner.have != 0)
		__builtin_trap();
	if ((r.pkt.inner.have & AN_HAVE_PORTS) &&
		((size_t)r.pkt.inner.l4_off + 4 > size || r.pkt.inner.l4_off <= r.pkt.l3_off))
		__builtin_trap();
	char line[AN_LOG_LINE_MAX];
	if (an_log_format_line(AN_LOG_CSV, &r, line, sizeof(line)) == 0 ||
		an_log_format_line(AN_LOG_JSONL, &r, line, sizeof(line)) == 0)
		__builtin_trap();
	return 0;
}
