/* analyse.h - compile-time analysis of checked rules (dsl/analyse.c).
 *
 * After dsl_check has passed, graftc asks dsl_analyse_rules about the rules
 * of one run, reading what each left side matches from its lowered program
 * (dsl_lower), grouped by root op and taken in the engine's order (higher
 * priority first, then source order across the files):
 *   - a warning for a rule shadowed by a rule tried before it whose left
 *     side is as general and whose guard (the conjunction of its && terms)
 *     follows from the later rule's guard (the later rule never fires);
 *   - a warning for two rules of equal priority whose left sides overlap,
 *     whose guards are not provably exclusive and whose right sides differ;
 *   - an error for a rule whose right side matches its own left side again
 *     with its guard possibly holding there.
 * Guards and helpers are analysed (a helper call is compared as written).
 * What cannot be decided (a construct the analysis does not model, a result
 * that may not build) is listed in DslAnalysis, never silently passed.  See
 * the section "Compile-time analysis" of docs/rule-language.md. */
#ifndef GRAFT_DSL_ANALYSE_H
#define GRAFT_DSL_ANALYSE_H

#include <stdbool.h>
#include <stdio.h>

#include "ast.h"

/* A rule the analysis could not (fully) decide. */
typedef struct DslUnanalysed {
	const RuleFile *file;
	const Rule *rule;
	const char *kind;           /* for the summary: "unsupported construct" or
	                               "result that may not build" */
	char reason[200];           /* for --analysis: "it uses an input bound through its older
	                               attribute ('axes'), which the analysis does not model" */
} DslUnanalysed;

typedef struct DslAnalysis {
	DslUnanalysed *skipped;     /* in source order */
	int nskipped;
} DslAnalysis;

/* Analyse the checked rules of one graftc run; warnings and errors go to d.
 * out (may be NULL) gets the rules not analysed; free it with
 * dsl_analysis_free.  True if there is no error. */
bool dsl_analyse(RuleFile **files, int nfiles, Diag *d, DslAnalysis *out);
/* The same on the files' programs (dsl_lower or dsl_lower_each of them),
 * when the caller lowered them anyway: the analysis reads what the pattern
 * matches from there (rules the lowering refused are not analysed). */
struct MRuleSet;
bool dsl_analyse_rules(const struct MRuleSet *rs, RuleFile **files, int nfiles, Diag *d, DslAnalysis *out);
void dsl_analysis_free(DslAnalysis *a);

/* "not analysed (unsupported construct): a, b" (malloc'ed), or NULL when every
 * rule was analysed. */
char *dsl_analysis_summary(const DslAnalysis *a);

/* One line per rule, "file:line: name: analysed" or
 * "file:line: name: not analysed: reason" (graftc --analysis). */
void dsl_analysis_print(const DslAnalysis *a, RuleFile **files, int nfiles, FILE *out);

#endif
