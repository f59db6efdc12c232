/* nhwc_unvendor.c - for tests/nhwc_gate.sh: each com.microsoft NhwcConv of a
 * model made by `graft optimize --layout nhwc` written back as the standard
 * Transpose(Conv(Transpose(x), Transpose(W), B)), so that ONNX Runtime's CPU
 * provider, which has no NhwcConv kernel, can check everything else the
 * conversion wrote (the Transposes left, the constants transposed, the
 * channels-last Mul/Add/ReduceMean) against the original model.  NhwcConv
 * itself is checked on graft's evaluator (tests/check_rules.c).
 *
 *   build/nhwc-unvendor IN.onnx OUT.onnx    (exit 0; 1 on a load/save error) */
#include "ir/ir.h"

#include <stdio.h>
#include <string.h>

static NodeId transpose(IrModel *m, NodeId before, ValueId x, const int64_t *perm, const char *out)
{
	NodeId t = ir_node_new(m, IR_MAIN_GRAPH, before, "", "Transpose", "", &x, 1, &out, 1);
	ir_attr_set_ints(m, t, "perm", perm, 4);
	return t;
}

int main(int argc, char **argv)
{
	static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
	if (argc != 3) {
		fprintf(stderr, "usage: nhwc-unvendor IN.onnx OUT.onnx\n");
		return 2;
	}
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_load_file(argv[1], NULL, &d);
	if (!m)
		return 1;
	int count = 0;
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH), next; n; n = next) {
		next = ir_next(m, n);
		IrNode *node = ir_node(m, n);
		if (strcmp(node->domain, "com.microsoft") || strcmp(node->op_type, "NhwcConv"))
			continue;
		ValueId y = node->outputs[0];
		NodeId tx = transpose(m, n, node->inputs[0], to_nchw, NULL);
		NodeId tw = transpose(m, n, ir_node(m, n)->inputs[1], to_nchw, NULL);
		node = ir_node(m, n);
		ValueId ins[3] = {ir_node(m, tx)->outputs[0], ir_node(m, tw)->outputs[0],
		                  node->ninputs > 2 ? node->inputs[2] : 0};
		NodeId conv = ir_node_new(m, IR_MAIN_GRAPH, n, "", "Conv", "", ins, node->ninputs > 2 ? 3 : 2, NULL, 1);
		ir_copy_attrs(m, conv, n);
		const char *name = ir_value(m, y)->name;
		ir_value_rename(m, y, ir_fresh_name(m, name));
		NodeId ty = transpose(m, n, ir_node(m, conv)->outputs[0], to_nhwc, name);
		ValueId y2 = ir_node(m, ty)->outputs[0];
		ir_replace_all_uses(m, y, y2);
		IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
		for (uint32_t i = 0; i < g->noutputs; i++)
			if (g->outputs[i] == y)
				ir_set_output(m, IR_MAIN_GRAPH, i, y2);
		ir_node_remove(m, n);
		count++;
	}
	bool ok = ir_save_file(m, argv[2], &(SaveOptions){0}, &d);
	ir_model_free(m);
	fprintf(stderr, "%s: %d NhwcConv written back as Transpose, Conv, Transpose\n", argv[2], count);
	return ok ? 0 : 1;
}
