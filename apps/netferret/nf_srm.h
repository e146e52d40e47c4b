/* netferret's segmentation (ferret's srm.c): Statistical Region Merging
 * (Nock and Nielsen, TPAMI 2004) of a 128x128 RGB image.
 *
 *  1. The 4-neighbour pairs, for each pixel in raster order its east then
 *     its south neighbour, weighted by the largest of the three channels'
 *     absolute differences, stably bucket-sorted by weight (256 bins).
 *  2. In that order, the two regions of a pair merge when for every
 *     channel |mean1 - mean2| < sqrt(b2(|R1|) + b2(|R2|)), with
 *     b2(n) = 256^2 / (2 Q n) * (min(256, n) ln(1 + n) + 2 ln(6 N)),
 *     Q = 128, N = 16,384 pixels (union-find by rank; a region's sums are
 *     exact integers, its mean their quotient in double).
 *  3. Regions under 81 pixels (0.005 N) merge into their left neighbour:
 *     each pixel in raster order (from the second column) with the one on
 *     its left, when they are in different regions and either is small.
 *     Every region is then at least 81 pixels (a smaller one would still
 *     have a horizontal neighbour it was compared with).
 *  4. Labels 0, 1, ... in raster order of each region's first pixel
 *     (at most 16,384 / 81 = 202 regions).
 * nf_reference.py repeats the same steps. */
#ifndef NF_SRM_H
#define NF_SRM_H

#include <stdint.h>

#include "nf_image.h"

#define NF_SRM_Q 128
#define NF_MIN_REGION 81 /* pixels: (unsigned)(0.005 * NF_PIXELS) */
#define NF_MAX_REGIONS 255

struct nf_srm_work {
	uint32_t parent[NF_PIXELS];
	uint32_t size[NF_PIXELS];
	uint32_t sum[NF_PIXELS][3];
	uint8_t rank[NF_PIXELS];
	uint32_t edges[2 * NF_PIXELS]; /* pixel << 1 | (0 east, 1 south), sorted */
	uint32_t order[2 * NF_PIXELS];
	uint32_t count[257];
	double b2[NF_PIXELS + 1]; /* b2(n) above, made by nf_srm_init */
};

void nf_srm_init(struct nf_srm_work *w);

/* Labels every pixel of rgb (NF_PIXELS x 3); returns the regions. */
unsigned nf_srm(struct nf_srm_work *w, const uint8_t *rgb, uint8_t *labels);

#endif
