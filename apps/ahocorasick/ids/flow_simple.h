/* A flow table with runtime/flow's semantics (flow_table.h) and no DPDK,
 * for the tools, tests and fuzzers that run the engine (ids.h) on capture
 * files: a flow is its canonical key; a TCP flow ends at a RST or once
 * both sides sent a FIN (the packet that ends it still belongs to it); a
 * flow idle for the timeout ends; a full table tracks no new flow.  One
 * thread only, no lock. */
#ifndef IDS_FLOW_SIMPLE_H
#define IDS_FLOW_SIMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "ids.h"

struct flow_simple;

/* on_end: a flow ends (its state and key), before its record goes. */
typedef void (*flow_simple_end_fn)(void *ctx, void *state, const struct flow_key *k, uint64_t now);

struct flow_simple *flow_simple_new(uint32_t capacity, uint32_t state_bytes, uint64_t idle,
	flow_simple_end_fn on_end, void *ctx);
void flow_simple_free(struct flow_simple *f);
/* End every flow (at the end of the input). */
void flow_simple_end_all(struct flow_simple *f, uint64_t now);
uint32_t flow_simple_in_use(const struct flow_simple *f);

/* The engine's view of it. */
extern const struct ids_flow_ops flow_simple_ops;

#endif /* IDS_FLOW_SIMPLE_H */
