/* check_fuzzcases.c - the graph fuzzer's finds, kept (issue 24): every file
 * of tests/fuzz/graph-crashers/ (an input `make fuzz-graph` crashed on,
 * minimized, whose bug is fixed) and of tests/fuzz/graph-seeds/ goes
 * through fuzz_graph_one, the fuzzer's own harness (tests/fuzz/graph_gen.c),
 * without libFuzzer: a crash, abort or sanitizer report fails the test.
 * A crasher named tame-* was found with FUZZ_GRAPH_TAME=1 and is replayed
 * so (the same bytes build another model without it).
 * Also: what the generator builds from a known input, and the fixes' own
 * tests. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/eval/eval.h"
#include "runtime/engine/fold.h"
#include "runtime/infer/infer.h"
#include "tests/fuzz/graph_gen.h"
#include "ir/ir.h"
#include "runtime/eval/run.h"
#include "testutil.h"

/* Expected file counts, so an empty or partial folder cannot pass. */
#define GRAPH_CRASHERS 34
#define GRAPH_SEEDS 9

static void replay_dir(const char *dir, size_t want)
{
	size_t n;
	char **paths = find_files(dir, "", &n);
	ck_assert_uint_eq(n, want);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		uint8_t *data = read_file(paths[i], &len);
		ck_assert_msg(data, "cannot read %s", paths[i]);
		const char *base = strrchr(paths[i], '/') + 1;
		setenv("FUZZ_GRAPH_TAME", strncmp(base, "tame-", 5) == 0 ? "1" : "0", 1);
		ck_assert_int_eq(fuzz_graph_one(data, len), 0);
		free(data);
	}
	paths_free(paths);
}

START_TEST(test_graph_crashers)
{
	replay_dir("tests/fuzz/graph-crashers", GRAPH_CRASHERS);
}
END_TEST

START_TEST(test_graph_seeds)
{
	replay_dir("tests/fuzz/graph-seeds", GRAPH_SEEDS);
}
END_TEST

/* No bytes, every choice 0: one float scalar input, one Abs node (the
 * table's first op) at opset 17, its output the graph's. */
START_TEST(test_generator_plain_model)
{
	size_t len;
	uint8_t *buf = fuzz_graph_model(NULL, 0, &len);
	ck_assert_ptr_nonnull(buf);
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_bytes(buf, len, "gen.onnx", NULL, NULL, &d);
	ck_assert_msg(m, "%s", d.first);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_uint_eq(g->ninputs, 1);
	ck_assert_uint_eq(g->nnodes, 1);
	ck_assert_uint_eq(g->noutputs, 1);
	IrNode *n = ir_node(m, g->first);
	ck_assert_str_eq(n->op_type, "Abs");
	ck_assert_uint_eq(n->inputs[0], g->inputs[0]);
	ck_assert_uint_eq(n->outputs[0], g->outputs[0]);
	IrValue *in = ir_value(m, g->inputs[0]);
	ck_assert_int_eq(in->dtype, DT_FLOAT);
	ck_assert_int_eq(in->shape.rank, 0);
	ck_assert_int_eq(ir_opset(m, ""), 17);
	ir_model_free(m);
	free(buf);
}
END_TEST

/* The fuzzer's first find: graft run (and graft compare) generating an
 * input of a float8, 4-bit or complex type recursed between ev_set_f and
 * ev_set_i until the stack ran out.  Now refused with a message. */
START_TEST(test_float8_input_refused)
{
	static const char *const types[] = {"float8e4m3fn", "float8e5m2", "int4", "uint4", "complex64"};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		char text[256], want[256];
		snprintf(text, sizeof text, "<ir_version: 10, opset_import: [\"\" : 21]>\n"
		         "g (%s[2] x) => (%s[2] y) { y = Identity (x) }\n", types[i], types[i]);
		IrModel *m = parse_text_model(text);
		Diag d;
		diag_init(&d, NULL);
		RunOptions ro = {.int_hi = 100};
		IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
		ck_assert_ptr_null(run_generate_input(m, g->inputs[0], 0, &ro, &d));
		snprintf(want, sizeof want, "t.onnx: input 'x': cannot generate values of type %s (use --inputs)", types[i]);
		ck_assert_str_eq(d.first, want);
		ir_model_free(m);
	}
	/* and the setters store nothing rather than recurse */
	int64_t two = 2;
	static const int dts[] = {DT_FLOAT8E4M3FN, DT_FLOAT8E5M2FNUZ, DT_INT4, DT_UINT4, DT_FLOAT4E2M1, DT_COMPLEX64};
	for (size_t i = 0; i < sizeof dts / sizeof *dts; i++) {
		EvValue *v = ev_tensor_new(dts[i], 1, &two);
		ck_assert_ptr_nonnull(v);
		ev_set_i(v, 1, 3);
		ev_set_f(v, 0, 1.5);
		for (size_t b = 0; b < v->nbytes; b++)
			ck_assert_uint_eq(((uint8_t *)v->data)[b], 0);
		ev_unref(v);
	}
}
END_TEST

/* The second and third: a Size node with no input was run by the constant
 * folder (its kernel read in[0] of none); ReduceSum (opset 13) and
 * Unsqueeze (opset 11) with `axes = []` passed a NULL list to memcpy in
 * shape inference.  Now: Size is refused with a message and left unfolded,
 * and an empty axes list reduces every axis (ReduceSum) or none. */
START_TEST(test_size_without_input)
{
	IrModel *m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                              "g (float[2] x) => (int64 y) { y = Size () }\n");
	Diag d;
	diag_init(&d, NULL);
	int64_t two = 2;
	EvValue *x = ev_tensor_new(DT_FLOAT, 1, &two), *out[1] = {NULL};
	ck_assert(!ev_run(m, (const EvValue *const *)&x, 1, out, NULL, &d));
	ev_unref(x);
	ck_assert_str_eq(d.first, "t.onnx: node 'Size#0': Size needs 1 input, has 0");
	ck_assert_ptr_null(out[0]);
	FoldOptions fo = {.max_bytes = 1 << 20};
	FoldStats st;
	diag_init(&d, NULL);
	ck_assert(fold_model(m, &fo, &st, &d));
	ck_assert_uint_eq(st.folded, 0);
	ck_assert_uint_eq(ir_graph(m, IR_MAIN_GRAPH)->nnodes, 1);
	ir_model_free(m);
}
END_TEST

START_TEST(test_empty_axes_attr)
{
	IrModel *m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 11]>\n"
	                              "g (float[2,3] x) => (float r, float[2,3] u) {\n"
	                              "  r = ReduceSum <axes: ints = [], keepdims = 0> (x)\n"
	                              "  u = Unsqueeze <axes: ints = []> (x)\n}\n");
	Diag d;
	diag_init(&d, NULL);
	InferState *s = infer_new(m);
	ck_assert_msg(infer_model(s, &d), "%s", d.first);
	infer_free(s);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_int_eq(ir_value(m, g->outputs[0])->shape.rank, 0);
	ck_assert_int_eq(ir_value(m, g->outputs[1])->shape.rank, 2);
	ir_model_free(m);
}
END_TEST

/* From the full campaign: GatherND's shape inference took a negative
 * batch_dims and read dims before the data's (the kernel refused it);
 * Pad (opset < 11) and Slice-1 with empty pads/starts/ends lists, in the
 * kernels and in the rules' attribute reader (rwg_arg_ints), passed NULL
 * lists to memcpy (the sanitizers' find; here: an empty Slice-1 slices
 * nothing). */
START_TEST(test_gathernd_batch_dims)
{
	IrModel *m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                              "g (float[2,3] x, int64[2,1] i) => (float[2] y) { y = GatherND <batch_dims = -1> (x, i) }\n");
	Diag d;
	diag_init(&d, NULL);
	InferState *s = infer_new(m);
	ck_assert(!infer_model(s, &d));
	ck_assert_msg(strstr(d.first, "batch_dims -1 is out of range"), "%s", d.first);
	infer_free(s);
	ir_model_free(m);
}
END_TEST

START_TEST(test_empty_slice_lists)
{
	IrModel *m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 9]>\n"
	                              "g (float[2,3] x) => (float[2,3] y) { y = Slice <starts: ints = [], ends: ints = []> (x) }\n");
	Diag d;
	diag_init(&d, NULL);
	int64_t dims[2] = {2, 3};
	EvValue *x = ev_tensor_new(DT_FLOAT, 2, dims), *out[1] = {NULL};
	for (int k = 0; k < 6; k++)
		ev_set_f(x, k, k);
	ck_assert_msg(ev_run(m, (const EvValue *const *)&x, 1, out, NULL, &d), "%s", d.first);
	ck_assert_int_eq(out[0]->rank, 2);
	ck_assert_int_eq(out[0]->numel, 6);
	ck_assert(ev_get_f(out[0], 5) == 5);
	ev_unref(out[0]);
	ev_unref(x);
	ir_model_free(m);
}
END_TEST

/* ev_set_numel_limit: the fuzzer's cap on tensor sizes, and its reset. */
START_TEST(test_numel_limit)
{
	int64_t small = 100, over = 101;
	ev_set_numel_limit(100);
	EvValue *a = ev_tensor_new(DT_FLOAT, 1, &small), *b = ev_tensor_new(DT_FLOAT, 1, &over);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(b);
	ev_set_numel_limit(0);
	b = ev_tensor_new(DT_FLOAT, 1, &over);
	ck_assert_ptr_nonnull(b);
	ev_unref(a);
	ev_unref(b);
}
END_TEST

Suite *suite_fuzzcases(void)
{
	Suite *s = suite_create("fuzzcases");
	TCase *tc = tcase_create("graph");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_graph_crashers);
	tcase_add_test(tc, test_graph_seeds);
	tcase_add_test(tc, test_generator_plain_model);
	tcase_add_test(tc, test_float8_input_refused);
	tcase_add_test(tc, test_size_without_input);
	tcase_add_test(tc, test_empty_axes_attr);
	tcase_add_test(tc, test_gathernd_batch_dims);
	tcase_add_test(tc, test_empty_slice_lists);
	tcase_add_test(tc, test_numel_limit);
	suite_add_tcase(s, tc);
	return s;
}
