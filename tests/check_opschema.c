/* check_opschema.c - tests of the operator schema table (ir/opschema.h): facts
 * about real ONNX ops checked against the spec, and invariants that must hold
 * for every row of the generated table. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "ir/opschema.h"

/* The schema of a default-domain op at a version; fails the test, naming the
 * op, if it is missing. */
static const OpSchema *must(const char *name, int version)
{
	const OpSchema *s = op_schema_lookup("", name, version);
	ck_assert_msg(s != NULL, "%s at opset %d: no schema", name, version);
	return s;
}

static int input_index(const OpSchema *s, const char *name)
{
	for (int i = 0; i < s->ninputs; i++)
		if (strcmp(s->inputs[i].name, name) == 0)
			return i;
	return -1;
}

static const OpTypeConstraint *constraint(const OpSchema *s, const char *param)
{
	for (int i = 0; i < s->nconstraints; i++)
		if (strcmp(s->constraints[i].param, param) == 0)
			return &s->constraints[i];
	return NULL;
}

START_TEST(squeeze_axes_moved_to_input_at_13)
{
	const OpSchema *s11 = must("Squeeze", 11);
	ck_assert_int_eq(s11->since_version, 11);
	ck_assert_int_eq(s11->until_version, 12);
	ck_assert_int_eq(s11->ninputs, 1);
	ck_assert_int_eq(s11->max_inputs, 1);
	ck_assert_ptr_nonnull(op_schema_attr(s11, "axes"));

	const OpSchema *s13 = must("Squeeze", 13);
	ck_assert_int_eq(s13->since_version, 13);
	ck_assert_int_eq(s13->ninputs, 2);
	ck_assert_int_eq(s13->min_inputs, 1);
	ck_assert_int_eq(s13->max_inputs, 2);
	ck_assert_str_eq(s13->inputs[1].name, "axes");
	ck_assert_int_eq(s13->inputs[1].option, OPT_OPTIONAL);
	ck_assert_ptr_null(op_schema_attr(s13, "axes"));
	/* opset 17 still uses version 13 */
	ck_assert_ptr_eq(must("Squeeze", 17), s13);
}
END_TEST

START_TEST(reducemean_axes_moved_to_input_at_18)
{
	const OpSchema *s17 = must("ReduceMean", 17);
	ck_assert_int_eq(s17->since_version, 13);
	ck_assert_int_eq(s17->until_version, 17);
	const OpAttrDef *axes = op_schema_attr(s17, "axes");
	ck_assert_ptr_nonnull(axes);
	ck_assert_int_eq(axes->type, ATTR_INTS);
	ck_assert_int_eq(s17->ninputs, 1);

	const OpSchema *s18 = must("ReduceMean", 18);
	ck_assert_int_eq(s18->since_version, 18);
	ck_assert_ptr_null(op_schema_attr(s18, "axes"));
	ck_assert_int_eq(input_index(s18, "axes"), 1);
	ck_assert_int_eq(s18->inputs[1].option, OPT_OPTIONAL);
	ck_assert_str_eq(s18->inputs[1].type_str, "tensor(int64)");
	const OpAttrDef *noop = op_schema_attr(s18, "noop_with_empty_axes");
	ck_assert_ptr_nonnull(noop);
	ck_assert(noop->has_default);
	ck_assert_int_eq(noop->i, 0);
	const OpAttrDef *keep = op_schema_attr(s18, "keepdims");
	ck_assert_ptr_nonnull(keep);
	ck_assert_int_eq(keep->i, 1);
}
END_TEST

START_TEST(conv_attributes_and_defaults)
{
	const OpSchema *s = must("Conv", 11);
	ck_assert_int_eq(s->nattrs, 6);
	const OpAttrDef *group = op_schema_attr(s, "group");
	ck_assert_ptr_nonnull(group);
	ck_assert_int_eq(group->type, ATTR_INT);
	ck_assert(group->has_default);
	ck_assert_int_eq(group->i, 1);
	const OpAttrDef *pad = op_schema_attr(s, "auto_pad");
	ck_assert_ptr_nonnull(pad);
	ck_assert_int_eq(pad->type, ATTR_STRING);
	ck_assert(pad->has_default);
	ck_assert_str_eq(pad->s, "NOTSET");
	const OpAttrDef *ks = op_schema_attr(s, "kernel_shape");
	ck_assert_ptr_nonnull(ks);
	ck_assert_int_eq(ks->type, ATTR_INTS);
	ck_assert(!ks->required);
	ck_assert(!ks->has_default);
	ck_assert_ptr_null(op_schema_attr(s, "no_such_attr"));
	/* X, W required; B optional */
	ck_assert_int_eq(s->min_inputs, 2);
	ck_assert_int_eq(s->max_inputs, 3);
	ck_assert_int_eq(s->inputs[2].option, OPT_OPTIONAL);
}
END_TEST

START_TEST(gelu_is_new_in_20)
{
	ck_assert_ptr_null(op_schema_lookup("", "Gelu", 19));
	const OpSchema *s = must("Gelu", 20);
	ck_assert_int_eq(s->since_version, 20);
	ck_assert_int_eq(s->kind, OP_Gelu);
	const OpAttrDef *a = op_schema_attr(s, "approximate");
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(a->s, "none");
	ck_assert(s->flags & OPF_FUNCTION);
	ck_assert(s->flags & OPF_ELEMENTWISE);
}
END_TEST

START_TEST(opset_23_transformer_ops)
{
	ck_assert_ptr_null(op_schema_lookup("", "Attention", 22));
	ck_assert_ptr_null(op_schema_lookup("", "RMSNormalization", 22));
	ck_assert_ptr_null(op_schema_lookup("", "RotaryEmbedding", 22));
	const OpSchema *att = must("Attention", 23);
	ck_assert_int_eq(att->min_inputs, 3);
	ck_assert_str_eq(att->inputs[0].name, "Q");
	ck_assert_ptr_nonnull(op_schema_attr(att, "is_causal"));
	const OpSchema *rms = must("RMSNormalization", 23);
	const OpAttrDef *axis = op_schema_attr(rms, "axis");
	ck_assert_ptr_nonnull(axis);
	ck_assert_int_eq(axis->i, -1);
	const OpAttrDef *eps = op_schema_attr(rms, "epsilon");
	ck_assert_ptr_nonnull(eps);
	ck_assert_double_eq_tol(eps->f, 1e-5, 1e-12);
	must("RotaryEmbedding", 23);
	ck_assert_ptr_eq(must("Attention", OPSCHEMA_MAX_OPSET), att);
}
END_TEST

START_TEST(layernormalization_is_new_in_17)
{
	ck_assert_ptr_null(op_schema_lookup("", "LayerNormalization", 16));
	const OpSchema *s = must("LayerNormalization", 17);
	ck_assert_int_eq(s->since_version, 17);
	ck_assert_int_eq(op_schema_attr(s, "axis")->i, -1);
	ck_assert_int_eq(op_schema_attr(s, "stash_type")->i, 1);
	ck_assert_int_eq(s->max_outputs, 3);
}
END_TEST

START_TEST(clip_6_min_max_attributes)
{
	const OpSchema *s = must("Clip", 6);
	ck_assert_int_eq(s->since_version, 6);
	ck_assert_int_eq(s->until_version, 10);
	const OpAttrDef *mn = op_schema_attr(s, "min");
	const OpAttrDef *mx = op_schema_attr(s, "max");
	ck_assert_ptr_nonnull(mn);
	ck_assert_ptr_nonnull(mx);
	ck_assert_int_eq(mn->type, ATTR_FLOAT);
	ck_assert(mn->has_default && mx->has_default);
	/* the float range: -FLT_MAX and FLT_MAX */
	ck_assert_double_eq_tol(mn->f, -3.4028234663852886e38, 1e30);
	ck_assert_double_eq_tol(mx->f, 3.4028234663852886e38, 1e30);
	/* from 11 min and max are optional inputs */
	const OpSchema *s11 = must("Clip", 11);
	ck_assert_ptr_null(op_schema_attr(s11, "min"));
	ck_assert_int_eq(input_index(s11, "min"), 1);
	ck_assert_int_eq(input_index(s11, "max"), 2);
}
END_TEST

START_TEST(flags)
{
	ck_assert(must("Add", 14)->flags & OPF_COMMUTATIVE);
	ck_assert(must("Mul", 14)->flags & OPF_COMMUTATIVE);
	ck_assert(must("Max", 13)->flags & OPF_COMMUTATIVE);
	ck_assert(must("BitwiseXor", 18)->flags & OPF_COMMUTATIVE);
	ck_assert(!(must("Sub", 14)->flags & OPF_COMMUTATIVE));
	ck_assert(!(must("Div", 14)->flags & OPF_COMMUTATIVE));
	ck_assert(!(must("MatMul", 13)->flags & OPF_COMMUTATIVE));
	ck_assert(must("Relu", 14)->flags & OPF_ELEMENTWISE);
	ck_assert(must("Where", 16)->flags & OPF_ELEMENTWISE);
	ck_assert(!(must("Softmax", 13)->flags & OPF_ELEMENTWISE));
	ck_assert(must("RandomNormal", 1)->flags & OPF_RANDOM);
	ck_assert(must("Bernoulli", 15)->flags & OPF_RANDOM);
	ck_assert(!(must("Dropout", 13)->flags & OPF_RANDOM));
	ck_assert(must("LayerNormalization", 17)->flags & OPF_FUNCTION);
	ck_assert(!(must("Conv", 11)->flags & (OPF_FUNCTION | OPF_VENDOR)));
}
END_TEST

START_TEST(concat_is_variadic)
{
	const OpSchema *s = must("Concat", 13);
	ck_assert_int_eq(s->ninputs, 1);
	ck_assert_int_eq(s->inputs[0].option, OPT_VARIADIC);
	ck_assert(s->inputs[0].homogeneous);
	ck_assert_int_eq(s->min_inputs, 1);
	ck_assert_int_eq(s->max_inputs, INT32_MAX);
	ck_assert(op_schema_attr(s, "axis")->required);
}
END_TEST

START_TEST(dropout_13_arity)
{
	const OpSchema *s = must("Dropout", 13);
	ck_assert_int_eq(s->min_inputs, 1);
	ck_assert_int_eq(s->max_inputs, 3);
	ck_assert_int_eq(s->min_outputs, 1);
	ck_assert_int_eq(s->max_outputs, 2);
	ck_assert_int_eq(s->until_version, 21);
}
END_TEST

START_TEST(split_18_num_outputs)
{
	ck_assert_ptr_null(op_schema_attr(must("Split", 13), "num_outputs"));
	const OpSchema *s = must("Split", 18);
	const OpAttrDef *n = op_schema_attr(s, "num_outputs");
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(n->type, ATTR_INT);
	ck_assert(!n->required && !n->has_default);
	ck_assert_int_eq(s->outputs[0].option, OPT_VARIADIC);
	ck_assert_int_eq(s->max_outputs, INT32_MAX);
}
END_TEST

START_TEST(lookup_misses)
{
	ck_assert_ptr_null(op_schema_lookup("", "Conv2D", 13));
	ck_assert_ptr_null(op_schema_lookup("", "", 13));
	ck_assert_ptr_null(op_schema_lookup("", NULL, 13));
	ck_assert_ptr_null(op_schema_lookup("com.example", "Conv", 13));
	/* before the first version */
	ck_assert_ptr_null(op_schema_lookup("", "Mish", 17));
	ck_assert_ptr_null(op_schema_lookup("", "Conv", 0));
	/* removed ops: Upsample at 10, Scatter at 11 */
	ck_assert_ptr_nonnull(op_schema_lookup("", "Upsample", 9));
	ck_assert_ptr_null(op_schema_lookup("", "Upsample", 10));
	ck_assert_ptr_null(op_schema_lookup("", "Scatter", 13));
	ck_assert_int_eq(must("Upsample", 9)->until_version, 9);
	/* "ai.onnx" names the default domain */
	ck_assert_ptr_eq(op_schema_lookup("ai.onnx", "Relu", 14), must("Relu", 14));
}
END_TEST

START_TEST(vendor_ops)
{
	const OpSchema *s = op_schema_lookup("com.microsoft", "FusedConv", 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->domain, "com.microsoft");
	ck_assert_int_eq(s->kind, OP_UNKNOWN);
	ck_assert(s->flags & OPF_VENDOR);
	ck_assert_ptr_nonnull(op_schema_attr(s, "activation"));
	ck_assert_ptr_nonnull(op_schema_lookup("com.microsoft", "SkipLayerNormalization", 1));
	ck_assert_ptr_nonnull(op_schema_lookup("com.microsoft", "Gelu", 1));
	/* not in the default domain and not an OpKind */
	ck_assert_ptr_null(op_schema_lookup("", "FusedConv", 23));
	ck_assert_int_eq(op_kind_lookup("FusedConv"), OP_UNKNOWN);
	/* the default-domain Gelu is a different op */
	ck_assert_ptr_ne(op_schema_lookup("", "Gelu", 20), op_schema_lookup("com.microsoft", "Gelu", 1));
}
END_TEST

START_TEST(type_masks)
{
	const OpTypeConstraint *t = constraint(must("Cast", 19), "T2");
	ck_assert_ptr_nonnull(t);
	ck_assert(t->tensor_types & (1u << 1));   /* FLOAT */
	ck_assert(t->tensor_types & (1u << 17));  /* FLOAT8E4M3FN */
	ck_assert(!(t->tensor_types & (1u << 22))); /* INT4 arrives in 21 */
	ck_assert(constraint(must("Cast", 21), "T2")->tensor_types & (1u << 22));
	ck_assert(constraint(must("Cast", 23), "T2")->tensor_types & (1u << 23));
	const OpTypeConstraint *v = constraint(must("Identity", 16), "V");
	ck_assert(v->has_non_tensor);
	ck_assert(!constraint(must("Relu", 14), "T")->has_non_tensor);
	ck_assert_str_eq(attr_type_name(ATTR_INTS), "ints");
	ck_assert_str_eq(attr_type_name(ATTR_SPARSE_TENSOR), "sparse_tensor");
	ck_assert_str_eq(attr_type_name(ATTR_TYPE_PROTOS), "type_protos");
}
END_TEST

/* Every row of the table: arities and versions are sane, the versions of one
 * op are sorted, do not overlap, and leave no gap. */
START_TEST(table_invariants)
{
	size_t n;
	const OpSchema *all = op_schema_all(&n);
	ck_assert_uint_gt(n, 500);
	int names = 0;
	for (size_t i = 0; i < n; i++) {
		const OpSchema *s = &all[i];
		ck_assert_msg(s->min_inputs <= s->max_inputs, "%s-%d: inputs %d..%d", s->name,
			      s->since_version, s->min_inputs, s->max_inputs);
		ck_assert_msg(s->min_outputs <= s->max_outputs, "%s-%d: outputs %d..%d", s->name,
			      s->since_version, s->min_outputs, s->max_outputs);
		ck_assert_msg(s->max_inputs == INT32_MAX || s->max_inputs <= s->ninputs,
			      "%s-%d: max_inputs %d > %d formals", s->name, s->since_version,
			      s->max_inputs, s->ninputs);
		ck_assert_msg(s->since_version <= s->until_version, "%s-%d: until %d", s->name,
			      s->since_version, s->until_version);
		ck_assert_msg(s->since_version >= 1, "%s: since %d", s->name, s->since_version);
		for (int a = 1; a < s->nattrs; a++)
			ck_assert_msg(strcmp(s->attrs[a - 1].name, s->attrs[a].name) < 0,
				      "%s-%d: attributes not sorted", s->name, s->since_version);
		bool vendor = strcmp(s->domain, "") != 0;
		ck_assert_msg(vendor == ((s->flags & OPF_VENDOR) != 0), "%s: vendor flag", s->name);
		ck_assert_msg(vendor ? s->kind == OP_UNKNOWN : s->kind == op_kind_lookup(s->name),
			      "%s: kind %d", s->name, (int)s->kind);
		bool same_op = i + 1 < n && strcmp(all[i + 1].domain, s->domain) == 0 &&
			       strcmp(all[i + 1].name, s->name) == 0;
		if (same_op) {
			ck_assert_msg(all[i + 1].since_version > s->since_version,
				      "%s: versions %d, %d out of order", s->name, s->since_version,
				      all[i + 1].since_version);
			ck_assert_msg(s->until_version == all[i + 1].since_version - 1,
				      "%s-%d: until %d, next since %d", s->name, s->since_version,
				      s->until_version, all[i + 1].since_version);
		} else {
			ck_assert_msg(s->until_version == INT32_MAX, "%s-%d: last version ends at %d",
				      s->name, s->since_version, s->until_version);
			if (!vendor)
				names++;
		}
		if (i > 0) {
			int c = strcmp(all[i - 1].domain, s->domain);
			if (c == 0)
				c = strcmp(all[i - 1].name, s->name);
			ck_assert_msg(c <= 0, "table not sorted at %s", s->name);
		}
		/* the lookup finds each row at its own since_version */
		const OpSchema *found = op_schema_lookup(s->domain, s->name, s->since_version);
		if (s->flags & OPF_DEPRECATED)
			ck_assert_ptr_null(found);
		else
			ck_assert_msg(found == s, "%s-%d: lookup found another row", s->name,
				      s->since_version);
	}
	ck_assert_int_eq(names, OP_COUNT - 1);
}
END_TEST

/* Every OpKind's name round-trips through op_kind_lookup. */
START_TEST(kind_round_trip)
{
	OpKind k = (OpKind)_i;
	const char *name = op_kind_name(k);
	ck_assert_msg(op_kind_lookup(name) == k, "kind %d '%s' looks up as %d", _i, name,
		      (int)op_kind_lookup(name));
}
END_TEST

START_TEST(kind_names)
{
	ck_assert_int_eq(op_kind_lookup("Conv"), OP_Conv);
	ck_assert_str_eq(op_kind_name(OP_Conv), "Conv");
	ck_assert_str_eq(op_kind_name(OP_UNKNOWN), "?");
	ck_assert_str_eq(op_kind_name((OpKind)OP_COUNT), "?");
	ck_assert_int_eq(op_kind_lookup("conv"), OP_UNKNOWN);
	ck_assert_int_eq(op_kind_lookup("?"), OP_UNKNOWN);
	ck_assert_int_eq(op_kind_lookup("Abs"), 1);
}
END_TEST

Suite *suite_opschema(void)
{
	Suite *s = suite_create("opschema");
	TCase *tc = tcase_create("facts");
	tcase_add_test(tc, squeeze_axes_moved_to_input_at_13);
	tcase_add_test(tc, reducemean_axes_moved_to_input_at_18);
	tcase_add_test(tc, conv_attributes_and_defaults);
	tcase_add_test(tc, gelu_is_new_in_20);
	tcase_add_test(tc, opset_23_transformer_ops);
	tcase_add_test(tc, layernormalization_is_new_in_17);
	tcase_add_test(tc, clip_6_min_max_attributes);
	tcase_add_test(tc, flags);
	tcase_add_test(tc, concat_is_variadic);
	tcase_add_test(tc, dropout_13_arity);
	tcase_add_test(tc, split_18_num_outputs);
	tcase_add_test(tc, lookup_misses);
	tcase_add_test(tc, vendor_ops);
	tcase_add_test(tc, type_masks);
	suite_add_tcase(s, tc);

	TCase *inv = tcase_create("invariants");
	tcase_add_test(inv, table_invariants);
	tcase_add_loop_test(inv, kind_round_trip, 1, OP_COUNT);
	tcase_add_test(inv, kind_names);
	suite_add_tcase(s, inv);
	return s;
}
