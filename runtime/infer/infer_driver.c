/* infer_driver.c - the shape inference driver: runs each node's rule and
 * merges what it gives, for a node (infer_node), a whole model in
 * topological order with its bodies (infer_model), or a node and then only
 * the consumers whose input types changed (infer_node_and_consumers, after
 * each rewrite).
 *
 * The top of runtime/infer/: it finds a node's rule in infer_ops.c (the
 * default domain by name, the com.microsoft ops graft's vendor rules emit
 * through the standard op each stands for), runs it on an InferCtx, then
 * hands the outputs to infer.c, which merges them into the IR and
 * propagates known values.  The rules read their inputs through infer.c's
 * helpers, so infer.c knows no rule. */
#include "infer_internal.h"

#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

/* ---- the driver ------------------------------------------------------------------ */

/* The dtype an op's schema gives output o: a concrete type, or the type
 * parameter it shares with an input.  For ops without a shape rule. */
static int schema_dtype(InferCtx *c, const OpSchema *sc, int o)
{
	if (!sc || sc->noutputs == 0)
		return DT_UNDEFINED;
	const OpFormal *f = &sc->outputs[o < sc->noutputs ? o : sc->noutputs - 1];
	if (!strncmp(f->type_str, "tensor(", 7)) {
		char name[32];
		size_t len = strlen(f->type_str + 7);
		if (len == 0 || len >= sizeof name)
			return DT_UNDEFINED;
		memcpy(name, f->type_str + 7, len - 1);
		name[len - 1] = 0;
		return dtype_from_name(name);
	}
	for (int i = 0; i < sc->ninputs; i++) {
		if (strcmp(sc->inputs[i].type_str, f->type_str) != 0)
			continue;
		if (sc->inputs[i].option == OPT_VARIADIC) {
			for (int k = i; k < inf_nin(c); k++)
				if (inf_dtype(c, k))
					return inf_dtype(c, k);
			return DT_UNDEFINED;
		}
		if (inf_dtype(c, i))
			return inf_dtype(c, i);
	}
	return DT_UNDEFINED;
}

/* com.microsoft EmbedLayerNormalization: output and embedding_sum float
 * [B, S, hidden] from input_ids [B, S] and word_embedding [vocab, hidden];
 * mask_index int32 [B]. */
static bool infer_embed_layer_norm(InferCtx *c)
{
	const Dim *ids = inf_rank(c, 0) == 2 ? inf_dims(c, 0) : NULL;
	const Dim *w = inf_rank(c, 2) == 2 ? inf_dims(c, 2) : NULL;
	Dim d[3] = {ids ? ids[0] : dim_unknown(), ids ? ids[1] : dim_unknown(), w ? w[1] : dim_unknown()};
	int t = inf_dtype(c, 2);
	inf_set(c, 0, t, 3, d);
	if (c->nout > 1)
		inf_set(c, 1, DT_INT32, 1, d);
	if (c->nout > 2)
		inf_set(c, 2, t, 3, d);
	return true;
}

/* com.microsoft MultiHeadAttention with separate query [B, S, D], key and
 * value [B, L, Dv] or [B, heads, L, head_v]: output [B, S, Dv] (Dv = heads *
 * head_v) of the query's type. */
static bool infer_multi_head_attention(InferCtx *c)
{
	int t = inf_dtype(c, 0), rv = inf_rank(c, 2);
	Dim dv = dim_unknown();
	if (rv == 3)
		dv = inf_dims(c, 2)[2];
	else if (rv == 4 && inf_dims(c, 2)[1].size >= 0 && inf_dims(c, 2)[3].size >= 0) {
		int64_t n;
		if (!__builtin_mul_overflow(inf_dims(c, 2)[1].size, inf_dims(c, 2)[3].size, &n))
			dv = (Dim){n, NULL};
	}
	if (inf_rank(c, 0) != 3 || (rv != 3 && rv != 4)) {
		inf_set_dtype(c, 0, t);
		return true;
	}
	Dim d[3] = {inf_dims(c, 0)[0], inf_dims(c, 0)[1], dv};
	inf_set(c, 0, t, 3, d);
	return true;
}

/* The com.microsoft ops graft's vendor rules emit (rules/extended/vendor.rules)
 * take their output types from the standard op they stand for: FusedConv's
 * are Conv's, BiasGelu's Add's (its bias broadcasts), the Gelus',
 * RotaryEmbedding's and SkipLayerNormalization's output 0 their input's; NhwcConv (--layout nhwc)
 * has its own rule, Conv's with the channels last, EmbedLayerNormalization
 * and MultiHeadAttention their own; MatMulIntegerToFloat and DynamicQuantizeMatMul are MatMulInteger's
 * shape in float.  FusedMatMul with a transposed input, and the rest, stay
 * unknown. */
static bool infer_int_matmul_float(InferCtx *c)
{
	if (!infer_rule_find("MatMulInteger")(c))
		return false;
	c->out[0].dtype = DT_FLOAT;
	return true;
}

/* SkipLayerNormalization, SkipSimplifiedLayerNormalization: output 0 and
 * output 3 (the sum, input + skip (+ bias)) have the input's type. */
static bool infer_skip_norm(InferCtx *c)
{
	if (!infer_rule_find("Identity")(c))
		return false;
	if (c->nout > 3)
		c->out[3] = c->out[0];
	return true;
}

static InferFn vendor_rule(const IrNode *node)
{
	static const struct { const char *op, *as; } alias[] = {
		{"FusedConv", "Conv"}, {"FusedGemm", "Gemm"}, {"BiasGelu", "Add"},
		{"FastGelu", "Identity"}, {"Gelu", "Identity"}, {"QuickGelu", "Identity"},
		{"RotaryEmbedding", "Identity"}, {"LayerNormalization", "LayerNormalization"},
		{"SimplifiedLayerNormalization", "RMSNormalization"},
	};
	if (strcmp(node->domain, "com.microsoft"))
		return NULL;
	if (!strcmp(node->op_type, "NhwcConv"))
		return infer_nhwc_conv;
	if (!strcmp(node->op_type, "MatMulIntegerToFloat") || !strcmp(node->op_type, "DynamicQuantizeMatMul"))
		return infer_int_matmul_float;
	if (!strcmp(node->op_type, "EmbedLayerNormalization"))
		return infer_embed_layer_norm;
	if (!strcmp(node->op_type, "MultiHeadAttention"))
		return infer_multi_head_attention;
	if (!strcmp(node->op_type, "SkipLayerNormalization") || !strcmp(node->op_type, "SkipSimplifiedLayerNormalization"))
		return infer_skip_norm;
	for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
		if (!strcmp(node->op_type, alias[i].op))
			return infer_rule_find(alias[i].as);
	return NULL;
}

/* outs: room for the node's outputs. */
static bool infer_node_into(InferState *s, NodeId n, Diag *d, bool *changed, InferOut *outs)
{
	IrModel *m = s->m;
	IrNode *node = ir_node(m, n);
	InferCtx c = {s, m, n, node, s->opset, d, false, (int)node->noutputs, outs};
	for (uint32_t o = 0; o < node->noutputs; o++) {
		outs[o].is_seq = false;
		outs[o].dtype = DT_UNDEFINED;
		outs[o].rank = -1;
		outs[o].contested = 0;
	}
	bool std = *node->domain == 0 || !strcmp(node->domain, "ai.onnx");
	InferFn fn = std ? infer_rule_find(node->op_type) : vendor_rule(node);
	bool ok = true;
	if (fn)
		ok = fn(&c) && !c.failed;
	else if (std) {
		const OpSchema *sc = op_schema_lookup("", node->op_type, (int)c.opset);
		for (int o = 0; o < c.nout; o++)
			outs[o].dtype = schema_dtype(&c, sc, o);
	}
	if (!ok)
		return false;
	for (int o = 0; o < c.nout; o++) {
		ValueId v = node->outputs[o];
		if (!v)
			continue;
		InferOut *old = s->seq[v];
		if (outs[o].is_seq || old) {
			/* sequences live beside the IR, which types only tensors */
			if (!outs[o].is_seq) {
				free(old);
				s->seq[v] = NULL;
				*changed = true;
			} else if (!old || old->dtype != outs[o].dtype || old->rank != outs[o].rank ||
			           memcmp(old->dims, outs[o].dims, sizeof(Dim) * (size_t)(old->rank > 0 ? old->rank : 0)) != 0) {
				if (!old)
					old = s->seq[v] = xrealloc(NULL, sizeof *old);
				*old = outs[o];
				*changed = true;
			}
			if (outs[o].is_seq)
				continue;
		}
		if (!infer_merge_type(&c, v, &outs[o], changed))
			ok = false;
	}
	/* the vector rules read the merged types (a declared output may know more) */
	for (int o = 0; o < c.nout; o++) {
		ValueId v = node->outputs[o];
		if (!v || outs[o].is_seq)
			continue;
		IrValue *val = ir_value(m, v);
		outs[o].dtype = val->dtype;
		outs[o].rank = val->shape.rank <= IR_MAX_RANK ? val->shape.rank : -1;
		for (int i = 0; i < outs[o].rank; i++)
			outs[o].dims[i] = val->shape.dims[i];
	}
	infer_propagate_known(&c, changed);
	return ok;
}

static bool infer_node_ex(InferState *s, NodeId n, Diag *d, bool *changed)
{
	infer_ensure_cap(s);
	IrNode *node = ir_node(s->m, n);
	*changed = false;
	if (node->dead)
		return true;
	/* the outputs' types: on the stack for a usual node, on the heap for a
	 * wide one (a node may have any number of outputs) */
	InferOut small[4];
	InferOut *outs = node->noutputs <= 4 ? small : xrealloc(NULL, sizeof *outs * node->noutputs);
	bool ok = infer_node_into(s, n, d, changed, outs);
	if (outs != small)
		free(outs);
	return ok;
}

bool infer_node(InferState *s, NodeId n, Diag *d)
{
	bool changed;
	s->opset = ir_opset(s->m, "");
	return infer_node_ex(s, n, d, &changed);
}

/* Loop bodies often leave their inputs untyped: fill those from the Loop's
 * inputs (never a declared type).  A loop-carried value gets its element
 * type only: its shape may change from one iteration to the next (x grown
 * by Concat(x, x)), and the initial value's shape given to the body made a
 * Shape(x) in it fold to the first iteration's shape. */
static bool type_loop_body(InferState *s, NodeId n, GraphId body, Diag *d)
{
	IrModel *m = s->m;
	IrNode *node = ir_node(m, n);
	IrGraph *g = ir_graph(m, body);
	for (uint32_t i = 0; i < g->ninputs; i++) {
		IrValue *val = ir_value(m, g->inputs[i]);
		if (i >= 2 && i < node->ninputs && node->inputs[i] && val->shape.rank >= 0 && !val->non_tensor) {
			/* a declared shape the initial value contradicts: the body's
			 * inference (and folds) would follow a declaration the run
			 * does not (ONNX Runtime runs on the value given) */
			const Shape *a = &val->shape, *b = &ir_value(m, node->inputs[i])->shape;
			bool clash = b->rank >= 0 && a->rank != b->rank;
			for (int k = 0; !clash && b->rank >= 0 && k < a->rank; k++)
				clash = a->dims[k].size >= 0 && b->dims[k].size >= 0 && a->dims[k].size != b->dims[k].size;
			if (clash) {
				char label[256];
				if (a->rank != b->rank)
					diag_error(d, m->path ? m->path : "model",
					           "node '%s' (Loop): body input '%s' is declared of rank %d, but the Loop starts it "
					           "from '%s' of rank %d", ir_node_label(m, n, label, sizeof label), val->name,
					           a->rank, ir_value(m, node->inputs[i])->name, b->rank);
				else
					diag_error(d, m->path ? m->path : "model",
					           "node '%s' (Loop): body input '%s' is declared with other dims than '%s', the "
					           "value the Loop starts it from", ir_node_label(m, n, label, sizeof label),
					           val->name, ir_value(m, node->inputs[i])->name);
				return false;
			}
		}
		if (val->dtype || val->shape.rank >= 0 || val->non_tensor)
			continue;
		Dim none[1];
		Shape scalar = {0, none};
		if (i == 0)
			ir_value_set_type(m, g->inputs[i], DT_INT64, &scalar);
		else if (i == 1)
			ir_value_set_type(m, g->inputs[i], DT_BOOL, &scalar);
		else if (i < node->ninputs && node->inputs[i]) {
			/* a tensor whose element type is known; a sequence's type
			 * lives beside the IR (s->seq) and stays undeclared */
			IrValue *src = ir_value(m, node->inputs[i]);
			if (src->dtype && !src->non_tensor)
				ir_value_set_type(m, g->inputs[i], src->dtype, NULL);
		}
	}
	return true;
}

static bool infer_graph(InferState *s, GraphId g, Diag *d)
{
	IrModel *m = s->m;
	uint32_t count;
	NodeId *order = ir_topo_order(m, g, &count, d);
	if (!order)
		return false;
	bool ok = true;
	for (uint32_t i = 0; i < count; i++) {
		NodeId n = order[i];
		IrNode *node = ir_node(m, n);
		for (uint32_t a = 0; a < node->nattrs; a++) {
			const IrAttr *at = &node->attrs[a];
			if (at->type == ATTR_GRAPH) {
				if (node->kind == OP_Loop && !type_loop_body(s, n, at->g, d)) {
					ok = false;
					continue;
				}
				ok &= infer_graph(s, at->g, d);
			} else if (at->type == ATTR_GRAPHS)
				for (size_t k = 0; k < at->n; k++)
					ok &= infer_graph(s, at->graphs[k], d);
			node = ir_node(m, n);
		}
		bool changed;
		ok &= infer_node_ex(s, n, d, &changed);
	}
	free(order);
	return ok;
}

bool infer_model(InferState *s, Diag *d)
{
	s->opset = ir_opset(s->m, "");
	infer_ensure_cap(s);
	return infer_graph(s, IR_MAIN_GRAPH, d);
}

bool infer_node_and_consumers(InferState *s, NodeId n, Diag *d)
{
	IrModel *m = s->m;
	s->opset = ir_opset(m, "");
	/* a FIFO of nodes; queued[] keeps each in it at most once at a time */
	uint32_t cap = 64, head = 0, tail = 0;
	NodeId *q = xrealloc(NULL, sizeof *q * cap);
	/* kept in the state and grown with the graph: a rewrite pays for what it
	 * touches, not for the size of the graph */
	if (s->nqueued < m->nnodes + 1) {
		uint32_t want = (m->nnodes + 1) * 2;
		s->queued = xrealloc(s->queued, want);
		memset(s->queued + s->nqueued, 0, want - s->nqueued);
		s->nqueued = want;
	}
	uint8_t *queued = s->queued;
	q[tail++] = n;
	queued[n] = 1;
	bool ok = true;
	/* a bound against oscillation: types only get more precise, so a sane
	 * graph settles long before this */
	uint64_t budget = 16 * (uint64_t)m->nnodes + 64;
	while (head < tail && budget--) {
		NodeId x = q[head++];
		queued[x] = 0;
		bool changed;
		ok &= infer_node_ex(s, x, d, &changed);
		if (!changed)
			continue;
		IrNode *node = ir_node(m, x);
		for (uint32_t o = 0; o < node->noutputs; o++) {
			ValueId v = node->outputs[o];
			if (!v)
				continue;
			IrValue *val = ir_value(m, v);
			NodeId owner = val->is_output ? ir_graph(m, val->graph)->owner : 0;
			for (uint32_t u = 0; u <= val->nuses; u++) {
				NodeId y = u < val->nuses ? val->uses[u].node : owner;
				if (!y || queued[y])
					continue;
				if (head > 0 && tail == cap) {
					memmove(q, q + head, sizeof *q * (tail - head));
					tail -= head;
					head = 0;
				}
				if (tail == cap)
					q = xrealloc(q, sizeof *q * (cap *= 2));
				q[tail++] = y;
				queued[y] = 1;
			}
		}
	}
	for (uint32_t i = head; i < tail; i++) /* left by the budget */
		queued[q[i]] = 0;
	free(q);
	return ok;
}
