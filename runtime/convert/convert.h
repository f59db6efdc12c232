/* convert.h - opset conversion of the default ONNX domain (graft convert,
 * graft optimize --target-opset).  See convert.c. */
#ifndef GRAFT_CONVERT_H
#define GRAFT_CONVERT_H

#include "ir/diag.h"
#include "ir/ir.h"

/* Lowest opset graft converts from or to. */
#define CONVERT_MIN_OPSET 1

typedef struct ConvertStats {
	int from, to;          /* the model's default-domain opset before and after */
	unsigned adapted;      /* nodes an adapter rewrote (attribute to input, renamed op, ...) */
	unsigned added;        /* nodes the adapters added (Softmax's Flatten/Reshape, ...) */
	int64_t ir_from, ir_to; /* IR version before and after (raised to what the opset needs) */
} ConvertStats;

/* Convert m's default-domain opset to `target`, one version at a time, every
 * graph (bodies included).  Upgrades move attributes to inputs, rename
 * replaced ops and spell out changed defaults and semantics; downgrades do the
 * reverse where it is exact (the moved inputs must be constants).  On error
 * (an op with no conversion, a non-constant input a downgrade needs) the
 * message names the node and the opset step, and m is left half converted:
 * the caller must not save it. */
bool convert_opset(IrModel *m, int target, ConvertStats *st, Diag *d);

/* The lowest IR version a model of this default-domain opset needs. */
int64_t convert_min_ir_version(int opset);

#endif
