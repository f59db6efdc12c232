/* nhwc.c - `graft optimize --layout nhwc` (CATALOGUE.md J125, J126): the
 * layout-sensitive nodes of the main graph are put in channels-last form,
 * each between two Transposes, and the engine's push-transpose pass
 * (layout.c) then cancels the Transposes that meet between them, so the
 * activations flow channels-last with Transposes left only at the boundary
 * (graph inputs and outputs) and around the nodes that have no
 * channels-last form.  rw_run calls layout_nhwc_node for each node once the
 * other rewrites reach their fixpoint (docs/engine.md).
 *
 * Standard ONNX has no channels-last Conv, so a Conv becomes ONNX Runtime's
 * com.microsoft NhwcConv (weights [M, kH, kW, C/group]): the result runs
 * only where that op has a kernel (ONNX Runtime's CUDA provider, and graft's
 * evaluator; not ONNX Runtime's CPU provider, which registers NhwcConv for
 * no element type).  GlobalAveragePool becomes ReduceMean over the spatial
 * axes and an inference BatchNormalization with constant parameters a Mul
 * and an Add by per-channel constants: standard ops the Transposes move
 * through.  MaxPool, AveragePool and the rest stay channels-first between
 * Transposes:
 * ONNX Runtime's channels-last pools (NhwcMaxPool, QLinear*) take 8-bit
 * integers only. */
#include "layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		abort();
	return q;
}

static bool is_std(const IrNode *n)
{
	return !*n->domain || !strcmp(n->domain, "ai.onnx");
}

static NodeId transpose(IrModel *m, GraphId g, NodeId before, ValueId x, const int64_t *perm, int rank,
                        const char *out_name)
{
	NodeId t = ir_node_new(m, g, before, "", "Transpose", "", &x, 1, &out_name, 1);
	if (t)
		ir_attr_set_ints(m, t, "perm", perm, (size_t)rank);
	return t;
}

static const int64_t TO_NHWC[4] = {0, 2, 3, 1}, TO_NCHW[4] = {0, 3, 1, 2};

/* x channels-last for node n: the input of the Transpose to channels-first
 * that made x (an earlier conversion's, met here at once rather than left to
 * push-transpose, which could as well move the pair the other way), else a
 * new Transpose.  *bypassed: that Transpose, or 0. */
static ValueId nhwc_input(IrModel *m, NodeId n, ValueId x, LayoutChange *c, NodeId *bypassed)
{
	*bypassed = 0;
	NodeId p = ir_value(m, x)->producer;
	const IrAttr *a = p ? ir_attr(m, p, "perm") : NULL;
	if (p && ir_node(m, p)->kind == OP_Transpose && is_std(ir_node(m, p)) && a && a->type == ATTR_INTS &&
	    a->n == 4 && !memcmp(a->ints, TO_NCHW, sizeof TO_NCHW)) {
		*bypassed = p;
		return ir_node(m, p)->inputs[0];
	}
	NodeId t = transpose(m, IR_MAIN_GRAPH, n, x, TO_NHWC, 4, NULL);
	layout_change_created(c, t);
	return ir_node(m, t)->outputs[0];
}

/* A float constant's data (n elements), or NULL. */
static const float *const_floats(IrModel *m, ValueId v, int64_t n)
{
	IrValue *val = ir_value(m, v);
	if (!v || !ir_is_constant(m, v) || !val->tensor || ir_tensor(m, val->tensor)->dtype != DT_FLOAT ||
	    ir_tensor(m, val->tensor)->numel != n)
		return NULL;
	size_t nbytes;
	const uint8_t *b = ir_tensor_bytes(m, val->tensor, &nbytes);
	return b && nbytes == sizeof(float) * (size_t)n ? (const float *)b : NULL;
}

/* An inference BatchNormalization of a float 4-D x with constant parameters:
 * its per-channel scale k and shift d, as one array [k..., d...] (malloc'd;
 * *nc channels), or NULL if it is not one. */
static float *bn_scale_shift(IrModel *m, NodeId n, int64_t *nc)
{
	IrNode *node = ir_node(m, n);
	IrValue *x = ir_value(m, node->inputs[0]);
	const IrAttr *tm = ir_attr(m, n, "training_mode");
	if (node->ninputs != 5 || x->dtype != DT_FLOAT || !x->shape.dims || x->shape.dims[1].size < 1 ||
	    (tm && (tm->type != ATTR_INT || tm->i != 0)))
		return NULL;
	for (uint32_t o = 1; o < node->noutputs; o++)
		if (node->outputs[o])
			return NULL;
	int64_t c = x->shape.dims[1].size;
	const float *s = const_floats(m, node->inputs[1], c), *b = const_floats(m, node->inputs[2], c);
	const float *mean = const_floats(m, node->inputs[3], c), *var = const_floats(m, node->inputs[4], c);
	if (!s || !b || !mean || !var)
		return NULL;
	const IrAttr *ea = ir_attr(m, n, "epsilon");
	double eps = ea && ea->type == ATTR_FLOAT ? ea->f : 1e-5;
	float *k = xrealloc(NULL, sizeof *k * (size_t)(2 * c));
	for (int64_t i = 0; i < c; i++) {
		double kk = (double)s[i] / sqrt((double)var[i] + eps);
		k[i] = (float)kk;
		k[c + i] = (float)((double)b[i] - (double)mean[i] * kk);
	}
	*nc = c;
	return k;
}

const char *layout_nhwc_kind(IrModel *m, NodeId n)
{
	IrNode *node = ir_node(m, n);
	if (node->dead || node->graph != IR_MAIN_GRAPH || !is_std(node) || node->noutputs < 1 ||
	    !node->outputs[0] || node->ninputs < 1 || !node->inputs[0])
		return NULL;
	IrValue *x = ir_value(m, node->inputs[0]), *y = ir_value(m, node->outputs[0]);
	if (x->shape.rank != 4 || y->shape.rank != 4 || x->graph != IR_MAIN_GRAPH)
		return NULL;
	bool fp = x->dtype == DT_FLOAT || x->dtype == DT_FLOAT16 || x->dtype == DT_DOUBLE;
	if (node->kind == OP_Conv && fp && node->ninputs >= 2 && node->inputs[1] && node->noutputs == 1)
		return "Conv";
	if (node->kind == OP_GlobalAveragePool && fp && node->noutputs == 1)
		return "GlobalAveragePool";
	if (node->kind == OP_BatchNormalization) {
		int64_t nc;
		float *k = bn_scale_shift(m, n, &nc);
		free(k);
		if (k)
			return "BatchNormalization";
	}
	return NULL;
}

/* The node's output value gets a fresh name and `y2` takes its place:
 * its name, its readers and its graph-output slots. */
static void take_place(IrModel *m, ValueId y, ValueId y2)
{
	const char *name = ir_value(m, y)->name;
	ir_value_rename(m, y, ir_fresh_name(m, name));
	ir_value_rename(m, y2, name);
	ir_replace_all_uses(m, y, y2);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	for (uint32_t i = 0; i < g->noutputs; i++)
		if (g->outputs[i] == y)
			ir_set_output(m, IR_MAIN_GRAPH, i, y2);
}

/* A single-input elementwise op (Relu, Clip with scalar bounds, Sigmoid, ...)
 * of the main graph: one that commutes with any Transpose of its input. */
static bool is_unary_elementwise(IrModel *m, NodeId u)
{
	IrNode *node = ir_node(m, u);
	const OpSchema *sc = is_std(node) ? op_schema_lookup("", node->op_type, (int)ir_opset(m, "")) : NULL;
	if (!sc || !(sc->flags & OPF_ELEMENTWISE) || node->graph != IR_MAIN_GRAPH || node->noutputs != 1 ||
	    !node->outputs[0] || node->ninputs < 1)
		return false;
	for (uint32_t i = 1; i < node->ninputs; i++) {
		ValueId v = node->inputs[i];
		if (v && (!ir_is_constant(m, v) || ir_value(m, v)->shape.rank != 0))
			return false;
	}
	return true;
}

/* Move the Transpose to channels-first `t` below the chain of unary
 * elementwise ops that alone read it: U(T(x)) = T(U(x)), so the ops run
 * channels-last and a channels-first reader further down meets the Transpose
 * directly (a Concat of two such branches then loses both to one after it,
 * which push-transpose, judging one Transpose at a time, does not see).
 * The ops moved go to moved[] (at most cap); their outputs' types are left
 * unknown for the caller to infer again. */
int layout_nhwc_sink(IrModel *m, NodeId t, NodeId *moved, int cap, LayoutChange *c)
{
	int nmoved = 0;
	if (ir_node(m, t)->kind != OP_Transpose)
		return 0;   /* a GlobalAveragePool's ReduceMean read by a Flatten */
	while (nmoved < cap) {
		ValueId y = ir_node(m, t)->outputs[0];
		IrValue *yv = ir_value(m, y);
		if (yv->nuses != 1 || yv->is_output || yv->uses[0].slot != 0 || !is_unary_elementwise(m, yv->uses[0].node))
			break;
		NodeId u = yv->uses[0].node;
		ValueId x = ir_node(m, t)->inputs[0], uy = ir_node(m, u)->outputs[0];
		ir_set_input(m, u, 0, x);
		ir_node_move(m, t, ir_next(m, u));
		const char *name = ir_value(m, uy)->name;
		ir_value_rename(m, uy, ir_fresh_name(m, name));
		ir_value_rename(m, y, name);
		ir_replace_all_uses(m, uy, y);
		IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
		for (uint32_t i = 0; i < g->noutputs; i++)
			if (g->outputs[i] == uy)
				ir_set_output(m, IR_MAIN_GRAPH, i, y);
		ir_set_input(m, t, 0, uy);
		int dt = ir_value(m, uy)->dtype;
		ir_value_set_type(m, uy, dt, NULL);
		ir_value_set_type(m, y, dt, NULL);
		layout_change_matched(c, m, u);
		moved[nmoved++] = u;
	}
	return nmoved;
}

bool layout_nhwc_node(IrModel *m, NodeId n, LayoutChange *c)
{
	memset(c, 0, sizeof *c);
	const char *kind = layout_nhwc_kind(m, n);
	if (!kind)
		return false;
	IrNode *node = ir_node(m, n);
	ValueId y = node->outputs[0];
	NodeId last, bypassed = 0;
	if (!strcmp(kind, "Conv")) {
		/* Conv(x, W, B) = T_nchw(NhwcConv(T_nhwc(x), T_nhwc(W), B)) */
		ValueId x = nhwc_input(m, n, node->inputs[0], c, &bypassed);
		NodeId tw = transpose(m, IR_MAIN_GRAPH, n, ir_node(m, n)->inputs[1], TO_NHWC, 4, NULL);
		node = ir_node(m, n);
		ValueId ins[3] = {x, ir_node(m, tw)->outputs[0], node->ninputs > 2 ? node->inputs[2] : 0};
		NodeId conv = ir_node_new(m, IR_MAIN_GRAPH, n, "com.microsoft", "NhwcConv", "", ins,
		                          node->ninputs > 2 ? 3 : 2, NULL, 1);
		ir_copy_attrs(m, conv, n);
		ir_set_opset(m, "com.microsoft", 1);
		last = transpose(m, IR_MAIN_GRAPH, n, ir_node(m, conv)->outputs[0], TO_NCHW, 4, NULL);
		layout_change_created(c, tw);
		layout_change_created(c, conv);
	} else if (!strcmp(kind, "GlobalAveragePool")) {
		/* GlobalAveragePool(x) = T_nchw(ReduceMean(T_nhwc(x), axes [1, 2], keepdims 1))
		 * (no T_nchw before a Flatten):
		 * written channels-last at once, so the rule that makes a ReduceMean over
		 * axes [2, 3] a GlobalAveragePool again (reduce_mean_global_pool) has
		 * nothing to match */
		static const int64_t axes[2] = {1, 2};
		ValueId x = nhwc_input(m, n, node->inputs[0], c, &bypassed);
		NodeId rm;
		if (ir_opset(m, "") >= 18) {
			int64_t two = 2;
			TensorId t = ir_tensor_new(m, DT_INT64, &two, 1, axes, sizeof axes);
			ValueId a = ir_add_initializer(m, IR_MAIN_GRAPH, ir_fresh_name(m, "hw_axes"), t);
			ValueId ins[2] = {x, a};
			rm = ir_node_new(m, IR_MAIN_GRAPH, n, "", "ReduceMean", "", ins, 2, NULL, 1);
		} else {
			rm = ir_node_new(m, IR_MAIN_GRAPH, n, "", "ReduceMean", "", &x, 1, NULL, 1);
			ir_attr_set_ints(m, rm, "axes", axes, 2);
		}
		ir_attr_set_int(m, rm, "keepdims", 1);
		/* [N, 1, 1, C] and [N, C, 1, 1] hold their elements in the same order:
		 * a Flatten at axis 1, its only reader, takes either alike */
		IrValue *yv = ir_value(m, y);
		NodeId f = yv->nuses == 1 && !yv->is_output ? yv->uses[0].node : 0;
		const IrAttr *axis = f ? ir_attr(m, f, "axis") : NULL;
		if (f && ir_node(m, f)->kind == OP_Flatten && is_std(ir_node(m, f)) &&
		    (!axis || (axis->type == ATTR_INT && axis->i == 1))) {
			last = rm;
		} else {
			last = transpose(m, IR_MAIN_GRAPH, n, ir_node(m, rm)->outputs[0], TO_NCHW, 4, NULL);
			layout_change_created(c, rm);
		}
	} else {
		/* BatchNormalization(x, s, b, mean, var) = x * k + d over the channels,
		 * k = s / sqrt(var + epsilon), d = b - mean * k (in double, rounded once),
		 * channels-last: T_nchw(Add(Mul(T_nhwc(x), k), d)) with k, d 1-D */
		int64_t nc = 0;
		float *k = bn_scale_shift(m, n, &nc);
		if (!k)
			return false;
		TensorId tk = ir_tensor_new(m, DT_FLOAT, &nc, 1, k, sizeof *k * (size_t)nc);
		TensorId td = ir_tensor_new(m, DT_FLOAT, &nc, 1, k + nc, sizeof *k * (size_t)nc);
		free(k);
		node = ir_node(m, n);
		char hint[300];
		snprintf(hint, sizeof hint, "%s_scale", ir_value(m, node->inputs[1])->name);
		ValueId vk = ir_add_initializer(m, IR_MAIN_GRAPH, ir_fresh_name(m, hint), tk);
		snprintf(hint, sizeof hint, "%s_shift", ir_value(m, ir_node(m, n)->inputs[2])->name);
		ValueId vd = ir_add_initializer(m, IR_MAIN_GRAPH, ir_fresh_name(m, hint), td);
		ValueId mi[2] = {nhwc_input(m, n, ir_node(m, n)->inputs[0], c, &bypassed), vk};
		NodeId mul = ir_node_new(m, IR_MAIN_GRAPH, n, "", "Mul", "", mi, 2, NULL, 1);
		ValueId ai[2] = {ir_node(m, mul)->outputs[0], vd};
		NodeId add = ir_node_new(m, IR_MAIN_GRAPH, n, "", "Add", "", ai, 2, NULL, 1);
		last = transpose(m, IR_MAIN_GRAPH, n, ir_node(m, add)->outputs[0], TO_NCHW, 4, NULL);
		layout_change_created(c, mul);
		layout_change_created(c, add);
	}
	layout_change_created(c, last);
	layout_change_matched(c, m, n);
	layout_change_removed(c, m, n);
	take_place(m, y, ir_node(m, last)->outputs[0]);
	ir_node_remove(m, n);
	ValueId b = bypassed ? ir_node(m, bypassed)->outputs[0] : 0;
	if (b && !ir_value(m, b)->nuses && !ir_value(m, b)->is_output) {
		layout_change_removed(c, m, bypassed);
		ir_node_remove(m, bypassed);
	}
	return true;
}
