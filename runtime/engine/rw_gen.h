/* rw_gen.h - helpers for the matchers graftc generates, and only for them.
 *
 * The builder API (rewrite.h) is what any matcher needs; these are what
 * the rule language adds on top: operands that older opsets spell as
 * attributes (RwgArg), attributes with the schema's defaults, the builtins
 * of guards (rank, shape, ints, compose, ...), lists of ints as plain
 * values, and building ops in the model opset's form.
 *
 * Facts that may be unknown (the rank of a value without a shape, ints()
 * of a non-constant) set *unknown and return a harmless value; generated
 * code evaluates a whole guard and then treats "unknown" as false, so a
 * guard on an unknown shape never holds.
 *
 * Externs declared in rule files are called as C_NAME(Rewriter *rw, args):
 * value and tensor arguments are ValueIds, int int64_t, float double, bool
 * bool, dtype int, string RwgStr, ints RwgInts, floats RwgFloats; the
 * return types map the same way.  An extern returning a value is called
 * in the result, inside the rewrite's transaction: it may build with the
 * builder API (rw_const_*, rw_node) and returns the value, or 0 to
 * abandon the rewrite. */
#ifndef GRAFT_RW_GEN_H
#define GRAFT_RW_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "rewrite.h"

/* Lists of ints and floats are values of generated code, bounded: a list
 * that would not fit is unknown. */
#define RWG_MAX_INTS 64

typedef struct RwgInts {
	int n;
	int64_t v[RWG_MAX_INTS];
} RwgInts;

typedef struct RwgFloats {
	int n;
	double v[RWG_MAX_INTS];
} RwgFloats;

typedef struct RwgStr {
	const char *p;          /* not NUL-terminated */
	size_t n;
} RwgStr;

/* An operand that may be an attribute: canonical input `index` of node n
 * is the attribute `attr` when the model's opset spells it so (Squeeze's
 * axes before 13), else the value v (0: absent). */
typedef struct RwgArg {
	ValueId v;
	NodeId n;
	const char *attr;       /* non-NULL: read the attribute of n */
} RwgArg;

/* The rest of a node's inputs, from input `first` on: xs... */
typedef struct RwgRest {
	NodeId n;
	uint32_t first;
} RwgRest;

/* An older form of a built op: canonical input `input` is the attribute
 * `attr` in opsets first..last. */
typedef struct RwgForm {
	int input;
	const char *attr;
	int first, last;
} RwgForm;

/* ---- matching --------------------------------------------------------------- */

/* The node producing v if it is op `kind` of the default domain (or op
 * `name` of `domain`) and v is its output `out`; else 0. */
NodeId rwg_producer_op(Rewriter *rw, ValueId v, OpKind kind, uint32_t out);
NodeId rwg_producer_named(Rewriter *rw, ValueId v, const char *domain, const char *name, uint32_t out);
/* Inputs `from` on are all absent. */
bool rwg_absent_from(Rewriter *rw, NodeId n, uint32_t from);
/* Every output of n is used only by the nodes `within`, at most `refs` times
 * in all (the pattern's reads of n), and is no graph output. */
bool rwg_single_use_node(Rewriter *rw, NodeId n, const NodeId *within, int nwithin, int refs);
/* rwg_single_use_node of each nodes[k] whose refs[k] > 0, within nodes (the
 * match); the root and shared nodes have 0. */
bool rwg_single_use_nodes(Rewriter *rw, const NodeId *nodes, int n, const int *refs);
/* The kind of op producing v if v is its output `out` and it is of the
 * default domain; else OP_UNKNOWN.  Decision trees switch on it. */
OpKind rwg_producer_kind(Rewriter *rw, ValueId v, uint32_t out);
/* Is v an output, any one, of a node of op `name` of `domain` ("": ONNX)?
 * (x:!Conv says it is not.)  An absent value, a graph input or an
 * initializer is no node's. */
bool rwg_from(Rewriter *rw, ValueId v, const char *domain, const char *name);
/* Attribute `name` of n (or its default) is the int `want`. */
bool rwg_attr_int_is(Rewriter *rw, NodeId n, const char *name, int64_t want);
/* Output k of node n (0 if it has none). */
ValueId rwg_out(Rewriter *rw, NodeId n, uint32_t k);
/* A constant whose elements are exactly list[0..n) (1-D, n elements). */
bool rwg_const_equals_list(Rewriter *rw, ValueId v, const double *list, int n);

/* Operands that may be attributes. */
RwgArg rwg_arg(Rewriter *rw, NodeId n, uint32_t index, const char *attr, int first, int last);
/* The same for an input older opsets spell as one of several attributes. */
RwgArg rwg_arg_forms(Rewriter *rw, NodeId n, uint32_t index, const RwgForm *forms, int nforms);
static inline RwgArg rwg_val(ValueId v) { return (RwgArg){v, 0, NULL}; }
bool rwg_arg_absent(Rewriter *rw, RwgArg a);
bool rwg_arg_same(Rewriter *rw, RwgArg a, RwgArg b);
bool rwg_arg_equals(Rewriter *rw, RwgArg a, double x, double tol);
bool rwg_arg_equals_list(Rewriter *rw, RwgArg a, const double *list, int n);
RwgInts rwg_arg_ints(Rewriter *rw, RwgArg a, bool *unknown);
double rwg_arg_scalar(Rewriter *rw, RwgArg a, bool *unknown);
/* As a value: the attribute becomes a new constant (inside rw_begin..rw_commit). */
ValueId rwg_arg_value(Rewriter *rw, RwgArg a, bool *unknown);

/* Attributes of n, or the schema's default for the model's opset (or, for
 * an attribute older opsets lack, the newest default).  False if neither. */
bool rwg_attr_int(Rewriter *rw, NodeId n, const char *name, int64_t *out);
bool rwg_attr_float(Rewriter *rw, NodeId n, const char *name, double *out);
bool rwg_attr_str(Rewriter *rw, NodeId n, const char *name, RwgStr *out);
bool rwg_attr_ints(Rewriter *rw, NodeId n, const char *name, RwgInts *out);
/* Attribute `name` of n (or its default) is the list `want`. */
bool rwg_attr_ints_is(Rewriter *rw, NodeId n, const char *name, RwgInts want);
bool rwg_attr_floats(Rewriter *rw, NodeId n, const char *name, RwgFloats *out);

/* ---- --why ---------------------------------------------------------------------- */

/* Where v comes from, for a message: "Relu", "a graph input", "a constant", "nothing". */
const char *rwg_what(Rewriter *rw, ValueId v);
/* rwg_single_use_node(rw, n, within, nwithin, refs) failed: record whether an
 * output is a graph output or has a consumer outside the match.  False. */
bool rwg_why_use(Rewriter *rw, int step, NodeId n, const NodeId *within, int nwithin, int refs, const char *desc);

/* Why a guard is false, or a value of the result unknown (the interpreter
 * answers --why, for compiled sets too): the lowering
 * (dsl/lower.c) splits a guard at its top-level &&s and lists, per part,
 * the values of the rule's expressions it reads (their source text); both
 * back ends evaluate the first part that fails and its values into an
 * RwgWhy and call rwg_why_guard:
 *     detail "numel(s) == 1 is false", values "numel(s) is 3"
 *     detail "scalar(lo) > 0 is undecided", values "scalar(lo) is unknown (lo has 3 elements)"
 * A value whose text is the part's own (a bool builtin alone, or a value of
 * the result) shows only why it is unknown. */
typedef enum RwgNeed {
	RWG_NEED_NONE,
	RWG_NEED_SHAPE,         /* rank, shape, dim, numel, dims of the value */
	RWG_NEED_DTYPE,         /* dtype, is_float, is_int */
	RWG_NEED_SCALAR,        /* scalar: a one-element constant */
	RWG_NEED_INTS,          /* ints: a constant list of at most RWG_MAX_INTS integers */
	RWG_NEED_CONST,         /* finite, moderate: a constant */
} RwgNeed;

typedef struct RwgWhy {
	const char *cond;       /* the part, or the result's value, as written */
	bool last_unknown;      /* the value added last was unknown */
	bool last_listed;       /* ...and is in values (its text is not cond) */
	size_t n;
	char values[500];
} RwgWhy;

void rwg_why_begin(RwgWhy *b, const char *cond);
/* Add "text is v" ("text is unknown" when *unknown); clears *unknown for the next. */
void rwg_why_int(RwgWhy *b, const char *text, int64_t v, bool *unknown);
void rwg_why_float(RwgWhy *b, const char *text, double v, bool *unknown);
void rwg_why_bool(RwgWhy *b, const char *text, bool v, bool *unknown);
void rwg_why_dtype(RwgWhy *b, const char *text, int v, bool *unknown);
void rwg_why_str(RwgWhy *b, const char *text, RwgStr v, bool *unknown);
void rwg_why_ints(RwgWhy *b, const char *text, RwgInts v, bool *unknown);
void rwg_why_floats(RwgWhy *b, const char *text, RwgFloats v, bool *unknown);
/* After a value that was unknown: why, from what `need` asks of value v
 * (named of): " (s has 3 elements)". */
void rwg_why_need(Rewriter *rw, RwgWhy *b, RwgNeed need, ValueId v, const char *of);
/* Record the part as false (undecided: something it needs is unknown). False. */
bool rwg_why_guard(Rewriter *rw, int step, const RwgWhy *b, bool undecided);
/* Record the result's value b->cond as unknown (RW_WHY_UNKNOWN). False. */
bool rwg_why_result(Rewriter *rw, int step, const RwgWhy *b);

/* ---- guard builtins ------------------------------------------------------------- */

int64_t rwg_rank(Rewriter *rw, ValueId v, bool *unknown);
RwgInts rwg_shape(Rewriter *rw, ValueId v, bool *unknown);
int64_t rwg_dim(Rewriter *rw, ValueId v, int64_t i, bool *unknown);
bool rwg_same_dim(Rewriter *rw, ValueId a, int64_t i, ValueId b, int64_t j, bool *unknown);
/* dtype: 0 when unknown (rwg_dtype_k also sets *unknown). */
int rwg_dtype(Rewriter *rw, ValueId v);
int rwg_dtype_k(Rewriter *rw, ValueId v, bool *unknown);
int64_t rwg_numel(Rewriter *rw, ValueId v, bool *unknown);
int64_t rwg_uses(Rewriter *rw, ValueId v);
int64_t rwg_outputs(Rewriter *rw, NodeId n);
double rwg_scalar(Rewriter *rw, ValueId v, bool *unknown);
RwgInts rwg_ints(Rewriter *rw, ValueId v, bool *unknown);
bool rwg_is_identity(RwgInts p);
bool rwg_is_float(Rewriter *rw, ValueId v, bool *unknown);
bool rwg_is_int(Rewriter *rw, ValueId v, bool *unknown);
RwgInts rwg_merge_axes(RwgInts outer, RwgInts inner, int64_t n, bool *unknown);
bool rwg_distinct(RwgInts l);
/* finite(c): every element of constant v is finite.  moderate(c): every
 * element is 0, or finite with 2^-k <= |x| <= 2^k, k two fifths of the
 * dtype's largest exponent (50 for float32 and bfloat16, 409 for float64, 6
 * for float16), so that a product or quotient of two such numbers, times
 * one up to 2^20, is finite, and nonzero where they are: the guard of rules
 * that fold constants in a new order (rules/basic/const.rules).  Integer
 * constants are both.  *unknown when v is no constant. */
bool rwg_finite(Rewriter *rw, ValueId v, bool *unknown);
bool rwg_moderate(Rewriter *rw, ValueId v, bool *unknown);
RwgInts rwg_compose(RwgInts q, RwgInts p, bool *unknown);
RwgInts rwg_ones(int64_t n, bool *unknown);
/* range(n): 0, 1, ..., n-1. */
RwgInts rwg_range(int64_t n, bool *unknown);
/* dims(v, axes): the dims of v at axes, negative ones counting from the end
 * (unknown unless every one is known and in range). */
RwgInts rwg_dims(Rewriter *rw, ValueId v, RwgInts axes, bool *unknown);
/* Comparisons element by element that hold when every element's holds: a
 * list with a number (true for an empty list), or two lists of one length
 * (false for different lengths). */
typedef enum RwgCmp { RWG_EQ, RWG_NE, RWG_LT, RWG_LE, RWG_GT, RWG_GE } RwgCmp;
bool rwg_ints_every(RwgInts a, RwgCmp op, RwgInts b);
bool rwg_ints_every_k(RwgInts a, RwgCmp op, int64_t k);
RwgInts rwg_ints_concat(RwgInts a, RwgInts b, bool *unknown);
RwgInts rwg_ints_lit(int n, const int64_t *v);
RwgFloats rwg_floats_lit(int n, const double *v);
RwgFloats rwg_ints_to_floats(RwgInts a);
bool rwg_ints_eq(RwgInts a, RwgInts b);
bool rwg_floats_eq(RwgFloats a, RwgFloats b);
bool rwg_str_eq(RwgStr a, RwgStr b);
int64_t rwg_ints_at(RwgInts a, int64_t i, bool *unknown);
double rwg_floats_at(RwgFloats a, int64_t i, bool *unknown);
int64_t rwg_idiv(int64_t a, int64_t b, bool *unknown);
static inline RwgStr rwg_str(const char *s, size_t n) { return (RwgStr){s, n}; }
int64_t rwg_rest_len(Rewriter *rw, RwgRest r);
ValueId rwg_rest_at(Rewriter *rw, RwgRest r, int64_t i, bool *unknown);

/* ---- building --------------------------------------------------------------------- */

/* A node of default-domain op with inputs ins[0..nin) (0: absent; trailing
 * absent ones dropped); rwg_node_in for another domain. */
NodeId rwg_node(Rewriter *rw, const char *op, const ValueId *ins, uint32_t nin, uint32_t nout);
/* rw_node_outs with trailing absent inputs dropped: outputs as `used` says */
NodeId rwg_node_outs(Rewriter *rw, const char *domain, const char *op, const ValueId *ins, uint32_t nin,
                     uint32_t used);
NodeId rwg_node_in(Rewriter *rw, const char *domain, const char *op, const ValueId *ins, uint32_t nin,
                   uint32_t nout);
/* The same in the model opset's form: a canonical input that forms[] says
 * is an attribute at this opset is set as that attribute (from an
 * attribute operand or a constant; *unknown when it is neither). */
NodeId rwg_node_forms(Rewriter *rw, const char *op, const RwgArg *ins, uint32_t nin, uint32_t nout,
                      const RwgForm *forms, int nforms, bool *unknown);
/* One-output ops: Sqrt(a), Mul(a, b), Reshape(x, s). */
ValueId rwg_op1(Rewriter *rw, const char *op, ValueId a);
ValueId rwg_op2(Rewriter *rw, const char *op, ValueId a, ValueId b);
/* A scalar constant of like's dtype (*unknown if that is unknown). */
ValueId rwg_scalar_like(Rewriter *rw, ValueId like, double x, bool *unknown);
ValueId rwg_const_ints(Rewriter *rw, RwgInts v);
/* Attributes of a built node. */
void rwg_set_int(Rewriter *rw, NodeId n, const char *name, int64_t v);
void rwg_set_float(Rewriter *rw, NodeId n, const char *name, double v);
void rwg_set_str(Rewriter *rw, NodeId n, const char *name, RwgStr s);
void rwg_set_ints(Rewriter *rw, NodeId n, const char *name, RwgInts v);
void rwg_set_floats(Rewriter *rw, NodeId n, const char *name, RwgFloats v);

/* ---- C helpers named by the library's rule files (extern ... = "...") ----------- */

/* Every element of the float constant t has an exact reciprocal: a power of
 * two whose reciprocal is finite and normal. */
bool graft_reciprocal_exact(Rewriter *rw, ValueId t);
/* Every element of the constant t is greater than x (NaN is not). */
bool graft_all_greater(Rewriter *rw, ValueId t, double x);
/* every element of the constant t is nonzero (NaN counts as nonzero) */
bool graft_all_nonzero(Rewriter *rw, ValueId t);
/* Every row of the constant t (along its last axis) has a nonzero element:
 * a mask that leaves every query at least one key. */
bool graft_rows_any(Rewriter *rw, ValueId t);
bool graft_same_shape(Rewriter *rw, ValueId a, ValueId b);
bool graft_positions(Rewriter *rw, ValueId t, int64_t n);
/* Is the constant t (rank >= 2) the same along axis 0: every slice t[i]
 * equal, bit for bit, to t[0]?  (A static model's folded position
 * embeddings, [batch, seq, hidden] with every batch row alike.) */
bool graft_batch_rows_equal(Rewriter *rw, ValueId t);
/* v is data, not a constant of the model (what [nonnegative_indices]
 * assumes of ids holds only for data: a constant's values are known). */
bool graft_not_constant(Rewriter *rw, ValueId v);
/* No element of s is 0 (a Reshape shape that copies no input dim). */
bool graft_no_zeros(Rewriter *rw, RwgInts s);
/* Converting from dtype `from` to `to` is exact for every value of `from`. */
bool graft_cast_lossless(Rewriter *rw, int from, int64_t to);

#endif
