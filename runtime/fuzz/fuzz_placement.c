/* libFuzzer target: placement parsing and validation from arbitrary bytes
 * must never crash, leak or read out of bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pp_placement.h"
#include "pp_topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pp_topology t2;
	static int loaded;
	char err[512];
	if (!loaded) {
		if (pp_topology_load(&t2, "pack:1 core:8 group:2 pu:4", err, sizeof(err)) != 0)
			abort();
		loaded = 1;
	}
	struct pp_placement pl;
	if (pp_placement_parse((const char *)data, size, "fuzz", &pl, err, sizeof(err)) == 0) {
		pp_placement_validate(&pl, "fuzz", "ipfwd", &t2, err, sizeof(err));
		unsigned ctx[64];
		pp_placement_contexts(&pl, ctx, 64);
		pp_placement_free(&pl);
	}
	return 0;
}
