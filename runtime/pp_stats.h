/* Statistics JSON (contract 2, runtime/PLACEMENT.md lists the fields). */
#ifndef PP_STATS_H
#define PP_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "pp_app.h"
#include "pp_placement.h"

struct pp_instance_rt;

/* Build the statistics of a run.  tx0/b0 and tx1/b1: transmitted packets and
 * bytes per instance at the start and end of the measurement window (NULL:
 * 0 and now).  in_progress: a snapshot taken while tasks run (SIGUSR1); the
 * accounting check is then not meaningful and "accounting_ok" is null. */
json_t *pp_stats_build(const struct pp_app *app, void *app_state, void *const *task_states,
	const struct pp_placement *pl, const struct pp_instance_rt *inst, unsigned n,
	double window_s, const uint64_t *tx0, const uint64_t *b0, const uint64_t *tx1,
	const uint64_t *b1, bool in_progress);

/* Write one JSON document followed by a newline to path (NULL or "-":
 * stdout).  0, or -1 with a message on stderr; a path that cannot be opened
 * sends the document to stdout instead. */
int pp_stats_write(const json_t *stats, const char *path);

/* Before a run: 0 when --stats PATH can be written (a file it creates for
 * the check is removed again), -1 with a message naming it otherwise, so a
 * measurement never ends in a path that cannot take it. */
int pp_stats_check_path(const char *path);

#endif
