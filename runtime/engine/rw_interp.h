/* rw_interp.h - rule files loaded at run time: parsed, checked and lowered
 * to matcher programs (dsl/mprog.h) that this interpreter runs, through the
 * same builder API (rewrite.h, rw_gen.h) graftc's generated C calls.
 *
 * rw_rules_load() gives an RwRuleSet the engine runs like a compiled one
 * (levels, --enable/--disable, the audit with each rule's file:line, --why,
 * --trace): `graft optimize --rules FILE`.  No C compiler is involved.
 *
 * Externs: a rules file may call the C helpers libgraft ships
 * (graft_reciprocal_exact, graft_all_greater, graft_all_nonzero, graft_rows_any,
 * graft_same_shape, graft_positions, graft_batch_rows_equal, graft_not_constant, graft_no_zeros, graft_cast_lossless) and any
 * registered with rw_register_extern() before loading; calling another one
 * is an error at the call's file:line:col. */
#ifndef GRAFT_RW_INTERP_H
#define GRAFT_RW_INTERP_H

#include "rw_gen.h"

/* A value of the interpreter: what a register holds, and what an extern
 * gets and returns (the field its declared type names). */
typedef union RwReg {
	NodeId n;
	ValueId v;                  /* value, tensor */
	RwgArg arg;
	RwgRest rest;
	int64_t i;                  /* int, bool, dtype */
	double f;                   /* float */
	RwgStr s;                   /* string */
	RwgInts ints;
	RwgFloats floats;
} RwReg;

/* An extern callable from rules files: args[k] holds parameter k as its
 * declared type says; the result goes to *ret (a value-returning extern
 * sets ret->v, 0 to decline).  sig spells the C side's types, return type
 * first: "b(t)" for bool f(tensor); letters b bool, i int, f float,
 * d dtype, s string, I ints, F floats, v value, t tensor. */
typedef void (*RwExternFn)(Rewriter *rw, const RwReg *args, RwReg *ret);
void rw_register_extern(const char *c_name, const char *sig, RwExternFn fn);

/* A C helper as the interpreter calls it: what rw_register_extern takes. */
typedef struct RwExternDef {
	const char *c_name;
	const char *sig;
	RwExternFn fn;
} RwExternDef;

/* A rules file a compiled set was generated from, verbatim. */
typedef struct RwSource {
	const char *path;           /* as graftc read it: rules/basic/squeeze.rules */
	const char *text;
} RwSource;

/* What graftc puts in a compiled set (RwRuleSet.sources) so that the
 * interpreter can run its rules (rw_rules_interpreted): the rules files,
 * up to one with path NULL, and the C helpers they call, up to one with
 * c_name NULL (graftc writes each an adapter). */
typedef struct RwSources {
	const RwSource *files;
	const RwExternDef *externs;
} RwSources;

/* Load rule files as one rule set named `name`, to run beside the sets
 * others[0..nothers) (whose rule names it must not reuse).  Diagnostics
 * (graftc's: file:line:col, source line, caret) go to d; NULL when there
 * is an error. */
RwRuleSet *rw_rules_load(const char *const *paths, int npaths, const char *name, const RwRuleSet *const *others,
                         int nothers, Diag *d);
/* The same for one file's text (path names it in messages). */
RwRuleSet *rw_rules_load_text(const char *path, const char *text, uint32_t len, const char *name, Diag *d);
void rw_rules_free(RwRuleSet *s);

/* Compiled set s as the interpreter runs it: loaded from the rules text
 * graftc put in it (RwRuleSet.sources) on the first call, then kept; its
 * rules are s's, in s's order (an interpreted set: itself).  NULL, with an
 * error on d, when s has no text or its text gives other rules.
 * graft optimize --why and --match-each run compiled sets this way. */
const RwRuleSet *rw_rules_interpreted(const RwRuleSet *s, Diag *d);

/* The matcher programs of a loaded set (rules[i] is the set's rule i, with
 * its checked AST: what graft verify generates instances from). */
struct MRuleSet;
const struct MRuleSet *rw_rules_programs(const RwRuleSet *s);

/* A rule may not take the name of a rule of the sets run beside it
 * (others): "rule 'r' has the name of a rule of graft-basic
 * (rules/basic/x.rules:3): rename it, or leave the library out with
 * --no-library", an error at the rule's name; false if any.  A rule marked
 * [override] must take one ("'r' overrides no library rule", at the word;
 * nothing to check without others: --no-library).  rw_rules_load checks
 * it.  verify: graft verify's check of its files against the library,
 * which it does not run: the same text as a warning, and none for a library
 * rule in its own file (graft verify rules/x/y.rules). */
bool rw_rules_name_clashes(const struct MRuleSet *p, const RwRuleSet *const *others, int nothers, bool verify,
                           Diag *d);

/* [override]: the rule of a set other than sets[s] that takes the place of
 * sets[s]'s rules named `name` (a loaded rule marked [override]), or NULL.
 * The engine keeps the rules it replaces off (--why: "overridden by
 * FILE:LINE"); it keeps the library rule's priority unless it gives its
 * own. */
const RwRule *rw_rules_overrider(const RwRuleSet *const *sets, int nsets, int s, const char *name);

/* The interpreter's entry points for a set it runs: match (a loaded set's
 * RwRuleSet.match: the decision tree of the node's op; its match_each tries
 * the rules in turn), and one rule (RwBackEnd.rule). */
bool rw_interp_match(Rewriter *rw, NodeId n);
bool rw_interp_rule(Rewriter *rw, int rule, NodeId n, bool why);

/* The interpreter as a back end (rewrite.h): {rw_rules_interpreted,
 * rw_interp_rule, a set's [override] rules}.  The sets it loads and those
 * graftc writes point to it (RwRuleSet.back_end; graftc's by a weak
 * reference, so a program that never loads rules files links no
 * interpreter and its compiled sets have no back end); the engine reaches
 * the interpreter only through them. */
extern const RwBackEnd rw_interpreter;

#endif
