/* check_convert.c - opset conversion (runtime/convert): each adapter on a
 * small model at the old opset, checked by the ops and attributes it leaves
 * and by running the model before and after on the evaluator (same inputs,
 * same bits); round trips up and down; the errors, naming the node.  The
 * whole-model check over the conformance models and the corpus, with ONNX
 * Runtime, is tests/convert_gate.sh. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/convert/convert.h"
#include "runtime/eval/eval.h"
#include "runtime/eval/run.h"
#include "testutil.h"
#include "ir/text.h"

static IrModel *parse(const char *text) { return parse_text_model(text); }

/* The ops of the main graph, space-separated, in list order. */
static const char *ops(IrModel *m)
{
	static char buf[512];
	buf[0] = 0;
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? " " : "", ir_node(m, n)->op_type);
	return buf;
}

/* Output 0 of m on generated inputs (seed 0). */
static EvValue *run0(IrModel *m)
{
	Diag d;
	diag_init(&d, stderr);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	RunOptions ro = {.int_hi = 100};
	EvValue **in = calloc(g->ninputs + 1, sizeof *in), **out = calloc(g->noutputs + 1, sizeof *out);
	ck_assert(run_prepare_inputs(m, &ro, in, &d));
	ck_assert_msg(ev_run(m, (const EvValue *const *)in, g->ninputs, out, NULL, &d), "%s", d.first);
	EvValue *r = out[0];
	for (uint32_t i = 0; i < g->ninputs; i++)
		ev_unref(in[i]);
	for (uint32_t i = 1; i < g->noutputs; i++)
		ev_unref(out[i]);
	free(in);
	free(out);
	return r;
}

/* Convert `text` to `target`; the result must validate, be at `target`, run
 * to the same bits as the original and (when given) have these ops. */
static IrModel *convert_ok(const char *text, int target, const char *want_ops)
{
	IrModel *m = parse(text);
	EvValue *before = run0(m);
	Diag d;
	diag_init(&d, NULL);
	ConvertStats st;
	ck_assert_msg(convert_opset(m, target, &st, &d), "%s", d.first);
	ck_assert_msg(ir_validate(m, &d), "%s", d.first);
	ck_assert_int_eq(ir_opset(m, ""), target);
	ck_assert_int_eq(st.to, target);
	ck_assert_int_ge(m->ir_version, convert_min_ir_version(target));
	if (want_ops)
		ck_assert_str_eq(ops(m), want_ops);
	/* the saved bytes load back */
	uint8_t *bytes;
	size_t len;
	ck_assert_msg(ir_save_bytes(m, &bytes, &len, &d), "%s", d.first);
	free(bytes);
	EvValue *after = run0(m);
	RunDiff diff;
	run_compare_exact(before, after, &diff);
	ck_assert_msg(diff.agree, "outputs differ after converting to %d", target);
	ev_unref(before);
	ev_unref(after);
	return m;
}

/* Convert m in place to `target`, which must succeed. */
static void convert_to(IrModel *m, int target)
{
	Diag d;
	diag_init(&d, NULL);
	ConvertStats st;
	ck_assert_msg(convert_opset(m, target, &st, &d), "%s", d.first);
	ck_assert_msg(ir_validate(m, &d), "%s", d.first);
}

static const char *convert_err(const char *text, int target)
{
	static char msg[1024];
	IrModel *m = parse(text);
	Diag d;
	diag_init(&d, NULL);
	ConvertStats st;
	ck_assert(!convert_opset(m, target, &st, &d));
	snprintf(msg, sizeof msg, "%s", d.first);
	ir_model_free(m);
	return msg;
}

static int64_t attr_int(IrModel *m, const char *op, const char *name)
{
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		if (strcmp(ir_node(m, n)->op_type, op) == 0) {
			const IrAttr *a = ir_attr(m, n, name);
			ck_assert_msg(a != NULL, "%s has no %s", op, name);
			return a->i;
		}
	ck_abort_msg("no %s", op);
	return 0;
}

static uint32_t ninputs_of(IrModel *m, const char *op)
{
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		if (strcmp(ir_node(m, n)->op_type, op) == 0)
			return ir_node(m, n)->ninputs;
	ck_abort_msg("no %s", op);
	return 0;
}

/* Softmax-11 at axis 1 of a rank-3 input normalizes over the last two axes
 * together: at 13 that is Flatten, Softmax(-1), Reshape back.  At the last
 * axis it is just axis=-1.  Back down, the last axis is exact. */
START_TEST(test_softmax)
{
	const char *mid = "<ir_version: 6, opset_import: [\"\" : 11]>\n"
	                  "g (float[2,3,4] x) => (float[2,3,4] y) {\n"
	                  "  y = Softmax <axis = 1> (x)\n"
	                  "}\n";
	IrModel *m = convert_ok(mid, 13, "Shape Flatten Softmax Reshape");
	ck_assert_str_eq(ir_value(m, ir_graph(m, IR_MAIN_GRAPH)->outputs[0])->name, "y");
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		ck_assert_ptr_null(ir_attr(m, n, "allowzero"));
	ir_model_free(m);
	/* from opset 14 the Reshape back takes Shape(x)'s 0s as 0s (allowzero), so
	 * an input that is empty only at run time still runs (make difftest seed
	 * 463614: ONNX Runtime refused the copying 0) */
	m = convert_ok(mid, 14, "Shape Flatten Softmax Reshape");
	ck_assert_int_eq(attr_int(m, "Reshape", "allowzero"), 1);
	ir_model_free(m);
	const char *last = "<ir_version: 6, opset_import: [\"\" : 11]>\n"
	                   "g (float[2,3,4] x) => (float[2,3,4] y) {\n"
	                   "  y = LogSoftmax <axis = 2> (x)\n"
	                   "}\n";
	m = convert_ok(last, 13, "LogSoftmax");
	ck_assert_int_eq(attr_int(m, "LogSoftmax", "axis"), -1);
	ir_model_free(m);
	const char *at13 = "<ir_version: 7, opset_import: [\"\" : 13]>\n"
	                   "g (float[2,3,4] x) => (float[2,3,4] y) {\n"
	                   "  y = Softmax (x)\n"
	                   "}\n";
	m = convert_ok(at13, 12, "Softmax");
	ck_assert_int_eq(attr_int(m, "Softmax", "axis"), 2);
	ir_model_free(m);
	const char *axis0 = "<ir_version: 7, opset_import: [\"\" : 13]>\n"
	                    "g (float[2,3,4] x) => (float[2,3,4] y) {\n"
	                    "  [sm] y = Softmax <axis = 0> (x)\n"
	                    "}\n";
	ck_assert_str_eq(convert_err(axis0, 12),
	                 "t.onnx: node sm (Softmax), opset 13 -> 12: axis 0 of a rank-3 input has no equivalent before opset 13");
	/* an empty input stays one op: the Reshape back to [2,0,4] would copy a
	 * dim the 2-D form lacks, which ONNX Runtime refuses (make difftest) */
	const char *empty = "<ir_version: 6, opset_import: [\"\" : 11]>\n"
	                    "g (float[2,0,4] x) => (float[2,0,4] y) {\n"
	                    "  y = Softmax <axis = 1> (x)\n"
	                    "}\n";
	m = convert_ok(empty, 23, "Softmax");
	ir_model_free(m);
}
END_TEST

/* Attributes that became inputs: Squeeze/Unsqueeze/ReduceSum axes and Split's
 * split at 13, ReduceMean's axes at 18, Slice at 10, Pad and Clip at 11,
 * TopK's k at 10; and back down, where the inputs are constants. */
START_TEST(test_attributes_to_inputs)
{
	const char *v9 = "<ir_version: 4, opset_import: [\"\" : 9]>\n"
	                 "g (float[2,6] x) => (float[1,2] y, float[4,10] p, float[1,2] k) {\n"
	                 "  u = Unsqueeze <axes = [0]> (x)\n"
	                 "  r = ReduceSum <axes = [2], keepdims = 0> (u)\n"
	                 "  s = Squeeze <axes = [0]> (r)\n"
	                 "  a, b = Split <axis = 0, split = [1, 1]> (s)\n"
	                 "  m = ReduceMean <axes = [1], keepdims = 1> (x)\n"
	                 "  sl = Slice <starts = [0], ends = [1], axes = [0]> (m)\n"
	                 "  y = Clip <min = -0.5, max = 0.5> (sl)\n"
	                 "  p = Pad <pads = [1, 2, 1, 2], value = 1.5> (x)\n"
	                 "  kv, ki = TopK <k = 2> (x)\n"
	                 "  k = Slice <starts = [0], ends = [1], axes = [0]> (kv)\n"
	                 "}\n";
	IrModel *m = convert_ok(v9, 18, "Unsqueeze ReduceSum Squeeze Split ReduceMean Slice Clip Pad TopK Slice");
	ck_assert_uint_eq(ninputs_of(m, "Unsqueeze"), 2);
	ck_assert_uint_eq(ninputs_of(m, "ReduceSum"), 2);
	ck_assert_uint_eq(ninputs_of(m, "Split"), 2);
	ck_assert_uint_eq(ninputs_of(m, "ReduceMean"), 2);
	ck_assert_uint_eq(ninputs_of(m, "Slice"), 4);
	ck_assert_uint_eq(ninputs_of(m, "Clip"), 3);
	ck_assert_uint_eq(ninputs_of(m, "Pad"), 3);
	ck_assert_uint_eq(ninputs_of(m, "TopK"), 2);
	/* and back to 9: every input a constant, so every one an attribute again */
	convert_to(m, 9);
	ck_assert_uint_eq(ninputs_of(m, "Unsqueeze"), 1);
	ck_assert_uint_eq(ninputs_of(m, "Slice"), 1);
	ck_assert_uint_eq(ninputs_of(m, "Clip"), 1);
	ck_assert_uint_eq(ninputs_of(m, "Pad"), 1);
	ck_assert_int_eq(attr_int(m, "TopK", "k"), 2);
	ir_model_free(m);
	/* an input that is not a constant cannot go back */
	const char *dyn = "<ir_version: 7, opset_import: [\"\" : 13]>\n"
	                  "g (float[2,6] x, int64[1] ax) => (float[2,1,6] y) {\n"
	                  "  [u] y = Unsqueeze (x, ax)\n"
	                  "}\n";
	ck_assert_str_eq(convert_err(dyn, 12), "t.onnx: node u (Unsqueeze), opset 13 -> 12: input 'axes' is not a "
	                                      "constant, so it cannot become an attribute");
}
END_TEST

/* Upsample-7 (scales attribute) -> Upsample-9 (input) -> Resize-10 ->
 * Resize-11 with roi and the coordinates Resize-10 meant. */
START_TEST(test_upsample_to_resize)
{
	const char *v7 = "<ir_version: 3, opset_import: [\"\" : 7]>\n"
	                 "g (float[1,1,2,3] x) => (float[1,1,6,9] y) {\n"
	                 "  y = Upsample <mode = \"nearest\", scales = [1.0, 1.0, 3.0, 3.0]> (x)\n"
	                 "}\n";
	IrModel *m = convert_ok(v7, 11, "Resize");
	ck_assert_uint_eq(ninputs_of(m, "Resize"), 3);
	ir_model_free(m);
	m = convert_ok(v7, 23, "Resize");
	ir_model_free(m);
	const char *lin = "<ir_version: 4, opset_import: [\"\" : 9]>\n"
	                  "g (float[1,1,2,3] x) => (float[1,1,4,6] y) <float[4] s = {1, 1, 2, 2}> {\n"
	                  "  y = Upsample <mode = \"linear\"> (x, s)\n"
	                  "}\n";
	m = convert_ok(lin, 13, "Resize");
	/* and back to 9: Resize-11 asymmetric, roi dropped, Upsample again */
	convert_to(m, 9);
	ck_assert_str_eq(ops(m), "Upsample");
	ck_assert_uint_eq(ninputs_of(m, "Upsample"), 2);
	ir_model_free(m);
}
END_TEST

/* Ops inside If and Loop bodies are converted too. */
START_TEST(test_bodies)
{
	const char *sorted = "<ir_version: 6, opset_import: [\"\" : 11]>\n"
	                     "g (bool c, float[2,3] x) => (float[3] y) <int64[1] st = {0}, int64[1] en = {1}> {\n"
	                     "  a = Slice (x, st, en)\n"
	                     "  y = If (c) <then_branch = t () => (float[3] o) { o = Squeeze <axes = [0]> (a) },\n"
	                     "              else_branch = e () => (float[3] o) { o = ReduceSum <axes = [0], keepdims = 0> (x) }>\n"
	                     "}\n";
	IrModel *m = convert_ok(sorted, 13, "Slice If");
	for (GraphId g = 2; g < m->ngraphs; g++)
		for (NodeId n = ir_first(m, g); n; n = ir_next(m, n))
			ck_assert_uint_eq(ir_node(m, n)->ninputs, 2); /* axes moved to an input in both branches */
	ir_model_free(m);
}
END_TEST

/* Errors name the node and the step; nothing is converted past them. */
START_TEST(test_errors)
{
	const char *ln = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                 "g (float[2,3] x, float[3] s, float[3] b) => (float[2,3] y) {\n"
	                 "  [norm] y = LayerNormalization (x, s, b)\n"
	                 "}\n";
	ck_assert_str_eq(convert_err(ln, 16),
	                 "t.onnx: node norm (LayerNormalization), opset 17 -> 16: LayerNormalization does not exist before opset 17");
	ck_assert_str_eq(convert_err(ln, 30), "t.onnx: --opset 30: graft converts between opsets 1 and 23");
	const char *bn = "<ir_version: 3, opset_import: [\"\" : 8]>\n"
	                 "g (float[1,2,3] x, float[2,3] s, float[2,3] b, float[2,3] mu, float[2,3] v) => (float[1,2,3] y) {\n"
	                 "  [bn] y = BatchNormalization <spatial = 0> (x, s, b, mu, v)\n"
	                 "}\n";
	ck_assert_str_eq(convert_err(bn, 9), "t.onnx: node bn (BatchNormalization), opset 8 -> 9: spatial=0 (per-element "
	                                     "statistics) has no equivalent from opset 9 on");
	const char *clip = "<ir_version: 7, opset_import: [\"\" : 13]>\n"
	                   "g (float[4] x) => (float[4] y) {\n"
	                   "  [c] y = Clip (x)\n"
	                   "}\n";
	IrModel *m = convert_ok(clip, 10, "Clip"); /* no bounds: nothing to move */
	ir_model_free(m);
}
END_TEST

/* ONNX Runtime's own default-domain LayerNormalization and
 * SimplifiedLayerNormalization (what its transformer optimizer writes below
 * opset 17) are carried through; at 17 the LayerNormalization is ONNX's. */
START_TEST(test_ort_onnx_domain_ops)
{
	const char *text = "<ir_version: 7, opset_import: [\"\" : 12]>\n"
	                   "g (float[2,4] x) => (float[2,4] y, float[2,4] z) <float[4] s = {1, 2, 3, 4}, "
	                   "float[4] b = {0.5, 0, 0, -1}> {\n"
	                   "  a = Relu (x)\n  y = LayerNormalization <axis = -1, epsilon = 1e-5> (a, s, b)\n"
	                   "  z = SimplifiedLayerNormalization <axis = -1, epsilon = 1e-5> (a, s)\n}\n";
	for (int to = 13; to <= 18; to += 5) {
		IrModel *m = parse(text);
		convert_to(m, to);
		ck_assert_str_eq(ops(m), "Relu LayerNormalization SimplifiedLayerNormalization");
		ck_assert_int_eq(ir_opset(m, ""), to);
		ir_model_free(m);
	}
}
END_TEST

/* A GroupNormalization-18 scale per group becomes one per channel at 21. */
START_TEST(test_groupnorm)
{
	const char *text = "<ir_version: 8, opset_import: [\"\" : 18]>\n"
	                   "g (float[1,4,3] x) => (float[1,4,3] y) <float[2] s = {2, 3}, float[2] b = {0.5, -1}> {\n"
	                   "  y = GroupNormalization <num_groups = 2> (x, s, b)\n"
	                   "}\n";
	IrModel *m = parse(text);
	convert_to(m, 21);
	NodeId n = ir_first(m, IR_MAIN_GRAPH);
	IrTensor *t = ir_tensor(m, ir_value(m, ir_node(m, n)->inputs[1])->tensor);
	ck_assert_int_eq(t->numel, 4);
	size_t nb;
	const float *f = (const float *)ir_tensor_bytes(m, ir_value(m, ir_node(m, n)->inputs[1])->tensor, &nb);
	ck_assert(f[0] == 2 && f[1] == 2 && f[2] == 3 && f[3] == 3);
	ir_model_free(m);
	ck_assert_str_eq(convert_err("<ir_version: 10, opset_import: [\"\" : 21]>\n"
	                             "g (float[1,4,3] x, float[4] s, float[4] b) => (float[1,4,3] y) {\n"
	                             "  [gn] y = GroupNormalization <num_groups = 2> (x, s, b)\n"
	                             "}\n", 20),
	                 "t.onnx: node gn (GroupNormalization), opset 21 -> 20: no exact conversion: scale and "
	                 "bias are per channel from opset 21 on");
}
END_TEST

/* A string attribute of the first `op` node. */
static const char *attr_str(IrModel *m, const char *op, const char *name)
{
	static char buf[64];
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		if (strcmp(ir_node(m, n)->op_type, op) == 0) {
			const IrAttr *a = ir_attr(m, n, name);
			ck_assert_msg(a != NULL && a->type == ATTR_STRING, "%s has no string %s", op, name);
			snprintf(buf, sizeof buf, "%.*s", (int)a->s.len, a->s.data);
			return buf;
		}
	ck_abort_msg("no %s", op);
	return NULL;
}

/* Resize-10 nearest rounds down where it upsamples and up where it
 * downsamples (ONNX Runtime, and ONNX's resize_downsample_nearest data):
 * Resize-11 gets nearest_mode floor or ceil to match, and mixed scales are
 * refused.  The evaluator runs both the same (convert_ok compares). */
START_TEST(test_resize10_nearest)
{
	const char *fmt10 = "<ir_version: 5, opset_import: [\"\" : 10]>\n"
	                    "g (float[1,1,4,4] x) => (float[1,1,%d,%d] y) <float[4] s = {1, 1, %s, %s}> {\n"
	                    "  [rs] y = Resize <mode = \"nearest\"> (x, s)\n"
	                    "}\n";
	char text[400];
	snprintf(text, sizeof text, fmt10, 2, 2, "0.6", "0.6");
	IrModel *m = convert_ok(text, 11, "Resize");
	ck_assert_str_eq(attr_str(m, "Resize", "nearest_mode"), "ceil");
	ck_assert_str_eq(attr_str(m, "Resize", "coordinate_transformation_mode"), "asymmetric");
	convert_to(m, 10); /* and back */
	ir_model_free(m);
	snprintf(text, sizeof text, fmt10, 8, 6, "2", "1.5");
	m = convert_ok(text, 11, "Resize");
	ck_assert_str_eq(attr_str(m, "Resize", "nearest_mode"), "floor");
	ir_model_free(m);
	snprintf(text, sizeof text, fmt10, 2, 6, "0.6", "1.5");
	ck_assert_str_eq(convert_err(text, 11),
	                 "t.onnx: node rs (Resize), opset 10 -> 11: nearest: Resize-10 rounds up on the axes it downsamples "
	                 "and down on those it upsamples; one nearest_mode cannot say both");
	/* down from 11: floor while downsampling is not Resize-10 */
	const char *r11 = "<ir_version: 6, opset_import: [\"\" : 11]>\n"
	                  "g (float[1,1,4,4] x) => (float[1,1,2,2] y) <float[0] r = {}, float[4] s = {1, 1, 0.6, 0.6}> {\n"
	                  "  [rs] y = Resize <mode = \"nearest\", coordinate_transformation_mode = \"asymmetric\", "
	                  "nearest_mode = \"floor\"> (x, r, s)\n"
	                  "}\n";
	ck_assert_str_eq(convert_err(r11, 10), "t.onnx: node rs (Resize), opset 11 -> 10: nearest: Resize-10 rounds up "
	                                       "with these scales; only nearest_mode ceil has an equivalent before opset 11");
}
END_TEST

/* ONNX Runtime's Dropout-10/11 mask is all false outside training, -12's all
 * true: a used mask gets a Not across the step, either way. */
START_TEST(test_dropout_mask)
{
	const char *d10 = "<ir_version: 5, opset_import: [\"\" : 10]>\n"
	                  "g (float[2,2] x) => (float[2,2] y, bool[2,2] mask) {\n"
	                  "  y, mask = Dropout <ratio = 0.5> (x)\n"
	                  "}\n";
	IrModel *m = parse(d10);
	convert_to(m, 12);
	ck_assert_str_eq(ops(m), "Dropout Not");
	convert_to(m, 10);
	ck_assert_str_eq(ops(m), "Dropout Not Not");
	ir_model_free(m);
	const char *nomask = "<ir_version: 5, opset_import: [\"\" : 10]>\n"
	                     "g (float[2,2] x) => (float[2,2] y) {\n"
	                     "  y = Dropout <ratio = 0.5> (x)\n"
	                     "}\n";
	m = convert_ok(nomask, 13, "Dropout");
	ir_model_free(m);
}
END_TEST

/* Downgrades refuse what the older op cannot take or give: sequences and
 * optionals (Identity-14 -> 13, If-13 -> 11, Identity-16 -> 15 on an
 * optional) and output types set by attributes (bfloat16, float8). */
START_TEST(test_downgrade_kinds_and_types)
{
	const char *cast = "<ir_version: 7, opset_import: [\"\" : 13]>\n"
	                   "g (float[2] x) => (bfloat16[2] y) {\n  [c] y = Cast <to = 16> (x)\n}\n";
	ck_assert_str_eq(convert_err(cast, 11),
	                 "t.onnx: node c (Cast), opset 13 -> 12: output 0 is bfloat16, which Cast-9 does not give");
	const char *cast8 = "<ir_version: 9, opset_import: [\"\" : 19]>\n"
	                    "g (float[2] x) => (float8e4m3fn[2] y) {\n  [c] y = Cast <to = 17> (x)\n}\n";
	ck_assert_str_eq(convert_err(cast8, 18),
	                 "t.onnx: node c (Cast), opset 19 -> 18: output 0 is float8e4m3fn, which Cast-13 does not give");
	const char *cos = "<ir_version: 9, opset_import: [\"\" : 20]>\n"
	                  "g () => (bfloat16[2] y) <int64[1] s = {2}> {\n"
	                  "  [k] y = ConstantOfShape <value = bfloat16[1] {1}> (s)\n}\n";
	ck_assert_str_eq(convert_err(cos, 19), "t.onnx: node k (ConstantOfShape), opset 20 -> 19: output 0 is bfloat16, "
	                                       "which ConstantOfShape-9 does not give");
	/* ONNX's conformance models, which declare their sequence and optional types */
	static const char node_dir[] = "/usr/include/onnx/backend/test/data/node/";
	const struct { const char *model; int target; const char *err; } kinds[] = {
		{"test_identity_sequence", 14, NULL}, /* Identity-14 takes sequences */
		{"test_identity_sequence", 13, "node Identity#0 (Identity), opset 14 -> 13: input 0 is a sequence or optional, "
		                               "which Identity-13 does not take"},
		{"test_identity_opt", 15, "node Identity#0 (Identity), opset 16 -> 15: input 0 is a sequence or optional, "
		                          "which Identity-14 does not take"},
		{"test_if_seq", 11, "node If#0 (If), opset 13 -> 12: output 0 is a sequence or optional, which If-11 does "
		                    "not give"},
		{"test_loop13_seq", 11, "node Loop#0 (Loop), opset 13 -> 12: input 2 is a sequence or optional, which "
		                        "Loop-11 does not take"},
	};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
		char path[300];
		snprintf(path, sizeof path, "%s%s/model.onnx", node_dir, kinds[i].model);
		Diag d;
		diag_init(&d, NULL);
		IrModel *m = ir_load_file(path, NULL, &d);
		ck_assert_msg(m, "%s", d.first);
		ConvertStats st;
		bool ok = convert_opset(m, kinds[i].target, &st, &d);
		ck_assert_msg(ok == !kinds[i].err, "%s -> %d: %s", kinds[i].model, kinds[i].target, ok ? "converted" : d.first);
		if (kinds[i].err)
			ck_assert_str_eq(d.first + strlen(path) + 2, kinds[i].err);
		ir_model_free(m);
	}
}
END_TEST

/* Below opset 11 axes are not negative: made positive with the rank. */
START_TEST(test_negative_axes_down)
{
	const char *fl = "<ir_version: 7, opset_import: [\"\" : 13]>\n"
	                 "g (float[2,3,4] x) => (float[6,4] y) {\n  y = Flatten <axis = -1> (x)\n}\n";
	IrModel *m = convert_ok(fl, 9, "Flatten");
	ck_assert_int_eq(attr_int(m, "Flatten", "axis"), 2);
	ir_model_free(m);
}
END_TEST

/* A conversion must not leave ONNX Runtime without a CPU kernel where the
 * input had one: PRelu on double loads at opset 16 (ORT inlines PRelu-16's
 * function body), not at 19 and later.  A model that does not load at its
 * own opset (PRelu-9 on double) is converted as before. */
START_TEST(test_kernel_kept)
{
	const char *fmt = "<ir_version: 8, opset_import: [\"\" : %d]>\n"
	                  "g (double[4] x) => (double[4] y) <double[1] s = {0.25}> {\n  [p] y = PRelu (x, s)\n}\n";
	char text[300];
	snprintf(text, sizeof text, fmt, 16);
	ck_assert_str_eq(convert_err(text, 23), "t.onnx: node p (PRelu), opset 16 -> 23: ONNX Runtime has no CPU kernel "
	                                        "for PRelu-16 on double at opset 23 (it loads the model at opset 16)");
	IrModel *m = convert_ok(text, 18, "PRelu");
	ir_model_free(m);
	snprintf(text, sizeof text, fmt, 9);
	m = convert_ok(text, 23, "PRelu");
	ir_model_free(m);
}
END_TEST

/* The ops of the main graph with their inputs counted, "Op/N ...". */
static const char *ops_n(IrModel *m)
{
	static char buf[512];
	buf[0] = 0;
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s/%u", buf[0] ? " " : "", ir_node(m, n)->op_type,
		         ir_node(m, n)->ninputs);
	return buf;
}

static bool has_attr(IrModel *m, const char *op, const char *name)
{
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		if (strcmp(ir_node(m, n)->op_type, op) == 0)
			return ir_attr(m, n, name) != NULL;
	ck_abort_msg("no %s", op);
	return false;
}

/* Opsets 1..6: broadcast = 1 with axis k aligns input 1 with input 0 from
 * dim k on; at 7 it gets trailing 1-dims (Unsqueeze) for numpy's rule, at 13
 * the Unsqueeze takes its axes as an input.  Back down, a suffix-aligned
 * input 1 says broadcast = 1.  What numpy cannot say is refused. */
START_TEST(test_legacy_broadcast)
{
	const char *add = "<ir_version: 3, opset_import: [\"\" : 6]>\n"
	                  "g (float[2,3,4] a, float[3] b) => (float[2,3,4] y) {\n"
	                  "  [add] y = Add <broadcast = 1, axis = 1> (a, b)\n"
	                  "}\n";
	IrModel *m = convert_ok(add, 7, "Unsqueeze Add");
	ck_assert_str_eq(ops_n(m), "Unsqueeze/1 Add/2");
	ck_assert(!has_attr(m, "Add", "broadcast") && !has_attr(m, "Add", "axis"));
	const IrAttr *ax = ir_attr(m, ir_first(m, IR_MAIN_GRAPH), "axes");
	ck_assert(ax && ax->n == 1 && ax->ints[0] == 1); /* [3] -> [3, 1] */
	convert_to(m, 6);
	ck_assert_str_eq(ops_n(m), "Unsqueeze/1 Add/2");
	ck_assert_int_eq(attr_int(m, "Add", "broadcast"), 1);
	ir_model_free(m);
	m = convert_ok(add, 13, "Unsqueeze Add");
	ck_assert_str_eq(ops_n(m), "Unsqueeze/2 Add/2");
	ir_model_free(m);
	/* the last dims, or equal shapes: numpy's rule already; Sub and Mul too */
	const char *tail = "<ir_version: 3, opset_import: [\"\" : 1]>\n"
	                   "g (float[2,3] a, float[3] b, float[2,3] c) => (float[2,3] y) {\n"
	                   "  s = Sub <broadcast = 1, consumed_inputs = [0, 0]> (a, b)\n"
	                   "  y = Mul (s, c)\n"
	                   "}\n";
	m = convert_ok(tail, 7, "Sub Mul");
	ck_assert(!has_attr(m, "Sub", "broadcast") && !has_attr(m, "Sub", "consumed_inputs"));
	ir_model_free(m);
	const char *bad = "<ir_version: 3, opset_import: [\"\" : 6]>\n"
	                  "g (float[2,3,4] a, float[5] b) => (float[2,3,4] y) {\n"
	                  "  [add] y = Add <broadcast = 1, axis = 1> (a, b)\n"
	                  "}\n";
	ck_assert_str_eq(convert_err(bad, 7), "t.onnx: node add (Add), opset 6 -> 7: dim 0 of input 1 (5) does not "
	                                      "broadcast to dim 1 of input 0 (3)");
	const char *far = "<ir_version: 3, opset_import: [\"\" : 6]>\n"
	                  "g (float[2,3,4] a, float[3,4] b) => (float[2,3,4] y) {\n"
	                  "  [add] y = Add <broadcast = 1, axis = 2> (a, b)\n"
	                  "}\n";
	ck_assert_str_eq(convert_err(far, 7), "t.onnx: node add (Add), opset 6 -> 7: broadcast axis 2 does not place a "
	                                      "rank-2 input 1 within a rank-3 input 0");
	const char *left = "<ir_version: 3, opset_import: [\"\" : 7]>\n"
	                   "g (float[3] a, float[2,3] b) => (float[2,3] y) {\n"
	                   "  [add] y = Add (a, b)\n"
	                   "}\n";
	ck_assert_str_eq(convert_err(left, 6), "t.onnx: node add (Add), opset 7 -> 6: input 1 has the higher rank; "
	                                       "before opset 7 only input 1 broadcasts");
	/* equal symbolic shapes need no broadcast */
	const char *sym = "<ir_version: 3, opset_import: [\"\" : 7]>\n"
	                  "g (float[N,3] a, float[N,3] b) => (float[N,3] y) {\n"
	                  "  [add] y = Add (a, b)\n"
	                  "}\n";
	m = parse(sym);
	convert_to(m, 6);
	ck_assert(!has_attr(m, "Add", "broadcast"));
	ir_model_free(m);
	/* the values: B = [10, 20] at axis 0 of a [2, 3] A adds 10 to row 0 and
	 * 20 to row 1 (what ONNX Runtime gives for the converted model) */
	const char *vals = "<ir_version: 3, opset_import: [\"\" : 6]>\n"
	                   "g () => (float[2,3] y) <float[2,3] a = {1, 2, 3, 4, 5, 6}, float[2] b = {10, 20}> {\n"
	                   "  y = Add <broadcast = 1, axis = 0> (a, b)\n"
	                   "}\n";
	m = convert_ok(vals, 13, "Unsqueeze Add");
	EvValue *y = run0(m);
	static const float want[6] = {11, 12, 13, 24, 25, 26};
	for (int i = 0; i < 6; i++)
		ck_assert_float_eq(ev_get_f(y, i), want[i]);
	ev_unref(y);
	ir_model_free(m);
}
END_TEST

/* Opset 1's forms of Reshape (shape attribute), Concat (axis 1 by default),
 * Cast (a type name), Pad (paddings) and consumed_inputs, up to 7 and back. */
START_TEST(test_opset1_forms)
{
	const char *one = "<ir_version: 3, opset_import: [\"\" : 1]>\n"
	                  "g (float[2,3] x) => (float[6] y, float[2,6] z, double[2,3] w, float[2,5] p) {\n"
	                  "  r = Relu <consumed_inputs = [0]> (x)\n"
	                  "  y = Reshape <shape = [6]> (r)\n"
	                  "  z = Concat (x, x)\n"
	                  "  w = Cast <to = \"DOUBLE\"> (x)\n"
	                  "  p = Pad <paddings = [0, 1, 0, 1]> (x)\n"
	                  "}\n";
	IrModel *m = convert_ok(one, 7, "Relu Reshape Concat Cast Pad");
	ck_assert_str_eq(ops_n(m), "Relu/1 Reshape/2 Concat/2 Cast/1 Pad/1");
	ck_assert(!has_attr(m, "Relu", "consumed_inputs") && !has_attr(m, "Reshape", "shape"));
	ck_assert_int_eq(attr_int(m, "Concat", "axis"), 1);
	ck_assert_int_eq(attr_int(m, "Cast", "to"), DT_DOUBLE);
	ck_assert(has_attr(m, "Pad", "pads") && !has_attr(m, "Pad", "paddings"));
	convert_to(m, 1);
	ck_assert_str_eq(ops_n(m), "Relu/1 Reshape/1 Concat/2 Cast/1 Pad/1");
	ck_assert(has_attr(m, "Reshape", "shape") && has_attr(m, "Pad", "paddings"));
	const IrAttr *to = NULL;
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		if (!strcmp(ir_node(m, n)->op_type, "Cast"))
			to = ir_attr(m, n, "to");
	ck_assert(to && to->type == ATTR_STRING && to->s.len == 6 && !memcmp(to->s.data, "DOUBLE", 6));
	ir_model_free(m);
	m = convert_ok(one, 23, "Relu Reshape Concat Cast Pad");
	ck_assert_str_eq(ops_n(m), "Relu/1 Reshape/2 Concat/2 Cast/1 Pad/2");
	ir_model_free(m);
}
END_TEST

/* is_test (BatchNormalization, Dropout) went at 7, consumed_inputs at 6;
 * Gemm's broadcast at 7; PRelu's C-value slope is per channel before 7. */
START_TEST(test_opset6_attributes)
{
	const char *bn = "<ir_version: 3, opset_import: [\"\" : 5]>\n"
	                 "g (float[2,3,4] x, float[3] s, float[3] b, float[3] mu, float[3] v) => (float[2,3,4] y) {\n"
	                 "  [bn] y = BatchNormalization <is_test = 1, consumed_inputs = [0, 0, 0, 1, 1]> (x, s, b, mu, v)\n"
	                 "}\n";
	IrModel *m = convert_ok(bn, 7, "BatchNormalization");
	ck_assert(!has_attr(m, "BatchNormalization", "is_test") && !has_attr(m, "BatchNormalization", "consumed_inputs"));
	convert_to(m, 5);
	ck_assert_int_eq(attr_int(m, "BatchNormalization", "is_test"), 1);
	ck_assert(has_attr(m, "BatchNormalization", "consumed_inputs"));
	ir_model_free(m);
	const char *drop = "<ir_version: 3, opset_import: [\"\" : 6]>\n"
	                   "g (float[2,3] x) => (float[2,3] y) {\n"
	                   "  [d] y = Dropout (x)\n"
	                   "}\n";
	ck_assert_str_eq(convert_err(drop, 7), "t.onnx: node d (Dropout), opset 6 -> 7: is_test = 0 (training: random "
	                                       "dropout) has no equivalent from opset 7 on");
	const char *gemm = "<ir_version: 3, opset_import: [\"\" : 6]>\n"
	                   "g (float[2,3] a, float[3,4] b, float[4] c) => (float[2,4] y) {\n"
	                   "  y = Gemm <broadcast = 1> (a, b, c)\n"
	                   "}\n";
	m = convert_ok(gemm, 7, "Gemm");
	ck_assert(!has_attr(m, "Gemm", "broadcast"));
	convert_to(m, 6);
	ck_assert_int_eq(attr_int(m, "Gemm", "broadcast"), 1);
	ir_model_free(m);
	const char *prelu = "<ir_version: 3, opset_import: [\"\" : 6]>\n"
	                    "g (float[2,3,4] x, float[3] s) => (float[2,3,4] y) {\n"
	                    "  [p] y = PRelu (x, s)\n"
	                    "}\n";
	m = convert_ok(prelu, 7, "Reshape PRelu");
	convert_to(m, 6); /* the [3, 1] slope reads the same */
	ck_assert_str_eq(ops(m), "Reshape PRelu");
	ir_model_free(m);
	const char *prelu7 = "<ir_version: 3, opset_import: [\"\" : 7]>\n"
	                     "g (float[2,3,3] x, float[3] s) => (float[2,3,3] y) {\n"
	                     "  [p] y = PRelu (x, s)\n"
	                     "}\n";
	ck_assert_str_eq(convert_err(prelu7, 6), "t.onnx: node p (PRelu), opset 7 -> 6: a slope of 1 dims with C = 3 "
	                                         "values reads per channel before opset 7");
}
END_TEST

Suite *suite_convert(void)
{
	Suite *s = suite_create("convert");
	TCase *tc = tcase_create("adapters");
	tcase_add_test(tc, test_softmax);
	tcase_add_test(tc, test_attributes_to_inputs);
	tcase_add_test(tc, test_upsample_to_resize);
	tcase_add_test(tc, test_bodies);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_groupnorm);
	tcase_add_test(tc, test_ort_onnx_domain_ops);
	tcase_add_test(tc, test_resize10_nearest);
	tcase_add_test(tc, test_dropout_mask);
	tcase_add_test(tc, test_downgrade_kinds_and_types);
	tcase_add_test(tc, test_kernel_kept);
	tcase_add_test(tc, test_negative_axes_down);
	tcase_add_test(tc, test_legacy_broadcast);
	tcase_add_test(tc, test_opset1_forms);
	tcase_add_test(tc, test_opset6_attributes);
	suite_add_tcase(s, tc);
	return s;
}
