/* Option values, shared by the runtime, the apps and pp-tgen.
 *
 * The *_value functions only say yes or no (the caller names the option and
 * its source in its own message); pp_parse_u64 and pp_parse_seconds print
 * "OPT 'VAL': expected ..." on stderr themselves. */
#ifndef PP_PARSE_H
#define PP_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Every program's exit status (README.md, "Exit status"): 0 done, 1 a
 * failure while running, PP_EXIT_USAGE what the command line (or a file or
 * value it names) gets wrong. */
#define PP_EXIT_USAGE 2

/* A decimal integer in lo..hi: digits only (no sign, no blanks). 0 or -1. */
int pp_parse_u64_value(const char *text, uint64_t lo, uint64_t hi, uint64_t *out);

/* A finite number in lo..hi (strtod syntax, nothing after it). 0 or -1. */
int pp_parse_double_value(const char *text, double lo, double hi, double *out);

/* true/1/yes or false/0/no. 0 or -1. */
int pp_parse_bool_value(const char *text, bool *out);

/* As pp_parse_u64_value; on error prints a message naming opt and val. */
int pp_parse_u64(const char *opt, const char *val, uint64_t min, uint64_t max, uint64_t *out);

/* Seconds in 0..max; on error prints a message naming opt and val. */
int pp_parse_seconds(const char *opt, const char *val, double max, double *out);

#endif
