/* fold.h - constant folding (see fold.c). */
#ifndef GRAFT_FOLD_H
#define GRAFT_FOLD_H

#include "runtime/eval/eval.h"

#define FOLD_DEFAULT_MAX_BYTES ((size_t)1 << 30)

typedef struct InferState InferState;

/* The fold budget: the most bytes folding may add to a model in all (its
 * folded tensors less the constants they replace), unless told otherwise:
 * as many bytes as the model's initializers already take, and at least
 * FOLD_MIN_BUDGET.  So a fold never more than doubles a model's weights
 * (a real model's folds add little: Conv+BatchNormalization replaces the
 * weight it scales), while 12 Tiles of a tiny model no longer make it
 * 720 MB. */
#define FOLD_MIN_BUDGET ((size_t)64 << 20)

typedef struct FoldOptions {
	size_t max_bytes;      /* largest tensor a fold may create (default 1 GB) */
	size_t max_total_bytes;/* the fold budget (0: fold_default_budget of the model) */
	int64_t *added;        /* bytes folding has added so far, kept across fold_node calls
	                          (fold_model keeps its own when NULL); a fold that shrinks
	                          the model gives bytes back */
	int64_t base_bytes;    /* with added: the initializers' bytes when folding began, the
	                          base of the recount before a fold is refused (0: none) */
	bool report_errors;    /* warn about nodes whose kernel refused to fold them, and
	                          those over the size cap or the budget */
	InferState *infer;     /* shapes and known values (fold_model makes one if NULL) */
} FoldOptions;

typedef struct FoldStats {
	unsigned folded;                /* nodes computed into initializers */
	unsigned constants;             /* Constant nodes turned into initializers */
	unsigned shapes;                /* Shape/Size of static tensors */
	unsigned over_cap;              /* left alone: result over max_bytes */
	unsigned over_budget;           /* left alone: folding it would exceed max_total_bytes */
	unsigned errors;                /* left alone: the kernel refused */
	unsigned reshapes;              /* Reshape shapes made constant with 0 = copy a symbolic dim */
	unsigned removed_initializers;  /* inputs of folded nodes nothing else used */
	unsigned dead;                  /* nodes left with no reader, removed */
} FoldStats;

/* The default fold budget of m: max(FOLD_MIN_BUDGET, its initializers' bytes). */
size_t fold_default_budget(IrModel *m);
/* The bytes m's live initializers take (FoldOptions.base_bytes). */
int64_t fold_base_bytes(IrModel *m);
/* A non-overridable initializer. */
bool fold_is_constant(IrModel *m, ValueId v);
/* Fold node n if it can be; true if it was (n is then removed). */
bool fold_node(IrModel *m, NodeId n, const FoldOptions *o, FoldStats *st, Diag *d);
/* Fold to a fixpoint (worklist), then drop initializers left unused. */
bool fold_model(IrModel *m, const FoldOptions *o, FoldStats *st, Diag *d);

#endif
