/* nf_extract.h: region features. */
#include "nf_extract.h"

#include <math.h>
#include <string.h>

struct acc {
	int64_t s1[3], s2[3];
	__int128 s3[3];
	uint32_t n, x0, x1, y0, y1;
	uint64_t sx, sy;
};

void
nf_extract(const uint8_t *hsv, const uint8_t *labels, unsigned n, float *vec, float *weight,
	uint32_t *size)
{
	static const double fw[NF_DIM] = NF_FEATURE_WEIGHTS;
	struct acc a[NF_MAX_REGIONS];
	memset(a, 0, sizeof(a[0]) * n);
	for (unsigned r = 0; r < n; r++) {
		a[r].x0 = a[r].y0 = NF_SIDE;
	}
	for (uint32_t p = 0; p < NF_PIXELS; p++) {
		struct acc *g = &a[labels[p]];
		uint32_t x = p % NF_SIDE, y = p / NF_SIDE;
		for (int c = 0; c < 3; c++) {
			int64_t v = hsv[3 * p + c];
			g->s1[c] += v;
			g->s2[c] += v * v;
			g->s3[c] += (__int128)(v * v * v);
		}
		g->n++;
		g->sx += x;
		g->sy += y;
		if (x < g->x0)
			g->x0 = x;
		if (x > g->x1)
			g->x1 = x;
		if (y < g->y0)
			g->y0 = y;
		if (y > g->y1)
			g->y1 = y;
	}
	double root_sum = 0.0;
	for (unsigned r = 0; r < n; r++)
		root_sum = root_sum + sqrt((double)a[r].n);
	for (unsigned r = 0; r < n; r++) {
		const struct acc *g = &a[r];
		__int128 nn = g->n;
		double f[NF_DIM], dn = g->n;
		for (int c = 0; c < 3; c++) {
			/* n^2 var = n S2 - S1^2;  n^3 m3 = n^2 S3 - 3 n S1 S2 + 2 S1^3 */
			__int128 s1 = g->s1[c], s2 = g->s2[c], s3 = g->s3[c];
			__int128 m2 = nn * s2 - s1 * s1;
			__int128 m3 = nn * nn * s3 - 3 * nn * s1 * s2 + 2 * s1 * s1 * s1;
			f[3 * c] = (double)s1 / dn / 255.0;
			f[3 * c + 1] = sqrt((double)m2 / (dn * dn)) / 255.0;
			f[3 * c + 2] = cbrt((double)m3 / (dn * dn * dn)) / 255.0;
		}
		double dx = g->x1 - g->x0 + 1, dy = g->y1 - g->y0 + 1;
		f[9] = log(dy / dx);
		f[10] = dn / (dx * dy);
		f[11] = log(dx * dy);
		f[12] = (double)g->sy / dn;
		f[13] = (double)g->sx / dn;
		for (int i = 0; i < NF_DIM; i++)
			vec[(size_t)r * NF_DIM + i] = (float)(f[i] * fw[i]);
		weight[r] = (float)(sqrt(dn) / root_sum);
		size[r] = g->n;
	}
}
