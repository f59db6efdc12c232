/* portable.c - whether a result the evaluator computed is the one ONNX
 * Runtime's kernels compute too, for constant folding (engine/fold.c) and the
 * values shape inference knows (infer/infer.c): both turn a result into a
 * constant of the model, so it must be what the original computes in ORT.
 *
 * Ops that combine many elements into one (a sum, a product, a running
 * maximum, a norm's mean and variance) give, on inf or NaN or where a partial
 * result overflows, what the order and formula of the kernel make of it, and
 * ONNX Runtime's kernels (blocked, vectorized, fused multiply-adds) and the
 * evaluator's take other orders (make difftest: a Conv with a -inf weight, a
 * LayerNormalization of -inf, a ReduceMax meeting a NaN).  Such a result is
 * kept only where every order gives the same answer up to rounding: no
 * float input holds inf, NaN or a denormal, the result holds none, and (for the summing
 * kind) no partial result can overflow: max|input|^2 times the largest input's
 * element count within half the result type's range (for ReduceProd,
 * max|input| to the power of the element count).  docs/evaluator.md. */
#include "eval.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const char *const order_sensitive[] = {
	"Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum", "CumSum", "ReduceSum", "ReduceMean",
	"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
	"LayerNormalization", "GroupNormalization", "InstanceNormalization", "RMSNormalization",
	"LpNormalization", "MeanVarianceNormalization", "Softmax", "LogSoftmax", "AveragePool",
	"GlobalAveragePool", "LpPool", "GlobalLpPool", "Attention", "RNN", "GRU", "LSTM", "DFT", "STFT",
	NULL};
/* the running-maximum kind, and BatchNormalization (ONNX Runtime applies it
 * as one precomputed scale and shift, which meets inf and denormals in
 * another order than the formula; RotaryEmbedding, whose two products and
 * a sum ORT may fuse): only inf, NaN and denormals matter */
static const char *const order_sensitive_max[] = {
	"ReduceMax", "ReduceMin", "ReduceProd", "ArgMax", "ArgMin", "MaxPool", "GlobalMaxPool", "TopK",
	"Hardmax", "MaxRoiPool", "BatchNormalization", "RotaryEmbedding", NULL};

static bool listed(const char *const *list, const char *op)
{
	for (; *list; list++)
		if (!strcmp(*list, op))
			return true;
	return false;
}

/* The smallest normal magnitude of a float type: below it (not 0) a value
 * is denormal, and ONNX Runtime's kernels may flush it to zero (make
 * difftest: an InstanceNormalization bias of -1e-40 became 0 there). */
static double type_min_normal(int dtype)
{
	switch (dtype) {
	case DT_FLOAT16: return 6.103515625e-05;
	case DT_DOUBLE: return DBL_MIN;
	default: return FLT_MIN;
	}
}

static double type_max(int dtype)
{
	switch (dtype) {
	case DT_FLOAT16: return 65504.0;
	case DT_DOUBLE: return DBL_MAX;
	default: return FLT_MAX;
	}
}

/* ONNX Runtime's float Sigmoid and Tanh are approximations whose error is
 * absolute, about 1e-7 (Tanh's up to 3e-7): far in Sigmoid's tail it gives 0
 * where the exact value is 8e-8 (make difftest seed 147385: Sigmoid(-16.3),
 * then a Div by it), and Tanh gives +-1 (even -1.0000002) where the exact
 * value is 0.99999994 (seed 400299: Tanh(8.71), then a Cast to int32), and
 * 0 for a denormal (seed 429027: Tanh(-1e-45), then a Sign).  A result
 * holding a value that close to 0 (Sigmoid), to +-1 or denormal (Tanh) is
 * left to ORT. */
static bool approx_tail_portable(bool tanh_op, EvValue *const *out, uint32_t nout)
{
	for (uint32_t i = 0; i < nout; i++) {
		const EvValue *v = out[i];
		if (!v || v->kind != EV_TENSOR || !ev_is_float(v->dtype))
			continue;
		for (int64_t k = 0; k < v->numel; k++) {
			double y = ev_get_f(v, k);
			if (tanh_op ? fabs(y) > 1 - 1e-6 || (y != 0 && fabs(y) < FLT_MIN) : y > 0 && y < 1e-6)
				return false;
		}
	}
	return true;
}

bool ev_result_portable(const char *op, EvValue *const *in, uint32_t nin, EvValue *const *out, uint32_t nout)
{
	if (!strcmp(op, "Sigmoid") || !strcmp(op, "Tanh"))
		return approx_tail_portable(op[0] == 'T', out, nout);
	bool summing = listed(order_sensitive, op);
	if (!summing && !listed(order_sensitive_max, op))
		return true;
	double big = 0, limit = DBL_MAX;
	int64_t count = 0;
	/* a zero result's sign where an input holds -0: ONNX Runtime sums from +0
	 * or copies a lone element, by the path its axes take (a ReduceMean of one
	 * -0 over negative axes is -0, over positive ones +0; make difftest seed
	 * 431850, then a Div by it) */
	bool neg_zero_in = false, zero_out = false;
	for (uint32_t i = 0; i < nin; i++) {
		const EvValue *v = in[i];
		/* an empty operand: ONNX Runtime's reductions keep an empty input's
		 * shape where the spec reduces it (make difftest: ReduceSum of a
		 * [2,3,1,0] over every axis, [2,1,1,0] in ORT, [1,1,1,1] here) */
		if (i == 0 && v && v->kind == EV_TENSOR && v->numel == 0)
			return false;
		if (!v || v->kind != EV_TENSOR || !ev_is_float(v->dtype))
			continue;
		double tiny = type_min_normal(v->dtype);
		for (int64_t k = 0; k < v->numel; k++) {
			double x = fabs(ev_get_f(v, k));
			if (!isfinite(x) || (x != 0 && x < tiny))
				return false;
			if (x > big)
				big = x;
			neg_zero_in |= x == 0 && signbit(ev_get_f(v, k));
		}
		if (v->numel > count)
			count = v->numel;
	}
	for (uint32_t i = 0; i < nout; i++) {
		const EvValue *v = out[i];
		if (!v || v->kind != EV_TENSOR || !ev_is_float(v->dtype))
			continue;
		if (type_max(v->dtype) < limit)
			limit = type_max(v->dtype);
		double tiny = type_min_normal(v->dtype);
		for (int64_t k = 0; k < v->numel; k++) {
			double x = fabs(ev_get_f(v, k));
			if (!isfinite(x) || (x != 0 && x < tiny))
				return false;
			zero_out |= x == 0;
		}
	}
	if (summing && neg_zero_in && zero_out)
		return false;
	if (!strcmp(op, "ReduceProd"))
		return big <= 1 || (double)count * log(big) < log(limit / 2);
	return !summing || big * big * (double)count < limit / 2;
}

