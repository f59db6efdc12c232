/* infer_internal.h - what the files of runtime/infer/ share, bottom up:
 * infer.c (the state, the helpers rules use, merging, known values,
 * printing), infer_ops.c (one shape rule per op) and infer_driver.c (runs
 * the rules).  Not part of libgraft's API: callers use infer.h.
 *
 * A rule sees one node through an InferCtx: its inputs' types and known
 * values, its attributes, and output slots to fill.  The driver then merges
 * the outputs into the IR and propagates known values, so a rule never
 * touches the IR itself. */
#ifndef GRAFT_INFER_INTERNAL_H
#define GRAFT_INFER_INTERNAL_H

#include "infer.h"

/* Room for a rule's scratch dims: inputs of rank over IR_MAX_RANK are seen
 * as of unknown rank (inf_rank) and output ranks over it are left unknown
 * (inf_set), so this leaves room for rank arithmetic such as Gather's
 * r+q-1 between the two. */
#define INF_MAX_RANK (2 * IR_MAX_RANK)
/* Longest int vector tracked element by element (shape vectors are short). */
#define INF_VEC_MAX 64

/* One element of a partially known int vector: a number, a symbolic dim
 * taken from some value's shape ("N"), or unknown (known false, sym NULL). */
typedef struct SymInt {
	bool known;
	int64_t v;          /* valid if known */
	const char *sym;    /* valid if !known; NULL: nothing is known */
} SymInt;

/* A 0-D or 1-D integer (or bool) tensor known element by element.  Symbol
 * names point into the IR's arena (they come from value shapes), so they
 * live as long as the model. */
typedef struct IVec {
	int rank;           /* 0 or 1 */
	int n;              /* 1 if rank is 0 */
	SymInt e[];
} IVec;

/* A value's type as the model declared it (value_info, graph outputs),
 * taken when the state was made, so re-inference merges with what was
 * declared rather than with its own earlier guesses. */
typedef struct DeclType {
	bool has;
	int dtype;
	int rank;
	Dim *dims;          /* malloc'd; params point into the IR's arena */
} DeclType;

struct InferState {
	IrModel *m;
	bool name_unknown;  /* give each unknown, unnamed output dim a symbol (infer_name_unknown_dims) */
	DeclType *decl;     /* by ValueId, the first ndecl values */
	uint32_t ndecl;
	ValueId **decl_out; /* by GraphId (first ndecl_graphs): the values declared at each output slot */
	uint32_t ndecl_graphs;
	uint32_t cap;       /* arrays below are indexed by ValueId, cap entries */
	EvValue **val;      /* fully known values (initializers, Constants, folded) */
	IVec **vec;         /* int vectors known element by element */
	uint8_t *vec_tried; /* vec derived from val already (1) or impossible (2) */
	struct InferOut **seq; /* element type of sequence values (the IR does not type them) */
	struct InferOut **computed; /* graph outputs whose declared symbols stand in for computed
	                             * ones: the type as computed (infer_computed_dim) */
	int64_t opset;
	uint8_t *queued;    /* infer_node_and_consumers: by NodeId, nqueued entries, all 0 between calls */
	uint32_t nqueued;
};

typedef struct InferOut {
	bool is_seq;        /* a sequence: dtype/rank/dims describe its elements */
	int dtype;
	int rank;           /* -1 unknown */
	Dim dims[INF_MAX_RANK];
	uint32_t contested; /* bit i: dim i is unknown because ONNX's shape inference (which ONNX
	                     * Runtime runs at load) and ORT's kernel give different sizes; a
	                     * declared dim does not fill it (infer.c merge_type); with rank
	                     * -1, the rank is contested and no declared shape fills it */
} InferOut;

typedef struct InferCtx {
	InferState *s;
	IrModel *m;
	NodeId n;
	IrNode *node;
	int64_t opset;
	Diag *d;
	bool failed;
	int nout;
	InferOut *out;
} InferCtx;

typedef bool (*InferFn)(InferCtx *c);

/* ---- infer.c: the driver's steps around a rule ----------------------------- */
/* Size the state's arrays (by ValueId) to the model's values. */
void infer_ensure_cap(InferState *s);
/* Merge what a rule gave output v (o) into the IR's type of v, with what
 * the model declared; *changed if the IR's type changed.  False (with a
 * message) on a contradiction with a declared output. */
bool infer_merge_type(InferCtx *c, ValueId v, const InferOut *o, bool *changed);
/* Set the known values of the node's outputs; *changed if any differs from before. */
void infer_propagate_known(InferCtx *c, bool *changed);

/* ---- infer_ops.c: the rules ------------------------------------------------ */
/* The rule for an op of the default domain, or NULL. */
InferFn infer_rule_find(const char *op);
/* com.microsoft NhwcConv's rule (infer_ops.c; graft optimize --layout nhwc emits the op). */
bool infer_nhwc_conv(InferCtx *c);

/* ---- infer.c: helpers for rules ------------------------------------------ */
/* One-line error naming the node; returns false. */
bool inf_fail(InferCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int inf_nin(InferCtx *c);
bool inf_has(InferCtx *c, int i);                 /* input i given (not omitted) */
int inf_dtype(InferCtx *c, int i);                /* DT_UNDEFINED if absent or unknown */
int inf_rank(InferCtx *c, int i);                 /* -1 if absent or unknown */
const Dim *inf_dims(InferCtx *c, int i);          /* NULL if rank unknown */
const EvValue *inf_val(InferCtx *c, int i);
const IVec *inf_vec(InferCtx *c, int i);
/* Input i fully known as integers (up to max of them): count, or -1. */
int inf_ints(InferCtx *c, int i, int64_t *out, int max);
/* Input i fully known as numbers (floats or ints): count, or -1. */
int inf_floats(InferCtx *c, int i, double *out, int max);

bool inf_has_attr(InferCtx *c, const char *name);
int64_t inf_attr_i(InferCtx *c, const char *name, int64_t def);
float inf_attr_f(InferCtx *c, const char *name, float def);
/* Ints attribute: count (and the list), or -1 if absent. */
int inf_attr_ints(InferCtx *c, const char *name, const int64_t **v);
int inf_attr_floats(InferCtx *c, const char *name, const float **v);
/* String attribute into buf, or def if absent. */
const char *inf_attr_s(InferCtx *c, const char *name, const char *def, char *buf, size_t size);

/* Element type of sequence input i, or NULL if i is not a known sequence. */
const InferOut *inf_seq(InferCtx *c, int i);
/* Outputs: what the rule leaves unset stays unknown. */
void inf_set(InferCtx *c, int o, int dtype, int rank, const Dim *dims);
void inf_set_dtype(InferCtx *c, int o, int dtype);
/* Output o gets input i's type. */
void inf_copy(InferCtx *c, int o, int i);
/* Output o is a sequence with elements of the given type. */
void inf_set_seq(InferCtx *c, int o, int dtype, int rank, const Dim *dims);

/* Dims. */
static inline Dim dim_n(int64_t v) { Dim d = {v, NULL}; return d; }
static inline Dim dim_unknown(void) { Dim d = {-1, NULL}; return d; }
static inline bool dim_known(Dim d) { return d.size >= 0; }
/* Same size, or the same symbol. */
bool dim_same(Dim a, Dim b);
/* Two dims that must be equal: the more precise one; false on two different numbers. */
bool dim_unify(Dim a, Dim b, Dim *out);
/* numpy broadcasting with symbols (N,1->N; N,N->N; N,5->5; N,M->?). */
bool inf_broadcast(InferCtx *c, int ra, const Dim *a, int rb, const Dim *b, int *rout, Dim *out);
/* Normalize an axis; false (with a message) if out of range. */
bool inf_axis(InferCtx *c, int64_t axis, int rank, int *out);
/* Dim from one element of a known int vector. */
Dim dim_from_sym(SymInt e);
/* The symbol of the sum of two symbols (each maybe a sum already): its terms
 * sorted and joined with " + ", so past + seq from a Concat of the KV cache
 * and seq + past from a Range's length are one name; in m's arena. */
const char *sym_sum_name(IrModel *m, const char *a, const char *b);

#endif
