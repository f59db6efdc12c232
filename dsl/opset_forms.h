/* opset_forms.h - how older opsets spell the newest form of an op.
 *
 * Rules are written against the newest form of each op (inputs where ONNX
 * has moved attributes to inputs) and match and emit every form.  This table
 * says, as data, where an older form differs: an input that was an attribute
 * (Squeeze's axes before 13), an input at another position (Resize-10's
 * scales), an input or attribute that did not exist yet (Slice's steps before
 * 10, noop_with_empty_axes before 13/18), or a change of meaning only
 * (Softmax's axis before 13).  The checker (check.c) uses it to accept
 * Squeeze(x, axes) in an opset-11 rule; the compiler uses it to match and
 * emit each form.  tests/check_opset_forms.c verifies every entry against
 * the schema table (ir/opschema.h). */
#ifndef GRAFT_DSL_OPSET_FORMS_H
#define GRAFT_DSL_OPSET_FORMS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum FormKind {
	FORM_ATTR,      /* canonical input `input` is the attribute `attr` in first..last */
	FORM_MOVED,     /* canonical input `input` is input number `at` in first..last */
	FORM_NO_INPUT,  /* canonical input `input` does not exist in first..last: only its
	                   absence (or the value it defaults to, see note) matches */
	FORM_NO_ATTR,   /* canonical attribute `attr` does not exist in first..last: the old
	                   form behaves as the attribute's default */
	FORM_NOTE,      /* same signature in first..last, different meaning: see note */
} FormKind;

typedef struct OpsetForm {
	const char *op;         /* default-domain op */
	int first, last;        /* opset versions of the old form (inclusive) */
	FormKind kind;
	int input;              /* FORM_ATTR, FORM_MOVED, FORM_NO_INPUT: canonical input index */
	const char *attr;       /* FORM_ATTR: the old attribute; FORM_NO_ATTR: the canonical
	                           attribute missing; FORM_NOTE: the old form's attribute
	                           concerned (NULL if none) */
	int at;                 /* FORM_MOVED: the input's index in the old form */
	bool has_default;       /* FORM_ATTR: the old attribute's default, when the node omits it */
	double def;             /*   (Clip-6: -FLT_MAX / FLT_MAX; an absent input means the same) */
	const char *note;       /* the semantic difference, for people; NULL if none */
} OpsetForm;

/* Every entry, grouped by op. */
const OpsetForm *opset_forms_all(size_t *count);

/* The entries of op in effect at opset `version` (first <= version <= last),
 * up to max of them into out; returns how many there are. */
int opset_forms_at(const char *op, int version, const OpsetForm **out, int max);

/* The attribute that carries canonical input `input` of op at `version`, as
 * its FORM_ATTR entry, or NULL if it is not an attribute there. */
const OpsetForm *opset_form_input_attr(const char *op, int version, int input);

/* The FORM_ATTR entry of op whose old attribute is `attr`, in effect at
 * `version`, or at any version if version is 0; NULL if none. */
const OpsetForm *opset_form_attr(const char *op, const char *attr, int version);

/* An attribute of a pattern or built op that is an older form's spelling of
 * a canonical input (ReduceMean[axes = ...]): that input's index, else -1.
 * s: the op's (newest) schema, NULL for none. */
struct OpSchema;
int opset_form_attr_input(const struct OpSchema *s, const char *attr);

/* Attributes with no schema default whose value the spec gives in words
 * when a node omits them: Transpose's perm (the axes reversed); a
 * convolution's or pool's strides and dilations (ones) and pads (zeros,
 * unless auto_pad is SAME_*); a convolution's kernel_shape (its weight's
 * spatial dims); a Reduce op's axes where they are an attribute (every
 * axis); Squeeze's axes where they are an attribute (the dims of size 1); Attention's scale (1 / sqrt(head size)).  A pattern binds them as
 * that value (runtime/engine/rw_gen.c computes it); the checker warns on a
 * pattern attribute with neither. */
bool op_attr_implied(const char *op, const char *attr);

#endif
