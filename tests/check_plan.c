/* check_plan.c - the static memory plan (runtime/plan): lifetimes, views,
 * in-place reuse, offsets and the three figures on small graphs worked out by
 * hand (docs/memory-plan.md walks through the first), reads from inside an
 * If's branches, symbolic input dims, and runs inside the planned arena that
 * must give the same bits as runs without it (under `make sanitize` the
 * arena's dead buffers are poisoned, so a kernel touching one fails). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "runtime/plan/plan.h"
#include "runtime/eval/run.h"
#include "testutil.h"

static IrModel *parse(const char *text)
{
	IrModel *m = parse_text_model(text);
	ck_assert_ptr_nonnull(m);
	return m;
}

static Plan plan_of(IrModel *m)
{
	Diag d;
	diag_init(&d, stderr);
	ck_assert(plan_bind_inputs(m, NULL, NULL, NULL, 0, &d));
	Plan p;
	ck_assert(plan_model(m, NULL, &p, &d));
	return p;
}

static const PlanTensor *tensor(const Plan *p, const char *name)
{
	for (uint32_t k = 0; k < p->ntensors; k++)
		if (strcmp(ir_value(p->m, p->tensors[k].value)->name, name) == 0)
			return &p->tensors[k];
	ck_abort_msg("no planned tensor '%s'", name);
	return NULL;
}

static size_t offset_of(const Plan *p, const char *name)
{
	return p->bufs[tensor(p, name)->buffer].offset;
}

/* Every pair of buffers alive at one step is apart in the arena, and the
 * arena holds them all. */
static void ck_disjoint(const Plan *p)
{
	size_t top = 0;
	for (uint32_t a = 0; a < p->nbufs; a++) {
		const PlanBuffer *x = &p->bufs[a];
		ck_assert_uint_eq(x->offset % PLAN_ALIGN, 0);
		if (x->offset + x->size > top)
			top = x->offset + x->size;
		for (uint32_t b = a + 1; b < p->nbufs; b++) {
			const PlanBuffer *y = &p->bufs[b];
			if (x->first <= y->last && y->first <= x->last)
				ck_assert_msg(x->offset + x->size <= y->offset || y->offset + y->size <= x->offset,
				              "buffers %u and %u overlap in time and in the arena", a, b);
		}
	}
	ck_assert_uint_eq(top, p->peak_bytes);
	ck_assert_uint_ge(p->peak_bytes, p->lower_bound_bytes);
}

/* Run m without and with its plan on the given inputs: the same bits. */
static void ck_run_in_plan(IrModel *m, EvValue **inputs, EvPlaceStats *st)
{
	Diag d;
	diag_init(&d, stderr);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	EvValue *plain[8] = {0}, *planned[8] = {0};
	ck_assert(g->noutputs <= 8);
	ck_assert(ev_run(m, (const EvValue *const *)inputs, g->ninputs, plain, NULL, &d));
	Plan p;
	ck_assert(plan_bind_values(m, inputs, &d));
	ck_assert(plan_model(m, NULL, &p, &d));
	EvPlacement pl;
	plan_placement(&p, &pl);
	EvOptions o = {.placement = &pl, .stats = st};
	ck_assert_msg(ev_run(m, (const EvValue *const *)inputs, g->ninputs, planned, &o, &d), "%s", d.first);
	for (uint32_t i = 0; i < g->noutputs; i++) {
		RunDiff r;
		run_compare_exact(plain[i], planned[i], &r);
		ck_assert_msg(r.agree, "output %u differs inside the plan", i);
		ev_unref(plain[i]);
		ev_unref(planned[i]);
	}
	plan_free(&p);
}

/* The worked example of docs/memory-plan.md. */
static const char *const example =
	"<ir_version: 8, opset_import: [\"\" : 13]>\n"
	"g (float[64] x) => (float[16] y) <int64[2] s = {4, 16}> {\n"
	"  a = Exp (x)\n"
	"  b = Sigmoid (a)\n"
	"  c = Add (a, b)\n"
	"  d = Reshape (c, s)\n"
	"  y = ReduceMean <axes = [0], keepdims = 0> (d)\n"
	"}\n";

START_TEST(test_worked_example)
{
	IrModel *m = parse(example);
	Plan p = plan_of(m);
	ck_assert_uint_eq(p.nsteps, 5);
	ck_assert_uint_eq(p.ntensors, 5);
	ck_assert_uint_eq(p.nskipped, 0);
	/* a lives 0-2; b 1-2; c over a (both die at Add), 2-3; d a view of c,
	 * 3-4; y, the output, 4 to the end */
	const PlanTensor *a = tensor(&p, "a"), *b = tensor(&p, "b"), *c = tensor(&p, "c"), *d = tensor(&p, "d"),
	                 *y = tensor(&p, "y");
	ck_assert_uint_eq(a->def, 0);
	ck_assert_uint_eq(a->last, 2);
	ck_assert_uint_eq(b->last, 2);
	ck_assert_int_eq(c->how, PLAN_INPLACE);
	ck_assert_str_eq(ir_value(m, c->over)->name, "a");
	ck_assert_int_eq(d->how, PLAN_VIEW);
	ck_assert_str_eq(ir_value(m, d->over)->name, "c");
	ck_assert_uint_eq(y->last, 5);
	ck_assert_uint_eq(y->nbytes, 64);
	ck_assert_uint_eq(a->nbytes, 256);
	/* three buffers: {a, c, d} 256 B over steps 0-4, {b} 256 B over 1-2,
	 * {y} 64 B over 4-end */
	ck_assert_uint_eq(p.nbufs, 3);
	ck_assert_uint_eq(p.ninplace, 1);
	ck_assert_uint_eq(p.nviews, 1);
	ck_assert_uint_eq(p.naive_bytes, 4 * 256 + 64);
	ck_assert_uint_eq(p.lower_bound_bytes, 512); /* a and b at steps 1 and 2 */
	ck_assert_uint_eq(p.bound_step, 1);
	ck_assert_uint_eq(p.peak_bytes, 512);
	ck_assert_uint_eq(offset_of(&p, "a"), 0);
	ck_assert_uint_eq(offset_of(&p, "c"), 0);
	ck_assert_uint_eq(offset_of(&p, "d"), 0);
	ck_assert_uint_eq(offset_of(&p, "b"), 256);
	ck_assert_uint_eq(offset_of(&p, "y"), 256); /* b's place, free again after step 2 */
	ck_disjoint(&p);
	plan_free(&p);

	/* without aliasing: five buffers, the bound and the arena grow */
	Diag dg;
	diag_init(&dg, stderr);
	ck_assert(plan_model(m, &(PlanOptions){.no_alias = true}, &p, &dg));
	ck_assert_uint_eq(p.nbufs, 5);
	ck_assert_uint_eq(p.ninplace + p.nviews, 0);
	ck_assert_uint_eq(p.lower_bound_bytes, 768); /* a, b and c at step 2 */
	ck_assert_uint_eq(p.peak_bytes, 768);
	ck_disjoint(&p);
	plan_free(&p);
	ir_model_free(m);
}
END_TEST

START_TEST(test_worked_example_runs_in_plan)
{
	IrModel *m = parse(example);
	int64_t dims[1] = {64};
	EvValue *x = ev_tensor_new(DT_FLOAT, 1, dims);
	for (int i = 0; i < 64; i++)
		((float *)x->data)[i] = (float)(i - 20) / 7.0f;
	EvValue *inputs[2] = {x, NULL};
	EvPlaceStats st;
	ck_run_in_plan(m, inputs, &st);
	/* a, b, c (over a) and y written by their kernels at their places; d a view */
	ck_assert_uint_eq(st.direct, 4);
	ck_assert_uint_eq(st.inplace, 1);
	ck_assert_uint_eq(st.views, 1);
	ck_assert_uint_eq(st.copied, 0);
	ev_unref(x);
	ir_model_free(m);
}
END_TEST

/* A wrong plan does not go unnoticed: b moved onto a's buffer while a is
 * still to be read (by c = a + b) changes c, so the outputs differ.  Under
 * ASan it stops sooner: b's buffer is poisoned when b dies, over bytes that
 * c, written in place over a, still holds (an exit test there). */
START_TEST(test_wrong_plan_is_caught)
{
	IrModel *m = parse(example);
	Plan p = plan_of(m);
	Diag d;
	diag_init(&d, stderr);
	int64_t dims[1] = {64};
	EvValue *x = ev_tensor_new(DT_FLOAT, 1, dims);
	for (int i = 0; i < 64; i++)
		((float *)x->data)[i] = (float)(i - 20) / 7.0f;
	EvValue *inputs[2] = {x, NULL}, *plain[1], *planned[1];
	ck_assert(ev_run(m, (const EvValue *const *)inputs, 1, plain, NULL, &d));
	EvPlacement pl;
	plan_placement(&p, &pl);
	ValueId b = tensor(&p, "b")->value;
	int64_t *offset = malloc(sizeof *offset * m->nvalues);
	size_t *buf_offset = malloc(sizeof *buf_offset * p.nbufs);
	memcpy(offset, p.offset, sizeof *offset * m->nvalues);
	memcpy(buf_offset, p.buf_offset, sizeof *buf_offset * p.nbufs);
	offset[b] = 0;
	buf_offset[tensor(&p, "b")->buffer] = 0;
	pl.offset = offset;
	pl.buf_offset = buf_offset;
	EvOptions o = {.placement = &pl};
#if defined(__SANITIZE_ADDRESS__)
	fprintf(stderr, "note: test_wrong_plan_is_caught: the AddressSanitizer report below is expected\n");
#endif
	ck_assert(ev_run(m, (const EvValue *const *)inputs, 1, planned, &o, &d));
	RunDiff r;
	run_compare_exact(plain[0], planned[0], &r);
	ck_assert(!r.agree);
	ev_unref(plain[0]);
	ev_unref(planned[0]);
	free(offset);
	free(buf_offset);
	plan_free(&p);
	ev_unref(x);
	ir_model_free(m);
}
END_TEST

#if defined(__SANITIZE_ADDRESS__)
/* Under ASan a buffer is poisoned after its last step: a plan that ends a's
 * life at step 0, while Sigmoid reads it at step 1, stops the run with an
 * ASan report (expected below in `make sanitize`'s output). */
START_TEST(test_asan_catches_dead_reads)
{
	IrModel *m = parse(example);
	Plan p = plan_of(m);
	Diag d;
	diag_init(&d, stderr);
	int64_t dims[1] = {64};
	EvValue *x = ev_tensor_new(DT_FLOAT, 1, dims), *inputs[2] = {x, NULL}, *planned[1];
	EvPlacement pl;
	plan_placement(&p, &pl);
	uint32_t *last = malloc(sizeof *last * p.nbufs);
	memcpy(last, p.buf_last, sizeof *last * p.nbufs);
	last[tensor(&p, "a")->buffer] = 0;
	pl.buf_last = last;
	EvOptions o = {.placement = &pl};
	fprintf(stderr, "note: test_asan_catches_dead_reads: the AddressSanitizer report below is expected\n");
	ev_run(m, (const EvValue *const *)inputs, 1, planned, &o, &d);
	ck_abort_msg("a read of a poisoned buffer ran on");
}
END_TEST
#endif

/* A value read only inside If's branches lives until the If has run. */
START_TEST(test_body_reads_extend_lifetime)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[16] x, bool c) => (float[16] y) {\n"
	                   "  a = Exp (x)\n"
	                   "  b = Neg (x)\n"
	                   "  r = If (c) <then_branch: graph = t () => (float[16] u) { u = Add (a, a) },\n"
	                   "              else_branch: graph = e () => (float[16] v) { v = Sqrt (a) }>\n"
	                   "  y = Add (r, b)\n"
	                   "}\n");
	Plan p = plan_of(m);
	ck_assert_uint_eq(p.nsteps, 4);
	ck_assert_uint_eq(tensor(&p, "a")->last, 2); /* the If's step, not 0 */
	ck_assert_uint_eq(tensor(&p, "b")->last, 3);
	ck_assert_int_eq(tensor(&p, "y")->how, PLAN_INPLACE); /* over r, which dies at y */
	ck_assert_str_eq(ir_value(m, tensor(&p, "y")->over)->name, "r");
	/* a, b and r alive at step 2 */
	ck_assert_uint_eq(p.lower_bound_bytes, 3 * 64);
	ck_assert_uint_eq(p.peak_bytes, 3 * 64);
	ck_assert_uint_ne(offset_of(&p, "a"), offset_of(&p, "b"));
	ck_assert_uint_ne(offset_of(&p, "a"), offset_of(&p, "r"));
	ck_disjoint(&p);
	plan_free(&p);
	int64_t dims[1] = {16};
	for (int branch = 0; branch < 2; branch++) {
		EvValue *x = ev_tensor_new(DT_FLOAT, 1, dims), *c = ev_tensor_new(DT_BOOL, 0, NULL);
		for (int i = 0; i < 16; i++)
			((float *)x->data)[i] = (float)i * 0.25f - 1;
		((uint8_t *)c->data)[0] = (uint8_t)branch;
		EvValue *inputs[2] = {x, c};
		EvPlaceStats st;
		ck_run_in_plan(m, inputs, &st);
		ev_unref(x);
		ev_unref(c);
	}
	ir_model_free(m);
}
END_TEST

/* Shape reads the dims, not the bytes: a's bytes die at Neg, which writes
 * over them, though Shape (a) runs later. */
START_TEST(test_shape_reads_no_bytes)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[2,8] x) => (float[2,8] y) {\n"
	                   "  a = Exp (x)\n"
	                   "  b = Neg (a)\n"
	                   "  s = Shape (a)\n"
	                   "  y = Reshape (b, s)\n"
	                   "}\n");
	Plan p = plan_of(m);
	ck_assert_uint_eq(tensor(&p, "a")->last, 1);
	ck_assert_int_eq(tensor(&p, "b")->how, PLAN_INPLACE);
	ck_assert_int_eq(tensor(&p, "y")->how, PLAN_VIEW);
	ck_assert_uint_eq(p.nbufs, 2); /* {a, b, y} and s */
	ck_assert_uint_eq(p.peak_bytes, 128);
	plan_free(&p);
	int64_t dims[2] = {2, 8};
	EvValue *x = ev_tensor_new(DT_FLOAT, 2, dims);
	for (int i = 0; i < 16; i++)
		((float *)x->data)[i] = (float)i / 3;
	EvValue *inputs[1] = {x};
	EvPlaceStats st;
	ck_run_in_plan(m, inputs, &st);
	ck_assert_uint_eq(st.inplace, 1);
	ck_assert_uint_eq(st.views, 1);
	ev_unref(x);
	ir_model_free(m);
}
END_TEST

/* A Cast to the input's own type is a view; to another type it is not, and
 * a view keeps its buffer alive for the later reads of its input. */
START_TEST(test_cast_views)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[8] x) => (float[8] y, int32[8] z) {\n"
	                   "  a = Exp (x)\n"
	                   "  b = Cast <to = 1> (a)\n"
	                   "  y = Neg (b)\n"
	                   "  z = Cast <to = 6> (a)\n"
	                   "}\n");
	Plan p = plan_of(m);
	ck_assert_int_eq(tensor(&p, "b")->how, PLAN_VIEW);
	ck_assert_int_eq(tensor(&p, "y")->how, PLAN_OWN); /* a is read again by z */
	ck_assert_int_eq(tensor(&p, "z")->how, PLAN_OWN);
	ck_assert_uint_eq(p.nbufs, 3);
	ck_assert_uint_eq(p.lower_bound_bytes, 192); /* {a, b}, y and z at step 3 */
	ck_assert_uint_eq(p.peak_bytes, 192);
	plan_free(&p);
	int64_t dims[1] = {8};
	EvValue *x = ev_tensor_new(DT_FLOAT, 1, dims);
	for (int i = 0; i < 8; i++)
		((float *)x->data)[i] = (float)i - 2.5f;
	EvValue *inputs[1] = {x};
	EvPlaceStats st;
	ck_run_in_plan(m, inputs, &st);
	ck_assert_uint_eq(st.views, 1);
	ev_unref(x);
	ir_model_free(m);
}
END_TEST

/* Values the plan leaves out, each with its reason, and graph outputs kept
 * to the end. */
START_TEST(test_not_planned)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[4] x) => (float[4] y, int64[1] n) {\n"
	                   "  z = NonZero (x)\n"
	                   "  n = Shape (x)\n"
	                   "  y = Relu (x)\n"
	                   "}\n");
	Plan p = plan_of(m);
	ck_assert_uint_eq(p.ntensors, 2);
	ck_assert_uint_eq(p.nskipped, 1);
	ck_assert_str_eq(ir_value(m, p.skipped[0].value)->name, "z");
	ck_assert_str_eq(p.skipped[0].why, "dim unknown before running");
	ck_assert_uint_eq(tensor(&p, "n")->last, 3);
	ck_assert_uint_eq(tensor(&p, "y")->last, 3);
	ck_assert_int_eq(tensor(&p, "y")->how, PLAN_OWN); /* x is a graph input: never overwritten */
	ck_assert_uint_eq(p.peak_bytes, 128);
	plan_free(&p);
	ir_model_free(m);
}
END_TEST

START_TEST(test_symbolic_inputs)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[N,4] x) => (float[N,4] y) {\n"
	                   "  t = Exp (x)\n"
	                   "  y = Neg (t)\n"
	                   "}\n");
	char buf[256];
	ck_assert(plan_unknown_inputs(m, buf, sizeof buf));
	ck_assert_str_eq(buf, "x[N,4]");
	Diag d;
	diag_init(&d, NULL);
	const char *names[1] = {"x"};
	int64_t bad[3] = {2, 4, 1}, wrong[2] = {2, 5}, good[2] = {8, 4};
	const int64_t *dims[1] = {bad};
	int ranks[1] = {3};
	ck_assert(!plan_bind_inputs(m, names, dims, ranks, 1, &d));
	ck_assert_str_eq(d.first, "t.onnx: input 'x': rank 3 given, the model says 2");
	diag_init(&d, NULL);
	dims[0] = wrong;
	ranks[0] = 2;
	ck_assert(!plan_bind_inputs(m, names, dims, ranks, 1, &d));
	ck_assert_str_eq(d.first, "t.onnx: input 'x': dim 1 is 4, 5 given");
	diag_init(&d, NULL);
	const char *nobody[1] = {"z"};
	ck_assert(!plan_bind_inputs(m, nobody, dims, ranks, 1, &d));
	ck_assert_str_eq(d.first, "t.onnx: --input-shape: 'z' is not an input of the main graph");
	diag_init(&d, NULL);
	dims[0] = good;
	ck_assert_msg(plan_bind_inputs(m, names, dims, ranks, 1, &d), "%s", d.first);
	ck_assert(!plan_unknown_inputs(m, buf, sizeof buf));
	Plan p;
	ck_assert(plan_model(m, NULL, &p, &d));
	ck_assert_uint_eq(tensor(&p, "t")->nbytes, 8 * 4 * 4);
	ck_assert_int_eq(tensor(&p, "y")->how, PLAN_INPLACE);
	ck_assert_uint_eq(p.peak_bytes, 128);
	ck_assert_uint_eq(p.lower_bound_bytes, 128);
	plan_free(&p);
	ir_model_free(m);
}
END_TEST

/* Chains of in-place outputs, two of them graph outputs (which keep their
 * buffer to the end): three buffers, {a, c, z} 128 B, {b, e, y} 192 B and
 * {d} 192 B; a, b and d are alive together at steps 3 and 4. */
START_TEST(test_inplace_chains)
{
	IrModel *m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[32] x, float[48] w) => (float[48] y, float[32] z) {\n"
	                   "  a = Exp (x)\n"
	                   "  b = Exp (w)\n"
	                   "  c = Neg (a)\n"
	                   "  d = Sqrt (w)\n"
	                   "  e = Add (b, d)\n"
	                   "  y = Neg (e)\n"
	                   "  z = Abs (c)\n"
	                   "}\n");
	Plan p = plan_of(m);
	ck_assert_uint_eq(p.nbufs, 3);
	ck_assert_uint_eq(p.ninplace, 4);
	ck_assert_str_eq(ir_value(m, tensor(&p, "c")->over)->name, "a");
	ck_assert_str_eq(ir_value(m, tensor(&p, "e")->over)->name, "b"); /* the first input that dies there */
	ck_assert_str_eq(ir_value(m, tensor(&p, "y")->over)->name, "e");
	ck_assert_str_eq(ir_value(m, tensor(&p, "z")->over)->name, "c");
	ck_assert_int_eq(tensor(&p, "d")->how, PLAN_OWN);
	ck_assert_uint_eq(tensor(&p, "y")->last, 7);
	ck_assert_uint_eq(p.naive_bytes, 128 * 3 + 192 * 4);
	ck_assert_uint_eq(p.lower_bound_bytes, 512);
	ck_assert_uint_eq(p.bound_step, 3);
	ck_assert_uint_eq(p.peak_bytes, 512);
	/* by size: b's buffer at 0, d's above it, a's on top */
	ck_assert_uint_eq(offset_of(&p, "b"), 0);
	ck_assert_uint_eq(offset_of(&p, "d"), 192);
	ck_assert_uint_eq(offset_of(&p, "a"), 384);
	ck_disjoint(&p);
	plan_free(&p);
	int64_t dx[1] = {32}, dw[1] = {48};
	EvValue *x = ev_tensor_new(DT_FLOAT, 1, dx), *w = ev_tensor_new(DT_FLOAT, 1, dw);
	for (int i = 0; i < 48; i++) {
		if (i < 32)
			((float *)x->data)[i] = (float)i / 9 - 1;
		((float *)w->data)[i] = (float)i / 5;
	}
	EvValue *inputs[2] = {x, w};
	EvPlaceStats st;
	ck_run_in_plan(m, inputs, &st);
	ck_assert_uint_eq(st.inplace, 4);
	ck_assert_uint_eq(st.direct, 7);
	ev_unref(x);
	ev_unref(w);
	ir_model_free(m);
}
END_TEST

/* The demo model: a real CNN; every conflicting pair apart, same bits. */
START_TEST(test_tiny_cnn)
{
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_load_file("examples/tiny_cnn.onnx", NULL, &d);
	ck_assert_ptr_nonnull(m);
	EvValue *inputs[8] = {0};
	RunOptions ro = {.int_hi = 100};
	ck_assert(ir_graph(m, IR_MAIN_GRAPH)->ninputs <= 8);
	ck_assert(run_prepare_inputs(m, &ro, inputs, &d));
	EvPlaceStats st;
	ck_run_in_plan(m, inputs, &st);
	Plan p;
	ck_assert(plan_model(m, NULL, &p, &d));
	ck_disjoint(&p);
	ck_assert_uint_lt(p.peak_bytes, p.naive_bytes);
	ck_assert_uint_eq(st.direct + st.copied + st.views, p.ntensors);
	plan_free(&p);
	for (int i = 0; i < 8; i++)
		ev_unref(inputs[i]);
	ir_model_free(m);
}
END_TEST

/* graft plan --json and graft optimize --report's memory_plan. */
START_TEST(test_cli)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *tmp = temp_dir();
	char cmd[2048], path[600];
	IrModel *m = parse(example);
	snprintf(path, sizeof path, "%s/ex.onnx", tmp);
	Diag d;
	diag_init(&d, NULL);
	ck_assert(ir_save_file(m, path, &(SaveOptions){0}, &d));
	ir_model_free(m);
	snprintf(cmd, sizeof cmd, "%s plan %s --json > %s/plan.json", graft, path, tmp);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/plan.json", tmp);
	size_t len;
	char *text = (char *)read_file(cmd, &len);
	text = realloc(text, len + 1);
	text[len] = 0;
	ck_assert_msg(strstr(text, "\"peak_bytes\": 512,") && strstr(text, "\"lower_bound_bytes\": 512,") &&
	              strstr(text, "\"naive_bytes\": 1088,") && strstr(text, "\"how\": \"in-place\",\n   \"over\": \"a\"\n"),
	              "%s", text);
	free(text);
	snprintf(cmd, sizeof cmd, "%s run %s --plan > %s/run.txt", graft, path, tmp);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/run.txt", tmp);
	text = (char *)read_file(cmd, &len);
	text = realloc(text, len + 1);
	text[len] = 0;
	ck_assert_msg(strstr(text, "plan: one arena of 512 bytes (lower bound 512, naive 1088;") &&
	              strstr(text, "4 written into place by their kernel (1 of them over their input), 0 copied into place, "
	                           "1 views; 0 not planned\n") &&
	              strstr(text, "plan: every output is bit-identical to the run without the plan\n"),
	              "%s", text);
	free(text);
	snprintf(cmd, sizeof cmd, "%s optimize examples/tiny_cnn.onnx -o %s/o.onnx --report %s/r.json 2>/dev/null", graft,
	         tmp, tmp);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/r.json", tmp);
	text = (char *)read_file(cmd, &len);
	text = realloc(text, len + 1);
	text[len] = 0;
	char *mp = strstr(text, "\"memory_plan\": {");
	ck_assert_msg(mp && strstr(mp, "\"before\": {") && strstr(mp, "\"after\": {") && strstr(mp, "\"peak_bytes\":"),
	              "%s", text);
	free(text);
	/* symbolic dims are named, not guessed */
	m = parse("<ir_version: 8, opset_import: [\"\" : 13]>\n"
	          "g (float[N,4] x) => (float[N,4] y) {\n  y = Exp (x)\n}\n");
	snprintf(path, sizeof path, "%s/sym.onnx", tmp);
	ck_assert(ir_save_file(m, path, &(SaveOptions){0}, &d));
	ir_model_free(m);
	snprintf(cmd, sizeof cmd, "%s plan %s 2> %s/err.txt", graft, path, tmp);
	ck_assert_int_eq(WEXITSTATUS(system(cmd)), 1);
	snprintf(cmd, sizeof cmd, "%s/err.txt", tmp);
	text = (char *)read_file(cmd, &len);
	text = realloc(text, len + 1);
	text[len] = 0;
	char want[1024];
	snprintf(want, sizeof want, "%s: input dims unknown: x[N,4]; give each with --input-shape NAME=D0,D1,...\n", path);
	ck_assert_str_eq(text, want);
	free(text);
	snprintf(cmd, sizeof cmd, "%s plan %s --input-shape x=3,4 --summary > /dev/null", graft, path);
	ck_assert_int_eq(system(cmd), 0);
	rm_rf(tmp);
	free(tmp);
}
END_TEST

Suite *suite_plan(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("plan");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_worked_example);
	tcase_add_test(tc, test_worked_example_runs_in_plan);
#if defined(__SANITIZE_ADDRESS__)
	/* ASan stops the process (exit 1): only where each test has its own */
	if (!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no") != 0) {
		tcase_add_exit_test(tc, test_wrong_plan_is_caught, 1);
		tcase_add_exit_test(tc, test_asan_catches_dead_reads, 1);
	}
#else
	tcase_add_test(tc, test_wrong_plan_is_caught);
#endif
	tcase_add_test(tc, test_body_reads_extend_lifetime);
	tcase_add_test(tc, test_shape_reads_no_bytes);
	tcase_add_test(tc, test_cast_views);
	tcase_add_test(tc, test_not_planned);
	tcase_add_test(tc, test_symbolic_inputs);
	tcase_add_test(tc, test_inplace_chains);
	tcase_add_test(tc, test_tiny_cnn);
	tcase_add_test(tc, test_cli);
	suite_add_tcase(s, tc);
	return s;
}
