/* Hardware topology (hwloc): contexts and the sharing levels above them. */
#ifndef PP_TOPOLOGY_H
#define PP_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <hwloc.h>

struct pp_topology {
	hwloc_topology_t topo;
	unsigned n_contexts;  /* PUs */
	unsigned *contexts;   /* their OS indexes, ascending */
	unsigned max_context; /* largest OS index */
	bool synthetic;       /* from a description, not this machine */
	char source[256];     /* "this machine" or the synthetic description */
};

/* Load the topology of this machine (synthetic == NULL) or of an hwloc
 * synthetic description (e.g. "pack:1 core:8 group:2 pu:4").
 * 0, or -1 with a message in err. */
int pp_topology_load(struct pp_topology *t, const char *synthetic, char *err, size_t errlen);
void pp_topology_free(struct pp_topology *t);

bool pp_topology_has_context(const struct pp_topology *t, unsigned os_index);

/* Size in bytes of the data (or unified) cache of `level` (1, 2, 3...) above
 * context os_index; 0 when there is none. */
size_t pp_topology_cache_bytes(const struct pp_topology *t, unsigned os_index, unsigned level);
/* Largest data cache above the context (the last level); 0 when none. */
size_t pp_topology_llc_bytes(const struct pp_topology *t, unsigned os_index);
/* NUMA node of a context (0 when unknown). */
unsigned pp_topology_numa_node(const struct pp_topology *t, unsigned os_index);

/* Print, for a context, every object above it (core, caches, group,
 * package, NUMA) as "type#logical" so a reader sees what it shares. */
void pp_topology_print_context(const struct pp_topology *t, unsigned os_index, FILE *out);
/* One line summarising the levels: "1 package, 8 cores, 16 groups, 64 PUs". */
void pp_topology_print_summary(const struct pp_topology *t, FILE *out);

#endif
