/* reduce.c - reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin,
 * ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
 * ReduceSumSquare, plus ArgMax, ArgMin and CumSum.
 *
 * A reduction folds each group of elements (those that differ only along the
 * reduced axes) in row-major order, left to right.  float32 accumulates in
 * float (float16 and bfloat16 in float32, rounded once at the end), float64
 * in double; integers in 64-bit two's complement, wrapping.  Reducing over no
 * axes (noop_with_empty_axes with empty axes) returns the input for Sum, Mean,
 * Max, Min and Prod (as the spec says, so -0 stays -0) and applies the others'
 * elementwise part (x*x, |x|, log x ...), as ONNX's reference does; reducing an empty
 * set gives the op's identity (0, 1, -inf for Max and LogSum(Exp), +inf for
 * Min, the type's extremes for integers; Mean gives 0/0).  ReduceLogSumExp
 * shifts by the group's maximum, as ONNX's reference and Runtime do, so large
 * inputs do not overflow.
 *
 * The typed core is written once and compiled twice: this file includes
 * itself with NN_T = float, then with NN_T = double (the part after #else). */
#ifndef NN_T

#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum RedOp {
	R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ
} RedOp;

/* Where each input element's group lands in the output. */
typedef struct RedPlan {
	int rank;
	int64_t dims[EV_MAX_RANK];      /* input shape */
	int64_t ostr[EV_MAX_RANK];      /* output stride per input dim, 0 along reduced dims */
	int64_t numel, nout, count;     /* input elements, groups, elements per group */
} RedPlan;

/* Visit the input in row-major order, giving each element's group. */
#define RED_FOREACH(p, i, o, body)                                              \
	do {                                                                      \
		int64_t idx_[EV_MAX_RANK] = {0}, o = 0;                               \
		for (int64_t i = 0; i < (p)->numel; i++) {                            \
			body;                                                             \
			for (int d_ = (p)->rank - 1; d_ >= 0; d_--) {                     \
				o += (p)->ostr[d_];                                           \
				if (++idx_[d_] < (p)->dims[d_])                               \
					break;                                                    \
				o -= (p)->ostr[d_] * (p)->dims[d_];                           \
				idx_[d_] = 0;                                                 \
			}                                                                 \
		}                                                                     \
	} while (0)

#define NN_T float
#define F(name) name##_f32
#include "reduce.c"
#undef NN_T
#undef F
#define NN_T double
#define F(name) name##_f64
#include "reduce.c"
#undef NN_T
#undef F

/* ---- integer reductions --------------------------------------------------------- */

static void int_limits(int dt, int64_t *lo, uint64_t *hi)
{
	int bits = dtype_bits(dt);
	if (dt == DT_BOOL) {
		*lo = 0;
		*hi = 1;
	} else if (ev_is_unsigned_int(dt)) {
		*lo = 0;
		*hi = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
	} else {
		*lo = bits >= 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
		*hi = bits >= 64 ? (uint64_t)INT64_MAX : (UINT64_C(1) << (bits - 1)) - 1;
	}
}

static void reduce_int(RedOp op, const RedPlan *p, const EvValue *x, EvValue *y)
{
	bool uns = ev_is_unsigned_int(x->dtype);
	uint64_t *acc = nn_alloc(sizeof(uint64_t) * (size_t)(p->nout + 1));
	double *facc = nn_alloc(sizeof(double) * (size_t)(p->nout + 1));
	int64_t lo;
	uint64_t hi;
	int_limits(x->dtype, &lo, &hi);
	for (int64_t o = 0; o < p->nout; o++) {
		acc[o] = op == R_PROD ? 1 : op == R_MAX ? (uint64_t)lo : op == R_MIN ? hi : 0;
		facc[o] = op == R_LOGSUMEXP ? -INFINITY : 0;
	}
	if (op == R_LOGSUMEXP && !uns) {
		/* as ONNX Runtime computes it for int32 and int64 (its only
		 * integer kernels): exp(x - max) of an integer is 1 where x is the
		 * maximum and truncates to 0 elsewhere, so log(how many maxima) +
		 * max, in double, saturated to the type (an empty group: its
		 * minimum).  The double path below put 2^63 (INT64_MAX rounded)
		 * out of range, where ORT saturates (make difftest) */
		int64_t *mx = nn_alloc(sizeof(int64_t) * (size_t)(p->nout + 1));
		for (int64_t o = 0; o < p->nout; o++) {
			mx[o] = lo;
			acc[o] = 0;
		}
		RED_FOREACH(p, i, o, {
			int64_t v = ev_get_i(x, i);
			if (v > mx[o])
				mx[o] = v;
		});
		RED_FOREACH(p, i, o, {
			if (ev_get_i(x, i) == mx[o])
				acc[o]++;
		});
		for (int64_t o = 0; o < p->nout; o++) {
			double r = log((double)acc[o]) + (double)mx[o];
			ev_set_i(y, o, !p->count || r <= (double)lo ? lo : r >= (double)hi ? (int64_t)hi : (int64_t)r);
		}
		free(mx);
	} else if (op == R_LOGSUMEXP) {
		/* max first, then log(sum(exp(x - max))) + max, in double */
		RED_FOREACH(p, i, o, {
			double v = uns ? (double)ev_get_u(x, i) : (double)ev_get_i(x, i);
			if (v > facc[o])
				facc[o] = v;
		});
		double *sum = calloc((size_t)p->nout + 1, sizeof(double));
		if (!sum)
			ev_out_of_memory();
		RED_FOREACH(p, i, o, {
			double v = uns ? (double)ev_get_u(x, i) : (double)ev_get_i(x, i);
			sum[o] += exp(v - facc[o]);
		});
		for (int64_t o = 0; o < p->nout; o++)
			ev_set_f_as_ort(y, o, p->count ? log(sum[o]) + facc[o] : -INFINITY);
		free(sum);
	} else {
		RED_FOREACH(p, i, o, {
			uint64_t u = uns ? ev_get_u(x, i) : (uint64_t)ev_get_i(x, i);
			int64_t s = (int64_t)u;
			switch (op) {
			case R_SUM: case R_MEAN: case R_LOGSUM: acc[o] += u; break;
			case R_PROD: acc[o] *= u; break;
			case R_SUMSQ: case R_L2: acc[o] += u * u; break;
			case R_L1: acc[o] += uns || s >= 0 ? u : (uint64_t)0 - u; break;
			case R_MAX: if (uns ? u > acc[o] : s > (int64_t)acc[o]) acc[o] = u; break;
			case R_MIN: if (uns ? u < acc[o] : s < (int64_t)acc[o]) acc[o] = u; break;
			default: break;
			}
		});
		for (int64_t o = 0; o < p->nout; o++) {
			double f = uns ? (double)acc[o] : (double)(int64_t)acc[o];
			switch (op) {
			case R_MEAN:
				if (!p->count)
					ev_set_i(y, o, 0);
				else if (uns)
					ev_set_u(y, o, acc[o] / (uint64_t)p->count);
				else
					ev_set_i(y, o, (int64_t)acc[o] / p->count);
				break;
			case R_L2: ev_set_f_as_ort(y, o, sqrt(f)); break;
			case R_LOGSUM: ev_set_f_as_ort(y, o, log(f)); break;
			default:
				if (uns)
					ev_set_u(y, o, acc[o]);
				else
					ev_set_i(y, o, (int64_t)acc[o]);
			}
		}
	}
	free(acc);
	free(facc);
}

/* ---- the Reduce ops ---------------------------------------------------------------- */

/* axes: an input from opset `input_since` (13 for ReduceSum, 18 for the
 * rest), an attribute before. */
static bool reduce_run(EvCtx *c, EvValue **in, int nin, EvValue **out, RedOp op, int input_since)
{
	const EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR)
		return ev_fail(c, "missing input data");
	bool is_float = nn_is_float_type(x->dtype);
	if (!is_float && !ev_is_signed_int(x->dtype) && !ev_is_unsigned_int(x->dtype))
		return ev_fail(c, "unsupported dtype %s", dtype_name(x->dtype));
	if (x->dtype == DT_BOOL && op != R_MAX && op != R_MIN)
		return ev_fail(c, "bool input is only reduced by ReduceMax and ReduceMin");
	int64_t axes[EV_MAX_RANK + 1];
	int na = 0;
	if (c->opset >= input_since) {
		const EvValue *a = nin > 1 ? in[1] : NULL;
		if (a && a->kind == EV_TENSOR) {
			if (a->rank > 1 || a->numel > x->rank)
				return ev_fail(c, "axes must be a 1-D tensor of at most %d values", x->rank);
			for (int64_t i = 0; i < a->numel; i++)
				axes[na++] = ev_get_i(a, i);
		}
	} else {
		int n;
		const int64_t *v = ev_attr_ints(c, "axes", &n);
		if (v) {
			if (n > x->rank)
				return ev_fail(c, "axes has %d values for rank %d", n, x->rank);
			memcpy(axes, v, sizeof(int64_t) * (size_t)n);
			na = n;
		}
	}
	bool reduced[EV_MAX_RANK] = {false};
	if (na == 0) {
		/* empty axes: everything, unless noop_with_empty_axes (which came with the axes input) */
		bool noop = c->opset >= input_since && ev_attr_int(c, "noop_with_empty_axes", 0) != 0;
		for (int d = 0; d < x->rank && !noop; d++)
			reduced[d] = true;
		if (noop && (op == R_SUM || op == R_MEAN || op == R_MAX || op == R_MIN || op == R_PROD)) {
			out[0] = ev_ref(in[0]);
			return true;
		}
	}
	for (int i = 0; i < na; i++) {
		int a;
		if (!ev_axis(c, axes[i], x->rank, &a))
			return false;
		if (reduced[a])
			return ev_fail(c, "axis %lld is repeated", (long long)axes[i]);
		reduced[a] = true;
	}
	bool keep = ev_attr_int(c, "keepdims", 1) != 0;
	RedPlan p = {.rank = x->rank, .numel = x->numel, .nout = 1, .count = 1};
	int64_t odims[EV_MAX_RANK];
	int orank = 0;
	memcpy(p.dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	for (int d = 0; d < x->rank; d++) {
		if (reduced[d]) {
			p.count *= x->dims[d];
			if (keep)
				odims[orank++] = 1;
		} else {
			p.nout *= x->dims[d];
			odims[orank++] = x->dims[d];
		}
	}
	for (int64_t d = x->rank - 1, s = 1; d >= 0; d--) {
		p.ostr[d] = reduced[d] ? 0 : s;
		if (!reduced[d])
			s = (int64_t)((uint64_t)s * (uint64_t)x->dims[d]); /* wraps only when empty */
	}
	EvValue *y = nn_new(c, x->dtype, orank, odims);
	if (!y)
		return false;
	if (x->dtype == DT_DOUBLE) {
		reduce_core_f64(op, &p, x->data, y->data);
	} else if (is_float) {
		const float *xv = nn_f32_view(x);
		float *yv = nn_f32_out(y);
		reduce_core_f32(op, &p, xv, yv);
		nn_f32_commit(y, yv);
		nn_f32_release(x, xv);
	} else {
		reduce_int(op, &p, x, y);
	}
	out[0] = y;
	return true;
}

#define REDUCE_KERNEL(fn, op, since)                                                   \
	static bool fn(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)           \
	{                                                                                  \
		return reduce_run(c, in, nin, out, op, since);                                 \
	}
REDUCE_KERNEL(run_reduce_sum, R_SUM, 13)
REDUCE_KERNEL(run_reduce_mean, R_MEAN, 18)
REDUCE_KERNEL(run_reduce_max, R_MAX, 18)
REDUCE_KERNEL(run_reduce_min, R_MIN, 18)
REDUCE_KERNEL(run_reduce_prod, R_PROD, 18)
REDUCE_KERNEL(run_reduce_l1, R_L1, 18)
REDUCE_KERNEL(run_reduce_l2, R_L2, 18)
REDUCE_KERNEL(run_reduce_log_sum, R_LOGSUM, 18)
REDUCE_KERNEL(run_reduce_log_sum_exp, R_LOGSUMEXP, 18)
REDUCE_KERNEL(run_reduce_sum_square, R_SUMSQ, 18)

/* ---- ArgMax, ArgMin ------------------------------------------------------------------ */

/* Is element i better than element j?  NaN beats everything (numpy's
 * argmax and argmin both return the first NaN). */
static bool arg_better(const EvValue *x, int64_t i, int64_t j, bool max)
{
	if (nn_is_float_type(x->dtype)) {
		double a = ev_get_f(x, i), b = ev_get_f(x, j);
		if (isnan(b))
			return false;
		if (isnan(a))
			return true;
		return max ? a > b : a < b;
	}
	if (ev_is_unsigned_int(x->dtype)) {
		uint64_t a = ev_get_u(x, i), b = ev_get_u(x, j);
		return max ? a > b : a < b;
	}
	int64_t a = ev_get_i(x, i), b = ev_get_i(x, j);
	return max ? a > b : a < b;
}

static bool arg_equal(const EvValue *x, int64_t i, int64_t j)
{
	if (nn_is_float_type(x->dtype)) {
		double a = ev_get_f(x, i), b = ev_get_f(x, j);
		return a == b || (isnan(a) && isnan(b));
	}
	return ev_get_u(x, i) == ev_get_u(x, j);
}

static bool arg_run(EvCtx *c, EvValue **in, EvValue **out, bool max)
{
	const EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR)
		return ev_fail(c, "missing input data");
	if (!nn_is_float_type(x->dtype) && !ev_is_signed_int(x->dtype) && !ev_is_unsigned_int(x->dtype))
		return ev_fail(c, "unsupported dtype %s", dtype_name(x->dtype));
	int axis;
	if (!ev_axis(c, ev_attr_int(c, "axis", 0), x->rank, &axis))
		return false;
	bool keep = ev_attr_int(c, "keepdims", 1) != 0, last = ev_attr_int(c, "select_last_index", 0) != 0;
	int64_t len = x->rank ? x->dims[axis] : 1;
	if (len == 0)
		return ev_fail(c, "cannot take the arg%s of an empty axis", max ? "max" : "min");
	int64_t outer = nn_prod(x->dims, axis), inner = x->rank ? nn_prod(x->dims + axis + 1, x->rank - axis - 1) : 1;
	int64_t odims[EV_MAX_RANK];
	int orank = 0;
	for (int d = 0; d < x->rank; d++)
		if (d != axis)
			odims[orank++] = x->dims[d];
		else if (keep)
			odims[orank++] = 1;
	EvValue *y = nn_new(c, DT_INT64, orank, odims);
	if (!y)
		return false;
	if (y->numel == 0) { /* no 1e9 empty lines to visit */
		out[0] = y;
		return true;
	}
	int64_t *yv = y->data;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t base = o * len * inner + i, best = 0;
			for (int64_t k = 1; k < len; k++) {
				int64_t at = base + k * inner, bat = base + best * inner;
				if (arg_better(x, at, bat, max) || (last && arg_equal(x, at, bat)))
					best = k;
			}
			yv[o * inner + i] = best;
		}
	out[0] = y;
	return true;
}

static bool run_argmax(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return arg_run(c, in, out, true);
}

static bool run_argmin(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return arg_run(c, in, out, false);
}

/* ---- CumSum ------------------------------------------------------------------------- */

static bool run_cumsum(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *ax = nin > 1 ? in[1] : NULL;
	if (!x || !ax)
		return ev_fail(c, "needs inputs x and axis");
	if (ax->numel != 1 || ax->rank > 1)
		return ev_fail(c, "axis must be a scalar");
	bool is_float = nn_is_float_type(x->dtype);
	if (!is_float && !ev_is_signed_int(x->dtype) && (!ev_is_unsigned_int(x->dtype) || x->dtype == DT_BOOL))
		return ev_fail(c, "unsupported dtype %s", dtype_name(x->dtype));
	int axis;
	if (!ev_axis(c, ev_get_i(ax, 0), x->rank, &axis))
		return false;
	bool excl = ev_attr_int(c, "exclusive", 0) != 0, rev = ev_attr_int(c, "reverse", 0) != 0;
	int64_t len = x->rank ? x->dims[axis] : 1;
	int64_t outer = nn_prod(x->dims, axis), inner = x->rank ? nn_prod(x->dims + axis + 1, x->rank - axis - 1) : 1;
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	if (x->numel == 0) { /* no 1e9 empty lines to visit */
		out[0] = y;
		return true;
	}
	if (x->dtype == DT_DOUBLE) {
		cumsum_core_f64(x->data, outer, len, inner, excl, rev, y->data);
	} else if (is_float) {
		const float *xv = nn_f32_view(x);
		float *yv = nn_f32_out(y);
		cumsum_core_f32(xv, outer, len, inner, excl, rev, yv);
		nn_f32_commit(y, yv);
		nn_f32_release(x, xv);
	} else {
		bool uns = ev_is_unsigned_int(x->dtype);
		for (int64_t o = 0; o < outer; o++)
			for (int64_t i = 0; i < inner; i++) {
				uint64_t acc = 0;
				for (int64_t s = 0; s < len; s++) {
					int64_t k = rev ? len - 1 - s : s, at = (o * len + k) * inner + i;
					uint64_t v = uns ? ev_get_u(x, at) : (uint64_t)ev_get_i(x, at);
					if (!excl)
						acc += v;
					if (uns)
						ev_set_u(y, at, acc);
					else
						ev_set_i(y, at, (int64_t)acc);
					if (excl)
						acc += v;
				}
			}
	}
	out[0] = y;
	return true;
}

#define RED_TYPES (NN_FLOATS | NN_SINTS | NN_UINTS)

const EvKernel ev_kernels_reduce[] = {
	EV_KERNEL(ReduceSum, run_reduce_sum, RED_TYPES),
	EV_KERNEL(ReduceMean, run_reduce_mean, RED_TYPES),
	EV_KERNEL(ReduceMax, run_reduce_max, RED_TYPES | NN_BIT(DT_BOOL)),
	EV_KERNEL(ReduceMin, run_reduce_min, RED_TYPES | NN_BIT(DT_BOOL)),
	EV_KERNEL(ReduceProd, run_reduce_prod, RED_TYPES),
	EV_KERNEL(ReduceL1, run_reduce_l1, RED_TYPES),
	EV_KERNEL(ReduceL2, run_reduce_l2, RED_TYPES),
	EV_KERNEL(ReduceLogSum, run_reduce_log_sum, RED_TYPES),
	EV_KERNEL(ReduceLogSumExp, run_reduce_log_sum_exp, RED_TYPES),
	EV_KERNEL(ReduceSumSquare, run_reduce_sum_square, RED_TYPES),
	EV_KERNEL(ArgMax, run_argmax, RED_TYPES),
	EV_KERNEL(ArgMin, run_argmin, RED_TYPES),
	EV_KERNEL(CumSum, run_cumsum, NN_FLOATS | NN_BIT(DT_INT32) | NN_BIT(DT_INT64) | NN_BIT(DT_UINT32) | NN_BIT(DT_UINT64)),
	{0},
};

#else /* ---- typed core: NN_T is float or double ------------------------- */

#include <tgmath.h>

static void F(reduce_core)(RedOp op, const RedPlan *p, const NN_T *x, NN_T *y)
{
	NN_T init = op == R_PROD ? 1 : op == R_MAX ? -INFINITY : op == R_MIN ? INFINITY : 0;
	for (int64_t o = 0; o < p->nout; o++)
		y[o] = init;
	switch (op) {
	case R_SUM: case R_MEAN: case R_LOGSUM:
		RED_FOREACH(p, i, o, y[o] = y[o] + x[i]);
		break;
	case R_PROD:
		RED_FOREACH(p, i, o, y[o] = y[o] * x[i]);
		break;
	case R_SUMSQ: case R_L2:
		RED_FOREACH(p, i, o, y[o] = y[o] + x[i] * x[i]);
		break;
	case R_L1:
		RED_FOREACH(p, i, o, y[o] = y[o] + fabs(x[i]));
		break;
	case R_MAX: /* NaN propagates, as numpy's max */
		RED_FOREACH(p, i, o, if (x[i] > y[o] || isnan(x[i])) y[o] = isnan(y[o]) ? y[o] : x[i]);
		break;
	case R_MIN:
		RED_FOREACH(p, i, o, if (x[i] < y[o] || isnan(x[i])) y[o] = isnan(y[o]) ? y[o] : x[i]);
		break;
	case R_LOGSUMEXP: {
		/* shift by the group's max (0 when that is not finite) */
		NN_T *mx = nn_alloc(sizeof(NN_T) * (size_t)(p->nout + 1));
		for (int64_t o = 0; o < p->nout; o++)
			mx[o] = -INFINITY;
		RED_FOREACH(p, i, o, if (x[i] > mx[o]) mx[o] = x[i]);
		for (int64_t o = 0; o < p->nout; o++)
			if (!isfinite(mx[o]))
				mx[o] = 0;
		RED_FOREACH(p, i, o, y[o] = y[o] + exp(x[i] - mx[o]));
		for (int64_t o = 0; o < p->nout; o++)
			y[o] = p->count ? log(y[o]) + mx[o] : -INFINITY;
		free(mx);
		return;
	}
	}
	for (int64_t o = 0; o < p->nout; o++) {
		if (op == R_MEAN)
			y[o] = y[o] / (NN_T)p->count;
		else if (op == R_L2)
			y[o] = sqrt(y[o]);
		else if (op == R_LOGSUM)
			y[o] = log(y[o]);
	}
}

static void F(cumsum_core)(const NN_T *x, int64_t outer, int64_t len, int64_t inner, bool excl,
                           bool rev, NN_T *y)
{
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			NN_T acc = 0;
			for (int64_t s = 0; s < len; s++) {
				int64_t k = rev ? len - 1 - s : s, at = (o * len + k) * inner + i;
				NN_T v = x[at];
				if (!excl)
					acc = acc + v;
				y[at] = acc;
				if (excl)
					acc = acc + v;
			}
		}
}

#endif
