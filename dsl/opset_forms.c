/* opset_forms.c - the table of older op forms (see opset_forms.h).
 *
 * One row per difference between an old form and the newest one.  Versions
 * and names come from the schema table (ir/opschema_table.c), and
 * tests/check_opset_forms.c checks each row against it, so a wrong row fails
 * a test rather than a match.  Not listed because nothing moved: Expand
 * (an input since it appeared at 8), Tile-6.. (Tile-1's tiles/axis inputs
 * have another meaning: a FORM_NOTE row says so). */
#include "opset_forms.h"

#include "ir/opschema.h"

#include <float.h>
#include <string.h>

#define ATTR(op, a, b, in, name)        { op, a, b, FORM_ATTR, in, name, 0, false, 0, NULL }
#define ATTR_DEF(op, a, b, in, name, d, note) { op, a, b, FORM_ATTR, in, name, 0, true, d, note }
#define ATTR_NOTE(op, a, b, in, name, note) { op, a, b, FORM_ATTR, in, name, 0, false, 0, note }
#define MOVED(op, a, b, in, at)         { op, a, b, FORM_MOVED, in, NULL, at, false, 0, NULL }
#define NO_INPUT(op, a, b, in, note)    { op, a, b, FORM_NO_INPUT, in, NULL, 0, false, 0, note }
#define NO_ATTR(op, a, b, name, note)   { op, a, b, FORM_NO_ATTR, -1, name, 0, false, 0, note }
#define NOTE(op, a, b, name, note)      { op, a, b, FORM_NOTE, -1, name, 0, false, 0, note }

/* The Reduce ops other than ReduceSum took axes as an attribute until 17. */
/* Binary ops before 7 broadcast only with broadcast = 1, along axis. */
#define LEGACY_BROADCAST(op) \
	NOTE(op, 1, 6, "broadcast", "no numpy broadcasting: broadcast = 1 and axis say how the second input is broadcast")

#define REDUCE18(op) \
	ATTR(op, 1, 17, 1, "axes"), \
	NO_ATTR(op, 1, 17, "noop_with_empty_axes", \
	        "no axes reduce every axis, as with noop_with_empty_axes = 0")

static const OpsetForm forms[] = {
	/* op               versions  input attribute / note */
	LEGACY_BROADCAST("Add"),
	LEGACY_BROADCAST("And"),
	ATTR_NOTE("Clip",        1,  5, 1, "min", "no default: an absent min does not clamp"),
	ATTR_NOTE("Clip",        1,  5, 2, "max", "no default: an absent max does not clamp"),
	ATTR_DEF("Clip",         6, 10, 1, "min", -FLT_MAX, "defaults to -FLT_MAX, like an absent min input"),
	ATTR_DEF("Clip",         6, 10, 2, "max", FLT_MAX, "defaults to FLT_MAX, like an absent max input"),

	ATTR_DEF("DFT",         17, 19, 2, "axis", 1, "defaults to 1; an absent axis input means -2"),

	LEGACY_BROADCAST("Div"),

	ATTR_DEF("Dropout",      1, 11, 1, "ratio", 0.5, "defaults to 0.5, like an absent ratio input"),
	NO_INPUT("Dropout",      1, 11, 2, "no training_mode: inference unless is_test = 0 (opsets 1..6)"),

	LEGACY_BROADCAST("Equal"),
	NOTE("Gemm",             1,  6, "broadcast", "C broadcasts only with broadcast = 1"),
	LEGACY_BROADCAST("Greater"),
	NOTE("Hardmax",          1, 12, "axis", "default 1, and the input is coerced to 2-D around axis"),
	LEGACY_BROADCAST("Less"),
	NOTE("LogSoftmax",       1, 12, "axis", "default 1, and the input is coerced to 2-D around axis"),

	LEGACY_BROADCAST("Mul"),
	LEGACY_BROADCAST("Or"),

	ATTR("Pad",              1,  1, 1, "paddings"),
	ATTR("Pad",              2, 10, 1, "pads"),
	ATTR_DEF("Pad",          1, 10, 2, "value", 0.0, "a float attribute; the input has the data's type"),
	NO_INPUT("Pad",          1, 17, 3, "no axes: pads covers every axis"),

	LEGACY_BROADCAST("Pow"),

	REDUCE18("ReduceL1"),
	REDUCE18("ReduceL2"),
	REDUCE18("ReduceLogSum"),
	REDUCE18("ReduceLogSumExp"),
	REDUCE18("ReduceMax"),
	REDUCE18("ReduceMean"),
	REDUCE18("ReduceMin"),
	REDUCE18("ReduceProd"),
	ATTR("ReduceSum",        1, 12, 1, "axes"),
	NO_ATTR("ReduceSum",     1, 12, "noop_with_empty_axes",
	        "no axes reduce every axis, as with noop_with_empty_axes = 0"),
	REDUCE18("ReduceSumSquare"),

	ATTR("Reshape",          1,  4, 1, "shape"),
	NO_ATTR("Reshape",       1, 13, "allowzero", "a 0 in shape copies the input's dim, as with allowzero = 0"),

	NO_INPUT("Resize",      10, 10, 1, "no roi"),
	MOVED("Resize",         10, 10, 2, 1),
	NO_INPUT("Resize",      10, 10, 3, "no sizes"),
	NO_ATTR("Resize",       10, 10, "coordinate_transformation_mode",
	        "Resize-10 computes coordinates as 'asymmetric', not the default 'half_pixel'"),

	ATTR("Slice",            1,  9, 1, "starts"),
	ATTR("Slice",            1,  9, 2, "ends"),
	ATTR("Slice",            1,  9, 3, "axes"),
	NO_INPUT("Slice",        1,  9, 4, "no steps: every step is 1"),

	NOTE("Softmax",          1, 12, "axis", "default 1, and the input is coerced to 2-D around axis"),

	ATTR_NOTE("Split",       1, 12, 1, "split", "Split-1 also takes split as input 1"),
	NO_ATTR("Split",         1, 17, "num_outputs", "the node's number of outputs gives the parts"),

	ATTR("Squeeze",          1, 12, 1, "axes"),
	LEGACY_BROADCAST("Sub"),

	NOTE("Tile",             1,  5, NULL, "Tile-1 takes (input, tiles, axis): tiles copies along one axis"),

	ATTR_NOTE("TopK",        1,  9, 1, "k", "an int attribute; the input is a 1-element int64 tensor"),
	NO_ATTR("TopK",          1, 10, "largest", "the largest elements, as with largest = 1"),
	NO_ATTR("TopK",          1, 10, "sorted", "sorted, as with sorted = 1"),

	ATTR("Unsqueeze",        1, 12, 1, "axes"),

	ATTR("Upsample",         7,  8, 1, "scales"),
	NOTE("Upsample",         1,  6, NULL, "Upsample-1 takes height_scale and width_scale attributes"),

	LEGACY_BROADCAST("Xor"),
};

const OpsetForm *opset_forms_all(size_t *count)
{
	*count = sizeof forms / sizeof forms[0];
	return forms;
}

int opset_forms_at(const char *op, int version, const OpsetForm **out, int max)
{
	int n = 0;
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		const OpsetForm *f = &forms[i];
		if (strcmp(f->op, op) != 0 || version < f->first || version > f->last)
			continue;
		if (n < max)
			out[n] = f;
		n++;
	}
	return n;
}

const OpsetForm *opset_form_input_attr(const char *op, int version, int input)
{
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		const OpsetForm *f = &forms[i];
		if (f->kind == FORM_ATTR && f->input == input && strcmp(f->op, op) == 0 &&
		    version >= f->first && version <= f->last)
			return f;
	}
	return NULL;
}

const OpsetForm *opset_form_attr(const char *op, const char *attr, int version)
{
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		const OpsetForm *f = &forms[i];
		if (f->kind == FORM_ATTR && strcmp(f->op, op) == 0 && strcmp(f->attr, attr) == 0 &&
		    (version == 0 || (version >= f->first && version <= f->last)))
			return f;
	}
	return NULL;
}

int opset_form_attr_input(const OpSchema *s, const char *attr)
{
	if (!s || *s->domain || op_schema_attr(s, attr))
		return -1;
	const OpsetForm *f = opset_form_attr(s->name, attr, 0);
	return f ? f->input : -1;
}

bool op_attr_implied(const char *op, const char *attr)
{
	static const char *const conv[] = {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", NULL};
	static const char *const pool[] = {"MaxPool", "AveragePool", "LpPool", NULL};
	bool is_conv = false, is_pool = false;
	for (int i = 0; conv[i]; i++)
		is_conv |= !strcmp(op, conv[i]);
	for (int i = 0; pool[i]; i++)
		is_pool |= !strcmp(op, pool[i]);
	if (!strcmp(op, "Transpose"))
		return !strcmp(attr, "perm");
	if (!strcmp(op, "Attention"))
		return !strcmp(attr, "scale");
	if (!strncmp(op, "Reduce", 6) || !strcmp(op, "Squeeze"))
		return !strcmp(attr, "axes");
	if (is_conv || is_pool)
		return !strcmp(attr, "strides") || !strcmp(attr, "dilations") || !strcmp(attr, "pads") ||
		       (is_conv && !strcmp(attr, "kernel_shape"));
	return false;
}
