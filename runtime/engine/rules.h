/* rules.h - graft's own rule library, compiled into libgraft: graftc turns
 * the rule files of rules/basic and rules/extended into these two rule sets
 * at build time (build/gen/rules_<set>.c).  Pass them to rw_run, beside
 * any rule set of your own (examples/custom-rules). */
#ifndef GRAFT_RULES_H
#define GRAFT_RULES_H

#include "rewrite.h"

extern const RwRuleSet graft_rules_basic;      /* level basic: eliminations, Conv+BN, MatMul+Add */
extern const RwRuleSet graft_rules_extended;   /* level extended: fusions (GELU, LayerNorm, ...) */

#endif
