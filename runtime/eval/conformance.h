/* conformance.h - the ONNX backend-test runner (see conformance.c), used by
 * build/graft-conformance and the `conformance` Check suite. */
#ifndef GRAFT_CONFORMANCE_H
#define GRAFT_CONFORMANCE_H

#include <stdio.h>

#include "eval.h"

typedef struct ConfOptions {
	const char *const *only;   /* run only tests of these ops (nonly 0: all) */
	int nonly;
	const char *filter;        /* run only tests whose name contains this */
	const char *exclusions;    /* file of "test_name  reason" lines, or NULL */
	bool verbose;              /* also list passes, unsupported and excluded tests */
	FILE *out;                 /* failures (and more, if verbose) go here; NULL: quiet */
} ConfOptions;

typedef struct ConfOp {
	char op[64];
	unsigned total, passed, failed, unsupported, excluded;
} ConfOp;

typedef struct ConfSummary {
	ConfOp *ops;
	size_t nops;
	unsigned total, passed, failed, unsupported, excluded;
} ConfSummary;

/* Run every test under the given roots (folders of tests, or of such
 * folders).  True if no supported test failed. */
bool conf_run(const char *const *roots, int nroots, const ConfOptions *o, ConfSummary *s);
void conf_print_summary(const ConfSummary *s, FILE *out);
void conf_summary_free(ConfSummary *s);

#endif
