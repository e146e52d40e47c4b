/* Rules mode's IDS parts on crafted input, each case just inside and just
 * outside what README.md states: URI normalisation and the HTTP buffers
 * (http_parse.h), byte_test/byte_jump/byte_extract/isdataat parsing and
 * evaluation, dsize/urilen ranges, flow and flowbits option parsing
 * (rule_options.h), and the flow state machine (flow_ids.h). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flow_ids.h"
#include "http_parse.h"
#include "rule_options.h"

static uint8_t scratch[AC_HTTP_SCRATCH(4096)];

static void
uri(const char *raw, const char *want)
{
	uint8_t out[512], tmp[6 * 512 + 16];
	uint32_t n = ac_uri_normalize((const uint8_t *)raw, (uint32_t)strlen(raw), out, tmp);
	CHECK(n == strlen(want) && memcmp(out, want, n) == 0,
		"normalize '%s': got '%.*s', want '%s'", raw, (int)n, out, want);
}

static bool
span_is(const struct ac_span *s, const char *want)
{
	return s->present && s->len == strlen(want) && memcmp(s->p, want, s->len) == 0;
}

static void
test_uri(void)
{
	uri("/a/../admin/./x", "/admin/x");
	uri("/%61dmin", "/admin");
	uri("/%u0061dmin", "/admin");
	uri("/%u0100x", "/%u0100x");       /* above 0xff: kept as written */
	uri("/%6", "/%6");                 /* not two hex digits: kept */
	uri("/%2e%2e/etc", "/etc");        /* decoded, then the ".." goes */
	uri("\\a\\b", "/a/b");             /* backslashes are slashes */
	uri("//a///b//", "/a/b/");         /* empty segments go, the trailing slash stays */
	uri("/..", "/");                   /* never above the root */
	uri("/a/..", "/");                 /* nothing left: no trailing slash added */
	uri("a/./b/.", "a/b/");            /* relative, a "." last ends with a slash */
	uri("/x?a=/../%41", "/x?a=/../A"); /* the query is decoded, not normalised */
	uri("http://h//a/../b?q", "http://h/b?q");
	uri("HTTP://H.example:80", "HTTP://H.example:80");
	uri("", "");
}

static void
parse(const char *pl, bool tcp, struct ac_http *h)
{
	ac_http_parse((const uint8_t *)pl, (uint32_t)strlen(pl), tcp, scratch, h);
}

static void
test_http(void)
{
	struct ac_http h;

	parse("GET /a%2fb HTTP/1.1\r\nHost: x\r\nCookie: s=1\r\nX: y\r\n\r\nbody", true, &h);
	CHECK(h.kind == AC_HTTP_REQUEST, "request");
	CHECK(span_is(&h.buf[AC_BUF_METHOD], "GET"), "method");
	CHECK(span_is(&h.buf[AC_BUF_RAW_URI], "/a%2fb"), "raw uri");
	CHECK(span_is(&h.buf[AC_BUF_URI], "/a/b"), "uri");
	CHECK(span_is(&h.buf[AC_BUF_RAW_HEADER], "Host: x\r\nCookie: s=1\r\nX: y\r\n"),
		"raw header");
	CHECK(span_is(&h.buf[AC_BUF_HEADER], "Host: x\r\nX: y\r\n"), "header without the cookie");
	CHECK(span_is(&h.buf[AC_BUF_COOKIE], "s=1") && span_is(&h.buf[AC_BUF_RAW_COOKIE], "s=1"),
		"cookie");
	CHECK(span_is(&h.buf[AC_BUF_CLIENT_BODY], "body"), "client body");
	CHECK(h.buf[AC_BUF_FILE].present && h.buf[AC_BUF_FILE].p == h.buf[AC_BUF_PKT].p &&
			h.buf[AC_BUF_FILE].len == h.buf[AC_BUF_PKT].len,
		"file_data of a request: the payload");
	CHECK(!h.buf[AC_BUF_STAT_CODE].present, "no status code in a request");
	CHECK(h.not_slices == (1u << AC_BUF_URI | 1u << AC_BUF_HEADER), "not slices: %x",
		h.not_slices);

	parse("POST /x HTTP/1.0\nCookie: a\nCOOKIE:\tb\n", true, &h);
	CHECK(h.kind == AC_HTTP_REQUEST && span_is(&h.buf[AC_BUF_COOKIE], "ab"),
		"two cookies, LF line ends, header cut: joined");
	CHECK(!h.buf[AC_BUF_CLIENT_BODY].present, "no empty line: no body");
	CHECK(span_is(&h.buf[AC_BUF_HEADER], ""), "every header line was a cookie");

	parse("HTTP/1.1 404 Not Found\r\nSet-Cookie: id=7\r\n\r\n<html>", true, &h);
	CHECK(h.kind == AC_HTTP_RESPONSE, "response");
	CHECK(span_is(&h.buf[AC_BUF_STAT_CODE], "404") &&
			span_is(&h.buf[AC_BUF_STAT_MSG], "Not Found"),
		"status");
	CHECK(span_is(&h.buf[AC_BUF_COOKIE], "id=7"), "set-cookie");
	CHECK(span_is(&h.buf[AC_BUF_FILE], "<html>"), "file_data: the body");
	CHECK(!h.buf[AC_BUF_METHOD].present, "no method in a response");

	parse("HTTP/1.1 200\r\nA: b\r\n", true, &h);
	CHECK(h.kind == AC_HTTP_RESPONSE && span_is(&h.buf[AC_BUF_STAT_MSG], ""), "no message");
	CHECK(!h.buf[AC_BUF_FILE].present, "header cut: no file_data");

	/* just outside: not HTTP, file_data the payload */
	static const char *const not_http[] = {
		"get / HTTP/1.1\r\n\r\n",  /* lower-case method */
		"GET / HTTP/1.1",          /* no line end */
		"GET /  HTTP/1.1\r\n\r\n", /* two spaces */
		"GET / HTTP/x.1\r\n\r\n",  /* version */
		"HTTP/1.1 20 OK\r\n\r\n",  /* two digits */
		"HTTP/1.1 200OK\r\n\r\n",  /* no space after the code */
		"User-Agent: x\r\n\r\n",   /* a request's second packet */
		"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG / HTTP/1.1\r\n\r\n", /* 33-letter method */
	};
	for (size_t i = 0; i < sizeof(not_http) / sizeof(not_http[0]); i++) {
		parse(not_http[i], true, &h);
		CHECK(h.kind == AC_HTTP_NONE && span_is(&h.buf[AC_BUF_FILE], not_http[i]) &&
				!h.buf[AC_BUF_URI].present && h.not_slices == 0,
			"not HTTP: '%s'", not_http[i]);
	}
	parse("ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEF / HTTP/1.1\r\n\r\n", true, &h);
	CHECK(h.kind == AC_HTTP_REQUEST, "32-letter method");
	parse("GET / HTTP/1.1\r\n\r\n", false, &h);
	CHECK(h.kind == AC_HTTP_NONE, "not TCP: no HTTP");
}

static struct ac_byteop
op(enum ac_byteop_kind kind, const char *v, char names[AC_MAX_VARS][32], unsigned *nn, int want_rc)
{
	struct ac_byteop o;
	char why[64] = "", err[256] = "";
	int rc = ac_byteop_parse(
		kind, v, strlen(v), &o, names, nn, why, sizeof(why), err, sizeof(err));
	CHECK(rc == want_rc, "parse '%s': rc %d, want %d (%s%s)", v, rc, want_rc, err, why);
	return o;
}

static void
test_bytes(void)
{
	char names[AC_MAX_VARS][32];
	unsigned nn = 0;
	uint32_t vars[AC_MAX_VARS] = { 0 };
	int64_t c;
	const uint8_t *b = (const uint8_t *)"\x10\x01"
					    "0x12"
					    "1234x"
					    "\x03";

	struct ac_byteop t = op(AC_BOP_TEST, "2,>,0x1000,0", names, &nn, 0);
	CHECK(ac_byte_test(&t, b, 2, 0, vars), "0x1001 > 0x1000");
	t.value = 0x1001;
	CHECK(!ac_byte_test(&t, b, 2, 0, vars), "0x1001 > 0x1001");
	CHECK(!ac_byte_test(&t, b, 1, 0, vars), "field past the end");
	t = op(AC_BOP_TEST, "2,=,0x0110,0,little", names, &nn, 0);
	CHECK(ac_byte_test(&t, b, 2, 0, vars), "little endian");
	t = op(AC_BOP_TEST, "4,=,1234,6,string,dec", names, &nn, 0);
	CHECK(ac_byte_test(&t, b, 11, 0, vars), "string dec");
	t = op(AC_BOP_TEST, "5,=,1234,6,string", names, &nn, 0);
	CHECK(ac_byte_test(&t, b, 11, 0, vars), "digits stop at the first other byte");
	t = op(AC_BOP_TEST, "1,=,0,10,string", names, &nn, 0);
	CHECK(!ac_byte_test(&t, b, 11, 0, vars), "no digit: fails");
	t = op(AC_BOP_TEST, "2,=,0x12,4,string,hex", names, &nn, 0);
	CHECK(ac_byte_test(&t, b, 11, 0, vars), "hex");
	t = op(AC_BOP_TEST, "1,!&,0x02,0,relative", names, &nn, 0);
	CHECK(ac_byte_test(&t, b, 2, 1, vars), "!& relative: 0x01 & 0x02 == 0");
	t = op(AC_BOP_TEST, "2,=,1,0,bitmask 0x0f00", names, &nn, 0);
	CHECK(!ac_byte_test(&t, b, 2, 0, vars), "bitmask: (0x1001 & 0x0f00) >> 8 == 0");
	t = op(AC_BOP_TEST, "1,!,16,0", names, &nn, 0);
	CHECK(!ac_byte_test(&t, b, 2, 0, vars), "'!' alone is not-equal");
	op(AC_BOP_TEST, "5,>,1,0", names, &nn, -1);
	op(AC_BOP_TEST, "1,>,x,0", names, &nn, -1);
	op(AC_BOP_TEST, "1,>,1,0,dce", names, &nn, 1);
	op(AC_BOP_TEST, "1,>,1,70000", names, &nn, -1);

	struct ac_byteop j = op(AC_BOP_JUMP, "1,0", names, &nn, 0);
	CHECK(ac_byte_jump(&j, (const uint8_t *)"\x02xx", 3, 0, vars, &c) && c == 3,
		"jump to the end is allowed (%lld)", (long long)c);
	CHECK(!ac_byte_jump(&j, (const uint8_t *)"\x03xx", 3, 0, vars, &c), "past the end");
	j = op(AC_BOP_JUMP, "1,0,multiplier 3,align", names, &nn, 0);
	CHECK(ac_byte_jump(&j, (const uint8_t *)"\x01.......", 9, 0, vars, &c) && c == 5,
		"1 x 3 aligned to 4, from after the field: %lld", (long long)c);
	j = op(AC_BOP_JUMP, "1,1,relative,from_beginning,post_offset -2", names, &nn, 0);
	CHECK(ac_byte_jump(&j, (const uint8_t *)"x\x05....", 7, 0, vars, &c) && c == 3,
		"from_beginning, post_offset: %lld", (long long)c);
	op(AC_BOP_JUMP, "4,0,from_end", names, &nn, -1);

	struct ac_byteop e =
		op(AC_BOP_EXTRACT, "1,0,len,relative,multiplier 3,align 4", names, &nn, 0);
	CHECK(nn == 1 && e.var == 0, "variable 0");
	uint32_t v;
	CHECK(ac_byte_extract(&e, (const uint8_t *)"x\x03", 2, 1, vars, &v, &c) && v == 12 &&
			c == 2,
		"3 x 3 aligned to 4 (%u), cursor after the field", v);
	struct ac_byteop e2 = op(AC_BOP_EXTRACT, "1,0,len", names, &nn, 0);
	CHECK(nn == 1 && e2.var == 0, "extracting into len again overwrites it");
	vars[0] = 2;
	t = op(AC_BOP_TEST, "1,=,len,len", names, &nn, 0);
	CHECK(ac_byte_test(&t, (const uint8_t *)"..\x02", 3, 0, vars),
		"variables as value and offset");
	struct ac_byteop d = op(AC_BOP_ISDATAAT, "!len,relative", names, &nn, 0);
	CHECK(ac_isdataat(&d, 4, 2, vars), "!isdataat: 2 + 2 is not below 4");
	CHECK(!ac_isdataat(&d, 5, 2, vars), "!isdataat: 2 + 2 is below 5");
	d = op(AC_BOP_ISDATAAT, "3", names, &nn, 0);
	CHECK(ac_isdataat(&d, 4, 99, vars) && !ac_isdataat(&d, 3, 0, vars), "absolute");
	op(AC_BOP_ISDATAAT, "3,sideways", names, &nn, -1);
}

static void
test_ranges_flow_flowbits(void)
{
	struct ac_size_range r;
	char err[256];
	CHECK(ac_range_parse("5<>8", 4, &r, err, sizeof(err)) == 0 && !ac_range_match(&r, 5) &&
			ac_range_match(&r, 6) && !ac_range_match(&r, 8),
		"exclusive range");
	CHECK(ac_range_parse("5<=>8", 5, &r, err, sizeof(err)) == 0 && ac_range_match(&r, 5) &&
			ac_range_match(&r, 8) && !ac_range_match(&r, 9),
		"inclusive range");
	CHECK(ac_range_parse(">=3", 3, &r, err, sizeof(err)) == 0 && ac_range_match(&r, 3) &&
			!ac_range_match(&r, 2),
		">=");
	CHECK(ac_range_parse("!3", 2, &r, err, sizeof(err)) == 0 && !ac_range_match(&r, 3), "!");
	CHECK(ac_range_parse("8<>5", 4, &r, err, sizeof(err)) < 0, "reversed range refused");
	CHECK(ac_range_parse("70000", 5, &r, err, sizeof(err)) < 0, "too big refused");

	uint8_t f;
	CHECK(ac_flow_parse("to_server, established", 22, &f, err, sizeof(err)) == 0 &&
			f == (AC_FLOW_TO_SERVER | AC_FLOW_ESTABLISHED),
		"flow parse");
	CHECK(ac_flow_match(f, AC_PF_FROM_CLIENT | AC_PF_ESTABLISHED) &&
			!ac_flow_match(f, AC_PF_FROM_CLIENT) &&
			!ac_flow_match(f, AC_PF_ESTABLISHED),
		"flow match");
	CHECK(ac_flow_parse("from_server,not_established", 27, &f, err, sizeof(err)) == 0 &&
			ac_flow_match(f, 0) && !ac_flow_match(f, AC_PF_ESTABLISHED),
		"from_server, not_established");
	CHECK(ac_flow_parse("stateless,established", 21, &f, err, sizeof(err)) < 0,
		"stateless with a state refused");

	struct ac_fbop o;
	CHECK(ac_fbop_parse("set,a&b,g", 9, &o, err, sizeof(err)) == 0 && o.cmd == AC_FB_SET &&
			o.n_names == 2 && o.group != NULL && strcmp(o.group, "g") == 0,
		"set two states in a group");
	ac_fbop_free(&o);
	CHECK(ac_fbop_parse("isset,a|b", 9, &o, err, sizeof(err)) == 0 && o.any && o.n_names == 2,
		"isset any of two");
	ac_fbop_free(&o);
	CHECK(ac_fbop_parse("isnotset,all,g", 14, &o, err, sizeof(err)) == 0 && o.all_grp &&
			o.n_names == 0,
		"isnotset all of a group");
	ac_fbop_free(&o);
	CHECK(ac_fbop_parse("set,a|b", 7, &o, err, sizeof(err)) < 0, "set with | refused");
	CHECK(ac_fbop_parse("setx,a", 6, &o, err, sizeof(err)) < 0, "setx without a group refused");
	CHECK(ac_fbop_parse("isset,any", 9, &o, err, sizeof(err)) < 0,
		"any without a group refused");
	CHECK(ac_fbop_parse("noalert,x", 9, &o, err, sizeof(err)) < 0, "noalert takes nothing");
}

static uint8_t
track(struct ac_flow_ext *x, bool first, uint8_t proto, uint8_t dir, uint8_t flags)
{
	return ac_flow_track(x, first, proto, dir, flags);
}

static void
test_flow_state(void)
{
	struct ac_flow_ext x;
	const uint8_t S = AC_TCP_SYN, A = AC_TCP_ACK;

	memset(&x, 0, sizeof(x));
	CHECK(track(&x, true, 6, 1, S) == AC_PF_FROM_CLIENT, "SYN: from the client");
	CHECK(track(&x, false, 6, 0, S | A) == 0, "SYN+ACK: from the server, not yet");
	CHECK(track(&x, false, 6, 1, A) == (AC_PF_FROM_CLIENT | AC_PF_ESTABLISHED),
		"ACK: established");
	CHECK(track(&x, false, 6, 0, A) == AC_PF_ESTABLISHED, "the server's data");

	memset(&x, 0, sizeof(x));
	CHECK(track(&x, true, 6, 0, S | A) == 0,
		"first packet SYN+ACK: its receiver is the client");
	CHECK(track(&x, false, 6, 1, A) == AC_PF_FROM_CLIENT, "no SYN seen: never established");

	memset(&x, 0, sizeof(x));
	track(&x, true, 6, 0, S);
	track(&x, false, 6, 0, S | A); /* from the client: not the answer */
	CHECK(track(&x, false, 6, 0, A) == AC_PF_FROM_CLIENT, "reversed SYN+ACK: not established");

	memset(&x, 0, sizeof(x));
	track(&x, true, 6, 0, S);
	track(&x, false, 6, 1, S | A | AC_TCP_RST);
	CHECK(track(&x, false, 6, 0, A) == AC_PF_FROM_CLIENT, "SYN+ACK with RST: not established");

	memset(&x, 0, sizeof(x));
	CHECK(track(&x, true, 6, 1, A) == AC_PF_FROM_CLIENT, "mid-stream: the first sender");

	memset(&x, 0, sizeof(x));
	CHECK(track(&x, true, 17, 0, 0) == AC_PF_FROM_CLIENT, "UDP first packet");
	CHECK(track(&x, false, 17, 0, 0) == AC_PF_FROM_CLIENT,
		"UDP, one direction: not established");
	CHECK(track(&x, false, 17, 1, 0) == AC_PF_ESTABLISHED, "UDP reply: established");
	CHECK(track(&x, false, 17, 0, 0) == (AC_PF_FROM_CLIENT | AC_PF_ESTABLISHED), "and after");
}

int
main(void)
{
	test_uri();
	test_http();
	test_bytes();
	test_ranges_flow_flowbits();
	test_flow_state();
	return check_done("ids");
}
