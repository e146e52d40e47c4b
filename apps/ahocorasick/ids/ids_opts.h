/* Rules mode's reassembly options, shared by the app and ac-ids: target
 * policies, limits of defragmentation, streams and HTTP body decoding,
 * decoder alerts.  Parsed as pp_app.parse_opt options are. */
#ifndef IDS_IDS_OPTS_H
#define IDS_IDS_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ids.h"

#define IDS_MAX_POLICY_SPECS 64

struct ids_opts {
	const char *policy[IDS_MAX_POLICY_SPECS]; /* --target-policy, in order */
	unsigned n_policy;
	bool decoder_alerts;
	bool any; /* a reassembly option was given (refused with --no-reassembly) */
	uint64_t ttl_limit, stream_window, stream_memcap, stream_segments;
	uint64_t frag_memcap, frag_max, frag_tiny, frag_overlaps;
	double frag_timeout_s;
	uint64_t http_max_body, http_max_ratio;
	bool no_http_decode;
};

#define IDS_OPTS_USAGE                                                                        \
	"  rules mode's reassembly (off with --no-reassembly or --stateless):\n"              \
	"  --target-policy [NET=]P  the overlap policy of the hosts in NET (rule header\n"    \
	"                        syntax, IPv4 or IPv6, $VARS), or of every other host:\n"     \
	"                        first, last, bsd, linux (default), windows, solaris;\n"      \
	"                        repeat it, the first NET that holds the destination wins\n"  \
	"  --ttl-limit N         a packet whose TTL is more than N below its direction's\n"   \
	"                        first (or a fragment's, below its datagram's first) never\n" \
	"                        reaches the target: not judged, not reassembled\n"           \
	"                        (default 5; 0: off)\n"                                       \
	"  --stream-window B     bytes a TCP direction holds in order and out of order;\n"    \
	"                        a PDU is flushed at this size (default 16384)\n"             \
	"  --stream-memcap B     memory for every direction's bytes, preallocated; when\n"    \
	"                        full the least recently used direction loses its bytes\n"    \
	"                        (stream.shed; default 67108864)\n"                           \
	"  --stream-segments N   out-of-order segments a direction holds (default 64)\n"      \
	"  --frag-timeout S      a datagram's fragments are given up after S seconds\n"       \
	"                        (default 60)\n"                                              \
	"  --frag-max N          datagrams being put together per P task (default 2048)\n"    \
	"  --frag-memcap B       bytes of fragments held per P task (default 4194304)\n"      \
	"  --frag-tiny B         a non-last fragment of at most B bytes raises 123:13\n"      \
	"                        (default 0: off)\n"                                          \
	"  --frag-max-overlaps N a datagram with N overlaps is given up, 123:12 (default\n"   \
	"                        0: no limit)\n"                                              \
	"  --http-max-body B     bytes a dechunked or decompressed HTTP body is cut at\n"     \
	"                        (default 65536, Snort's decompress_depth)\n"                 \
	"  --http-max-ratio N    decompression stops past N bytes out per byte in\n"          \
	"                        (default 100)\n"                                             \
	"  --no-http-decode      leave HTTP bodies as sent (no dechunking, no gzip)\n"        \
	"  --decoder-alerts      raise the events of defragmentation and reassembly as\n"     \
	"                        alerts (Snort's gid 123 and 129 sids)\n"

void ids_opts_init(struct ids_opts *o);
/* Entries consumed (1 or 2), 0 if not one of these, -1 on a bad value
 * (error printed, naming the option and the value). */
int ids_opt_parse(struct ids_opts *o, int argc, char **argv);
/* Fill the engine's configuration (its ver, engine, flows, reassembly
 * fields are the caller's); policies parsed against vars into *tp.
 * ticks_per_s: the caller's time unit.  0, or -1 with err. */
int ids_opts_apply(const struct ids_opts *o, const struct ac_vars *vars, double ticks_per_s,
	struct ids_target_policy *tp, struct ids_engine_cfg *c, char *err, size_t errlen);

#endif /* IDS_IDS_OPTS_H */
