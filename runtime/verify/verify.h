/* verify.h - `graft verify`: every rule tried on generated instances of its
 * left side and checked on the reference evaluator.
 *
 * For each rule of a loaded rule set (rw_interp.h), instances are built from
 * the pattern (gen.c): an opset in the rule's range, element types the op
 * schemas allow, ranks 0-6 and shapes with 1s and broadcasting, attribute
 * values the schemas allow and at the boundaries of the guard and of the
 * op's shape arithmetic, and data random and at the edges (0, -0, 1, -1,
 * huge, tiny, denormal, inf, NaN) for every rule but what it declares it
 * differs on ([finite_data], [moderate_data]).  An instance where the rule
 * fires is run before and after the rewrite; outputs must agree in dtype,
 * shape and every bit (NaN == NaN), or within the rule's declared
 * [tolerance X] with inf, -inf and NaN where they were.
 *
 * Per rule one verdict: verified (instances, max error, and the element
 * types, rank classes and opset forms it fired in, each `instances` times
 * or with a coverage warning), WRONG (the first counterexample saved as
 * ONNX, before and after, with its inputs as the graph inputs' default
 * values, printed, and hints: only rounding, only one element type), or
 * not exercised (no instance fired: the condition that failed most often).
 * Deterministic per seed: each rule draws from its own stream (seed and
 * rule name). */
#ifndef GRAFT_VERIFY_H
#define GRAFT_VERIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "runtime/engine/rewrite.h"

typedef struct VerifyOptions {
	uint64_t seed;
	int instances;              /* firing instances wanted in every element type, rank class
	                               and opset form the rule fires in (0: 100) */
	int tries;                  /* most instances generated per rule (0: 10000) */
	const char *out_dir;        /* where counterexamples go (NULL: "graft-verify") */
	const char *const *only;    /* verify just these rules (names) */
	int nonly;
	FILE *out;                  /* the report (one line per rule, then the summary) */
	bool verbose;               /* also: per rule, tries, invalid instances, why-tally */
	bool no_save;               /* print counterexamples without writing files (fuzzing) */
	int keep;                   /* also save the first `keep` firing instances of each rule,
	                               before and after, to out_dir (<rule>.<k>.onnx and
	                               <rule>.<k>.rewritten.onnx: tests/verify_ort.sh runs them in
	                               ONNX Runtime) */
	size_t max_memory;          /* the evaluator's limit on tensor bytes held at once while an
	                               instance is drawn and run (0: VERIFY_MAX_MEMORY); an instance
	                               over it is dropped, not the machine's memory exhausted */
} VerifyOptions;

#define VERIFY_MAX_MEMORY ((size_t)1 << 30)

typedef struct VerifyCounts {
	int verified, wrong, unexercised;
	int short_coverage;         /* verified, but some cell fired in fewer than `instances` times */
} VerifyCounts;

/* Verify the rules of set (rules loaded at run time: set->interp).  False
 * only on an error that stops the run (a counterexample cannot be saved, a
 * --rule names no rule): the message is in d. */
bool verify_rules(const RwRuleSet *set, const VerifyOptions *o, VerifyCounts *c, Diag *d);

#endif
