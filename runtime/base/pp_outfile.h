/* Output files named on a command line, checked before anything runs. */
#ifndef PP_OUTFILE_H
#define PP_OUTFILE_H

#include <stddef.h>

/* 0 when path can be opened for writing (a file created for the check is
 * removed again; a FIFO, a device or a symbolic link is not opened, since
 * that could block, consume, or leave a file behind), -1 with errno's text
 * in err otherwise. */
int pp_outfile_check(const char *path, char *err, size_t errlen);

#endif
