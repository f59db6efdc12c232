/* audit.h - the account of an optimization: op histograms, the summary on
 * stderr and the JSON report (see audit.c). */
#ifndef GRAFT_AUDIT_H
#define GRAFT_AUDIT_H

#include <stdio.h>

#include "rewrite.h"

#define GRAFT_VERSION "0.1.0"
#define AUDIT_SCHEMA "1"

typedef struct AuditHist {
	struct { char *op; unsigned count; } *ops;
	size_t n;
	unsigned total;
	uint64_t const_bytes;   /* initializers and Constant/tensor attributes of live graphs */
	void *memory;           /* json_t *: the memory plan's figures (runtime/plan), or NULL;
	                           the report's "memory_plan"; freed by audit_hist_free */
} AuditHist;

void audit_histogram(IrModel *m, AuditHist *h);
void audit_hist_free(AuditHist *h);
/* The aligned before/after op table with the change per op, then fire
 * counts per rule (built-in passes included). */
void audit_print_summary(FILE *out, const AuditHist *before, const AuditHist *after,
                         const RwRuleSet *const *sets, const RwResult *r);
bool audit_write_report(const char *path, const char *input, const char *output, const AuditHist *before,
                        const AuditHist *after, const RwRuleSet *const *sets, int nsets, const RwResult *r, Diag *d);

/* The same report as JSON text (malloc'd; NULL if out of memory), for callers
 * that keep it in memory; input_data: the input's bytes when it came from
 * memory (its digest; NULL: the file input's). */
char *audit_report_text(const char *input, const void *input_data, size_t input_size, const char *output,
                        const AuditHist *before, const AuditHist *after, const RwRuleSet *const *sets, int nsets,
                        const RwResult *r);

/* graft explain: print every firing that matched, created or removed `node`
 * (with the provenance of a created node).  Returns the number of firings,
 * or -1 if the report cannot be read. */
int audit_explain(const char *report, const char *node, FILE *out, Diag *d);
/* graft optimize --dot: the main graph for Graphviz, created nodes highlighted. */
bool audit_write_dot(IrModel *m, const RwResult *r, const char *path, Diag *d);

#endif
