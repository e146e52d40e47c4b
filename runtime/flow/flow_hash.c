/* Hasher set-up: choosing the function and its key. */
#include "flow_hash.h"

#include <stdio.h>

int
flow_hasher_init(
	struct flow_hasher *h, const char *kind, const char *hex_key, char *err, size_t err_size)
{
	size_t bin_len = 0;
	const char *end = NULL;

	memset(h, 0, sizeof(*h));
	if (sodium_init() < 0) {
		snprintf(err, err_size, "libsodium failed to initialise");
		return -1;
	}
	if (strcmp(kind, "nprobe") == 0) {
		h->kind = FLOW_HASH_NPROBE;
		if (hex_key != NULL) {
			snprintf(err, err_size,
				"--hash-key given but --hash is nprobe (the nProbe hash has no "
				"key)");
			return -1;
		}
		return 0;
	}
	if (strcmp(kind, "keyed") != 0) {
		snprintf(err, err_size, "--hash '%s': unknown hash (expected nprobe or keyed)",
			kind);
		return -1;
	}
	h->kind = FLOW_HASH_KEYED;
	if (hex_key == NULL) {
		randombytes_buf(h->key, sizeof(h->key));
		return 0;
	}
	if (strlen(hex_key) != 2 * sizeof(h->key) ||
		sodium_hex2bin(h->key, sizeof(h->key), hex_key, strlen(hex_key), NULL, &bin_len,
			&end) != 0 ||
		bin_len != sizeof(h->key) || *end != '\0') {
		snprintf(err, err_size,
			"--hash-key '%s': expected %zu hex digits (a %zu-byte SipHash key)",
			hex_key, 2 * sizeof(h->key), sizeof(h->key));
		return -1;
	}
	return 0;
}
