/* Rules mode's alert log: each P task enqueues a fixed-size record per
 * alert on its own single-producer ring (a full ring counts the alert as
 * dropped, never blocks); one plain pthread off the task contexts formats
 * them as JSON lines in the spirit of Suricata's eve.json and writes them
 * to --alert-log FILE. */
#ifndef AC_ALERT_LOG_H
#define AC_ALERT_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ring.h>

#include "ids.h"
#include "rule_verify.h"

#define AC_ALERT_RING 8192 /* records per task ring */
#define AC_ALERT_MAX_TASKS 1024

/* 64 bytes: the engine's alert (ids.h), when, and the action taken. */
struct ac_alert_rec {
	struct ids_alert a;
	uint64_t tsc;
	uint8_t action; /* 0 allowed, 1 blocked (--on-alert drop) */
};

struct ac_alert_log {
	const struct ac_verifier *v;
	FILE *f;
	const char *path;
	struct rte_ring *rings[AC_ALERT_MAX_TASKS]; /* atomically published */
	unsigned n_rings;
	uint64_t tsc0, hz;
	int64_t ns0; /* CLOCK_REALTIME at tsc0 */
	pthread_t thread;
	bool running;
	int stop;            /* atomic */
	uint64_t written;    /* atomic */
	uint64_t write_errs; /* atomic */
	int write_errno;     /* the writer's first failure (0: none) */
};

/* Open the file and start the writer.  0, or -1 (error printed). */
int ac_alert_log_start(struct ac_alert_log *l, const char *path, const struct ac_verifier *v);
/* A ring for task `instance` (SP/SC); NULL on failure (error printed). */
struct rte_ring *ac_alert_log_ring(struct ac_alert_log *l, unsigned instance, int socket);
/* Wait (up to timeout_ms) until every ring is empty, then flush. */
void ac_alert_log_drain(struct ac_alert_log *l, unsigned timeout_ms);
/* Drain, stop the writer, close the file, free the rings.  0, or -1 when
 * the log is incomplete: a write or the close failed (error printed). */
int ac_alert_log_stop(struct ac_alert_log *l);

#endif /* AC_ALERT_LOG_H */
