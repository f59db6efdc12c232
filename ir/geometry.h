/* geometry.h - index arithmetic the ONNX spec defines for ops (the range a
 * Slice takes along an axis), in one place for shape inference, the
 * evaluator's kernels and the engine's deferred folds, so that no two of them
 * can disagree on a shape (a disagreement is a wrong fold). */
#ifndef GRAFT_GEOMETRY_H
#define GRAFT_GEOMETRY_H

#include <stdint.h>

/* The elements Slice takes along an axis of size d (d >= 0) for start, end
 * and step (step != 0), as the spec clamps them: a negative start or end
 * counts from the end; stepping forward, start and end are clamped to
 * [0, d]; stepping backward, start to [0, d - 1] and end to [-1, d - 1].
 * Returns how many elements are taken and sets *first to the first one's
 * index (0 when none is).  No overflow for any int64 arguments. */
int64_t ir_slice_range(int64_t d, int64_t start, int64_t end, int64_t step, int64_t *first);

#endif
