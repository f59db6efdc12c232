/* run.h - inputs and output comparison for running whole models
 * (`graft run`, `graft compare`, the corpus tests).  See run.c. */
#ifndef GRAFT_RUN_H
#define GRAFT_RUN_H

#include "eval.h"

typedef struct RunOptions {
	const char *inputs_dir;    /* input_K.pb files; NULL: generate */
	uint32_t seed;             /* generated inputs, as ort-run.mjs --seed */
	int64_t int_lo, int_hi;    /* integer inputs uniform in [lo, hi) (ort-run.mjs default 0:100) */
	const char **dim_names;    /* --dim NAME=VALUE for symbolic dims (others: 1) */
	const int64_t *dim_values;
	int ndims;
} RunOptions;

/* Graph inputs that callers feed (inputs that are not initializers), in order. */
uint32_t run_fed_inputs(IrModel *m, ValueId *ids);
/* The symbolic dim names (dim_param) of m's fed inputs, each once, in the
 * order they first appear; at most max.  Returns how many. */
int run_symbolic_dims(IrModel *m, const char **names, int max);
/* The size graft compare gives the index-th symbolic dim name in the run of
 * generated inputs with this seed: 2..5, so a model right only when a dim is
 * 1 shows (ort-run.mjs and graft run use 1). */
int64_t run_drawn_dim(uint32_t seed, int index);
/* One generated input, identical to ort-run.mjs's for the same seed and index. */
EvValue *run_generate_input(IrModel *m, ValueId v, uint32_t index, const RunOptions *o, Diag *d);
/* inputs[i] per main-graph input (NULL for initializers, which use their defaults). */
bool run_prepare_inputs(IrModel *m, const RunOptions *o, EvValue **inputs, Diag *d);

typedef struct RunDiff {
	bool agree;          /* same type and shape, and every element within atol + rtol*|a| */
	bool same_type, same_shape;
	double max_abs, max_rel;
	int64_t mismatches;
} RunDiff;
/* A tensor's dims as "[2,3]" ("[]" for a scalar) into buf. */
void run_format_dims(const EvValue *t, char *buf, size_t size);

void run_compare(const EvValue *a, const EvValue *b, double rtol, double atol, RunDiff *r);
/* The same, agreeing only when every element has the same bits (-0 differs
 * from 0; NaNs agree with each other), as graft verify checks exact rules. */
void run_compare_exact(const EvValue *a, const EvValue *b, RunDiff *r);

/* inputs[i] per main-graph input, as run_prepare_inputs: given[f] for the
 * f-th fed input (run_fed_inputs), checked against its declared dtype and
 * dims (the message names m->path), or generated when NULL. */
bool run_prepare_given(IrModel *m, const RunOptions *o, EvValue *const *given, EvValue **inputs, Diag *d);

#endif
