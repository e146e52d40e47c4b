/* Rules mode's detection options beyond content and pcre, as parsed from a
 * rule (snort_rule.c) and evaluated on a packet (rule_verify.c): the
 * buffers an option reads, byte_test / byte_jump / byte_extract /
 * isdataat, dsize and urilen ranges, flow and flowbits.  The semantics are
 * Snort 2.9's as README.md ("Rules mode") states them; the evaluators here
 * work on plain bytes (no DPDK), so the unit tests and the fuzzer call them
 * directly. */
#ifndef AC_RULE_OPTIONS_H
#define AC_RULE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The buffers a payload option reads.  PKT is the L4 payload; the HTTP
 * ones exist when the packet starts an HTTP request or response
 * (http_parse.h); FILE is a response's body, else the whole payload. */
enum ac_buf {
	AC_BUF_PKT = 0,     /* pkt_data, rawbytes, pcre B */
	AC_BUF_FILE,        /* file_data */
	AC_BUF_URI,         /* http_uri, pcre U: the normalised URI */
	AC_BUF_RAW_URI,     /* http_raw_uri, pcre I */
	AC_BUF_HEADER,      /* http_header, pcre H: header lines but Cookie */
	AC_BUF_RAW_HEADER,  /* http_raw_header, pcre D */
	AC_BUF_COOKIE,      /* http_cookie, pcre C */
	AC_BUF_RAW_COOKIE,  /* http_raw_cookie, pcre K */
	AC_BUF_CLIENT_BODY, /* http_client_body, pcre P */
	AC_BUF_METHOD,      /* http_method, pcre M */
	AC_BUF_STAT_CODE,   /* http_stat_code, pcre S */
	AC_BUF_STAT_MSG,    /* http_stat_msg, pcre Y */
	AC_BUF_N,
};
#define AC_BUF_NONE AC_BUF_N /* no cursor yet */

extern const char *const ac_buf_name[AC_BUF_N];

/* One buffer of one packet: absent, or len bytes at p (len may be 0). */
struct ac_span {
	const uint8_t *p;
	uint32_t len;
	bool present;
};

/* dsize / urilen: [op]N, N<>M (exclusive) or N<=>M (inclusive). */
enum ac_range_op {
	AC_RANGE_EQ,
	AC_RANGE_NE,
	AC_RANGE_LT,
	AC_RANGE_GT,
	AC_RANGE_LE,
	AC_RANGE_GE,
	AC_RANGE_IN_EXCL, /* lo<>hi */
	AC_RANGE_IN_INCL, /* lo<=>hi */
};

struct ac_size_range {
	uint8_t op; /* enum ac_range_op */
	uint32_t lo, hi;
};

/* 0, or -1 with err set.  Values 0..65535. */
int ac_range_parse(const char *v, size_t n, struct ac_size_range *r, char *err, size_t errlen);
bool ac_range_match(const struct ac_size_range *r, uint32_t x);

#define AC_MAX_VARS 8 /* byte_extract variables per rule */
#define AC_VAR_NONE (-1)

enum ac_byteop_kind {
	AC_BOP_TEST,
	AC_BOP_JUMP,
	AC_BOP_EXTRACT,
	AC_BOP_ISDATAAT,
};

/* byte_test, byte_jump, byte_extract or isdataat. */
struct ac_byteop {
	uint8_t kind;   /* enum ac_byteop_kind */
	uint8_t nbytes; /* bytes to convert: 1..4 binary, 1..10 string */
	uint8_t base;   /* 0: binary; 8, 10 or 16: a number written in text */
	bool little;    /* binary little endian */
	bool relative;
	bool negate;    /* byte_test '!', isdataat '!' */
	uint8_t op;     /* byte_test: '<' '>' '=' '&' '^', 'l' (<=), 'g' (>=) */
	int32_t offset; /* or offset_var */
	int8_t offset_var;
	uint32_t value; /* byte_test: compared with (or value_var) */
	int8_t value_var;
	uint32_t multiplier; /* byte_jump / byte_extract, 1 if absent */
	uint32_t bitmask;    /* 0: none */
	uint8_t align;       /* byte_jump: 4 or 0; byte_extract: 2, 4 or 0 */
	bool from_beginning; /* byte_jump */
	int32_t post_offset; /* byte_jump */
	int8_t var;          /* byte_extract: the variable it sets */
};

/* Parse the value of a byte_test, byte_jump, byte_extract or isdataat
 * option.  Variables named in it are looked up in names[0..n_names) (the
 * byte_extracts before it); a byte_extract adds its own name there
 * (*n_names grows).  Returns 0; 1 when the option asks for something not
 * evaluated here (dce: why says what); -1 with err set when malformed. */
int ac_byteop_parse(enum ac_byteop_kind kind, const char *v, size_t n, struct ac_byteop *op,
	char names[AC_MAX_VARS][32], unsigned *n_names, char *why, size_t whylen, char *err,
	size_t errlen);

/* Evaluation on a buffer of len bytes.  base: where relative options start
 * (the cursor, or 0); vars: the rule's byte_extract values.  Each returns
 * whether the option holds; those that move the cursor set *cursor. */
bool ac_byte_test(const struct ac_byteop *op, const uint8_t *buf, uint32_t len, int64_t base,
	const uint32_t *vars);
bool ac_byte_jump(const struct ac_byteop *op, const uint8_t *buf, uint32_t len, int64_t base,
	const uint32_t *vars, int64_t *cursor);
bool ac_byte_extract(const struct ac_byteop *op, const uint8_t *buf, uint32_t len, int64_t base,
	const uint32_t *vars, uint32_t *out, int64_t *cursor);
bool ac_isdataat(const struct ac_byteop *op, uint32_t len, int64_t base, const uint32_t *vars);

/* The number in nbytes bytes at buf[at] (binary or text, bitmask applied);
 * false when the field is not wholly inside [0, len) or holds no digit. */
bool ac_byte_read(
	const struct ac_byteop *op, const uint8_t *buf, uint32_t len, int64_t at, uint32_t *out);

/* flow: option bits. */
#define AC_FLOW_TO_SERVER 0x01 /* to_server, from_client */
#define AC_FLOW_TO_CLIENT 0x02 /* to_client, from_server */
#define AC_FLOW_ESTABLISHED 0x04
#define AC_FLOW_NOT_ESTABLISHED 0x08
#define AC_FLOW_STATELESS 0x10
#define AC_FLOW_ONLY_STREAM 0x20
#define AC_FLOW_NO_STREAM 0x40

/* 0, or -1 with err set. */
int ac_flow_parse(const char *v, size_t n, uint8_t *flags, char *err, size_t errlen);

/* A packet's place in its flow, as rules see it. */
#define AC_PF_FROM_CLIENT 0x01
#define AC_PF_ESTABLISHED 0x02

/* Does a packet with flow state pf satisfy flow option bits f? */
static inline bool
ac_flow_match(uint8_t f, uint8_t pf)
{
	if ((f & AC_FLOW_TO_SERVER) && !(pf & AC_PF_FROM_CLIENT))
		return false;
	if ((f & AC_FLOW_TO_CLIENT) && (pf & AC_PF_FROM_CLIENT))
		return false;
	if ((f & AC_FLOW_ESTABLISHED) && !(pf & AC_PF_ESTABLISHED))
		return false;
	if ((f & AC_FLOW_NOT_ESTABLISHED) && (pf & AC_PF_ESTABLISHED))
		return false;
	return true;
}

/* flowbits: one option as written. */
enum ac_fb_cmd {
	AC_FB_SET,
	AC_FB_SETX,
	AC_FB_UNSET,
	AC_FB_TOGGLE,
	AC_FB_RESET,
	AC_FB_ISSET,
	AC_FB_ISNOTSET,
	AC_FB_NOALERT,
};

#define AC_FB_MAX_NAMES 16

struct ac_fbop {
	uint8_t cmd;  /* enum ac_fb_cmd */
	bool any;     /* names joined by '|' (isset/isnotset), or "any" with a group */
	bool all_grp; /* "all" with a group */
	char **names; /* the states named (none for any/all/reset/noalert) */
	unsigned n_names;
	char *group; /* NULL: none */
};

/* 0, or -1 with err set; free with ac_fbop_free. */
int ac_fbop_parse(const char *v, size_t n, struct ac_fbop *op, char *err, size_t errlen);
void ac_fbop_free(struct ac_fbop *op);

#endif /* AC_RULE_OPTIONS_H */
