/* check_attention.c - the Attention kernel (runtime/eval/kernels/attention.c):
 * the flash schedule against the naive one on shapes that cross the tile
 * boundaries (with masks, causality, grouped heads, softcap), against a
 * score matrix worked by hand, fully masked rows, the padding of a mask
 * shorter than the keys, and the one-line errors for inputs that do not
 * fit.  tests/attention_ort.sh holds the kernel to ONNX Runtime. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/eval/attention.h"
#include "runtime/eval/eval.h"
#include "testutil.h"

/* Deterministic values in [-2, 2). */
static float *random_floats(int64_t n, uint32_t seed)
{
	float *p = malloc(sizeof(float) * (size_t)n);
	uint32_t x = seed * 2654435761u + 1;
	for (int64_t i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
		p[i] = (float)((x >> 8) & 0xffff) / 16384.0f - 2.0f;
	}
	return p;
}

typedef struct Case {
	int64_t b, hq, hkv, sq, skv, d, dv;
	bool causal, masked;
	double softcap;
} Case;

/* Shapes around ATT_BQ = 32 and ATT_BK = 64: one block, exact blocks, a
 * partial last block, a single key. */
static const Case shapes[] = {
	{1, 1, 1, 1, 1, 4, 4, false, false, 0},
	{1, 2, 2, 5, 7, 8, 3, false, false, 0},
	{2, 2, 1, 33, 65, 16, 8, false, false, 0},
	{1, 4, 2, 64, 128, 8, 8, true, false, 0},
	{1, 2, 2, 70, 130, 8, 4, false, true, 0},
	{1, 1, 1, 40, 200, 4, 4, true, true, 2.0},
	{1, 1, 1, 3, 1, 4, 2, false, false, 0},
};

START_TEST(test_flash_matches_naive)
{
	const Case *t = &shapes[_i];
	AttShape s = {.batch = t->b, .q_heads = t->hq, .kv_heads = t->hkv, .q_len = t->sq, .kv_len = t->skv,
	              .head = t->d, .v_head = t->dv, .scale = 1.0 / sqrt((double)t->d), .softcap = t->softcap,
	              .causal = t->causal};
	float *q = random_floats(t->b * t->hq * t->sq * t->d, 1);
	float *k = random_floats(t->b * t->hkv * t->skv * t->d, 2);
	float *v = random_floats(t->b * t->hkv * t->skv * t->dv, 3);
	float *bias = NULL;
	AttInputs in = {.q = q, .k = k, .v = v};
	if (t->masked) {
		/* a [Sq, Skv] bias, broadcast over batch and heads, with -inf holes */
		bias = random_floats(t->sq * t->skv, 4);
		for (int64_t i = 3; i < t->sq * t->skv; i += 7)
			bias[i] = -INFINITY;
		in.bias = bias;
		in.bias_strides[2] = t->skv;
		in.bias_strides[3] = 1;
	}
	int64_t ny = t->b * t->hq * t->sq * t->dv;
	float *y1 = calloc((size_t)ny, sizeof(float)), *y2 = calloc((size_t)ny, sizeof(float));
	att_naive_f32(&s, &in, y1);
	att_flash_f32(&s, &in, y2);
	double worst = 0;
	for (int64_t i = 0; i < ny; i++) {
		ck_assert_msg(isfinite(y1[i]) && isfinite(y2[i]), "shape %d element %lld: %g vs %g", _i, (long long)i,
		              y1[i], y2[i]);
		double e = fabs((double)y1[i] - y2[i]);
		if (e > worst)
			worst = e;
	}
	/* float rounding only: the outputs are weighted means of V in [-2, 2) */
	ck_assert_msg(worst < 2e-6, "shape %d: flash and naive differ by %g", _i, worst);
	free(q);
	free(k);
	free(v);
	free(bias);
	free(y1);
	free(y2);
}
END_TEST

/* One query, two keys, scale 1: scores 1 and 0 (q . k), so the weights are
 * e/(e+1) and 1/(e+1) and y is their mix of V's rows. */
START_TEST(test_by_hand)
{
	float q[2] = {1, 0}, k[4] = {1, 0, 0, 1}, v[4] = {10, 0, 0, 20};
	AttShape s = {.batch = 1, .q_heads = 1, .kv_heads = 1, .q_len = 1, .kv_len = 2, .head = 2, .v_head = 2,
	              .scale = 1.0};
	AttInputs in = {.q = q, .k = k, .v = v};
	float y[2], yn[2];
	att_flash_f32(&s, &in, y);
	att_naive_f32(&s, &in, yn);
	double w0 = exp(1.0) / (exp(1.0) + 1), w1 = 1 / (exp(1.0) + 1);
	ck_assert_double_eq_tol(y[0], 10 * w0, 1e-5);
	ck_assert_double_eq_tol(y[1], 20 * w1, 1e-5);
	ck_assert_double_eq_tol(yn[0], 10 * w0, 1e-5);
	ck_assert_double_eq_tol(yn[1], 20 * w1, 1e-5);
	/* causal with one query at position 0: only key 0 counts */
	s.causal = true;
	att_flash_f32(&s, &in, y);
	ck_assert_float_eq(y[0], 10);
	ck_assert_float_eq(y[1], 0);
}
END_TEST

/* A row whose every key is masked is NaN in both schedules, as in ONNX's
 * reference (the softmax of a row of -inf), and NaN scores propagate. */
START_TEST(test_masked_rows_and_nan)
{
	float q[4] = {1, 2, 3, 4}, k[4] = {1, 1, 2, 2}, v[4] = {1, 2, 3, 4};
	float bias[4] = {-INFINITY, -INFINITY, 0, 0};
	AttShape s = {.batch = 1, .q_heads = 1, .kv_heads = 1, .q_len = 2, .kv_len = 2, .head = 2, .v_head = 2,
	              .scale = 1.0};
	AttInputs in = {.q = q, .k = k, .v = v, .bias = bias, .bias_strides = {0, 0, 2, 1}};
	float y[4], yn[4];
	att_flash_f32(&s, &in, y);
	att_naive_f32(&s, &in, yn);
	ck_assert(isnan(y[0]) && isnan(y[1]) && isnan(yn[0]) && isnan(yn[1]));
	ck_assert(isfinite(y[2]) && isfinite(yn[2]));
	q[2] = NAN;
	in.bias = NULL;
	att_flash_f32(&s, &in, y);
	att_naive_f32(&s, &in, yn);
	ck_assert(isfinite(y[0]) && isnan(y[2]) && isnan(y[3]) && isnan(yn[2]) && isnan(yn[3]));
}
END_TEST

/* Run a one-node text model on the evaluator; returns its first output
 * (caller unrefs) or NULL with the error in err. */
static EvValue *run_text(const char *text, EvValue **inputs, uint32_t nin, char *err, size_t errsize)
{
	IrModel *m = parse_text_model(text);
	EvValue *out[4] = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	Diag d;
	diag_init(&d, f);
	bool ok = ev_run(m, (const EvValue *const *)inputs, nin, out, NULL, &d);
	fclose(f);
	snprintf(err, errsize, "%s", buf ? buf : "");
	free(buf);
	ir_model_free(m);
	return ok ? out[0] : NULL;
}

static EvValue *tensor_f(int rank, const int64_t *dims, const float *data)
{
	EvValue *t = ev_tensor_new(DT_FLOAT, rank, dims);
	memcpy(t->data, data, sizeof(float) * (size_t)t->numel);
	return t;
}

/* A mask shorter than the keys is padded with masked positions (ONNX's
 * reference; ONNX Runtime 1.30 refuses such a mask): the third key, which
 * would dominate, gets no weight. */
START_TEST(test_short_mask_padded)
{
	const char *text = "<ir_version: 10, opset_import: [\"\" : 23]>\n"
	                   "g (float[1,1,1,2] q, float[1,1,3,2] k, float[1,1,3,1] v, float[1,1,1,2] m) => (float[1,1,1,1] y) {\n"
	                   "  y = Attention <scale = 1.0> (q, k, v, m)\n}\n";
	int64_t dq[4] = {1, 1, 1, 2}, dk[4] = {1, 1, 3, 2}, dv[4] = {1, 1, 3, 1}, dm[4] = {1, 1, 1, 2};
	float q[2] = {1, 0}, k[6] = {0, 0, 0, 0, 50, 0}, v[3] = {1, 3, 1000}, mk[2] = {0, 0};
	EvValue *in[4] = {tensor_f(4, dq, q), tensor_f(4, dk, k), tensor_f(4, dv, v), tensor_f(4, dm, mk)};
	char err[256];
	EvValue *y = run_text(text, in, 4, err, sizeof err);
	ck_assert_msg(y, "%s", err);
	ck_assert_float_eq(((float *)y->data)[0], 2);
	ev_unref(y);
	for (int i = 0; i < 4; i++)
		ev_unref(in[i]);
}
END_TEST

/* present_key / present_value are the concatenations themselves, in K's and
 * V's own element types: a float64 V beside float32 Q and K keeps values
 * float32 cannot hold (graft verify of attention_past_kv found them rounded
 * through the working precision). */
START_TEST(test_present_exact)
{
	const char *text = "<ir_version: 10, opset_import: [\"\" : 23]>\n"
	                   "g (float[1,1,1,2] q, float[1,1,1,2] k, double[1,1,1,1] v, float[1,1,1,2] pk, double[1,1,1,1] pv)"
	                   " => (float[1,1,1,1] y, float[1,1,2,2] k2, double[1,1,2,1] v2) {\n"
	                   "  y, k2, v2 = Attention (q, k, v, , pk, pv)\n}\n";
	int64_t d2[4] = {1, 1, 1, 2}, d1[4] = {1, 1, 1, 1};
	float q[2] = {1, 0}, k[2] = {0.5f, 0.25f}, pk[2] = {-1, 3};
	EvValue *in[5] = {tensor_f(4, d2, q), tensor_f(4, d2, k), ev_tensor_new(DT_DOUBLE, 4, d1), tensor_f(4, d2, pk),
	                  ev_tensor_new(DT_DOUBLE, 4, d1)};
	((double *)in[2]->data)[0] = 1e-300;
	((double *)in[4]->data)[0] = -2.2250738585072014e-308;
	IrModel *m = parse_text_model(text);
	EvValue *out[3] = {0};
	Diag d;
	diag_init(&d, stderr);
	ck_assert(ev_run(m, (const EvValue *const *)in, 5, out, NULL, &d));
	const float *k2 = out[1]->data;
	const double *v2 = out[2]->data;
	ck_assert(k2[0] == -1 && k2[1] == 3 && k2[2] == 0.5f && k2[3] == 0.25f);
	ck_assert(v2[0] == -2.2250738585072014e-308 && v2[1] == 1e-300);
	for (int i = 0; i < 3; i++)
		ev_unref(out[i]);
	for (int i = 0; i < 5; i++)
		ev_unref(in[i]);
	ir_model_free(m);
}
END_TEST

/* Inputs that do not fit: one line naming the node. */
START_TEST(test_errors)
{
	static const struct {
		int rank;
		int64_t q[4], k[4], v[4];
		const char *msg;
	} cases[] = {
		{4, {1, 2, 3, 4}, {1, 2, 3, 5}, {1, 2, 3, 4}, "t.onnx: node 'att': Q's head size 4 differs from K's 5\n"},
		{3, {2, 3, 4}, {2, 3, 4}, {2, 3, 4}, "t.onnx: node 'att': 3-D inputs need q_num_heads and kv_num_heads\n"},
		{4, {1, 3, 2, 4}, {1, 2, 3, 4}, {1, 2, 3, 4},
		 "t.onnx: node 'att': q_num_heads 3 is not a multiple of kv_num_heads 2\n"},
		{4, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 5, 4}, "t.onnx: node 'att': K has 3 positions, V 5\n"},
		/* zero heads divided by zero (SIGFPE), an empty key sequence
		 * gave NaN where ONNX Runtime refuses both (graft verify's empty
		 * draws found them) */
		{4, {1, 0, 3, 4}, {1, 0, 3, 4}, {1, 0, 3, 4}, "t.onnx: node 'att': K has no heads\n"},
		{4, {1, 2, 3, 4}, {1, 2, 0, 4}, {1, 2, 0, 4},
		 "t.onnx: node 'att': KV sequence length must be greater than 0\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char sig[3][64];
		const int64_t *dims[3] = {cases[i].q, cases[i].k, cases[i].v};
		EvValue *in[3];
		for (int j = 0; j < 3; j++) {
			int n = snprintf(sig[j], sizeof sig[j], "float[");
			for (int a = 0; a < cases[i].rank; a++)
				n += snprintf(sig[j] + n, sizeof sig[j] - (size_t)n, "%s%lld", a ? "," : "", (long long)dims[j][a]);
			snprintf(sig[j] + n, sizeof sig[j] - (size_t)n, "] %c", "qkv"[j]);
			in[j] = ev_tensor_new(DT_FLOAT, cases[i].rank, dims[j]);
		}
		char text[512];
		snprintf(text, sizeof text,
		         "<ir_version: 10, opset_import: [\"\" : 23]>\ng (%s, %s, %s) => (float y) {\n"
		         "  [\"att\"] y = Attention (q, k, v)\n}\n", sig[0], sig[1], sig[2]);
		char err[256];
		EvValue *y = run_text(text, in, 3, err, sizeof err);
		ck_assert_msg(!y, "case %zu ran", i);
		ck_assert_str_eq(err, cases[i].msg);
		for (int j = 0; j < 3; j++)
			ev_unref(in[j]);
	}
}
END_TEST

Suite *suite_attention(void)
{
	Suite *s = suite_create("attention");
	TCase *tc = tcase_create("kernel");
	tcase_add_loop_test(tc, test_flash_matches_naive, 0, (int)(sizeof shapes / sizeof shapes[0]));
	tcase_add_test(tc, test_by_hand);
	tcase_add_test(tc, test_masked_rows_and_nan);
	tcase_add_test(tc, test_short_mask_padded);
	tcase_add_test(tc, test_present_exact);
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return s;
}
