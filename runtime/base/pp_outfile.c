/* A run that measures for minutes must not end in a path it cannot write:
 * the programs check their output files at start-up. */
#include "pp_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
pp_outfile_check(const char *path, char *err, size_t errlen)
{
	struct stat st;
	bool existed = lstat(path, &st) == 0;
	if (existed && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 0; /* a link too: removing what the check created would remove the link */
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open for writing: %s", strerror(errno));
		return -1;
	}
	close(fd);
	if (!existed)
		unlink(path);
	return 0;
}
