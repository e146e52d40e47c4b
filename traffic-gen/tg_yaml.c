/* YAML profiles: the document becomes the same JSON tree a JSON profile
 * gives (every scalar a string, which is what the key setters read), so one
 * loader checks both. */
#include "tg_yaml.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef TG_HAVE_YAML
#include <yaml.h>

static json_t *
node_to_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
	json_t *out;

	if (!n || depth > 32)
		return NULL;
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return json_stringn((const char *)n->data.scalar.value, n->data.scalar.length);
	case YAML_SEQUENCE_NODE:
		out = json_array();
		for (yaml_node_item_t *i = n->data.sequence.items.start;
			i < n->data.sequence.items.top; i++) {
			json_t *v = node_to_json(doc, yaml_document_get_node(doc, *i), depth + 1);

			if (!v) {
				json_decref(out);
				return NULL;
			}
			json_array_append_new(out, v);
		}
		return out;
	case YAML_MAPPING_NODE:
		out = json_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
			p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			json_t *v;

			if (!k || k->type != YAML_SCALAR_NODE) {
				json_decref(out);
				return NULL;
			}
			v = node_to_json(doc, yaml_document_get_node(doc, p->value), depth + 1);
			if (!v) {
				json_decref(out);
				return NULL;
			}
			json_object_set_new(out, (const char *)k->data.scalar.value, v);
		}
		return out;
	default:
		return NULL;
	}
}

json_t *
tg_yaml_load(const char *path, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	json_t *root = NULL;
	FILE *f = fopen(path, "rb");

	if (!f) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return NULL;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "line %zu column %zu: %s", parser.problem_mark.line + 1,
			parser.problem_mark.column + 1,
			parser.problem ? parser.problem : "YAML error");
	} else {
		yaml_node_t *top = yaml_document_get_root_node(&doc);

		if (!top)
			snprintf(err, errlen, "empty document");
		else if (!(root = node_to_json(&doc, top, 0)))
			snprintf(err, errlen,
				"unsupported YAML (keys must be scalars; no aliases or deep "
				"nesting)");
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	fclose(f);
	return root;
}
#else
json_t *
tg_yaml_load(const char *path, char *err, size_t errlen)
{
	(void)path;
	snprintf(err, errlen, "this pp-tgen was built without libyaml: use a JSON profile");
	return NULL;
}
#endif
