/* fuzz_dsl.c - libFuzzer target for the rule language: any bytes go
 * through dsl_parse, dsl_check and dsl_dump (to /dev/null) and, when the
 * checker finds no error, through graftc's analysis (dsl_analyse) and C
 * generator (codegen_c), with no crash, hang or leak; every error must
 * come with a message.
 * `make fuzz-dsl` runs it (FUZZ_DSL_SECONDS=60).  Seeds are the rule
 * library and broken variants in tests/fuzz/dsl-seeds/; crash inputs found
 * are added there as regression seeds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dsl/analyse.h"
#include "dsl/ast.h"
#include "compiler/codegen.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > UINT32_MAX)
		return 0;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	Diag d;
	diag_init(&d, devnull);   /* print too: the caret code runs */
	RuleFile *f = dsl_parse("fuzz.rules", (const char *)data, (uint32_t)size, &d);
	if (!f)
		abort();
	int before = d.nerrors;
	dsl_check(&f, 1, &d);
	if (d.nerrors < before || (d.nerrors && !d.first[0]))
		abort();
	dsl_dump(f, devnull);
	if (!d.nerrors) {
		DslAnalysis a;
		dsl_analyse(&f, 1, &d, &a);
		free(dsl_analysis_summary(&a));
		dsl_analysis_free(&a);
		if (!d.nerrors) {
			int errors = d.nerrors;
			char *c = codegen_c(&f, 1, NULL, "fuzz", NULL, NULL, &d);
			if (!c && d.nerrors == errors)
				abort();   /* no code and no message */
			free(c);
		}
	}
	dsl_free(f);
	return 0;
}
