/* rw_gen.c - helpers for graftc's generated matchers (see rw_gen.h): old
 * opset forms, attributes with defaults, guard builtins over the IR's
 * shapes and constants, and building ops in the model's opset form. */
#include "rw_gen.h"
#include "dsl/opset_forms.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static IrModel *M(Rewriter *rw) { return rw_model(rw); }

/* ---- matching --------------------------------------------------------------------- */

NodeId rwg_producer_op(Rewriter *rw, ValueId v, OpKind kind, uint32_t out)
{
	NodeId p = rw_producer(rw, v);
	if (!p || ir_node(M(rw), p)->kind != kind || ir_value(M(rw), v)->out_slot != out)
		return 0;
	return p;
}

NodeId rwg_producer_named(Rewriter *rw, ValueId v, const char *domain, const char *name, uint32_t out)
{
	NodeId p = rw_producer(rw, v);
	if (!p || strcmp(ir_node(M(rw), p)->domain, domain) || strcmp(ir_node(M(rw), p)->op_type, name) ||
	    ir_value(M(rw), v)->out_slot != out)
		return 0;
	return p;
}

bool rwg_from(Rewriter *rw, ValueId v, const char *domain, const char *name)
{
	NodeId p = v ? rw_producer(rw, v) : 0;
	return p && !strcmp(ir_node(M(rw), p)->domain, domain) && !strcmp(ir_node(M(rw), p)->op_type, name);
}

OpKind rwg_producer_kind(Rewriter *rw, ValueId v, uint32_t out)
{
	NodeId p = rw_producer(rw, v);
	if (!p || ir_value(M(rw), v)->out_slot != out)
		return OP_UNKNOWN;
	return ir_node(M(rw), p)->kind;
}

bool rwg_attr_int_is(Rewriter *rw, NodeId n, const char *name, int64_t want)
{
	int64_t v;
	return rwg_attr_int(rw, n, name, &v) && v == want;
}

bool rwg_attr_ints_is(Rewriter *rw, NodeId n, const char *name, RwgInts want)
{
	RwgInts v;
	return rwg_attr_ints(rw, n, name, &v) && rwg_ints_eq(v, want);
}

const char *rwg_what(Rewriter *rw, ValueId v)
{
	if (!v)
		return "nothing";
	NodeId p = rw_producer(rw, v);
	if (p)
		return ir_node(M(rw), p)->op_type;
	if (rw_is_const(rw, v))
		return "a constant";
	return ir_value(M(rw), v)->is_input ? "a graph input" : "an outer-scope value";
}

/* n's outputs are read only inside the match, and no more times than the
 * pattern reads them (refs): a further read by a matched node is one the
 * pattern bound to a variable, which the result may keep, keeping n alive
 * beside what replaces it (Add(A, A) with A = MatMul(X, W) read as
 * Add(MatMul(X, W), c) would compute X W twice). */
static uint32_t node_uses(Rewriter *rw, NodeId n)
{
	IrNode *node = ir_node(M(rw), n);
	uint32_t uses = 0;
	for (uint32_t i = 0; i < node->noutputs; i++)
		if (node->outputs[i])
			uses += ir_value(M(rw), node->outputs[i])->nuses;
	return uses;
}

bool rwg_why_use(Rewriter *rw, int step, NodeId n, const NodeId *within, int nwithin, int refs, const char *desc)
{
	IrNode *node = ir_node(M(rw), n);
	for (uint32_t i = 0; i < node->noutputs; i++) {
		ValueId v = node->outputs[i];
		if (!v)
			continue;
		IrValue *val = ir_value(M(rw), v);
		if (val->is_output)
			return rw_why_fail(rw, step, RW_WHY_GRAPH_OUTPUT, "output %u of %s (%s) is a graph output", i, desc,
			                   val->name);
		for (uint32_t u = 0; u < val->nuses; u++) {
			bool inside = false;
			for (int k = 0; k < nwithin && !inside; k++)
				inside = val->uses[u].node == within[k];
			if (!inside) {
				char buf[300];
				return rw_why_fail(rw, step, RW_WHY_EXTRA_CONSUMER, "output %u of %s is also used by %s", i, desc,
				                   ir_node_label(M(rw), val->uses[u].node, buf, sizeof buf));
			}
		}
	}
	if (node_uses(rw, n) > (uint32_t)refs)
		return rw_why_fail(rw, step, RW_WHY_EXTRA_CONSUMER,
		                   "%s is read %u times inside the match where the pattern reads it %d time%s (the "
		                   "result would keep it)", desc, node_uses(rw, n), refs, refs == 1 ? "" : "s");
	return false;
}

bool rwg_absent_from(Rewriter *rw, NodeId n, uint32_t from)
{
	IrNode *node = ir_node(M(rw), n);
	for (uint32_t i = from; i < node->ninputs; i++)
		if (node->inputs[i])
			return false;
	return true;
}

bool rwg_single_use_node(Rewriter *rw, NodeId n, const NodeId *within, int nwithin, int refs)
{
	IrNode *node = ir_node(M(rw), n);
	for (uint32_t i = 0; i < node->noutputs; i++)
		if (node->outputs[i] && !rw_single_use(rw, node->outputs[i], within, nwithin))
			return false;
	return node_uses(rw, n) <= (uint32_t)refs;
}

bool rwg_single_use_nodes(Rewriter *rw, const NodeId *nodes, int n, const int *refs)
{
	for (int k = 0; k < n; k++)
		if (refs[k] > 0 && !rwg_single_use_node(rw, nodes[k], nodes, n, refs[k]))
			return false;
	return true;
}

ValueId rwg_out(Rewriter *rw, NodeId n, uint32_t k)
{
	IrNode *node = ir_node(M(rw), n);
	return n && k < node->noutputs ? node->outputs[k] : 0;
}

/* The constant's elements as an EvValue (borrowed bytes), or NULL. */
static EvValue *const_of(Rewriter *rw, ValueId v)
{
	if (!rw_is_const(rw, v))
		return NULL;
	EvValue *t = ev_value_from_ir_tensor(M(rw), ir_value(M(rw), v)->tensor);
	if (t && (t->kind != EV_TENSOR || t->dtype == DT_STRING || !t->data)) {
		ev_unref(t);
		return NULL;
	}
	return t;
}

bool rwg_const_equals_list(Rewriter *rw, ValueId v, const double *list, int n)
{
	EvValue *t = const_of(rw, v);
	bool ok = t && t->rank == 1 && t->numel == n;
	for (int i = 0; ok && i < n; i++) {
		EvValue *lit = ev_scalar_f(t->dtype, list[i]);
		ok = lit && rw_literal_equal(ev_get_f(t, i), ev_get_f(lit, 0));
		ev_unref(lit);
	}
	ev_unref(t);
	return ok;
}

/* ---- operands that may be attributes -------------------------------------------------- */

RwgArg rwg_arg(Rewriter *rw, NodeId n, uint32_t index, const char *attr, int first, int last)
{
	int opset = rw_opset(rw);
	if (opset >= first && opset <= last)
		return (RwgArg){0, n, attr};
	return (RwgArg){rw_input(rw, n, index), n, NULL};
}

RwgArg rwg_arg_forms(Rewriter *rw, NodeId n, uint32_t index, const RwgForm *forms, int nforms)
{
	int opset = rw_opset(rw);
	for (int i = 0; i < nforms; i++)
		if (opset >= forms[i].first && opset <= forms[i].last)
			return (RwgArg){0, n, forms[i].attr};
	return (RwgArg){rw_input(rw, n, index), n, NULL};
}

static const IrAttr *arg_attr(Rewriter *rw, RwgArg a)
{
	return a.attr ? ir_attr(M(rw), a.n, a.attr) : NULL;
}

bool rwg_arg_absent(Rewriter *rw, RwgArg a)
{
	return a.attr ? arg_attr(rw, a) == NULL : a.v == 0;
}

/* The operand's elements as doubles (attribute or constant); false if it
 * is neither an int/float (list) attribute nor a constant that fits. */
static bool arg_numbers(Rewriter *rw, RwgArg a, double *out, int *n, bool *is_int)
{
	if (a.attr) {
		const IrAttr *at = arg_attr(rw, a);
		if (!at)
			return false;
		switch (at->type) {
		case ATTR_INT: out[0] = (double)at->i; *n = -1; *is_int = true; return true;
		case ATTR_FLOAT: out[0] = at->f; *n = -1; *is_int = false; return true;
		case ATTR_INTS:
			if (at->n > RWG_MAX_INTS)
				return false;
			for (size_t i = 0; i < at->n; i++)
				out[i] = (double)at->ints[i];
			*n = (int)at->n;
			*is_int = true;
			return true;
		case ATTR_FLOATS:
			if (at->n > RWG_MAX_INTS)
				return false;
			for (size_t i = 0; i < at->n; i++)
				out[i] = at->floats[i];
			*n = (int)at->n;
			*is_int = false;
			return true;
		default:
			return false;
		}
	}
	EvValue *t = const_of(rw, a.v);
	bool ok = t && t->numel <= RWG_MAX_INTS && t->rank <= 1;
	if (ok) {
		for (int64_t i = 0; i < t->numel; i++)
			out[i] = ev_get_f(t, i);
		*n = t->rank == 0 ? -1 : (int)t->numel;
		*is_int = !ev_is_float(t->dtype);
	}
	ev_unref(t);
	return ok;
}

bool rwg_arg_same(Rewriter *rw, RwgArg a, RwgArg b)
{
	if (!a.attr && !b.attr)
		return rw_same_value(rw, a.v, b.v);
	bool absent_a = rwg_arg_absent(rw, a), absent_b = rwg_arg_absent(rw, b);
	if (absent_a || absent_b)
		return absent_a && absent_b;
	double x[RWG_MAX_INTS], y[RWG_MAX_INTS];
	int nx, ny;
	bool ix, iy;
	if (!arg_numbers(rw, a, x, &nx, &ix) || !arg_numbers(rw, b, y, &ny, &iy) || nx != ny || ix != iy)
		return false;
	for (int i = 0; i < (nx < 0 ? 1 : nx); i++)
		if (x[i] != y[i])
			return false;
	return true;
}

bool rwg_arg_equals(Rewriter *rw, RwgArg a, double want, double tol)
{
	if (!a.attr)
		return rw_const_equals(rw, a.v, want, tol);
	double x[RWG_MAX_INTS];
	int n;
	bool is_int;
	if (!arg_numbers(rw, a, x, &n, &is_int))
		return false;
	for (int i = 0; i < (n < 0 ? 1 : n); i++) {
		double w = is_int ? want : (double)(float)want;
		if (tol > 0 ? fabs(x[i] - want) > tol : !rw_literal_equal(x[i], w))
			return false;
	}
	return true;
}

bool rwg_arg_equals_list(Rewriter *rw, RwgArg a, const double *list, int n)
{
	if (!a.attr)
		return rwg_const_equals_list(rw, a.v, list, n);
	double x[RWG_MAX_INTS];
	int nx;
	bool is_int;
	if (!arg_numbers(rw, a, x, &nx, &is_int) || nx != n)
		return false;
	for (int i = 0; i < n; i++)
		if (!rw_literal_equal(x[i], is_int ? list[i] : (double)(float)list[i]))
			return false;
	return true;
}

RwgInts rwg_arg_ints(Rewriter *rw, RwgArg a, bool *unknown)
{
	if (!a.attr)
		return rwg_ints(rw, a.v, unknown);
	RwgInts r = {0};
	const IrAttr *at = arg_attr(rw, a);
	if (at && at->type == ATTR_INTS && at->n <= RWG_MAX_INTS) {
		r.n = (int)at->n;
		if (at->n)   /* ints = [] has no list to copy */
			memcpy(r.v, at->ints, sizeof *r.v * at->n);
	} else if (at && at->type == ATTR_INT) {
		r.n = 1;
		r.v[0] = at->i;
	} else {
		*unknown = true;
	}
	return r;
}

double rwg_arg_scalar(Rewriter *rw, RwgArg a, bool *unknown)
{
	if (!a.attr)
		return rwg_scalar(rw, a.v, unknown);
	double x[RWG_MAX_INTS];
	int n;
	bool is_int;
	if (!arg_numbers(rw, a, x, &n, &is_int) || n > 1 || n == 0) {
		*unknown = true;
		return 0;
	}
	return x[0];
}

ValueId rwg_arg_value(Rewriter *rw, RwgArg a, bool *unknown)
{
	if (!a.attr)
		return a.v;
	const IrAttr *at = arg_attr(rw, a);
	if (!at)
		return 0;
	switch (at->type) {
	case ATTR_INTS: {
		RwgInts v = rwg_arg_ints(rw, a, unknown);
		return rwg_const_ints(rw, v);
	}
	case ATTR_INT: return rw_const_scalar(rw, DT_INT64, (double)at->i);
	case ATTR_FLOAT: return rw_const_scalar(rw, DT_FLOAT, at->f);
	default: *unknown = true; return 0;
	}
}

/* ---- attributes with defaults ------------------------------------------------------------ */

/* The attribute as set on n, or its schema default: for the model's opset,
 * else (an attribute that opset lacks behaves as its newest default) the
 * newest definition's.  *set gets the node's own attribute or NULL. */
static const OpAttrDef *attr_or_default(Rewriter *rw, NodeId n, const char *name, const IrAttr **set)
{
	IrNode *node = ir_node(M(rw), n);
	*set = ir_attr(M(rw), n, name);
	if (*set)
		return NULL;
	const OpSchema *s = op_schema_lookup(node->domain, node->op_type,
	                                     node->domain[0] ? INT32_MAX : rw_opset(rw));
	const OpAttrDef *d = s ? op_schema_attr(s, name) : NULL;
	if (!d && !node->domain[0]) {
		s = op_schema_lookup("", node->op_type, OPSCHEMA_MAX_OPSET);
		d = s ? op_schema_attr(s, name) : NULL;
	}
	return d && d->has_default ? d : NULL;
}

bool rwg_attr_int(Rewriter *rw, NodeId n, const char *name, int64_t *out)
{
	const IrAttr *a;
	const OpAttrDef *d = attr_or_default(rw, n, name, &a);
	if (a && a->type == ATTR_INT)
		*out = a->i;
	else if (!a && d && d->type == ATTR_INT)
		*out = d->i;
	else
		return false;
	return true;
}

static int shape_of(Rewriter *rw, ValueId v, int64_t *dims);

/* An omitted float attribute the spec gives in words (op_attr_implied):
 * Attention's scale is 1 / sqrt(head size), in float as ONNX Runtime
 * computes it; the head size is Q's last dim (4-D Q) or its last dim over
 * q_num_heads (3-D Q).  False when unknown. */
static bool implied_float(Rewriter *rw, NodeId n, const char *name, double *out)
{
	IrNode *node = ir_node(M(rw), n);
	if (node->domain[0] || node->ninputs < 1 || !op_attr_implied(node->op_type, name) ||
	    strcmp(node->op_type, "Attention") != 0)
		return false;
	int64_t dims[RWG_MAX_INTS], heads = 0;
	int r = shape_of(rw, node->inputs[0], dims);
	const IrAttr *h = ir_attr(M(rw), n, "q_num_heads");
	if (r == 3 && h && h->type == ATTR_INT)
		heads = h->i;
	int64_t size = r == 4 ? dims[3] : r == 3 && heads > 0 && dims[2] > 0 && dims[2] % heads == 0 ? dims[2] / heads : -1;
	if (size <= 0)
		return false;
	*out = (double)(1.0f / sqrtf((float)size));
	return true;
}

bool rwg_attr_float(Rewriter *rw, NodeId n, const char *name, double *out)
{
	const IrAttr *a;
	const OpAttrDef *d = attr_or_default(rw, n, name, &a);
	if (a && a->type == ATTR_FLOAT)
		*out = a->f;
	else if (!a && d && d->type == ATTR_FLOAT)
		*out = (double)(float)d->f;
	else
		return !a && implied_float(rw, n, name, out);
	return true;
}

bool rwg_attr_str(Rewriter *rw, NodeId n, const char *name, RwgStr *out)
{
	const IrAttr *a;
	const OpAttrDef *d = attr_or_default(rw, n, name, &a);
	if (a && a->type == ATTR_STRING)
		*out = (RwgStr){(const char *)a->s.data, a->s.len};
	else if (!a && d && d->type == ATTR_STRING && d->s)
		*out = (RwgStr){d->s, strlen(d->s)};
	else
		return false;
	return true;
}


/* What an omitted ints attribute means where the schema gives no default but
 * the spec says it in words (which ones: op_attr_implied, dsl/opset_forms.c): Transpose's perm reverses the axes; a Conv's or
 * pool's strides and dilations are 1 and its pads 0 on every spatial axis
 * (unless auto_pad is SAME_UPPER or SAME_LOWER: then the pads depend on the
 * input's size and are not implied); a convolution's kernel_shape is its
 * weight's dims after the first two.  Needs the rank of input 0 (and, for
 * kernel_shape, the weight's shape); false when unknown or not such an
 * attribute. */
static bool implied_ints(Rewriter *rw, NodeId n, const char *name, RwgInts *out)
{
	IrNode *node = ir_node(M(rw), n);
	const char *op = node->op_type;
	if (node->domain[0] || node->ninputs < 1 || !op_attr_implied(op, name))
		return false;
	int64_t dims[RWG_MAX_INTS];
	int r = shape_of(rw, node->inputs[0], dims);
	bool spatial = strcmp(op, "Transpose") != 0 && strncmp(op, "Reduce", 6) != 0 && strcmp(op, "Squeeze") != 0;
	if (r < 0)
		return false;
	if (!strcmp(op, "Transpose") && !strcmp(name, "perm")) {
		out->n = r;
		for (int i = 0; i < r; i++)
			out->v[i] = r - 1 - i;
		return true;
	}
	if (!strncmp(op, "Reduce", 6)) {  /* axes: every axis */
		out->n = r;
		for (int i = 0; i < r; i++)
			out->v[i] = i;
		return true;
	}
	if (!strcmp(op, "Squeeze")) {  /* axes: the dims of size 1, all known */
		out->n = 0;
		for (int i = 0; i < r; i++) {
			if (dims[i] < 0)
				return false;
			if (dims[i] == 1)
				out->v[out->n++] = i;
		}
		return true;
	}
	if (!spatial || r < 2 || 2 * (r - 2) > RWG_MAX_INTS)
		return false;
	if (!strcmp(name, "strides") || !strcmp(name, "dilations")) {
		out->n = r - 2;
		for (int i = 0; i < r - 2; i++)
			out->v[i] = 1;
		return true;
	}
	if (!strcmp(name, "kernel_shape") && strcmp(op, "MaxPool") && strcmp(op, "AveragePool") &&
	    strcmp(op, "LpPool")) {
		uint32_t wi = !strcmp(op, "QLinearConv") ? 3 : 1;
		int64_t w[RWG_MAX_INTS];
		int wr = node->ninputs > wi ? shape_of(rw, node->inputs[wi], w) : -1;
		if (wr != r)
			return false;
		out->n = r - 2;
		for (int i = 2; i < r; i++)
			if ((out->v[i - 2] = w[i]) < 0)
				return false;
		return true;
	}
	if (!strcmp(name, "pads")) {
		const IrAttr *ap = ir_attr(M(rw), n, "auto_pad");
		if (ap && ap->type == ATTR_STRING && ap->s.len >= 4 && !memcmp(ap->s.data, "SAME", 4))
			return false;
		out->n = 2 * (r - 2);
		memset(out->v, 0, sizeof *out->v * (size_t)out->n);
		return true;
	}
	return false;
}

bool rwg_attr_ints(Rewriter *rw, NodeId n, const char *name, RwgInts *out)
{
	const IrAttr *a;
	const OpAttrDef *d = attr_or_default(rw, n, name, &a);
	const int64_t *v;
	size_t count;
	if (a && a->type == ATTR_INTS)
		v = a->ints, count = a->n;
	else if (!a && d && d->type == ATTR_INTS)
		v = d->ints, count = (size_t)d->n;
	else
		return !a && implied_ints(rw, n, name, out);
	if (count > RWG_MAX_INTS)
		return false;
	out->n = (int)count;
	if (count)
		memcpy(out->v, v, sizeof *v * count);
	return true;
}

bool rwg_attr_floats(Rewriter *rw, NodeId n, const char *name, RwgFloats *out)
{
	const IrAttr *a;
	const OpAttrDef *d = attr_or_default(rw, n, name, &a);
	const float *v;
	size_t count;
	if (a && a->type == ATTR_FLOATS)
		v = a->floats, count = a->n;
	else if (!a && d && d->type == ATTR_FLOATS)
		v = d->floats, count = (size_t)d->n;
	else
		return false;
	if (count > RWG_MAX_INTS)
		return false;
	out->n = (int)count;
	for (size_t i = 0; i < count; i++)
		out->v[i] = v[i];
	return true;
}

/* ---- --why of guards and result values (rw_gen.h) ------------------------------------ */

void rwg_why_begin(RwgWhy *b, const char *cond)
{
	memset(b, 0, sizeof *b);
	b->cond = cond;
}

/* Append to b->values, cut where it is full. */
static void why_add(RwgWhy *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_add(RwgWhy *b, const char *fmt, ...)
{
	if (b->n >= sizeof b->values)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b->values + b->n, sizeof b->values - b->n, fmt, ap);
	va_end(ap);
	b->n = k < 0 ? b->n : b->n + (size_t)k;
}

/* Start the entry for text: false when the value needs no "is" (the
 * condition's own text, known). */
static bool why_entry(RwgWhy *b, const char *text, bool *unknown)
{
	b->last_unknown = *unknown;
	*unknown = false;
	b->last_listed = strcmp(text, b->cond) != 0;
	if (!b->last_listed)
		return false;
	why_add(b, "%s%s is ", b->n ? ", " : "", text);
	if (b->last_unknown)
		why_add(b, "unknown");
	return !b->last_unknown;
}

void rwg_why_int(RwgWhy *b, const char *text, int64_t v, bool *unknown)
{
	if (why_entry(b, text, unknown))
		why_add(b, "%lld", (long long)v);
}

void rwg_why_float(RwgWhy *b, const char *text, double v, bool *unknown)
{
	if (why_entry(b, text, unknown))
		why_add(b, "%.9g", v);
}

void rwg_why_bool(RwgWhy *b, const char *text, bool v, bool *unknown)
{
	if (why_entry(b, text, unknown))
		why_add(b, "%s", v ? "true" : "false");
}

/* A dtype as the rule language writes it. */
static const char *dtype_word(int dt)
{
	return dt == DT_FLOAT ? "float32" : dt == DT_DOUBLE ? "float64" : dtype_name(dt);
}

void rwg_why_dtype(RwgWhy *b, const char *text, int v, bool *unknown)
{
	if (why_entry(b, text, unknown))
		why_add(b, "%s", dtype_word(v));
}

void rwg_why_str(RwgWhy *b, const char *text, RwgStr v, bool *unknown)
{
	if (why_entry(b, text, unknown))
		why_add(b, "\"%.*s\"", (int)v.n, v.p);
}

void rwg_why_ints(RwgWhy *b, const char *text, RwgInts v, bool *unknown)
{
	if (!why_entry(b, text, unknown))
		return;
	why_add(b, "[");
	for (int i = 0; i < v.n; i++)
		why_add(b, "%s%lld", i ? ", " : "", (long long)v.v[i]);
	why_add(b, "]");
}

void rwg_why_floats(RwgWhy *b, const char *text, RwgFloats v, bool *unknown)
{
	if (!why_entry(b, text, unknown))
		return;
	why_add(b, "[");
	for (int i = 0; i < v.n; i++)
		why_add(b, "%s%.9g", i ? ", " : "", v.v[i]);
	why_add(b, "]");
}

/* v's dims as "[N,?,3]" into buf (rank known). */
static void dims_text(Rewriter *rw, ValueId v, char *buf, size_t size)
{
	const IrValue *val = ir_value(M(rw), v);
	const IrTensor *t = val->tensor && !val->is_input ? ir_tensor(M(rw), val->tensor) : NULL;
	int rank = t ? t->rank : val->shape.rank;
	size_t o = (size_t)snprintf(buf, size, "[");
	for (int i = 0; i < rank && o < size; i++) {
		const Dim *d = t ? NULL : &val->shape.dims[i];
		if (t || d->size >= 0)
			o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "", (long long)(t ? t->dims[i] : d->size));
		else
			o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "," : "", ir_dim_label(d));
	}
	if (o < size)
		snprintf(buf + o, size - o, "]");
}

void rwg_why_need(Rewriter *rw, RwgWhy *b, RwgNeed need, ValueId v, const char *of)
{
	if (!b->last_unknown || need == RWG_NEED_NONE || !of)
		return;
	/* after "scalar(s) is unknown" in parentheses; alone for the condition's own value */
	const char *open = b->last_listed ? " (" : b->n ? ", " : "", *close = b->last_listed ? ")" : "";
	if (!v) {
		why_add(b, "%s%s is absent%s", open, of, close);
		return;
	}
	char dims[200];
	int64_t shape[RWG_MAX_INTS];
	if (need == RWG_NEED_SHAPE) {
		if (shape_of(rw, v, shape) < 0) {
			why_add(b, "%sthe shape of %s is unknown%s", open, of, close);
		} else {
			dims_text(rw, v, dims, sizeof dims);
			why_add(b, "%s%s has shape %s%s", open, of, dims, close);
		}
		return;
	}
	if (need == RWG_NEED_DTYPE) {
		why_add(b, "%sthe dtype of %s is unknown%s", open, of, close);
		return;
	}
	EvValue *t = const_of(rw, v);
	if (!t)
		why_add(b, "%s%s is not a constant%s", open, of, close);
	else if (need == RWG_NEED_SCALAR && t->numel != 1)
		why_add(b, "%s%s has %lld elements%s", open, of, (long long)t->numel, close);
	else if (need == RWG_NEED_INTS && ev_is_float(t->dtype))
		why_add(b, "%s%s holds %s values%s", open, of, dtype_word(t->dtype), close);
	else if (need == RWG_NEED_INTS && t->rank > 1)
		why_add(b, "%s%s has rank %d%s", open, of, t->rank, close);
	else if (need == RWG_NEED_INTS && t->numel > RWG_MAX_INTS)
		why_add(b, "%s%s has %lld elements, more than %d%s", open, of, (long long)t->numel, RWG_MAX_INTS, close);
	ev_unref(t);
}

bool rwg_why_guard(Rewriter *rw, int step, const RwgWhy *b, bool undecided)
{
	char detail[400];
	snprintf(detail, sizeof detail, "%s is %s", b->cond, undecided ? "undecided" : "false");
	return rw_why_fail_values(rw, step, RW_WHY_GUARD, detail, b->values);
}

bool rwg_why_result(Rewriter *rw, int step, const RwgWhy *b)
{
	char detail[400];
	snprintf(detail, sizeof detail, "%s is unknown", b->cond);
	return rw_why_fail_values(rw, step, RW_WHY_UNKNOWN, detail, b->values);
}

/* ---- guard builtins -------------------------------------------------------------------- */

/* The shape of v: a constant's dims, else what inference knows.  rank -1: unknown. */
static int shape_of(Rewriter *rw, ValueId v, int64_t *dims)
{
	if (!v)
		return -1;
	IrModel *m = M(rw);
	IrValue *val = ir_value(m, v);
	if (val->tensor && !val->is_input) {
		IrTensor *t = ir_tensor(m, val->tensor);
		if (t->rank > RWG_MAX_INTS)
			return -1;
		for (int i = 0; i < t->rank; i++)
			dims[i] = t->dims[i];
		return t->rank;
	}
	if (val->shape.rank < 0 || val->shape.rank > RWG_MAX_INTS)
		return -1;
	for (int i = 0; i < val->shape.rank; i++)
		dims[i] = val->shape.dims[i].size;
	return val->shape.rank;
}

int64_t rwg_rank(Rewriter *rw, ValueId v, bool *unknown)
{
	int64_t dims[RWG_MAX_INTS];
	int r = shape_of(rw, v, dims);
	if (r < 0)
		*unknown = true;
	return r < 0 ? 0 : r;
}

RwgInts rwg_shape(Rewriter *rw, ValueId v, bool *unknown)
{
	RwgInts s = {0};
	int r = shape_of(rw, v, s.v);
	for (int i = 0; i < r; i++)
		if (s.v[i] < 0)
			r = -1;
	if (r < 0) {
		*unknown = true;
		s.n = 0;
	} else {
		s.n = r;
	}
	return s;
}

/* dim(a, i) == dim(b, j) in a guard: the same known size, or the same
 * symbol (exporters' batch and sequence dims are symbols); undecided (the
 * guard fails) where a size is unknown or the symbols differ.  A graph
 * output's declared symbol stands for what it computes (LLaMA's
 * present_key: declared total, computed seq): that is compared. */
bool rwg_same_dim(Rewriter *rw, ValueId a, int64_t i, ValueId b, int64_t j, bool *unknown)
{
	if (!a || !b) {
		*unknown = true;
		return false;
	}
	const Shape *sa = &ir_value(M(rw), a)->shape, *sb = &ir_value(M(rw), b)->shape;
	if (i < 0)
		i += sa->rank;
	if (j < 0)
		j += sb->rank;
	if (i < 0 || j < 0 || i >= sa->rank || j >= sb->rank) {
		*unknown = true;
		return false;
	}
	Dim x = sa->dims[i], y = sb->dims[j];
	rw_computed_dim(rw, a, (int)i, &x);
	rw_computed_dim(rw, b, (int)j, &y);
	if (x.size >= 0 && y.size >= 0)
		return x.size == y.size;
	if (x.param && y.param && !strcmp(x.param, y.param))
		return true;
	*unknown = true; /* an unknown size, or two symbols that may be equal */
	return false;
}

int64_t rwg_dim(Rewriter *rw, ValueId v, int64_t i, bool *unknown)
{
	int64_t dims[RWG_MAX_INTS];
	int r = shape_of(rw, v, dims);
	if (i < 0)
		i += r;
	if (r < 0 || i < 0 || i >= r || dims[i] < 0) {
		*unknown = true;
		return 0;
	}
	return dims[i];
}

int rwg_dtype(Rewriter *rw, ValueId v)
{
	if (!v)
		return 0;
	IrValue *val = ir_value(M(rw), v);
	if (val->tensor)
		return ir_tensor(M(rw), val->tensor)->dtype;
	return val->dtype;
}

int rwg_dtype_k(Rewriter *rw, ValueId v, bool *unknown)
{
	int dt = rwg_dtype(rw, v);
	if (!dt)
		*unknown = true;
	return dt;
}

int64_t rwg_numel(Rewriter *rw, ValueId v, bool *unknown)
{
	RwgInts s = rwg_shape(rw, v, unknown);
	int64_t n = 1;
	for (int i = 0; i < s.n; i++)
		n *= s.v[i];
	return n;
}

int64_t rwg_uses(Rewriter *rw, ValueId v)
{
	return v ? ir_value(M(rw), v)->nuses : 0;
}

int64_t rwg_outputs(Rewriter *rw, NodeId n)
{
	return n ? ir_node(M(rw), n)->noutputs : 0;
}

double rwg_scalar(Rewriter *rw, ValueId v, bool *unknown)
{
	EvValue *t = const_of(rw, v);
	double x = 0;
	if (t && t->numel == 1)
		x = ev_get_f(t, 0);
	else
		*unknown = true;
	ev_unref(t);
	return x;
}

/* Every float of p[0..n) finite, and for `moderate` within lo .. hi or 0
 * (a NaN fails every comparison).  No early exit inside a block and no
 * per-element dispatch: conv_bn's moderate(w) reads every weight of every
 * Conv it meets, and the generic loop (ev_get_f's switch and a call per
 * element) was most of graft's time on folded models (light_inception_v2). */
static bool floats_within(const float *p, int64_t n, bool moderate, float lo, float hi)
{
	enum { BLOCK = 4096 };
	for (int64_t at = 0; at < n; at += BLOCK) {
		int64_t end = n - at < BLOCK ? n : at + BLOCK;
		int bad = 0;
		if (moderate)
			for (int64_t i = at; i < end; i++) {
				float x = fabsf(p[i]);
				bad |= !(x == 0 || (x >= lo && x <= hi));
			}
		else
			for (int64_t i = at; i < end; i++)
				bad |= !(fabsf(p[i]) <= FLT_MAX);
		if (bad)
			return false;
	}
	return true;
}

/* Every element finite, and for `moderate` within 2^-k .. 2^k or 0. */
static bool const_within(Rewriter *rw, ValueId v, bool moderate, bool *unknown)
{
	EvValue *t = const_of(rw, v);
	if (!t || t->dtype == DT_STRING) {
		*unknown = true;
		ev_unref(t);
		return false;
	}
	int k = t->dtype == DT_DOUBLE ? 409 : t->dtype == DT_FLOAT16 ? 6 : 50;
	double lo = ldexp(1, -k), hi = ldexp(1, k);
	bool ok = true;
	if (t->dtype == DT_FLOAT) /* 2^-50 and 2^50 are floats: the same test in float */
		ok = floats_within(t->data, t->numel, moderate, (float)lo, (float)hi);
	else
		for (int64_t i = 0; ok && ev_is_float(t->dtype) && i < t->numel; i++) {
			double x = fabs(ev_get_f(t, i));
			ok = isfinite(x) && (!moderate || x == 0 || (x >= lo && x <= hi));
		}
	ev_unref(t);
	return ok;
}

bool rwg_finite(Rewriter *rw, ValueId v, bool *unknown)
{
	return const_within(rw, v, false, unknown);
}

bool rwg_moderate(Rewriter *rw, ValueId v, bool *unknown)
{
	return const_within(rw, v, true, unknown);
}

RwgInts rwg_ints(Rewriter *rw, ValueId v, bool *unknown)
{
	RwgInts r = {0};
	EvValue *t = const_of(rw, v);
	if (t && !ev_is_float(t->dtype) && t->rank <= 1 && t->numel <= RWG_MAX_INTS) {
		r.n = (int)t->numel;
		for (int i = 0; i < r.n; i++)
			r.v[i] = ev_get_i(t, i);
	} else {
		*unknown = true;
	}
	ev_unref(t);
	return r;
}

bool rwg_is_identity(RwgInts p)
{
	for (int i = 0; i < p.n; i++)
		if (p.v[i] != i)
			return false;
	return true;
}

/* Transpose[perm = q] then Transpose[perm = p]: output axis i is input axis q[p[i]]. */
RwgInts rwg_compose(RwgInts q, RwgInts p, bool *unknown)
{
	RwgInts r = {0};
	if (p.n != q.n) {
		*unknown = true;
		return r;
	}
	r.n = p.n;
	for (int i = 0; i < p.n; i++) {
		if (p.v[i] < 0 || p.v[i] >= q.n) {
			*unknown = true;
			return r;
		}
		r.v[i] = q.v[p.v[i]];
	}
	return r;
}

RwgInts rwg_range(int64_t n, bool *unknown)
{
	RwgInts r = {0};
	if (n < 0 || n > RWG_MAX_INTS) {
		*unknown = true;
		return r;
	}
	r.n = (int)n;
	for (int i = 0; i < r.n; i++)
		r.v[i] = i;
	return r;
}

bool rwg_is_float(Rewriter *rw, ValueId v, bool *unknown)
{
	return ev_is_float(rwg_dtype_k(rw, v, unknown));
}

bool rwg_is_int(Rewriter *rw, ValueId v, bool *unknown)
{
	int dt = rwg_dtype_k(rw, v, unknown);
	return ev_is_signed_int(dt) || (ev_is_unsigned_int(dt) && dt != DT_BOOL);
}

/* The axes of a rank-n tensor that two Squeezes (or Unsqueezes) name together: `outer`
 * counts in the rank-n tensor, `inner` in it with outer's axes removed.  Unknown when an
 * axis is out of range or repeats. */
RwgInts rwg_merge_axes(RwgInts outer, RwgInts inner, int64_t n, bool *unknown)
{
	RwgInts r = {0};
	bool taken[RWG_MAX_INTS] = {0};
	int64_t m = n - outer.n;
	if (n < 0 || n > RWG_MAX_INTS || m < 0 || outer.n + inner.n > n)
		goto bad;
	for (int i = 0; i < outer.n; i++) {
		int64_t a = outer.v[i] < 0 ? outer.v[i] + n : outer.v[i];
		if (a < 0 || a >= n || taken[a])
			goto bad;
		taken[a] = true;
	}
	bool picked[RWG_MAX_INTS] = {0};
	for (int i = 0; i < inner.n; i++) {
		int64_t a = inner.v[i] < 0 ? inner.v[i] + m : inner.v[i];
		if (a < 0 || a >= m || picked[a])
			goto bad;
		picked[a] = true;
	}
	/* walk the rank-n axes; the k-th one outer does not take is inner's axis k */
	for (int64_t ax = 0, k = 0; ax < n; ax++) {
		if (taken[ax])
			r.v[r.n++] = ax;
		else if (picked[k++])
			r.v[r.n++] = ax;
	}
	return r;
bad:
	*unknown = true;
	r.n = 0;
	return r;
}

bool rwg_distinct(RwgInts l)
{
	for (int i = 0; i < l.n; i++)
		for (int j = 0; j < i; j++)
			if (l.v[i] == l.v[j])
				return false;
	return true;
}

RwgInts rwg_dims(Rewriter *rw, ValueId v, RwgInts axes, bool *unknown)
{
	RwgInts r = {0};
	int64_t dims[RWG_MAX_INTS];
	int rank = shape_of(rw, v, dims);
	for (int i = 0; i < axes.n; i++) {
		int64_t a = axes.v[i] < 0 ? axes.v[i] + rank : axes.v[i];
		if (rank < 0 || a < 0 || a >= rank || dims[a] < 0) {
			*unknown = true;
			r.n = 0;
			return r;
		}
		r.v[r.n++] = dims[a];
	}
	return r;
}

static bool cmp_holds(int64_t x, RwgCmp op, int64_t y)
{
	switch (op) {
	case RWG_EQ: return x == y;
	case RWG_NE: return x != y;
	case RWG_LT: return x < y;
	case RWG_LE: return x <= y;
	case RWG_GT: return x > y;
	case RWG_GE: return x >= y;
	}
	return false;
}

bool rwg_ints_every(RwgInts a, RwgCmp op, RwgInts b)
{
	if (a.n != b.n)
		return false;
	for (int i = 0; i < a.n; i++)
		if (!cmp_holds(a.v[i], op, b.v[i]))
			return false;
	return true;
}

bool rwg_ints_every_k(RwgInts a, RwgCmp op, int64_t k)
{
	for (int i = 0; i < a.n; i++)
		if (!cmp_holds(a.v[i], op, k))
			return false;
	return true;
}

RwgInts rwg_ones(int64_t n, bool *unknown)
{
	RwgInts r = {0};
	if (n < 0 || n > RWG_MAX_INTS) {
		*unknown = true;
		return r;
	}
	r.n = (int)n;
	for (int i = 0; i < r.n; i++)
		r.v[i] = 1;
	return r;
}

RwgInts rwg_ints_concat(RwgInts a, RwgInts b, bool *unknown)
{
	if (a.n + b.n > RWG_MAX_INTS) {
		*unknown = true;
		return a;
	}
	memcpy(a.v + a.n, b.v, sizeof *b.v * (size_t)b.n);
	a.n += b.n;
	return a;
}

RwgInts rwg_ints_lit(int n, const int64_t *v)
{
	RwgInts r = {0};
	r.n = n < RWG_MAX_INTS ? n : RWG_MAX_INTS;
	if (r.n)
		memcpy(r.v, v, sizeof *v * (size_t)r.n);
	return r;
}

RwgFloats rwg_floats_lit(int n, const double *v)
{
	RwgFloats r = {0};
	r.n = n < RWG_MAX_INTS ? n : RWG_MAX_INTS;
	if (r.n)
		memcpy(r.v, v, sizeof *v * (size_t)r.n);
	return r;
}

RwgFloats rwg_ints_to_floats(RwgInts a)
{
	RwgFloats r = {a.n, {0}};
	for (int i = 0; i < a.n; i++)
		r.v[i] = (double)a.v[i];
	return r;
}

bool rwg_ints_eq(RwgInts a, RwgInts b)
{
	return a.n == b.n && (a.n == 0 || memcmp(a.v, b.v, sizeof *a.v * (size_t)a.n) == 0);
}

bool rwg_floats_eq(RwgFloats a, RwgFloats b)
{
	if (a.n != b.n)
		return false;
	for (int i = 0; i < a.n; i++)
		if (a.v[i] != b.v[i])
			return false;
	return true;
}

bool rwg_str_eq(RwgStr a, RwgStr b)
{
	return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

int64_t rwg_ints_at(RwgInts a, int64_t i, bool *unknown)
{
	if (i < 0)
		i += a.n;
	if (i < 0 || i >= a.n) {
		*unknown = true;
		return 0;
	}
	return a.v[i];
}

double rwg_floats_at(RwgFloats a, int64_t i, bool *unknown)
{
	if (i < 0)
		i += a.n;
	if (i < 0 || i >= a.n) {
		*unknown = true;
		return 0;
	}
	return a.v[i];
}

int64_t rwg_idiv(int64_t a, int64_t b, bool *unknown)
{
	if (b == 0 || (a == INT64_MIN && b == -1)) {
		*unknown = true;
		return 0;
	}
	return a / b;
}

int64_t rwg_rest_len(Rewriter *rw, RwgRest r)
{
	uint32_t n = rw_ninputs(rw, r.n);
	return n > r.first ? n - r.first : 0;
}

ValueId rwg_rest_at(Rewriter *rw, RwgRest r, int64_t i, bool *unknown)
{
	int64_t len = rwg_rest_len(rw, r);
	if (i < 0)
		i += len;
	if (i < 0 || i >= len) {
		*unknown = true;
		return 0;
	}
	return rw_input(rw, r.n, r.first + (uint32_t)i);
}

/* ---- building ------------------------------------------------------------------------ */

/* The form of canonical input i active at the model's opset, or NULL. */
static const RwgForm *form_at(Rewriter *rw, const RwgForm *forms, int nforms, uint32_t i)
{
	int opset = rw_opset(rw);
	for (int k = 0; k < nforms; k++)
		if ((uint32_t)forms[k].input == i && opset >= forms[k].first && opset <= forms[k].last)
			return &forms[k];
	return NULL;
}

/* Set attribute `name` of built node n from operand a, with the type the
 * op's schema gives it at the model's opset. */
static void set_from_arg(Rewriter *rw, NodeId n, const char *name, RwgArg a, bool *unknown)
{
	if (rwg_arg_absent(rw, a))
		return;
	IrNode *node = ir_node(M(rw), n);
	const OpSchema *s = op_schema_lookup("", node->op_type, rw_opset(rw));
	const OpAttrDef *d = s ? op_schema_attr(s, name) : NULL;
	double x[RWG_MAX_INTS];
	int cnt;
	bool is_int;
	if (!d || !arg_numbers(rw, a, x, &cnt, &is_int)) {
		*unknown = true;
		return;
	}
	switch (d->type) {
	case ATTR_INT: ir_attr_set_int(M(rw), n, name, (int64_t)x[0]); break;
	case ATTR_FLOAT: ir_attr_set_float(M(rw), n, name, (float)x[0]); break;
	case ATTR_INTS: {
		RwgInts v = {cnt < 0 ? 1 : cnt, {0}};
		for (int i = 0; i < v.n; i++)
			v.v[i] = (int64_t)x[i];
		ir_attr_set_ints(M(rw), n, name, v.v, (size_t)v.n);
		break;
	}
	case ATTR_FLOATS: {
		float f[RWG_MAX_INTS];
		int k = cnt < 0 ? 1 : cnt;
		for (int i = 0; i < k; i++)
			f[i] = (float)x[i];
		ir_attr_set_floats(M(rw), n, name, f, (size_t)k);
		break;
	}
	default: *unknown = true;
	}
}

NodeId rwg_node_forms(Rewriter *rw, const char *op, const RwgArg *ins, uint32_t nin, uint32_t nout,
                      const RwgForm *forms, int nforms, bool *unknown)
{
	ValueId vals[nin + 1];
	memset(vals, 0, sizeof vals);
	uint32_t kept = 0;
	/* inputs that are attributes here are dropped: in every form graft
	 * knows they come after the inputs that stay */
	for (uint32_t i = 0; i < nin; i++)
		if (!form_at(rw, forms, nforms, i))
			vals[kept++] = rwg_arg_value(rw, ins[i], unknown);
	NodeId node = rwg_node(rw, op, vals, kept, nout);
	for (uint32_t i = 0; i < nin; i++) {
		const RwgForm *f = form_at(rw, forms, nforms, i);
		if (f)
			set_from_arg(rw, node, f->attr, ins[i], unknown);
	}
	return node;
}

NodeId rwg_node_in(Rewriter *rw, const char *domain, const char *op, const ValueId *ins, uint32_t nin,
                   uint32_t nout)
{
	while (nin > 0 && !ins[nin - 1])
		nin--;
	return rw_node_in(rw, domain, op, ins, nin, nout);
}

NodeId rwg_node_outs(Rewriter *rw, const char *domain, const char *op, const ValueId *ins, uint32_t nin,
                     uint32_t used)
{
	while (nin > 0 && !ins[nin - 1])
		nin--;
	return rw_node_outs(rw, domain, op, ins, nin, used);
}

NodeId rwg_node(Rewriter *rw, const char *op, const ValueId *ins, uint32_t nin, uint32_t nout)
{
	return rwg_node_in(rw, "", op, ins, nin, nout);
}

ValueId rwg_op1(Rewriter *rw, const char *op, ValueId a)
{
	return rw_output(rw, rw_node(rw, op, &a, 1, 1), 0);
}

ValueId rwg_op2(Rewriter *rw, const char *op, ValueId a, ValueId b)
{
	ValueId in[2] = {a, b};
	return rw_output(rw, rw_node(rw, op, in, 2, 1), 0);
}

ValueId rwg_scalar_like(Rewriter *rw, ValueId like, double x, bool *unknown)
{
	int dt = rwg_dtype(rw, like);
	if (!dt || dt == DT_STRING || !ev_elem_size(dt)) {
		*unknown = true;
		dt = DT_FLOAT;
	}
	return rw_const_scalar(rw, dt, x);
}

ValueId rwg_const_ints(Rewriter *rw, RwgInts v)
{
	return rw_const_ints(rw, v.v, v.n);
}

void rwg_set_int(Rewriter *rw, NodeId n, const char *name, int64_t v) { ir_attr_set_int(M(rw), n, name, v); }
void rwg_set_float(Rewriter *rw, NodeId n, const char *name, double v) { ir_attr_set_float(M(rw), n, name, (float)v); }
void rwg_set_str(Rewriter *rw, NodeId n, const char *name, RwgStr s) { ir_attr_set_string(M(rw), n, name, s.p, s.n); }
void rwg_set_ints(Rewriter *rw, NodeId n, const char *name, RwgInts v) { ir_attr_set_ints(M(rw), n, name, v.v, (size_t)v.n); }

void rwg_set_floats(Rewriter *rw, NodeId n, const char *name, RwgFloats v)
{
	float f[RWG_MAX_INTS];
	for (int i = 0; i < v.n; i++)
		f[i] = (float)v.v[i];
	ir_attr_set_floats(M(rw), n, name, f, (size_t)v.n);
}

/* ---- C helpers of the library's rule files ------------------------------------------------ */

bool graft_reciprocal_exact(Rewriter *rw, ValueId t)
{
	EvValue *c = const_of(rw, t);
	/* normal exponents of the type: 1/x must be one of them */
	int emin = -126, emax = 127;
	bool ok = c && c->numel > 0;
	if (ok && c->dtype == DT_FLOAT16)
		emin = -14, emax = 15;
	else if (ok && c->dtype == DT_DOUBLE)
		emin = -1022, emax = 1023;
	else if (ok && c->dtype != DT_FLOAT && c->dtype != DT_BFLOAT16)
		ok = false;
	for (int64_t i = 0; ok && i < c->numel; i++) {
		double x = ev_get_f(c, i);
		int e;
		double mant = isfinite(x) && x != 0 ? frexp(x, &e) : 0;
		/* x = +-2^(e-1), so 1/x = +-2^(1-e) */
		ok = fabs(mant) == 0.5 && 1 - e >= emin && 1 - e <= emax;
	}
	ev_unref(c);
	return ok;
}

bool graft_all_greater(Rewriter *rw, ValueId t, double x)
{
	EvValue *c = const_of(rw, t);
	bool ok = c && c->dtype != DT_STRING;
	for (int64_t i = 0; ok && i < c->numel; i++)
		ok = ev_get_f(c, i) > x;
	ev_unref(c);
	return ok;
}

bool graft_all_nonzero(Rewriter *rw, ValueId t)
{
	EvValue *c = const_of(rw, t);
	bool ok = c && c->dtype != DT_STRING;
	for (int64_t i = 0; ok && i < c->numel; i++)
		ok = ev_get_f(c, i) != 0;
	ev_unref(c);
	return ok;
}

bool graft_rows_any(Rewriter *rw, ValueId t)
{
	EvValue *c = const_of(rw, t);
	bool ok = c && c->dtype != DT_STRING && c->rank >= 1;
	int64_t cols = ok ? c->dims[c->rank - 1] : 0;
	ok = ok && cols > 0;
	for (int64_t r = 0; ok && r < c->numel / cols; r++) {
		bool any = false;
		for (int64_t j = 0; !any && j < cols; j++)
			any = ev_get_f(c, r * cols + j) != 0;
		ok = any;
	}
	ev_unref(c);
	return ok;
}

/* Do a and b have the same shape, dim by dim the same size or the same
 * symbol ("batch")?  False when a rank or a dim is unknown. */
bool graft_same_shape(Rewriter *rw, ValueId a, ValueId b)
{
	const Shape *sa = &ir_value(M(rw), a)->shape, *sb = &ir_value(M(rw), b)->shape;
	if (sa->rank < 0 || sa->rank != sb->rank)
		return false;
	for (int i = 0; i < sa->rank; i++) {
		Dim x = sa->dims[i], y = sb->dims[i];
		if (x.size >= 0 ? x.size != y.size : !x.param || !y.param || strcmp(x.param, y.param))
			return false;
	}
	return true;
}

/* Is t a constant integer [1, n] (or [n]) holding 0, 1, ..., n - 1: the
 * position ids of a sequence of n, before they are expanded to the batch? */
bool graft_positions(Rewriter *rw, ValueId t, int64_t n)
{
	EvValue *c = const_of(rw, t);
	bool ok = c && !ev_is_float(c->dtype) && c->dtype != DT_STRING && c->dtype != DT_BOOL && c->numel == n &&
	          (c->rank == 1 || (c->rank == 2 && c->dims[0] == 1));
	for (int64_t i = 0; ok && i < n; i++)
		ok = ev_get_i(c, i) == i;
	ev_unref(c);
	return ok;
}

bool graft_batch_rows_equal(Rewriter *rw, ValueId t)
{
	EvValue *c = const_of(rw, t);
	bool ok = c && c->rank >= 2 && c->dims[0] >= 1 && c->dtype != DT_STRING;
	if (ok) {
		size_t row = (size_t)(c->numel / c->dims[0]) * ev_elem_size(c->dtype);
		const unsigned char *p = c->data;
		for (int64_t i = 1; ok && i < c->dims[0]; i++)
			ok = memcmp(p, p + (size_t)i * row, row) == 0;
	}
	ev_unref(c);
	return ok;
}

bool graft_not_constant(Rewriter *rw, ValueId v) { return v && !rw_is_const(rw, v); }

bool graft_no_zeros(Rewriter *rw, RwgInts s)
{
	(void)rw;
	for (int i = 0; i < s.n; i++)
		if (s.v[i] == 0)
			return false;
	return true;
}

/* Does `to` hold every value of `from` exactly?  Widening within floats,
 * within signed or unsigned ints, unsigned to a wider signed int, bool to
 * anything numeric, and ints to floats with enough mantissa. */
bool graft_cast_lossless(Rewriter *rw, int from, int64_t to)
{
	(void)rw;
	if (from == to)
		return true;
	switch (from) {
	case DT_BOOL:
		return to != DT_STRING && to != DT_UNDEFINED && to < DT_COUNT;
	case DT_FLOAT16:
		return to == DT_FLOAT || to == DT_DOUBLE;
	case DT_BFLOAT16:
		return to == DT_FLOAT || to == DT_DOUBLE;
	case DT_FLOAT:
		return to == DT_DOUBLE;
	case DT_INT8:
		return to == DT_INT16 || to == DT_INT32 || to == DT_INT64 || to == DT_FLOAT || to == DT_DOUBLE || to == DT_FLOAT16;
	case DT_UINT8:
		return to == DT_UINT16 || to == DT_UINT32 || to == DT_UINT64 || to == DT_INT16 || to == DT_INT32 ||
		       to == DT_INT64 || to == DT_FLOAT || to == DT_DOUBLE || to == DT_FLOAT16;
	case DT_INT16:
		return to == DT_INT32 || to == DT_INT64 || to == DT_FLOAT || to == DT_DOUBLE;
	case DT_UINT16:
		return to == DT_UINT32 || to == DT_UINT64 || to == DT_INT32 || to == DT_INT64 || to == DT_FLOAT ||
		       to == DT_DOUBLE;
	case DT_INT32:
		return to == DT_INT64 || to == DT_DOUBLE;
	case DT_UINT32:
		return to == DT_UINT64 || to == DT_INT64 || to == DT_DOUBLE;
	default:
		return false;
	}
}
