/* infer.c - the shape inference state and what a rule sees of it: the
 * InferCtx helpers rules read their inputs and fill their outputs with,
 * symbolic broadcasting, merging inferred types into the IR, known values of
 * small shape tensors, and `graft shapes` printing.
 *
 * The bottom of runtime/infer/: the per-op rules (infer_ops.c) call these
 * helpers, and the driver (infer_driver.c) runs the rules, then merges and
 * propagates through infer_merge_type and infer_propagate_known; this file
 * knows no rule.
 *
 * Known values come in two kinds.  Fully known tensors (EvValue) come from
 * initializers, Constant nodes and small nodes evaluated with the reference
 * kernels.  Int vectors known element by element (IVec) may hold symbols:
 * Shape(x) of x: float[N,3] is [N, 3], and that survives Gather, Unsqueeze,
 * Concat, Slice, Cast and simple arithmetic, so Reshape(y, Concat(...))
 * still says [N, ...].  The vector ops are done here rather than with
 * kernels because kernels cannot carry symbols. */
#include "infer_internal.h"
#include "ir/geometry.h"

#include "ir/arena.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Kernels run on known inputs only while both sides stay this small: known
 * values exist to feed shape rules, not to fold weights (fold.c does that). */
#define KNOWN_MAX_OUT 4096
#define KNOWN_MAX_IN  65536

/* ---- state ------------------------------------------------------------------- */

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

void infer_ensure_cap(InferState *s)
{
	uint32_t need = s->m->nvalues + 1;
	if (need <= s->cap)
		return;
	uint32_t cap = s->cap ? s->cap : 64;
	while (cap < need)
		cap *= 2;
	s->val = xrealloc(s->val, sizeof *s->val * cap);
	s->vec = xrealloc(s->vec, sizeof *s->vec * cap);
	s->vec_tried = xrealloc(s->vec_tried, cap);
	s->seq = xrealloc(s->seq, sizeof *s->seq * cap);
	memset(s->seq + s->cap, 0, sizeof *s->seq * (cap - s->cap));
	s->computed = xrealloc(s->computed, sizeof *s->computed * cap);
	memset(s->computed + s->cap, 0, sizeof *s->computed * (cap - s->cap));
	memset(s->val + s->cap, 0, sizeof *s->val * (cap - s->cap));
	memset(s->vec + s->cap, 0, sizeof *s->vec * (cap - s->cap));
	memset(s->vec_tried + s->cap, 0, cap - s->cap);
	s->cap = cap;
}

InferState *infer_new(IrModel *m)
{
	InferState *s = calloc(1, sizeof *s);
	if (!s)
		abort();
	s->m = m;
	infer_ensure_cap(s);
	/* what the model declares, before inference adds to it */
	s->ndecl = m->nvalues;
	s->decl = calloc(s->ndecl + 1, sizeof *s->decl);
	if (!s->decl)
		abort();
	for (ValueId v = 1; v < m->nvalues; v++) {
		IrValue *val = ir_value(m, v);
		if (val->dead || (!val->dtype && val->shape.rank < 0))
			continue;
		DeclType *t = &s->decl[v];
		t->has = true;
		t->dtype = val->dtype;
		t->rank = val->shape.rank;
		if (t->rank > 0) {
			t->dims = xrealloc(NULL, sizeof *t->dims * (size_t)t->rank);
			memcpy(t->dims, val->shape.dims, sizeof *t->dims * (size_t)t->rank);
		}
	}
	s->ndecl_graphs = m->ngraphs;
	s->decl_out = calloc(m->ngraphs + 1, sizeof *s->decl_out);
	if (!s->decl_out)
		abort();
	for (GraphId g = 1; g < m->ngraphs; g++) {
		IrGraph *gr = ir_graph(m, g);
		s->decl_out[g] = xrealloc(NULL, sizeof(ValueId) * (gr->noutputs + 1));
		memcpy(s->decl_out[g], gr->outputs, sizeof(ValueId) * gr->noutputs);
		s->decl_out[g][gr->noutputs] = 0;
	}
	return s;
}

EvValue *infer_take_value(InferState *s, ValueId v)
{
	if (!v || v >= s->cap || !s->val[v])
		return NULL;
	EvValue *x = s->val[v];
	s->val[v] = NULL;
	free(s->vec[v]);
	s->vec[v] = NULL;
	s->vec_tried[v] = 0;
	return x;
}

void infer_sweep(InferState *s)
{
	/* the cache's own arrays first (sequential), the IR's values only
	 * where something is cached */
	for (ValueId v = 1; v < s->cap && v < s->m->nvalues; v++)
		if ((s->val[v] || s->vec[v]) && s->m->values[v].dead) {
			ev_unref(s->val[v]);
			s->val[v] = NULL;
			free(s->vec[v]);
			s->vec[v] = NULL;
			s->vec_tried[v] = 0;
		}
}

void infer_free(InferState *s)
{
	if (!s)
		return;
	for (uint32_t v = 0; v < s->cap; v++) {
		ev_unref(s->val[v]);
		free(s->vec[v]);
		free(s->seq[v]);
		free(s->computed[v]);
	}
	free(s->seq);
	free(s->computed);
	free(s->queued);
	for (uint32_t v = 0; v < s->ndecl; v++)
		free(s->decl[v].dims);
	for (uint32_t g = 0; g < s->ndecl_graphs; g++)
		free(s->decl_out[g]);
	free(s->decl);
	free(s->decl_out);
	free(s->val);
	free(s->vec);
	free(s->vec_tried);
	free(s);
}

static IVec *vec_new(int rank, int n)
{
	IVec *v = calloc(1, sizeof *v + sizeof(SymInt) * (size_t)(n ? n : 1));
	if (!v)
		abort();
	v->rank = rank;
	v->n = n;
	return v;
}

static bool is_int_dtype(int dt)
{
	switch (dt) {
	case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64:
	case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64: case DT_BOOL:
		return true;
	default:
		return false;
	}
}

/* The fully known value of v: cached, or an initializer that callers cannot
 * override (an initializer that is also a graph input is not a constant). */
static EvValue *known_val(InferState *s, ValueId v)
{
	if (!v)
		return NULL;
	infer_ensure_cap(s);
	if (s->val[v])
		return s->val[v];
	if (ir_is_constant(s->m, v))
		s->val[v] = ev_value_from_ir_tensor(s->m, ir_value(s->m, v)->tensor);
	return s->val[v];
}

static const IVec *known_vec(InferState *s, ValueId v)
{
	if (!v)
		return NULL;
	infer_ensure_cap(s);
	if (s->vec[v] || s->vec_tried[v])
		return s->vec[v];
	if (!s->val[v] && ir_is_constant(s->m, v)) {
		/* a weight is no vector: decide from its header, not its bytes
		 * (reading them may copy them, see ir_tensor_bytes) */
		const IrTensor *t = ir_tensor(s->m, ir_value(s->m, v)->tensor);
		if (!is_int_dtype(t->dtype) || t->rank > 1 || t->numel > INF_VEC_MAX) {
			s->vec_tried[v] = 1;
			return NULL;
		}
	}
	EvValue *x = known_val(s, v);
	if (!x)
		return NULL;    /* not tried: a later propagation may know it */
	s->vec_tried[v] = 1;
	if (x->kind != EV_TENSOR || !is_int_dtype(x->dtype) || x->rank > 1 || x->numel > INF_VEC_MAX)
		return NULL;
	IVec *iv = vec_new(x->rank, (int)x->numel);
	for (int64_t i = 0; i < x->numel; i++) {
		iv->e[i].known = true;
		iv->e[i].v = ev_get_i(x, i);
	}
	s->vec[v] = iv;
	return iv;
}

const EvValue *infer_known_value(InferState *s, ValueId v)
{
	return known_val(s, v);
}

int infer_known_ints(InferState *s, ValueId v, int64_t *vals, const char **syms, int max)
{
	const IVec *iv = known_vec(s, v);
	if (!iv || iv->rank != 1 || iv->n > max)
		return -1;
	for (int i = 0; i < iv->n; i++) {
		vals[i] = iv->e[i].known ? iv->e[i].v : -1;
		syms[i] = iv->e[i].known ? NULL : iv->e[i].sym;
		if (!iv->e[i].known && !iv->e[i].sym)
			return -1;
	}
	return iv->n;
}

/* ---- helpers for rules --------------------------------------------------------- */

bool inf_fail(InferCtx *c, const char *fmt, ...)
{
	char msg[700], label[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_error(c->d, c->m->path ? c->m->path : "model", "node '%s' (%s): %s",
	           ir_node_label(c->m, c->n, label, sizeof label), c->node->op_type, msg);
	c->failed = true;
	return false;
}

int inf_nin(InferCtx *c) { return (int)c->node->ninputs; }

bool inf_has(InferCtx *c, int i)
{
	return i >= 0 && i < (int)c->node->ninputs && c->node->inputs[i] != 0;
}

int inf_dtype(InferCtx *c, int i)
{
	return inf_has(c, i) ? ir_value(c->m, c->node->inputs[i])->dtype : DT_UNDEFINED;
}

/* An input of rank over IR_MAX_RANK is seen as one of unknown rank: rules
 * size their scratch dims by INF_MAX_RANK. */
int inf_rank(InferCtx *c, int i)
{
	int r = inf_has(c, i) ? ir_value(c->m, c->node->inputs[i])->shape.rank : -1;
	return r <= IR_MAX_RANK ? r : -1;
}

const Dim *inf_dims(InferCtx *c, int i)
{
	if (inf_rank(c, i) < 0)
		return NULL;
	static const Dim none[1];
	/* a graph output whose declared symbols renamed what it computes: its
	 * consumers see what it computes (LLaMA's present_key is declared
	 * [batch, kv, total, d] and computed [batch, kv, seq, d]; the causal
	 * mask beside it says seq) */
	ValueId v = c->node->inputs[i];
	const InferOut *o = v < c->s->cap ? c->s->computed[v] : NULL;
	if (o && o->rank == inf_rank(c, i))
		return o->dims;
	const Dim *d = ir_value(c->m, v)->shape.dims;
	return d ? d : none;
}

const EvValue *inf_val(InferCtx *c, int i)
{
	return inf_has(c, i) ? known_val(c->s, c->node->inputs[i]) : NULL;
}

const IVec *inf_vec(InferCtx *c, int i)
{
	return inf_has(c, i) ? known_vec(c->s, c->node->inputs[i]) : NULL;
}

int inf_ints(InferCtx *c, int i, int64_t *out, int max)
{
	const IVec *v = inf_vec(c, i);
	if (v) {
		if (v->n > max)
			return -1;
		for (int k = 0; k < v->n; k++) {
			if (!v->e[k].known)
				return -1;
			out[k] = v->e[k].v;
		}
		return v->n;
	}
	const EvValue *x = inf_val(c, i);
	if (!x || x->kind != EV_TENSOR || !is_int_dtype(x->dtype) || x->numel > max)
		return -1;
	for (int64_t k = 0; k < x->numel; k++)
		out[k] = ev_get_i(x, k);
	return (int)x->numel;
}

int inf_floats(InferCtx *c, int i, double *out, int max)
{
	const EvValue *x = inf_val(c, i);
	if (x && x->kind == EV_TENSOR && x->numel <= max && x->dtype != DT_STRING && ev_elem_size(x->dtype)) {
		for (int64_t k = 0; k < x->numel; k++)
			out[k] = ev_get_f(x, k);
		return (int)x->numel;
	}
	int64_t tmp[INF_VEC_MAX];
	int n = inf_ints(c, i, tmp, max < INF_VEC_MAX ? max : INF_VEC_MAX);
	for (int k = 0; k < n; k++)
		out[k] = (double)tmp[k];
	return n;
}

bool inf_has_attr(InferCtx *c, const char *name)
{
	return ir_attr(c->m, c->n, name) != NULL;
}

int64_t inf_attr_i(InferCtx *c, const char *name, int64_t def)
{
	const IrAttr *a = ir_attr(c->m, c->n, name);
	return a && a->type == ATTR_INT ? a->i : def;
}

float inf_attr_f(InferCtx *c, const char *name, float def)
{
	const IrAttr *a = ir_attr(c->m, c->n, name);
	return a && a->type == ATTR_FLOAT ? a->f : def;
}

int inf_attr_ints(InferCtx *c, const char *name, const int64_t **v)
{
	const IrAttr *a = ir_attr(c->m, c->n, name);
	if (!a || a->type != ATTR_INTS) {
		*v = NULL;
		return -1;
	}
	*v = a->ints;
	return (int)a->n;
}

int inf_attr_floats(InferCtx *c, const char *name, const float **v)
{
	const IrAttr *a = ir_attr(c->m, c->n, name);
	if (!a || a->type != ATTR_FLOATS) {
		*v = NULL;
		return -1;
	}
	*v = a->floats;
	return (int)a->n;
}

const char *inf_attr_s(InferCtx *c, const char *name, const char *def, char *buf, size_t size)
{
	const IrAttr *a = ir_attr(c->m, c->n, name);
	if (!a || a->type != ATTR_STRING)
		return def;
	size_t n = a->s.len < size - 1 ? a->s.len : size - 1;
	if (n)
		memcpy(buf, a->s.data, n);
	buf[n] = 0;
	return buf;
}

void inf_set(InferCtx *c, int o, int dtype, int rank, const Dim *dims)
{
	if (o < 0 || o >= c->nout)
		return;
	InferOut *out = &c->out[o];
	out->dtype = dtype;
	if (rank > IR_MAX_RANK)
		rank = -1;
	out->rank = rank;
	/* known dims whose product overflows int64 are no shape a model can
	 * declare (the loader refuses them): the dim that overflows is unknown */
	int64_t numel = 1, next;  /* of the known dims kept */
	for (int i = 0; i < rank; i++) {
		out->dims[i] = dims ? dims[i] : dim_unknown();
		if (!dim_known(out->dims[i]))
			continue;
		if (__builtin_mul_overflow(numel, out->dims[i].size, &next))
			out->dims[i] = dim_unknown();
		else
			numel = next;
	}
}

const InferOut *inf_seq(InferCtx *c, int i)
{
	return inf_has(c, i) ? c->s->seq[c->node->inputs[i]] : NULL;
}

void inf_set_seq(InferCtx *c, int o, int dtype, int rank, const Dim *dims)
{
	inf_set(c, o, dtype, rank, dims);
	if (o >= 0 && o < c->nout)
		c->out[o].is_seq = true;
}

void inf_set_dtype(InferCtx *c, int o, int dtype)
{
	if (o >= 0 && o < c->nout)
		c->out[o].dtype = dtype;
}

void inf_copy(InferCtx *c, int o, int i)
{
	inf_set(c, o, inf_dtype(c, i), inf_rank(c, i), inf_dims(c, i));
}

bool dim_same(Dim a, Dim b)
{
	if (dim_known(a) || dim_known(b))
		return a.size == b.size;
	return a.param && b.param && strcmp(a.param, b.param) == 0;
}

bool dim_unify(Dim a, Dim b, Dim *out)
{
	if (dim_known(a) && dim_known(b)) {
		*out = a;
		return a.size == b.size;
	}
	*out = dim_known(a) ? a : dim_known(b) ? b : a.param ? a : b;
	return true;
}

bool inf_broadcast(InferCtx *c, int ra, const Dim *a, int rb, const Dim *b, int *rout, Dim *out)
{
	int r = ra > rb ? ra : rb;
	if (r > IR_MAX_RANK) {
		*rout = -1;
		return true;
	}
	*rout = r;
	for (int i = 0; i < r; i++) {
		int ia = i - (r - ra), ib = i - (r - rb);
		Dim x = ia >= 0 ? a[ia] : dim_n(1), y = ib >= 0 ? b[ib] : dim_n(1);
		Dim z;
		if (x.size == 1)
			z = y;
		else if (y.size == 1)
			z = x;
		else if (dim_known(x) && dim_known(y)) {
			if (x.size != y.size)
				return inf_fail(c, "dimensions %lld and %lld do not broadcast", (long long)x.size, (long long)y.size);
			z = x;
		} else if (dim_known(x))
			z = x;       /* the symbol must be 1 or equal: either way the number */
		else if (dim_known(y))
			z = y;
		else if (dim_same(x, y))
			z = x;
		else
			z = dim_unknown();
		out[i] = z;
	}
	return true;
}

bool inf_axis(InferCtx *c, int64_t axis, int rank, int *out)
{
	int64_t a = axis < 0 ? axis + rank : axis;
	if (a < 0 || a >= rank)
		return inf_fail(c, "axis %lld is out of range for rank %d", (long long)axis, rank);
	*out = (int)a;
	return true;
}

Dim dim_from_sym(SymInt e)
{
	if (e.known)
		return e.v >= 0 ? dim_n(e.v) : dim_unknown();
	Dim d = {-1, e.sym};
	return d;
}

/* ---- merging inferred types into the IR -------------------------------------- */

static bool shape_equal(const Shape *a, int rank, const Dim *dims)
{
	if (a->rank != rank)
		return false;
	for (int i = 0; i < rank; i++) {
		Dim x = a->dims[i], y = dims[i];
		if (x.size != y.size)
			return false;
		if (!x.param != !y.param || (x.param && strcmp(x.param, y.param) != 0))
			return false;
	}
	return true;
}

/* The declared type of v: its own, or, for a graph output that a rewrite
 * replaced, that of the value first declared at its output slot. */
static const DeclType *declared(InferState *s, ValueId v)
{
	IrModel *m = s->m;
	if (v < s->ndecl && s->decl[v].has)
		return &s->decl[v];
	IrValue *val = ir_value(m, v);
	if (!val->is_output || val->graph >= s->ndecl_graphs || !s->decl_out[val->graph])
		return NULL;
	IrGraph *g = ir_graph(m, val->graph);
	for (uint32_t i = 0; i < g->noutputs && s->decl_out[val->graph][i]; i++) {
		ValueId old = s->decl_out[val->graph][i];
		if (g->outputs[i] == v && old < s->ndecl && s->decl[old].has)
			return &s->decl[old];
	}
	return NULL;
}

/* Give value v the inferred type merged with its declared one.  Inference
 * wins, except that a declared dim fills one inference leaves unknown (not
 * one it leaves unknown on purpose: InferOut.contested), and
 * a graph output keeps its declared symbols (the interface names them);
 * two different numbers, dtypes or ranks on a graph output are an error.
 * Sets *changed if the IR's type changed. */
/* The symbol of v's unknown dim i (infer_name_unknown_dims): the one v has
 * already, else a new one in the model's arena. */
static const char *unknown_dim_name(IrModel *m, ValueId v, int i)
{
	const IrValue *val = ir_value(m, v);
	char name[64];
	snprintf(name, sizeof name, IR_ANON_DIM_PREFIX "v%u.%d", (unsigned)v, i);
	if (i < val->shape.rank && val->shape.dims[i].param && !strcmp(val->shape.dims[i].param, name))
		return val->shape.dims[i].param;
	return arena_strdup(m->arena, name);
}

bool infer_merge_type(InferCtx *c, ValueId v, const InferOut *o, bool *changed)
{
	IrModel *m = c->m;
	IrValue *val = ir_value(m, v);
	if (val->non_tensor)
		return true; /* declared a sequence, optional or map: not the IR's to type */
	const DeclType *dt = declared(c->s, v);
	bool iface = val->is_output && dt;
	int dtype = o->dtype ? o->dtype : dt ? dt->dtype : DT_UNDEFINED;
	if (iface && dt->dtype && o->dtype && dt->dtype != o->dtype)
		return inf_fail(c, "output '%s' is declared %s but computes %s", val->name,
		                dtype_name(dt->dtype), dtype_name(o->dtype));
	Dim dims[INF_MAX_RANK];
	int rank = o->rank;
	bool renamed = false;
	if (rank < 0) {
		rank = dt && dt->rank <= IR_MAX_RANK && !o->contested ? dt->rank : -1;
		for (int i = 0; i < rank; i++)
			dims[i] = dt->dims[i];
	} else {
		bool same_rank = dt && dt->rank == rank;
		if (iface && dt->rank >= 0 && !same_rank)
			return inf_fail(c, "output '%s' is declared with rank %d but computes rank %d", val->name,
			                dt->rank, rank);
		for (int i = 0; i < rank; i++) {
			Dim x = o->dims[i];
			Dim old = same_rank ? dt->dims[i] : dim_unknown();
			if (iface && dim_known(old) && dim_known(x) && old.size != x.size)
				return inf_fail(c, "output '%s' dim %d is declared %lld but computes %lld", val->name, i,
				                (long long)old.size, (long long)x.size);
			if (!dim_known(x) && !x.param && !(i < 32 && o->contested >> i & 1))
				x = old;
			else if (iface && !dim_known(x) && (dim_known(old) || old.param)) {
				if (x.param && old.param && strcmp(x.param, old.param) != 0)
					renamed = true;
				x = old;
			}
			if (c->s->name_unknown && !dim_known(x) && !x.param && !(i < 32 && o->contested >> i & 1))
				x.param = unknown_dim_name(m, v, i);
			dims[i] = x;
		}
	}
	/* what the graph output computes, where its declared symbols renamed
	 * it: a rewrite's result is compared with that (infer_computed_dim) */
	if (v < c->s->cap) {
		free(c->s->computed[v]);
		c->s->computed[v] = NULL;
		if (renamed) {
			c->s->computed[v] = xrealloc(NULL, sizeof *o);
			*c->s->computed[v] = *o;
		}
	}
	if (dtype == val->dtype && shape_equal(&val->shape, rank, dims))
		return true;
	Shape sh = {rank, dims};
	ir_value_set_type(m, v, dtype, &sh);
	*changed = true;
	return true;
}

void infer_name_unknown_dims(InferState *s, bool on) { s->name_unknown = on; }

bool infer_computed_dim(InferState *s, ValueId v, int i, Dim *out)
{
	const InferOut *o = s && v < s->cap ? s->computed[v] : NULL;
	if (!o || i < 0 || i >= o->rank)
		return false;
	*out = o->dims[i];
	return true;
}

/* ---- known values: int vectors with symbols ------------------------------------ */

#define SYM_SUM_MAX_TERMS 8

/* Split a sum symbol "a + b + c" into terms (pointers into buf); count or -1. */
static int sum_terms(const char *s, char *buf, size_t cap, const char **terms, int n)
{
	if (strlen(s) >= cap)
		return -1;
	strcpy(buf, s);
	char *p = buf;
	for (;;) {
		if (n == SYM_SUM_MAX_TERMS)
			return -1;
		terms[n++] = p;
		char *plus = strstr(p, " + ");
		if (!plus)
			return n;
		*plus = 0;
		p = plus + 3;
	}
}

static int cmp_term(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The name a sum's terms or a product's factors make: `lead` (a product's
 * number, or "") then the n parts sorted and joined with sep, in m's arena;
 * NULL when it would be too long. */
static const char *sorted_name(IrModel *m, const char *lead, const char **parts, int n, const char *sep)
{
	char out[520];
	qsort(parts, (size_t)n, sizeof *parts, cmp_term);
	size_t len = (size_t)snprintf(out, sizeof out, "%s", lead);
	for (int i = 0; i < n; i++) {
		int k = snprintf(out + len, sizeof out - len, "%s%s", len ? sep : "", parts[i]);
		if (k < 0 || (size_t)k >= sizeof out - len)
			return NULL;
		len += (size_t)k;
	}
	return arena_strdup(m->arena, out);
}

const char *sym_sum_name(IrModel *m, const char *a, const char *b)
{
	char ba[256], bb[256];
	const char *terms[SYM_SUM_MAX_TERMS];
	int n = sum_terms(a, ba, sizeof ba, terms, 0);
	if (n < 0 || (n = sum_terms(b, bb, sizeof bb, terms, n)) < 0)
		return NULL;
	return sorted_name(m, "", terms, n, " + ");
}

#define SYM_PROD_MAX_FACTORS 8

/* Split a product symbol "4*batch*seq" (a sum is none) into its number
 * (1 when it has none) and its symbol factors (pointers into buf): count,
 * or -1. */
static int prod_factors(const char *s, char *buf, size_t cap, int64_t *coef, const char **f, int n)
{
	if (strlen(s) >= cap || strstr(s, " + "))
		return -1;
	strcpy(buf, s);
	for (char *p = buf;;) {
		char *star = strchr(p, '*');
		if (star)
			*star = 0;
		if (*p >= '0' && *p <= '9') {
			char *end;
			long long k = strtoll(p, &end, 10);
			if (*end || __builtin_mul_overflow(*coef, (int64_t)k, coef))
				return -1;
		} else if (n == SYM_PROD_MAX_FACTORS || !*p) {
			return -1;
		} else {
			f[n++] = p;
		}
		if (!star)
			return n;
		p = star + 1;
	}
}

/* The symbol of the product of two (k a dim's number, 1 if none): its
 * number first, then its symbols sorted, joined with "*" (4*batch from
 * Mul(batch, 4), batch*seq, 17*batch), so one product has one name; NULL
 * for a sum or a product too long; in m's arena. */
static const char *sym_prod_name(IrModel *m, const char *a, const char *b, int64_t k)
{
	char ba[256], bb[256], lead[24] = "";
	const char *f[SYM_PROD_MAX_FACTORS];
	int64_t coef = k;
	int n = a ? prod_factors(a, ba, sizeof ba, &coef, f, 0) : 0;
	if (n < 0 || (b && (n = prod_factors(b, bb, sizeof bb, &coef, f, n)) < 0) || n == 0 || coef < 1)
		return NULL;
	if (coef != 1)
		snprintf(lead, sizeof lead, "%lld", (long long)coef);
	return sorted_name(m, lead, f, n, "*");
}

static SymInt sym_known(int64_t v) { SymInt e = {true, v, NULL}; return e; }
static SymInt sym_unknown(void) { SymInt e = {false, 0, NULL}; return e; }

/* Elementwise arithmetic on one pair; symbols survive x*1, x+0, x-0, x/1,
 * two symbols add to their sum's symbol (sym_sum_name) and multiply, with
 * each other or a positive number, to their product's (sym_prod_name). */
static SymInt sym_arith(IrModel *m, OpKind op, SymInt a, SymInt b)
{
	if (a.known && b.known) {
		int64_t x = a.v, y = b.v;
		switch (op) {
		case OP_Add: return sym_known((int64_t)((uint64_t)x + (uint64_t)y));
		case OP_Sub: return sym_known((int64_t)((uint64_t)x - (uint64_t)y));
		case OP_Mul: return sym_known((int64_t)((uint64_t)x * (uint64_t)y));
		case OP_Div: return y == 0 || (x == INT64_MIN && y == -1) ? sym_unknown() : sym_known(x / y);
		case OP_Mod: {
			if (y == 0 || (x == INT64_MIN && y == -1))
				return sym_unknown();
			int64_t r = x % y;  /* ONNX Mod (fmod=0) takes the divisor's sign */
			if (r != 0 && ((r < 0) != (y < 0)))
				r += y;
			return sym_known(r);
		}
		case OP_Max: return sym_known(x > y ? x : y);
		case OP_Min: return sym_known(x < y ? x : y);
		case OP_Equal: return sym_known(x == y);
		default: return sym_unknown();
		}
	}
	switch (op) {
	case OP_Add:
		if (b.known && b.v == 0) return a;
		if (a.known && a.v == 0) return b;
		if (!a.known && !b.known && a.sym && b.sym) {
			SymInt e = {false, 0, sym_sum_name(m, a.sym, b.sym)};
			if (e.sym)
				return e;
		}
		break;
	case OP_Sub: if (b.known && b.v == 0) return a; break;
	case OP_Mul:
		if (b.known && b.v == 1) return a;
		if (a.known && a.v == 1) return b;
		if ((a.known && a.v == 0) || (b.known && b.v == 0)) return sym_known(0);
		/* a product of symbols, or of one and a positive number, is named
		 * for it (sym_prod_name): a merge's target [seq * batch, D] */
		if ((a.sym || a.known) && (b.sym || b.known)) {
			SymInt e = {false, 0, sym_prod_name(m, a.sym, b.sym, (a.known ? a.v : 1) * (b.known ? b.v : 1))};
			if (e.sym)
				return e;
		}
		break;
	case OP_Div: if (b.known && b.v == 1) return a; break;
	case OP_Max: case OP_Min:
		if (!a.known && !b.known && a.sym && b.sym && strcmp(a.sym, b.sym) == 0) return a;
		break;
	case OP_Equal:
		if (!a.known && !b.known && a.sym && b.sym && strcmp(a.sym, b.sym) == 0) return sym_known(1);
		/* a symbol stands for a dim, never negative: Expand's -1 test */
		if ((a.sym && b.known && b.v < 0) || (b.sym && a.known && a.v < 0)) return sym_known(0);
		break;
	default: break;
	}
	return sym_unknown();
}

/* Broadcast two vectors of rank <= 1: the result's length, or -1. */
static int vec_bcast_len(const IVec *a, const IVec *b, int *rank)
{
	*rank = a->rank > b->rank ? a->rank : b->rank;
	if (a->n == b->n)
		return a->n;
	if (a->n == 1)
		return b->n;
	if (b->n == 1)
		return a->n;
	return -1;
}

static SymInt vec_at(const IVec *v, int i) { return v->e[v->n == 1 ? 0 : i]; }

/* Converting ints to another int dtype, as Cast does (wrapping). */
static int64_t cast_int(int64_t x, int dt)
{
	switch (dt) {
	case DT_INT8: return (int8_t)x;
	case DT_INT16: return (int16_t)x;
	case DT_INT32: return (int32_t)x;
	case DT_UINT8: return (uint8_t)x;
	case DT_UINT16: return (uint16_t)x;
	case DT_UINT32: return (uint32_t)x;
	case DT_BOOL: return x != 0;
	default: return x;
	}
}

/* The vector an op computes from its inputs' vectors, or NULL. */
static IVec *propagate_vec(InferCtx *c)
{
	IrNode *node = c->node;
	OpKind op = node->kind;
	const IVec *a = inf_vec(c, 0), *b = inf_vec(c, 1);
	int out_dt = c->nout > 0 ? c->out[0].dtype : DT_UNDEFINED;
	int64_t ints[INF_VEC_MAX];
	IVec *r = NULL;
	switch (op) {
	case OP_Shape: {
		int rank = inf_rank(c, 0);
		if (rank < 0 || rank > INF_VEC_MAX)
			return NULL;
		int64_t start = inf_attr_i(c, "start", 0), end = inf_attr_i(c, "end", rank);
		if (start < 0) start += rank;
		if (end < 0) end += rank;
		start = start < 0 ? 0 : start > rank ? rank : start;
		end = end < 0 ? 0 : end > rank ? rank : end;
		int n = end > start ? (int)(end - start) : 0;
		r = vec_new(1, n);
		const Dim *d = inf_dims(c, 0);
		for (int i = 0; i < n; i++) {
			Dim x = d[start + i];
			r->e[i] = dim_known(x) ? sym_known(x.size) : (SymInt){false, 0, x.param};
		}
		return r;
	}
	case OP_Size: {
		int rank = inf_rank(c, 0);
		if (rank < 0)
			return NULL;
		const Dim *d = inf_dims(c, 0);
		int64_t n = 1;
		for (int i = 0; i < rank; i++) {
			if (!dim_known(d[i]) || __builtin_mul_overflow(n, d[i].size, &n))
				return NULL;  /* not known, or not an int64 */
		}
		r = vec_new(0, 1);
		r->e[0] = sym_known(n);
		return r;
	}
	case OP_Identity:
		if (!a)
			return NULL;
		r = vec_new(a->rank, a->n);
		memcpy(r->e, a->e, sizeof *a->e * (size_t)a->n);
		return r;
	case OP_Cast:
		if (!a || !is_int_dtype(out_dt))
			return NULL;
		r = vec_new(a->rank, a->n);
		for (int i = 0; i < a->n; i++) {
			r->e[i] = a->e[i];
			if (a->e[i].known)
				r->e[i].v = cast_int(a->e[i].v, out_dt);
			else if (out_dt == DT_BOOL)
				r->e[i].sym = NULL;
		}
		return r;
	case OP_Neg:
		if (!a)
			return NULL;
		r = vec_new(a->rank, a->n);
		for (int i = 0; i < a->n; i++)
			r->e[i] = a->e[i].known ? sym_known(-a->e[i].v) : sym_unknown();
		return r;
	case OP_Reshape: case OP_Flatten: case OP_Squeeze: case OP_Unsqueeze: case OP_Expand: {
		/* moves of a small vector: same elements, new rank */
		if (!a || c->nout < 1 || c->out[0].rank < 0 || c->out[0].rank > 1)
			return NULL;
		int n = c->out[0].rank == 0 ? 1 : (int)c->out[0].dims[0].size;
		if (op == OP_Expand && n > INF_VEC_MAX)
			return NULL;
		if (n < 0 || (n != a->n && !(op == OP_Expand && a->n == 1)))
			return NULL;
		r = vec_new(c->out[0].rank, n);
		for (int i = 0; i < n; i++)
			r->e[i] = vec_at(a, i);
		return r;
	}
	case OP_Gather: {
		if (!a || a->rank != 1)
			return NULL;
		int ni = inf_ints(c, 1, ints, INF_VEC_MAX);
		int irank = inf_rank(c, 1);
		if (ni < 0 || irank < 0 || irank > 1)
			return NULL;
		r = vec_new(irank, ni);
		for (int i = 0; i < ni; i++) {
			int64_t k = ints[i] < 0 ? ints[i] + a->n : ints[i];
			if (k < 0 || k >= a->n) {
				free(r);
				return NULL;
			}
			r->e[i] = a->e[k];
		}
		return r;
	}
	case OP_Concat: {
		int total = 0;
		for (int i = 0; i < inf_nin(c); i++) {
			const IVec *x = inf_vec(c, i);
			if (!x || x->rank != 1)
				return NULL;
			total += x->n;
		}
		if (total > INF_VEC_MAX)
			return NULL;
		r = vec_new(1, total);
		total = 0;
		for (int i = 0; i < inf_nin(c); i++) {
			const IVec *x = inf_vec(c, i);
			memcpy(r->e + total, x->e, sizeof *x->e * (size_t)x->n);
			total += x->n;
		}
		return r;
	}
	case OP_Slice: {
		if (!a || a->rank != 1)
			return NULL;
		int64_t st, en, ax = 0, step = 1;
		if (c->opset < 10) {
			const int64_t *s, *e, *x;
			if (inf_attr_ints(c, "starts", &s) != 1 || inf_attr_ints(c, "ends", &e) != 1)
				return NULL;
			int nx = inf_attr_ints(c, "axes", &x);
			st = s[0], en = e[0], ax = nx == 1 ? x[0] : 0;
		} else {
			int64_t v[1];
			if (inf_ints(c, 1, v, 1) != 1) return NULL;
			st = v[0];
			if (inf_ints(c, 2, v, 1) != 1) return NULL;
			en = v[0];
			if (inf_has(c, 3)) { if (inf_ints(c, 3, v, 1) != 1) return NULL; ax = v[0]; }
			if (inf_has(c, 4)) { if (inf_ints(c, 4, v, 1) != 1) return NULL; step = v[0]; }
		}
		if ((ax != 0 && ax != -1) || step == 0)
			return NULL;
		int64_t first, n = ir_slice_range(a->n, st, en, step, &first);
		r = vec_new(1, (int)n);
		for (int64_t i = 0; i < n; i++)
			r->e[i] = a->e[first + i * step];
		return r;
	}
	case OP_Add: case OP_Sub: case OP_Mul: case OP_Div: case OP_Mod: case OP_Equal:
	case OP_Max: case OP_Min: {
		if (op == OP_Mod && inf_attr_i(c, "fmod", 0))
			return NULL;
		if ((op == OP_Max || op == OP_Min) && inf_nin(c) != 2)
			return NULL;
		if (!a || !b || !is_int_dtype(inf_dtype(c, 0)))
			return NULL;
		int rank, n = vec_bcast_len(a, b, &rank);
		if (n < 0)
			return NULL;
		r = vec_new(rank, n);
		for (int i = 0; i < n; i++) {
			r->e[i] = sym_arith(c->m, op, vec_at(a, i), vec_at(b, i));
			if (r->e[i].known && out_dt != DT_BOOL)
				r->e[i].v = cast_int(r->e[i].v, inf_dtype(c, 0));
		}
		return r;
	}
	case OP_Where: {
		const IVec *x = inf_vec(c, 1), *y = inf_vec(c, 2);
		if (!a || !x || !y)
			return NULL;
		int r1, r2, n1 = vec_bcast_len(a, x, &r1);
		if (n1 < 0)
			return NULL;
		IVec tmp = {r1, n1};
		int n = vec_bcast_len(&tmp, y, &r2);
		if (n < 0 || (n1 != n && n1 != 1))
			return NULL;
		r = vec_new(r2, n);
		for (int i = 0; i < n; i++) {
			SymInt cnd = vec_at(a, i);
			r->e[i] = !cnd.known ? sym_unknown() : cnd.v ? vec_at(x, i) : vec_at(y, i);
		}
		return r;
	}
	case OP_Range: {
		int64_t s0[1], l0[1], d0[1];
		if (!is_int_dtype(out_dt) || inf_ints(c, 0, s0, 1) != 1 || inf_ints(c, 1, l0, 1) != 1 ||
		    inf_ints(c, 2, d0, 1) != 1 || d0[0] == 0)
			return NULL;
		if (c->out[0].rank != 1 || !dim_known(c->out[0].dims[0]) || c->out[0].dims[0].size > INF_VEC_MAX)
			return NULL;
		int n = (int)c->out[0].dims[0].size;
		r = vec_new(1, n);
		for (int i = 0; i < n; i++)
			r->e[i] = sym_known(s0[0] + i * d0[0]);
		return r;
	}
	case OP_ConstantOfShape: {
		if (!is_int_dtype(out_dt) || c->out[0].rank < 0 || c->out[0].rank > 1)
			return NULL;
		int n = c->out[0].rank == 0 ? 1 : (int)c->out[0].dims[0].size;
		if (n < 0 || n > INF_VEC_MAX)
			return NULL;
		int64_t fill = 0;
		const IrAttr *va = ir_attr(c->m, c->n, "value");
		if (va && va->type == ATTR_TENSOR) {
			EvValue *t = ev_value_from_ir_tensor(c->m, va->t);
			if (!t || t->numel != 1) {
				ev_unref(t);
				return NULL;
			}
			fill = ev_get_i(t, 0);
			ev_unref(t);
		}
		r = vec_new(c->out[0].rank, n);
		for (int i = 0; i < n; i++)
			r->e[i] = sym_known(fill);
		return r;
	}
	default:
		return NULL;
	}
}

static bool vec_all_known(const IVec *v)
{
	for (int i = 0; i < v->n; i++)
		if (!v->e[i].known)
			return false;
	return true;
}

static bool vec_equal(const IVec *a, const IVec *b)
{
	if (!a || !b)
		return a == b;
	if (a->rank != b->rank || a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++) {
		SymInt x = a->e[i], y = b->e[i];
		if (x.known != y.known || (x.known && x.v != y.v))
			return false;
		if (!x.known && (!x.sym != !y.sym || (x.sym && strcmp(x.sym, y.sym) != 0)))
			return false;
	}
	return true;
}

static bool val_equal(const EvValue *a, const EvValue *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != EV_TENSOR || b->kind != EV_TENSOR)
		return false;
	if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes)
		return false;
	if (memcmp(a->dims, b->dims, sizeof *a->dims * (size_t)a->rank) != 0)
		return false;
	return a->dtype != DT_STRING && memcmp(a->data, b->data, a->nbytes) == 0;
}

static EvValue *val_from_vec(const IVec *v, int dtype)
{
	int64_t dims[1] = {v->n};
	EvValue *x = ev_tensor_new(dtype, v->rank, dims);
	if (!x)
		return NULL;
	for (int i = 0; i < v->n; i++)
		ev_set_i(x, i, v->e[i].v);
	return x;
}

/* The value of a Constant node from whichever attribute it has. */
static EvValue *constant_value(InferCtx *c)
{
	IrModel *m = c->m;
	IrNode *node = c->node;
	for (uint32_t i = 0; i < node->nattrs; i++) {
		const IrAttr *a = &node->attrs[i];
		int64_t dims[1] = {(int64_t)a->n};
		EvValue *x = NULL;
		if (!strcmp(a->name, "value") && a->type == ATTR_TENSOR) {
			EvValue *t = ev_value_from_ir_tensor(m, a->t);
			/* the attribute's tensor belongs to the node, which a rewrite may
			 * remove: keep a copy of small ones, borrow big ones (read only) */
			if (t && t->numel <= KNOWN_MAX_OUT && t->dtype != DT_STRING) {
				x = ev_copy(t);
				ev_unref(t);
			} else
				x = t;
		} else if (!strcmp(a->name, "value_int") && a->type == ATTR_INT) {
			x = ev_tensor_new(DT_INT64, 0, dims);
			if (x) ev_set_i(x, 0, a->i);
		} else if (!strcmp(a->name, "value_ints") && a->type == ATTR_INTS) {
			x = ev_tensor_new(DT_INT64, 1, dims);
			for (size_t k = 0; x && k < a->n; k++) ev_set_i(x, (int64_t)k, a->ints[k]);
		} else if (!strcmp(a->name, "value_float") && a->type == ATTR_FLOAT) {
			x = ev_tensor_new(DT_FLOAT, 0, dims);
			if (x) ev_set_f(x, 0, a->f);
		} else if (!strcmp(a->name, "value_floats") && a->type == ATTR_FLOATS) {
			x = ev_tensor_new(DT_FLOAT, 1, dims);
			for (size_t k = 0; x && k < a->n; k++) ev_set_f(x, (int64_t)k, a->floats[k]);
		} else
			continue;
		return x;
	}
	return NULL;
}

static int64_t out_numel(const InferOut *o)
{
	if (o->rank < 0)
		return -1;
	int64_t n = 1;
	for (int i = 0; i < o->rank; i++) {
		if (!dim_known(o->dims[i]) || __builtin_mul_overflow(n, o->dims[i].size, &n))
			return -1;
		if (n > KNOWN_MAX_OUT)
			return -1;
	}
	return n;
}

/* Small known values by the reference kernels, when every input is known. */
/* Does v (or an item of it) point into bytes it does not own? */
static bool borrows(const EvValue *v)
{
	if (v->kind == EV_SEQUENCE) {
		for (int i = 0; i < v->nitems; i++)
			if (v->items[i] && borrows(v->items[i]))
				return true;
		return false;
	}
	return v->kind == EV_TENSOR && v->borrowed;
}

static bool eval_known(InferCtx *c, EvValue **outv)
{
	IrNode *node = c->node;
	if (node->kind == OP_If || node->kind == OP_Loop || node->kind == OP_Scan)
		return false;
	const OpSchema *sc = op_schema_lookup(node->domain, node->op_type, (int)c->opset);
	if (!sc || (sc->flags & OPF_RANDOM))
		return false;
	if (!ev_kernel_find(node->domain, node->op_type))
		return false;
	/* sizes first: a large constant input is not even looked at */
	for (int o = 0; o < c->nout; o++) {
		int64_t n = out_numel(&c->out[o]);
		if (node->outputs[o] && n < 0)
			return false;
	}
	int64_t total = 0;
	infer_ensure_cap(c->s);
	for (uint32_t i = 0; i < node->ninputs; i++) {
		ValueId v = node->inputs[i];
		if (v && !c->s->val[v] && ir_is_constant(c->m, v)) {
			total += ir_tensor(c->m, ir_value(c->m, v)->tensor)->numel;
			if (total > KNOWN_MAX_IN)
				return false;
		}
	}
	total = 0;
	EvValue **in = xrealloc(NULL, sizeof *in * (node->ninputs + 1));  /* any number of inputs */
	for (uint32_t i = 0; i < node->ninputs; i++) {
		in[i] = NULL;
		if (!node->inputs[i])
			continue;
		in[i] = known_val(c->s, node->inputs[i]);
		if (in[i] && in[i]->kind == EV_TENSOR)
			total += in[i]->numel;
		if (!in[i] || in[i]->kind != EV_TENSOR || total > KNOWN_MAX_IN) {
			free(in);
			return false;
		}
	}
	Diag quiet;
	diag_init(&quiet, NULL);
	bool ok = ev_eval_node(c->m, c->n, in, outv, &quiet) &&
	          ev_result_portable(node->op_type, in, node->ninputs, outv, (uint32_t)c->nout);
	free(in);
	/* A result that is a view of an initializer's bytes (Identity,
	 * Reshape, ... of a constant) gets bytes of its own: the cache outlives
	 * the initializer, which a fold may remove once nothing reads it.  Known
	 * values are small (KNOWN_MAX_OUT), so the copy is too. */
	for (int o = 0; ok && o < c->nout; o++)
		if (outv[o] && borrows(outv[o])) {
			EvValue *own = ev_copy(outv[o]);
			ev_unref(outv[o]);
			outv[o] = own;
			ok = own != NULL;
		}
	if (!ok) {
		for (int o = 0; o < c->nout; o++) {
			ev_unref(outv[o]);
			outv[o] = NULL;
		}
		return false;
	}
	return true;
}

/* Set the known values of the node's outputs; *changed if any differs from before. */
void infer_propagate_known(InferCtx *c, bool *changed)
{
	InferState *s = c->s;
	IrNode *node = c->node;
	/* on the stack for a usual node, on the heap for a wide one */
	EvValue *vals_small[4] = {0};
	IVec *vecs_small[4] = {0};
	EvValue **vals = vals_small;
	IVec **vecs = vecs_small;
	if (c->nout > 4) {
		vals = xrealloc(NULL, sizeof *vals * (size_t)c->nout);
		vecs = xrealloc(NULL, sizeof *vecs * (size_t)c->nout);
		memset(vals, 0, sizeof *vals * (size_t)c->nout);
		memset(vecs, 0, sizeof *vecs * (size_t)c->nout);
	}
	if (*node->domain == 0 || !strcmp(node->domain, "ai.onnx")) {
		if (node->kind == OP_Constant && c->nout >= 1)
			vals[0] = constant_value(c);
		else if (c->nout >= 1 && (vecs[0] = propagate_vec(c)) != NULL) {
			if (vec_all_known(vecs[0]) && c->out[0].dtype)
				vals[0] = val_from_vec(vecs[0], c->out[0].dtype);
		} else if (node->kind == OP_Cast && c->nout >= 1) {
			/* ints to a float type: only fully known vectors */
			const IVec *a = inf_vec(c, 0);
			if (a && vec_all_known(a) && c->out[0].dtype && ev_is_float(c->out[0].dtype)) {
				int64_t dims[1] = {a->n};
				vals[0] = ev_tensor_new(c->out[0].dtype, a->rank, dims);
				for (int i = 0; vals[0] && i < a->n; i++)
					ev_set_f(vals[0], i, (double)a->e[i].v);
			}
		}
		if (!vals[0] && !vecs[0])
			eval_known(c, vals);
	}
	for (int o = 0; o < c->nout; o++) {
		ValueId v = node->outputs[o];
		if (!v) {
			ev_unref(vals[o]);
			free(vecs[o]);
			continue;
		}
		/* a value computed here shows its vector through known_vec */
		if (vals[o] && !vecs[o]) {
			EvValue *old = s->val[v];
			if (!val_equal(old, vals[o]))
				*changed = true;
			ev_unref(old);
			s->val[v] = vals[o];
			free(s->vec[v]);
			s->vec[v] = NULL;
			s->vec_tried[v] = 0;
			continue;
		}
		if (!vec_equal(s->vec[v], vecs[o]))
			*changed = true;
		free(s->vec[v]);
		s->vec[v] = vecs[o];
		s->vec_tried[v] = vecs[o] != NULL;
		ev_unref(s->val[v]);
		s->val[v] = vals[o];
	}
	if (vals != vals_small) {
		free(vals);
		free(vecs);
	}
}

/* ---- printing ------------------------------------------------------------------- */

static void print_value(IrModel *m, ValueId v, FILE *out)
{
	IrValue *val = ir_value(m, v);
	fprintf(out, "%s: %s", val->name, dtype_name(val->dtype));
	if (val->shape.rank < 0) {
		fputs("[*]\n", out);   /* rank unknown */
		return;
	}
	fputc('[', out);
	for (int i = 0; i < val->shape.rank; i++) {
		Dim d = val->shape.dims[i];
		if (i)
			fputc(',', out);
		if (dim_known(d))
			fprintf(out, "%lld", (long long)d.size);
		else
			fputs(d.param ? d.param : "?", out);
	}
	fputs("]\n", out);
}

static void print_graph(IrModel *m, GraphId g, FILE *out)
{
	IrGraph *gr = ir_graph(m, g);
	for (uint32_t i = 0; i < gr->ninputs; i++)
		print_value(m, gr->inputs[i], out);
	for (uint32_t i = 0; i < gr->ninits; i++)
		if (!ir_value(m, gr->inits[i])->is_input && !ir_value(m, gr->inits[i])->dead)
			print_value(m, gr->inits[i], out);
	for (NodeId n = ir_first(m, g); n; n = ir_next(m, n)) {
		IrNode *node = ir_node(m, n);
		for (uint32_t a = 0; a < node->nattrs; a++) {
			if (node->attrs[a].type == ATTR_GRAPH)
				print_graph(m, node->attrs[a].g, out);
			else if (node->attrs[a].type == ATTR_GRAPHS)
				for (size_t k = 0; k < node->attrs[a].n; k++)
					print_graph(m, node->attrs[a].graphs[k], out);
		}
		for (uint32_t o = 0; o < node->noutputs; o++)
			if (node->outputs[o])
				print_value(m, node->outputs[o], out);
	}
}

void infer_print(IrModel *m, FILE *out)
{
	print_graph(m, IR_MAIN_GRAPH, out);
}
