/* pool.c - pooling kernels: MaxPool (with its Indices output), AveragePool,
 * LpPool and their Global forms, over 1-D to N-D spatial dims.
 *
 * The window geometry (strides, dilations, pads, auto_pad, ceil_mode) comes
 * from nn_window in nn_util.h, shared with Conv.  Padding never takes part in
 * a max; for averages it counts only with count_include_pad, and never past
 * the end padding (a ceil_mode window that overhangs it), as ONNX Runtime and
 * PyTorch do.  Sums run over the window in row-major order, in float for
 * float32 (and float16/bfloat16, rounded at the end), in double for float64.
 * MaxPool's int8/uint8 go through float, where max is exact.
 *
 * NaN wins a max (as in numpy).  ONNX Runtime's float32 max pools start from
 * -FLT_MAX and take a value only when it is greater, so a float32 MaxPool
 * without Indices, or GlobalMaxPool, whose window holds nothing above -inf
 * gives -FLT_MAX there; graft does the same (ORT's NaN handling depends on
 * the window's length and a NaN's position, so there graft keeps numpy's
 * rule; docs/evaluator.md).
 *
 * The typed core is written once and compiled twice: this file includes
 * itself with NN_T = float, then with NN_T = double (the part after #else). */
#ifndef NN_T

#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum PoolKind { POOL_MAX, POOL_AVG, POOL_LP } PoolKind;

/* One pooling problem: planes (N*C) of the window geometry, plus options. */
typedef struct PoolGeom {
	NnWindow w;
	int64_t planes;
	PoolKind kind;
	bool include_pad;       /* AveragePool count_include_pad */
	int64_t p;              /* LpPool exponent */
	bool col_major;         /* MaxPool storage_order = 1, for Indices */
	bool with_indices;      /* MaxPool has its Indices output (ORT runs another kernel) */
} PoolGeom;

#define NN_T float
#define F(name) name##_f32
#include "pool.c"
#undef NN_T
#undef F
#define NN_T double
#define F(name) name##_f64
#include "pool.c"
#undef NN_T
#undef F

static bool pool_run(EvCtx *c, PoolGeom *g, const EvValue *x, EvValue **out, int nout)
{
	int64_t dims[EV_MAX_RANK] = {x->dims[0], x->dims[1]};
	memcpy(dims + 2, g->w.out, sizeof(int64_t) * (size_t)g->w.n);
	g->planes = x->dims[0] * x->dims[1];
	EvValue *y = nn_new(c, x->dtype, x->rank, dims);
	if (!y)
		return false;
	EvValue *idx = NULL;
	if (g->kind == POOL_MAX && nout > 1 && nn_want_output(c, 1)) {
		if (!(idx = nn_new(c, DT_INT64, x->rank, dims))) {
			ev_unref(y);
			return false;
		}
	}
	if (x->dtype == DT_DOUBLE) {
		pool_core_f64(g, x->data, y->data, idx ? idx->data : NULL);
	} else {
		const float *xv = nn_f32_view(x);
		float *yv = nn_f32_out(y);
		pool_core_f32(g, xv, yv, idx ? idx->data : NULL);
		/* ORT's float32 max pools without Indices: -inf windows give -FLT_MAX */
		if (g->kind == POOL_MAX && x->dtype == DT_FLOAT && !g->with_indices)
			for (int64_t i = 0; i < y->numel; i++)
				if (yv[i] == -INFINITY)
					yv[i] = -FLT_MAX;
		nn_f32_commit(y, yv);
		nn_f32_release(x, xv);
	}
	out[0] = y;
	if (nout > 1)
		out[1] = idx;
	return true;
}

static bool pool_dtype_ok(EvCtx *c, const EvValue *x, bool ints)
{
	if (!x)
		return ev_fail(c, "needs input X");
	if (nn_is_float_type(x->dtype) || (ints && (x->dtype == DT_INT8 || x->dtype == DT_UINT8)))
		return true;
	return ev_fail(c, "unsupported dtype %s", dtype_name(x->dtype));
}

/* LpPool's p: an int from opset 2, a float in opset 1. */
static int64_t lp_exponent(EvCtx *c)
{
	const IrAttr *a = ev_attr(c, "p");
	if (a && a->type == ATTR_FLOAT)
		return (int64_t)a->f;
	return ev_attr_int(c, "p", 2);
}

/* MaxPool, AveragePool, LpPool: kernel_shape is required. */
static bool pool_windowed(EvCtx *c, EvValue **in, EvValue **out, int nout, PoolKind kind)
{
	const EvValue *x = in[0];
	if (!pool_dtype_ok(c, x, kind == POOL_MAX))
		return false;
	int nk;
	const int64_t *k = ev_attr_ints(c, "kernel_shape", &nk);
	if (!k || nk != x->rank - 2)
		return ev_fail(c, "kernel_shape must give %d extents", x->rank - 2);
	PoolGeom g = {.kind = kind};
	if (!nn_window(c, x, k, ev_attr_int(c, "ceil_mode", 0) != 0, &g.w))
		return false;
	g.include_pad = ev_attr_int(c, "count_include_pad", 0) != 0;
	g.p = lp_exponent(c);
	g.col_major = ev_attr_int(c, "storage_order", 0) != 0;
	g.with_indices = nn_want_output(c, 1);
	if (kind == POOL_LP && g.p < 1)
		return ev_fail(c, "p must be positive");
	return pool_run(c, &g, x, out, nout);
}

static bool run_maxpool(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return pool_windowed(c, in, out, nout, POOL_MAX);
}

static bool run_averagepool(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return pool_windowed(c, in, out, nout, POOL_AVG);
}

static bool run_lppool(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return pool_windowed(c, in, out, nout, POOL_LP);
}

/* Global pools: one window covering every spatial dim. */
static bool pool_global(EvCtx *c, EvValue **in, EvValue **out, PoolKind kind)
{
	const EvValue *x = in[0];
	if (!pool_dtype_ok(c, x, false))
		return false;
	if (x->rank < 2)
		return ev_fail(c, "input must have rank >= 2, got %d", x->rank);
	PoolGeom g = {.kind = kind, .p = lp_exponent(c)};
	g.w.n = x->rank - 2;
	for (int i = 0; i < g.w.n; i++) {
		g.w.in[i] = g.w.k[i] = x->dims[i + 2];
		g.w.s[i] = g.w.d[i] = g.w.out[i] = 1;
		g.w.pb[i] = g.w.pe[i] = 0;
	}
	if (kind == POOL_LP && g.p < 1)
		return ev_fail(c, "p must be positive");
	return pool_run(c, &g, x, out, 1);
}

static bool run_global_averagepool(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return pool_global(c, in, out, POOL_AVG);
}

static bool run_global_maxpool(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return pool_global(c, in, out, POOL_MAX);
}

static bool run_global_lppool(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return pool_global(c, in, out, POOL_LP);
}

const EvKernel ev_kernels_pool[] = {
	EV_KERNEL(MaxPool, run_maxpool, NN_FLOATS | NN_BIT(DT_INT8) | NN_BIT(DT_UINT8)),
	EV_KERNEL(AveragePool, run_averagepool, NN_FLOATS),
	EV_KERNEL(LpPool, run_lppool, NN_FLOATS),
	EV_KERNEL(GlobalAveragePool, run_global_averagepool, NN_FLOATS),
	EV_KERNEL(GlobalMaxPool, run_global_maxpool, NN_FLOATS),
	EV_KERNEL(GlobalLpPool, run_global_lppool, NN_FLOATS),
	{0},
};

#else /* ---- typed core: NN_T is float or double ------------------------- */

#include <tgmath.h>

/* Every output of every plane: walk the window's taps in row-major order. */
static void F(pool_core)(const PoolGeom *g, const NN_T *x, NN_T *y, int64_t *idx)
{
	const NnWindow *w = &g->w;
	int n = w->n;
	int64_t pin = nn_prod(w->in, n), pout = nn_prod(w->out, n), kprod = nn_prod(w->k, n);
	int64_t oidx[EV_MAX_RANK], kidx[EV_MAX_RANK], cm[EV_MAX_RANK];
	/* column-major strides of the spatial dims, for storage_order = 1 */
	for (int64_t d = 0, s = 1; d < n; d++) {
		cm[d] = s;
		s *= w->in[d];
	}
	for (int64_t pl = 0; pl < g->planes; pl++) {
		const NN_T *xp = x + pl * pin;
		memset(oidx, 0, sizeof oidx);
		for (int64_t o = 0; o < pout; o++) {
			NN_T acc = g->kind == POOL_MAX ? -INFINITY : 0;
			int64_t best = -1, count = 0;
			memset(kidx, 0, sizeof kidx);
			for (int64_t kp = 0; kp < kprod; kp++) {
				bool inside = true, padded = true;
				int64_t off = 0, cmoff = 0;
				for (int d = 0; d < n; d++) {
					int64_t i = oidx[d] * w->s[d] - w->pb[d] + kidx[d] * w->d[d];
					if (i < 0 || i >= w->in[d])
						inside = false;
					if (i >= w->in[d] + w->pe[d])
						padded = false; /* past the end padding: ceil_mode overhang */
					off = off * w->in[d] + i;
					cmoff += i * cm[d];
				}
				if (inside) {
					NN_T v = xp[off];
					if (g->kind == POOL_MAX) {
						/* the first maximum wins; NaN propagates, as in numpy */
						if (best < 0 || v > acc || (isnan(v) && !isnan(acc))) {
							acc = v;
							best = g->col_major ? cmoff : off;
						}
					} else if (g->kind == POOL_AVG) {
						acc = acc + v;
					} else if (g->p == 1) {
						acc = acc + fabs(v);
					} else if (g->p == 2) {
						acc = acc + v * v;
					} else {
						acc = acc + pow(fabs(v), (NN_T)g->p);
					}
					count++;
				} else if (padded && g->include_pad) {
					count++;
				}
				for (int d = n - 1; d >= 0; d--) {
					if (++kidx[d] < w->k[d])
						break;
					kidx[d] = 0;
				}
			}
			if (g->kind == POOL_AVG)
				acc = count ? acc / (NN_T)count : (NN_T)NAN;
			else if (g->kind == POOL_LP)
				acc = g->p == 1 ? acc : g->p == 2 ? sqrt(acc) : pow(acc, (NN_T)1 / (NN_T)g->p);
			y[pl * pout + o] = acc;
			if (idx)
				idx[pl * pout + o] = best < 0 ? -1 : pl * pin + best;
			for (int d = n - 1; d >= 0; d--) {
				if (++oidx[d] < w->out[d])
					break;
				oidx[d] = 0;
			}
		}
	}
}

#endif
