/* softmax.c - Softmax, LogSoftmax and Hardmax.
 *
 * From opset 13 these act along one axis (default -1).  Before 13 they
 * coerce the input to 2-D at `axis` (default 1): dims [0, axis) make the rows
 * and dims [axis, rank) the one flattened axis they normalize over.
 * Softmax and LogSoftmax follow ONNX's reference step by step: m = max,
 * e = exp(x - m), s = sum(e) left to right; softmax = e / s, log softmax =
 * (x - m) - log(s).  float32 works in float (float16/bfloat16 widened to
 * float32 and rounded at the end), float64 in double.
 *
 * The typed core is written once and compiled twice: this file includes
 * itself with NN_T = float, then with NN_T = double (the part after #else). */
#ifndef NN_T

#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <math.h>
#include <stdlib.h>

typedef enum SoftKind { SOFT_MAX, SOFT_LOGMAX, SOFT_HARDMAX } SoftKind;

#define NN_T float
#define F(name) name##_f32
#include "softmax.c"
#undef NN_T
#undef F
#define NN_T double
#define F(name) name##_f64
#include "softmax.c"
#undef NN_T
#undef F

static bool softmax_run(EvCtx *c, EvValue **in, EvValue **out, SoftKind kind)
{
	const EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR)
		return ev_fail(c, "missing input");
	if (!nn_is_float_type(x->dtype))
		return ev_fail(c, "unsupported dtype %s", dtype_name(x->dtype));
	bool coerce = c->opset < 13;
	int axis;
	if (!ev_axis(c, ev_attr_int(c, "axis", coerce ? 1 : -1), x->rank, &axis))
		return false;
	int64_t outer = nn_prod(x->dims, axis), len, inner;
	if (coerce) {
		len = nn_prod(x->dims + axis, x->rank - axis);
		inner = 1;
	} else {
		len = x->rank ? x->dims[axis] : 1;
		inner = x->rank ? nn_prod(x->dims + axis + 1, x->rank - axis - 1) : 1;
	}
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	if (x->numel == 0) { /* [1e6, 0, 1e6]: nothing to do, and no 1e12 empty lines to visit (fuzz-graph) */
		out[0] = y;
		return true;
	}
	if (x->dtype == DT_DOUBLE) {
		softmax_core_f64(kind, x->data, outer, len, inner, y->data);
	} else {
		const float *xv = nn_f32_view(x);
		float *yv = nn_f32_out(y);
		softmax_core_f32(kind, xv, outer, len, inner, yv);
		nn_f32_commit(y, yv);
		nn_f32_release(x, xv);
	}
	out[0] = y;
	return true;
}

static bool run_softmax(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return softmax_run(c, in, out, SOFT_MAX);
}

static bool run_log_softmax(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return softmax_run(c, in, out, SOFT_LOGMAX);
}

static bool run_hardmax(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return softmax_run(c, in, out, SOFT_HARDMAX);
}

const EvKernel ev_kernels_softmax[] = {
	EV_KERNEL(Softmax, run_softmax, NN_FLOATS),
	EV_KERNEL(LogSoftmax, run_log_softmax, NN_FLOATS),
	EV_KERNEL(Hardmax, run_hardmax, NN_FLOATS),
	{0},
};

#else /* ---- typed core: NN_T is float or double ------------------------- */

#include <tgmath.h>

/* Each line of `len` elements, `inner` apart, normalized on its own. */
static void F(softmax_core)(SoftKind kind, const NN_T *x, int64_t outer, int64_t len, int64_t inner, NN_T *y)
{
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			const NN_T *xl = x + o * len * inner + i;
			NN_T *yl = y + o * len * inner + i;
			if (len == 0)
				continue;
			NN_T m = xl[0];
			int64_t arg = 0;
			/* the first maximum; a NaN wins and stays, as in numpy */
			for (int64_t k = 1; k < len && !isnan(m); k++)
				if (xl[k * inner] > m || isnan(xl[k * inner])) {
					m = xl[k * inner];
					arg = k;
				}
			if (kind == SOFT_HARDMAX) {
				for (int64_t k = 0; k < len; k++)
					yl[k * inner] = k == arg ? 1 : 0;
				continue;
			}
			NN_T s = 0;
			for (int64_t k = 0; k < len; k++) {
				NN_T e = exp(xl[k * inner] - m);
				s = s + e;
				if (kind == SOFT_MAX)
					yl[k * inner] = e;
			}
			if (kind == SOFT_MAX) {
				for (int64_t k = 0; k < len; k++)
					yl[k * inner] = yl[k * inner] / s;
			} else {
				NN_T ls = log(s);
				for (int64_t k = 0; k < len; k++)
					yl[k * inner] = (xl[k * inner] - m) - ls;
			}
		}
}

#endif
