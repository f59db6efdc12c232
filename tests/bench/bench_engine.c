/* bench_engine.c - `make bench`: the rewrite engine's cost per node on
 * synthetic graphs of 10k, 100k and 1M nodes, with a fixed share of nodes
 * that match (one Identity in every four nodes, removed by an
 * Identity-elimination rule written the way graftc generates matchers).
 * A true worklist costs time per node that stays flat as the graph grows;
 * the goal is within 1.5x across the sizes.  Engine time only: building the
 * graph is not timed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite.h"

static const RwRule rules[] = {
	{"identity", RW_LEVEL_BASIC, "tests/bench/bench_engine.c", 1, "Identity(x) => x", 0, 1, 0, false, "", "Identity"},
};

static bool match(Rewriter *rw, NodeId n)
{
	if (ir_node(rw_model(rw), n)->kind != OP_Identity || !rw_enabled(rw, 0))
		return false;
	rw_begin(rw, 0, n, &n, 1);
	rw_replace(rw, 0, rw_input(rw, n, 0));
	return rw_commit(rw);
}

static const RwRuleSet set = {"bench", GRAFT_BUILDER_API_VERSION, rules, 1, match, NULL, NULL, NULL};

/* x -> (Relu, Identity, Neg, Abs) repeated, as a chain with a side branch
 * every block so values have two consumers now and then. */
static IrModel *build(uint32_t nodes)
{
	IrModel *m = ir_model_new();
	ir_set_opset(m, "", 13);
	GraphId g = ir_graph_new(m, 0, "bench");
	Dim d = {16, NULL};
	Shape s = {1, &d};
	ValueId v = ir_add_input(m, g, "x", DT_FLOAT, &s);
	static const char *ops[] = {"Relu", "Identity", "Neg", "Abs"};
	for (uint32_t i = 0; i < nodes; i++) {
		NodeId n = ir_node_new(m, g, 0, "", ops[i % 4], "", &v, 1, NULL, 1);
		v = ir_node(m, n)->outputs[0];
	}
	ir_add_output(m, g, v);
	return m;
}

int main(void)
{
	static const uint32_t sizes[] = {10000, 100000, 1000000};
	double per_node[3];
	printf("engine: Identity elimination over chains of Relu/Identity/Neg/Abs (1 node in 4 matches)\n");
	printf("%10s %10s %12s %14s %14s\n", "nodes", "rewrites", "engine ms", "ns per node", "rewrites/s");
	for (int i = 0; i < 3; i++) {
		double best = 1e9;
		long rewrites = 0;
		for (int rep = 0; rep < 3; rep++) {
			IrModel *m = build(sizes[i]);
			const RwRuleSet *sets[] = {&set};
			RwOptions o = {.no_fold = true}; /* the kernels are not what is measured */
			RwResult r;
			Diag d;
			diag_init(&d, stderr);
			if (!rw_run(m, sets, 1, &o, &r, &d))
				return 1;
			if (r.seconds < best)
				best = r.seconds;
			rewrites = r.rewrites;
			rw_result_free(&r);
			ir_model_free(m);
		}
		per_node[i] = best * 1e9 / sizes[i];
		printf("%10u %10ld %12.1f %14.1f %14.0f\n", sizes[i], rewrites, best * 1e3, per_node[i], rewrites / best);
	}
	double lo = per_node[0], hi = per_node[0];
	for (int i = 1; i < 3; i++) {
		lo = per_node[i] < lo ? per_node[i] : lo;
		hi = per_node[i] > hi ? per_node[i] : hi;
	}
	printf("time per node varies %.2fx across the sizes (goal <= 1.5x)\n", hi / lo);
	return hi / lo <= 1.5 ? 0 : 1;
}
