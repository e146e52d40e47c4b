/* A pack of named JPEGs: how a tier's queries and database images are
 * kept (netferret_input.py writes them, nf-build and the client read
 * them).  Little-endian: "NFPK0001", u32 count, then per item a u16 name
 * length, the name, a u32 byte count and the bytes. */
#ifndef NF_PACK_H
#define NF_PACK_H

#include <stddef.h>
#include <stdint.h>

struct nf_pack_item {
	char name[65];
	const uint8_t *data;
	uint32_t len;
};

struct nf_pack {
	uint8_t *buf;
	size_t bytes;
	uint32_t count;
	size_t at; /* the next item's offset */
	uint32_t next;
};

/* Reads path whole; 0, or -1 with a message in err. */
int nf_pack_open(struct nf_pack *p, const char *path, char *err, size_t errlen);
/* The next item: 1, 0 at the end, -1 (err) when the pack is damaged. */
int nf_pack_next(struct nf_pack *p, struct nf_pack_item *it, char *err, size_t errlen);
void nf_pack_close(struct nf_pack *p);

#endif
