/* plan.h - static memory planning of a model's main graph (`graft plan`,
 * `graft run --plan`, the memory figures of `graft optimize --report`).
 *
 * Given every value's shape (after shape inference, with the graph inputs'
 * sizes fixed), the planner decides before running where each intermediate
 * tensor lives in one arena:
 *   - lifetimes: a tensor is born at the step of the node that makes it and
 *     dies after the last step that reads it (a read from inside an If/Loop/
 *     Scan body counts at the step of the node owning the body; a graph
 *     output lives to the end, step nsteps);
 *   - aliasing: Reshape/Squeeze/Unsqueeze/Flatten/Identity/Dropout outputs
 *     and Casts to the input's own type are views of their input's bytes; the output of an elementwise op whose kernel reads
 *     element i before it writes element i is written over an input of the
 *     same size that dies at that op (in place).  Tensors that alias share
 *     one buffer, whose lifetime is the union of theirs;
 *   - offsets: each buffer gets an offset so that buffers whose lifetimes
 *     overlap never overlap in the arena: buffers are taken in a greedy order
 *     (by size, by size x lifetime, by birth) and each goes into the smallest
 *     gap between the placed buffers it conflicts with that fits it (best
 *     fit), else on top.  Then rounds move the buffers that ended above the
 *     lower bound to the front of the order (the "squeaky wheel") until the
 *     bound is met or PLAN_ROUNDS pass.  The smallest arena is kept.
 * Sizes are numel * element size rounded up to PLAN_ALIGN bytes.  Graph
 * inputs, initializers and Constant outputs are not planned (they live
 * elsewhere), nor views of them, nor
 * values inside bodies, sequences, strings, empty tensors and tensors whose
 * size is not known before running (each is listed with the reason).
 *
 * The figures: peak_bytes (the arena), lower_bound_bytes (the largest sum of
 * buffer sizes alive at one step of this schedule: no placement of these
 * buffers can use less), naive_bytes (one aligned buffer per tensor, no
 * reuse and no aliasing).  docs/memory-plan.md has the algorithm and a
 * worked example. */
#ifndef GRAFT_PLAN_H
#define GRAFT_PLAN_H

#include <stdio.h>

#include "runtime/eval/eval.h"

#define PLAN_ALIGN 64

typedef enum PlanHow {
	PLAN_OWN = EV_PLACE_OWN,          /* a buffer of its own */
	PLAN_INPLACE = EV_PLACE_INPLACE,  /* written over `over`, which dies at this node */
	PLAN_VIEW = EV_PLACE_VIEW,        /* the bytes of `over`, under another shape */
} PlanHow;

typedef struct PlanTensor {
	ValueId value;
	size_t nbytes;      /* numel * element size (sub-byte types packed) */
	size_t size;        /* nbytes rounded up to PLAN_ALIGN */
	uint32_t def, last; /* made at step def, last read at step last (nsteps: a graph output) */
	PlanHow how;
	ValueId over;       /* PLAN_INPLACE, PLAN_VIEW: the input it reuses */
	uint32_t buffer;    /* index in Plan.bufs */
} PlanTensor;

typedef struct PlanBuffer {
	size_t size;        /* aligned */
	size_t nbytes;      /* its tensors' bytes (they are equal) */
	uint32_t first, last;
	size_t offset;
	uint32_t root;      /* the tensor that opened it (index in Plan.tensors) */
	uint32_t ntensors;  /* tensors sharing it */
} PlanBuffer;

typedef struct PlanSkip {
	ValueId value;
	const char *why;    /* static text */
} PlanSkip;

/* One strategy tried for the offsets and the arena it gave. */
typedef struct PlanStrategy {
	const char *name;
	size_t peak;
} PlanStrategy;

#define PLAN_NSTRATEGIES 4   /* greedy orders: size, breadth (size x lifetime), birth, long-lived first */
#define PLAN_ROUNDS 16       /* squeaky-wheel rounds after them, at most */
#define PLAN_PATIENCE 2      /* ... stopping after this many rounds in a row that do not help */

typedef struct Plan {
	IrModel *m;
	NodeId *order;          /* the schedule: main-graph nodes in run order */
	uint32_t nsteps;
	PlanTensor *tensors;
	uint32_t ntensors;
	PlanBuffer *bufs;
	uint32_t nbufs;
	PlanSkip *skipped;
	uint32_t nskipped;
	size_t peak_bytes, lower_bound_bytes, naive_bytes;
	uint32_t ninplace, nviews;
	uint32_t bound_step;    /* the first step whose live set reaches lower_bound_bytes */
	const char *strategy;   /* the strategy kept */
	PlanStrategy tried[PLAN_NSTRATEGIES];
	uint32_t rounds, improved_rounds;   /* squeaky-wheel rounds run, and those that lowered the peak */
	double seconds;         /* planning time: lifetimes, aliasing, offsets */
	/* by ValueId, for the evaluator (EvPlacement) */
	int64_t *offset;
	size_t *value_nbytes;
	uint8_t *how;
	size_t *buf_offset, *buf_nbytes;
	uint32_t *buf_first, *buf_last;
} Plan;

typedef struct PlanOptions {
	bool no_alias;          /* no in-place and no views: every tensor its own buffer */
} PlanOptions;

/* Fix the main graph's input shapes: names[i] = dims[i][0..rank[i]) (from
 * --input-shape), then run shape inference over the model.  Inputs not named
 * keep their declared shape.  False (one line naming the input) if a name is
 * no graph input, the rank differs, a given dim contradicts a fixed one, or
 * inference fails. */
bool plan_bind_inputs(IrModel *m, const char *const *names, const int64_t *const *dims, const int *ranks, int n,
                      Diag *d);
/* The same for graft run --plan: every fed input's shape from its value. */
bool plan_bind_values(IrModel *m, EvValue *const *inputs, Diag *d);
/* Symbolic or unknown dims of the main graph's fed inputs, as
 * "x[N,3,?,224]" items separated by "; " into buf; false if there are none. */
bool plan_unknown_inputs(IrModel *m, char *buf, size_t size);

/* Plan the main graph of m, whose shapes are inferred.  False (with a
 * diagnostic) only if the graph has a cycle; values that cannot be planned
 * are listed in p->skipped. */
bool plan_model(IrModel *m, const PlanOptions *o, Plan *p, Diag *d);
void plan_free(Plan *p);

/* The placement the evaluator runs with (points into p). */
void plan_placement(const Plan *p, EvPlacement *pl);

/* `graft plan`: the summary, then (verbose) one line per tensor. */
void plan_print(const Plan *p, FILE *out, bool verbose);
/* The plan as JSON text (malloc'd): peak_bytes, lower_bound_bytes,
 * naive_bytes, the strategies, the tensors setting the peak and (full) every
 * tensor and the schedule. */
char *plan_json(const Plan *p, bool full);
/* The figures alone, as a JSON object (a json_t *, for the audit report). */
void *plan_json_summary(const Plan *p);

#endif
