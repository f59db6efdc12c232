/* loss.c - classification losses: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (which is NLL over a log-softmax along axis 1).
 *
 * Both follow ONNX's reference: the input is (N, C, d1..dk), the target
 * (N, d1..dk) holds class indices; each position's loss is
 * -input[n, t, d...] * weight[t], zero where t == ignore_index.  reduction
 * "none" returns those, "sum" their sum, and "mean" their sum divided by the
 * sum of the weights that were applied (the count of kept positions when
 * there are no weights).  Per-element arithmetic is done in the input's type
 * (float16/bfloat16 through float32); the reductions accumulate in double in
 * row-major order and round once, which is at least as exact as numpy's
 * pairwise float32 sum. */
#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Loss {
	int64_t n, ncls, d;             /* input viewed as (n, ncls, d) */
	bool has_ii;
	int64_t ii;
} Loss;

static bool loss_shapes(EvCtx *c, const EvValue *x, const EvValue *t, const EvValue *w, Loss *l)
{
	if (!x || x->kind != EV_TENSOR || !nn_is_float_type(x->dtype))
		return ev_fail(c, "input must be a float tensor");
	if (!t || t->kind != EV_TENSOR || (t->dtype != DT_INT32 && t->dtype != DT_INT64))
		return ev_fail(c, "target must be an int32 or int64 tensor");
	if (x->rank < 2 || t->rank != x->rank - 1 || t->dims[0] != x->dims[0])
		return ev_fail(c, "input (rank %d) and target (rank %d) shapes do not fit", x->rank, t->rank);
	for (int i = 1; i < t->rank; i++)
		if (t->dims[i] != x->dims[i + 1])
			return ev_fail(c, "target dim %d is %lld, input has %lld", i, (long long)t->dims[i],
			               (long long)x->dims[i + 1]);
	l->n = x->dims[0];
	l->ncls = x->dims[1];
	l->d = nn_prod(x->dims + 2, x->rank - 2);
	if (w && (w->kind != EV_TENSOR || w->rank != 1 || w->numel != l->ncls))
		return ev_fail(c, "weight must be 1-D with %lld elements", (long long)l->ncls);
	l->has_ii = ev_attr(c, "ignore_index") != NULL;
	l->ii = ev_attr_int(c, "ignore_index", 0);
	return true;
}

static int64_t tgt(const EvValue *t, int64_t i)
{
	return t->dtype == DT_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
}

/* The reduction over logp (n, ncls, d) in the working type; writes the
 * result into a new tensor of dtype dt.  f64: work in double. */
static bool nll_core(EvCtx *c, const Loss *l, const void *lp, bool f64, const EvValue *t, const EvValue *w,
                     int dt, const EvValue *tshape, EvValue **res)
{
	char buf[16];
	const char *red = ev_attr_string(c, "reduction", "mean", buf, sizeof buf);
	int mode = !strcmp(red, "none") ? 0 : !strcmp(red, "sum") ? 1 : !strcmp(red, "mean") ? 2 : -1;
	if (mode < 0)
		return ev_fail(c, "unknown reduction '%s'", red);
	const float *lf = lp;
	const double *ld = lp;
	const float *wf = NULL;
	const double *wd = NULL;
	if (w) {
		if (f64)
			wd = nn_f64_view(w);
		else
			wf = nn_f32_view(w);
	}
	int64_t npos = l->n * l->d;
	double *per = nn_alloc(sizeof(double) * (size_t)(npos > 0 ? npos : 1));
	double sum = 0, wsum = 0;
	bool ok = true;
	for (int64_t n = 0; n < l->n && ok; n++)
		for (int64_t d = 0; d < l->d; d++) {
			int64_t p = n * l->d + d, k = tgt(t, p);
			if (l->has_ii && k == l->ii) {
				per[p] = 0;
				continue;
			}
			if (k < 0 || k >= l->ncls) {
				ok = ev_fail(c, "target %lld is out of range [0, %lld)", (long long)k, (long long)l->ncls);
				break;
			}
			int64_t at = (n * l->ncls + k) * l->d + d;
			double v, wt;
			if (f64) {
				wt = wd ? wd[k] : 1.0;
				v = wd ? wt * -ld[at] : -ld[at];
			} else {
				float wk = wf ? wf[k] : 1.0f;
				v = wf ? (double)(wk * -lf[at]) : (double)-lf[at];
				wt = wk;
			}
			per[p] = v;
			sum += v;
			wsum += wt;
		}
	if (w) {
		if (f64)
			nn_f64_release(w, wd);
		else
			nn_f32_release(w, wf);
	}
	if (!ok) {
		free(per);
		return false;
	}
	EvValue *y = mode == 0 ? nn_new(c, dt, tshape->rank, tshape->dims) : nn_new(c, dt, 0, NULL);
	if (!y) {
		free(per);
		return false;
	}
	if (mode == 0) {
		for (int64_t p = 0; p < npos; p++)
			ev_set_f(y, p, f64 ? per[p] : (double)(float)per[p]);
	} else {
		double r;
		if (f64)
			r = mode == 1 ? sum : sum / wsum;
		else
			r = mode == 1 ? (float)sum : (float)sum / (float)wsum;
		ev_set_f(y, 0, r);
	}
	free(per);
	*res = y;
	return true;
}

static bool run_nll(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *t = nin > 1 ? in[1] : NULL, *w = nin > 2 ? in[2] : NULL;
	Loss l;
	if (!loss_shapes(c, x, t, w, &l))
		return false;
	bool f64 = x->dtype == DT_DOUBLE;
	bool ok;
	if (f64) {
		const double *v = nn_f64_view(x);
		ok = nll_core(c, &l, v, true, t, w, x->dtype, t, &out[0]);
		nn_f64_release(x, v);
	} else {
		/* a zeroed copy, not nn_f32_view: gcc cannot see that view filled */
		float *v = calloc((size_t)x->numel + 1, sizeof(float));
		if (!v)
			ev_out_of_memory();
		for (int64_t i = 0; i < x->numel; i++)
			v[i] = (float)ev_get_f(x, i);
		ok = nll_core(c, &l, v, false, t, w, x->dtype, t, &out[0]);
		free(v);
	}
	return ok;
}

/* log(softmax(x)) along axis 1 computed as the reference does:
 * e = exp(x - max), p = e / sum(e), log(p). */
static bool run_sce(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *t = nin > 1 ? in[1] : NULL, *w = nin > 2 ? in[2] : NULL;
	Loss l;
	if (!loss_shapes(c, x, t, w, &l))
		return false;
	bool f64 = x->dtype == DT_DOUBLE;
	int64_t inner = l.d, cls = l.ncls;
	void *lp;
	if (f64) {
		const double *xv = nn_f64_view(x);
		double *o = nn_alloc(sizeof(double) * (size_t)(x->numel > 0 ? x->numel : 1));
		for (int64_t n = 0; n < l.n; n++)
			for (int64_t d = 0; d < inner; d++) {
				const double *xs = xv + n * cls * inner + d;
				double *os = o + n * cls * inner + d;
				double mx = -INFINITY, s = 0;
				for (int64_t k = 0; k < cls; k++)
					if (xs[k * inner] > mx)
						mx = xs[k * inner];
				for (int64_t k = 0; k < cls; k++)
					s += os[k * inner] = exp(xs[k * inner] - mx);
				for (int64_t k = 0; k < cls; k++)
					os[k * inner] = log(os[k * inner] / s);
			}
		nn_f64_release(x, xv);
		lp = o;
	} else {
		const float *xv = nn_f32_view(x);
		float *o = nn_alloc(sizeof(float) * (size_t)(x->numel > 0 ? x->numel : 1));
		for (int64_t n = 0; n < l.n; n++)
			for (int64_t d = 0; d < inner; d++) {
				const float *xs = xv + n * cls * inner + d;
				float *os = o + n * cls * inner + d;
				float mx = -INFINITY;
				double s = 0;
				for (int64_t k = 0; k < cls; k++)
					if (xs[k * inner] > mx)
						mx = xs[k * inner];
				for (int64_t k = 0; k < cls; k++)
					s += os[k * inner] = expf(xs[k * inner] - mx);
				float sf = (float)s;
				for (int64_t k = 0; k < cls; k++)
					os[k * inner] = logf(os[k * inner] / sf);
			}
		nn_f32_release(x, xv);
		lp = o;
	}
	bool ok = nll_core(c, &l, lp, f64, t, w, x->dtype, t, &out[0]);
	if (ok && nout > 1 && nn_want_output(c, 1)) {
		EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
		if (!y) {
			ev_unref(out[0]);
			out[0] = NULL;
			ok = false;
		} else if (f64) {
			memcpy(y->data, lp, sizeof(double) * (size_t)x->numel);
		} else {
			for (int64_t i = 0; i < x->numel; i++)
				ev_set_f(y, i, ((const float *)lp)[i]);
		}
		if (y)
			out[1] = y;
	}
	free(lp);
	return ok;
}

const EvKernel ev_kernels_loss[] = {
	EV_KERNEL(NegativeLogLikelihoodLoss, run_nll, NN_FLOATS),
	EV_KERNEL(SoftmaxCrossEntropyLoss, run_sce, NN_FLOATS),
	{0},
};
