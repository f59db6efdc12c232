/* optimize.c - an engineer's own ONNX optimizer built on libgraft.
 *
 *     custom-opt IN.onnx OUT.onnx
 *
 * Loads IN, rewrites it to a fixpoint with two rule sets side by side: this
 * example's own (custom.rules, compiled by graftc into graft_rules_custom)
 * and graft's library set graft_rules_basic, saves OUT, then prints every
 * rule firing and how often each custom rule fired.  Exit status: 0 on
 * success, 1 if the model cannot be loaded, rewritten or saved (or the
 * rewriting did not reach a fixpoint), 2 on a usage error. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/engine/rewrite.h"
#include "runtime/engine/rules.h"   /* the library's own rule sets, compiled into libgraft */

/* The rule set graftc generated from custom.rules (graftc -n custom). */
extern const RwRuleSet graft_rules_custom;

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s IN.onnx OUT.onnx\n", argv[0]);
		return 2;
	}
	const RwRuleSet *const sets[] = {&graft_rules_custom, &graft_rules_basic};
	const char *set_label[] = {"custom", "graft"};
	int nsets = 2;

	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_load_file(argv[1], NULL, &d);
	if (!m)
		return 1;

	RwOptions opt = {0};            /* every level, folding, CSE and DCE on */
	RwResult r;
	bool ok = rw_run(m, sets, nsets, &opt, &r, &d);
	/* Stopped by fuel or a cycle, the model reached is still valid: save it. */
	if (r.stop != RW_ERROR && !ir_save_file(m, argv[2], NULL, &d))
		ok = false;

	/* Each firing names its rule set (index into sets) and rule; rule -1 is
	 * a built-in pass (fold, cse, dce). */
	int *counts = calloc((size_t)graft_rules_custom.nrules, sizeof *counts);
	if (!counts) {
		perror("calloc");
		return 1;
	}
	for (size_t i = 0; i < r.nfirings; i++) {
		const RwFiring *f = &r.firings[i];
		if (f->rule < 0)
			continue;
		printf("%-6s %-20s at %s\n", set_label[f->set], rw_firing_name(sets, f),
		       f->nmatched > 0 ? f->matched[0] : "?");
		if (f->set == 0)
			counts[f->rule]++;
	}
	for (int i = 0; i < graft_rules_custom.nrules; i++)
		printf("custom %s fired %d time%s\n", graft_rules_custom.rules[i].name, counts[i],
		       counts[i] == 1 ? "" : "s");
	printf("%ld rewrites; %u -> %u nodes%s\n", r.rewrites, r.nodes_before, r.nodes_after,
	       r.stop == RW_FIXPOINT ? "" : " (stopped early)");

	free(counts);
	rw_result_free(&r);
	ir_model_free(m);
	return ok ? 0 : 1;
}
