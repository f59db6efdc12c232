/* conformance_main.c - build/graft-conformance: run ONNX's backend tests on
 * graft's evaluator and print passed/failed/unsupported per op.
 *   graft-conformance [--op OP]... [--filter TEXT] [-v] [DIR...]
 * DIR defaults to libonnx-testdata's node, simple, pytorch-converted and
 * pytorch-operator folders.  Exit 0 if no supported test failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/eval/conformance.h"

#define DATA "/usr/include/onnx/backend/test/data"

int main(int argc, char **argv)
{
	const char *only[256];
	const char *roots[64];
	int nroots = 0;
	ConfOptions o = {.only = only, .out = stdout, .exclusions = "tests/conformance_exclusions.txt"};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--op") == 0 && i + 1 < argc && o.nonly < 256)
			only[o.nonly++] = argv[++i];
		else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
			o.filter = argv[++i];
		else if (strcmp(argv[i], "--exclusions") == 0 && i + 1 < argc)
			o.exclusions = argv[++i];
		else if (strcmp(argv[i], "-v") == 0)
			o.verbose = true;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: graft-conformance [--op OP]... [--filter TEXT] [--exclusions FILE] [-v] [DIR...]\n");
			return 2;
		} else if (nroots < 64)
			roots[nroots++] = argv[i];
	}
	if (!nroots) {
		static const char *def[] = {DATA "/node", DATA "/simple", DATA "/pytorch-converted", DATA "/pytorch-operator"};
		for (int i = 0; i < 4; i++)
			roots[nroots++] = def[i];
	}
	ConfSummary s;
	bool ok = conf_run(roots, nroots, &o, &s);
	conf_print_summary(&s, stdout);
	conf_summary_free(&s);
	return ok ? 0 : 1;
}
