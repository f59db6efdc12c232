/* bench_engine.c - `make bench`: the rewrite engine's cost per node on
 * synthetic graphs of 10k, 100k and 1M nodes, with a fixed share of nodes
 * that match (one Identity in every four nodes, removed by an
 * Identity-elimination rule written the way graftc generates matchers).
 * A true worklist costs time per node that stays flat as the graph grows;
 * the goal is within 1.5x across the sizes.  Engine time only: building the
 * graph is not timed.  Rounds and medians (see main) keep a loaded machine
 * from failing the goal: a miss is a real regression. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine/rewrite.h"

static const RwRule rules[] = {
	{.name = "identity", .level = RW_LEVEL_BASIC, .file = "tests/bench/bench_engine.c", .line = 1, .doc = "Identity(x) => x",
	 .priority = 0, .opset_min = 1, .opset_max = 0, .vendor = false, .root_domain = "", .root_op = "Identity"},
};

static bool match(Rewriter *rw, NodeId n)
{
	if (ir_node(rw_model(rw), n)->kind != OP_Identity || !rw_enabled(rw, 0))
		return false;
	rw_begin(rw, 0, n, &n, 1);
	rw_replace(rw, 0, rw_input(rw, n, 0));
	return rw_commit(rw);
}

static const RwRuleSet set = {"bench", GRAFT_BUILDER_API_VERSION, rules, 1, match, NULL, NULL, NULL, NULL};

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

/* Engine seconds for `count` graphs of `nodes` nodes, one after another
 * (building them is not timed); *rewrites gets one graph's count. */
static double measure(uint32_t nodes, int count, long *rewrites)
{
	double total = 0;
	for (int k = 0; k < count; k++) {
		IrModel *m = build(nodes);
		const RwRuleSet *sets[] = {&set};
		RwOptions o = {.no_fold = true}; /* the kernels are not what is measured */
		RwResult r;
		Diag d;
		diag_init(&d, stderr);
		if (!rw_run(m, sets, 1, &o, &r, &d))
			exit(1);
		total += r.seconds;
		*rewrites = r.rewrites;
		rw_result_free(&r);
		ir_model_free(m);
	}
	return total;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *x, int n)
{
	qsort(x, (size_t)n, sizeof *x, cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Robust to a loaded machine: the sizes are measured in rounds, each round
 * timing every size back to back (so all see the same load) over the same
 * million nodes (100 graphs of 10k, 10 of 100k, 1 of 1M), and the spread
 * across the sizes is taken per round; the verdict is the median of the
 * rounds' spreads, so one disturbed measurement cannot decide it. */
enum { ROUNDS = 5, NSIZES = 3 };

int main(void)
{
	static const uint32_t sizes[NSIZES] = {10000, 100000, 1000000};
	static const int counts[NSIZES] = {100, 10, 1};
	double per_node[NSIZES][ROUNDS], spread[ROUNDS];
	long rewrites[NSIZES] = {0};
	printf("engine: Identity elimination over chains of Relu/Identity/Neg/Abs (1 node in 4 matches),\n"
	       "%d rounds, each timing every size over 1M nodes in all; medians\n", ROUNDS);
	for (int r = 0; r < ROUNDS; r++) {
		double lo = 1e30, hi = 0;
		for (int i = 0; i < NSIZES; i++) {
			double sec = measure(sizes[i], counts[i], &rewrites[i]);
			per_node[i][r] = sec * 1e9 / ((double)sizes[i] * counts[i]);
			lo = per_node[i][r] < lo ? per_node[i][r] : lo;
			hi = per_node[i][r] > hi ? per_node[i][r] : hi;
		}
		spread[r] = hi / lo;
	}
	printf("%10s %10s %14s %14s\n", "nodes", "rewrites", "ns per node", "rewrites/s");
	for (int i = 0; i < NSIZES; i++) {
		double ns = median(per_node[i], ROUNDS);
		printf("%10u %10ld %14.1f %14.0f\n", sizes[i], rewrites[i], ns, rewrites[i] / (ns * 1e-9 * sizes[i]));
	}
	double verdict = median(spread, ROUNDS);
	printf("time per node varies %.2fx across the sizes (median of %d rounds: ", verdict, ROUNDS);
	for (int r = 0; r < ROUNDS; r++)
		printf("%s%.2f", r ? " " : "", spread[r]);
	printf("; goal <= 1.5x)\n");
	return verdict <= 1.5 ? 0 : 1;
}
