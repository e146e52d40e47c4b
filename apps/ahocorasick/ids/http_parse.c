/* HTTP request/response buffers of one payload (see http_parse.h). */
#include "http_parse.h"

#include "hex.h"

#include <string.h>

/* %HH and %uHHHH (below 0x100) to bytes; returns the length written. */
static uint32_t
percent_decode(const uint8_t *s, uint32_t n, uint8_t *out)
{
	uint32_t o = 0;
	for (uint32_t i = 0; i < n;) {
		if (s[i] == '%') {
			if (i + 5 < n && (s[i + 1] == 'u' || s[i + 1] == 'U') &&
				ac_hex_digit(s[i + 2]) >= 0 && ac_hex_digit(s[i + 3]) >= 0 &&
				ac_hex_digit(s[i + 4]) >= 0 && ac_hex_digit(s[i + 5]) >= 0) {
				int v = ac_hex_digit(s[i + 2]) << 12 | ac_hex_digit(s[i + 3]) << 8 |
					ac_hex_digit(s[i + 4]) << 4 | ac_hex_digit(s[i + 5]);
				if (v < 0x100) {
					out[o++] = (uint8_t)v;
					i += 6;
					continue;
				}
			} else if (i + 2 < n && ac_hex_digit(s[i + 1]) >= 0 &&
				ac_hex_digit(s[i + 2]) >= 0) {
				out[o++] = (uint8_t)(ac_hex_digit(s[i + 1]) << 4 |
					ac_hex_digit(s[i + 2]));
				i += 3;
				continue;
			}
		}
		out[o++] = s[i++];
	}
	return o;
}

/* Directory normalisation of a decoded path into out; stack: room for
 * n + 1 segment offsets. */
static uint32_t
dir_normalize(const uint8_t *p, uint32_t n, uint8_t *out, uint32_t *stack)
{
	uint32_t o = 0, depth = 0;

	if (n == 0)
		return 0;
	bool lead = p[0] == '/' || p[0] == '\\';
	if (lead)
		out[o++] = '/';
	uint32_t base = o; /* where the first kept segment starts */
	bool trail = false;
	for (uint32_t i = 0; i <= n;) {
		uint32_t s = i;
		while (i < n && p[i] != '/' && p[i] != '\\')
			i++;
		uint32_t len = i - s;
		bool last = i >= n;
		if (len == 0 || (len == 1 && p[s] == '.')) {
			trail = last; /* "x/" or "x/." ends with a slash */
		} else if (len == 2 && p[s] == '.' && p[s + 1] == '.') {
			if (depth > 0)
				o = stack[--depth];
			trail = last;
		} else {
			stack[depth++] = o;
			if (o > base)
				out[o++] = '/';
			memcpy(out + o, p + s, len);
			o += len;
			trail = false;
		}
		i++; /* past the separator (or the end) */
	}
	if (trail && depth > 0)
		out[o++] = '/';
	return o;
}

uint32_t
ac_uri_normalize(const uint8_t *raw, uint32_t n, uint8_t *out, uint8_t *tmp)
{
	uint32_t o = 0, i = 0;

	/* scheme://authority of an absolute URI, kept as written */
	if (n > 0 && ((raw[0] | 0x20) >= 'a' && (raw[0] | 0x20) <= 'z')) {
		uint32_t k = 1;
		while (k < n &&
			(((raw[k] | 0x20) >= 'a' && (raw[k] | 0x20) <= 'z') ||
				(raw[k] >= '0' && raw[k] <= '9') || raw[k] == '+' ||
				raw[k] == '-' || raw[k] == '.'))
			k++;
		if (k + 2 < n && raw[k] == ':' && raw[k + 1] == '/' && raw[k + 2] == '/') {
			k += 3;
			while (k < n && raw[k] != '/' && raw[k] != '?')
				k++;
			memcpy(out, raw, k);
			o = i = k;
		}
	}
	uint32_t q = i;
	while (q < n && raw[q] != '?')
		q++;
	uint8_t *dec = tmp;
	uint32_t *stack = (uint32_t *)(void *)(((uintptr_t)tmp + n + 3) & ~(uintptr_t)3);
	uint32_t dn = percent_decode(raw + i, q - i, dec);
	o += dir_normalize(dec, dn, out + o, stack);
	o += percent_decode(raw + q, n - q, out + o);
	return o;
}

static bool
method_char(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
}

static bool
digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* "HTTP/d.d" at pl[i]? */
static bool
version_at(const uint8_t *pl, uint32_t len, uint32_t i)
{
	return i + 8 <= len && memcmp(pl + i, "HTTP/", 5) == 0 && digit(pl[i + 5]) &&
		pl[i + 6] == '.' && digit(pl[i + 7]);
}

/* Length of a line end (CRLF 2, LF 1) at pl[i], 0 if none. */
static uint32_t
eol_at(const uint8_t *pl, uint32_t len, uint32_t i)
{
	if (i < len && pl[i] == '\n')
		return 1;
	if (i + 1 < len && pl[i] == '\r' && pl[i + 1] == '\n')
		return 2;
	return 0;
}

/* Header lines from h on: where the empty line starts (*end) and the body
 * after it (*body), or *end = len and *body = UINT32_MAX when the payload
 * ends first. */
static void
find_header_end(const uint8_t *pl, uint32_t len, uint32_t h, uint32_t *end, uint32_t *body)
{
	uint32_t i = h;
	for (;;) {
		uint32_t e = eol_at(pl, len, i);
		if (e != 0) {
			*end = i;
			*body = i + e;
			return;
		}
		const uint8_t *nl = i < len ? memchr(pl + i, '\n', len - i) : NULL;
		if (nl == NULL) {
			*end = len;
			*body = UINT32_MAX;
			return;
		}
		i = (uint32_t)(nl - pl) + 1;
	}
}

static bool
name_is(const uint8_t *s, uint32_t n, const char *want)
{
	uint32_t l = (uint32_t)strlen(want);
	if (n != l)
		return false;
	for (uint32_t i = 0; i < l; i++)
		if ((s[i] | (s[i] >= 'A' && s[i] <= 'Z' ? 0x20 : 0)) != (uint8_t)want[i])
			return false;
	return true;
}

/* Headers [h, end): cookie lines (named cname) taken out of http_header
 * and their values gathered into http_cookie. */
static void
headers(struct ac_http *x, const uint8_t *pl, uint32_t h, uint32_t end, const char *cname,
	uint8_t *hdr_out, uint8_t *cookie_out)
{
	uint32_t ho = 0, co = 0, n_cookies = 0, line_s = h;
	const uint8_t *first_val = NULL;
	uint32_t first_len = 0;
	bool cut = false;

	x->buf[AC_BUF_RAW_HEADER] = (struct ac_span){ pl + h, end - h, true };
	while (line_s < end) {
		const uint8_t *nl = memchr(pl + line_s, '\n', end - line_s);
		uint32_t line_e = nl ? (uint32_t)(nl - pl) + 1 : end;
		const uint8_t *colon = memchr(pl + line_s, ':', line_e - line_s);
		if (colon != NULL &&
			name_is(pl + line_s, (uint32_t)(colon - (pl + line_s)), cname)) {
			uint32_t vs = (uint32_t)(colon - pl) + 1, ve = line_e;
			while (vs < ve && (pl[vs] == ' ' || pl[vs] == '\t'))
				vs++;
			if (ve > vs && pl[ve - 1] == '\n') {
				ve--;
				if (ve > vs && pl[ve - 1] == '\r')
					ve--;
			}
			if (n_cookies == 0) {
				first_val = pl + vs;
				first_len = ve - vs;
			}
			memcpy(cookie_out + co, pl + vs, ve - vs);
			co += ve - vs;
			n_cookies++;
			cut = true;
		} else {
			memcpy(hdr_out + ho, pl + line_s, line_e - line_s);
			ho += line_e - line_s;
		}
		line_s = line_e;
	}
	if (cut) {
		x->buf[AC_BUF_HEADER] = (struct ac_span){ hdr_out, ho, true };
		x->not_slices |= 1u << AC_BUF_HEADER;
	} else {
		x->buf[AC_BUF_HEADER] = x->buf[AC_BUF_RAW_HEADER];
	}
	if (n_cookies == 1) {
		x->buf[AC_BUF_COOKIE] = (struct ac_span){ first_val, first_len, true };
	} else if (n_cookies > 1) {
		x->buf[AC_BUF_COOKIE] = (struct ac_span){ cookie_out, co, true };
		x->not_slices |= 1u << AC_BUF_COOKIE | 1u << AC_BUF_RAW_COOKIE;
	}
	x->buf[AC_BUF_RAW_COOKIE] = x->buf[AC_BUF_COOKIE];
}

static bool
parse_request(struct ac_http *x, const uint8_t *pl, uint32_t len, uint8_t *scratch)
{
	uint32_t i = 0;
	while (i < len && i <= 32 && method_char(pl[i]))
		i++;
	if (i == 0 || i > 32 || i >= len || pl[i] != ' ')
		return false;
	uint32_t m = i++, u0 = i;
	while (i < len && pl[i] != ' ' && pl[i] != '\r' && pl[i] != '\n')
		i++;
	if (i == u0 || i >= len || pl[i] != ' ' || !version_at(pl, len, i + 1))
		return false;
	uint32_t u1 = i, e = eol_at(pl, len, i + 9);
	if (e == 0)
		return false;
	uint32_t h = i + 9 + e, end, body;
	uint32_t ulen = u1 - u0;
	uint8_t *uri = scratch, *tmp = scratch + len, *hdr = tmp + 6 * (size_t)len + 16,
		*cookie = hdr + len;

	x->kind = AC_HTTP_REQUEST;
	x->buf[AC_BUF_METHOD] = (struct ac_span){ pl, m, true };
	x->buf[AC_BUF_RAW_URI] = (struct ac_span){ pl + u0, ulen, true };
	uint32_t un = ac_uri_normalize(pl + u0, ulen, uri, tmp);
	if (un == ulen && memcmp(uri, pl + u0, ulen) == 0) {
		x->buf[AC_BUF_URI] = x->buf[AC_BUF_RAW_URI];
	} else {
		x->buf[AC_BUF_URI] = (struct ac_span){ uri, un, true };
		x->not_slices |= 1u << AC_BUF_URI;
	}
	find_header_end(pl, len, h, &end, &body);
	headers(x, pl, h, end, "cookie", hdr, cookie);
	if (body != UINT32_MAX)
		x->buf[AC_BUF_CLIENT_BODY] = (struct ac_span){ pl + body, len - body, true };
	return true;
}

static bool
parse_response(struct ac_http *x, const uint8_t *pl, uint32_t len, uint8_t *scratch)
{
	if (!version_at(pl, len, 0) || len < 12 || pl[8] != ' ' || !digit(pl[9]) ||
		!digit(pl[10]) || !digit(pl[11]))
		return false;
	uint32_t i = 12, ms, me, e;
	if ((e = eol_at(pl, len, i)) != 0) {
		ms = me = i;
	} else if (i < len && pl[i] == ' ') {
		ms = ++i;
		while (i < len && pl[i] != '\n' && !(pl[i] == '\r' && eol_at(pl, len, i) == 2))
			i++;
		if ((e = eol_at(pl, len, i)) == 0)
			return false;
		me = i;
	} else {
		return false;
	}
	uint32_t h = i + e, end, body;
	uint8_t *hdr = scratch + len + 6 * (size_t)len + 16, *cookie = hdr + len;

	x->kind = AC_HTTP_RESPONSE;
	x->buf[AC_BUF_STAT_CODE] = (struct ac_span){ pl + 9, 3, true };
	x->buf[AC_BUF_STAT_MSG] = (struct ac_span){ pl + ms, me - ms, true };
	find_header_end(pl, len, h, &end, &body);
	headers(x, pl, h, end, "set-cookie", hdr, cookie);
	if (body != UINT32_MAX)
		x->buf[AC_BUF_FILE] = (struct ac_span){ pl + body, len - body, true };
	else
		x->buf[AC_BUF_FILE] = (struct ac_span){ NULL, 0, false };
	return true;
}

void
ac_http_parse(const uint8_t *pl, uint32_t len, bool tcp, uint8_t *scratch, struct ac_http *h)
{
	memset(h, 0, sizeof(*h));
	h->buf[AC_BUF_PKT] = (struct ac_span){ pl, len, true };
	h->buf[AC_BUF_FILE] = h->buf[AC_BUF_PKT];
	if (!tcp || len < 12)
		return;
	/* One byte tells most payloads apart: every request starts with an
	 * upper-case letter, '_' or '-', every response with 'H'. */
	if (!method_char(pl[0]))
		return;
	if (pl[0] == 'H' && parse_response(h, pl, len, scratch))
		return;
	if (parse_request(h, pl, len, scratch))
		return;
	/* Not HTTP after all: drop what a failed parse may have filled. */
	memset(h, 0, sizeof(*h));
	h->buf[AC_BUF_PKT] = (struct ac_span){ pl, len, true };
	h->buf[AC_BUF_FILE] = h->buf[AC_BUF_PKT];
}

/* The value of header `name` among [h, end), or NULL; *n its length
 * (spaces around it trimmed). */
const uint8_t *
ac_http_header_value(const uint8_t *pl, uint32_t h, uint32_t end, const char *name, uint32_t *n)
{
	uint32_t line_s = h;
	while (line_s < end) {
		const uint8_t *nl = memchr(pl + line_s, '\n', end - line_s);
		uint32_t line_e = nl ? (uint32_t)(nl - pl) + 1 : end;
		const uint8_t *colon = memchr(pl + line_s, ':', line_e - line_s);
		if (colon != NULL &&
			name_is(pl + line_s, (uint32_t)(colon - (pl + line_s)), name)) {
			uint32_t vs = (uint32_t)(colon - pl) + 1, ve = line_e;
			while (vs < ve && (pl[vs] == ' ' || pl[vs] == '\t'))
				vs++;
			while (ve > vs &&
				(pl[ve - 1] == '\n' || pl[ve - 1] == '\r' || pl[ve - 1] == ' ' ||
					pl[ve - 1] == '\t'))
				ve--;
			*n = ve - vs;
			return pl + vs;
		}
		line_s = line_e;
	}
	return NULL;
}

/* Where the chunks starting at i end (after the last chunk's trailer), or
 * 0 when they run past len or are malformed. */
static uint32_t
chunks_end(const uint8_t *pl, uint32_t len, uint32_t i)
{
	for (int guard = 0; guard < 100000; guard++) {
		uint64_t size = 0;
		uint32_t d = 0;
		while (i < len && ac_hex_digit(pl[i]) >= 0 && d < 9) {
			size = size << 4 | (uint64_t)ac_hex_digit(pl[i++]);
			d++;
		}
		if (d == 0 || d == 9)
			return 0;
		const uint8_t *nl = i < len ? memchr(pl + i, '\n', len - i) : NULL;
		if (nl == NULL)
			return 0;
		i = (uint32_t)(nl - pl) + 1; /* past the size line (and any extension) */
		if (size == 0) {
			uint32_t end, body;
			find_header_end(pl, len, i, &end, &body);
			return body == UINT32_MAX ? 0 : body;
		}
		if (size > len - i)
			return 0;
		i += (uint32_t)size;
		uint32_t e = eol_at(pl, len, i);
		if (e == 0)
			return 0;
		i += e;
	}
	return 0;
}

uint32_t
ac_http_message_len(const uint8_t *pl, uint32_t len)
{
	if (len < 12 || !method_char(pl[0]))
		return 0;
	bool resp = false;
	uint32_t h;
	if (pl[0] == 'H' && version_at(pl, len, 0) && pl[8] == ' ' && digit(pl[9]) &&
		digit(pl[10]) && digit(pl[11])) {
		uint32_t i = 12, e;
		if ((e = eol_at(pl, len, i)) == 0) {
			if (pl[i] != ' ')
				return 0;
			while (i < len && pl[i] != '\n')
				i++;
			if (i >= len)
				return 0;
			e = 1;
		}
		h = i + e;
		resp = true;
	} else {
		uint32_t i = 0;
		while (i < len && i <= 32 && method_char(pl[i]))
			i++;
		if (i == 0 || i > 32 || i >= len || pl[i] != ' ')
			return 0;
		uint32_t u0 = ++i;
		while (i < len && pl[i] != ' ' && pl[i] != '\r' && pl[i] != '\n')
			i++;
		if (i == u0 || i >= len || pl[i] != ' ' || !version_at(pl, len, i + 1))
			return 0;
		uint32_t e = eol_at(pl, len, i + 9);
		if (e == 0)
			return 0;
		h = i + 9 + e;
	}
	uint32_t end, body, n;
	find_header_end(pl, len, h, &end, &body);
	if (body == UINT32_MAX)
		return 0;
	const uint8_t *te = ac_http_header_value(pl, h, end, "transfer-encoding", &n);
	if (te != NULL && n >= 7 && name_is(te + n - 7, 7, "chunked"))
		return chunks_end(pl, len, body);
	const uint8_t *cl = ac_http_header_value(pl, h, end, "content-length", &n);
	if (cl != NULL) {
		uint64_t v = 0;
		uint32_t k = 0;
		while (k < n && digit(cl[k]) && v < (1ull << 40))
			v = v * 10 + (uint64_t)(cl[k++] - '0');
		if (k == 0 || k != n)
			return 0;
		return v <= len - body ? body + (uint32_t)v : 0;
	}
	if (!resp)
		return body;
	/* A response without a length: no body for 1xx, 204 and 304, else
	 * it runs to the connection's end. */
	if (pl[9] == '1' || (pl[9] == '2' && pl[10] == '0' && pl[11] == '4') ||
		(pl[9] == '3' && pl[10] == '0' && pl[11] == '4'))
		return body;
	return 0;
}

bool
ac_http_starts_message(const uint8_t *pl, uint32_t len)
{
	if (len >= 9 && version_at(pl, len, 0) && pl[8] == ' ')
		return true;
	uint32_t i = 0;
	while (i < len && i <= 32 && method_char(pl[i]))
		i++;
	return i > 0 && i <= 32 && i + 1 < len && pl[i] == ' ' && pl[i + 1] != ' ' &&
		pl[i + 1] != '\r' && pl[i + 1] != '\n';
}
