/* quant.c - linear quantization kernels: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, ConvInteger and QLinearConv.
 *
 * Quantization follows ONNX's reference step by step: QuantizeLinear divides
 * in x's float type (float16/bfloat16 quotients rounded to the type, as numpy
 * does), rounds half to even, adds the zero point and saturates to the
 * output's integer range.  DequantizeLinear computes (x - zero_point) * scale
 * in float32 and rounds the product to the scale's type.  The scale and zero
 * point are per tensor (scalars), per axis (1-D along `axis`), or, from
 * opset 21, per block (same rank as x, `block_size` elements of x per scale
 * along `axis`).
 *
 * The integer convolutions accumulate exactly in int64 and wrap to int32 at
 * the end, which is what int32 accumulation gives (arithmetic mod 2^32).
 * They subtract the zero points first and pad with zero, which is the same
 * as padding the quantized input with its zero point. */
#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define Q_INTS (NN_BIT(DT_INT8) | NN_BIT(DT_UINT8) | NN_BIT(DT_INT16) | NN_BIT(DT_UINT16) | NN_BIT(DT_INT32))

static bool q_int_type(int dt)
{
	return dt == DT_INT8 || dt == DT_UINT8 || dt == DT_INT16 || dt == DT_UINT16 || dt == DT_INT32 ||
	       dt == DT_UINT32 || dt == DT_INT64;
}

static void q_range(int dt, double *lo, double *hi)
{
	switch (dt) {
	case DT_INT8: *lo = -128; *hi = 127; return;
	case DT_UINT8: *lo = 0; *hi = 255; return;
	case DT_INT16: *lo = -32768; *hi = 32767; return;
	case DT_UINT16: *lo = 0; *hi = 65535; return;
	case DT_UINT32: *lo = 0; *hi = 4294967295.0; return;
	case DT_INT64: *lo = -9223372036854775808.0; *hi = 9223372036854775807.0; return;
	default: *lo = -2147483648.0; *hi = 2147483647.0; return;
	}
}

/* Round half to even and saturate to dt's range. */
static int64_t q_saturate(double v, int dt)
{
	double lo, hi;
	q_range(dt, &lo, &hi);
	if (isnan(v))
		return 0;
	v = nearbyint(v); /* the default rounding mode is to nearest even */
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	if (dt == DT_INT64 && v >= 9223372036854775807.0)
		return INT64_MAX;
	return (int64_t)v;
}

/* Element i of x as float32 (float16/bfloat16 decoded, ints converted). */
static float q_getf(const EvValue *t, int64_t i)
{
	switch (t->dtype) {
	case DT_FLOAT: return ((const float *)t->data)[i];
	case DT_FLOAT16: return ev_half_to_float(((const uint16_t *)t->data)[i]);
	case DT_BFLOAT16: return ev_bf16_to_float(((const uint16_t *)t->data)[i]);
	default: return (float)ev_get_f(t, i);
	}
}

/* Round a float32 value to a narrower float type and back (identity for
 * float32), so intermediate results carry that type's precision. */
static float q_round_to(float v, int dt)
{
	if (dt == DT_FLOAT16)
		return ev_half_to_float(ev_float_to_half(v));
	if (dt == DT_BFLOAT16)
		return ev_bf16_to_float(ev_float_to_bf16(v));
	return v;
}

/* How element i of x finds its scale / zero point: index
 * (i / inner) % n for per-axis; blocked: computed through coordinates. */
typedef struct QMap {
	int mode;               /* 0 per tensor, 1 per axis, 2 blocked */
	int axis;
	int64_t inner, n;       /* per axis */
	int64_t block;          /* blocked */
	int rank;
	int64_t xdims[EV_MAX_RANK], sstr[EV_MAX_RANK];
} QMap;

static bool q_map(EvCtx *c, const EvValue *x, const EvValue *scale, const EvValue *zp, QMap *q)
{
	memset(q, 0, sizeof *q);
	if (zp) {
		if (zp->rank != scale->rank || zp->numel != scale->numel ||
		    memcmp(zp->dims, scale->dims, sizeof *zp->dims * (size_t)zp->rank) != 0)
			return ev_fail(c, "zero point and scale differ in shape");
	}
	int64_t block = c->opset >= 21 ? ev_attr_int(c, "block_size", 0) : 0;
	if (scale->rank == 0 || (scale->rank == 1 && scale->numel == 1 && block == 0)) {
		q->mode = 0;
		return true;
	}
	int64_t axis = ev_attr_int(c, "axis", 1);
	int a;
	if (!ev_axis(c, axis, x->rank, &a))
		return false;
	q->axis = a;
	if (block > 0) {
		if (scale->rank != x->rank)
			return ev_fail(c, "blocked quantization needs a scale of x's rank");
		for (int i = 0; i < x->rank; i++) {
			int64_t want = i == a ? (x->dims[i] + block - 1) / block : x->dims[i];
			if (scale->dims[i] != want)
				return ev_fail(c, "scale dim %d is %lld, expected %lld", i, (long long)scale->dims[i],
				               (long long)want);
		}
		q->mode = 2;
		q->block = block;
		q->rank = x->rank;
		memcpy(q->xdims, x->dims, sizeof *x->dims * (size_t)x->rank);
		ev_strides(scale->rank, scale->dims, q->sstr);
		return true;
	}
	if (scale->rank != 1 || scale->numel != x->dims[a])
		return ev_fail(c, "per-axis scale has %lld elements for axis %d of extent %lld", (long long)scale->numel,
		               a, (long long)x->dims[a]);
	q->mode = 1;
	q->n = x->dims[a];
	q->inner = nn_prod(x->dims + a + 1, x->rank - a - 1);
	return true;
}

static int64_t q_index(const QMap *q, int64_t i)
{
	if (q->mode == 0)
		return 0;
	if (q->mode == 1)
		return q->inner ? (i / q->inner) % q->n : 0;
	int64_t s = 0;
	for (int d = q->rank - 1; d >= 0; d--) {
		int64_t coord = i % q->xdims[d];
		i /= q->xdims[d];
		if (d == q->axis)
			coord /= q->block;
		s += coord * q->sstr[d];
	}
	return s;
}

static bool q_tensor(EvCtx *c, const EvValue *v, const char *what)
{
	if (!v || v->kind != EV_TENSOR)
		return ev_fail(c, "missing or non-tensor input %s", what);
	return true;
}

/* ---- QuantizeLinear ------------------------------------------------------- */

static bool run_quantize(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *scale = nin > 1 ? in[1] : NULL, *zp = nin > 2 ? in[2] : NULL;
	if (!q_tensor(c, x, "x") || !q_tensor(c, scale, "y_scale"))
		return false;
	if (zp && zp->kind != EV_TENSOR)
		zp = NULL;
	if (!nn_is_float_type(x->dtype) && x->dtype != DT_INT32)
		return ev_fail(c, "x: unsupported dtype %s", dtype_name(x->dtype));
	if (!nn_is_float_type(scale->dtype))
		return ev_fail(c, "y_scale: unsupported dtype %s", dtype_name(scale->dtype));
	int odt = zp ? zp->dtype : DT_UINT8;
	if (!zp && c->opset >= 21) {
		int64_t od = ev_attr_int(c, "output_dtype", 0);
		if (od)
			odt = (int)od;
	}
	if (!q_int_type(odt) || odt == DT_INT64 || odt == DT_UINT32)
		return ev_fail(c, "output dtype %s is not supported (integer types up to 32 bits only)", dtype_name(odt));
	QMap q;
	if (!q_map(c, x, scale, zp, &q))
		return false;
	EvValue *y = nn_new(c, odt, x->rank, x->dims);
	if (!y)
		return false;
	/* the quotient has x's float type (int32 x divides in the scale's type) */
	int qt = nn_is_float_type(x->dtype) ? x->dtype : scale->dtype;
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t k = q_index(&q, i);
		double v;
		if (qt == DT_DOUBLE)
			v = ev_get_f(x, i) / ev_get_f(scale, k);
		else
			v = q_round_to(q_getf(x, i) / q_getf(scale, k), qt);
		v = nearbyint(v);
		if (zp)
			v += (double)ev_get_i(zp, k);
		ev_set_i(y, i, q_saturate(v, odt));
	}
	out[0] = y;
	return true;
}

/* ---- DequantizeLinear ----------------------------------------------------- */

static bool run_dequantize(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *scale = nin > 1 ? in[1] : NULL, *zp = nin > 2 ? in[2] : NULL;
	if (!q_tensor(c, x, "x") || !q_tensor(c, scale, "x_scale"))
		return false;
	if (zp && zp->kind != EV_TENSOR)
		zp = NULL;
	if (!q_int_type(x->dtype) || x->dtype == DT_INT64 || x->dtype == DT_UINT32)
		return ev_fail(c, "x: unsupported dtype %s", dtype_name(x->dtype));
	if (!nn_is_float_type(scale->dtype))
		return ev_fail(c, "x_scale: unsupported dtype %s", dtype_name(scale->dtype));
	if (zp && zp->dtype != x->dtype)
		return ev_fail(c, "zero point type %s differs from x's %s", dtype_name(zp->dtype), dtype_name(x->dtype));
	QMap q;
	if (!q_map(c, x, scale, zp, &q))
		return false;
	EvValue *y = nn_new(c, scale->dtype, x->rank, x->dims);
	if (!y)
		return false;
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t k = q_index(&q, i);
		if (scale->dtype == DT_DOUBLE) {
			double d = (double)ev_get_i(x, i) - (zp ? (double)ev_get_i(zp, k) : 0.0);
			ev_set_f(y, i, d * ev_get_f(scale, k));
		} else {
			float d = (float)ev_get_i(x, i) - (zp ? (float)ev_get_i(zp, k) : 0.0f);
			float r = d * q_getf(scale, k);
			if (y->dtype == DT_FLOAT)
				((float *)y->data)[i] = r;
			else
				ev_set_f(y, i, r);
		}
	}
	out[0] = y;
	return true;
}

/* ---- DynamicQuantizeLinear ------------------------------------------------ */

/* uint8 quantization over [min(0, min x), max(0, max x)], all in float32 as
 * the ONNX function body computes it. */
static bool run_dynquant(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0];
	if (!q_tensor(c, x, "x"))
		return false;
	if (x->dtype != DT_FLOAT)
		return ev_fail(c, "x: unsupported dtype %s", dtype_name(x->dtype));
	const float *xv = x->data;
	float lo = 0, hi = 0;
	for (int64_t i = 0; i < x->numel; i++) {
		if (xv[i] < lo)
			lo = xv[i];
		if (xv[i] > hi)
			hi = xv[i];
	}
	float scale = (hi - lo) / 255.0f;
	float izp = 0.0f - lo / scale;
	int64_t zp = q_saturate(izp, DT_UINT8);
	int64_t one = 1;
	EvValue *y = nn_new(c, DT_UINT8, x->rank, x->dims);
	EvValue *ys = y ? nn_new(c, DT_FLOAT, 0, &one) : NULL;
	EvValue *yz = ys ? nn_new(c, DT_UINT8, 0, &one) : NULL;
	if (!yz) {
		ev_unref(y);
		ev_unref(ys);
		return false;
	}
	uint8_t *yv = y->data;
	for (int64_t i = 0; i < x->numel; i++)
		yv[i] = (uint8_t)q_saturate((double)nearbyintf(xv[i] / scale) + (double)zp, DT_UINT8);
	*(float *)ys->data = scale;
	*(uint8_t *)yz->data = (uint8_t)zp;
	out[0] = y;
	if (nout > 1)
		out[1] = ys;
	else
		ev_unref(ys);
	if (nout > 2)
		out[2] = yz;
	else
		ev_unref(yz);
	return true;
}

/* ---- integer convolution ---------------------------------------------------- */

/* acc[n][m][out...] = sum over (c, k...) of xs * ws, where xs is x minus its
 * zero point (0 in the padding) and ws is w minus its zero point (per output
 * channel when w_zp is 1-D).  Returns a malloc'd int64 buffer, or NULL after
 * ev_fail. */
static int64_t *iconv(EvCtx *c, const EvValue *x, const EvValue *xzp, const EvValue *w, const EvValue *wzp,
                      NnWindow *win, int64_t *odims)
{
	if (x->rank < 3 || w->rank != x->rank) {
		ev_fail(c, "x (rank %d) and w (rank %d) must have the same rank >= 3", x->rank, w->rank);
		return NULL;
	}
	int64_t group = ev_attr_int(c, "group", 1);
	int64_t nb = x->dims[0], cin = x->dims[1], m = w->dims[0], cg = w->dims[1];
	if (group < 1 || cin != cg * group || m % group != 0) {
		ev_fail(c, "channels do not fit: x has %lld, w %lld x %lld, group %lld", (long long)cin, (long long)m,
		        (long long)cg, (long long)group);
		return NULL;
	}
	int64_t k[EV_MAX_RANK];
	int ns = x->rank - 2, cnt;
	const int64_t *ks = ev_attr_ints(c, "kernel_shape", &cnt);
	for (int i = 0; i < ns; i++) {
		k[i] = w->dims[i + 2];
		if (ks && cnt == ns && ks[i] != k[i]) {
			ev_fail(c, "kernel_shape disagrees with w");
			return NULL;
		}
	}
	if (!nn_window(c, x, k, false, win))
		return NULL;
	if (xzp && xzp->numel != 1) {
		ev_fail(c, "x zero point must be a scalar");
		return NULL;
	}
	if (wzp && wzp->numel != 1 && wzp->numel != m) {
		ev_fail(c, "w zero point has %lld elements for %lld output channels", (long long)wzp->numel, (long long)m);
		return NULL;
	}
	odims[0] = nb;
	odims[1] = m;
	for (int i = 0; i < ns; i++)
		odims[i + 2] = win->out[i];
	int64_t osp = nn_prod(win->out, ns), isp = nn_prod(win->in, ns), ksz = nn_prod(k, ns);
	int64_t mg = m / group, rows = cg * ksz;
	int64_t xz = xzp ? ev_get_i(xzp, 0) : 0;
	/* weights minus zero points, [m][cg*ksz] */
	int64_t *wv = nn_alloc(sizeof(int64_t) * (size_t)(m * rows));
	for (int64_t o = 0; o < m; o++)
		for (int64_t r = 0; r < rows; r++)
			wv[o * rows + r] = ev_get_i(w, o * rows + r) - (wzp ? ev_get_i(wzp, wzp->numel == 1 ? 0 : o) : 0);
	int64_t *xv = nn_alloc(sizeof(int64_t) * (size_t)(x->numel ? x->numel : 1));
	for (int64_t i = 0; i < x->numel; i++)
		xv[i] = ev_get_i(x, i) - xz;
	/* im2col: col[r][p] for one (n, group) */
	int64_t *col = nn_alloc(sizeof(int64_t) * (size_t)(rows * osp > 0 ? rows * osp : 1));
	int64_t *acc = calloc((size_t)(nb * m * osp > 0 ? nb * m * osp : 1), sizeof(int64_t));
	if (!acc)
		ev_out_of_memory();
	for (int64_t n = 0; n < nb; n++)
		for (int64_t g = 0; g < group; g++) {
			for (int64_t r = 0; r < rows; r++) {
				int64_t ch = g * cg + r / ksz, kk = r % ksz;
				int64_t kidx[EV_MAX_RANK];
				for (int d = ns - 1; d >= 0; d--) {
					kidx[d] = kk % k[d];
					kk /= k[d];
				}
				const int64_t *xc = xv + (n * cin + ch) * isp;
				for (int64_t p = 0; p < osp; p++) {
					int64_t pp = p, off = 0;
					bool inside = true;
					for (int d = ns - 1; d >= 0; d--) {
						int64_t od = pp % win->out[d];
						pp /= win->out[d];
						int64_t id = od * win->s[d] - win->pb[d] + kidx[d] * win->d[d];
						if (id < 0 || id >= win->in[d])
							inside = false;
						off = off + id * nn_prod(win->in + d + 1, ns - d - 1);
					}
					col[r * osp + p] = inside ? xc[off] : 0;
				}
			}
			for (int64_t o = g * mg; o < (g + 1) * mg; o++) {
				int64_t *a = acc + (n * m + o) * osp;
				const int64_t *wr = wv + o * rows;
				for (int64_t r = 0; r < rows; r++) {
					int64_t wk = wr[r];
					if (!wk)
						continue;
					const int64_t *cr = col + r * osp;
					for (int64_t p = 0; p < osp; p++)
						a[p] += wk * cr[p];
				}
			}
		}
	free(wv);
	free(xv);
	free(col);
	return acc;
}

static bool int8_input(EvCtx *c, const EvValue *v, const char *what)
{
	if (!q_tensor(c, v, what))
		return false;
	if (v->dtype != DT_INT8 && v->dtype != DT_UINT8)
		return ev_fail(c, "%s: unsupported dtype %s", what, dtype_name(v->dtype));
	return true;
}

static bool run_conv_integer(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *w = nin > 1 ? in[1] : NULL;
	const EvValue *xzp = nin > 2 ? in[2] : NULL, *wzp = nin > 3 ? in[3] : NULL;
	if (!int8_input(c, x, "x") || !int8_input(c, w, "w"))
		return false;
	NnWindow win;
	int64_t od[EV_MAX_RANK];
	int64_t *acc = iconv(c, x, xzp, w, wzp, &win, od);
	if (!acc)
		return false;
	EvValue *y = nn_new(c, DT_INT32, x->rank, od);
	if (!y) {
		free(acc);
		return false;
	}
	int32_t *yv = y->data;
	for (int64_t i = 0; i < y->numel; i++)
		yv[i] = (int32_t)(uint32_t)acc[i];
	free(acc);
	out[0] = y;
	return true;
}

/* y = saturate(round(acc * (x_scale * w_scale / y_scale)) + y_zero_point):
 * the multiplier is a float32 expression, the product with the int32
 * accumulator is taken in double (numpy promotes int32 * float32 so). */
static bool run_qlinear_conv(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	static const char *names[] = {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
	                              "y_zero_point"};
	for (int i = 0; i < 8; i++)
		if (i != 7 && i != 2 && i != 5 && !q_tensor(c, i < nin ? in[i] : NULL, names[i]))
			return false;
	const EvValue *x = in[0], *xs = in[1], *xzp = nin > 2 ? in[2] : NULL, *w = in[3], *ws = in[4];
	const EvValue *wzp = nin > 5 ? in[5] : NULL, *ys = in[6], *yzp = nin > 7 ? in[7] : NULL;
	const EvValue *b = nin > 8 ? in[8] : NULL;
	if (!int8_input(c, x, "x") || !int8_input(c, w, "w"))
		return false;
	if (xs->numel != 1 || ys->numel != 1)
		return ev_fail(c, "x_scale and y_scale must be scalars");
	NnWindow win;
	int64_t od[EV_MAX_RANK];
	int64_t *acc = iconv(c, x, xzp, w, wzp, &win, od);
	if (!acc)
		return false;
	int64_t m = od[1], osp = nn_prod(od + 2, x->rank - 2);
	if ((ws->numel != 1 && ws->numel != m) || (b && b->numel != m)) {
		free(acc);
		return ev_fail(c, "w_scale or B does not match %lld output channels", (long long)m);
	}
	int odt = yzp ? yzp->dtype : x->dtype;
	EvValue *y = nn_new(c, odt, x->rank, od);
	if (!y) {
		free(acc);
		return false;
	}
	float xsf = q_getf(xs, 0), ysf = q_getf(ys, 0);
	double yz = yzp ? (double)ev_get_i(yzp, 0) : 0.0;
	for (int64_t n = 0; n < od[0]; n++)
		for (int64_t o = 0; o < m; o++) {
			float mul = xsf * q_getf(ws, ws->numel == 1 ? 0 : o) / ysf;
			int64_t bias = b ? ev_get_i(b, o) : 0;
			for (int64_t p = 0; p < osp; p++) {
				int64_t i = (n * m + o) * osp + p;
				int32_t a = (int32_t)(uint32_t)(acc[i] + bias);
				ev_set_i(y, i, q_saturate(nearbyint((double)a * (double)mul) + yz, odt));
			}
		}
	free(acc);
	out[0] = y;
	return true;
}

const EvKernel ev_kernels_quant[] = {
	EV_KERNEL(QuantizeLinear, run_quantize, NN_BIT(DT_FLOAT) | NN_BIT(DT_FLOAT16) | NN_BIT(DT_BFLOAT16) | NN_BIT(DT_INT32) | Q_INTS),
	EV_KERNEL(DequantizeLinear, run_dequantize, Q_INTS | NN_FLOATS),
	EV_KERNEL(DynamicQuantizeLinear, run_dynquant, NN_BIT(DT_FLOAT) | NN_BIT(DT_UINT8)),
	EV_KERNEL(ConvInteger, run_conv_integer, NN_BIT(DT_INT8) | NN_BIT(DT_UINT8) | NN_BIT(DT_INT32)),
	EV_KERNEL(QLinearConv, run_qlinear_conv, NN_BIT(DT_INT8) | NN_BIT(DT_UINT8)),
	{0},
};
