/* Profiles: a JSON or YAML file of the same keys as the flags. */
#include "tg_profile.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "tg_keys.h"
#include "tg_yaml.h"

/* Scalars become the same text a flag would carry. */
static int
json_text(json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.17g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else
		return -1;
	return 0;
}

static int
load_stream(struct tg_stream_cfg *s, json_t *obj, const char *path, unsigned idx)
{
	const char *key;
	json_t *v;
	char text[2048], err[256];

	if (!json_is_object(obj)) {
		fprintf(stderr, "pp-tgen: profile %s: streams[%u]: expected an object\n", path,
			idx);
		return -1;
	}
	json_object_foreach(obj, key, v)
	{
		int r;

		if (!strcmp(key, "payload") && json_is_array(v)) {
			size_t i;
			json_t *e;

			s->payload_len = 0;
			json_array_foreach(v, i, e)
			{
				if (!json_is_string(e)) {
					fprintf(stderr,
						"pp-tgen: profile %s: streams[%u].payload[%zu]: "
						"expected a string\n",
						path, idx, i);
					return -1;
				}
				if (tg_set_stream_key(s, "payload", json_string_value(e), err,
					    sizeof(err)) < 0) {
					fprintf(stderr,
						"pp-tgen: profile %s: streams[%u].payload[%zu]: "
						"%s\n",
						path, idx, i, err);
					return -1;
				}
			}
			continue;
		}
		if (json_text(v, text, sizeof(text))) {
			fprintf(stderr,
				"pp-tgen: profile %s: streams[%u].%s: expected a string, number or "
				"boolean\n",
				path, idx, key);
			return -1;
		}
		if (!strcmp(key, "payload"))
			s->payload_len = 0;
		r = tg_set_stream_key(s, key, text, err, sizeof(err));
		if (r == 0) {
			fprintf(stderr, "pp-tgen: profile %s: streams[%u]: unknown key '%s'\n",
				path, idx, key);
			return -1;
		}
		if (r < 0) {
			fprintf(stderr, "pp-tgen: profile %s: streams[%u].%s: %s\n", path, idx, key,
				err);
			return -1;
		}
	}
	return 0;
}

static bool
is_yaml(const char *path)
{
	size_t n = strlen(path);

	return (n > 5 && !strcmp(path + n - 5, ".yaml")) ||
		(n > 4 && !strcmp(path + n - 4, ".yml"));
}

int
tg_profile_load(struct tg_cfg *c, const char *path)
{
	json_error_t jerr;
	json_t *root, *v;
	const char *key;
	char text[2048], err[256];
	int rc = -1;

	if (is_yaml(path)) {
		root = tg_yaml_load(path, err, sizeof(err));
		if (!root) {
			fprintf(stderr, "pp-tgen: profile %s: %s\n", path, err);
			return -1;
		}
	} else {
		root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
		if (!root) {
			fprintf(stderr, "pp-tgen: profile %s: line %d column %d: %s\n", path,
				jerr.line, jerr.column, jerr.text);
			return -1;
		}
	}
	if (!json_is_object(root)) {
		fprintf(stderr, "pp-tgen: profile %s: the top level must be an object\n", path);
		goto out;
	}
	json_object_foreach(root, key, v)
	{
		int r;

		if (!strcmp(key, "streams")) {
			size_t i;
			json_t *e;

			if (!json_is_array(v) || json_array_size(v) == 0 ||
				json_array_size(v) > TG_MAX_STREAMS) {
				fprintf(stderr,
					"pp-tgen: profile %s: streams: expected an array of 1..%d "
					"objects\n",
					path, TG_MAX_STREAMS);
				goto out;
			}
			c->n_streams = (unsigned)json_array_size(v);
			json_array_foreach(v, i, e)
			{
				tg_stream_defaults(&c->stream[i], (unsigned)i);
				if (load_stream(&c->stream[i], e, path, (unsigned)i))
					goto out;
			}
			continue;
		}
		if (!strcmp(key, "comment"))
			continue;
		if (json_text(v, text, sizeof(text))) {
			fprintf(stderr,
				"pp-tgen: profile %s: %s: expected a string, number or boolean\n",
				path, key);
			goto out;
		}
		r = tg_set_global_key(c, key, text, err, sizeof(err));
		if (r == 0) {
			fprintf(stderr, "pp-tgen: profile %s: unknown key '%s'\n", path, key);
			goto out;
		}
		if (r < 0) {
			fprintf(stderr, "pp-tgen: profile %s: %s: %s\n", path, key, err);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}
