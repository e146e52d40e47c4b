/* HTTP body decoding: chunks, gzip, deflate (see http_body.h). */
#include "http_body.h"

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "errbuf.h"
#include "hex.h"

struct ids_http_decoder {
	struct ids_http_limits lim;
	z_stream zs;
	bool zs_ok;
	uint8_t *dechunked, *inflated; /* lim.max_decoded bytes each */
};

struct ids_http_decoder *
ids_http_decoder_new(const struct ids_http_limits *lim, char *err, size_t errlen)
{
	struct ids_http_decoder *d = calloc(1, sizeof(*d));
	if (d == NULL)
		goto oom;
	d->lim = *lim;
	d->dechunked = malloc(lim->max_decoded + 1);
	d->inflated = malloc(lim->max_decoded + 1);
	if (d->dechunked == NULL || d->inflated == NULL) {
		ids_http_decoder_free(d);
		goto oom;
	}
	/* 15 + 32: zlib or gzip, told by the header; every later reset keeps
	 * a 15-bit window, so zlib allocates nothing more. */
	if (inflateInit2(&d->zs, 15 + 32) != Z_OK) {
		ids_http_decoder_free(d);
		ac_set_err(err, errlen, "zlib: inflateInit2 failed");
		return NULL;
	}
	d->zs_ok = true;
	return d;
oom:
	ac_set_err(err, errlen, "out of memory for the HTTP body decoder");
	return NULL;
}

void
ids_http_decoder_free(struct ids_http_decoder *d)
{
	if (d == NULL)
		return;
	if (d->zs_ok)
		inflateEnd(&d->zs);
	free(d->dechunked);
	free(d->inflated);
	free(d);
}

/* The chunks' data of in[0, n) into out (at most cap bytes); as far as the
 * bytes go.  Returns the bytes written; *bad: the first size line is not
 * one. */
static uint32_t
dechunk(const uint8_t *in, uint32_t n, uint8_t *out, uint32_t cap, bool *bad, bool *capped)
{
	uint32_t i = 0, o = 0;
	*bad = *capped = false;
	for (int k = 0; i < n; k++) {
		uint64_t size = 0;
		uint32_t d = 0;
		while (i < n && ac_hex_digit(in[i]) >= 0 && d < 9) {
			size = size << 4 | (uint64_t)ac_hex_digit(in[i++]);
			d++;
		}
		if (d == 0 || d == 9) {
			*bad = k == 0;
			break;
		}
		const uint8_t *nl = memchr(in + i, '\n', n - i);
		if (nl == NULL || size == 0)
			break;
		i = (uint32_t)(nl - in) + 1;
		uint32_t take = size < n - i ? (uint32_t)size : n - i;
		if (take > cap - o) {
			take = cap - o;
			*capped = true;
		}
		memcpy(out + o, in + i, take);
		o += take;
		if (*capped || size > n - i)
			break;
		i += (uint32_t)size;
		if (i < n && in[i] == '\r')
			i++;
		if (i < n && in[i] == '\n')
			i++;
	}
	return o;
}

/* in[0, n) inflated into out (at most cap bytes): the bytes written, or
 * -1 when nothing decoded.  wbits: 15 + 32 (zlib or gzip) or -15 (raw). */
static int64_t
inflate_into(z_stream *zs, int wbits, const uint8_t *in, uint32_t n, uint8_t *out, uint32_t cap,
	bool *capped)
{
	if (inflateReset2(zs, wbits) != Z_OK)
		return -1;
	zs->next_in = (Bytef *)(uintptr_t)in;
	zs->avail_in = n;
	zs->next_out = out;
	zs->avail_out = cap;
	int rc = inflate(zs, Z_SYNC_FLUSH);
	uint32_t got = cap - zs->avail_out;
	*capped = zs->avail_out == 0 && rc != Z_STREAM_END;
	if (got == 0 && rc != Z_STREAM_END && rc != Z_OK && rc != Z_BUF_ERROR)
		return -1;
	if (got == 0 && rc == Z_DATA_ERROR)
		return -1;
	return got;
}

void
ids_http_decode_body(struct ids_http_decoder *d, struct ac_http *h, struct ids_http_stats *st)
{
	int b = h->kind == AC_HTTP_REQUEST    ? AC_BUF_CLIENT_BODY
		: h->kind == AC_HTTP_RESPONSE ? AC_BUF_FILE
					      : -1;
	if (b < 0 || !h->buf[b].present || h->buf[b].len == 0 || !h->buf[AC_BUF_RAW_HEADER].present)
		return;
	const struct ac_span *hd = &h->buf[AC_BUF_RAW_HEADER];
	uint32_t tn = 0, cn = 0;
	const uint8_t *te = ac_http_header_value(hd->p, 0, hd->len, "transfer-encoding", &tn);
	const uint8_t *ce = ac_http_header_value(hd->p, 0, hd->len, "content-encoding", &cn);
	bool chunked =
		te != NULL && tn >= 7 && strncasecmp((const char *)te + tn - 7, "chunked", 7) == 0;
	int wbits = 0;
	if (ce != NULL &&
		((cn == 4 && strncasecmp((const char *)ce, "gzip", 4) == 0) ||
			(cn == 6 && strncasecmp((const char *)ce, "x-gzip", 6) == 0)))
		wbits = 15 + 16;
	else if (ce != NULL && cn == 7 && strncasecmp((const char *)ce, "deflate", 7) == 0)
		wbits = 15 + 32; /* a zlib stream, as the standard says; raw if not (below) */
	if (!chunked && wbits == 0)
		return;
	const uint8_t *body = h->buf[b].p;
	uint32_t len = h->buf[b].len, cap = d->lim.max_decoded;
	bool capped = false;
	if (chunked) {
		bool bad;
		uint32_t o = dechunk(body, len, d->dechunked, cap, &bad, &capped);
		if (bad) {
			st->decode_errors++;
			return;
		}
		st->dechunked++;
		st->bound_hit += capped;
		body = d->dechunked;
		len = o;
	}
	if (wbits != 0 && len > 0 && d->zs_ok) {
		uint64_t by_ratio = (uint64_t)len * d->lim.max_ratio;
		uint32_t icap = by_ratio < cap ? (uint32_t)by_ratio : cap;
		int64_t o = inflate_into(&d->zs, wbits, body, len, d->inflated, icap, &capped);
		if (o < 0 && wbits == 15 + 32)
			o = inflate_into(&d->zs, -15, body, len, d->inflated, icap, &capped);
		if (o < 0) {
			st->decode_errors++;
		} else {
			st->decompressed++;
			st->bound_hit += capped;
			body = d->inflated;
			len = (uint32_t)o;
		}
	}
	h->buf[b] = (struct ac_span){ body, len, true };
	h->not_slices |= 1u << b;
}
