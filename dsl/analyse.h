/* analyse.h - compile-time analysis of checked rules (dsl/analyse.c).
 *
 * After dsl_check has passed, graftc asks dsl_analyse about the rules of one
 * run, grouped by root op and taken in the engine's order (higher priority
 * first, then source order across the files):
 *   - a warning for a rule shadowed by an unguarded rule tried before it
 *     whose left side is as general (the later rule never fires);
 *   - a warning for two unguarded rules of equal priority whose left sides
 *     overlap and whose right sides differ there;
 *   - an error for a rule whose right side matches its own left side again.
 * What cannot be decided (guards, helpers, constructs the analysis does not
 * handle) is listed in DslAnalysis, never silently passed.  See the section
 * "Compile-time analysis" of docs/rule-language.md. */
#ifndef GRAFT_DSL_ANALYSE_H
#define GRAFT_DSL_ANALYSE_H

#include <stdbool.h>
#include <stdio.h>

#include "ast.h"

/* A rule the analysis could not (fully) decide. */
typedef struct DslUnanalysed {
	const RuleFile *file;
	const Rule *rule;
	const char *kind;           /* for the summary: "guard", "helper", "unsupported construct",
	                               "result that may not build" */
	char reason[200];           /* for --analysis: "its guard calls the helper 'f'" */
} DslUnanalysed;

typedef struct DslAnalysis {
	DslUnanalysed *skipped;     /* in source order */
	int nskipped;
} DslAnalysis;

/* Analyse the checked rules of one graftc run; warnings and errors go to d.
 * out (may be NULL) gets the rules not analysed; free it with
 * dsl_analysis_free.  True if there is no error. */
bool dsl_analyse(RuleFile **files, int nfiles, Diag *d, DslAnalysis *out);
void dsl_analysis_free(DslAnalysis *a);

/* "not analysed (guard or helper): a, b" (malloc'ed), or NULL when every
 * rule was analysed. */
char *dsl_analysis_summary(const DslAnalysis *a);

/* One line per rule, "file:line: name: analysed" or
 * "file:line: name: not analysed: reason" (graftc --analysis). */
void dsl_analysis_print(const DslAnalysis *a, RuleFile **files, int nfiles, FILE *out);

#endif
