/* bench_load.c - `make bench`: load/save speed of the IR against bare
 * protobuf-c on the same bytes, in the same run.
 *
 * It generates a model of about 100 MB (a chain of 4,000 MatMul+Add+Relu
 * blocks over 25 KB weights, so both the node count and the bytes are real),
 * then times, best of N runs each:
 *   bare       onnx__model_proto__unpack + pack, nothing else
 *   load       ir_load_bytes (unpack, build and validate the IR)
 *   save       ir_save_bytes (emit from the IR, pack)
 *   load+save  both, the round trip graft does for every model
 * and the same through files (ir_load_file + ir_save_file).  The goal is
 * load+save within 1.5x of bare.  Figures go to BENCHMARKS.md by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/arena.h"
#include "ir/ir.h"
#include "gen/onnx.pb-c.h"

#define BLOCKS 4000
#define WEIGHT_FLOATS 6400 /* 80x80: 25,600 bytes */
#define RUNS 5

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t *generate(size_t *len)
{
	Arena *a = arena_new();
	Onnx__GraphProto g;
	onnx__graph_proto__init(&g);
	g.name = (char *)"bench";
	g.n_node = 3 * BLOCKS;
	g.node = arena_alloc(a, sizeof *g.node * g.n_node);
	g.n_initializer = 2 * BLOCKS;
	g.initializer = arena_alloc(a, sizeof *g.initializer * g.n_initializer);
	float *w = malloc(sizeof *w * WEIGHT_FLOATS);
	for (int i = 0; i < WEIGHT_FLOATS; i++)
		w[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
	static const int64_t wdims[] = {80, 80}, bdims[] = {80};
	const char *prev = "x";
	for (int b = 0; b < BLOCKS; b++) {
		const char *wn = arena_printf(a, "w%d", b), *bn = arena_printf(a, "b%d", b);
		const char *t0 = arena_printf(a, "mm%d", b), *t1 = arena_printf(a, "add%d", b);
		const char *t2 = b == BLOCKS - 1 ? "y" : arena_printf(a, "relu%d", b);
		const char *io[][3] = {{prev, wn, t0}, {t0, bn, t1}, {t1, NULL, t2}};
		const char *ops[] = {"MatMul", "Add", "Relu"};
		for (int k = 0; k < 3; k++) {
			Onnx__NodeProto *n = arena_alloc(a, sizeof *n);
			onnx__node_proto__init(n);
			n->op_type = (char *)ops[k];
			n->name = arena_printf(a, "%s_%d", ops[k], b);
			n->n_input = io[k][1] ? 2 : 1;
			n->input = arena_alloc(a, sizeof(char *) * 2);
			n->input[0] = (char *)io[k][0];
			n->input[1] = (char *)io[k][1];
			n->n_output = 1;
			n->output = arena_alloc(a, sizeof(char *));
			n->output[0] = (char *)io[k][2];
			g.node[3 * b + k] = n;
		}
		for (int k = 0; k < 2; k++) {
			Onnx__TensorProto *t = arena_alloc(a, sizeof *t);
			onnx__tensor_proto__init(t);
			t->name = (char *)(k ? bn : wn);
			t->has_data_type = 1;
			t->data_type = DT_FLOAT;
			t->n_dims = k ? 1 : 2;
			t->dims = (int64_t *)(k ? bdims : wdims);
			t->has_raw_data = 1;
			t->raw_data.data = (uint8_t *)w;
			t->raw_data.len = sizeof *w * (k ? 80 : WEIGHT_FLOATS);
			g.initializer[2 * b + k] = t;
		}
		prev = t2;
	}
	Onnx__ValueInfoProto x, y, *xs[] = {&x}, *ys[] = {&y};
	onnx__value_info_proto__init(&x);
	onnx__value_info_proto__init(&y);
	x.name = (char *)"x";
	y.name = (char *)"y";
	g.n_input = 1;
	g.input = xs;
	g.n_output = 1;
	g.output = ys;
	Onnx__OperatorSetIdProto op, *ops[] = {&op};
	onnx__operator_set_id_proto__init(&op);
	op.domain = (char *)"";
	op.has_version = 1;
	op.version = 13;
	Onnx__ModelProto m;
	onnx__model_proto__init(&m);
	m.has_ir_version = 1;
	m.ir_version = 8;
	m.n_opset_import = 1;
	m.opset_import = ops;
	m.graph = &g;
	*len = onnx__model_proto__get_packed_size(&m);
	uint8_t *buf = malloc(*len);
	onnx__model_proto__pack(&m, buf);
	free(w);
	arena_free(a);
	return buf;
}

typedef struct Times { double bare, load, save, both, file_both; } Times;

static double best(double a, double b) { return a < b ? a : b; }

int main(void)
{
	size_t len;
	uint8_t *bytes = generate(&len);
	const char *path = "build/bench-model.onnx", *out = "build/bench-model.out.onnx";
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "bench: cannot write %s\n", path);
		return 1;
	}
	printf("model: %.1f MB, %d nodes, %d initializers (%s)\n", (double)len / 1e6, 3 * BLOCKS, 2 * BLOCKS, path);
	Times t = {1e9, 1e9, 1e9, 1e9, 1e9};
	Diag d;
	diag_init(&d, stderr);
	for (int r = 0; r < RUNS; r++) {
		double t0 = now();
		Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
		size_t n = onnx__model_proto__get_packed_size(mp);
		uint8_t *buf = malloc(n);
		onnx__model_proto__pack(mp, buf);
		onnx__model_proto__free_unpacked(mp, NULL);
		free(buf);
		t.bare = best(t.bare, now() - t0);

		t0 = now();
		IrModel *m = ir_load_bytes(bytes, len, path, NULL, NULL, &d);
		double t1 = now();
		uint8_t *saved;
		size_t slen;
		if (!m || !ir_save_bytes(m, &saved, &slen, &d))
			return 1;
		double t2 = now();
		ir_model_free(m);
		if (slen != len || memcmp(saved, bytes, len) != 0) {
			fprintf(stderr, "bench: round trip is not byte-identical\n");
			return 1;
		}
		free(saved);
		t.load = best(t.load, t1 - t0);
		t.save = best(t.save, t2 - t1);
		t.both = best(t.both, t2 - t0);

		t0 = now();
		m = ir_load_file(path, NULL, &d);
		if (!m || !ir_save_file(m, out, NULL, &d))
			return 1;
		ir_model_free(m);
		t.file_both = best(t.file_both, now() - t0);
	}
	printf("best of %d runs, in memory:\n", RUNS);
	printf("  %-28s %8.1f ms\n", "bare protobuf-c unpack+pack", t.bare * 1e3);
	printf("  %-28s %8.1f ms\n", "graft load", t.load * 1e3);
	printf("  %-28s %8.1f ms\n", "graft save", t.save * 1e3);
	printf("  %-28s %8.1f ms   (%.2fx bare; goal <= 1.5x)\n", "graft load+save", t.both * 1e3, t.both / t.bare);
	printf("through files (load_file + save_file, temp file + rename):\n");
	printf("  %-28s %8.1f ms   (%.2fx bare)\n", "graft load+save", t.file_both * 1e3, t.file_both / t.bare);
	unlink(out);
	free(bytes);
	return t.both / t.bare <= 1.5 ? 0 : 1;
}
