/* Decoder and stream events: limits hit and anomalies met while putting
 * datagrams and streams back together.  Each is counted; with
 * --decoder-alerts each also raises an alert with the generator and
 * signature ids of Snort's preprocessor rules where Snort names one (gid
 * 123: frag3, gid 129: stream), else gid 0 (counted only). */
#ifndef IDS_EVENTS_H
#define IDS_EVENTS_H

#include <stdint.h>

enum ids_event {
	IDS_EV_FRAG_SHORT,        /* 123:3  a non-last fragment not a multiple of 8 bytes */
	IDS_EV_FRAG_OVERSIZE,     /* 123:4  a fragment ends after the datagram's end */
	IDS_EV_FRAG_ZERO,         /* 123:5  a fragment with no data */
	IDS_EV_FRAG_TOO_LARGE,    /* 123:7  a fragment ends past 65,535 bytes */
	IDS_EV_FRAG_OVERLAP,      /* 123:8  fragments overlap */
	IDS_EV_FRAG_MIN_TTL,      /* 123:11 a fragment's TTL is below the minimum: not used */
	IDS_EV_FRAG_MANY_OVERLAP, /* 123:12 a datagram's overlaps reached the limit */
	IDS_EV_FRAG_TINY,         /* 123:13 a non-last fragment at or below the tiny size */
	IDS_EV_FRAG_TOO_MANY,     /* a datagram's fragments reached the limit: dropped */
	IDS_EV_FRAG_TTL_DELTA,    /* a fragment's TTL far below its datagram's first: not used */
	IDS_EV_STREAM_OVERLAP,    /* 129:7  a direction's out-of-order segments reached the limit */
	IDS_EV_STREAM_CONFLICT,   /* retransmitted bytes differ from those still held */
	IDS_EV_STREAM_TTL,        /* a segment's TTL far below its direction's: not used */
	IDS_EV_N,
};

struct ids_event_info {
	const char *name; /* the counter's name in the statistics */
	uint16_t gid, sid;
	const char *msg;
};

extern const struct ids_event_info ids_event_info[IDS_EV_N];

#endif /* IDS_EVENTS_H */
