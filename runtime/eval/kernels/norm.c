/* norm.c - normalization kernels: BatchNormalization (inference, and
 * training_mode's batch statistics), InstanceNormalization,
 * LayerNormalization, RMSNormalization, GroupNormalization, LRN, MeanVarianceNormalization,
 * and Dropout (an identity outside training).
 *
 * Each kernel follows the arithmetic of ONNX's reference formula step by
 * step (e.g. BatchNormalization is scale * (x - mean) / sqrt(var + eps) + B,
 * evaluated in that order), so the result is what a plain loop over the
 * formula gives.  Means and variances add their elements in row-major order
 * and divide by the count; the variance is the population variance of
 * (x - mean), as numpy's var.  float32 works in float (float16/bfloat16
 * widened to float32, rounded at the end), float64 in double; LayerNorm and
 * GroupNorm work in double when stash_type asks for it.
 *
 * The typed core is written once and compiled twice: this file includes
 * itself with NN_T = float, then with NN_T = double (the part after #else). */
#ifndef NN_T

#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NN_T float
#define F(name) name##_f32
#include "norm.c"
#undef NN_T
#undef F
#define NN_T double
#define F(name) name##_f64
#include "norm.c"
#undef NN_T
#undef F

/* Views of up to 8 tensors in the working type (float or double), and
 * output buffers committed back to each output's dtype. */
typedef struct Work {
	bool f64;
	const EvValue *src[8];
	const void *view[8];
	EvValue *dst[6];
	void *buf[6];
} Work;

static const void *work_in(Work *w, int i, const EvValue *t)
{
	w->src[i] = t;
	if (!t)
		return w->view[i] = NULL;
	return w->view[i] = w->f64 ? (const void *)nn_f64_view(t) : (const void *)nn_f32_view(t);
}

static void *work_out(Work *w, int i, EvValue *t)
{
	w->dst[i] = t;
	if (!t)
		return w->buf[i] = NULL;
	return w->buf[i] = w->f64 ? (void *)nn_f64_out(t) : (void *)nn_f32_out(t);
}

static void work_done(Work *w)
{
	for (int i = 0; i < 8; i++)
		if (w->src[i]) {
			if (w->f64)
				nn_f64_release(w->src[i], w->view[i]);
			else
				nn_f32_release(w->src[i], w->view[i]);
		}
	for (int i = 0; i < 6; i++)
		if (w->dst[i]) {
			if (w->f64)
				nn_f64_commit(w->dst[i], w->buf[i]);
			else
				nn_f32_commit(w->dst[i], w->buf[i]);
		}
}

static bool float_input(EvCtx *c, const EvValue *x, const char *what)
{
	if (!x)
		return ev_fail(c, "missing input %s", what);
	if (x->kind != EV_TENSOR || !nn_is_float_type(x->dtype))
		return ev_fail(c, "input %s: unsupported dtype %s", what, dtype_name(x->dtype));
	return true;
}

/* ---- BatchNormalization ---------------------------------------------------- */

static bool run_batchnorm(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	static const char *names[] = {"X", "scale", "B", "input_mean", "input_var"};
	for (int i = 0; i < 5; i++)
		if (!float_input(c, i < nin ? in[i] : NULL, names[i]))
			return false;
	const EvValue *x = in[0];
	if (x->rank < 2)
		return ev_fail(c, "X must have rank >= 2 (N, C, ...), got %d", x->rank);
	int64_t n = x->dims[0], ch = x->dims[1], sp = n * ch != 0 ? x->numel / (n * ch) : 0;
	/* spatial = 0 (before opset 9): statistics per activation, not per channel */
	bool per_act = in[1]->numel != ch;
	for (int i = 1; i < 5; i++)
		if (in[i]->numel != (per_act ? ch * sp : ch))
			return ev_fail(c, "%s has %lld elements for %lld channels", names[i],
			               (long long)in[i]->numel, (long long)ch);
	bool training;
	if (c->opset >= 14)
		training = ev_attr_int(c, "training_mode", 0) != 0;
	else /* before 14, asking for the statistics outputs meant training */
		training = (c->opset >= 7 || ev_attr_int(c, "is_test", 0) == 0) &&
		           (nn_want_output(c, 1) || nn_want_output(c, 2));
	if (training && per_act)
		return ev_fail(c, "training-mode BatchNormalization with per-activation statistics is not supported");
	float eps = ev_attr_float(c, "epsilon", 1e-5f), momentum = ev_attr_float(c, "momentum", 0.9f);
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	out[0] = y;
	Work w = {.f64 = x->dtype == DT_DOUBLE};
	const void *xv = work_in(&w, 0, x), *sv = work_in(&w, 1, in[1]), *bv = work_in(&w, 2, in[2]);
	const void *mv = work_in(&w, 3, in[3]), *vv = work_in(&w, 4, in[4]);
	void *yv = work_out(&w, 0, y);
	if (!training) {
		if (w.f64)
			bn_apply_f64(xv, n, ch, sp, per_act, sv, bv, mv, vv, eps, yv);
		else
			bn_apply_f32(xv, n, ch, sp, per_act, sv, bv, mv, vv, eps, yv);
		work_done(&w);
		return true;
	}
	/* training: normalize with the batch statistics; outputs 1, 2 are the
	 * running mean and variance, and (before opset 14) 3, 4 the batch ones */
	EvValue *st[4] = {NULL};
	void *stv[4] = {NULL};
	for (int i = 0; i < 4 && i + 1 < nout; i++) {
		st[i] = nn_new(c, in[3 + (i & 1)]->dtype, 1, &ch);
		if (!st[i]) {
			for (int j = 0; j < i; j++)
				ev_unref(st[j]);
			work_done(&w);
			return false;
		}
		out[i + 1] = st[i];
	}
	size_t esz = w.f64 ? sizeof(double) : sizeof(float);
	void *bmean = calloc((size_t)ch + 1, esz), *bvar = calloc((size_t)ch + 1, esz);
	if (!bmean || !bvar)
		ev_out_of_memory();
	for (int i = 0; i < 4; i++)
		stv[i] = st[i] ? work_out(&w, i + 1, st[i]) : NULL;
	if (w.f64) {
		bn_stats_f64(xv, n, ch, sp, bmean, bvar);
		bn_apply_f64(xv, n, ch, sp, false, sv, bv, bmean, bvar, eps, yv);
		bn_running_f64(ch, mv, vv, bmean, bvar, momentum, stv);
	} else {
		bn_stats_f32(xv, n, ch, sp, bmean, bvar);
		bn_apply_f32(xv, n, ch, sp, false, sv, bv, bmean, bvar, eps, yv);
		bn_running_f32(ch, mv, vv, bmean, bvar, momentum, stv);
	}
	free(bmean);
	free(bvar);
	work_done(&w);
	return true;
}

/* ---- InstanceNormalization, GroupNormalization ------------------------------ */

static bool run_instancenorm(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!float_input(c, in[0], "input") || !float_input(c, nin > 1 ? in[1] : NULL, "scale") ||
	    !float_input(c, nin > 2 ? in[2] : NULL, "B"))
		return false;
	const EvValue *x = in[0];
	if (x->rank < 2)
		return ev_fail(c, "input must have rank >= 2, got %d", x->rank);
	int64_t n = x->dims[0], ch = x->dims[1], sp = n * ch != 0 ? x->numel / (n * ch) : 0;
	if (in[1]->numel != ch || in[2]->numel != ch)
		return ev_fail(c, "scale and B must have %lld elements", (long long)ch);
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	out[0] = y;
	if (x->numel == 0)
		return true; /* no channel or no image: nothing to normalize (and no group to divide by) */
	Work w = {.f64 = x->dtype == DT_DOUBLE};
	const void *xv = work_in(&w, 0, x), *sv = work_in(&w, 1, in[1]), *bv = work_in(&w, 2, in[2]);
	void *yv = work_out(&w, 0, y);
	float eps = ev_attr_float(c, "epsilon", 1e-5f);
	/* one group per channel, affine per channel */
	if (w.f64)
		group_norm_f64(xv, n, ch, ch, sp, sv, bv, 1, eps, yv);
	else
		group_norm_f32(xv, n, ch, ch, sp, sv, bv, 1, eps, yv);
	work_done(&w);
	return true;
}

static bool run_groupnorm(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!float_input(c, in[0], "X") || !float_input(c, nin > 1 ? in[1] : NULL, "scale") ||
	    !float_input(c, nin > 2 ? in[2] : NULL, "bias"))
		return false;
	const EvValue *x = in[0];
	if (x->rank < 2)
		return ev_fail(c, "X must have rank >= 2, got %d", x->rank);
	int64_t n = x->dims[0], ch = x->dims[1], sp = n * ch != 0 ? x->numel / (n * ch) : 0;
	int64_t groups = ev_attr_int(c, "num_groups", 0);
	if (groups < 1 || ch % groups)
		return ev_fail(c, "num_groups %lld does not divide %lld channels", (long long)groups, (long long)ch);
	/* opset 18 scales per group; opset 21 per channel */
	int64_t per;
	if (in[1]->numel == ch && in[2]->numel == ch)
		per = 1;
	else if (in[1]->numel == groups && in[2]->numel == groups)
		per = ch / groups;
	else
		return ev_fail(c, "scale and bias must have %lld (channels) or %lld (groups) elements",
		               (long long)ch, (long long)groups);
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	out[0] = y;
	int64_t stash = ev_attr_int(c, "stash_type", DT_FLOAT);
	Work w = {.f64 = x->dtype == DT_DOUBLE || stash == DT_DOUBLE};
	const void *xv = work_in(&w, 0, x), *sv = work_in(&w, 1, in[1]), *bv = work_in(&w, 2, in[2]);
	void *yv = work_out(&w, 0, y);
	float eps = ev_attr_float(c, "epsilon", 1e-5f);
	if (w.f64)
		group_norm_f64(xv, n, ch, groups, sp, sv, bv, per, eps, yv);
	else
		group_norm_f32(xv, n, ch, groups, sp, sv, bv, per, eps, yv);
	work_done(&w);
	return true;
}

/* ---- LayerNormalization ------------------------------------------------------ */

/* Index into a parameter broadcast to the normalized dims [axis, rank) of
 * x, for each of the `cols` positions of a row.  False if the parameter
 * varies along a dim before axis. */
static bool param_index(const EvValue *p, const EvValue *x, int axis, int64_t cols, int64_t *idx)
{
	int64_t bdims[EV_MAX_RANK];
	int rb;
	if (p->rank > x->rank || !ev_broadcast_shape(x->rank, x->dims, p->rank, p->dims, &rb, bdims) ||
	    rb != x->rank || memcmp(bdims, x->dims, sizeof(int64_t) * (size_t)rb))
		return false;
	int64_t st[EV_MAX_RANK];
	ev_broadcast_strides(p->rank, p->dims, x->rank, x->dims, st);
	for (int d = 0; d < axis; d++)
		if (st[d] && x->dims[d] > 1)
			return false;
	int64_t mi[EV_MAX_RANK] = {0};
	for (int64_t j = 0; j < cols; j++) {
		int64_t off = 0;
		for (int d = axis; d < x->rank; d++)
			off += mi[d] * st[d];
		idx[j] = off;
		for (int d = x->rank - 1; d >= axis; d--) {
			if (++mi[d] < x->dims[d])
				break;
			mi[d] = 0;
		}
	}
	return true;
}

static bool run_layernorm(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *sc = nin > 1 ? in[1] : NULL, *b = nin > 2 ? in[2] : NULL;
	if (!float_input(c, x, "X") || !float_input(c, sc, "Scale") || (b && !float_input(c, b, "B")))
		return false;
	int axis;
	if (!ev_axis(c, ev_attr_int(c, "axis", -1), x->rank, &axis))
		return false;
	int64_t rows = nn_prod(x->dims, axis), cols = nn_prod(x->dims + axis, x->rank - axis);
	/* an empty X has nothing to index: its normalized dims may still be
	 * huge ([0, 2^40]: 8 TB of indices once asked for; fuzz-graph) */
	int64_t icols = x->numel ? cols : 0;
	int64_t *sidx = nn_alloc(sizeof(int64_t) * (size_t)icols), *bidx = nn_alloc(sizeof(int64_t) * (size_t)icols);
	if (!param_index(sc, x, axis, icols, sidx) || (b && !param_index(b, x, axis, icols, bidx))) {
		free(sidx);
		free(bidx);
		return ev_fail(c, "Scale and B must broadcast to the normalized dims of X");
	}
	int64_t stash = ev_attr_int(c, "stash_type", DT_FLOAT);
	if (!nn_is_float_type((int)stash)) {
		free(sidx);
		free(bidx);
		return ev_fail(c, "unsupported stash_type %lld", (long long)stash);
	}
	int64_t sdims[EV_MAX_RANK];
	for (int d = 0; d < x->rank; d++)
		sdims[d] = d < axis ? x->dims[d] : 1;
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	EvValue *mean = nout > 1 && nn_want_output(c, 1) ? nn_new(c, (int)stash, x->rank, sdims) : NULL;
	EvValue *inv = nout > 2 && nn_want_output(c, 2) ? nn_new(c, (int)stash, x->rank, sdims) : NULL;
	if (!y || (nout > 1 && nn_want_output(c, 1) && !mean) || (nout > 2 && nn_want_output(c, 2) && !inv)) {
		ev_unref(y);
		ev_unref(mean);
		ev_unref(inv);
		free(sidx);
		free(bidx);
		return false;
	}
	out[0] = y;
	if (nout > 1)
		out[1] = mean;
	if (nout > 2)
		out[2] = inv;
	Work w = {.f64 = x->dtype == DT_DOUBLE || stash == DT_DOUBLE};
	const void *xv = work_in(&w, 0, x), *sv = work_in(&w, 1, sc), *bv = work_in(&w, 2, b);
	void *yv = work_out(&w, 0, y), *mv = work_out(&w, 1, mean), *iv = work_out(&w, 2, inv);
	float eps = ev_attr_float(c, "epsilon", 1e-5f);
	if (w.f64)
		layer_norm_f64(xv, rows, cols, sv, sidx, bv, bidx, eps, yv, mv, iv);
	else
		layer_norm_f32(xv, rows, cols, sv, sidx, bv, bidx, eps, yv, mv, iv);
	work_done(&w);
	free(sidx);
	free(bidx);
	return true;
}

/* ---- RMSNormalization (opset 23) ------------------------------------------------------- */

static bool run_rmsnorm(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *sc = nin > 1 ? in[1] : NULL;
	if (!float_input(c, x, "X") || !float_input(c, sc, "scale"))
		return false;
	int axis;
	if (!ev_axis(c, ev_attr_int(c, "axis", -1), x->rank, &axis))
		return false;
	int64_t rows = nn_prod(x->dims, axis), cols = nn_prod(x->dims + axis, x->rank - axis);
	int64_t icols = x->numel ? cols : 0;   /* as in run_layernorm */
	int64_t *sidx = nn_alloc(sizeof(int64_t) * (size_t)icols);
	if (!param_index(sc, x, axis, icols, sidx)) {
		free(sidx);
		return ev_fail(c, "scale must broadcast to the normalized dims of X");
	}
	int64_t stash = ev_attr_int(c, "stash_type", DT_FLOAT);
	if (!nn_is_float_type((int)stash)) {
		free(sidx);
		return ev_fail(c, "unsupported stash_type %lld", (long long)stash);
	}
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	if (!y) {
		free(sidx);
		return false;
	}
	out[0] = y;
	Work w = {.f64 = x->dtype == DT_DOUBLE || stash == DT_DOUBLE};
	const void *xv = work_in(&w, 0, x), *sv = work_in(&w, 1, sc);
	void *yv = work_out(&w, 0, y);
	float eps = ev_attr_float(c, "epsilon", 1e-5f);
	if (w.f64)
		rms_norm_f64(xv, rows, cols, sv, sidx, eps, yv);
	else
		rms_norm_f32(xv, rows, cols, sv, sidx, eps, yv);
	work_done(&w);
	free(sidx);
	return true;
}

/* ---- LRN ------------------------------------------------------------------------ */

static bool run_lrn(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0];
	if (!float_input(c, x, "X"))
		return false;
	if (x->rank < 2)
		return ev_fail(c, "X must have rank >= 2, got %d", x->rank);
	int64_t size = ev_attr_int(c, "size", 0);
	if (size < 1)
		return ev_fail(c, "size must be positive");
	int64_t n = x->dims[0], ch = x->dims[1], sp = n * ch != 0 ? x->numel / (n * ch) : 0;
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	out[0] = y;
	Work w = {.f64 = x->dtype == DT_DOUBLE};
	const void *xv = work_in(&w, 0, x);
	void *yv = work_out(&w, 0, y);
	float alpha = ev_attr_float(c, "alpha", 1e-4f), beta = ev_attr_float(c, "beta", 0.75f);
	float bias = ev_attr_float(c, "bias", 1.0f);
	if (w.f64)
		lrn_f64(xv, n, ch, sp, size, alpha, beta, bias, yv);
	else
		lrn_f32(xv, n, ch, sp, size, alpha, beta, bias, yv);
	work_done(&w);
	return true;
}

/* ---- MeanVarianceNormalization ----------------------------------------------------- */

static bool run_mvn(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0];
	if (!float_input(c, x, "X"))
		return false;
	static const int64_t def_axes[] = {0, 2, 3};
	int na;
	const int64_t *axes = ev_attr_ints(c, "axes", &na);
	if (!axes) {
		axes = def_axes;
		na = 3;
	}
	bool reduced[EV_MAX_RANK] = {false};
	for (int i = 0; i < na; i++) {
		int a;
		if (!ev_axis(c, axes[i], x->rank, &a))
			return false;
		reduced[a] = true;
	}
	/* group of each element: its index with the reduced dims dropped */
	int64_t *grp = nn_alloc(sizeof(int64_t) * (size_t)x->numel);
	int64_t ngroups = 1, mi[EV_MAX_RANK] = {0};
	for (int d = 0; d < x->rank; d++)
		if (!reduced[d])
			ngroups *= x->dims[d];
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t g = 0;
		for (int d = 0; d < x->rank; d++)
			if (!reduced[d])
				g = g * x->dims[d] + mi[d];
		grp[i] = g;
		for (int d = x->rank - 1; d >= 0; d--) {
			if (++mi[d] < x->dims[d])
				break;
			mi[d] = 0;
		}
	}
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	if (!y) {
		free(grp);
		return false;
	}
	out[0] = y;
	Work w = {.f64 = x->dtype == DT_DOUBLE};
	const void *xv = work_in(&w, 0, x);
	void *yv = work_out(&w, 0, y);
	if (w.f64)
		mvn_f64(xv, x->numel, grp, ngroups, yv);
	else
		mvn_f32(xv, x->numel, grp, ngroups, yv);
	work_done(&w);
	free(grp);
	return true;
}

/* ---- Dropout ---------------------------------------------------------------------- */

/* Outside training Dropout is the identity and its mask all true, except
 * from opset 7 to 11, where ONNX Runtime's mask is all false (the spec's
 * reference says true; docs/evaluator.md: graft follows ORT).  Training
 * with a nonzero ratio draws random numbers: no reference can check it, so
 * it is refused rather than imitated. */
static bool run_dropout(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR)
		return ev_fail(c, "missing input data");
	double ratio = ev_attr_float(c, "ratio", 0.5f);
	bool training = false;
	if (c->opset >= 12) {
		if (nin > 1 && in[1]) {
			if (in[1]->numel != 1)
				return ev_fail(c, "ratio must be a scalar");
			ratio = ev_get_f(in[1], 0);
		}
		if (nin > 2 && in[2]) {
			if (in[2]->numel != 1)
				return ev_fail(c, "training_mode must be a scalar");
			training = ev_get_i(in[2], 0) != 0;
		}
	} else if (c->opset < 7) {
		training = ev_attr_int(c, "is_test", 0) == 0;
	}
	if (training && ratio != 0)
		return ev_fail(c, "training-mode Dropout is random");
	out[0] = ev_ref((EvValue *)x);
	if (nout > 1) {
		/* the mask is bool from opset 10, of the data's type before */
		EvValue *mask = nn_new(c, c->opset >= 10 ? DT_BOOL : x->dtype, x->rank, x->dims);
		if (!mask)
			return false;
		int kept = c->opset >= 7 && c->opset <= 11 ? 0 : 1;
		for (int64_t i = 0; i < mask->numel; i++)
			ev_set_i(mask, i, kept);
		out[1] = mask;
	}
	return true;
}

const EvKernel ev_kernels_norm[] = {
	EV_KERNEL(BatchNormalization, run_batchnorm, NN_FLOATS),
	EV_KERNEL(InstanceNormalization, run_instancenorm, NN_FLOATS),
	EV_KERNEL(LayerNormalization, run_layernorm, NN_FLOATS),
	EV_KERNEL(RMSNormalization, run_rmsnorm, NN_FLOATS),
	EV_KERNEL(GroupNormalization, run_groupnorm, NN_FLOATS),
	EV_KERNEL(LRN, run_lrn, NN_FLOATS),
	EV_KERNEL(MeanVarianceNormalization, run_mvn, NN_FLOATS),
	EV_KERNEL(Dropout, run_dropout, NN_FLOATS),
	{0},
};

#else /* ---- typed core: NN_T is float or double ------------------------- */

#include <tgmath.h>

/* y = scale * (x - mean) / sqrt(var + eps) + B, per channel (or per
 * activation: parameters indexed by channel and spatial position). */
static void F(bn_apply)(const NN_T *x, int64_t n, int64_t ch, int64_t sp, bool per_act,
                        const NN_T *sc, const NN_T *b, const NN_T *mean, const NN_T *var,
                        float eps, NN_T *y)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t c = 0; c < ch; c++) {
			const NN_T *xp = x + (i * ch + c) * sp;
			NN_T *yp = y + (i * ch + c) * sp;
			for (int64_t s = 0; s < sp; s++) {
				int64_t p = per_act ? c * sp + s : c;
				NN_T den = sqrt(var[p] + (NN_T)eps);
				yp[s] = sc[p] * (xp[s] - mean[p]) / den + b[p];
			}
		}
}

/* Batch mean and (population) variance per channel over N and space. */
static void F(bn_stats)(const NN_T *x, int64_t n, int64_t ch, int64_t sp, NN_T *mean, NN_T *var)
{
	NN_T cnt = (NN_T)(n * sp);
	for (int64_t c = 0; c < ch; c++) {
		NN_T sum = 0;
		for (int64_t i = 0; i < n; i++)
			for (int64_t s = 0; s < sp; s++)
				sum = sum + x[(i * ch + c) * sp + s];
		NN_T m = sum / cnt, sq = 0;
		for (int64_t i = 0; i < n; i++)
			for (int64_t s = 0; s < sp; s++) {
				NN_T dlt = x[(i * ch + c) * sp + s] - m;
				sq = sq + dlt * dlt;
			}
		mean[c] = m;
		var[c] = sq / cnt;
	}
}

/* running = input * momentum + batch * (1 - momentum); out[2], out[3]
 * (older opsets) get the batch statistics themselves. */
static void F(bn_running)(int64_t ch, const NN_T *imean, const NN_T *ivar, const NN_T *bmean,
                          const NN_T *bvar, float momentum, void **outs)
{
	NN_T mo = (NN_T)momentum, rest = (NN_T)1 - mo;
	NN_T *rm = outs[0], *rv = outs[1], *sm = outs[2], *sv = outs[3];
	for (int64_t c = 0; c < ch; c++) {
		if (rm)
			rm[c] = imean[c] * mo + bmean[c] * rest;
		if (rv)
			rv[c] = ivar[c] * mo + bvar[c] * rest;
		if (sm)
			sm[c] = bmean[c];
		if (sv)
			sv[c] = bvar[c];
	}
}

/* Normalize each (image, group) span of ch/groups channels, then scale and
 * shift per channel: y = scale * ((x - mean) / sqrt(var + eps)) + bias.
 * Parameter p serves `per` consecutive channels (1: per channel). */
static void F(group_norm)(const NN_T *x, int64_t n, int64_t ch, int64_t groups, int64_t sp,
                          const NN_T *sc, const NN_T *b, int64_t per, float eps, NN_T *y)
{
	int64_t cg = ch / groups, len = cg * sp;
	for (int64_t i = 0; i < n; i++)
		for (int64_t g = 0; g < groups; g++) {
			const NN_T *xp = x + (i * ch + g * cg) * sp;
			NN_T *yp = y + (i * ch + g * cg) * sp;
			NN_T sum = 0, sq = 0;
			for (int64_t j = 0; j < len; j++)
				sum = sum + xp[j];
			NN_T m = sum / (NN_T)len;
			for (int64_t j = 0; j < len; j++) {
				NN_T dlt = xp[j] - m;
				sq = sq + dlt * dlt;
			}
			NN_T den = sqrt(sq / (NN_T)len + (NN_T)eps);
			for (int64_t cc = 0; cc < cg; cc++) {
				int64_t p = (g * cg + cc) / per;
				for (int64_t s = 0; s < sp; s++) {
					int64_t j = cc * sp + s;
					if (per == 1) /* InstanceNormalization's order: scale * (x - mean) / den */
						yp[j] = sc[p] * (xp[j] - m) / den + b[p];
					else
						yp[j] = sc[p] * ((xp[j] - m) / den) + b[p];
				}
			}
		}
}

/* LayerNormalization per row, as ONNX's reference: mean = sum / cols,
 * d = x - mean, var = sum(d * d) / cols, inv = 1 / sqrt(var + eps),
 * y = d * inv * scale + B. */
static void F(layer_norm)(const NN_T *x, int64_t rows, int64_t cols, const NN_T *sc,
                          const int64_t *sidx, const NN_T *b, const int64_t *bidx, float eps,
                          NN_T *y, NN_T *mean_out, NN_T *inv_out)
{
	for (int64_t r = 0; r < rows; r++) {
		const NN_T *xr = x + r * cols;
		NN_T *yr = y + r * cols;
		NN_T sum = 0, sq = 0;
		for (int64_t j = 0; j < cols; j++)
			sum = sum + xr[j];
		NN_T m = sum / (NN_T)cols;
		for (int64_t j = 0; j < cols; j++) {
			NN_T dlt = xr[j] - m;
			sq = sq + dlt * dlt;
		}
		NN_T inv = (NN_T)1 / sqrt(sq / (NN_T)cols + (NN_T)eps);
		for (int64_t j = 0; j < cols; j++) {
			NN_T v = (xr[j] - m) * inv * sc[sidx[j]];
			yr[j] = b ? v + b[bidx[j]] : v;
		}
		if (mean_out)
			mean_out[r] = m;
		if (inv_out)
			inv_out[r] = inv;
	}
}

/* RMSNormalization per row, as ONNX's reference: ms = sum(x * x) / cols,
 * inv = 1 / sqrt(ms + eps), y = x * inv * scale. */
static void F(rms_norm)(const NN_T *x, int64_t rows, int64_t cols, const NN_T *sc,
                        const int64_t *sidx, float eps, NN_T *y)
{
	for (int64_t r = 0; r < rows; r++) {
		const NN_T *xr = x + r * cols;
		NN_T *yr = y + r * cols;
		NN_T sq = 0;
		for (int64_t j = 0; j < cols; j++)
			sq = sq + xr[j] * xr[j];
		NN_T inv = (NN_T)1 / sqrt(sq / (NN_T)cols + (NN_T)eps);
		for (int64_t j = 0; j < cols; j++)
			yr[j] = xr[j] * inv * sc[sidx[j]];
	}
}

/* LRN across channels: y = x / (bias + alpha / size * sum(x^2 over the
 * window of channels))^beta, the window [c - floor((size-1)/2),
 * c + ceil((size-1)/2)] clipped to the channels. */
static void F(lrn)(const NN_T *x, int64_t n, int64_t ch, int64_t sp, int64_t size, float alpha,
                   float beta, float bias, NN_T *y)
{
	int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
	NN_T coef = (NN_T)alpha / (NN_T)size;
	for (int64_t i = 0; i < n; i++)
		for (int64_t c = 0; c < ch; c++) {
			int64_t c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= ch ? ch - 1 : c + hi;
			for (int64_t s = 0; s < sp; s++) {
				NN_T sq = 0;
				for (int64_t k = c0; k <= c1; k++) {
					NN_T v = x[(i * ch + k) * sp + s];
					sq = sq + v * v;
				}
				int64_t at = (i * ch + c) * sp + s;
				y[at] = x[at] / pow((NN_T)bias + coef * sq, (NN_T)beta);
			}
		}
}

/* MeanVarianceNormalization as its function body: (x - E[x]) /
 * (sqrt(E[x^2] - E[x]^2) + 1e-9), means over the group of each element. */
static void F(mvn)(const NN_T *x, int64_t numel, const int64_t *grp, int64_t ngroups, NN_T *y)
{
	NN_T *sum = nn_alloc(sizeof(NN_T) * (size_t)ngroups), *sq = nn_alloc(sizeof(NN_T) * (size_t)ngroups);
	int64_t *cnt = nn_alloc(sizeof(int64_t) * (size_t)ngroups);
	for (int64_t g = 0; g < ngroups; g++) {
		sum[g] = sq[g] = 0;
		cnt[g] = 0;
	}
	for (int64_t i = 0; i < numel; i++) {
		sum[grp[i]] = sum[grp[i]] + x[i];
		sq[grp[i]] = sq[grp[i]] + x[i] * x[i];
		cnt[grp[i]]++;
	}
	for (int64_t g = 0; g < ngroups; g++) {
		NN_T m = sum[g] / (NN_T)cnt[g], m2 = sq[g] / (NN_T)cnt[g];
		sum[g] = m;
		sq[g] = sqrt(m2 - m * m) + (NN_T)1e-9;
	}
	for (int64_t i = 0; i < numel; i++)
		y[i] = (x[i] - sum[grp[i]]) / sq[grp[i]];
	free(sum);
	free(sq);
	free(cnt);
}

#endif
