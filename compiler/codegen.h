/* codegen.h - checked rules -> one C file of matchers (graftc -o), printed
 * from the matcher programs dsl_lower() makes of them (dsl/mprog.h).
 *
 * The generated file holds the rule table, one straight-line leaf function
 * per rule (its `// match:` and `// result:` source above its code), one
 * decision tree per root op (dsl_trees(), dsl/mtree.h) over the leaves,
 * which do what the tree's shared tests leave, the set's dispatch on the
 * node's op, and the rules files verbatim for --why and --match-each (or
 * those in a second file); it exports `const RwRuleSet graft_rules_<set>` and
 * calls only the builder API (runtime/engine/rewrite.h) and its helpers
 * (runtime/engine/rw_gen.h).  A construct the generator cannot compile yet is
 * reported as an error at its position,
 * never compiled wrongly. */
#ifndef GRAFT_CODEGEN_H
#define GRAFT_CODEGEN_H

#include <stdbool.h>

#include "dsl/ast.h"
#include "dsl/mprog.h"

/* The C text for the checked files (malloc'd), or NULL after errors in d.
 * set: the rule set's name, a C identifier ("basic").  line_path: the
 * output's path, to emit #line directives that point each rule's
 * functions at its rule file (graftc --line), or NULL.  sources: NULL to
 * keep the rules text (for --why and --match-each) in the same file; else
 * it goes to *sources (malloc'd), a second C file exporting
 * `const RwSources graft_rules_<set>_sources` (graftc --sources).  rs: the
 * files' programs (dsl_lower, which graftc's analysis read too; codegen_c
 * frees them), or NULL to lower them here. */
char *codegen_c(RuleFile **files, int nfiles, MRuleSet *rs, const char *set, const char *line_path, char **sources,
                Diag *d);

/* Write text to path unless the file already holds exactly it (so make
 * sees no change); false after a message on stderr. */
bool codegen_write_if_changed(const char *path, const char *text);

#endif
