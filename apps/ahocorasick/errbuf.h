/* Error text for the caller's buffer: the engines and the rule parser
 * report what went wrong, with the value, into a buffer the caller owns. */
#ifndef AC_ERRBUF_H
#define AC_ERRBUF_H

#include <stddef.h>

/* printf into err[errlen]; nothing when err is NULL or errlen is 0. */
void ac_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Printable rendering of (part of) the n bytes at s for an error message:
 * other bytes as \xHH, "..." when it does not fit; returns buf. */
const char *ac_excerpt(const char *s, size_t n, char *buf, size_t size);

#endif /* AC_ERRBUF_H */
