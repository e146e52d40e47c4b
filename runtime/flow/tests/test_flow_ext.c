/* The flow table's extension area and visitors (flow_table_create_ext,
 * flow_table_update_visit, flow_table_visit), which apps/ahocorasick keeps
 * its per-flow state in: the area is zeroed when a record starts a flow,
 * the visitor sees the packet's record (created or not) before a TCP end
 * removes it, a flow found by key is visited without a packet accounted,
 * and a missing one is not.  apps/stateful's tests cover the rest. */
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>

#include "flow_hash.h"
#include "flow_key.h"
#include "flow_table.h"

static int failures;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                              \
		}                                                                                \
	} while (0)

struct seen {
	int calls;
	bool created;
	uint8_t state;
	uint64_t ext0;  /* the area's first word when visited */
	uint64_t write; /* stored into it, if not 0 */
};

static void
visit(struct flow_record *r, void *ext, bool created, void *arg)
{
	struct seen *s = arg;
	s->calls++;
	s->created = created;
	s->state = r->state;
	memcpy(&s->ext0, ext, 8);
	if (s->write)
		memcpy(ext, &s->write, 8);
}

/* An end hook makes the table end TCP flows at once (as ahocorasick sets). */
static void
ended(const struct flow_record *r, enum flow_end_reason why, struct flow_counters *c, void *arg)
{
	(void)r;
	(void)why;
	(void)c;
	(void)arg;
}

static struct flow_pkt
pkt(uint16_t sport, uint8_t flags)
{
	static const uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };
	struct flow_pkt p;
	flow_pkt_from_ipv4(&p, a, b, 6, sport, 80, 0, flags);
	return p;
}

int
main(int argc, char **argv)
{
	char *eal_argv[] = { argv[0], "--no-shconf", "--no-huge", "-m", "128", "--no-pci",
		"--no-telemetry", "-l", "0", "--log-level=error", NULL };
	struct flow_hasher h;
	struct flow_counters c = { 0 };
	char err[128];

	(void)argc;
	if (rte_eal_init(RTE_DIM(eal_argv) - 1, eal_argv) < 0 ||
		flow_hasher_init(&h, "keyed", NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "set-up failed\n");
		return 2;
	}
	CHECK(flow_table_create_ext(16, 0, &h, 0, 4097) == NULL); /* area too large */
	struct flow_table *t = flow_table_create_ext(16, 0, &h, 0, 24);
	CHECK(t != NULL && t->ext_size == 24);
	if (t == NULL)
		return 1;
	flow_table_set_end_hook(t, 0, ended, NULL);

	struct flow_pkt p = pkt(1000, TCP_FLAG_SYN);
	uint32_t hash = flow_hash(&t->hasher, &p.key);
	struct seen s = { .write = 0x1234 };
	CHECK(flow_table_update_visit(t, &p, hash, 60, 1, &c, visit, &s) == FLOW_UPDATE_CREATED);
	CHECK(s.calls == 1 && s.created && s.ext0 == 0);
	s = (struct seen){ 0 };
	CHECK(flow_table_update_visit(t, &p, hash, 60, 2, &c, visit, &s) == FLOW_UPDATE_HIT);
	CHECK(s.calls == 1 && !s.created && s.ext0 == 0x1234);

	/* found by key: visited, nothing accounted */
	uint64_t lookups = c.lookups;
	s = (struct seen){ .write = 0x5678 };
	CHECK(flow_table_visit(t, &p.key, hash, visit, &s) && s.calls == 1 && s.ext0 == 0x1234);
	CHECK(c.lookups == lookups);
	struct flow_pkt other = pkt(2000, TCP_FLAG_SYN);
	s = (struct seen){ 0 };
	CHECK(!flow_table_visit(t, &other.key, flow_hash(&t->hasher, &other.key), visit, &s) &&
		s.calls == 0);

	/* a RST: the visitor sees the record closed, then it is gone, and the
	 * 5-tuple's next packet starts a new flow with a zeroed area */
	struct flow_pkt rst = pkt(1000, TCP_FLAG_RST);
	s = (struct seen){ 0 };
	CHECK(flow_table_update_visit(t, &rst, hash, 60, 3, &c, visit, &s) == FLOW_UPDATE_HIT);
	CHECK(s.calls == 1 && s.ext0 == 0x5678 && s.state == FLOW_STATE_CLOSED);
	CHECK(!flow_table_visit(t, &p.key, hash, visit, &s));
	s = (struct seen){ 0 };
	CHECK(flow_table_update_visit(t, &p, hash, 60, 4, &c, visit, &s) == FLOW_UPDATE_CREATED);
	CHECK(s.created && s.ext0 == 0);

	flow_table_free(t);
	rte_eal_cleanup();
	if (failures)
		fprintf(stderr, "test_flow_ext: %d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
