/* check_hostile.c - crafted models that used to corrupt memory or crash
 * graft (issue 24): ranks over the limit, typed data in the wrong field,
 * nodes with tens of thousands of outputs or a million inputs, attributes a
 * shape rule divides by, sizes that overflow int64.  Each is refused with one
 * exact line naming the file and the tensor or node, or handled, through the
 * library (load, inference, folding, evaluation, planning) and the CLI; run
 * under `make sanitize` these are also checked for memory errors and
 * undefined behaviour. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ir/arena.h"
#include "runtime/eval/eval.h"
#include "runtime/engine/fold.h"
#include "runtime/infer/infer.h"
#include "ir/ir.h"
#include "gen/onnx.pb-c.h"
#include "runtime/plan/plan.h"
#include "testutil.h"
#include "ir/text.h"

static char *tmp;          /* per-test temporary folder */
static Arena *A;           /* per-test allocations of the builders */

static void setup(void)
{
	tmp = temp_dir();
	A = arena_new();
}

static void teardown(void)
{
	rm_rf(tmp);
	free(tmp);
	arena_free(A);
}

static const char *tpath(const char *name)
{
	return arena_printf(A, "%s/%s", tmp, name);
}

/* ---- builders ----------------------------------------------------------- */

static Onnx__NodeProto *node(const char *op, size_t nin, char **in, size_t nout, char **out)
{
	Onnx__NodeProto *n = arena_alloc(A, sizeof *n);
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->n_input = nin;
	n->input = in;
	n->n_output = nout;
	n->output = out;
	return n;
}

static void add_int_attr(Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = arena_alloc(A, sizeof *a);
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = true;
	a->i = v;
	n->attribute = realloc(n->attribute, sizeof *n->attribute * (n->n_attribute + 1));
	n->attribute[n->n_attribute++] = a;
}

/* A value_info of a float tensor with the given dims (rank < 0: no shape). */
static Onnx__ValueInfoProto *vinfo(const char *name, int rank, const int64_t *dims)
{
	Onnx__ValueInfoProto *v = arena_alloc(A, sizeof *v);
	onnx__value_info_proto__init(v);
	v->name = (char *)name;
	Onnx__TypeProto *tp = arena_alloc(A, sizeof *tp);
	onnx__type_proto__init(tp);
	Onnx__TypeProto__Tensor *tt = arena_alloc(A, sizeof *tt);
	onnx__type_proto__tensor__init(tt);
	tt->has_elem_type = true;
	tt->elem_type = DT_FLOAT;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	v->type = tp;
	if (rank >= 0) {
		Onnx__TensorShapeProto *sh = arena_alloc(A, sizeof *sh);
		onnx__tensor_shape_proto__init(sh);
		sh->n_dim = (size_t)rank;
		sh->dim = arena_alloc(A, sizeof *sh->dim * (size_t)(rank + 1));
		for (int i = 0; i < rank; i++) {
			Onnx__TensorShapeProto__Dimension *d = arena_alloc(A, sizeof *d);
			onnx__tensor_shape_proto__dimension__init(d);
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims ? dims[i] : 1;
			sh->dim[i] = d;
		}
		tt->shape = sh;
	}
	return v;
}

/* A float tensor of the given dims (NULL: all 1) holding `raw` bytes of zeros. */
static Onnx__TensorProto *tensor(const char *name, size_t rank, const int64_t *dims, size_t raw)
{
	Onnx__TensorProto *t = arena_alloc(A, sizeof *t);
	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = true;
	t->data_type = DT_FLOAT;
	t->n_dims = rank;
	t->dims = arena_alloc(A, sizeof *t->dims * (rank + 1));
	for (size_t i = 0; i < rank; i++)
		t->dims[i] = dims ? dims[i] : 1;
	t->has_raw_data = true;
	t->raw_data.len = raw;
	t->raw_data.data = arena_alloc(A, raw + 1);
	memset(t->raw_data.data, 0, raw + 1);
	return t;
}

static char **names(size_t n, const char *fmt)
{
	char **out = arena_alloc(A, sizeof *out * (n + 1));
	for (size_t i = 0; i < n; i++)
		out[i] = arena_printf(A, fmt, (unsigned)i);
	return out;
}

static char **one(const char *s)
{
	char **out = arena_alloc(A, sizeof *out * 2);
	out[0] = (char *)s;
	return out;
}

/* A graph of one node; inputs and outputs given as value_infos. */
static Onnx__GraphProto *graph(Onnx__NodeProto *n, size_t nin, Onnx__ValueInfoProto **in, size_t nout,
                               Onnx__ValueInfoProto **out)
{
	Onnx__GraphProto *g = arena_alloc(A, sizeof *g);
	onnx__graph_proto__init(g);
	g->name = "g";
	g->n_node = 1;
	g->node = arena_alloc(A, sizeof *g->node);
	g->node[0] = n;
	g->n_input = nin;
	g->input = in;
	g->n_output = nout;
	g->output = out;
	return g;
}

static Onnx__ValueInfoProto **vis(Onnx__ValueInfoProto *a)
{
	Onnx__ValueInfoProto **out = arena_alloc(A, sizeof *out * 2);
	out[0] = a;
	return out;
}

static void add_init(Onnx__GraphProto *g, Onnx__TensorProto *t)
{
	g->initializer = arena_alloc(A, sizeof *g->initializer);
	g->initializer[0] = t;
	g->n_initializer = 1;
}

/* Pack a model around g (opset 17) into tmp/name; returns the path. */
static const char *write_model(const char *name, Onnx__GraphProto *g)
{
	Onnx__ModelProto mp;
	onnx__model_proto__init(&mp);
	mp.has_ir_version = true;
	mp.ir_version = 8;
	Onnx__OperatorSetIdProto op;
	onnx__operator_set_id_proto__init(&op);
	op.domain = "";
	op.has_version = true;
	op.version = 17;
	Onnx__OperatorSetIdProto *ops[1] = {&op};
	mp.n_opset_import = 1;
	mp.opset_import = ops;
	mp.graph = g;
	size_t len = onnx__model_proto__get_packed_size(&mp);
	uint8_t *buf = malloc(len);
	ck_assert_ptr_nonnull(buf);
	onnx__model_proto__pack(&mp, buf);
	const char *path = tpath(name);
	ck_assert(write_file(path, buf, len));
	free(buf);
	for (size_t i = 0; i < g->n_node; i++)
		free(g->node[i]->attribute);
	return path;
}

/* The CLI's exit status and first stderr line for `graft ARGS`, or -1 if
 * GRAFT is not set (the check is then skipped). */
static int cli(const char *args, char *err, size_t size)
{
	const char *graft = cli_graft();
	if (!graft)
		return -1;
	const char *errf = tpath("stderr.txt");
	int status = system(arena_printf(A, "%s %s >/dev/null 2>%s", graft, args, errf));
	ck_assert_msg(WIFEXITED(status), "graft %s: killed by signal %d", args, WTERMSIG(status));
	size_t n;
	uint8_t *text = read_file(errf, &n);
	ck_assert_ptr_nonnull(text);
	size_t k = 0;
	while (k < n && text[k] != '\n' && k + 1 < size)
		k++;
	memcpy(err, text, k);
	err[k] = 0;
	free(text);
	return WEXITSTATUS(status);
}

/* Load must fail with exactly "<path>: <rest>", and so must `graft CMD path`. */
static void refused(const char *path, const char *rest)
{
	const char *want = arena_printf(A, "%s: %s", path, rest);
	ck_assert_str_eq(load_error(path), want);
	static const char *const cmds[] = {"shapes", "plan", "run", "info"};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		char err[1024];
		int rc = cli(arena_printf(A, "%s %s", cmds[i], path), err, sizeof err);
		if (rc < 0)
			return;
		ck_assert_int_eq(rc, 1);
		ck_assert_str_eq(err, want);
	}
	char err[1024];
	ck_assert_int_eq(cli(arena_printf(A, "fold %s -o %s", path, tpath("folded.onnx")), err, sizeof err), 1);
	ck_assert_str_eq(err, want);
}

/* ---- ranks --------------------------------------------------------------- */

START_TEST(test_rank_limit_initializer)
{
	/* rank 16 loads and folds; rank 17 overflowed the evaluator's dims */
	Onnx__NodeProto *n = node("Relu", 1, one("w"), 1, one("y"));
	Onnx__GraphProto *g = graph(n, 0, NULL, 1, vis(vinfo("y", -1, NULL)));
	add_init(g, tensor("w", IR_MAX_RANK, NULL, 4));
	const char *ok = write_model("r16.onnx", g);
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(ok, NULL, &d);
	ck_assert_ptr_nonnull(m);
	FoldOptions fo = {.max_bytes = FOLD_DEFAULT_MAX_BYTES};
	FoldStats st;
	ck_assert(fold_model(m, &fo, &st, &d));
	ck_assert_uint_eq(st.folded, 1);
	ir_model_free(m);

	g = graph(n, 0, NULL, 1, vis(vinfo("y", -1, NULL)));
	add_init(g, tensor("w", IR_MAX_RANK + 1, NULL, 4));
	refused(write_model("r17.onnx", g), "tensor 'w': rank 17 is over graft's limit of 16");
}
END_TEST

START_TEST(test_rank_limit_declared)
{
	/* a graph input, and a value_info, of rank 1000: fold_shape_of's stack */
	Onnx__NodeProto *n = node("Shape", 1, one("x"), 1, one("y"));
	Onnx__GraphProto *g = graph(n, 1, vis(vinfo("x", 1000, NULL)), 1, vis(vinfo("y", -1, NULL)));
	refused(write_model("in.onnx", g), "tensor 'x': rank 1000 is over graft's limit of 16");

	n = node("Relu", 1, one("x"), 1, one("t"));
	Onnx__NodeProto *n2 = node("Shape", 1, one("t"), 1, one("y"));
	g = graph(n, 1, vis(vinfo("x", -1, NULL)), 1, vis(vinfo("y", -1, NULL)));
	g->n_node = 2;
	g->node = arena_alloc(A, sizeof *g->node * 2);
	g->node[0] = n;
	g->node[1] = n2;
	g->n_value_info = 1;
	g->value_info = vis(vinfo("t", 1000, NULL));
	refused(write_model("vi.onnx", g), "tensor 't': rank 1000 is over graft's limit of 16");
}
END_TEST

START_TEST(test_rank_limit_text)
{
	const char *path = tpath("r17.onnxtxt");
	const char *text = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                   "g (float[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1] x) => (float y) {\n"
	                   "  y = Relu(x)\n"
	                   "}\n";
	Diag d;
	diag_init(&d, NULL);
	ck_assert_ptr_null(ir_parse_model(text, strlen(text), path, &d));
	ck_assert_str_eq(d.first, arena_printf(A, "%s:2:42: error: rank 17 is over graft's limit of 16", path));
	/* the CLI reads the file the same way */
	ck_assert(write_file(path, text, strlen(text)));
	char err[1024];
	int rc = cli(arena_printf(A, "fold %s -o %s", path, tpath("f.onnx")), err, sizeof err);
	if (rc >= 0) {
		ck_assert_int_eq(rc, 1);
		ck_assert_str_eq(err, d.first);
	}
}
END_TEST

START_TEST(test_rank_limit_run_inputs)
{
	/* graft run --inputs with a rank-17 input_0.pb */
	Onnx__NodeProto *n = node("Relu", 1, one("x"), 1, one("y"));
	Onnx__GraphProto *g = graph(n, 1, vis(vinfo("x", -1, NULL)), 1, vis(vinfo("y", -1, NULL)));
	const char *model = write_model("m.onnx", g);
	Onnx__TensorProto *t = tensor("x", IR_MAX_RANK + 1, NULL, 4);
	size_t len = onnx__tensor_proto__get_packed_size(t);
	uint8_t *buf = malloc(len);
	onnx__tensor_proto__pack(t, buf);
	const char *pb = tpath("input_0.pb");
	ck_assert(write_file(pb, buf, len));
	free(buf);
	char err[1024];
	int rc = cli(arena_printf(A, "run %s --inputs %s", model, tmp), err, sizeof err);
	if (rc < 0)
		return;
	ck_assert_int_eq(rc, 1);
	ck_assert_str_eq(err, arena_printf(A, "%s: tensor 'x': rank 17 is over graft's limit of 16", pb));
	/* the same file as an expected output */
	ck_assert(rename(pb, tpath("output_0.pb")) == 0);
	rc = cli(arena_printf(A, "run %s --expect %s", model, tmp), err, sizeof err);
	ck_assert_int_eq(rc, 1);
	ck_assert_str_eq(err, arena_printf(A, "%s/output_0.pb: tensor 'x': rank 17 is over graft's limit of 16", tmp));
}
END_TEST

/* ---- typed data ------------------------------------------------------------ */

START_TEST(test_typed_data_wrong_field)
{
	/* a FLOAT tensor whose values are in int64_data: decode read float_data (NULL) */
	Onnx__NodeProto *n = node("Relu", 1, one("w"), 1, one("y"));
	Onnx__GraphProto *g = graph(n, 0, NULL, 1, vis(vinfo("y", -1, NULL)));
	int64_t two = 2;
	Onnx__TensorProto *t = tensor("w", 1, &two, 0);
	t->has_raw_data = false;
	int64_t vals[2] = {1, 2};
	t->n_int64_data = 2;
	t->int64_data = vals;
	add_init(g, t);
	refused(write_model("wrong.onnx", g), "tensor 'w': float values are in int64_data, not float_data");

	/* split across two fields: their counts added up to the dims */
	int64_t four = 4;
	t = tensor("w", 1, &four, 0);
	t->has_raw_data = false;
	float f[2] = {1, 2};
	t->n_float_data = 2;
	t->float_data = f;
	t->n_int64_data = 2;
	t->int64_data = vals;
	g = graph(n, 0, NULL, 1, vis(vinfo("y", -1, NULL)));
	add_init(g, t);
	refused(write_model("split.onnx", g), "tensor 'w': float values are in int64_data, not float_data");

	/* the right field, too short */
	t->n_int64_data = 0;
	g = graph(n, 0, NULL, 1, vis(vinfo("y", -1, NULL)));
	add_init(g, t);
	refused(write_model("short.onnx", g), "tensor 'w': float_data holds 2 elements, dims need 4");
}
END_TEST

/* ---- wide nodes ------------------------------------------------------------ */

/* Load, infer, fold and run a model; every step must succeed. */
static void runs(const char *path, uint32_t want_outputs)
{
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(path, NULL, &d);
	ck_assert_msg(m != NULL, "%s", d.first);
	InferState *s = infer_new(m);
	ck_assert_msg(infer_model(s, &d), "%s", d.first);
	infer_free(s);
	IrGraph *gr = ir_graph(m, IR_MAIN_GRAPH);
	ck_assert_uint_eq(gr->noutputs, want_outputs);
	int64_t two = 2;
	EvValue *x = ev_tensor_new(DT_FLOAT, 1, &two);
	EvValue **out = calloc(gr->noutputs, sizeof *out);
	const EvValue *in[1] = {x};
	ck_assert_msg(ev_run(m, in, 1, out, NULL, &d), "%s", d.first);
	for (uint32_t i = 0; i < gr->noutputs; i++)
		ev_unref(out[i]);
	free(out);
	ev_unref(x);
	FoldOptions fo = {.max_bytes = FOLD_DEFAULT_MAX_BYTES};
	FoldStats st;
	ck_assert(fold_model(m, &fo, &st, &d));
	ir_model_free(m);
}

START_TEST(test_wide_split)
{
	/* 20,000 outputs: InferOut outs[20001] on the stack was 10 MB */
	enum { N = 20000 };
	Onnx__NodeProto *n = node("Split", 1, one("x"), N, names(N, "o%u"));
	add_int_attr(n, "axis", 0);
	int64_t dim = 2 * N;
	Onnx__ValueInfoProto **outs = arena_alloc(A, sizeof *outs * 2);
	outs[0] = vinfo("o0", -1, NULL);
	outs[1] = vinfo("o19999", -1, NULL);
	Onnx__GraphProto *g = graph(n, 1, vis(vinfo("x", 1, &dim)), 2, outs);
	const char *path = write_model("split.onnx", g);
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(path, NULL, &d);
	ck_assert_ptr_nonnull(m);
	InferState *s = infer_new(m);
	ck_assert(infer_model(s, &d));
	infer_free(s);
	const IrValue *o = ir_value(m, ir_graph(m, IR_MAIN_GRAPH)->outputs[1]);
	ck_assert_int_eq(o->shape.rank, 1);
	ck_assert_int_eq(o->shape.dims[0].size, 2);
	int64_t dims[1] = {dim};
	EvValue *x = ev_tensor_new(DT_FLOAT, 1, dims);
	for (int64_t i = 0; i < dim; i++)
		((float *)x->data)[i] = (float)i;
	EvValue *out[2] = {0};
	const EvValue *in[1] = {x};
	ck_assert_msg(ev_run(m, in, 1, out, NULL, &d), "%s", d.first);
	ck_assert_float_eq(((float *)out[1]->data)[1], (float)(dim - 1));
	ev_unref(out[0]);
	ev_unref(out[1]);
	ev_unref(x);
	FoldOptions fo = {.max_bytes = FOLD_DEFAULT_MAX_BYTES};
	FoldStats st;
	ck_assert(fold_model(m, &fo, &st, &d));
	ir_model_free(m);
	char err[1024];
	if (cli(arena_printf(A, "fold %s -o %s", path, tpath("f.onnx")), err, sizeof err) >= 0)
		ck_assert_int_eq(cli(arena_printf(A, "shapes %s", path), err, sizeof err), 0);
}
END_TEST

START_TEST(test_wide_sum)
{
	/* 1,000,000 inputs: EvValue *in[1000001] on the stack was 8 MB */
	enum { N = 1000000 };
	char **in = arena_alloc(A, sizeof *in * N);
	for (size_t i = 0; i < N; i++)
		in[i] = "x";
	int64_t two = 2;
	Onnx__NodeProto *n = node("Sum", N, in, 1, one("y"));
	Onnx__GraphProto *g = graph(n, 1, vis(vinfo("x", 1, &two)), 1, vis(vinfo("y", -1, NULL)));
	const char *path = write_model("sum.onnx", g);
	runs(path, 1);
	/* and with x a constant: folding evaluates it */
	g = graph(n, 0, NULL, 1, vis(vinfo("y", -1, NULL)));
	Onnx__TensorProto *t = tensor("x", 1, &two, 8);
	((float *)t->raw_data.data)[0] = 1;
	((float *)t->raw_data.data)[1] = 0.5f;
	add_init(g, t);
	path = write_model("sumc.onnx", g);
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(path, NULL, &d);
	ck_assert_ptr_nonnull(m);
	FoldOptions fo = {.max_bytes = FOLD_DEFAULT_MAX_BYTES};
	FoldStats st;
	ck_assert(fold_model(m, &fo, &st, &d));
	ck_assert_uint_eq(st.folded, 1);
	ValueId y = ir_graph(m, IR_MAIN_GRAPH)->outputs[0];
	size_t nb;
	const float *v = (const float *)ir_tensor_bytes(m, ir_value(m, y)->tensor, &nb);
	ck_assert_uint_eq(nb, 8);
	ck_assert_float_eq(v[0], 1e6f);
	ck_assert_float_eq(v[1], 5e5f);
	ir_model_free(m);
}
END_TEST

/* ---- attributes a rule divides by ------------------------------------------- */

/* Inference, then evaluation, of a one-node text model must fail with these lines. */
static void bad_attr(const char *text, const char *infer_msg, const char *eval_msg)
{
	IrModel *m = parse_text_model(text);
	Diag d;
	diag_init(&d, NULL);
	InferState *s = infer_new(m);
	ck_assert(!infer_model(s, &d));
	ck_assert_str_eq(d.first, infer_msg);
	infer_free(s);
	/* folding ignores what inference says, and its kernel refuses */
	FoldOptions fo = {.max_bytes = FOLD_DEFAULT_MAX_BYTES};
	FoldStats st;
	diag_init(&d, NULL);
	ck_assert(fold_model(m, &fo, &st, &d));
	ck_assert_uint_eq(st.folded, 0);
	if (eval_msg) {
		int64_t dims[4] = {1, 4, 2, 2};
		EvValue *x = ev_tensor_new(DT_FLOAT, 4, dims);
		EvValue *out[1] = {0};
		const EvValue *in[1] = {x};
		diag_init(&d, NULL);
		ck_assert(!ev_run(m, in, 1, out, NULL, &d));
		ck_assert_str_eq(d.first, eval_msg);
		ev_unref(x);
	}
	ir_model_free(m);
}

START_TEST(test_blocksize_zero)
{
	bad_attr("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	         "g (float[1,4,2,2] x) => (float y) {\n"
	         "  y = DepthToSpace <blocksize = 0> (x)\n"
	         "}\n",
	         "t.onnx: node 'DepthToSpace#0' (DepthToSpace): blocksize 0 is not a positive size",
	         "t.onnx: node 'DepthToSpace#0': blocksize 0 is not a positive size");
	bad_attr("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	         "g (float[1,4,2,2] x) => (float y) {\n"
	         "  y = SpaceToDepth <blocksize = 0> (x)\n"
	         "}\n",
	         "t.onnx: node 'SpaceToDepth#0' (SpaceToDepth): blocksize 0 is not a positive size",
	         "t.onnx: node 'SpaceToDepth#0': blocksize 0 is not a positive size");
	/* b * b overflowed int64 to 0 before the modulo */
	bad_attr("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	         "g (float[1,4,2,2] x) => (float y) {\n"
	         "  y = DepthToSpace <blocksize = 4294967296> (x)\n"
	         "}\n",
	         "t.onnx: node 'DepthToSpace#0' (DepthToSpace): blocksize 4294967296 is not a positive size",
	         "t.onnx: node 'DepthToSpace#0': blocksize 4294967296 is not a positive size");
}
END_TEST

START_TEST(test_conv_attrs)
{
	bad_attr("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	         "g (float[1,4,2,2] x, float[4,4,1,1] w) => (float y) {\n"
	         "  y = Conv <group = 0> (x, w)\n"
	         "}\n",
	         "t.onnx: node 'Conv#0' (Conv): group 0 is not positive", NULL);
	bad_attr("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	         "g (float[1,4,2,2] x, float[4,4,1,1] w) => (float y) {\n"
	         "  y = Conv <kernel_shape = [0, 1]> (x, w)\n"
	         "}\n",
	         "t.onnx: node 'Conv#0' (Conv): kernel size 0 is not positive", NULL);
	bad_attr("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	         "g (float[1,4,2,2] x) => (float y) {\n"
	         "  y = MaxPool <kernel_shape = [1, 1], strides = [0, 1]> (x)\n"
	         "}\n",
	         "t.onnx: node 'MaxPool#0' (MaxPool): strides and dilations must be positive", NULL);
	bad_attr("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	         "g (float[1,4,2,2] x) => (float y) {\n"
	         "  y = MaxPool <kernel_shape = [1, 1], pads = [9223372036854775807, 0, 1, 0]> (x)\n"
	         "}\n",
	         "t.onnx: node 'MaxPool#0' (MaxPool): padded input size overflows int64", NULL);
}
END_TEST

/* ---- sizes that overflow ---------------------------------------------------- */

START_TEST(test_overflowing_sizes)
{
	Onnx__NodeProto *n = node("Relu", 1, one("w"), 1, one("y"));
	int64_t huge[2] = {(int64_t)1 << 62, 4};
	Onnx__GraphProto *g = graph(n, 0, NULL, 1, vis(vinfo("y", -1, NULL)));
	add_init(g, tensor("w", 2, huge, 0));
	refused(write_model("huge.onnx", g), "tensor 'w': element count overflows int64");

	int64_t neg[2] = {-5, 3};
	g = graph(n, 0, NULL, 1, vis(vinfo("y", -1, NULL)));
	add_init(g, tensor("w", 2, neg, 0));
	refused(write_model("neg.onnx", g), "tensor 'w': negative dimension -5");

	/* a declared type: inference and the planner multiplied these */
	int64_t big[2] = {(int64_t)1 << 62, (int64_t)1 << 62};
	n = node("Relu", 1, one("x"), 1, one("y"));
	g = graph(n, 1, vis(vinfo("x", 2, big)), 1, vis(vinfo("y", -1, NULL)));
	refused(write_model("decl.onnx", g), "tensor 'x': element count overflows int64");

	/* sums and products in inference are unknown, not wrapped around */
	IrModel *m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                              "g (float[4611686018427387904] x, float[4611686018427387904,4] w)\n"
	                              "  => (float[?] y, float[?] z, int64 s) {\n"
	                              "  y = Concat <axis = 0> (x, x)\n"
	                              "  r = Constant <value = int64[1] {4}> ()\n"
	                              "  z = Tile (x, r)\n"
	                              "  s = Size (w)\n"
	                              "}\n");
	Diag d;
	diag_init(&d, NULL);
	InferState *s = infer_new(m);
	infer_model(s, &d);
	infer_free(s);
	IrGraph *gr = ir_graph(m, IR_MAIN_GRAPH);
	for (int i = 0; i < 2; i++) {
		const IrValue *v = ir_value(m, gr->outputs[i]);
		ck_assert_int_eq(v->shape.rank, 1);
		ck_assert_int_eq(v->shape.dims[0].size, -1);
	}
	FoldOptions fo = {.max_bytes = FOLD_DEFAULT_MAX_BYTES};
	FoldStats st;
	ck_assert(fold_model(m, &fo, &st, &d));
	ck_assert(!ir_value(m, gr->outputs[2])->tensor);
	ir_model_free(m);
}
END_TEST

Suite *suite_hostile(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_rank_limit_initializer);
	tcase_add_test(tc, test_rank_limit_declared);
	tcase_add_test(tc, test_rank_limit_text);
	tcase_add_test(tc, test_rank_limit_run_inputs);
	tcase_add_test(tc, test_typed_data_wrong_field);
	tcase_add_test(tc, test_wide_split);
	tcase_add_test(tc, test_wide_sum);
	tcase_add_test(tc, test_blocksize_zero);
	tcase_add_test(tc, test_conv_attrs);
	tcase_add_test(tc, test_overflowing_sizes);
	suite_add_tcase(s, tc);
	return s;
}
