/* HTTP bodies as the servers send them: chunked transfer decoding, then
 * gzip or deflate content decoding (zlib), for the client body of a
 * request (http_client_body) and the body of a response (file_data), as
 * Snort's http_inspect decodes them.  Bounded against decompression
 * bombs: at most max_decoded bytes, and at most max_ratio bytes out per
 * byte in; a body cut at a bound is judged as far as it went (counted).
 * A body that does not decode is left as sent (counted).  Nothing is
 * allocated after ids_http_decoder_new: one zlib stream, reset per body. */
#ifndef IDS_HTTP_BODY_H
#define IDS_HTTP_BODY_H

#include <stddef.h>

#include "http_parse.h"

struct ids_http_decoder;

struct ids_http_decoder *ids_http_decoder_new(
	const struct ids_http_limits *lim, char *err, size_t errlen);
void ids_http_decoder_free(struct ids_http_decoder *d);

/* h was parsed (ac_http_parse): its body buffer is decoded when its
 * headers say so, and then points at the decoder's bytes (until the next
 * call), marked as not a slice of the payload. */
void ids_http_decode_body(struct ids_http_decoder *d, struct ac_http *h, struct ids_http_stats *st);

#endif /* IDS_HTTP_BODY_H */
