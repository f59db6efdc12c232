/* check_onnx.c - ONNX load/save: byte-identical round trips of every
 * conformance and corpus model, rebuilding nodes through the IR's own API,
 * the fixtures for what those models lack (functions, sparse initializers,
 * external data, outer-scope uses, doc strings, metadata), zero-copy loading
 * and its fallbacks, and atomic saving. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/arena.h"
#include "ir/ir.h"
#include "gen/onnx.pb-c.h"
#include "testutil.h"

/* Expected model counts, so an empty or partial glob cannot pass. */
#define CONFORMANCE_MODELS 1072

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
}

/* Load from bytes, save to bytes, and compare.  Returns an error string or NULL. */
static const char *roundtrip(const char *path)
{
	static char why[1200];
	size_t len;
	uint8_t *in = read_file(path, &len);
	if (!in)
		return "cannot read";
	Diag d;
	diag_init(&d, NULL);
	char *dir = dir_of(path);
	/* borrowing, as ir_load_file does: large tensor bytes stay in `in` */
	LoadOptions lo = {.borrow = true};
	IrModel *m = ir_load_bytes(in, len, path, dir, &lo, &d);
	free(dir);
	const char *err = NULL;
	if (!m) {
		snprintf(why, sizeof why, "load failed: %s", d.first);
		err = why;
	} else {
		uint8_t *out;
		size_t outlen;
		if (!ir_save_bytes(m, &out, &outlen, &d)) {
			snprintf(why, sizeof why, "save failed: %s", d.first);
			err = why;
		} else {
			if (outlen != len || memcmp(in, out, len) != 0) {
				size_t i = 0;
				while (i < len && i < outlen && in[i] == out[i])
					i++;
				snprintf(why, sizeof why, "bytes differ (in %zu, out %zu, first difference at %zu)", len, outlen, i);
				err = why;
			}
			free(out);
		}
		if (!err && !ir_validate(m, &d)) {
			snprintf(why, sizeof why, "invalid IR: %s", d.first);
			err = why;
		}
		ir_model_free(m);
	}
	free(in);
	return err;
}

static unsigned roundtrip_all(char **paths)
{
	unsigned failures = 0;
	for (char **p = paths; *p; p++) {
		const char *err = roundtrip(*p);
		if (err) {
			fprintf(stderr, "round trip: %s: %s\n", *p, err);
			failures++;
		}
	}
	return failures;
}

START_TEST(test_roundtrip_conformance)
{
	size_t n;
	char **paths = find_models(ONNX_TESTDATA, &n);
	ck_assert_uint_eq(n, CONFORMANCE_MODELS);
	ck_assert_uint_eq(roundtrip_all(paths), 0);
	paths_free(paths);
}
END_TEST

/* Number of models MANIFEST.tsv lists (one line each after the header). */
static size_t manifest_count(const char *corpus)
{
	char path[512];
	snprintf(path, sizeof path, "%s/MANIFEST.tsv", corpus);
	size_t len;
	char *text = (char *)read_file(path, &len);
	if (!text)
		return 0;
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	free(text);
	return lines - 1;
}

START_TEST(test_roundtrip_corpus)
{
	const char *corpus = corpus_dir();
	if (!corpus) {
		fprintf(stderr, "note: %s not found; corpus round trip skipped\n", CORPUS_DIR);
		return;
	}
	size_t n;
	char **paths = find_models(corpus, &n);
	ck_assert_uint_gt(n, 100);
	ck_assert_uint_eq(n, manifest_count(corpus));
	ck_assert_uint_eq(roundtrip_all(paths), 0);
	paths_free(paths);
}
END_TEST

START_TEST(test_roundtrip_fixtures)
{
	const char *fixtures[] = {"tests/data/meta.onnx", "tests/data/function.onnx", "tests/data/sparse.onnx",
	                          "tests/data/subgraph.onnx", "tests/data/ext/ext.onnx", "examples/tiny_cnn.onnx"};
	for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
		const char *err = roundtrip(fixtures[i]);
		ck_assert_msg(err == NULL, "%s: %s", fixtures[i], err);
	}
}
END_TEST

/* ---- rebuilding every node through the node-creation API -------------- */

/* Replace node n by a copy made with ir_node_new and the ir_attr_set_*
 * calls, the way a rewrite would.  False if n has an attribute kind the API
 * does not model (sparse tensors, type protos). */
static bool rebuild_node(IrModel *m, NodeId n)
{
	IrNode *old = ir_node(m, n);
	for (uint32_t a = 0; a < old->nattrs; a++)
		if (old->attrs[a].type >= ATTR_SPARSE_TENSOR || old->attrs[a].type == ATTR_UNDEFINED)
			return false;
	GraphId g = old->graph;
	uint32_t nout = old->noutputs;
	const char *names[nout ? nout : 1];
	for (uint32_t o = 0; o < nout; o++)
		names[o] = old->outputs[o] ? NULL : "";
	ValueId inputs[old->ninputs ? old->ninputs : 1];
	memcpy(inputs, old->inputs, sizeof(ValueId) * old->ninputs);
	NodeId r = ir_node_new(m, g, n, old->domain, old->op_type, old->name, inputs, old->ninputs, names, nout);
	ck_assert_uint_ne(r, 0);
	old = ir_node(m, n);
	for (uint32_t i = 0; i < old->nattrs; i++) {
		const IrAttr *a = &old->attrs[i];
		switch (a->type) {
		case ATTR_FLOAT: ir_attr_set_float(m, r, a->name, a->f); break;
		case ATTR_INT: ir_attr_set_int(m, r, a->name, a->i); break;
		case ATTR_STRING: ir_attr_set_string(m, r, a->name, a->s.data, a->s.len); break;
		case ATTR_TENSOR: ir_attr_set_tensor(m, r, a->name, a->t); break;
		case ATTR_GRAPH: ir_attr_set_graph(m, r, a->name, a->g); break;
		case ATTR_FLOATS: ir_attr_set_floats(m, r, a->name, a->floats, a->n); break;
		case ATTR_INTS: ir_attr_set_ints(m, r, a->name, a->ints, a->n); break;
		case ATTR_STRINGS: ir_attr_set_strings(m, r, a->name, a->strings, a->n); break;
		case ATTR_TENSORS: ir_attr_set_tensors(m, r, a->name, a->tensors, a->n); break;
		case ATTR_GRAPHS: ir_attr_set_graphs(m, r, a->name, a->graphs, a->n); break;
		}
	}
	/* the bodies now belong to r: detach them from the old node */
	for (uint32_t i = old->nattrs; i-- > 0;)
		if (old->attrs[i].type == ATTR_GRAPH || old->attrs[i].type == ATTR_GRAPHS)
			ir_attr_remove(m, n, old->attrs[i].name);
	const char *oldnames[nout ? nout : 1];
	for (uint32_t o = 0; o < nout; o++) {
		ValueId ov = ir_node(m, n)->outputs[o], nv = ir_node(m, r)->outputs[o];
		if (!ov)
			continue;
		oldnames[o] = ir_value(m, ov)->name;
		ir_replace_all_uses(m, ov, nv);
		IrGraph *gr = ir_graph(m, ir_value(m, ov)->graph);
		for (uint32_t k = 0; k < gr->noutputs; k++)
			if (gr->outputs[k] == ov)
				ir_set_output(m, ir_value(m, ov)->graph, k, nv);
		/* a body may list an outer value as its output */
		for (GraphId b = 1; b < m->ngraphs; b++)
			for (uint32_t k = 0; k < ir_graph(m, b)->noutputs; k++)
				if (ir_graph(m, b)->outputs[k] == ov)
					ir_set_output(m, b, k, nv);
	}
	ir_node_remove(m, n);
	for (uint32_t o = 0; o < nout; o++)
		if (ir_node(m, r)->outputs[o])
			ck_assert(ir_value_rename(m, ir_node(m, r)->outputs[o], oldnames[o]));
	return true;
}

/* What the IR models of a node, packed: doc strings (which ride along
 * rather than being modeled) cleared, and an empty name or domain written the
 * same whether the file had it absent or explicitly "". */
static uint8_t *pack_node(const Onnx__NodeProto *np, size_t *len)
{
	Onnx__NodeProto copy = *np;
	copy.doc_string = NULL;
	if (copy.name && !*copy.name)
		copy.name = NULL;
	if (copy.domain && !*copy.domain)
		copy.domain = NULL;
	Onnx__AttributeProto attrs[np->n_attribute + 1], *ptrs[np->n_attribute + 1];
	for (size_t i = 0; i < np->n_attribute; i++) {
		attrs[i] = *np->attribute[i];
		attrs[i].doc_string = NULL;
		attrs[i].g = NULL;       /* bodies are compared node by node */
		attrs[i].n_graphs = 0;
		ptrs[i] = &attrs[i];
	}
	copy.attribute = ptrs;
	*len = onnx__node_proto__get_packed_size(&copy);
	uint8_t *buf = malloc(*len + 1);
	onnx__node_proto__pack(&copy, buf);
	return buf;
}

/* Same nodes (as pack_node sees them), recursively through bodies. */
static bool same_graph(const char *path, const Onnx__GraphProto *before, const Onnx__GraphProto *after)
{
	if (before->n_node != after->n_node) {
		fprintf(stderr, "rebuild: %s: graph '%s' has %zu nodes, was %zu\n", path, before->name,
		        after->n_node, before->n_node);
		return false;
	}
	for (size_t i = 0; i < before->n_node; i++) {
		const Onnx__NodeProto *b = before->node[i], *a = after->node[i];
		size_t la, lb;
		uint8_t *x = pack_node(b, &la), *y = pack_node(a, &lb);
		bool same = la == lb && memcmp(x, y, la) == 0;
		free(x);
		free(y);
		for (size_t k = 0; same && k < b->n_attribute; k++) {
			if (b->attribute[k]->g)
				same = same_graph(path, b->attribute[k]->g, a->attribute[k]->g);
			for (size_t j = 0; same && j < b->attribute[k]->n_graphs; j++)
				same = same_graph(path, b->attribute[k]->graphs[j], a->attribute[k]->graphs[j]);
		}
		if (!same) {
			fprintf(stderr, "rebuild: %s: graph '%s' node %zu (%s) differs\n", path, before->name, i, b->op_type);
			return false;
		}
	}
	return true;
}

/* Rebuild every node of every graph, then check the emitted nodes equal the
 * originals field for field.  Returns the number of mismatching models. */
static unsigned rebuild_all(char **paths, unsigned *skipped_nodes)
{
	unsigned failures = 0;
	for (char **p = paths; *p; p++) {
		Diag d;
		diag_init(&d, stderr);
		IrModel *m = ir_load_file(*p, NULL, &d);
		ck_assert_msg(m != NULL, "%s", *p);
		NodeId last = m->nnodes;
		for (NodeId n = 1; n < last; n++)
			if (!ir_node(m, n)->dead && !rebuild_node(m, n))
				(*skipped_nodes)++;
		if (!ir_validate(m, &d)) {
			fprintf(stderr, "rebuild: %s: invalid IR: %s\n", *p, d.first);
			failures++;
			ir_model_free(m);
			continue;
		}
		Arena *a = arena_new();
		Onnx__ModelProto *out = ir_emit(m, a, &d);
		ck_assert_ptr_nonnull(out);
		failures += !same_graph(*p, m->proto->graph, out->graph);
		arena_free(a);
		ir_model_free(m);
	}
	return failures;
}

START_TEST(test_rebuild_conformance_nodes)
{
	size_t n;
	char **paths = find_models(ONNX_TESTDATA, &n);
	ck_assert_uint_eq(n, CONFORMANCE_MODELS);
	unsigned skipped = 0;
	ck_assert_uint_eq(rebuild_all(paths, &skipped), 0);
	/* nodes with sparse-tensor or type-proto attributes (Constant
	 * sparse_value tests) cannot be rebuilt through the API */
	ck_assert_uint_le(skipped, 4);
	paths_free(paths);
}
END_TEST

START_TEST(test_rebuild_fixture_nodes)
{
	char *paths[] = {"tests/data/subgraph.onnx", "tests/data/meta.onnx", "examples/tiny_cnn.onnx", NULL};
	unsigned skipped = 0;
	ck_assert_uint_eq(rebuild_all(paths, &skipped), 0);
	ck_assert_uint_eq(skipped, 0);
}
END_TEST

/* ---- what the fixtures show about the IR ------------------------------- */

static IrModel *load_ok(const char *path)
{
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_load_file(path, NULL, &d);
	ck_assert_msg(m != NULL, "%s: %s", path, d.first);
	return m;
}

START_TEST(test_outer_scope_uses)
{
	IrModel *m = load_ok("tests/data/subgraph.onnx");
	/* x is read by Mul and Loop in the then-branch and by Sub in the else-branch */
	ValueId x = ir_lookup(m, IR_MAIN_GRAPH, "x");
	ck_assert_uint_ne(x, 0);
	IrValue *xv = ir_value(m, x);
	ck_assert_uint_eq(xv->nuses, 3);
	/* xk is defined in the then-branch and read two levels down, in the loop body */
	NodeId ifn = ir_first(m, IR_MAIN_GRAPH);
	ck_assert_str_eq(ir_node(m, ifn)->op_type, "If");
	const IrAttr *then_b = ir_attr(m, ifn, "then_branch");
	ck_assert_int_eq(then_b->type, ATTR_GRAPH);
	ValueId xk = ir_lookup(m, then_b->g, "xk");
	ck_assert_uint_ne(xk, 0);
	ck_assert_uint_eq(ir_lookup(m, IR_MAIN_GRAPH, "xk"), 0); /* not visible outside */
	ck_assert_uint_eq(ir_value(m, xk)->nuses, 1);
	NodeId add = ir_value(m, xk)->uses[0].node;
	ck_assert_str_eq(ir_node(m, add)->op_type, "Add");
	ck_assert_uint_ne(ir_node(m, add)->graph, then_b->g);
	ck_assert_uint_eq(ir_graph(m, ir_node(m, add)->graph)->parent, then_b->g);
	/* k is an initializer: a constant, not overridable */
	IrValue *k = ir_value(m, ir_lookup(m, IR_MAIN_GRAPH, "k"));
	ck_assert_uint_ne(k->tensor, 0);
	ck_assert(!k->is_input);
	ck_assert(ir_validate(m, &(Diag){0}));
	ir_model_free(m);
}
END_TEST

START_TEST(test_overridable_initializer)
{
	/* IR-3 conformance models list their initializers as graph inputs too */
	IrModel *m = load_ok(ONNX_TESTDATA "/pytorch-converted/test_Conv2d/model.onnx");
	unsigned overridable = 0;
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	for (uint32_t i = 0; i < g->ninits; i++) {
		IrValue *v = ir_value(m, g->inits[i]);
		ck_assert_uint_ne(v->tensor, 0);
		overridable += v->is_input;
	}
	ck_assert_uint_eq(overridable, g->ninits);
	ck_assert_uint_gt(g->ninits, 0);
	ir_model_free(m);
}
END_TEST

START_TEST(test_sparse_and_function_fixtures)
{
	IrModel *m = load_ok("tests/data/sparse.onnx");
	ValueId s = ir_lookup(m, IR_MAIN_GRAPH, "s");
	ck_assert_uint_ne(s, 0);
	ck_assert_ptr_nonnull(ir_value(m, s)->sparse);
	ck_assert_uint_eq(ir_value(m, s)->nuses, 1);
	ir_model_free(m);

	m = load_ok("tests/data/function.onnx");
	NodeId n = ir_first(m, IR_MAIN_GRAPH);
	ck_assert_str_eq(ir_node(m, n)->op_type, "Swish");
	ck_assert_str_eq(ir_node(m, n)->domain, "org.graft");
	ck_assert_int_eq(ir_node(m, n)->kind, OP_UNKNOWN);
	ck_assert_int_eq(ir_opset(m, "org.graft"), 1);
	ck_assert_int_eq(ir_opset(m, ""), 13);
	ir_model_free(m);
}
END_TEST

START_TEST(test_external_data_loaded)
{
	IrModel *m = load_ok("tests/data/ext/ext.onnx");
	IrValue *w = ir_value(m, ir_lookup(m, IR_MAIN_GRAPH, "w"));
	IrTensor *t = ir_tensor(m, w->tensor);
	ck_assert(t->external);
	ck_assert_int_eq(t->rank, 2);
	ck_assert_uint_eq(t->nbytes, 64 * 32 * 4);
	size_t n;
	uint8_t *file = read_file("tests/data/ext/weights.bin", &n);
	ck_assert_int_eq(memcmp(file + t->ext_offset, t->data, t->nbytes), 0);
	free(file);
	ir_model_free(m);
}
END_TEST

/* ---- saving ------------------------------------------------------------- */

static bool files_equal(const char *a, const char *b)
{
	size_t la, lb;
	uint8_t *x = read_file(a, &la), *y = read_file(b, &lb);
	bool same = x && y && la == lb && memcmp(x, y, la) == 0;
	free(x);
	free(y);
	return same;
}

START_TEST(test_save_external_roundtrip)
{
	/* A model with external data saved elsewhere writes its data to a file
	 * named after the output (never to the location read from the input),
	 * holding the same bytes at the same offsets (the input's data file is
	 * packed); the saved model loads back equal. */
	char *tmp = temp_dir();
	char out[512], data[512], old[512];
	snprintf(out, sizeof out, "%s/ext.onnx", tmp);
	snprintf(data, sizeof data, "%s/ext.onnx.data", tmp);
	snprintf(old, sizeof old, "%s/weights.bin", tmp);
	IrModel *m = load_ok("tests/data/ext/ext.onnx");
	Diag d;
	diag_init(&d, stderr);
	ck_assert(ir_save_file(m, out, NULL, &d));
	ck_assert(files_equal(data, "tests/data/ext/weights.bin"));
	ck_assert_int_eq(access(old, F_OK), -1);
	IrModel *back = load_ok(out);
	ck_assert_ptr_null(model_diff(m, back));
	ck_assert_str_eq(ir_tensor(back, ir_value(back, ir_lookup(back, IR_MAIN_GRAPH, "w"))->tensor)->ext_location,
	                 "ext.onnx.data");
	ir_model_free(back);
	ir_model_free(m);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_save_to_external_and_back)
{
	/* --external-data: tensors >= threshold go to OUT.data; loading that gives the same model. */
	char *tmp = temp_dir();
	char out[512], data[512], back[512];
	snprintf(out, sizeof out, "%s/cnn.onnx", tmp);
	snprintf(data, sizeof data, "%s/cnn.onnx.data", tmp);
	snprintf(back, sizeof back, "%s/cnn_inline.onnx", tmp);
	IrModel *m = load_ok("examples/tiny_cnn.onnx");
	Diag d;
	diag_init(&d, stderr);
	SaveOptions so = {.external = EXT_ALL, .ext_threshold = 256};
	ck_assert(ir_save_file(m, out, &so, &d));
	ir_model_free(m);
	struct stat st;
	ck_assert_int_eq(stat(data, &st), 0);
	/* conv1.w (8*3*3*3 floats), conv2.w (8*8*3*3) and fc.w (80 floats) are over
	 * 256 bytes, each at an offset aligned to 4096: 0, 4096, 8192 */
	ck_assert_int_eq(st.st_size, 2 * 4096 + 80 * 4);
	m = load_ok(out);
	IrValue *w = ir_value(m, ir_lookup(m, IR_MAIN_GRAPH, "conv2.w"));
	ck_assert(ir_tensor(m, w->tensor)->external);
	IrValue *b = ir_value(m, ir_lookup(m, IR_MAIN_GRAPH, "conv1.b"));
	ck_assert(!ir_tensor(m, b->tensor)->external);
	/* the external model round-trips byte-identically, data file included */
	char out2[512];
	snprintf(out2, sizeof out2, "%s/sub", tmp);
	mkdir(out2, 0777);
	snprintf(out2, sizeof out2, "%s/sub/cnn.onnx", tmp);
	ck_assert(ir_save_file(m, out2, NULL, &d));
	ck_assert(files_equal(out, out2));
	snprintf(out2, sizeof out2, "%s/sub/cnn.onnx.data", tmp);
	ck_assert(files_equal(data, out2));
	ir_model_free(m);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_save_over_limit_goes_external)
{
	/* Past the inline limit (2 GB in real use; 1 KB here) a plain save writes
	 * large tensors to OUT.data by itself, and the result loads back equal. */
	char *tmp = temp_dir();
	char out[512], data[512];
	snprintf(out, sizeof out, "%s/big.onnx", tmp);
	snprintf(data, sizeof data, "%s/big.onnx.data", tmp);
	IrModel *m = load_ok("examples/tiny_cnn.onnx");
	Diag d;
	diag_init(&d, stderr);
	SaveOptions so = {.inline_limit = 1024};
	ck_assert(ir_save_file(m, out, &so, &d));
	struct stat st;
	ck_assert_int_eq(stat(data, &st), 0);
	/* the tensors of 1 KiB or more: conv1.w (864 B) stays, conv2.w (2304 B) goes */
	ck_assert_int_eq(st.st_size, 8 * 8 * 9 * 4);
	IrModel *back = load_ok(out);
	const char *names[] = {"conv1.w", "conv2.w", "fc.w"};
	for (int i = 0; i < 3; i++) {
		size_t n1, n2;
		const uint8_t *a = ir_tensor_bytes(m, ir_value(m, ir_lookup(m, IR_MAIN_GRAPH, names[i]))->tensor, &n1);
		const uint8_t *b = ir_tensor_bytes(back, ir_value(back, ir_lookup(back, IR_MAIN_GRAPH, names[i]))->tensor, &n2);
		ck_assert_uint_eq(n1, n2);
		ck_assert_int_eq(memcmp(a, b, n1), 0);
	}
	ck_assert(ir_tensor(back, ir_value(back, ir_lookup(back, IR_MAIN_GRAPH, "conv2.w"))->tensor)->external);
	ir_model_free(back);
	ir_model_free(m);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_value_info_types)
{
	/* value_info fills the type of intermediate values */
	IrModel *m = load_ok("tests/data/meta.onnx");
	IrValue *t = ir_value(m, ir_lookup(m, IR_MAIN_GRAPH, "t"));
	ck_assert_int_eq(t->dtype, DT_FLOAT);
	ck_assert_int_eq(t->shape.rank, 2);
	ck_assert_str_eq(t->shape.dims[0].param, "N");
	ck_assert_int_eq(t->shape.dims[1].size, 4);
	ir_model_free(m);
}
END_TEST

START_TEST(test_save_refuses_input_path)
{
	char *tmp = temp_dir();
	char path[512];
	snprintf(path, sizeof path, "%s/m.onnx", tmp);
	size_t len;
	uint8_t *bytes = read_file("examples/tiny_cnn.onnx", &len);
	ck_assert(write_file(path, bytes, len));
	IrModel *m = load_ok(path);
	Diag d;
	diag_init(&d, NULL);
	ck_assert(!ir_save_file(m, path, NULL, &d));
	char expect[1400];
	snprintf(expect, sizeof expect, "%s: refusing to overwrite the input model '%s' (use --overwrite to allow it)",
	         path, path);
	ck_assert_str_eq(d.first, expect);
	SaveOptions so = {.overwrite_input = true};
	ck_assert(ir_save_file(m, path, &so, &d));
	ir_model_free(m);
	ck_assert(files_equal(path, "examples/tiny_cnn.onnx"));
	free(bytes);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_save_failure_leaves_nothing)
{
	/* An unwritable target: an error, no output, no temporary file left behind. */
	char *tmp = temp_dir();
	char path[512];
	snprintf(path, sizeof path, "%s/missing-dir/out.onnx", tmp);
	IrModel *m = load_ok("examples/tiny_cnn.onnx");
	Diag d;
	diag_init(&d, NULL);
	ck_assert(!ir_save_file(m, path, NULL, &d));
	char expect[700];
	snprintf(expect, sizeof expect, "%s: cannot write: No such file or directory", path);
	ck_assert_str_eq(d.first, expect);
	ir_model_free(m);
	/* the folder holds nothing */
	size_t n;
	char **left = find_models(tmp, &n);
	ck_assert_uint_eq(n, 0);
	paths_free(left);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

START_TEST(test_save_replaces_atomically)
{
	/* Saving over an existing (different) file replaces it whole. */
	char *tmp = temp_dir();
	char path[512];
	snprintf(path, sizeof path, "%s/out.onnx", tmp);
	ck_assert(write_file(path, "old contents", 12));
	IrModel *m = load_ok("examples/tiny_cnn.onnx");
	Diag d;
	diag_init(&d, stderr);
	ck_assert(ir_save_file(m, path, NULL, &d));
	ir_model_free(m);
	ck_assert(files_equal(path, "examples/tiny_cnn.onnx"));
	rm_rf(tmp);
	free(tmp);
}
END_TEST

/* ---- zero-copy loading (onnx_load.c, "zero-copy") ---- */

/* A model with one initializer of `n` floats and an Identity reading it;
 * `extra` unknown fields are added to the tensor (wire bytes, tag). */
static uint8_t *zc_model(size_t n, const ProtobufCMessageUnknownField *extra, unsigned nextra, size_t *len)
{
	Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
	int64_t dims[1] = {(int64_t)n};
	float *data = malloc(sizeof *data * n);
	for (size_t i = 0; i < n; i++)
		data[i] = (float)i * 0.5f;
	t.name = "w";
	t.n_dims = 1;
	t.dims = dims;
	t.has_data_type = 1;
	t.data_type = DT_FLOAT;
	t.has_raw_data = 1;
	t.raw_data.data = (uint8_t *)data;
	t.raw_data.len = sizeof *data * n;
	t.base.n_unknown_fields = nextra;
	t.base.unknown_fields = (ProtobufCMessageUnknownField *)extra;
	Onnx__TensorProto *inits[1] = {&t};
	Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
	char *in[1] = {"w"}, *out[1] = {"y"};
	node.op_type = "Identity";
	node.n_input = 1;
	node.input = in;
	node.n_output = 1;
	node.output = out;
	Onnx__NodeProto *nodes[1] = {&node};
	Onnx__ValueInfoProto y = ONNX__VALUE_INFO_PROTO__INIT;
	y.name = "y";
	Onnx__ValueInfoProto *outs[1] = {&y};
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "zc";
	g.n_node = 1;
	g.node = nodes;
	g.n_initializer = 1;
	g.initializer = inits;
	g.n_output = 1;
	g.output = outs;
	Onnx__OperatorSetIdProto op = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	op.has_version = 1;
	op.version = 17;
	Onnx__OperatorSetIdProto *ops[1] = {&op};
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	mp.has_ir_version = 1;
	mp.ir_version = 8;
	mp.graph = &g;
	mp.n_opset_import = 1;
	mp.opset_import = ops;
	*len = onnx__model_proto__get_packed_size(&mp);
	uint8_t *buf = malloc(*len);
	onnx__model_proto__pack(&mp, buf);
	free(data);
	return buf;
}

/* Load `buf` borrowing it and copying it: both must hold the same weight and
 * save the same bytes (those of the input if `identical`); returns whether
 * the borrowed load aliased the weight. */
static bool zc_check(const uint8_t *buf, size_t len, bool identical)
{
	Diag d;
	diag_init(&d, stderr);
	LoadOptions lo = {.borrow = true};
	IrModel *a = ir_load_bytes(buf, len, "zc.onnx", NULL, &lo, &d);
	IrModel *b = ir_load_bytes(buf, len, "zc.onnx", NULL, NULL, &d);
	ck_assert(a && b);
	const IrTensor *ta = ir_tensor(a, ir_value(a, ir_lookup(a, IR_MAIN_GRAPH, "w"))->tensor);
	const IrTensor *tb = ir_tensor(b, ir_value(b, ir_lookup(b, IR_MAIN_GRAPH, "w"))->tensor);
	ck_assert_uint_eq(ta->nbytes, tb->nbytes);
	ck_assert_int_eq(memcmp(ta->data, tb->data, ta->nbytes), 0);
	bool aliased = ta->data >= buf && ta->data < buf + len;
	ck_assert(!(tb->data >= buf && tb->data < buf + len)); /* the copying load never aliases */
	uint8_t *oa, *ob;
	size_t la, lb;
	ck_assert(ir_save_bytes(a, &oa, &la, &d));
	ck_assert(ir_save_bytes(b, &ob, &lb, &d));
	ck_assert_uint_eq(la, lb);
	ck_assert_int_eq(memcmp(oa, ob, la), 0);
	ck_assert(!identical || (la == len && memcmp(oa, buf, len) == 0));
	free(oa);
	free(ob);
	ir_model_free(a);
	ir_model_free(b);
	return aliased;
}

START_TEST(test_zero_copy_aliases)
{
	/* a weight of 4 KB stays in the caller's bytes; one of 16 B is copied */
	size_t len;
	uint8_t *buf = zc_model(1024, NULL, 0, &len);
	ck_assert(zc_check(buf, len, true));
	free(buf);
	buf = zc_model(4, NULL, 0, &len);
	ck_assert(!zc_check(buf, len, true));
	free(buf);
	/* a file that reads a tensor's bytes through ir_tensor_bytes gets them
	 * aligned for the element type, wherever the file put them */
	buf = zc_model(1024, NULL, 0, &len);
	Diag d;
	diag_init(&d, stderr);
	LoadOptions lo = {.borrow = true};
	IrModel *m = ir_load_bytes(buf, len, "zc.onnx", NULL, &lo, &d);
	size_t nb;
	const uint8_t *p = ir_tensor_bytes(m, ir_value(m, ir_lookup(m, IR_MAIN_GRAPH, "w"))->tensor, &nb);
	ck_assert_uint_eq((uintptr_t)p % sizeof(float), 0);
	ck_assert(((const float *)p)[1000] == 500.0f);
	ir_model_free(m);
	free(buf);
}
END_TEST

START_TEST(test_zero_copy_falls_back)
{
	/* The marker's field number already used in the file, and raw_data given
	 * twice (the last wins, and the save writes it once): the shortcut steps
	 * aside, and the model loads and saves exactly as without it. */
	uint8_t varint[1] = {7};
	ProtobufCMessageUnknownField mark = {536870911u, PROTOBUF_C_WIRE_TYPE_VARINT, 1, varint};
	size_t len;
	uint8_t *buf = zc_model(1024, &mark, 1, &len);
	ck_assert(!zc_check(buf, len, true));
	free(buf);
	/* 4096 bytes (0x80 0x20): length-prefixed unknown fields carry their prefix */
	static uint8_t field[4098] = {0x80, 0x20};
	memset(field + 2, 0x3f, 4096);
	ProtobufCMessageUnknownField again = {9, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, sizeof field, field};
	buf = zc_model(1024, &again, 1, &len);
	ck_assert(!zc_check(buf, len, false));
	free(buf);
}
END_TEST

Suite *suite_onnx(void)
{
	Suite *s = suite_create("onnx");
	TCase *tc = tcase_create("roundtrip");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_roundtrip_conformance);
	tcase_add_test(tc, test_roundtrip_corpus);
	tcase_add_test(tc, test_roundtrip_fixtures);
	tcase_add_test(tc, test_rebuild_conformance_nodes);
	tcase_add_test(tc, test_rebuild_fixture_nodes);
	suite_add_tcase(s, tc);
	tc = tcase_create("fixtures");
	tcase_add_test(tc, test_outer_scope_uses);
	tcase_add_test(tc, test_overridable_initializer);
	tcase_add_test(tc, test_sparse_and_function_fixtures);
	tcase_add_test(tc, test_external_data_loaded);
	tcase_add_test(tc, test_zero_copy_aliases);
	tcase_add_test(tc, test_zero_copy_falls_back);
	suite_add_tcase(s, tc);
	tc = tcase_create("save");
	tcase_add_test(tc, test_save_external_roundtrip);
	tcase_add_test(tc, test_save_to_external_and_back);
	tcase_add_test(tc, test_save_over_limit_goes_external);
	tcase_add_test(tc, test_value_info_types);
	tcase_add_test(tc, test_save_refuses_input_path);
	tcase_add_test(tc, test_save_failure_leaves_nothing);
	tcase_add_test(tc, test_save_replaces_atomically);
	suite_add_tcase(s, tc);
	return s;
}
