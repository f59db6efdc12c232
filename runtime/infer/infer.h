/* infer.h - shape and dtype inference over the IR.
 *
 * Fills IrValue.dtype and IrValue.shape (ir_value_set_type) for node outputs
 * from their inputs' types, attributes and, where an op's output shape
 * depends on data (Reshape's shape, Slice's starts, Expand, Tile,
 * ConstantOfShape, Range, Pad, Resize, Split, Squeeze/Unsqueeze axes, Reduce
 * axes, TopK k, ...), from values known at compile time: initializers (not
 * overridable ones), Constant nodes, and values propagated through small
 * shape computations (Shape -> Gather -> Unsqueeze -> Concat -> Reshape),
 * including symbolic dims: a dynamic batch stays named "N".
 *
 * Incremental: the rewrite engine calls infer_node_and_consumers after each
 * rewrite; it re-infers that node and then only consumers whose input types
 * changed, without a whole-graph pass. */
#ifndef GRAFT_INFER_H
#define GRAFT_INFER_H

#include "runtime/eval/eval.h"

typedef struct InferState InferState;  /* known values of small shape tensors; owned by the caller */

InferState *infer_new(IrModel *m);
void infer_free(InferState *s);

/* Infer node n's outputs.  Returns false (with a one-line message naming the
 * node) if the inputs contradict the op (e.g. MatMul 2x3 by 4x5); unknown
 * inputs just give unknown outputs. */
bool infer_node(InferState *s, NodeId n, Diag *d);
/* Dim i of graph output v as computed from its inputs, where the output's
 * declared symbols (which the IR keeps: the interface names them) replaced
 * computed ones; false otherwise. */
bool infer_computed_dim(InferState *s, ValueId v, int i, Dim *out);
/* From now on, an output dim inference cannot compute gets a symbol of its
 * own (IR_ANON_DIM_PREFIX "vV.I": value V, dim I) instead of staying
 * anonymous, so the ops that pass a dim through (Cast, Relu, a Softmax's
 * axis) show their output's dim equal to their input's.  The rewriter turns
 * it on; the saver writes such dims unknown again. */
void infer_name_unknown_dims(InferState *s, bool on);
/* Every graph of the model, in topological order (bodies included). */
bool infer_model(InferState *s, Diag *d);
/* n, then transitively the consumers whose inputs' types changed. */
bool infer_node_and_consumers(InferState *s, NodeId n, Diag *d);
/* The compile-time value of v if known (an initializer, a Constant, or
 * propagated), else NULL.  Borrowed: valid until the next infer call. */
const EvValue *infer_known_value(InferState *s, ValueId v);

/* The known value of v handed over to the caller (who unrefs it), and
 * forgotten here; NULL if none.  The constant folder takes a value it turns
 * into an initializer instead of copying it. */
EvValue *infer_take_value(InferState *s, ValueId v);
/* Forget the known values of values the IR has removed since (their bytes
 * would otherwise stay until infer_free).  Costs a pass over the values: the
 * engine calls it now and then. */
void infer_sweep(InferState *s);
/* A 1-D int64 vector known element by element (Shape -> Gather -> Concat):
 * for each element either vals[i] (syms[i] NULL) or a symbolic dim name in
 * syms[i].  Returns the length, or -1 if some element is unknown altogether,
 * the vector is not tracked, or it is longer than max. */
int infer_known_ints(InferState *s, ValueId v, int64_t *vals, const char **syms, int max);

/* For `graft shapes`: one line per value, "name: dtype[d0,d1,...]" with
 * symbolic dims by name and unknown dims as '?', in graph order. */
void infer_print(IrModel *m, FILE *out);

#endif
