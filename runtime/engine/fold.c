/* fold.c - constant folding: a node whose inputs are all constants becomes
 * initializers computed by the evaluator's own kernels (one arithmetic
 * implementation, not two), and Shape/Size of statically shaped tensors
 * become constants.  Constant nodes become initializers sharing their bytes.
 *
 * What is never folded: nodes reading overridable initializers (also graph
 * inputs: the user may replace them), random ops, DequantizeLinear (keeps
 * quantized weights quantized), ops with subgraphs, ops of other domains,
 * string results, order-sensitive ops on data near the float range (below), results over the size cap (so ConstantOfShape, Expand,
 * Tile and Range cannot bloat the file), and results that would take folding
 * over its budget of bytes added to the whole model (fold.h).  Both limits
 * are checked before the kernel runs, from the result's predicted size,
 * whenever it can be predicted (always for those four ops).  A large weight scaled by a small
 * broadcast constant is not computed here but deferred to the saver (see
 * "deferred results" below), and so are the folds that only move a
 * constant's bytes: Transpose, Reshape, Slice, Concat, ... (fold_move.c).
 * The engine calls fold_node on one node; fold_model runs it to a fixpoint
 * with a worklist. */
#include "fold.h"
#include "fold_move.h"
#include "runtime/infer/infer.h"

#include <stdlib.h>
#include <string.h>

bool fold_is_constant(IrModel *m, ValueId v)
{
	return ir_is_constant(m, v);
}

static bool is_static(const IrValue *v)
{
	if (v->shape.rank < 0)
		return false;
	for (int i = 0; i < v->shape.rank; i++)
		if (v->shape.dims[i].size < 0)
			return false;
	return true;
}

static int64_t ints_product(IrModel *m, ValueId v, bool *ok)
{
	IrTensor *t = ir_tensor(m, ir_value(m, v)->tensor);
	size_t n;
	const uint8_t *b = ir_tensor_bytes(m, ir_value(m, v)->tensor, &n);
	int64_t p = 1;
	for (int64_t i = 0; b && i < t->numel; i++) {
		int64_t x = t->dtype == DT_INT64 ? ((const int64_t *)b)[i] : t->dtype == DT_INT32 ? ((const int32_t *)b)[i] : 1;
		if (x < 0 || __builtin_mul_overflow(p, x > 0 ? x : 1, &p))
			*ok = false;
	}
	return p;
}

/* Elements the node's first output will have, when cheaply predictable;
 * -1 if unknown.  Lets the size cap refuse before computing. */
static int64_t predicted_numel(IrModel *m, NodeId n)
{
	IrNode *node = ir_node(m, n);
	bool ok = true;
	int64_t p = -1;
	switch (node->kind) {
	case OP_ConstantOfShape:
		p = node->ninputs > 0 && node->inputs[0] ? ints_product(m, node->inputs[0], &ok) : 1;
		break;
	case OP_Expand:
	case OP_Tile: {
		if (node->ninputs < 2 || !node->inputs[0] || !node->inputs[1])
			return -1;
		/* the output's dims from the input's and the shape's (Expand: their
		 * broadcast) or repeats' (Tile: their products) */
		IrTensor *x = ir_tensor(m, ir_value(m, node->inputs[0])->tensor);
		IrTensor *t = ir_tensor(m, ir_value(m, node->inputs[1])->tensor);
		size_t nb;
		const uint8_t *b = ir_tensor_bytes(m, ir_value(m, node->inputs[1])->tensor, &nb);
		if (!b || t->rank != 1 || (t->dtype != DT_INT64 && t->dtype != DT_INT32))
			return -1;
		int64_t n = t->numel, r = node->kind == OP_Tile ? x->rank : (n > x->rank ? n : x->rank);
		if (node->kind == OP_Tile && n != x->rank)
			return -1;
		p = 1;
		for (int64_t k = 0; k < r && ok; k++) {
			int64_t a = k >= r - x->rank ? x->dims[k - (r - x->rank)] : 1, e = 1, d;
			if (k >= r - n)
				e = t->dtype == DT_INT64 ? ((const int64_t *)b)[k - (r - n)] : ((const int32_t *)b)[k - (r - n)];
			if (e < 0)
				return -1; /* the kernel says why */
			if (node->kind == OP_Tile)
				ok = !__builtin_mul_overflow(a, e, &d);
			else
				d = a == e || e == 1 ? a : a == 1 ? e : -1;
			if (d < 0)
				return -1;
			if (ok && __builtin_mul_overflow(p, d, &p))
				ok = false;
		}
		break;
	}
	default: {
		ValueId out = node->noutputs ? node->outputs[0] : 0;
		if (out && is_static(ir_value(m, out))) {
			const Shape *s = &ir_value(m, out)->shape;
			p = 1;
			for (int i = 0; i < s->rank && ok; i++)
				if (__builtin_mul_overflow(p, s->dims[i].size, &p))
					ok = false;
		}
	}
	}
	return ok ? p : INT64_MAX;
}

/* Bytes the node's first output will take (its dtype from the input for
 * Tile and Expand, from `value` for ConstantOfShape, else inferred; an
 * unknown dtype counts a byte an element); -1 if unknown, INT64_MAX if it
 * overflows. */
static int64_t predicted_bytes(IrModel *m, NodeId n)
{
	int64_t numel = predicted_numel(m, n);
	if (numel < 0 || numel == INT64_MAX)
		return numel;
	IrNode *node = ir_node(m, n);
	int dtype = 0;
	if ((node->kind == OP_Tile || node->kind == OP_Expand) && node->inputs[0])
		dtype = ir_tensor(m, ir_value(m, node->inputs[0])->tensor)->dtype;
	else if (node->kind == OP_ConstantOfShape) {
		const IrAttr *v = ir_attr(m, n, "value");
		dtype = v && v->type == ATTR_TENSOR && v->t ? ir_tensor(m, v->t)->dtype : DT_FLOAT;
	} else if (node->noutputs && node->outputs[0])
		dtype = ir_value(m, node->outputs[0])->dtype;
	int64_t bits = dtype && dtype != DT_STRING && dtype_bits(dtype) > 0 ? dtype_bits(dtype) : 8, b;
	if (__builtin_mul_overflow(numel, bits, &b) || __builtin_add_overflow(b, 7, &b))
		return INT64_MAX;
	return b / 8;
}

/* Bytes of the constants only node n reads: folding n removes them. */
static int64_t freed_bytes(IrModel *m, NodeId n)
{
	IrNode *node = ir_node(m, n);
	int64_t freed = 0;
	for (uint32_t i = 0; i < node->ninputs; i++) {
		ValueId v = node->inputs[i];
		bool seen = false;
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = node->inputs[j] == v;
		IrValue *x = v ? ir_value(m, v) : NULL;
		if (!x || seen || !x->tensor || x->producer || x->is_input || x->is_output)
			continue;
		bool only = true;
		for (uint32_t u = 0; u < x->nuses && only; u++)
			only = x->uses[u].node == n;
		if (only)
			freed += (int64_t)ir_tensor(m, x->tensor)->nbytes;
	}
	return freed;
}

/* The bytes of every live initializer of m. */
static int64_t live_init_bytes(IrModel *m)
{
	int64_t bytes = 0;
	for (GraphId g = 1; g < m->ngraphs; g++) {
		IrGraph *gr = ir_graph(m, g);
		for (uint32_t i = 0; !gr->dead && i < gr->ninits; i++) {
			IrValue *v = ir_value(m, gr->inits[i]);
			if (!v->dead && v->tensor)
				bytes += (int64_t)ir_tensor(m, v->tensor)->nbytes;
		}
	}
	return bytes;
}

/* Would results of `bytes` bytes from node n take what folding added over
 * the budget?  *total gets that sum.  The running count *o->added never
 * hears of constants the rewrite rules left unread (they go with their last
 * reader), so before refusing it is recounted from the live initializers
 * (over o->base_bytes, what they took when folding began). */
static bool over_budget(IrModel *m, NodeId n, const FoldOptions *o, int64_t bytes, int64_t *total)
{
	int64_t freed = freed_bytes(m, n);
	*total = *o->added + bytes - freed;
	if (*total <= 0 || (uint64_t)*total <= o->max_total_bytes)
		return false;
	int64_t live = live_init_bytes(m) - o->base_bytes;
	if (o->base_bytes > 0 && live < *o->added) {
		*o->added = live;
		*total = live + bytes - freed;
	}
	return *total > 0 && (uint64_t)*total > o->max_total_bytes;
}

/* May node n make results of `bytes` bytes in all?  No (with a reason under
 * report_errors) if one is over the cap or they take folding over budget. */
static bool fits(IrModel *m, NodeId n, const FoldOptions *o, int64_t bytes, FoldStats *st, Diag *d)
{
	char label[256];
	if ((uint64_t)bytes > o->max_bytes) {
		st->over_cap++;
		if (o->report_errors)
			diag_warning(d, m->path, "node '%s' (%s) not folded: its result would take %lld bytes, over the "
			             "size cap of %zu (--max-bytes)", ir_node_label(m, n, label, sizeof label),
			             ir_node(m, n)->op_type, (long long)bytes, o->max_bytes);
		return false;
	}
	if (!o->added)
		return true;
	int64_t total;
	if (over_budget(m, n, o, bytes, &total)) {
		st->over_budget++;
		if (o->report_errors)
			diag_warning(d, m->path, "node '%s' (%s) not folded: its %lld bytes would bring what folding "
			             "added to the model to %lld bytes, over the fold budget of %zu (--max-fold-bytes)",
			             ir_node_label(m, n, label, sizeof label), ir_node(m, n)->op_type, (long long)bytes,
			             (long long)total, o->max_total_bytes);
		return false;
	}
	return true;
}

/* Count a fold of node n (about to be removed) into the budget. */
static void spend(IrModel *m, NodeId n, const FoldOptions *o, int64_t bytes)
{
	if (o->added)
		*o->added += bytes - freed_bytes(m, n);
}

size_t fold_default_budget(IrModel *m)
{
	size_t bytes = (size_t)live_init_bytes(m);
	return bytes > FOLD_MIN_BUDGET ? bytes : FOLD_MIN_BUDGET;
}

int64_t fold_base_bytes(IrModel *m)
{
	return live_init_bytes(m);
}

/* Replace output value `old` of a node about to be removed by an initializer
 * holding t; the new value takes over old's name once old is gone. */
static ValueId install(IrModel *m, ValueId old, TensorId t, const char **name)
{
	IrValue *o = ir_value(m, old);
	GraphId g = o->graph;
	*name = o->name;
	ValueId nv = ir_add_initializer(m, g, ir_fresh_name(m, o->name), t);
	ir_replace_all_uses(m, old, nv);
	for (GraphId k = 1; k < m->ngraphs; k++) {
		IrGraph *gr = ir_graph(m, k);
		for (uint32_t i = 0; !gr->dead && i < gr->noutputs; i++)
			if (gr->outputs[i] == old)
				ir_set_output(m, k, i, nv);
	}
	return nv;
}

static void finish(IrModel *m, NodeId n, const ValueId *nv, const char **names, uint32_t count)
{
	ir_node_remove(m, n);
	for (uint32_t i = 0; i < count; i++)
		if (nv[i])
			ir_value_rename(m, nv[i], names[i]);
}

static bool fold_shape_of(IrModel *m, NodeId n, FoldStats *st)
{
	IrNode *node = ir_node(m, n);
	if (node->ninputs < 1 || !node->inputs[0] || node->noutputs < 1 || !node->outputs[0])
		return false;
	IrValue *x = ir_value(m, node->inputs[0]);
	if (!is_static(x))
		return false;
	TensorId t;
	if (node->kind == OP_Size) {
		int64_t numel = 1;
		for (int i = 0; i < x->shape.rank; i++)
			if (__builtin_mul_overflow(numel, x->shape.dims[i].size, &numel))
				return false; /* not an int64: left to fail at run time */
		t = ir_tensor_new(m, DT_INT64, NULL, 0, &numel, sizeof numel);
	} else {
		int r = x->shape.rank;
		const IrAttr *sa = ir_attr(m, n, "start"), *ea = ir_attr(m, n, "end");
		int64_t start = sa ? sa->i : 0, end = ea ? ea->i : r;
		if (start < 0)
			start += r;
		if (end < 0)
			end += r;
		start = start < 0 ? 0 : start > r ? r : start;
		end = end < 0 ? 0 : end > r ? r : end;
		int64_t len = end > start ? end - start : 0;
		int64_t *dims = malloc(sizeof *dims * (size_t)(len + 1));
		if (!dims)
			abort();
		for (int64_t i = 0; i < len; i++)
			dims[i] = x->shape.dims[start + i].size;
		t = ir_tensor_new(m, DT_INT64, &len, 1, dims, sizeof *dims * (size_t)len);
		free(dims);
	}
	const char *name;
	ValueId nv = install(m, node->outputs[0], t, &name);
	finish(m, n, &nv, &name, 1);
	st->shapes++;
	return true;
}

/* Outputs whose values inference already knows (computed by the same
 * kernels from constants, or Shape/Size of static shapes, through Gather,
 * Concat, ...): replace them by initializers. */
static bool fold_known(IrModel *m, NodeId n, const FoldOptions *o, FoldStats *st)
{
	IrNode *node = ir_node(m, n);
	uint32_t nout = node->noutputs;
	if (nout == 0)
		return false;
	int64_t bytes = 0;
	for (uint32_t i = 0; i < nout; i++) {
		const EvValue *val = node->outputs[i] ? infer_known_value(o->infer, node->outputs[i]) : NULL;
		if (node->outputs[i] && (!val || val->kind != EV_TENSOR || val->dtype == DT_STRING ||
		                         val->nbytes > o->max_bytes))
			return false;
		bytes += val ? (int64_t)val->nbytes : 0;
	}
	if (o->added) {
		/* within budget, or left to fold_node's path, which says why not */
		int64_t total;
		if (over_budget(m, n, o, bytes, &total))
			return false;
		spend(m, n, o, bytes);
	}
	/* on the heap: a node may have any number of outputs */
	ValueId *nv = malloc(sizeof *nv * nout);
	const char **names = malloc(sizeof *names * nout);
	if (!nv || !names)
		abort();
	for (uint32_t i = 0; i < nout; i++) {
		nv[i] = 0;
		ValueId ov = ir_node(m, n)->outputs[i];
		if (!ov)
			continue;
		/* the value inference computed becomes the initializer's bytes
		 * (ov dies here); a value it shares with another is copied */
		EvValue *x = infer_take_value(o->infer, ov);
		void *own = ev_take_data(x);
		TensorId t = own ? ir_tensor_adopt(m, x->dtype, x->dims, x->rank, own, x->nbytes)
		                 : ir_tensor_new(m, x->dtype, x->dims, x->rank, x->data, x->nbytes);
		ev_unref(x);
		nv[i] = install(m, ov, t, &names[i]);
	}
	bool shape_op = node->kind == OP_Shape || node->kind == OP_Size;
	finish(m, n, nv, names, nout);
	free(nv);
	free(names);
	if (shape_op)
		st->shapes++;
	else
		st->folded++;
	return true;
}

/* Reshape(x, s) where s is known element by element and its unknown entries
 * are x's own symbolic dims at the same positions (Shape -> Gather ->
 * Unsqueeze -> Concat of a dynamic batch): copy those dims with 0, so the
 * shape becomes a constant and the chain computing it dies. */
static bool reshape_zeros(IrModel *m, NodeId n, InferState *is, FoldStats *st)
{
	IrNode *node = ir_node(m, n);
	if (node->ninputs < 2 || !node->inputs[0] || !node->inputs[1] || ir_is_constant(m, node->inputs[1]))
		return false;
	const IrAttr *az = ir_attr(m, n, "allowzero");
	if (az && az->i)
		return false;
	int64_t vals[EV_MAX_RANK];
	const char *syms[EV_MAX_RANK];
	int len = infer_known_ints(is, node->inputs[1], vals, syms, EV_MAX_RANK);
	const Shape *xs = &ir_value(m, node->inputs[0])->shape;
	if (len < 0)
		return false;
	for (int i = 0; i < len; i++) {
		if (!syms[i]) {
			if (vals[i] == 0)
				return false; /* already a copy: leave the author's 0 alone */
			continue;
		}
		if (i >= xs->rank || !xs->dims[i].param || strcmp(xs->dims[i].param, syms[i]) != 0)
			return false;
		vals[i] = 0;
	}
	int64_t dim = len;
	TensorId t = ir_tensor_new(m, DT_INT64, &dim, 1, vals, sizeof *vals * (size_t)len);
	GraphId g = node->graph;
	ValueId c = ir_add_initializer(m, g, ir_fresh_name(m, "reshape_shape"), t);
	ir_set_input(m, n, 1, c);
	st->reshapes++;
	return true;
}

/* ---- deferred results ------------------------------------------------------
 * A float Add, Sub, Mul or Div of a large constant and a small one broadcast
 * over it (a Conv weight times a per-channel factor: Conv+BatchNormalization)
 * is not computed when folded.  Its result becomes a deferred tensor (ir.h)
 * that holds the large operand and a copy of the small one and computes its
 * bytes when something reads them: the saver, a buffer at a time straight
 * into the output file.  So the result never exists whole in memory, nor a
 * copy of a misaligned weight, and a chain (a weight scaled twice) computes
 * each piece through every step at once.  The arithmetic is the kernel's own
 * row function (ev_arith_row): the bytes are those the kernel would give. */
enum {
	DEFER_MIN_BYTES = 64 << 10,     /* smaller results are computed at once */
	DEFER_SMALL_RATIO = 16,         /* the small side has at most 1/16 the elements */
};

typedef struct Scaled {
	IrDeferred base;
	int op;                         /* OP_Add, OP_Sub, OP_Mul, OP_Div */
	int dtype;
	bool small_first;               /* small op large (Sub, Div) */
	TensorId large;                 /* the result has its dims and dtype */
	EvValue *small;                 /* owned copy */
	size_t es;                      /* element size */
	int rank;                       /* of the coalesced shape below */
	int64_t dims[EV_MAX_RANK];      /* large's dims, runs of dims small treats alike merged */
	int64_t step[EV_MAX_RANK];      /* small's element stride along each (0: broadcast) */
} Scaled;

static void scaled_fill(IrModel *m, const IrDeferred *d, size_t off, size_t len, uint8_t *out)
{
	const Scaled *s = (const Scaled *)d;
	ir_tensor_read(m, s->large, off, len, out);
	int r = s->rank;
	int64_t idx[EV_MAX_RANK], left = (int64_t)(len / s->es), at = (int64_t)(off / s->es), sm = 0;
	for (int k = r - 1; k >= 0; k--) {
		idx[k] = at % s->dims[k];
		at /= s->dims[k];
		sm += idx[k] * s->step[k];
	}
	const uint8_t *small = s->small->data;
	while (left > 0) {
		int64_t run = s->dims[r - 1] - idx[r - 1];
		if (run > left)
			run = left;
		const uint8_t *b = small + (size_t)sm * s->es;
		if (s->small_first)
			ev_arith_row(s->op, s->dtype, out, b, out, run, s->step[r - 1], 1);
		else
			ev_arith_row(s->op, s->dtype, out, out, b, run, 1, s->step[r - 1]);
		out += (size_t)run * s->es;
		left -= run;
		idx[r - 1] += run;
		sm += run * s->step[r - 1];
		/* carry into the outer dims */
		for (int k = r - 1; k > 0 && idx[k] == s->dims[k]; k--) {
			sm -= idx[k] * s->step[k];
			idx[k] = 0;
			idx[k - 1]++;
			sm += s->step[k - 1];
		}
	}
}

static void scaled_evict(IrModel *m, const IrDeferred *d)
{
	ir_tensor_evict(m, ((const Scaled *)d)->large);
}

static void scaled_release(IrModel *m, IrDeferred *d)
{
	Scaled *s = (Scaled *)d;
	ir_tensor_unhold(m, s->large);
	ev_unref(s->small);
	free(s);
}

/* The node's result as a deferred tensor, or 0 if it is not of that kind. */
static TensorId defer_scaled(IrModel *m, NodeId n, const FoldOptions *o)
{
	IrNode *node = ir_node(m, n);
	if ((node->kind != OP_Add && node->kind != OP_Sub && node->kind != OP_Mul && node->kind != OP_Div) ||
	    node->ninputs != 2 || node->noutputs != 1 || !node->inputs[0] || !node->inputs[1] || !node->outputs[0])
		return 0;
	TensorId ta = ir_value(m, node->inputs[0])->tensor, tb = ir_value(m, node->inputs[1])->tensor;
	const IrTensor *a = ir_tensor(m, ta), *b = ir_tensor(m, tb);
	bool small_first = a->numel < b->numel;
	const IrTensor *L = small_first ? b : a, *S = small_first ? a : b;
	TensorId tl = small_first ? tb : ta, ts = small_first ? ta : tb;
	size_t es = ev_elem_size(L->dtype);
	if (a->dtype != b->dtype || !ev_is_float(a->dtype) || !es ||
	    !ev_arith_row(node->kind, L->dtype, NULL, NULL, NULL, 0, 1, 1) ||
	    L->nbytes < DEFER_MIN_BYTES || L->nbytes > o->max_bytes || (size_t)L->numel * es != L->nbytes ||
	    S->numel > L->numel / DEFER_SMALL_RATIO || L->rank > EV_MAX_RANK || S->rank > L->rank)
		return 0;
	/* the result's shape must be the large side's: each small dim is 1 or its */
	int64_t step[EV_MAX_RANK];
	ev_broadcast_strides(S->rank, S->dims, L->rank, L->dims, step);
	for (int k = 0; k < S->rank; k++) {
		int64_t sd = S->dims[k], ld = L->dims[L->rank - S->rank + k];
		if (sd != 1 && sd != ld)
			return 0;
	}
	EvValue *sv = ev_value_from_ir_tensor(m, ts);
	EvValue *small = sv ? ev_copy(sv) : NULL;
	ev_unref(sv);
	Scaled *s = calloc(1, sizeof *s);
	if (!small || !s) {
		ev_unref(small);
		free(s);
		return 0;
	}
	s->base.fill = scaled_fill;
	s->base.release = scaled_release;
	s->base.evict = scaled_evict;
	s->op = node->kind;
	s->dtype = L->dtype;
	s->small_first = small_first;
	s->large = tl;
	s->small = small;
	s->es = es;
	/* merge neighbouring dims the small side walks as one: both broadcast,
	 * or contiguous (so rows are long: a Conv weight times a per-channel
	 * factor is [C, rest] with steps [1, 0]) */
	s->rank = 0;
	for (int k = 0; k < L->rank; k++) {
		if (L->dims[k] == 1)
			continue;
		if (s->rank && s->step[s->rank - 1] == step[k] * L->dims[k]) {
			s->dims[s->rank - 1] *= L->dims[k];
			s->step[s->rank - 1] = step[k];
		} else {
			s->dims[s->rank] = L->dims[k];
			s->step[s->rank++] = step[k];
		}
	}
	if (!s->rank) {
		s->dims[0] = 1;
		s->step[0] = 0;
		s->rank = 1;
	}
	ir_tensor_hold(m, tl);
	return ir_tensor_deferred(m, L->dtype, L->dims, L->rank, L->nbytes, &s->base);
}

bool fold_node(IrModel *m, NodeId n, const FoldOptions *o, FoldStats *st, Diag *d)
{
	IrNode *node = ir_node(m, n);
	if (node->dead || (node->domain[0] && strcmp(node->domain, "ai.onnx") != 0))
		return false;
	const OpSchema *s = op_schema_lookup("", node->op_type, (int)ir_opset(m, ""));
	if (node->kind == OP_DequantizeLinear || (s && (s->flags & OPF_RANDOM)))
		return false;
	for (uint32_t a = 0; a < node->nattrs; a++)
		if (node->attrs[a].type == ATTR_GRAPH || node->attrs[a].type == ATTR_GRAPHS)
			return false;
	if (node->kind == OP_Constant) {
		const IrAttr *v = ir_attr(m, n, "value");
		if (v && v->type == ATTR_TENSOR && v->t && node->noutputs == 1 && node->outputs[0]) {
			const char *name;
			ValueId nv = install(m, node->outputs[0], v->t, &name); /* shares the bytes */
			finish(m, n, &nv, &name, 1);
			st->constants++;
			return true;
		}
		/* value_float, value_ints, ...: computed below by the kernel */
	}
	if (o->infer && fold_known(m, n, o, st))
		return true;
	if (o->infer && node->kind == OP_Reshape && reshape_zeros(m, n, o->infer, st))
		return false; /* the node stays, with a constant shape: its consumers need no revisit */
	node = ir_node(m, n);
	bool all_const = node->kind == OP_Constant;
	for (uint32_t i = 0; i < node->ninputs; i++) {
		if (!node->inputs[i])
			continue;
		if (!fold_is_constant(m, node->inputs[i])) {
			if (node->kind == OP_Shape || node->kind == OP_Size)
				return fold_shape_of(m, n, st);
			return false;
		}
		all_const = true;
	}
	if (!all_const || !ev_kernel_find(node->domain, node->op_type))
		return false;
	/* the result's size, when it can be known, is checked before the
	 * kernel allocates it (a Tile of a billion floats is 4 GB) */
	int64_t predicted = predicted_bytes(m, n);
	if (predicted >= 0 && !fits(m, n, o, predicted, st, d))
		return false;
	/* a deferred result's size is its large operand's: it was predicted */
	TensorId deferred = predicted >= 0 ? defer_scaled(m, n, o) : 0;
	if (!deferred && predicted >= 0)
		deferred = fold_defer_move(m, n);
	if (deferred) {
		const char *name;
		spend(m, n, o, (int64_t)ir_tensor(m, deferred)->nbytes);
		ValueId nv = install(m, ir_node(m, n)->outputs[0], deferred, &name);
		finish(m, n, &nv, &name, 1);
		st->folded++;
		return true;
	}
	/* on the heap: a node may have any number of inputs and outputs */
	EvValue **in = calloc(node->ninputs + 1, sizeof *in), **out = calloc(node->noutputs + 1, sizeof *out);
	if (!in || !out)
		abort();
	bool ok = true;
	for (uint32_t i = 0; i < node->ninputs; i++)
		if (node->inputs[i] && !(in[i] = ev_value_from_ir_tensor(m, ir_value(m, node->inputs[i])->tensor)))
			ok = false; /* over the evaluator's limits: not folded */
	Diag quiet;
	diag_init(&quiet, NULL);
	ok = ok && ev_eval_node(m, n, in, out, &quiet);
	ok = ok && ev_result_portable(node->op_type, in, node->ninputs, out, node->noutputs);
	for (uint32_t i = 0; i < node->ninputs; i++)
		ev_unref(in[i]);
	free(in);
	node = ir_node(m, n);
	int64_t made = 0;
	for (uint32_t i = 0; ok && i < node->noutputs; i++) {
		if (!node->outputs[i])
			continue;
		if (!out[i] || out[i]->kind != EV_TENSOR || out[i]->dtype == DT_STRING)
			ok = false;
		else if (!fits(m, n, o, (int64_t)out[i]->nbytes, st, d))
			ok = false;
		else
			made += (int64_t)out[i]->nbytes;
	}
	/* the outputs together (each alone was checked), when not predicted */
	if (ok && node->noutputs > 1 && !fits(m, n, o, made, st, d))
		ok = false;
	if (!ok) {
		if (quiet.nerrors) {
			st->errors++;
			if (o->report_errors)
				diag_warning(d, NULL, "not folded: %s", quiet.first);
		}
		for (uint32_t i = 0; i < node->noutputs; i++)
			ev_unref(out[i]);
		free(out);
		return false;
	}
	spend(m, n, o, made);
	uint32_t nout = node->noutputs;
	ValueId *nv = malloc(sizeof *nv * (nout + 1));
	const char **names = malloc(sizeof *names * (nout + 1));
	if (!nv || !names)
		abort();
	for (uint32_t i = 0; i < nout; i++) {
		nv[i] = 0;
		ValueId ov = ir_node(m, n)->outputs[i];
		if (ov) {
			/* the kernel's buffer becomes the initializer's: no second copy */
			size_t nbytes = out[i]->nbytes;
			void *own = ev_take_data(out[i]);
			TensorId t = own ? ir_tensor_adopt(m, out[i]->dtype, out[i]->dims, out[i]->rank, own, nbytes)
			                 : ir_tensor_new(m, out[i]->dtype, out[i]->dims, out[i]->rank, out[i]->data, nbytes);
			nv[i] = install(m, ov, t, &names[i]);
		}
		ev_unref(out[i]);
	}
	finish(m, n, nv, names, nout);
	free(nv);
	free(names);
	free(out);
	st->folded++;
	return true;
}

/* Remove nodes whose outputs nothing reads (after folding, the Shape chains
 * that fed a now-constant Reshape), repeatedly.  Graph outputs, ops with
 * bodies and other domains' ops stay. */
static unsigned remove_dead(IrModel *m)
{
	unsigned removed = 0;
	bool again = true;
	while (again) {
		again = false;
		for (NodeId n = 1; n < m->nnodes; n++) {
			IrNode *node = ir_node(m, n);
			if (node->dead || (node->domain[0] && strcmp(node->domain, "ai.onnx") != 0))
				continue;
			bool used = false;
			for (uint32_t i = 0; i < node->noutputs && !used; i++) {
				ValueId v = node->outputs[i];
				used = v && (ir_value(m, v)->nuses || ir_value(m, v)->is_output);
			}
			for (uint32_t a = 0; a < node->nattrs && !used; a++)
				used = node->attrs[a].type == ATTR_GRAPH || node->attrs[a].type == ATTR_GRAPHS;
			if (used)
				continue;
			uint32_t nin = node->ninputs;
			ValueId *ins = malloc(sizeof *ins * (nin + 1));
			if (!ins)
				abort();
			memcpy(ins, node->inputs, sizeof *ins * nin);
			ir_node_remove(m, n);
			removed++;
			again = true;
			for (uint32_t i = 0; i < nin; i++)
				if (ins[i] && ir_is_constant(m, ins[i]) && !ir_value(m, ins[i])->is_input)
					ir_value_remove(m, ins[i]);
			free(ins);
		}
	}
	return removed;
}

bool fold_model(IrModel *m, const FoldOptions *opt, FoldStats *st, Diag *d)
{
	memset(st, 0, sizeof *st);
	FoldOptions local = *opt;
	const FoldOptions *o = &local;
	int64_t added = 0;
	if (!local.added) {
		local.added = &added;
		local.base_bytes = live_init_bytes(m);
	}
	if (!local.max_total_bytes)
		local.max_total_bytes = fold_default_budget(m);
	InferState *own = NULL;
	if (!local.infer) {
		/* shapes and known values from inference; a contradiction found
		 * there is not folding's business: fold what can be folded */
		Diag quiet;
		diag_init(&quiet, NULL);
		own = local.infer = infer_new(m);
		infer_model(own, &quiet);
	}
	/* worklist seeded with every node in topological order, graph by graph */
	NodeId *work = NULL;
	size_t nwork = 0, cap = 0, head = 0;
	bool *queued = calloc(m->nnodes + 1, sizeof *queued);
	for (GraphId g = 1; g < m->ngraphs; g++) {
		if (ir_graph(m, g)->dead)
			continue;
		uint32_t count;
		NodeId *order = ir_topo_order(m, g, &count, d);
		if (!order) {
			free(work);
			free(queued);
			return false;
		}
		if (nwork + count > cap) {
			cap = (nwork + count) * 2;
			work = realloc(work, sizeof *work * cap);
		}
		for (uint32_t i = 0; i < count; i++) {
			work[nwork++] = order[i];
			queued[order[i]] = true;
		}
		free(order);
	}
	/* inputs of folded nodes that may become orphans */
	ValueId *orphans = NULL;
	size_t norphans = 0;
	ValueId *ins = NULL;        /* the node's inputs and output names, kept */
	const char **names = NULL;  /* across fold_node, which removes it */
	uint32_t capins = 0, capnames = 0;
	while (head < nwork) {
		NodeId n = work[head++];
		queued[n] = false;
		IrNode *node = ir_node(m, n);
		if (node->dead)
			continue;
		uint32_t nin = node->ninputs, nout = node->noutputs;
		/* grown to the widest node so far: any number of inputs and outputs */
		if (nin > capins) {
			capins = nin;
			ins = realloc(ins, sizeof *ins * capins);
		}
		if (nout > capnames) {
			capnames = nout;
			names = realloc(names, sizeof *names * capnames);
		}
		if ((nin && !ins) || (nout && !names))
			abort();
		if (nin)
			memcpy(ins, node->inputs, sizeof *ins * nin);
		for (uint32_t i = 0; i < nout; i++)
			names[i] = node->outputs[i] ? ir_value(m, node->outputs[i])->name : NULL;
		if (!fold_node(m, n, o, st, d))
			continue;
		orphans = realloc(orphans, sizeof *orphans * (norphans + nin + 1));
		for (uint32_t i = 0; i < nin; i++)
			if (ins[i])
				orphans[norphans++] = ins[i];
		/* the consumers of the new constants may fold now */
		for (uint32_t i = 0; i < nout; i++) {
			if (!names[i])
				continue;
			ValueId v = ir_lookup(m, ir_node(m, n)->graph, names[i]);
			for (uint32_t u = 0; v && u < ir_value(m, v)->nuses; u++) {
				NodeId c = ir_value(m, v)->uses[u].node;
				if (queued[c])
					continue;
				if (nwork == cap) {
					cap = cap ? cap * 2 : 64;
					work = realloc(work, sizeof *work * cap);
				}
				work[nwork++] = c;
				queued[c] = true;
			}
		}
	}
	for (size_t i = 0; i < norphans; i++) {
		IrValue *v = ir_value(m, orphans[i]);
		if (!v->dead && !v->producer && v->tensor && !v->is_input && ir_value_remove(m, orphans[i]))
			st->removed_initializers++;
	}
	free(orphans);
	free(ins);
	free(names);
	free(work);
	free(queued);
	st->dead = remove_dead(m);
	infer_free(own);
	return true;
}
