/* check_rewrite.c - the rewrite engine: fixpoint, built-in passes (fold,
 * CSE, DCE), interface preservation, fuel, cycle detection, --max-rewrites,
 * enable/disable, determinism, --shuffle and the audit records.  The rules
 * are a small hand-written matcher in the shape graftc generates, so the
 * engine is tested on its own. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "ir/arena.h"
#include "runtime/eval/conformance.h"
#include "gen/onnx.pb-c.h"
#include "runtime/eval/eval.h"
#include "runtime/engine/rewrite.h"
#include "runtime/eval/run.h"
#include "runtime/engine/sha256.h"
#include "testutil.h"
#include "ir/text.h"

/* the compiled rule library (build/gen/rules_*.c) */
extern const RwRuleSet graft_rules_basic, graft_rules_extended;

/* ---- a hand-written rule set ---------------------------------------------------- */

enum { R_IDENTITY, R_NEG_TO_SUB, R_SUB_TO_NEG, R_COUNT };

static const RwRule rules[R_COUNT] = {
	{.name = "identity", .level = RW_LEVEL_BASIC, .file = "tests/check_rewrite.c", .line = 1, .doc = "Identity(x) => x",
	 .priority = 0, .opset_min = 1, .opset_max = 0, .vendor = false, .root_domain = "", .root_op = "Identity"},
	{.name = "neg_to_sub", .level = RW_LEVEL_EXTENDED, .file = "tests/check_rewrite.c", .line = 2, .doc = "Neg(x) => Sub(0, x)",
	 .priority = 0, .opset_min = 1, .opset_max = 0, .vendor = false, .root_domain = "", .root_op = "Neg"},
	{.name = "sub_to_neg", .level = RW_LEVEL_EXTENDED, .file = "tests/check_rewrite.c", .line = 3, .doc = "Sub(0, x) => Neg(x)",
	 .priority = 0, .opset_min = 1, .opset_max = 0, .vendor = false, .root_domain = "", .root_op = "Sub"},
};

static bool match(Rewriter *rw, NodeId n)
{
	IrModel *m = rw_model(rw);
	IrNode *node = ir_node(m, n);
	if (node->kind == OP_Identity && rw_enabled(rw, R_IDENTITY)) {
		/* match: Identity(x)   result: x */
		rw_begin(rw, R_IDENTITY, n, &n, 1);
		rw_replace(rw, 0, rw_input(rw, n, 0));
		return rw_commit(rw);
	}
	if (node->kind == OP_Neg && rw_enabled(rw, R_NEG_TO_SUB)) {
		rw_begin(rw, R_NEG_TO_SUB, n, &n, 1);
		ValueId in[2] = {rw_const_scalar(rw, DT_FLOAT, 0.0), rw_input(rw, n, 0)};
		NodeId s = rw_node(rw, "Sub", in, 2, 1);
		rw_replace(rw, 0, rw_output(rw, s, 0));
		return rw_commit(rw);
	}
	if (node->kind == OP_Sub && rw_enabled(rw, R_SUB_TO_NEG) && rw_const_equals(rw, rw_input(rw, n, 0), 0.0, 0)) {
		rw_begin(rw, R_SUB_TO_NEG, n, &n, 1);
		ValueId x = rw_input(rw, n, 1);
		NodeId g = rw_node(rw, "Neg", &x, 1, 1);
		rw_replace(rw, 0, rw_output(rw, g, 0));
		return rw_commit(rw);
	}
	return false;
}

static const RwRuleSet test_set = {"test", GRAFT_BUILDER_API_VERSION, rules, R_COUNT, match, NULL, NULL, NULL, NULL};
static const RwRuleSet *const sets[] = {&test_set};

/* ---- helpers -------------------------------------------------------------------- */

static IrModel *parse(const char *text) { return parse_text_model(text); }

static uint32_t nodes_of(IrModel *m, const char *op)
{
	uint32_t n = 0;
	for (NodeId x = ir_first(m, IR_MAIN_GRAPH); x; x = ir_next(m, x))
		n += !op || strcmp(ir_node(m, x)->op_type, op) == 0;
	return n;
}

static RwResult run(IrModel *m, const RwOptions *o, bool expect_ok)
{
	Diag d;
	diag_init(&d, NULL);
	RwResult r;
	bool ok = rw_run(m, sets, 1, o, &r, &d);
	ck_assert_msg(ok == expect_ok, "rw_run returned %d: %s", ok, d.first);
	ck_assert_msg(ir_validate(m, &d), "%s", d.first);
	return r;
}

static const char *chain =
	"<ir_version: 8, opset_import: [\"\" : 13]>\n"
	"g (float[4] x) => (float[4] y) {\n"
	"  a = Identity (x)\n"
	"  b = Relu (a)\n"
	"  c = Identity (b)\n"
	"  y = Identity (c)\n"
	"}\n";

/* ---- tests ---------------------------------------------------------------------- */

START_TEST(test_fixpoint_and_interface)
{
	IrModel *m = parse(chain);
	RwOptions o = {0};
	RwResult r = run(m, &o, true);
	ck_assert_int_eq(r.stop, RW_FIXPOINT);
	/* only the Relu is left, and it now produces the graph output under its name */
	ck_assert_uint_eq(nodes_of(m, NULL), 1);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_str_eq(ir_value(m, g->outputs[0])->name, "y");
	ck_assert_str_eq(ir_node(m, ir_value(m, g->outputs[0])->producer)->op_type, "Relu");
	ck_assert_str_eq(ir_value(m, ir_node(m, g->first)->inputs[0])->name, "x");
	ck_assert_int_eq(r.rewrites, 3);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

START_TEST(test_interface_refused)
{
	/* y = Identity(x) with x a graph input and y a graph output: removing it
	 * would rename the interface, so the rewrite is refused */
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[4] x) => (float[4] y) {\n"
	                   "  y = Identity (x)\n"
	                   "}\n");
	RwOptions o = {0};
	RwResult r = run(m, &o, true);
	ck_assert_uint_eq(nodes_of(m, "Identity"), 1);
	ck_assert_int_eq(r.rewrites, 0);
	ck_assert_uint_eq(ir_value(m, ir_lookup(m, IR_MAIN_GRAPH, "x"))->nuses, 1);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

START_TEST(test_max_rewrites)
{
	IrModel *m = parse(chain);
	RwOptions o = {.max_rewrites = 2};
	RwResult r = run(m, &o, true);
	ck_assert_int_eq(r.stop, RW_MAX_REWRITES);
	ck_assert_int_eq(r.rewrites, 2);
	ck_assert_uint_eq(nodes_of(m, "Identity"), 1);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

START_TEST(test_disable_and_levels)
{
	const char *names[] = {"identity"};
	IrModel *m = parse(chain);
	RwOptions o = {.disabled = names, .ndisabled = 1};
	RwResult r = run(m, &o, true);
	ck_assert_uint_eq(nodes_of(m, "Identity"), 3);
	rw_result_free(&r);
	ir_model_free(m);
	/* the rule file's name and the level name work too */
	const char *file[] = {"check_rewrite.c"};
	m = parse(chain);
	o = (RwOptions){.disabled = file, .ndisabled = 1};
	r = run(m, &o, true);
	ck_assert_uint_eq(nodes_of(m, "Identity"), 3);
	rw_result_free(&r);
	ir_model_free(m);
	m = parse(chain);
	o = (RwOptions){.levels = 1u << RW_LEVEL_EXTENDED};
	r = run(m, &o, true);
	ck_assert_uint_eq(nodes_of(m, "Identity"), 3);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

static const char *neg =
	"<ir_version: 8, opset_import: [\"\" : 13]>\n"
	"g (float[4] x) => (float[4] y) {\n"
	"  n = Neg (x)\n"
	"  y = Relu (n)\n"
	"}\n";

START_TEST(test_fuel)
{
	/* Neg => Sub(0, x) => Neg ... never converges: fuel stops it, a valid model remains */
	IrModel *m = parse(neg);
	RwOptions o = {.fuel = 50};
	Diag d;
	diag_init(&d, NULL);
	RwResult r;
	ck_assert(!rw_run(m, sets, 1, &o, &r, &d));
	ck_assert_int_eq(r.stop, RW_OUT_OF_FUEL);
	ck_assert_int_eq(r.rewrites, 50);
	ck_assert_str_eq(d.first, "t.onnx: stopped: out of fuel after 50 rewrites; rules firing: neg_to_sub, sub_to_neg");
	ck_assert(ir_validate(m, &d));
	ck_assert_uint_eq(nodes_of(m, NULL), 2);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

START_TEST(test_cycle)
{
	IrModel *m = parse(neg);
	RwOptions o = {0};
	Diag d;
	diag_init(&d, NULL);
	RwResult r;
	ck_assert(!rw_run(m, sets, 1, &o, &r, &d));
	ck_assert_int_eq(r.stop, RW_CYCLE);
	ck_assert_msg(strstr(d.first, "stopped: the rules rewrite in a cycle after") != NULL, "%s", d.first);
	ck_assert_msg(strstr(d.first, "rules firing: neg_to_sub, sub_to_neg") != NULL, "%s", d.first);
	ck_assert_int_lt(r.rewrites, 2000); /* found long before the default fuel */
	ck_assert(ir_validate(m, &d));
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

START_TEST(test_builtin_passes)
{
	/* CSE merges the two Relu(x); DCE drops the dead Tanh; fold computes Add(a, b) */
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[2] x) => (float[2] y) <float[2] a = {1, 2}, float[2] b = {3, 4}> {\n"
	                   "  dead = Tanh (x)\n"
	                   "  r1 = Relu (x)\n"
	                   "  r2 = Relu (x)\n"
	                   "  k = Add (a, b)\n"
	                   "  s = Add (r1, r2)\n"
	                   "  y = Mul (s, k)\n"
	                   "}\n");
	RwOptions o = {0};
	RwResult r = run(m, &o, true);
	ck_assert_uint_eq(nodes_of(m, "Relu"), 1);
	ck_assert_uint_eq(nodes_of(m, "Tanh"), 0);
	ck_assert_uint_eq(nodes_of(m, NULL), 3);
	const char *seen[3] = {0};
	for (size_t i = 0; i < r.nfirings; i++) {
		const char *name = rw_firing_name(sets, &r.firings[i]);
		if (strcmp(name, "dce") == 0)
			seen[0] = name;
		else if (strcmp(name, "cse") == 0)
			seen[1] = name;
		else if (strcmp(name, "fold") == 0)
			seen[2] = name;
	}
	ck_assert(seen[0] && seen[1] && seen[2]);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

/* CSE compares constants by their bytes: two MatMuls whose 8 KB weights are
 * equal merge, one whose weight differs in a byte the content hash does not
 * sample stays; Div by -0.0 and Div by 0.0 stay apart (1/x differs). */
START_TEST(test_cse_constants)
{
	enum { K = 2048 };
	size_t cap = (size_t)K * 3 * 8 + 1024, len = 0;
	char *text = malloc(cap);
	len += (size_t)snprintf(text + len, cap - len,
	                        "<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                        "g (float[1,%d] x, float[1] v) => (float[1,1] y, float[1] z)\n<", K);
	for (int w = 1; w <= 3; w++) {
		len += (size_t)snprintf(text + len, cap - len, "float[%d,1] w%d = {", K, w);
		for (int i = 0; i < K; i++) /* w3 differs in element 1001: bytes 4004..4007, between two samples */
			len += (size_t)snprintf(text + len, cap - len, "%s%d", i ? "," : "", w == 3 && i == 1001 ? 7 : i % 5);
		len += (size_t)snprintf(text + len, cap - len, "}, ");
	}
	len += (size_t)snprintf(text + len, cap - len,
	                        "float[1] z1 = {-0.0}, float[1] z2 = {0.0}, float[1] z3 = {0.0}> {\n"
	                        "  m1 = MatMul (x, w1)\n  m2 = MatMul (x, w2)\n  m3 = MatMul (x, w3)\n"
	                        "  s = Add (m1, m2)\n  y = Add (s, m3)\n"
	                        "  d1 = Div (v, z1)\n  d2 = Div (v, z2)\n  d3 = Div (v, z3)\n"
	                        "  e = Add (d1, d2)\n  z = Add (e, d3)\n}\n");
	ck_assert_uint_lt(len, cap);
	IrModel *m = parse(text);
	free(text);
	RwOptions o = {0};
	RwResult r = run(m, &o, true);
	ck_assert_uint_eq(nodes_of(m, "MatMul"), 2);
	ck_assert_uint_eq(nodes_of(m, "Div"), 2);
	size_t cse = 0;
	for (size_t i = 0; i < r.nfirings; i++)
		cse += strcmp(rw_firing_name(sets, &r.firings[i]), "cse") == 0;
	ck_assert_uint_eq(cse, 2);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

START_TEST(test_audit_records)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[4] x) => (float[4] y) {\n"
	                   "  [negate] n = Neg (x)\n"
	                   "  y = Relu (n)\n"
	                   "}\n");
	const char *only[] = {"neg_to_sub"};
	RwOptions o = {.enabled = only, .nenabled = 1, .no_fold = true};
	RwResult r = run(m, &o, true);
	ck_assert_uint_eq(r.nfirings, 1);
	const RwFiring *f = &r.firings[0];
	ck_assert_str_eq(rw_firing_name(sets, f), "neg_to_sub");
	ck_assert_int_eq(f->nmatched, 1);
	ck_assert_str_eq(f->matched[0], "negate");
	ck_assert_int_eq(f->ncreated, 1);
	ck_assert_msg(strncmp(f->created[0], "neg_to_sub/Sub_", 15) == 0, "%s", f->created[0]);
	/* the created node carries that name in the model */
	bool found = false;
	for (NodeId x = ir_first(m, IR_MAIN_GRAPH); x; x = ir_next(m, x))
		found |= strcmp(ir_node(m, x)->name, f->created[0]) == 0;
	ck_assert(found);
	ck_assert_int_eq(f->nprovenance[0], 1);
	ck_assert_str_eq(f->provenance[0][0], "negate");
	ck_assert_int_eq(f->nremoved, 1);
	ck_assert_str_eq(f->removed[0], "negate");
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

/* counts_only (graft optimize without --report, --dot or --trace): the same
 * rewrite, the same node name in the model, and a firing that names its rule
 * but records no nodes. */
START_TEST(test_audit_counts_only)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[4] x) => (float[4] y) {\n"
	                   "  [negate] n = Neg (x)\n"
	                   "  y = Relu (n)\n"
	                   "}\n");
	const char *only[] = {"neg_to_sub"};
	RwOptions o = {.enabled = only, .nenabled = 1, .no_fold = true, .counts_only = true};
	RwResult r = run(m, &o, true);
	ck_assert_uint_eq(r.nfirings, 1);
	const RwFiring *f = &r.firings[0];
	ck_assert_str_eq(rw_firing_name(sets, f), "neg_to_sub");
	ck_assert_int_eq(f->nmatched, 0);
	ck_assert_int_eq(f->ncreated, 0);
	ck_assert_int_eq(f->nremoved, 0);
	NodeId x = ir_first(m, IR_MAIN_GRAPH);
	ck_assert_str_eq(ir_node(m, x)->op_type, "Sub");
	ck_assert_msg(strncmp(ir_node(m, x)->name, "neg_to_sub/Sub_", 15) == 0, "%s", ir_node(m, x)->name);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

/* The whole engine on a corpus model: the same bytes twice, and the same
 * node count and outputs under several --shuffle seeds. */
START_TEST(test_determinism_and_shuffle)
{
	const char *corpus = corpus_dir();
	char path[512];
	if (corpus)
		snprintf(path, sizeof path, "%s/torch/gpt2_h128_l2/dyn/model.onnx", corpus);
	else
		snprintf(path, sizeof path, "examples/tiny_cnn.onnx");
	uint8_t *first = NULL;
	size_t first_len = 0;
	uint32_t nodes = 0;
	EvValue *ref = NULL;
	for (uint64_t seed = 0; seed < 5; seed++) {
		Diag d;
		diag_init(&d, stderr);
		IrModel *m = ir_load_file(path, NULL, &d);
		ck_assert_ptr_nonnull(m);
		RwOptions o = {.shuffle_seed = seed};
		RwResult r = run(m, &o, true);
		uint8_t *bytes;
		size_t len;
		ck_assert(ir_save_bytes(m, &bytes, &len, &d));
		if (seed == 0) {
			first = bytes;
			first_len = len;
			nodes = r.nodes_after;
		} else {
			ck_assert_uint_eq(r.nodes_after, nodes);
			free(bytes);
		}
		/* the same outputs as the first run, on the same inputs */
		IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
		RunOptions ro = {.int_hi = 100};
		EvValue **in = calloc(g->ninputs + 1, sizeof *in), **out = calloc(g->noutputs + 1, sizeof *out);
		ck_assert(run_prepare_inputs(m, &ro, in, &d));
		ck_assert(ev_run(m, (const EvValue *const *)in, g->ninputs, out, NULL, &d));
		if (!ref) {
			ref = ev_ref(out[0]);
		} else {
			RunDiff diff;
			run_compare(ref, out[0], 0, 0, &diff);
			ck_assert(diff.agree);
		}
		for (uint32_t i = 0; i < g->ninputs; i++)
			ev_unref(in[i]);
		for (uint32_t i = 0; i < g->noutputs; i++)
			ev_unref(out[i]);
		free(in);
		free(out);
		rw_result_free(&r);
		ir_model_free(m);
		if (seed == 0) {
			/* determinism: a second unshuffled run saves the same bytes */
			IrModel *m2 = ir_load_file(path, NULL, &d);
			RwOptions o2 = {0};
			RwResult r2 = run(m2, &o2, true);
			uint8_t *b2;
			size_t l2;
			ck_assert(ir_save_bytes(m2, &b2, &l2, &d));
			ck_assert_uint_eq(l2, first_len);
			ck_assert_int_eq(memcmp(b2, first, l2), 0);
			free(b2);
			rw_result_free(&r2);
			ir_model_free(m2);
		}
	}
	ev_unref(ref);
	free(first);
}
END_TEST

/* The library's compiled rules over corpus models with several --shuffle
 * seeds: the same node count and the same outputs every time. */

START_TEST(test_library_rules_shuffle_corpus)
{
	const char *corpus = corpus_dir();
	if (!corpus) {
		fprintf(stderr, "note: no corpus; library shuffle test skipped\n");
		return;
	}
	static const char *models[] = {"small_cnn/raw_injected", "resnet18/raw", "mobilenet_v2/raw", "gpt2_h128_l2/raw",
	                               "bert_h128_l2/dyn", "swin_t_narrow/raw"};
	const RwRuleSet *lib[] = {&graft_rules_basic, &graft_rules_extended};
	for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
		char path[600];
		snprintf(path, sizeof path, "%s/torch/%s/model.onnx", corpus, models[k]);
		uint32_t nodes = 0;
		EvValue *ref = NULL;
		for (uint64_t seed = 0; seed < 4; seed++) {
			Diag d;
			diag_init(&d, stderr);
			IrModel *m = ir_load_file(path, NULL, &d);
			ck_assert_ptr_nonnull(m);
			RwOptions o = {.shuffle_seed = seed};
			RwResult r;
			ck_assert_msg(rw_run(m, lib, 2, &o, &r, &d), "%s: %s", models[k], d.first);
			ck_assert_msg(ir_validate(m, &d), "%s: %s", models[k], d.first);
			if (seed == 0)
				nodes = r.nodes_after;
			ck_assert_msg(r.nodes_after == nodes, "%s seed %llu: %u nodes, seed 0 gave %u", models[k],
			              (unsigned long long)seed, r.nodes_after, nodes);
			IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
			RunOptions ro = {.int_hi = 100};
			EvValue **in = calloc(g->ninputs + 1, sizeof *in), **out = calloc(g->noutputs + 1, sizeof *out);
			ck_assert(run_prepare_inputs(m, &ro, in, &d));
			ck_assert_msg(ev_run(m, (const EvValue *const *)in, g->ninputs, out, NULL, &d), "%s", d.first);
			if (!ref) {
				ref = ev_ref(out[0]);
			} else {
				RunDiff diff;
				run_compare(ref, out[0], 1e-5, 1e-6, &diff);
				ck_assert_msg(diff.agree, "%s seed %llu: outputs differ (max abs %g)", models[k],
				              (unsigned long long)seed, diff.max_abs);
			}
			for (uint32_t i = 0; i < g->ninputs; i++)
				ev_unref(in[i]);
			for (uint32_t i = 0; i < g->noutputs; i++)
				ev_unref(out[i]);
			free(in);
			free(out);
			rw_result_free(&r);
			ir_model_free(m);
		}
		ev_unref(ref);
	}
}
END_TEST

/* ---- subgraphs and the interface ------------------------------------------------ */

/* What a graph's outputs are, to compare before and after a run. */
typedef struct OutputKinds {
	uint32_t noutputs;
	bool was_input[16];     /* output i is one of the graph's inputs */
	int dtype[16];
} OutputKinds;

static void output_kinds(IrModel *m, OutputKinds *k)
{
	for (GraphId g = 1; g < m->ngraphs; g++) {
		IrGraph *gr = ir_graph(m, g);
		k[g].noutputs = gr->noutputs;
		for (uint32_t i = 0; i < gr->noutputs && i < 16; i++) {
			k[g].was_input[i] = ir_value(m, gr->outputs[i])->is_input;
			k[g].dtype[i] = ir_value(m, gr->outputs[i])->dtype;
		}
	}
}

/* What ONNX and ONNX Runtime require of graph outputs after a run: each in
 * its own graph's scope (never an outer-scope value), an input only where
 * the original had one there, the same count and element types. */
static void assert_interface_kept(IrModel *m, const OutputKinds *before, const char *what)
{
	for (GraphId g = 1; g < m->ngraphs; g++) {
		IrGraph *gr = ir_graph(m, g);
		if (gr->dead)
			continue;
		ck_assert_msg(gr->noutputs == before[g].noutputs, "%s: graph %s has %u outputs, had %u", what, gr->name,
		              gr->noutputs, before[g].noutputs);
		for (uint32_t i = 0; i < gr->noutputs && i < 16; i++) {
			IrValue *v = ir_value(m, gr->outputs[i]);
			ck_assert_msg(v->graph == g, "%s: output %s of graph %s is an outer-scope value", what, v->name, gr->name);
			ck_assert_msg(!v->is_input || before[g].was_input[i], "%s: output %u of graph %s became the input %s",
			              what, i, gr->name, v->name);
			ck_assert_msg(v->dtype == before[g].dtype[i] || !before[g].dtype[i] || !v->dtype,
			              "%s: output %s of graph %s changed element type", what, v->name, gr->name);
		}
	}
}

/* The names of nodes a run created say which rule and which node id made
 * them (audit provenance): drop them to compare two runs' graphs. */
static void forget_created_names(IrModel *m)
{
	for (NodeId n = 1; n < m->nnodes; n++)
		if (!ir_node(m, n)->dead && ir_node(m, n)->orig_index == UINT32_MAX)
			ir_node(m, n)->name = "";
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static IrModel *sort_model;
static int by_name(const void *a, const void *b)
{
	return strcmp(ir_value(sort_model, *(const ValueId *)a)->name, ir_value(sort_model, *(const ValueId *)b)->name);
}

static void rename_free(IrModel *m, ValueId v, const char *base)
{
	char name[96];
	snprintf(name, sizeof name, "%s", base);
	for (int k = 2; !ir_value_rename(m, v, arena_strdup(m->arena, name)); k++)
		snprintf(name, sizeof name, "%s_%d", base, k);
}

/* Two runs' models made comparable: the values a run created are named by
 * the worklist's order (fresh-name counters), so rename them canonically
 * (a created initializer by a hash of its content, a created node output
 * by its position in the saved node order) and list initializers by name.
 * `before` holds the sorted value names of the input model. */
static void canon_names(IrModel *m, char **before, size_t nbefore)
{
	for (ValueId v = 1; v < m->nvalues; v++) {
		IrValue *val = ir_value(m, v);
		const char *key = val->name;
		if (val->dead || !val->tensor || bsearch(&key, before, nbefore, sizeof *before, cmp_str))
			continue;
		IrTensor *t = ir_tensor(m, val->tensor);
		size_t n;
		const uint8_t *b = ir_tensor_bytes(m, val->tensor, &n);
		uint64_t h = 1469598103934665603ull ^ (uint64_t)t->dtype;
		for (int i = 0; i < t->rank; i++)
			h = (h ^ (uint64_t)t->dims[i]) * 1099511628211ull;
		for (size_t i = 0; b && i < n; i++)
			h = (h ^ b[i]) * 1099511628211ull;
		char name[40];
		snprintf(name, sizeof name, "k_%016llx", (unsigned long long)h);
		rename_free(m, v, name);
	}
	unsigned k = 0;
	for (GraphId g = 1; g < m->ngraphs; g++)
		for (NodeId n = ir_first(m, g); n; n = ir_next(m, n))
			for (uint32_t o = 0; o < ir_node(m, n)->noutputs; o++) {
				ValueId v = ir_node(m, n)->outputs[o];
				const char *key = v ? ir_value(m, v)->name : NULL;
				if (v && !bsearch(&key, before, nbefore, sizeof *before, cmp_str)) {
					char name[40];
					snprintf(name, sizeof name, "v_%u", k++);
					rename_free(m, v, name);
				}
			}
	sort_model = m;
	for (GraphId g = 1; g < m->ngraphs; g++)
		if (ir_graph(m, g)->ninits > 1)
			qsort(ir_graph(m, g)->inits, ir_graph(m, g)->ninits, sizeof(ValueId), by_name);
}

/* The sorted names of every value of the model at path. */
static char **value_names(const char *path, size_t *count)
{
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_load_file(path, NULL, &d);
	ck_assert_ptr_nonnull(m);
	char **names = malloc(sizeof *names * m->nvalues);
	*count = 0;
	for (ValueId v = 1; v < m->nvalues; v++)
		names[(*count)++] = strdup(ir_value(m, v)->name);
	qsort(names, *count, sizeof *names, cmp_str);
	ir_model_free(m);
	return names;
}

/* A13: an If on a constant condition is replaced by its taken branch, also
 * nested in a branch and inside a Loop body (tests/data/control/if_constant);
 * --disable inline-if keeps them. */
static int count_op(IrModel *m, const char *op)
{
	int k = 0;
	for (GraphId g = 1; g < m->ngraphs; g++)
		for (NodeId n = ir_graph(m, g)->dead ? 0 : ir_first(m, g); n; n = ir_next(m, n))
			k += strcmp(ir_node(m, n)->op_type, op) == 0;
	return k;
}

START_TEST(test_inline_if)
{
	const RwRuleSet *lib[] = {&graft_rules_basic, &graft_rules_extended};
	for (int off = 0; off < 2; off++) {
		Diag d;
		diag_init(&d, stderr);
		IrModel *m = ir_load_file("tests/data/control/if_constant/model.onnx", NULL, &d);
		ck_assert_ptr_nonnull(m);
		ck_assert_int_eq(count_op(m, "If"), 3);
		const char *dis[] = {"inline-if"};
		RwOptions o = {.disabled = dis, .ndisabled = off};
		RwResult r;
		ck_assert(rw_run(m, lib, 2, &o, &r, &d));
		ck_assert(ir_validate(m, &d));
		int inlined = 0;
		for (size_t i = 0; i < r.nfirings; i++)
			inlined += r.firings[i].builtin && strcmp(r.firings[i].builtin, "inline-if") == 0;
		ck_assert_int_eq(inlined, off ? 0 : 3);
		ck_assert_int_eq(count_op(m, "If"), off ? 3 : 0);
		/* the taken branches' work, and nothing of the others */
		ck_assert_int_eq(count_op(m, "Neg"), off ? 2 : 0);
		ck_assert_int_eq(count_op(m, "Mul"), 1);
		ck_assert_int_eq(count_op(m, "Sub"), 1);
		rw_result_free(&r);
		ir_model_free(m);
	}
}
END_TEST

/* An inlined branch's initializers become the enclosing graph's: readers in
 * bodies nested in the branch (which move along) must read the copies.  They
 * kept reading the branch's own initializer, which died with the If: the
 * saved model named no value ("input 'k' names no value"), and where a later
 * fold removed such a reader, del_use aborted ("use not found"; found by
 * make fuzz-graph).  Both models are checked for the optimized node list,
 * a reload of the saved bytes, and the same outputs as before. */
static const char *if_reads_branch_init[] = {
	/* a nested If on an input reads the branch's k: it stays, reading k's copy */
	"<ir_version: 8, opset_import: [\"\" : 13]>\n"
	"main (bool b, float[2] x) => (float[2] y) <bool c = {1}> {\n"
	"  y = If (c) <then_branch: graph = t () => (float[2] o) <float k = {2.0}> {\n"
	"    o = If (b) <then_branch: graph = t2 () => (float[2] p) { p = Add (x, k) },\n"
	"                else_branch: graph = e2 () => (float[2] q) { q = Identity (x) }>\n"
	"  }, else_branch: graph = e () => (float[2] r) { r = Identity (x) }>\n"
	"}\n",
	/* the nested If's condition is k itself: inlined too, then folded away */
	"<ir_version: 8, opset_import: [\"\" : 13]>\n"
	"main (bool b, float[2] x) => (bool y) <bool c = {1}> {\n"
	"  y = If (c) <then_branch: graph = t () => (bool o) <bool k = {1}> {\n"
	"    o = If (k) <then_branch: graph = t2 () => (bool p) { p = Not (k) },\n"
	"                else_branch: graph = e2 () => (bool q) { q = Identity (k) }>\n"
	"  }, else_branch: graph = e () => (bool r) { r = Identity (c) }>\n"
	"}\n",
};

static const char *if_reads_branch_init_after[] = {
	"<\n   ir_version: 8,\n   opset_import: [\"\" : 13]\n>\n"
	"main (bool b, float[2] x) => (float[2] y)\n   <float k__1 = {2.0}>\n{\n"
	"   y = If (b) <then_branch: graph = t2 () => (float[2] p) {\n"
	"      p = Add (x, k__1)\n"
	"   }, else_branch: graph = e2 () => (float[2] q) {\n"
	"      q = Identity (x)\n"
	"   }>\n}\n",
	"<\n   ir_version: 8,\n   opset_import: [\"\" : 13]\n>\n"
	"main (bool b, float[2] x) => (bool y)\n   <bool y = {0}>\n{\n}\n",
};

/* m's only output on b and x = {1.5, -3} */
static EvValue *eval_bx(IrModel *m, bool b)
{
	Diag d;
	diag_init(&d, NULL);
	int64_t two = 2;
	EvValue *in[2] = {ev_scalar_f(DT_BOOL, b), ev_tensor_new(DT_FLOAT, 1, &two)}, *out[1] = {NULL};
	ev_set_f(in[1], 0, 1.5);
	ev_set_f(in[1], 1, -3);
	ck_assert_msg(ev_run(m, (const EvValue *const *)in, 2, out, NULL, &d), "%s", d.first);
	ev_unref(in[0]);
	ev_unref(in[1]);
	return out[0];
}

START_TEST(test_inline_if_nested_reads_branch_init)
{
	const RwRuleSet *lib[] = {&graft_rules_basic, &graft_rules_extended};
	for (size_t k = 0; k < sizeof if_reads_branch_init / sizeof *if_reads_branch_init; k++) {
		Diag d;
		diag_init(&d, NULL);
		IrModel *m = parse(if_reads_branch_init[k]);
		EvValue *before[2] = {eval_bx(m, false), eval_bx(m, true)};
		RwOptions o = {0};
		RwResult r;
		ck_assert_msg(rw_run(m, lib, 2, &o, &r, &d), "%s", d.first);
		ck_assert_msg(ir_validate(m, &d), "model %zu: %s", k, d.first);
		ck_assert_int_eq(count_op(m, "If"), k == 0 ? 1 : 0);
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		ck_assert(ir_print_model(m, f, &d));
		fclose(f);
		ck_assert_str_eq(text, if_reads_branch_init_after[k]);
		free(text);
		/* as saved: every name resolves on reload, and the outputs are the same */
		uint8_t *bytes;
		size_t nbytes;
		ck_assert(ir_save_bytes(m, &bytes, &nbytes, &d));
		IrModel *saved = ir_load_bytes(bytes, nbytes, "saved.onnx", NULL, NULL, &d);
		ck_assert_msg(saved, "model %zu: %s", k, d.first);
		for (int b = 0; b < 2; b++) {
			EvValue *after = eval_bx(saved, b);
			RunDiff diff;
			run_compare(before[b], after, 0, 0, &diff);
			ck_assert_msg(diff.agree, "model %zu, b = %d: outputs differ", k, b);
			ev_unref(after);
			ev_unref(before[b]);
		}
		free(bytes);
		ir_model_free(saved);
		rw_result_free(&r);
		ir_model_free(m);
	}
}
END_TEST

/* The control-flow fixtures (tests/data/control, make_control.py: networks
 * in If/Loop/Scan bodies reading outer values, Loop-carried sequences,
 * absent optionals, an output that is an input), optimized with the rule
 * library: the interface rules hold in every graph, the saved model still
 * computes the expected outputs on the evaluator, and four --shuffle seeds
 * reach the same model. */
START_TEST(test_control_fixtures)
{
	const RwRuleSet *lib[] = {&graft_rules_basic, &graft_rules_extended};
	size_t count;
	char **paths = find_models("tests/data/control", &count);
	ck_assert_uint_ge(count, 8);
	char *tmp = temp_dir();
	for (size_t k = 0; k < count; k++) {
		const char *path = paths[k];
		Diag d;
		diag_init(&d, stderr);
		IrModel *ref = NULL;
		size_t nnames;
		char **names = value_names(path, &nnames);
		for (uint64_t seed = 0; seed < 4; seed++) {
			IrModel *m = ir_load_file(path, NULL, &d);
			ck_assert_ptr_nonnull(m);
			OutputKinds *before = calloc(m->ngraphs + 1, sizeof *before);
			output_kinds(m, before);
			RwOptions o = {.shuffle_seed = seed};
			RwResult r;
			ck_assert_msg(rw_run(m, lib, 2, &o, &r, &d), "%s: %s", path, d.first);
			ck_assert_msg(r.stop == RW_FIXPOINT, "%s: no fixpoint", path);
			ck_assert_msg(ir_validate(m, &d), "%s: %s", path, d.first);
			assert_interface_kept(m, before, path);
			free(before);
			rw_result_free(&r);
			/* compare as saved: reload what was written */
			forget_created_names(m);
			uint8_t *bytes;
			size_t len;
			ck_assert(ir_save_bytes(m, &bytes, &len, &d));
			ir_model_free(m);
			m = ir_load_bytes(bytes, len, path, NULL, NULL, &d);
			ck_assert_ptr_nonnull(m);
			canon_names(m, names, nnames);
			if (seed == 0) {
				/* the saved model computes the expected outputs */
				char root[600], dir[700], file[800], cmd[1800];
				snprintf(root, sizeof root, "%s/%zu", tmp, k);
				snprintf(dir, sizeof dir, "%s/fixture", root);
				snprintf(cmd, sizeof cmd, "mkdir -p %s && cp -r $(dirname %s)/test_data_set_* %s/", dir, path, dir);
				ck_assert_int_eq(system(cmd), 0);
				snprintf(file, sizeof file, "%s/model.onnx", dir);
				ck_assert(write_file(file, bytes, len));
				const char *roots[] = {root};
				ConfOptions co = {.out = stderr};
				ConfSummary cs;
				bool ok = conf_run(roots, 1, &co, &cs);
				ck_assert_msg(ok && cs.passed == 1, "%s: optimized model fails its test data (%u passed, %u failed, "
				              "%u unsupported)", path, cs.passed, cs.failed, cs.unsupported);
				conf_summary_free(&cs);
				ref = m;
			} else {
				const char *diff = model_diff(ref, m);
				ck_assert_msg(!diff, "%s: --shuffle %llu reaches another model: %s", path, (unsigned long long)seed,
				              diff);
				ir_model_free(m);
			}
			free(bytes);
		}
		ir_model_free(ref);
		for (size_t i = 0; i < nnames; i++)
			free(names[i]);
		free(names);
	}
	rm_rf(tmp);
	free(tmp);
	paths_free(paths);
}
END_TEST

/* A TypeProto that declares a tensor (directly or as a sequence, optional
 * or map element) of undefined element type: ONNX Runtime refuses it
 * ("Invalid tensor data type 0"). */
static bool type_undefined(const Onnx__TypeProto *t)
{
	if (!t)
		return false;
	switch (t->value_case) {
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: return !t->tensor_type->has_elem_type || !t->tensor_type->elem_type;
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return type_undefined(t->sequence_type->elem_type);
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return type_undefined(t->optional_type->elem_type);
	default: return false;
	}
}

static const char *undefined_type_in(const Onnx__GraphProto *g)
{
	const Onnx__ValueInfoProto *const *lists[] = {(const Onnx__ValueInfoProto *const *)g->input,
	                                               (const Onnx__ValueInfoProto *const *)g->output,
	                                               (const Onnx__ValueInfoProto *const *)g->value_info};
	size_t counts[] = {g->n_input, g->n_output, g->n_value_info};
	for (int l = 0; l < 3; l++)
		for (size_t i = 0; i < counts[l]; i++)
			if (type_undefined(lists[l][i]->type))
				return lists[l][i]->name;
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t a = 0; a < g->node[i]->n_attribute; a++) {
			const Onnx__AttributeProto *at = g->node[i]->attribute[a];
			const char *bad = at->g ? undefined_type_in(at->g) : NULL;
			for (size_t k = 0; !bad && k < at->n_graphs; k++)
				bad = undefined_type_in(at->graphs[k]);
			if (bad)
				return bad;
		}
	return NULL;
}

/* The same interface rules over every ONNX conformance model (their If,
 * Loop, Scan and SequenceMap bodies among them), without ONNX Runtime:
 * make ort-gate loads the results in ORT.  Skipped under valgrind. */
START_TEST(test_conformance_interfaces)
{
	if (heavy_skipped())
		return;
	const RwRuleSet *lib[] = {&graft_rules_basic, &graft_rules_extended};
	size_t count;
	char **paths = find_models(ONNX_TESTDATA, &count);
	ck_assert_uint_ge(count, 1000);
	size_t bodies = 0;
	for (size_t k = 0; k < count; k++) {
		if (strstr(paths[k], "/real/"))
			continue;
		Diag d;
		diag_init(&d, NULL);
		IrModel *m = ir_load_file(paths[k], NULL, &d);
		ck_assert_msg(m != NULL, "%s: %s", paths[k], d.first);
		bodies += m->ngraphs > 2;
		OutputKinds *before = calloc(m->ngraphs + 1, sizeof *before);
		output_kinds(m, before);
		RwResult r;
		ck_assert_msg(rw_run(m, lib, 2, &(RwOptions){0}, &r, &d), "%s: %s", paths[k], d.first);
		ck_assert_msg(ir_validate(m, &d), "%s: %s", paths[k], d.first);
		assert_interface_kept(m, before, paths[k]);
		free(before);
		rw_result_free(&r);
		uint8_t *bytes;
		size_t len;
		ck_assert(ir_save_bytes(m, &bytes, &len, &d));
		Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
		ck_assert_ptr_nonnull(mp);
		const char *bad = undefined_type_in(mp->graph);
		ck_assert_msg(!bad, "%s: '%s' is written with an undefined element type", paths[k], bad);
		onnx__model_proto__free_unpacked(mp, NULL);
		free(bytes);
		ir_model_free(m);
	}
	ck_assert_uint_ge(bodies, 20); /* the 22 models with subgraphs were there */
	paths_free(paths);
}
END_TEST

/* graft optimize --report, then graft explain on the Conv that Conv+BN created */
/* graft optimize folds a 2 MB ConstantOfShape (under the 1 GB default cap)
 * and says the constants grew; --max-bytes below its size keeps it. */
START_TEST(test_cli_constant_growth)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *tmp = temp_dir();
	char cmd[2048], path[600];
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[512,1024] x) => (float[512,1024] y) <int64[2] s = {512, 1024}> {\n"
	                   "  c = ConstantOfShape <value = float[1] {1.5}> (s)\n"
	                   "  y = Add (x, c)\n"
	                   "}\n");
	snprintf(path, sizeof path, "%s/in.onnx", tmp);
	Diag d;
	diag_init(&d, NULL);
	ck_assert_msg(ir_save_file(m, path, &(SaveOptions){0}, &d), "%s", d.first);
	ir_model_free(m);
	const char *runs[2] = {"", "--max-bytes 1000000"};
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof cmd, "%s optimize %s -o %s/o%d.onnx %s 2> %s/err%d.txt", graft, path, tmp, i, runs[i], tmp, i);
		ck_assert_int_eq(system(cmd), 0);
		char f[700];
		snprintf(f, sizeof f, "%s/err%d.txt", tmp, i);
		size_t len;
		char *text = (char *)read_file(f, &len);
		text = realloc(text, len + 1);
		text[len] = 0;
		if (i == 0)
			ck_assert_msg(strstr(text, "\nconstants grew from 20 bytes to 2.0 MB (a folded tensor is at most --max-bytes, all of them --max-fold-bytes)\n") &&
			              strstr(text, "ConstantOfShape        1        0       -1\n"), "%s", text);
		else
			ck_assert_msg(!strstr(text, "constants grew") && strstr(text, "ConstantOfShape        1        1"), "%s", text);
		free(text);
	}
	rm_rf(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_cli_report_and_explain)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *tmp = temp_dir();
	char cmd[2048], path[600];
	snprintf(cmd, sizeof cmd, "%s optimize examples/tiny_cnn.onnx -o %s/o.onnx --report %s/r.json --dot %s/g.dot 2>/dev/null",
	         graft, tmp, tmp, tmp);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s explain %s/r.json bn1 > %s/why.txt", graft, tmp, tmp);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(path, sizeof path, "%s/why.txt", tmp);
	size_t len;
	char *text = (char *)read_file(path, &len);
	ck_assert_ptr_nonnull(text);
	text = realloc(text, len + 1);
	text[len] = 0;
	ck_assert_msg(strstr(text, "conv_bn (rules/basic/const.rules:") && strstr(text, ": removed it\n") &&
	              strstr(text, "    matched: bn1 conv1\n"), "%s", text);
	/* the created Conv, found by the name it carries in the saved model */
	char *conv = strstr(text, "created: conv_bn/Conv_");
	ck_assert_ptr_nonnull(conv);
	char name[128];
	sscanf(conv + 9, "%127s", name);
	free(text);
	snprintf(cmd, sizeof cmd, "%s explain %s/r.json %s > %s/why2.txt", graft, tmp, name, tmp);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(path, sizeof path, "%s/why2.txt", tmp);
	text = (char *)read_file(path, &len);
	text = realloc(text, len + 1);
	text[len] = 0;
	ck_assert_msg(strstr(text, "created it\n") && strstr(text, "    it stands for: bn1 conv1\n"), "%s", text);
	free(text);
	IrModel *m = ir_load_file(strcat(strcpy(path, tmp), "/o.onnx"), NULL, &(Diag){0});
	ck_assert_ptr_nonnull(m);
	bool found = false;
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		found |= strcmp(ir_node(m, n)->name, name) == 0;
	ck_assert(found);
	ir_model_free(m);
	/* --dot highlights it */
	snprintf(path, sizeof path, "%s/g.dot", tmp);
	text = (char *)read_file(path, &len);
	text = realloc(text, len + 1);
	text[len] = 0;
	ck_assert(strstr(text, "digraph graft {") && strstr(text, "fillcolor=\"#ffd27f\""));
	free(text);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

#ifdef GRAFT_DEBUG
/* ---- debug builds: pure matching and the validator after every rewrite ----------- */

static const RwRule bad_rules[] = {
	{.name = "sneaky", .level = RW_LEVEL_BASIC, .file = "tests/check_rewrite.c", .line = 1, .doc = "a matcher that changes the graph",
	 .priority = 0, .opset_min = 1, .opset_max = 0, .vendor = false, .root_domain = "", .root_op = "Relu"},
	{.name = "cyclic", .level = RW_LEVEL_BASIC, .file = "tests/check_rewrite.c", .line = 2, .doc = "Relu(x) => y where y = Neg(y)",
	 .priority = 0, .opset_min = 1, .opset_max = 0, .vendor = false, .root_domain = "", .root_op = "Relu"},
};

/* Breaks the rule that a failed match changes nothing: it sets an
 * attribute on the Relu it looks at, then says it did not match. */
static bool sneaky_match(Rewriter *rw, NodeId n)
{
	IrModel *m = rw_model(rw);
	if (ir_node(m, n)->kind == OP_Relu)
		ir_attr_set_int(m, n, "sneaky", 1);
	return false;
}

/* A rewrite the builder API allows but that leaves a cycle: the new Neg
 * reads the Relu's output, and then replaces it, so it reads itself. */
static bool cyclic_match(Rewriter *rw, NodeId n)
{
	if (ir_node(rw_model(rw), n)->kind != OP_Relu)
		return false;
	rw_begin(rw, 1, n, &n, 1);
	ValueId y = rw_output(rw, n, 0);
	NodeId neg = rw_node(rw, "Neg", &y, 1, 1);
	rw_replace(rw, 0, rw_output(rw, neg, 0));
	return rw_commit(rw);
}

static const char *relu_chain =
	"<ir_version: 8, opset_import: [\"\" : 13]>\n"
	"g (float[4] x) => (float[4] y) {\n"
	"  [r] a = Relu (x)\n"
	"  y = Abs (a)\n"
	"}\n";

/* Run a misbehaving rule set on relu_chain: the run must stop with
 * RW_ERROR; its message stays in *d. */
static void run_bad(RwMatchFn match, int nrules, RwResult *r, Diag *d)
{
	const RwRuleSet bad = {"bad", GRAFT_BUILDER_API_VERSION, bad_rules, nrules, match, NULL, NULL, NULL, NULL};
	const RwRuleSet *bad_sets[] = {&bad};
	IrModel *m = parse(relu_chain);
	RwOptions o = {.no_fold = true};
	diag_init(d, NULL);
	ck_assert(!rw_run(m, bad_sets, 1, &o, r, d));
	ck_assert_int_eq(r->stop, RW_ERROR);
	ir_model_free(m);
}

START_TEST(test_debug_impure_match)
{
	Diag d;
	RwResult r;
	run_bad(sneaky_match, 1, &r, &d);
	ck_assert_str_eq(d.first, "t.onnx: rule set 'bad': a failed match at node 'r' changed the graph");
	rw_result_free(&r);
}
END_TEST

START_TEST(test_debug_validate_after_rewrite)
{
	Diag d;
	RwResult r;
	run_bad(cyclic_match, 2, &r, &d);
	ck_assert_msg(strncmp(d.first, "t.onnx: rule 'cyclic' left an invalid graph: graph 'g': cycle through node 'cyclic/Neg_", 87) == 0,
	              "%s", d.first);
	ck_assert_int_eq(r.rewrites, 1); /* stopped at once */
	rw_result_free(&r);
}
END_TEST
#endif

/* The audit's SHA-256 against FIPS 180-4's vectors, fed in uneven pieces so
 * every path through sha256_update (partial block, whole blocks) runs. */
START_TEST(test_sha256_vectors)
{
	static const struct { const char *in; size_t repeat; const char *hex; } cases[] = {
		{"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t n = strlen(cases[c].in) * cases[c].repeat;
		char *msg = malloc(n + 1);
		for (size_t i = 0; i < cases[c].repeat; i++)
			memcpy(msg + i * strlen(cases[c].in), cases[c].in, strlen(cases[c].in));
		Sha256 h;
		sha256_init(&h);
		for (size_t off = 0, step = 1; off < n; off += step, step = step * 3 % 997 + 1)
			sha256_update(&h, msg + off, off + step > n ? n - off : step);
		uint8_t md[32];
		sha256_final(&h, md);
		char hex[65];
		for (int i = 0; i < 32; i++)
			sprintf(hex + 2 * i, "%02x", md[i]);
		ck_assert_str_eq(hex, cases[c].hex);
		free(msg);
	}
}
END_TEST

/* Initializers no node reads go with DCE (catalogue A10, onnxoptimizer's
 * eliminate_unused_initializer); one a body reads from the outer scope, and
 * an overridable one (a graph input), stay. */
START_TEST(test_unused_initializers)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (bool c, float[2] x, float[2] d) => (float[2] y, float[2] z) <float[2] u = {1, 2}, float[2] w = {3, 4},\n"
	                   "   float[2] k = {5, 6}, float[2] d = {7, 8}> {\n"
	                   "  y = Add (x, w)\n"
	                   "  z = If (c) <then_branch: graph = t () => (float[2] a) { a = Abs (k) },\n"
	                   "              else_branch: graph = e () => (float[2] b) { b = Abs (x) }>\n"
	                   "}\n");
	RwOptions o = {.no_fold = true};
	RwResult r = run(m, &o, true);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_uint_eq(g->ninits, 3);
	ck_assert(!ir_lookup(m, IR_MAIN_GRAPH, "u"));
	ck_assert(ir_lookup(m, IR_MAIN_GRAPH, "w") && ir_lookup(m, IR_MAIN_GRAPH, "k") && ir_lookup(m, IR_MAIN_GRAPH, "d"));
	ck_assert_uint_eq(g->ninputs, 3);
	ck_assert_uint_eq(r.rewrites, 1); /* the one dce */
	rw_result_free(&r);
	ir_model_free(m);
	/* --no-dce keeps it */
	m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	          "g (float[2] x) => (float[2] y) <float[2] u = {1, 2}> { y = Abs (x) }\n");
	o = (RwOptions){.no_fold = true, .no_dce = true};
	r = run(m, &o, true);
	ck_assert_uint_eq(ir_graph(m, IR_MAIN_GRAPH)->ninits, 1);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

/* CSE of two equal nodes where one writes a graph output: that one stays,
 * whichever the worklist meets first (OnnxSlim's
 * duplicate_node_with_graph_output_keeps_output_node); both graph outputs:
 * both stay. */
START_TEST(test_cse_graph_output)
{
	const char *texts[] = {
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[2] x) => (float[4] y, float[4] z) {\n"
		"  y = Concat <axis = 0> (x, x)\n  c = Concat <axis = 0> (x, x)\n  z = Abs (c)\n}\n",
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[2] x) => (float[4] y, float[4] z) {\n"
		"  c = Concat <axis = 0> (x, x)\n  z = Abs (c)\n  y = Concat <axis = 0> (x, x)\n}\n",
	};
	for (int t = 0; t < 2; t++) {
		IrModel *m = parse(texts[t]);
		RwOptions o = {.no_fold = true};
		RwResult r = run(m, &o, true);
		ck_assert_uint_eq(nodes_of(m, "Concat"), 1);
		IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
		NodeId abs = ir_value(m, g->outputs[1])->producer;
		ck_assert_str_eq(ir_value(m, ir_node(m, abs)->inputs[0])->name, "y");
		ck_assert_str_eq(ir_node(m, ir_value(m, g->outputs[0])->producer)->op_type, "Concat");
		rw_result_free(&r);
		ir_model_free(m);
	}
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[2] x) => (float[4] y, float[4] z) {\n"
	                   "  y = Concat <axis = 0> (x, x)\n  z = Concat <axis = 0> (x, x)\n}\n");
	RwOptions o = {.no_fold = true};
	RwResult r = run(m, &o, true);
	ck_assert_uint_eq(nodes_of(m, "Concat"), 2);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

/* Concat's inputs known empty along its axis go (OnnxSlim's
 * concat_empty_input_elimination), also those spliced in from an inner
 * Concat; a Concat of nothing but empty inputs keeps them. */
START_TEST(test_concat_empty_inputs)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[2,3] x, float[2,0] e, float[2,4] w) => (float[2,7] y, float[2,0] z) {\n"
	                   "  i = Concat <axis = 1> (e, w)\n"
	                   "  y = Concat <axis = -1> (e, x, e, i)\n"
	                   "  z = Concat <axis = 1> (e, e)\n"
	                   "}\n");
	RwOptions o = {.no_fold = true};
	RwResult r = run(m, &o, true);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	IrNode *y = ir_node(m, ir_value(m, g->outputs[0])->producer);
	ck_assert_str_eq(y->op_type, "Concat");
	ck_assert_uint_eq(y->ninputs, 2);
	ck_assert_str_eq(ir_value(m, y->inputs[0])->name, "x");
	ck_assert_str_eq(ir_value(m, y->inputs[1])->name, "w");
	ck_assert_uint_eq(ir_node(m, ir_value(m, g->outputs[1])->producer)->ninputs, 2);
	ck_assert_uint_eq(nodes_of(m, NULL), 2);
	rw_result_free(&r);
	ir_model_free(m);
}
END_TEST

/* The fold budget counts what folding added to the live model: a folded
 * constant that a rule later leaves unread (mul_one drops Mul(x, ones)) no
 * longer counts, so the second 4000-byte fold fits a 6000-byte budget. */
START_TEST(test_cli_fold_budget_recount)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *tmp = temp_dir(), cmd[2048], path[600], *out;
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[1000] x) => (float[1000] y) <int64[1] s = {1000}> {\n"
	                   "  c1 = ConstantOfShape <value = float[1] {1}> (s)\n  m1 = Mul (x, c1)\n"
	                   "  c2 = ConstantOfShape <value = float[1] {2}> (s)\n  y = Add (m1, c2)\n}\n");
	snprintf(path, sizeof path, "%s/in.onnx", tmp);
	Diag d;
	diag_init(&d, NULL);
	ck_assert_msg(ir_save_file(m, path, &(SaveOptions){0}, &d), "%s", d.first);
	ir_model_free(m);
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s/o.onnx --max-fold-bytes 6000 2>&1", graft, path, tmp);
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	ck_assert_msg(!strstr(out, "not done") && strstr(out, "ConstantOfShape        2        0       -2\n") &&
	              strstr(out, "4 -> 1 nodes"), "%s", out);
	free(out);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

/* The audit's records for the HTML report: each named node's op and values,
 * the values' types, the fired rules' text, --why's answers; and --html's page. */
START_TEST(test_cli_report_html_fields)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *tmp = temp_dir();
	char cmd[2048], path[600];
	snprintf(cmd, sizeof cmd, "%s optimize examples/tiny_cnn.onnx -o %s/o.onnx --report %s/r.json --html %s/r.html "
	         "--why conv_bn >/dev/null 2>&1", graft, tmp, tmp, tmp);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(path, sizeof path, "%s/r.json", tmp);
	json_t *r = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(r);
	json_t *conv = json_object_get(json_object_get(r, "nodes"), "conv1");
	ck_assert_str_eq(json_string_value(json_object_get(conv, "op")), "Conv");
	char *ins = json_dumps(json_object_get(conv, "inputs"), JSON_COMPACT);
	ck_assert_str_eq(ins, "[\"input\",\"conv1.w\",\"conv1.b\"]");
	free(ins);
	json_t *values = json_object_get(r, "values");
	ck_assert_str_eq(json_string_value(json_object_get(values, "input")), "float[1,3,16,16]");
	ck_assert_str_eq(json_string_value(json_object_get(values, "conv1.w")), "const float[8,3,3,3]");
	json_t *rule = json_object_get(json_object_get(r, "rules"), "conv_bn");
	ck_assert_str_eq(json_string_value(json_object_get(rule, "level")), "basic");
	const char *text = json_string_value(json_object_get(rule, "text"));
	ck_assert_msg(text && strncmp(text, "rule conv_bn [", 14) == 0 && strstr(text, "=> Conv[..c](x,\n") &&
	              strcmp(text + strlen(text) - 2, ";\n") == 0, "%s", text ? text : "(no text)");
	json_t *why = json_object_get(r, "why");
	ck_assert_str_eq(json_string_value(json_object_get(why, "rule")), "conv_bn");
	ck_assert_str_eq(json_string_value(json_object_get(why, "root_op")), "BatchNormalization");
	ck_assert_int_eq(json_array_size(json_object_get(why, "nodes")), 0);
	size_t nfirings = json_array_size(json_object_get(r, "firings"));
	json_decref(r);
	/* the page: a row per firing, the graph drawn, nothing from the network */
	snprintf(path, sizeof path, "%s/r.html", tmp);
	size_t len;
	char *page = (char *)read_file(path, &len);
	ck_assert_ptr_nonnull(page);
	page = realloc(page, len + 1);
	page[len] = 0;
	size_t rows = 0;
	for (char *p = page; (p = strstr(p, "<tr class=\"firing\" id=\"f")); p++)
		rows++;
	ck_assert_uint_eq(rows, nfirings);
	ck_assert(strstr(page, "<tr class=\"firing\" id=\"f0\" data-rule=\"conv_bn\" data-level=\"basic\">"));
	ck_assert(strstr(page, "<div id=\"graphsvg\"><svg"));
	ck_assert(!strstr(page, "src=\"http") && !strstr(page, "href=\"http"));
	free(page);
	/* graft explain --html renders the same page from the audit */
	snprintf(cmd, sizeof cmd, "%s explain %s/r.json --html %s/e.html && cmp -s %s/r.html %s/e.html", graft, tmp, tmp,
	         tmp, tmp);
	ck_assert_int_eq(system(cmd), 0);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

/* A loop-carried value whose shape grows (x = Concat(x, x)) in a body that
 * leaves its inputs untyped: the body once got the initial value's shape,
 * and Shape(x) in it folded to [2] for every iteration; the scan output of
 * the shapes is [2], [4], [8]. */
START_TEST(test_loop_carried_shape_grows)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *tmp = temp_dir(), *out = NULL;
	char cmd[2048], path[600];
	static const char text[] =
		"<ir_version: 8, opset_import: [\"\" : 13]>\n"
		"g (float[2] x0) => (shs) {\n"
		"  m = Constant <value = int64 {3}> ()\n"
		"  xf, shs = Loop (m, , x0) <body = b (int64 i, bool c, x) => (co, y, sh) {\n"
		"    co = Identity (c)\n"
		"    y = Concat <axis = 0> (x, x)\n"
		"    sh = Shape (x)\n"
		"  }>\n"
		"}\n";
	snprintf(path, sizeof path, "%s/loop.onnxtxt", tmp);
	ck_assert(write_file(path, text, sizeof text - 1));
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s/o.onnx 2>&1 && %s run %s/o.onnx -o %s/res 2>&1", graft, path, tmp,
	         graft, tmp, tmp);
	ck_assert_msg(run_shell(cmd, &out) == 0, "%s", out);
	free(out);
	snprintf(path, sizeof path, "%s/res/output_0.pb", tmp);
	Diag d;
	diag_init(&d, NULL);
	EvValue *v = ev_load_pb(path, EV_TENSOR, NULL, &d);
	ck_assert_msg(v, "%s", d.first);
	ck_assert_int_eq(v->numel, 3);
	ck_assert_int_eq(ev_get_i(v, 0), 2);
	ck_assert_int_eq(ev_get_i(v, 1), 4);
	ck_assert_int_eq(ev_get_i(v, 2), 8);
	ev_unref(v);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

/* The progress line (issue 29): --progress on a pipe prints a line per
 * stage as it ends, before the summary; on a terminal (script(1) gives one)
 * a run under a second shows nothing, --progress draws the line in place
 * and erases it before the summary, --quiet after it silences it. */
START_TEST(test_cli_progress)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *tmp = temp_dir(), *out, *cmd;
	cmd = fmt("%s optimize examples/tiny_cnn.onnx -o %s/a.onnx --progress 2>&1 >/dev/null", graft, tmp);
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	const char *l = strstr(out, "graft: loading examples/tiny_cnn.onnx (");
	const char *r = l ? strstr(l, "\ngraft: rewriting, ") : NULL;
	char *want_save = fmt("\ngraft: saving %s/a.onnx: ", tmp);
	const char *sv = r ? strstr(r, want_save) : NULL;
	const char *sum = sv ? strstr(sv, " written, ") : NULL;
	ck_assert_msg(l == out && r && sv && sum && strstr(sum, "/s, ") && strstr(sum, " s\nop "), "%s", out);
	ck_assert_msg(!strchr(out, '\r'), "a carriage return on a pipe:\n%s", out);
	free(want_save);
	free(out);
	free(cmd);
	if (system("command -v script > /dev/null 2>&1") != 0)
		return;
	/* a terminal, a run well under a second: nothing */
	cmd = fmt("script -qec '%s optimize examples/tiny_cnn.onnx -o %s/b.onnx' /dev/null", graft, tmp);
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	ck_assert_msg(!strstr(out, "graft: ") && strstr(out, "op "), "%s", out);
	free(out);
	free(cmd);
	/* --progress on a terminal: drawn in place, erased before the summary */
	cmd = fmt("script -qec '%s optimize examples/tiny_cnn.onnx -o %s/c.onnx --progress' /dev/null", graft, tmp);
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	const char *drawn = strstr(out, "\rgraft: ");
	const char *erased = drawn ? strstr(drawn, "\r\033[Kop ") : NULL;
	ck_assert_msg(drawn && erased && !strstr(erased + 1, "graft: "), "%s", out);
	free(out);
	free(cmd);
	/* an error erases the line first: it stands on its own line */
	cmd = fmt("script -qec '%s optimize %s/missing.onnx -o %s/e.onnx --progress' /dev/null", graft, tmp, tmp);
	ck_assert_int_ne(run_shell(cmd, &out), 0);
	char *want_err = fmt("\r\033[K%s/missing.onnx: cannot open: No such file or directory", tmp);
	ck_assert_msg(strstr(out, want_err), "%s", out);
	free(want_err);
	free(out);
	free(cmd);
	/* --quiet, the last given, wins */
	cmd = fmt("script -qec '%s optimize examples/tiny_cnn.onnx -o %s/d.onnx --progress --quiet' /dev/null", graft, tmp);
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	ck_assert_msg(!strstr(out, "graft: ") && strstr(out, "op "), "%s", out);
	free(out);
	free(cmd);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

Suite *suite_rewrite(void)
{
	Suite *s = suite_create("rewrite");
	TCase *tc = tcase_create("engine");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fixpoint_and_interface);
	tcase_add_test(tc, test_sha256_vectors);
	tcase_add_test(tc, test_interface_refused);
	tcase_add_test(tc, test_max_rewrites);
	tcase_add_test(tc, test_disable_and_levels);
	tcase_add_test(tc, test_fuel);
	tcase_add_test(tc, test_cycle);
	tcase_add_test(tc, test_builtin_passes);
	tcase_add_test(tc, test_cse_constants);
	tcase_add_test(tc, test_audit_records);
	tcase_add_test(tc, test_audit_counts_only);
	tcase_add_test(tc, test_determinism_and_shuffle);
	tcase_add_test(tc, test_cli_report_and_explain);
	tcase_add_test(tc, test_cli_constant_growth);
	tcase_add_test(tc, test_library_rules_shuffle_corpus);
	tcase_add_test(tc, test_control_fixtures);
	tcase_add_test(tc, test_inline_if);
	tcase_add_test(tc, test_inline_if_nested_reads_branch_init);
	tcase_add_test(tc, test_conformance_interfaces);
	tcase_add_test(tc, test_unused_initializers);
	tcase_add_test(tc, test_cse_graph_output);
	tcase_add_test(tc, test_concat_empty_inputs);
	tcase_add_test(tc, test_cli_fold_budget_recount);
	tcase_add_test(tc, test_cli_report_html_fields);
	tcase_add_test(tc, test_loop_carried_shape_grows);
	tcase_add_test(tc, test_cli_progress);
#ifdef GRAFT_DEBUG
	tcase_add_test(tc, test_debug_impure_match);
	tcase_add_test(tc, test_debug_validate_after_rewrite);
#endif
	suite_add_tcase(s, tc);
	return s;
}
