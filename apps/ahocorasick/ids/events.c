/* Event names and Snort ids (see events.h). */
#include "events.h"

const struct ids_event_info ids_event_info[IDS_EV_N] = {
	[IDS_EV_FRAG_SHORT] = { "frag_short", 123, 3,
		"(defrag) Short fragment, possible DoS attempt" },
	[IDS_EV_FRAG_OVERSIZE] = { "frag_oversize", 123, 4,
		"(defrag) Fragment packet ends after defragmented packet" },
	[IDS_EV_FRAG_ZERO] = { "frag_zero", 123, 5, "(defrag) Zero-byte fragment packet" },
	[IDS_EV_FRAG_TOO_LARGE] = { "frag_too_large", 123, 7,
		"(defrag) Bad fragment size, packet size is greater than 65536" },
	[IDS_EV_FRAG_OVERLAP] = { "frag_overlap", 123, 8, "(defrag) Fragmentation overlap" },
	[IDS_EV_FRAG_MIN_TTL] = { "frag_min_ttl", 123, 11,
		"(defrag) TTL value less than configured minimum, not using for reassembly" },
	[IDS_EV_FRAG_MANY_OVERLAP] = { "frag_excessive_overlap", 123, 12,
		"(defrag) Excessive fragment overlap" },
	[IDS_EV_FRAG_TINY] = { "frag_tiny", 123, 13, "(defrag) Tiny fragment" },
	[IDS_EV_FRAG_TOO_MANY] = { "frag_too_many", 0, 0,
		"(defrag) Too many fragments in one datagram" },
	[IDS_EV_FRAG_TTL_DELTA] = { "frag_ttl_delta", 0, 0,
		"(defrag) TTL far below the datagram's first fragment, not using for reassembly" },
	[IDS_EV_STREAM_OVERLAP] = { "stream_overlap_limit", 129, 7,
		"(stream) Limit on number of overlapping TCP packets reached" },
	[IDS_EV_STREAM_CONFLICT] = { "stream_conflict", 0, 0,
		"(stream) Retransmitted data differs from the data held" },
	[IDS_EV_STREAM_TTL] = { "stream_ttl_delta", 0, 0,
		"(stream) TTL far below its direction's, not using for reassembly" },
};
