/* nf_image.h: decode, Lanczos-3 resize, HSV. */
#include "nf_image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const nf_status_names[NF_STATUS_N] = { "ok", "not_jpeg", "truncated_jpeg", "bad_jpeg",
	"too_large" };

/* libjpeg's errors jump back to nf_decode; nothing is printed. */
static void
jpeg_fail(j_common_ptr cinfo)
{
	struct nf_jpeg_err *e = (struct nf_jpeg_err *)cinfo->err;
	longjmp(e->jump, 1);
}

static void
jpeg_note(j_common_ptr cinfo, int level)
{
	struct nf_jpeg_err *e = (struct nf_jpeg_err *)cinfo->err;
	struct nf_decoder *d = (struct nf_decoder *)cinfo->client_data;
	if (level >= 0)
		return; /* trace messages */
	if (e->pub.msg_code == JWRN_JPEG_EOF)
		e->eof = 1;
	else
		d->warnings++;
	e->pub.num_warnings++;
}

static void
jpeg_quiet(j_common_ptr cinfo)
{
	(void)cinfo;
}

int
nf_decoder_init(struct nf_decoder *d)
{
	memset(d, 0, sizeof(*d));
	d->rgb = malloc((size_t)NF_MAX_PIXELS * 3);
	d->mid = malloc((size_t)NF_SIDE * NF_MAX_SIDE * 3);
	d->wts = malloc(sizeof(double) * NF_SIDE * NF_MAX_TAPS);
	d->lo = malloc(sizeof(unsigned) * NF_SIDE);
	d->ntp = malloc(sizeof(unsigned) * NF_SIDE);
	if (d->rgb == NULL || d->mid == NULL || d->wts == NULL || d->lo == NULL || d->ntp == NULL) {
		nf_decoder_fini(d);
		return -1;
	}
	d->cinfo.err = jpeg_std_error(&d->err.pub);
	d->err.pub.error_exit = jpeg_fail;
	d->err.pub.emit_message = jpeg_note;
	d->err.pub.output_message = jpeg_quiet;
	d->cinfo.client_data = d;
	if (setjmp(d->err.jump) != 0) {
		nf_decoder_fini(d);
		return -1;
	}
	jpeg_create_decompress(&d->cinfo);
	d->ready = 1;
	return 0;
}

void
nf_decoder_fini(struct nf_decoder *d)
{
	if (d->ready)
		jpeg_destroy_decompress(&d->cinfo);
	d->ready = 0;
	free(d->rgb);
	free(d->mid);
	free(d->wts);
	free(d->lo);
	free(d->ntp);
	d->rgb = d->mid = NULL;
	d->wts = NULL;
	d->lo = d->ntp = NULL;
}

enum nf_status
nf_decode(struct nf_decoder *d, const uint8_t *jpeg, size_t len)
{
	struct jpeg_decompress_struct *ci = &d->cinfo;
	if (len < 3 || jpeg[0] != 0xFF || jpeg[1] != 0xD8 || jpeg[2] != 0xFF)
		return NF_ERR_NOT_JPEG;
	d->err.eof = 0;
	d->w = d->h = 0;
	if (setjmp(d->err.jump) != 0) {
		jpeg_abort_decompress(ci);
		return d->err.eof ? NF_ERR_TRUNCATED : NF_ERR_BAD_JPEG;
	}
	jpeg_mem_src(ci, jpeg, (unsigned long)len);
	if (jpeg_read_header(ci, TRUE) != JPEG_HEADER_OK) {
		jpeg_abort_decompress(ci);
		return NF_ERR_BAD_JPEG;
	}
	if (ci->image_width == 0 || ci->image_height == 0 || ci->image_width > NF_MAX_SIDE ||
		ci->image_height > NF_MAX_SIDE ||
		(uint64_t)ci->image_width * ci->image_height > NF_MAX_PIXELS) {
		jpeg_abort_decompress(ci);
		return NF_ERR_TOO_LARGE;
	}
	ci->out_color_space = JCS_RGB;
	ci->dct_method = JDCT_ISLOW;
	ci->do_fancy_upsampling = TRUE;
	ci->scale_num = ci->scale_denom = 1;
	jpeg_start_decompress(ci);
	if (ci->output_components != 3 || ci->output_width != ci->image_width ||
		ci->output_height != ci->image_height) {
		jpeg_abort_decompress(ci);
		return NF_ERR_BAD_JPEG;
	}
	unsigned w = ci->output_width;
	while (ci->output_scanline < ci->output_height) {
		JSAMPROW row = d->rgb + (size_t)ci->output_scanline * w * 3;
		jpeg_read_scanlines(ci, &row, 1);
	}
	jpeg_finish_decompress(ci);
	if (d->err.eof)
		return NF_ERR_TRUNCATED;
	d->w = w;
	d->h = ci->output_height;
	return NF_OK;
}

static double
lanczos3(double t)
{
	if (t == 0.0)
		return 1.0;
	if (t <= -NF_LANCZOS_A || t >= NF_LANCZOS_A)
		return 0.0;
	return 3.0 * sin(M_PI * t) * sin(M_PI * t / 3.0) / (M_PI * M_PI * t * t);
}

void
nf_lanczos_weights(unsigned n, unsigned *lo, unsigned *ntp, double *wts)
{
	double scale = (double)n / NF_SIDE;
	double fscale = scale > 1.0 ? scale : 1.0;
	double support = NF_LANCZOS_A * fscale;
	for (unsigned x = 0; x < NF_SIDE; x++) {
		double center = (x + 0.5) * scale;
		int a = (int)floor(center - support), b = (int)ceil(center + support);
		if (a < 0)
			a = 0;
		if (b > (int)n)
			b = (int)n;
		double *w = wts + (size_t)x * NF_MAX_TAPS, sum = 0.0;
		unsigned k = 0;
		for (int i = a; i < b && k < NF_MAX_TAPS; i++, k++) {
			w[k] = lanczos3(((i + 0.5) - center) / fscale);
			sum = sum + w[k];
		}
		for (unsigned j = 0; j < k && sum != 0.0; j++)
			w[j] = w[j] / sum;
		lo[x] = (unsigned)a;
		ntp[x] = k;
	}
}

static uint8_t
to_byte(double v)
{
	v = floor(v + 0.5);
	return v <= 0.0 ? 0 : v >= 255.0 ? 255 : (uint8_t)v;
}

void
nf_resize(struct nf_decoder *d, uint8_t *out)
{
	unsigned w = d->w, h = d->h;
	/* horizontal: w x h -> NF_SIDE x h */
	nf_lanczos_weights(w, d->lo, d->ntp, d->wts);
	for (unsigned y = 0; y < h; y++) {
		const uint8_t *in = d->rgb + (size_t)y * w * 3;
		uint8_t *o = d->mid + (size_t)y * NF_SIDE * 3;
		for (unsigned x = 0; x < NF_SIDE; x++) {
			const double *wt = d->wts + (size_t)x * NF_MAX_TAPS;
			for (unsigned c = 0; c < 3; c++) {
				double acc = 0.0;
				for (unsigned k = 0; k < d->ntp[x]; k++)
					acc = acc + wt[k] * in[(size_t)(d->lo[x] + k) * 3 + c];
				o[x * 3 + c] = to_byte(acc);
			}
		}
	}
	/* vertical: NF_SIDE x h -> NF_SIDE x NF_SIDE */
	nf_lanczos_weights(h, d->lo, d->ntp, d->wts);
	for (unsigned y = 0; y < NF_SIDE; y++) {
		const double *wt = d->wts + (size_t)y * NF_MAX_TAPS;
		for (unsigned x = 0; x < NF_SIDE; x++)
			for (unsigned c = 0; c < 3; c++) {
				double acc = 0.0;
				for (unsigned k = 0; k < d->ntp[y]; k++)
					acc = acc +
						wt[k] *
							d->mid[((size_t)(d->lo[y] + k) * NF_SIDE +
								       x) *
									3 +
								c];
				out[((size_t)y * NF_SIDE + x) * 3 + c] = to_byte(acc);
			}
	}
}

void
nf_rgb_to_hsv(const uint8_t *rgb, uint8_t *hsv, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
		int mx = r, mn = r;
		if (g > mx)
			mx = g;
		if (b > mx)
			mx = b;
		if (g < mn)
			mn = g;
		if (b < mn)
			mn = b;
		int delta = mx - mn, num;
		if (delta == 0)
			num = 0;
		else if (mx == r)
			num = g - b < 0 ? g - b + 6 * delta : g - b;
		else if (mx == g)
			num = 2 * delta + b - r;
		else
			num = 4 * delta + r - g;
		hsv[3 * i] = delta == 0 ? 0 : (uint8_t)(255 * num / (6 * delta));
		hsv[3 * i + 1] = mx == 0 ? 0 : (uint8_t)(delta * 255 / mx);
		hsv[3 * i + 2] = (uint8_t)mx;
	}
}
