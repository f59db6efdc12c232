/* convert.c - opset conversion of the default ONNX domain, one version at a
 * time, in every graph (If/Loop/Scan bodies included).
 *
 * For each step (v-1 -> v going up, v -> v-1 going down) every node whose op
 * has a different definition on the two sides of the step is looked at:
 *   - an adapter from the table below, where the ONNX changelog moved an
 *     attribute to an input (axes, pads, split, k, scales, min/max, ratio),
 *     replaced an op (Upsample -> Resize, Scatter -> ScatterElements) or
 *     changed semantics without changing the schema (Softmax's axis at 13,
 *     Resize-10's coordinates, RoiAlign's default at 16, GridSample's mode
 *     names at 20, GroupNormalization's scale at 21);
 *   - otherwise the generic check: the node must fit the other definition
 *     (its attributes, inputs by name and count, outputs, input types), and
 *     an omitted attribute whose default differs is written out.
 * Downgrades are exact or refused: an input that goes back to an attribute
 * must be a constant.  The IR version is raised to what the target opset
 * needs.  The schema table (ir/opschema.h) is the source of truth for what
 * changed at each version; the adapters are the changelog's prose.
 * graft's own checks: tests/check_convert.c and tests/convert_gate.sh (every
 * step up to 23, graft's evaluator and ONNX Runtime). */
#include "convert.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "runtime/eval/eval.h"
#include "runtime/infer/infer.h"
#include "ir/opschema.h"
#include "ir/ort_kernels.h"

typedef struct Conv {
	IrModel *m;
	InferState *inf;
	Diag *d;
	ConvertStats *st;
	int step;   /* the version on the upper side of the step being made */
	bool up;
	/* Reshapes that restore a Shape(x) the converter took (Softmax-11's
	 * Flatten); given allowzero = 1 once the model is at opset 14 or above */
	NodeId *restore;
	int nrestore, caprestore;
} Conv;

static int from_version(const Conv *c) { return c->up ? c->step - 1 : c->step; }
static int to_version(const Conv *c) { return c->up ? c->step : c->step - 1; }

static bool fail(Conv *c, NodeId n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(Conv *c, NodeId n, const char *fmt, ...)
{
	char msg[512], lb[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_error(c->d, c->m->path, "node %s (%s), opset %d -> %d: %s", ir_node_label(c->m, n, lb, sizeof lb),
	           ir_node(c->m, n)->op_type, from_version(c), to_version(c), msg);
	return false;
}

/* ---- constants and inputs ------------------------------------------------------ */

static ValueId new_const(Conv *c, NodeId n, const char *hint, const EvValue *v)
{
	IrModel *m = c->m;
	char name[128];
	snprintf(name, sizeof name, "%s_%s", *ir_node(m, n)->name ? ir_node(m, n)->name : ir_node(m, n)->op_type, hint);
	TensorId t = ir_tensor_new(m, v->dtype, v->dims, v->rank, v->data, v->nbytes);
	return ir_add_initializer(m, ir_node(m, n)->graph, ir_fresh_name(m, name), t);
}

static ValueId const_ints(Conv *c, NodeId n, const char *hint, const int64_t *v, size_t k, bool scalar)
{
	int64_t dims[1] = {(int64_t)k};
	EvValue *t = ev_tensor_new(DT_INT64, scalar ? 0 : 1, dims);
	for (size_t i = 0; i < k; i++)
		ev_set_i(t, (int64_t)i, v[i]);
	ValueId r = new_const(c, n, hint, t);
	ev_unref(t);
	return r;
}

static ValueId const_floats(Conv *c, NodeId n, const char *hint, int dtype, const double *v, size_t k, bool scalar)
{
	int64_t dims[1] = {(int64_t)k};
	EvValue *t = ev_tensor_new(dtype, scalar ? 0 : 1, dims);
	for (size_t i = 0; i < k; i++)
		ev_set_f(t, (int64_t)i, v[i]);
	ValueId r = new_const(c, n, hint, t);
	ev_unref(t);
	return r;
}

/* Input `slot` of n, 0 if omitted or out of range. */
static ValueId input(Conv *c, NodeId n, uint32_t slot)
{
	IrNode *node = ir_node(c->m, n);
	return slot < node->ninputs ? node->inputs[slot] : 0;
}

/* Drop trailing omitted inputs, and every input from `from` on. */
static void trim_inputs(Conv *c, NodeId n, uint32_t from)
{
	IrNode *node = ir_node(c->m, n);
	for (uint32_t i = from; i < node->ninputs; i++)
		ir_set_input(c->m, n, i, 0);
	if (node->ninputs > from)
		node->ninputs = from;
	while (node->ninputs && !node->inputs[node->ninputs - 1])
		node->ninputs--;
}

/* The known value of input `slot` (a constant, or one inference worked out). */
static const EvValue *known(Conv *c, NodeId n, uint32_t slot)
{
	ValueId v = input(c, n, slot);
	return v ? infer_known_value(c->inf, v) : NULL;
}

static bool known_ints(Conv *c, NodeId n, uint32_t slot, const char *what, int64_t **out, size_t *k)
{
	const EvValue *v = known(c, n, slot);
	if (!v || v->kind != EV_TENSOR || (v->dtype != DT_INT64 && v->dtype != DT_INT32))
		return fail(c, n, "input '%s' is not a constant, so it cannot become an attribute", what);
	*k = (size_t)v->numel;
	*out = malloc(sizeof **out * (*k + 1));
	for (size_t i = 0; i < *k; i++)
		(*out)[i] = ev_get_i(v, (int64_t)i);
	return true;
}

static bool known_scalar(Conv *c, NodeId n, uint32_t slot, const char *what, double *x)
{
	const EvValue *v = known(c, n, slot);
	if (!v || v->kind != EV_TENSOR || v->numel != 1)
		return fail(c, n, "input '%s' is not a constant, so it cannot become an attribute", what);
	*x = ev_get_f(v, 0);
	return true;
}

/* An ints (or int) attribute becomes an int64 input at `slot`. */
static void ints_attr_to_input(Conv *c, NodeId n, const char *name, uint32_t slot, bool scalar)
{
	const IrAttr *a = ir_attr(c->m, n, name);
	if (!a)
		return;
	ValueId v = a->type == ATTR_INT ? const_ints(c, n, name, &a->i, 1, scalar)
	                                : const_ints(c, n, name, a->ints, a->n, false);
	ir_attr_remove(c->m, n, name);
	ir_set_input(c->m, n, slot, v);
}

/* An int64 input at `slot` goes back to an ints attribute. */
static bool input_to_ints_attr(Conv *c, NodeId n, uint32_t slot, const char *name)
{
	if (!input(c, n, slot))
		return true;
	int64_t *v;
	size_t k;
	if (!known_ints(c, n, slot, name, &v, &k))
		return false;
	ir_attr_set_ints(c->m, n, name, v, k);
	free(v);
	ir_set_input(c->m, n, slot, 0);
	trim_inputs(c, n, ir_node(c->m, n)->ninputs);
	return true;
}

static int input_dtype(Conv *c, NodeId n, uint32_t slot)
{
	ValueId v = input(c, n, slot);
	return v ? ir_value(c->m, v)->dtype : DT_UNDEFINED;
}

static int input_rank(Conv *c, NodeId n, uint32_t slot)
{
	ValueId v = input(c, n, slot);
	return v ? ir_value(c->m, v)->shape.rank : -1;
}

static bool attr_is(Conv *c, NodeId n, const char *name, const char *value, const char *dflt)
{
	const IrAttr *a = ir_attr(c->m, n, name);
	if (!a)
		return strcmp(dflt, value) == 0;
	return a->type == ATTR_STRING && a->s.len == strlen(value) && memcmp(a->s.data, value, a->s.len) == 0;
}

static void rename_op(Conv *c, NodeId n, const char *op)
{
	IrNode *node = ir_node(c->m, n);
	node->op_type = arena_strdup(c->m->arena, op);
	node->kind = op_kind_lookup(op);
}

/* ---- upgrade adapters ---------------------------------------------------------- */

static bool up_bn_spatial(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "spatial");
	if (a && a->i != 1)
		return fail(c, n, "spatial=%lld (per-element statistics) has no equivalent from opset 9 on", (long long)a->i);
	ir_attr_remove(c->m, n, "spatial");
	return true;
}

/* BatchNormalization-14 renamed inputs 3 and 4 (mean -> input_mean) and
 * added training_mode; inference is unchanged. */
static bool up_bn14(Conv *c, NodeId n)
{
	(void)c, (void)n;
	return true;
}

static bool down_bn14(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "training_mode");
	if (a && a->i != 0)
		return fail(c, n, "training mode has no equivalent before opset 14");
	ir_attr_remove(c->m, n, "training_mode");
	return true;
}

static bool up_axes(Conv *c, NodeId n) { ints_attr_to_input(c, n, "axes", 1, false); return true; }
static bool up_split(Conv *c, NodeId n) { ints_attr_to_input(c, n, "split", 1, false); return true; }

static bool up_slice(Conv *c, NodeId n)
{
	ints_attr_to_input(c, n, "starts", 1, false);
	ints_attr_to_input(c, n, "ends", 2, false);
	ints_attr_to_input(c, n, "axes", 3, false);
	return true;
}

static bool up_topk(Conv *c, NodeId n) { ints_attr_to_input(c, n, "k", 1, false); return true; }

static bool up_upsample_scales(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "scales");
	if (!a)
		return fail(c, n, "Upsample has no 'scales' attribute");
	double *s = malloc(sizeof *s * (a->n + 1));
	for (size_t i = 0; i < a->n; i++)
		s[i] = a->floats[i];
	ValueId v = const_floats(c, n, "scales", DT_FLOAT, s, a->n, false);
	free(s);
	ir_attr_remove(c->m, n, "scales");
	ir_set_input(c->m, n, 1, v);
	return true;
}

/* Clip-6's bounds are float attributes; Clip-11's are inputs of X's type.
 * Absent bounds were float's limits: they matter for double only. */
static bool up_clip(Conv *c, NodeId n)
{
	int dt = input_dtype(c, n, 0);
	if (dt == DT_UNDEFINED)
		return fail(c, n, "the type of input 0 is unknown, so min/max cannot become inputs");
	static const char *names[2] = {"min", "max"};
	for (int i = 0; i < 2; i++) {
		const IrAttr *a = ir_attr(c->m, n, names[i]);
		double x = a ? a->f : i == 0 ? -FLT_MAX : FLT_MAX;
		if (!a && dt != DT_DOUBLE)
			continue;
		ValueId v = const_floats(c, n, names[i], dt, &x, 1, true);
		ir_attr_remove(c->m, n, names[i]);
		ir_set_input(c->m, n, 1 + (uint32_t)i, v);
	}
	return true;
}

static bool up_pad(Conv *c, NodeId n)
{
	ints_attr_to_input(c, n, "pads", 1, false);
	const IrAttr *a = ir_attr(c->m, n, "value");
	if (a) {
		int dt = input_dtype(c, n, 0);
		if (dt == DT_UNDEFINED)
			return fail(c, n, "the type of input 0 is unknown, so 'value' cannot become an input");
		double x = a->f;
		ValueId v = const_floats(c, n, "value", dt, &x, 1, true);
		ir_attr_remove(c->m, n, "value");
		ir_set_input(c->m, n, 2, v);
	}
	return true;
}

/* Which way a nearest Resize-10 rounds: ONNX Runtime (and ONNX's
 * resize_downsample_nearest test data) take floor(x / scale) on an axis that
 * upsamples and ceil(x / scale) on one that downsamples.  Resize-11 has one
 * nearest_mode for all axes, so the scales must be constant and not mix the
 * two.  Sets *mode to "floor" or "ceil". */
static bool resize10_rounding(Conv *c, NodeId n, uint32_t slot, const char **mode)
{
	const EvValue *sv = known(c, n, slot);
	if (!sv || sv->kind != EV_TENSOR)
		return fail(c, n, "nearest: the scales are not constant, and Resize-10 rounds down where it upsamples but "
		                  "up where it downsamples");
	bool down = false, up = false;
	for (int64_t i = 0; i < sv->numel; i++) {
		double x = ev_get_f(sv, i);
		down |= x < 1;
		up |= x > 1;
	}
	if (down && up)
		return fail(c, n, "nearest: Resize-10 rounds up on the axes it downsamples and down on those it upsamples; "
		                  "one nearest_mode cannot say both");
	*mode = down ? "ceil" : "floor";
	return true;
}

/* Resize-10 maps output to input coordinates as x / scale (asymmetric) and,
 * for nearest, rounds as resize10_rounding says; Resize-11 says so with
 * attributes, and takes roi. */
static bool up_resize(Conv *c, NodeId n)
{
	ValueId scales = input(c, n, 1);
	const EvValue *sv = known(c, n, 1);
	const char *mode = NULL;
	if (attr_is(c, n, "mode", "nearest", "nearest") && !resize10_rounding(c, n, 1, &mode))
		return false;
	int rank = sv ? (int)sv->numel : input_rank(c, n, 0);
	if (rank < 0)
		return fail(c, n, "the rank of input 0 is unknown, so roi cannot be built");
	double *roi = malloc(sizeof *roi * (size_t)(2 * rank + 1));
	for (int i = 0; i < rank; i++) {
		roi[i] = 0;
		roi[rank + i] = 1;
	}
	ValueId r = const_floats(c, n, "roi", DT_FLOAT, roi, (size_t)(2 * rank), false);
	free(roi);
	ir_set_input(c->m, n, 2, scales);
	ir_set_input(c->m, n, 1, r);
	static const char asym[] = "asymmetric";
	ir_attr_set_string(c->m, n, "coordinate_transformation_mode", asym, sizeof asym - 1);
	if (mode)
		ir_attr_set_string(c->m, n, "nearest_mode", mode, strlen(mode));
	return true;
}

/* ONNX Runtime's Dropout-7..11 gives an all-false mask outside training,
 * Dropout-12 an all-true one (the spec's): where the mask is used, a Not
 * after it keeps the values the model computed. */
static void negate_mask(Conv *c, NodeId n)
{
	IrModel *m = c->m;
	IrNode *node = ir_node(m, n);
	ValueId mask = node->noutputs > 1 ? node->outputs[1] : 0;
	if (!mask || (!ir_value(m, mask)->nuses && !ir_value(m, mask)->is_output))
		return;
	GraphId g = node->graph;
	const char *old = ir_value(m, mask)->name;
	ir_value_rename(m, mask, ir_fresh_name(m, old));
	const char *oname[1] = {NULL};
	NodeId no = ir_node_new(m, g, ir_next(m, n), "", "Not", "", &mask, 1, oname, 1);
	ValueId out = ir_node(m, no)->outputs[0];
	ir_replace_all_uses(m, mask, out);
	ir_set_input(m, no, 0, mask);
	if (ir_value(m, mask)->is_output) {
		IrGraph *gr = ir_graph(m, g);
		for (uint32_t i = 0; i < gr->noutputs; i++)
			if (gr->outputs[i] == mask)
				ir_set_output(m, g, i, out);
	}
	ir_value_rename(m, out, old);
	Shape shp = ir_value(m, mask)->shape;
	ir_value_set_type(m, out, DT_BOOL, &shp);
	c->st->added++;
}

static bool up_dropout(Conv *c, NodeId n)
{
	negate_mask(c, n);
	const IrAttr *a = ir_attr(c->m, n, "ratio");
	if (a) {
		double x = a->f;
		ValueId v = const_floats(c, n, "ratio", DT_FLOAT, &x, 1, true);
		ir_attr_remove(c->m, n, "ratio");
		ir_set_input(c->m, n, 1, v);
	}
	return true;
}

/* Softmax-1..11 coerces the input to 2-D at `axis` (default 1) and
 * normalizes each row; Softmax-13 normalizes along `axis` (default -1).  The
 * same where axis is the last one; elsewhere Flatten, softmax, Reshape back.
 * A dim that is 0 only at run time would meet Reshape's copying 0 there, which
 * ONNX Runtime refuses (make difftest seed 463614): from opset 14 on the
 * Reshape gets allowzero = 1 (convert_opset, at the end), below it such a
 * model runs only before the conversion. */
static bool up_softmax(Conv *c, NodeId n)
{
	IrModel *m = c->m;
	const IrAttr *a = ir_attr(m, n, "axis");
	int64_t axis = a ? a->i : 1;
	int rank = input_rank(c, n, 0);
	if (rank >= 0 && (axis == rank - 1 || axis == -1)) {
		ir_attr_set_int(m, n, "axis", -1);
		return true;
	}
	/* an input with a dim of 0 is empty, and so is the result along any
	 * axis: the Reshape back would copy a dim that the 2-D form lacks (a 0
	 * in its target), which ONNX Runtime refuses (make difftest) */
	const Shape *xs = &ir_value(m, ir_node(m, n)->inputs[0])->shape;
	for (int i = 0; i < xs->rank; i++)
		if (xs->dims[i].size == 0) {
			ir_attr_set_int(m, n, "axis", -1);
			return true;
		}
	IrNode *node = ir_node(m, n);
	GraphId g = node->graph;
	ValueId x = node->inputs[0], y = node->outputs[0];
	ValueId shape = ir_node(m, ir_node_new(m, g, n, "", "Shape", "", &x, 1, NULL, 1))->outputs[0];
	NodeId fl = ir_node_new(m, g, n, "", "Flatten", "", &x, 1, NULL, 1);
	ir_attr_set_int(m, fl, "axis", axis);
	ir_set_input(m, n, 0, ir_node(m, fl)->outputs[0]);
	ir_attr_set_int(m, n, "axis", -1);
	/* the op's output gets a fresh name; the Reshape takes over the old one */
	const char *old = ir_value(m, y)->name;
	ir_value_rename(m, y, ir_fresh_name(m, old));
	NodeId next = ir_next(m, n);
	ValueId rin[2] = {y, shape};
	const char *rname[1] = {NULL};
	NodeId rs = ir_node_new(m, g, next, "", "Reshape", "", rin, 2, rname, 1);
	ValueId out = ir_node(m, rs)->outputs[0];
	if (c->nrestore == c->caprestore) {
		c->caprestore = c->caprestore ? 2 * c->caprestore : 8;
		c->restore = realloc(c->restore, sizeof *c->restore * (size_t)c->caprestore);
		if (!c->restore)
			abort();
	}
	c->restore[c->nrestore++] = rs;
	ir_replace_all_uses(m, y, out);
	ir_set_input(m, rs, 0, y); /* replace_all_uses moved the Reshape's own input too */
	if (ir_value(m, y)->is_output) {
		IrGraph *gr = ir_graph(m, g);
		for (uint32_t i = 0; i < gr->noutputs; i++)
			if (gr->outputs[i] == y)
				ir_set_output(m, g, i, out);
	}
	ir_value_rename(m, out, old);
	Shape shp = ir_value(m, y)->shape;
	ir_value_set_type(m, out, ir_value(m, y)->dtype, &shp);
	ir_value_set_type(m, y, ir_value(m, y)->dtype, &(Shape){.rank = -1}); /* now 2-D */
	c->st->added += 3;
	return true;
}

static bool up_roialign(Conv *c, NodeId n)
{
	static const char ohp[] = "output_half_pixel";
	if (!ir_attr(c->m, n, "coordinate_transformation_mode"))
		ir_attr_set_string(c->m, n, "coordinate_transformation_mode", ohp, sizeof ohp - 1);
	return true;
}

static bool rename_mode(Conv *c, NodeId n, const char *const *from, const char *const *to, int k)
{
	for (int i = 0; i < k; i++)
		if (ir_attr(c->m, n, "mode") && attr_is(c, n, "mode", from[i], ""))
			ir_attr_set_string(c->m, n, "mode", to[i], strlen(to[i]));
	return true;
}

static const char *const gs_old[2] = {"bilinear", "bicubic"}, *const gs_new[2] = {"linear", "cubic"};
static bool up_gridsample(Conv *c, NodeId n) { return rename_mode(c, n, gs_old, gs_new, 2); }

/* GroupNormalization-18's scale and bias have one value per group, -21's one
 * per channel: repeat each group's value over its channels. */
static bool up_groupnorm(Conv *c, NodeId n)
{
	IrModel *m = c->m;
	const IrAttr *a = ir_attr(m, n, "num_groups");
	ValueId x = input(c, n, 0);
	if (!a || !x || ir_value(m, x)->shape.rank < 2 || ir_value(m, x)->shape.dims[1].size <= 0)
		return fail(c, n, "the channel count of input 0 is unknown, so scale and bias cannot be expanded");
	int64_t groups = a->i, channels = ir_value(m, x)->shape.dims[1].size;
	if (groups <= 0 || channels % groups)
		return fail(c, n, "%lld channels do not split into %lld groups", (long long)channels, (long long)groups);
	for (uint32_t slot = 1; slot <= 2; slot++) {
		const EvValue *v = known(c, n, slot);
		if (!v || v->numel != groups)
			return fail(c, n, "input %u is not a constant of %lld values, so it cannot be expanded", slot, (long long)groups);
		double *e = malloc(sizeof *e * (size_t)channels);
		for (int64_t i = 0; i < channels; i++)
			e[i] = ev_get_f(v, i / (channels / groups));
		ValueId nv = const_floats(c, n, slot == 1 ? "scale" : "bias", v->dtype, e, (size_t)channels, false);
		free(e);
		ir_set_input(m, n, slot, nv);
	}
	return true;
}

static bool up_split18(Conv *c, NodeId n)
{
	if (!input(c, n, 1) && !ir_attr(c->m, n, "num_outputs"))
		ir_attr_set_int(c->m, n, "num_outputs", ir_node(c->m, n)->noutputs);
	return true;
}

static bool up_dft(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "axis");
	int64_t axis = a ? a->i : 1;
	ir_attr_remove(c->m, n, "axis");
	ir_set_input(c->m, n, 2, const_ints(c, n, "axis", &axis, 1, true));
	return true;
}

/* ---- opsets 1 to 6 (upgrade) ----------------------------------------------------- */

/* Input `slot` of n is replaced by an Unsqueeze of it (opset 1..12 form:
 * axes an attribute), added before n. */
static void unsqueeze_input(Conv *c, NodeId n, uint32_t slot, const int64_t *axes, size_t k)
{
	IrModel *m = c->m;
	ValueId v = input(c, n, slot);
	NodeId u = ir_node_new(m, ir_node(m, n)->graph, n, "", "Unsqueeze", "", &v, 1, NULL, 1);
	ir_attr_set_ints(m, u, "axes", axes, k);
	ir_set_input(m, n, slot, ir_node(m, u)->outputs[0]);
	c->st->added++;
}

/* Opsets 1..6 broadcast the binary ops only with broadcast = 1, and then
 * align input 1 with input 0 starting at `axis` (default: the last dims);
 * from opset 7 both broadcast as numpy does, aligning the last dims.  Input 1
 * gets trailing 1-dims (an Unsqueeze) where it stood before the end, so the
 * ranks must be known.  Without broadcast the shapes were equal: numpy's
 * rule gives the same. */
static bool up_broadcast(Conv *c, NodeId n)
{
	IrModel *m = c->m;
	const IrAttr *b = ir_attr(m, n, "broadcast"), *ax = ir_attr(m, n, "axis");
	bool bc = b && b->i != 0;
	int ra = input_rank(c, n, 0), rb = input_rank(c, n, 1);
	if (bc && (ra < 0 || rb < 0))
		return fail(c, n, "broadcast = 1 and the rank of input %d is unknown, so input 1 cannot be aligned for "
		                  "numpy broadcasting", ra < 0 ? 0 : 1);
	if (bc) {
		int64_t k = ax ? ax->i : ra - rb;
		if (k < 0 || k + rb > ra)
			return fail(c, n, "broadcast axis %lld does not place a rank-%d input 1 within a rank-%d input 0",
			            (long long)k, rb, ra);
		const Shape *sa = &ir_value(m, input(c, n, 0))->shape, *sb = &ir_value(m, input(c, n, 1))->shape;
		for (int j = 0; j < rb; j++) {
			int64_t da = sa->dims[k + j].size, db = sb->dims[j].size;
			if (da >= 0 && db >= 0 && db != 1 && da != db)
				return fail(c, n, "dim %d of input 1 (%lld) does not broadcast to dim %lld of input 0 (%lld)", j,
				            (long long)db, (long long)(k + j), (long long)da);
		}
		int trail = ra - (int)k - rb;
		if (trail > 0 && rb > 0) {
			int64_t axes[IR_MAX_RANK];
			for (int j = 0; j < trail; j++)
				axes[j] = rb + j;
			unsqueeze_input(c, n, 1, axes, (size_t)trail);
		}
	}
	ir_attr_remove(m, n, "broadcast");
	ir_attr_remove(m, n, "axis");
	return true;
}

/* Gemm-6's broadcast = 1 let C broadcast to [M, N] as Gemm-7 always does. */
static bool up_gemm7(Conv *c, NodeId n)
{
	ir_attr_remove(c->m, n, "broadcast");
	return true;
}

/* PRelu before opset 7 applies a slope of C values per channel (axis 1), as
 * graft's evaluator does (a rank-1 slope, or one of X's rank less one, of C
 * elements); from 7 on the slope broadcasts as numpy: reshape it to
 * [C, 1, ..., 1]. */
static bool up_prelu7(Conv *c, NodeId n)
{
	IrModel *m = c->m;
	ValueId x = input(c, n, 0), s = input(c, n, 1);
	const Shape *xs = &ir_value(m, x)->shape, *ss = &ir_value(m, s)->shape;
	int64_t numel = 1;
	for (int i = 0; i < ss->rank; i++)
		numel = ss->dims[i].size < 0 || numel < 0 ? -1 : numel * ss->dims[i].size;
	if (ss->rank >= 0 && numel == 1)
		return true;
	if (xs->rank < 0 || ss->rank < 0 || numel < 0 || (xs->rank >= 2 && xs->dims[1].size < 0))
		return fail(c, n, "the shapes of X and the slope are unknown, so the per-channel slope of opset 6 cannot be "
		                  "made numpy broadcasting");
	if (xs->rank < 2 || numel != xs->dims[1].size || (ss->rank != 1 && ss->rank != xs->rank - 1))
		return true;
	if (ss->rank == 1 && xs->rank == 2)
		return true;
	int64_t shape[IR_MAX_RANK];
	shape[0] = numel;
	for (int i = 1; i < xs->rank - 1; i++)
		shape[i] = 1;
	ValueId in[2] = {s, const_ints(c, n, "slope_shape", shape, (size_t)(xs->rank - 1), false)};
	NodeId r = ir_node_new(m, ir_node(m, n)->graph, n, "", "Reshape", "", in, 2, NULL, 1);
	ir_set_input(m, n, 1, ir_node(m, r)->outputs[0]);
	c->st->added++;
	return true;
}

/* Opset 6's is_test = 0 means training.  BatchNormalization then gives the
 * batch statistics only where its outputs 1..4 are used (graft's evaluator,
 * ONNX Runtime at opset 7); Dropout drops at random. */
static bool used_output(Conv *c, NodeId n, uint32_t i)
{
	IrNode *node = ir_node(c->m, n);
	if (i >= node->noutputs || !node->outputs[i])
		return false;
	const IrValue *v = ir_value(c->m, node->outputs[i]);
	return v->nuses || v->is_output;
}

static bool up_bn7(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "is_test");
	bool stats = false;
	for (uint32_t i = 1; i < 5; i++)
		stats |= used_output(c, n, i);
	if ((!a || a->i == 0) && stats)
		return fail(c, n, "is_test = 0 with the statistics outputs used (training) has no equivalent from opset 7 on");
	ir_attr_remove(c->m, n, "is_test");
	return true;
}

static bool up_dropout7(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "is_test"), *r = ir_attr(c->m, n, "ratio");
	if ((!a || a->i == 0) && (!r || r->f != 0))
		return fail(c, n, "is_test = 0 (training: random dropout) has no equivalent from opset 7 on");
	ir_attr_remove(c->m, n, "is_test");
	return true;
}

/* Upsample-1: height_scale and width_scale of a 4-D input, mode bilinear;
 * Upsample-7: scales per axis, mode linear. */
static bool up_upsample7(Conv *c, NodeId n)
{
	const IrAttr *h = ir_attr(c->m, n, "height_scale"), *w = ir_attr(c->m, n, "width_scale");
	if (!h || !w)
		return fail(c, n, "Upsample-1 needs height_scale and width_scale");
	float s[4] = {1, 1, h->f, w->f};
	ir_attr_set_floats(c->m, n, "scales", s, 4);
	ir_attr_remove(c->m, n, "height_scale");
	ir_attr_remove(c->m, n, "width_scale");
	static const char *const o[1] = {"bilinear"}, *const nw[1] = {"linear"};
	return rename_mode(c, n, o, nw, 1);
}

/* Cast-1's 'to' is a type name ("FLOAT"), Cast-6's a TensorProto type. */
static bool up_cast6(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "to");
	char name[32];
	if (!a || a->type != ATTR_STRING || a->s.len >= sizeof name)
		return fail(c, n, "Cast-1 needs a string 'to'");
	for (size_t i = 0; i < a->s.len; i++)
		name[i] = (char)(((const char *)a->s.data)[i] | 0x20);
	name[a->s.len] = 0;
	int dt = dtype_from_name(name);
	if (dt == DT_UNDEFINED)
		return fail(c, n, "'to' names no type graft knows ('%s')", name);
	ir_attr_remove(c->m, n, "to");
	ir_attr_set_int(c->m, n, "to", dt);
	return true;
}

/* Reshape-5 takes the shape as an input (and consumed_inputs went at 5). */
static bool up_reshape5(Conv *c, NodeId n)
{
	if (!ir_attr(c->m, n, "shape"))
		return fail(c, n, "Reshape-1 has no 'shape' attribute");
	ir_attr_remove(c->m, n, "consumed_inputs");
	ints_attr_to_input(c, n, "shape", 1, false);
	return true;
}

/* Concat-1's axis defaults to 1; Concat-4 requires it. */
static bool up_concat4(Conv *c, NodeId n)
{
	if (!ir_attr(c->m, n, "axis"))
		ir_attr_set_int(c->m, n, "axis", 1);
	return true;
}

/* Renames an attribute, keeping its value. */
static void rename_attr(Conv *c, NodeId n, const char *from, const char *to)
{
	const IrAttr *a = ir_attr(c->m, n, from);
	if (!a)
		return;
	IrAttr copy = *a;
	if (copy.type == ATTR_INTS)
		ir_attr_set_ints(c->m, n, to, copy.ints, copy.n);
	else if (copy.type == ATTR_INT)
		ir_attr_set_int(c->m, n, to, copy.i);
	ir_attr_remove(c->m, n, from);
}

static bool up_pad2(Conv *c, NodeId n) { rename_attr(c, n, "paddings", "pads"); return true; }

/* Split-1 takes the split as an attribute or as input 1; Split-2 as an
 * attribute only. */
static bool up_split2(Conv *c, NodeId n) { return input_to_ints_attr(c, n, 1, "split"); }

/* LpPool-1's p is a float, LpPool-2's an int. */
static bool up_lppool2(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "p");
	if (!a)
		return true;
	float p = a->f;
	if (p != (float)(int64_t)p)
		return fail(c, n, "p = %g is not an integer, which LpPool-2 requires", (double)p);
	ir_attr_remove(c->m, n, "p");
	ir_attr_set_int(c->m, n, "p", (int64_t)p);
	return true;
}

/* ---- downgrade adapters -------------------------------------------------------- */

static bool down_axes(Conv *c, NodeId n) { return input_to_ints_attr(c, n, 1, "axes"); }
static bool down_split(Conv *c, NodeId n) { return input_to_ints_attr(c, n, 1, "split"); }

static bool down_split18(Conv *c, NodeId n)
{
	ir_attr_remove(c->m, n, "num_outputs");
	return true;
}

static bool down_slice(Conv *c, NodeId n)
{
	if (input(c, n, 4)) {
		int64_t *steps;
		size_t k;
		if (!known_ints(c, n, 4, "steps", &steps, &k))
			return false;
		for (size_t i = 0; i < k; i++)
			if (steps[i] != 1) {
				free(steps);
				return fail(c, n, "steps other than 1 have no equivalent before opset 10");
			}
		free(steps);
		ir_set_input(c->m, n, 4, 0);
	}
	static const char *names[3] = {"starts", "ends", "axes"};
	for (int i = 2; i >= 0; i--)
		if (!input_to_ints_attr(c, n, 1 + (uint32_t)i, names[i]))
			return false;
	return true;
}

static bool down_topk(Conv *c, NodeId n)
{
	int64_t *k;
	size_t count;
	if (!known_ints(c, n, 1, "K", &k, &count))
		return false;
	if (count != 1) {
		free(k);
		return fail(c, n, "K has %zu values", count);
	}
	ir_attr_set_int(c->m, n, "k", k[0]);
	free(k);
	trim_inputs(c, n, 1);
	return true;
}

static bool down_clip(Conv *c, NodeId n)
{
	static const char *names[2] = {"min", "max"};
	for (uint32_t i = 0; i < 2; i++) {
		double x;
		if (!input(c, n, 1 + i))
			continue;
		if (!known_scalar(c, n, 1 + i, names[i], &x))
			return false;
		ir_attr_set_float(c->m, n, names[i], (float)x);
	}
	trim_inputs(c, n, 1);
	return true;
}

static bool down_pad(Conv *c, NodeId n)
{
	if (input(c, n, 3))
		return fail(c, n, "the 'axes' input has no equivalent before opset 18");
	double value = 0;
	if (input(c, n, 2) && !known_scalar(c, n, 2, "constant_value", &value))
		return false;
	int64_t *pads;
	size_t k;
	if (!known_ints(c, n, 1, "pads", &pads, &k))
		return false;
	ir_attr_set_ints(c->m, n, "pads", pads, k);
	free(pads);
	if (value != 0)
		ir_attr_set_float(c->m, n, "value", (float)value);
	trim_inputs(c, n, 1);
	return true;
}

static bool down_dropout(Conv *c, NodeId n)
{
	if (input(c, n, 2)) {
		double t;
		if (!known_scalar(c, n, 2, "training_mode", &t))
			return false;
		if (t != 0)
			return fail(c, n, "training mode has no equivalent before opset 12");
	}
	if (input(c, n, 1)) {
		double r;
		if (!known_scalar(c, n, 1, "ratio", &r))
			return false;
		ir_attr_set_float(c->m, n, "ratio", (float)r);
	}
	trim_inputs(c, n, 1);
	negate_mask(c, n);
	return true;
}

static bool down_resize(Conv *c, NodeId n)
{
	if (!attr_is(c, n, "coordinate_transformation_mode", "asymmetric", "half_pixel") ||
	    attr_is(c, n, "mode", "cubic", "nearest"))
		return fail(c, n, "only asymmetric coordinates have an equivalent before opset 11");
	if (input(c, n, 3) || !input(c, n, 2))
		return fail(c, n, "Resize by 'sizes' has no equivalent before opset 11");
	if (attr_is(c, n, "mode", "nearest", "nearest")) {
		const char *mode;
		if (!resize10_rounding(c, n, 2, &mode))
			return false;
		if (!attr_is(c, n, "nearest_mode", mode, "round_prefer_floor"))
			return fail(c, n, "nearest: Resize-10 rounds %s with these scales; only nearest_mode %s has an "
			                  "equivalent before opset 11", strcmp(mode, "ceil") ? "down" : "up", mode);
	}
	ValueId scales = input(c, n, 2);
	ir_set_input(c->m, n, 1, scales);
	trim_inputs(c, n, 2);
	ir_attr_remove(c->m, n, "coordinate_transformation_mode");
	ir_attr_remove(c->m, n, "nearest_mode");
	return true;
}

static bool down_upsample_scales(Conv *c, NodeId n)
{
	const EvValue *v = known(c, n, 1);
	if (!v || v->kind != EV_TENSOR)
		return fail(c, n, "input 'scales' is not a constant, so it cannot become an attribute");
	float *s = malloc(sizeof *s * (size_t)(v->numel + 1));
	for (int64_t i = 0; i < v->numel; i++)
		s[i] = (float)ev_get_f(v, i);
	ir_attr_set_floats(c->m, n, "scales", s, (size_t)v->numel);
	free(s);
	trim_inputs(c, n, 1);
	return true;
}

/* Softmax-13 along the last axis is Softmax-12 at axis rank-1. */
static bool down_softmax(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "axis");
	int64_t axis = a ? a->i : -1;
	int rank = input_rank(c, n, 0);
	if (rank < 0)
		return fail(c, n, "the rank of input 0 is unknown");
	if (axis != -1 && axis != rank - 1)
		return fail(c, n, "axis %lld of a rank-%d input has no equivalent before opset 13", (long long)axis, rank);
	ir_attr_set_int(c->m, n, "axis", rank - 1);
	return true;
}

static bool down_roialign(Conv *c, NodeId n)
{
	if (!attr_is(c, n, "coordinate_transformation_mode", "output_half_pixel", "half_pixel"))
		return fail(c, n, "coordinate_transformation_mode half_pixel has no equivalent before opset 16");
	ir_attr_remove(c->m, n, "coordinate_transformation_mode");
	return true;
}

static bool down_gridsample(Conv *c, NodeId n)
{
	if (input_rank(c, n, 0) != 4)
		return fail(c, n, "only a 4-D input (known rank) has an equivalent before opset 20");
	return rename_mode(c, n, gs_new, gs_old, 2);
}

/* ---- opsets 7 to 1 (downgrade) ---------------------------------------------------- */

/* Numpy broadcasting of a binary op at opset 7 is the legacy form where
 * input 1 broadcasts to input 0 over its last dims (broadcast = 1, no axis),
 * or where the shapes are equal.  Anything else (input 0 broadcast, a rank
 * unknown) is refused. */
/* Two dims known to be equal: the same size, or the same symbol. */
static bool same_dim(Dim a, Dim b)
{
	if (a.size >= 0 || b.size >= 0)
		return a.size == b.size;
	return a.param && b.param && strcmp(a.param, b.param) == 0;
}

static bool down_broadcast(Conv *c, NodeId n)
{
	IrModel *m = c->m;
	int ra = input_rank(c, n, 0), rb = input_rank(c, n, 1);
	if (ra < 0 || rb < 0)
		return fail(c, n, "the rank of input %d is unknown, so the legacy broadcast cannot be decided", ra < 0 ? 0 : 1);
	const Shape *sa = &ir_value(m, input(c, n, 0))->shape, *sb = &ir_value(m, input(c, n, 1))->shape;
	bool same = ra == rb;
	for (int j = 0; same && j < ra; j++)
		same = same_dim(sa->dims[j], sb->dims[j]);
	if (same)
		return true;
	if (rb > ra)
		return fail(c, n, "input 1 has the higher rank; before opset 7 only input 1 broadcasts");
	for (int j = 0; j < rb; j++) {
		if (!(sb->dims[j].size == 1 || same_dim(sa->dims[ra - rb + j], sb->dims[j])))
			return fail(c, n, "input 1 is not known to broadcast to input 0; before opset 7 only input 1 broadcasts");
	}
	ir_attr_set_int(m, n, "broadcast", 1);
	return true;
}

static bool down_gemm7(Conv *c, NodeId n)
{
	ValueId cv = input(c, n, 2);
	if (!cv)
		return true;
	const Shape *s = &ir_value(c->m, cv)->shape, *sa = &ir_value(c->m, input(c, n, 0))->shape,
	            *sb = &ir_value(c->m, input(c, n, 1))->shape;
	const IrAttr *ta = ir_attr(c->m, n, "transA"), *tb = ir_attr(c->m, n, "transB");
	int64_t mm = sa->rank == 2 ? sa->dims[ta && ta->i ? 1 : 0].size : -1;
	int64_t nn = sb->rank == 2 ? sb->dims[tb && tb->i ? 0 : 1].size : -1;
	if (!(s->rank == 2 && mm >= 0 && s->dims[0].size == mm && nn >= 0 && s->dims[1].size == nn))
		ir_attr_set_int(c->m, n, "broadcast", 1);
	return true;
}

/* PRelu-7's numpy slope is PRelu-6's where the per-channel reading (a slope
 * of C elements, rank 1 or X's rank less one) does not apply, or gives the
 * same: a [C, 1, ..., 1] slope, or a [C] one with a 2-D X. */
static bool down_prelu7(Conv *c, NodeId n)
{
	IrModel *m = c->m;
	const Shape *xs = &ir_value(m, input(c, n, 0))->shape, *ss = &ir_value(m, input(c, n, 1))->shape;
	int64_t numel = 1;
	for (int i = 0; ss->rank >= 0 && i < ss->rank; i++)
		numel = ss->dims[i].size < 0 || numel < 0 ? -1 : numel * ss->dims[i].size;
	if (ss->rank >= 0 && numel == 1)
		return true;
	if (xs->rank < 0 || ss->rank < 0 || numel < 0 || (xs->rank >= 2 && xs->dims[1].size < 0))
		return fail(c, n, "the shapes of X and the slope are unknown; before opset 7 a slope of C values is per channel");
	if (xs->rank < 2 || numel != xs->dims[1].size || (ss->rank != 1 && ss->rank != xs->rank - 1))
		return true;
	if (ss->rank == 1 && xs->rank == 2)
		return true;
	if (ss->rank == xs->rank - 1 && ss->dims[0].size == numel)
		return true;
	return fail(c, n, "a slope of %d dims with C = %lld values reads per channel before opset 7", ss->rank,
	            (long long)numel);
}

static bool down_bn7(Conv *c, NodeId n)
{
	for (uint32_t i = 1; i < 5; i++)
		if (used_output(c, n, i))
			return fail(c, n, "the statistics outputs are used (training); graft writes is_test = 1 only");
	ir_attr_set_int(c->m, n, "is_test", 1);
	return true;
}

static bool down_dropout7(Conv *c, NodeId n)
{
	ir_attr_set_int(c->m, n, "is_test", 1);
	return true;
}

static bool down_upsample7(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "scales");
	if (!a || a->n != 4 || a->floats[0] != 1 || a->floats[1] != 1)
		return fail(c, n, "only 4-D scales [1, 1, h, w] have an equivalent before opset 7");
	float h = a->floats[2], w = a->floats[3];
	ir_attr_remove(c->m, n, "scales");
	ir_attr_set_float(c->m, n, "height_scale", h);
	ir_attr_set_float(c->m, n, "width_scale", w);
	static const char *const o[1] = {"linear"}, *const nw[1] = {"bilinear"};
	return rename_mode(c, n, o, nw, 1);
}

static bool down_cast6(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "to");
	if (!a || a->type != ATTR_INT)
		return fail(c, n, "Cast-6 needs an int 'to'");
	const char *name = dtype_name((int)a->i);
	char up[32];
	size_t len = strlen(name);
	if (len >= sizeof up || !strcmp(name, "?"))
		return fail(c, n, "'to' = %lld is no type Cast-1 names", (long long)a->i);
	for (size_t i = 0; i <= len; i++)
		up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
	ir_attr_remove(c->m, n, "to");
	ir_attr_set_string(c->m, n, "to", up, len);
	return true;
}

/* BatchNormalization-1..5 requires consumed_inputs: none consumed. */
static bool down_bn6(Conv *c, NodeId n)
{
	int64_t z[5] = {0};
	ir_attr_set_ints(c->m, n, "consumed_inputs", z, 5);
	return true;
}

static bool down_reshape5(Conv *c, NodeId n)
{
	if (!input(c, n, 1))
		return fail(c, n, "Reshape has no shape input");
	return input_to_ints_attr(c, n, 1, "shape");
}

static bool down_pad2(Conv *c, NodeId n) { rename_attr(c, n, "pads", "paddings"); return true; }

static bool down_lppool2(Conv *c, NodeId n)
{
	const IrAttr *a = ir_attr(c->m, n, "p");
	if (!a)
		return true;
	float p = (float)a->i;
	ir_attr_remove(c->m, n, "p");
	ir_attr_set_float(c->m, n, "p", p);
	return true;
}

/* ---- the table ------------------------------------------------------------------- */

typedef bool (*AdaptFn)(Conv *c, NodeId n);

typedef struct Adapter {
	OpKind op;
	int step;        /* the version on the upper side */
	bool up;
	AdaptFn fn;      /* NULL (and no rename): no exact conversion */
	const char *why; /* for that case: what changed */
	OpKind rename;   /* the op that replaces op, same inputs and attributes (OP_UNKNOWN: none) */
} Adapter;

/* An entry by op kind (ir/ops.def), so a misspelt op does not compile: an
 * adapter (fn, or NULL and why there is none), or a rename to op `to`. */
#define ADAPT(name, step_, up_, fn_, why_) {.op = OP_##name, .step = (step_), .up = (up_), .fn = (fn_), .why = (why_)}
#define RENAME(name, step_, up_, to) {.op = OP_##name, .step = (step_), .up = (up_), .rename = OP_##to}

static const OpKind reduce18[] = {OP_ReduceL1, OP_ReduceL2, OP_ReduceLogSum, OP_ReduceLogSumExp, OP_ReduceMax,
                                  OP_ReduceMean, OP_ReduceMin, OP_ReduceProd, OP_ReduceSumSquare};

static const Adapter adapters[] = {
	ADAPT(BatchNormalization, 9, true, up_bn_spatial, NULL),
	ADAPT(Upsample, 9, true, up_upsample_scales, NULL),
	ADAPT(Upsample, 9, false, down_upsample_scales, NULL),
	ADAPT(Slice, 10, true, up_slice, NULL),
	ADAPT(Slice, 10, false, down_slice, NULL),
	ADAPT(TopK, 10, true, up_topk, NULL),
	ADAPT(TopK, 10, false, down_topk, NULL),
	RENAME(Upsample, 10, true, Resize),
	RENAME(Resize, 10, false, Upsample),
	ADAPT(Clip, 11, true, up_clip, NULL),
	ADAPT(Clip, 11, false, down_clip, NULL),
	ADAPT(Pad, 11, true, up_pad, NULL),
	ADAPT(Pad, 11, false, down_pad, NULL),
	ADAPT(Resize, 11, true, up_resize, NULL),
	ADAPT(Resize, 11, false, down_resize, NULL),
	RENAME(Scatter, 11, true, ScatterElements),
	RENAME(ScatterElements, 11, false, Scatter),
	ADAPT(Dropout, 12, true, up_dropout, NULL),
	ADAPT(Dropout, 12, false, down_dropout, NULL),
	ADAPT(ReduceSum, 13, true, up_axes, NULL),
	ADAPT(ReduceSum, 13, false, down_axes, NULL),
	ADAPT(Squeeze, 13, true, up_axes, NULL),
	ADAPT(Squeeze, 13, false, down_axes, NULL),
	ADAPT(Unsqueeze, 13, true, up_axes, NULL),
	ADAPT(Unsqueeze, 13, false, down_axes, NULL),
	ADAPT(Split, 13, true, up_split, NULL),
	ADAPT(Split, 13, false, down_split, NULL),
	ADAPT(Softmax, 13, true, up_softmax, NULL),
	ADAPT(Softmax, 13, false, down_softmax, NULL),
	ADAPT(LogSoftmax, 13, true, up_softmax, NULL),
	ADAPT(LogSoftmax, 13, false, down_softmax, NULL),
	ADAPT(Hardmax, 13, true, up_softmax, NULL),
	ADAPT(Hardmax, 13, false, down_softmax, NULL),
	ADAPT(BatchNormalization, 14, true, up_bn14, NULL),
	ADAPT(BatchNormalization, 14, false, down_bn14, NULL),
	ADAPT(RoiAlign, 16, true, up_roialign, NULL),
	ADAPT(RoiAlign, 16, false, down_roialign, NULL),
	ADAPT(Split, 18, true, up_split18, NULL),
	ADAPT(Split, 18, false, down_split18, NULL),
	ADAPT(GridSample, 20, true, up_gridsample, NULL),
	ADAPT(GridSample, 20, false, down_gridsample, NULL),
	ADAPT(DFT, 20, true, up_dft, NULL),
	ADAPT(DFT, 20, false, NULL, "the axis input's meaning changed at opset 20"),
	ADAPT(GroupNormalization, 21, true, up_groupnorm, NULL),
	ADAPT(GroupNormalization, 21, false, NULL, "scale and bias are per channel from opset 21 on"),
	ADAPT(Scan, 9, true, NULL, "Scan-8's batch axis and sequence_lens are gone at opset 9"),
	/* opsets 1..7 */
	ADAPT(Add, 7, true, up_broadcast, NULL),
	ADAPT(Add, 7, false, down_broadcast, NULL),
	ADAPT(Sub, 7, true, up_broadcast, NULL),
	ADAPT(Sub, 7, false, down_broadcast, NULL),
	ADAPT(Mul, 7, true, up_broadcast, NULL),
	ADAPT(Mul, 7, false, down_broadcast, NULL),
	ADAPT(Div, 7, true, up_broadcast, NULL),
	ADAPT(Div, 7, false, down_broadcast, NULL),
	ADAPT(Pow, 7, true, up_broadcast, NULL),
	ADAPT(Pow, 7, false, down_broadcast, NULL),
	ADAPT(And, 7, true, up_broadcast, NULL),
	ADAPT(And, 7, false, down_broadcast, NULL),
	ADAPT(Or, 7, true, up_broadcast, NULL),
	ADAPT(Or, 7, false, down_broadcast, NULL),
	ADAPT(Xor, 7, true, up_broadcast, NULL),
	ADAPT(Xor, 7, false, down_broadcast, NULL),
	ADAPT(Equal, 7, true, up_broadcast, NULL),
	ADAPT(Equal, 7, false, down_broadcast, NULL),
	ADAPT(Greater, 7, true, up_broadcast, NULL),
	ADAPT(Greater, 7, false, down_broadcast, NULL),
	ADAPT(Less, 7, true, up_broadcast, NULL),
	ADAPT(Less, 7, false, down_broadcast, NULL),
	ADAPT(Gemm, 7, true, up_gemm7, NULL),
	ADAPT(Gemm, 7, false, down_gemm7, NULL),
	ADAPT(PRelu, 7, true, up_prelu7, NULL),
	ADAPT(PRelu, 7, false, down_prelu7, NULL),
	ADAPT(BatchNormalization, 7, true, up_bn7, NULL),
	ADAPT(BatchNormalization, 7, false, down_bn7, NULL),
	ADAPT(Dropout, 7, true, up_dropout7, NULL),
	ADAPT(Dropout, 7, false, down_dropout7, NULL),
	ADAPT(Upsample, 7, true, up_upsample7, NULL),
	ADAPT(Upsample, 7, false, down_upsample7, NULL),
	ADAPT(Cast, 6, true, up_cast6, NULL),
	ADAPT(Cast, 6, false, down_cast6, NULL),
	ADAPT(BatchNormalization, 6, false, down_bn6, NULL),
	ADAPT(Tile, 6, true, NULL, "Tile-1's tiles and axis inputs became one repeats input at opset 6"),
	ADAPT(Reshape, 5, true, up_reshape5, NULL),
	ADAPT(Reshape, 5, false, down_reshape5, NULL),
	ADAPT(Concat, 4, true, up_concat4, NULL),
	ADAPT(Pad, 2, true, up_pad2, NULL),
	ADAPT(Pad, 2, false, down_pad2, NULL),
	ADAPT(Split, 2, true, up_split2, NULL),
	ADAPT(LpPool, 2, true, up_lppool2, NULL),
	ADAPT(LpPool, 2, false, down_lppool2, NULL),
	ADAPT(GlobalLpPool, 2, true, up_lppool2, NULL),
	ADAPT(GlobalLpPool, 2, false, down_lppool2, NULL),
};

static const Adapter *find_adapter(const char *name, int step, bool up, AdaptFn *reduce)
{
	OpKind op = op_kind_lookup(name);
	*reduce = NULL;
	if (op == OP_UNKNOWN)
		return NULL;
	for (size_t i = 0; i < sizeof adapters / sizeof *adapters; i++)
		if (adapters[i].step == step && adapters[i].up == up && adapters[i].op == op)
			return &adapters[i];
	if (step == 18)
		for (size_t i = 0; i < sizeof reduce18 / sizeof *reduce18; i++)
			if (reduce18[i] == op)
				*reduce = up ? up_axes : down_axes;
	return NULL;
}

/* ---- the generic check -------------------------------------------------------------- */

static bool same_default(const OpAttrDef *a, const OpAttrDef *b)
{
	if (a->type != b->type || a->has_default != b->has_default)
		return false;
	switch (a->type) {
	case ATTR_FLOAT: return a->f == b->f;
	case ATTR_INT: return a->i == b->i;
	case ATTR_STRING: return strcmp(a->s ? a->s : "", b->s ? b->s : "") == 0;
	case ATTR_INTS: return a->n == b->n && (!a->n || memcmp(a->ints, b->ints, sizeof *a->ints * (size_t)a->n) == 0);
	case ATTR_FLOATS: return a->n == b->n && (!a->n || memcmp(a->floats, b->floats, sizeof *a->floats * (size_t)a->n) == 0);
	default: return false;
	}
}

static bool attr_equals_default(const IrAttr *a, const OpAttrDef *d)
{
	if (!d || !d->has_default || a->type != d->type)
		return false;
	switch (a->type) {
	case ATTR_FLOAT: return a->f == (float)d->f;
	case ATTR_INT: return a->i == d->i;
	case ATTR_STRING: return a->s.len == strlen(d->s ? d->s : "") && memcmp(a->s.data, d->s, a->s.len) == 0;
	case ATTR_INTS: return (int)a->n == d->n && (!a->n || memcmp(a->ints, d->ints, sizeof *a->ints * a->n) == 0);
	default: return false;
	}
}

/* An omitted attribute keeps its meaning: where the default differs on the
 * other side, write the old default out. */
static void keep_defaults(Conv *c, NodeId n, const OpSchema *cur, const OpSchema *tgt)
{
	for (int i = 0; i < cur->nattrs; i++) {
		const OpAttrDef *d = &cur->attrs[i], *t = op_schema_attr(tgt, d->name);
		if (!d->has_default || ir_attr(c->m, n, d->name) || !t || same_default(d, t))
			continue;
		switch (d->type) {
		case ATTR_FLOAT: ir_attr_set_float(c->m, n, d->name, (float)d->f); break;
		case ATTR_INT: ir_attr_set_int(c->m, n, d->name, d->i); break;
		case ATTR_STRING: ir_attr_set_string(c->m, n, d->name, d->s, strlen(d->s)); break;
		case ATTR_INTS: ir_attr_set_ints(c->m, n, d->name, d->ints, (size_t)d->n); break;
		case ATTR_FLOATS: ir_attr_set_floats(c->m, n, d->name, d->floats, (size_t)d->n); break;
		default: break;
		}
	}
}

static bool type_allowed(const OpSchema *s, const OpFormal *f, int dtype)
{
	if (!f->type_str || dtype == DT_UNDEFINED)
		return true;
	if (strncmp(f->type_str, "tensor(", 7) == 0) {
		size_t len = strlen(dtype_name(dtype));
		return strncmp(f->type_str + 7, dtype_name(dtype), len) == 0 && strcmp(f->type_str + 7 + len, ")") == 0;
	}
	for (int i = 0; i < s->nconstraints; i++)
		if (strcmp(s->constraints[i].param, f->type_str) == 0)
			return (s->constraints[i].tensor_types >> dtype) & 1;
	return true;
}

static bool allows_non_tensor(const OpSchema *s, const OpFormal *f)
{
	for (int i = 0; s && f->type_str && i < s->nconstraints; i++)
		if (strcmp(s->constraints[i].param, f->type_str) == 0)
			return s->constraints[i].has_non_tensor;
	return false;
}

/* v is declared a sequence, as a graph input or output */
static bool declared_sequence(IrModel *m, ValueId v)
{
	return ir_value(m, v)->non_tensor && ir_value_declared_kind(m, v) == IR_DECL_SEQUENCE;
}

/* Going down, value v at formal `slot` of node n (an output if `out`) must
 * be of a kind definition s takes: where the node's own definition took
 * sequences or optionals and s takes tensors only (Identity-14 -> 13, If-13
 * -> 11, Loop-13 -> 11), v must be known to be a tensor; across opset 16,
 * where Identity, If and Loop gained optionals, a non-tensor v must be
 * declared a sequence. */
static bool kind_fits(Conv *c, NodeId n, const OpSchema *s, uint32_t slot, bool out, ValueId v)
{
	if (c->up)
		return true;
	const IrValue *val = ir_value(c->m, v);
	const OpSchema *cur = op_schema_lookup("", ir_node(c->m, n)->op_type, from_version(c));
	if (!cur || cur == s)
		return true;
	const OpFormal *cf = out ? (cur->noutputs ? &cur->outputs[slot < (uint32_t)cur->noutputs ? slot : (uint32_t)cur->noutputs - 1] : NULL)
	                         : (cur->ninputs ? &cur->inputs[slot < (uint32_t)cur->ninputs ? slot : (uint32_t)cur->ninputs - 1] : NULL);
	const OpFormal *tf = out ? &s->outputs[slot < (uint32_t)s->noutputs ? slot : (uint32_t)s->noutputs - 1]
	                         : &s->inputs[slot < (uint32_t)s->ninputs ? slot : (uint32_t)s->ninputs - 1];
	if (!cf || !allows_non_tensor(cur, cf))
		return true;
	bool tensor = !val->non_tensor && val->dtype != DT_UNDEFINED;
	if (!allows_non_tensor(s, tf))
		return tensor;
	if (c->step == 16)
		return tensor || declared_sequence(c->m, v);
	return true;
}

/* Does node n fit definition s (attributes, inputs, outputs, types)? */
static bool fits(Conv *c, NodeId n, const OpSchema *s)
{
	IrModel *m = c->m;
	IrNode *node = ir_node(m, n);
	for (uint32_t i = 0; i < node->nattrs; i++) {
		const IrAttr *a = &node->attrs[i];
		const OpAttrDef *d = op_schema_attr(s, a->name);
		if (!d)
			return fail(c, n, "attribute '%s' does not exist in %s-%d", a->name, s->name, s->since_version);
		if (d->type != a->type)
			return fail(c, n, "attribute '%s' is a %s in %s-%d", a->name, attr_type_name(d->type), s->name,
			            s->since_version);
	}
	for (int i = 0; i < s->nattrs; i++)
		if (s->attrs[i].required && !ir_attr(m, n, s->attrs[i].name))
			return fail(c, n, "%s-%d requires attribute '%s'", s->name, s->since_version, s->attrs[i].name);
	uint32_t nin = node->ninputs, nout = node->noutputs;
	while (nin && !node->inputs[nin - 1])
		nin--;
	while (nout && !node->outputs[nout - 1])
		nout--;
	if ((int)nin > s->max_inputs || (int)nin < s->min_inputs)
		return fail(c, n, "it has %u inputs; %s-%d takes %d to %d", nin, s->name, s->since_version, s->min_inputs,
		            s->max_inputs);
	if ((int)nout > s->max_outputs)
		return fail(c, n, "it has %u outputs; %s-%d gives at most %d", nout, s->name, s->since_version, s->max_outputs);
	for (uint32_t i = 0; i < nin && s->ninputs; i++) {
		const OpFormal *f = &s->inputs[i < (uint32_t)s->ninputs ? i : (uint32_t)s->ninputs - 1];
		if (!node->inputs[i] && f->option == OPT_SINGLE)
			return fail(c, n, "input %u ('%s') is omitted but %s-%d requires it", i, f->name, s->name, s->since_version);
		if (node->inputs[i] && !type_allowed(s, f, ir_value(m, node->inputs[i])->dtype))
			return fail(c, n, "input %u is %s, which %s-%d does not take", i,
			            dtype_name(ir_value(m, node->inputs[i])->dtype), s->name, s->since_version);
		if (node->inputs[i] && !kind_fits(c, n, s, i, false, node->inputs[i]))
			return fail(c, n, "input %u is %s, which %s-%d does not take", i,
			            ir_value(m, node->inputs[i])->non_tensor ? "a sequence or optional" : "of unknown type",
			            s->name, s->since_version);
	}
	/* an output type set by an attribute (Cast's 'to', a Constant's value) */
	for (uint32_t i = 0; i < nout && s->noutputs; i++) {
		const OpFormal *f = &s->outputs[i < (uint32_t)s->noutputs ? i : (uint32_t)s->noutputs - 1];
		ValueId v = node->outputs[i];
		if (v && !type_allowed(s, f, ir_value(m, v)->dtype))
			return fail(c, n, "output %u is %s, which %s-%d does not give", i, dtype_name(ir_value(m, v)->dtype),
			            s->name, s->since_version);
		if (v && !kind_fits(c, n, s, i, true, v))
			return fail(c, n, "output %u is %s, which %s-%d does not give", i,
			            ir_value(m, v)->non_tensor ? "a sequence or optional" : "of unknown type", s->name,
			            s->since_version);
	}
	return true;
}

/* The generic step for an op whose definition changed: inputs must keep
 * their names, attributes their meaning. */
static bool generic(Conv *c, NodeId n, const OpSchema *cur, const OpSchema *tgt)
{
	IrNode *node = ir_node(c->m, n);
	uint32_t nin = node->ninputs;
	for (uint32_t i = 0; i < nin && (int)i < cur->ninputs && (int)i < tgt->ninputs; i++)
		if (strcmp(cur->inputs[i].name, tgt->inputs[i].name) != 0)
			return fail(c, n, "input %u is '%s' in %s-%d but '%s' in %s-%d, and graft has no conversion for it", i,
			            cur->inputs[i].name, cur->name, cur->since_version, tgt->inputs[i].name, tgt->name,
			            tgt->since_version);
	/* going down, an attribute the older op lacks may go if it says the default */
	for (uint32_t i = 0; i < node->nattrs;) {
		const IrAttr *a = &node->attrs[i];
		if (!op_schema_attr(tgt, a->name) && attr_equals_default(a, op_schema_attr(cur, a->name)))
			ir_attr_remove(c->m, n, a->name);
		else
			i++;
	}
	keep_defaults(c, n, cur, tgt);
	return fits(c, n, tgt);
}

/* ---- driver ---------------------------------------------------------------------------- */

int64_t convert_min_ir_version(int opset)
{
	static const int8_t ir[] = {
		/* 0..6 */ 3, 3, 3, 3, 3, 3, 3,
		/* 7 */ 3, 3, 4, 5, 6, 7, 7, 7, 8, 8, 8, 8, 9, 9, 10, 10, 11,
	};
	if (opset < 0)
		return 3;
	if (opset >= (int)sizeof ir)
		return 11;
	return ir[opset];
}

static bool is_default_domain(const char *d) { return !*d || strcmp(d, "ai.onnx") == 0; }

/* Opset 11 allowed negative 'axis'/'axes' throughout; going below it they
 * are made positive with the input's rank (Unsqueeze, OneHot: the
 * output's), or the step is refused. */
static bool positive_axes(Conv *c, NodeId n)
{
	IrModel *m = c->m;
	IrNode *node = ir_node(m, n);
	static const char *const names[2] = {"axis", "axes"};
	for (int w = 0; w < 2; w++) {
		const IrAttr *a = ir_attr(m, n, names[w]);
		if (!a || a->type != (w ? ATTR_INTS : ATTR_INT))
			continue;
		size_t k = w ? a->n : 1;
		int64_t *v = malloc(sizeof *v * (k + 1));
		bool neg = false;
		for (size_t j = 0; j < k; j++) {
			v[j] = w ? a->ints[j] : a->i;
			neg |= v[j] < 0;
		}
		int rank = input_rank(c, n, 0);
		if (rank >= 0 && strcmp(node->op_type, "Unsqueeze") == 0)
			rank += (int)k;
		if (rank >= 0 && strcmp(node->op_type, "OneHot") == 0)
			rank += 1;
		if (neg && rank < 0) {
			free(v);
			return fail(c, n, "'%s' is negative and the rank of input 0 is unknown; negative axes need opset 11",
			            names[w]);
		}
		for (size_t j = 0; neg && j < k; j++)
			if (v[j] < 0)
				v[j] += rank;
		if (neg && w)
			ir_attr_set_ints(m, n, names[w], v, k);
		else if (neg)
			ir_attr_set_int(m, n, names[w], v[0]);
		free(v);
	}
	return true;
}

/* Ops ONNX Runtime registers in the default domain itself, at version 1, so
 * that models its transformer optimizer wrote load at any opset: its
 * LayerNormalization (the same contract as ONNX's LayerNormalization-17, which
 * takes the name from 17 on) and SimplifiedLayerNormalization (never an ONNX
 * op).  Such a node is carried through each conversion step unchanged;
 * a LayerNormalization reaching 17 is ONNX's own from there. */
static bool ort_onnx_op(const char *op, int fromv)
{
	if (!strcmp(op, "SimplifiedLayerNormalization"))
		return true;
	return !strcmp(op, "LayerNormalization") && fromv < 17;
}

static bool convert_step(Conv *c)
{
	IrModel *m = c->m;
	int fromv = from_version(c), tov = to_version(c);
	for (GraphId g = 1; g < m->ngraphs; g++) {
		if (ir_graph(m, g)->dead)
			continue;
		NodeId next;
		for (NodeId n = ir_first(m, g); n; n = next) {
			next = ir_next(m, n);
			IrNode *node = ir_node(m, n);
			if (!is_default_domain(node->domain))
				continue;
			const OpSchema *cur = op_schema_lookup("", node->op_type, fromv);
			const OpSchema *tgt = op_schema_lookup("", node->op_type, tov);
			if (!cur && ort_onnx_op(node->op_type, fromv))
				continue;
			if (!cur)
				return fail(c, n, "%s is not an ONNX op at opset %d", node->op_type, fromv);
			if (cur == tgt)
				continue;
			if (!c->up && c->step == 11 && !positive_axes(c, n))
				return false;
			/* consumed_inputs (in-place hints, no meaning) went at opset 6 */
			if (c->up && c->step == 6)
				ir_attr_remove(m, n, "consumed_inputs");
			AdaptFn reduce;
			const Adapter *ad = find_adapter(node->op_type, c->step, c->up, &reduce);
			AdaptFn fn = ad ? ad->fn : reduce;
			if (ad && !fn && ad->rename == OP_UNKNOWN)
				return fail(c, n, "no exact conversion: %s", ad->why);
			if (fn || ad) {
				if (ad && ad->rename != OP_UNKNOWN)
					rename_op(c, n, op_kind_name(ad->rename));
				else if (!fn(c, n))
					return false;
				c->st->adapted++;
				const OpSchema *now = op_schema_lookup("", ir_node(m, n)->op_type, tov);
				if (!now)
					return fail(c, n, "%s does not exist at opset %d", ir_node(m, n)->op_type, tov);
				if (!fits(c, n, now))
					return false;
				continue;
			}
			if (!tgt)
				return fail(c, n, c->up ? "%s was removed at opset %d and graft has no conversion for it"
				                        : "%s does not exist before opset %d", node->op_type, c->step);
			if (c->up && (tgt->flags & OPF_DEPRECATED))
				return fail(c, n, "%s is deprecated at opset %d and graft has no conversion for it", node->op_type,
				            c->step);
			if (!generic(c, n, cur, tgt))
				return false;
		}
	}
	return true;
}

/* Run f on m with its types inferred. */
static bool with_types(IrModel *m, bool (*f)(IrModel *m))
{
	Diag quiet;
	diag_init(&quiet, NULL);
	InferState *inf = infer_new(m);
	infer_model(inf, &quiet);
	bool r = f(m);
	infer_free(inf);
	return r;
}

/* A model whose nodes all have ONNX Runtime CPU kernels must keep them: a
 * node converted to a version ORT lacks at its type (PRelu on double at
 * opset 19 and later, HardSigmoid-22 on double) is an error naming it.
 * ONNX's own converter would write such a model; ORT would then refuse it. */
static bool kernels_kept(IrModel *m, int from, Diag *d)
{
	Diag quiet;
	diag_init(&quiet, NULL);
	InferState *inf = infer_new(m);
	infer_model(inf, &quiet);
	bool ok = true;
	for (GraphId g = 1; ok && g < m->ngraphs; g++) {
		if (ir_graph(m, g)->dead)
			continue;
		for (NodeId n = ir_first(m, g); ok && n; n = ir_next(m, n)) {
			char why[200], lb[256];
			if (!ir_node_kernel_gap(m, n, why, sizeof why))
				continue;
			diag_error(d, m->path, "node %s (%s), opset %d -> %d: %s at opset %d (it loads the model at opset %d)",
			           ir_node_label(m, n, lb, sizeof lb), ir_node(m, n)->op_type, from, (int)ir_opset(m, ""), why,
			           (int)ir_opset(m, ""), from);
			ok = false;
		}
	}
	infer_free(inf);
	return ok;
}

bool convert_opset(IrModel *m, int target, ConvertStats *st, Diag *d)
{
	memset(st, 0, sizeof *st);
	int from = (int)ir_opset(m, "");
	st->from = st->to = from;
	st->ir_from = st->ir_to = m->ir_version;
	if (!from) {
		diag_error(d, m->path, "the model does not import the default ONNX domain; nothing to convert");
		return false;
	}
	if (target < CONVERT_MIN_OPSET || target > OPSCHEMA_MAX_OPSET) {
		diag_error(d, m->path, "--opset %d: graft converts between opsets %d and %d", target, CONVERT_MIN_OPSET,
		           OPSCHEMA_MAX_OPSET);
		return false;
	}
	if (from < CONVERT_MIN_OPSET || from > OPSCHEMA_MAX_OPSET) {
		diag_error(d, m->path, "the model is at opset %d; graft converts between opsets %d and %d", from,
		           CONVERT_MIN_OPSET, OPSCHEMA_MAX_OPSET);
		return false;
	}
	Conv c = {.m = m, .d = d, .st = st};
	bool ok = true;
	bool loads = with_types(m, ir_model_has_kernels);
	while (ok && (int)ir_opset(m, "") != target) {
		int cur = (int)ir_opset(m, "");
		c.up = target > cur;
		c.step = c.up ? cur + 1 : cur;
		/* shapes, types and constant values as the model stands at `cur` */
		Diag quiet;
		diag_init(&quiet, NULL);
		c.inf = infer_new(m);
		infer_model(c.inf, &quiet);
		ok = convert_step(&c);
		infer_free(c.inf);
		if (ok)
			ir_set_opset(m, "", c.up ? cur + 1 : cur - 1);
	}
	st->to = (int)ir_opset(m, "");
	for (int i = 0; ok && st->to >= 14 && i < c.nrestore; i++)
		if (!ir_node(m, c.restore[i])->dead && ir_node(m, c.restore[i])->kind == OP_Reshape)
			ir_attr_set_int(m, c.restore[i], "allowzero", 1);
	free(c.restore);
	/* ONNX Runtime supports opset 7 and up: below, it lacks most op versions
	 * (Add-6, Relu-1...), and a downgrade there is for other runtimes */
	if (ok && loads && st->to >= 7)
		ok = kernels_kept(m, from, d);
	if (ok && m->ir_version < convert_min_ir_version(st->to))
		m->ir_version = convert_min_ir_version(st->to);
	st->ir_to = m->ir_version;
	return ok;
}
