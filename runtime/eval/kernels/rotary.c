/* rotary.c - the RotaryEmbedding kernel (opset 23): rotary position
 * embeddings as ONNX's reference computes them.  X is [batch, heads, seq,
 * head] (4-D) or [batch, seq, heads * head] (3-D, num_heads set); the first
 * rotary_embedding_dim elements of each head (all when 0) are rotated in
 * pairs: (x1, x2) = the two halves, or the even and odd elements when
 * interleaved, and
 *     real = cos * x1 - sin * x2,   imag = sin * x1 + cos * x2
 * go back where x1 and x2 were; the rest of the head is copied.  cos and sin
 * are cos_cache[position_ids] ([max_pos, rd / 2] caches) or, without
 * position_ids, the caches themselves ([batch, seq, rd / 2]).
 *
 * Arithmetic in the element type: float32 products and sums are rounded to
 * float one by one (computed in double, which rounds each of them exactly
 * as float arithmetic does), so a rotation written out as Mul/Neg/Add gives
 * the same bits; float16 and bfloat16 go through float32; float64 in double.
 * The rules that create the op: rules/extended/llm.rules.
 *
 * ONNX Runtime's com.microsoft.RotaryEmbedding (runtime/eval/vendor.c, for
 * rules/extended/vendor.rules) is the same rotation with its own input order
 * and position forms; it calls ev_rotary (runtime/eval/rotary.h). */
#include "runtime/eval/eval.h"
#include "runtime/eval/rotary.h"
#include "nn_util.h"

#include <stdlib.h>

/* v rounded to what the element type's arithmetic keeps */
static double rnd(int dtype, double v) { return dtype == DT_DOUBLE ? v : (double)(float)v; }

bool ev_rotary(EvCtx *c, const EvValue *x, const EvValue *cc, const EvValue *sc, const EvValue *pos, int64_t heads3,
               int64_t rd, bool interleaved, EvValue **out)
{
	if (!x || !cc || !sc || x->kind != EV_TENSOR || cc->kind != EV_TENSOR || sc->kind != EV_TENSOR ||
	    (pos && (pos->kind != EV_TENSOR || pos->dtype != DT_INT64)))
		return ev_fail(c, "X, cos_cache and sin_cache must be tensors, position_ids an int64 tensor");
	if (!nn_is_float_type(x->dtype) || cc->dtype != x->dtype || sc->dtype != x->dtype)
		return ev_fail(c, "X, cos_cache and sin_cache must be floating-point tensors of one type");
	if (x->rank != 3 && x->rank != 4)
		return ev_fail(c, "X must be 3-D or 4-D (rank %d)", x->rank);
	int64_t batch = x->dims[0], heads, seq, head;
	if (x->rank == 4) {
		heads = x->dims[1];
		seq = x->dims[2];
		head = x->dims[3];
	} else {
		heads = heads3;
		seq = x->dims[1];
		if (heads <= 0 || x->dims[2] % heads)
			return ev_fail(c, "3-D X needs num_heads dividing its hidden size %lld", (long long)x->dims[2]);
		head = x->dims[2] / heads;
	}
	if (rd == 0)
		rd = head;
	if (rd < 0 || rd > head || rd % 2)
		return ev_fail(c, "rotary_embedding_dim %lld must be even and at most the head size %lld", (long long)rd,
		               (long long)head);
	int64_t half = rd / 2;
	/* the caches: [max_pos, >= half] with position_ids [batch, seq], else [batch, seq, >= half] */
	int64_t cw;
	if (pos) {
		if (cc->rank != 2 || sc->rank != 2 || pos->rank != 2 || pos->dims[0] != batch || pos->dims[1] != seq)
			return ev_fail(c, "with position_ids [batch, seq] the caches must be 2-D");
		cw = cc->dims[1];
	} else {
		if (cc->rank != 3 || sc->rank != 3 || cc->dims[0] != batch || cc->dims[1] != seq)
			return ev_fail(c, "without position_ids the caches must be [batch, seq, rotary_embedding_dim / 2]");
		cw = cc->dims[2];
	}
	for (int d = 0; d < cc->rank; d++)
		if (sc->dims[d] != cc->dims[d])
			return ev_fail(c, "cos_cache and sin_cache have different shapes");
	if (cw < half)
		return ev_fail(c, "the caches have %lld columns, rotary_embedding_dim / 2 is %lld", (long long)cw,
		               (long long)half);
	EvValue *y = nn_new(c, x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	out[0] = y;
	int dt = x->dtype;
	for (int64_t b = 0; b < batch; b++)
		for (int64_t s = 0; s < seq; s++) {
			int64_t row; /* the caches' row of (b, s) */
			if (pos) {
				int64_t p = ev_get_i(pos, b * seq + s);
				if (p < 0 || p >= cc->dims[0])
					return ev_fail(c, "position id %lld outside the caches' %lld rows", (long long)p,
					               (long long)cc->dims[0]);
				row = p * cw;
			} else {
				row = (b * seq + s) * cw;
			}
			for (int64_t h = 0; h < heads; h++) {
				int64_t base = x->rank == 4 ? ((b * heads + h) * seq + s) * head : ((b * seq + s) * heads + h) * head;
				for (int64_t i = 0; i < half; i++) {
					int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
					double co = ev_get_f(cc, row + i), si = ev_get_f(sc, row + i);
					double x1 = ev_get_f(x, base + i1), x2 = ev_get_f(x, base + i2);
					ev_set_f(y, base + i1, rnd(dt, rnd(dt, co * x1) - rnd(dt, si * x2)));
					ev_set_f(y, base + i2, rnd(dt, rnd(dt, si * x1) + rnd(dt, co * x2)));
				}
				for (int64_t i = rd; i < head; i++)
					ev_set_f(y, base + i, ev_get_f(x, base + i));
			}
		}
	return true;
}

/* RotaryEmbedding-23(X, cos_cache, sin_cache, position_ids?) */
static bool run_rotary(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	(void)nout;
	return ev_rotary(c, in[0], in[1], in[2], nin > 3 ? in[3] : NULL, ev_attr_int(c, "num_heads", 0),
	                 ev_attr_int(c, "rotary_embedding_dim", 0), ev_attr_int(c, "interleaved", 0) != 0, out);
}

const EvKernel ev_kernels_rotary[] = {
	EV_KERNEL(RotaryEmbedding, run_rotary, NN_FLOATS),
	{0},
};
