/* vendor.c - the evaluator's kernels for the com.microsoft (ONNX Runtime
 * contrib) ops that graft's vendor rules emit (rules/extended/vendor.rules,
 * `graft optimize --allow-vendor-ops`), so `graft verify`, `graft run` and
 * the constant folder treat those rules like any other.
 *
 * Each kernel is the standard op it stands for, computed by the standard
 * kernel, then the fused part computed as the standard kernels compute it
 * (in double, rounded once to the element type).  A fusion is therefore exact
 * on this evaluator; ONNX Runtime's kernels agree within float rounding,
 * which tests/verify_ort.sh checks.  Semantics from onnxruntime's
 * docs/ContribOperators.md.  EmbedLayerNormalization is the exception: no
 * standard op computes it, so its kernel follows ORT's CPU kernel step by
 * step in float; MultiHeadAttention runs on the Attention kernel
 * (kernels/attention.c).  They are looked up by name (ev_kernel_vendor, which
 * eval.c's ev_kernel_find asks for the com.microsoft domain); they are not
 * a kernel family (several share a name with a standard op).  They sit
 * above the standard kernels, which they find through kernels/registry.c. */
#include "attention.h"
#include "eval.h"
#include "rotary.h"
#include "runtime/eval/kernels/ew_util.h"
#include "runtime/eval/kernels/nn_util.h"

#include <math.h>
#include <string.h>

static bool run_std(EvCtx *c, const char *op, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvKernel *k = ev_kernel_std(op);
	return k ? k->fn(c, in, nin, out, nout) : ev_fail(c, "no kernel for %s", op);
}

static bool float_tensor(EvCtx *c, const EvValue *x, const char *op)
{
	if (!x || x->kind != EV_TENSOR || !ev_is_float(x->dtype))
		return ev_fail(c, "%s: expects a float tensor", op);
	return true;
}

/* ---- activations of FusedConv / FusedGemm ---- */

typedef struct Act {
	enum { ACT_NONE, ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_LEAKY, ACT_CLIP, ACT_HARDSIGMOID } kind;
	double a, b;
} Act;

/* params: activation_params of FusedConv, or FusedGemm's activation_alpha/beta. */
static bool act_parse(EvCtx *c, const char *name, const float *params, int np, Act *act)
{
	static const struct { const char *name; int kind, nparams; double a, b; } acts[] = {
		{"Relu", ACT_RELU, 0, 0, 0},           {"Sigmoid", ACT_SIGMOID, 0, 0, 0},
		{"Tanh", ACT_TANH, 0, 0, 0},           {"LeakyRelu", ACT_LEAKY, 1, 0.01f, 0},
		{"Clip", ACT_CLIP, 2, -INFINITY, INFINITY}, {"HardSigmoid", ACT_HARDSIGMOID, 2, 0.2f, 0.5f},
	};
	act->kind = ACT_NONE;
	if (!name)
		return true;
	for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
		if (!strcmp(name, acts[i].name)) {
			act->kind = acts[i].kind;
			act->a = np > 0 ? params[0] : acts[i].a;
			act->b = np > 1 ? params[1] : acts[i].b;
			if (np > acts[i].nparams)
				return ev_fail(c, "activation %s takes %d parameters, got %d", name, acts[i].nparams, np);
			return true;
		}
	return ev_fail(c, "unsupported activation '%s'", name);
}

/* As unary.c's relu_f, sigmoid_f, tanh_f, leaky_f, hsig_f and binary.c's Clip compute them. */
static double act_apply(const Act *act, double x)
{
	switch (act->kind) {
	case ACT_RELU: return x < 0 ? 0 : x;
	case ACT_SIGMOID: return ew_sigmoid(x);
	case ACT_TANH: return tanh(x);
	case ACT_LEAKY: return x < 0 ? act->a * x : x;
	case ACT_CLIP: return isnan(x) ? x : x < act->a ? act->a : x > act->b ? act->b : x;
	case ACT_HARDSIGMOID: {
		double v = act->a * x + act->b;
		return v < 0 ? 0 : v > 1 ? 1 : v;
	}
	default: return x;
	}
}

static void act_run(const Act *act, EvValue *y)
{
	if (act->kind == ACT_NONE)
		return;
	for (int64_t i = 0; i < y->numel; i++)
		ev_set_f(y, i, act_apply(act, ev_get_f(y, i)));
}

/* FusedConv(X, W, B?, Z?): activation(Conv(X, W, B) + Z). */
static bool k_FusedConv(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	char buf[32];
	int np = 0;
	const float *params = ev_attr_floats(c, "activation_params", &np);
	Act act;
	if (!float_tensor(c, in[0], "FusedConv") ||
	    !act_parse(c, ev_attr_string(c, "activation", NULL, buf, sizeof buf), params, np < 0 ? 0 : np, &act))
		return false;
	if (!run_std(c, "Conv", in, nin < 3 ? nin : 3, out, 1))
		return false;
	EvValue *z = nin > 3 ? in[3] : NULL, *y = out[0];
	if (z) {
		if (z->numel != y->numel || z->dtype != y->dtype)
			return ev_fail(c, "FusedConv: Z must have the output's shape");
		for (int64_t i = 0; i < y->numel; i++) {
			ev_set_f(y, i, ev_get_f(y, i) + ev_get_f(z, i));
		}
	}
	act_run(&act, y);
	(void)nout;
	return true;
}

/* A copy of x with its axes permuted: axis i of the copy is axis perm[i] of x. */
static EvValue *permuted(const EvValue *x, const int *perm)
{
	int r = x->rank;
	int64_t dims[EV_MAX_RANK] = {0}, stride[EV_MAX_RANK], idx[EV_MAX_RANK] = {0};
	for (int i = 0; i < r; i++)
		dims[i] = x->dims[perm[i]];
	EvValue *t = ev_tensor_new(x->dtype, r, dims);
	if (!t)
		return NULL;
	size_t es = ev_elem_size(x->dtype);
	int64_t s = 1;
	for (int i = r - 1; i >= 0; s *= x->dims[i], i--)
		stride[i] = s;
	for (int64_t o = 0; o < t->numel; o++) {
		int64_t off = 0;
		for (int i = 0; i < r; i++)
			off += idx[i] * stride[perm[i]];
		memcpy((char *)t->data + (size_t)o * es, (const char *)x->data + (size_t)off * es, es);
		for (int i = r - 1; i >= 0 && ++idx[i] == dims[i]; i--)
			idx[i] = 0;
	}
	return t;
}

/* NhwcConv(X, W, B?): Conv with the channels last in X, W and Y: X is
 * [N, D1.., C], W [M, k1.., C/group], Y [N, D1'.., M] (the layout ONNX
 * Runtime's kernels read when the op is not in its internal NHWC domain).
 * Computed as Conv on the transposed tensors, so it is exact to
 * Transpose + Conv + Transpose (graft optimize --layout nhwc relies on it). */
static bool k_NhwcConv(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 2 || !float_tensor(c, in[0], "NhwcConv") || !float_tensor(c, in[1], "NhwcConv"))
		return false;
	int r = in[0]->rank;
	if (r < 3 || in[1]->rank != r)
		return ev_fail(c, "NhwcConv: X and W need the same rank, at least 3 (got %d and %d)", r, in[1]->rank);
	int to_first[EV_MAX_RANK], to_last[EV_MAX_RANK];
	to_first[0] = 0, to_first[1] = r - 1;
	to_last[0] = 0, to_last[r - 1] = 1;
	for (int i = 2; i < r; i++)
		to_first[i] = i - 1;
	for (int i = 1; i < r - 1; i++)
		to_last[i] = i + 1;
	EvValue *x = permuted(in[0], to_first), *w = permuted(in[1], to_first);
	EvValue *cin[3] = {x, w, nin > 2 ? in[2] : NULL}, *y = NULL;
	bool ok = x && w && run_std(c, "Conv", cin, nin > 2 ? 3 : 2, &y, 1);
	ev_unref(x);
	ev_unref(w);
	if (!ok)
		return x && w ? false : ev_fail(c, "NhwcConv: out of memory");
	out[0] = permuted(y, to_last);
	ev_unref(y);
	(void)nout;
	return out[0] ? true : ev_fail(c, "NhwcConv: out of memory");
}

/* FusedGemm(A, B, C?): activation(Gemm(A, B, C)). */
static bool k_FusedGemm(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	char buf[32];
	float params[2];
	int np = 0;
	if (ev_attr(c, "activation_alpha"))
		params[np++] = ev_attr_float(c, "activation_alpha", 0);
	if (np && ev_attr(c, "activation_beta"))
		params[np++] = ev_attr_float(c, "activation_beta", 0);
	Act act;
	if (!float_tensor(c, in[0], "FusedGemm") ||
	    !act_parse(c, ev_attr_string(c, "activation", NULL, buf, sizeof buf), params, np, &act) ||
	    !run_std(c, "Gemm", in, nin, out, nout))
		return false;
	act_run(&act, out[0]);
	return true;
}

/* A copy of x with its last two axes swapped. */
static EvValue *swap_last2(const EvValue *x)
{
	int64_t dims[EV_MAX_RANK];
	memcpy(dims, x->dims, sizeof dims);
	int r = x->rank;
	int64_t m = dims[r - 2], n = dims[r - 1];
	dims[r - 2] = n;
	dims[r - 1] = m;
	EvValue *t = ev_tensor_new(x->dtype, r, dims);
	if (!t)
		return NULL;
	size_t es = ev_elem_size(x->dtype);
	int64_t batch = m != 0 && n != 0 ? x->numel / (m * n) : 0;
	for (int64_t b = 0; b < batch; b++)
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++)
				memcpy((char *)t->data + (size_t)(b * m * n + j * m + i) * es,
				       (const char *)x->data + (size_t)(b * m * n + i * n + j) * es, es);
	return t;
}

/* FusedMatMul(A, B): alpha * MatMul(A or A^T, B or B^T), ^T swapping the last two axes. */
static bool k_FusedMatMul(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 2 || !float_tensor(c, in[0], "FusedMatMul") || !float_tensor(c, in[1], "FusedMatMul"))
		return false;
	if (ev_attr_int(c, "transBatchA", 0) || ev_attr_int(c, "transBatchB", 0))
		return ev_fail(c, "FusedMatMul: transBatchA/transBatchB are not supported");
	bool ta = ev_attr_int(c, "transA", 0) != 0, tb = ev_attr_int(c, "transB", 0) != 0;
	if ((ta && in[0]->rank < 2) || (tb && in[1]->rank < 2))
		return ev_fail(c, "FusedMatMul: transA/transB need a rank of at least 2");
	EvValue *a = ta ? swap_last2(in[0]) : ev_ref(in[0]);
	EvValue *b = tb ? swap_last2(in[1]) : ev_ref(in[1]);
	EvValue *ab[2] = {a, b};
	bool ok = a && b && run_std(c, "MatMul", ab, 2, out, nout);
	ev_unref(a);
	ev_unref(b);
	if (!ok)
		return a && b ? false : ev_fail(c, "FusedMatMul: out of memory");
	double alpha = ev_attr_float(c, "alpha", 1.0f);
	if (alpha != 1.0)
		for (int64_t i = 0; i < out[0]->numel; i++)
			ev_set_f(out[0], i, alpha * ev_get_f(out[0], i));
	return true;
}

/* ---- MatMulIntegerToFloat, DynamicQuantizeMatMul ----
 * Written out: Cast[to = float](MatMulInteger(a, b, a_zp, b_zp)) *
 * (a_scale * b_scale) (+ bias).  The scales' product is rounded to float
 * once, as the written-out Mul; b_scale and bias hold one element or one per
 * output column.  float32 results only (what the vendor rules emit). */
static bool int_matmul_scale(EvCtx *c, const char *op, EvValue *acc, const EvValue *as, const EvValue *bs,
                             const EvValue *bias, EvValue **out)
{
	int64_t cols = acc->rank ? acc->dims[acc->rank - 1] : 1;
	if (as->dtype != DT_FLOAT || bs->dtype != DT_FLOAT || (bias && bias->dtype != DT_FLOAT))
		return ev_fail(c, "%s: float32 scales and bias only", op);
	if (as->numel != 1 || (bs->numel != 1 && bs->numel != cols) || (bias && bias->numel != cols && bias->numel != 1))
		return ev_fail(c, "%s: scales and bias must hold one element or one per output column", op);
	EvValue *y = ev_tensor_new(DT_FLOAT, acc->rank, acc->dims);
	if (!y)
		return ev_fail(c, "%s: out of memory", op);
	float *yd = y->data;
	for (int64_t i = 0; i < acc->numel; i++) {
		int64_t j = i % cols;
		float scale = (float)ev_get_f(as, 0) * (float)ev_get_f(bs, bs->numel == 1 ? 0 : j);
		float v = (float)ev_get_i(acc, i) * scale;
		yd[i] = bias ? v + (float)ev_get_f(bias, bias->numel == 1 ? 0 : j) : v;
	}
	out[0] = y;
	return true;
}

/* MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?) */
static bool k_MatMulIntegerToFloat(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 4 || !in[0] || !in[1] || !in[2] || !in[3])
		return ev_fail(c, "MatMulIntegerToFloat: needs A, B, a_scale and b_scale");
	EvValue *mi[4] = {in[0], in[1], nin > 4 ? in[4] : NULL, nin > 5 ? in[5] : NULL};
	EvValue *acc[1] = {NULL};
	if (!run_std(c, "MatMulInteger", mi, 4, acc, 1))
		return false;
	bool ok = int_matmul_scale(c, "MatMulIntegerToFloat", acc[0], in[2], in[3], nin > 6 ? in[6] : NULL, out);
	ev_unref(acc[0]);
	return ok;
}

/* DynamicQuantizeMatMul(A, B, b_scale, b_zero_point?, bias?): A quantized as
 * DynamicQuantizeLinear does, then MatMulIntegerToFloat. */
static bool k_DynamicQuantizeMatMul(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 3 || !in[0] || !in[1] || !in[2])
		return ev_fail(c, "DynamicQuantizeMatMul: needs A, B and b_scale");
	EvValue *q[3] = {NULL, NULL, NULL};
	if (!run_std(c, "DynamicQuantizeLinear", in, 1, q, 3))
		return false;
	EvValue *mi[4] = {q[0], in[1], q[2], nin > 3 ? in[3] : NULL};
	EvValue *acc[1] = {NULL};
	bool ok = run_std(c, "MatMulInteger", mi, 4, acc, 1) &&
	          int_matmul_scale(c, "DynamicQuantizeMatMul", acc[0], q[1], in[2], nin > 4 ? in[4] : NULL, out);
	for (int k = 0; k < 3; k++)
		ev_unref(q[k]);
	ev_unref(acc[0]);
	return ok;
}

/* x + bias, bias 1-D over x's last axis (BiasGelu, FastGelu, SkipLayerNormalization);
 * each sum rounded to the element type, as Add computes it. */
static EvValue *add_bias(EvCtx *c, const EvValue *x, const EvValue *bias, const char *op)
{
	int64_t cols = x->rank ? x->dims[x->rank - 1] : 1;
	if (bias->numel != cols || bias->rank > 1 || bias->dtype != x->dtype) {
		ev_fail(c, "%s: the bias must be 1-D over the last axis", op);
		return NULL;
	}
	EvValue *s = ev_copy(x);
	if (!s) {
		ev_fail(c, "%s: out of memory", op);
		return NULL;
	}
	for (int64_t i = 0; i < s->numel; i++)
		ev_set_f(s, i, ev_get_f(x, i) + ev_get_f(bias, i % cols));
	return s;
}

/* Gelu (com.microsoft): the erf form, as Gelu-20 with approximate "none". */
static bool k_Gelu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return float_tensor(c, in[0], "Gelu") && run_std(c, "Gelu", in, nin, out, nout);
}

/* BiasGelu(A, B) = Gelu(A + B). */
static bool k_BiasGelu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 2 || !float_tensor(c, in[0], "BiasGelu"))
		return false;
	EvValue *s = add_bias(c, in[0], in[1], "BiasGelu");
	bool ok = s && run_std(c, "Gelu", &s, 1, out, nout);
	ev_unref(s);
	return ok;
}

/* FastGelu(X, bias?): the tanh form of GELU of X + bias. */
static bool k_FastGelu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!float_tensor(c, in[0], "FastGelu"))
		return false;
	EvValue *s = nin > 1 && in[1] ? add_bias(c, in[0], in[1], "FastGelu") : ev_ref(in[0]);
	if (!s)
		return false;
	EvValue *y = out[0] = ev_tensor_new(s->dtype, s->rank, s->dims);
	if (!y) {
		ev_unref(s);
		return ev_fail(c, "FastGelu: out of memory");
	}
	for (int64_t i = 0; i < s->numel; i++)
		ev_set_f(y, i, ew_gelu_tanh(ev_get_f(s, i)));
	ev_unref(s);
	(void)nout;
	return true;
}

/* QuickGelu(X) = X * Sigmoid(alpha * X). */
static bool k_QuickGelu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!float_tensor(c, in[0], "QuickGelu"))
		return false;
	double alpha = ev_attr_float(c, "alpha", 1.702f);
	EvValue *x = in[0], *y = out[0] = ev_tensor_new(x->dtype, x->rank, x->dims);
	if (!y)
		return ev_fail(c, "QuickGelu: out of memory");
	for (int64_t i = 0; i < x->numel; i++) {
		double v = ev_get_f(x, i);
		ev_set_f(y, i, v * ew_sigmoid(alpha * v));
	}
	(void)nin;
	(void)nout;
	return true;
}

/* LayerNormalization as ONNX Runtime registers it below opset 17: the same as
 * LayerNormalization-17. */
static bool k_LayerNormalization(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return run_std(c, "LayerNormalization", in, nin, out, nout);
}

/* SimplifiedLayerNormalization (ONNX Runtime's RMSNorm below opset 23): the
 * same as RMSNormalization-23, attributes and defaults included. */
static bool k_SimplifiedLayerNormalization(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nout > 1)
		return ev_fail(c, "SimplifiedLayerNormalization: the inv_std_var output is not computed");
	return run_std(c, "RMSNormalization", in, nin, out, nout);
}

/* (x + bias) + skip, each sum rounded to the element type, the sum the Skip
 * norms normalize and give as output 3; NULL after ev_fail. */
static EvValue *skip_sum(EvCtx *c, const EvValue *x, const EvValue *skip, const EvValue *bias, const char *op)
{
	if (!skip || skip->numel != x->numel || skip->dtype != x->dtype) {
		ev_fail(c, "%s: skip must have the input's shape", op);
		return NULL;
	}
	EvValue *s = bias ? add_bias(c, x, bias, op) : ev_copy(x);
	if (!s)
		return NULL;
	for (int64_t i = 0; i < s->numel; i++)
		ev_set_f(s, i, ev_get_f(s, i) + ev_get_f(skip, i));
	return s;
}

/* SkipLayerNormalization(input, skip, gamma, beta?, bias?): LayerNorm over the
 * last axis of (input + bias) + skip; output 3 is that sum. */
static bool k_SkipLayerNormalization(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 3 || !float_tensor(c, in[0], "SkipLayerNormalization"))
		return false;
	EvValue *s = skip_sum(c, in[0], in[1], nin > 4 ? in[4] : NULL, "SkipLayerNormalization");
	if (!s)
		return false;
	EvValue *ln_in[3] = {s, in[2], nin > 3 ? in[3] : NULL};
	bool ok = run_std(c, "LayerNormalization", ln_in, 3, out, nout < 3 ? nout : 3);
	if (ok && nout > 3)
		out[3] = ev_ref(s);
	ev_unref(s);
	return ok;
}

/* SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): RMSNorm over
 * the last axis of (input + bias) + skip; output 3 is that sum (outputs 1
 * and 2, the mean and inv_std_var, are not computed: graft's rules omit
 * them, and the evaluator refuses a node that asks for them). */
static bool k_SkipSimplifiedLayerNormalization(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 3 || !float_tensor(c, in[0], "SkipSimplifiedLayerNormalization"))
		return false;
	EvValue *s = skip_sum(c, in[0], in[1], nin > 3 ? in[3] : NULL, "SkipSimplifiedLayerNormalization");
	if (!s)
		return false;
	EvValue *rms_in[2] = {s, in[2]};
	bool ok = run_std(c, "RMSNormalization", rms_in, 2, out, 1);
	if (ok && nout > 3)
		out[3] = ev_ref(s);
	ev_unref(s);
	return ok;
}

/* EmbedLayerNormalization(input_ids, segment_ids?, word_embedding,
 * position_embedding, segment_embedding?, gamma, beta, mask?, position_ids?)
 * -> (output, mask_index?, embedding_sum?), as ONNX Runtime's CPU kernel
 * (contrib_ops/cpu/bert/embed_layer_norm.cc) computes it, float32 only: per
 * token word + position (+ segment) rows summed in float in that order, the
 * LayerNorm of the sum over hidden in float (mean, then the mean square of the
 * differences, y = d / sqrt(var + epsilon) * gamma + beta); position s of each
 * row unless position_ids ([B, S] or [1, S]) say otherwise; an id outside its
 * table fails, as ORT's "input index out of range" (a negative position id,
 * which ORT does not check, fails here too).  mask_index[b] counts the 1s of
 * mask row b (0 without a mask); embedding_sum is the sum before the norm. */
static bool k_EmbedLayerNormalization(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const char *op = "EmbedLayerNormalization";
	EvValue *none = NULL, *at[9];
	for (int i = 0; i < 9; i++)
		at[i] = i < nin ? in[i] : none;
	const EvValue *ids = at[0], *seg = at[1], *word = at[2], *pos = at[3], *segw = at[4];
	const EvValue *gamma = at[5], *beta = at[6], *mask = at[7], *pids = at[8];
	if (!ids || !word || !pos || !gamma || !beta)
		return ev_fail(c, "%s: input_ids, word_embedding, position_embedding, gamma and beta are required", op);
	if (ids->dtype != DT_INT32 || ids->rank != 2)
		return ev_fail(c, "%s: input_ids must be a 2-D int32 tensor", op);
	if (word->dtype != DT_FLOAT || word->rank != 2 || pos->dtype != DT_FLOAT || pos->rank != 2)
		return ev_fail(c, "%s: the embeddings must be 2-D float32 tensors (ORT's CPU kernel is float32 only)", op);
	int64_t B = ids->dims[0], S = ids->dims[1], H = word->dims[1];
	if (pos->dims[1] != H || (segw && (segw->dtype != DT_FLOAT || segw->rank != 2 || segw->dims[1] != H)))
		return ev_fail(c, "%s: the embeddings must share dimension 1", op);
	if ((seg == NULL) != (segw == NULL))
		return ev_fail(c, "%s: segment_ids and segment_embedding go together", op);
	if (gamma->dtype != DT_FLOAT || gamma->rank != 1 || gamma->dims[0] != H ||
	    beta->dtype != DT_FLOAT || beta->rank != 1 || beta->dims[0] != H)
		return ev_fail(c, "%s: gamma and beta must be 1-D of the hidden size", op);
	const EvValue *same[2] = {seg, mask};
	for (int i = 0; i < 2; i++)
		if (same[i] && (same[i]->dtype != DT_INT32 || same[i]->rank != 2 || same[i]->dims[0] != B ||
		                same[i]->dims[1] != S))
			return ev_fail(c, "%s: segment_ids and mask must be int32 of input_ids' shape", op);
	if (pids && (pids->dtype != DT_INT32 || pids->rank != 2 || pids->dims[1] != S ||
	             (pids->dims[0] != B && pids->dims[0] != 1)))
		return ev_fail(c, "%s: position_ids must be int32 [batch_size or 1, sequence_length]", op);
	for (int64_t t = 0; t < B * S; t++) {
		int64_t w = ev_get_i(ids, t), s = pids ? ev_get_i(pids, pids->dims[0] == 1 ? t % S : t) : t % S;
		int64_t g = seg ? ev_get_i(seg, t) : 0;
		if (w < 0 || w >= word->dims[0] || s < 0 || s >= pos->dims[0] || (seg && (g < 0 || g >= segw->dims[0])))
			return ev_fail(c, "%s: input index out of range", op);
	}
	float eps = ev_attr_float(c, "epsilon", 1e-12f);
	int64_t odims[3] = {B, S, H};
	EvValue *y = out[0] = ev_tensor_new(DT_FLOAT, 3, odims);
	EvValue *mi = nn_want_output(c, 1) ? (out[1] = ev_tensor_new(DT_INT32, 1, &B)) : NULL;
	EvValue *es = nn_want_output(c, 2) ? (out[2] = ev_tensor_new(DT_FLOAT, 3, odims)) : NULL;
	if (!y || (nn_want_output(c, 1) && !mi) || (nn_want_output(c, 2) && !es))
		return ev_fail(c, "%s: out of memory", op);
	const float *W = word->data, *P = pos->data, *G = gamma->data, *Be = beta->data;
	const float *Sg = segw ? segw->data : NULL;
	for (int64_t t = 0; t < B * S; t++) {
		int64_t w = ev_get_i(ids, t), s = pids ? ev_get_i(pids, pids->dims[0] == 1 ? t % S : t) : t % S;
		int64_t g = seg ? ev_get_i(seg, t) : 0;
		float *yr = (float *)y->data + t * H, sum = 0;
		for (int64_t i = 0; i < H; i++) {
			float v = W[w * H + i] + P[s * H + i];
			if (Sg)
				v += Sg[g * H + i];
			yr[i] = v;
			if (es)
				((float *)es->data)[t * H + i] = v;
			sum += v;
		}
		float mean = sum / (float)H;
		sum = 0;
		for (int64_t i = 0; i < H; i++) {
			float a = yr[i] - mean;
			yr[i] = a;
			sum += a * a;
		}
		float e = sqrtf(sum / (float)H + eps);
		for (int64_t i = 0; i < H; i++)
			yr[i] = yr[i] / e * G[i] + Be[i];
	}
	for (int64_t b = 0; mi && b < B; b++) {
		int32_t n = 0;
		for (int64_t s = 0; mask && s < S; s++)
			n += ev_get_i(mask, b * S + s) == 1;
		ev_set_i(mi, b, n);
	}
	return true;
}

/* RotaryEmbedding(input, position_ids, cos_cache, sin_cache): the rotation
 * of RotaryEmbedding-23 (ev_rotary) as ONNX Runtime's kernel reads it:
 * 2-D caches [max_pos, head / 2]; position_ids [batch, seq], or one element
 * p (positions p + s); without rotary_embedding_dim the head size is twice
 * the caches' width and num_heads the hidden size over it.  Where that
 * reading disagrees with X's 4-D shape, or the sequence is longer than the
 * caches (ORT: "not currently supported"), the kernel fails. */
static bool k_RotaryEmbedding(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	(void)nout;
	if (nin < 4 || !float_tensor(c, in[0], "RotaryEmbedding"))
		return false;
	EvValue *x = in[0], *pos = in[1], *cc = in[2], *sc = in[3];
	if (!pos || !cc || !sc)
		return ev_fail(c, "RotaryEmbedding: position_ids, cos_cache and sin_cache are required");
	if (ev_attr_int(c, "is_packed_batching", 0) != 0)
		return ev_fail(c, "RotaryEmbedding: packed batching is not computed");
	if (pos->kind != EV_TENSOR || pos->dtype != DT_INT64)
		return ev_fail(c, "RotaryEmbedding: position_ids must be int64");
	if (cc->kind != EV_TENSOR || cc->rank != 2 || x->rank < 3)
		return ev_fail(c, "RotaryEmbedding: expects 2-D caches and a 3-D or 4-D input");
	int64_t rd = ev_attr_int(c, "rotary_embedding_dim", 0), heads = ev_attr_int(c, "num_heads", 0);
	int64_t seq = x->rank == 4 ? x->dims[2] : x->dims[1];
	int64_t hidden = x->rank == 4 ? x->dims[1] * x->dims[3] : x->dims[2];
	if (rd > 0 && heads <= 0)
		return ev_fail(c, "RotaryEmbedding: num_heads must be provided if rotary_embedding_dim is specified");
	int64_t head = rd == 0 ? cc->dims[1] * 2 : hidden / heads;
	if (head <= 0 || hidden % head)
		return ev_fail(c, "RotaryEmbedding: the caches' width %lld does not divide the hidden size %lld",
		               (long long)cc->dims[1], (long long)hidden);
	if (heads <= 0)
		heads = hidden / head;
	if (x->rank == 3 && heads * head != hidden)
		return ev_fail(c, "RotaryEmbedding: %lld heads of %lld are not the hidden size %lld", (long long)heads,
		               (long long)head, (long long)hidden);
	if (x->rank == 4 && (x->dims[1] != heads || x->dims[3] != head))
		return ev_fail(c, "RotaryEmbedding: input [batch, %lld, seq, %lld] read as %lld heads of %lld",
		               (long long)x->dims[1], (long long)x->dims[3], (long long)heads, (long long)head);
	if (cc->dims[1] != head / 2 && !(rd > 0 && cc->dims[1] == rd / 2))
		return ev_fail(c, "RotaryEmbedding: the caches' width must be head_size / 2 or rotary_embedding_dim / 2");
	if (seq > cc->dims[0])
		return ev_fail(c, "RotaryEmbedding: sequence %lld longer than the caches' %lld rows", (long long)seq,
		               (long long)cc->dims[0]);
	EvValue *p2 = NULL;
	if (pos->numel == 1 && pos->rank <= 1) { /* an offset: positions p + s */
		int64_t d[2] = {x->dims[0], seq}, p0 = ev_get_i(pos, 0);
		if (p0 < 0 || p0 > cc->dims[0] - seq)
			return ev_fail(c, "RotaryEmbedding: %lld positions from %lld outside the caches' %lld rows",
			               (long long)seq, (long long)p0, (long long)cc->dims[0]);
		if (!(p2 = ev_tensor_new(DT_INT64, 2, d)))
			return ev_fail(c, "RotaryEmbedding: out of memory");
		for (int64_t i = 0; i < p2->numel; i++)
			ev_set_i(p2, i, p0 + i % seq);
		pos = p2;
	}
	bool ok = ev_rotary(c, x, cc, sc, pos, heads, rd, ev_attr_int(c, "interleaved", 0) != 0, out);
	if (p2)
		ev_unref(p2);
	return ok;
}

static const EvKernel vendor_kernels[] = {
	{.op = "BiasGelu", .fn = k_BiasGelu, .dtypes = 0},
	{.op = "DynamicQuantizeMatMul", .fn = k_DynamicQuantizeMatMul, .dtypes = 0},
	{.op = "EmbedLayerNormalization", .fn = k_EmbedLayerNormalization, .dtypes = 0},
	{.op = "FastGelu", .fn = k_FastGelu, .dtypes = 0},
	{.op = "FusedConv", .fn = k_FusedConv, .dtypes = 0},
	{.op = "FusedGemm", .fn = k_FusedGemm, .dtypes = 0},
	{.op = "FusedMatMul", .fn = k_FusedMatMul, .dtypes = 0},
	{.op = "Gelu", .fn = k_Gelu, .dtypes = 0},
	{.op = "LayerNormalization", .fn = k_LayerNormalization, .dtypes = 0},
	{.op = "MatMulIntegerToFloat", .fn = k_MatMulIntegerToFloat, .dtypes = 0},
	{.op = "MultiHeadAttention", .fn = ev_kernel_multi_head_attention, .dtypes = 0},
	{.op = "NhwcConv", .fn = k_NhwcConv, .dtypes = 0},
	{.op = "QuickGelu", .fn = k_QuickGelu, .dtypes = 0},
	{.op = "RotaryEmbedding", .fn = k_RotaryEmbedding, .dtypes = 0},
	{.op = "SimplifiedLayerNormalization", .fn = k_SimplifiedLayerNormalization, .dtypes = 0},
	{.op = "SkipLayerNormalization", .fn = k_SkipLayerNormalization, .dtypes = 0},
	{.op = "SkipSimplifiedLayerNormalization", .fn = k_SkipSimplifiedLayerNormalization, .dtypes = 0},
	{0},
};

const EvKernel *ev_kernel_vendor(const char *op)
{
	for (const EvKernel *k = vendor_kernels; k->op; k++)
		if (!strcmp(k->op, op))
			return k;
	return NULL;
}
