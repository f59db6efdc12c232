/* layout.c - the layout level's Transpose pushing (CATALOGUE.md J122-J124),
 * a built-in pass the rewrite engine runs at each Transpose (rewrite.c,
 * docs/engine.md "The layout level").
 *
 * A Transpose y = T_p(x) is pushed down through the ops that commute with
 * it: op(T_q(u)) = T_q'(op'(u)), where op' is op with its axes read through
 * q and q' is the permutation its output carries (q itself for elementwise
 * ops, fewer or more axes where the op drops or adds some).  The values
 * reached that way form a region; each is T_q(u) for a u the pushed ops
 * compute.  At its edge:
 *   - a Transpose that reads a region value composes with it: it goes if
 *     the composition is the identity (the inverse pair cancels), else it
 *     becomes one Transpose of u;
 *   - a constant operand of a pushed op is transposed instead (a new
 *     initializer), a scalar is left alone, another operand of the same
 *     rank is read through a new inverse Transpose (or through nothing, when
 *     it comes out of a Transpose that the inverse cancels);
 *   - a reader that is none of these (MatMul, Conv, a graph output, a node
 *     in a body) reads T_q(u) again, one new Transpose per value.
 * The push is made only when the region ends with fewer Transposes than it
 * began with, so the layout level never adds one.  When pushing through
 * everything would cost new inverse Transposes, the region without the ops
 * that need them is tried too, and the cheaper of the two is taken.
 *
 * Permutations follow ONNX: T_q(u) has axis i = axis q[i] of u. */
#include "layout.h"
#include "runtime/eval/eval.h"

#include <stdlib.h>
#include <string.h>

#define MAXR 16                 /* larger ranks are left alone */
#define MAXOUT 64               /* nodes with more outputs are left alone */

typedef struct Perm {
	int n;
	int p[MAXR];
} Perm;

struct Layout {
	uint32_t capnodes, capvalues;
	uint32_t *in_region;        /* node: == epoch if in the region */
	uint32_t *banned;           /* node: == attempt if it may not be pushed through */
	uint32_t *absorbed;         /* node: == epoch if a Transpose the region meets */
	uint32_t *is_region;        /* value: == epoch if a region value */
	int *vperm;                 /* value: index into perms */
	int *nperm;                 /* node: the perm its inputs carry */
	ValueId *under;             /* value: the u of T_q(u), once built */
	uint32_t epoch, attempt;
	Perm *perms;  int nperms, capperms;
	NodeId *region; int nregion, capregion;
	ValueId *vals; int nvals, capvals;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		abort();
	return q;
}

#define GROW(arr, n, cap) do { if ((n) == (cap)) { (cap) = (cap) ? 2 * (cap) : 32; \
	(arr) = xrealloc((arr), sizeof *(arr) * (size_t)(cap)); } } while (0)

Layout *layout_new(void)
{
	Layout *L = calloc(1, sizeof *L);
	if (!L)
		abort();
	return L;
}

void layout_free(Layout *L)
{
	if (!L)
		return;
	free(L->in_region);
	free(L->banned);
	free(L->absorbed);
	free(L->is_region);
	free(L->vperm);
	free(L->nperm);
	free(L->under);
	free(L->perms);
	free(L->region);
	free(L->vals);
	free(L);
}

void layout_change_free(LayoutChange *c)
{
	for (int i = 0; i < c->nmatched; i++)
		free(c->matched[i]);
	for (int i = 0; i < c->nremoved; i++)
		free(c->removed[i]);
	free(c->matched);
	free(c->removed);
	free(c->created);
	memset(c, 0, sizeof *c);
}

static void grow_tables(Layout *L, IrModel *m)
{
	if (m->nnodes + 1 > L->capnodes) {
		uint32_t cap = 2 * (m->nnodes + 1);
		L->in_region = xrealloc(L->in_region, sizeof *L->in_region * cap);
		L->banned = xrealloc(L->banned, sizeof *L->banned * cap);
		L->absorbed = xrealloc(L->absorbed, sizeof *L->absorbed * cap);
		L->nperm = xrealloc(L->nperm, sizeof *L->nperm * cap);
		memset(L->in_region + L->capnodes, 0, sizeof *L->in_region * (cap - L->capnodes));
		memset(L->banned + L->capnodes, 0, sizeof *L->banned * (cap - L->capnodes));
		memset(L->absorbed + L->capnodes, 0, sizeof *L->absorbed * (cap - L->capnodes));
		L->capnodes = cap;
	}
	if (m->nvalues + 1 > L->capvalues) {
		uint32_t cap = 2 * (m->nvalues + 1);
		L->is_region = xrealloc(L->is_region, sizeof *L->is_region * cap);
		L->vperm = xrealloc(L->vperm, sizeof *L->vperm * cap);
		L->under = xrealloc(L->under, sizeof *L->under * cap);
		memset(L->is_region + L->capvalues, 0, sizeof *L->is_region * (cap - L->capvalues));
		L->capvalues = cap;
	}
}

/* ---- permutations ----------------------------------------------------------------- */

static bool perm_identity(const Perm *q)
{
	for (int i = 0; i < q->n; i++)
		if (q->p[i] != i)
			return false;
	return true;
}

static bool perm_equal(const Perm *a, const Perm *b)
{
	return a->n == b->n && memcmp(a->p, b->p, sizeof *a->p * (size_t)a->n) == 0;
}

static Perm perm_inverse(const Perm *q)
{
	Perm r = {.n = q->n};
	for (int i = 0; i < q->n; i++)
		r.p[q->p[i]] = i;
	return r;
}

/* T_b(T_a(x)) = T_c(x) with c[i] = a[b[i]]. */
static Perm perm_then(const Perm *a, const Perm *b)
{
	Perm c = {.n = b->n};
	for (int i = 0; i < b->n; i++)
		c.p[i] = a->p[b->p[i]];
	return c;
}

/* A Transpose node's permutation (default: the axes reversed); false if unknown. */
static bool transpose_perm(IrModel *m, NodeId t, Perm *q)
{
	IrNode *n = ir_node(m, t);
	if (n->ninputs != 1 || !n->inputs[0] || n->noutputs != 1 || !n->outputs[0])
		return false;
	const IrAttr *a = ir_attr(m, t, "perm");
	int rank = a ? (int)a->n : ir_value(m, n->inputs[0])->shape.rank;
	if (a && a->type != ATTR_INTS)
		return false;
	if (rank < 0 || rank > MAXR)
		return false;
	q->n = rank;
	bool seen[MAXR] = {false};
	for (int i = 0; i < rank; i++) {
		int64_t v = a ? a->ints[i] : rank - 1 - i;
		if (v < 0 || v >= rank || seen[v])
			return false;
		seen[v] = true;
		q->p[i] = (int)v;
	}
	return true;
}

/* Dropping the axes in `drop` (of T_q(u)'s frame): the permutation left. */
static Perm perm_remove(const Perm *q, const bool *drop)
{
	bool gone[MAXR] = {false};
	for (int i = 0; i < q->n; i++)
		if (drop[i])
			gone[q->p[i]] = true;
	Perm r = {0};
	for (int i = 0; i < q->n; i++) {
		if (drop[i])
			continue;
		int below = 0;
		for (int b = 0; b < q->p[i]; b++)
			below += gone[b];
		r.p[r.n++] = q->p[i] - below;
	}
	return r;
}

/* Inserting size-1 axes at output positions `add` (out rank n): the same
 * positions in u's output, and this permutation. */
static Perm perm_insert(const Perm *q, const bool *add, int n)
{
	int pos[MAXR], np = 0;
	for (int j = 0; j < n; j++)
		if (!add[j])
			pos[np++] = j;
	Perm r = {.n = n};
	for (int j = 0; j < n; j++)
		r.p[j] = j;
	for (int i = 0; i < q->n; i++)
		r.p[pos[i]] = pos[q->p[i]];
	return r;
}

/* Gather on axis a with indices of rank k: the output's permutation. */
static Perm perm_gather(const Perm *q, int a, int k)
{
	int b = q->p[a];
	Perm r = {.n = q->n - 1 + k};
#define POS(c) ((c) < b ? (c) : (c) - 1 + k)
	for (int j = 0; j < r.n; j++)
		r.p[j] = j < a ? POS(q->p[j]) : j < a + k ? b + (j - a) : POS(q->p[j - k + 1]);
#undef POS
	return r;
}

/* ---- the ops a Transpose passes through ---------------------------------------------- */

typedef enum Kind {
	K_NONE, K_UNARY, K_EW, K_REDUCE, K_ARG, K_SOFTMAX, K_CONCAT, K_SPLIT, K_SLICE, K_PAD,
	K_SQUEEZE, K_UNSQUEEZE, K_GATHER,
} Kind;

/* The ops a Transpose passes through, by kind. */
static const struct { const char *op; Kind kind; } kinds[] = {
	{"Abs", K_UNARY}, {"Acos", K_UNARY}, {"Acosh", K_UNARY}, {"Asin", K_UNARY}, {"Asinh", K_UNARY},
	{"Atan", K_UNARY}, {"Atanh", K_UNARY}, {"BitwiseNot", K_UNARY}, {"Cast", K_UNARY},
	{"CastLike", K_UNARY}, {"Ceil", K_UNARY}, {"Celu", K_UNARY}, {"Clip", K_UNARY}, {"Cos", K_UNARY},
	{"Cosh", K_UNARY}, {"DequantizeLinear", K_UNARY}, {"Elu", K_UNARY}, {"Erf", K_UNARY},
	{"Exp", K_UNARY}, {"Floor", K_UNARY}, {"Gelu", K_UNARY}, {"HardSigmoid", K_UNARY},
	{"HardSwish", K_UNARY}, {"Identity", K_UNARY}, {"IsInf", K_UNARY}, {"IsNaN", K_UNARY},
	{"LeakyRelu", K_UNARY}, {"Log", K_UNARY}, {"Mish", K_UNARY}, {"Neg", K_UNARY}, {"Not", K_UNARY},
	{"QuantizeLinear", K_UNARY}, {"Reciprocal", K_UNARY}, {"Relu", K_UNARY}, {"Round", K_UNARY},
	{"Selu", K_UNARY}, {"Shrink", K_UNARY}, {"Sigmoid", K_UNARY}, {"Sign", K_UNARY}, {"Sin", K_UNARY},
	{"Sinh", K_UNARY}, {"Softplus", K_UNARY}, {"Softsign", K_UNARY}, {"Sqrt", K_UNARY},
	{"Tan", K_UNARY}, {"Tanh", K_UNARY}, {"ThresholdedRelu", K_UNARY},
	{"Add", K_EW}, {"And", K_EW}, {"BitShift", K_EW}, {"BitwiseAnd", K_EW}, {"BitwiseOr", K_EW},
	{"BitwiseXor", K_EW}, {"Div", K_EW}, {"Equal", K_EW}, {"Greater", K_EW}, {"GreaterOrEqual", K_EW},
	{"Less", K_EW}, {"LessOrEqual", K_EW}, {"Max", K_EW}, {"Mean", K_EW}, {"Min", K_EW}, {"Mod", K_EW},
	{"Mul", K_EW}, {"Or", K_EW}, {"PRelu", K_EW}, {"Pow", K_EW}, {"Sub", K_EW}, {"Sum", K_EW},
	{"Where", K_EW}, {"Xor", K_EW},
	{"ReduceL1", K_REDUCE}, {"ReduceL2", K_REDUCE}, {"ReduceLogSum", K_REDUCE},
	{"ReduceLogSumExp", K_REDUCE}, {"ReduceMax", K_REDUCE}, {"ReduceMean", K_REDUCE},
	{"ReduceMin", K_REDUCE}, {"ReduceProd", K_REDUCE}, {"ReduceSum", K_REDUCE},
	{"ReduceSumSquare", K_REDUCE},
	{"ArgMax", K_ARG}, {"ArgMin", K_ARG},
	{"Softmax", K_SOFTMAX}, {"LogSoftmax", K_SOFTMAX}, {"Hardmax", K_SOFTMAX},
	{"Concat", K_CONCAT}, {"Split", K_SPLIT}, {"Slice", K_SLICE}, {"Pad", K_PAD},
	{"Squeeze", K_SQUEEZE}, {"Unsqueeze", K_UNSQUEEZE}, {"Gather", K_GATHER},
};

/* Does v have a dim known to be 0? */
static bool zero_size(IrModel *m, ValueId v)
{
	const Shape *s = v ? &ir_value(m, v)->shape : NULL;
	for (int i = 0; s && i < s->rank; i++)
		if (s->dims[i].size == 0)
			return true;
	return false;
}

/* The op's kind for pushing Transposes; K_NONE for other domains and for
 * ops on zero-size tensors: ONNX Runtime runs ArgMin over an empty axis in
 * one layout and refuses it in another (make difftest,
 * push-transpose-zero-size-argmin), and moving nothing gains nothing. */
static Kind kind_of(IrModel *m, NodeId n)
{
	IrNode *node = ir_node(m, n);
	if (node->domain[0])
		return K_NONE;
	for (uint32_t i = 0; i < node->ninputs; i++)
		if (zero_size(m, node->inputs[i]))
			return K_NONE;
	for (uint32_t i = 0; i < node->noutputs; i++)
		if (zero_size(m, node->outputs[i]))
			return K_NONE;
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (!strcmp(node->op_type, kinds[i].op))
			return kinds[i].kind;
	return K_NONE;
}

/* Input slots whose layout follows the Transpose: all of them for
 * elementwise ops and Concat, else the data input. */
static bool layout_slot(Kind k, uint32_t slot)
{
	return k == K_EW || k == K_CONCAT || slot == 0;
}

/* The integers of a constant 1-D (or scalar) int64/int32 input; -1 if not one. */
static int const_ints(IrModel *m, ValueId v, int64_t *out, int max)
{
	if (!v || !ir_is_constant(m, v))
		return -1;
	TensorId tid = ir_value(m, v)->tensor;
	IrTensor *t = ir_tensor(m, tid);
	if ((t->dtype != DT_INT64 && t->dtype != DT_INT32) || t->rank > 1 || t->numel > max)
		return -1;
	size_t nb;
	const uint8_t *b = ir_tensor_bytes(m, tid, &nb);
	if (!b && t->numel)
		return -1;
	for (int64_t i = 0; i < t->numel; i++) {
		if (t->dtype == DT_INT64) {
			int64_t x;
			memcpy(&x, b + 8 * i, 8);
			out[i] = x;
		} else {
			int32_t x;
			memcpy(&x, b + 4 * i, 4);
			out[i] = x;
		}
	}
	return (int)t->numel;
}

static int64_t attr_int(IrModel *m, NodeId n, const char *name, int64_t dflt)
{
	const IrAttr *a = ir_attr(m, n, name);
	return a && a->type == ATTR_INT ? a->i : dflt;
}

/* A node's axes: from its attribute `name`, or else from constant input
 * `slot` (0: none).  -1: given but not readable; 0 with *given false: absent. */
static int node_axes(IrModel *m, NodeId n, const char *name, uint32_t slot, int64_t *ax, bool *given)
{
	IrNode *node = ir_node(m, n);
	const IrAttr *a = ir_attr(m, n, name);
	*given = false;
	if (a) {
		if (a->type != ATTR_INTS || a->n > MAXR)
			return -1;
		for (size_t i = 0; i < a->n; i++)
			ax[i] = a->ints[i];
		*given = true;
		return (int)a->n;
	}
	if (slot && slot < node->ninputs && node->inputs[slot]) {
		*given = true;
		return const_ints(m, node->inputs[slot], ax, MAXR);
	}
	return 0;
}

/* Normalize axes against rank r into a mask; false if out of range or repeated. */
static bool axes_mask(const int64_t *ax, int n, int r, bool *mask)
{
	memset(mask, 0, sizeof *mask * MAXR);
	for (int i = 0; i < n; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
		if (a < 0 || a >= r || mask[a])
			return false;
		mask[a] = true;
	}
	return true;
}

static bool axis_ok(int64_t a, int r, int *out)
{
	if (a < 0)
		a += r;
	if (a < 0 || a >= r)
		return false;
	*out = (int)a;
	return true;
}

/* Can node n be pushed through when its data input is T_q(u)?  Fills the
 * permutations its outputs carry. */
static bool node_plan(IrModel *m, NodeId n, const Perm *q, Perm *outs)
{
	IrNode *node = ir_node(m, n);
	Kind k = kind_of(m, n);
	int R = q->n, opset = (int)ir_opset(m, ""), a;
	int64_t ax[MAXR];
	bool mask[MAXR], given;
	for (uint32_t i = 0; i < node->noutputs; i++)
		outs[i] = *q;
	switch (k) {
	case K_NONE:
		return false;
	case K_UNARY:
		if (!strcmp(node->op_type, "QuantizeLinear") || !strcmp(node->op_type, "DequantizeLinear")) {
			/* per-tensor only: a per-axis scale names an axis of the input */
			for (uint32_t i = 1; i < node->ninputs; i++)
				if (node->inputs[i] && ir_value(m, node->inputs[i])->shape.rank != 0)
					return false;
			return attr_int(m, n, "block_size", 0) == 0;
		}
		return true;
	case K_EW:
		return true;
	case K_CONCAT:
		return axis_ok(attr_int(m, n, "axis", R), R, &a);
	case K_SPLIT:
		return axis_ok(attr_int(m, n, "axis", 0), R, &a);
	case K_SOFTMAX:
		/* before opset 13 these flatten to 2-D at the axis */
		return opset >= 13 && axis_ok(attr_int(m, n, "axis", -1), R, &a);
	case K_SLICE:
		if (opset < 10) {
			int na = node_axes(m, n, "axes", 0, ax, &given);
			return na >= 0 && (given || ir_attr(m, n, "starts")) && axes_mask(ax, na, R, mask);
		}
		if (node->ninputs > 3 && node->inputs[3]) {
			int na = const_ints(m, node->inputs[3], ax, MAXR);
			return na >= 0 && axes_mask(ax, na, R, mask);
		}
		{	/* no axes: the first len(starts) axes */
			const Shape *s = &ir_value(m, node->inputs[1])->shape;
			return node->ninputs >= 3 && s->rank == 1 && s->dims[0].size >= 0 && s->dims[0].size <= R;
		}
	case K_PAD:
		if (opset < 11) {
			const IrAttr *p = ir_attr(m, n, "pads");
			return p && p->type == ATTR_INTS && (int)p->n == 2 * R;
		}
		if (node->ninputs > 3 && node->inputs[3]) {
			int na = const_ints(m, node->inputs[3], ax, MAXR);
			return na >= 0 && axes_mask(ax, na, R, mask);
		} else {
			int64_t pads[2 * MAXR];
			return node->ninputs >= 2 && const_ints(m, node->inputs[1], pads, 2 * MAXR) == 2 * R;
		}
	case K_REDUCE: case K_ARG: case K_SQUEEZE: {
		int na;
		bool keep = k != K_SQUEEZE && attr_int(m, n, "keepdims", 1);
		if (k == K_ARG) {
			if (!axis_ok(attr_int(m, n, "axis", 0), R, &a))
				return false;
			memset(mask, 0, sizeof mask);
			mask[a] = true;
		} else {
			na = node_axes(m, n, "axes", 1, ax, &given);
			if (na < 0 || (k == K_SQUEEZE && na == 0))
				return false;  /* Squeeze without axes depends on the shape */
			if (na == 0 && attr_int(m, n, "noop_with_empty_axes", 0))
				return true;
			if (na == 0)
				for (int i = 0; i < R; i++)
					ax[na++] = i;
			if (!axes_mask(ax, na, R, mask))
				return false;
			/* ONNX Runtime's ReduceMin/ReduceMax give NaN or not depending on where
			 * a NaN meets the running minimum, and which of its loops runs depends
			 * on the reduced axes' places (contiguous or strided, in which order):
			 * a float one is not moved below a Transpose (docs/evaluator.md). */
			if ((!strcmp(node->op_type, "ReduceMin") || !strcmp(node->op_type, "ReduceMax")) &&
			    (!ir_value(m, node->inputs[0])->dtype || ev_is_float(ir_value(m, node->inputs[0])->dtype)))
				return false;
		}
		if (!keep)
			outs[0] = perm_remove(q, mask);
		return true;
	}
	case K_UNSQUEEZE: {
		int na = node_axes(m, n, "axes", 1, ax, &given);
		if (na <= 0 || R + na > MAXR || !axes_mask(ax, na, R + na, mask))
			return false;
		outs[0] = perm_insert(q, mask, R + na);
		return true;
	}
	case K_GATHER: {
		int kr = node->ninputs > 1 && node->inputs[1] ? ir_value(m, node->inputs[1])->shape.rank : -1;
		if (kr < 0 || R - 1 + kr > MAXR || !axis_ok(attr_int(m, n, "axis", 0), R, &a))
			return false;
		outs[0] = perm_gather(q, a, kr);
		return true;
	}
	}
	return false;
}

/* ---- the region ------------------------------------------------------------------ */

static int add_perm(Layout *L, const Perm *q)
{
	GROW(L->perms, L->nperms, L->capperms);
	L->perms[L->nperms] = *q;
	return L->nperms++;
}

static bool region_value(Layout *L, ValueId v) { return L->is_region[v] == L->epoch; }
static bool region_node(Layout *L, NodeId n) { return L->in_region[n] == L->epoch; }
static const Perm *vperm(Layout *L, ValueId v) { return &L->perms[L->vperm[v]]; }

static void add_value(Layout *L, ValueId v, const Perm *q)
{
	L->is_region[v] = L->epoch;
	L->vperm[v] = add_perm(L, q);
	GROW(L->vals, L->nvals, L->capvals);
	L->vals[L->nvals++] = v;
}

static bool is_transpose(IrModel *m, NodeId n)
{
	return !ir_node(m, n)->domain[0] && !strcmp(ir_node(m, n)->op_type, "Transpose");
}

/* Grow the region from y = T_p(x) through every reader that can be pushed through. */
static void grow_region(Layout *L, IrModel *m, ValueId y, const Perm *p, GraphId g)
{
	L->epoch++;
	L->nregion = L->nvals = L->nperms = 0;
	add_value(L, y, p);
	for (int k = 0; k < L->nvals; k++) {
		ValueId w = L->vals[k];
		for (uint32_t u = 0; u < ir_value(m, w)->nuses; u++) {
			Use use = ir_value(m, w)->uses[u];
			NodeId n = use.node;
			IrNode *node = ir_node(m, n);
			if (region_node(L, n) || L->banned[n] == L->attempt || node->graph != g)
				continue;
			Kind kind = kind_of(m, n);
			if (kind == K_NONE || !layout_slot(kind, use.slot) || node->noutputs > MAXOUT)
				continue;
			Perm outs[MAXOUT];
			Perm q = *vperm(L, w);
			if (!node_plan(m, n, &q, outs)) {
				L->banned[n] = L->attempt;
				continue;
			}
			L->in_region[n] = L->epoch;
			L->nperm[n] = add_perm(L, &q);
			GROW(L->region, L->nregion, L->capregion);
			L->region[L->nregion++] = n;
			for (uint32_t o = 0; o < ir_node(m, n)->noutputs; o++)
				if (ir_node(m, n)->outputs[o])
					add_value(L, ir_node(m, n)->outputs[o], &outs[o]);
		}
	}
}

static bool const_transposable(IrModel *m, ValueId v, int R)
{
	IrTensor *t = ir_tensor(m, ir_value(m, v)->tensor);
	int bits = dtype_bits(t->dtype);
	return t->rank <= R && bits > 0 && bits % 8 == 0 && t->dtype != DT_STRING;
}

/* Every operand of every region node must fit: region values with the
 * node's permutation, constants, scalars, or values of the full rank.  Bans
 * the nodes that do not; true if none was. */
static bool check_region(Layout *L, IrModel *m)
{
	bool ok = true;
	for (int r = 0; r < L->nregion; r++) {
		NodeId n = L->region[r];
		IrNode *node = ir_node(m, n);
		Kind kind = kind_of(m, n);
		const Perm *q = &L->perms[L->nperm[n]];
		bool fits = true;
		for (uint32_t i = 0; i < node->ninputs && fits; i++) {
			ValueId v = node->inputs[i];
			if (!v)
				continue;
			if (!layout_slot(kind, i))
				fits = !region_value(L, v);
			else if (region_value(L, v))
				fits = perm_equal(vperm(L, v), q);
			else if (ir_is_constant(m, v))
				fits = const_transposable(m, v, q->n);
			else
				fits = ir_value(m, v)->shape.rank == 0 || ir_value(m, v)->shape.rank == q->n;
		}
		if (!fits) {
			L->banned[n] = L->attempt;
			ok = false;
		}
	}
	return ok;
}

static void build_region(Layout *L, IrModel *m, ValueId y, const Perm *p, GraphId g)
{
	for (int tries = 0; tries < 64; tries++) {
		grow_region(L, m, y, p, g);
		if (check_region(L, m))
			return;
	}
	grow_region(L, m, y, p, g);
	L->nregion = 0;   /* did not settle: push through nothing */
	L->nvals = 1;
}

/* A non-region operand v of a node moved below T_q: it is read as
 * T_{q^-1}(v).  Returns the Transpose that costs (0: none needed) in *src
 * and *perm: its input and permutation. */
static bool inverse_operand(IrModel *m, ValueId v, const Perm *q, ValueId *src, Perm *perm)
{
	Perm inv = perm_inverse(q);
	*src = v;
	*perm = inv;
	if (ir_value(m, v)->shape.rank == 0 || perm_identity(&inv))
		return false;
	NodeId p = ir_value(m, v)->producer;
	Perm r;
	if (p && is_transpose(m, p) && transpose_perm(m, p, &r) && r.n == q->n) {
		*src = ir_node(m, p)->inputs[0];
		*perm = perm_then(&r, &inv);
		return !perm_identity(perm);
	}
	return true;
}

/* A Transpose of g that reads a region value of rank n and composes with
 * it (*r: its permutation). */
static bool meets(Layout *L, IrModel *m, NodeId t, GraphId g, int n, Perm *r)
{
	return !region_node(L, t) && is_transpose(m, t) && ir_node(m, t)->graph == g && transpose_perm(m, t, r) &&
	       r->n == n;
}

/* A reader of region value w that is not pushed through: it needs T_q(u) back. */
static bool boundary_use(Layout *L, IrModel *m, Use use, GraphId g, int n)
{
	Perm r;
	return !region_node(L, use.node) && !meets(L, m, use.node, g, n, &r);
}

static bool has_boundary(Layout *L, IrModel *m, ValueId w, GraphId g)
{
	IrValue *val = ir_value(m, w);
	if (val->is_output)
		return true;
	for (uint32_t u = 0; u < val->nuses; u++)
		if (boundary_use(L, m, val->uses[u], g, vperm(L, w)->n))
			return true;
	return false;
}

/* Transposes before (the pushed one and those met) and after the push.
 * Nodes that need a new inverse Transpose are listed in *costly, a fresh
 * array (NULL if none) the caller frees; whatever *costly held before is
 * not looked at. */
static void region_cost(Layout *L, IrModel *m, GraphId g, int *before, int *after,
                        NodeId **costly, int *ncostly)
{
	*before = 1;
	*after = 0;
	*costly = NULL;
	*ncostly = 0;
	ValueId seen_src[64];
	Perm seen_perm[64];
	int nseen = 0;
	for (int k = 0; k < L->nvals; k++) {
		ValueId w = L->vals[k];
		const Perm *q = vperm(L, w);
		if (has_boundary(L, m, w, g) && !perm_identity(q))
			(*after)++;
		IrValue *val = ir_value(m, w);
		for (uint32_t u = 0; u < val->nuses; u++) {
			NodeId t = val->uses[u].node;
			Perm r;
			if (!meets(L, m, t, g, q->n, &r))
				continue;
			(*before)++;
			Perm c = perm_then(q, &r);
			*after += !perm_identity(&c);
		}
	}
	NodeId released[64];
	int nreleased = 0;
	for (int r = 0; r < L->nregion; r++) {
		NodeId n = L->region[r];
		IrNode *node = ir_node(m, n);
		Kind kind = kind_of(m, n);
		const Perm *q = &L->perms[L->nperm[n]];
		for (uint32_t i = 0; i < node->ninputs; i++) {
			ValueId v = node->inputs[i], src;
			Perm perm;
			if (!v || !layout_slot(kind, i) || region_value(L, v) || ir_is_constant(m, v))
				continue;
			bool costs = inverse_operand(m, v, q, &src, &perm);
			if (src != v && nreleased < 64) {
				/* read around the Transpose that made v: noted, it may go */
				NodeId t = ir_value(m, v)->producer;
				bool dup = false;
				for (int k = 0; k < nreleased && !dup; k++)
					dup = released[k] == t;
				if (!dup)
					released[nreleased++] = t;
			}
			if (!costs)
				continue;
			bool dup = false;
			for (int s = 0; s < nseen && !dup; s++)
				dup = seen_src[s] == src && perm_equal(&seen_perm[s], &perm);
			if (!dup) {
				(*after)++;
				if (nseen < 64) {
					seen_src[nseen] = src;
					seen_perm[nseen++] = perm;
				}
			}
			*costly = xrealloc(*costly, sizeof **costly * (size_t)(*ncostly + 1));
			(*costly)[(*ncostly)++] = n;
		}
	}
	/* a Transpose read around by pushed nodes only goes with them (apply removes it);
	 * one that reads a region value was counted as met */
	for (int k = 0; k < nreleased; k++) {
		IrNode *t = ir_node(m, released[k]);
		IrValue *o = ir_value(m, t->outputs[0]);
		bool all_pushed = !o->is_output && !region_value(L, t->inputs[0]);
		for (uint32_t u = 0; u < o->nuses && all_pushed; u++)
			all_pushed = region_node(L, o->uses[u].node);
		*before += all_pushed;
	}
}

/* ---- building the result ------------------------------------------------------------- */

static char *label(IrModel *m, NodeId n)
{
	char buf[300];
	char *s = strdup(ir_node_label(m, n, buf, sizeof buf));
	if (!s)
		abort();
	return s;
}

static void add_label(char ***list, int *n, char *s)
{
	*list = xrealloc(*list, sizeof **list * (size_t)(*n + 1));
	(*list)[(*n)++] = s;
}

void layout_change_matched(LayoutChange *c, IrModel *m, NodeId n)
{
	add_label(&c->matched, &c->nmatched, label(m, n));
}

void layout_change_removed(LayoutChange *c, IrModel *m, NodeId n)
{
	add_label(&c->removed, &c->nremoved, label(m, n));
}

void layout_change_created(LayoutChange *c, NodeId n)
{
	c->created = xrealloc(c->created, sizeof *c->created * (size_t)(c->ncreated + 1));
	c->created[c->ncreated++] = n;
}

static ValueId new_ints(IrModel *m, GraphId g, const int64_t *v, int n)
{
	int64_t dim = n;
	TensorId t = ir_tensor_new(m, DT_INT64, &dim, 1, v, sizeof *v * (size_t)n);
	return ir_add_initializer(m, g, ir_fresh_name(m, "axes"), t);
}

/* Constant c (rank <= R) as T_{q^-1} of c with leading 1s up to rank R. */
static ValueId transposed_const(IrModel *m, GraphId g, ValueId c, const Perm *q)
{
	TensorId tid = ir_value(m, c)->tensor;
	IrTensor *t = ir_tensor(m, tid);
	int R = q->n, k = t->rank;
	if (k == 0)
		return c;
	int64_t D[MAXR], od[MAXR], stride[MAXR], idx[MAXR] = {0};
	for (int i = 0; i < R; i++)
		D[i] = i < R - k ? 1 : t->dims[i - (R - k)];
	Perm inv = perm_inverse(q);
	for (int i = R - 1, s = 1; i >= 0; i--) {
		stride[i] = s;
		s *= (int)D[i];
	}
	for (int i = 0; i < R; i++)
		od[i] = D[inv.p[i]];
	size_t es = (size_t)dtype_bits(t->dtype) / 8, nb;
	const uint8_t *src = ir_tensor_bytes(m, tid, &nb);
	int64_t numel = t->numel;
	uint8_t *dst = xrealloc(NULL, es * (size_t)numel);
	for (int64_t o = 0; o < numel; o++) {
		int64_t off = 0;
		for (int i = 0; i < R; i++)
			off += idx[i] * stride[inv.p[i]];
		memcpy(dst + es * (size_t)o, src + es * (size_t)off, es);
		for (int i = R - 1; i >= 0 && ++idx[i] == od[i]; i--)
			idx[i] = 0;
	}
	TensorId nt = ir_tensor_new(m, t->dtype, od, R, dst, es * (size_t)numel);
	free(dst);
	return ir_add_initializer(m, g, ir_fresh_name(m, ir_value(m, c)->name), nt);
}

static NodeId new_transpose(IrModel *m, GraphId g, NodeId before, ValueId x, const Perm *p)
{
	NodeId t = ir_node_new(m, g, before, "", "Transpose", "", &x, 1, NULL, 1);
	int64_t perm[MAXR];
	for (int i = 0; i < p->n; i++)
		perm[i] = p->p[i];
	ir_attr_set_ints(m, t, "perm", perm, (size_t)p->n);
	return t;
}

static void remap_axes(const int64_t *ax, int n, int r, const Perm *q, int64_t *out)
{
	for (int i = 0; i < n; i++)
		out[i] = q->p[ax[i] < 0 ? ax[i] + r : ax[i]];
}

/* Node n moved below T_q: its copy, reading `ins` (nin of them), with its
 * axes remapped: a new constant input, or the attribute set on the copy. */
static NodeId moved_node(IrModel *m, NodeId n, const Perm *q, ValueId *ins, uint32_t nin)
{
	IrNode *node = ir_node(m, n);
	GraphId g = node->graph;
	Kind kind = kind_of(m, n);
	int R = q->n, opset = (int)ir_opset(m, ""), na = -1;
	int64_t ax[MAXR], nax[2 * MAXR];
	bool given;
	const char *attr = NULL;        /* the attribute to set on the copy: nax, na values */
	ValueId in[5];                  /* Slice, Pad, Reduce*, Squeeze: at most 5 inputs */
	if (kind == K_SLICE || kind == K_PAD || kind == K_REDUCE || kind == K_SQUEEZE) {
		memset(in, 0, sizeof in);
		memcpy(in, ins, sizeof *in * (nin < 5 ? nin : 5));
		ins = in;
	}
	switch (kind) {
	case K_REDUCE: case K_SQUEEZE:
		na = node_axes(m, n, "axes", 1, ax, &given);
		if (na <= 0)
			break;
		remap_axes(ax, na, R, q, nax);
		if (ir_attr(m, n, "axes"))
			attr = "axes";
		else
			in[1] = new_ints(m, g, nax, na);
		break;
	case K_SLICE:
		if (opset < 10) {
			const IrAttr *s = ir_attr(m, n, "starts");
			na = node_axes(m, n, "axes", 0, ax, &given);
			if (!given)
				for (na = 0; na < (int)s->n; na++)
					ax[na] = na;
			attr = "axes";
		} else if (nin > 3 && in[3]) {
			na = const_ints(m, in[3], ax, MAXR);
		} else {
			na = (int)ir_value(m, in[1])->shape.dims[0].size;
			for (int i = 0; i < na; i++)
				ax[i] = i;
		}
		remap_axes(ax, na, R, q, nax);
		if (!attr) {
			in[3] = new_ints(m, g, nax, na);
			nin = nin < 4 ? 4 : nin;
		}
		break;
	case K_PAD:
		if (nin > 3 && in[3]) {          /* opset 18's axes */
			na = const_ints(m, in[3], ax, MAXR);
			remap_axes(ax, na, R, q, nax);
			in[3] = new_ints(m, g, nax, na);
			break;
		}
		int64_t pads[2 * MAXR];
		if (opset < 11) {
			const IrAttr *p = ir_attr(m, n, "pads");
			memcpy(pads, p->ints, sizeof *pads * 2 * (size_t)R);
		} else {
			const_ints(m, in[1], pads, 2 * MAXR);
		}
		for (int i = 0; i < R; i++) {
			nax[q->p[i]] = pads[i];
			nax[R + q->p[i]] = pads[R + i];
		}
		na = 2 * R;
		if (opset < 11)
			attr = "pads";
		else
			in[1] = new_ints(m, g, nax, na);
		break;
	case K_ARG: case K_GATHER: case K_SPLIT: case K_SOFTMAX: case K_CONCAT: {
		int a = 0;
		axis_ok(attr_int(m, n, "axis", kind == K_SOFTMAX ? -1 : 0), R, &a);
		nax[0] = q->p[a];
		na = 1;
		attr = "axis";
		break;
	}
	default:
		break;
	}
	uint32_t nout = node->noutputs;
	const char *names[MAXOUT];
	for (uint32_t i = 0; i < nout; i++)
		names[i] = node->outputs[i] ? NULL : "";
	NodeId c = ir_node_new(m, g, n, "", node->op_type, node->name, ins, nin, names, nout);
	ir_copy_attrs(m, c, n);
	if (attr && !strcmp(attr, "axis"))
		ir_attr_set_int(m, c, attr, nax[0]);
	else if (attr)
		ir_attr_set_ints(m, c, attr, nax, (size_t)na);
	return c;
}

/* Snapshot of v's uses: the loops below rewire them. */
static Use *uses_of(IrModel *m, ValueId v, uint32_t *n)
{
	IrValue *val = ir_value(m, v);
	*n = val->nuses;
	Use *u = xrealloc(NULL, sizeof *u * (val->nuses + 1));
	if (val->nuses)
		memcpy(u, val->uses, sizeof *u * val->nuses);
	return u;
}

/* Graph output slots of g that hold old now hold nv; old's name is taken
 * over once old's producer is gone (recorded in renames). */
static void take_outputs(IrModel *m, GraphId g, ValueId old, ValueId nv, ValueId *renames, const char **names,
                         int *nrenames)
{
	IrGraph *gr = ir_graph(m, g);
	if (!ir_value(m, old)->is_output)
		return;
	for (uint32_t j = 0; j < gr->noutputs; j++)
		if (gr->outputs[j] == old)
			ir_set_output(m, g, j, nv);
	ir_value_set_type(m, nv, ir_value(m, old)->dtype, &ir_value(m, old)->shape);
	renames[*nrenames] = nv;
	names[(*nrenames)++] = ir_value(m, old)->name;
}

/* Build the region's result: the moved nodes, the Transposes it ends with;
 * remove what it replaces. */
static void apply(Layout *L, IrModel *m, NodeId root, LayoutChange *c)
{
	GraphId g = ir_node(m, root)->graph;
	ValueId x = ir_node(m, root)->inputs[0], y = ir_node(m, root)->outputs[0];
	int nvals = L->nvals;
	ValueId *renames = xrealloc(NULL, sizeof *renames * (size_t)(2 * nvals + 2));
	const char **names = xrealloc(NULL, sizeof *names * (size_t)(2 * nvals + 2));
	int nrenames = 0;
	for (int k = 0; k < nvals; k++)
		L->under[L->vals[k]] = 0;
	L->under[y] = x;
	/* the moved nodes, each once its region operands are built */
	NodeId *order = xrealloc(NULL, sizeof *order * (size_t)(L->nregion + 1));
	int norder = 0;
	uint8_t *done = calloc((size_t)L->nregion + 1, 1);
	ValueId inv_src[64], inv_out[64];
	Perm inv_perm[64];
	int ninv = 0;
	NodeId *released = NULL;  /* Transposes an operand was read through, now bypassed */
	int nreleased = 0;
	while (norder < L->nregion) {
		for (int r = 0; r < L->nregion; r++) {
			NodeId n = L->region[r];
			IrNode *node = ir_node(m, n);
			bool ready = !done[r];
			for (uint32_t i = 0; ready && i < node->ninputs; i++)
				ready = !node->inputs[i] || !region_value(L, node->inputs[i]) || L->under[node->inputs[i]];
			if (!ready)
				continue;
			done[r] = 1;
			order[norder++] = n;
			Kind kind = kind_of(m, n);
			const Perm *q = &L->perms[L->nperm[n]];
			uint32_t nin = node->ninputs;
			ValueId *ins = xrealloc(NULL, sizeof *ins * (nin + 1));
			for (uint32_t i = 0; i < nin; i++) {
				ValueId v = ir_node(m, n)->inputs[i], src;
				Perm perm;
				ins[i] = v;
				if (!v || !layout_slot(kind, i))
					continue;
				if (region_value(L, v))
					ins[i] = L->under[v];
				else if (ir_is_constant(m, v))
					ins[i] = transposed_const(m, g, v, q);
				else if (!inverse_operand(m, v, q, &src, &perm)) {
					ins[i] = src;
					if (src != v) {
						released = xrealloc(released, sizeof *released * (size_t)(nreleased + 1));
						released[nreleased++] = ir_value(m, v)->producer;
					}
				} else {
					if (src != v) {
						released = xrealloc(released, sizeof *released * (size_t)(nreleased + 1));
						released[nreleased++] = ir_value(m, v)->producer;
					}
					int s = 0;
					while (s < ninv && !(inv_src[s] == src && perm_equal(&inv_perm[s], &perm)))
						s++;
					if (s == ninv) {
						NodeId t = new_transpose(m, g, n, src, &perm);
						layout_change_created(c, t);
						if (ninv < 64) {
							inv_src[ninv] = src;
							inv_perm[ninv] = perm;
							inv_out[ninv++] = ir_node(m, t)->outputs[0];
						}
						ins[i] = ir_node(m, t)->outputs[0];
					} else {
						ins[i] = inv_out[s];
					}
				}
			}
			NodeId nn = moved_node(m, n, q, ins, nin);
			free(ins);
			layout_change_created(c, nn);
			for (uint32_t o = 0; o < ir_node(m, n)->noutputs; o++)
				if (ir_node(m, n)->outputs[o])
					L->under[ir_node(m, n)->outputs[o]] = ir_node(m, nn)->outputs[o];
		}
	}
	free(done);
	/* the Transposes met: composed, or gone */
	NodeId *met = NULL;
	int nmet = 0;
	for (int k = 0; k < nvals; k++) {
		ValueId w = L->vals[k];
		const Perm *q = vperm(L, w);
		uint32_t nu;
		Use *uses = uses_of(m, w, &nu);
		for (uint32_t u = 0; u < nu; u++) {
			NodeId t = uses[u].node;
			Perm r;
			if (!meets(L, m, t, g, q->n, &r) || L->absorbed[t] == L->epoch)
				continue;
			L->absorbed[t] = L->epoch;
			layout_change_matched(c, m, t);
			met = xrealloc(met, sizeof *met * (size_t)(nmet + 1));
			met[nmet++] = t;
			ValueId out = ir_node(m, t)->outputs[0], nv;
			Perm cp = perm_then(q, &r);
			/* a graph output can take the name of a moved node's output, not of x */
			if (perm_identity(&cp) && (!ir_value(m, out)->is_output || (w != y && !ir_value(m, L->under[w])->is_output))) {
				nv = L->under[w];
			} else {
				NodeId nt = perm_identity(&cp)
					? ir_node_new(m, g, t, "", "Identity", "", &L->under[w], 1, NULL, 1)
					: new_transpose(m, g, t, L->under[w], &cp);
				layout_change_created(c, nt);
				nv = ir_node(m, nt)->outputs[0];
				ir_value_set_type(m, nv, ir_value(m, out)->dtype, &ir_value(m, out)->shape);
			}
			ir_replace_all_uses(m, out, nv);
			take_outputs(m, g, out, nv, renames, names, &nrenames);
		}
		free(uses);
	}
	/* the readers left outside read T_q(u) again */
	bool keep_root = false;
	for (int k = 0; k < nvals; k++) {
		ValueId w = L->vals[k];
		const Perm *q = vperm(L, w);
		if (!has_boundary(L, m, w, g))
			continue;
		if (w == y) {
			keep_root = true;
			continue;
		}
		ValueId nv = L->under[w];
		if (!perm_identity(q) || (ir_value(m, w)->is_output && ir_value(m, L->under[w])->is_output)) {
			NodeId producer = ir_value(m, w)->producer;
			NodeId nt = perm_identity(q)
				? ir_node_new(m, g, producer, "", "Identity", "", &L->under[w], 1, NULL, 1)
				: new_transpose(m, g, producer, L->under[w], q);
			layout_change_created(c, nt);
			nv = ir_node(m, nt)->outputs[0];
			ir_value_set_type(m, nv, ir_value(m, w)->dtype, &ir_value(m, w)->shape);
		}
		uint32_t nu;
		Use *uses = uses_of(m, w, &nu);
		for (uint32_t u = 0; u < nu; u++)
			if (boundary_use(L, m, uses[u], g, q->n))
				ir_set_input(m, uses[u].node, uses[u].slot, nv);
		free(uses);
		take_outputs(m, g, w, nv, renames, names, &nrenames);
	}
	/* remove what was replaced, readers first, and the constants only it read */
	ValueId *freed = NULL;
	int nfreed = 0;
	NodeId *gone = xrealloc(NULL, sizeof *gone * (size_t)(nmet + norder + 1));
	int ngone = 0;
	for (int i = 0; i < nmet; i++)
		gone[ngone++] = met[i];
	for (int i = norder - 1; i >= 0; i--)
		gone[ngone++] = order[i];
	if (!keep_root)
		gone[ngone++] = root;
	for (int i = 0; i < ngone; i++) {
		NodeId n = gone[i];
		layout_change_removed(c, m, n);
		for (uint32_t k = 0; k < ir_node(m, n)->ninputs; k++) {
			ValueId v = ir_node(m, n)->inputs[k];
			if (v && !ir_value(m, v)->producer && ir_is_constant(m, v) && !ir_value(m, v)->is_input) {
				freed = xrealloc(freed, sizeof *freed * (size_t)(nfreed + 1));
				freed[nfreed++] = v;
			}
		}
		ir_node_remove(m, n);
	}
	/* a Transpose whose readers all read around it now goes too */
	for (int i = 0; i < nreleased; i++) {
		NodeId t = released[i];
		ValueId o = ir_node(m, t)->dead ? 0 : ir_node(m, t)->outputs[0];
		if (o && !ir_value(m, o)->nuses && !ir_value(m, o)->is_output) {
			layout_change_removed(c, m, t);
			ir_node_remove(m, t);
		}
	}
	free(released);
	/* a Transpose made for an operand that a met Transpose then replaced is read by nothing */
	int kept = 0;
	for (int i = 0; i < c->ncreated; i++) {
		NodeId k = c->created[i];
		ValueId o = ir_node(m, k)->dead ? 0 : ir_node(m, k)->outputs[0];
		if (!o)
			continue;   /* removed above: it was a released one */
		if (is_transpose(m, k) && !ir_value(m, o)->nuses && !ir_value(m, o)->is_output)
			ir_node_remove(m, k);
		else
			c->created[kept++] = k;
	}
	c->ncreated = kept;
	for (int i = 0; i < nfreed; i++)
		if (!ir_value(m, freed[i])->dead && !ir_value(m, freed[i])->nuses && !ir_value(m, freed[i])->is_output)
			ir_value_remove(m, freed[i]);
	for (int i = 0; i < nrenames; i++)
		ir_value_rename(m, renames[i], names[i]);
	free(freed);
	free(gone);
	free(met);
	free(order);
	free(renames);
	free(names);
}

bool layout_push_transpose(Layout *L, IrModel *m, NodeId t, LayoutChange *c)
{
	memset(c, 0, sizeof *c);
	IrNode *node = ir_node(m, t);
	Perm p;
	if (node->dead || !is_transpose(m, t) || !transpose_perm(m, t, &p) || perm_identity(&p))
		return false;
	ValueId y = node->outputs[0];
	GraphId g = node->graph;
	if (ir_value(m, y)->is_output || !ir_value(m, y)->nuses)
		return false;
	grow_tables(L, m);
	L->attempt++;
	int before, after, nfree_before, nfree_after, ncostly;
	NodeId *costly = NULL;
	build_region(L, m, y, &p, g);
	region_cost(L, m, g, &before, &after, &costly, &ncostly);
	if (ncostly) {
		/* the region without the nodes that need a new inverse Transpose */
		for (int i = 0; i < ncostly; i++)
			L->banned[costly[i]] = L->attempt;
		build_region(L, m, y, &p, g);
		NodeId *more = NULL;
		int nmore;
		region_cost(L, m, g, &nfree_before, &nfree_after, &more, &nmore);
		free(more);
		if (nfree_before - nfree_after < before - after) {
			for (int i = 0; i < ncostly; i++)
				L->banned[costly[i]] = 0;
			build_region(L, m, y, &p, g);
			region_cost(L, m, g, &before, &after, &more, &nmore);
			free(more);
		} else {
			before = nfree_before;
			after = nfree_after;
		}
	}
	free(costly);
	if (after >= before || L->nregion == 0)
		return false;
	c->before = before;
	c->after = after;
	layout_change_matched(c, m, t);
	for (int r = 0; r < L->nregion; r++)
		layout_change_matched(c, m, L->region[r]);
	apply(L, m, t, c);
	return true;
}
