/* fold.h - constant folding (see fold.c). */
#ifndef GRAFT_FOLD_H
#define GRAFT_FOLD_H

#include "eval.h"

#define FOLD_DEFAULT_MAX_BYTES ((size_t)1 << 30)

typedef struct InferState InferState;

typedef struct FoldOptions {
	size_t max_bytes;      /* largest tensor a fold may create (default 1 GB) */
	bool report_errors;    /* warn about nodes whose kernel refused to fold them */
	InferState *infer;     /* shapes and known values (fold_model makes one if NULL) */
} FoldOptions;

typedef struct FoldStats {
	unsigned folded;                /* nodes computed into initializers */
	unsigned constants;             /* Constant nodes turned into initializers */
	unsigned shapes;                /* Shape/Size of static tensors */
	unsigned over_cap;              /* left alone: result over max_bytes */
	unsigned errors;                /* left alone: the kernel refused */
	unsigned reshapes;              /* Reshape shapes made constant with 0 = copy a symbolic dim */
	unsigned removed_initializers;  /* inputs of folded nodes nothing else used */
	unsigned dead;                  /* nodes left with no reader, removed */
} FoldStats;

/* A non-overridable initializer. */
bool fold_is_constant(IrModel *m, ValueId v);
/* Fold node n if it can be; true if it was (n is then removed). */
bool fold_node(IrModel *m, NodeId n, const FoldOptions *o, FoldStats *st, Diag *d);
/* Fold to a fixpoint (worklist), then drop initializers left unused. */
bool fold_model(IrModel *m, const FoldOptions *o, FoldStats *st, Diag *d);

#endif
