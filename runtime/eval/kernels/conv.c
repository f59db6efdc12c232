/* conv.c - Conv and ConvTranspose kernels, 1-D to N-D, with groups,
 * dilations, strides, pads/auto_pad, and ConvTranspose's output_padding and
 * output_shape.
 *
 * Conv lowers each (image, group) to im2col followed by the blocked GEMM of
 * nn_util.h, so every output is bias + sum over (channel, kernel position) in
 * that order, as a plain nested loop adds them, with padded taps reading
 * zero.  ConvTranspose scatters each input tap into the outputs it reaches;
 * each output sees its products in the same (channel, kernel position) order.
 * float32 and float64 are computed in their own type; float16 and bfloat16 in
 * float32, rounded once at the end.
 *
 * The typed core is written once and compiled twice: this file includes
 * itself with NN_T = float, then with NN_T = double (the part after #else). */
#ifndef NN_T

#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <stdlib.h>
#include <string.h>

/* The shape of one convolution problem, shared by both directions. */
typedef struct ConvGeom {
	NnWindow w;
	int64_t n, c, m, group;         /* batch, input and output channels, groups */
} ConvGeom;

#define NN_T float
#define F(name) name##_f32
#define NN_GEMM nn_gemm_f32
#include "conv.c"
#undef NN_T
#undef F
#undef NN_GEMM
#define NN_T double
#define F(name) name##_f64
#define NN_GEMM nn_gemm_f64
#include "conv.c"
#undef NN_T
#undef F
#undef NN_GEMM

/* What both directions do once the geometry is known: allocate Y, then run
 * the direction's loop in double, or in float (float16 and bfloat16 through
 * float32 views, rounded once when committed). */
typedef void (*ConvF64)(const ConvGeom *, const double *, const double *, const double *, double *);
typedef void (*ConvF32)(const ConvGeom *, const float *, const float *, const float *, float *);

static bool conv_run(EvCtx *c, const ConvGeom *g, const EvValue *x, const EvValue *w, const EvValue *b,
                     ConvF64 f64, ConvF32 f32, EvValue **out)
{
	int64_t dims[EV_MAX_RANK] = {g->n, g->m};
	memcpy(dims + 2, g->w.out, sizeof(int64_t) * (size_t)g->w.n);
	EvValue *y = nn_new(c, x->dtype, x->rank, dims);
	if (!y)
		return false;
	if (x->dtype == DT_DOUBLE) {
		f64(g, x->data, w->data, b ? b->data : NULL, y->data);
	} else {
		const float *xv = nn_f32_view(x), *wv = nn_f32_view(w), *bv = b ? nn_f32_view(b) : NULL;
		float *yv = nn_f32_out(y);
		f32(g, xv, wv, bv, yv);
		nn_f32_commit(y, yv);
		nn_f32_release(x, xv);
		nn_f32_release(w, wv);
		nn_f32_release(b, bv);
	}
	out[0] = y;
	return true;
}

/* Checks shared by Conv and ConvTranspose; kernel extents from W, checked
 * against kernel_shape when that is given. */
static bool conv_check(EvCtx *c, EvValue **in, int nin, int64_t *k)
{
	const EvValue *x = in[0], *w = nin > 1 ? in[1] : NULL;
	if (!x || !w)
		return ev_fail(c, "needs inputs X and W");
	if (!nn_is_float_type(x->dtype))
		return ev_fail(c, "unsupported dtype %s", dtype_name(x->dtype));
	if (w->dtype != x->dtype || (nin > 2 && in[2] && in[2]->dtype != x->dtype))
		return ev_fail(c, "X, W and B must have the same dtype");
	if (x->rank < 3 || w->rank != x->rank)
		return ev_fail(c, "X (rank %d) and W (rank %d) must have the same rank >= 3", x->rank, w->rank);
	int nk;
	const int64_t *ks = ev_attr_ints(c, "kernel_shape", &nk);
	for (int i = 0; i < x->rank - 2; i++) {
		k[i] = w->dims[i + 2];
		if (ks && nk == x->rank - 2 && ks[i] != k[i])
			return ev_fail(c, "kernel_shape does not match the weights' shape");
	}
	if (ks && nk != x->rank - 2)
		return ev_fail(c, "kernel_shape has %d values for %d spatial dims", nk, x->rank - 2);
	return true;
}

static bool conv_bias_ok(EvCtx *c, const EvValue *b, int64_t m)
{
	if (b && (b->rank != 1 || b->dims[0] != m))
		return ev_fail(c, "bias must have shape [%lld]", (long long)m);
	return true;
}

static bool run_conv(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	int64_t k[EV_MAX_RANK];
	if (!conv_check(c, in, nin, k))
		return false;
	const EvValue *x = in[0], *w = in[1], *b = nin > 2 ? in[2] : NULL;
	ConvGeom g;
	g.n = x->dims[0];
	g.c = x->dims[1];
	g.m = w->dims[0];
	g.group = ev_attr_int(c, "group", 1);
	if (g.group < 1 || g.c % g.group || g.m % g.group || w->dims[1] != g.c / g.group)
		return ev_fail(c, "channels (X has %lld, W expects %lld per group, %lld groups, %lld maps) do not fit",
		               (long long)g.c, (long long)w->dims[1], (long long)g.group, (long long)g.m);
	if (!conv_bias_ok(c, b, g.m) || !nn_window(c, x, k, false, &g.w))
		return false;
	return conv_run(c, &g, x, w, b, conv_fwd_f64, conv_fwd_f32, out);
}

/* ConvTranspose's geometry: out = s*(in-1) + output_padding + dilated kernel
 * - pads, or pads derived from output_shape / auto_pad (the odd unit of
 * padding goes to the end for SAME_UPPER, to the beginning otherwise, as the
 * spec and ONNX Runtime do).  When output_shape asks for more than the full
 * result, the extra outputs at the end see only the bias. */
static bool convt_window(EvCtx *c, const EvValue *x, const int64_t *k, NnWindow *w)
{
	int n = x->rank - 2, cnt;
	const int64_t *v;
	int64_t opad[EV_MAX_RANK] = {0};
	w->n = n;
	for (int i = 0; i < n; i++) {
		w->in[i] = x->dims[i + 2];
		w->k[i] = k[i];
		w->s[i] = w->d[i] = 1;
		w->pb[i] = w->pe[i] = 0;
	}
	if ((v = ev_attr_ints(c, "strides", &cnt)) && cnt > 0) {
		if (cnt != n)
			return ev_fail(c, "strides has %d values for %d spatial dims", cnt, n);
		for (int i = 0; i < n; i++)
			if ((w->s[i] = v[i]) < 1)
				return ev_fail(c, "strides must be positive");
	}
	if ((v = ev_attr_ints(c, "dilations", &cnt)) && cnt > 0) {
		if (cnt != n)
			return ev_fail(c, "dilations has %d values for %d spatial dims", cnt, n);
		for (int i = 0; i < n; i++)
			if ((w->d[i] = v[i]) < 1)
				return ev_fail(c, "dilations must be positive");
	}
	if ((v = ev_attr_ints(c, "output_padding", &cnt)) && cnt > 0) {
		if (cnt != n)
			return ev_fail(c, "output_padding has %d values for %d spatial dims", cnt, n);
		memcpy(opad, v, sizeof(int64_t) * (size_t)n);
	}
	char buf[32];
	const char *ap = ev_attr_string(c, "auto_pad", "NOTSET", buf, sizeof buf);
	bool upper = !strcmp(ap, "SAME_UPPER"), same = upper || !strcmp(ap, "SAME_LOWER");
	if (!same && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
		return ev_fail(c, "unknown auto_pad '%s'", ap);
	const int64_t *os = ev_attr_ints(c, "output_shape", &cnt);
	if (os && cnt > 0) {
		if (cnt == n + 2)
			os += 2;
		else if (cnt != n)
			return ev_fail(c, "output_shape has %d values for %d spatial dims", cnt, n);
	} else {
		os = NULL;
	}
	if (!os && !same && !strcmp(ap, "NOTSET") && (v = ev_attr_ints(c, "pads", &cnt)) && cnt > 0) {
		if (cnt != 2 * n)
			return ev_fail(c, "pads has %d values for %d spatial dims", cnt, n);
		for (int i = 0; i < n; i++) {
			w->pb[i] = v[i];
			w->pe[i] = v[i + n];
		}
	}
	for (int i = 0; i < n; i++) {
		int64_t full = w->s[i] * (w->in[i] - 1) + opad[i] + (w->k[i] - 1) * w->d[i] + 1;
		if (os || same) {
			w->out[i] = os ? os[i] : w->in[i] * w->s[i];
			int64_t total = full - w->out[i];
			if (total < 0)
				total = 0; /* a larger output_shape extends the end, as ONNX Runtime does */
			w->pb[i] = upper ? total / 2 : total - total / 2;
			w->pe[i] = total - w->pb[i];
		} else {
			w->out[i] = full - w->pb[i] - w->pe[i];
		}
		if (w->out[i] < 0)
			return ev_fail(c, "output extent %lld is negative", (long long)w->out[i]);
	}
	return true;
}

static bool run_conv_transpose(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	int64_t k[EV_MAX_RANK];
	if (!conv_check(c, in, nin, k))
		return false;
	const EvValue *x = in[0], *w = in[1], *b = nin > 2 ? in[2] : NULL;
	ConvGeom g;
	g.n = x->dims[0];
	g.c = x->dims[1];
	g.group = ev_attr_int(c, "group", 1);
	if (g.group < 1 || g.c % g.group || w->dims[0] != g.c)
		return ev_fail(c, "channels (X has %lld, W has %lld, %lld groups) do not fit",
		               (long long)g.c, (long long)w->dims[0], (long long)g.group);
	g.m = w->dims[1] * g.group;
	if (!conv_bias_ok(c, b, g.m) || !convt_window(c, x, k, &g.w))
		return false;
	return conv_run(c, &g, x, w, b, conv_bwd_f64, conv_bwd_f32, out);
}

const EvKernel ev_kernels_conv[] = {
	EV_KERNEL(Conv, run_conv, NN_FLOATS),
	EV_KERNEL(ConvTranspose, run_conv_transpose, NN_FLOATS),
	{0},
};

#else /* ---- typed core: NN_T is float or double ------------------------- */

/* Row (ch, kernel position) of the im2col matrix holds, for every output
 * position, the input tap it multiplies (zero in the padding). */
static void F(im2col)(const NN_T *x, const NnWindow *w, int64_t cg, NN_T *col)
{
	int n = w->n;
	int64_t kprod = nn_prod(w->k, n), pout = nn_prod(w->out, n), pin = nn_prod(w->in, n);
	int64_t last = w->out[n - 1];
	if (pout == 0)
		return;
	int64_t outer = pout / last;
	int64_t kidx[EV_MAX_RANK], oidx[EV_MAX_RANK];
	for (int64_t ch = 0; ch < cg; ch++) {
		const NN_T *xc = x + ch * pin;
		for (int64_t kp = 0; kp < kprod; kp++) {
			int64_t rem = kp;
			for (int d = n - 1; d >= 0; d--) {
				kidx[d] = rem % w->k[d];
				rem /= w->k[d];
			}
			NN_T *dst = col + (ch * kprod + kp) * pout;
			memset(oidx, 0, sizeof oidx);
			int64_t i0 = kidx[n - 1] * w->d[n - 1] - w->pb[n - 1], sl = w->s[n - 1], inl = w->in[n - 1];
			for (int64_t op = 0; op < outer; op++) {
				bool ok = true;
				int64_t off = 0;
				for (int d = 0; d < n - 1; d++) {
					int64_t i = oidx[d] * w->s[d] - w->pb[d] + kidx[d] * w->d[d];
					if (i < 0 || i >= w->in[d])
						ok = false;
					off = off * w->in[d] + i;
				}
				off *= inl;
				NN_T *row = dst + op * last;
				if (!ok) {
					for (int64_t o = 0; o < last; o++)
						row[o] = 0;
				} else if (sl == 1 && i0 >= 0 && i0 + last <= inl) {
					memcpy(row, xc + off + i0, sizeof(NN_T) * (size_t)last);
				} else {
					for (int64_t o = 0; o < last; o++) {
						int64_t i = i0 + o * sl;
						row[o] = i >= 0 && i < inl ? xc[off + i] : 0;
					}
				}
				for (int d = n - 2; d >= 0; d--) {
					if (++oidx[d] < w->out[d])
						break;
					oidx[d] = 0;
				}
			}
		}
	}
}

/* y = conv(x, w) + b for every image and group. */
static void F(conv_fwd)(const ConvGeom *g, const NN_T *x, const NN_T *wt, const NN_T *b, NN_T *y)
{
	const NnWindow *w = &g->w;
	int n = w->n;
	int64_t cg = g->c / g->group, mg = g->m / g->group;
	int64_t kprod = nn_prod(w->k, n), pin = nn_prod(w->in, n), pout = nn_prod(w->out, n);
	int64_t kk = cg * kprod;
	/* A 1x1 kernel with unit strides and no padding reads the input as is. */
	bool direct = true;
	for (int i = 0; i < n; i++)
		if (w->k[i] != 1 || w->s[i] != 1 || w->pb[i] || w->pe[i])
			direct = false;
	NN_T *col = direct ? NULL : nn_alloc(sizeof(NN_T) * (size_t)(kk * pout));
	for (int64_t img = 0; img < g->n; img++)
		for (int64_t gr = 0; gr < g->group; gr++) {
			const NN_T *xg = x + (img * g->c + gr * cg) * pin;
			const NN_T *bm = direct ? xg : col;
			if (!direct)
				F(im2col)(xg, w, cg, col);
			NN_T *yg = y + (img * g->m + gr * mg) * pout;
			NN_GEMM(mg, pout, kk, wt + gr * mg * kk, kk, 1, bm, pout, 1, yg, pout, false);
			if (b)
				for (int64_t m = 0; m < mg; m++) {
					NN_T bv = b[gr * mg + m], *row = yg + m * pout;
					for (int64_t p = 0; p < pout; p++)
						row[p] = row[p] + bv;
				}
		}
	free(col);
}

/* ConvTranspose: input tap i of channel ch, through kernel position kp,
 * lands on output o = i*s - pb + kp*d.  Loops run channel, then map, then
 * kernel position, so each output element adds its products in
 * (channel, kernel position) order. */
static void F(conv_bwd)(const ConvGeom *g, const NN_T *x, const NN_T *wt, const NN_T *b, NN_T *y)
{
	const NnWindow *w = &g->w;
	int n = w->n;
	int64_t cg = g->c / g->group, mg = g->m / g->group;
	int64_t kprod = nn_prod(w->k, n), pin = nn_prod(w->in, n), pout = nn_prod(w->out, n);
	int64_t last = w->in[n - 1];
	int64_t outer = last ? pin / last : 0;
	int64_t kidx[EV_MAX_RANK], iidx[EV_MAX_RANK];
	/* nn_f32_out's scratch is not zeroed */
	for (int64_t i = 0; i < g->n * g->m * pout; i++)
		y[i] = 0;
	for (int64_t img = 0; img < g->n; img++)
		for (int64_t gr = 0; gr < g->group; gr++)
			for (int64_t ch = 0; ch < cg; ch++) {
				const NN_T *xc = x + (img * g->c + gr * cg + ch) * pin;
				for (int64_t m = 0; m < mg; m++) {
					NN_T *ym = y + (img * g->m + gr * mg + m) * pout;
					const NN_T *wk = wt + ((gr * cg + ch) * mg + m) * kprod;
					for (int64_t kp = 0; kp < kprod; kp++) {
						int64_t rem = kp;
						for (int d = n - 1; d >= 0; d--) {
							kidx[d] = rem % w->k[d];
							rem /= w->k[d];
						}
						NN_T wv = wk[kp];
						memset(iidx, 0, sizeof iidx);
						int64_t o0 = kidx[n - 1] * w->d[n - 1] - w->pb[n - 1];
						int64_t sl = w->s[n - 1], outl = w->out[n - 1];
						for (int64_t ip = 0; ip < outer; ip++) {
							bool ok = true;
							int64_t off = 0;
							for (int d = 0; d < n - 1; d++) {
								int64_t o = iidx[d] * w->s[d] - w->pb[d] + kidx[d] * w->d[d];
								if (o < 0 || o >= w->out[d])
									ok = false;
								off = off * w->out[d] + o;
							}
							if (ok) {
								off *= outl;
								const NN_T *xr = xc + ip * last;
								for (int64_t i = 0; i < last; i++) {
									int64_t o = o0 + i * sl;
									if (o >= 0 && o < outl)
										ym[off + o] = ym[off + o] + xr[i] * wv;
								}
							}
							for (int d = n - 2; d >= 0; d--) {
								if (++iidx[d] < w->in[d])
									break;
								iidx[d] = 0;
							}
						}
					}
				}
			}
	if (b)
		for (int64_t img = 0; img < g->n; img++)
			for (int64_t m = 0; m < g->m; m++) {
				NN_T *row = y + (img * g->m + m) * pout;
				for (int64_t p = 0; p < pout; p++)
					row[p] = row[p] + b[m];
			}
}

#endif
