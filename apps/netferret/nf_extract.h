/* netferret's feature extraction (ferret's extract.c): one 14-dimensional
 * vector per region of the HSV image,
 *
 *   for H, S and V: mean / 255, population sd / 255, cbrt(third central
 *   moment) / 255;  then ln(dy / dx) of the bounding box, the fill ratio
 *   (pixels / box area), ln(box area), the centroid's row and column (in
 *   pixels),
 *
 * each multiplied by its weight (NF_FEATURE_WEIGHTS), as float; and the
 * region's weight sqrt(pixels) / sum of sqrt(pixels) over the image's
 * regions.  The moments come from exact integer power sums (128-bit), so
 * only the last divisions round: nf_reference.py gets the same floats. */
#ifndef NF_EXTRACT_H
#define NF_EXTRACT_H

#include <stdint.h>

#include "nf_srm.h"

#define NF_DIM 14
#define NF_FEATURE_WEIGHTS                                                                \
	{                                                                                 \
		6.0, 3.0, 1.5, 4.0, 2.0, 1.0, 4.0, 2.0, 1.0, 0.2, 0.4, 0.04, 0.007, 0.007 \
	}

/* Per region r < n: vec[r * NF_DIM ..], weight[r], size[r] (pixels). */
void nf_extract(const uint8_t *hsv, const uint8_t *labels, unsigned n, float *vec, float *weight,
	uint32_t *size);

#endif
