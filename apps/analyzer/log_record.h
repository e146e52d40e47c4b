/* The fixed-size record a P task hands to the log writer for each logged
 * packet, and its text forms (CSV, JSON lines). */
#ifndef AN_LOG_RECORD_H
#define AN_LOG_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"

struct an_log_record {
	uint64_t ts_ns;    /* capture time by the analyzer, ns since the epoch
			       (filled in by the writer from the TSC stamp) */
	uint64_t tsc;      /* TSC when the P task saw the burst */
	uint32_t wire_len; /* packet length */
	uint32_t cap_len;  /* bytes decoded (first mbuf segment) */
	uint32_t instance; /* app instance that saw it */
	uint32_t pad_;
	struct an_packet pkt;
};

enum an_log_format {
	AN_LOG_CSV,
	AN_LOG_JSONL
};

/* Header line (CSV column names, "\n"-terminated); "" for JSON lines. */
const char *an_log_header(enum an_log_format fmt);

/* One "\n"-terminated line for *r into buf.  Returns its length, or 0 when
 * cap is below AN_LOG_LINE_MAX (the bound on any line). */
#define AN_LOG_LINE_MAX 1024
size_t an_log_format_line(
	enum an_log_format fmt, const struct an_log_record *r, char *buf, size_t cap);

#endif
