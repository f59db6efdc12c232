/* attention.c - the Attention kernel (opset 23): softmax(Q K^T * scale +
 * bias) V per batch and head, with the attention mask (bool: false masks
 * out; otherwise added), is_causal, past key/value concatenation, grouped
 * heads (q_num_heads a multiple of kv_num_heads), softcap, and the 3-D form
 * whose heads are packed in the last axis.
 *
 * Two schedules compute the same thing (attention.h):
 *   - naive: the Sq x Skv score matrix of one (batch, head) materialized, a
 *     max-subtracted softmax over each row, then the product with V; ONNX's
 *     reference order.  It also gives qk_matmul_output when that is asked.
 *   - flash: FlashAttention's schedule.  Queries in blocks of ATT_BQ rows,
 *     keys and values in blocks of ATT_BK; each query row keeps a running
 *     max m, a running denominator l and an unnormalized output row; a new
 *     key block rescales them by exp(m_old - m_new) (the online softmax) and
 *     adds its own exp(s - m_new) V.  Memory is ATT_BQ x ATT_BK scores, never
 *     the whole matrix; the result differs from naive only by float rounding
 *     (the sums are grouped differently).
 * The evaluator runs flash unless qk_matmul_output is wanted.  Fully masked
 * rows give NaN in both (0 / 0), as in ONNX's reference, where the softmax
 * of a row of -inf is NaN; NaN scores propagate the same way.
 *
 * Arithmetic as nn_util.h says: float32 in float, float16/bfloat16 widened
 * to float32, float64 in double.  The typed core is compiled twice, as in
 * norm.c: this file includes itself with ATT_T = float, then double. */
#ifndef ATT_T

#include "runtime/eval/attention.h"
#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ATT_T float
#define F(name) name##_f32
#include "attention.c"
#undef ATT_T
#undef F
#define ATT_T double
#define F(name) name##_f64
#include "attention.c"
#undef ATT_T
#undef F

/* Q, K, V as [batch, heads, seq, head_size] float or double arrays, K and
 * V with the past prepended; the bias as Sq x Skv per (batch, head) through
 * strides (0 along broadcast axes). */
typedef struct Prepared {
	AttShape s;
	void *q, *k, *v, *bias;
	int64_t bias_strides[4];
} Prepared;

static void *att_alloc(bool f64, int64_t n)
{
	return nn_alloc((f64 ? sizeof(double) : sizeof(float)) * (size_t)(n > 0 ? n : 1));
}

static double get_elem(const EvValue *t, int64_t i) { return ev_get_f(t, i); }

static void put(void *buf, bool f64, int64_t i, double v)
{
	if (f64)
		((double *)buf)[i] = v;
	else
		((float *)buf)[i] = (float)v;
}

/* The index in X (4-D, or [B, S, H * D] 3-D) of element j of position t of
 * head h of batch bi. */
static int64_t head_index(const EvValue *x, int64_t heads, int64_t bi, int64_t h, int64_t t, int64_t j)
{
	if (x->rank == 4)
		return ((bi * heads + h) * x->dims[2] + t) * x->dims[3] + j;
	int64_t d = x->dims[2] / heads;
	return (bi * x->dims[1] + t) * heads * d + h * d + j;
}

/* A rank-4 [B, H, S, D] copy of X (4-D), or of X [B, S, H * D] (3-D) split
 * into heads, with `past` [B, H, P, D] in front along S when given. */
static void *to_heads(bool f64, const EvValue *x, const EvValue *past, int64_t heads, int64_t *seq_out)
{
	int64_t b = x->dims[0], s, d;
	if (x->rank == 4) {
		s = x->dims[2];
		d = x->dims[3];
	} else {
		s = x->dims[1];
		d = x->dims[2] / heads;
	}
	int64_t p = past ? past->dims[2] : 0, total = p + s;
	void *out = att_alloc(f64, b * heads * total * d);
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t h = 0; h < heads; h++) {
			int64_t base = (bi * heads + h) * total * d;
			for (int64_t t = 0; t < p; t++)
				for (int64_t j = 0; j < d; j++)
					put(out, f64, base + t * d + j, get_elem(past, ((bi * heads + h) * p + t) * d + j));
			for (int64_t t = 0; t < s; t++)
				for (int64_t j = 0; j < d; j++)
					put(out, f64, base + (p + t) * d + j, get_elem(x, head_index(x, heads, bi, h, t, j)));
		}
	*seq_out = total;
	return out;
}

/* present_key / present_value: past then X in heads, [B, H, P + S, D], in
 * X's own element type, element for element (not through the working
 * precision: a float64 V beside float32 Q and K keeps its bits). */
static void present_heads(EvValue *out, const EvValue *x, const EvValue *past, int64_t heads)
{
	int64_t b = out->dims[0], total = out->dims[2], d = out->dims[3];
	int64_t p = past ? past->dims[2] : 0;
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t h = 0; h < heads; h++)
			for (int64_t t = 0; t < total; t++)
				for (int64_t j = 0; j < d; j++) {
					int64_t at = ((bi * heads + h) * total + t) * d + j;
					ev_set_f(out, at, t < p ? ev_get_f(past, ((bi * heads + h) * p + t) * d + j)
					                        : ev_get_f(x, head_index(x, heads, bi, h, t - p, j)));
				}
}

static void write_heads(const EvValue *y, bool rank3, const void *buf, bool f64, const AttShape *s)
{
	EvValue *out = (EvValue *)y;
	for (int64_t b = 0; b < s->batch; b++)
		for (int64_t h = 0; h < s->q_heads; h++)
			for (int64_t i = 0; i < s->q_len; i++)
				for (int64_t j = 0; j < s->v_head; j++) {
					int64_t src = ((b * s->q_heads + h) * s->q_len + i) * s->v_head + j;
					int64_t dst = rank3 ? (b * s->q_len + i) * s->q_heads * s->v_head + h * s->v_head + j : src;
					ev_set_f(out, dst, f64 ? ((const double *)buf)[src] : ((const float *)buf)[src]);
				}
}

static void free_prepared(Prepared *p)
{
	free(p->q);
	free(p->k);
	free(p->v);
	free(p->bias);
}

/* What the op's attributes say (Attention-23's names; MultiHeadAttention
 * maps its own onto them). */
typedef struct AttAttrs {
	int64_t q_heads, kv_heads;   /* 3-D inputs only */
	bool has_scale;
	double scale;                /* else 1 / sqrt(head size) */
	double softcap;
	bool causal;
	int64_t qk_mode;
} AttAttrs;

static bool attention_core(EvCtx *c, const AttAttrs *a, EvValue **in, int nin, EvValue **out, int nout);

static bool run_attention(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	AttAttrs a = {
		.q_heads = ev_attr_int(c, "q_num_heads", 0), .kv_heads = ev_attr_int(c, "kv_num_heads", 0),
		.has_scale = ev_attr(c, "scale") != NULL, .scale = ev_attr_float(c, "scale", 1.0f),
		.softcap = ev_attr_float(c, "softcap", 0.0f), .causal = ev_attr_int(c, "is_causal", 0) != 0,
		.qk_mode = ev_attr_int(c, "qk_matmul_output_mode", 0),
	};
	return attention_core(c, &a, in, nin, out, nout);
}

/* x [B, N, L, H] as [B, L, N * H] (a copy); NULL after ev_fail. */
static EvValue *bnsh_to_bsd(EvCtx *c, const EvValue *x)
{
	int64_t B = x->dims[0], N = x->dims[1], L = x->dims[2], H = x->dims[3], d[3] = {B, L, N * H};
	EvValue *y = nn_new(c, x->dtype, 3, d);
	if (!y)
		return NULL;
	for (int64_t b = 0; b < B; b++)
		for (int64_t n = 0; n < N; n++)
			for (int64_t l = 0; l < L; l++)
				for (int64_t h = 0; h < H; h++)
					ev_set_f(y, ((b * L + l) * N + n) * H + h, ev_get_f(x, ((b * N + n) * L + l) * H + h));
	return y;
}

/* com.microsoft MultiHeadAttention (ONNX Runtime's contrib op), the part
 * graft's vendor rules emit: query [B, S, D], key [B, L, D] and value
 * [B, L, Dv], or key and value with their heads split, both [B, num_heads,
 * L, head] (ORT's BNSH form, what a KV cache or repeat_kv gives), all num_heads
 * heads, and an additive attention_bias [B or 1, num_heads or 1, S, L];
 * scale as given (0 or absent: 1 / sqrt(head size)), unidirectional as a
 * causal mask.  That is Attention-23's 3-D form with q_num_heads =
 * kv_num_heads = num_heads and the bias as its float mask (4-D key and value
 * are put back to [B, L, D] first).  Its other inputs (packed QKV, bias,
 * key_padding_mask, past key/value) and outputs are refused. */
bool ev_kernel_multi_head_attention(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 3 || !in[0] || !in[1] || !in[2])
		return ev_fail(c, "MultiHeadAttention: only separate query, key and value are supported");
	for (int i = 3; i < nin; i++)
		if (in[i] && i != 5)
			return ev_fail(c, "MultiHeadAttention: input %d is not supported (only attention_bias)", i);
	if (nout > 1)
		return ev_fail(c, "MultiHeadAttention: only the output is supported, not present_key/value or qk");
	int64_t heads = ev_attr_int(c, "num_heads", 0);
	const EvValue *q = in[0], *k = in[1], *v = in[2];
	bool bnsh = k->rank == 4 && v->rank == 4;
	if (q->rank != 3 || (!bnsh && (k->rank != 3 || v->rank != 3)))
		return ev_fail(c, "MultiHeadAttention: query must be 3-D, key and value both 3-D or both 4-D");
	if (bnsh && (heads <= 0 || k->dims[1] != heads || k->dims[3] * heads != q->dims[2] || k->dims[0] != q->dims[0] ||
	             memcmp(k->dims, v->dims, 4 * sizeof *k->dims)))
		return ev_fail(c, "MultiHeadAttention: 4-D key and value must be of one shape [%lld, num_heads %lld, L, head], "
		               "head the query's hidden size over num_heads", (long long)q->dims[0], (long long)heads);
	int64_t L = bnsh ? k->dims[2] : k->dims[1];
	const EvValue *bias = nin > 5 ? in[5] : NULL;
	if (bias && (bias->rank != 4 || bias->dims[2] != q->dims[1] || bias->dims[3] != L || bias->dtype != q->dtype))
		return ev_fail(c, "MultiHeadAttention: attention_bias must be [B or 1, heads or 1, %lld, %lld] of the query's type",
		               (long long)q->dims[1], (long long)L);
	double scale = ev_attr_float(c, "scale", 0.0f);
	AttAttrs a = {
		.q_heads = heads, .kv_heads = heads, .has_scale = scale != 0, .scale = scale,
		.causal = ev_attr_int(c, "unidirectional", 0) != 0,
	};
	EvValue *k3 = NULL, *v3 = NULL;
	if (bnsh && (!(k3 = bnsh_to_bsd(c, k)) || !(v3 = bnsh_to_bsd(c, v)))) {
		if (k3)
			ev_unref(k3);
		return false;
	}
	EvValue *att_in[4] = {in[0], bnsh ? k3 : in[1], bnsh ? v3 : in[2], (EvValue *)bias};
	bool ok = attention_core(c, &a, att_in, bias ? 4 : 3, out, nout);
	if (bnsh) {
		ev_unref(k3);
		ev_unref(v3);
	}
	return ok;
}

static bool attention_core(EvCtx *c, const AttAttrs *a, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *q = in[0], *k = in[1], *v = in[2];
	const EvValue *mask = nin > 3 ? in[3] : NULL, *pk = nin > 4 ? in[4] : NULL, *pv = nin > 5 ? in[5] : NULL;
	if (!nn_is_float_type(q->dtype) || k->dtype != q->dtype || !nn_is_float_type(v->dtype))
		return ev_fail(c, "Q, K and V must be floating-point tensors, Q and K of one type");
	if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
		return ev_fail(c, "Q, K and V must all be 3-D or all 4-D (ranks %d, %d, %d)", q->rank, k->rank, v->rank);
	bool rank3 = q->rank == 3;
	int64_t qh, kvh;
	if (rank3) {
		qh = a->q_heads;
		kvh = a->kv_heads;
		if (qh <= 0 || kvh <= 0)
			return ev_fail(c, "3-D inputs need q_num_heads and kv_num_heads");
		if (q->dims[2] % qh || k->dims[2] % kvh || v->dims[2] % kvh)
			return ev_fail(c, "hidden sizes %lld, %lld, %lld are not multiples of the head counts",
			               (long long)q->dims[2], (long long)k->dims[2], (long long)v->dims[2]);
	} else {
		qh = q->dims[1];
		kvh = k->dims[1];
		if (kvh <= 0)
			return ev_fail(c, "K has no heads");
		if (v->dims[1] != kvh)
			return ev_fail(c, "K has %lld heads, V %lld", (long long)kvh, (long long)v->dims[1]);
	}
	AttShape s = {
		.batch = q->dims[0], .q_heads = qh, .kv_heads = kvh,
		.q_len = rank3 ? q->dims[1] : q->dims[2],
		.head = rank3 ? q->dims[2] / qh : q->dims[3],
		.v_head = rank3 ? v->dims[2] / kvh : v->dims[3],
	};
	int64_t khead = rank3 ? k->dims[2] / kvh : k->dims[3];
	int64_t klen = rank3 ? k->dims[1] : k->dims[2], vlen = rank3 ? v->dims[1] : v->dims[2];
	if (k->dims[0] != s.batch || v->dims[0] != s.batch)
		return ev_fail(c, "Q, K and V have different batch sizes");
	if (khead != s.head)
		return ev_fail(c, "Q's head size %lld differs from K's %lld", (long long)s.head, (long long)khead);
	if (klen != vlen)
		return ev_fail(c, "K has %lld positions, V %lld", (long long)klen, (long long)vlen);
	if (qh % kvh)
		return ev_fail(c, "q_num_heads %lld is not a multiple of kv_num_heads %lld", (long long)qh, (long long)kvh);
	if ((pk == NULL) != (pv == NULL))
		return ev_fail(c, "past_key and past_value must be given together");
	if (pk && (pk->dtype != k->dtype || pv->dtype != v->dtype))
		return ev_fail(c, "past_key and past_value must have the element types of K and V");
	if (pk && (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != s.batch || pk->dims[1] != kvh ||
	           pk->dims[3] != s.head || pv->dims[0] != s.batch || pv->dims[1] != kvh ||
	           pv->dims[3] != s.v_head || pk->dims[2] != pv->dims[2]))
		return ev_fail(c, "past_key/past_value must be [batch, kv_num_heads, past, head_size]");
	int64_t past = pk ? pk->dims[2] : 0;
	s.kv_len = past + klen;
	if (s.kv_len <= 0) /* as ONNX Runtime, which would divide by the empty softmax's sum */
		return ev_fail(c, "KV sequence length must be greater than 0");

	bool f64 = q->dtype == DT_DOUBLE;
	s.scale = a->has_scale ? a->scale : 1.0 / sqrt((double)s.head);
	if (!f64)
		s.scale = (float)s.scale;
	s.softcap = a->softcap;
	s.causal = a->causal;
	s.past = past;
	int64_t mode = a->qk_mode;
	if (mode < 0 || mode > 3)
		return ev_fail(c, "qk_matmul_output_mode must be 0 to 3, got %lld", (long long)mode);

	Prepared p = {.s = s};
	int64_t kl, vl;
	p.q = to_heads(f64, q, NULL, qh, &kl);
	p.k = to_heads(f64, k, pk, kvh, &kl);
	p.v = to_heads(f64, v, pv, kvh, &vl);
	if (mask) {
		/* Broadcast to [B, H, Sq, Skv] through strides; the last axis may be
		 * shorter than Skv and is then padded with masked positions. */
		if (mask->rank < 1 || mask->rank > 4) {
			free_prepared(&p);
			return ev_fail(c, "attn_mask must have rank 1 to 4, got %d", mask->rank);
		}
		int64_t full[4] = {s.batch, s.q_heads, s.q_len, s.kv_len}, md[4] = {1, 1, 1, 1};
		for (int i = 0; i < mask->rank; i++)
			md[4 - mask->rank + i] = mask->dims[i];
		for (int i = 0; i < 3; i++)
			if (md[i] != 1 && md[i] != full[i]) {
				free_prepared(&p);
				return ev_fail(c, "attn_mask does not broadcast to [%lld, %lld, %lld, %lld]", (long long)full[0],
				               (long long)full[1], (long long)full[2], (long long)full[3]);
			}
		if (md[3] > s.kv_len) {
			free_prepared(&p);
			return ev_fail(c, "attn_mask's last axis (%lld) is longer than the %lld keys", (long long)md[3],
			               (long long)s.kv_len);
		}
		/* A copy of the mask as an additive bias, padded to Skv columns. */
		int64_t rows = md[0] * md[1] * md[2];
		p.bias = att_alloc(f64, rows * s.kv_len);
		bool is_bool = mask->dtype == DT_BOOL;
		for (int64_t r = 0; r < rows; r++)
			for (int64_t j = 0; j < s.kv_len; j++) {
				double b;
				if (j >= md[3])
					b = -INFINITY;
				else if (is_bool)
					b = ((const uint8_t *)mask->data)[r * md[3] + j] ? 0.0 : -INFINITY;
				else
					b = get_elem(mask, r * md[3] + j);
				put(p.bias, f64, r * s.kv_len + j, b);
			}
		p.bias_strides[3] = 1;
		p.bias_strides[2] = md[2] == 1 ? 0 : s.kv_len;
		p.bias_strides[1] = md[1] == 1 ? 0 : md[2] * s.kv_len;
		p.bias_strides[0] = md[0] == 1 ? 0 : md[1] * md[2] * s.kv_len;
	}

	int64_t yd4[4] = {s.batch, s.q_heads, s.q_len, s.v_head};
	int64_t yd3[3] = {s.batch, s.q_len, s.q_heads * s.v_head};
	EvValue *y = nn_new(c, q->dtype, rank3 ? 3 : 4, rank3 ? yd3 : yd4);
	if (!y) {
		free_prepared(&p);
		return false;
	}
	out[0] = y;
	void *ybuf = att_alloc(f64, s.batch * s.q_heads * s.q_len * s.v_head);
	bool want_qk = nout > 3 && c->m && ir_node(c->m, c->node)->noutputs > 3 &&
	               ir_node(c->m, c->node)->outputs[3] != 0;
	void *qk = NULL;
	if (want_qk)
		qk = att_alloc(f64, s.batch * s.q_heads * s.q_len * s.kv_len);
	AttInputs ai = {.q = p.q, .k = p.k, .v = p.v, .bias = p.bias, .qk = qk, .qk_mode = (int)mode};
	memcpy(ai.bias_strides, p.bias_strides, sizeof ai.bias_strides);
	if (f64)
		want_qk ? att_naive_f64(&s, &ai, ybuf) : att_flash_f64(&s, &ai, ybuf);
	else
		want_qk ? att_naive_f32(&s, &ai, ybuf) : att_flash_f32(&s, &ai, ybuf);
	write_heads(y, rank3, ybuf, f64, &s);
	free(ybuf);

	/* present_key / present_value: the concatenated K and V, 4-D. */
	for (int o = 1; o <= 2 && o < nout; o++) {
		int64_t hd = o == 1 ? s.head : s.v_head;
		int64_t d[4] = {s.batch, kvh, s.kv_len, hd};
		EvValue *t = nn_new(c, o == 1 ? k->dtype : v->dtype, 4, d);
		if (!t) {
			free(qk);
			free_prepared(&p);
			return false;
		}
		present_heads(t, o == 1 ? k : v, o == 1 ? pk : pv, kvh);
		out[o] = t;
	}
	if (nout > 3) {
		int64_t d[4] = {s.batch, s.q_heads, s.q_len, s.kv_len};
		EvValue *t = nn_new(c, q->dtype, 4, d);
		if (!t) {
			free(qk);
			free_prepared(&p);
			return false;
		}
		if (qk)
			for (int64_t i = 0; i < t->numel; i++)
				ev_set_f(t, i, f64 ? ((const double *)qk)[i] : ((const float *)qk)[i]);
		out[3] = t;
	}
	free(qk);
	free_prepared(&p);
	return true;
}

const EvKernel ev_kernels_attention[] = {
	EV_KERNEL(Attention, run_attention, NN_FLOATS),
	{0},
};

#else /* ---- typed core: ATT_T is float or double ------------------------- */

#include <tgmath.h>

/* q . k * scale, capped: the qk_matmul_output of modes 0 and 1. */
static inline ATT_T F(raw_score)(const AttShape *s, const ATT_T *qi, const ATT_T *kj)
{
	ATT_T acc = 0;
	for (int64_t d = 0; d < s->head; d++)
		acc = acc + qi[d] * kj[d];
	acc = acc * (ATT_T)s->scale;
	if (s->softcap > 0)
		acc = (ATT_T)s->softcap * tanh(acc / (ATT_T)s->softcap);
	return acc;
}

/* The score that goes into the softmax: the raw score plus the bias, -inf
 * where causality masks key j for query i. */
static inline ATT_T F(masked)(const AttShape *s, ATT_T raw, const ATT_T *bias_row, int64_t i, int64_t j)
{
	if (bias_row)
		raw = raw + bias_row[j];
	if (s->causal && j > i + s->past)
		raw = -INFINITY;
	return raw;
}

static inline const ATT_T *F(bias_row)(const AttShape *s, const AttInputs *in, int64_t b, int64_t h, int64_t i)
{
	if (!in->bias)
		return NULL;
	return (const ATT_T *)in->bias + b * in->bias_strides[0] + h * in->bias_strides[1] + i * in->bias_strides[2];
}

/* max that propagates NaN, as numpy's max does. */
static inline ATT_T F(nanmax)(ATT_T a, ATT_T b)
{
	return isnan(a) || isnan(b) ? (ATT_T)NAN : (a > b ? a : b);
}

/* Where head h of batch b starts in Q, K, V and the output (query heads
 * in a group share one K and V head). */
typedef struct F(Head) {
	const ATT_T *q, *k, *v;
	ATT_T *y;
} F(Head);

static inline F(Head) F(head_at)(const AttShape *s, const AttInputs *in, ATT_T *y, int64_t b, int64_t h)
{
	int64_t kvh = h / (s->q_heads / s->kv_heads);
	return (F(Head)){
		.q = (const ATT_T *)in->q + (b * s->q_heads + h) * s->q_len * s->head,
		.k = (const ATT_T *)in->k + (b * s->kv_heads + kvh) * s->kv_len * s->head,
		.v = (const ATT_T *)in->v + (b * s->kv_heads + kvh) * s->kv_len * s->v_head,
		.y = y + (b * s->q_heads + h) * s->q_len * s->v_head,
	};
}

void F(att_naive)(const AttShape *s, const AttInputs *in, ATT_T *y)
{
	ATT_T *row = nn_alloc(sizeof(ATT_T) * (size_t)(s->kv_len ? s->kv_len : 1));
	int64_t nmat = s->q_len * s->kv_len;
	ATT_T *mat = nn_alloc(sizeof(ATT_T) * (size_t)(nmat > 0 ? nmat : 1));
	for (int64_t b = 0; b < s->batch; b++)
		for (int64_t h = 0; h < s->q_heads; h++) {
			F(Head) hd = F(head_at)(s, in, y, b, h);
			const ATT_T *qh = hd.q, *kh = hd.k, *vh = hd.v;
			ATT_T *yh = hd.y;
			ATT_T *qk = in->qk ? (ATT_T *)in->qk + (b * s->q_heads + h) * s->q_len * s->kv_len : NULL;
			/* the whole score matrix first */
			for (int64_t i = 0; i < s->q_len; i++) {
				const ATT_T *br = F(bias_row)(s, in, b, h, i);
				for (int64_t j = 0; j < s->kv_len; j++) {
					ATT_T raw = F(raw_score)(s, qh + i * s->head, kh + j * s->head);
					ATT_T full = F(masked)(s, raw, br, i, j);
					mat[i * s->kv_len + j] = full;
					if (qk && (in->qk_mode == 0 || in->qk_mode == 1))
						qk[i * s->kv_len + j] = raw;
					else if (qk && in->qk_mode == 2)
						qk[i * s->kv_len + j] = full;
				}
			}
			/* softmax per row, then the product with V */
			for (int64_t i = 0; i < s->q_len; i++) {
				ATT_T *sr = mat + i * s->kv_len;
				ATT_T mx = -INFINITY;
				for (int64_t j = 0; j < s->kv_len; j++)
					mx = F(nanmax)(mx, sr[j]);
				ATT_T sum = 0;
				for (int64_t j = 0; j < s->kv_len; j++) {
					row[j] = exp(sr[j] - mx);
					sum = sum + row[j];
				}
				for (int64_t j = 0; j < s->kv_len; j++) {
					row[j] = row[j] / sum;
					if (qk && in->qk_mode == 3)
						qk[i * s->kv_len + j] = row[j];
				}
				for (int64_t d = 0; d < s->v_head; d++) {
					ATT_T acc = 0;
					for (int64_t j = 0; j < s->kv_len; j++)
						acc = acc + row[j] * vh[j * s->v_head + d];
					yh[i * s->v_head + d] = acc;
				}
			}
		}
	free(row);
	free(mat);
}

void F(att_flash)(const AttShape *s, const AttInputs *in, ATT_T *y)
{
	ATT_T sc[ATT_BQ][ATT_BK];
	ATT_T m[ATT_BQ], l[ATT_BQ];
	ATT_T *acc = nn_alloc(sizeof(ATT_T) * (size_t)(ATT_BQ * (s->v_head ? s->v_head : 1)));
	for (int64_t b = 0; b < s->batch; b++)
		for (int64_t h = 0; h < s->q_heads; h++) {
			F(Head) hd = F(head_at)(s, in, y, b, h);
			const ATT_T *qh = hd.q, *kh = hd.k, *vh = hd.v;
			ATT_T *yh = hd.y;
			for (int64_t i0 = 0; i0 < s->q_len; i0 += ATT_BQ) {
				int64_t nq = s->q_len - i0 < ATT_BQ ? s->q_len - i0 : ATT_BQ;
				for (int64_t r = 0; r < nq; r++) {
					m[r] = -INFINITY;
					l[r] = 0;
				}
				memset(acc, 0, sizeof(ATT_T) * (size_t)(nq * s->v_head));
				for (int64_t j0 = 0; j0 < s->kv_len; j0 += ATT_BK) {
					int64_t nk = s->kv_len - j0 < ATT_BK ? s->kv_len - j0 : ATT_BK;
					for (int64_t r = 0; r < nq; r++) {
						int64_t i = i0 + r;
						const ATT_T *br = F(bias_row)(s, in, b, h, i);
						ATT_T bmax = -INFINITY;
						for (int64_t t = 0; t < nk; t++) {
							ATT_T raw = F(raw_score)(s, qh + i * s->head, kh + (j0 + t) * s->head);
							sc[r][t] = F(masked)(s, raw, br, i, j0 + t);
							bmax = F(nanmax)(bmax, sc[r][t]);
						}
						ATT_T mnew = F(nanmax)(m[r], bmax);
						if (mnew == -INFINITY)
							continue; /* every key so far masked: nothing to add */
						/* rescale what the earlier blocks gave to the new max */
						ATT_T corr = m[r] == -INFINITY ? 0 : exp(m[r] - mnew);
						ATT_T *ar = acc + r * s->v_head;
						if (corr != 1)
							for (int64_t d = 0; d < s->v_head; d++)
								ar[d] = ar[d] * corr;
						ATT_T lsum = 0;
						for (int64_t t = 0; t < nk; t++) {
							ATT_T pt = exp(sc[r][t] - mnew);
							lsum = lsum + pt;
							const ATT_T *vr = vh + (j0 + t) * s->v_head;
							for (int64_t d = 0; d < s->v_head; d++)
								ar[d] = ar[d] + pt * vr[d];
						}
						l[r] = l[r] * corr + lsum;
						m[r] = mnew;
					}
				}
				for (int64_t r = 0; r < nq; r++)
					for (int64_t d = 0; d < s->v_head; d++)
						yh[(i0 + r) * s->v_head + d] = acc[r * s->v_head + d] / l[r];
			}
		}
	free(acc);
}

#endif
