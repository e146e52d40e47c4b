/* YAML profile reader (libyaml), producing the JSON tree of tg_profile.c. */
#ifndef TG_YAML_H
#define TG_YAML_H

#include <stddef.h>

#include <jansson.h>

/* The document as JSON (scalars as strings), or NULL with ERR set. */
json_t *tg_yaml_load(const char *path, char *err, size_t errlen);

#endif
