/* EAL start with the --no-huge fallback: see pp_eal.h. */
#include "pp_eal.h"
#include "pp_intr.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

static char **eal_argv;

uint64_t
pp_eal_unused_hugepage_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t bytes = 0;

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (fnmatch("*map_*", e->d_name, 0) != 0)
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY);
		struct stat st;
		if (fd < 0)
			continue;
		/* a live DPDK process holds a shared lock on each of its files */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0)
			bytes += (uint64_t)st.st_blocks * 512;
		close(fd); /* drops the lock */
	}
	if (d != NULL)
		closedir(d);
	return bytes;
}

uint64_t
pp_eal_free_hugepage_bytes(void)
{
	FILE *f = fopen("/proc/mounts", "r");
	uint64_t free_pages = 0, size_kb = 0, unused = 0;
	bool mounted = false;
	char line[512], dir[256], type[64];

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%*s %255s %63s", dir, type) == 2 &&
			strcmp(type, "hugetlbfs") == 0) {
			mounted = true;
			unused += pp_eal_unused_hugepage_bytes(dir);
		}
	if (f != NULL)
		fclose(f);
	if (!mounted)
		return 0;
	f = fopen("/proc/meminfo", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		sscanf(line, "HugePages_Free: %" SCNu64, &free_pages);
		sscanf(line, "Hugepagesize: %" SCNu64, &size_kb);
	}
	if (f != NULL)
		fclose(f);
	return free_pages * size_kb * 1024 + unused;
}

bool
pp_eal_has_arg(int argc, char **argv, const char *const *names)
{
	for (int i = 1; i < argc; i++)
		for (const char *const *n = names; *n != NULL; n++) {
			size_t l = strlen(*n);

			if (strncmp(argv[i], *n, l) == 0 &&
				(argv[i][l] == '\0' || argv[i][l] == '=' || (*n)[1] != '-'))
				return true;
		}
	return false;
}

int
pp_eal_start(int argc, char **argv, const char *const *extra, uint64_t need_mb, const char *who)
{
	static const char *const mem_opts[] = { "--no-huge", "-m", "--socket-mem", "--in-memory",
		NULL };
	static char mem_mb[32];
	int n_extra = 0, ne = 0, rc;

	while (extra != NULL && extra[n_extra] != NULL)
		n_extra++;
	const char *drivers = getenv("PIPEPLACE_DPDK_DRIVERS");
	struct stat sb;
	if (drivers != NULL && *drivers != '\0' &&
		(stat(drivers, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
		fprintf(stderr,
			"%s: PIPEPLACE_DPDK_DRIVERS=%s (from the environment): not a directory\n",
			who, drivers);
		return PP_EAL_USAGE;
	}
	free(eal_argv);
	eal_argv = calloc((size_t)argc + (size_t)n_extra + 6, sizeof(char *));
	if (eal_argv == NULL) {
		fprintf(stderr, "%s: out of memory\n", who);
		return -1;
	}
	for (int i = 0; i < argc; i++)
		eal_argv[ne++] = argv[i];
	for (int i = 0; i < n_extra; i++)
		eal_argv[ne++] = (char *)(uintptr_t)extra[i];
	if (drivers != NULL && *drivers != '\0') {
		eal_argv[ne++] = (char *)"-d";
		eal_argv[ne++] = (char *)(uintptr_t)drivers;
	}
	if (!pp_eal_has_arg(argc, argv, mem_opts) &&
		pp_eal_free_hugepage_bytes() < (need_mb << 20)) {
		snprintf(mem_mb, sizeof(mem_mb), "%" PRIu64, need_mb + 64);
		fprintf(stderr,
			"%s: fewer than %" PRIu64 " MiB of free hugepages (or no hugetlbfs mount): "
			"running with --no-huge -m %s\n",
			who, need_mb, mem_mb);
		eal_argv[ne++] = (char *)"--no-huge";
		eal_argv[ne++] = (char *)"-m";
		eal_argv[ne++] = mem_mb;
	}
	eal_argv[ne] = NULL;
	rc = rte_eal_init(ne, eal_argv);
	if (rc < 0) {
		fprintf(stderr,
			"%s: EAL initialisation failed: %s (EAL arguments and the messages above "
			"say why)\n",
			who, rte_strerror(rte_errno));
		free(eal_argv);
		eal_argv = NULL;
		return rte_errno == EINVAL ? PP_EAL_USAGE : -1;
	}
	return rc;
}

void
pp_eal_stop(void)
{
	/* rte_eal_cleanup unmaps DPDK memory under a live interrupt thread:
	 * park it first (pp_intr.h).  If it does not come within the time, go
	 * on: that is how DPDK itself leaves. */
	pp_intr_park(5);
	rte_eal_cleanup();
	free(eal_argv);
	eal_argv = NULL;
}
