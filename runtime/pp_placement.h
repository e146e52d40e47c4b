/* Placement: which context runs each task of each instance, and which port
 * queues each instance uses.  Format: runtime/PLACEMENT.md. */
#ifndef PP_PLACEMENT_H
#define PP_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pp_topology.h"

enum pp_role {
	PP_ROLE_R,
	PP_ROLE_P,
	PP_ROLE_T,
	PP_N_ROLES
};

#define PP_MAX_INSTANCES 1024
#define PP_MAX_QUEUE 1023 /* RTE_MAX_QUEUES_PER_PORT - 1 */
#define PP_MAX_PORT 31    /* RTE_MAX_ETHPORTS - 1 in this DPDK build */
#define PP_NAME_MAX 64

struct pp_port_queue {
	uint16_t port;
	uint16_t queue;
};

struct pp_instance_placement {
	struct pp_port_queue rx, tx;
	unsigned context[PP_N_ROLES]; /* hwloc PU OS index per role */
};

struct pp_placement {
	char app[PP_NAME_MAX];
	char variant[PP_NAME_MAX]; /* "" when absent */
	bool allow_colocate;
	unsigned n_instances;
	struct pp_instance_placement *instances;
};

extern const char *const pp_role_names[PP_N_ROLES]; /* "R", "P", "T" */

/* Parse a placement from a buffer (need not be NUL-terminated).  `origin`
 * names where it came from (file name) for messages.  Checks the form:
 * JSON syntax, keys, types, ranges, duplicated queues.
 * 0, or -1 with a message "origin: ..." in err. */
int pp_placement_parse(const char *buf, size_t len, const char *origin, struct pp_placement *out,
	char *err, size_t errlen);
int pp_placement_load_file(const char *path, struct pp_placement *out, char *err, size_t errlen);

/* Check a parsed placement against an app name and a topology: app name,
 * every context exists, no context used twice unless allow_colocate.
 * 0, or -1 with a message in err. */
int pp_placement_validate(const struct pp_placement *pl, const char *origin, const char *app_name,
	const struct pp_topology *topo, char *err, size_t errlen);

/* The distinct contexts used, ascending; returns their number. */
unsigned pp_placement_contexts(const struct pp_placement *pl, unsigned *out, unsigned max);

void pp_placement_free(struct pp_placement *pl);

#endif
