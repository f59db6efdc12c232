/* verify_internal.h - what verify.c and gen.c share: the random stream and
 * the instance generator. */
#ifndef GRAFT_VERIFY_INTERNAL_H
#define GRAFT_VERIFY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/ast.h"
#include "dsl/mprog.h"
#include "ir/ir.h"

/* splitmix64: small, fast, and the same numbers on every machine. */
typedef struct Rng {
	uint64_t s;
} Rng;

static inline uint64_t rng_next(Rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}
/* Uniform in [0, n) (n > 0). */
static inline int rng_below(Rng *r, int n)
{
	return (int)(rng_next(r) % (uint64_t)n);
}
/* Uniform in [lo, hi]. */
static inline int rng_range(Rng *r, int lo, int hi)
{
	return lo + rng_below(r, hi - lo + 1);
}
/* True with probability p. */
static inline bool rng_chance(Rng *r, double p)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53 < p;
}
static inline double rng_unit(Rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* One generated instance: a model whose main graph is the rule's left side
 * (node "root" computes the graph output "y"), its non-constant variables
 * graph inputs with their data as default values (overridable
 * initializers), so the model alone reproduces a run. */
typedef struct GenInstance {
	IrModel *m;
	int opset;
	NodeId root;
	int dtype, rank;            /* of its first graph input (the root's first input if none) */
	const char *first_var;      /* the pattern variable that input is (NULL: none) */
	char why[256];              /* why no instance could be built */
} GenInstance;

/* What verify.c asks of an instance: where coverage is short. */
typedef struct GenTarget {
	int opset_lo, opset_hi;     /* the opsets to draw from */
	int dtype;                  /* the preferred element type (0: drawn) */
	int rank_lo, rank_hi;       /* the base shape's rank (-1: drawn) */
	int64_t sweep;              /* >= 0: the instance's place in the sweep of edge
	                               classes and windows (gen.c, sweep_digit); -1: drawn */
} GenTarget;

/* Build one instance of the left side of rule mr of set, as target t asks.
 * The data have every edge value but those the rule declares it differs on
 * ([finite_data]: inf, -inf, NaN; [moderate_data]: the largest, tiny and
 * denormal values).
 * False (and why) when the draw gives no valid graph: an op the opset lacks,
 * shapes that do not fit, an evaluator error. */
bool gen_instance(const MRuleSet *set, const MRule *mr, const GenTarget *t, Rng *rng, GenInstance *out);

/* The guard of program p as lowered (its MI_GUARD step's expression), or
 * NULL; the rule variable a register of it (or a node binding's output)
 * is, or NULL. */
const MExpr *gen_guard(const MProg *p);
const char *gen_var_name(const MProg *p, const MExpr *e);

/* The element types instances can draw for the first input of mr's root at
 * `opset` (a mask, bit = DType). */
uint32_t gen_root_types(const MRule *mr, int opset);

/* The opset forms of mr's pattern in lo..hi: runs of opsets where every op
 * of the pattern has the same entries of the opset-form table (Squeeze's
 * axes an attribute up to 12, an input from 13), as ranges into flo, fhi
 * (at most max); returns how many. */
int gen_opset_forms(const MRule *mr, int lo, int hi, int *flo, int *fhi, int max);

#endif
