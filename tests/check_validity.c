/* check_validity.c - graft writes only what ONNX runtimes accept, and reads
 * nothing it would misread (issue 24): the engine checks every node a rule
 * builds against its op's schema (compiled or interpreted rules, refused
 * with a --why reason); the loaders refuse attributes of the wrong type and
 * negative dims; graft run --inputs checks the tensors it is given; the CLI
 * range-checks numeric options, refuses unknown --enable/--disable names,
 * applies no rewrite at --max-rewrites 0, and writes the text syntax for
 * -o NAME.onnxtxt.  CLI tests run the binary (env GRAFT) in a temp_dir(). */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ir/arena.h"
#include "ir/ir.h"
#include "gen/onnx.pb-c.h"
#include "runtime/engine/rewrite.h"
#include "runtime/engine/rules.h"
#include "runtime/engine/rw_interp.h"
#include "testutil.h"
#include "ir/text.h"

/* ck_assert_str_eq against a formatted string */
#define assert_str_fmt(got, ...) do { \
	char *want_ = fmt(__VA_ARGS__); \
	ck_assert_str_eq(got, want_); \
	free(want_); \
} while (0)

/* The op types of the main graph, space-separated (static buffer). */
static const char *ops_of(IrModel *m)
{
	static char buf[512];
	buf[0] = 0;
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n))
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? " " : "", ir_node(m, n)->op_type);
	return buf;
}

/* ---- the engine: every node a rule builds fits its schema -------------------------------- */

/* Run the rules of `rules` (interpreted) on the model `text`, with folding
 * off; the ops after must be want_ops.  With why, the answer at the first
 * root must be (kind, detail). */
static void rule_case(const char *rules, const char *text, const char *want_ops, const char *why, RwWhyKind kind,
                      const char *detail)
{
	Diag d;
	diag_init(&d, stderr);
	RwRuleSet *set = rw_rules_load_text("mine.rules", rules, (uint32_t)strlen(rules), "mine", &d);
	ck_assert_msg(set, "%s", d.first);
	IrModel *m = parse_text_model(text);
	const RwRuleSet *sets[] = {set};
	RwOptions o = {.no_fold = true, .why_rule = why};
	RwResult r;
	ck_assert_msg(rw_run(m, sets, 1, &o, &r, &d), "%s", d.first);
	ck_assert_msg(!strcmp(ops_of(m), want_ops), "after: '%s', want '%s'", ops_of(m), want_ops);
	ck_assert_msg(ir_validate(m, &d), "%s", d.first);
	if (why) {
		ck_assert_int_ge(r.nwhy, 1);
		ck_assert_msg(r.why[0].kind == kind && !strcmp(r.why[0].detail, detail), "why: %s: %s\nwant %s: %s",
		              rw_why_kind_name(r.why[0].kind), r.why[0].detail, rw_why_kind_name(kind), detail);
	}
	rw_result_free(&r);
	ir_model_free(m);
	rw_rules_free(set);
}

static const char *relu_model = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                                "g (%s[2,4] x) => (%s[2,4] y) {\n  y = Relu (x)\n}\n";

START_TEST(test_engine_type_constraints)
{
	const char *leaky = "level basic;\nrule leaky \"Relu to LeakyRelu\":\n    Relu(x) => LeakyRelu[alpha = 0.0](x);\n";
	/* int32: LeakyRelu does not take it, the rewrite is refused */
	char *t = fmt(relu_model, "int32", "int32");
	rule_case(leaky, t, "Relu", "leaky", RW_WHY_SCHEMA,
	          "the result's LeakyRelu: input 0 ('x') is int32, which LeakyRelu-16 does not take as T");
	free(t);
	/* float: it fires */
	t = fmt(relu_model, "float", "float");
	rule_case(leaky, t, "LeakyRelu", NULL, 0, NULL);
	free(t);
	/* one type per type parameter: Add of float and int32 */
	const char *add = "level basic;\nrule mix \"Relu to an Add of a Cast\":\n"
	                  "    Relu(x) => Add(x, Cast[to = 6](x));\n";
	t = fmt(relu_model, "float", "float");
	rule_case(add, t, "Relu", "mix", RW_WHY_SCHEMA,
	          "the result's Add: input 1 ('Cast__3') is int32 but input 0 is float, and Add-14 takes one type as T");
	free(t);
}
END_TEST

START_TEST(test_engine_attribute_ranges)
{
	const char *flat = "level basic;\nrule fl \"Relu to Flatten\":\n    Relu(x) => Flatten[axis = %s](x);\n";
	char *t = fmt(relu_model, "float", "float");
	char *r = fmt(flat, "99999999999999");
	rule_case(r, t, "Relu", "fl", RW_WHY_SCHEMA,
	          "the result's Flatten: attribute 'axis' is 99999999999999, out of the range [-2, 2] for an input of rank 2");
	free(r);
	/* in range, it fires */
	r = fmt(flat, "1");
	rule_case(r, t, "Flatten", NULL, 0, NULL);
	free(r);
	/* Softmax's may not */
	rule_case("level basic;\nrule sm \"Relu to Softmax\":\n    Relu(x) => Softmax[axis = 2](x);\n", t, "Relu", "sm",
	          RW_WHY_SCHEMA, "the result's Softmax: attribute 'axis' is 2, out of the range [-2, 1] for an input of rank 2");
	/* Cast's to: a dtype that exists */
	rule_case("level basic;\nrule c \"Relu to a Cast\":\n    Relu(x) => Cast[to = 99](x);\n", t, "Relu", "c",
	          RW_WHY_SCHEMA, "the result's Cast: attribute 'to' is 99, which is not a type Cast-13 casts to");
	/* a perm that is no permutation */
	rule_case("level basic;\nrule p \"Relu to Transpose\":\n    Relu(x) => Transpose[perm = [1, 1]](x);\n", t, "Relu", "p",
	          RW_WHY_SCHEMA, "the result's Transpose: attribute 'perm' names axis 1 twice");
	free(t);
}
END_TEST

/* A compiled library rule whose guard lets a mixed-type result through:
 * ORT's LayerNormalization takes a float16 scale on float data (its V),
 * SkipLayerNormalization does not (one T).  Refused; float32 g fires. */
START_TEST(test_engine_compiled_rule_refused)
{
	const char *text = "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n"
	                   "g (float[2,3,8] x, float[2,3,8] s, %s[8] w) => (float[2,3,8] y) {\n"
	                   "  a = Add (x, s)\n"
	                   "  y = com.microsoft.LayerNormalization <axis = -1, epsilon = 0.001, stash_type = 1> (a, w)\n}\n";
	const RwRuleSet *sets[] = {&graft_rules_basic, &graft_rules_extended};
	for (int k = 0; k < 2; k++) {
		char *t = fmt(text, k ? "float" : "float16");
		IrModel *m = parse_text_model(t);
		free(t);
		RwOptions o = {.allow_vendor_ops = true, .why_rule = "skip_layer_norm_ort"};
		RwResult r;
		Diag d;
		diag_init(&d, stderr);
		ck_assert_msg(rw_run(m, sets, 2, &o, &r, &d), "%s", d.first);
		if (k == 0) {
			ck_assert_str_eq(ops_of(m), "Add LayerNormalization");
			ck_assert_int_eq(r.nwhy, 1);
			ck_assert_int_eq(r.why[0].kind, RW_WHY_SCHEMA);
			ck_assert_str_eq(r.why[0].detail, "the result's com.microsoft.SkipLayerNormalization: input 2 ('w') is "
			                                  "float16 but input 0 is float, and SkipLayerNormalization-1 takes one "
			                                  "type as T");
		} else {
			ck_assert_str_eq(ops_of(m), "SkipLayerNormalization");
		}
		rw_result_free(&r);
		ir_model_free(m);
	}
}
END_TEST

/* ir_node_schema_error on nodes as they are loaded */
START_TEST(test_node_schema_error)
{
	char buf[300];
	/* Gemm without C: fine from opset 11, not before */
	const char *gemm = "<ir_version: 8, opset_import: [\"\" : %d]>\n"
	                   "g (float[2,3] a, float[3,4] b) => (float[2,4] y) {\n  y = Gemm (a, b)\n}\n";
	for (int opset = 9; opset <= 11; opset += 2) {
		char *t = fmt(gemm, opset);
		IrModel *m = parse_text_model(t);
		const char *e = ir_node_schema_error(m, ir_first(m, IR_MAIN_GRAPH), buf, sizeof buf);
		if (opset == 9)
			ck_assert_str_eq(e ? e : "(fits)", "it has 2 inputs; Gemm-9 takes 3 to 3");
		else
			ck_assert_msg(!e, "%s", e);
		ir_model_free(m);
		free(t);
	}
	/* a Transpose whose perm repeats an axis, and an op of a later opset */
	IrModel *m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                              "g (float[2,3] x) => (float[3,2] y, float[2,3] z) {\n"
	                              "  y = Transpose <perm = [1, 1]> (x)\n  z = Gelu (x)\n}\n");
	NodeId n = ir_first(m, IR_MAIN_GRAPH);
	ck_assert_str_eq(ir_node_schema_error(m, n, buf, sizeof buf), "attribute 'perm' names axis 1 twice");
	ck_assert_str_eq(ir_node_schema_error(m, ir_next(m, n), buf, sizeof buf), "Gelu is not an op of opset 13");
	ir_model_free(m);
	/* Flatten's axis may be the rank itself, Softmax's may not */
	m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                     "g (float[2,3] x) => (float[6,1] y, float[2,3] z, float[6,1] w) {\n"
	                     "  y = Flatten <axis = 2> (x)\n  z = Softmax <axis = 2> (x)\n  w = Flatten <axis = -3> (x)\n}\n");
	n = ir_first(m, IR_MAIN_GRAPH);
	ck_assert_ptr_null(ir_node_schema_error(m, n, buf, sizeof buf));
	ck_assert_str_eq(ir_node_schema_error(m, ir_next(m, n), buf, sizeof buf),
	                 "attribute 'axis' is 2, out of the range [-2, 1] for an input of rank 2");
	ck_assert_str_eq(ir_node_schema_error(m, ir_next(m, ir_next(m, n)), buf, sizeof buf),
	                 "attribute 'axis' is -3, out of the range [-2, 2] for an input of rank 2");
	ir_model_free(m);
}
END_TEST

/* --max-rewrites 0 (limit_rewrites) applies nothing; 0 without it is no limit */
START_TEST(test_max_rewrites_zero)
{
	const char *text = "<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[2,3] x) => (float[2,3] y) {\n  a = Identity (x)\n  b = Identity (a)\n  y = Relu (b)\n}\n";
	const RwRuleSet *sets[] = {&graft_rules_basic};
	for (int limit = 0; limit < 2; limit++) {
		IrModel *m = parse_text_model(text);
		RwOptions o = {.max_rewrites = 0, .limit_rewrites = limit};
		RwResult r;
		Diag d;
		diag_init(&d, stderr);
		ck_assert(rw_run(m, sets, 1, &o, &r, &d));
		ck_assert_int_eq(r.stop, limit ? RW_MAX_REWRITES : RW_FIXPOINT);
		ck_assert_int_eq(r.rewrites, limit ? 0 : 2);
		ck_assert_str_eq(ops_of(m), limit ? "Identity Identity Relu" : "Relu");
		rw_result_free(&r);
		ir_model_free(m);
	}
}
END_TEST

/* ---- loading: attribute types, negative dims ---------------------------------------------- */

START_TEST(test_load_attribute_type)
{
	char *tmp = temp_dir();
	char *txt = fmt("%s/t.onnxtxt", tmp), *bin = fmt("%s/t.onnx", tmp);
	const char *text = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                   "g (float[2,4] x) => (float[2,4] y) {\n  [n] y = Softmax <axis = %s> (x)\n}\n";
	/* the text syntax */
	char *bad = fmt(text, "\"abc\"");
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_parse_model(bad, strlen(bad), txt, &d);
	ck_assert_ptr_null(m);
	assert_str_fmt(d.first, "%s: node 'n' (Softmax): attribute 'axis' must be an int, not a string", txt);
	/* binary: a valid model saved, its attribute made a string in the IR, saved again */
	char *good = fmt(text, "1");
	m = parse_text_model(good);
	ir_attr_set_string(m, ir_first(m, IR_MAIN_GRAPH), "axis", "abc", 3);
	diag_init(&d, stderr);
	ck_assert(ir_save_file(m, bin, &(SaveOptions){0}, &d));
	ir_model_free(m);
	assert_str_fmt(load_error(bin), "%s: node 'n' (Softmax): attribute 'axis' must be an int, not a string", bin);
	/* a float where an int is due, and ints where a float is due */
	char *f = fmt(text, "1.5");
	diag_init(&d, NULL);
	ck_assert_ptr_null(ir_parse_model(f, strlen(f), "t.onnxtxt", &d));
	ck_assert_str_eq(d.first, "t.onnxtxt: node 'n' (Softmax): attribute 'axis' must be an int, not a float");
	const char *lr = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                 "g (float[2,4] x) => (float[2,4] y) {\n  y = LeakyRelu <alpha = [1, 2]> (x)\n}\n";
	diag_init(&d, NULL);
	ck_assert_ptr_null(ir_parse_model(lr, strlen(lr), "t.onnxtxt", &d));
	ck_assert_str_eq(d.first, "t.onnxtxt: node 'LeakyRelu#0' (LeakyRelu): attribute 'alpha' must be a float, not ints");
	/* the right type loads */
	m = parse_text_model(good);
	ir_model_free(m);
	free(bad);
	free(good);
	free(f);
	free(txt);
	free(bin);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

/* A binary model whose graph input x is declared [dim0, 4]. */
static void save_with_dim(const char *path, int64_t dim0)
{
	IrModel *m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                              "g (float[2,4] x) => (float[2,4] y) {\n  y = Relu (x)\n}\n");
	Arena *a = arena_new();
	Diag d;
	diag_init(&d, stderr);
	Onnx__ModelProto *mp = ir_emit(m, a, &d);
	ck_assert_ptr_nonnull(mp);
	Onnx__TensorShapeProto__Dimension *dim = mp->graph->input[0]->type->tensor_type->shape->dim[0];
	dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
	dim->dim_value = dim0;
	size_t len = onnx__model_proto__get_packed_size(mp);
	uint8_t *buf = malloc(len);
	onnx__model_proto__pack(mp, buf);
	ck_assert(write_file(path, buf, len));
	free(buf);
	arena_free(a);
	ir_model_free(m);
}

START_TEST(test_load_negative_dim)
{
	char *tmp = temp_dir();
	char *path = fmt("%s/neg.onnx", tmp);
	save_with_dim(path, -5);
	assert_str_fmt(load_error(path), "%s: graph input 'x': dimension 0 is -5; a dimension cannot be negative", path);
	save_with_dim(path, 3);
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_load_file(path, NULL, &d);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(ir_value(m, ir_graph(m, IR_MAIN_GRAPH)->inputs[0])->shape.dims[0].size, 3);
	ir_model_free(m);
	free(path);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

/* ---- the CLI ------------------------------------------------------------------------- */


static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void write_text(const char *path, const char *text)
{
	ck_assert(write_file(path, text, strlen(text)));
}

/* The file `name` in folder dir holds text. */
static void write_in(const char *dir, const char *name, const char *text)
{
	char *p = fmt("%s/%s", dir, name);
	write_text(p, text);
	free(p);
}

/* A temp folder holding f.onnxtxt (float[2,4] x -> Relu -> y) and i.onnxtxt
 * (the same on int32), or NULL without GRAFT. */
static char *cli_setup(const char **graft)
{
	*graft = cli_graft();
	if (!*graft)
		return NULL;
	char *tmp = temp_dir();
	char *p = fmt("%s/f.onnxtxt", tmp), *t = fmt(relu_model, "float", "float");
	write_text(p, t);
	free(p);
	free(t);
	p = fmt("%s/i.onnxtxt", tmp);
	t = fmt(relu_model, "int32", "int32");
	write_text(p, t);
	free(p);
	free(t);
	return tmp;
}

/* Runs graft with args in tmp; the exit status must be want_rc and the
 * output must begin with want_out (NULL: not looked at). */
static void expect(const char *graft, const char *tmp, const char *args, int want_rc, const char *want_out)
{
	char *cmd = fmt("cd %s && %s %s", tmp, graft, args), *out;
	int rc = run_shell(cmd, &out);
	ck_assert_msg(rc == want_rc, "%s: exit %d, want %d\n%s", args, rc, want_rc, out);
	if (want_out)
		ck_assert_msg(strncmp(out, want_out, strlen(want_out)) == 0, "%s:\n%s\nwant:\n%s", args, out, want_out);
	free(cmd);
	free(out);
}

START_TEST(test_cli_schema_refusal)
{
	const char *graft;
	char *tmp = cli_setup(&graft);
	if (!tmp)
		return;
	char *rules = fmt("%s/mine.rules", tmp);
	write_text(rules, "level basic;\nrule leaky \"Relu to LeakyRelu\":\n    Relu(x) => LeakyRelu[alpha = 0.0](x);\n");
	expect(graft, tmp, "optimize i.onnxtxt --rules mine.rules -o o.onnx --why leaky 2>/dev/null", 0,
	       "why leaky (mine.rules:2), which fired 0 times: 1 Relu node left\n"
	       "  Relu#0: result does not fit the schema: the result's LeakyRelu: input 0 ('x') is int32, which "
	       "LeakyRelu-16 does not take as T\n");
	char *o = fmt("%s/o.onnx", tmp);
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_load_file(o, NULL, &d);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(ops_of(m), "Relu");
	ir_model_free(m);
	/* on floats it fires */
	expect(graft, tmp, "optimize f.onnxtxt --rules mine.rules -o o.onnx", 0, NULL);
	m = ir_load_file(o, NULL, &d);
	ck_assert_str_eq(ops_of(m), "LeakyRelu");
	ir_model_free(m);
	free(o);
	free(rules);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_cli_numeric_arguments)
{
	const char *graft;
	char *tmp = cli_setup(&graft);
	if (!tmp)
		return;
	static const struct {
		const char *args, *msg;
	} cases[] = {
		{"convert f.onnxtxt --opset 4294967309 -o o.onnx", "graft: --opset: '4294967309' is not a number from 1 to 23\n"},
		{"convert f.onnxtxt --opset 13x -o o.onnx", "graft: --opset: '13x' is not a number from 1 to 23\n"},
		{"convert f.onnxtxt --opset ' 13' -o o.onnx", "graft: --opset: ' 13' is not a number from 1 to 23\n"},
		{"optimize f.onnxtxt --target-opset 99999999999999999999 -o o.onnx",
		 "graft: --target-opset: '99999999999999999999' is not a number from 1 to 23\n"},
		{"optimize f.onnxtxt --max-rewrites -1 -o o.onnx",
		 "graft: --max-rewrites: '-1' is not a number from 0 to 9223372036854775807\n"},
		{"optimize f.onnxtxt --fuel 0 -o o.onnx", "graft: --fuel: '0' is not a number from 1 to 9223372036854775807\n"},
		{"fold f.onnxtxt --max-bytes -1 -o o.onnx",
		 "graft: --max-bytes: '-1' is not a number from 0 to 9223372036854775807\n"},
		{"run f.onnxtxt --seed 4294967296 -o o", "graft: --seed: '4294967296' is not a number from 0 to 4294967295\n"},
		{"run f.onnxtxt --dim N=-3 -o o", "graft: --dim: '-3' is not a number from 0 to 9223372036854775807\n"},
		{"run f.onnxtxt --rtol nan -o o", "graft: --rtol: 'nan' is not a number from 0 to inf\n"},
		{"run f.onnxtxt --int-range 0:99999999999999999999 -o o",
		 "graft: --int-range: '99999999999999999999' is not a number from -9223372036854775808 to 9223372036854775807\n"},
		{"plan f.onnxtxt --input-shape x=2,4294967296x", "graft: --input-shape: '4294967296x' is not a number from 0 to "
		                                                 "9223372036854775807\n"},
		{"verify mine.rules --instances 0", "graft: --instances: '0' is not a number from 1 to 1000000\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		expect(graft, tmp, cases[i].args, 2, cases[i].msg);
		char *o = fmt("%s/o.onnx", tmp), *od = fmt("%s/o", tmp);
		ck_assert_msg(!exists(o) && !exists(od), "%s: wrote its output", cases[i].args);
		free(o);
		free(od);
	}
	/* in range, the same options work */
	expect(graft, tmp, "convert f.onnxtxt --opset 13 -o o.onnx", 0, NULL);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_cli_enable_disable_names)
{
	const char *graft;
	char *tmp = cli_setup(&graft);
	if (!tmp)
		return;
	char *o = fmt("%s/o.onnx", tmp);
	write_in(tmp, "mine.rules", "level basic;\nrule leaky \"Relu to LeakyRelu\":\n    Relu(x) => LeakyRelu[alpha = 0.0](x);\n");
	expect(graft, tmp, "optimize f.onnxtxt --disable foo -o o.onnx", 2,
	       "graft: --disable: no rule, rule file or level is named 'foo'\n");
	ck_assert(!exists(o));
	expect(graft, tmp, "optimize f.onnxtxt --enable identity --enable leaky -o o.onnx", 2,
	       "graft: --enable: no rule, rule file or level is named 'leaky'\n");
	ck_assert(!exists(o));
	/* a rule, a rule file, a level, a pass; an interpreted rule and its file */
	expect(graft, tmp, "optimize f.onnxtxt --disable identity --disable squeeze.rules --disable squeeze "
	                   "--disable rules/basic/const.rules --disable extended --disable inline-if -o o.onnx", 0, NULL);
	ck_assert(exists(o));
	expect(graft, tmp, "optimize f.onnxtxt --rules mine.rules --enable leaky -o o2.onnx", 0, NULL);
	expect(graft, tmp, "optimize f.onnxtxt --rules mine.rules --disable mine -o o3.onnx", 0, NULL);
	Diag d;
	diag_init(&d, stderr);
	char *o2 = fmt("%s/o2.onnx", tmp), *o3 = fmt("%s/o3.onnx", tmp);
	IrModel *m = ir_load_file(o2, NULL, &d);
	ck_assert_str_eq(ops_of(m), "LeakyRelu");
	ir_model_free(m);
	m = ir_load_file(o3, NULL, &d);
	ck_assert_str_eq(ops_of(m), "Relu");
	ir_model_free(m);
	free(o);
	free(o2);
	free(o3);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_cli_max_rewrites_zero)
{
	const char *graft;
	char *tmp = cli_setup(&graft);
	if (!tmp)
		return;
	write_in(tmp, "c.onnxtxt", "<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                                      "g (float[2,3] x) => (float[2,3] y) {\n  a = Identity (x)\n  b = Identity (a)\n"
	                                      "  y = Relu (b)\n}\n");
	char *out;
	char *cmd = fmt("cd %s && %s optimize c.onnxtxt --max-rewrites 0 -o o.onnx", tmp, graft);
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	ck_assert_msg(strstr(out, "\n0 rewrites in ") && strstr(out, "; 3 -> 3 nodes; stopped at --max-rewrites\n"), "%s", out);
	free(out);
	free(cmd);
	char *o = fmt("%s/o.onnx", tmp);
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_load_file(o, NULL, &d);
	ck_assert_str_eq(ops_of(m), "Identity Identity Relu");
	ir_model_free(m);
	/* 1: one */
	expect(graft, tmp, "optimize c.onnxtxt --max-rewrites 1 -o o.onnx", 0, NULL);
	m = ir_load_file(o, NULL, &d);
	ck_assert_str_eq(ops_of(m), "Identity Relu");
	ir_model_free(m);
	free(o);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

/* -o NAME.onnxtxt writes the text syntax, for every command that writes a model */
START_TEST(test_cli_text_output)
{
	const char *graft;
	char *tmp = cli_setup(&graft);
	if (!tmp)
		return;
	const char *cmds[] = {"optimize f.onnxtxt -o o.onnxtxt", "fold f.onnxtxt -o o.onnxtxt",
	                      "convert f.onnxtxt --opset 13 -o o.onnxtxt", "roundtrip f.onnxtxt -o o.onnxtxt"};
	char *o = fmt("%s/o.onnxtxt", tmp), *f = fmt("%s/f.onnxtxt", tmp);
	for (int i = 0; i < 4; i++) {
		expect(graft, tmp, cmds[i], 0, NULL);
		size_t len;
		char *text = (char *)read_file(o, &len);
		ck_assert_ptr_nonnull(text);
		text = realloc(text, len + 1);
		text[len] = 0;
		ck_assert_msg(text[0] == '<' && strstr(text, "y = Relu (x)\n"), "%s:\n%s", cmds[i], text);
		/* the mode a plain create gives, not mkstemp's 0600 */
		struct stat st;
		mode_t mask = umask(0);
		umask(mask);
		ck_assert(stat(o, &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask));
		Diag d;
		diag_init(&d, stderr);
		IrModel *a = ir_parse_model(text, len, "o.onnxtxt", &d);
		ck_assert_msg(a, "%s", d.first);
		char *want = fmt(relu_model, "float", "float");
		IrModel *b = parse_text_model(want);
		free(want);
		if (i == 2)
			ir_set_opset(b, "", 13);
		const char *diff = model_diff(a, b);
		ck_assert_msg(!diff, "%s: %s", cmds[i], diff);
		ir_model_free(a);
		ir_model_free(b);
		free(text);
		remove(o);
	}
	/* binary for any other name */
	expect(graft, tmp, "roundtrip f.onnxtxt -o o.onnx", 0, NULL);
	size_t len;
	char *ob = fmt("%s/o.onnx", tmp);
	uint8_t *bin = read_file(ob, &len);
	ck_assert(bin && len > 0 && bin[0] != '<');
	free(bin);
	free(ob);
	/* the input itself is refused, and left alone */
	size_t before_len;
	uint8_t *before = read_file(f, &before_len);
	expect(graft, tmp, "roundtrip f.onnxtxt -o ./f.onnxtxt", 2,
	       "./f.onnxtxt: refusing to overwrite the input model 'f.onnxtxt' (use --overwrite to allow it)\n");
	uint8_t *after = read_file(f, &len);
	ck_assert(len == before_len && memcmp(before, after, len) == 0);
	free(before);
	free(after);
	free(o);
	free(f);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

/* graft run --inputs: each tensor against the declared dtype and dims */
START_TEST(test_cli_run_inputs_checked)
{
	const char *graft;
	char *tmp = cli_setup(&graft);
	if (!tmp)
		return;
	write_in(tmp, "l.onnxtxt", "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                                      "g (int64[2,4] x) => (int64[2,4] y) {\n  y = Neg (x)\n}\n");
	write_in(tmp, "w.onnxtxt", "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                                      "g (float[3,4] x) => (float[3,4] y) {\n  y = Relu (x)\n}\n");
	write_in(tmp, "nx.onnxtxt", "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                                       "g (float[N,4] x) => (float[N,4] y) {\n  y = Relu (x)\n}\n");
	write_in(tmp, "ny.onnxtxt", "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                                       "g (float[N,4] y) => (float[N,4] z) {\n  z = Relu (y)\n}\n");
	write_in(tmp, "nxy.onnxtxt", "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                                        "g (float[N,4] x, float[N,4] y) => (float[N,4] z) {\n  z = Add (x, y)\n}\n");
	/* input files made by graft run -o */
	expect(graft, tmp, "run l.onnxtxt -o l >/dev/null", 0, NULL);
	expect(graft, tmp, "run w.onnxtxt -o w >/dev/null", 0, NULL);
	expect(graft, tmp, "run nx.onnxtxt --dim N=2 -o n2 >/dev/null", 0, NULL);
	expect(graft, tmp, "run ny.onnxtxt --dim N=3 -o n3 >/dev/null", 0, NULL);
	expect(graft, tmp, "run ny.onnxtxt --dim N=2 -o m2 >/dev/null", 0, NULL);
	expect(graft, tmp, "run f.onnxtxt --inputs l -o out", 1, "l/input_0.pb: input 'x' is int64, the model declares float\n");
	expect(graft, tmp, "run f.onnxtxt --inputs w -o out", 1,
	       "w/input_0.pb: input 'x' has shape [3,4], the model declares float[2,4]\n");
	char *outdir = fmt("%s/out", tmp);
	ck_assert(!exists(outdir));
	/* a symbolic dim: any size, but the same one in every input */
	char *cmd = fmt("cd %s && mkdir a b && cp n2/input_0.pb a/input_0.pb && cp n3/input_0.pb a/input_1.pb && "
	                "cp n2/input_0.pb b/input_0.pb && cp m2/input_0.pb b/input_1.pb", tmp), *out;
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	free(cmd);
	free(out);
	expect(graft, tmp, "run nxy.onnxtxt --inputs a -o out", 1, "a/input_1.pb: input 'y' has shape [3,4], but N is 2 in input 'x'\n");
	ck_assert(!exists(outdir));
	expect(graft, tmp, "run nxy.onnxtxt --dim N=3 --inputs b -o out", 1, "b/input_0.pb: input 'x' has shape [2,4], but --dim N=3\n");
	ck_assert(!exists(outdir));
	expect(graft, tmp, "run nxy.onnxtxt --inputs b -o out", 0, "z                        float[2,4] ");
	ck_assert(exists(outdir));
	free(outdir);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

Suite *suite_validity(void)
{
	Suite *s = suite_create("validity");
	TCase *tc = tcase_create("validity");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_engine_type_constraints);
	tcase_add_test(tc, test_engine_attribute_ranges);
	tcase_add_test(tc, test_engine_compiled_rule_refused);
	tcase_add_test(tc, test_node_schema_error);
	tcase_add_test(tc, test_max_rewrites_zero);
	tcase_add_test(tc, test_load_attribute_type);
	tcase_add_test(tc, test_load_negative_dim);
	tcase_add_test(tc, test_cli_schema_refusal);
	tcase_add_test(tc, test_cli_numeric_arguments);
	tcase_add_test(tc, test_cli_enable_disable_names);
	tcase_add_test(tc, test_cli_max_rewrites_zero);
	tcase_add_test(tc, test_cli_text_output);
	tcase_add_test(tc, test_cli_run_inputs_checked);
	suite_add_tcase(s, tc);
	return s;
}
