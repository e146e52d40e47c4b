/* netferret's load stage (ferret's image.c): a query's JPEG decoded with
 * libjpeg(-turbo), resized to 128x128 ignoring its aspect ratio with a
 * separable Lanczos-3 filter, and converted to 8-bit HSV with integer
 * arithmetic.  No DPDK here: the offline tools, the unit tests, the fuzzer
 * and nf_reference.py (which repeats every operation in the same order)
 * share it.
 *
 * The resize computes each pass in double, taps in index order, rounds to
 * 8 bits (floor(x + 0.5), clamped) after each pass; the library is built
 * with -ffp-contract=off.  The filter weights use libm's sin, which
 * Python's math.sin also calls: nf_reference.py gets the same bytes. */
#ifndef NF_IMAGE_H
#define NF_IMAGE_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jpeglib.h>
#include <jerror.h>

#define NF_SIDE 128
#define NF_PIXELS (NF_SIDE * NF_SIDE)
#define NF_MAX_SIDE 2048         /* a query's width and height, each */
#define NF_MAX_PIXELS (1u << 20) /* and its pixels: 3 MiB of RGB per decoder */
#define NF_LANCZOS_A 3
/* taps of one output pixel at most: 2 x 3 x (NF_MAX_SIDE / NF_SIDE) + 2 */
#define NF_MAX_TAPS (2 * NF_LANCZOS_A * (NF_MAX_SIDE / NF_SIDE) + 2)

enum nf_status {
	NF_OK = 0,
	NF_ERR_NOT_JPEG,  /* no JPEG start-of-image marker */
	NF_ERR_TRUNCATED, /* the JPEG's data end before its image does */
	NF_ERR_BAD_JPEG,  /* libjpeg refused it (corrupt, unsupported) */
	NF_ERR_TOO_LARGE, /* wider or taller than NF_MAX_SIDE, or over NF_MAX_PIXELS */
	NF_STATUS_N,
};

/* The answer's word for each status (nf_query.h's answers say "!<word>"). */
extern const char *const nf_status_names[NF_STATUS_N];

struct nf_jpeg_err {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	int eof; /* libjpeg warned that the data ended early */
};

/* One decoder: libjpeg's state (made once) and the buffers of the largest
 * query, allocated once (nf_decoder_init). */
struct nf_decoder {
	struct jpeg_decompress_struct cinfo;
	struct nf_jpeg_err err;
	int ready;
	uint8_t *rgb;      /* NF_MAX_PIXELS x 3: the decoded image */
	uint8_t *mid;      /* NF_SIDE x NF_MAX_SIDE x 3: after the horizontal pass */
	double *wts;       /* NF_SIDE x NF_MAX_TAPS filter weights of one pass */
	unsigned *lo;      /* NF_SIDE: first input index of each output's taps */
	unsigned *ntp;     /* NF_SIDE: taps of each output */
	unsigned w, h;     /* of the last image decoded */
	uint64_t warnings; /* libjpeg warnings other than an early end, all images */
};

int nf_decoder_init(struct nf_decoder *d);
void nf_decoder_fini(struct nf_decoder *d);

/* Decodes len bytes of JPEG into d->rgb (d->w x d->h, RGB, row by row). */
enum nf_status nf_decode(struct nf_decoder *d, const uint8_t *jpeg, size_t len);

/* d->rgb (as decoded) to NF_SIDE x NF_SIDE RGB in out. */
void nf_resize(struct nf_decoder *d, uint8_t *out);

/* The Lanczos-3 weights of a pass from n inputs to NF_SIDE outputs:
 * lo[x], ntp[x] and wts[x * NF_MAX_TAPS + k] (normalized to sum 1). */
void nf_lanczos_weights(unsigned n, unsigned *lo, unsigned *ntp, double *wts);

/* RGB to HSV, 8 bits each: V = max, S = delta * 255 / max, H = 255 * hue
 * / 6 with hue in [0, 6), all integer (truncated); red wins ties for max,
 * then green. */
void nf_rgb_to_hsv(const uint8_t *rgb, uint8_t *hsv, unsigned n);

#endif
