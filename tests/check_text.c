/* check_text.c - ONNX's text syntax (ir/text_*.c): parsing small graphs
 * (attributes of every type, bodies using outer values, initializers of many
 * dtypes, omitted inputs, other domains), exact error messages and
 * positions, print -> parse -> print fixpoints, exact float printing, and
 * every conformance model printed, parsed back and compared with the loaded
 * one (model_diff in testutil.c). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/ir.h"
#include "testutil.h"
#include "ir/text.h"

/* Expected counts, so an empty or partial glob cannot pass. */
#define CONFORMANCE_MODELS 1072
/* Models the syntax (or the IR) cannot carry through text, see skip_reason(). */
#define CONFORMANCE_SKIPPED 1

static IrModel *parse(const char *text)
{
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_parse_model(text, strlen(text), "t.onnxtxt", &d);
	ck_assert_msg(m != NULL, "parse failed: %s\n--- text:\n%s", d.first, text);
	return m;
}

/* The first error of parsing `text`, which must fail. */
static const char *parse_error(const char *text)
{
	static char msg[1024];
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_parse_model(text, strlen(text), "t.onnxtxt", &d);
	ck_assert_msg(m == NULL, "parsed, but should fail:\n%s", text);
	snprintf(msg, sizeof msg, "%s", d.first);
	return msg;
}

/* The model as text (caller frees), or NULL with *why set. */
static char *print(IrModel *m, char *why, size_t whysize)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	Diag d;
	diag_init(&d, NULL);
	bool ok = ir_print_model(m, f, &d);
	fclose(f);
	if (!ok) {
		if (why)
			snprintf(why, whysize, "%s", d.first);
		free(buf);
		return NULL;
	}
	return buf;
}

static char *must_print(IrModel *m)
{
	char why[1024] = "";
	char *s = print(m, why, sizeof why);
	ck_assert_msg(s != NULL, "print failed: %s", why);
	return s;
}

/* The nth node (0-based) of graph g. */
static NodeId nth_node(IrModel *m, GraphId g, unsigned k)
{
	NodeId n = ir_first(m, g);
	while (n && k--)
		n = ir_next(m, n);
	ck_assert_msg(n != 0, "graph %u has no node %u", g, k);
	return n;
}

static const char *in_name(IrModel *m, NodeId n, uint32_t i)
{
	ValueId v = ir_node(m, n)->inputs[i];
	return v ? ir_value(m, v)->name : "";
}

/* ---- parsing -------------------------------------------------------------- */

START_TEST(test_minimal_defaults)
{
	IrModel *m = parse("g (float[N,3] x) => (float[N,3] y) { y = Relu (x) }");
	ck_assert_int_eq(m->ir_version, 8);
	ck_assert_int_eq(m->nopsets, 1);
	ck_assert_str_eq(m->opsets[0].domain, "");
	ck_assert_int_eq(m->opsets[0].version, 17);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_str_eq(g->name, "g");
	ck_assert_int_eq(g->ninputs, 1);
	ck_assert_int_eq(g->noutputs, 1);
	ck_assert_int_eq(g->nnodes, 1);
	IrValue *x = ir_value(m, g->inputs[0]);
	ck_assert_str_eq(x->name, "x");
	ck_assert_int_eq(x->dtype, DT_FLOAT);
	ck_assert_int_eq(x->shape.rank, 2);
	ck_assert_str_eq(x->shape.dims[0].param, "N");
	ck_assert_int_eq(x->shape.dims[1].size, 3);
	NodeId n = g->first;
	ck_assert_str_eq(ir_node(m, n)->op_type, "Relu");
	ck_assert_int_eq(ir_node(m, n)->kind, OP_Relu);
	ck_assert_str_eq(in_name(m, n, 0), "x");
	ck_assert_uint_eq(ir_node(m, n)->outputs[0], g->outputs[0]);
	IrValue *y = ir_value(m, g->outputs[0]);
	ck_assert_int_eq(y->dtype, DT_FLOAT);
	ck_assert_int_eq(y->shape.rank, 2);
	Diag d;
	diag_init(&d, NULL);
	ck_assert_msg(ir_validate(m, &d), "%s", d.first);
	ir_model_free(m);
}
END_TEST

START_TEST(test_header_and_types)
{
	IrModel *m = parse(
		"<ir_version: 7, opset_import: [\"\" : 13, \"com.microsoft\" : 1],\n"
		" producer_name: \"t\", model_version: 2, metadata_props: [\"k\": \"v\"]>\n"
		"g (float s, float[] u, int64[?, 2] v, seq(float[]) q, w) => (s) { }");
	ck_assert_int_eq(m->ir_version, 7);
	ck_assert_int_eq(ir_opset(m, ""), 13);
	ck_assert_int_eq(ir_opset(m, "com.microsoft"), 1);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_int_eq(g->ninputs, 5);
	IrValue *s = ir_value(m, g->inputs[0]), *u = ir_value(m, g->inputs[1]);
	IrValue *v = ir_value(m, g->inputs[2]), *q = ir_value(m, g->inputs[3]), *w = ir_value(m, g->inputs[4]);
	ck_assert_int_eq(s->dtype, DT_FLOAT);
	ck_assert_int_eq(s->shape.rank, 0);      /* "float": a scalar */
	ck_assert_int_eq(u->shape.rank, -1);     /* "float[]": rank unknown */
	ck_assert_int_eq(v->dtype, DT_INT64);
	ck_assert_int_eq(v->shape.dims[0].size, -1);
	ck_assert_ptr_null(v->shape.dims[0].param);
	ck_assert_int_eq(v->shape.dims[1].size, 2);
	ck_assert_int_eq(q->dtype, DT_UNDEFINED);  /* seq: not modeled */
	ck_assert_int_eq(w->dtype, DT_UNDEFINED);
	ck_assert_uint_eq(g->outputs[0], g->inputs[0]);
	ir_model_free(m);
}
END_TEST

START_TEST(test_attributes_every_type)
{
	IrModel *m = parse(
		"g (float[2] x) => (y) {\n"
		"   y = Foo <i = 3, neg: int = -9223372036854775808, f = 0.5, fi: float = 2, finf = -inf,\n"
		"            fnan = nan, s = \"a\\\"b\\\\c\", ints: ints = [1, -2], empty: ints = [],\n"
		"            floats = [1.5, 2], strs = [\"p\", \"\"], t = float[2] {1.0, 2.5},\n"
		"            ts: tensors = [int64 {7}, int32[2] named {1, 2}],\n"
		"            body = b (float z) => (z) { },\n"
		"            bodies: graphs = [b1 () => (x) { }, b2 () => () { }]> (x)\n"
		"}");
	NodeId n = nth_node(m, IR_MAIN_GRAPH, 0);
	const IrAttr *a;
	ck_assert_int_eq(ir_node(m, n)->nattrs, 15);
	a = ir_attr(m, n, "i");
	ck_assert_int_eq(a->type, ATTR_INT);
	ck_assert_int_eq(a->i, 3);
	a = ir_attr(m, n, "neg");
	ck_assert_int_eq(a->type, ATTR_INT);
	ck_assert(a->i == INT64_MIN);
	a = ir_attr(m, n, "f");
	ck_assert_int_eq(a->type, ATTR_FLOAT);
	ck_assert(a->f == 0.5f);
	a = ir_attr(m, n, "fi");          /* annotated float, int literal */
	ck_assert_int_eq(a->type, ATTR_FLOAT);
	ck_assert(a->f == 2.0f);
	a = ir_attr(m, n, "finf");
	ck_assert(isinf(a->f) && a->f < 0);
	a = ir_attr(m, n, "fnan");
	ck_assert(isnan(a->f));
	a = ir_attr(m, n, "s");
	ck_assert_int_eq(a->type, ATTR_STRING);
	ck_assert_int_eq(a->s.len, 5);
	ck_assert(memcmp(a->s.data, "a\"b\\c", 5) == 0);
	a = ir_attr(m, n, "ints");
	ck_assert_int_eq(a->type, ATTR_INTS);
	ck_assert_int_eq(a->n, 2);
	ck_assert_int_eq(a->ints[1], -2);
	a = ir_attr(m, n, "empty");
	ck_assert_int_eq(a->type, ATTR_INTS);
	ck_assert_int_eq(a->n, 0);
	a = ir_attr(m, n, "floats");      /* [1.5, 2]: floats */
	ck_assert_int_eq(a->type, ATTR_FLOATS);
	ck_assert(a->floats[1] == 2.0f);
	a = ir_attr(m, n, "strs");
	ck_assert_int_eq(a->type, ATTR_STRINGS);
	ck_assert_int_eq(a->n, 2);
	ck_assert_int_eq(a->strings[1].len, 0);
	a = ir_attr(m, n, "t");
	ck_assert_int_eq(a->type, ATTR_TENSOR);
	IrTensor *t = ir_tensor(m, a->t);
	ck_assert_int_eq(t->dtype, DT_FLOAT);
	ck_assert_int_eq(t->rank, 1);
	ck_assert(((const float *)t->data)[1] == 2.5f);
	a = ir_attr(m, n, "ts");
	ck_assert_int_eq(a->type, ATTR_TENSORS);
	ck_assert_int_eq(a->n, 2);
	ck_assert_int_eq(ir_tensor(m, a->tensors[0])->rank, 0);
	ck_assert_int_eq(((const int64_t *)ir_tensor(m, a->tensors[0])->data)[0], 7);
	ck_assert_int_eq(ir_tensor(m, a->tensors[1])->dtype, DT_INT32);
	a = ir_attr(m, n, "body");
	ck_assert_int_eq(a->type, ATTR_GRAPH);
	ck_assert_str_eq(ir_graph(m, a->g)->name, "b");
	ck_assert_uint_eq(ir_graph(m, a->g)->owner, n);
	ck_assert_uint_eq(ir_graph(m, a->g)->parent, IR_MAIN_GRAPH);
	a = ir_attr(m, n, "bodies");
	ck_assert_int_eq(a->type, ATTR_GRAPHS);
	ck_assert_int_eq(a->n, 2);
	/* b1 outputs the outer x */
	ck_assert_uint_eq(ir_graph(m, a->graphs[0])->outputs[0], ir_graph(m, IR_MAIN_GRAPH)->inputs[0]);
	ck_assert_int_eq(ir_graph(m, a->graphs[1])->noutputs, 0);
	ir_model_free(m);
}
END_TEST

START_TEST(test_subgraph_outer_scope)
{
	IrModel *m = parse(
		"main (bool c, float[2] x) => (float[2] y) {\n"
		"   t = Neg (x)\n"
		"   y = If (c) <then_branch: graph = then_g () => (float[2] a) {\n"
		"         a = Relu (t)\n"
		"      }, else_branch: graph = else_g () => (t) { }>\n"
		"}");
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_int_eq(g->nnodes, 2);
	NodeId neg = nth_node(m, IR_MAIN_GRAPH, 0), iff = nth_node(m, IR_MAIN_GRAPH, 1);
	ValueId t = ir_node(m, neg)->outputs[0];
	GraphId then_g = ir_attr(m, iff, "then_branch")->g, else_g = ir_attr(m, iff, "else_branch")->g;
	NodeId relu = ir_first(m, then_g);
	ck_assert_uint_eq(ir_node(m, relu)->inputs[0], t);     /* an ordinary use of the outer t */
	ck_assert_uint_eq(ir_value(m, t)->nuses, 1);
	ck_assert_uint_eq(ir_graph(m, else_g)->outputs[0], t);
	ck_assert_int_eq(ir_node(m, iff)->ninputs, 1);
	Diag d;
	diag_init(&d, NULL);
	ck_assert_msg(ir_validate(m, &d), "%s", d.first);
	ir_model_free(m);
}
END_TEST

START_TEST(test_initializers_dtypes)
{
	IrModel *m = parse(
		"g (float[2] w = {1.0, -0.0}) => () <\n"
		"   int64[2] i64 = {-9223372036854775808, 9223372036854775807},\n"
		"   uint64 u64 = {18446744073709551615},\n"
		"   int8[3] i8 = {-128, 0, 127},\n"
		"   bool[2] b = {1, 0},\n"
		"   double[2] d = {0.1, 5e-324},\n"
		"   string[2] s = {\"x\", \"y\\\"z\"},\n"
		"   float16[2] h = {15360, 48128},\n"
		"   int4[3] q = {-8, 7, 1},\n"
		"   complex64[1] c = {1.0, -2.0},\n"
		"   float[2,0] e = {},\n"
		"   float \"a.b\" = {1e-45}> { }");
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_int_eq(g->ninputs, 1);
	ck_assert_int_eq(g->ninits, 12);   /* w and eleven more */
	ck_assert(ir_value(m, g->inputs[0])->tensor != 0);   /* an input with a default */
	size_t nb;
	const uint8_t *b;
#define BYTES(k) (b = ir_tensor_bytes(m, ir_value(m, g->inits[k])->tensor, &nb))
	BYTES(0);
	ck_assert_int_eq(nb, 8);
	ck_assert(signbit(((const float *)b)[1]));
	BYTES(1);
	ck_assert(((const int64_t *)b)[0] == INT64_MIN && ((const int64_t *)b)[1] == INT64_MAX);
	BYTES(2);
	ck_assert(((const uint64_t *)b)[0] == UINT64_MAX);
	BYTES(3);
	ck_assert_int_eq(nb, 3);
	ck_assert_int_eq((int8_t)b[0], -128);
	BYTES(4);
	ck_assert(b[0] == 1 && b[1] == 0);
	BYTES(5);
	ck_assert(((const double *)b)[0] == 0.1 && ((const double *)b)[1] == 5e-324);
	IrTensor *s = ir_tensor(m, ir_value(m, g->inits[6])->tensor);
	ck_assert_int_eq(s->dtype, DT_STRING);
	ck_assert_ptr_nonnull(s->proto);
	BYTES(7);
	ck_assert(b[0] == 0x00 && b[1] == 0x3c && b[2] == 0x00 && b[3] == 0xbc);
	BYTES(8);
	ck_assert_int_eq(nb, 2);
	ck_assert(b[0] == 0x78 && b[1] == 0x01);   /* -8 low nibble, 7 high; then 1 */
	BYTES(9);
	ck_assert(((const float *)b)[1] == -2.0f);
	BYTES(10);
	ck_assert_int_eq(nb, 0);
	ck_assert_str_eq(ir_value(m, g->inits[11])->name, "a.b");
	ck_assert_int_eq(ir_value(m, g->inits[11])->shape.rank, 0);
	BYTES(11);
	ck_assert(((const float *)b)[0] == 1e-45f);
#undef BYTES
	ir_model_free(m);
}
END_TEST

START_TEST(test_optional_inputs_and_domains)
{
	IrModel *m = parse(
		"g (float[3] x, float mx) => (y, z) {\n"
		"   a = Clip (x, , mx)\n"
		"   b = Clip (x, \"\", \"\")\n"
		"   c = Clip (x,)\n"
		"   [n4] y, = com.microsoft.Gelu (c)\n"
		"   z = ai.onnx.ml.Normalizer <norm = \"MAX\"> (b)\n"
		"    = Print (a)\n"
		"}");
	NodeId a = nth_node(m, 1, 0), b = nth_node(m, 1, 1), c = nth_node(m, 1, 2);
	NodeId gelu = nth_node(m, 1, 3), norm = nth_node(m, 1, 4), pr = nth_node(m, 1, 5);
	ck_assert_int_eq(ir_node(m, a)->ninputs, 3);
	ck_assert_uint_eq(ir_node(m, a)->inputs[1], 0);
	ck_assert_str_eq(in_name(m, a, 2), "mx");
	ck_assert_int_eq(ir_node(m, b)->ninputs, 3);
	ck_assert_uint_eq(ir_node(m, b)->inputs[2], 0);
	ck_assert_int_eq(ir_node(m, c)->ninputs, 1);   /* ONNX: "Op(x,)" has one input */
	ck_assert_str_eq(ir_node(m, gelu)->domain, "com.microsoft");
	ck_assert_str_eq(ir_node(m, gelu)->op_type, "Gelu");
	ck_assert_str_eq(ir_node(m, gelu)->name, "n4");
	ck_assert_int_eq(ir_node(m, gelu)->kind, OP_UNKNOWN);
	ck_assert_int_eq(ir_node(m, gelu)->noutputs, 1);
	ck_assert_str_eq(ir_node(m, norm)->domain, "ai.onnx.ml");
	ck_assert_int_eq(ir_node(m, pr)->noutputs, 0);
	ir_model_free(m);

	/* an omitted last output: "" */
	m = parse("g (x) => (y) { y, \"\" = Dropout (x) }");
	NodeId d = nth_node(m, 1, 0);
	ck_assert_int_eq(ir_node(m, d)->noutputs, 2);
	ck_assert_uint_eq(ir_node(m, d)->outputs[1], 0);
	char *text = must_print(m);
	ck_assert_msg(strstr(text, "   y, \"\" = Dropout (x)\n") != NULL, "%s", text);
	free(text);
	ir_model_free(m);
}
END_TEST

START_TEST(test_quoted_names)
{
	IrModel *m = parse(
		"\"torch-jit\" (float[2] \"0\") => (float[2] \"a\\\"b\") {\n"
		"   [\"node 1\"] \"a\\\"b\" = Relu (\"0\")\n"
		"}");
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_str_eq(g->name, "torch-jit");
	ck_assert_str_eq(ir_value(m, g->inputs[0])->name, "0");
	ck_assert_str_eq(ir_value(m, g->outputs[0])->name, "a\"b");
	ck_assert_str_eq(ir_node(m, g->first)->name, "node 1");
	char *text = must_print(m);
	ck_assert_msg(strstr(text, "\"torch-jit\" (float[2] \"0\") => (float[2] \"a\\\"b\") {\n"
	                           "   [\"node 1\"] \"a\\\"b\" = Relu (\"0\")\n}") != NULL, "%s", text);
	free(text);
	ir_model_free(m);
}
END_TEST

/* ---- errors: exact messages and positions --------------------------------- */

static const struct {
	const char *text;
	const char *error;
} error_cases[] = {
	{"g (float x) => (y) { y = Relu (z) }",
	 "t.onnxtxt:1:32: error: 'z' names no value"},
	{"g (float x) => (y) {\n  y = Relu (x)\n  y = Neg (x)\n}",
	 "t.onnxtxt:3:3: error: duplicate value name 'y'"},
	{"g (float x, int64 x) => () { }",
	 "t.onnxtxt:1:19: error: duplicate value name 'x'"},
	{"g (flot x) => (x) { }",
	 "t.onnxtxt:1:4: error: unknown type name 'flot'"},
	{"g (float x) => (y) { y = Foo <s = \"abc> (x) }",
	 "t.onnxtxt:1:35: error: unterminated string"},
	{"g (float x) => (y) { y = Relu (x) ) }",
	 "t.onnxtxt:1:35: error: unexpected ')'"},
	{"g (float x) => (y) { y = Relu (x)",
	 "t.onnxtxt:1:34: error: unexpected end of input"},
	{"g (float x) => (y) {\n\ty = Relu $ (x) }",
	 "t.onnxtxt:2:11: error: unexpected character '$'"},
	{"g (float x) => (y) { y = Relu (x) }\n=> (z)",
	 "t.onnxtxt:2:1: error: unexpected '=>'"},
	{"g (float x) => (y) { y = Foo <a = []> (x) }",
	 "t.onnxtxt:1:35: error: empty list attribute value requires type annotation"},
	{"g (float x) => (y) { y = Foo <a: ints = [1, 2.5]> (x) }",
	 "t.onnxtxt:1:45: error: attribute 'a': float value where int expected"},
	{"g (float x) => (y) { y = Foo <a: flaots = [1]> (x) }",
	 "t.onnxtxt:1:34: error: unknown attribute type 'flaots'"},
	{"g (float x) => (y) { y = Foo <a = 1, a = 2> (x) }",
	 "t.onnxtxt:1:38: error: duplicate attribute 'a'"},
	{"g () => () <float[3] w = {1.0, 2.0}> { }",
	 "t.onnxtxt:1:13: error: tensor of 3 elements has 2 values"},
	{"g () => () <int8[1] w = {128}> { }",
	 "t.onnxtxt:1:26: error: integer out of range"},
	{"g () => () <float[N] w = {1.0}> { }",
	 "t.onnxtxt:1:19: error: a tensor's dimensions must be numbers"},
	{"g () => () <float[1] w = {1e39}> { }",
	 "t.onnxtxt:1:27: error: number out of range for float"},
	{"<ir_versio: 8> g () => () { }",
	 "t.onnxtxt:1:2: error: unknown header field 'ir_versio'"},
	{"g () => (y) { }",
	 "t.onnxtxt:1:10: error: 'y' names no value"},
	{"g (float x) => (y) { y = Foo <t = float> (x) }",
	 "t.onnxtxt:1:35: error: type_proto attributes are not supported"},
};

START_TEST(test_errors)
{
	const char *got = parse_error(error_cases[_i].text);
	ck_assert_msg(strcmp(got, error_cases[_i].error) == 0, "for:\n%s\nwant: %s\ngot:  %s",
	              error_cases[_i].text, error_cases[_i].error, got);
}
END_TEST

START_TEST(test_error_caret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	Diag d;
	diag_init(&d, f);
	const char *text = "g (float x) => (y) {\n   y = Relu (zz)\n}";
	ck_assert_ptr_null(ir_parse_model(text, strlen(text), "m.txt", &d));
	fclose(f);
	ck_assert_str_eq(buf,
		"m.txt:2:14: error: 'zz' names no value\n"
		"    2 |    y = Relu (zz)\n"
		"      |              ^~\n");
	free(buf);
}
END_TEST

/* Several semantic errors are all reported. */
START_TEST(test_errors_continue)
{
	Diag d;
	diag_init(&d, NULL);
	const char *text = "g (float x) => (y) {\n y = Relu (a)\n z = Relu (b)\n}";
	ck_assert_ptr_null(ir_parse_model(text, strlen(text), "t", &d));
	ck_assert_int_eq(d.nerrors, 2);   /* a and b; y is still defined */
	ck_assert_str_eq(d.first, "t:2:12: error: 'a' names no value");
}
END_TEST

/* ---- printing ------------------------------------------------------------- */

static const char *const fixpoint_texts[] = {
	"<\n   ir_version: 8,\n   opset_import: [\"\" : 17]\n>\n"
	"g (float[N,?,3] x, int64[] s, float sc) => (float[N,?,3] y) {\n"
	"   y = Relu (x)\n"
	"}\n",

	"<\n   ir_version: 9,\n   opset_import: [\"\" : 18, \"com.microsoft\" : 1]\n>\n"
	"g (float[2] x, bool c, x2) => (float[2] y, z)\n"
	"   <float[2] w = {0.1, -0.0},\n"
	"    int64[2] sh = {-1, 9223372036854775807},\n"
	"    string[2] names = {\"a\", \"b\\\\c\"},\n"
	"    double d = {1e-300},\n"
	"    float[2] t>\n"
	"{\n"
	"   t = Add (x, w)\n"
	"   [n1] z = com.microsoft.Gelu <approximate: string = \"tanh\"> (t)\n"
	"   y = If (c) <then_branch: graph = then_g () => (float[2] a) {\n"
	"      a = Clip <k: float = 100.0> (t, , \"\")\n"
	"   }, else_branch: graph = else_g () => (float[2] t) {\n"
	"   }>\n"
	"}\n",

	"<\n   ir_version: 8,\n   opset_import: []\n>\n"
	"\"\" () => () {\n"
	"   a, , \"\" = Foo <f: floats = [1.0, inf, -inf, nan, 1e-45, 3.4028235e+38], i: ints = [], "
	"s: strings = [\"\", \"\\\"\"], t: tensor = bool[2] {1, 0}, "
	"ts: tensors = [float16[1] {15360}, uint64 {18446744073709551615}, int4[3] {-8, 7, 0}]> ()\n"
	"   = Bar (a) <gs: graphs = [g1 () => () {\n"
	"   }, g2 (float q) => (float q) {\n"
	"      r = Neg (q)\n"
	"   }]>\n"
	"}\n",
};

START_TEST(test_fixpoint)
{
	const char *text = fixpoint_texts[_i];
	IrModel *m = parse(text);
	char *once = must_print(m);
	ck_assert_msg(strcmp(once, text) == 0, "printed differently:\n%s\n--- from:\n%s", once, text);
	IrModel *m2 = parse(once);
	const char *why = model_diff(m, m2);
	ck_assert_msg(why == NULL, "%s", why);
	char *twice = must_print(m2);
	ck_assert_str_eq(once, twice);
	free(once);
	free(twice);
	ir_model_free(m);
	ir_model_free(m2);
}
END_TEST

/* Each float prints in its shortest exact form and reads back to the same bits. */
static const struct {
	float f;
	const char *text;
} float_cases[] = {
	{0.1f, "0.1"}, {100.0f, "100.0"}, {1.0f, "1.0"}, {-0.0f, "-0.0"}, {1e30f, "1e+30"},
	{1e-45f, "1e-45"}, {FLT_MAX, "3.4028235e+38"}, {FLT_MIN, "1.1754944e-38"},
	{16777216.0f, "16777216.0"}, {0.333333343f, "0.33333334"}, {123456792.0f, "123456792.0"},
	{2.5e-5f, "2.5e-05"}, {INFINITY, "inf"}, {-INFINITY, "-inf"},
};

START_TEST(test_float_printing)
{
	char text[256];
	snprintf(text, sizeof text, "g () => () { = Foo <f: float = 1.0> () }");
	IrModel *m = parse(text);
	NodeId n = ir_first(m, IR_MAIN_GRAPH);
	ir_attr_set_float(m, n, "f", float_cases[_i].f);
	char *out = must_print(m);
	char want[128];
	snprintf(want, sizeof want, "<f: float = %s>", float_cases[_i].text);
	ck_assert_msg(strstr(out, want) != NULL, "want %s in:\n%s", want, out);
	IrModel *m2 = parse(out);
	const IrAttr *a = ir_attr(m2, ir_first(m2, IR_MAIN_GRAPH), "f");
	ck_assert(memcmp(&a->f, &float_cases[_i].f, sizeof(float)) == 0);
	free(out);
	ir_model_free(m);
	ir_model_free(m2);
}
END_TEST

/* Every float bit pattern of a sample (denormals, exponents, NaN) survives. */
START_TEST(test_float_bits_sample)
{
	IrModel *m = parse("g () => () { = Foo <f: float = 1.0> () }");
	NodeId n = ir_first(m, IR_MAIN_GRAPH);
	uint32_t bits = 1;
	for (int k = 0; k < 20000; k++) {
		bits = bits * 1664525u + 1013904223u;
		float f;
		memcpy(&f, &bits, sizeof f);
		if (isnan(f))
			continue;
		ir_attr_set_float(m, n, "f", f);
		char *out = must_print(m);
		IrModel *m2 = parse(out);
		float g = ir_attr(m2, ir_first(m2, IR_MAIN_GRAPH), "f")->f;
		ck_assert_msg(memcmp(&f, &g, sizeof f) == 0, "%.9g (0x%08x) came back as %.9g", f, bits, g);
		free(out);
		ir_model_free(m2);
	}
	ir_model_free(m);
}
END_TEST

/* ---- conformance models: load, print, parse, compare ---------------------- */

/* Why a model cannot go through text, or NULL.  The syntax has no form for
 * sparse initializers; the IR does not model type_proto or sparse tensor
 * attributes (they ride along in the proto, so printing them is refused). */
static const char *skip_reason(const char *print_error)
{
	if (strstr(print_error, "sparse initializers cannot be printed"))
		return "sparse initializer";
	if (strstr(print_error, "of type 13 cannot be printed") || strstr(print_error, "of type 14 cannot be printed"))
		return "type_proto attribute";
	if (strstr(print_error, "of type 11 cannot be printed") || strstr(print_error, "of type 12 cannot be printed"))
		return "sparse tensor attribute";
	return NULL;
}

START_TEST(test_conformance_roundtrip)
{
	size_t count;
	char **paths = find_models(ONNX_TESTDATA, &count);
	ck_assert_int_eq(count, CONFORMANCE_MODELS);
	unsigned failures = 0, skipped = 0;
	for (char **p = paths; *p; p++) {
		Diag d;
		diag_init(&d, NULL);
		IrModel *m = ir_load_file(*p, NULL, &d);
		if (!m) {
			fprintf(stderr, "text round trip: %s: load failed: %s\n", *p, d.first);
			failures++;
			continue;
		}
		char why[1024] = "";
		char *text = print(m, why, sizeof why);
		if (!text) {
			const char *reason = skip_reason(why);
			if (reason) {
				skipped++;
			} else {
				fprintf(stderr, "text round trip: %s: print failed: %s\n", *p, why);
				failures++;
			}
			ir_model_free(m);
			continue;
		}
		diag_init(&d, NULL);
		IrModel *m2 = ir_parse_model(text, strlen(text), *p, &d);
		const char *diff = NULL;
		if (!m2)
			fprintf(stderr, "text round trip: %s: parse failed: %s\n", *p, d.first);
		else if ((diff = model_diff(m, m2)))
			fprintf(stderr, "text round trip: %s: %s\n", *p, diff);
		else if (!ir_validate(m2, &d))
			fprintf(stderr, "text round trip: %s: parsed IR invalid: %s\n", *p, d.first);
		else {
			/* and the text of the parsed model is a fixpoint */
			char *again = print(m2, why, sizeof why);
			IrModel *m3 = again ? ir_parse_model(again, strlen(again), *p, &d) : NULL;
			char *third = m3 ? print(m3, why, sizeof why) : NULL;
			if (!third || strcmp(again, third) != 0) {
				fprintf(stderr, "text round trip: %s: not a fixpoint\n", *p);
				failures++;
			}
			free(again);
			free(third);
			ir_model_free(m3);
		}
		if (!m2 || diff || d.nerrors)
			failures++;
		ir_model_free(m2);
		free(text);
		ir_model_free(m);
	}
	paths_free(paths);
	ck_assert_uint_eq(failures, 0);
	ck_assert_uint_eq(skipped, CONFORMANCE_SKIPPED);
}
END_TEST

/* The graft CLI reads a model file ending in .onnxtxt as text: it saves as
 * ONNX that loads back to the same graph; a syntax error is one diagnostic
 * naming file:line:col, exit 1, and no output file. */
static int run_cmd(const char *cmd, char *out, size_t size)
{
	char *all;
	int rc = run_shell(cmd, &all);
	snprintf(out, size, "%s", all);
	free(all);
	return rc;
}

START_TEST(test_cli_onnxtxt)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *dir = temp_dir(), path[512], onnx[512], cmd[1200], out[4096];
	const char *text = "<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[2] x) => (float[2] y) {\n  y = Relu (x)\n}\n";
	snprintf(path, sizeof path, "%s/m.onnxtxt", dir);
	snprintf(onnx, sizeof onnx, "%s/m.onnx", dir);
	ck_assert(write_file(path, text, strlen(text)));
	snprintf(cmd, sizeof cmd, "%s roundtrip %s -o %s", graft, path, onnx);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	Diag d;
	diag_init(&d, stderr);
	IrModel *a = ir_load_file(onnx, NULL, &d), *b = parse(text);
	ck_assert_ptr_nonnull(a);
	const char *diff = model_diff(a, b);
	ck_assert_msg(diff == NULL, "%s", diff);
	ir_model_free(a);
	ir_model_free(b);
	remove(onnx);
	const char *bad = "<ir_version: 8, opset_import: [\"\" : 13]>\ng (float[2] x) => (float[2] y) {\n  y = Relu (x\n}\n";
	ck_assert(write_file(path, bad, strlen(bad)));
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 1);
	char want[600];
	snprintf(want, sizeof want, "%s:4:1: error: ", path);
	ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "%s", out);
	ck_assert_msg(access(onnx, F_OK) != 0, "%s was written", onnx);
	rm_rf(dir);
	free(dir);
}
END_TEST

Suite *suite_text(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("parse");
	tcase_add_test(tc, test_minimal_defaults);
	tcase_add_test(tc, test_header_and_types);
	tcase_add_test(tc, test_attributes_every_type);
	tcase_add_test(tc, test_subgraph_outer_scope);
	tcase_add_test(tc, test_initializers_dtypes);
	tcase_add_test(tc, test_optional_inputs_and_domains);
	tcase_add_test(tc, test_quoted_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc, test_errors, 0, (int)(sizeof error_cases / sizeof *error_cases));
	tcase_add_test(tc, test_error_caret);
	tcase_add_test(tc, test_errors_continue);
	tcase_add_test(tc, test_cli_onnxtxt);
	suite_add_tcase(s, tc);

	tc = tcase_create("print");
	tcase_add_loop_test(tc, test_fixpoint, 0, (int)(sizeof fixpoint_texts / sizeof *fixpoint_texts));
	tcase_add_loop_test(tc, test_float_printing, 0, (int)(sizeof float_cases / sizeof *float_cases));
	tcase_add_test(tc, test_float_bits_sample);
	suite_add_tcase(s, tc);

	tc = tcase_create("conformance");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_conformance_roundtrip);
	suite_add_tcase(s, tc);
	return s;
}
