/* nn_util.h - helpers shared by the neural-network kernel families
 * (conv.c, pool.c, norm.c, matmul.c, reduce.c, softmax.c): dtype masks,
 * float32 working buffers for float16/bfloat16 tensors, the sliding-window
 * geometry that Conv and the pools share, and the float32 GEMM that Conv and
 * MatMul/Gemm run on.
 *
 * Arithmetic contract (see issue 3): float32 tensors are computed in float,
 * float64 in double; float16 and bfloat16 are widened to float32, computed
 * there, and each result rounded back to the type.  The GEMM adds the products
 * of each output element in increasing k, exactly as the plain loop
 * `for k: acc += a[i][k] * b[k][j]` does, so blocking and vectorising change
 * nothing in the result (each vector lane is a different output element, and
 * ISO C mode keeps the compiler from contracting a*b+c into an FMA). */
#ifndef GRAFT_NN_UTIL_H
#define GRAFT_NN_UTIL_H

#include "runtime/eval/eval.h"

#include <stdlib.h>
#include <string.h>

#define NN_BIT(dt) (1u << (dt))
#define NN_FLOATS (NN_BIT(DT_FLOAT) | NN_BIT(DT_DOUBLE) | NN_BIT(DT_FLOAT16) | NN_BIT(DT_BFLOAT16))
#define NN_SINTS (NN_BIT(DT_INT8) | NN_BIT(DT_INT16) | NN_BIT(DT_INT32) | NN_BIT(DT_INT64))
#define NN_UINTS (NN_BIT(DT_UINT8) | NN_BIT(DT_UINT16) | NN_BIT(DT_UINT32) | NN_BIT(DT_UINT64))
#define NN_NUMERIC (NN_FLOATS | NN_SINTS | NN_UINTS)

static inline bool nn_is_float_type(int dt)
{
	return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_FLOAT16 || dt == DT_BFLOAT16;
}

/* Allocate an output tensor, reporting failure through the node. */
static inline EvValue *nn_new(EvCtx *c, int dtype, int rank, const int64_t *dims)
{
	EvValue *v = ev_tensor_new(dtype, rank, dims);
	if (!v)
		ev_fail(c, "cannot allocate a %s tensor of rank %d (too large?)", dtype_name(dtype), rank);
	return v;
}

static inline void *nn_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		ev_out_of_memory(); /* scratch space: nowhere to report it from (eval.h) */
	return p;
}

/* ---- float32 views of float tensors ------------------------------------- */

/* The elements of a float32/float16/bfloat16 (or any numeric) tensor as
 * float: the tensor's own data for float32 (no copy), otherwise a converted
 * copy.  Release with nn_f32_release. */
static inline const float *nn_f32_view(const EvValue *t)
{
	if (t->dtype == DT_FLOAT)
		return (const float *)t->data;
	float *b = nn_alloc(sizeof(float) * (size_t)t->numel);
	if (t->dtype == DT_FLOAT16) {
		const uint16_t *h = t->data;
		for (int64_t i = 0; i < t->numel; i++)
			b[i] = ev_half_to_float(h[i]);
	} else if (t->dtype == DT_BFLOAT16) {
		const uint16_t *h = t->data;
		for (int64_t i = 0; i < t->numel; i++)
			b[i] = ev_bf16_to_float(h[i]);
	} else {
		for (int64_t i = 0; i < t->numel; i++)
			b[i] = (float)ev_get_f(t, i);
	}
	return b;
}

static inline void nn_f32_release(const EvValue *t, const float *view)
{
	if (view && (!t || view != (const float *)t->data))
		free((void *)view);
}

/* A float buffer to compute output t into: its data for float32, else scratch
 * that nn_f32_commit rounds into t and frees. */
static inline float *nn_f32_out(EvValue *t)
{
	if (t->dtype == DT_FLOAT)
		return (float *)t->data;
	return nn_alloc(sizeof(float) * (size_t)t->numel);
}

static inline void nn_f32_commit(EvValue *t, float *buf)
{
	if (buf == (float *)t->data)
		return;
	if (t->dtype == DT_FLOAT16) {
		uint16_t *h = t->data;
		for (int64_t i = 0; i < t->numel; i++)
			h[i] = ev_float_to_half(buf[i]);
	} else if (t->dtype == DT_BFLOAT16) {
		uint16_t *h = t->data;
		for (int64_t i = 0; i < t->numel; i++)
			h[i] = ev_float_to_bf16(buf[i]);
	} else {
		for (int64_t i = 0; i < t->numel; i++)
			ev_set_f(t, i, buf[i]);
	}
	free(buf);
}

/* The same for float64 work: a double view of any numeric tensor, and a
 * double buffer for an output of any float type (rounded by ev_set_f). */
static inline const double *nn_f64_view(const EvValue *t)
{
	if (t->dtype == DT_DOUBLE)
		return (const double *)t->data;
	double *b = nn_alloc(sizeof(double) * (size_t)t->numel);
	for (int64_t i = 0; i < t->numel; i++)
		b[i] = ev_get_f(t, i);
	return b;
}

static inline void nn_f64_release(const EvValue *t, const double *view)
{
	if (view && (!t || view != (const double *)t->data))
		free((void *)view);
}

static inline double *nn_f64_out(EvValue *t)
{
	if (t->dtype == DT_DOUBLE)
		return (double *)t->data;
	return nn_alloc(sizeof(double) * (size_t)t->numel);
}

static inline void nn_f64_commit(EvValue *t, double *buf)
{
	if (buf == (double *)t->data)
		return;
	for (int64_t i = 0; i < t->numel; i++)
		ev_set_f(t, i, buf[i]);
	free(buf);
}

/* Whether the node has output i (an omitted optional output needs no work). */
static inline bool nn_want_output(EvCtx *c, int i)
{
	const IrNode *n = ir_node(c->m, c->node);
	return i >= 0 && (uint32_t)i < n->noutputs && n->outputs[i] != 0;
}

/* ---- sliding windows (Conv, ConvTranspose, pools) ------------------------ */

/* The geometry of a window sliding over the spatial dims of an N,C,D1..Dn
 * tensor.  Pads are [begin, end] per dim, as resolved from pads/auto_pad. */
typedef struct NnWindow {
	int n;                          /* spatial dims */
	int64_t in[EV_MAX_RANK];        /* input extent */
	int64_t k[EV_MAX_RANK];         /* kernel extent */
	int64_t s[EV_MAX_RANK];         /* stride */
	int64_t d[EV_MAX_RANK];         /* dilation */
	int64_t pb[EV_MAX_RANK];        /* padding before */
	int64_t pe[EV_MAX_RANK];        /* padding after */
	int64_t out[EV_MAX_RANK];       /* output extent */
} NnWindow;

/* The product of n dims.  Only an empty tensor's dims can overflow it (a
 * tensor that exists has a product that fits): multiplied unsigned, which
 * wraps where signed overflow would be undefined. */
static inline int64_t nn_prod(const int64_t *v, int n)
{
	uint64_t p = 1;
	for (int i = 0; i < n; i++)
		p *= (uint64_t)v[i];
	return (int64_t)p;
}

/* Read strides, dilations, pads and auto_pad for a window over x's spatial
 * dims with kernel extents k[] (from kernel_shape or the weights), and compute
 * the output extents as Conv and the pools do.  ceil_mode: pools only. */
static inline bool nn_window(EvCtx *c, const EvValue *x, const int64_t *k, bool ceil_mode, NnWindow *w)
{
	if (x->rank < 3)
		return ev_fail(c, "input must have rank >= 3 (N, C, spatial...), got rank %d", x->rank);
	int n = x->rank - 2, cnt;
	w->n = n;
	const int64_t *v;
	for (int i = 0; i < n; i++) {
		w->in[i] = x->dims[i + 2];
		w->k[i] = k[i];
		w->s[i] = w->d[i] = 1;
		w->pb[i] = w->pe[i] = 0;
		if (k[i] < 1)
			return ev_fail(c, "kernel extent %lld must be positive", (long long)k[i]);
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
	char buf[32];
	const char *ap = ev_attr_string(c, "auto_pad", "NOTSET", buf, sizeof buf);
	bool same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
	bool valid = !strcmp(ap, "VALID");
	if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") != 0)
		return ev_fail(c, "unknown auto_pad '%s'", ap);
	if (!same_upper && !same_lower && !valid && (v = ev_attr_ints(c, "pads", &cnt)) && cnt > 0) {
		if (cnt != 2 * n)
			return ev_fail(c, "pads has %d values for %d spatial dims", cnt, n);
		for (int i = 0; i < n; i++) {
			w->pb[i] = v[i];
			w->pe[i] = v[i + n];
			if (w->pb[i] < 0 || w->pe[i] < 0)
				return ev_fail(c, "negative pads are not supported");
		}
	}
	for (int i = 0; i < n; i++) {
		int64_t span = (w->k[i] - 1) * w->d[i] + 1;
		if (same_upper || same_lower) {
			w->out[i] = (w->in[i] + w->s[i] - 1) / w->s[i];
			int64_t total = (w->out[i] - 1) * w->s[i] + span - w->in[i];
			if (total < 0)
				total = 0;
			w->pb[i] = same_upper ? total / 2 : total - total / 2;
			w->pe[i] = total - w->pb[i];
		} else {
			int64_t room = w->in[i] + w->pb[i] + w->pe[i] - span;
			if (room < 0)
				return ev_fail(c, "kernel extent %lld (dilated %lld) exceeds padded input %lld",
				               (long long)w->k[i], (long long)span,
				               (long long)(w->in[i] + w->pb[i] + w->pe[i]));
			if (ceil_mode) {
				w->out[i] = (room + w->s[i] - 1) / w->s[i] + 1;
				/* as PyTorch: the last window must start inside the input or the begin padding */
				if ((w->out[i] - 1) * w->s[i] >= w->in[i] + w->pb[i])
					w->out[i]--;
			} else {
				w->out[i] = room / w->s[i] + 1;
			}
		}
	}
	return true;
}

/* ---- float32 GEMM -------------------------------------------------------- */

/* C[i][j] (+)= sum_k A[i][k] * B[k][j], for i < m, j < n, k < kk.
 * A[i][k] is a[i*ars + k*acs], B[k][j] is b[k*brs + j*bcs], C[i][j] is
 * cc[i*ldc + j].  accumulate: add to C's values (as a continuation of the
 * k loop), else start from zero.
 *
 * Blocked BLIS-style: panels of A (MR rows) and B (NR columns) are packed, and
 * a register tile of MR x NR accumulators runs over one k block at a time.
 * Every C element still sees its products in increasing k. */
#define NN_MR 4
#define NN_NR 8
#define NN_KC 256
#define NN_NC 512

typedef float nn_v4f __attribute__((vector_size(16)));

static inline void nn_gemm_tile(int64_t kc, const float *pa, const float *pb, float *cc, int64_t ldc,
                                int mr, int nr, bool load)
{
	nn_v4f acc[NN_MR][2];
	float tmp[NN_MR][NN_NR];
	if (load) {
		for (int r = 0; r < NN_MR; r++)
			for (int j = 0; j < NN_NR; j++)
				tmp[r][j] = r < mr && j < nr ? cc[r * ldc + j] : 0.0f;
	} else {
		memset(tmp, 0, sizeof tmp);
	}
	memcpy(acc, tmp, sizeof acc);
	for (int64_t k = 0; k < kc; k++) {
		nn_v4f b0, b1;
		memcpy(&b0, pb + k * NN_NR, sizeof b0);
		memcpy(&b1, pb + k * NN_NR + 4, sizeof b1);
		const float *a = pa + k * NN_MR;
		for (int r = 0; r < NN_MR; r++) {
			nn_v4f av = {a[r], a[r], a[r], a[r]};
			acc[r][0] += av * b0;
			acc[r][1] += av * b1;
		}
	}
	memcpy(tmp, acc, sizeof tmp);
	for (int r = 0; r < mr; r++)
		for (int j = 0; j < nr; j++)
			cc[r * ldc + j] = tmp[r][j];
}

static inline void nn_gemm_f32(int64_t m, int64_t n, int64_t kk,
                               const float *a, int64_t ars, int64_t acs,
                               const float *b, int64_t brs, int64_t bcs,
                               float *cc, int64_t ldc, bool accumulate)
{
	if (m <= 0 || n <= 0)
		return;
	if (kk <= 0) {
		if (!accumulate)
			for (int64_t i = 0; i < m; i++)
				memset(cc + i * ldc, 0, sizeof(float) * (size_t)n);
		return;
	}
	/* packing buffers as large as this product needs, not a whole block
	 * (a 1 x 2 MatMul used to take 520 KB, costly under ASan) */
	int64_t mp = (m + NN_MR - 1) / NN_MR * NN_MR;
	int64_t kcmax = kk < NN_KC ? kk : NN_KC, ncmax = n < NN_NC ? n : NN_NC;
	int64_t np = (ncmax + NN_NR - 1) / NN_NR * NN_NR;
	float *pa = nn_alloc(sizeof(float) * (size_t)(mp * kcmax));
	float *pb = nn_alloc(sizeof(float) * (size_t)(kcmax * np));
	for (int64_t jc = 0; jc < n; jc += NN_NC) {
		int64_t nc = n - jc < NN_NC ? n - jc : NN_NC;
		for (int64_t pc = 0; pc < kk; pc += NN_KC) {
			int64_t kc = kk - pc < NN_KC ? kk - pc : NN_KC;
			/* pack B[pc.., jc..] as column panels of NR, k-major, zero-filled */
			for (int64_t jp = 0; jp < nc; jp += NN_NR) {
				float *dst = pb + jp * kc;
				int nr = nc - jp < NN_NR ? (int)(nc - jp) : NN_NR;
				for (int64_t k = 0; k < kc; k++) {
					const float *src = b + (pc + k) * brs + (jc + jp) * bcs;
					int j = 0;
					if (bcs == 1)
						for (; j < nr; j++)
							dst[k * NN_NR + j] = src[j];
					else
						for (; j < nr; j++)
							dst[k * NN_NR + j] = src[j * bcs];
					for (; j < NN_NR; j++)
						dst[k * NN_NR + j] = 0.0f;
				}
			}
			/* pack A[.., pc..] as row panels of MR, k-major, zero-filled */
			for (int64_t ip = 0; ip < m; ip += NN_MR) {
				float *dst = pa + ip * kc;
				int mr = m - ip < NN_MR ? (int)(m - ip) : NN_MR;
				for (int64_t k = 0; k < kc; k++)
					for (int r = 0; r < NN_MR; r++)
						dst[k * NN_MR + r] = r < mr ? a[(ip + r) * ars + (pc + k) * acs] : 0.0f;
			}
			bool load = accumulate || pc > 0;
			for (int64_t ip = 0; ip < m; ip += NN_MR) {
				int mr = m - ip < NN_MR ? (int)(m - ip) : NN_MR;
				for (int64_t jp = 0; jp < nc; jp += NN_NR) {
					int nr = nc - jp < NN_NR ? (int)(nc - jp) : NN_NR;
					nn_gemm_tile(kc, pa + ip * kc, pb + jp * kc, cc + ip * ldc + jc + jp, ldc,
					             mr, nr, load);
				}
			}
		}
	}
	free(pa);
	free(pb);
}

/* The same contract in double, as a plain loop (float64 models are rare). */
static inline void nn_gemm_f64(int64_t m, int64_t n, int64_t kk,
                               const double *a, int64_t ars, int64_t acs,
                               const double *b, int64_t brs, int64_t bcs,
                               double *cc, int64_t ldc, bool accumulate)
{
	for (int64_t i = 0; i < m; i++) {
		double *row = cc + i * ldc;
		if (!accumulate)
			for (int64_t j = 0; j < n; j++)
				row[j] = 0.0;
		for (int64_t k = 0; k < kk; k++) {
			double av = a[i * ars + k * acs];
			const double *brow = b + k * brs;
			for (int64_t j = 0; j < n; j++)
				row[j] += av * brow[j * bcs];
		}
	}
}

#endif
