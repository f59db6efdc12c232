/* fold_move.h - folds that only move a constant's bytes, as deferred
 * tensors (see fold_move.c); used by fold.c. */
#ifndef GRAFT_FOLD_MOVE_H
#define GRAFT_FOLD_MOVE_H

#include "runtime/eval/eval.h"

/* Node n (Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Slice,
 * Gather, Cast, Concat; its inputs constants, its output's shape inferred)
 * as a tensor whose bytes are computed when read, or that shares its
 * input's bytes; 0 if it is not one the recipes express (the kernel then
 * computes it). */
TensorId fold_defer_move(IrModel *m, NodeId n);

#endif
