/* split_slices.h - Slices that tile a value along one axis, found for one
 * Split (split_slices.c; CATALOGUE.md B21), a built-in pass of the rewrite
 * engine. */
#ifndef GRAFT_SPLIT_SLICES_H
#define GRAFT_SPLIT_SLICES_H

#include "ir/ir.h"

typedef struct SplitPiece {
	NodeId slice;
	int64_t start, end;     /* [start, end) along the axis, clamped */
} SplitPiece;

typedef struct SplitPlan {
	ValueId x;              /* the value the Slices read */
	int64_t axis;           /* 0 <= axis < rank(x) */
	SplitPiece *pieces;     /* in order along the axis, covering it exactly */
	int npieces;            /* >= 2 */
} SplitPlan;

/* Slice n and every other Slice of its data along the same axis, when
 * together they cover that axis exactly (see split_slices.c for the
 * conditions).  True with p filled in (free with split_plan_free). */
bool split_slices_find(IrModel *m, NodeId n, SplitPlan *p);
void split_plan_free(SplitPlan *p);

#endif
