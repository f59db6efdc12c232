/* schema_check.c - does a node fit its op's schema (opschema.h) at the
 * model's opset: the rewrite engine checks every node a rule builds before
 * the rewrite commits, and the loaders check the attribute types of what
 * they read, so what graft writes is what ONNX runtimes accept.
 *
 * A node is checked for: the op existing at the opset; input and output
 * counts (and no required one omitted); attribute names, types and required
 * attributes; the element types of its inputs and outputs against the type
 * constraints (and one type per type parameter); and the attribute values
 * the spec bounds by the input's rank or by the dtypes: axis, axes, perm,
 * Cast's `to`.  Unknown dtypes and ranks are taken as fitting. */
#include "ir.h"
#include "gen/onnx.pb-c.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The default domain under either of its names. */
static bool default_domain(const char *domain)
{
	return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

static const OpSchema *schema_of(IrModel *m, const IrNode *node, int *version)
{
	const char *dom = default_domain(node->domain) ? "" : node->domain;
	int64_t v = ir_opset(m, dom);
	if (!v && dom[0])
		v = 1; /* a vendor op a rewrite adds imports its domain at version 1 */
	*version = v > INT32_MAX ? INT32_MAX : (int)v;
	return op_schema_lookup(dom, node->op_type, *version);
}

static const char *fail(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const char *fail(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return buf;
}

/* "an int", "a string", "ints": the type as a noun phrase. */
static const char *type_phrase(int t, char *buf, size_t size)
{
	const char *name = attr_type_name((AttrType)t);
	size_t n = strlen(name);
	if (t >= ATTR_FLOATS && t != ATTR_SPARSE_TENSOR && t != ATTR_TYPE_PROTO && n && name[n - 1] == 's')
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "%s %s", strchr("aeiou", name[0]) ? "an" : "a", name);
	return buf;
}

/* The attribute types: every attribute the node has that the schema knows
 * has the schema's type.  Unknown attributes are not looked at here. */
static const char *attr_types_error(const OpSchema *s, const IrNode *node, char *buf, size_t size)
{
	for (uint32_t i = 0; i < node->nattrs; i++) {
		const IrAttr *a = &node->attrs[i];
		const OpAttrDef *d = op_schema_attr(s, a->name);
		if (d && d->type != ATTR_UNDEFINED && d->type != a->type) {
			char want[32], got[32];
			return fail(buf, size, "attribute '%s' must be %s, not %s", a->name, type_phrase(d->type, want, sizeof want),
			            type_phrase(a->type, got, sizeof got));
		}
	}
	return NULL;
}

/* The element types formal f allows, as a mask over DType numbers (0: any). */
static uint32_t formal_types(const OpSchema *s, const OpFormal *f, const OpTypeConstraint **tc)
{
	*tc = NULL;
	if (!f->type_str)
		return 0;
	if (strncmp(f->type_str, "tensor(", 7) == 0) {
		char name[32];
		size_t n = strlen(f->type_str);
		snprintf(name, sizeof name, "%.*s", (int)(n > 8 ? n - 8 : 0), f->type_str + 7);
		int dt = dtype_from_name(name);
		return dt ? UINT32_C(1) << dt : 0;
	}
	for (int i = 0; i < s->nconstraints; i++)
		if (strcmp(s->constraints[i].param, f->type_str) == 0) {
			*tc = &s->constraints[i];
			return s->constraints[i].tensor_types;
		}
	return 0;
}

/* The formal that actual slot i of n slots stands for (the last one repeats if variadic). */
static const OpFormal *formal_at(const OpFormal *formals, int nformals, uint32_t i)
{
	if (!nformals)
		return NULL;
	if (i < (uint32_t)nformals)
		return &formals[i];
	return formals[nformals - 1].option == OPT_VARIADIC ? &formals[nformals - 1] : NULL;
}

typedef struct Binding {
	const char *param;
	int dtype;
	const char *where;      /* "input 0" */
	char wbuf[24];
} Binding;

/* The element types of the actual inputs (side 0) and outputs (side 1). */
static const char *types_error(IrModel *m, const OpSchema *s, const IrNode *node, char *buf, size_t size)
{
	Binding bind[16];
	int nbind = 0;
	for (int side = 0; side < 2; side++) {
		const OpFormal *formals = side ? s->outputs : s->inputs;
		int nformals = side ? s->noutputs : s->ninputs;
		uint32_t count = side ? node->noutputs : node->ninputs;
		const ValueId *vals = side ? node->outputs : node->inputs;
		for (uint32_t i = 0; i < count; i++) {
			const OpFormal *f = formal_at(formals, nformals, i);
			if (!f || !vals[i])
				continue;
			const IrValue *v = ir_value(m, vals[i]);
			if (!v->dtype || v->non_tensor)
				continue;
			const OpTypeConstraint *tc;
			uint32_t mask = formal_types(s, f, &tc);
			const char *what = side ? "output" : "input";
			if (mask && (v->dtype < 0 || v->dtype >= 32 || !((mask >> v->dtype) & 1)))
				return fail(buf, size, "%s %u ('%s') is %s, which %s-%d does not take%s%s", what, i, v->name,
				            dtype_name(v->dtype), s->name, s->since_version, tc ? " as " : "", tc ? tc->param : "");
			/* one type per type parameter, but for heterogeneous variadics */
			if (!tc || (f->option == OPT_VARIADIC && !f->homogeneous))
				continue;
			int k = 0;
			while (k < nbind && strcmp(bind[k].param, tc->param) != 0)
				k++;
			if (k == nbind) {
				if (nbind == (int)(sizeof bind / sizeof *bind))
					continue;
				bind[nbind].param = tc->param;
				bind[nbind].dtype = v->dtype;
				snprintf(bind[nbind].wbuf, sizeof bind[nbind].wbuf, "%s %u", what, i);
				bind[nbind].where = bind[nbind].wbuf;
				nbind++;
			} else if (bind[k].dtype != v->dtype) {
				return fail(buf, size, "%s %u ('%s') is %s but %s is %s, and %s-%d takes one type as %s", what, i,
				            v->name, dtype_name(v->dtype), bind[k].where, dtype_name(bind[k].dtype), s->name,
				            s->since_version, tc->param);
			}
		}
	}
	return NULL;
}

/* The known rank of input i of node, or -1. */
static int input_rank(IrModel *m, const IrNode *node, uint32_t i)
{
	if (i >= node->ninputs || !node->inputs[i])
		return -1;
	const IrValue *v = ir_value(m, node->inputs[i]);
	return v->non_tensor ? -1 : v->shape.rank;
}

static bool has_input_kind(OpKind k, const OpKind *list)
{
	for (; *list; list++)
		if (*list == k)
			return true;
	return false;
}

/* The attribute values the spec bounds. */
static const char *values_error(IrModel *m, const OpSchema *s, const IrNode *node, char *buf, size_t size)
{
	/* an `axis` in [-r, r-1] of input 0's rank r */
	static const OpKind axis_ops[] = {OP_Softmax, OP_LogSoftmax, OP_Hardmax, OP_Concat, OP_Gather, OP_GatherElements,
	                                  OP_ScatterElements, OP_Split, OP_ArgMax, OP_ArgMin, OP_LpNormalization, OP_TopK,
	                                  OP_LayerNormalization, OP_Compress, OP_UNKNOWN};
	/* `axes` each in [-r, r-1], no axis twice */
	static const OpKind axes_ops[] = {OP_ReduceL1, OP_ReduceL2, OP_ReduceLogSum, OP_ReduceLogSumExp, OP_ReduceMax,
	                                  OP_ReduceMean, OP_ReduceMin, OP_ReduceProd, OP_ReduceSum, OP_ReduceSumSquare,
	                                  OP_Squeeze, OP_Unsqueeze, OP_UNKNOWN};
	OpKind k = node->kind;
	int r = input_rank(m, node, 0);
	if (k == OP_Concat)
		for (uint32_t i = 1; r < 0 && i < node->ninputs; i++)
			r = input_rank(m, node, i);
	for (uint32_t i = 0; i < node->nattrs; i++) {
		const IrAttr *a = &node->attrs[i];
		if (a->type == ATTR_INT && strcmp(a->name, "axis") == 0 && r >= 0) {
			int64_t lo = -(int64_t)r, hi = r - 1;
			if (k == OP_Flatten)
				hi = r;
			else if (!has_input_kind(k, axis_ops))
				continue;
			if (a->i < lo || a->i > hi)
				return fail(buf, size, "attribute 'axis' is %lld, out of the range [%lld, %lld] for an input of rank %d",
				            (long long)a->i, (long long)lo, (long long)hi, r);
		} else if (a->type == ATTR_INTS && strcmp(a->name, "axes") == 0 && r >= 0 && has_input_kind(k, axes_ops)) {
			int64_t rank = k == OP_Unsqueeze ? r + (int64_t)a->n : r;
			for (size_t j = 0; j < a->n; j++) {
				if (a->ints[j] < -rank || a->ints[j] > rank - 1)
					return fail(buf, size, "attribute 'axes' holds %lld, out of the range [%lld, %lld]",
					            (long long)a->ints[j], (long long)-rank, (long long)(rank - 1));
				for (size_t q = 0; q < j; q++)
					if ((a->ints[q] < 0 ? a->ints[q] + rank : a->ints[q]) == (a->ints[j] < 0 ? a->ints[j] + rank : a->ints[j]))
						return fail(buf, size, "attribute 'axes' names axis %lld twice", (long long)a->ints[j]);
			}
		} else if (a->type == ATTR_INTS && k == OP_Transpose && strcmp(a->name, "perm") == 0) {
			if (r >= 0 && a->n != (size_t)r)
				return fail(buf, size, "attribute 'perm' has %zu entries for an input of rank %d", a->n, r);
			for (size_t j = 0; j < a->n; j++) {
				if (a->ints[j] < 0 || a->ints[j] >= (int64_t)a->n)
					return fail(buf, size, "attribute 'perm' holds %lld, not an axis of 0..%zu", (long long)a->ints[j],
					            a->n - 1);
				for (size_t q = 0; q < j; q++)
					if (a->ints[q] == a->ints[j])
						return fail(buf, size, "attribute 'perm' names axis %lld twice", (long long)a->ints[j]);
			}
		} else if (a->type == ATTR_INT && k == OP_Cast && strcmp(a->name, "to") == 0) {
			const OpTypeConstraint *tc = NULL;
			uint32_t mask = s->noutputs ? formal_types(s, &s->outputs[0], &tc) : 0;
			if (a->i <= DT_UNDEFINED || a->i >= DT_COUNT || (mask && !((mask >> a->i) & 1)))
				return fail(buf, size, "attribute 'to' is %lld, which is not a type %s-%d casts to", (long long)a->i,
				            s->name, s->since_version);
		}
	}
	return NULL;
}

const char *ir_node_schema_error(IrModel *m, NodeId n, char *buf, size_t size)
{
	const IrNode *node = ir_node(m, n);
	int version;
	const OpSchema *s = schema_of(m, node, &version);
	if (!s) {
		if (!default_domain(node->domain))
			return NULL; /* a custom domain's op: nothing to check against */
		if (op_kind_lookup(node->op_type) == OP_UNKNOWN)
			return fail(buf, size, "%s is not an ONNX op", node->op_type);
		return fail(buf, size, "%s is not an op of opset %d", node->op_type, version);
	}
	/* counts: trailing omitted optional inputs and outputs do not count */
	uint32_t nin = node->ninputs, nout = node->noutputs;
	while (nin && !node->inputs[nin - 1])
		nin--;
	while (nout && !node->outputs[nout - 1])
		nout--;
	if ((int64_t)nin < s->min_inputs || (int64_t)nin > s->max_inputs) {
		if (s->max_inputs == INT32_MAX)
			return fail(buf, size, "it has %u inputs; %s-%d takes at least %d", nin, s->name, s->since_version,
			            s->min_inputs);
		return fail(buf, size, "it has %u inputs; %s-%d takes %d to %d", nin, s->name, s->since_version, s->min_inputs,
		            s->max_inputs);
	}
	if ((int64_t)nout < s->min_outputs || (int64_t)nout > s->max_outputs) {
		if (s->max_outputs == INT32_MAX)
			return fail(buf, size, "it has %u outputs; %s-%d gives at least %d", nout, s->name, s->since_version,
			            s->min_outputs);
		return fail(buf, size, "it has %u outputs; %s-%d gives %d to %d", nout, s->name, s->since_version,
		            s->min_outputs, s->max_outputs);
	}
	for (uint32_t i = 0; i < nin; i++) {
		const OpFormal *f = formal_at(s->inputs, s->ninputs, i);
		if (!node->inputs[i] && f && f->option == OPT_SINGLE)
			return fail(buf, size, "input %u ('%s') is omitted, but %s-%d requires it", i, f->name, s->name,
			            s->since_version);
	}
	for (uint32_t i = 0; i < nout; i++) {
		const OpFormal *f = formal_at(s->outputs, s->noutputs, i);
		if (!node->outputs[i] && f && f->option == OPT_SINGLE)
			return fail(buf, size, "output %u ('%s') is omitted, but %s-%d requires it", i, f->name, s->name,
			            s->since_version);
	}
	/* attributes: known, of their type, the required ones present */
	for (uint32_t i = 0; i < node->nattrs; i++)
		if (!op_schema_attr(s, node->attrs[i].name))
			return fail(buf, size, "%s-%d has no attribute '%s'", s->name, s->since_version, node->attrs[i].name);
	const char *e = attr_types_error(s, node, buf, size);
	if (e)
		return e;
	for (int i = 0; i < s->nattrs; i++)
		if (s->attrs[i].required && !ir_attr(m, n, s->attrs[i].name))
			return fail(buf, size, "%s-%d requires attribute '%s'", s->name, s->since_version, s->attrs[i].name);
	/* attribute values first: a bad Cast `to` also makes a bad output type */
	if ((e = values_error(m, s, node, buf, size)))
		return e;
	return types_error(m, s, node, buf, size);
}

/* ---- what a loaded model declares ---------------------------------------------------- */

/* A negative dim_value in the declared type of a graph input or output
 * (the IR would take it for an unknown dim, and run it as 1). */
static bool interface_dims_ok(IrModel *m, Diag *d)
{
	bool ok = true;
	for (GraphId g = 1; g < m->ngraphs; g++) {
		const IrGraph *gr = ir_graph(m, g);
		if (gr->dead)
			continue;
		for (int side = 0; side < 2; side++)
			for (uint32_t i = 0; i < (side ? gr->noutputs : gr->ninputs); i++) {
				const IrValue *v = ir_value(m, side ? gr->outputs[i] : gr->inputs[i]);
				const Onnx__TypeProto *tp = v->info ? v->info->type : NULL;
				if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
				    !tp->tensor_type->shape)
					continue;
				const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
				for (size_t k = 0; k < sh->n_dim; k++)
					if (sh->dim[k]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
					    sh->dim[k]->dim_value < 0) {
						diag_error(d, m->path, "graph %s '%s': dimension %zu is %lld; a dimension cannot be negative",
						           side ? "output" : "input", v->name, k, (long long)sh->dim[k]->dim_value);
						ok = false;
						break;
					}
			}
	}
	return ok;
}

bool ir_check_declarations(IrModel *m, Diag *d)
{
	bool ok = interface_dims_ok(m, d);
	for (NodeId n = 1; n < m->nnodes; n++) {
		const IrNode *node = ir_node(m, n);
		if (node->dead)
			continue;
		int version;
		const OpSchema *s = schema_of(m, node, &version);
		char why[300], label[256];
		if (s && attr_types_error(s, node, why, sizeof why)) {
			diag_error(d, m->path, "node '%s' (%s): %s", ir_node_label(m, n, label, sizeof label), node->op_type, why);
			ok = false;
			if (d->nerrors > 10)
				break;
		}
	}
	return ok;
}
