/* gen.c - instances of a rule's left side, for graft verify (verify.c).
 *
 * The pattern is walked the way the checker binds it (root, then each
 * operand depth first); every op becomes a node of a fresh model and is run
 * on the evaluator as soon as it is built, so what comes next is drawn
 * knowing the real dtypes and shapes before it: a permutation of the input's
 * rank, axes within it, a Reshape target of the same size, a Conv weight
 * whose channels fit, Gather indices within the axis.  Variables become
 * graph inputs (x) or initializers (x:const, literals, int lists such as
 * axes and shapes); a variable used twice is one value; an attribute
 * variable is one attribute value.  Where an older opset spells an input as
 * an attribute (Squeeze's axes before 13), the operand is written as that
 * attribute.  Anything the draw gets wrong (an op missing at the opset,
 * shapes that do not broadcast, a dtype the kernel lacks) makes the
 * evaluator fail, and the instance is dropped.
 *
 * Draws: the opset, preferred element type and base rank verify.c aims at
 * (GenTarget), else uniformly in the rule's range, float mostly, rank 0-6;
 * each operand keeps the preferred type with probability 0.85; a base
 * shape with dims mostly 1-3; each operand that of its node's first input,
 * or a broadcasting variant (dims set to 1, leading dims dropped, a
 * scalar); data mixing small numbers with edge values of every class
 * (edge_value) but those the rule declares it differs on.
 *
 * Guards steer the draws (guard_comparands): a leaf gets the rank the
 * guard says it has when the rank class aimed at allows it, the dims it
 * ties to values drawn before (dim(v, 1) == dim(k, 1): one size, the way a
 * graph has it) and the element type it names (dtype(s) == float32); a
 * Reshape's or Expand's target the dims the guard gives its output
 * (dim(r, 1) == dim(k, 1) * dim(e, 2)), an Expand growing a 1 the guard
 * compares; Attention's Q, V and mask fit a K built before them.
 *
 * Boundaries: toward what the guard says (the literal or bound value it
 * compares an attribute, a constant list, an operand's rank, dims and
 * element count with; clean constants where it wants them moderate; the
 * inverse of a permutation it composes), and, in the sweep (sweep_digit),
 * through every combination of edge classes of the first tensors and of
 * pool and Conv windows at their shape arithmetic's boundaries
 * (window_attrs).  A pattern that reads Shape gets symbolic input dims, so
 * the Shape stays a node (make_symbolic).
 *
 * The rule is read from its program (dsl_lower, dsl/mprog.h): the guard
 * is its MI_GUARD step, the expression both back ends run, whose variables
 * are the registers MProg.vnames names; the pattern's ops (is every one
 * defined at an opset, do their opset forms change, is there a Shape, is a
 * variable's shape read) are the root and the MI_PRODUCER steps; ", s =>
 * y#k" is MProg.also.  The nodes are built from MProg.pats, the pattern as
 * the lowering records it beside the steps (which leave out what the draws
 * need): each node's operands and attributes in written order, an optional
 * _? too, the flags of a variable used again, the attributes an older opset
 * spells as inputs ([axes = [1]]) among the attributes, a literal operand
 * as its check step's constant.  The data a rule is spared ([finite_data],
 * [moderate_data], [nonnegative_indices]) and its tolerance are MRule's. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/eval/eval.h"
#include "ir/opschema.h"
#include "dsl/opset_forms.h"
#include "dsl/mprog.h"
#include "verify_internal.h"

#define GEN_MAX_VARS 64
#define GEN_MAX_SLOTS 24
#define GEN_MAX_OUTS 8
#define GEN_MAX_TP 8

typedef enum GVarKind { GV_VALUE, GV_NODE, GV_ATTR, GV_REST } GVarKind;

/* What a pattern variable is bound to in the instance. */
typedef struct GVar {
	const char *name;
	GVarKind kind;
	ValueId v;                  /* GV_VALUE (0: an absent optional) */
	NodeId node;                /* GV_NODE: the node; GV_ATTR: the node holding the attribute */
	const char *attr;           /* GV_ATTR */
	ValueId rest[GEN_MAX_SLOTS];    /* GV_REST */
	int nrest;
} GVar;

typedef struct Gen {
	IrModel *m;
	Rng *rng;
	int opset;
	bool moderate_data;  /* a [moderate_data] rule's instance: data (not constants: guards judge
	                        those) without huge, tiny or denormal values */
	bool finite_data;    /* a [finite_data] rule's: no inf or NaN */
	bool symbolic;       /* graph inputs get symbolic dims, so a Shape of them is no constant */
	int64_t sweep;       /* >= 0: the instance's place in the sweep (sweep_digit); -1: all drawn */
	int64_t sweep_div;   /* the place value of the next sweep digit */
	const MRuleSet *set; /* the rules (their externs) */
	const MRule *mr;     /* the rule, */
	const MProg *prog;   /* its program: its ops, its registers' variables (vnames) */
	const MExpr *guard;  /* the rule's, as lowered: attribute values are drawn toward its literals */
	bool nonneg_indices; /* a [nonnegative_indices] rule's: Gather indices in its data are >= 0 */
	int idx_rank;        /* the shape of the last Gather indices drawn like token ids (-1: none) */
	int64_t idx_dims[EV_MAX_RANK];
	bool shared_dims;    /* make_symbolic names a dim by its axis and size ("d1_3"), so inputs
	                        of one shape share symbols, as exporters' "batch" and "seq" */
	int dtype;                  /* preferred element type */
	int rank_lo, rank_hi;       /* the rank class aimed at (-1: none) */
	int rank;                   /* base shape */
	int64_t dims[6];
	GVar vars[GEN_MAX_VARS];
	int nvars;
	EvValue **vals;             /* per ValueId: the value's data */
	uint32_t capvals;
	int nnames;                 /* node outputs made (t1, t2, ...) */
	int nnodes;                 /* nodes made (n1, n2, ...) */
	char *why;                  /* GenInstance.why */
} Gen;

static bool fail(Gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(Gen *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g->why, 256, fmt, ap);
	va_end(ap);
	return false;
}

static GVar *var_find(Gen *g, const char *name)
{
	for (int i = 0; i < g->nvars; i++)
		if (strcmp(g->vars[i].name, name) == 0)
			return &g->vars[i];
	return NULL;
}

static GVar *var_new(Gen *g, const char *name, GVarKind kind)
{
	if (g->nvars == GEN_MAX_VARS)
		return NULL;
	GVar *v = &g->vars[g->nvars++];
	memset(v, 0, sizeof *v);
	v->name = name;
	v->kind = kind;
	return v;
}

static void set_val(Gen *g, ValueId v, EvValue *val)
{
	if (v >= g->capvals) {
		uint32_t cap = g->capvals ? g->capvals : 64;
		while (cap <= v)
			cap *= 2;
		g->vals = realloc(g->vals, sizeof *g->vals * cap);
		memset(g->vals + g->capvals, 0, sizeof *g->vals * (cap - g->capvals));
		g->capvals = cap;
	}
	ev_unref(g->vals[v]);
	g->vals[v] = val;
}

static EvValue *val_of(Gen *g, ValueId v)
{
	return v && v < g->capvals ? g->vals[v] : NULL;
}

static void set_type(Gen *g, ValueId v, const EvValue *t)
{
	Dim dims[EV_MAX_RANK + 1];
	for (int i = 0; i < t->rank; i++)
		dims[i] = (Dim){t->dims[i], NULL};
	Shape s = {t->rank, dims};
	ir_value_set_type(g->m, v, t->dtype, &s);
}

/* ---- element types ------------------------------------------------------------ */

/* The types instances use (the evaluator's tensor types that data can be drawn for). */
static const int drawn_types[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_INT8, DT_UINT8,
                                  DT_INT16, DT_INT32, DT_INT64, DT_UINT32, DT_UINT64, DT_BOOL};

/* The element types formal `f` of schema s allows, as a mask (bit = DType). */
static uint32_t allowed_types(const OpSchema *s, const OpFormal *f)
{
	if (strncmp(f->type_str, "tensor(", 7) == 0) {
		char name[32];
		snprintf(name, sizeof name, "%.*s", (int)strlen(f->type_str) - 8, f->type_str + 7);
		int dt = dtype_from_name(name);
		return dt ? 1u << dt : 0;
	}
	for (int i = 0; i < s->nconstraints; i++)
		if (strcmp(s->constraints[i].param, f->type_str) == 0)
			return s->constraints[i].tensor_types;
	return 0;
}

/* Any of the allowed types (0 if none can be drawn). */
static int draw_any_type(Gen *g, uint32_t allowed)
{
	int cand[16], n = 0;
	for (size_t i = 0; i < sizeof drawn_types / sizeof *drawn_types; i++)
		if (allowed & (1u << drawn_types[i]))
			cand[n++] = drawn_types[i];
	return n ? cand[rng_below(g->rng, n)] : 0;
}

/* The instance's preferred type if allowed (most of the time), else any. */
static int draw_type(Gen *g, uint32_t allowed)
{
	if ((allowed & (1u << g->dtype)) && rng_chance(g->rng, 0.85))
		return g->dtype;
	return draw_any_type(g, allowed);
}

/* ---- data ----------------------------------------------------------------------- */

/* The next digit, 0 .. base - 1, of the instance's place in the sweep
 * (-1 outside the sweep).  Every choice the sweep makes takes one digit,
 * in the order the instance is built: so the first instances of the sweep
 * go through every combination of the first few choices (the edge class
 * of each tensor, the window of each pool), whatever the seed. */
static int sweep_digit(Gen *g, int base)
{
	if (g->sweep < 0)
		return -1;
	int d = (int)(g->sweep / g->sweep_div % base);
	if (g->sweep_div <= INT64_MAX / base)
		g->sweep_div *= base;
	return d;
}

/* The edge classes a tensor is filled from: mixed (edges now and then
 * among ordinary numbers), or mostly one class of edges. */
enum { EDGE_MIXED, EDGE_PLAIN, EDGE_SMALL, EDGE_LARGE, EDGE_WILD, EDGE_CLASSES };

/* One value of edge class k for float type dt. */
static double class_value(Gen *g, int dt, int k)
{
	double huge = dt == DT_DOUBLE ? DBL_MAX : dt == DT_FLOAT16 ? 65504.0 : dt == DT_BFLOAT16 ? 3.3895e38 : FLT_MAX;
	double tiny = dt == DT_DOUBLE ? DBL_MIN : dt == DT_FLOAT16 ? 6.103515625e-05 : FLT_MIN;
	double denorm = dt == DT_DOUBLE ? 4.9406564584124654e-324 : dt == DT_FLOAT16 ? 5.960464477539063e-08
	                : dt == DT_BFLOAT16 ? 9.183549615799121e-41 : 1.401298464324817e-45;
	/* a denormal well above the smallest: its reciprocal overflows, a quotient by it need not */
	double denorm_mid = dt == DT_DOUBLE ? 0x1p-1050 : dt == DT_FLOAT16 ? 0x1p-20 : dt == DT_BFLOAT16 ? 0x1p-130 : 0x1p-140;
	double big = dt == DT_DOUBLE ? 0x1p520 : dt == DT_FLOAT16 ? 0x1p9 : 0x1p70;
	double small = dt == DT_DOUBLE ? 0x1p-540 : dt == DT_FLOAT16 ? 0x1p-13 : 0x1p-80;
	const double plain[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0};
	const double smalls[] = {tiny, -tiny, denorm, -denorm, denorm_mid, -denorm_mid, small, -small};
	const double larges[] = {huge, -huge, big, -big};
	const double wild[] = {INFINITY, -INFINITY, NAN};
	switch (k) {
	case EDGE_SMALL: return smalls[rng_below(g->rng, 8)];
	case EDGE_LARGE: return larges[rng_below(g->rng, 4)];
	case EDGE_WILD: return wild[rng_below(g->rng, 3)];
	default: return plain[rng_below(g->rng, 7)];
	}
}

/* A mixed tensor's edge value: one of any class.  Every rule, approximate
 * or not, sees all of them: a tolerance is about rounding, and an overflow
 * to inf, or an underflow to 0 that a later division turns into inf, is no
 * rounding.  Only a rule that declares it is spared: [finite_data] gets no
 * inf or NaN, [moderate_data] none of the large or small values in its data
 * (its constants have them: the rule's guard must judge those, with
 * moderate(c)). */
static double edge_value(Gen *g, int dt, bool constant)
{
	int k = rng_below(g->rng, 20);
	if (k < 3 && !g->finite_data)
		return class_value(g, dt, EDGE_WILD);
	if (k < 6 && !(g->moderate_data && !constant))
		return class_value(g, dt, EDGE_LARGE);
	if (k < 10 && !(g->moderate_data && !constant))
		return class_value(g, dt, EDGE_SMALL);
	return class_value(g, dt, EDGE_PLAIN);
}

static void fill(Gen *g, EvValue *t, bool constant, bool clean)
{
	/* In the sweep, a tensor is mostly of one edge class (three elements
	 * in four), the classes of the tensors going through every combination;
	 * a class the rule declares it differs on is left out.  Otherwise a
	 * quarter of the tensors are clean (no edges), so guards that want
	 * ordinary numbers pass; small tensors get more edges. */
	int k = sweep_digit(g, EDGE_CLASSES);
	if (clean)
		k = EDGE_MIXED;
	if ((k == EDGE_SMALL || k == EDGE_LARGE) && g->moderate_data && !constant)
		k = EDGE_MIXED;
	if (k == EDGE_WILD && g->finite_data)
		k = EDGE_MIXED;
	double pe = k > EDGE_MIXED ? 0.75 : clean || rng_chance(g->rng, 0.25) ? 0 : t->numel <= 4 ? 0.4 : 0.15;
	for (int64_t i = 0; i < t->numel; i++) {
		bool edge = rng_chance(g->rng, pe);
		if (t->dtype == DT_BOOL) {
			ev_set_i(t, i, rng_below(g->rng, 2));
		} else if (ev_is_float(t->dtype)) {
			double x = edge && k > EDGE_MIXED ? class_value(g, t->dtype, k)
			           : edge ? edge_value(g, t->dtype, constant)
			           : rng_chance(g->rng, 0.5) ? rng_range(g->rng, -6, 6) / 2.0
			           : (rng_unit(g->rng) * 2 - 1) * 4;
			ev_set_f(t, i, x);
		} else if (ev_is_unsigned_int(t->dtype)) {
			int bits = dtype_bits(t->dtype);
			uint64_t max = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
			uint64_t edges[] = {0, 1, max, max - 1};
			int e = k == EDGE_LARGE ? 2 + rng_below(g->rng, 2) : k == EDGE_PLAIN ? rng_below(g->rng, 2) : rng_below(g->rng, 4);
			ev_set_u(t, i, edge ? edges[e] : (uint64_t)rng_range(g->rng, 0, 9));
		} else {
			int bits = dtype_bits(t->dtype);
			int64_t max = bits >= 64 ? INT64_MAX : (int64_t)((1ull << (bits - 1)) - 1);
			int64_t edges[] = {0, 1, -1, max, -max - 1};
			int e = k == EDGE_LARGE ? 3 + rng_below(g->rng, 2) : k == EDGE_PLAIN ? rng_below(g->rng, 3) : rng_below(g->rng, 5);
			ev_set_i(t, i, edge ? edges[e] : rng_range(g->rng, -5, 5));
		}
	}
}

/* ---- the guard ---------------------------------------------------------------------- */

/* The guard is read as the lowering made it (the program's MI_GUARD step,
 * which both back ends run): facts and builtins are kinds (rank(x) is
 * ME_RANK of x's register), variables registers that MProg.vnames names,
 * value(v) is gone, a list compared with an int is ME_EVERY and two dims
 * shown equal ME_SAME_DIM.  Variables are met by name, as GVar keeps them. */

const MExpr *gen_guard(const MProg *p)
{
	for (int i = 0; i < p->ninsns; i++)
		if (p->insns[i].kind == MI_GUARD)
			return p->insns[i].e;
	return NULL;
}

/* e without the conversion of ints to floats the lowering puts where a
 * list is compared with floats. */
static const MExpr *bare(const MExpr *e)
{
	while (e && e->kind == ME_TO_FLOATS && e->nkids == 1)
		e = e->kids[0];
	return e;
}

const char *gen_var_name(const MProg *p, const MExpr *e)
{
	e = bare(e);
	if (e && (e->kind == ME_REG || e->kind == ME_OUT) && e->reg >= 0 && e->reg < p->nregs)
		return p->vnames[e->reg];
	return NULL;
}

static const char *var_named(Gen *g, const MExpr *e)
{
	return gen_var_name(g->prog, e);
}

static bool same_name(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* The builtin (or extern) a call of the guard is, by the name the rule
 * writes it with; NULL for anything else. */
static const char *call_name(Gen *g, const MExpr *e)
{
	switch (e->kind) {
	case ME_RANK: return "rank";
	case ME_NUMEL: return "numel";
	case ME_DIM: return "dim";
	case ME_DTYPEOF: return "dtype";
	case ME_SCALAR: return "scalar";
	case ME_INTSOF: return "ints";
	case ME_FINITE: return "finite";
	case ME_MODERATE: return "moderate";
	case ME_EXTERN: return g->set->externs[e->ext].decl->name;
	default: return NULL;
	}
}

/* The variable a fact names as its first argument (rank(x), scalar(a) of an
 * operand older opsets spell as an attribute), or NULL. */
static const char *fact_var(Gen *g, const MExpr *e)
{
	if (e->arg)
		return e->reg >= 0 && e->reg < g->prog->nregs ? g->prog->vnames[e->reg] : NULL;
	return e->nkids >= 1 ? var_named(g, e->kids[0]) : NULL;
}

/* Is e the variable `name`, or the call fn(name, ...) (fn NULL: the
 * variable; name NULL: any variable)? */
static bool is_subject(Gen *g, const MExpr *e, const char *fn, const char *name)
{
	e = bare(e);
	if (!fn) {
		return same_name(var_named(g, e), name);
	}
	const char *c = call_name(g, e), *v = c && strcmp(c, fn) == 0 ? fact_var(g, e) : NULL;
	return v && (!name || strcmp(v, name) == 0);
}

/* Is e a comparison of the guard (==, !=, <, <=, >, >=; ME_EVERY compares
 * every element of a list)?  Its operator in *op.  Two dims shown equal
 * (ME_SAME_DIM) are one too, read apart (guard_dim_comparands). */
static bool is_comparison(const MExpr *e, int *op)
{
	*op = e->kind == ME_SAME_DIM ? EX_EQ : e->op;
	return (e->kind == ME_BIN && e->op >= EX_EQ && e->op <= EX_GE) || e->kind == ME_EVERY;
}

/* What the rule's guard compares fn(name) with (rank(a) == 2, ints(a) ==
 * [2, 3], k == 1 with fn NULL, numel(w) == dim(x, 1); only == if eq), up
 * to max of them.  Instances drawn toward those meet the guard and its
 * boundary: where a rule is most often wrong. */
static int guard_comparands(Gen *g, const MExpr *e, const char *fn, const char *name, bool eq, const MExpr **out, int n,
                            int max)
{
	int op;
	if (!e || n >= max || e->kind == ME_SAME_DIM)
		return n;   /* (the sides of ME_SAME_DIM are dims, which fn never is) */
	if (is_comparison(e, &op)) {
		for (int side = 0; side < 2 && n < max && (!eq || op == EX_EQ); side++)
			if (is_subject(g, e->kids[side], fn, name))
				out[n++] = bare(e->kids[1 - side]);
		return n;
	}
	for (int i = 0; i < e->nkids; i++)
		n = guard_comparands(g, e->kids[i], fn, name, eq, out, n, max);
	return n;
}

/* The comparisons dim(name, i) == v of the guard: i into idx, v into val
 * (a dim of ME_SAME_DIM made in dims[n]). */
static int guard_dim_comparands(Gen *g, const MExpr *e, const char *name, const MExpr **idx, const MExpr **val,
                                MExpr *dims, int n, int max)
{
	int op;
	if (!e || n >= max)
		return n;
	if (e->kind == ME_SAME_DIM) {
		for (int side = 0; side < 2 && n < max; side++) {
			if (same_name(var_named(g, e->kids[2 * side]), name)) {
				idx[n] = e->kids[2 * side + 1];
				dims[n] = (MExpr){.kind = ME_DIM, .type = MT_INT, .kids = e->kids + 2 * (1 - side), .nkids = 2};
				val[n] = &dims[n];
				n++;
			}
		}
		return n;
	}
	if (is_comparison(e, &op) && op == EX_EQ) {
		for (int side = 0; side < 2 && n < max; side++) {
			const MExpr *v = bare(e->kids[side]);
			if (is_subject(g, v, "dim", name) && v->nkids == 2) {
				idx[n] = v->kids[1];
				val[n++] = bare(e->kids[1 - side]);
			}
		}
		return n;
	}
	for (int i = 0; i < e->nkids; i++)
		n = guard_dim_comparands(g, e->kids[i], name, idx, val, dims, n, max);
	return n;
}

/* One of those, picked with probability p (NULL: none, or not picked). */
static const MExpr *guard_pick(Gen *g, const char *fn, const char *name, double p)
{
	const MExpr *c[8];
	int n = guard_comparands(g, g->guard, fn, name, false, c, 0, 8);
	return n && rng_chance(g->rng, p) ? c[rng_below(g->rng, n)] : NULL;
}

static EvValue *val_of(Gen *g, ValueId v);

/* The value bound to variable `name` so far (NULL: none yet). */
static const EvValue *bound_value(Gen *g, const char *name)
{
	GVar *v = name ? var_find(g, name) : NULL;
	if (v && v->kind == GV_VALUE)
		return val_of(g, v->v);
	if (v && v->kind == GV_NODE && ir_node(g->m, v->node)->noutputs)
		return val_of(g, ir_node(g->m, v->node)->outputs[0]);
	return NULL;
}

/* A number literal of the guard (2, -1, 0.5, true). */
static bool literal_value(const MExpr *e, double *x)
{
	switch (e->kind) {
	case ME_INT: case ME_BOOL: *x = (double)e->i; return true;
	case ME_FLOAT: *x = e->f; return true;
	case ME_NEG:
		if (e->nkids == 1 && literal_value(e->kids[0], x)) {
			*x = -*x;
			return true;
		}
		return false;
	default:
		return false;
	}
}

/* A number a pattern writes as an attribute's value (MPatAttr.value, or
 * an item of its list): a literal or a dtype name. */
static bool attr_number(const MExpr *e, double *x)
{
	if (e && e->kind == ME_DTYPE) {
		*x = (double)e->i;
		return true;
	}
	return e && literal_value(e, x);
}

/* The value of int expression e from what the instance has bound so far:
 * literals, int attributes, rank, dim and numel of values, + - * /.
 * False where it cannot tell. */
static bool guard_int(Gen *g, const MExpr *e, int64_t *out)
{
	double x;
	int64_t a, b;
	if (!e)
		return false;
	if (literal_value(e, &x)) {
		*out = (int64_t)x;
		return true;
	}
	if (e->kind == ME_NEG && guard_int(g, e->kids[0], &a)) {
		*out = -a;
		return true;
	}
	if (e->kind == ME_BIN && guard_int(g, e->kids[0], &a) && guard_int(g, e->kids[1], &b)) {
		switch (e->op) {
		case EX_ADD: *out = a + b; return true;
		case EX_SUB: *out = a - b; return true;
		case EX_MUL: *out = a * b; return true;
		case EX_DIV: if (b == 0) return false; *out = a / b; return true;
		default: return false;
		}
	}
	if (e->kind == ME_REG) {
		const char *name = var_named(g, e);
		GVar *v = name ? var_find(g, name) : NULL;
		const IrAttr *at = v && v->kind == GV_ATTR ? ir_attr(g->m, v->node, v->attr) : NULL;
		if (!at || at->type != ATTR_INT)
			return false;
		*out = at->i;
		return true;
	}
	if ((e->kind == ME_RANK || e->kind == ME_NUMEL || e->kind == ME_DIM) && !e->arg && e->nkids >= 1) {
		const EvValue *t = bound_value(g, var_named(g, e->kids[0]));
		if (!t)
			return false;
		if (e->kind == ME_RANK)
			*out = t->rank;
		else if (e->kind == ME_NUMEL)
			*out = t->numel;
		else if (e->nkids == 2 && guard_int(g, e->kids[1], &a) && a >= -t->rank && a < t->rank)
			*out = t->dims[a < 0 ? a + t->rank : a];
		else
			return false;
		return true;
	}
	return false;
}

/* A list expression's ints ([2, 3], [dim(x, a)], range(n), ones(n), a ++ b); how
 * many, -1 if not all known. */
static int guard_ints(Gen *g, const MExpr *e, int64_t *out, int max)
{
	int64_t n;
	if (e && e->kind == ME_RANGE && guard_int(g, e->kids[0], &n) && n >= 0 && n <= max) {
		/* ints(r) == range(dim(ids, 1)): 0, 1, ..., n - 1 */
		for (int64_t i = 0; i < n; i++)
			out[i] = i;
		return (int)n;
	}
	if (e && e->kind == ME_ONES) {
		/* ones(n); n the guard leaves open (ones(len(ints(s)))): up to the base rank */
		if (!guard_int(g, e->kids[0], &n))
			n = rng_range(g->rng, 0, g->rank);
		if (n < 0 || n > max)
			return -1;
		for (int64_t i = 0; i < n; i++)
			out[i] = 1;
		return (int)n;
	}
	if (e && e->kind == ME_BIN && e->op == EX_CONCAT) {
		/* range(rank(a) - 2) ++ [rank(a) - 1, rank(a) - 2] */
		int a = guard_ints(g, e->kids[0], out, max);
		int b = a >= 0 ? guard_ints(g, e->kids[1], out + a, max - a) : -1;
		return b >= 0 ? a + b : -1;
	}
	if (!e || e->kind != ME_LIST || e->nkids > max)
		return -1;
	for (int i = 0; i < e->nkids; i++)
		if (!guard_int(g, e->kids[i], &out[i]))
			return -1;
	return e->nkids;
}

/* Does the guard call fn(..., name, ...) (moderate(c), finite(c),
 * all_greater(value(v), 0))? */
static bool guard_calls(Gen *g, const MExpr *e, const char *fn, const char *name)
{
	if (!e)
		return false;
	const char *c = call_name(g, e);
	if (c && strcmp(c, fn) == 0) {
		if (e->arg && same_name(fact_var(g, e), name))
			return true;
		for (int i = 0; i < e->nkids; i++)
			if (same_name(var_named(g, e->kids[i]), name))
				return true;
	}
	if (e->kind == ME_SAME_DIM && strcmp(fn, "dim") == 0)
		for (int i = 0; i < 4; i += 2)
			if (same_name(var_named(g, e->kids[i]), name))
				return true;
	for (int i = 0; i < e->nkids; i++)
		if (guard_calls(g, e->kids[i], fn, name))
			return true;
	return false;
}

/* Half the time, a constant the guard wants moderate, finite or above a
 * bound is drawn without edge values (the other half tries the guard). */
static bool wants_clean(Gen *g, const char *name)
{
	return (guard_calls(g, g->guard, "moderate", name) || guard_calls(g, g->guard, "finite", name) ||
	        guard_calls(g, g->guard, "all_greater", name)) && rng_chance(g->rng, 0.5);
}

/* Does the guard say rank(name) == want? */
static bool guard_wants_rank(Gen *g, const char *name, int64_t want)
{
	const MExpr *c[8];
	int n = guard_comparands(g, g->guard, "rank", name, true, c, 0, 8);
	int64_t v;
	for (int i = 0; i < n; i++)
		if (guard_int(g, c[i], &v) && v == want)
			return true;
	return false;
}

/* The element type the guard says `name` has (dtype(as) == float32), 0 if none. */
static int guard_dtype(Gen *g, const char *name)
{
	const MExpr *c[8];
	int n = guard_comparands(g, g->guard, "dtype", name, true, c, 0, 8);
	for (int k = 0; k < n; k++)
		if (c[k]->kind == ME_DTYPE && c[k]->i)
			return (int)c[k]->i;
	return 0;
}

/* ---- the pattern's ops, from the program --------------------------------------------- */

/* Op k of the rule's pattern: k = 0 the root (register 0), then each
 * MI_PRODUCER step in program order (one per op of the pattern): its
 * domain ("": ONNX's), name and node register; false past the last. */
static bool pattern_op(const MRule *mr, int k, const char **domain, const char **op, int *reg)
{
	if (k == 0) {
		*domain = mr->root_domain;
		*op = mr->root_op;
		*reg = 0;
		return true;
	}
	for (int i = 0; i < mr->prog.ninsns; i++) {
		const MInsn *x = &mr->prog.insns[i];
		if (x->kind == MI_PRODUCER && --k == 0) {
			*domain = x->domain;
			*op = x->op;
			*reg = x->reg;
			return true;
		}
	}
	return false;
}

/* Does the pattern use op `name` anywhere? */
static bool pattern_has_op(const MRule *mr, const char *name)
{
	const char *domain, *op;
	int reg;
	for (int k = 0; pattern_op(mr, k, &domain, &op, &reg); k++)
		if (strcmp(op, name) == 0)
			return true;
	return false;
}

/* Does the pattern read the shape of variable `name` (Shape(name),
 * Size(name)): is input 0 of such a node the variable, where it binds or
 * where a check finds it the same value? */
static bool reads_shape_of(const MRule *mr, const char *name)
{
	const MProg *p = &mr->prog;
	const char *domain, *op;
	int node;
	for (int k = 0; pattern_op(mr, k, &domain, &op, &node); k++) {
		if (strcmp(op, "Shape") != 0 && strcmp(op, "Size") != 0)
			continue;
		for (int i = 0; i < p->ninsns; i++) {
			const MInsn *x = &p->insns[i];
			if ((x->kind != MI_INPUT && x->kind != MI_ARG) || x->src != node || x->index != 0)
				continue;
			if (same_name(p->vnames[x->reg], name))
				return true;
			for (int j = 0; j < p->ninsns; j++) {
				const MExpr *c = p->insns[j].kind == MI_CHECK ? p->insns[j].e : NULL;
				if (c && c->kind == ME_SAME && c->kids[0]->kind == ME_REG && c->kids[0]->reg == x->reg &&
				    same_name(gen_var_name(p, c->kids[1]), name))
					return true;
			}
		}
	}
	return false;
}

/* ---- values ------------------------------------------------------------------------ */

/* t1, t2, ...: names of node outputs. */
static const char *fresh_name(Gen *g)
{
	char buf[32];
	do
		snprintf(buf, sizeof buf, "t%d", ++g->nnames);
	while (ir_lookup(g->m, IR_MAIN_GRAPH, buf));
	return arena_strdup(g->m->arena, buf);
}

/* A value holding t: an initializer (a constant) or a graph input whose
 * default value is t (the instance's data, overridable). */
static ValueId add_value(Gen *g, const char *hint, EvValue *t, bool constant)
{
	char name[64];
	snprintf(name, sizeof name, "%s", hint && *hint && strcmp(hint, "_") != 0 ? hint : "u");
	if (ir_lookup(g->m, IR_MAIN_GRAPH, name)) {
		for (int k = 1;; k++) {
			snprintf(name, sizeof name, "%s_%d", hint && *hint && strcmp(hint, "_") != 0 ? hint : "u", k);
			if (!ir_lookup(g->m, IR_MAIN_GRAPH, name))
				break;
		}
	}
	TensorId tid = ir_tensor_new(g->m, t->dtype, t->dims, t->rank, t->data, t->nbytes);
	ValueId v;
	if (constant) {
		v = ir_add_initializer(g->m, IR_MAIN_GRAPH, name, tid);
	} else {
		Dim dims[EV_MAX_RANK + 1];
		for (int i = 0; i < t->rank; i++)
			dims[i] = (Dim){t->dims[i], NULL};
		Shape s = {t->rank, dims};
		v = ir_add_input(g->m, IR_MAIN_GRAPH, name, t->dtype, &s);
		ir_add_initializer(g->m, IR_MAIN_GRAPH, name, tid);
	}
	set_val(g, v, t);
	return v;
}

/* A shape like ref (rank r, dims d), or one that broadcasts to it. */
static int variant_shape(Gen *g, int r, const int64_t *d, int64_t *out)
{
	int k = rng_below(g->rng, 10);
	if (k < 6 || r == 0) {
		memcpy(out, d, sizeof *d * (size_t)r);
		return r;
	}
	if (k < 8) {            /* some dims 1 */
		for (int i = 0; i < r; i++)
			out[i] = rng_chance(g->rng, 0.5) ? 1 : d[i];
		return r;
	}
	if (k < 9) {            /* leading dims dropped */
		int keep = rng_below(g->rng, r + 1);
		memcpy(out, d + (r - keep), sizeof *d * (size_t)keep);
		return keep;
	}
	return 0;               /* a scalar */
}

/* The dims of `name` (rank r) the guard ties to what is bound so far
 * (dim(name, i) == dim(x, j), == dim(k, 1) * dim(e, 2), == 3) set in
 * dims, and marked in fixed; returns r. */
static int guard_dims(Gen *g, const char *name, int r, int64_t *dims, bool *fixed)
{
	const MExpr *d[24], *c[24];
	MExpr dims_made[24];
	int nd = guard_dim_comparands(g, g->guard, name, d, c, dims_made, 0, 24);
	for (int k = 0; k < nd; k++) {
		int64_t i, v;
		if (guard_int(g, d[k], &i) && guard_int(g, c[k], &v) && v >= 0 && v <= 64) {
			if (i < 0)
				i += r;
			if (i >= 0 && i < r) {
				dims[i] = v;
				fixed[i] = true;
			}
		}
	}
	return r;
}

/* Does the guard compare dim(name, i) with anything? */
static bool guard_mentions_dim(Gen *g, const char *name, int64_t i, int r)
{
	const MExpr *d[24], *c[24];
	MExpr dims_made[24];
	int nd = guard_dim_comparands(g, g->guard, name, d, c, dims_made, 0, 24);
	for (int k = 0; k < nd; k++) {
		int64_t j;
		if (guard_int(g, d[k], &j) && (j == i || j + r == i))
			return true;
	}
	return false;
}

/* The rank the guard says `name` has (rank(name) == 4), -1 if none. */
static int guard_rank(Gen *g, const char *name)
{
	const MExpr *c[16];
	int n = guard_comparands(g, g->guard, "rank", name, true, c, 0, 16);
	int64_t v;
	for (int k = 0; k < n; k++)
		if (guard_int(g, c[k], &v) && v >= 0 && v <= 6)
			return (int)v;
	return -1;
}

/* The shape of a fresh operand `name` (rank r, dims), drawn toward what
 * the guard says of it: one element where it takes scalar(name), else its
 * rank (always where the guard says rank(name) == N and N is in the rank
 * class aimed at, else half the time, as rank(w) == rank(x) - 1; a lower
 * rank keeps the last dims, a scale per column), the dims it ties to values
 * drawn before (dim(w, 0) == dim(x, 1): always, so that tied dims agree)
 * and, half the time, its element count (numel(s) == 1: every other dim 1). */
static int toward_guard_shape(Gen *g, const char *name, int r, int64_t *dims)
{
	const MExpr *c[16];
	int64_t want;
	/* scalar(name) asks for one element: a scalar or all dims 1 */
	if (guard_calls(g, g->guard, "scalar", name) && rng_chance(g->rng, 0.7)) {
		if (rng_chance(g->rng, 0.5))
			return 0;
		for (int i = 0; i < r; i++)
			dims[i] = 1;
		return r;
	}
	/* rank(name) == N in the rank class aimed at: always; other ranks
	 * the guard compares it with (rank(w) < rank(x), or N outside the
	 * class): half the time */
	int n = guard_comparands(g, g->guard, "rank", name, true, c, 0, 16);
	bool have = false;
	for (int k = 0; k < n && !have; k++)
		have = guard_int(g, c[k], &want) && want >= 0 && want <= 6 &&
		       (g->rank_lo < 0 || (want >= g->rank_lo && want <= g->rank_hi));
	if (!have) {
		if (!rng_chance(g->rng, 0.5))
			return r;
		n = guard_comparands(g, g->guard, "rank", name, false, c, 0, 16);
		have = n && guard_int(g, c[rng_below(g->rng, n)], &want) && want >= 0 && want <= 6;
	}
	if (have && want != r) {
		if (want < r) {
			memmove(dims, dims + (r - want), sizeof *dims * (size_t)want);
		} else {
			memmove(dims + (want - r), dims, sizeof *dims * (size_t)r);
			for (int i = 0; i < want - r; i++)
				dims[i] = rng_range(g->rng, 1, 3);
		}
		r = (int)want;
	}
	/* dim(name, i) == dim(x, j) with x drawn before (or a number): always
	 * that size, so dims the guard ties are one size across operands */
	bool fixed[EV_MAX_RANK] = {false};
	r = guard_dims(g, name, r, dims, fixed);
	if (!rng_chance(g->rng, 0.5))
		return r;
	n = guard_comparands(g, g->guard, "numel", name, true, c, 0, 16);
	if (n && guard_int(g, c[rng_below(g->rng, n)], &want) && want >= 0) {
		int64_t have = 1;
		for (int i = 0; i < r; i++)
			have *= dims[i];
		if (have != want) {
			have = 1;
			for (int i = 0; i < r; i++) {
				if (!fixed[i])
					dims[i] = 1;
				have *= dims[i];
			}
			for (int i = 0; i < r && have != want; i++)
				if (!fixed[i] && have > 0 && want % have == 0) {
					dims[i] = want / have;
					have = want;
				}
		}
	}
	return r;
}

static EvValue *ints_tensor(const int64_t *v, int n)
{
	int64_t dims[1] = {n};
	EvValue *t = ev_tensor_new(DT_INT64, 1, dims);
	if (t)
		memcpy(t->data, v, sizeof *v * (size_t)n);
	return t;
}

/* axes: 1..3 distinct axes of a rank-r tensor, some negative; often one
 * axis at an end (the first or the last, either way), or all of them. */
static int draw_axes(Gen *g, int r, int64_t *out)
{
	if (r <= 0)
		return 0;
	int pick = rng_below(g->rng, 10);
	if (pick < 3) {
		int a = rng_chance(g->rng, 0.5) ? 0 : r - 1;
		out[0] = rng_chance(g->rng, 0.5) ? a - r : a;
		return 1;
	}
	if (pick == 3) {
		for (int i = 0; i < r; i++)
			out[i] = i;
		return r;
	}
	int n = rng_range(g->rng, 1, r < 3 ? r : 3), k = 0;
	bool used[EV_MAX_RANK] = {false};
	while (k < n) {
		int a = rng_below(g->rng, r);
		if (used[a])
			continue;
		used[a] = true;
		out[k++] = rng_chance(g->rng, 0.3) ? a - r : a;
	}
	return n;
}

/* A Reshape target for x (dims d of rank r): the same size, spelled many ways. */
static int draw_reshape(Gen *g, int r, const int64_t *d, int64_t *out)
{
	int64_t numel = 1;
	for (int i = 0; i < r; i++)
		numel *= d[i];
	switch (rng_below(g->rng, 8)) {
	case 0:
		memcpy(out, d, sizeof *d * (size_t)r);
		return r;
	case 6:                 /* two neighbouring dims merged ([b, h, n, s] -> [b, h * n, s]) */
		if (r >= 2) {
			int at = rng_below(g->rng, r - 1), n = 0;
			for (int i = 0; i < r; i++) {
				if (i == at + 1)
					out[n - 1] *= d[i];
				else
					out[n++] = d[i];
			}
			return n;
		}
		memcpy(out, d, sizeof *d * (size_t)r);
		return r;
	case 1:
		memcpy(out, d, sizeof *d * (size_t)r);
		if (r)
			out[rng_below(g->rng, r)] = -1;
		return r;
	case 2:
		out[0] = numel;
		return 1;
	case 3:
		out[0] = 1;
		out[1] = rng_chance(g->rng, 0.5) ? numel : -1;
		return 2;
	case 4:                 /* a 0 copies a dim of the input */
		memcpy(out, d, sizeof *d * (size_t)r);
		if (r)
			out[rng_below(g->rng, r)] = 0;
		return r;
	case 5: {               /* a factorisation */
		int n = 0;
		int64_t left = numel;
		while (left > 1 && n < 4) {
			int64_t f = 1;
			for (int64_t c = 2; c <= left; c++)
				if (left % c == 0 && rng_chance(g->rng, 0.6)) {
					f = c;
					break;
				}
			if (f == 1)
				f = left;
			out[n++] = f;
			left /= f;
		}
		if (n == 0)
			out[n++] = 1;
		return n;
	}
	default:                /* another rank: the input's with a 1 inserted */
		if (r >= 6) {
			memcpy(out, d, sizeof *d * (size_t)r);
			return r;
		}
		{
			int at = rng_below(g->rng, r + 1), n = 0;
			for (int i = 0; i <= r; i++) {
				if (i == at)
					out[n++] = 1;
				if (i < r)
					out[n++] = d[i];
			}
			return n;
		}
	}
}

/* An Expand target for x: its shape, with 1s grown or dims in front. */
static int draw_expand(Gen *g, int r, const int64_t *d, int64_t *out)
{
	int n = 0;
	if (rng_chance(g->rng, 0.3) && r < 6)
		out[n++] = rng_range(g->rng, 1, 3);
	for (int i = 0; i < r; i++)
		out[n++] = d[i] == 1 && rng_chance(g->rng, 0.3) ? rng_range(g->rng, 2, 3) : d[i];
	return n;
}

/* A Reshape or Expand target toward what the guard says of the node's
 * output `bind` (rank(rk) == 4, dim(rk, 1) == dim(k, 1) * dim(e, 2),
 * dim(e, 0) == dim(k, 0)), for an input of rank r, dims d: the dims it ties
 * to values drawn before; an Expand's other dims the input's, a 1 grown
 * where the guard compares that dim (the axis the Expand repeats).  -1
 * where the guard does not say enough (a Reshape's dims must all be told,
 * or all but one, and keep the size). */
static int guard_target(Gen *g, const char *bind, bool expand, int r, const int64_t *d, int64_t *out)
{
	int R = bind ? guard_rank(g, bind) : -1;
	if (R < 0 && expand && bind)
		R = r;
	if (R < 0 || (expand && R < r))
		return -1;
	bool fixed[EV_MAX_RANK] = {false};
	for (int i = 0; i < R; i++)
		out[i] = expand && i >= R - r ? d[i - (R - r)] : 1;
	guard_dims(g, bind, R, out, fixed);
	if (expand) {
		for (int i = 0; i < R; i++) {
			int64_t in = i >= R - r ? d[i - (R - r)] : 1;
			if (fixed[i] && in != 1 && out[i] != in)
				return -1;
			if (!fixed[i] && in == 1 && guard_mentions_dim(g, bind, i, R) && rng_chance(g->rng, 0.8))
				out[i] = rng_range(g->rng, 2, 3);
		}
		return R;
	}
	int64_t numel = 1, have = 1;
	int open = -1, extra[EV_MAX_RANK], nextra = 0;
	for (int i = 0; i < r; i++)
		numel *= d[i];
	for (int i = 0; i < R; i++) {
		if (fixed[i])
			have *= out[i];
		else if (open < 0)
			open = i;
		else
			extra[nextra++] = i;
	}
	/* more than one dim left open (dim(r, 2) * dim(r, 3) == dim(q, 2)): all
	 * but the first get a small divisor of what is left of the size */
	for (int k = 0; k < nextra; k++) {
		if (have == 0 || numel % have)
			return -1;
		int64_t left = numel / have, first = rng_range(g->rng, 2, 3), second = 5 - first;
		int64_t pick = left % first == 0 ? first : left % second == 0 ? second : 1;
		out[extra[k]] = pick;
		have *= pick;
	}
	if (open >= 0) {
		if (have == 0 || numel % have)
			return -1;
		out[open] = numel / have;
		have = numel;
	}
	if (have != numel)
		return -1;
	if (R && rng_chance(g->rng, 0.25))
		out[rng_below(g->rng, R)] = -1;     /* one dim left to the size */
	return R;
}

/* ---- one node ----------------------------------------------------------------------- */

/* The variable an operand (MO_VAR, MO_REST) or a node names, NULL if none. */
static const char *reg_var(Gen *g, int reg)
{
	return reg >= 0 && reg < g->prog->nregs ? g->prog->vnames[reg] : NULL;
}

static const char *opd_var(Gen *g, const MOperand *a)
{
	return a && (a->kind == MO_VAR || a->kind == MO_REST) ? reg_var(g, a->reg) : NULL;
}

/* One operand of the node being built. */
typedef struct Slot {
	const MOperand *pat;        /* the written operand (a rest list's for each of its items); NULL:
	                               an attribute the rule writes, an input at this opset */
	ValueId v;
	bool done;
	bool absent;
	const OpsetForm *attr_form; /* spelled as this attribute at the instance's opset */
} Slot;

typedef struct NodeGen {
	const MPatNode *p;
	const OpSchema *s;          /* at the instance's opset */
	const OpSchema *newest;     /* the checker's (canonical input numbering) */
	Slot slots[GEN_MAX_SLOTS];
	int nslots;
	const char *tp_name[GEN_MAX_TP];
	int tp_type[GEN_MAX_TP];
	int ntp;
	NodeId node;
} NodeGen;

static const OpFormal *formal_of(const OpSchema *s, int k)
{
	if (k < s->ninputs)
		return &s->inputs[k];
	if (s->ninputs > 0 && s->inputs[s->ninputs - 1].option == OPT_VARIADIC)
		return &s->inputs[s->ninputs - 1];
	return NULL;
}

static int tp_get(NodeGen *ng, const char *param)
{
	for (int i = 0; i < ng->ntp; i++)
		if (strcmp(ng->tp_name[i], param) == 0)
			return ng->tp_type[i];
	return 0;
}

/* Record slot k's dtype under its formal's type parameter; false if it clashes. */
static bool tp_bind(Gen *g, NodeGen *ng, int k, int dtype)
{
	const OpFormal *f = formal_of(ng->s, k);
	if (!f)
		return fail(g, "%s has no input %d at opset %d", ng->p->op, k, g->opset);
	uint32_t allowed = allowed_types(ng->s, f);
	if (!(allowed & (1u << dtype)))
		return fail(g, "%s input %d: %s is not allowed", ng->p->op, k, dtype_name(dtype));
	if (strncmp(f->type_str, "tensor(", 7) == 0)
		return true;
	int have = tp_get(ng, f->type_str);
	if (have && have != dtype)
		return fail(g, "%s: type %s is both %s and %s", ng->p->op, f->type_str, dtype_name(have), dtype_name(dtype));
	if (!have && ng->ntp < GEN_MAX_TP) {
		ng->tp_name[ng->ntp] = f->type_str;
		ng->tp_type[ng->ntp++] = dtype;
	}
	return true;
}

static bool gen_node(Gen *g, const MPatNode *p, ValueId *out);

static const EvValue *first_input(Gen *g, NodeGen *ng)
{
	return ng->nslots && ng->slots[0].done && !ng->slots[0].absent ? val_of(g, ng->slots[0].v) : NULL;
}

/* The shape of a fresh operand k of the node: from what the op needs, else
 * like the first input (or the base shape), or broadcasting to it. */
static int fresh_shape(Gen *g, NodeGen *ng, int k, int64_t *dims)
{
	const char *op = ng->p->op;
	const EvValue *x = first_input(g, ng);
	if (k == 0 && (strcmp(op, "Conv") == 0 || strcmp(op, "ConvTranspose") == 0 || strcmp(op, "BatchNormalization") == 0 ||
	               strcmp(op, "InstanceNormalization") == 0 || strcmp(op, "GroupNormalization") == 0 || strstr(op, "Pool"))) {
		int r = g->rank >= 3 && g->rank <= 5 ? g->rank : rng_range(g->rng, 3, 5);
		dims[0] = rng_range(g->rng, 1, 2);
		dims[1] = rng_range(g->rng, 1, 4);
		for (int i = 2; i < r; i++)
			dims[i] = rng_range(g->rng, 1, 4);
		return r;
	}
	if (x && strcmp(op, "Conv") == 0 && x->rank >= 3) {
		/* W: [M, C / group, k...], M a multiple of group; B: [M] */
		const IrAttr *ga = ir_attr(g->m, ng->node, "group");
		int64_t group = ga && ga->i > 0 ? ga->i : 1;
		if (k == 1) {
			dims[0] = group * rng_range(g->rng, 1, 2);
			dims[1] = x->dims[1] / group;
			for (int i = 2; i < x->rank; i++)
				dims[i] = x->dims[i] < 1 ? 1 : rng_range(g->rng, 1, x->dims[i] < 3 ? (int)x->dims[i] : 3);
			return x->rank;
		}
		if (k == 2) {
			const EvValue *w = ng->slots[1].done && !ng->slots[1].absent ? val_of(g, ng->slots[1].v) : NULL;
			dims[0] = w && w->rank ? w->dims[0] : 1;
			return 1;
		}
	}
	if (x && strcmp(op, "ConvTranspose") == 0 && x->rank >= 3) {
		/* W: [C, M / group, k...]; B: [M] */
		const IrAttr *ga = ir_attr(g->m, ng->node, "group");
		int64_t group = ga && ga->i > 0 ? ga->i : 1;
		const EvValue *w = ng->nslots > 1 && ng->slots[1].done && !ng->slots[1].absent ? val_of(g, ng->slots[1].v) : NULL;
		if (k == 1) {
			dims[0] = x->dims[1];
			dims[1] = rng_range(g->rng, 1, 3);
			for (int i = 2; i < x->rank; i++)
				dims[i] = rng_range(g->rng, 1, 3);
			return x->rank;
		}
		if (k == 2) {
			dims[0] = w && w->rank > 1 ? w->dims[1] * group : 1;
			return 1;
		}
	}
	if (x && strcmp(op, "BatchNormalization") == 0 && k >= 1 && x->rank >= 2) {
		dims[0] = x->dims[1];
		return 1;
	}
	if (x && (strcmp(op, "InstanceNormalization") == 0 || strcmp(op, "GroupNormalization") == 0) && k >= 1 && x->rank >= 2) {
		/* per channel (GroupNormalization-21's form) */
		dims[0] = x->dims[1];
		return 1;
	}
	if (x && (strcmp(op, "MatMul") == 0 || strcmp(op, "MatMulInteger") == 0 || strcmp(op, "MatMulIntegerToFloat") == 0) && k == 1) {
		int64_t kd = x->rank ? x->dims[x->rank - 1] : 1;
		if (x->rank <= 1 || rng_chance(g->rng, 0.6)) {
			dims[0] = kd;
			dims[1] = rng_range(g->rng, 1, 4);
			return rng_chance(g->rng, 0.1) ? 1 : 2;
		}
		memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
		dims[x->rank - 2] = kd;
		dims[x->rank - 1] = rng_range(g->rng, 1, 4);
		return x->rank;
	}
	if (strcmp(op, "Gemm") == 0 && k == 0) {
		/* A: a matrix, whatever rank is aimed at */
		dims[0] = g->rank >= 2 ? g->dims[g->rank - 2] : rng_range(g->rng, 1, 3);
		dims[1] = g->rank >= 1 ? g->dims[g->rank - 1] : rng_range(g->rng, 1, 3);
		return 2;
	}
	if (x && strcmp(op, "Gemm") == 0 && k == 1 && x->rank == 2) {
		dims[0] = x->dims[1];
		dims[1] = rng_range(g->rng, 1, 4);
		return 2;
	}
	if (x && (strcmp(op, "LayerNormalization") == 0 || strcmp(op, "RMSNormalization") == 0) && k >= 1 && x->rank >= 1) {
		dims[0] = x->dims[x->rank - 1];
		return 1;
	}
	/* Attention: a Q drawn after its K (a sub-pattern) takes K's batch and
	 * head size, as many heads or twice as many (grouped-query); a V K's
	 * shape, its head size drawn; a mask [q_len, kv_len], broadcast or not */
	const EvValue *kv = strcmp(op, "Attention") == 0 && ng->nslots > 1 && ng->slots[1].done && !ng->slots[1].absent
	                    ? val_of(g, ng->slots[1].v) : NULL;
	if (kv && (kv->rank == 3 || kv->rank == 4) && (k == 0 || k == 2 || (k == 3 && x && x->rank == kv->rank))) {
		int r = kv->rank;
		memcpy(dims, kv->dims, sizeof *dims * (size_t)r);
		if (k == 0) {
			dims[r - 2] = rng_range(g->rng, 1, 3);
			if (r == 4 && rng_chance(g->rng, 0.3))
				dims[1] *= 2;
			return r;
		}
		if (k == 2) {
			if (rng_chance(g->rng, 0.3))
				dims[r - 1] = rng_range(g->rng, 1, 4);
			return r;
		}
		int64_t sl[4] = {x->dims[0], r == 4 ? x->dims[1] : 1, x->dims[r - 2], kv->dims[r - 2]};
		switch (rng_below(g->rng, 3)) {
		case 0: memcpy(dims, sl + 2, sizeof *dims * 2); return 2;
		case 1: sl[0] = 1; sl[1] = 1; break;
		default: sl[1] = rng_chance(g->rng, 0.5) ? 1 : sl[1]; break;
		}
		memcpy(dims, sl, sizeof sl);
		return 4;
	}
	if ((strstr(op, "uantizeLinear") || strcmp(op, "Clip") == 0) && k >= 1)
		return 0;   /* (De)QuantizeLinear's scale and zero point, a bound: one number */
	if (strcmp(op, "Range") == 0)
		return 0;   /* start, limit, delta: scalars */
	if (strcmp(op, "Gather") == 0 && k == 0 && g->rank == 0) {
		dims[0] = rng_range(g->rng, 1, 3);
		return 1;   /* data has an axis to gather on */
	}
	if (x)
		return variant_shape(g, x->rank, x->dims, dims);
	int r = variant_shape(g, g->rank, g->dims, dims);
	if (r != g->rank && g->rank_lo >= 0 && ir_graph(g->m, IR_MAIN_GRAPH)->ninputs == 0) {
		/* the first graph input is what the instance covers: of the
		 * rank class aimed at */
		memcpy(dims, g->dims, sizeof *dims * (size_t)g->rank);
		r = g->rank;
	}
	return r;
}

/* Data for an int64 operand the op reads as a list (axes, shape, ...): drawn
 * to fit the first input; NULL when it has no such meaning. */
static EvValue *special_ints(Gen *g, NodeGen *ng, const char *formal, const MOperand *a)
{
	const EvValue *x = first_input(g, ng);
	const char *op = ng->p->op;
	int r = x ? x->rank : g->rank;
	const int64_t *d = x ? x->dims : g->dims;
	int64_t v[2 * EV_MAX_RANK + 2];
	int n;
	/* a Slice's axes and steps: as many as its starts */
	const EvValue *starts = strcmp(op, "Slice") == 0 && ng->nslots > 1 && ng->slots[1].done && !ng->slots[1].absent
	                        ? val_of(g, ng->slots[1].v) : NULL;
	int nstarts = starts && starts->rank == 1 && starts->numel <= r ? (int)starts->numel : -1;
	if (strcmp(formal, "axes") == 0 && nstarts >= 0) {
		/* distinct axes in any order, some negative */
		int perm[EV_MAX_RANK];
		for (int i = 0; i < r; i++)
			perm[i] = i;
		for (int i = r - 1; i > 0; i--) {
			int j = rng_below(g->rng, i + 1), tmp = perm[i];
			perm[i] = perm[j];
			perm[j] = tmp;
		}
		n = nstarts;
		for (int i = 0; i < n; i++)
			v[i] = rng_chance(g->rng, 0.3) ? perm[i] - r : perm[i];
	} else if (strcmp(formal, "axes") == 0) {
		if (strcmp(op, "Unsqueeze") == 0) {
			int add = rng_chance(g->rng, 0.1) ? 0 : rng_range(g->rng, 1, 2);
			n = draw_axes(g, r + add, v);
			n = n > add ? add : n;
		} else if (strcmp(op, "Squeeze") == 0 && rng_chance(g->rng, 0.7)) {
			/* some of the dims of 1, which are what a Squeeze may remove */
			n = 0;
			for (int i = 0; i < r; i++)
				if (d[i] == 1 && (n == 0 || rng_chance(g->rng, 0.5)))
					v[n++] = rng_chance(g->rng, 0.3) ? i - r : i;
			if (n == 0)
				n = draw_axes(g, r, v);
		} else {
			n = draw_axes(g, r, v);
		}
	} else if (strcmp(formal, "shape") == 0 && (strcmp(op, "Reshape") == 0 || strcmp(op, "Expand") == 0)) {
		bool expand = op[0] == 'E';
		n = rng_chance(g->rng, 0.75) ? guard_target(g, reg_var(g, ng->p->reg), expand, r, d, v) : -1;
		if (n < 0)
			n = expand ? draw_expand(g, r, d, v) : draw_reshape(g, r, d, v);
	} else if (strcmp(formal, "shape") == 0) {
		n = draw_expand(g, r, d, v);
	} else if (strcmp(formal, "pads") == 0) {
		n = 2 * r;
		for (int i = 0; i < n; i++)
			v[i] = rng_chance(g->rng, 0.7) ? 0 : rng_range(g->rng, -1, 2);
	} else if (strcmp(formal, "repeats") == 0) {
		n = r;
		for (int i = 0; i < n; i++)
			v[i] = rng_chance(g->rng, 0.7) ? 1 : 2;
	} else if (strcmp(formal, "starts") == 0 || strcmp(formal, "ends") == 0) {
		/* every axis, or (a third of the time) some: the ends as many as the starts */
		bool ends = formal[0] == 'e';
		n = r;
		if (ends && nstarts >= 0)
			n = nstarts;
		else if (!ends && r > 1 && rng_chance(g->rng, 0.33))
			n = rng_range(g->rng, 1, r - 1);
		for (int i = 0; i < n; i++)
			v[i] = ends ? (rng_chance(g->rng, 0.5) ? d[i] : rng_chance(g->rng, 0.5) ? INT64_MAX : rng_range(g->rng, -1, (int)d[i]))
			            : (rng_chance(g->rng, 0.6) ? 0 : rng_range(g->rng, -1, (int)d[i]));
	} else if (strcmp(formal, "split") == 0 && x && x->rank > 0) {
		/* sizes along the Split's axis, one per output, adding up to the dim */
		const IrAttr *aa = ir_attr(g->m, ng->node, "axis");
		int64_t axis = aa ? aa->i : 0;
		if (axis < 0)
			axis += x->rank;
		if (axis < 0 || axis >= x->rank)
			return NULL;
		n = (int)ir_node(g->m, ng->node)->noutputs;
		int64_t left = x->dims[axis];
		for (int i = 0; i < n; i++) {
			v[i] = i == n - 1 ? left : rng_range(g->rng, 0, (int)left);
			left -= v[i];
		}
	} else if (strcmp(formal, "indices") == 0 && strcmp(op, "Gather") == 0 && x && x->rank > 0) {
		/* positions along the Gather's axis, some negative; half the time
		 * one scalar position (a dim picked out of a Shape) */
		const IrAttr *aa = ir_attr(g->m, ng->node, "axis");
		int64_t axis = aa ? aa->i : 0;
		if (axis < 0)
			axis += x->rank;
		if (axis < 0 || axis >= x->rank || x->dims[axis] == 0)
			return NULL;
		int dim = (int)x->dims[axis];
		const MExpr *rk_c[1];
		const char *an = a && a->kind == MO_VAR ? opd_var(g, a) : NULL;
		bool ranked = an && guard_comparands(g, g->guard, "rank", an, false, rk_c, 0, 1);
		if ((ranked || g->idx_rank >= 0) && rng_chance(g->rng, 0.85)) {
			/* indices of a rank the guard names (token ids [batch, seq]):
			 * the base shape, or a variant, toward the guard; other
			 * indices (segment ids) often of the shape drawn for those */
			int64_t dims[EV_MAX_RANK];
			int rk;
			if (ranked) {
				rk = g->rank;
				memcpy(dims, g->dims, sizeof *dims * (size_t)rk);
				if (rng_chance(g->rng, 0.3))
					rk = variant_shape(g, g->rank, g->dims, dims);
				rk = toward_guard_shape(g, an, rk, dims);
				g->idx_rank = rk;
				memcpy(g->idx_dims, dims, sizeof *dims * (size_t)rk);
			} else {
				rk = g->idx_rank;
				memcpy(dims, g->idx_dims, sizeof *dims * (size_t)rk);
			}
			EvValue *t = ev_tensor_new(DT_INT64, rk, dims);
			for (int64_t i = 0; t && i < t->numel; i++)
				ev_set_i(t, i, rng_range(g->rng, -dim, dim - 1));
			return t;
		}
		bool scalar = rng_chance(g->rng, 0.5);
		n = scalar ? 1 : rng_range(g->rng, 1, 3);
		for (int i = 0; i < n; i++)
			v[i] = rng_range(g->rng, -dim, dim - 1);
		if (scalar) {
			EvValue *t = ev_tensor_new(DT_INT64, 0, NULL);
			if (t)
				ev_set_i(t, 0, v[0]);
			return t;
		}
	} else if (strcmp(formal, "steps") == 0) {
		n = nstarts >= 0 ? nstarts : r;
		for (int i = 0; i < n; i++)
			v[i] = rng_chance(g->rng, 0.8) ? 1 : rng_chance(g->rng, 0.5) ? 2 : -1;
	} else {
		return NULL;
	}
	return ints_tensor(v, n);
}

/* Is formal `name` a list of indices or sizes (int32 or int64)? */
static bool is_index_formal(const char *name)
{
	static const char *const names[] = {"starts", "ends", "axes", "steps", "indices", "shape", "pads", "repeats", "split"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* Slot sl reads the value its (bound) variable holds, or output #k of the
 * node a variable names. */
static bool use_bound(Gen *g, Slot *sl)
{
	const MOperand *a = sl->pat;
	const char *name = opd_var(g, a);
	GVar *var = var_find(g, name);
	if (var->kind == GV_NODE) {
		IrNode *bn = ir_node(g->m, var->node);
		if ((uint32_t)a->output >= bn->noutputs)
			return fail(g, "%s#%d: the node has %u outputs", name, a->output, bn->noutputs);
		sl->v = bn->outputs[a->output];
	} else if (var->kind == GV_VALUE) {
		sl->v = var->v;
	} else {
		return fail(g, "%s is not a value", name);
	}
	sl->done = true;
	sl->absent = sl->v == 0;
	return true;
}

/* x:!Conv, _:!Conv: now and then the operand is made by one of the ops it
 * excludes (on fresh operands), so that the instances include graphs the
 * rule must not fire on. */
static bool gen_excluded(Gen *g, const MOperand *a, ValueId *out)
{
	const MNot *x = &a->nots[rng_below(g->rng, a->nnots)];
	const OpSchema *s = op_schema_lookup(x->domain, x->op, g->opset);
	if (!s)
		return fail(g, "%s does not exist at opset %d", x->op, g->opset);
	MOperand args[GEN_MAX_SLOTS];
	int n = s->min_inputs < GEN_MAX_SLOTS ? s->min_inputs : GEN_MAX_SLOTS;
	for (int i = 0; i < n; i++)
		args[i] = (MOperand){.kind = MO_ANY, .reg = -1};
	MPatNode op = {.reg = -1, .op = x->op, .domain = x->domain, .operands = args, .noperands = n};
	return gen_node(g, &op, out);
}

/* A Gather's data drawn after its indices (a sub-pattern, such as the
 * position ids Range(0, Gather(Shape(ids), 1), 1) builds): long enough
 * along the pattern's axis for every index. */
static void fit_gather_data(Gen *g, NodeGen *ng, int r, int64_t *dims)
{
	if (strcmp(ng->p->op, "Gather") != 0 || *ng->p->domain || ng->nslots < 2 ||
	    !ng->slots[1].done || ng->slots[1].absent)
		return;
	const EvValue *idx = val_of(g, ng->slots[1].v);
	int64_t axis = 0;
	for (int i = 0; i < ng->p->nattrs; i++) {
		double x;
		if (strcmp(ng->p->attrs[i].name, "axis") == 0 && attr_number(ng->p->attrs[i].value, &x))
			axis = (int64_t)x;
	}
	if (axis < 0)
		axis += r;
	if (!idx || ev_is_float(idx->dtype) || axis < 0 || axis >= r)
		return;
	for (int64_t i = 0; i < idx->numel; i++) {
		int64_t v = ev_get_i(idx, i);
		if (v < -64 || v > 64) /* a table that long is not drawn (and v + 1 could overflow) */
			continue;
		int64_t need = v >= 0 ? v + 1 : -v;
		if (need > dims[axis])
			dims[axis] = need;
	}
}

/* A fresh operand: a new variable, a wildcard, a literal or a rest item. */
static bool gen_fresh(Gen *g, NodeGen *ng, int k)
{
	Slot *sl = &ng->slots[k];
	const MOperand *a = sl->pat;
	/* the variable the operand binds */
	const char *an = a && a->kind == MO_VAR ? opd_var(g, a) : NULL;
	if (an && var_find(g, an)) {
		/* bound since pass 1 looked, by a sub-pattern of a later operand */
		if (!use_bound(g, sl))
			return false;
		return sl->absent || sl->attr_form || tp_bind(g, ng, k, val_of(g, sl->v)->dtype);
	}
	sl->done = true;
	if (a && a->optional && rng_chance(g->rng, 0.4)) {
		sl->absent = true;
		if (an) {
			GVar *var = var_new(g, an, GV_VALUE);
			if (!var)
				return fail(g, "too many variables");
		}
		return true;
	}
	const OpFormal *f = formal_of(ng->newest, k);
	const char *fname = f ? f->name : "";
	const MExpr *lit;
	int64_t list[64];
	int nlist;
	bool constant = sl->attr_form || (a && (a->kind == MO_LITERAL || a->is_const));
	EvValue *t = NULL;
	/* the element type */
	int dt;
	const OpFormal *fs = formal_of(ng->s, k);
	if (sl->attr_form) {
		/* ints, or one float (Pad's value before opset 11) */
		const OpAttrDef *def = op_schema_attr(ng->s, sl->attr_form->attr);
		dt = def && def->type == ATTR_FLOAT ? DT_FLOAT : DT_INT64;
	} else if (!fs) {
		return fail(g, "%s has no input %d at opset %d", ng->p->op, k, g->opset);
	} else if (strncmp(fs->type_str, "tensor(", 7) == 0) {
		dt = __builtin_ctz(allowed_types(ng->s, fs));
	} else {
		dt = tp_get(ng, fs->type_str);
		uint32_t allowed = allowed_types(ng->s, fs);
		const MExpr *c1[1];
		bool ints_guard = an && guard_comparands(g, g->guard, "ints", an, false, c1, 0, 1);
		int want = an ? guard_dtype(g, an) : 0;
		if (!dt && want && (allowed & (1u << want)) && rng_chance(g->rng, 0.9))
			dt = want;          /* dtype(as) == float32 */
		if (!dt && (allowed & (1u << DT_INT64)) && (is_index_formal(fname) || ints_guard) && rng_chance(g->rng, 0.85))
			dt = DT_INT64;      /* what exporters write, what special_ints draws and ints(a) reads */
		if (!dt)
			dt = draw_type(g, allowed);
	}
	if (!dt)
		return fail(g, "%s input %d: no element type to draw", ng->p->op, k);
	if (a && a->kind == MO_LITERAL) {
		const MExpr *lit = a->lit;      /* the program's check of it */
		if (lit->kind == ME_EQUALS_LIST) {
			int64_t dims[1] = {lit->nnums};
			t = ev_tensor_new(dt, 1, dims);
			for (int i = 0; t && i < lit->nnums; i++)
				ev_set_f(t, i, lit->nums[i]);
		} else {
			double x = lit->f, tol = lit->tol;
			if (tol > 0 && rng_chance(g->rng, 0.5))
				x += (rng_unit(g->rng) * 2 - 1) * tol;
			int64_t dims[EV_MAX_RANK];
			int r = 0, pick = rng_below(g->rng, 10);
			if (pick >= 5 && pick < 7) {
				r = 1;
				dims[0] = 1;
			} else if (pick >= 7) {
				const EvValue *x0 = first_input(g, ng);
				r = x0 ? x0->rank : g->rank;
				memcpy(dims, x0 ? x0->dims : g->dims, sizeof *dims * (size_t)r);
				if (pick == 9)
					for (int i = 0; i < r; i++)
						dims[i] = 1;
			}
			t = ev_tensor_new(dt, r, dims);
			for (int64_t i = 0; t && i < t->numel; i++)
				ev_set_f(t, i, x);
		}
	} else if (dt == DT_INT64 && an && (lit = guard_pick(g, "ints", an, a->is_const ? 0.7 : 0.4)) != NULL &&
	           (nlist = guard_ints(g, lit, list, 64)) >= 0) {
		/* ints(a) == [2, 3], ints(e) == [dim(x, a)], ints(r) == range(n): the
		 * guard's list; one number a scalar where it says rank(a) == 0 */
		t = ints_tensor(list, nlist);
		if (t && nlist == 1 && guard_wants_rank(g, an, 0) && rng_chance(g->rng, 0.8))
			t->rank = 0;
		else if (t && guard_wants_rank(g, an, 2)) {
			t->rank = 2;        /* one row: [[0, 1, .., n - 1]] */
			t->dims[1] = t->dims[0];
			t->dims[0] = 1;
		}
		constant = constant || rng_chance(g->rng, 0.8);
	} else if ((dt == DT_INT64 || (dt == DT_INT32 && strcmp(fname, "indices") == 0)) &&
	           (t = special_ints(g, ng, fname, a)) != NULL) {
		/* a value whose shape the pattern reads stays a graph input, so
		 * that Shape(x) is a node, not a constant the folder makes */
		bool shape_read = an && reads_shape_of(g->mr, an);
		const MExpr *rk_c[1];
		bool ranked = an && (g->idx_rank >= 0 || guard_comparands(g, g->guard, "rank", an, false, rk_c, 0, 1));
		constant = constant || (!shape_read && rng_chance(g->rng, ranked ? 0.4 : 0.8));
		if (!constant && g->nonneg_indices && strcmp(fname, "indices") == 0)
			for (int64_t i = 0; i < t->numel; i++)
				if (ev_get_i(t, i) < 0)
					ev_set_i(t, i, -ev_get_i(t, i) - 1);   /* within [0, dim) as -dim <= v < 0 was */
		if (dt == DT_INT32) {
			EvValue *t32 = ev_tensor_new(DT_INT32, t->rank, t->dims);
			for (int64_t i = 0; t32 && i < t->numel; i++)
				ev_set_i(t32, i, ev_get_i(t, i));
			ev_unref(t);
			t = t32;
		}
	} else {
		int64_t dims[EV_MAX_RANK];
		int r = fresh_shape(g, ng, k, dims);
		if (an)
			r = toward_guard_shape(g, an, r, dims);
		if (k == 0)
			fit_gather_data(g, ng, r, dims);
		t = ev_tensor_new(dt, r, dims);
		bool clean = an && wants_clean(g, an);
		if (t)
			fill(g, t, constant, clean);
		if (t && clean && ev_is_float(dt) && guard_calls(g, g->guard, "all_greater", an))
			for (int64_t i = 0; i < t->numel; i++)
				ev_set_f(t, i, fabs(ev_get_f(t, i)));   /* a variance */
		double x;
		if (t && an && dt != DT_BOOL && (lit = guard_pick(g, "scalar", an, 0.3)) != NULL &&
		    literal_value(lit, &x))
			for (int64_t i = 0; i < t->numel; i++)
				ev_set_f(t, i, x);      /* scalar(c) >= 1e-5: at the guard's boundary */
	}
	if (!t && ev_memory_refused())
		return fail(g, "%s input %d: a %s tensor over the memory limit (--max-memory)", ng->p->op, k,
		            dtype_name(dt));
	if (!t)
		return fail(g, "%s input %d: cannot make a %s tensor", ng->p->op, k, dtype_name(dt));
	if (!sl->attr_form && !tp_bind(g, ng, k, t->dtype)) {
		ev_unref(t);
		return false;
	}
	const char *hint = opd_var(g, a) ? opd_var(g, a) : a && a->kind == MO_LITERAL ? "c" : "u";
	sl->v = add_value(g, hint, t, constant);
	if (an) {
		GVar *var = var_new(g, an, GV_VALUE);
		if (!var)
			return fail(g, "too many variables");
		var->v = sl->v;
	}
	return true;
}

/* ---- attributes -------------------------------------------------------------------- */

static const int cast_targets[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_INT8, DT_UINT8,
                                   DT_INT16, DT_INT32, DT_INT64, DT_BOOL};

/* A value for attribute `def` of the node (its first input x), or false when
 * the generator has no idea what the attribute may hold. */
static bool draw_attr(Gen *g, NodeGen *ng, const OpAttrDef *def, NodeId n)
{
	const EvValue *x = first_input(g, ng);
	int r = x ? x->rank : g->rank;
	const char *name = def->name, *op = ng->p->op;
	IrModel *m = g->m;
	int64_t v[2 * EV_MAX_RANK + 2];
	if (strcmp(name, "perm") == 0) {
		for (int i = 0; i < r; i++)
			v[i] = i;
		for (int i = r - 1; i > 0; i--) {
			int j = rng_below(g->rng, i + 1);
			int64_t tmp = v[i];
			v[i] = v[j];
			v[j] = tmp;
		}
		ir_attr_set_ints(m, n, name, v, (size_t)r);
	} else if (strcmp(name, "axis") == 0 && def->type == ATTR_INT) {
		if (r == 0)
			return false;
		int a = rng_below(g->rng, r);
		ir_attr_set_int(m, n, name, rng_chance(g->rng, 0.3) ? a - r : a);
	} else if (strcmp(name, "axes") == 0 && def->type == ATTR_INTS) {
		int k = strcmp(op, "Unsqueeze") == 0 ? draw_axes(g, r + 1, v) : draw_axes(g, r, v);
		if (strcmp(op, "Unsqueeze") == 0 && k > 1)
			k = 1;
		ir_attr_set_ints(m, n, name, v, (size_t)k);
	} else if (strcmp(name, "keepdims") == 0 || strcmp(name, "transA") == 0 || strcmp(name, "transB") == 0) {
		ir_attr_set_int(m, n, name, rng_below(g->rng, 2));
	} else if (strcmp(name, "to") == 0) {
		ir_attr_set_int(m, n, name, cast_targets[rng_below(g->rng, (int)(sizeof cast_targets / sizeof *cast_targets))]);
	} else if (strcmp(name, "epsilon") == 0) {
		const float eps[] = {1e-5f, 1e-3f, 0.1f, 0.0f};
		ir_attr_set_float(m, n, name, eps[rng_below(g->rng, 4)]);
	} else if (strcmp(name, "alpha") == 0 || strcmp(name, "beta") == 0) {
		const float ab[] = {1.0f, 0.5f, 2.0f, 0.1f};
		ir_attr_set_float(m, n, name, ab[rng_below(g->rng, 4)]);
	} else if (strcmp(name, "scale") == 0 && def->type == ATTR_FLOAT) {
		/* Attention's: 1, 1/sqrt(8), and powers of two */
		const float sc[] = {1.0f, 0.5f, 0.125f, 0.35355339f};
		ir_attr_set_float(m, n, name, sc[rng_below(g->rng, 4)]);
	} else if (strcmp(name, "q_num_heads") == 0 || strcmp(name, "kv_num_heads") == 0) {
		/* one head: it divides any hidden size, and q's heads are a multiple
		 * of kv's; only for 3-D inputs (ONNX Runtime checks 4-D ones' against
		 * their dim 1) */
		if (x && x->rank != 3)
			return false;
		ir_attr_set_int(m, n, name, 1);
	} else if (strcmp(name, "is_test") == 0) {
		ir_attr_set_int(m, n, name, rng_chance(g->rng, 0.8));
	} else if (strcmp(name, "auto_pad") == 0) {
		const char *const pads[] = {"NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
		const char *s = pads[rng_below(g->rng, 5)];
		ir_attr_set_string(m, n, name, s, strlen(s));
	} else if (strcmp(name, "approximate") == 0) {
		const char *s = rng_chance(g->rng, 0.5) ? "none" : "tanh";
		ir_attr_set_string(m, n, name, s, strlen(s));
	} else if (x && r >= 3 && (strcmp(name, "strides") == 0 || strcmp(name, "dilations") == 0)) {
		for (int i = 0; i < r - 2; i++)
			v[i] = rng_chance(g->rng, 0.7) ? 1 : 2;
		ir_attr_set_ints(m, n, name, v, (size_t)(r - 2));
	} else if (x && r >= 3 && strcmp(name, "kernel_shape") == 0) {
		/* pooling windows that fit the input: mostly 1, else 2 or 3 */
		for (int i = 0; i < r - 2; i++) {
			int64_t d = x->dims[i + 2];
			v[i] = d < 2 || rng_chance(g->rng, 0.6) ? 1 : rng_range(g->rng, 2, d < 3 ? 2 : 3);
		}
		ir_attr_set_ints(m, n, name, v, (size_t)(r - 2));
	} else if (x && r >= 3 && strcmp(name, "pads") == 0) {
		for (int i = 0; i < 2 * (r - 2); i++)
			v[i] = rng_chance(g->rng, 0.7) ? 0 : 1;
		ir_attr_set_ints(m, n, name, v, (size_t)(2 * (r - 2)));
	} else if (x && r >= 2 && (strcmp(name, "group") == 0 || strcmp(name, "num_groups") == 0)) {
		int64_t c = x->dims[1], gr = 1;
		for (int64_t d = c; d >= 1; d--)
			if (c % d == 0 && rng_chance(g->rng, 0.4)) {
				gr = d;
				break;
			}
		ir_attr_set_int(m, n, name, gr);
	} else {
		return false;
	}
	return true;
}

/* The literal value of a pattern attribute [name = literal] (e NULL: not a literal). */
static bool set_literal_attr(Gen *g, NodeId n, const char *name, AttrType type, const MExpr *e)
{
	IrModel *m = g->m;
	double x;
	switch (type) {
	case ATTR_INT:
	case ATTR_FLOAT:
		if (!attr_number(e, &x))
			return fail(g, "attribute %s: not a literal", name);
		if (type == ATTR_INT)
			ir_attr_set_int(m, n, name, (int64_t)x);
		else
			ir_attr_set_float(m, n, name, (float)x);
		return true;
	case ATTR_STRING:
		if (!e || e->kind != ME_STR)
			return fail(g, "attribute %s: not a string", name);
		ir_attr_set_string(m, n, name, e->s, e->slen);
		return true;
	case ATTR_INTS:
	case ATTR_FLOATS: {
		if (!e || e->kind != ME_LIST)
			return fail(g, "attribute %s: not a list", name);
		int64_t iv[64];
		float fv[64];
		int k = e->nkids < 64 ? e->nkids : 64;
		for (int i = 0; i < k; i++) {
			if (!attr_number(e->kids[i], &x))
				return fail(g, "attribute %s: not a literal list", name);
			iv[i] = (int64_t)x;
			fv[i] = (float)x;
		}
		if (type == ATTR_INTS)
			ir_attr_set_ints(m, n, name, iv, (size_t)k);
		else
			ir_attr_set_floats(m, n, name, fv, (size_t)k);
		return true;
	}
	default:
		return fail(g, "attribute %s: type %s not generated", name, attr_type_name(type));
	}
}

static void copy_attr(IrModel *m, NodeId to, const char *name, const IrAttr *a)
{
	switch (a->type) {
	case ATTR_INT: ir_attr_set_int(m, to, name, a->i); break;
	case ATTR_FLOAT: ir_attr_set_float(m, to, name, a->f); break;
	case ATTR_STRING: ir_attr_set_string(m, to, name, a->s.data, a->s.len); break;
	case ATTR_INTS: ir_attr_set_ints(m, to, name, a->ints, a->n); break;
	case ATTR_FLOATS: ir_attr_set_floats(m, to, name, a->floats, a->n); break;
	default: break;
	}
}

/* Is the pattern attribute's literal the attribute's default? */
static bool is_default(const OpAttrDef *def, const MExpr *e)
{
	double x;
	if (!def || !def->has_default)
		return false;
	if (def->type == ATTR_INT && attr_number(e, &x))
		return def->i == (int64_t)x;
	if (def->type == ATTR_FLOAT && attr_number(e, &x))
		return (float)def->f == (float)x;
	if (def->type == ATTR_STRING && e && e->kind == ME_STR && def->s)
		return strcmp(def->s, e->s) == 0;
	return false;
}

/* ---- boundaries ------------------------------------------------------------------------ */

/* Did the pattern name attribute `name` of its op p? */
static bool pattern_names_attr(const MPatNode *p, const char *name)
{
	for (int i = 0; i < p->nattrs; i++)
		if (strcmp(p->attrs[i].name, name) == 0)
			return true;
	return false;
}

/* A pool's or Conv's window where its shape arithmetic is at a boundary.
 * The sweep (or a draw) picks one of: as drawn; strides of 1 to 3 with
 * the pads that keep each spatial dim as it is (the output has the input's
 * shape, yet windows start in the padding); a stride as large as the dim
 * (one output); pads of the whole effective kernel less one, so windows
 * lie in the padding but for one element.  Only attributes the pattern
 * leaves open change, and not under auto_pad. */
static void window_attrs(Gen *g, NodeGen *ng, NodeId n)
{
	const char *op = ng->p->op;
	const EvValue *x = first_input(g, ng);
	bool conv = strcmp(op, "Conv") == 0;
	if (!x || x->rank < 3 || !(conv || strstr(op, "Pool")) || strstr(op, "Global") || strstr(op, "Lp"))
		return;
	int mode = sweep_digit(g, 4);
	if (mode < 0)
		mode = rng_chance(g->rng, 0.5) ? 0 : rng_range(g->rng, 1, 3);
	const IrAttr *ap = ir_attr(g->m, n, "auto_pad");
	if (mode == 0 || (ap && !(ap->s.len == 6 && memcmp(ap->s.data, "NOTSET", 6) == 0)))
		return;
	int sp = x->rank - 2;
	int64_t strides[EV_MAX_RANK], pads[2 * EV_MAX_RANK], dil[EV_MAX_RANK];
	const IrAttr *ka = ir_attr(g->m, n, "kernel_shape"), *da = ir_attr(g->m, n, "dilations");
	const IrAttr *sa = ir_attr(g->m, n, "strides");
	const EvValue *w = conv && ng->nslots > 1 && !ng->slots[1].absent ? val_of(g, ng->slots[1].v) : NULL;
	for (int i = 0; i < sp; i++) {
		int64_t k = ka && ka->type == ATTR_INTS && (int)ka->n == sp ? ka->ints[i] : w && w->rank == x->rank ? w->dims[i + 2] : 1;
		dil[i] = da && da->type == ATTR_INTS && (int)da->n == sp ? da->ints[i] : 1;
		if (!pattern_names_attr(ng->p, "dilations") && mode == 1 && k > 1 && rng_chance(g->rng, 0.3))
			dil[i] = 2;
		int64_t keff = (k - 1) * dil[i] + 1, d = x->dims[i + 2], s = 1, p = 0;
		if (mode == 1) {
			/* out = floor((d + p - keff) / s) + 1 == d */
			s = rng_range(g->rng, 1, 3);
			p = s * (d - 1) - d + keff + rng_below(g->rng, (int)s);
		} else if (mode == 2) {
			s = d + rng_below(g->rng, 2);
		} else {
			s = sa && sa->type == ATTR_INTS && (int)sa->n == sp ? sa->ints[i] : 1;
			p = keff - 1;
		}
		if (pattern_names_attr(ng->p, "strides"))
			s = sa && sa->type == ATTR_INTS && (int)sa->n == sp ? sa->ints[i] : 1;
		strides[i] = s;
		p = p < 0 ? 0 : p;
		pads[i] = rng_range(g->rng, 0, (int)p);
		pads[i + sp] = p - pads[i];
	}
	if (!pattern_names_attr(ng->p, "strides"))
		ir_attr_set_ints(g->m, n, "strides", strides, (size_t)sp);
	if (!pattern_names_attr(ng->p, "pads"))
		ir_attr_set_ints(g->m, n, "pads", pads, (size_t)(2 * sp));
	if (!pattern_names_attr(ng->p, "dilations") && op_schema_attr(ng->s, "dilations"))
		ir_attr_set_ints(g->m, n, "dilations", dil, (size_t)sp);
}

/* The attribute variable compose() pairs `name` with in the guard
 * (is_identity(compose(p, q))), NULL if none. */
static const char *compose_partner(Gen *g, const MExpr *e, const char *name)
{
	if (!e)
		return NULL;
	if (e->kind == ME_COMPOSE) {
		const char *p = var_named(g, e->kids[0]), *q = var_named(g, e->kids[1]);
		if (p && q && strcmp(p, name) == 0)
			return q;
		if (p && q && strcmp(q, name) == 0)
			return p;
	}
	for (int i = 0; i < e->nkids; i++) {
		const char *p = compose_partner(g, e->kids[i], name);
		if (p)
			return p;
	}
	return NULL;
}

/* Attribute `attr` of node n, bound to the pattern variable `name`: now and
 * then (a third of the time) the value the guard compares it with, or one
 * off it, in place of the drawn one: a guard's boundary (k == 1, axis >= 0)
 * is where a rule is most often wrong. */
static void toward_guard(Gen *g, NodeId n, const char *attr, const char *name)
{
	const IrAttr *a = ir_attr(g->m, n, attr);
	/* a permutation the guard composes with one drawn before: half the
	 * time its inverse (two Transposes that cancel) */
	const char *partner = a && a->type == ATTR_INTS ? compose_partner(g, g->guard, name) : NULL;
	GVar *pv = partner ? var_find(g, partner) : NULL;
	const IrAttr *pa = pv && pv->kind == GV_ATTR ? ir_attr(g->m, pv->node, pv->attr) : NULL;
	if (pa && pa->type == ATTR_INTS && pa->n == a->n && a->n <= EV_MAX_RANK) {
		int64_t inv[EV_MAX_RANK];
		bool ok = true;
		for (size_t i = 0; i < pa->n; i++) {
			ok = ok && pa->ints[i] >= 0 && pa->ints[i] < (int64_t)pa->n;
			if (ok)
				inv[pa->ints[i]] = (int64_t)i;
		}
		if (ok) {
			ir_attr_set_ints(g->m, n, attr, inv, pa->n);
			return;
		}
	}
	const MExpr *lit = a ? guard_pick(g, NULL, name, 0.33) : NULL;
	if (!lit)
		return;
	int off = rng_range(g->rng, -1, 1);
	double x;
	int64_t iv;
	if (a->type == ATTR_INT && guard_int(g, lit, &iv)) {
		ir_attr_set_int(g->m, n, attr, iv + off);
	} else if (a->type == ATTR_FLOAT && literal_value(lit, &x)) {
		ir_attr_set_float(g->m, n, attr, (float)(x + off));
	} else if (a->type == ATTR_INTS && a->n > 0 && a->n <= 2 * EV_MAX_RANK + 2) {
		/* a list: every element the number (k == 1), or the list; one element one off */
		int64_t v[2 * EV_MAX_RANK + 2];
		size_t len = a->n;
		int nl;
		if ((nl = guard_ints(g, lit, v, (int)(sizeof v / sizeof *v))) >= 0) {
			len = (size_t)nl;
		} else if (guard_int(g, lit, &iv)) {
			for (size_t i = 0; i < len; i++)
				v[i] = iv;
		} else {
			return;
		}
		if (len > 0)
			v[rng_below(g->rng, (int)len)] += off;
		ir_attr_set_ints(g->m, n, attr, v, len);
	}
}

/* ---- nodes ----------------------------------------------------------------------------- */

/* The node of pattern node p and its operands; *out is output p->output. */
static bool gen_node(Gen *g, const MPatNode *p, ValueId *out)
{
	NodeGen ng = {.p = p};
	const char *domain = p->domain;
	ng.s = op_schema_lookup(domain, p->op, g->opset);
	ng.newest = p->schema ? p->schema : ng.s;
	if (!ng.s)
		return fail(g, "%s does not exist at opset %d", p->op, g->opset);
	/* the operands: a rest list draws 0-3 items (at least what the op needs) */
	for (int i = 0; i < p->noperands; i++) {
		const MOperand *a = &p->operands[i];
		if (a->kind == MO_REST) {
			GVar *bound = var_find(g, opd_var(g, a));
			int want = bound ? bound->nrest : rng_range(g->rng, 0, 3);
			while (ng.nslots + want < ng.s->min_inputs)
				want++;
			for (int k = 0; k < want && ng.nslots < GEN_MAX_SLOTS; k++) {
				Slot *sl = &ng.slots[ng.nslots++];
				*sl = (Slot){.pat = a};
				if (bound) {
					sl->v = bound->rest[k];
					sl->done = true;
				}
			}
			continue;
		}
		if (ng.nslots == GEN_MAX_SLOTS)
			return fail(g, "too many operands");
		ng.slots[ng.nslots++] = (Slot){.pat = a};
	}
	/* operands an older opset spells as attributes, or does not have */
	if (!*domain) {
		for (int k = 0; k < ng.nslots; k++) {
			ng.slots[k].attr_form = opset_form_input_attr(p->op, g->opset, k);
			const OpsetForm *forms[8];
			int nf = opset_forms_at(p->op, g->opset, forms, 8);
			for (int i = 0; i < nf; i++) {
				if (forms[i]->kind == FORM_MOVED && forms[i]->input == k)
					return fail(g, "%s input %d is at another position at opset %d", p->op, k, g->opset);
				if (forms[i]->kind == FORM_NO_INPUT && forms[i]->input == k) {
					const MOperand *a = ng.slots[k].pat;
					if (a && !a->optional)
						return fail(g, "%s has no input %d at opset %d", p->op, k, g->opset);
					ng.slots[k].absent = ng.slots[k].done = true;
				}
			}
		}
	}
	/* 1. sub-patterns and bound variables: their types come first */
	for (int k = 0; k < ng.nslots; k++) {
		Slot *sl = &ng.slots[k];
		const MOperand *a = sl->pat;
		const char *an = a && a->kind == MO_VAR ? opd_var(g, a) : NULL;
		if (sl->done) {
			if (!sl->absent && sl->v && !sl->attr_form && !tp_bind(g, &ng, k, val_of(g, sl->v)->dtype))
				return false;
			continue;
		}
		if (a->kind == MO_NODE) {
			if (!gen_node(g, &g->prog->pats[a->node], &sl->v))
				return false;
			sl->done = true;
		} else if (an && var_find(g, an)) {
			if (!use_bound(g, sl))
				return false;
		} else if (a->nnots && !sl->attr_form && rng_chance(g->rng, 0.3)) {
			if (!gen_excluded(g, a, &sl->v))
				return false;
			sl->done = true;
			GVar *var = an ? var_new(g, an, GV_VALUE) : NULL;
			if (an && !var)
				return fail(g, "too many variables");
			if (var)
				var->v = sl->v;
		} else {
			continue;
		}
		if (!sl->absent && !sl->attr_form && !tp_bind(g, &ng, k, val_of(g, sl->v)->dtype))
			return false;
	}
	/* 2. the first operand, if fresh: attributes are drawn to fit it */
	if (ng.nslots && !ng.slots[0].done && !gen_fresh(g, &ng, 0))
		return false;
	/* the node, so that attributes can be set; inputs come after */
	int nout = ng.s->min_outputs > p->output + 1 ? ng.s->min_outputs : p->output + 1;
	bool variadic_out = ng.s->noutputs && ng.s->outputs[ng.s->noutputs - 1].option == OPT_VARIADIC;
	if (nout > GEN_MAX_OUTS)
		return fail(g, "%s: output %d is beyond what instances draw", p->op, p->output);
	if (variadic_out)
		nout = rng_range(g->rng, nout > 1 ? nout : 1, nout > 3 ? nout : 3);
	else if (nout < ng.s->max_outputs && nout < GEN_MAX_OUTS && rng_chance(g->rng, 0.25))
		nout++;
	char name[32];
	snprintf(name, sizeof name, "n%d", ++g->nnodes);
	const char *onames[GEN_MAX_OUTS];
	for (int i = 0; i < nout && i < GEN_MAX_OUTS; i++)
		onames[i] = fresh_name(g);
	NodeId n = ir_node_new(g->m, IR_MAIN_GRAPH, 0, domain, p->op, name, NULL, 0, onames, (uint32_t)nout);
	if (!n)
		return fail(g, "cannot create %s", p->op);
	ng.node = n;
	if (reg_var(g, p->reg)) {
		GVar *var = var_new(g, reg_var(g, p->reg), GV_NODE);
		if (!var)
			return fail(g, "too many variables");
		var->node = n;
	}
	/* 3. attributes: the pattern's, then (sometimes) others the schema has */
	for (int i = 0; i < p->nattrs; i++) {
		const MPatAttr *aa = &p->attrs[i];
		const OpAttrDef *def = op_schema_attr(ng.s, aa->name);
		int as_input = opset_form_attr_input(ng.newest, aa->name);
		if (!def && as_input >= 0) {
			/* ReduceMean[axes = [-1]] where axes is an input at this opset */
			if (!aa->value || aa->value->kind != ME_LIST)
				return fail(g, "attribute %s: not a list", aa->name);
			int64_t v[64];
			int k = aa->value->nkids < 64 ? aa->value->nkids : 64;
			for (int j = 0; j < k; j++) {
				double x = 0;
				attr_number(aa->value->kids[j], &x);
				v[j] = (int64_t)x;
			}
			while (ng.nslots <= as_input)
				ng.slots[ng.nslots++] = (Slot){.absent = true, .done = true};
			ng.slots[as_input] = (Slot){.done = true, .v = add_value(g, aa->name, ints_tensor(v, k), true)};
			continue;
		}
		if (!def)
			return fail(g, "%s has no attribute %s at opset %d", p->op, aa->name, g->opset);
		const char *av = reg_var(g, aa->reg);
		if (av) {
			GVar *var = var_find(g, av);
			if (var && var->kind == GV_ATTR) {
				const IrAttr *src = ir_attr(g->m, var->node, var->attr);
				if (src)
					copy_attr(g->m, n, aa->name, src);
				continue;
			}
			if (!draw_attr(g, &ng, def, n))
				return fail(g, "cannot draw a value for %s's attribute %s", p->op, aa->name);
			toward_guard(g, n, def->name, av);
			var = var_new(g, av, GV_ATTR);
			if (!var)
				return fail(g, "too many variables");
			var->node = n;
			var->attr = def->name;
			continue;
		}
		if (is_default(def, aa->value) && rng_chance(g->rng, 0.3))
			continue;
		if (!set_literal_attr(g, n, def->name, def->type, aa->value))
			return false;
	}
	for (int i = 0; i < ng.s->nattrs; i++) {
		const OpAttrDef *def = &ng.s->attrs[i];
		if (ir_attr(g->m, n, def->name))
			continue;
		bool mentioned = false;
		for (int j = 0; j < p->nattrs; j++)
			mentioned |= strcmp(p->attrs[j].name, def->name) == 0;
		bool is_form = false;
		for (int k = 0; k < ng.nslots; k++)
			is_form |= ng.slots[k].attr_form && strcmp(ng.slots[k].attr_form->attr, def->name) == 0;
		if (mentioned || is_form)
			continue;
		/* Attention's heads: optional, but what 3-D inputs need */
		const EvValue *x0 = first_input(g, &ng);
		bool needed = x0 && x0->rank == 3 && strstr(def->name, "num_heads");
		if (def->required || needed) {
			if (!draw_attr(g, &ng, def, n))
				return fail(g, "cannot draw a value for %s's attribute %s", p->op, def->name);
		} else if (rng_chance(g->rng, 0.25)) {
			draw_attr(g, &ng, def, n);
		}
	}
	/* 4. the other fresh operands, then the window at a boundary */
	for (int k = 1; k < ng.nslots; k++)
		if (!ng.slots[k].done && !gen_fresh(g, &ng, k))
			return false;
	window_attrs(g, &ng, n);
	/* rest lists bind their items */
	for (int k = 0; k < ng.nslots; k++) {
		const MOperand *a = ng.slots[k].pat;
		if (a && a->kind == MO_REST) {
			GVar *var = var_find(g, opd_var(g, a));
			if (!var) {
				var = var_new(g, opd_var(g, a), GV_REST);
				if (!var)
					return fail(g, "too many variables");
				for (int j = k; j < ng.nslots && ng.slots[j].pat == a; j++)
					var->rest[var->nrest++] = ng.slots[j].v;
			}
			break;
		}
	}
	/* operands spelled as attributes at this opset become them */
	ValueId ins[GEN_MAX_SLOTS];
	EvValue *invals[GEN_MAX_SLOTS];
	int nin = 0;
	for (int k = 0; k < ng.nslots; k++) {
		Slot *sl = &ng.slots[k];
		if (sl->attr_form) {
			if (sl->absent)
				continue;
			const EvValue *t = val_of(g, sl->v);
			const OpAttrDef *def = op_schema_attr(ng.s, sl->attr_form->attr);
			if (def && def->type == ATTR_FLOAT && ev_is_float(t->dtype) && t->numel == 1) {
				ir_attr_set_float(g->m, n, def->name, (float)ev_get_f(t, 0));
				continue;
			}
			if (!def || t->dtype != DT_INT64 || t->rank > 1)
				return fail(g, "%s input %d cannot be the attribute %s", p->op, k, sl->attr_form->attr);
			if (def->type == ATTR_INTS)
				ir_attr_set_ints(g->m, n, def->name, (const int64_t *)t->data, (size_t)t->numel);
			else if (def->type == ATTR_INT && t->numel == 1)
				ir_attr_set_int(g->m, n, def->name, ((const int64_t *)t->data)[0]);
			else
				return fail(g, "%s input %d cannot be the attribute %s", p->op, k, sl->attr_form->attr);
			continue;
		}
		ins[nin] = sl->absent ? 0 : sl->v;
		invals[nin++] = sl->absent ? NULL : val_of(g, sl->v);
	}
	while (nin > 0 && ins[nin - 1] == 0)
		nin--;
	for (int k = 0; k < nin; k++)
		ir_set_input(g->m, n, (uint32_t)k, ins[k]);
	if (ir_node(g->m, n)->ninputs != (uint32_t)nin)
		return fail(g, "cannot set the inputs of %s", p->op);
	/* 5. run it */
	EvValue *outs[GEN_MAX_OUTS] = {NULL};
	Diag d;
	diag_init(&d, NULL);
	if (!ev_eval_node(g->m, n, invals, outs, &d)) {
		for (int i = 0; i < nout; i++)
			ev_unref(outs[i]);
		return fail(g, "%s", d.first);
	}
	IrNode *node = ir_node(g->m, n);
	for (uint32_t i = 0; i < node->noutputs; i++)
		if (outs[i] && outs[i]->kind == EV_TENSOR) {
			set_type(g, node->outputs[i], outs[i]);
			set_val(g, node->outputs[i], outs[i]);
		} else {
			ev_unref(outs[i]);
			return fail(g, "%s output %u is not a tensor", p->op, i);
		}
	if ((uint32_t)p->output >= node->noutputs)
		return fail(g, "%s has no output %d", p->op, p->output);
	*out = node->outputs[p->output];
	return true;
}

/* ---- instances -------------------------------------------------------------------------- */

/* A model where the pattern reads Shape(x) as a dynamic model does: each
 * graph input's dims symbolic (most of them, at least one), and no shape
 * declared for the values nodes compute, so that inference, and with it
 * the constant folder, cannot turn the Shape (or a Gather or Slice of it)
 * into a constant before the rule sees it.  The data stay as drawn. */
static void make_symbolic(Gen *g)
{
	IrGraph *gr = ir_graph(g->m, IR_MAIN_GRAPH);
	/* shared: the axes made symbolic, the same in every input (one of
	 * the first two at least) */
	unsigned shared_mask = 0;
	for (int k = 0; k < EV_MAX_RANK; k++)
		if (rng_chance(g->rng, 0.6))
			shared_mask |= 1u << k;
	if (!(shared_mask & 3))
		shared_mask |= 1u << rng_below(g->rng, 2);
	bool static_weights = rng_chance(g->rng, 0.7);
	for (uint32_t i = 0; i < gr->ninputs; i++) {
		IrValue *val = ir_value(g->m, gr->inputs[i]);
		int r = val->shape.rank;
		if (r <= 0)
			continue;
		/* in most instances, an input whose dims the guard reads but
		 * whose shape the pattern does not (a weight: dim(w, 1) ==
		 * dim(p, 1)) keeps them */
		bool read = false, sized = false;
		for (int k = 0; k < g->nvars; k++)
			if (g->vars[k].kind == GV_VALUE && g->vars[k].v == gr->inputs[i]) {
				read |= reads_shape_of(g->mr, g->vars[k].name);
				sized |= guard_calls(g, g->guard, "dim", g->vars[k].name) || guard_calls(g, g->guard, "numel", g->vars[k].name);
			}
		if (!read && sized && static_weights)
			continue;
		Dim dims[EV_MAX_RANK];
		int must = rng_below(g->rng, r);
		for (int k = 0; k < r; k++) {
			dims[k] = val->shape.dims[k];
			char name[96];
			if (g->shared_dims && (shared_mask >> k & 1)) {
				snprintf(name, sizeof name, "d%d_%lld", k, (long long)dims[k].size);
				dims[k] = (Dim){-1, arena_strdup(g->m->arena, name)};
			} else if (!g->shared_dims && (k == must || rng_chance(g->rng, 0.6))) {
				snprintf(name, sizeof name, "%s_d%d", val->name, k);
				dims[k] = (Dim){-1, arena_strdup(g->m->arena, name)};
			}
		}
		Shape s = {r, dims};
		ir_value_set_type(g->m, gr->inputs[i], val->dtype, &s);
	}
	for (NodeId n = ir_first(g->m, IR_MAIN_GRAPH); n; n = ir_next(g->m, n)) {
		IrNode *node = ir_node(g->m, n);
		for (uint32_t k = 0; k < node->noutputs; k++)
			if (node->outputs[k])
				ir_value_set_type(g->m, node->outputs[k], ir_value(g->m, node->outputs[k])->dtype, NULL);
	}
}

static int ir_version_for(int opset)
{
	static const int v[] = {3, 3, 3, 3, 3, 3, 3, 3, 4, 5, 6, 7, 7, 7, 8, 8, 8, 8, 9, 9, 10, 10, 11};
	/* opset 1 .. 23 -> IR version; never below 4 (inputs with defaults) */
	int iv = opset >= 1 && opset <= 23 ? v[opset - 1] : 11;
	return iv < 4 ? 4 : iv;
}

bool gen_instance(const MRuleSet *set, const MRule *mr, const GenTarget *t, Rng *rng, GenInstance *out)
{
	memset(out, 0, sizeof *out);
	Gen g = {.rng = rng, .moderate_data = mr->moderate_data, .finite_data = mr->finite_data, .why = out->why,
	         .sweep = t->sweep, .sweep_div = 1, .set = set, .mr = mr, .prog = &mr->prog, .guard = gen_guard(&mr->prog)};
	g.symbolic = pattern_has_op(mr, "Shape") && rng_chance(rng, 0.75);
	g.idx_rank = -1;
	g.nonneg_indices = mr->nonneg_indices;
	g.opset = rng_range(rng, t->opset_lo, t->opset_hi);
	g.m = ir_model_new();
	ir_graph_new(g.m, 0, "instance");
	ir_set_opset(g.m, "", g.opset);
	g.m->ir_version = ir_version_for(g.opset);
	out->m = g.m;
	out->opset = g.opset;
	/* the preferred type: from the root's first input */
	const OpSchema *rs = op_schema_lookup(mr->root_domain, mr->root_op, g.opset);
	const OpFormal *f0 = rs ? formal_of(rs, 0) : NULL;
	uint32_t allowed = f0 ? allowed_types(rs, f0) : 1u << DT_FLOAT;
	g.dtype = DT_FLOAT;
	if (t->dtype) {
		g.dtype = t->dtype;     /* preferred wherever an operand takes it */
	} else if (!(allowed & (1u << DT_FLOAT)) || rng_chance(rng, 0.4)) {
		int dt = draw_any_type(&g, allowed);
		g.dtype = dt ? dt : DT_FLOAT;
	}
	static const int ranks[] = {0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 6};
	g.rank = t->rank_lo >= 0 ? rng_range(rng, t->rank_lo, t->rank_hi)
	                         : ranks[rng_below(rng, (int)(sizeof ranks / sizeof *ranks))];
	/* a rank the guard asks for (rank(x) == 4), one within the class aimed at */
	g.rank_lo = t->rank_lo;
	g.rank_hi = t->rank_hi;
	const MExpr *rc[16];
	int64_t want, fits[16];
	int nrc = guard_comparands(&g, g.guard, "rank", NULL, false, rc, 0, 16), nfit = 0;
	for (int i = 0; i < nrc; i++)
		if (guard_int(&g, rc[i], &want) && want >= 0 && want <= 6 &&
		    (t->rank_lo < 0 || (want >= t->rank_lo && want <= t->rank_hi)))
			fits[nfit++] = want;
	if (nfit && rng_chance(rng, t->rank_lo >= 0 ? 0.8 : 0.5))
		g.rank = (int)fits[rng_below(rng, nfit)];
	/* Now and then a dim is 0: a rule must be right on empty tensors too
	 * (an empty batch or sequence; a Reshape's 0 target, ORT's attention
	 * kernels refusing them: ir/ort_kernels.c) */
	for (int i = 0; i < g.rank; i++)
		g.dims[i] = rng_chance(rng, 0.02)  ? 0
		            : rng_chance(rng, 0.2) ? 1
		            : rng_chance(rng, 0.85) ? rng_range(rng, 1, 3)
		                                    : rng_range(rng, 4, 5);
	ValueId y = 0;
	bool ok = mr->prog.nnodes > 0 && gen_node(&g, &mr->prog.pats[0], &y);
	if (!ok && !out->why[0])
		snprintf(out->why, sizeof out->why, "the pattern's root is not an op");
	if (ok) {
		/* the root's output the result replaces is the graph output (all of
		 * them for a result of several outputs) */
		out->root = ir_value(g.m, y)->producer;
		IrNode *root = ir_node(g.m, out->root);
		bool tuple = mr->prog.nresults > 1;
		/* Half the time an Identity reads the output, as when the match
		 * sits inside a graph: a result that is a graph input can replace
		 * it only there (a graph output must be some node's). */
		bool inside = !tuple && rng_chance(rng, 0.5);
		for (uint32_t i = 0; i < root->noutputs; i++) {
			ValueId v = ir_node(g.m, out->root)->outputs[i];
			if (v != y && !(tuple && v))
				continue;
			/* "y" unless a pattern variable has the name */
			char name[32] = "y";
			for (int k = 1; ir_lookup(g.m, IR_MAIN_GRAPH, name); k++)
				snprintf(name, sizeof name, "y%d", k);
			if (inside) {
				const char *names[1] = {name};
				NodeId id = ir_node_new(g.m, IR_MAIN_GRAPH, 0, "", "Identity", "out", &v, 1, names, 1);
				if (!id)
					abort();   /* the name was free */
				v = ir_node(g.m, id)->outputs[0];
				set_type(&g, v, val_of(&g, y));
			} else {
				ir_value_rename(g.m, v, name);
			}
			ir_add_output(g.m, IR_MAIN_GRAPH, v);
		}
		/* a shared node's output the result replaces too (", s => y#k") is
		 * a graph output as well, so the comparison covers it */
		for (int i = 0; i < mr->prog.nalso; i++) {
			const MAlso *al = &mr->prog.also[i];
			const char *name = al->reg >= 0 && al->reg < mr->prog.nregs ? mr->prog.vnames[al->reg] : NULL;
			GVar *sv = name ? var_find(&g, name) : NULL;
			if (!sv || sv->kind != GV_NODE || (uint32_t)al->node_out >= ir_node(g.m, sv->node)->noutputs)
				continue;
			ValueId v = ir_node(g.m, sv->node)->outputs[al->node_out];
			if (v && !ir_value(g.m, v)->is_output)
				ir_add_output(g.m, IR_MAIN_GRAPH, v);
		}
		ir_node(g.m, out->root)->name = "root";
		/* what the instance covers: the element type and rank of its
		 * first graph input (the root's first input if it has none) */
		IrNode *rn = ir_node(g.m, out->root);
		IrGraph *gr = ir_graph(g.m, IR_MAIN_GRAPH);
		ValueId fv = gr->ninputs ? gr->inputs[0] : rn->ninputs && rn->inputs[0] ? rn->inputs[0] : y;
		const EvValue *first = val_of(&g, fv);
		out->dtype = first ? first->dtype : g.dtype;
		out->rank = first ? first->rank : g.rank;
		for (int i = 0; i < g.nvars; i++)
			if (g.vars[i].kind == GV_VALUE && g.vars[i].v == fv)
				out->first_var = g.vars[i].name;
		if (g.symbolic) {
			g.shared_dims = rng_chance(rng, 0.5);
			make_symbolic(&g);
		}
	}
	for (uint32_t i = 0; i < g.capvals; i++)
		ev_unref(g.vals[i]);
	free(g.vals);
	return ok;
}

uint32_t gen_root_types(const MRule *mr, int opset)
{
	const OpSchema *s = op_schema_lookup(mr->root_domain, mr->root_op, opset);
	const OpFormal *f0 = s ? formal_of(s, 0) : NULL;
	uint32_t allowed = f0 ? allowed_types(s, f0) : s ? 1u << DT_FLOAT : 0, mask = 0;
	for (size_t i = 0; i < sizeof drawn_types / sizeof *drawn_types; i++)
		if (allowed & (1u << drawn_types[i]))
			mask |= 1u << drawn_types[i];
	return mask;
}

/* Does every op of the pattern exist at `opset`? */
static bool ops_exist(const MRule *mr, int opset)
{
	const char *domain, *op;
	int reg;
	for (int k = 0; pattern_op(mr, k, &domain, &op, &reg); k++)
		if (!op_schema_lookup(domain, op, opset))
			return false;
	return true;
}

/* Do the ops of the pattern have the same opset-form entries at opsets a and b? */
static bool same_forms(const MRule *mr, int a, int b)
{
	const char *domain, *op;
	int reg;
	for (int k = 0; pattern_op(mr, k, &domain, &op, &reg); k++) {
		if (*domain)
			continue;
		const OpsetForm *fa[8], *fb[8];
		int na = opset_forms_at(op, a, fa, 8), nb = opset_forms_at(op, b, fb, 8);
		if (na != nb || memcmp(fa, fb, sizeof *fa * (size_t)(na < 8 ? na : 8)) != 0)
			return false;
	}
	return true;
}

int gen_opset_forms(const MRule *mr, int lo, int hi, int *flo, int *fhi, int max)
{
	int n = 0;
	for (int o = lo; o <= hi; o++) {
		if (!ops_exist(mr, o))
			continue;
		if (n > 0 && fhi[n - 1] == o - 1 && same_forms(mr, fhi[n - 1], o)) {
			fhi[n - 1] = o;
		} else if (n < max) {
			flo[n] = fhi[n] = o;
			n++;
		} else if (n > 0) {
			fhi[n - 1] = o;     /* more forms than max: the last takes the rest */
		}
	}
	return n;
}
