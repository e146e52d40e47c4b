/* nf_pack.h: packs of named JPEGs. */
#include "nf_pack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
nf_pack_open(struct nf_pack *p, const char *path, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	long n = -1;
	if (fseek(f, 0, SEEK_END) == 0)
		n = ftell(f);
	if (n < 12 || fseek(f, 0, SEEK_SET) != 0 || (p->buf = malloc((size_t)n)) == NULL ||
		fread(p->buf, 1, (size_t)n, f) != (size_t)n) {
		snprintf(err, errlen, "%s: cannot read it whole (%ld bytes)", path, n);
		fclose(f);
		free(p->buf);
		p->buf = NULL;
		return -1;
	}
	fclose(f);
	p->bytes = (size_t)n;
	if (memcmp(p->buf, "NFPK0001", 8) != 0) {
		snprintf(err, errlen, "%s: not a pack of JPEGs (magic)", path);
		nf_pack_close(p);
		return -1;
	}
	memcpy(&p->count, p->buf + 8, 4);
	p->at = 12;
	return 0;
}

int
nf_pack_next(struct nf_pack *p, struct nf_pack_item *it, char *err, size_t errlen)
{
	if (p->next == p->count)
		return 0;
	uint16_t nl;
	uint32_t len;
	if (p->bytes - p->at < 2)
		goto cut;
	memcpy(&nl, p->buf + p->at, 2);
	if (nl == 0 || nl > 64 || p->bytes - p->at - 2 < (size_t)nl + 4)
		goto cut;
	memcpy(it->name, p->buf + p->at + 2, nl);
	it->name[nl] = '\0';
	memcpy(&len, p->buf + p->at + 2 + nl, 4);
	if (p->bytes - p->at - 6 - nl < len)
		goto cut;
	it->data = p->buf + p->at + 6 + nl;
	it->len = len;
	p->at += 6 + (size_t)nl + len;
	p->next++;
	return 1;
cut:
	snprintf(err, errlen, "item %u at byte %zu: damaged (bad name length or cut short)",
		p->next, p->at);
	return -1;
}

void
nf_pack_close(struct nf_pack *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}
