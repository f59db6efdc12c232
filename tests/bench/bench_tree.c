/* bench_tree.c - `make bench`: graftc's decision tree against trying each
 * rule in turn, in the same run, with 100 generated rules whose left sides
 * are distinct (tests/bench/gen_rules100.sh: Relu(A(B(x))) => x for 10 A
 * ops and 10 B ops, compiled by graftc into graft_rules_bench100).
 *
 * The graph is a chain of blocks B -> A -> Relu.  One block in four matches
 * a rule; one in four has an A of the rules but a B of none (the match
 * fails one level down); the rest have an A of none.  Every Relu is a root
 * the matcher must try: the tree switches on A's op, then on B's; in turn,
 * each of the 100 rules looks at the producer itself.  The third matcher
 * is the same rules file loaded at run time and interpreted (rw_interp.h,
 * graft optimize --rules), which tries the rules in turn.  Engine time only
 * (rw_run's own clock), best of several interleaved runs.
 *
 * usage: bench-tree RULES100.rules (the file graftc compiled) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine/rewrite.h"
#include "runtime/engine/rw_interp.h"

extern const RwRuleSet graft_rules_bench100;

static const char *const A[] = {"Abs", "Neg", "Exp", "Log", "Sqrt", "Sigmoid", "Tanh", "Floor", "Ceil", "Reciprocal"};
static const char *const B[] = {"Sin", "Cos", "Erf", "Sign", "Softsign", "Softplus", "Round", "Asin", "Acos", "Atan"};

static IrModel *build(uint32_t blocks)
{
	IrModel *m = ir_model_new();
	ir_set_opset(m, "", 13);
	GraphId g = ir_graph_new(m, 0, "bench");
	Dim d = {16, NULL};
	Shape s = {1, &d};
	ValueId v = ir_add_input(m, g, "x", DT_FLOAT, &s);
	for (uint32_t i = 0; i < blocks; i++) {
		const char *b = i % 4 == 1 ? "Elu" : B[(i / 4) % 10];     /* Elu, HardSigmoid: no rule's */
		const char *a = i % 4 >= 2 ? "HardSigmoid" : A[(i / 40) % 10];
		const char *ops[] = {b, a, "Relu"};
		for (int k = 0; k < 3; k++) {
			NodeId n = ir_node_new(m, g, 0, "", ops[k], "", &v, 1, NULL, 1);
			v = ir_node(m, n)->outputs[0];
		}
	}
	ir_add_output(m, g, v);
	return m;
}

static const RwRuleSet *interpreted;

/* One run (matcher 0: the tree, 1: compiled rules in turn, 2: interpreted):
 * engine seconds, rewrites and nodes after. */
static double run(uint32_t blocks, int matcher, long *rewrites, uint32_t *after)
{
	IrModel *m = build(blocks);
	const RwRuleSet *sets[] = {matcher == 2 ? interpreted : &graft_rules_bench100};
	RwOptions o = {.no_fold = true, .match_each = matcher == 1};
	RwResult r;
	Diag d;
	diag_init(&d, stderr);
	if (!rw_run(m, sets, 1, &o, &r, &d)) {
		fprintf(stderr, "bench-tree: the run failed\n");
		exit(1);
	}
	double t = r.seconds;
	*rewrites = r.rewrites;
	*after = r.nodes_after;
	rw_result_free(&r);
	ir_model_free(m);
	return t;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench-tree RULES100.rules\n");
		return 2;
	}
	Diag d;
	diag_init(&d, stderr);
	const char *files[] = {argv[1]};
	interpreted = rw_rules_load(files, 1, "bench100-interpreted", NULL, 0, &d);
	if (!interpreted)
		return 1;
	const uint32_t blocks = 100000; /* 300k nodes, 100k Relu roots */
	double best[3] = {1e9, 1e9, 1e9};
	long rewrites[3];
	uint32_t after[3];
	for (int rep = 0; rep < 5; rep++)
		for (int k = 0; k < 3; k++) {
			double t = run(blocks, k, &rewrites[k], &after[k]);
			if (t < best[k])
				best[k] = t;
		}
	for (int k = 1; k < 3; k++)
		if (rewrites[0] != rewrites[k] || after[0] != after[k]) {
			fprintf(stderr, "bench-tree: matchers disagree (%ld/%ld rewrites, %u/%u nodes)\n", rewrites[0],
			        rewrites[k], after[0], after[k]);
			return 1;
		}
	printf("rules: 100 generated rules rooted at Relu, distinct left sides; %u nodes, %u Relu roots, %ld rewrites\n",
	       blocks * 3, blocks, rewrites[0]);
	printf("%-28s %12s %14s\n", "matcher", "engine ms", "ns per node");
	const char *names[] = {"decision tree", "each rule in turn", "interpreted (--rules)"};
	for (int i = 0; i < 3; i++)
		printf("%-28s %12.1f %14.1f\n", names[i], best[i] * 1e3, best[i] * 1e9 / (blocks * 3));
	printf("the tree takes %.2fx the time of trying each rule in turn\n", best[0] / best[1]);
	printf("the interpreter takes %.2fx the time of the tree, %.2fx that of the compiled rules in turn (goal: <= 3x)\n",
	       best[2] / best[0], best[2] / best[1]);
	rw_rules_free((RwRuleSet *)interpreted);
	return 0;
}
