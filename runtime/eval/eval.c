/* eval.c - the graph interpreter: runs a graph node by node in topological
 * order, holding one EvValue per IR value, and frees each intermediate value
 * after its last use.  It is the top of the evaluator: it finds each node's
 * kernel (ev_kernel_find: the standard kernels of kernels/registry.c, or
 * vendor.c's for com.microsoft) and calls it.  Bodies of If/Loop/Scan run
 * through the context's run_body entry (EvCtx.run_body, which the kernels in
 * kernels/control.c call without naming this file), sharing the value
 * table, so a body reads outer values directly.
 *
 * With a memory plan (EvOptions.placement, made by runtime/plan) the main
 * graph runs in the plan's schedule and every placed value lives at its
 * offset in one arena: the kernel is handed its outputs' places (EvSlot) as
 * the tensors it allocates, a Reshape-like output is checked to hold its
 * input's bytes and becomes a view of them, an output made elsewhere is
 * copied into its place and counted.  Under ASan the arena is poisoned
 * except for the buffers alive at the current step, so a kernel reading or
 * writing a buffer the plan says is dead is caught. */
#include "eval.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define EV_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EV_ASAN 1
#endif
#endif
#ifdef EV_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

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
	/* running inside a memory plan (opt.placement) */
	const EvPlacement *pl;
	uint8_t *arena;
	uint32_t *opens, *open_at;    /* buffers by first step: opens[open_at[s] .. open_at[s+1]) */
	uint32_t *closes, *close_at;  /* buffers by last step */
	EvPlaceStats stats;
} EvEnv;

/* The most iterations a Loop may run (EvOptions.max_loop_trips) */
static int64_t loop_trips(const EvEnv *e) { return e->opt.max_loop_trips > 0 ? e->opt.max_loop_trips : 100000000; }

static bool plan_graph(EvEnv *e, GraphId g)
{
	GraphPlan *p = &e->plans[g];
	if (p->order)
		return true;
	IrModel *m = e->m;
	p->order = ir_topo_order(m, g, &p->norder, e->d);
	if (!p->order)
		return false;
	if (g == IR_MAIN_GRAPH && e->pl) {
		/* the plan's schedule: the same nodes, each once */
		bool same = e->pl->norder == p->norder;
		uint8_t *seen = calloc(m->nnodes, 1);
		for (uint32_t i = 0; same && i < p->norder; i++) {
			NodeId n = e->pl->order[i];
			same = n > 0 && n < m->nnodes && !seen[n] && ir_node(m, n)->graph == g && !ir_node(m, n)->dead;
			if (same)
				seen[n] = 1;
		}
		free(seen);
		if (!same) {
			diag_error(e->d, m->path, "plan: the schedule does not list the main graph's nodes");
			return false;
		}
		memcpy(p->order, e->pl->order, sizeof *p->order * p->norder);
	}
	p->uses = calloc(m->nvalues, sizeof *p->uses);
	p->pinned = calloc(m->nvalues, sizeof *p->pinned);
	if (!p->uses || !p->pinned)
		ev_out_of_memory();
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
	switch (ir_value_declared_kind(m, v)) {
	case IR_DECL_SEQUENCE: return EV_SEQUENCE;
	case IR_DECL_OPTIONAL: return EV_NONE;
	default: return EV_TENSOR;
	}
}

static bool in_arena(EvEnv *e, const void *p)
{
	return e->arena && (const uint8_t *)p >= e->arena && (const uint8_t *)p < e->arena + e->pl->arena_bytes;
}

/* A value the plan did not place must not point into the arena (a kernel
 * may return its input, or put it in a sequence): give it its own copy. */
static bool unarena(EvEnv *e, EvValue **v)
{
	EvValue *x = *v;
	if (!x)
		return true;
	if (x->kind == EV_SEQUENCE) {
		for (int i = 0; i < x->nitems; i++)
			if (!unarena(e, &x->items[i]))
				return false;
		return true;
	}
	if (x->kind != EV_TENSOR || !in_arena(e, x->data))
		return true;
	EvValue *c = ev_copy(x);
	if (!c)
		return false;
	ev_unref(x);
	*v = c;
	e->stats.escaped++;
	return true;
}

/* A tensor over the arena at `at`, with t's type and shape. */
static EvValue *at_place(const EvValue *t, uint8_t *at)
{
	return ev_tensor_borrow(t->dtype, t->rank, t->dims, at, t->nbytes);
}

/* After a main-graph node ran in a plan: each output at its place.
 * pending[noutputs], all false: outputs to copy in once the others are placed. */
static bool place_each(EvEnv *e, EvCtx *c, IrNode *node, EvValue **out, bool *pending)
{
	IrModel *m = e->m;
	const EvPlacement *pl = e->pl;
	for (uint32_t i = 0; i < node->noutputs; i++) {
		ValueId v = node->outputs[i];
		if (!v || !out[i])
			continue;
		if (pl->how[v] == EV_PLACE_NONE) {
			if (!unarena(e, &out[i]))
				return ev_fail(c, "plan: cannot copy output '%s' out of the arena", ir_value(m, v)->name);
			continue;
		}
		const char *name = ir_value(m, v)->name;
		if (out[i]->kind != EV_TENSOR || out[i]->dtype == DT_STRING)
			return ev_fail(c, "plan: output '%s' is not a tensor of numbers at run time, but the plan placed it", name);
		if (out[i]->nbytes != pl->nbytes[v])
			return ev_fail(c, "plan: output '%s' has %zu bytes at run time, the plan says %zu", name,
			               out[i]->nbytes, pl->nbytes[v]);
		uint8_t *at = e->arena + pl->offset[v];
		if (out[i]->data == at && pl->how[v] != EV_PLACE_VIEW) {
			e->stats.direct++;
			e->stats.inplace += pl->how[v] == EV_PLACE_INPLACE;
			continue;
		}
		if (pl->how[v] == EV_PLACE_VIEW) {
			/* the input's bytes are at `at`: the output must be those bytes;
			 * a new value over them even when the kernel returned its input
			 * (Identity, Dropout), so that input's value dies with its last use */
			if (out[i]->data != at && memcmp(out[i]->data, at, out[i]->nbytes) != 0)
				return ev_fail(c, "plan: view '%s' does not hold its input's bytes", name);
			EvValue *view = at_place(out[i], at);
			ev_unref(out[i]);
			out[i] = view;
			e->stats.views++;
			continue;
		}
		/* made elsewhere (maybe at another output's place): to the heap first */
		EvValue *h = ev_copy(out[i]);
		if (!h)
			return ev_fail(c, "plan: cannot copy output '%s'", name);
		ev_unref(out[i]);
		out[i] = h;
		pending[i] = true;
	}
	for (uint32_t i = 0; i < node->noutputs; i++) {
		if (!pending[i])
			continue;
		uint8_t *at = e->arena + pl->offset[node->outputs[i]];
		memcpy(at, out[i]->data, out[i]->nbytes);
		EvValue *placed = at_place(out[i], at);
		ev_unref(out[i]);
		out[i] = placed;
		e->stats.copied++;
	}
	return true;
}

/* The fewest inputs any version of a default-domain op takes (0 for
 * OP_UNKNOWN): the kernels serve every version, so a node with fewer
 * inputs than that has none of them to run it. */
static int fewest_inputs(OpKind kind)
{
	static int8_t fewest[OP_COUNT];
	static bool known;
	if (!known) {
		size_t n;
		const OpSchema *all = op_schema_all(&n);
		memset(fewest, -1, sizeof fewest);
		fewest[OP_UNKNOWN] = 0;
		for (size_t i = 0; i < n; i++)
			if (all[i].kind != OP_UNKNOWN && (fewest[all[i].kind] < 0 || all[i].min_inputs < fewest[all[i].kind]))
				fewest[all[i].kind] = (int8_t)(all[i].min_inputs < 127 ? all[i].min_inputs : 127);
		known = true;
	}
	return kind > OP_UNKNOWN && kind < OP_COUNT ? fewest[kind] : 0;
}

static bool place_outputs(EvEnv *e, EvCtx *c, IrNode *node, EvValue **out)
{
	bool *pending = calloc(node->noutputs + 1, sizeof *pending);  /* any number of outputs */
	if (!pending)
		abort();
	bool ok = place_each(e, c, node, out, pending);
	free(pending);
	return ok;
}

const EvKernel *ev_kernel_find(const char *domain, const char *op)
{
	if (domain && !strcmp(domain, "com.microsoft"))
		return ev_kernel_vendor(op);
	if (domain && *domain && strcmp(domain, "ai.onnx") != 0)
		return NULL;
	return ev_kernel_std(op);
}

static bool run_body(EvCtx *c, GraphId body, EvValue **inputs, uint32_t ninputs, EvValue **outputs,
                     uint32_t noutputs);

/* Run node n's kernel on in[]; out[] gets one value per present output.
 * placed: a main-graph node run inside a memory plan, whose outputs the
 * kernel writes at their places in the arena (ev_set_slots) and
 * place_outputs then checks or moves there. */
static bool call_kernel(EvEnv *e, NodeId n, EvValue **in, EvValue **out, bool placed)
{
	IrModel *m = e->m;
	IrNode *node = ir_node(m, n);
	EvCtx c = {m, n, e->opset, e->d, m->path ? m->path : "model", e->opt.seed, e, run_body, loop_trips(e)};
	memset(out, 0, sizeof *out * (node->noutputs + 1));   /* callers unref them on failure */
	const EvKernel *k = ev_kernel_find(node->domain, node->op_type);
	if (!k) {
		if (*node->domain)
			return ev_fail(&c, "no kernel for op '%s' of domain '%s'", node->op_type, node->domain);
		return ev_fail(&c, "no kernel for op '%s'", node->op_type);
	}
	/* kernels read their required inputs without looking: a node with
	 * fewer inputs than any version of its op takes ("Size ()") stops here */
	int fewest = fewest_inputs(node->kind);
	if ((int)node->ninputs < fewest)
		return ev_fail(&c, "%s needs %d input%s, has %u", node->op_type, fewest, fewest == 1 ? "" : "s", node->ninputs);
	for (uint32_t i = 0; i < node->ninputs; i++) {
		ValueId v = node->inputs[i];
		if (v && !in[i])
			return ev_fail(&c, "input '%s' has no value", ir_value(m, v)->name);
	}
	/* the outputs' places in the plan (views are made by the kernel, then
	 * checked); a body's nodes, run from inside this kernel, get none */
	EvSlot *slots = placed ? malloc(sizeof *slots * (node->noutputs + 1)) : NULL;  /* any number of outputs */
	if (placed && !slots)
		abort();
	int nslots = 0, nsaved;
	for (uint32_t i = 0; placed && i < node->noutputs; i++) {
		ValueId v = node->outputs[i];
		if (v && (e->pl->how[v] == EV_PLACE_OWN || e->pl->how[v] == EV_PLACE_INPLACE))
			slots[nslots++] = (EvSlot){ir_value(m, v)->dtype, e->pl->nbytes[v], e->arena + e->pl->offset[v],
			                           e->pl->how[v] == EV_PLACE_INPLACE, false};
	}
	EvSlot *saved = ev_get_slots(&nsaved);
	ev_set_slots(nslots ? slots : NULL, nslots);
	ev_memory_refused(); /* a refusal ev_fail explains is this kernel's */
	bool ok = k->fn(&c, in, (int)node->ninputs, out, (int)node->noutputs);
	ev_set_slots(saved, nsaved);
	free(slots);
	node = ir_node(m, n);
	if (ok && placed)
		ok = place_outputs(e, &c, node, out);
	if (!ok) {
		for (uint32_t i = 0; i < node->noutputs; i++) {
			ev_unref(out[i]);
			out[i] = NULL;
		}
		/* a kernel that returned without a word (ev_fail says so if it was
		 * for the memory limit) */
		if (e->d->nerrors == 0)
			ev_fail(&c, "kernel failed");
		return false;
	}
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
	bool placed = e->pl && p && node->graph == IR_MAIN_GRAPH;
	/* on the heap: a node may have any number of inputs and outputs */
	EvValue **in = calloc(node->ninputs + 1, sizeof *in), **out = calloc(node->noutputs + 1, sizeof *out);
	if (!in || !out)
		abort();
	/* in[ninputs] stays NULL: a kernel that reads one input more than a
	 * crafted node has sees none (fuzz-graph: com.microsoft Gelu of no input) */
	for (uint32_t i = 0; i < node->ninputs; i++)
		in[i] = node->inputs[i] ? e->vals[node->inputs[i]] : NULL;
	bool ok = call_kernel(e, n, in, out, placed);
	free(in);
	if (!ok) {
		free(out);
		return false;
	}
	node = ir_node(m, n);
	for (uint32_t i = 0; i < node->noutputs; i++) {
		ValueId v = node->outputs[i];
		if (!v) {
			ev_unref(out[i]);
			continue;
		}
		set_val(e, v, out[i]);
	}
	free(out);
	/* free what this node was the last to read */
	for (uint32_t i = 0; p && i < node->ninputs; i++) {
		ValueId v = node->inputs[i];
		if (v && ir_value(m, v)->graph == node->graph && !p->pinned[v] && p->uses[v] && --p->uses[v] == 0) {
			if (placed && e->pl->how[v] != EV_PLACE_NONE && e->vals[v] && e->vals[v]->refs > 1) {
				EvCtx c = {m, n, e->opset, e->d, m->path ? m->path : "model", e->opt.seed, e, run_body, loop_trips(e)};
				return ev_fail(&c, "plan: value '%s' is still referenced after its last use", ir_value(m, v)->name);
			}
			set_val(e, v, NULL);
		}
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
	bool placed = g == IR_MAIN_GRAPH && e->pl;
	for (uint32_t i = 0; ok && i < run.norder; i++) {
		/* buffers opening at this step become addressable; closing ones not */
		for (uint32_t k = placed ? e->open_at[i] : 0; placed && k < e->open_at[i + 1]; k++)
			UNPOISON(e->arena + e->pl->buf_offset[e->opens[k]], e->pl->buf_nbytes[e->opens[k]]);
		ok = run_node(e, run.order[i], &run);
		for (uint32_t k = placed ? e->close_at[i] : 0; placed && k < e->close_at[i + 1]; k++)
			POISON(e->arena + e->pl->buf_offset[e->closes[k]], e->pl->buf_nbytes[e->closes[k]]);
	}
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

/* Buffers bucketed by a step (first or last) in 0..nsteps. */
static void bucket(const uint32_t *step, uint32_t nbufs, uint32_t nsteps, uint32_t **idx, uint32_t **at)
{
	*at = calloc(nsteps + 2, sizeof **at);
	*idx = malloc(sizeof **idx * (nbufs + 1));
	if (!*at || !*idx)
		ev_out_of_memory();
	for (uint32_t b = 0; b < nbufs; b++)
		(*at)[(step[b] > nsteps ? nsteps : step[b]) + 1]++;
	for (uint32_t s = 0; s <= nsteps; s++)
		(*at)[s + 1] += (*at)[s];
	uint32_t *fill = malloc(sizeof *fill * (nsteps + 2));
	memcpy(fill, *at, sizeof *fill * (nsteps + 2));
	for (uint32_t b = 0; b < nbufs; b++)
		(*idx)[fill[step[b] > nsteps ? nsteps : step[b]]++] = b;
	free(fill);
}

/* The arena of a plan, all poisoned until buffers open. */
static bool env_place(EvEnv *e, const EvPlacement *pl)
{
	e->pl = pl;
	size_t bytes = (pl->arena_bytes + 63) / 64 * 64;
	if (bytes) {
		if (!ev_memory_charge(bytes)) {
			ev_memory_refused();
			diag_error(e->d, e->m->path, "plan: an arena of %zu bytes with %zu in use is over the memory "
			           "limit of %zu bytes (--max-memory)", bytes, ev_memory_in_use(), ev_memory_limit());
			return false;
		}
		e->arena = aligned_alloc(64, bytes);
		if (!e->arena) {
			ev_memory_release(bytes);
			diag_error(e->d, e->m->path, "plan: cannot allocate an arena of %zu bytes", pl->arena_bytes);
			return false;
		}
		POISON(e->arena, bytes);
	}
	bucket(pl->buf_first, pl->nbufs, pl->norder, &e->opens, &e->open_at);
	bucket(pl->buf_last, pl->nbufs, pl->norder, &e->closes, &e->close_at);
	return true;
}

static EvEnv *env_new(IrModel *m, const EvOptions *opt, Diag *d)
{
	EvEnv *e = calloc(1, sizeof *e);
	if (!e)
		ev_out_of_memory();
	e->m = m;
	e->d = d;
	if (opt)
		e->opt = *opt;
	e->opset = (int)ir_opset(m, "");
	e->vals = calloc(m->nvalues, sizeof *e->vals);
	e->plans = calloc(m->ngraphs, sizeof *e->plans);
	if (!e->vals || !e->plans)
		ev_out_of_memory();
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
	if (e->arena) {
		UNPOISON(e->arena, (e->pl->arena_bytes + 63) / 64 * 64);
		free(e->arena);
		ev_memory_release((e->pl->arena_bytes + 63) / 64 * 64);
	}
	free(e->opens);
	free(e->open_at);
	free(e->closes);
	free(e->close_at);
	free(e);
}

bool ev_run(IrModel *m, const EvValue *const *inputs, uint32_t ninputs,
            EvValue **outputs, const EvOptions *opt, Diag *d)
{
	EvEnv *e = env_new(m, opt, d);
	IrGraph *gr = ir_graph(m, IR_MAIN_GRAPH);
	memset(outputs, 0, sizeof *outputs * gr->noutputs);
	bool ok = !opt || !opt->placement || env_place(e, opt->placement);
	ok = ok && run_graph(e, IR_MAIN_GRAPH, (EvValue **)inputs, ninputs, outputs, gr->noutputs);
	/* the outputs leave the arena before it goes */
	for (uint32_t i = 0; ok && e->arena && i < gr->noutputs; i++) {
		uint32_t escaped = e->stats.escaped;
		ok = unarena(e, &outputs[i]);
		e->stats.escaped = escaped;
	}
	if (opt && opt->stats)
		*opt->stats = e->stats;
	if (!ok)
		for (uint32_t i = 0; i < gr->noutputs; i++) {
			ev_unref(outputs[i]);
			outputs[i] = NULL;
		}
	env_free(e);
	return ok;
}

/* EvCtx.run_body: one body graph inside the current evaluation. */
static bool run_body(EvCtx *c, GraphId body, EvValue **inputs, uint32_t ninputs, EvValue **outputs,
                     uint32_t noutputs)
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
		EvValue **res = calloc(node->noutputs + 1, sizeof *res);  /* any number of outputs */
		if (!res)
			abort();
		bool ok = call_kernel(&e, n, in, res, false);
		node = ir_node(m, n);
		for (uint32_t i = 0; i < node->noutputs; i++) {
			out[i] = ok && node->outputs[i] ? res[i] : NULL;
			if (!out[i])
				ev_unref(res[i]);
		}
		free(res);
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
