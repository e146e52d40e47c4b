/* netferret's database: every image's region vectors, weights and sizes,
 * its name, and the LSH index over the vectors, in one file that the
 * server maps read-only once (every instance's P reads the same pages; a
 * write would fault) and checks (layout and an FNV-1a checksum) before
 * serving.  nf-build writes it from a tier's images (nf_build.c);
 * nf_reference.py reads it with numpy.
 *
 * Layout, little-endian: a 192-byte header (struct nf_db_header, 168 bytes, then zeros), then
 * the sections it gives the offsets of, each 64-byte aligned:
 *   img_first  (images + 1) u32   first vector of each image
 *   owner      vectors u32        the image of each vector
 *   vec        vectors x 14 f32   weighted features
 *   weight     vectors f32        region weights (an image's sum to 1)
 *   size       vectors u32        region pixels
 *   name_off   images u32         into names
 *   names      NUL-terminated names, at most NF_MAX_NAME bytes each
 *   lsh_a      L x M x 14 f64, lsh_b L x M f64, lsh_r L x M u32
 *   start      L x (H + 1) u32, entry L x vectors u32 (nf_lsh.h) */
#ifndef NF_DB_H
#define NF_DB_H

#include <stddef.h>
#include <stdint.h>

#include "nf_lsh.h"

#define NF_DB_MAGIC "NFDB\0\0\0\1"
#define NF_MAX_NAME 64 /* bytes of an image's name, NUL excluded */

enum nf_db_section {
	NF_SEC_IMG_FIRST,
	NF_SEC_OWNER,
	NF_SEC_VEC,
	NF_SEC_WEIGHT,
	NF_SEC_SIZE,
	NF_SEC_NAME_OFF,
	NF_SEC_NAMES,
	NF_SEC_LSH_A,
	NF_SEC_LSH_B,
	NF_SEC_LSH_R,
	NF_SEC_START,
	NF_SEC_ENTRY,
	NF_SEC_N,
};

struct nf_db_header {
	char magic[8];
	uint32_t dim, n_images, n_vectors, L, M, H, names_bytes;
	uint32_t top_k; /* the tier's results per query (the server's default --k) */
	double W;
	uint64_t seed;
	uint64_t checksum; /* FNV-1a 64 of every byte after the header */
	uint64_t file_bytes;
	uint64_t off[NF_SEC_N];
};
_Static_assert(sizeof(struct nf_db_header) == 168, "the header is 168 bytes");
#define NF_DB_HEADER_BYTES 192

struct nf_db {
	const uint8_t *base;
	size_t bytes;
	int mapped; /* base is an mmap of the file (nf_db_open) */
	uint32_t n_images, n_vectors;
	uint64_t seed;
	const uint32_t *img_first, *owner, *size, *name_off;
	const float *vec, *weight;
	const char *names;
	struct nf_lsh lsh;
};

/* Maps path read-only and checks it; 0, or -1 with a message in err. */
int nf_db_open(struct nf_db *db, const char *path, char *err, size_t errlen);
/* The same on bytes in memory (kept by the caller). */
int nf_db_parse(struct nf_db *db, const uint8_t *base, size_t bytes, char *err, size_t errlen);
void nf_db_close(struct nf_db *db);

static inline const char *
nf_db_name(const struct nf_db *db, uint32_t image)
{
	return db->names + db->name_off[image];
}

/* What a database is built from: per image its name and its regions. */
struct nf_db_image {
	const char *name;
	unsigned n;
	const float *vec, *weight;
	const uint32_t *size;
};

/* A database of n images, the LSH drawn from seed, top_k its tier's
 * results per query, as bytes (malloc'd, *out, *bytes); 0, or -1 with a
 * message in err. */
int nf_db_build(const struct nf_db_image *img, uint32_t n, uint64_t seed, unsigned top_k,
	uint8_t **out, size_t *bytes, char *err, size_t errlen);

uint64_t nf_fnv1a(const uint8_t *p, size_t n);

#endif
