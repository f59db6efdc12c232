/* plan.c - the static memory plan of a main graph (see plan.h): lifetimes
 * over the schedule, in-place and view aliasing into buffers, buffer offsets
 * in one arena by several greedy strategies (the smallest arena kept), the
 * live-set lower bound, and the plan printed, as JSON, and as the
 * EvPlacement the evaluator runs in.  docs/memory-plan.md explains it. */
#include "plan.h"
#include "runtime/infer/infer.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		abort();
	return p;
}

/* ---- input shapes --------------------------------------------------------- */

static bool set_input_shape(IrModel *m, ValueId v, const int64_t *dims, int rank, Diag *d)
{
	IrValue *val = ir_value(m, v);
	if (val->shape.rank >= 0 && val->shape.rank != rank) {
		diag_error(d, m->path, "input '%s': rank %d given, the model says %d", val->name, rank, val->shape.rank);
		return false;
	}
	if (rank > IR_MAX_RANK) {
		diag_error(d, m->path, "input '%s': rank %d is over graft's limit of %d", val->name, rank, IR_MAX_RANK);
		return false;
	}
	Dim nd[IR_MAX_RANK + 1];
	int64_t numel = 1;
	for (int i = 0; i < rank; i++) {
		if (val->shape.rank >= 0 && val->shape.dims[i].size >= 0 && val->shape.dims[i].size != dims[i]) {
			diag_error(d, m->path, "input '%s': dim %d is %lld, %lld given", val->name, i,
			           (long long)val->shape.dims[i].size, (long long)dims[i]);
			return false;
		}
		if (dims[i] < 0 || __builtin_mul_overflow(numel, dims[i], &numel)) {
			diag_error(d, m->path, "input '%s': dim %d is %lld: %s", val->name, i, (long long)dims[i],
			           dims[i] < 0 ? "negative" : "the element count overflows int64");
			return false;
		}
		nd[i] = (Dim){dims[i], NULL};
	}
	Shape s = {rank, nd};
	ir_value_set_type(m, v, val->dtype, &s);
	return true;
}

static bool infer_all(IrModel *m, Diag *d)
{
	InferState *s = infer_new(m);
	bool ok = infer_model(s, d);
	infer_free(s);
	return ok;
}

bool plan_bind_inputs(IrModel *m, const char *const *names, const int64_t *const *dims, const int *ranks, int n,
                      Diag *d)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	for (int k = 0; k < n; k++) {
		ValueId v = 0;
		for (uint32_t i = 0; i < g->ninputs && !v; i++)
			if (strcmp(ir_value(m, g->inputs[i])->name, names[k]) == 0)
				v = g->inputs[i];
		if (!v) {
			diag_error(d, m->path, "--input-shape: '%s' is not an input of the main graph", names[k]);
			return false;
		}
		if (!set_input_shape(m, v, dims[k], ranks[k], d))
			return false;
	}
	return infer_all(m, d);
}

bool plan_bind_values(IrModel *m, EvValue *const *inputs, Diag *d)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	for (uint32_t i = 0; i < g->ninputs; i++)
		if (inputs[i] && inputs[i]->kind == EV_TENSOR && !set_input_shape(m, g->inputs[i], inputs[i]->dims, inputs[i]->rank, d))
			return false;
	return infer_all(m, d);
}

bool plan_unknown_inputs(IrModel *m, char *buf, size_t size)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	size_t o = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < g->ninputs; i++) {
		IrValue *v = ir_value(m, g->inputs[i]);
		if (v->tensor || v->non_tensor)
			continue;
		bool unknown = v->shape.rank < 0;
		for (int k = 0; k < v->shape.rank; k++)
			unknown |= v->shape.dims[k].size < 0;
		if (!unknown || o >= size)
			continue;
		o += (size_t)snprintf(buf + o, size - o, "%s%s[", o ? "; " : "", v->name);
		if (v->shape.rank < 0 && o < size)
			o += (size_t)snprintf(buf + o, size - o, "*");
		for (int k = 0; k < v->shape.rank && o < size; k++) {
			const Dim *dm = &v->shape.dims[k];
			if (dm->size >= 0)
				o += (size_t)snprintf(buf + o, size - o, "%s%lld", k ? "," : "", (long long)dm->size);
			else
				o += (size_t)snprintf(buf + o, size - o, "%s%s", k ? "," : "", ir_dim_label(dm));
		}
		if (o < size)
			o += (size_t)snprintf(buf + o, size - o, "]");
	}
	return o > 0;
}

/* ---- which values are planned --------------------------------------------- */

/* Ops whose first output is its input's bytes, under another shape or the
 * same (Dropout outside training, which the evaluator refuses to run in
 * training with a nonzero ratio; Identity). */
static bool is_view_op(const IrNode *n)
{
	switch (n->kind) {
	case OP_Reshape: case OP_Squeeze: case OP_Unsqueeze: case OP_Flatten: case OP_Identity: case OP_Dropout:
		return true;
	default:
		return false;
	}
}

/* Elementwise ops whose kernel reads element i of each input before it
 * writes element i of the output, and allocates nothing before the output
 * (kernels/unary.c: unary(); kernels/binary.c: binary() and k_Clip), so the
 * output may be written over an input of its own size. */
static bool is_inplace_op(const IrNode *n)
{
	if (n->noutputs != 1)
		return false;
	switch (n->kind) {
	case OP_Relu: case OP_LeakyRelu: case OP_Sigmoid: case OP_HardSigmoid: case OP_HardSwish: case OP_Tanh:
	case OP_Elu: case OP_Selu: case OP_Celu: case OP_Gelu: case OP_Softplus: case OP_Softsign: case OP_Mish:
	case OP_Erf: case OP_Exp: case OP_Log: case OP_Sqrt: case OP_Reciprocal: case OP_Neg: case OP_Abs:
	case OP_Sign: case OP_Floor: case OP_Ceil: case OP_Round: case OP_Sin: case OP_Cos: case OP_Tan:
	case OP_Asin: case OP_Acos: case OP_Atan: case OP_Sinh: case OP_Cosh: case OP_Asinh: case OP_Acosh:
	case OP_Atanh: case OP_Not: case OP_Add: case OP_Sub: case OP_Mul: case OP_Div: case OP_Clip:
		return true;
	default:
		return false;
	}
}

static bool makes_containers(const IrNode *n)
{
	return n->kind != OP_UNKNOWN && (strncmp(n->op_type, "Sequence", 8) == 0 ||
	                                 strcmp(n->op_type, "SplitToSequence") == 0 || strncmp(n->op_type, "Optional", 8) == 0);
}

/* The bytes of value v, or 0 with *why saying why it is not planned. */
static size_t value_bytes(IrModel *m, NodeId producer, ValueId v, int64_t *numel, const char **why)
{
	IrValue *val = ir_value(m, v);
	if (val->non_tensor || makes_containers(ir_node(m, producer))) {
		*why = "a sequence or optional";
		return 0;
	}
	if (val->dtype == DT_STRING) {
		*why = "strings";
		return 0;
	}
	int bits = dtype_bits(val->dtype);
	if (val->dtype == DT_UNDEFINED || bits == 0) {
		*why = "element type unknown";
		return 0;
	}
	if (val->shape.rank < 0) {
		*why = "rank unknown";
		return 0;
	}
	int64_t n = 1;
	for (int i = 0; i < val->shape.rank; i++) {
		const Dim *dm = &val->shape.dims[i];
		if (dm->size < 0) {
			*why = dm->param ? "symbolic dim" : "dim unknown before running";
			return 0;
		}
		if (__builtin_mul_overflow(n, dm->size, &n) || n > (INT64_C(1) << 40)) {
			*why = "too large";
			return 0;
		}
	}
	if (n == 0) {
		*why = "empty";
		return 0;
	}
	*numel = n;
	return ((size_t)n * (size_t)bits + 7) / 8;
}

static size_t align_up(size_t n)
{
	return (n + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
}

/* ---- offsets ----------------------------------------------------------------- */

/* Buffers whose lifetimes overlap, as adjacency lists (CSR), by a sweep
 * over the buffers sorted by their first step. */
typedef struct Conflicts {
	uint32_t *at;   /* nbufs + 1 */
	uint32_t *adj;
} Conflicts;

/* What the qsort comparators sort by (qsort passes no context; planning is
 * single-threaded). */
static const PlanBuffer *sort_bufs;

static int by_first(const void *a, const void *b)
{
	const PlanBuffer *x = &sort_bufs[*(const uint32_t *)a], *y = &sort_bufs[*(const uint32_t *)b];
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void conflicts_build(const PlanBuffer *bufs, uint32_t n, Conflicts *c)
{
	uint32_t *idx = xcalloc(n, sizeof *idx), *active = xcalloc(n, sizeof *active), nactive = 0;
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	sort_bufs = bufs;
	qsort(idx, n, sizeof *idx, by_first);
	size_t cap = 1024, npairs = 0;
	uint32_t *pairs = xcalloc(cap * 2, sizeof *pairs);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t b = idx[k], w = 0;
		for (uint32_t j = 0; j < nactive; j++)
			if (bufs[active[j]].last >= bufs[b].first)
				active[w++] = active[j];
		nactive = w;
		for (uint32_t j = 0; j < nactive; j++) {
			if (npairs == cap) {
				cap *= 2;
				pairs = realloc(pairs, sizeof *pairs * cap * 2);
				if (!pairs)
					abort();
			}
			pairs[2 * npairs] = active[j];
			pairs[2 * npairs + 1] = b;
			npairs++;
		}
		active[nactive++] = b;
	}
	c->at = xcalloc(n + 1, sizeof *c->at);
	c->adj = xcalloc(npairs * 2, sizeof *c->adj);
	for (size_t i = 0; i < npairs; i++) {
		c->at[pairs[2 * i] + 1]++;
		c->at[pairs[2 * i + 1] + 1]++;
	}
	for (uint32_t i = 0; i < n; i++)
		c->at[i + 1] += c->at[i];
	uint32_t *fill = xcalloc(n + 1, sizeof *fill);
	memcpy(fill, c->at, sizeof *fill * n);
	for (size_t i = 0; i < npairs; i++) {
		uint32_t a = pairs[2 * i], b = pairs[2 * i + 1];
		c->adj[fill[a]++] = b;
		c->adj[fill[b]++] = a;
	}
	free(fill);
	free(pairs);
	free(idx);
	free(active);
}

/* Sort 64-bit keys ascending (quicksort, insertion sort for short runs):
 * the placement sorts every buffer's placed neighbours, and libc's qsort
 * through a comparison callback was most of the planning time. */
static void sort_keys(uint64_t *k, size_t n)
{
	while (n > 16) {
		uint64_t a = k[0], b = k[n / 2], c = k[n - 1];
		uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		size_t i = 0, j = n - 1;
		for (;;) {
			while (k[i] < pivot)
				i++;
			while (k[j] > pivot)
				j--;
			if (i >= j)
				break;
			uint64_t t = k[i];
			k[i++] = k[j];
			k[j--] = t;
		}
		/* recurse into the smaller side, loop on the larger */
		if (j + 1 < n - j - 1) {
			sort_keys(k, j + 1);
			k += j + 1;
			n -= j + 1;
		} else {
			sort_keys(k + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++) {
		uint64_t t = k[i];
		size_t j = i;
		for (; j > 0 && k[j - 1] > t; j--)
			k[j] = k[j - 1];
		k[j] = t;
	}
}

enum { ORDER_SIZE, ORDER_BREADTH, ORDER_BIRTH, ORDER_LONG };

static int sort_order;
static uint32_t sort_long;   /* ORDER_LONG: lifetimes at least this long go first, longest first */

static int by_strategy(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const PlanBuffer *x = &sort_bufs[i], *y = &sort_bufs[j];
	if (sort_order == ORDER_BIRTH && x->first != y->first)
		return x->first < y->first ? -1 : 1;
	if (sort_order == ORDER_LONG) {
		uint32_t lx = x->last - x->first, ly = y->last - y->first;
		bool long_x = lx >= sort_long, long_y = ly >= sort_long;
		if (long_x != long_y)
			return long_x ? -1 : 1;
		if (long_x && lx != ly)
			return lx > ly ? -1 : 1;
	}
	if (sort_order == ORDER_BREADTH) {
		double bx = (double)x->size * (x->last - x->first + 1), by = (double)y->size * (y->last - y->first + 1);
		if (bx != by)
			return bx > by ? -1 : 1;
	}
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return i < j ? -1 : 1;
}

static void order_by(const PlanBuffer *bufs, uint32_t n, int order, uint32_t *idx)
{
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	sort_bufs = bufs;
	sort_order = order;
	qsort(idx, n, sizeof *idx, by_strategy);
}

/* Scratch for place(). */
typedef struct Placer {
	bool *placed;
	uint64_t *keys;   /* (offset / PLAN_ALIGN) << 24 | neighbour index */
	size_t *hi;       /* by neighbour index: offset + size */
	size_t cap;
} Placer;

/* Place the buffers in order idx[]: each in the smallest gap that fits it
 * between the placed buffers it conflicts with, else above them all.
 * Offsets are multiples of PLAN_ALIGN.  Returns the arena size. */
static size_t place(const PlanBuffer *bufs, uint32_t n, const Conflicts *c, const uint32_t *idx, Placer *w,
                    size_t *offset)
{
	memset(w->placed, 0, sizeof *w->placed * n);
	size_t peak = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t b = idx[k];
		size_t nn = 0, deg = c->at[b + 1] - c->at[b];
		if (deg > w->cap) {
			w->cap = deg;
			w->keys = realloc(w->keys, sizeof *w->keys * deg);
			w->hi = realloc(w->hi, sizeof *w->hi * deg);
			if (!w->keys || !w->hi)
				abort();
		}
		for (uint32_t j = c->at[b]; j < c->at[b + 1]; j++) {
			uint32_t o = c->adj[j];
			if (!w->placed[o])
				continue;
			w->hi[nn] = offset[o] + bufs[o].size;
			w->keys[nn] = (uint64_t)(offset[o] / PLAN_ALIGN) << 24 | nn;
			nn++;
		}
		sort_keys(w->keys, nn);
		size_t top = 0, at = SIZE_MAX, gap_best = SIZE_MAX;
		for (size_t j = 0; j < nn; j++) {
			size_t lo = (size_t)(w->keys[j] >> 24) * PLAN_ALIGN, hi = w->hi[w->keys[j] & 0xffffff];
			if (lo > top) {
				size_t gap = lo - top;
				if (gap >= bufs[b].size && gap < gap_best) {
					at = top;
					gap_best = gap;
				}
			}
			if (hi > top)
				top = hi;
		}
		offset[b] = at != SIZE_MAX ? at : top;
		w->placed[b] = true;
		if (offset[b] + bufs[b].size > peak)
			peak = offset[b] + bufs[b].size;
	}
	return peak;
}

/* ---- the plan -------------------------------------------------------------------- */

bool plan_model(IrModel *m, const PlanOptions *o, Plan *p, Diag *d)
{
	PlanOptions none = {0};
	if (!o)
		o = &none;
	memset(p, 0, sizeof *p);
	p->m = m;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	p->order = ir_topo_order(m, IR_MAIN_GRAPH, &p->nsteps, d);
	if (!p->order)
		return false;
	uint32_t nsteps = p->nsteps;
	uint32_t *step_of = xcalloc(m->nnodes, sizeof *step_of);
	for (uint32_t s = 0; s < nsteps; s++)
		step_of[p->order[s]] = s;
	uint32_t *tensor_of = xcalloc(m->nvalues, sizeof *tensor_of); /* index + 1 */
	int64_t *numel = xcalloc(m->nvalues, sizeof *numel);
	bool *external = xcalloc(m->nvalues, sizeof *external); /* graph inputs, initializers, constants */
	IrGraph *main = ir_graph(m, IR_MAIN_GRAPH);
	for (uint32_t i = 0; i < main->ninputs; i++)
		external[main->inputs[i]] = true;
	for (uint32_t i = 0; i < main->ninits; i++)
		external[main->inits[i]] = true;
	p->tensors = xcalloc(m->nvalues, sizeof *p->tensors);
	p->skipped = xcalloc(m->nvalues, sizeof *p->skipped);

	/* the tensors, and when each is last read */
	for (uint32_t s = 0; s < nsteps; s++) {
		IrNode *node = ir_node(m, p->order[s]);
		for (uint32_t i = 0; i < node->noutputs; i++) {
			ValueId v = node->outputs[i];
			if (!v)
				continue;
			const char *why = NULL;
			size_t nb = value_bytes(m, p->order[s], v, &numel[v], &why);
			/* constants live with the weights, as initializers do; a view of a
			 * constant or of a graph input lives where its input lives */
			ValueId in0 = node->ninputs ? node->inputs[0] : 0;
			if (node->kind == OP_Constant) {
				external[v] = true;
				why = "a constant (Constant node)";
				nb = 0;
			} else if (is_view_op(node) && i == 0 && in0 && external[in0]) {
				external[v] = true;
				why = "a view of a graph input or constant";
				nb = 0;
			}
			if (!nb) {
				p->skipped[p->nskipped++] = (PlanSkip){v, why};
				continue;
			}
			PlanTensor *t = &p->tensors[p->ntensors];
			*t = (PlanTensor){.value = v, .nbytes = nb, .size = align_up(nb), .def = s, .last = s, .how = PLAN_OWN};
			IrValue *val = ir_value(m, v);
			for (uint32_t u = 0; u < val->nuses; u++) {
				/* Shape and Size read the dims, not the bytes: they do not keep
				 * the bytes alive (raw exports take Shape of big activations
				 * long after their last real use) */
				NodeId r = val->uses[u].node;
				if (ir_node(m, r)->kind == OP_Shape || ir_node(m, r)->kind == OP_Size)
					continue;
				/* a read from inside a body counts at the node owning the body */
				while (ir_node(m, r)->graph != IR_MAIN_GRAPH)
					r = ir_graph(m, ir_node(m, r)->graph)->owner;
				if (step_of[r] > t->last)
					t->last = step_of[r];
			}
			if (val->is_output)
				t->last = nsteps;
			tensor_of[v] = ++p->ntensors;
		}
	}

	/* buffers: views join their input's, in-place outputs their dying
	 * input's, the rest open their own */
	p->bufs = xcalloc(p->ntensors, sizeof *p->bufs);
	for (uint32_t k = 0; k < p->ntensors; k++) {
		PlanTensor *t = &p->tensors[k];
		p->naive_bytes += t->size;
		IrNode *node = ir_node(m, p->order[t->def]);
		ValueId in0 = node->ninputs ? node->inputs[0] : 0;
		/* a Cast to the input's own type copies the bytes: a view too */
		bool same_cast = node->kind == OP_Cast && in0 && ir_value(m, in0)->dtype == ir_value(m, t->value)->dtype;
		if (!o->no_alias && (is_view_op(node) || same_cast) && t->value == node->outputs[0] && in0 && tensor_of[in0] &&
		    p->tensors[tensor_of[in0] - 1].nbytes == t->nbytes) {
			t->how = PLAN_VIEW;
			t->over = in0;
		} else if (!o->no_alias && is_inplace_op(node)) {
			for (uint32_t j = 0; j < node->ninputs && t->how == PLAN_OWN; j++) {
				ValueId x = node->inputs[j];
				if (!x || !tensor_of[x])
					continue;
				PlanTensor *xt = &p->tensors[tensor_of[x] - 1];
				PlanBuffer *b = &p->bufs[xt->buffer];
				if (xt->nbytes != t->nbytes || numel[x] != numel[t->value] || b->last != t->def)
					continue;
				bool alone = true; /* no other input of this node reads that buffer */
				for (uint32_t q = 0; q < node->ninputs; q++) {
					ValueId y = node->inputs[q];
					if (y && y != x && tensor_of[y] && p->tensors[tensor_of[y] - 1].buffer == xt->buffer)
						alone = false;
				}
				if (alone) {
					t->how = PLAN_INPLACE;
					t->over = x;
				}
			}
		}
		if (t->how == PLAN_OWN) {
			t->buffer = p->nbufs;
			p->bufs[p->nbufs++] = (PlanBuffer){.size = t->size, .nbytes = t->nbytes, .first = t->def,
			                                   .last = t->last, .root = k, .ntensors = 1};
		} else {
			t->buffer = p->tensors[tensor_of[t->over] - 1].buffer;
			PlanBuffer *b = &p->bufs[t->buffer];
			if (t->last > b->last)
				b->last = t->last;
			b->ntensors++;
			p->ninplace += t->how == PLAN_INPLACE;
			p->nviews += t->how == PLAN_VIEW;
		}
	}

	/* the lower bound: the largest sum of buffer sizes alive at one step */
	size_t *delta = xcalloc(nsteps + 2, sizeof *delta), *minus = xcalloc(nsteps + 2, sizeof *minus);
	for (uint32_t b = 0; b < p->nbufs; b++) {
		delta[p->bufs[b].first] += p->bufs[b].size;
		minus[p->bufs[b].last + 1] += p->bufs[b].size;
	}
	size_t live = 0;
	for (uint32_t s = 0; s <= nsteps; s++) {
		live += delta[s];
		live -= minus[s];
		if (live > p->lower_bound_bytes) {
			p->lower_bound_bytes = live;
			p->bound_step = s;
		}
	}
	free(delta);
	free(minus);

	/* offsets: each greedy order, then rounds that move the buffers ending
	 * above the bound to the front of the previous round's order, starting
	 * from the best greedy order (the "squeaky wheel"); the smallest arena
	 * is kept */
	static const struct { const char *name; int order; } strategies[PLAN_NSTRATEGIES] = {
		{"size", ORDER_SIZE}, {"breadth", ORDER_BREADTH}, {"birth", ORDER_BIRTH}, {"long-lived", ORDER_LONG},
	};
	sort_long = nsteps / 8 > 1 ? nsteps / 8 : 2;
	Conflicts c;
	conflicts_build(p->bufs, p->nbufs, &c);
	size_t *off = xcalloc(p->nbufs, sizeof *off), *best = xcalloc(p->nbufs, sizeof *best);
	uint32_t *idx = xcalloc(p->nbufs, sizeof *idx), *cur_idx = xcalloc(p->nbufs, sizeof *cur_idx);
	Placer w = {.placed = xcalloc(p->nbufs, sizeof *w.placed)};
	p->peak_bytes = SIZE_MAX;
	for (int s = 0; s < PLAN_NSTRATEGIES && p->peak_bytes > p->lower_bound_bytes; s++) {
		order_by(p->bufs, p->nbufs, strategies[s].order, idx);
		size_t peak = place(p->bufs, p->nbufs, &c, idx, &w, off);
		p->tried[s] = (PlanStrategy){strategies[s].name, peak};
		if (peak < p->peak_bytes) {
			p->peak_bytes = peak;
			p->strategy = strategies[s].name;
			memcpy(best, off, sizeof *off * p->nbufs);
			memcpy(cur_idx, idx, sizeof *idx * p->nbufs);
		}
	}
	size_t *cur_off = xcalloc(p->nbufs, sizeof *cur_off);
	memcpy(cur_off, best, sizeof *best * p->nbufs);
	for (int r = 0, idle = 0; r < PLAN_ROUNDS && idle < PLAN_PATIENCE && p->peak_bytes > p->lower_bound_bytes; r++) {
		uint32_t n = 0;
		for (uint32_t k = 0; k < p->nbufs; k++)
			if (cur_off[cur_idx[k]] + p->bufs[cur_idx[k]].size > p->lower_bound_bytes)
				idx[n++] = cur_idx[k];
		for (uint32_t k = 0; k < p->nbufs; k++)
			if (cur_off[cur_idx[k]] + p->bufs[cur_idx[k]].size <= p->lower_bound_bytes)
				idx[n++] = cur_idx[k];
		size_t peak = place(p->bufs, p->nbufs, &c, idx, &w, off);
		p->rounds++;
		idle++;
		if (peak < p->peak_bytes) {
			p->peak_bytes = peak;
			p->improved_rounds++;
			idle = 0;
			memcpy(best, off, sizeof *off * p->nbufs);
		}
		/* the next round starts from this one even when it did not help:
		 * other buffers squeak then */
		uint32_t *ti = cur_idx;
		cur_idx = idx;
		idx = ti;
		size_t *to = cur_off;
		cur_off = off;
		off = to;
	}
	free(cur_off);
	free(w.placed);
	free(w.keys);
	free(w.hi);
	free(idx);
	free(cur_idx);
	for (uint32_t b = 0; b < p->nbufs; b++)
		p->bufs[b].offset = best[b];
	free(off);
	free(best);
	free(c.at);
	free(c.adj);

	/* the placement by ValueId, for the evaluator */
	p->offset = xcalloc(m->nvalues, sizeof *p->offset);
	p->value_nbytes = xcalloc(m->nvalues, sizeof *p->value_nbytes);
	p->how = xcalloc(m->nvalues, sizeof *p->how);
	for (ValueId v = 0; v < m->nvalues; v++)
		p->offset[v] = -1;
	for (uint32_t k = 0; k < p->ntensors; k++) {
		const PlanTensor *t = &p->tensors[k];
		p->offset[t->value] = (int64_t)p->bufs[t->buffer].offset;
		p->value_nbytes[t->value] = t->nbytes;
		p->how[t->value] = (uint8_t)t->how;
	}
	p->buf_offset = xcalloc(p->nbufs, sizeof *p->buf_offset);
	p->buf_nbytes = xcalloc(p->nbufs, sizeof *p->buf_nbytes);
	p->buf_first = xcalloc(p->nbufs, sizeof *p->buf_first);
	p->buf_last = xcalloc(p->nbufs, sizeof *p->buf_last);
	for (uint32_t b = 0; b < p->nbufs; b++) {
		p->buf_offset[b] = p->bufs[b].offset;
		p->buf_nbytes[b] = p->bufs[b].nbytes;
		p->buf_first[b] = p->bufs[b].first;
		p->buf_last[b] = p->bufs[b].last;
	}
	if (p->nbufs == 0)
		p->peak_bytes = 0;
	free(step_of);
	free(tensor_of);
	free(numel);
	free(external);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	p->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return true;
}

void plan_free(Plan *p)
{
	free(p->order);
	free(p->tensors);
	free(p->bufs);
	free(p->skipped);
	free(p->offset);
	free(p->value_nbytes);
	free(p->how);
	free(p->buf_offset);
	free(p->buf_nbytes);
	free(p->buf_first);
	free(p->buf_last);
	memset(p, 0, sizeof *p);
}

void plan_placement(const Plan *p, EvPlacement *pl)
{
	*pl = (EvPlacement){
		.order = p->order, .norder = p->nsteps, .arena_bytes = p->peak_bytes,
		.offset = p->offset, .nbytes = p->value_nbytes, .how = p->how,
		.nbufs = p->nbufs, .buf_offset = p->buf_offset, .buf_nbytes = p->buf_nbytes,
		.buf_first = p->buf_first, .buf_last = p->buf_last,
	};
}

/* ---- output ---------------------------------------------------------------------- */

static const char *how_name(PlanHow h)
{
	return h == PLAN_INPLACE ? "in-place" : h == PLAN_VIEW ? "view" : "own";
}

static void human(char *buf, size_t size, size_t b)
{
	const char *units[] = {"B", "KiB", "MiB", "GiB"};
	double x = (double)b;
	int u = 0;
	while (x >= 1024 && u < 3) {
		x /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", x, units[u]);
}

static double over_bound(const Plan *p)
{
	return p->lower_bound_bytes ? 100.0 * ((double)p->peak_bytes - (double)p->lower_bound_bytes) /
	                                  (double)p->lower_bound_bytes
	                            : 0;
}

/* Buffers alive at step s, largest first (their indices into *out, malloc'd). */
static uint32_t live_at(const Plan *p, uint32_t s, uint32_t **out)
{
	uint32_t *l = xcalloc(p->nbufs, sizeof *l), n = 0;
	for (uint32_t b = 0; b < p->nbufs; b++)
		if (p->bufs[b].first <= s && s <= p->bufs[b].last)
			l[n++] = b;
	for (uint32_t i = 1; i < n; i++) /* insertion sort: a live set is small */
		for (uint32_t j = i; j > 0 && p->bufs[l[j]].size > p->bufs[l[j - 1]].size; j--) {
			uint32_t t = l[j];
			l[j] = l[j - 1];
			l[j - 1] = t;
		}
	*out = l;
	return n;
}

static const char *step_label(const Plan *p, uint32_t s, char *buf, size_t size)
{
	if (s >= p->nsteps)
		return snprintf(buf, size, "the end (graph outputs)"), buf;
	char label[256];
	snprintf(buf, size, "'%s'", ir_node_label(p->m, p->order[s], label, sizeof label));
	return buf;
}

void plan_print(const Plan *p, FILE *out, bool verbose)
{
	IrModel *m = p->m;
	char h1[32], h2[32], h3[32], where[300];
	fprintf(out, "schedule     %u nodes in the saved order\n", p->nsteps);
	fprintf(out, "tensors      %u planned in %u buffers (%u in place, %u views); %u not planned\n", p->ntensors,
	        p->nbufs, p->ninplace, p->nviews, p->nskipped);
	human(h1, sizeof h1, p->naive_bytes);
	human(h2, sizeof h2, p->peak_bytes);
	human(h3, sizeof h3, p->lower_bound_bytes);
	fprintf(out, "naive        %12zu bytes  %10s  one buffer per tensor\n", p->naive_bytes, h1);
	fprintf(out, "peak         %12zu bytes  %10s  one arena (%s), %.2f%% over the bound\n", p->peak_bytes, h2,
	        p->strategy ? p->strategy : "-", over_bound(p));
	fprintf(out, "lower bound  %12zu bytes  %10s  the most bytes alive at one step, at %s\n", p->lower_bound_bytes,
	        h3, step_label(p, p->bound_step, where, sizeof where));
	fprintf(out, "planning     %.3f ms; strategies:", p->seconds * 1e3);
	for (int s = 0; s < PLAN_NSTRATEGIES && p->tried[s].name; s++)
		fprintf(out, " %s %zu%s", p->tried[s].name, p->tried[s].peak, s + 1 < PLAN_NSTRATEGIES && p->tried[s + 1].name ? "," : "");
	fprintf(out, "; %u squeaky-wheel round%s (%u lowered the peak)\n", p->rounds, p->rounds == 1 ? "" : "s",
	        p->improved_rounds);
	uint32_t *live, nlive = live_at(p, p->bound_step, &live);
	fprintf(out, "the peak     %u buffers alive at %s:", nlive, where);
	for (uint32_t i = 0; i < nlive; i++)
		fprintf(out, "%s %s %zu", i ? "," : "", ir_value(m, p->tensors[p->bufs[live[i]].root].value)->name,
		        p->bufs[live[i]].size);
	fprintf(out, "\n");
	free(live);
	/* the values left out, by reason: a count and the first few names */
	bool *said = xcalloc(p->nskipped, sizeof *said);
	for (uint32_t i = 0; i < p->nskipped; i++) {
		if (said[i])
			continue;
		uint32_t n = 0;
		for (uint32_t k = i; k < p->nskipped; k++)
			n += !said[k] && strcmp(p->skipped[k].why, p->skipped[i].why) == 0;
		fprintf(out, "not planned  %u: %s:", n, p->skipped[i].why);
		for (uint32_t k = i, shown = 0; k < p->nskipped; k++) {
			if (said[k] || strcmp(p->skipped[k].why, p->skipped[i].why) != 0)
				continue;
			said[k] = true;
			if (shown++ < 3 || verbose)
				fprintf(out, "%s %s", shown > 1 ? "," : "", ir_value(m, p->skipped[k].value)->name);
			else if (shown == 4)
				fprintf(out, ", ...");
		}
		fprintf(out, "\n");
	}
	free(said);
	if (!verbose)
		return;
	fprintf(out, "\n%5s  %-28s %-28s %12s %12s %11s  %s\n", "step", "node", "tensor", "bytes", "offset", "lifetime",
	        "how");
	for (uint32_t k = 0; k < p->ntensors; k++) {
		const PlanTensor *t = &p->tensors[k];
		char label[256], life[32];
		if (t->last >= p->nsteps)
			snprintf(life, sizeof life, "%u-end", t->def);
		else
			snprintf(life, sizeof life, "%u-%u", t->def, t->last);
		fprintf(out, "%5u  %-28s %-28s %12zu %12zu %11s  %s%s%s\n", t->def,
		        ir_node_label(m, p->order[t->def], label, sizeof label), ir_value(m, t->value)->name, t->nbytes,
		        p->bufs[t->buffer].offset, life, how_name(t->how), t->over ? " over " : "",
		        t->over ? ir_value(m, t->over)->name : "");
	}
}

void *plan_json_summary(const Plan *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "peak_bytes", json_integer((json_int_t)p->peak_bytes));
	json_object_set_new(o, "lower_bound_bytes", json_integer((json_int_t)p->lower_bound_bytes));
	json_object_set_new(o, "naive_bytes", json_integer((json_int_t)p->naive_bytes));
	json_object_set_new(o, "strategy", p->strategy ? json_string(p->strategy) : json_null());
	json_object_set_new(o, "nsteps", json_integer(p->nsteps));
	json_object_set_new(o, "tensors", json_integer(p->ntensors));
	json_object_set_new(o, "buffers", json_integer(p->nbufs));
	json_object_set_new(o, "in_place", json_integer(p->ninplace));
	json_object_set_new(o, "views", json_integer(p->nviews));
	json_object_set_new(o, "not_planned", json_integer(p->nskipped));
	json_object_set_new(o, "alignment", json_integer(PLAN_ALIGN));
	json_object_set_new(o, "planning_ms", json_real(p->seconds * 1e3));
	json_object_set_new(o, "rounds", json_integer(p->rounds));
	json_object_set_new(o, "rounds_lowering_peak", json_integer(p->improved_rounds));
	return o;
}

char *plan_json(const Plan *p, bool full)
{
	IrModel *m = p->m;
	json_t *o = plan_json_summary(p);
	json_t *tried = json_object();
	for (int s = 0; s < PLAN_NSTRATEGIES && p->tried[s].name; s++)
		json_object_set_new(tried, p->tried[s].name, json_integer((json_int_t)p->tried[s].peak));
	json_object_set_new(o, "strategies", tried);
	char label[256];
	json_object_set_new(o, "peak_step", json_integer(p->bound_step));
	json_object_set_new(o, "peak_node", p->bound_step < p->nsteps
	                                        ? json_string(ir_node_label(m, p->order[p->bound_step], label, sizeof label))
	                                        : json_null());
	uint32_t *live, nlive = live_at(p, p->bound_step, &live);
	json_t *peak = json_array();
	for (uint32_t i = 0; i < nlive; i++)
		json_array_append_new(peak, json_string(ir_value(m, p->tensors[p->bufs[live[i]].root].value)->name));
	free(live);
	json_object_set_new(o, "peak_tensors", peak);
	json_t *skipped = json_array();
	for (uint32_t i = 0; i < p->nskipped; i++) {
		json_t *s = json_object();
		json_object_set_new(s, "name", json_string(ir_value(m, p->skipped[i].value)->name));
		json_object_set_new(s, "why", json_string(p->skipped[i].why));
		json_array_append_new(skipped, s);
	}
	json_object_set_new(o, "not_planned_values", skipped);
	if (full) {
		json_t *sched = json_array();
		for (uint32_t s = 0; s < p->nsteps; s++)
			json_array_append_new(sched, json_string(ir_node_label(m, p->order[s], label, sizeof label)));
		json_object_set_new(o, "schedule", sched);
		json_t *ts = json_array();
		for (uint32_t k = 0; k < p->ntensors; k++) {
			const PlanTensor *t = &p->tensors[k];
			json_t *j = json_object();
			json_object_set_new(j, "name", json_string(ir_value(m, t->value)->name));
			json_object_set_new(j, "bytes", json_integer((json_int_t)t->nbytes));
			json_object_set_new(j, "size", json_integer((json_int_t)t->size));
			json_object_set_new(j, "offset", json_integer((json_int_t)p->bufs[t->buffer].offset));
			json_object_set_new(j, "first", json_integer(t->def));
			json_object_set_new(j, "last", t->last >= p->nsteps ? json_string("end") : json_integer(t->last));
			json_object_set_new(j, "how", json_string(how_name(t->how)));
			if (t->over)
				json_object_set_new(j, "over", json_string(ir_value(m, t->over)->name));
			json_array_append_new(ts, j);
		}
		json_object_set_new(o, "tensors_planned", ts);
	}
	char *text = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return text;
}
