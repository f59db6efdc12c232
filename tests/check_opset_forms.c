/* check_opset_forms.c - tests of the older-forms table (dsl/opset_forms.h):
 * every row checked against the schema table at every version it covers
 * and at the version after it, the table checked for completeness (every
 * attribute that became an input of the same name has a row), and the
 * version pairs the rule language relies on, one by one. */
#include <check.h>
#include <float.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "dsl/opset_forms.h"
#include "ir/opschema.h"

/* The newest definition of op that is still in the standard. */
static const OpSchema *canonical(const char *op)
{
	for (int v = OPSCHEMA_MAX_OPSET; v >= 1; v--) {
		const OpSchema *s = op_schema_lookup("", op, v);
		if (s)
			return s;
	}
	return NULL;
}

/* Another FORM_ATTR row of the same op and input covering version v
 * (Clip's min is an attribute in 1..5 and, with a default, in 6..10). */
static bool attr_row_at(const OpsetForm *f, int v)
{
	size_t n;
	const OpsetForm *all = opset_forms_all(&n);
	for (size_t i = 0; i < n; i++)
		if (&all[i] != f && all[i].kind == FORM_ATTR && strcmp(all[i].op, f->op) == 0 &&
		    all[i].input == f->input && v >= all[i].first && v <= all[i].last)
			return true;
	return false;
}

static void check_row(const OpsetForm *f)
{
	const OpSchema *canon = canonical(f->op);
	ck_assert_msg(canon != NULL, "%s: no such op", f->op);
	ck_assert_msg(f->first >= 1 && f->first <= f->last && f->last < OPSCHEMA_MAX_OPSET,
	              "%s %d..%d: bad versions", f->op, f->first, f->last);
	ck_assert_msg(op_schema_lookup("", f->op, f->first) != NULL, "%s does not exist at %d", f->op,
	              f->first);
	const OpSchema *next = op_schema_lookup("", f->op, f->last + 1);
	if (f->kind == FORM_ATTR || f->kind == FORM_MOVED || f->kind == FORM_NO_INPUT)
		ck_assert_msg(f->input >= 0 && f->input < canon->ninputs, "%s: canonical input %d of %d",
		              f->op, f->input, canon->ninputs);
	for (int v = f->first; v <= f->last; v++) {
		const OpSchema *s = op_schema_lookup("", f->op, v);
		if (!s)
			continue;
		switch (f->kind) {
		case FORM_ATTR:
			ck_assert_msg(op_schema_attr(s, f->attr) != NULL, "%s-%d has no attribute %s", f->op,
			              s->since_version, f->attr);
			/* Not an input there (Split-1 takes it both ways, under the same name). */
			ck_assert_msg(s->ninputs <= f->input ||
			              strcmp(s->inputs[f->input].name, canon->inputs[f->input].name) == 0,
			              "%s-%d: input %d is %s", f->op, s->since_version, f->input,
			              s->inputs[f->input].name);
			if (f->has_default) {
				const OpAttrDef *a = op_schema_attr(s, f->attr);
				double d = a->type == ATTR_INT ? (double)a->i : a->f;
				ck_assert_msg(a->has_default && (float)d == (float)f->def,
				              "%s-%d: attribute %s defaults to %g, the table says %g", f->op,
				              s->since_version, f->attr, d, f->def);
			}
			break;
		case FORM_MOVED:
			ck_assert_msg(f->at < s->ninputs &&
			              strcmp(s->inputs[f->at].name, canon->inputs[f->input].name) == 0,
			              "%s-%d: input %d is not %s", f->op, s->since_version, f->at,
			              canon->inputs[f->input].name);
			break;
		case FORM_NO_INPUT:
			/* Absent, or another input there (Resize-10's input 1 is scales, not roi). */
			ck_assert_msg(s->ninputs <= f->input ||
			              strcmp(s->inputs[f->input].name, canon->inputs[f->input].name) != 0,
			              "%s-%d has input %d", f->op, s->since_version, f->input);
			break;
		case FORM_NO_ATTR:
			ck_assert_msg(op_schema_attr(s, f->attr) == NULL, "%s-%d has attribute %s", f->op,
			              s->since_version, f->attr);
			ck_assert_msg(op_schema_attr(canon, f->attr) != NULL, "%s-%d has no attribute %s",
			              f->op, canon->since_version, f->attr);
			break;
		case FORM_NOTE:
			ck_assert_ptr_nonnull(f->note);
			if (f->attr)
				ck_assert_msg(op_schema_attr(s, f->attr) != NULL, "%s-%d has no attribute %s",
				              f->op, s->since_version, f->attr);
			break;
		}
	}
	/* The version after the row has the newer form. */
	ck_assert_msg(next != NULL, "%s does not exist at %d", f->op, f->last + 1);
	switch (f->kind) {
	case FORM_ATTR:
		if (attr_row_at(f, f->last + 1))
			break;
		ck_assert_msg(op_schema_attr(next, f->attr) == NULL, "%s-%d still has attribute %s", f->op,
		              next->since_version, f->attr);
		ck_assert_msg(next->ninputs > f->input, "%s-%d has no input %d", f->op, next->since_version,
		              f->input);
		break;
	case FORM_MOVED:
	case FORM_NO_INPUT:
		ck_assert_msg(next->ninputs > f->input &&
		              strcmp(next->inputs[f->input].name, canon->inputs[f->input].name) == 0,
		              "%s-%d: input %d is not %s", f->op, next->since_version, f->input,
		              canon->inputs[f->input].name);
		break;
	case FORM_NO_ATTR:
		ck_assert_msg(op_schema_attr(next, f->attr) != NULL, "%s-%d has no attribute %s", f->op,
		              next->since_version, f->attr);
		break;
	case FORM_NOTE:
		break;
	}
}

START_TEST(every_row_matches_the_schemas)
{
	size_t n;
	const OpsetForm *all = opset_forms_all(&n);
	ck_assert_uint_gt(n, 30);
	check_row(&all[_i]);
}
END_TEST

/* Every attribute that became an input of the same name (ignoring case:
 * TopK's k became K) has a FORM_ATTR row at the older version. */
START_TEST(every_attribute_turned_input_has_a_row)
{
	size_t n;
	const OpSchema *all = op_schema_all(&n);
	int checked = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		const OpSchema *a = &all[i], *b = &all[i + 1];
		if (*a->domain || strcmp(a->name, b->name) != 0 || (b->flags & OPF_DEPRECATED))
			continue;
		for (int k = 0; k < a->nattrs; k++) {
			if (op_schema_attr(b, a->attrs[k].name))
				continue;
			for (int j = 0; j < b->ninputs; j++) {
				if (strcasecmp(b->inputs[j].name, a->attrs[k].name) != 0)
					continue;
				const OpsetForm *f = opset_form_input_attr(a->name, a->since_version, j);
				ck_assert_msg(f != NULL && strcmp(f->attr, a->attrs[k].name) == 0,
				              "%s-%d: attribute %s is input %d of %s-%d, but no row says so",
				              a->name, a->since_version, a->attrs[k].name, j, b->name,
				              b->since_version);
				checked++;
			}
		}
	}
	ck_assert_int_ge(checked, 20);
}
END_TEST

/* The version pairs rules rely on: {op, version, canonical input, attribute
 * carrying it there or NULL when it is an input}. */
static const struct {
	const char *op;
	int version, input;
	const char *attr;
} pairs[] = {
	{"Squeeze", 11, 1, "axes"}, {"Squeeze", 12, 1, "axes"}, {"Squeeze", 13, 1, NULL},
	{"Unsqueeze", 11, 1, "axes"}, {"Unsqueeze", 13, 1, NULL},
	{"ReduceSum", 12, 1, "axes"}, {"ReduceSum", 13, 1, NULL},
	{"ReduceMean", 17, 1, "axes"}, {"ReduceMean", 18, 1, NULL},
	{"ReduceMax", 17, 1, "axes"}, {"ReduceMax", 18, 1, NULL},
	{"ReduceMin", 17, 1, "axes"}, {"ReduceMin", 18, 1, NULL},
	{"ReduceProd", 17, 1, "axes"}, {"ReduceProd", 18, 1, NULL},
	{"ReduceL1", 17, 1, "axes"}, {"ReduceL1", 18, 1, NULL},
	{"ReduceL2", 17, 1, "axes"}, {"ReduceL2", 18, 1, NULL},
	{"ReduceLogSum", 17, 1, "axes"}, {"ReduceLogSum", 18, 1, NULL},
	{"ReduceLogSumExp", 17, 1, "axes"}, {"ReduceLogSumExp", 18, 1, NULL},
	{"ReduceSumSquare", 17, 1, "axes"}, {"ReduceSumSquare", 18, 1, NULL},
	{"Split", 11, 1, "split"}, {"Split", 13, 1, NULL},
	{"Pad", 1, 1, "paddings"}, {"Pad", 10, 1, "pads"}, {"Pad", 10, 2, "value"}, {"Pad", 11, 1, NULL},
	{"Pad", 11, 2, NULL},
	{"Clip", 1, 1, "min"}, {"Clip", 6, 2, "max"}, {"Clip", 10, 1, "min"}, {"Clip", 11, 1, NULL},
	{"Slice", 9, 1, "starts"}, {"Slice", 9, 2, "ends"}, {"Slice", 9, 3, "axes"}, {"Slice", 10, 3, NULL},
	{"Upsample", 7, 1, "scales"}, {"Upsample", 9, 1, NULL},
	{"Dropout", 11, 1, "ratio"}, {"Dropout", 12, 1, NULL},
	{"TopK", 9, 1, "k"}, {"TopK", 10, 1, NULL},
	{"Reshape", 4, 1, "shape"}, {"Reshape", 5, 1, NULL},
	{"DFT", 17, 2, "axis"}, {"DFT", 20, 2, NULL},
};

START_TEST(version_pairs)
{
	const char *op = pairs[_i].op, *attr = pairs[_i].attr;
	int v = pairs[_i].version, in = pairs[_i].input;
	const OpSchema *s = op_schema_lookup("", op, v);
	ck_assert_msg(s != NULL, "%s-%d missing", op, v);
	const OpsetForm *f = opset_form_input_attr(op, v, in);
	if (attr) {
		ck_assert_msg(f && strcmp(f->attr, attr) == 0, "%s at %d: input %d should be attribute %s",
		              op, v, in, attr);
		ck_assert_msg(op_schema_attr(s, attr) != NULL, "%s-%d: no attribute %s", op,
		              s->since_version, attr);
		ck_assert_ptr_eq(opset_form_attr(op, attr, v), f);
	} else {
		ck_assert_msg(f == NULL, "%s at %d: input %d is an input, not attribute %s", op, v, in,
		              f ? f->attr : "");
		ck_assert_msg(s->ninputs > in, "%s-%d: no input %d", op, s->since_version, in);
	}
}
END_TEST

START_TEST(defaults_that_differ)
{
	const OpsetForm *f = opset_form_input_attr("Clip", 6, 1);
	ck_assert_ptr_nonnull(f);
	ck_assert(f->has_default);
	ck_assert_float_eq((float)f->def, -FLT_MAX);
	f = opset_form_input_attr("Clip", 10, 2);
	ck_assert((float)f->def == FLT_MAX);
	/* Clip-1 has no defaults: absent means unbounded. */
	ck_assert(!opset_form_input_attr("Clip", 1, 1)->has_default);
	ck_assert(opset_form_input_attr("Dropout", 7, 1)->def == 0.5);

	/* noop_with_empty_axes: ReduceSum from 13, the others from 18. */
	const OpsetForm *at[8];
	int n = opset_forms_at("ReduceSum", 12, at, 8), seen = 0;
	for (int i = 0; i < n; i++)
		seen += at[i]->kind == FORM_NO_ATTR && strcmp(at[i]->attr, "noop_with_empty_axes") == 0;
	ck_assert_int_eq(seen, 1);
	ck_assert_int_eq(opset_forms_at("ReduceSum", 13, at, 8), 0);
	n = opset_forms_at("ReduceMean", 17, at, 8);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(opset_forms_at("ReduceMean", 18, at, 8), 0);
	/* Split's num_outputs from 18, Pad's axes input from 18, Slice's steps from 10. */
	ck_assert_int_eq(opset_forms_at("Split", 18, at, 8), 0);
	ck_assert_int_eq(opset_forms_at("Split", 17, at, 8), 1);
	ck_assert_int_eq(opset_forms_at("Pad", 17, at, 8), 1);
	ck_assert_int_eq(at[0]->kind, FORM_NO_INPUT);
	ck_assert_int_eq(at[0]->input, 3);
	n = opset_forms_at("Slice", 9, at, 8);
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(opset_forms_at("Slice", 10, at, 8), 0);
	/* Resize-10 has scales at input 1, the newest form at 2. */
	n = opset_forms_at("Resize", 10, at, 8);
	bool moved = false;
	for (int i = 0; i < n; i++)
		moved |= at[i]->kind == FORM_MOVED && at[i]->input == 2 && at[i]->at == 1;
	ck_assert(moved);
	/* Ops whose form never changed have no rows. */
	ck_assert_int_eq(opset_forms_at("Expand", 8, at, 8), 0);
	ck_assert_int_eq(opset_forms_at("Conv", 1, at, 8), 0);
	ck_assert_ptr_null(opset_form_attr("Conv", "pads", 0));
}
END_TEST

Suite *suite_opset_forms(void)
{
	Suite *s = suite_create("opset_forms");
	TCase *tc = tcase_create("table");
	size_t n;
	opset_forms_all(&n);
	tcase_add_loop_test(tc, every_row_matches_the_schemas, 0, (int)n);
	tcase_add_test(tc, every_attribute_turned_input_has_a_row);
	tcase_add_loop_test(tc, version_pairs, 0, (int)(sizeof pairs / sizeof pairs[0]));
	tcase_add_test(tc, defaults_that_differ);
	suite_add_tcase(s, tc);
	return s;
}
