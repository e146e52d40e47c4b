/* Placement JSON parsing and validation.  Every refusal names the origin,
 * the instance and task concerned, and the offending value, because a
 * placement is usually written by a tool and read by a person only when it
 * is refused. */
#include "pp_placement.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

const char *const pp_role_names[PP_N_ROLES] = { "R", "P", "T" };

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Render a JSON value briefly for messages. */
static void
show(const json_t *v, char *buf, size_t len)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	if (s == NULL) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%.60s%s", s, strlen(s) > 60 ? "..." : "");
	free(s);
}

static int
get_uint(const json_t *v, const char *origin, const char *where, const char *what, json_int_t max,
	unsigned *out, char *err, size_t errlen)
{
	char s[80];
	if (v == NULL)
		return fail(err, errlen, "%s: %s: \"%s\" is missing", origin, where, what);
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max) {
		show(v, s, sizeof(s));
		return fail(err, errlen,
			"%s: %s: \"%s\" is %s, expected an integer 0..%" JSON_INTEGER_FORMAT,
			origin, where, what, s, max);
	}
	*out = (unsigned)json_integer_value(v);
	return 0;
}

static int
only_keys(const json_t *obj, const char *const *keys, const char *origin, const char *where,
	char *err, size_t errlen)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v)
	{
		bool known = false;
		for (const char *const *p = keys; *p != NULL; p++)
			known = known || strcmp(k, *p) == 0;
		if (!known) {
			char list[128] = "";
			for (const char *const *p = keys; *p != NULL; p++) {
				strncat(list, p == keys ? "" : ", ",
					sizeof(list) - strlen(list) - 1);
				strncat(list, *p, sizeof(list) - strlen(list) - 1);
			}
			return fail(err, errlen, "%s: %s: unknown key \"%s\" (known: %s)", origin,
				where, k, list);
		}
	}
	return 0;
}

static int
parse_port_queue(const json_t *v, const char *origin, const char *where, struct pp_port_queue *pq,
	char *err, size_t errlen)
{
	static const char *const keys[] = { "port", "queue", NULL };
	unsigned port, queue;
	char s[80];
	if (!json_is_object(v)) {
		show(v, s, sizeof(s));
		return fail(err, errlen, "%s: %s is %s, expected {\"port\": N, \"queue\": N}",
			origin, where, s);
	}
	if (only_keys(v, keys, origin, where, err, errlen) < 0 ||
		get_uint(json_object_get(v, "port"), origin, where, "port", PP_MAX_PORT, &port, err,
			errlen) < 0 ||
		get_uint(json_object_get(v, "queue"), origin, where, "queue", PP_MAX_QUEUE, &queue,
			err, errlen) < 0)
		return -1;
	pq->port = (uint16_t)port;
	pq->queue = (uint16_t)queue;
	return 0;
}

static int
parse_instance(const json_t *v, unsigned idx, const char *origin, struct pp_instance_placement *ip,
	char *err, size_t errlen)
{
	static const char *const keys[] = { "rx", "tx", "tasks", NULL };
	char where[64], s[80];
	snprintf(where, sizeof(where), "instance %u", idx);
	if (!json_is_object(v)) {
		show(v, s, sizeof(s));
		return fail(err, errlen, "%s: %s is %s, expected an object", origin, where, s);
	}
	if (only_keys(v, keys, origin, where, err, errlen) < 0)
		return -1;
	char w[80];
	snprintf(w, sizeof(w), "%s rx", where);
	json_t *rx = json_object_get(v, "rx");
	if (rx == NULL)
		return fail(err, errlen, "%s: %s: \"rx\" is missing", origin, where);
	if (parse_port_queue(rx, origin, w, &ip->rx, err, errlen) < 0)
		return -1;
	snprintf(w, sizeof(w), "%s tx", where);
	json_t *tx = json_object_get(v, "tx");
	if (tx == NULL)
		return fail(err, errlen, "%s: %s: \"tx\" is missing", origin, where);
	if (parse_port_queue(tx, origin, w, &ip->tx, err, errlen) < 0)
		return -1;

	json_t *tasks = json_object_get(v, "tasks");
	if (tasks == NULL)
		return fail(err, errlen, "%s: %s: \"tasks\" is missing", origin, where);
	if (!json_is_object(tasks)) {
		show(tasks, s, sizeof(s));
		return fail(err, errlen,
			"%s: %s: \"tasks\" is %s, expected {\"R\": ctx, \"P\": ctx, \"T\": ctx}",
			origin, where, s);
	}
	const char *k;
	json_t *c;
	json_object_foreach(tasks, k, c)
	{
		bool known = false;
		for (int r = 0; r < PP_N_ROLES; r++)
			known = known || strcmp(k, pp_role_names[r]) == 0;
		if (!known)
			return fail(err, errlen,
				"%s: %s: unknown task role \"%s\" (roles are R, P, T)", origin,
				where, k);
	}
	for (int r = 0; r < PP_N_ROLES; r++) {
		c = json_object_get(tasks, pp_role_names[r]);
		snprintf(w, sizeof(w), "%s task %s", where, pp_role_names[r]);
		if (c == NULL)
			return fail(err, errlen,
				"%s: %s is missing (every instance needs R, P and T)", origin, w);
		if (!json_is_integer(c) || json_integer_value(c) < 0 ||
			json_integer_value(c) > 0xFFFFFFF) {
			show(c, s, sizeof(s));
			return fail(err, errlen,
				"%s: %s: context %s is not a context number (hwloc PU OS index)",
				origin, w, s);
		}
		ip->context[r] = (unsigned)json_integer_value(c);
	}
	return 0;
}

static int
check_queues_unique(const struct pp_placement *pl, const char *origin, char *err, size_t errlen)
{
	for (unsigned i = 0; i < pl->n_instances; i++) {
		for (unsigned j = 0; j < i; j++) {
			const struct pp_instance_placement *a = &pl->instances[i],
							   *b = &pl->instances[j];
			if (a->rx.port == b->rx.port && a->rx.queue == b->rx.queue)
				return fail(err, errlen,
					"%s: instance %u rx: port %u queue %u is already the rx "
					"queue of instance %u (an rx queue has one reader)",
					origin, i, a->rx.port, a->rx.queue, j);
			if (a->tx.port == b->tx.port && a->tx.queue == b->tx.queue)
				return fail(err, errlen,
					"%s: instance %u tx: port %u queue %u is already the tx "
					"queue of instance %u (a tx queue has one writer)",
					origin, i, a->tx.port, a->tx.queue, j);
		}
	}
	return 0;
}

int
pp_placement_parse(const char *buf, size_t len, const char *origin, struct pp_placement *out,
	char *err, size_t errlen)
{
	static const char *const keys[] = { "app", "variant", "allow_colocate", "instances", NULL };
	json_error_t jerr;
	char s[80];
	memset(out, 0, sizeof(*out));
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return fail(err, errlen, "%s: line %d column %d: malformed JSON: %s", origin,
			jerr.line, jerr.column, jerr.text);
	int rc = -1;
	if (!json_is_object(root)) {
		show(root, s, sizeof(s));
		fail(err, errlen, "%s: top level is %s, expected an object", origin, s);
		goto out;
	}
	if (only_keys(root, keys, origin, "top level", err, errlen) < 0)
		goto out;
	json_t *app = json_object_get(root, "app");
	if (app == NULL) {
		fail(err, errlen, "%s: \"app\" is missing", origin);
		goto out;
	}
	if (!json_is_string(app) || json_string_length(app) == 0 ||
		json_string_length(app) >= PP_NAME_MAX) {
		show(app, s, sizeof(s));
		fail(err, errlen, "%s: \"app\" is %s, expected an app name", origin, s);
		goto out;
	}
	snprintf(out->app, sizeof(out->app), "%s", json_string_value(app));
	json_t *variant = json_object_get(root, "variant");
	if (variant != NULL) {
		if (!json_is_string(variant) || json_string_length(variant) >= PP_NAME_MAX) {
			show(variant, s, sizeof(s));
			fail(err, errlen, "%s: \"variant\" is %s, expected a string", origin, s);
			goto out;
		}
		snprintf(out->variant, sizeof(out->variant), "%s", json_string_value(variant));
	}
	json_t *coloc = json_object_get(root, "allow_colocate");
	if (coloc != NULL) {
		if (!json_is_boolean(coloc)) {
			show(coloc, s, sizeof(s));
			fail(err, errlen, "%s: \"allow_colocate\" is %s, expected true or false",
				origin, s);
			goto out;
		}
		out->allow_colocate = json_is_true(coloc);
	}
	json_t *inst = json_object_get(root, "instances");
	if (inst == NULL) {
		fail(err, errlen, "%s: \"instances\" is missing", origin);
		goto out;
	}
	if (!json_is_array(inst) || json_array_size(inst) == 0 ||
		json_array_size(inst) > PP_MAX_INSTANCES) {
		show(inst, s, sizeof(s));
		fail(err, errlen, "%s: \"instances\" is %s, expected an array of 1..%d instances",
			origin, s, PP_MAX_INSTANCES);
		goto out;
	}
	out->n_instances = (unsigned)json_array_size(inst);
	out->instances = calloc(out->n_instances, sizeof(*out->instances));
	if (out->instances == NULL) {
		fail(err, errlen, "%s: out of memory", origin);
		goto out;
	}
	for (unsigned i = 0; i < out->n_instances; i++)
		if (parse_instance(json_array_get(inst, i), i, origin, &out->instances[i], err,
			    errlen) < 0)
			goto out;
	if (check_queues_unique(out, origin, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	json_decref(root);
	if (rc < 0)
		pp_placement_free(out);
	return rc;
}

int
pp_placement_load_file(const char *path, struct pp_placement *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return fail(err, errlen, "%s: cannot open placement: %s", path, strerror(errno));
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	size_t n;
	while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	bool bad = ferror(f) != 0;
	fclose(f);
	if (buf == NULL || bad) {
		free(buf);
		return fail(err, errlen, "%s: cannot read placement", path);
	}
	int rc = pp_placement_parse(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}

int
pp_placement_validate(const struct pp_placement *pl, const char *origin, const char *app_name,
	const struct pp_topology *topo, char *err, size_t errlen)
{
	if (strcmp(pl->app, app_name) != 0)
		return fail(err, errlen, "%s: \"app\" is \"%s\" but this binary is \"%s\"", origin,
			pl->app, app_name);
	for (unsigned i = 0; i < pl->n_instances; i++) {
		for (int r = 0; r < PP_N_ROLES; r++) {
			unsigned c = pl->instances[i].context[r];
			if (!pp_topology_has_context(topo, c))
				return fail(err, errlen,
					"%s: instance %u task %s: context %u does not exist in the "
					"topology of %s (%u contexts, largest %u)",
					origin, i, pp_role_names[r], c, topo->source,
					topo->n_contexts, topo->max_context);
		}
	}
	if (pl->allow_colocate)
		return 0;
	for (unsigned i = 0; i < pl->n_instances; i++)
		for (int r = 0; r < PP_N_ROLES; r++)
			for (unsigned j = 0; j <= i; j++)
				for (int q = 0; q < (j == i ? r : PP_N_ROLES); q++)
					if (pl->instances[i].context[r] ==
						pl->instances[j].context[q])
						return fail(err, errlen,
							"%s: instance %u task %s: context %u is "
							"already used by instance %u task %s (set "
							"\"allow_colocate\": true to share "
							"contexts)",
							origin, i, pp_role_names[r],
							pl->instances[i].context[r], j,
							pp_role_names[q]);
	return 0;
}

unsigned
pp_placement_contexts(const struct pp_placement *pl, unsigned *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < pl->n_instances; i++)
		for (int r = 0; r < PP_N_ROLES; r++) {
			unsigned c = pl->instances[i].context[r], k = 0;
			while (k < n && out[k] < c)
				k++;
			if (k < n && out[k] == c)
				continue;
			if (n == max)
				return n;
			memmove(&out[k + 1], &out[k], (n - k) * sizeof(*out));
			out[k] = c;
			n++;
		}
	return n;
}

void
pp_placement_free(struct pp_placement *pl)
{
	free(pl->instances);
	pl->instances = NULL;
	pl->n_instances = 0;
}
