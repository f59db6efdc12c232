/* resize.c - Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9).
 *
 * Follows ONNX's reference implementation, which generates the conformance
 * data: interpolation is separable, one axis at a time from the last to
 * the first, in double; each output coordinate maps back to an input
 * coordinate x_ori, whose neighbours (edge-padded) are weighted by the
 * mode's coefficients.  Two places where the reference and the spec's prose
 * differ, and we take the reference: the "output length" in align_corners,
 * pytorch_half_pixel and tf_crop_and_resize is scale * input_length as a
 * real number (not the integer output size), and pytorch_half_pixel maps a
 * length-1 output to -0.5.
 *
 * Nearest mode only picks elements, so it serves every dtype; linear and
 * cubic compute in double and store with ev_set_f (integers truncate, as
 * the reference's astype does).  Before opset 11 (Resize-10, Upsample)
 * coordinates are asymmetric and nearest rounds as onnxruntime's "simple"
 * mode: floor when upsampling, ceil when downsampling. */
#include "runtime/eval/eval.h"
#include "sh_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { M_NEAREST, M_LINEAR, M_CUBIC };
enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC,
       CT_TF_HALF_PIXEL_FOR_NN, CT_TF_CROP_AND_RESIZE };
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };

typedef struct ResizeCfg {
	int mode, ctm, nearest;
	double cubic_a, extrap;
	bool exclude_outside, antialias;
} ResizeCfg;

/* One axis: sizes, scale, and the taps that make each output coordinate. */
typedef struct Axis {
	int64_t in, out;
	double scale, out_w;    /* out_w: scale * in, the reference's "output_width" */
	double roi0, roi1;      /* tf_crop_and_resize region, in [0, 1] */
	bool keep;              /* not resized at all (an axis outside `axes`) */
	int n;                  /* taps per output coordinate */
	int64_t *idx;           /* [out * n] input index of each tap (clamped) */
	double *w;              /* [out * n] weight of each tap */
	uint8_t *ext;           /* [out] 1: extrapolation_value (tf_crop_and_resize outside) */
	bool identity;          /* output == input along this axis */
} Axis;

static bool parse_mode(EvCtx *c, ResizeCfg *cf, bool is_resize)
{
	char buf[48];
	const char *m = ev_attr_string(c, "mode", "nearest", buf, sizeof buf);
	if (!strcmp(m, "nearest"))
		cf->mode = M_NEAREST;
	else if (!strcmp(m, "linear") || (!is_resize && !strcmp(m, "bilinear")))
		cf->mode = M_LINEAR;
	else if (!strcmp(m, "cubic") && is_resize && c->opset >= 11)
		cf->mode = M_CUBIC;
	else
		return ev_fail(c, "unsupported mode '%s'", m);
	cf->ctm = CT_ASYMMETRIC;
	cf->nearest = NM_SIMPLE;
	cf->cubic_a = -0.75;
	cf->extrap = 0;
	cf->exclude_outside = cf->antialias = false;
	if (!is_resize || c->opset < 11)
		return true;
	const char *t = ev_attr_string(c, "coordinate_transformation_mode", "half_pixel", buf, sizeof buf);
	static const struct { const char *name; int ct; } cts[] = {
		{"half_pixel", CT_HALF_PIXEL}, {"half_pixel_symmetric", CT_HALF_PIXEL_SYM},
		{"pytorch_half_pixel", CT_PYTORCH_HALF_PIXEL}, {"align_corners", CT_ALIGN_CORNERS},
		{"asymmetric", CT_ASYMMETRIC}, {"tf_half_pixel_for_nn", CT_TF_HALF_PIXEL_FOR_NN},
		{"tf_crop_and_resize", CT_TF_CROP_AND_RESIZE},
	};
	size_t i;
	for (i = 0; i < sizeof cts / sizeof cts[0]; i++)
		if (!strcmp(t, cts[i].name))
			break;
	if (i == sizeof cts / sizeof cts[0])
		return ev_fail(c, "unsupported coordinate_transformation_mode '%s'", t);
	cf->ctm = cts[i].ct;
	const char *nm = ev_attr_string(c, "nearest_mode", "round_prefer_floor", buf, sizeof buf);
	if (!strcmp(nm, "round_prefer_floor"))
		cf->nearest = NM_ROUND_PREFER_FLOOR;
	else if (!strcmp(nm, "round_prefer_ceil"))
		cf->nearest = NM_ROUND_PREFER_CEIL;
	else if (!strcmp(nm, "floor"))
		cf->nearest = NM_FLOOR;
	else if (!strcmp(nm, "ceil"))
		cf->nearest = NM_CEIL;
	else
		return ev_fail(c, "unsupported nearest_mode '%s'", nm);
	cf->cubic_a = ev_attr_float(c, "cubic_coeff_a", -0.75f);
	cf->extrap = ev_attr_float(c, "extrapolation_value", 0.0f);
	cf->exclude_outside = ev_attr_int(c, "exclude_outside", 0) != 0;
	cf->antialias = c->opset >= 18 && ev_attr_int(c, "antialias", 0) != 0;
	if (cf->antialias && cf->mode == M_NEAREST)
		return ev_fail(c, "antialias is not defined for nearest mode");
	return true;
}

/* Output coordinate x back to the input; *outside for tf_crop_and_resize
 * points outside the input (those take extrapolation_value). */
static double original_coord(const ResizeCfg *cf, const Axis *a, int64_t xi, bool *outside)
{
	double x = (double)xi, in = (double)a->in, s = a->scale, ow = a->out_w;
	*outside = false;
	switch (cf->ctm) {
	case CT_ALIGN_CORNERS:
		return ow == 1 ? 0.0 : x * (in - 1) / (ow - 1);
	case CT_ASYMMETRIC:
		return x / s;
	case CT_TF_HALF_PIXEL_FOR_NN:
		return (x + 0.5) / s;
	case CT_PYTORCH_HALF_PIXEL:
		return ow == 1 ? -0.5 : (x + 0.5) / s - 0.5;
	case CT_HALF_PIXEL_SYM: {
		double adj = (double)a->out / ow, center = in / 2;
		return center * (1 - adj) + (x + 0.5) / s - 0.5;
	}
	case CT_TF_CROP_AND_RESIZE: {
		double r;
		if (ow == 1)
			r = (a->roi1 - a->roi0) * (in - 1) / 2;
		else
			r = x * (a->roi1 - a->roi0) * (in - 1) / (ow - 1);
		r += a->roi0 * (in - 1);
		*outside = r < 0 || r > in - 1;
		return r;
	}
	default:
		return (x + 0.5) / s - 0.5;
	}
}

static void cubic_coeffs(double r, double A, double *c)
{
	c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
	c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
	c[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
	c[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
}

static double cubic_kernel(double x, double A)
{
	x = fabs(x);
	double x2 = x * x, x3 = x * x2;
	if (x <= 1)
		return (A + 2) * x3 - (A + 3) * x2 + 1;
	if (x < 2)
		return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
	return 0;
}

/* Taps per output coordinate for linear/cubic, and the offset of the first
 * one from the base index (the input index just below x_ori). */
static int tap_count(const ResizeCfg *cf, double scale, int64_t *first)
{
	if (!cf->antialias) {
		*first = cf->mode == M_LINEAR ? 0 : -1;
		return cf->mode == M_LINEAR ? 2 : 4;
	}
	double s = scale < 1 ? scale : 1;
	*first = (int64_t)floor((cf->mode == M_LINEAR ? -1 : -2) / s) + 1;
	return (int)(2 - 2 * *first);
}

static void axis_free(Axis *a)
{
	free(a->idx);
	free(a->w);
	free(a->ext);
	a->idx = NULL;
	a->w = NULL;
	a->ext = NULL;
}

static bool build_taps(EvCtx *c, const ResizeCfg *cf, Axis *a)
{
	int64_t first = 0;
	int n = cf->mode == M_NEAREST ? 1 : tap_count(cf, a->scale, &first);
	if (n < 1 || n > (1 << 20))
		return ev_fail(c, "scale %g needs too many taps", a->scale);
	a->n = n;
	size_t cnt = (size_t)(a->out ? a->out : 1);
	/* the taps are scratch the memory budget does not see: bounded here
	 * (an antialiased downscale by a tiny factor asks for billions) */
	if (cnt > ((size_t)1 << 24) / (size_t)n)
		return ev_fail(c, "scale %g needs %lld taps on an axis of %lld, over graft's limit of %d", a->scale,
		               (long long)n, (long long)cnt, 1 << 24);
	a->idx = malloc(sizeof *a->idx * cnt * (size_t)n);
	a->w = malloc(sizeof *a->w * cnt * (size_t)n);
	a->ext = calloc(cnt, 1);
	if (!a->idx || !a->w || !a->ext)
		return ev_fail(c, "out of memory");
	a->identity = a->out == a->in;
	if (a->keep) {
		for (int64_t x = 0; x < a->out; x++) {
			a->idx[x * n] = x;
			a->w[x * n] = 1;
			for (int k = 1; k < n; k++) {
				a->idx[x * n + k] = x;
				a->w[x * n + k] = 0;
			}
		}
		return true;
	}
	int64_t in = a->in, pad = (n + 1) / 2, L = in + 2 * pad;
	double *co = malloc(sizeof *co * (size_t)n);
	if (!co)
		return ev_fail(c, "out of memory");
	for (int64_t x = 0; x < a->out; x++) {
		bool outside;
		double xo = original_coord(cf, a, x, &outside);
		if (outside) {
			a->ext[x] = 1;
			a->identity = false;
			for (int k = 0; k < n; k++) {
				a->idx[x * n + k] = 0;
				a->w[x * n + k] = 0;
			}
			continue;
		}
		if (!(fabs(xo) < 1e15)) {
			free(co);
			return ev_fail(c, "input coordinate %g is out of reach", xo);
		}
		double fl = floor(xo);
		if (cf->mode == M_NEAREST) {
			int64_t j;
			if (cf->nearest == NM_SIMPLE) {
				j = a->scale < 1 ? (int64_t)ceil(xo) : (int64_t)xo;
			} else if (xo == fl) {
				j = (int64_t)xo;
			} else {
				double r = xo - fl;
				bool up = cf->nearest == NM_ROUND_PREFER_FLOOR ? r > 0.5
				        : cf->nearest == NM_ROUND_PREFER_CEIL ? r >= 0.5
				        : cf->nearest == NM_CEIL;
				j = (int64_t)fl + up;
			}
			j = j < 0 ? 0 : j >= in ? in - 1 : j;
			a->idx[x] = j;
			a->w[x] = 1;
			if (j != x)
				a->identity = false;
			continue;
		}
		/* ratio in (0, 1]: x_ori sits above base = ceil(x_ori) - 1 */
		double ratio = xo == fl ? 1.0 : xo - fl;
		if (!cf->antialias) {
			if (cf->mode == M_LINEAR) {
				co[0] = 1 - ratio;
				co[1] = ratio;
			} else {
				cubic_coeffs(ratio, cf->cubic_a, co);
			}
		} else {
			double s = a->scale < 1 ? a->scale : 1, sum = 0;
			for (int k = 0; k < n; k++) {
				double arg = ((double)(first + k) - ratio) * s;
				if (cf->mode == M_LINEAR) {
					double v = 1 - fabs(arg);
					co[k] = v < 0 ? 0 : v > 1 ? 1 : v;
				} else {
					co[k] = cubic_kernel(arg, cf->cubic_a);
				}
			}
			for (int k = 0; k < n; k++)
				sum += co[k];
			for (int k = 0; k < n; k++)
				co[k] /= sum;
		}
		/* the n nearest indices of the edge-padded input, the window
		 * shifted to stay inside it (as the reference picks them) */
		int64_t start = (int64_t)ceil(xo + (double)pad) - n / 2;
		if (start < 0)
			start = 0;
		if (start + n > L)
			start = L - n;
		if (cf->exclude_outside) {
			double sum = 0;
			for (int k = 0; k < n; k++) {
				int64_t o = start + k - pad;
				if (o < 0 || o >= in)
					co[k] = 0;
				sum += co[k];
			}
			for (int k = 0; k < n; k++)
				co[k] /= sum;
		}
		int nz = 0;
		for (int k = 0; k < n; k++) {
			int64_t o = start + k - pad;
			o = o < 0 ? 0 : o >= in ? in - 1 : o;
			a->idx[x * n + k] = o;
			a->w[x * n + k] = co[k];
			if (co[k] != 0) {
				nz++;
				if (co[k] != 1 || o != x)
					a->identity = false;
			}
		}
		if (nz != 1)
			a->identity = false;
	}
	free(co);
	return true;
}

/* Nearest: pure selection, any dtype. */
static bool run_nearest(EvCtx *c, const ResizeCfg *cf, const EvValue *x, Axis *ax, EvValue *o)
{
	int r = x->rank;
	bool any_ext = false;
	for (int d = 0; d < r; d++)
		for (int64_t k = 0; k < ax[d].out; k++)
			any_ext |= ax[d].ext[k];
	if (any_ext && (x->dtype == DT_STRING || !(SH_T_NUM & SH_BIT(x->dtype)) ))
		return ev_fail(c, "extrapolation_value needs a numeric tensor");
	if (o->numel == 0)
		return true;
	if (r == 0) {
		sh_copy(o, 0, x, 0, 1);
		return true;
	}
	int64_t xs[EV_MAX_RANK], idx[EV_MAX_RANK] = {0};
	ev_strides(r, x->dims, xs);
	size_t es = sh_esize(x->dtype);
	const Axis *last = &ax[r - 1];
	for (int64_t di = 0; di < o->numel; di += last->out) {
		int64_t so = 0;
		bool ext = false;
		for (int d = 0; d < r - 1; d++) {
			so += ax[d].idx[idx[d]] * xs[d];
			ext |= ax[d].ext[idx[d]];
		}
		for (int64_t k = 0; k < last->out; k++) {
			if (ext || last->ext[k])
				ev_set_f(o, di + k, cf->extrap);
			else
				sh_copy1(o, di + k, x, so + last->idx[k], es);
		}
		for (int d = r - 2; d >= 0; d--) {
			if (++idx[d] < ax[d].out)
				break;
			idx[d] = 0;
		}
	}
	return true;
}

/* Linear and cubic: separable passes over a double buffer, last axis first. */
static bool run_interp(EvCtx *c, const ResizeCfg *cf, const EvValue *x, Axis *ax, EvValue *o)
{
	if (x->dtype == DT_STRING || !(SH_T_NUM & SH_BIT(x->dtype)))
		return ev_fail(c, "linear and cubic modes need a numeric tensor, not %s", dtype_name(x->dtype));
	int r = x->rank;
	int64_t cur[EV_MAX_RANK];
	memcpy(cur, x->dims, sizeof *cur * (size_t)r);
	int64_t n = x->numel;
	double *buf = malloc(sizeof *buf * (size_t)(n ? n : 1));
	if (!buf)
		return ev_fail(c, "out of memory");
	if (x->dtype == DT_FLOAT)
		for (int64_t i = 0; i < n; i++)
			buf[i] = ((const float *)x->data)[i];
	else
		for (int64_t i = 0; i < n; i++)
			buf[i] = ev_get_f(x, i);
	for (int d = r - 1; d >= 0; d--) {
		Axis *a = &ax[d];
		if (a->identity)
			continue;
		int64_t outer = sh_prod(cur, 0, d), inner = sh_prod(cur, d + 1, r);
		int64_t nn = outer * a->out * inner;
		double *nb = malloc(sizeof *nb * (size_t)(nn ? nn : 1));
		if (!nb) {
			free(buf);
			return ev_fail(c, "out of memory");
		}
		for (int64_t p = 0; p < outer; p++)
			for (int64_t k = 0; k < a->out; k++) {
				double *dst = nb + (p * a->out + k) * inner;
				if (a->ext[k]) {
					for (int64_t q = 0; q < inner; q++)
						dst[q] = cf->extrap;
					continue;
				}
				const int64_t *ti = a->idx + k * a->n;
				const double *tw = a->w + k * a->n;
				for (int64_t q = 0; q < inner; q++) {
					double s = 0;
					for (int t = 0; t < a->n; t++)
						s += tw[t] * buf[(p * a->in + ti[t]) * inner + q];
					dst[q] = s;
				}
			}
		free(buf);
		buf = nb;
		cur[d] = a->out;
	}
	if (o->dtype == DT_FLOAT)
		for (int64_t i = 0; i < o->numel; i++)
			((float *)o->data)[i] = (float)buf[i];
	else
		for (int64_t i = 0; i < o->numel; i++)
			ev_set_f(o, i, buf[i]);
	free(buf);
	return true;
}

static bool resize_run(EvCtx *c, const ResizeCfg *cf, const EvValue *x, Axis *ax, EvValue **out)
{
	int r = x->rank;
	int64_t dims[EV_MAX_RANK];
	bool ok = true;
	for (int d = 0; d < r && ok; d++) {
		dims[d] = ax[d].out;
		ok = build_taps(c, cf, &ax[d]);
	}
	EvValue *o = ok ? sh_new(c, x->dtype, r, dims) : NULL;
	if (o) {
		ok = cf->mode == M_NEAREST ? run_nearest(c, cf, x, ax, o) : run_interp(c, cf, x, ax, o);
		if (ok)
			out[0] = o;
		else
			ev_unref(o);
	} else {
		ok = false;
	}
	for (int d = 0; d < r; d++)
		axis_free(&ax[d]);
	return ok;
}

/* Scales (a float tensor, or attribute values) into the axes. */
static bool set_scales(EvCtx *c, const EvValue *x, Axis *ax, const double *sc, int n)
{
	if (n != x->rank)
		return ev_fail(c, "%d scales for rank %d", n, x->rank);
	for (int d = 0; d < n; d++) {
		if (!(sc[d] > 0) || isinf(sc[d]))
			return ev_fail(c, "scale %g is not positive", sc[d]);
		ax[d].scale = sc[d];
		ax[d].out_w = sc[d] * (double)x->dims[d];
		if (ax[d].out_w > (double)(INT64_C(1) << 40))
			return ev_fail(c, "output dimension too large");
		ax[d].out = (int64_t)floor(ax[d].out_w);
	}
	return true;
}

static void axes_init(const EvValue *x, Axis *ax)
{
	memset(ax, 0, sizeof *ax * (size_t)x->rank);
	for (int d = 0; d < x->rank; d++) {
		ax[d].in = ax[d].out = x->dims[d];
		ax[d].scale = 1;
		ax[d].out_w = (double)x->dims[d];
		ax[d].roi0 = 0;
		ax[d].roi1 = 1;
	}
}

static bool k_resize(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "X"))
		return false;
	ResizeCfg cf;
	if (!parse_mode(c, &cf, true))
		return false;
	int r = x->rank;
	Axis ax[EV_MAX_RANK];
	axes_init(x, ax);
	double sc[EV_MAX_RANK];
	if (c->opset < 11) {
		const EvValue *s = nin > 1 ? in[1] : NULL;
		if (!s || s->kind != EV_TENSOR || s->numel != r)
			return ev_fail(c, "Resize-10 needs one scale per dimension");
		for (int d = 0; d < r; d++)
			sc[d] = ev_get_f(s, d);
		if (!set_scales(c, x, ax, sc, r))
			return false;
		return resize_run(c, &cf, x, ax, out);
	}
	const EvValue *roi = nin > 1 ? in[1] : NULL, *scales = nin > 2 ? in[2] : NULL, *sizes = nin > 3 ? in[3] : NULL;
	if (roi && roi->numel == 0)
		roi = NULL;
	if (scales && scales->numel == 0)
		scales = NULL;
	if (sizes && sizes->numel == 0)
		sizes = NULL;
	if (!scales == !sizes)
		return ev_fail(c, "exactly one of scales and sizes must be given");
	/* axes (opset 18): the listed axes are resized, the others kept */
	int64_t axl[EV_MAX_RANK];
	int na = r;
	int nattr = -1;
	const int64_t *aa = c->opset >= 18 ? ev_attr_ints(c, "axes", &nattr) : NULL;
	bool listed[EV_MAX_RANK] = {false};
	if (nattr >= 0) {
		if (nattr > r)
			return ev_fail(c, "%d axes for rank %d", nattr, r);
		na = nattr;
		for (int i = 0; i < na; i++) {
			int a;
			if (!sh_axis(c, aa[i], r, 0, &a))
				return false;
			if (listed[a])
				return ev_fail(c, "axis %d repeats", a);
			listed[a] = true;
			axl[i] = a;
		}
		for (int d = 0; d < r; d++)
			ax[d].keep = !listed[d];
	} else {
		for (int i = 0; i < r; i++)
			axl[i] = i;
	}
	if (roi && cf.ctm == CT_TF_CROP_AND_RESIZE) {
		if (roi->numel != 2 * na || roi->dtype == DT_STRING)
			return ev_fail(c, "roi has %lld entries, expected %d", (long long)roi->numel, 2 * na);
		for (int i = 0; i < na; i++) {
			ax[axl[i]].roi0 = ev_get_f(roi, i);
			ax[axl[i]].roi1 = ev_get_f(roi, na + i);
		}
	}
	if (scales) {
		if (scales->numel != na || !ev_is_float(scales->dtype))
			return ev_fail(c, "scales has %lld entries, expected %d", (long long)scales->numel, na);
		for (int d = 0; d < r; d++)
			sc[d] = 1;
		for (int i = 0; i < na; i++)
			sc[axl[i]] = ev_get_f(scales, i);
		if (!set_scales(c, x, ax, sc, r))
			return false;
	} else {
		if (sizes->numel != na || !sh_is_int_index(sizes))
			return ev_fail(c, "sizes has %lld entries, expected %d", (long long)sizes->numel, na);
		char buf[32];
		const char *pol = c->opset >= 18 ? ev_attr_string(c, "keep_aspect_ratio_policy", "stretch", buf, sizeof buf)
		                                 : "stretch";
		for (int i = 0; i < na; i++) {
			Axis *a = &ax[axl[i]];
			int64_t s = sh_idx(sizes, i);
			if (s < 0)
				return ev_fail(c, "sizes[%d] is negative", i);
			if (a->in == 0 && s != 0)
				return ev_fail(c, "cannot resize an empty dimension to %lld", (long long)s);
			a->out = s;
			a->scale = a->in ? (double)s / (double)a->in : 1;
			a->out_w = a->scale * (double)a->in;
		}
		if (strcmp(pol, "stretch") != 0) {
			bool larger = !strcmp(pol, "not_smaller");
			if (!larger && strcmp(pol, "not_larger") != 0)
				return ev_fail(c, "unknown keep_aspect_ratio_policy '%s'", pol);
			double s = ax[axl[0]].scale;
			for (int i = 1; i < na; i++) {
				double t = ax[axl[i]].scale;
				s = larger ? (t > s ? t : s) : (t < s ? t : s);
			}
			for (int i = 0; i < na; i++) {
				Axis *a = &ax[axl[i]];
				a->scale = s;
				a->out_w = s * (double)a->in;
				a->out = (int64_t)(a->out_w + 0.5); /* round half up */
			}
		}
	}
	for (int d = 0; d < r; d++)
		if (ax[d].keep) {
			ax[d].out = ax[d].in;
			ax[d].scale = 1;
		}
	return resize_run(c, &cf, x, ax, out);
}

static bool k_upsample(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "X"))
		return false;
	ResizeCfg cf;
	if (!parse_mode(c, &cf, false))
		return false;
	Axis ax[EV_MAX_RANK];
	axes_init(x, ax);
	double sc[EV_MAX_RANK];
	int n;
	if (c->opset >= 9) {
		const EvValue *s = nin > 1 ? in[1] : NULL;
		if (!s || s->kind != EV_TENSOR || !ev_is_float(s->dtype) || s->numel > EV_MAX_RANK)
			return ev_fail(c, "Upsample needs a float scales input");
		n = (int)s->numel;
		for (int i = 0; i < n; i++)
			sc[i] = ev_get_f(s, i);
	} else {
		const float *f = ev_attr_floats(c, "scales", &n);
		if (n < 0 || n > EV_MAX_RANK)
			return ev_fail(c, "Upsample needs a scales attribute");
		for (int i = 0; i < n; i++)
			sc[i] = f[i];
	}
	for (int i = 0; i < n; i++)
		if (sc[i] < 1)
			return ev_fail(c, "Upsample scales must be >= 1");
	if (!set_scales(c, x, ax, sc, n))
		return false;
	return resize_run(c, &cf, x, ax, out);
}

const EvKernel ev_kernels_resize[] = {
	EV_KERNEL(Resize, k_resize, SH_T_ALL),
	EV_KERNEL(Upsample, k_upsample, SH_T_ALL),
	{0},
};
