/* check_infer.c - shape and dtype inference (runtime/infer*.c): small graphs
 * in ONNX's text syntax with exact expected types (symbolic broadcasting,
 * window sizes, MatMul batching, Reshape 0/-1, Shape chains keeping a
 * symbolic batch, Slice, opset forms of Squeeze, incremental re-inference,
 * contradictions reported), the `graft shapes` print format, and every value
 * of every static-shape torch corpus model getting a fully known shape.
 * tests/shape_oracle.py compares the same inference with python3-onnx's. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/eval/eval.h"
#include "runtime/infer/infer.h"
#include "ir/ir.h"
#include "testutil.h"
#include "ir/text.h"

typedef struct Fixture {
	IrModel *m;
	InferState *s;
	bool ok;
	char err[1024];
} Fixture;

/* Parse and infer the whole model; keeps the first error (if any). */
static Fixture infer_text(const char *text)
{
	Fixture f = {0};
	Diag d;
	diag_init(&d, NULL);
	f.m = ir_parse_model(text, strlen(text), "t.onnxtxt", &d);
	ck_assert_msg(f.m != NULL, "parse failed: %s\n--- text:\n%s", d.first, text);
	f.s = infer_new(f.m);
	diag_init(&d, NULL);
	f.ok = infer_model(f.s, &d);
	snprintf(f.err, sizeof f.err, "%s", d.first);
	return f;
}

static void fixture_free(Fixture *f)
{
	infer_free(f->s);
	ir_model_free(f->m);
}

/* A value's type as infer_print writes it, without the name. */
static const char *type_str(IrModel *m, ValueId v)
{
	static char buf[512];
	char *p = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&p, &len);
	IrValue *val = ir_value(m, v);
	fprintf(out, "%s", dtype_name(val->dtype));
	if (val->shape.rank < 0)
		fputs("[*]", out);
	else {
		fputc('[', out);
		for (int i = 0; i < val->shape.rank; i++) {
			Dim d = val->shape.dims[i];
			if (i)
				fputc(',', out);
			if (d.size >= 0)
				fprintf(out, "%lld", (long long)d.size);
			else
				fputs(d.param ? d.param : "?", out);
		}
		fputc(']', out);
	}
	fclose(out);
	snprintf(buf, sizeof buf, "%s", p);
	free(p);
	return buf;
}

static ValueId find_value(IrModel *m, const char *name)
{
	for (ValueId v = 1; v < m->nvalues; v++)
		if (!ir_value(m, v)->dead && !strcmp(ir_value(m, v)->name, name))
			return v;
	ck_abort_msg("no value '%s'", name);
	return 0;
}

#define ck_type(f, name, want) do { \
	const char *got_ = type_str((f).m, find_value((f).m, name)); \
	ck_assert_msg(strcmp(got_, want) == 0, "%s: got %s, want %s", name, got_, want); \
} while (0)

#define ck_infer_ok(f) ck_assert_msg((f).ok, "inference failed: %s", (f).err)

/* ---- broadcasting -------------------------------------------------------------- */

START_TEST(test_broadcast_symbolic)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[N,1,3] a, float[N,4,1] b, float[1] c, float[N] n, float[5] five,\n"
		"   float[M] m, float[?] u, float[1,N] row) => (s1, s2, s3, s4, s5, s6, s7, s8) {\n"
		"  s1 = Add (a, b)\n"          /* N,N->N; 1,4->4; 3,1->3 */
		"  s2 = Mul (a, c)\n"
		"  s3 = Sub (n, five)\n"       /* N with a number > 1 gives the number */
		"  s4 = Div (n, m)\n"          /* two different symbols: unknown */
		"  s5 = Greater (n, u)\n"      /* a symbol with an unknown dim: unknown */
		"  s6 = Where (s5, n, n)\n"
		"  s7 = Sum (a, b, c)\n"
		"  s8 = Add (row, n)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "s1", "float[N,4,3]");
	ck_type(f, "s2", "float[N,1,3]");
	ck_type(f, "s3", "float[5]");
	ck_type(f, "s4", "float[?]");
	ck_type(f, "s5", "bool[?]");
	ck_type(f, "s6", "float[?]");
	ck_type(f, "s7", "float[N,4,3]");
	ck_type(f, "s8", "float[1,N]");
	fixture_free(&f);
}
END_TEST

/* A KV cache's total length: the Concat of past and new keys is past + seq,
 * and so is the Range over Shape(past)[2] + Shape(ids)[1] that builds the
 * causal mask: one canonical name (terms sorted), so the two are one dim. */
START_TEST(test_symbolic_sums)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[b,2,past,16] pk, float[b,2,seq,16] k, int64[b,seq] ids, float[b,2,x,16] k3) => (t, r, t3) "
		"<int64 two = {2}, int64 one = {1}, int64 zero = {0}> {\n"
		"  t = Concat <axis = 2> (pk, k)\n"
		"  t3 = Concat <axis = 2> (k3, t)\n"
		"  sp = Shape (pk)\n  p = Gather (sp, two)\n  si = Shape (ids)\n  s = Gather (si, one)\n"
		"  n = Add (s, p)\n  r = Range (zero, n, one)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "t", "float[b,2,past + seq,16]");
	ck_type(f, "r", "int64[past + seq]");
	ck_type(f, "t3", "float[b,2,past + seq + x,16]");
	fixture_free(&f);
}
END_TEST

/* A product of dims read from shapes is named for it: torch's head split
 * [seq, batch * heads, head] and merge [seq * batch, hidden] (ViT's
 * nn.MultiheadAttention, dynamic batch), its number first and its symbols
 * sorted, so one product has one name; a product with a sum stays
 * unknown. */
START_TEST(test_symbolic_products)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[17,batch,64] x, float[s,past] y1, float[s,seq] y2) => (h, m, p, q) "
		"<int64 zero = {0}, int64 one = {1}, int64 four = {4}, int64[1] ax = {0},"
		" int64[1] d16 = {16}, int64[1] d64 = {64}> {\n"
		"  sx = Shape (x)\n  l = Gather (sx, zero)\n  b = Gather (sx, one)\n"
		"  bh = Mul (b, four)\n  hb = Mul (four, b)\n  lb = Mul (l, b)\n"
		"  ul = Unsqueeze (l, ax)\n  ubh = Unsqueeze (bh, ax)\n  ulb = Unsqueeze (lb, ax)\n"
		"  th = Concat <axis = 0> (ul, ubh, d16)\n  h = Reshape (x, th)\n"
		"  tm = Concat <axis = 0> (ulb, d64)\n  m = Reshape (x, tm)\n"
		"  uhb = Unsqueeze (hb, ax)\n  tp = Concat <axis = 0> (ul, uhb, d16)\n  p = Reshape (x, tp)\n"
		"  y = Concat <axis = 1> (y1, y2)\n  sy = Shape (y)\n  t = Gather (sy, one)\n  st = Mul (t, b)\n  ust = Unsqueeze (st, ax)\n"
		"  tq = Concat <axis = 0> (ust, d64)\n  q = Reshape (x, tq)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "h", "float[17,4*batch,16]");
	ck_type(f, "p", "float[17,4*batch,16]");
	ck_type(f, "m", "float[17*batch,64]");
	ck_type(f, "q", "float[?,64]");
	fixture_free(&f);
}
END_TEST

/* Attention with a KV cache: present_key / present_value are past + seq
 * long, the same symbol as the Concat they stand for (attention_past_kv),
 * and known sizes add. */
START_TEST(test_attention_present_sums)
{
	Fixture f = infer_text(
		"<ir_version: 10, opset_import: [\"\" : 23]>\n"
		"g (float[b,4,seq,16] q, float[b,2,seq,16] k, float[b,2,seq,8] v, float[b,2,past,16] pk,"
		" float[b,2,past,8] pv, float[1,4,3,16] q2, float[1,2,3,16] k2, float[1,2,5,16] pk2) => (y, p1, p2, y2, p3, p4) {\n"
		"  y, p1, p2 = Attention (q, k, v, , pk, pv)\n"
		"  y2, p3, p4 = Attention (q2, k2, k2, , pk2, pk2)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "y", "float[b,4,seq,8]");
	ck_type(f, "p1", "float[b,2,past + seq,16]");
	ck_type(f, "p2", "float[b,2,past + seq,8]");
	ck_type(f, "p3", "float[1,2,8,16]");
	fixture_free(&f);
}
END_TEST

START_TEST(test_broadcast_contradiction)
{
	Fixture f = infer_text(
		"g (float[2,3] a, float[4,3] b) => (y) { y = Add (a, b) }\n");
	ck_assert(!f.ok);
	ck_assert_msg(strstr(f.err, "(Add): dimensions 2 and 4 do not broadcast") != NULL, "%s", f.err);
	fixture_free(&f);
}
END_TEST

/* ---- windows ----------------------------------------------------------------------- */

START_TEST(test_conv_pool_sizes)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[N,3,32,32] x, float[8,3,3,3] w, float[16,1,5,5] dw, float[1,1,4,4] small,\n"
		"   float[1,1,6,6] six, float[1,2,3,3] wt) => (c1, c2, c3, c4, c5, p1, p2, p3, p4, p5, p6, p7, g1, t1, t2) {\n"
		"  c1 = Conv <pads = [1, 1, 1, 1]> (x, w)\n"
		"  c2 = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (x, w)\n"
		"  c3 = Conv <dilations = [2, 2]> (x, w)\n"
		"  c4 = Conv <auto_pad = \"SAME_UPPER\", strides = [3, 3]> (x, w)\n"
		"  c5 = Conv <group = 3, pads = [2, 2, 2, 2], kernel_shape = [5, 5]> (x, dw)\n"
		"  p1 = MaxPool <kernel_shape = [3, 3], strides = [2, 2]> (six)\n"
		"  p2 = MaxPool <kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1> (six)\n"
		"  p3 = AveragePool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1], ceil_mode = 1> (small)\n"
		"  p4 = MaxPool <kernel_shape = [2, 2], dilations = [2, 2]> (six)\n"
		"  p5 = AveragePool <kernel_shape = [3, 3], auto_pad = \"VALID\", strides = [2, 2]> (x)\n"
		"  p6 = MaxPool <kernel_shape = [3, 3], strides = [2, 2], auto_pad = \"VALID\", ceil_mode = 1> (six)\n"
		"  p7 = MaxPool <kernel_shape = [3, 3], strides = [3, 3], auto_pad = \"VALID\", ceil_mode = 1> (six)\n"
		"  g1 = GlobalAveragePool (x)\n"
		"  t1 = ConvTranspose <strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]> (small, wt)\n"
		"  t2 = ConvTranspose <strides = [2, 2], output_shape = [9, 9]> (small, wt)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "c1", "float[N,8,32,32]");
	ck_type(f, "c2", "float[N,8,16,16]");
	ck_type(f, "c3", "float[N,8,28,28]");
	ck_type(f, "c4", "float[N,8,11,11]");
	ck_type(f, "c5", "float[N,16,32,32]");
	ck_type(f, "p1", "float[1,1,2,2]");
	ck_type(f, "p2", "float[1,1,3,3]");
	/* ceil gives 3, which ONNX's inference (and ONNX Runtime's at load) keeps,
	 * but ORT's kernel drops the last window, which would start in the end
	 * padding, and makes 2: unknown */
	ck_type(f, "p3", "float[1,1,?,?]");
	ck_type(f, "p4", "float[1,1,4,4]");
	ck_type(f, "p5", "float[N,3,15,15]");
	/* VALID with ceil_mode: ONNX's inference says 2 (it ignores ceil_mode
	 * under VALID), ONNX Runtime's kernel and graft's 3: unknown; where the
	 * two agree (stride 3), known */
	ck_type(f, "p6", "float[1,1,?,?]");
	ck_type(f, "p7", "float[1,1,2,2]");
	ck_type(f, "g1", "float[N,3,1,1]");
	ck_type(f, "t1", "float[1,2,8,8]");
	ck_type(f, "t2", "float[1,2,9,9]");
	fixture_free(&f);
}
END_TEST

START_TEST(test_conv_channel_contradiction)
{
	Fixture f = infer_text("g (float[1,4,8,8] x, float[8,3,3,3] w) => (y) { y = Conv (x, w) }\n");
	ck_assert(!f.ok);
	ck_assert_msg(strstr(f.err, "X has 4 channels but W expects 3 x group 1") != NULL, "%s", f.err);
	fixture_free(&f);
}
END_TEST

/* ---- matrix products ----------------------------------------------------------------- */

START_TEST(test_matmul_batch)
{
	Fixture f = infer_text(
		"g (float[N,1,3,4] a, float[5,4,6] b, float[4] v, float[N,4,7] c, float[2,3] m, float[5,3] k)\n"
		"  => (y1, y2, y3, y4, y5) {\n"
		"  y1 = MatMul (a, b)\n"
		"  y2 = MatMul (v, c)\n"
		"  y3 = MatMul (a, v)\n"
		"  y4 = Gemm <transB = 1> (m, k)\n"
		"  y5 = Gemm <transA = 1> (m, m)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "y1", "float[N,5,3,6]");
	ck_type(f, "y2", "float[N,7]");
	ck_type(f, "y3", "float[N,1,3]");
	ck_type(f, "y4", "float[2,5]");
	ck_type(f, "y5", "float[3,3]");
	fixture_free(&f);

	f = infer_text("g (float[2,3] a, float[4,5] b) => (y) { y = MatMul (a, b) }\n");
	ck_assert(!f.ok);
	ck_assert_msg(strstr(f.err, "inner dimensions 3 and 4 differ") != NULL, "%s", f.err);
	fixture_free(&f);
}
END_TEST

/* ---- data movement -------------------------------------------------------------------- */

START_TEST(test_reshape_zero_minus_one)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 14]>\n"
		"g (float[2,3,4] x, float[N,3,4] y, float[0,3] e) => (r1, r2, r3, r4, r5, r6) {\n"
		"  s1 = Constant <value = int64[2] {0, -1}> ()\n"
		"  r1 = Reshape (x, s1)\n"
		"  s2 = Constant <value = int64[3] {-1, 2, 2}> ()\n"
		"  r2 = Reshape (x, s2)\n"
		"  r3 = Reshape (y, s1)\n"                       /* [N, 12] */
		"  s4 = Constant <value = int64[2] {-1, 12}> ()\n"
		"  r4 = Reshape (y, s4)\n"                       /* [N, 12]: N cancels nothing, 12 = 3*4 */
		"  s5 = Constant <value = int64[2] {0, 3}> ()\n"
		"  r5 = Reshape <allowzero = 1> (e, s5)\n"
		"  r6 = Reshape (e, s5)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "r1", "float[2,12]");
	ck_type(f, "r2", "float[6,2,2]");
	ck_type(f, "r3", "float[N,12]");
	ck_type(f, "r4", "float[N,12]");
	ck_type(f, "r5", "float[0,3]");
	ck_type(f, "r6", "float[0,3]");
	fixture_free(&f);

	f = infer_text("g (float[2,3] x) => (y) { s = Constant <value = int64[1] {5}> ()\n y = Reshape (x, s) }\n");
	ck_assert(!f.ok);
	ck_assert_msg(strstr(f.err, "cannot reshape 6 elements into 5") != NULL, "%s", f.err);
	fixture_free(&f);
}
END_TEST

START_TEST(test_shape_chain)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[N,3,4] x) => (r, e, flat, t4) {\n"
		"  s = Shape (x)\n"
		"  i0 = Constant <value = int64 {0}> ()\n"
		"  b = Gather <axis = 0> (s, i0)\n"
		"  ax = Constant <value = int64[1] {0}> ()\n"
		"  u = Unsqueeze (b, ax)\n"
		"  rest = Constant <value = int64[2] {12, 1}> ()\n"
		"  c = Concat <axis = 0> (u, rest)\n"
		"  r = Reshape (x, c)\n"
		"  i1 = Constant <value = int64[1] {1}> ()\n"
		"  i3 = Constant <value = int64[1] {3}> ()\n"
		"  t = Slice (s, i1, i3)\n"
		"  c2 = Concat <axis = 0> (u, t)\n"
		"  e = Expand (x, c2)\n"
		"  m1 = Constant <value = int64[1] {-1}> ()\n"
		"  c3 = Concat <axis = 0> (u, m1)\n"
		"  flat = Reshape (x, c3)\n"
		"  two = Constant <value = int64[1] {2}> ()\n"
		"  t2 = Mul (t, two)\n"                    /* [6, 8] */
		"  t3 = Concat <axis = 0> (u, t2)\n"
		"  t4 = ConstantOfShape (t3)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "s", "int64[3]");
	ck_type(f, "b", "int64[]");
	ck_type(f, "c", "int64[3]");
	ck_type(f, "r", "float[N,12,1]");
	ck_type(f, "e", "float[N,3,4]");
	ck_type(f, "flat", "float[N,12]");
	ck_type(f, "t4", "float[N,6,8]");
	/* [N, 12, 1] is not a constant; [3, 4] is */
	ck_assert_ptr_null(infer_known_value(f.s, find_value(f.m, "c")));
	const EvValue *t = infer_known_value(f.s, find_value(f.m, "t2"));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->dtype, DT_INT64);
	ck_assert_int_eq(t->numel, 2);
	ck_assert_int_eq(ev_get_i(t, 0), 6);
	ck_assert_int_eq(ev_get_i(t, 1), 8);
	fixture_free(&f);
}
END_TEST

/* Expand(x, Where(Equal(shape, -1), 1, shape)), as torch writes x.expand(-1, ...) */
START_TEST(test_expand_where_minus_one)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (int64[batch,128] ids, int64[1,128] pos) => (y) {\n"
		"  s = Shape (ids)\n"
		"  m1 = Constant <value = int64[2] {-1, -1}> ()\n"
		"  eq = Equal (s, m1)\n"
		"  one = Constant <value = int64[2] {1, 1}> ()\n"
		"  w = Where (eq, one, s)\n"
		"  y = Expand (pos, w)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "y", "int64[batch,128]");
	fixture_free(&f);
}
END_TEST

START_TEST(test_slice_negative)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[10,20] x, float[N,20] y) => (a, b, c, d, e) {\n"
		"  st = Constant <value = int64[1] {-3}> ()\n"
		"  en = Constant <value = int64[1] {-1}> ()\n"
		"  ax = Constant <value = int64[1] {1}> ()\n"
		"  a = Slice (x, st, en, ax)\n"                       /* [10, 2] */
		"  st2 = Constant <value = int64[2] {-1, 0}> ()\n"
		"  en2 = Constant <value = int64[2] {-9223372036854775807, 20}> ()\n"
		"  ax2 = Constant <value = int64[2] {0, 1}> ()\n"
		"  sp2 = Constant <value = int64[2] {-1, 3}> ()\n"
		"  b = Slice (x, st2, en2, ax2, sp2)\n"               /* reversed: [10, 7] */
		"  big = Constant <value = int64[1] {9223372036854775807}> ()\n"
		"  z = Constant <value = int64[1] {0}> ()\n"
		"  zero = Constant <value = int64[1] {0}> ()\n"
		"  c = Slice (y, z, big, zero)\n"                     /* [N, 20] */
		"  d = Slice (y, st, en, ax)\n"                       /* [N, 2] */
		"  e = Slice (y, z, en, zero)\n"                      /* [?, 20] */
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "a", "float[10,2]");
	ck_type(f, "b", "float[10,7]");
	ck_type(f, "c", "float[N,20]");
	ck_type(f, "d", "float[N,2]");
	ck_type(f, "e", "float[?,20]");
	fixture_free(&f);
}
END_TEST

START_TEST(test_squeeze_opsets)
{
	Fixture f = infer_text(
		"<ir_version: 7, opset_import: [\"\" : 11]>\n"
		"g (float[1,3,1,N] x) => (a, b, c) {\n"
		"  a = Squeeze <axes = [0, -2]> (x)\n"
		"  b = Unsqueeze <axes = [0, -1]> (a)\n"
		"  c = Squeeze (x)\n"                         /* N might be 1: rank unknown */
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "a", "float[3,N]");
	ck_type(f, "b", "float[1,3,N,1]");
	ck_type(f, "c", "float[*]");
	fixture_free(&f);

	f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[1,3,1,N] x, int64[1] dyn) => (a, b, c, d) {\n"
		"  ax = Constant <value = int64[2] {0, -2}> ()\n"
		"  a = Squeeze (x, ax)\n"
		"  b = Unsqueeze (a, ax)\n"                   /* axes index the output: back to [1,3,1,N] */
		"  c = Squeeze (x, dyn)\n"                    /* axes unknown */
		"  d = Unsqueeze (a, dyn)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "a", "float[3,N]");
	ck_type(f, "b", "float[1,3,1,N]");
	ck_type(f, "c", "float[*]");
	ck_type(f, "d", "float[*]");
	fixture_free(&f);

	f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[2,3] x) => (a) { ax = Constant <value = int64[1] {0}> ()\n a = Squeeze (x, ax) }\n");
	ck_assert(!f.ok);
	ck_assert_msg(strstr(f.err, "cannot squeeze dim 0 of size 2") != NULL, "%s", f.err);
	fixture_free(&f);
}
END_TEST

START_TEST(test_split_concat_gather_transpose)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[N,10,4] x, int64[2,5] idx) => (s1, s2, s3, q1, q2, q3, c, t, fl, rm, am, pd, tl) {\n"
		"  sp = Constant <value = int64[3] {2, 3, 5}> ()\n"
		"  s1, s2, s3 = Split <axis = 1> (x, sp)\n"
		"  q1, q2 = Split <axis = -1> (x)\n"
		"  q3 = Gather <axis = 1> (x, idx)\n"
		"  c = Concat <axis = 1> (s1, s3, x)\n"
		"  t = Transpose <perm = [2, 0, 1]> (x)\n"
		"  fl = Flatten <axis = 1> (x)\n"
		"  rm = ReduceMean <axes = [1], keepdims = 0> (x)\n"
		"  am = ArgMax <axis = -1> (x)\n"
		"  pads = Constant <value = int64[6] {0, 1, 2, 0, 1, 2}> ()\n"
		"  pd = Pad (x, pads)\n"
		"  reps = Constant <value = int64[3] {1, 2, 3}> ()\n"
		"  tl = Tile (x, reps)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "s1", "float[N,2,4]");
	ck_type(f, "s2", "float[N,3,4]");
	ck_type(f, "s3", "float[N,5,4]");
	ck_type(f, "q1", "float[N,10,2]");
	ck_type(f, "q2", "float[N,10,2]");
	ck_type(f, "q3", "float[N,2,5,4]");
	ck_type(f, "c", "float[N,17,4]");
	ck_type(f, "t", "float[4,N,10]");
	ck_type(f, "fl", "float[N,40]");
	ck_type(f, "rm", "float[N,4]");
	ck_type(f, "am", "int64[N,10,1]");
	ck_type(f, "pd", "float[N,12,8]");
	ck_type(f, "tl", "float[N,20,12]");
	fixture_free(&f);
}
END_TEST

START_TEST(test_overridable_initializer_not_known)
{
	/* s is an input with a default: a caller may feed another shape */
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[6] x, int64[2] s = {2, 3}) => (y, z) <int64[2] k = {3, 2}> {\n"
		"  y = Reshape (x, s)\n"
		"  z = Reshape (x, k)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "y", "float[?,?]");
	ck_type(f, "z", "float[3,2]");
	ck_assert_ptr_null(infer_known_value(f.s, find_value(f.m, "s")));
	ck_assert_ptr_nonnull(infer_known_value(f.s, find_value(f.m, "k")));
	fixture_free(&f);
}
END_TEST

/* PRelu of a scalar X and a [1] slope: ONNX's inference (ORT at load) says
 * [], ORT's kernel gives [1]; the shape is unknown, a declaration does not
 * fill it, and a slope that broadcasts to X keeps X's shape (issue 25). */
START_TEST(test_prelu_contested)
{
	Fixture f = infer_text("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                       "g (float x, float[1] s, float[2,3] a, float[3] b) => (z, w) <float[1] y> {\n"
	                       "  y = PRelu (x, s)\n  z = Identity (y)\n  w = PRelu (a, b)\n}\n");
	ck_infer_ok(f);
	ck_type(f, "y", "float[*]");
	ck_type(f, "w", "float[2,3]");
	fixture_free(&f);
}
END_TEST

START_TEST(test_declared_types_kept)
{
	/* a declared graph output names its own symbol; unknown dims get refined */
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[N,3] x) => (float[batch,?] y, float[N,3] z) {\n"
		"  y = Relu (x)\n"
		"  z = Sigmoid (x)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "x", "float[N,3]");
	ck_type(f, "y", "float[batch,3]");
	fixture_free(&f);

	f = infer_text("g (float[2,3] x) => (float[2,4] y) { y = Relu (x) }\n");
	ck_assert(!f.ok);
	ck_assert_msg(strstr(f.err, "output 'y' dim 1 is declared 4 but computes 3") != NULL, "%s", f.err);
	fixture_free(&f);
}
END_TEST

START_TEST(test_more_ops)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 17]>\n"
		"g (float[N,8,16] x, int64[N,8] ids, float[100,16] emb) => (ln, mean, cst, rg, oh, tk, tki, gi, sm, dr, mask) {\n"
		"  w = Constant <value = float[16] {1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0}> ()\n"
		"  ln, mean = LayerNormalization <axis = -1> (x, w)\n"
		"  cst = Cast <to = 10> (ids)\n"
		"  s0 = Constant <value = int64 {0}> ()\n"
		"  s1 = Constant <value = int64 {10}> ()\n"
		"  s2 = Constant <value = int64 {3}> ()\n"
		"  rg = Range (s0, s1, s2)\n"
		"  depth = Constant <value = int64 {5}> ()\n"
		"  vals = Constant <value = float[2] {0.0, 1.0}> ()\n"
		"  oh = OneHot (ids, depth, vals)\n"
		"  k = Constant <value = int64[1] {3}> ()\n"
		"  tk, tki = TopK (x, k)\n"
		"  gi = Gather (emb, ids)\n"
		"  sm = Softmax <axis = 1> (x)\n"
		"  dr, mask = Dropout (x)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "ln", "float[N,8,16]");
	ck_type(f, "mean", "float[N,8,1]");
	ck_type(f, "cst", "float16[N,8]");
	ck_type(f, "rg", "int64[4]");
	ck_type(f, "oh", "float[N,8,5]");
	ck_type(f, "tk", "float[N,8,3]");
	ck_type(f, "tki", "int64[N,8,3]");
	ck_type(f, "gi", "float[N,8,16]");
	ck_type(f, "sm", "float[N,8,16]");
	ck_type(f, "dr", "float[N,8,16]");
	ck_type(f, "mask", "bool[N,8,16]");
	const EvValue *r = infer_known_value(f.s, find_value(f.m, "rg"));
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->numel, 4);
	ck_assert_int_eq(ev_get_i(r, 3), 9);
	fixture_free(&f);
}
END_TEST

START_TEST(test_if_branches)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (bool c, float[N,3] x) => (y) {\n"
		"  y = If (c) <then_branch: graph = t () => (a) { a = Relu (x) },\n"
		"              else_branch: graph = e () => (b) { b = Neg (x) }>\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "a", "float[N,3]");
	ck_type(f, "y", "float[N,3]");
	fixture_free(&f);
}
END_TEST

/* ---- incremental ------------------------------------------------------------------- */

static NodeId producer_of(IrModel *m, const char *name)
{
	return ir_value(m, find_value(m, name))->producer;
}

START_TEST(test_incremental_input_change)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[N,3] x, float[5,2] other) => (y, o) {\n"
		"  r = Relu (x)\n"
		"  s = Shape (r)\n"
		"  t = Reshape (r, s)\n"
		"  y = Add (t, r)\n"
		"  o = Neg (other)\n"
		"}\n");
	ck_infer_ok(f);
	ck_type(f, "y", "float[N,3]");
	/* a rewrite (or the caller) gives x a static batch */
	ValueId x = find_value(f.m, "x");
	Dim dims[2] = {{7, NULL}, {3, NULL}};
	Shape sh = {2, dims};
	ir_value_set_type(f.m, x, DT_FLOAT, &sh);
	/* o's type is wiped: a pass that re-infers only what changed leaves it alone */
	ValueId o = find_value(f.m, "o");
	Shape unknown = {-1, NULL};
	ir_value_set_type(f.m, o, DT_UNDEFINED, &unknown);
	Diag d;
	diag_init(&d, stderr);
	ck_assert(infer_node_and_consumers(f.s, producer_of(f.m, "r"), &d));
	ck_type(f, "r", "float[7,3]");
	ck_type(f, "t", "float[7,3]");
	ck_type(f, "y", "float[7,3]");
	ck_type(f, "o", "?[*]");
	const EvValue *s = infer_known_value(f.s, find_value(f.m, "s"));
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(ev_get_i(s, 0), 7);

	/* and back to a symbol, with a rank change in between */
	Dim d3[3] = {{-1, "B"}, {3, NULL}, {1, NULL}};
	Shape sh3 = {3, d3};
	ir_value_set_type(f.m, x, DT_FLOAT, &sh3);
	ck_assert(infer_node_and_consumers(f.s, producer_of(f.m, "r"), &d));
	ck_type(f, "t", "float[B,3,1]");
	ck_type(f, "y", "float[B,3,1]");
	ck_assert_ptr_null(infer_known_value(f.s, find_value(f.m, "s")));
	fixture_free(&f);
}
END_TEST

/* A rewrite replaces a node: the new node's output and its consumers get types. */
START_TEST(test_incremental_new_node)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[N,4] x, float[4,6] w) => (y) {\n"
		"  a = MatMul (x, w)\n"
		"  y = Relu (a)\n"
		"}\n");
	ck_infer_ok(f);
	NodeId relu = producer_of(f.m, "y");
	ValueId ins[2] = {find_value(f.m, "x"), find_value(f.m, "x")};
	const char *outs[1] = {"sum"};
	NodeId add = ir_node_new(f.m, IR_MAIN_GRAPH, relu, "", "Add", "", ins, 2, outs, 1);
	ck_assert_uint_ne(add, 0);
	ir_set_input(f.m, relu, 0, ir_node(f.m, add)->outputs[0]);
	Diag d;
	diag_init(&d, stderr);
	ck_assert(infer_node_and_consumers(f.s, add, &d));
	ck_type(f, "sum", "float[N,4]");
	ck_type(f, "y", "float[N,4]");
	fixture_free(&f);
}
END_TEST

/* ---- printing -------------------------------------------------------------------------- */

START_TEST(test_print_format)
{
	Fixture f = infer_text(
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[N,3] x, float[?] u) => (y, z) <float[3] b = {1.0, 2.0, 3.0}> {\n"
		"  y = Add (x, b)\n"
		"  s = Shape (u)\n"
		"  z = Squeeze (x)\n"
		"}\n");
	ck_infer_ok(f);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	infer_print(f.m, out);
	fclose(out);
	ck_assert_str_eq(buf,
		"x: float[N,3]\n"
		"u: float[?]\n"
		"b: float[3]\n"
		"y: float[N,3]\n"
		"s: int64[1]\n"
		"z: float[*]\n");
	free(buf);
	fixture_free(&f);
}
END_TEST

/* ---- the corpus ------------------------------------------------------------------------ */

static bool fully_static(const IrValue *v)
{
	if (!v->dtype || v->shape.rank < 0)
		return false;
	for (int i = 0; i < v->shape.rank; i++)
		if (v->shape.dims[i].size < 0)
			return false;
	return true;
}

/* Every value of every static-shape torch model gets a dtype and a fully
 * known shape (shape_oracle.py checks they equal python3-onnx's). */
START_TEST(test_corpus_static_models_fully_shaped)
{
	const char *corpus = corpus_dir();
	if (!corpus)
		return;
	static const char *const variants[] = {"raw", "eval", "raw_opset17", "raw_injected"};
	char torch[512];
	snprintf(torch, sizeof torch, "%s/torch", corpus);
	size_t n;
	char **models = find_models(torch, &n);
	unsigned checked = 0, unshaped = 0;
	for (char **p = models; *p; p++) {
		bool is_static = false;
		for (size_t k = 0; k < sizeof variants / sizeof *variants; k++) {
			char want[64];
			snprintf(want, sizeof want, "/%s/model.onnx", variants[k]);
			size_t lp = strlen(*p), lw = strlen(want);
			if (lp >= lw && !strcmp(*p + lp - lw, want))
				is_static = true;
		}
		if (!is_static)
			continue;
		Diag d;
		diag_init(&d, stderr);
		IrModel *m = ir_load_file(*p, NULL, &d);
		ck_assert_ptr_nonnull(m);
		InferState *s = infer_new(m);
		ck_assert_msg(infer_model(s, &d), "%s: %s", *p, d.first);
		for (ValueId v = 1; v < m->nvalues; v++) {
			IrValue *val = ir_value(m, v);
			if (val->dead || fully_static(val))
				continue;
			if (unshaped++ < 10)
				fprintf(stderr, "infer: %s: %s has no static shape (%s)\n", *p, val->name, type_str(m, v));
		}
		checked++;
		infer_free(s);
		ir_model_free(m);
	}
	paths_free(models);
	ck_assert_uint_ge(checked, 27);
	ck_assert_uint_eq(unshaped, 0);
}
END_TEST

/* The dyn variants keep the symbolic batch of their input through to the
 * outputs (no value ends up with an unknown rank or dtype). */
START_TEST(test_corpus_dyn_models_keep_batch)
{
	const char *corpus = corpus_dir();
	if (!corpus)
		return;
	static const char *const models[] = {"bert_h128_l2", "gpt2_h128_l2"};
	for (size_t k = 0; k < 2; k++) {
		char path[600];
		snprintf(path, sizeof path, "%s/torch/%s/dyn/model.onnx", corpus, models[k]);
		Diag d;
		diag_init(&d, stderr);
		IrModel *m = ir_load_file(path, NULL, &d);
		if (!m)
			continue;
		InferState *s = infer_new(m);
		ck_assert_msg(infer_model(s, &d), "%s: %s", path, d.first);
		const char *batch = ir_value(m, ir_graph(m, IR_MAIN_GRAPH)->inputs[0])->shape.dims[0].param;
		ck_assert_ptr_nonnull(batch);
		IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
		for (uint32_t i = 0; i < g->noutputs; i++) {
			IrValue *out = ir_value(m, g->outputs[i]);
			ck_assert_int_ge(out->shape.rank, 1);
			ck_assert_msg(out->shape.dims[0].param && !strcmp(out->shape.dims[0].param, batch),
			              "%s: output %s is %s", path, out->name, type_str(m, g->outputs[i]));
		}
		for (ValueId v = 1; v < m->nvalues; v++)
			ck_assert_msg(ir_value(m, v)->dead || (ir_value(m, v)->dtype && ir_value(m, v)->shape.rank >= 0),
			              "%s: %s is %s", path, ir_value(m, v)->name, type_str(m, v));
		infer_free(s);
		ir_model_free(m);
	}
}
END_TEST

/* Sliding windows, inferred against computed: random Conv and pool
 * configurations (auto_pad of every kind, pads, strides, dilations,
 * ceil_mode) over small inputs; each dim inference knows must be the size
 * the kernel makes (a pool under VALID with ceil_mode once said the floor
 * where the kernel, as ONNX Runtime's, takes the ceiling). */
static int rnd(uint64_t *seed, int n)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (int)(*seed >> 33) % n;
}

START_TEST(test_window_dims_match_kernels)
{
	static const char *const ops[] = {"MaxPool", "AveragePool", "LpPool", "Conv"};
	static const char *const pads[] = {"NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
	uint64_t seed = 27;
	int checked = 0;
	for (int t = 0; t < 400; t++) {
		const char *op = ops[rnd(&seed, 4)], *ap = pads[rnd(&seed, 5)];
		bool conv = !strcmp(op, "Conv");
		int h = 1 + rnd(&seed, 8), w = 1 + rnd(&seed, 8), k0 = 1 + rnd(&seed, 4), k1 = 1 + rnd(&seed, 4), s0 = 1 + rnd(&seed, 3), s1 = 1 + rnd(&seed, 3);
		char attrs[256], text[1024];
		int n = snprintf(attrs, sizeof attrs, "strides = [%d, %d], auto_pad = \"%s\"", s0, s1, ap);
		if (!conv)
			n += snprintf(attrs + n, sizeof attrs - (size_t)n, ", kernel_shape = [%d, %d]", k0, k1);
		if (!strcmp(ap, "NOTSET")) {
			int p0 = rnd(&seed, k0), p1 = rnd(&seed, k1), p2 = rnd(&seed, k0), p3 = rnd(&seed, k1);
			n += snprintf(attrs + n, sizeof attrs - (size_t)n, ", pads = [%d, %d, %d, %d]", p0, p1, p2, p3);
		}
		if ((conv || !strcmp(op, "MaxPool")) && rnd(&seed, 3) == 0) {
			int d0 = 1 + rnd(&seed, 2), d1 = 1 + rnd(&seed, 2);
			n += snprintf(attrs + n, sizeof attrs - (size_t)n, ", dilations = [%d, %d]", d0, d1);
		}
		if (!conv && strcmp(op, "LpPool") && rnd(&seed, 2))
			snprintf(attrs + n, sizeof attrs - (size_t)n, ", ceil_mode = 1");
		snprintf(text, sizeof text,
		         "<ir_version: 8, opset_import: [\"\" : 13]>\n"
		         "g (float[1,2,%d,%d] x, float[3,2,%d,%d] k) => (y) {\n  y = %s <%s> (x%s)\n}\n",
		         h, w, k0, k1, op, attrs, conv ? ", k" : "");
		Fixture f = infer_text(text);
		EvValue *out[1] = {NULL};
		if (f.ok) {
			int64_t xd[4] = {1, 2, h, w}, kd[4] = {3, 2, k0, k1};
			EvValue *in[2] = {ev_tensor_new(DT_FLOAT, 4, xd), ev_tensor_new(DT_FLOAT, 4, kd)};
			Diag d;
			diag_init(&d, NULL);
			if (ev_run(f.m, (const EvValue *const *)in, 2, out, NULL, &d)) {
				const Shape *sh = &ir_value(f.m, ir_lookup(f.m, IR_MAIN_GRAPH, "y"))->shape;
				ck_assert_msg(sh->rank == out[0]->rank, "%s", text);
				for (int i = 0; i < sh->rank; i++)
					ck_assert_msg(sh->dims[i].size < 0 || sh->dims[i].size == out[0]->dims[i],
					              "dim %d: inferred %lld, computed %lld\n%s", i, (long long)sh->dims[i].size,
					              (long long)out[0]->dims[i], text);
				checked++;
				ev_unref(out[0]);
			}
			ev_unref(in[0]);
			ev_unref(in[1]);
		}
		fixture_free(&f);
	}
	ck_assert_int_gt(checked, 250);
}
END_TEST

/* Slice's clamping in one helper (ir_slice_range): shape inference of a
 * sliced tensor and of a sliced shape vector (Shape -> Slice ->
 * ConstantOfShape) equals what the kernel computes, over random starts,
 * ends and steps including the extremes.  Inference once clamped a
 * backward start below 0 to -1 where the spec (and the kernel, and ORT)
 * clamp it to 0, and the fold of a Shape behind it wrote a wrong constant. */
START_TEST(test_slice_dims_match_kernels)
{
	static const char *const ends[] = {"-9223372036854775807", "-100", "-6", "-5", "-4", "-1", "0", "1", "3",
	                                   "4", "5", "6", "100", "9223372036854775807"};
	static const char *const steps[] = {"-9223372036854775807", "-3", "-2", "-1", "1", "2", "3", "9223372036854775807"};
	uint64_t seed = 29;
	int checked = 0;
	for (int t = 0; t < 400; t++) {
		const char *st = ends[rnd(&seed, 14)], *en = ends[rnd(&seed, 14)], *sp = steps[rnd(&seed, 8)];
		char text[1024];
		snprintf(text, sizeof text,
		         "<ir_version: 8, opset_import: [\"\" : 13]>\n"
		         "g (float[3,5] x, float[2,3,4,5,6] r) => (y, z) {\n"
		         "  st = Constant <value = int64[1] {%s}> ()\n"
		         "  en = Constant <value = int64[1] {%s}> ()\n"
		         "  ax = Constant <value = int64[1] {-1}> ()\n"
		         "  sp = Constant <value = int64[1] {%s}> ()\n"
		         "  y = Slice (x, st, en, ax, sp)\n"
		         "  s = Shape (r)\n"
		         "  v = Slice (s, st, en, ax, sp)\n"
		         "  z = ConstantOfShape (v)\n"
		         "}\n", st, en, sp);
		Fixture f = infer_text(text);
		ck_assert_msg(f.ok, "%s", text);
		int64_t xd[2] = {3, 5}, rd[5] = {2, 3, 4, 5, 6};
		EvValue *in[2] = {ev_tensor_new(DT_FLOAT, 2, xd), ev_tensor_new(DT_FLOAT, 5, rd)};
		EvValue *out[2] = {NULL, NULL};
		Diag d;
		diag_init(&d, NULL);
		ck_assert_msg(ev_run(f.m, (const EvValue *const *)in, 2, out, NULL, &d), "%s: %s", text, d.first);
		for (int k = 0; k < 2; k++) {
			const Shape *sh = &ir_value(f.m, ir_lookup(f.m, IR_MAIN_GRAPH, k ? "z" : "y"))->shape;
			ck_assert_msg(sh->rank == out[k]->rank, "%s: rank %d inferred, %d computed\n%s", k ? "z" : "y",
			              sh->rank, out[k]->rank, text);
			for (int i = 0; i < sh->rank; i++)
				ck_assert_msg(sh->dims[i].size == out[k]->dims[i], "%s dim %d: inferred %lld, computed %lld\n%s",
				              k ? "z" : "y", i, (long long)sh->dims[i].size, (long long)out[k]->dims[i], text);
			ev_unref(out[k]);
		}
		checked++;
		ev_unref(in[0]);
		ev_unref(in[1]);
		fixture_free(&f);
	}
	ck_assert_int_eq(checked, 400);
}
END_TEST

/* NonZero of a scalar is [1, n], as ONNX Runtime's kernel and graft's make
 * it (onnx's inference says [0, ?]; the Shape of it folded to 0 rows where
 * ORT computes 1). */
START_TEST(test_nonzero_scalar)
{
	Fixture f = infer_text("<ir_version: 8, opset_import: [\"\" : 15]>\n"
	                       "g (int32 x, int32[4] v) => (y, z) {\n"
	                       "  y = NonZero (x)\n"
	                       "  z = NonZero (v)\n"
	                       "}\n");
	ck_infer_ok(f);
	ck_type(f, "y", "int64[1,?]");
	ck_type(f, "z", "int64[1,?]");
	fixture_free(&f);
}
END_TEST

/* OneHot's depth dim is what the kernel reads: a float depth truncated
 * (3.7 -> 3), one the kernel refuses (<= 0, NaN) unknown; an infinite
 * depth was an undefined cast (fuzz-graph's UBSan report). */
START_TEST(test_onehot_depth_as_kernel)
{
	Fixture f = infer_text("<ir_version: 8, opset_import: [\"\" : 11]>\n"
	                       "g (int64[2] ids) => (a, b, c, e) {\n"
	                       "  v = Constant <value = float[2] {0, 1}> ()\n"
	                       "  d1 = Constant <value = float {3.7}> ()\n"
	                       "  d2 = Constant <value = float {-2}> ()\n"
	                       "  d3 = Constant <value = float {nan}> ()\n"
	                       "  d4 = Constant <value = int64 {5}> ()\n"
	                       "  a = OneHot (ids, d1, v)\n"
	                       "  b = OneHot (ids, d2, v)\n"
	                       "  c = OneHot (ids, d3, v)\n"
	                       "  e = OneHot (ids, d4, v)\n"
	                       "}\n");
	ck_infer_ok(f);
	ck_type(f, "a", "float[2,3]");
	ck_type(f, "b", "float[2,?]");
	ck_type(f, "c", "float[2,?]");
	ck_type(f, "e", "float[2,5]");
	fixture_free(&f);
}
END_TEST

/* A Loop body input declared with a shape the Loop's initial value
 * contradicts: an error, not a body inferred (and folded) from a
 * declaration the run does not follow (fuzz-graph: Shape of the scan output
 * folded to [1] where ORT computes [1, 1, 0, 1, 1]). */
START_TEST(test_loop_body_input_contradicts)
{
	Fixture f = infer_text("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                       "g (int64[1,0,1,1] x0) => (ys) {\n"
	                       "  m = Constant <value = int64 {1}> ()\n"
	                       "  xf, ys = Loop (m, , x0) <body = b (int64 i, bool c, int64 x) => (bool co, int64 y, int64 z) {\n"
	                       "    co = Identity (c)\n"
	                       "    y = Identity (x)\n"
	                       "    z = Identity (x)\n"
	                       "  }>\n"
	                       "}\n");
	ck_assert(!f.ok);
	ck_assert_msg(strstr(f.err, "(Loop): body input 'x' is declared of rank 0, but the Loop starts it from 'x0' of rank 4"),
	              "%s", f.err);
	fixture_free(&f);
}
END_TEST

/* A Loop with a trip count M and no condition runs M iterations only if its
 * body passes the condition through; one that computes it may stop sooner
 * (Less(i, 0) stops after one: Shape of the scan output folded to [3, 2]
 * where ORT computes [1, 2]; fuzz-graph found it). */
START_TEST(test_loop_trip_count_needs_passthrough)
{
	Fixture f = infer_text("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                       "g (float[2] x0) => (a, b) {\n"
	                       "  m = Constant <value = int64 {3}> ()\n"
	                       "  xa, a = Loop (m, , x0) <body = b1 (int64 i, bool c, float[2] x) => (bool co, float[2] xo, float[2] y) {\n"
	                       "    zero = Constant <value = int64 {0}> ()\n"
	                       "    co = Less (i, zero)\n"
	                       "    xo = Identity (x)\n"
	                       "    y = Identity (x)\n"
	                       "  }>\n"
	                       "  xb, b = Loop (m, , x0) <body = b2 (int64 i, bool c, float[2] x) => (bool co, float[2] xo, float[2] y) {\n"
	                       "    co = Identity (c)\n"
	                       "    xo = Identity (x)\n"
	                       "    y = Identity (x)\n"
	                       "  }>\n"
	                       "}\n");
	ck_infer_ok(f);
	ck_type(f, "a", "float[?,2]");
	ck_type(f, "b", "float[3,2]");
	fixture_free(&f);
}
END_TEST

Suite *suite_infer(void)
{
	Suite *s = suite_create("infer");
	TCase *tc = tcase_create("rules");
	tcase_add_test(tc, test_symbolic_sums);
	tcase_add_test(tc, test_symbolic_products);
	tcase_add_test(tc, test_attention_present_sums);
	tcase_add_test(tc, test_broadcast_symbolic);
	tcase_add_test(tc, test_broadcast_contradiction);
	tcase_add_test(tc, test_conv_pool_sizes);
	tcase_add_test(tc, test_conv_channel_contradiction);
	tcase_add_test(tc, test_matmul_batch);
	tcase_add_test(tc, test_reshape_zero_minus_one);
	tcase_add_test(tc, test_shape_chain);
	tcase_add_test(tc, test_expand_where_minus_one);
	tcase_add_test(tc, test_slice_negative);
	tcase_add_test(tc, test_squeeze_opsets);
	tcase_add_test(tc, test_split_concat_gather_transpose);
	tcase_add_test(tc, test_overridable_initializer_not_known);
	tcase_add_test(tc, test_declared_types_kept);
	tcase_add_test(tc, test_prelu_contested);
	tcase_add_test(tc, test_more_ops);
	tcase_add_test(tc, test_if_branches);
	suite_add_tcase(s, tc);

	tc = tcase_create("incremental");
	tcase_add_test(tc, test_incremental_input_change);
	tcase_add_test(tc, test_incremental_new_node);
	suite_add_tcase(s, tc);

	tc = tcase_create("print");
	tcase_add_test(tc, test_print_format);
	suite_add_tcase(s, tc);

	tc = tcase_create("corpus");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_corpus_static_models_fully_shaped);
	tcase_add_test(tc, test_corpus_dyn_models_keep_batch);
	tcase_add_test(tc, test_window_dims_match_kernels);
	tcase_add_test(tc, test_slice_dims_match_kernels);
	tcase_add_test(tc, test_nonzero_scalar);
	tcase_add_test(tc, test_onehot_depth_as_kernel);
	tcase_add_test(tc, test_loop_body_input_contradicts);
	tcase_add_test(tc, test_loop_trip_count_needs_passthrough);
	suite_add_tcase(s, tc);
	return s;
}
