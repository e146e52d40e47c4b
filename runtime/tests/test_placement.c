/* Placement parsing and validation against the UltraSPARC T2 synthetic
 * topology (64 contexts): good files are accepted with the right contents,
 * each kind of bad file is refused with its own message naming the file,
 * the task and the value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp_placement.h"
#include "pp_topology.h"

#define T2 "pack:1 core:8 group:2 pu:4"

static int failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			failures++;                                          \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
		}                                                            \
	} while (0)

static int
load(const char *dir, const char *name, const struct pp_topology *t, struct pp_placement *pl,
	char *err, size_t errlen)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int rc = pp_placement_load_file(path, pl, err, errlen);
	if (rc == 0) {
		rc = pp_placement_validate(pl, path, "ipfwd", t, err, errlen);
		if (rc != 0)
			pp_placement_free(pl); /* callers keep only accepted placements */
	}
	return rc;
}

struct bad_case {
	const char *file;
	const char *expect[3]; /* substrings of the message */
};

static const struct bad_case bad[] = {
	{ "bad_unknown_context.json", { "instance 0 task P", "context 64 does not exist", NULL } },
	{ "bad_context_twice.json",
		{ "instance 1 task R", "context 2 is already used by instance 0 task T",
			"allow_colocate" } },
	{ "bad_missing_task.json", { "instance 0 task T is missing", NULL, NULL } },
	{ "bad_unknown_role.json", { "instance 0", "unknown task role \"X\"", NULL } },
	{ "bad_instance_count.json", { "\"instances\" is []", "1..1024 instances", NULL } },
	{ "bad_port.json", { "instance 0 rx", "\"port\" is 99", NULL } },
	{ "bad_queue.json", { "instance 0 tx", "\"queue\" is -1", NULL } },
	{ "bad_duplicate_rx_queue.json",
		{ "instance 1 rx", "port 0 queue 0 is already the rx queue of instance 0", NULL } },
	{ "bad_app_mismatch.json",
		{ "\"app\" is \"stateful\" but this binary is \"ipfwd\"", NULL, NULL } },
	{ "bad_malformed.json", { "line 3 column", "malformed JSON", NULL } },
	{ "bad_context_type.json",
		{ "instance 0 task P", "context \"three\" is not a context number", NULL } },
	{ "bad_unknown_key.json", { "unknown key \"colocate\"", NULL, NULL } },
	{ "does_not_exist.json", { "cannot open placement", NULL, NULL } },
};

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	char err[512];
	struct pp_topology t2;
	if (pp_topology_load(&t2, T2, err, sizeof(err)) != 0) {
		fprintf(stderr, "cannot load the T2 topology: %s\n", err);
		return 1;
	}
	CHECK(t2.n_contexts == 64, "T2 has %u contexts, expected 64", t2.n_contexts);

	struct pp_placement pl;
	int rc = load(dir, "good_one_instance.json", &t2, &pl, err, sizeof(err));
	CHECK(rc == 0, "good_one_instance refused: %s", err);
	if (rc == 0) {
		CHECK(pl.n_instances == 1 && strcmp(pl.variant, "l1") == 0 && !pl.allow_colocate,
			"good_one_instance: wrong header");
		CHECK(pl.instances[0].context[PP_ROLE_R] == 2 &&
				pl.instances[0].context[PP_ROLE_P] == 3 &&
				pl.instances[0].context[PP_ROLE_T] == 4,
			"good_one_instance: wrong contexts");
		CHECK(pl.instances[0].rx.port == 0 && pl.instances[0].tx.port == 1, "wrong ports");
		unsigned ctx[8];
		CHECK(pp_placement_contexts(&pl, ctx, 8) == 3 && ctx[0] == 2 && ctx[2] == 4,
			"contexts list");
		pp_placement_free(&pl);
	}
	rc = load(dir, "good_t2_eight_instances.json", &t2, &pl, err, sizeof(err));
	CHECK(rc == 0, "good_t2_eight_instances refused: %s", err);
	if (rc == 0) {
		CHECK(pl.n_instances == 8 && pl.instances[7].context[PP_ROLE_T] == 23 &&
				pl.instances[7].rx.queue == 7,
			"eight instances: wrong contents");
		pp_placement_free(&pl);
	}
	rc = load(dir, "good_colocate.json", &t2, &pl, err, sizeof(err));
	CHECK(rc == 0 && pl.allow_colocate, "good_colocate refused: %s", err);
	if (rc == 0) {
		unsigned ctx[8];
		CHECK(pp_placement_contexts(&pl, ctx, 8) == 2, "colocate: expected 2 contexts");
		pp_placement_free(&pl);
	}

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		rc = load(dir, bad[i].file, &t2, &pl, err, sizeof(err));
		CHECK(rc != 0, "%s accepted", bad[i].file);
		if (rc == 0) {
			pp_placement_free(&pl);
			continue;
		}
		CHECK(strstr(err, bad[i].file) != NULL, "%s: message does not name the file: %s",
			bad[i].file, err);
		for (int k = 0; k < 3 && bad[i].expect[k] != NULL; k++)
			CHECK(strstr(err, bad[i].expect[k]) != NULL, "%s: message lacks \"%s\": %s",
				bad[i].file, bad[i].expect[k], err);
		printf("ok %s: %s\n", bad[i].file, err);
	}
	/* Every message differs: one kind of error, one message. */
	char seen[sizeof(bad) / sizeof(bad[0])][512];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		load(dir, bad[i].file, &t2, &pl, seen[i], sizeof(seen[i]));
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(seen[i], seen[j]) != 0, "same message for %s and %s",
				bad[i].file, bad[j].file);
	}

	/* From a buffer, not NUL-terminated, with garbage after it. */
	const char buf[] =
		"{\"app\":\"ipfwd\",\"instances\":[{\"rx\":{\"port\":0,\"queue\":0},"
		"\"tx\":{\"port\":0,\"queue\":0},\"tasks\":{\"R\":0,\"P\":1,\"T\":63}}]}XXXX";
	rc = pp_placement_parse(buf, sizeof(buf) - 5, "buffer", &pl, err, sizeof(err));
	CHECK(rc == 0, "buffer refused: %s", err);
	if (rc == 0) {
		CHECK(pp_placement_validate(&pl, "buffer", "ipfwd", &t2, err, sizeof(err)) == 0,
			"buffer: %s", err);
		pp_placement_free(&pl);
	}
	/* A machine with fewer contexts refuses what the T2 accepts. */
	struct pp_topology small;
	if (pp_topology_load(&small, "pack:1 core:2 pu:1", err, sizeof(err)) == 0) {
		rc = load(dir, "good_one_instance.json", &small, &pl, err, sizeof(err));
		CHECK(rc != 0 && strstr(err, "instance 0 task R: context 2 does not exist") != NULL,
			"2-context machine accepted contexts 2-4: %s", err);
		pp_topology_free(&small);
	} else {
		CHECK(0, "cannot load a 2-context topology: %s", err);
	}
	/* Bad synthetic descriptions are refused with the description. */
	CHECK(pp_topology_load(&small, "pack:1 nonsense:3", err, sizeof(err)) != 0 &&
			strstr(err, "nonsense") != NULL,
		"bad synthetic description accepted: %s", err);

	/* Topology facts of the T2: 8 cores, groups of 4 PUs. */
	pp_topology_free(&t2);
	printf("%s\n", failures ? "FAILED" : "all placement checks passed");
	return failures ? 1 : 0;
}
