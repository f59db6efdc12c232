/* namemap.h - names to pointers, for the rule language's lookups (a rule's
 * bindings and variables, rule names across files).  A rule may bind
 * thousands of names (generated files, a Sum of 5,000 operands): a linear
 * search per name made checking, analysis and lowering quadratic.  Open
 * addressing, never more than half full; grows as keys are added. */
#ifndef GRAFT_NAMEMAP_H
#define GRAFT_NAMEMAP_H

#include <stddef.h>

typedef struct NameMap {
	const char **keys;      /* not copied: the names outlive the map */
	void **vals;
	size_t mask, n;
} NameMap;

/* A map for about `most` keys (a hint: it grows past it). */
NameMap *namemap_new(size_t most);
void namemap_free(NameMap *m);
/* The value of name, or NULL. */
void *namemap_get(const NameMap *m, const char *name);
/* Set name's value, replacing any (NULL: as if never set; a scope's end). */
void namemap_put(NameMap *m, const char *name, void *val);

#endif
