/* check_kernels.c - the ONNX Runtime CPU kernel table (ir/ort_kernels.h):
 * lookups by op, domain, opset and dtype as onnxruntime-node 1.30 answers
 * them, the message for a node without a kernel, and the rewrite engine's
 * refusal to create such a node where the input model's nodes all have one
 * (--why: RW_WHY_KERNEL). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/ort_kernels.h"
#include "runtime/engine/rewrite.h"
#include "runtime/engine/rules.h"
#include "testutil.h"

START_TEST(test_lookup)
{
	/* HardSwish: float (and float16, which ORT runs through float) only */
	ck_assert(ir_ort_cpu_has_kernel("", "HardSwish", 14, DT_FLOAT));
	ck_assert(ir_ort_cpu_has_kernel("", "HardSwish", 17, DT_FLOAT16));
	ck_assert(!ir_ort_cpu_has_kernel("", "HardSwish", 17, DT_DOUBLE));
	ck_assert(!ir_ort_cpu_has_kernel("", "HardSwish", 23, DT_DOUBLE));
	/* Clip: double from 12 on, not at 11 */
	ck_assert(!ir_ort_cpu_has_kernel("", "Clip", 11, DT_DOUBLE));
	ck_assert(ir_ort_cpu_has_kernel("", "Clip", 11, DT_FLOAT));
	ck_assert(ir_ort_cpu_has_kernel("", "Clip", 13, DT_DOUBLE));
	ck_assert(ir_ort_cpu_has_kernel("", "Clip", 13, DT_INT32));
	ck_assert(!ir_ort_cpu_has_kernel("", "InstanceNormalization", 22, DT_DOUBLE));
	/* the answer is the model opset's, not only the op version's: PRelu-16
	 * on double loads at opset 16 (ORT inlines its function body) and not
	 * at 19 and later */
	ck_assert(!ir_ort_cpu_has_kernel("", "PRelu", 15, DT_DOUBLE));
	ck_assert(ir_ort_cpu_has_kernel("", "PRelu", 16, DT_DOUBLE));
	ck_assert(!ir_ort_cpu_has_kernel("", "PRelu", 23, DT_DOUBLE));
	ck_assert(ir_ort_cpu_has_kernel("ai.onnx", "PRelu", 16, DT_DOUBLE));
	ck_assert(!ir_ort_cpu_has_kernel("", "Softplus", 13, DT_DOUBLE));
	ck_assert(ir_ort_cpu_has_kernel("", "Add", 14, DT_INT16));
	/* contrib kernels */
	ck_assert(ir_ort_cpu_has_kernel("com.microsoft", "FusedConv", 1, DT_FLOAT));
	ck_assert(!ir_ort_cpu_has_kernel("com.microsoft", "FusedConv", 1, DT_DOUBLE));
	ck_assert(!ir_ort_cpu_has_kernel("com.microsoft", "NhwcConv", 1, DT_FLOAT));
	/* what the table does not know counts as there */
	ck_assert(ir_ort_cpu_has_kernel("", "NoSuchOp", 17, DT_DOUBLE));
	ck_assert(ir_ort_cpu_has_kernel("", "HardSwish", 17, DT_UNDEFINED));
	ck_assert(ir_ort_cpu_has_kernel("my.domain", "Thing", 1, DT_DOUBLE));
}
END_TEST

static const char *hs_model = "<ir_version: 8, opset_import: [\"\" : %d]>\n"
                              "g (%s[2,4] x) => (%s[2,4] y) {\n"
                              "  t = Constant <value = %s[1] {3}> ()\n"
                              "  lo = Constant <value = %s[1] {0}> ()\n"
                              "  hi = Constant <value = %s[1] {6}> ()\n"
                              "  s = Constant <value = %s[1] {6}> ()\n"
                              "  lo0 = Squeeze (lo)\n"
                              "  hi0 = Squeeze (hi)\n"
                              "  a = Add (x, t)\n"
                              "  c = Clip (a, lo0, hi0)\n"
                              "  m = Mul (x, c)\n"
                              "  y%s = Div (m, s)\n"
                              "%s"
                              "}\n";

static IrModel *hard_swish_model(int opset, const char *dt, bool with_softplus)
{
	char text[1200];
	snprintf(text, sizeof text, hs_model, opset, dt, dt, dt, dt, dt, dt, with_softplus ? "0" : "",
	         with_softplus ? "  y = Softplus (y0)\n" : "");
	return parse_text_model(text);
}

static bool has_op(IrModel *m, const char *op)
{
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		if (!strcmp(ir_node(m, n)->op_type, op))
			return true;
	return false;
}

START_TEST(test_node_gap_message)
{
	IrModel *m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                              "g (double[2] x, float[2] f) => (double[2] y, float[2] z) {\n"
	                              "  y = HardSwish (x)\n  z = HardSwish (f)\n}\n");
	char buf[160];
	NodeId n = ir_first(m, IR_MAIN_GRAPH);
	ck_assert_str_eq(ir_node_kernel_gap(m, n, buf, sizeof buf), "ONNX Runtime has no CPU kernel for HardSwish-14 on double");
	ck_assert_ptr_null(ir_node_kernel_gap(m, ir_next(m, n), buf, sizeof buf));
	ck_assert(!ir_model_has_kernels(m));
	ir_model_free(m);
}
END_TEST

/* x * Clip(x + 3, 0, 6) / 6 on double: ORT has Clip-13 on double but no
 * HardSwish on double, so the extended level's hard_swish_relu6 must not
 * fire; on float it fires. */
START_TEST(test_rewrite_no_hard_swish_on_double)
{
	const RwRuleSet *sets[] = {&graft_rules_basic, &graft_rules_extended};
	Diag d;
	diag_init(&d, stderr);
	for (int k = 0; k < 2; k++) {
		IrModel *m = hard_swish_model(17, k ? "float" : "double", false);
		ck_assert(ir_model_has_kernels(m));
		RwOptions o = {0};
		RwResult r;
		ck_assert_msg(rw_run(m, sets, 2, &o, &r, &d), "%s", d.first);
		ck_assert_msg(has_op(m, "HardSwish") == (k == 1), "k=%d", k);
		rw_result_free(&r);
		ir_model_free(m);
	}
	/* --why says so */
	IrModel *m = hard_swish_model(17, "double", false);
	RwOptions o = {.why_rule = "hard_swish_relu6"};
	RwResult r;
	ck_assert_msg(rw_run(m, sets, 2, &o, &r, &d), "%s", d.first);
	ck_assert_int_ge(r.nwhy, 1);
	bool found = false;
	for (int i = 0; i < r.nwhy; i++)
		if (r.why[i].kind == RW_WHY_KERNEL) {
			ck_assert_str_eq(r.why[i].detail,
			                 "the result's HardSwish: ONNX Runtime has no CPU kernel for HardSwish-14 on double");
			found = true;
		}
	ck_assert(found);
	ck_assert_str_eq(rw_why_kind_name(RW_WHY_KERNEL), "no ORT kernel for the result");
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

/* A model ORT cannot load anyway (Softplus on double) is not held to it. */
START_TEST(test_rewrite_unloadable_input_not_checked)
{
	const RwRuleSet *sets[] = {&graft_rules_basic, &graft_rules_extended};
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = hard_swish_model(17, "double", true);
	RwOptions o = {0};
	RwResult r;
	ck_assert_msg(rw_run(m, sets, 2, &o, &r, &d), "%s", d.first);
	ck_assert(has_op(m, "HardSwish"));
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

/* ORT's LayerNormalization refuses an empty normalized part at run time
 * (make difftest): a LayerNorm written out over [3,0] stays written out;
 * over [3,4] it fuses. */
START_TEST(test_rewrite_no_layer_norm_on_empty_axis)
{
	const RwRuleSet *sets[] = {&graft_rules_basic, &graft_rules_extended};
	Diag d;
	diag_init(&d, stderr);
	for (int k = 0; k < 2; k++) {
		char text[1200];
		snprintf(text, sizeof text,
		         "<ir_version: 9, opset_import: [\"\" : 17]>\n"
		         "g (float[3,%d] x) => (float[3,%d] y)\n"
		         "   <float eps = {1e-05}, float[%d] w = {%s}, float[%d] b = {%s}>\n{\n"
		         "  m = ReduceMean <axes = [-1], keepdims = 1> (x)\n  d = Sub (x, m)\n  q = Mul (d, d)\n"
		         "  v = ReduceMean <axes = [-1], keepdims = 1> (q)\n  e = Add (eps, v)\n  s = Sqrt (e)\n"
		         "  n = Div (d, s)\n  g = Mul (n, w)\n  y = Add (b, g)\n}\n",
		         k ? 4 : 0, k ? 4 : 0, k ? 4 : 0, k ? "1.0, 2.0, 3.0, 4.0" : "", k ? 4 : 0, k ? "0.5, 0.5, 0.5, 0.5" : "");
		IrModel *m = parse_text_model(text);
		ck_assert(ir_model_has_kernels(m));
		RwOptions o = {0};
		RwResult r;
		ck_assert_msg(rw_run(m, sets, 2, &o, &r, &d), "%s", d.first);
		ck_assert_msg(has_op(m, "LayerNormalization") == (k == 1), "k=%d", k);
		rw_result_free(&r);
		ir_model_free(m);
	}
	IrModel *m = parse_text_model("<ir_version: 9, opset_import: [\"\" : 17]>\n"
	                              "g (float[3,0] x, float[0] w) => (float[3,0] y) {\n"
	                              "  y = LayerNormalization <axis = -1> (x, w)\n}\n");
	char buf[160];
	ck_assert_str_eq(ir_node_kernel_gap(m, ir_first(m, IR_MAIN_GRAPH), buf, sizeof buf),
	                 "ONNX Runtime refuses LayerNormalization over an empty axis");
	ir_model_free(m);
}
END_TEST

/* ORT's InstanceNormalization crashes on empty spatial dims (make difftest
 * seed 331766): an instance norm written out over [1,1,0,0] stays written
 * out; over [1,1,2,3] it fuses. */
START_TEST(test_rewrite_no_instance_norm_on_empty_spatial)
{
	const RwRuleSet *sets[] = {&graft_rules_basic, &graft_rules_extended};
	Diag d;
	diag_init(&d, stderr);
	for (int k = 0; k < 2; k++) {
		char text[1200];
		snprintf(text, sizeof text,
		         "<ir_version: 7, opset_import: [\"\" : 12]>\n"
		         "g (float[1,1,%d,%d] x) => (float[1,1,%d,%d] y)\n"
		         "   <float eps = {1e-05}, float two = {2.0}>\n{\n"
		         "  m = ReduceMean <axes = [-2, -1], keepdims = 1> (x)\n  d = Sub (x, m)\n  q = Pow (d, two)\n"
		         "  v = ReduceMean <axes = [-2, -1], keepdims = 1> (q)\n  e = Add (eps, v)\n  s = Sqrt (e)\n"
		         "  y = Div (d, s)\n}\n",
		         2 * k, 3 * k, 2 * k, 3 * k);
		IrModel *m = parse_text_model(text);
		RwOptions o = {0};
		RwResult r;
		ck_assert_msg(rw_run(m, sets, 2, &o, &r, &d), "%s", d.first);
		ck_assert_msg(has_op(m, "InstanceNormalization") == (k == 1), "k=%d", k);
		rw_result_free(&r);
		ir_model_free(m);
	}
	IrModel *m = parse_text_model("<ir_version: 7, opset_import: [\"\" : 12]>\n"
	                              "g (float[1,2,0] x, float[2] s, float[2] b) => (float[1,2,0] y) {\n"
	                              "  y = InstanceNormalization (x, s, b)\n}\n");
	char buf[160];
	ck_assert_str_eq(ir_node_kernel_gap(m, ir_first(m, IR_MAIN_GRAPH), buf, sizeof buf),
	                 "ONNX Runtime refuses InstanceNormalization over an empty axis");
	ir_model_free(m);
	m = parse_text_model("<ir_version: 7, opset_import: [\"\" : 12]>\n"
	                     "g (float[1,1,0,0] x) => (float[1,1,1,1] y) {\n  y = GlobalAveragePool (x)\n}\n");
	ck_assert_str_eq(ir_node_kernel_gap(m, ir_first(m, IR_MAIN_GRAPH), buf, sizeof buf),
	                 "ONNX Runtime refuses GlobalAveragePool over an empty axis");
	ir_model_free(m);
}
END_TEST

Suite *suite_kernels(void)
{
	Suite *s = suite_create("kernels");
	TCase *tc = tcase_create("kernels");
	tcase_add_test(tc, test_lookup);
	tcase_add_test(tc, test_node_gap_message);
	tcase_add_test(tc, test_rewrite_no_hard_swish_on_double);
	tcase_add_test(tc, test_rewrite_unloadable_input_not_checked);
	tcase_add_test(tc, test_rewrite_no_layer_norm_on_empty_axis);
	tcase_add_test(tc, test_rewrite_no_instance_norm_on_empty_spatial);
	suite_add_tcase(s, tc);
	return s;
}
