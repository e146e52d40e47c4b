/* hwloc-backed topology.  Contexts are PUs named by OS index, which is what
 * the placement JSON and the EAL --lcores mapping both use. */
#include "pp_topology.h"

#include <stdlib.h>
#include <string.h>

static int
cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

int
pp_topology_load(struct pp_topology *t, const char *synthetic, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	if (hwloc_topology_init(&t->topo) < 0) {
		snprintf(err, errlen, "hwloc: cannot initialise a topology");
		return -1;
	}
	if (synthetic != NULL) {
		if (hwloc_topology_set_synthetic(t->topo, synthetic) < 0) {
			snprintf(err, errlen,
				"--topology \"%s\": not a valid hwloc synthetic description "
				"(example: \"pack:1 core:8 group:2 pu:4\")",
				synthetic);
			hwloc_topology_destroy(t->topo);
			t->topo = NULL;
			return -1;
		}
		t->synthetic = true;
		snprintf(t->source, sizeof(t->source), "synthetic \"%s\"", synthetic);
	} else {
		snprintf(t->source, sizeof(t->source), "this machine");
	}
	/* Keep Group objects: on the T2 they are the pipelines. */
	hwloc_topology_set_type_filter(t->topo, HWLOC_OBJ_GROUP, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_load(t->topo) < 0) {
		snprintf(err, errlen, "hwloc: cannot load the topology of %s", t->source);
		hwloc_topology_destroy(t->topo);
		t->topo = NULL;
		return -1;
	}
	int n = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PU);
	if (n <= 0) {
		snprintf(err, errlen, "hwloc: %s has no processing units", t->source);
		pp_topology_free(t);
		return -1;
	}
	t->contexts = calloc((size_t)n, sizeof(*t->contexts));
	if (t->contexts == NULL) {
		snprintf(err, errlen, "out of memory");
		pp_topology_free(t);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PU, (unsigned)i);
		t->contexts[i] = pu->os_index;
	}
	t->n_contexts = (unsigned)n;
	qsort(t->contexts, t->n_contexts, sizeof(*t->contexts), cmp_unsigned);
	t->max_context = t->contexts[t->n_contexts - 1];
	return 0;
}

void
pp_topology_free(struct pp_topology *t)
{
	if (t->topo != NULL)
		hwloc_topology_destroy(t->topo);
	free(t->contexts);
	memset(t, 0, sizeof(*t));
}

bool
pp_topology_has_context(const struct pp_topology *t, unsigned os_index)
{
	return bsearch(&os_index, t->contexts, t->n_contexts, sizeof(*t->contexts), cmp_unsigned) !=
		NULL;
}

static hwloc_obj_t
pu_of(const struct pp_topology *t, unsigned os_index)
{
	return hwloc_get_pu_obj_by_os_index(t->topo, os_index);
}

size_t
pp_topology_cache_bytes(const struct pp_topology *t, unsigned os_index, unsigned level)
{
	for (hwloc_obj_t o = pu_of(t, os_index); o != NULL; o = o->parent) {
		if (hwloc_obj_type_is_dcache(o->type) && o->attr->cache.depth == level &&
			o->attr->cache.type != HWLOC_OBJ_CACHE_INSTRUCTION)
			return (size_t)o->attr->cache.size;
	}
	return 0;
}

size_t
pp_topology_llc_bytes(const struct pp_topology *t, unsigned os_index)
{
	size_t best = 0;
	unsigned best_depth = 0;
	for (hwloc_obj_t o = pu_of(t, os_index); o != NULL; o = o->parent) {
		if (hwloc_obj_type_is_dcache(o->type) && o->attr->cache.depth > best_depth) {
			best_depth = o->attr->cache.depth;
			best = (size_t)o->attr->cache.size;
		}
	}
	return best;
}

unsigned
pp_topology_numa_node(const struct pp_topology *t, unsigned os_index)
{
	hwloc_obj_t pu = pu_of(t, os_index);
	if (pu == NULL)
		return 0;
	hwloc_obj_t numa = NULL;
	for (hwloc_obj_t o = pu; o != NULL && numa == NULL; o = o->parent) {
		if (o->memory_arity > 0)
			numa = o->memory_first_child;
	}
	return numa != NULL && numa->os_index != HWLOC_UNKNOWN_INDEX ? numa->os_index : 0;
}

void
pp_topology_print_context(const struct pp_topology *t, unsigned os_index, FILE *out)
{
	hwloc_obj_t pu = pu_of(t, os_index);
	fprintf(out, "PU#%u", os_index);
	if (pu == NULL)
		return;
	for (hwloc_obj_t o = pu->parent; o != NULL && o->type != HWLOC_OBJ_MACHINE; o = o->parent) {
		char type[64];
		hwloc_obj_type_snprintf(type, sizeof(type), o, 0);
		fprintf(out, " < %s#%u", type, o->logical_index);
	}
	/* NUMA nodes hang off the tree as memory children, not as parents. */
	fprintf(out, ", NUMA node %u", pp_topology_numa_node(t, os_index));
}

void
pp_topology_print_summary(const struct pp_topology *t, FILE *out)
{
	int depth = hwloc_topology_get_depth(t->topo);
	fprintf(out, "topology of %s:", t->source);
	for (int d = 1; d < depth; d++) {
		hwloc_obj_t o = hwloc_get_obj_by_depth(t->topo, d, 0);
		char type[64];
		hwloc_obj_type_snprintf(type, sizeof(type), o, 0);
		fprintf(out, "%s %d x %s", d > 1 ? "," : "", hwloc_get_nbobjs_by_depth(t->topo, d),
			type);
	}
	fputc('\n', out);
}
