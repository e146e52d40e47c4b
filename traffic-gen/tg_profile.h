/* Profiles: a JSON (or, built with libyaml, YAML) file of the same keys as
 * the flags. */
#ifndef TG_PROFILE_H
#define TG_PROFILE_H

#include "tg_config.h"

/* Loads a profile; 0 or -1 after printing an error naming the file and the
 * field. */
int tg_profile_load(struct tg_cfg *c, const char *path);

#endif
