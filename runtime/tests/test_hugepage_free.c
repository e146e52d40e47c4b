/* pp_eal_unused_hugepage_bytes: the hugepage files no process holds count,
 * the ones a live process locks and files of other names do not.  A plain
 * directory stands in for the hugetlbfs mount (flock works on any). */
#include "pp_eal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_BYTES (256 * 1024)

static int failures;

static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "FAIL: %s\n", what);
		failures++;
	}
}

/* A file of FILE_BYTES written bytes; returns its open fd. */
static int
make_file(const char *dir, const char *name, uint64_t *allocated)
{
	char path[512];
	static char buf[FILE_BYTES];
	struct stat st;

	memset(buf, 1, sizeof(buf));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_CREAT | O_RDWR, 0600);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fstat(fd, &st) != 0) {
		perror(path);
		exit(1);
	}
	*allocated = (uint64_t)st.st_blocks * 512;
	return fd;
}

int
main(void)
{
	char dir[] = "/tmp/pp-hugepage-test-XXXXXX";
	uint64_t a, b, c;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	check(pp_eal_unused_hugepage_bytes(dir) == 0, "an empty directory holds nothing");
	int fa = make_file(dir, "asgdeadmap_0", &a);  /* a process that ended left it */
	int fb = make_file(dir, "asgalivemap_0", &b); /* a live process holds it */
	int fc = make_file(dir, "notes.txt", &c);     /* not a hugepage file */
	check(a >= FILE_BYTES && b >= FILE_BYTES && c >= FILE_BYTES, "the files have blocks");
	close(fa);
	close(fc);
	check(flock(fb, LOCK_SH) == 0, "a shared lock, as DPDK takes on its hugepage files");

	uint64_t got = pp_eal_unused_hugepage_bytes(dir);
	if (got != a)
		fprintf(stderr, "unused bytes %llu, expected %llu (the unlocked map file only)\n",
			(unsigned long long)got, (unsigned long long)a);
	check(got == a, "only the unlocked hugepage file counts");
	/* counting leaves the files and the live lock as they were */
	check(flock(fb, LOCK_SH | LOCK_NB) == 0, "the live file is still locked by its holder");
	check(pp_eal_unused_hugepage_bytes(dir) == a, "counting twice gives the same");
	close(fb); /* the holder ends: its file is unused now */
	check(pp_eal_unused_hugepage_bytes(dir) == a + b, "a released file counts");
	check(pp_eal_unused_hugepage_bytes("/nonexistent-pp-dir") == 0,
		"a missing directory holds nothing");

	char path[600];
	const char *names[] = { "asgdeadmap_0", "asgalivemap_0", "notes.txt" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
	if (failures == 0)
		printf("hugepage accounting: ok\n");
	return failures != 0;
}
