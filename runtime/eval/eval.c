/* eval.c - the graph interpreter: runs a graph node by node in topological
 * order, holding one EvValue per IR value, and frees each intermediate value
 * after its last use.  Bodies of If/Loop/Scan run through ev_run_body (the
 * kernels in kernels/control.c call it), sharing the value table, so a body
 * reads outer values directly. */
#include "eval.h"
#include "onnx.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* Per-graph facts, computed once per evaluation. */
typedef struct GraphPlan {
	NodeId *order;
	uint32_t norder;
	uint32_t *uses;   /* by ValueId: uses by nodes directly in this graph */
	bool *pinned;     /* by ValueId: read from a body or a graph output: keep to the end */
} GraphPlan;

typedef struct EvEnv {
	IrModel *m;
	Diag *d;
	EvOptions opt;
	int opset;
	EvValue **vals;       /* by ValueId */
	GraphPlan *plans;     /* by GraphId, built on first run */
	int depth;
} EvEnv;

static bool plan_graph(EvEnv *e, GraphId g)
{
	GraphPlan *p = &e->plans[g];
	if (p->order)
		return true;
	IrModel *m = e->m;
	p->order = ir_topo_order(m, g, &p->norder, e->d);
	if (!p->order)
		return false;
	p->uses = calloc(m->nvalues, sizeof *p->uses);
	p->pinned = calloc(m->nvalues, sizeof *p->pinned);
	if (!p->uses || !p->pinned)
		abort();
	for (ValueId v = 1; v < m->nvalues; v++) {
		IrValue *val = ir_value(m, v);
		if (val->dead)
			continue;
		for (uint32_t u = 0; u < val->nuses; u++) {
			if (ir_node(m, val->uses[u].node)->graph == g)
				p->uses[v]++;
			else
				p->pinned[v] = true;
		}
	}
	IrGraph *gr = ir_graph(m, g);
	for (uint32_t i = 0; i < gr->noutputs; i++)
		p->pinned[gr->outputs[i]] = true;
	return true;
}

static void set_val(EvEnv *e, ValueId v, EvValue *x)
{
	ev_unref(e->vals[v]);
	e->vals[v] = x;
}

EvKind ev_declared_kind(IrModel *m, ValueId v)
{
	const Onnx__ValueInfoProto *vi = ir_value(m, v)->info;
	/* a graph output's declared type is in its graph's output entry */
	IrGraph *gr = ir_graph(m, ir_value(m, v)->graph);
	for (uint32_t i = 0; !vi && i < gr->noutputs; i++)
		if (gr->outputs[i] == v)
			vi = gr->output_info[i];
	if (!vi || !vi->type)
		return EV_TENSOR;
	switch (vi->type->value_case) {
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return EV_SEQUENCE;
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return EV_NONE;
	default: return EV_TENSOR;
	}
}

/* Run node n's kernel on in[]; out[] gets one value per present output. */
static bool call_kernel(EvEnv *e, NodeId n, EvValue **in, EvValue **out)
{
	IrModel *m = e->m;
	IrNode *node = ir_node(m, n);
	EvCtx c = {m, n, e->opset, e->d, m->path ? m->path : "model", e->opt.seed, e};
	const EvKernel *k = ev_kernel_find(node->domain, node->op_type);
	if (!k) {
		if (*node->domain)
			return ev_fail(&c, "no kernel for op '%s' of domain '%s'", node->op_type, node->domain);
		return ev_fail(&c, "no kernel for op '%s'", node->op_type);
	}
	for (uint32_t i = 0; i < node->ninputs; i++) {
		ValueId v = node->inputs[i];
		if (v && !in[i])
			return ev_fail(&c, "input '%s' has no value", ir_value(m, v)->name);
	}
	memset(out, 0, sizeof *out * (node->noutputs + 1));
	if (!k->fn(&c, in, (int)node->ninputs, out, (int)node->noutputs)) {
		for (uint32_t i = 0; i < node->noutputs; i++) {
			ev_unref(out[i]);
			out[i] = NULL;
		}
		if (e->d->nerrors == 0)
			ev_fail(&c, "kernel failed");
		return false;
	}
	node = ir_node(m, n);
	for (uint32_t i = 0; i < node->noutputs; i++) {
		if (node->outputs[i] && !out[i]) {
			for (uint32_t k2 = 0; k2 < node->noutputs; k2++) {
				ev_unref(out[k2]);
				out[k2] = NULL;
			}
			return ev_fail(&c, "kernel produced no value for output %u ('%s')", i,
			               ir_value(m, node->outputs[i])->name);
		}
	}
	return true;
}

static bool run_node(EvEnv *e, NodeId n, GraphPlan *p)
{
	IrModel *m = e->m;
	IrNode *node = ir_node(m, n);
	EvValue *in[node->ninputs + 1], *out[node->noutputs + 1];
	for (uint32_t i = 0; i < node->ninputs; i++)
		in[i] = node->inputs[i] ? e->vals[node->inputs[i]] : NULL;
	if (!call_kernel(e, n, in, out))
		return false;
	node = ir_node(m, n);
	for (uint32_t i = 0; i < node->noutputs; i++) {
		ValueId v = node->outputs[i];
		if (!v) {
			ev_unref(out[i]);
			continue;
		}
		set_val(e, v, out[i]);
	}
	/* free what this node was the last to read */
	for (uint32_t i = 0; p && i < node->ninputs; i++) {
		ValueId v = node->inputs[i];
		if (v && ir_value(m, v)->graph == node->graph && !p->pinned[v] && p->uses[v] && --p->uses[v] == 0)
			set_val(e, v, NULL);
	}
	return true;
}

/* Bind inputs (NULL: an overridable initializer's default), initializers,
 * run the nodes, hand out references to the outputs, then clear every value
 * this graph defined. */
static bool run_graph(EvEnv *e, GraphId g, EvValue **inputs, uint32_t nin, EvValue **outputs, uint32_t nout)
{
	IrModel *m = e->m;
	IrGraph *gr = ir_graph(m, g);
	if (++e->depth > 64) {
		diag_error(e->d, m->path, "graph '%s': bodies nested more than 64 deep at run time", gr->name);
		e->depth--;
		return false;
	}
	if (!plan_graph(e, g)) {
		e->depth--;
		return false;
	}
	GraphPlan *p = &e->plans[g];
	/* use counts are consumed as nodes run: work on a copy for re-entrant bodies */
	GraphPlan run = *p;
	run.uses = malloc(sizeof *run.uses * m->nvalues);
	memcpy(run.uses, p->uses, sizeof *run.uses * m->nvalues);
	bool ok = true;
	for (uint32_t i = 0; i < gr->ninputs; i++) {
		ValueId v = gr->inputs[i];
		EvValue *x = i < nin ? inputs[i] : NULL;
		if (x)
			set_val(e, v, ev_ref(x));
		else if (ir_value(m, v)->tensor)
			set_val(e, v, ev_value_from_ir_tensor(m, ir_value(m, v)->tensor));
		else {
			diag_error(e->d, m->path, "graph '%s': no value given for input '%s'", gr->name, ir_value(m, v)->name);
			ok = false;
		}
	}
	for (uint32_t i = 0; ok && i < gr->ninits; i++) {
		ValueId v = gr->inits[i];
		if (!ir_value(m, v)->dead && !e->vals[v] && ir_value(m, v)->tensor)
			set_val(e, v, ev_value_from_ir_tensor(m, ir_value(m, v)->tensor));
	}
	for (uint32_t i = 0; ok && i < gr->nsparse; i++) {
		diag_error(e->d, m->path, "graph '%s': sparse initializer '%s' is not supported", gr->name,
		           ir_value(m, gr->sparse_inits[i])->name);
		ok = false;
	}
	for (uint32_t i = 0; ok && i < run.norder; i++)
		ok = run_node(e, run.order[i], &run);
	for (uint32_t i = 0; ok && i < gr->noutputs && i < nout; i++) {
		outputs[i] = ev_ref(e->vals[gr->outputs[i]]);
		if (!outputs[i]) {
			diag_error(e->d, m->path, "graph '%s': output '%s' was not computed", gr->name,
			           ir_value(m, gr->outputs[i])->name);
			ok = false;
		}
	}
	/* clear this graph's values (a Loop body runs again with fresh ones) */
	for (uint32_t i = 0; i < gr->ninputs; i++)
		set_val(e, gr->inputs[i], NULL);
	for (uint32_t i = 0; i < gr->ninits; i++)
		set_val(e, gr->inits[i], NULL);
	for (uint32_t i = 0; i < run.norder; i++) {
		IrNode *node = ir_node(m, run.order[i]);
		for (uint32_t o = 0; o < node->noutputs; o++)
			if (node->outputs[o])
				set_val(e, node->outputs[o], NULL);
	}
	free(run.uses);
	e->depth--;
	return ok;
}

static EvEnv *env_new(IrModel *m, const EvOptions *opt, Diag *d)
{
	EvEnv *e = calloc(1, sizeof *e);
	if (!e)
		abort();
	e->m = m;
	e->d = d;
	if (opt)
		e->opt = *opt;
	e->opset = (int)ir_opset(m, "");
	e->vals = calloc(m->nvalues, sizeof *e->vals);
	e->plans = calloc(m->ngraphs, sizeof *e->plans);
	if (!e->vals || !e->plans)
		abort();
	return e;
}

static void env_free(EvEnv *e)
{
	for (ValueId v = 0; v < e->m->nvalues; v++)
		ev_unref(e->vals[v]);
	for (GraphId g = 0; g < e->m->ngraphs; g++) {
		free(e->plans[g].order);
		free(e->plans[g].uses);
		free(e->plans[g].pinned);
	}
	free(e->vals);
	free(e->plans);
	free(e);
}

bool ev_run(IrModel *m, const EvValue *const *inputs, uint32_t ninputs,
            EvValue **outputs, const EvOptions *opt, Diag *d)
{
	EvEnv *e = env_new(m, opt, d);
	IrGraph *gr = ir_graph(m, IR_MAIN_GRAPH);
	memset(outputs, 0, sizeof *outputs * gr->noutputs);
	bool ok = run_graph(e, IR_MAIN_GRAPH, (EvValue **)inputs, ninputs, outputs, gr->noutputs);
	if (!ok)
		for (uint32_t i = 0; i < gr->noutputs; i++) {
			ev_unref(outputs[i]);
			outputs[i] = NULL;
		}
	env_free(e);
	return ok;
}

bool ev_run_body(EvCtx *c, GraphId body, EvValue **inputs, uint32_t ninputs, EvValue **outputs, uint32_t noutputs)
{
	memset(outputs, 0, sizeof *outputs * noutputs);
	return run_graph(c->env, body, inputs, ninputs, outputs, noutputs);
}

bool ev_eval_node(IrModel *m, NodeId n, EvValue **in, EvValue **out, Diag *d)
{
	IrNode *node = ir_node(m, n);
	bool bodies = false;
	for (uint32_t a = 0; a < node->nattrs; a++)
		bodies |= node->attrs[a].type == ATTR_GRAPH || node->attrs[a].type == ATTR_GRAPHS;
	if (!bodies) {
		/* one kernel, no body to run: no environment sized by the model
		 * (folding calls this once per node; that was quadratic) */
		EvEnv e = {.m = m, .d = d, .opset = (int)ir_opset(m, "")};
		EvValue *res[node->noutputs + 1];
		bool ok = call_kernel(&e, n, in, res);
		node = ir_node(m, n);
		for (uint32_t i = 0; i < node->noutputs; i++) {
			out[i] = ok && node->outputs[i] ? res[i] : NULL;
			if (!out[i])
				ev_unref(res[i]);
		}
		return ok;
	}
	EvEnv *e = env_new(m, NULL, d);
	for (uint32_t i = 0; i < node->ninputs; i++)
		if (node->inputs[i])
			set_val(e, node->inputs[i], ev_ref(in[i])); /* a value read twice is bound once */
	bool ok = run_node(e, n, NULL);
	node = ir_node(m, n);
	for (uint32_t i = 0; i < node->noutputs; i++)
		out[i] = ok && node->outputs[i] ? ev_ref(e->vals[node->outputs[i]]) : NULL;
	env_free(e);
	return ok;
}
