/* layout.h - the layout level's Transpose pushing (layout.c; CATALOGUE.md
 * J122-J124), a built-in pass of the rewrite engine. */
#ifndef GRAFT_LAYOUT_H
#define GRAFT_LAYOUT_H

#include "ir/ir.h"

typedef struct Layout Layout;   /* scratch tables, reused across calls */

Layout *layout_new(void);
void layout_free(Layout *L);

/* What one push changed, for the audit and the engine's worklist. */
typedef struct LayoutChange {
	char **matched; int nmatched;   /* labels: the Transpose, the nodes it moved through,
	                                   the Transposes it met */
	char **removed; int nremoved;
	NodeId *created; int ncreated;  /* inputs before the nodes that read them */
	int before, after;              /* Transposes in the region, before and after */
} LayoutChange;
void layout_change_free(LayoutChange *c);
/* Record node n (labelled as in the input file) as matched or removed, or
 * as created (layout.c and nhwc.c build their changes with these). */
void layout_change_matched(LayoutChange *c, IrModel *m, NodeId n);
void layout_change_removed(LayoutChange *c, IrModel *m, NodeId n);
void layout_change_created(LayoutChange *c, NodeId n);

/* Push Transpose node t down through the ops that commute with it (unary
 * and elementwise ops, with constants transposed instead; Reduce*,
 * ArgMax/ArgMin, Softmax, Concat, Split, Slice, Pad, Squeeze, Unsqueeze and
 * Gather, with their axes remapped), cancelling or merging it with the
 * Transposes it meets.  Done only when the region ends with fewer Transposes
 * than it had: never more.  True if the graph changed (c filled in). */
bool layout_push_transpose(Layout *L, IrModel *m, NodeId t, LayoutChange *c);

/* --layout nhwc (nhwc.c; CATALOGUE.md J125): which channels-last form node n
 * of the main graph has ("Conv": com.microsoft NhwcConv; "GlobalAveragePool":
 * ReduceMean over H and W; "BatchNormalization": Mul and Add by per-channel
 * constants), or NULL for none: an op without one,
 * another rank than 4, no floats, unknown shapes, or a node in a body. */
const char *layout_nhwc_kind(IrModel *m, NodeId n);
/* Replace n by its channels-last form between Transposes (the output keeps
 * its name, readers and graph-output slots); the push-transpose pass then
 * cancels the Transposes that meet.  True if the graph changed (c filled in:
 * matched and removed name n, created lists the new nodes, inputs first). */
bool layout_nhwc_node(IrModel *m, NodeId n, LayoutChange *c);
/* Then the Transpose to channels-first that layout_nhwc_node made last (t; none
 * if the last is not a Transpose)
 * moves below the unary elementwise ops (Relu, Clip, ...) that alone read
 * it, so they run channels-last too; those ops go to moved[] (at most cap;
 * their types are left for the caller to infer again) and to c->matched.
 * Returns how many. */
int layout_nhwc_sink(IrModel *m, NodeId t, NodeId *moved, int cap, LayoutChange *c);

#endif
