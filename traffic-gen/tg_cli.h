/* pp-tgen's command line (after the EAL's "--") and its usage text. */
#ifndef TG_CLI_H
#define TG_CLI_H

#include "tg_config.h"

/* Applies "--key value" flags; 0, 1 (help printed) or -1. */
int tg_cli_parse(struct tg_cfg *c, int argc, char **argv);

#endif
