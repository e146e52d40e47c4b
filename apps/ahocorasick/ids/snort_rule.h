/* Snort rule parsing: one rule line into a struct ac_rule.
 *
 * Interpreted: the header (action, protocol, addresses, ports, direction),
 * content strings (text and |hex| bytes, escapes, negation) with nocase,
 * rawbytes, depth, offset, distance, within, fast_pattern and the http_*
 * buffer modifiers, pcre with every Snort 2.9 flag, byte_test, byte_jump,
 * byte_extract, isdataat, file_data, pkt_data, dsize, urilen, flow,
 * flowbits, msg, classtype, metadata's service, sid and rev.  Keywords
 * mode uses the contents only (every occurrence anywhere); rules mode
 * evaluates the rest (rule_verify.h).  Any other option is recorded by
 * name in ac_rule.unsupported. */
#ifndef AC_SNORT_RULE_H
#define AC_SNORT_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rule_options.h"

#define AC_NO_VALUE INT32_MIN /* positional modifier absent */

struct ac_content {
	uint8_t *bytes;
	uint32_t len;
	bool nocase;
	bool negated;
	int32_t depth, offset, distance, within; /* AC_NO_VALUE if absent or a variable */
	/* byte_extract variable each modifier names (index into ac_rule.vars),
	 * AC_VAR_NONE if a number or absent: offset, depth, distance, within */
	int8_t var[4];
	uint8_t buf;       /* enum ac_buf it is looked for in */
	bool fast_pattern; /* fast_pattern given */
	bool fp_only;      /* fast_pattern:only */
	uint32_t fp_off;   /* fast_pattern:OFF,LEN (fp_len 0: the whole content) */
	uint32_t fp_len;
};

/* pcre:"[!]/re/flags": the expression and its Snort flags as written. */
struct ac_pcre {
	char *re; /* NUL-terminated */
	char flags[32];
	bool negated;
	bool relative; /* R */
	uint8_t buf;   /* enum ac_buf: U I P H D M C K S Y B, else the default buffer */
};

/* A detection option that reads a buffer, in rule order. */
enum ac_ropt_kind {
	AC_ROPT_CONTENT, /* ac_rule.contents[idx] */
	AC_ROPT_PCRE,    /* ac_rule.pcres[idx] */
	AC_ROPT_BYTE,    /* ac_rule.bops[idx]: byte_*, isdataat */
};

struct ac_ropt {
	uint8_t kind; /* enum ac_ropt_kind */
	uint8_t buf;  /* AC_ROPT_BYTE: the default buffer where it stands */
	uint32_t idx;
};

enum ac_proto {
	AC_PROTO_TCP,
	AC_PROTO_UDP,
	AC_PROTO_ICMP,
	AC_PROTO_IP
};

#define AC_UNSUPPORTED_MAX 256

struct ac_rule {
	uint32_t sid, rev;
	unsigned line;      /* 1-based line in its file */
	bool disabled;      /* written as "# alert ..." (commented out) */
	char classtype[64]; /* "" if none */
	struct ac_content *contents;
	unsigned n_contents;
	/* Header and the options rules mode evaluates (rule_verify.h). */
	enum ac_proto proto;
	bool bidirectional;              /* "<>" */
	char *src, *sport, *dst, *dport; /* header fields as written */
	char *msg;                       /* NULL if none */
	struct ac_pcre *pcres;
	unsigned n_pcres;
	struct ac_ropt *opts; /* contents, pcres, byte_* and isdataat in rule order */
	unsigned n_opts;
	struct ac_byteop *bops;
	unsigned n_bops;
	char vars[AC_MAX_VARS][32]; /* byte_extract variable names */
	unsigned n_vars;
	uint8_t flow; /* AC_FLOW_* bits; 0: no flow option */
	struct ac_fbop *fbops;
	unsigned n_fbops;
	bool has_dsize, has_urilen, urilen_raw;
	struct ac_size_range dsize, urilen;
	bool mail_service;   /* metadata names service smtp, pop3 or imap */
	bool http_service;   /* metadata names service http */
	uint8_t default_buf; /* while parsing: file_data / pkt_data */
	/* Options that cannot be evaluated, by name, comma-separated ("flow,
	 * byte_test"); "" if none.  n_unsupported counts them. */
	char unsupported[AC_UNSUPPORTED_MAX];
	unsigned n_unsupported;
};

enum ac_line_kind {
	AC_LINE_RULE,    /* *rule filled; free with ac_rule_free() */
	AC_LINE_IGNORED, /* blank line or comment that is not a rule */
	AC_LINE_ERROR,   /* malformed rule; err says why */
};

/* Parse one (already joined) rule line of len bytes; it need not be
 * NUL-terminated and may contain any byte. */
enum ac_line_kind ac_rule_parse_line(
	const char *line, size_t len, struct ac_rule *rule, char *err, size_t errlen);
void ac_rule_free(struct ac_rule *rule);

/* Print bytes Snort-style ("text|0D 0A|") into buf; returns buf. */
char *ac_format_bytes(const uint8_t *b, uint32_t len, char *buf, size_t size);

#endif /* AC_SNORT_RULE_H */
