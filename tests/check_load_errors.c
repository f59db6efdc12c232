/* check_load_errors.c - bad input to the ONNX loader: each case gives one
 * line naming the file and what is wrong (and the node or tensor), exactly as
 * asserted here, and no model.  The malformed models are built in the test
 * with protobuf-c (or as raw wire bytes where protobuf-c would refuse). */
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

/* "<path>: <rest>", the expected message for a file in tmp. */
static const char *expect(const char *path, const char *rest)
{
	return arena_printf(A, "%s: %s", path, rest);
}

/* ---- builders ----------------------------------------------------------- */

static char **strs(const char *const *s, size_t n)
{
	char **out = arena_alloc(A, sizeof *out * (n + 1));
	for (size_t i = 0; i < n; i++)
		out[i] = (char *)s[i];
	return out;
}

static Onnx__NodeProto *node(const char *op, const char *name, size_t nin, const char *const *in,
                             size_t nout, const char *const *out)
{
	Onnx__NodeProto *n = arena_alloc(A, sizeof *n);
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = (char *)name;
	n->n_input = nin;
	n->input = strs(in, nin);
	n->n_output = nout;
	n->output = strs(out, nout);
	return n;
}

static Onnx__ValueInfoProto *vinfo(const char *name)
{
	Onnx__ValueInfoProto *v = arena_alloc(A, sizeof *v);
	onnx__value_info_proto__init(v);
	v->name = (char *)name;
	return v;
}

static Onnx__GraphProto *graph(const char *name, size_t nnodes, Onnx__NodeProto **nodes,
                               const char *input, const char *output)
{
	Onnx__GraphProto *g = arena_alloc(A, sizeof *g);
	onnx__graph_proto__init(g);
	g->name = (char *)name;
	g->n_node = nnodes;
	g->node = arena_dup(A, nodes, sizeof *nodes * nnodes);
	if (input) {
		g->n_input = 1;
		g->input = arena_alloc(A, sizeof *g->input);
		g->input[0] = vinfo(input);
	}
	if (output) {
		g->n_output = 1;
		g->output = arena_alloc(A, sizeof *g->output);
		g->output[0] = vinfo(output);
	}
	return g;
}

static void add_initializer(Onnx__GraphProto *g, Onnx__TensorProto *t)
{
	Onnx__TensorProto **list = arena_alloc(A, sizeof *list * (g->n_initializer + 1));
	if (g->n_initializer)
		memcpy(list, g->initializer, sizeof *list * g->n_initializer);
	list[g->n_initializer++] = t;
	g->initializer = list;
}

static Onnx__TensorProto *tensor(const char *name, size_t rank, const int64_t *dims)
{
	Onnx__TensorProto *t = arena_alloc(A, sizeof *t);
	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = DT_FLOAT;
	t->n_dims = rank;
	t->dims = arena_dup(A, dims, sizeof *dims * rank);
	return t;
}

/* Write a model around g (opset 13 unless no_opset) to tmp/name; returns the path. */
static const char *write_model(const char *name, Onnx__GraphProto *g, bool no_opset)
{
	Onnx__ModelProto m;
	onnx__model_proto__init(&m);
	m.has_ir_version = 1;
	m.ir_version = 8;
	Onnx__OperatorSetIdProto op;
	onnx__operator_set_id_proto__init(&op);
	op.domain = (char *)"";
	op.has_version = 1;
	op.version = 13;
	Onnx__OperatorSetIdProto *ops[] = {&op};
	if (!no_opset) {
		m.n_opset_import = 1;
		m.opset_import = ops;
	}
	m.graph = g;
	size_t len = onnx__model_proto__get_packed_size(&m);
	uint8_t *buf = arena_alloc(A, len + 1);
	onnx__model_proto__pack(&m, buf);
	const char *path = tpath(name);
	ck_assert(write_file(path, buf, len));
	return path;
}

/* ---- files that are not models ----------------------------------------- */

START_TEST(test_missing_file)
{
	const char *p = tpath("nope.onnx");
	ck_assert_str_eq(load_error(p), expect(p, "cannot open: No such file or directory"));
}
END_TEST

START_TEST(test_directory)
{
	ck_assert_str_eq(load_error(tmp), expect(tmp, "cannot open: Is a directory"));
}
END_TEST

START_TEST(test_empty_file)
{
	const char *p = tpath("empty.onnx");
	ck_assert(write_file(p, "", 0));
	ck_assert_str_eq(load_error(p), expect(p, "not an ONNX model: the file is empty"));
}
END_TEST

START_TEST(test_random_bytes)
{
	uint8_t buf[4096];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof buf; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	const char *p = tpath("random.onnx");
	ck_assert(write_file(p, buf, sizeof buf));
	ck_assert_str_eq(load_error(p), expect(p, "not an ONNX model: protobuf parse failed (truncated or corrupt file)"));
}
END_TEST

START_TEST(test_tensor_not_model)
{
	/* a serialized TensorProto (a test input) is a protobuf, but not a model */
	const char *p = ONNX_TESTDATA "/node/test_abs/test_data_set_0/input_0.pb";
	ck_assert_str_eq(load_error(p), expect(p, "not an ONNX model: protobuf parse failed (truncated or corrupt file)"));
}
END_TEST

START_TEST(test_unknown_fields_only)
{
	/* field 99 (varint 1): a valid protobuf of some other message, which
	 * parses as a ModelProto with nothing in it */
	const uint8_t bytes[] = {0x98, 0x06, 0x01};
	const char *p = tpath("other.pb");
	ck_assert(write_file(p, bytes, sizeof bytes));
	ck_assert_str_eq(load_error(p), expect(p, "not an ONNX model: no graph"));
}
END_TEST

START_TEST(test_no_opset_import)
{
	const char *in[] = {"x"}, *out[] = {"y"};
	Onnx__NodeProto *n = node("Relu", "relu", 1, in, 1, out);
	const char *p = write_model("noopset.onnx", graph("g", 1, &n, "x", "y"), true);
	ck_assert_str_eq(load_error(p), expect(p, "not an ONNX model: no opset_import"));
}
END_TEST

/* Every prefix of a real model either fails with one line naming the file,
 * or loads as a valid IR (a cut at a field boundary is a valid protobuf). */
START_TEST(test_every_truncation)
{
	size_t len;
	uint8_t *bytes = read_file("examples/tiny_cnn.onnx", &len);
	ck_assert_ptr_nonnull(bytes);
	const char *p = tpath("cut.onnx");
	unsigned failed = 0, loaded = 0, parse = 0;
	for (size_t cut = 0; cut < len; cut++) {
		Diag d;
		diag_init(&d, NULL);
		IrModel *m = ir_load_bytes(bytes, cut, p, tmp, NULL, &d);
		if (m) {
			loaded++;
			ck_assert_msg(ir_validate(m, &d), "cut at %zu: %s", cut, d.first);
			ir_model_free(m);
			continue;
		}
		failed++;
		ck_assert_int_eq(d.nerrors, 1);
		ck_assert_msg(strncmp(d.first, p, strlen(p)) == 0 && !strchr(d.first, '\n'), "cut at %zu: %s", cut, d.first);
		parse += strstr(d.first, "protobuf parse failed") != NULL;
	}
	free(bytes);
	/* most cuts land inside a field; the rest must be caught by validation */
	ck_assert_uint_gt(parse, len / 2);
	ck_assert_uint_gt(failed - parse, 0);
	ck_assert_uint_eq(failed + loaded, len);
}
END_TEST

/* ---- models whose graph is wrong ---------------------------------------- */

START_TEST(test_input_names_no_value)
{
	const char *in[] = {"x", "w9"}, *out[] = {"y"};
	Onnx__NodeProto *n = node("Conv", "Conv_17", 2, in, 1, out);
	const char *p = write_model("noval.onnx", graph("g", 1, &n, "x", "y"), false);
	ck_assert_str_eq(load_error(p), expect(p, "node 'Conv_17': input 'w9' names no value"));
}
END_TEST

START_TEST(test_unnamed_node_label)
{
	/* unnamed nodes are named by op and position in the file */
	const char *in0[] = {"x"}, *out0[] = {"t"}, *in1[] = {"t", "bias"}, *out1[] = {"y"};
	Onnx__NodeProto *ns[] = {node("Relu", NULL, 1, in0, 1, out0), node("Add", NULL, 2, in1, 1, out1)};
	const char *p = write_model("unnamed.onnx", graph("g", 2, ns, "x", "y"), false);
	ck_assert_str_eq(load_error(p), expect(p, "node 'Add#1': input 'bias' names no value"));
}
END_TEST

START_TEST(test_output_names_no_value)
{
	const char *in[] = {"x"}, *out[] = {"y"};
	Onnx__NodeProto *n = node("Relu", "relu", 1, in, 1, out);
	const char *p = write_model("noout.onnx", graph("g", 1, &n, "x", "z"), false);
	ck_assert_str_eq(load_error(p), expect(p, "graph 'g': output 'z' names no value"));
}
END_TEST

START_TEST(test_duplicate_output)
{
	const char *in[] = {"x"}, *out[] = {"y"};
	Onnx__NodeProto *ns[] = {node("Relu", "a", 1, in, 1, out), node("Neg", "b", 1, in, 1, out)};
	const char *p = write_model("dup.onnx", graph("g", 2, ns, "x", "y"), false);
	ck_assert_str_eq(load_error(p), expect(p, "node 'b': output 'y' is already defined"));
}
END_TEST

START_TEST(test_cycle)
{
	const char *ina[] = {"x", "z"}, *outa[] = {"y"}, *inb[] = {"y"}, *outb[] = {"z"};
	Onnx__NodeProto *ns[] = {node("Add", "A", 2, ina, 1, outa), node("Relu", "B", 1, inb, 1, outb)};
	const char *p = write_model("cycle.onnx", graph("g", 2, ns, "x", "y"), false);
	ck_assert_str_eq(load_error(p), expect(p, "graph 'g': cycle through node 'A'"));
}
END_TEST

START_TEST(test_unsorted_but_acyclic)
{
	/* nodes out of order load fine; the saver writes them in a valid order */
	const char *in0[] = {"t"}, *out0[] = {"y"}, *in1[] = {"x"}, *out1[] = {"t"};
	Onnx__NodeProto *ns[] = {node("Neg", "second", 1, in0, 1, out0), node("Relu", "first", 1, in1, 1, out1)};
	const char *p = write_model("unsorted.onnx", graph("g", 2, ns, "x", "y"), false);
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(p, NULL, &d);
	ck_assert_ptr_nonnull(m);
	Arena *a = arena_new();
	Onnx__ModelProto *out = ir_emit(m, a, &d);
	ck_assert_str_eq(out->graph->node[0]->name, "first");
	ck_assert_str_eq(out->graph->node[1]->name, "second");
	arena_free(a);
	ir_model_free(m);
}
END_TEST

/* Raw wire bytes for depth nested If nodes: each graph holds one node whose
 * then_branch attribute holds the next graph.  Built outside-in in one pass
 * from precomputed lengths (protobuf-c itself would recurse that deep). */
static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint8_t *nested_model(int depth, size_t *len)
{
	/* innermost graph: empty.  Level k: Graph{1: Node{4:"If", 5: Attr{1:"then_branch", 20:5, 6: Graph_{k+1}}}} */
	static const uint8_t op[] = {0x22, 2, 'I', 'f'};
	static const uint8_t aname[] = {0x0a, 11, 't', 'h', 'e', 'n', '_', 'b', 'r', 'a', 'n', 'c', 'h', 0xa0, 0x01, 5};
	size_t *glen = calloc((size_t)depth + 2, sizeof *glen), *alen = calloc((size_t)depth + 2, sizeof *alen),
	       *nlen = calloc((size_t)depth + 2, sizeof *nlen);
	glen[depth] = 0;
	for (int k = depth - 1; k >= 0; k--) {
		alen[k] = sizeof aname + 1 + varint_len(glen[k + 1]) + glen[k + 1];
		nlen[k] = sizeof op + 1 + varint_len(alen[k]) + alen[k];
		glen[k] = 1 + varint_len(nlen[k]) + nlen[k];
	}
	const uint8_t header[] = {0x08, 8, 0x42, 2, 0x10, 13}; /* ir_version 8; opset_import {version 13} */
	size_t total = sizeof header + 1 + varint_len(glen[0]) + glen[0];
	uint8_t *buf = malloc(total), *p = buf;
	memcpy(p, header, sizeof header);
	p += sizeof header;
	*p++ = 0x3a; /* ModelProto.graph */
	p = put_varint(p, glen[0]);
	for (int k = 0; k < depth; k++) {
		*p++ = 0x0a; /* GraphProto.node */
		p = put_varint(p, nlen[k]);
		memcpy(p, op, sizeof op);
		p += sizeof op;
		*p++ = 0x2a; /* NodeProto.attribute */
		p = put_varint(p, alen[k]);
		memcpy(p, aname, sizeof aname);
		p += sizeof aname;
		*p++ = 0x32; /* AttributeProto.g */
		p = put_varint(p, glen[k + 1]);
	}
	ck_assert_uint_eq((size_t)(p - buf), total);
	free(glen);
	free(alen);
	free(nlen);
	*len = total;
	return buf;
}

START_TEST(test_nested_10000_deep)
{
	size_t len;
	uint8_t *bytes = nested_model(10000, &len);
	const char *p = tpath("deep.onnx");
	ck_assert(write_file(p, bytes, len));
	free(bytes);
	ck_assert_str_eq(load_error(p), expect(p, "subgraphs nested more than 64 levels deep"));
}
END_TEST

START_TEST(test_nested_within_limit)
{
	/* 60 levels load (If nodes without inputs are the schema's business, not the loader's) */
	size_t len;
	uint8_t *bytes = nested_model(60, &len);
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_bytes(bytes, len, "deep60", NULL, NULL, &d);
	ck_assert_msg(m != NULL, "%s", d.first);
	ck_assert_uint_eq(m->ngraphs - 1, 61);
	ir_model_free(m);
	free(bytes);
}
END_TEST

/* ---- tensors ------------------------------------------------------------ */

static const char *model_with_tensor(const char *name, Onnx__TensorProto *t)
{
	const char *in[] = {"x", t->name}, *out[] = {"y"};
	Onnx__NodeProto *n = node("Add", "add", 2, in, 1, out);
	Onnx__GraphProto *g = graph("g", 1, &n, "x", "y");
	add_initializer(g, t);
	return write_model(name, g, false);
}

START_TEST(test_numel_overflow)
{
	const int64_t dims[] = {INT64_C(1) << 40, INT64_C(1) << 40};
	const char *p = model_with_tensor("big.onnx", tensor("W", 2, dims));
	ck_assert_str_eq(load_error(p), expect(p, "tensor 'W': element count overflows int64"));
}
END_TEST

START_TEST(test_negative_dim)
{
	const int64_t dims[] = {3, -2};
	const char *p = model_with_tensor("neg.onnx", tensor("W", 2, dims));
	ck_assert_str_eq(load_error(p), expect(p, "tensor 'W': negative dimension -2"));
}
END_TEST

START_TEST(test_raw_data_size)
{
	const int64_t dims[] = {2, 2};
	Onnx__TensorProto *t = tensor("W", 2, dims);
	t->has_raw_data = 1;
	t->raw_data.len = 12;
	t->raw_data.data = arena_alloc(A, 12);
	const char *p = model_with_tensor("short.onnx", t);
	ck_assert_str_eq(load_error(p), expect(p, "tensor 'W': raw_data holds 12 bytes, dims need 16"));
}
END_TEST

static Onnx__TensorProto *external_tensor(const char *location)
{
	const int64_t dims[] = {4};
	Onnx__TensorProto *t = tensor("W", 1, dims);
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	t->n_external_data = 1;
	t->external_data = arena_alloc(A, sizeof *t->external_data);
	Onnx__StringStringEntryProto *kv = arena_alloc(A, sizeof *kv);
	onnx__string_string_entry_proto__init(kv);
	kv->key = (char *)"location";
	kv->value = (char *)location;
	t->external_data[0] = kv;
	return t;
}

START_TEST(test_external_outside_folder)
{
	const char *cases[] = {"../secret.bin", "/etc/passwd", "sub/../../secret.bin"};
	for (size_t i = 0; i < 3; i++) {
		const char *p = model_with_tensor("ext.onnx", external_tensor(cases[i]));
		const char *msg = arena_printf(A, "tensor 'W': external data location '%s' is outside the model's folder", cases[i]);
		ck_assert_str_eq(load_error(p), expect(p, msg));
	}
}
END_TEST

START_TEST(test_external_fifo)
{
	/* a FIFO as external data is refused at once: reading it would wait
	 * forever for a writer (issue 24) */
	ck_assert_int_eq(mkfifo(tpath("w.bin"), 0600), 0);
	const char *p = model_with_tensor("ext.onnx", external_tensor("w.bin"));
	ck_assert_str_eq(load_error(p), expect(p, "tensor 'W': external data 'w.bin': not a regular file"));
}
END_TEST

START_TEST(test_external_symlink_escape)
{
	/* a symlink inside the folder that points outside it is refused too */
	const char *link = tpath("w.bin");
	ck_assert_int_eq(symlink("/etc/hostname", link), 0);
	const char *p = model_with_tensor("ext.onnx", external_tensor("w.bin"));
	ck_assert_str_eq(load_error(p), expect(p, "tensor 'W': external data location 'w.bin' is outside the model's folder"));
}
END_TEST

START_TEST(test_external_missing_and_short)
{
	const char *p = model_with_tensor("ext.onnx", external_tensor("w.bin"));
	ck_assert_str_eq(load_error(p), expect(p, "tensor 'W': cannot read external data 'w.bin': No such file or directory"));
	ck_assert(write_file(tpath("w.bin"), "12345678", 8));
	ck_assert_str_eq(load_error(p), expect(p, "tensor 'W': external data 'w.bin' has 8 bytes at offset 0, dims need 16"));
}
END_TEST

START_TEST(test_external_huge_offset)
{
	/* offset + length past INT64_MAX: refused, not an int64 overflow
	 * (found by make fuzz-graph under UBSan) */
	ck_assert(write_file(tpath("w.bin"), "0123456789abcdef", 16));
	Onnx__TensorProto *t = external_tensor("w.bin");
	Onnx__StringStringEntryProto **kv = arena_alloc(A, sizeof *kv * 3);
	kv[0] = t->external_data[0];
	const char *keys[] = {"offset", "length"}, *vals[] = {"9223372036854775807", "16"};
	for (int i = 0; i < 2; i++) {
		kv[1 + i] = arena_alloc(A, sizeof **kv);
		onnx__string_string_entry_proto__init(kv[1 + i]);
		kv[1 + i]->key = (char *)keys[i];
		kv[1 + i]->value = (char *)vals[i];
	}
	t->external_data = kv;
	t->n_external_data = 3;
	const char *p = model_with_tensor("ext.onnx", t);
	ck_assert_str_eq(load_error(p), expect(p, "tensor 'W': external data 'w.bin' has 0 bytes at offset "
	                                          "9223372036854775807, dims need 16"));
}
END_TEST

/* ---- fuzz regressions: every seed and every crash input the fuzzer ever
 * found (tests/fuzz/load-seeds/, crashes saved as crash-*.onnx) loads to a
 * valid IR or fails with exactly one error line --------------------------- */

START_TEST(test_fuzz_seeds)
{
	size_t n;
	char **paths = find_models("tests/fuzz/load-seeds", &n);
	ck_assert_uint_ge(n, 12);
	for (char **p = paths; *p; p++) {
		size_t len;
		uint8_t *bytes = read_file(*p, &len);
		Diag d;
		diag_init(&d, NULL);
		IrModel *m = ir_load_bytes(bytes, len, *p, NULL, NULL, &d);
		if (m) {
			ck_assert_msg(ir_validate(m, &d), "%s: %s", *p, d.first);
			uint8_t *out;
			size_t outlen;
			ck_assert(ir_save_bytes(m, &out, &outlen, &d));
			free(out);
			ir_model_free(m);
		} else {
			ck_assert_int_eq(d.nerrors, 1);
		}
		free(bytes);
	}
	paths_free(paths);
}
END_TEST

START_TEST(test_fuzz_text_seeds)
{
	/* the text parser's seeds and saved crash inputs: no crash; a parse
	 * without errors gives a valid model */
	size_t n;
	char **paths = find_files("tests/fuzz/text-seeds", ".txt", &n);
	ck_assert_uint_ge(n, 6);
	for (char **p = paths; *p; p++) {
		size_t len;
		char *text = (char *)read_file(*p, &len);
		Diag d;
		diag_init(&d, NULL);
		IrModel *m = ir_parse_model(text, len, *p, &d);
		if (m && d.nerrors == 0)
			ck_assert_msg(ir_validate(m, &d), "%s: %s", *p, d.first);
		ir_model_free(m);
		free(text);
	}
	paths_free(paths);
}
END_TEST

/* ---- the CLI: one line on stderr, exit 1, nothing written ------------------ */

START_TEST(test_cli_bad_model)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	const char *p = tpath("empty.onnx"), *out = tpath("out.onnx"), *err = tpath("stderr.txt");
	ck_assert(write_file(p, "", 0));
	char *cmd = arena_printf(A, "%s roundtrip %s -o %s 2>%s", graft, p, out, err);
	int status = system(cmd);
	ck_assert_int_eq(WEXITSTATUS(status), 1);
	size_t len;
	char *text = (char *)read_file(err, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(arena_strndup(A, text, len), arena_printf(A, "%s\n", expect(p, "not an ONNX model: the file is empty")));
	free(text);
	ck_assert_int_ne(access(out, F_OK), 0);
	/* bad command line: exit 2 */
	status = system(arena_printf(A, "%s roundtrip %s 2>/dev/null", graft, "examples/tiny_cnn.onnx"));
	ck_assert_int_eq(WEXITSTATUS(status), 2);
	status = system(arena_printf(A, "%s frobnicate 2>/dev/null", graft));
	ck_assert_int_eq(WEXITSTATUS(status), 2);
}
END_TEST

Suite *suite_load_errors(void)
{
	Suite *s = suite_create("load_errors");
	TCase *tc = tcase_create("files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_directory);
	tcase_add_test(tc, test_empty_file);
	tcase_add_test(tc, test_random_bytes);
	tcase_add_test(tc, test_tensor_not_model);
	tcase_add_test(tc, test_unknown_fields_only);
	tcase_add_test(tc, test_no_opset_import);
	tcase_add_test(tc, test_every_truncation);
	suite_add_tcase(s, tc);
	tc = tcase_create("graphs");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_input_names_no_value);
	tcase_add_test(tc, test_unnamed_node_label);
	tcase_add_test(tc, test_output_names_no_value);
	tcase_add_test(tc, test_duplicate_output);
	tcase_add_test(tc, test_cycle);
	tcase_add_test(tc, test_unsorted_but_acyclic);
	tcase_add_test(tc, test_nested_10000_deep);
	tcase_add_test(tc, test_nested_within_limit);
	suite_add_tcase(s, tc);
	tc = tcase_create("tensors");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_numel_overflow);
	tcase_add_test(tc, test_negative_dim);
	tcase_add_test(tc, test_raw_data_size);
	tcase_add_test(tc, test_external_outside_folder);
	tcase_add_test(tc, test_external_symlink_escape);
	tcase_add_test(tc, test_external_fifo);
	tcase_add_test(tc, test_external_missing_and_short);
	tcase_add_test(tc, test_external_huge_offset);
	suite_add_tcase(s, tc);
	tc = tcase_create("fuzz");
	tcase_add_test(tc, test_fuzz_seeds);
	tcase_add_test(tc, test_fuzz_text_seeds);
	suite_add_tcase(s, tc);
	tc = tcase_create("cli");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cli_bad_model);
	suite_add_tcase(s, tc);
	return s;
}
