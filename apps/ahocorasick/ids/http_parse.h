/* The HTTP buffers of one TCP payload, for rules mode (README.md, "HTTP
 * buffers" says the same).  Per packet, as Snort 2.9's http_inspect works
 * without stream reassembly:
 *  - a payload that starts with a complete request line (METHOD SP URI SP
 *    HTTP/d.d, then CRLF or LF; METHOD of 1..32 of A-Z, '_', '-') is a
 *    request: http_method, http_raw_uri, http_uri (normalised, below), the
 *    header lines after it up to the empty line or the end of the payload
 *    (http_raw_header; http_header the same without Cookie lines), the
 *    Cookie values (http_cookie = http_raw_cookie), and after the empty line
 *    http_client_body (absent when the empty line is not in the payload);
 *  - a payload that starts with a complete status line (HTTP/d.d SP 3
 *    digits, then SP and a message, or the line end) is a response:
 *    http_stat_code, http_stat_msg, headers and Set-Cookie values as above,
 *    and file_data = the body after the empty line (absent when it is not
 *    in the payload);
 *  - file_data of every other payload is the whole payload.
 * A request or response split over packets: its first packet has the
 * buffers of what it holds; the later ones are plain payload.
 *
 * URI normalisation (http_uri, urilen norm): an absolute URI's
 * "scheme://authority" is kept; the rest is cut at its first '?'; both
 * parts are percent-decoded (%HH, and %uHHHH below 0x100, to that byte;
 * any other '%' stays); then in the path '\' becomes '/', empty and "."
 * segments go, ".." removes the segment before it (never above the root),
 * a leading '/' stays and a trailing one stays after a kept segment.
 * No DPDK; the fuzzer and the unit tests call it directly. */
#ifndef AC_HTTP_PARSE_H
#define AC_HTTP_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "rule_options.h"

enum ac_http_kind {
	AC_HTTP_NONE = 0,
	AC_HTTP_REQUEST,
	AC_HTTP_RESPONSE,
};

struct ac_http {
	uint8_t kind;                 /* enum ac_http_kind */
	struct ac_span buf[AC_BUF_N]; /* every buffer; PKT and FILE always present */
	/* Buffers whose bytes are not one slice of the payload (a URI that
	 * normalisation changed, headers with a Cookie line taken out, several
	 * cookies joined): bit b for enum ac_buf b.  The prefilter scans them
	 * too, so that a fast pattern stays a necessary condition. */
	uint32_t not_slices;
};

/* Body decoding (dechunking, gzip and deflate) and its bounds against
 * decompression bombs. */
struct ids_http_limits {
	bool decode;          /* dechunk and decompress bodies */
	uint32_t max_decoded; /* bytes of a decoded body, at most */
	uint32_t max_ratio;   /* decoded bytes per encoded byte, at most */
};
struct ids_http_stats {
	uint64_t dechunked;     /* bodies taken out of their chunks */
	uint64_t decompressed;  /* gzip or deflate bodies inflated */
	uint64_t decode_errors; /* bodies that did not decode (left as sent) */
	uint64_t bound_hit;     /* inflation stopped at a bound (bytes or ratio) */
};

/* Bytes of scratch ac_http_parse needs for a payload of len bytes. */
#define AC_HTTP_SCRATCH(len) (9 * (size_t)(len) + 64)

/* Fill h for a TCP payload (tcp false: no HTTP buffers, file_data = the
 * payload).  scratch: AC_HTTP_SCRATCH(len) bytes; the buffers may point
 * into it until the next call. */
void ac_http_parse(const uint8_t *pl, uint32_t len, bool tcp, uint8_t *scratch, struct ac_http *h);

/* Protocol-aware flushing: the length of the HTTP message the bytes start
 * with, once it is all there (request or status line, headers, then a
 * body of Content-Length bytes or chunks up to the last one's trailer; a
 * request without either ends at its headers, as a 1xx, 204 or 304
 * response); 0 when it is not all there, is not HTTP, or is a response
 * that runs to the connection's end. */
uint32_t ac_http_message_len(const uint8_t *pl, uint32_t len);

/* The value of header `name` (lower case) among the header lines
 * pl[h, end), or NULL; *n its length (spaces around it trimmed). */
const uint8_t *ac_http_header_value(
	const uint8_t *pl, uint32_t h, uint32_t end, const char *name, uint32_t *n);

/* The bytes start like an HTTP request (METHOD SP ...) or response
 * (HTTP/d.d SP): a PDU holding other bytes is flushed before them, so that
 * a message starts its own PDU. */
bool ac_http_starts_message(const uint8_t *pl, uint32_t len);

/* The normalised form of a URI of n bytes into out (at least n bytes),
 * using tmp (6 * n + 16 bytes); returns its length (<= n). */
uint32_t ac_uri_normalize(const uint8_t *raw, uint32_t n, uint8_t *out, uint8_t *tmp);

#endif /* AC_HTTP_PARSE_H */
