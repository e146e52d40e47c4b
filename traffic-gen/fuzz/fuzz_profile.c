/* libFuzzer target for pp-tgen's profile reader: any bytes as a JSON
 * profile (or, built with -DFUZZ_YAML, a YAML one) through tg_profile_load
 * and, when it is accepted, tg_cfg_check: never a crash, an overread or a
 * leak, whatever the file holds.  The loader reads a path (the product
 * reads files), so each input is written to a file of this process's own
 * directory (in /dev/shm) first. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tg_config.h"
#include "../tg_profile.h"

#ifdef FUZZ_YAML
#define PROFILE_NAME "p.yaml"
#else
#define PROFILE_NAME "p.json"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[256];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (path[0] == '\0') {
		/* tmpfs: a disk-backed /tmp stalled an fopen for 13 s on a
		 * loaded machine, which libFuzzer reports as a timeout */
		char dir[] = "/dev/shm/fuzz-tgen-profile-XXXXXX";
		char fallback[] = "/tmp/fuzz-tgen-profile-XXXXXX";
		if (mkdtemp(dir) != NULL)
			snprintf(path, sizeof(path), "%s/%s", dir, PROFILE_NAME);
		else if (mkdtemp(fallback) != NULL)
			snprintf(path, sizeof(path), "%s/%s", fallback, PROFILE_NAME);
		else
			abort();
	}
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		abort();
	if (size != 0 && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);

	static struct tg_cfg c;
	tg_cfg_defaults(&c);
	if (tg_profile_load(&c, path) == 0)
		(void)tg_cfg_check(&c);
	return 0;
}
