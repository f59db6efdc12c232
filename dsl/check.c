/* check.c - the rule checker: parsed rules -> checked rules.
 *
 * For every rule of every file: resolve each op of the pattern and the
 * result against the schema table (ir/opschema.h) within the rule's opset
 * range, check arity and attributes against the newest definition in that
 * range with older forms mapped (dsl/opset_forms.h: Squeeze(x, axes) is
 * fine at opset 11, ReduceMean[axes = ...] at 18), bind the pattern's
 * variables (Rule.bindings), type every guard and result expression
 * (Expr.type) with the builtins of builtins.c and the file's externs, and
 * derive Rule.min_opset_needed from the ops the result emits.  Then across
 * files: duplicate rule names.  Errors and warnings go to the Diag with the
 * offending token underlined; checking goes on after an error so one run
 * reports them all. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "check_internal.h"
#include "namemap.h"
#include "opset_forms.h"

/* Where an expression is: only the result may build ONNX nodes. */
typedef enum Side { SIDE_PATTERN, SIDE_GUARD, SIDE_RESULT } Side;

/* What the checker knows about a binding beyond Binding. */
typedef struct BindInfo {
	const Pattern *node;    /* node bindings: the pattern bound */
} BindInfo;

typedef struct ExternRef {
	Extern *e;
	RuleFile *f;
} ExternRef;

typedef struct Checker {
	Diag *d;
	RuleFile *f;            /* the file being checked */
	Rule *r;                /* the rule being checked */
	int lo, hi;             /* its default-domain opset range, clamped to the table */
	bool lo_open, hi_open;
	bool float64;           /* r's guard requires float64 (warn_float32 keeps quiet) */
	Binding *b;             /* r's bindings, capacity cap (stable: Expr.binding points in) */
	BindInfo *info;
	int nb, cap;
	const char *unbound[32];/* names already reported unbound in this rule */
	int nunbound;
	ExternRef *externs;     /* every extern of every file */
	int nexterns;
	int min_opset;          /* the rule's min_opset_needed so far */
	struct NameMap *names;  /* r's bindings by name */
} Checker;

static void check_expr_attrs(Checker *c, Expr *e, const OpSchema *s, Side side);

/* ---- small helpers ------------------------------------------------------- */

static const char *type_name(DslType t)
{
	return dsl_type_name(t);
}

static bool is_valuelike(DslType t)
{
	return t == TY_VALUE || t == TY_NODE || t == TY_TENSOR;
}

static bool is_number(DslType t)
{
	return t == TY_INT || t == TY_FLOAT;
}

static bool is_int_literal(const Expr *e)
{
	if (e->kind == EXPR_UNARY && e->op == EX_NEG)
		e = e->items[0];
	return e->kind == EXPR_INT;
}

static bool is_nan_literal(const Expr *e)
{
	return e->kind == EXPR_FLOAT && isnan(e->f);
}

static const char *exop_name(ExprOp op)
{
	switch (op) {
	case EX_NONE: return "?";
	case EX_NEG: return "-";
	case EX_NOT: return "!";
	case EX_ADD: return "+";
	case EX_SUB: return "-";
	case EX_MUL: return "*";
	case EX_DIV: return "/";
	case EX_CONCAT: return "++";
	case EX_EQ: return "==";
	case EX_NE: return "!=";
	case EX_LT: return "<";
	case EX_LE: return "<=";
	case EX_GT: return ">";
	case EX_GE: return ">=";
	case EX_AND: return "&&";
	case EX_OR: return "||";
	}
	return "?";
}

const char *dsl_exop_onnx(ExprOp op)
{
	switch (op) {
	case EX_ADD: return "Add";
	case EX_SUB: return "Sub";
	case EX_MUL: return "Mul";
	case EX_DIV: return "Div";
	case EX_NEG: return "Neg";
	default: return NULL;
	}
}

static DslType attr_dsl_type(AttrType t)
{
	switch (t) {
	case ATTR_FLOAT: return TY_FLOAT;
	case ATTR_INT: return TY_INT;
	case ATTR_STRING: return TY_STRING;
	case ATTR_TENSOR: return TY_TENSOR;
	case ATTR_GRAPH: return TY_GRAPH;
	case ATTR_FLOATS: return TY_FLOATS;
	case ATTR_INTS: return TY_INTS;
	case ATTR_STRINGS: return TY_STRINGS;
	default: return TY_UNKNOWN;
	}
}

/* May an expression of type t (e: the expression, for literals) give an
 * attribute of type at?  Ints widen to floats, bools and dtypes are ints,
 * [] is any list. */
static bool attr_accepts(AttrType at, DslType t, const Expr *e)
{
	if (t == TY_UNKNOWN)
		return true;
	bool empty_list = e && e->kind == EXPR_LIST && e->n == 0;
	switch (at) {
	case ATTR_INT: return t == TY_INT || t == TY_BOOL || t == TY_DTYPE;
	case ATTR_FLOAT: return t == TY_FLOAT || t == TY_INT;
	case ATTR_STRING: return t == TY_STRING;
	case ATTR_INTS: return t == TY_INTS || empty_list;
	case ATTR_FLOATS: return t == TY_FLOATS || t == TY_INTS || empty_list;
	case ATTR_STRINGS: return t == TY_STRINGS || empty_list;
	case ATTR_TENSOR: return t == TY_TENSOR;
	case ATTR_GRAPH: return t == TY_GRAPH;
	default: return true;
	}
}

/* "13..17", "13..", "..12": the rule's range as written. */
static const char *range_str(const Checker *c, char *buf, size_t size)
{
	if (c->lo_open && !c->hi_open)
		snprintf(buf, size, "..%d", c->r->opset_max);
	else if (c->hi_open && !c->lo_open)
		snprintf(buf, size, "%d..", c->r->opset_min);
	else
		snprintf(buf, size, "%d..%d", c->lo_open ? 1 : c->r->opset_min,
		         c->hi_open ? OPSCHEMA_MAX_OPSET : c->r->opset_max);
	return buf;
}

static SrcPos name_pos(SrcPos pos, const char *name)
{
	/* A caret under the whole name when the parser gave a point. */
	if (pos.len <= 0 && name)
		pos.len = (int)strlen(name);
	return pos;
}

/* ---- literals that float32 does not hold ---------------------------------- */

/* The number as written (for messages): e's source text, "1e-50", "-1e39". */
static const char *literal_text(const Checker *c, const Expr *e, char *buf, size_t size)
{
	const char *src = c->f->src;
	uint32_t off = e->pos.offset;
	size_t n = 0;
	if (src && off < c->f->srclen) {
		/* up to a ' ' or '~' (the span of "0.5 ~ 1e-3" covers the tolerance) */
		while (n + 1 < size && off + n < c->f->srclen && (int)n < e->pos.len && src[off + n] != ' ' &&
		       src[off + n] != '~')
			n++;
		memcpy(buf, src + off, n);
	}
	buf[n] = 0;
	if (!n)
		snprintf(buf, size, "%g", e->f);
	return buf;
}

/* A float literal that float32 rounds to 0 (1e-50) or to inf (1e39) is not
 * the number written where it becomes a float32 element or attribute.
 * Called where a literal is converted to an element type the checker
 * cannot pin down, or to a float attribute (always float32); the rule is
 * in docs/rule-language.md ("Errors and warnings").  Lists item by item. */
static void warn_float32(Checker *c, const Expr *e)
{
	if (e->kind == EXPR_LIST) {
		for (int i = 0; i < e->n; i++)
			warn_float32(c, e->items[i]);
		return;
	}
	if (e->kind != EXPR_FLOAT || !isfinite(e->f) || e->f == 0 || e->tol > 0)
		return;     /* within a tolerance, a literal is compared as a float64 */
	/* float32's rounding without a cast (one out of range is undefined in C):
	 * to 0 at or below half the least denormal, 2^-150; to inf from halfway
	 * between the largest float and 2^128 */
	double a = fabs(e->f);
	const char *to = a <= 0x1p-150 ? "0" : a >= 0x1.ffffffp127 ? (e->f > 0 ? "inf" : "-inf") : NULL;
	if (!to)
		return;
	char text[48];
	dsl_warning(c->d, c->f, e->pos, "%s is %s in float32", literal_text(c, e, text, sizeof text), to);
}

/* A number literal beside a value in a result: it becomes a scalar of the
 * value's dtype, unknown here, so float32 is what it may be. */
static void warn_float32_operand(Checker *c, const Expr *e, Side side)
{
	if (side == SIDE_RESULT && !c->float64)
		warn_float32(c, e);
}

/* Does the guard require float64, as dtype(v) == float64 among its
 * top-level '&&' terms?  Then its literals are float64 numbers. */
static bool guard_float64(const Expr *g)
{
	if (!g || g->kind != EXPR_BINARY)
		return false;
	if (g->op == EX_AND)
		return guard_float64(g->items[0]) || guard_float64(g->items[1]);
	if (g->op != EX_EQ)
		return false;
	for (int i = 0; i < 2; i++) {
		const Expr *call = g->items[i], *t = g->items[1 - i];
		if (call->kind == EXPR_CALL && !strcmp(call->s, "dtype") && t->kind == EXPR_VAR && !strcmp(t->s, "float64"))
			return true;
	}
	return false;
}

/* ---- ops ----------------------------------------------------------------- */

/* Every definition of (domain, name): [*first, *first + count) of op_schema_all. */
static int op_versions(const char *domain, const char *name, const OpSchema **first)
{
	size_t n;
	const OpSchema *all = op_schema_all(&n);
	int count = 0;
	*first = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(all[i].domain, domain) == 0 && strcmp(all[i].name, name) == 0) {
			if (!count)
				*first = &all[i];
			count++;
		} else if (count) {
			break;
		}
	}
	return count;
}

/* An op's name in text: "Relu", "com.microsoft.FusedConv". */
static const char *op_text(const char *domain, const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", domain, *domain ? "." : "", name);
	return buf;
}

/* The op of domain closest to name (name itself if it is one), or NULL. */
static const char *close_op(const char *domain, const char *name)
{
	size_t n;
	const OpSchema *all = op_schema_all(&n);
	Suggest sg;
	suggest_init(&sg, name);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(all[i].domain, domain) != 0 || (all[i].flags & OPF_DEPRECATED))
			continue;
		if (strcmp(all[i].name, name) == 0)
			return all[i].name;
		suggest_add(&sg, all[i].name);
	}
	return suggest_result(&sg);
}

/* The domain of an op named exactly name other than domain, or NULL. */
static const char *other_domain(const char *domain, const char *name)
{
	size_t n;
	const OpSchema *all = op_schema_all(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(all[i].domain, domain) != 0 && strcmp(all[i].name, name) == 0 &&
		    !(all[i].flags & OPF_DEPRECATED))
			return all[i].domain;
	return NULL;
}

/* "the default domain (no prefix) and com.microsoft": the table's domains. */
static const char *known_domains(char *buf, size_t size)
{
	size_t n, len = (size_t)snprintf(buf, size, "the default domain, written without a prefix,");
	const OpSchema *all = op_schema_all(&n);
	for (size_t i = 1; i < n && len < size; i++)
		if (strcmp(all[i].domain, all[i - 1].domain) != 0 && *all[i].domain)
			len += (size_t)snprintf(buf + len, size - len, " and %s", all[i].domain);
	return buf;
}

/* A domain the table has ops of, or the known domain closest to d: "" for
 * ai.onnx, the default domain's long name (rules write it without a
 * prefix).  *known: d itself is one. */
static const char *close_domain(const char *d, bool *known)
{
	size_t n;
	const OpSchema *all = op_schema_all(&n);
	*known = false;
	if (strcmp(d, "ai.onnx") == 0)
		return "";
	Suggest sg;
	suggest_init(&sg, d);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(all[i].domain, d) == 0) {
			*known = true;
			return d;
		}
		if (*all[i].domain && (i == 0 || strcmp(all[i].domain, all[i - 1].domain) != 0))
			suggest_add(&sg, all[i].domain);
	}
	return suggest_result(&sg);
}

/* An op the table does not have: name what is wrong, the domain or the op,
 * with the closest op there is (the same edit distance as every "did you
 * mean"): com.microsft.FusedMatMul -> com.microsoft.FusedMatMul,
 * ai.onnx.Relu -> Relu, FusedConv -> com.microsoft.FusedConv. */
static void unknown_op(Checker *c, SrcPos pos, const char *domain, const char *name)
{
	char full[256], best[256];
	op_text(domain, name, full, sizeof full);
	bool known = !*domain;
	const char *dom = known ? "" : close_domain(domain, &known);
	if (!known) {
		const char *op = dom ? close_op(dom, name) : NULL;
		SrcPos at = pos;
		at.len = (int)strlen(domain);       /* the caret under the domain */
		if (!dom)
			dsl_error(c->d, c->f, at, "unknown domain '%s' (graft knows %s)", domain, known_domains(best, sizeof best));
		else if (!*dom && op)
			dsl_error(c->d, c->f, at, "'%s' is the default domain, which rules write without a prefix "
			          "(did you mean '%s'?)", domain, op);
		else if (!*dom)
			dsl_error(c->d, c->f, at, "'%s' is the default domain, which rules write without a prefix; "
			          "it has no op '%s'", domain, name);
		else
			dsl_error(c->d, c->f, at, "unknown domain '%s' (did you mean '%s'?)", domain,
			          op ? op_text(dom, op, best, sizeof best) : dom);
		return;
	}
	const char *elsewhere = other_domain(domain, name);
	const char *op = elsewhere ? name : close_op(domain, name);
	if (op)
		dsl_error(c->d, c->f, pos, "unknown operator '%s' (did you mean '%s'?)", full,
		          op_text(elsewhere ? elsewhere : domain, op, best, sizeof best));
	else
		dsl_error(c->d, c->f, pos, "unknown operator '%s'", full);
}

/* The opset from which a default-domain op exists without a break up to
 * hi: what a rule emitting it needs (Gelu: 20).  0 if it is not at hi. */
static int needed_opset(const char *op, int hi)
{
	int v = hi;
	if (!op_schema_lookup("", op, v))
		return 0;
	while (v > 1 && op_schema_lookup("", op, v - 1))
		v--;
	return v;
}

/* The newest definition of an op within the rule's range, reporting an
 * unknown op or one that does not exist in the range.  emits: the result
 * builds the op, so it must exist up to the range's end; *since gets the
 * first version of the range where it does. */
static const OpSchema *resolve_op(Checker *c, SrcPos pos, const char *domain, const char *name,
                                  bool emits, int *since)
{
	if (!domain)
		domain = "";
	pos = name_pos(pos, NULL);
	const OpSchema *first;
	int nv = op_versions(domain, name, &first);
	if (nv == 0) {
		unknown_op(c, pos, domain, name);
		return NULL;
	}
	if (*domain) {
		/* Other domains version separately from the rule's range: take the newest. */
		*since = 0;
		return op_schema_lookup(domain, name, INT32_MAX);
	}
	const OpSchema *newest = NULL;
	for (int v = c->hi; v >= c->lo && !newest; v--)
		newest = op_schema_lookup("", name, v);
	int added = first->since_version, removed = 0;
	for (int i = 0; i < nv; i++)
		if (first[i].flags & OPF_DEPRECATED)
			removed = first[i].since_version;
	char range[64];
	if (!newest) {
		range_str(c, range, sizeof range);
		if (c->hi < added)
			dsl_error(c->d, c->f, pos, "'%s' does not exist in opset %s (it was added in opset %d)",
			          name, range, added);
		else if (removed && c->lo >= removed)
			dsl_error(c->d, c->f, pos, "'%s' does not exist in opset %s (it was removed in opset %d)",
			          name, range, removed);
		else
			dsl_error(c->d, c->f, pos, "'%s' does not exist in opset %s", name, range);
		return NULL;
	}
	if (emits && !op_schema_lookup("", name, c->hi)) {
		dsl_error(c->d, c->f, pos,
		          "'%s' was removed in opset %d: a rule that emits it needs an opset range ending before %d",
		          name, removed, removed);
		return NULL;
	}
	*since = needed_opset(name, c->hi);
	return newest;
}

/* The number of inputs s takes in the newest form: its own, plus the
 * canonical inputs its form has as attributes (Squeeze-11's axes). */
static void op_arity(const OpSchema *s, int *min, int *max)
{
	*min = s->min_inputs;
	*max = s->max_inputs;
	if (*s->domain || *max == INT32_MAX)
		return;
	const OpsetForm *forms[16];
	int n = opset_forms_at(s->name, s->since_version, forms, 16);
	for (int i = 0; i < n && i < 16; i++) {
		if (forms[i]->kind != FORM_ATTR)
			continue;
		if (forms[i]->input + 1 > *max)
			*max = forms[i]->input + 1;
		const OpAttrDef *a = op_schema_attr(s, forms[i]->attr);
		if (a && a->required && forms[i]->input + 1 > *min)
			*min = forms[i]->input + 1;
	}
}

static void arity_error(Checker *c, SrcPos pos, const OpSchema *s, int min, int max,
                        const char *got)
{
	if (min == max)
		dsl_error(c->d, c->f, pos, "'%s' takes %d input%s, got %s", s->name, min,
		          min == 1 ? "" : "s", got);
	else if (max == INT32_MAX)
		dsl_error(c->d, c->f, pos, "'%s' takes at least %d input%s, got %s", s->name, min,
		          min == 1 ? "" : "s", got);
	else
		dsl_error(c->d, c->f, pos, "'%s' takes %d to %d inputs, got %s", s->name, min, max, got);
}

/* An attribute of op s by name: its definition in s, or in the older form
 * that has a canonical input as this attribute (ReduceMean[axes] at 18).
 * *form gets that form's entry. */
static const OpAttrDef *find_attr(const OpSchema *s, const char *name, const OpsetForm **form)
{
	*form = NULL;
	const OpAttrDef *a = op_schema_attr(s, name);
	if (a || *s->domain)
		return a;
	const OpsetForm *f = opset_form_attr(s->name, name, 0);
	if (!f)
		return NULL;
	const OpSchema *old = op_schema_lookup("", s->name, f->last);
	a = op_schema_attr(old, name);
	if (a)
		*form = f;
	return a;
}

static void unknown_attr(Checker *c, SrcPos pos, const OpSchema *s, const char *name)
{
	Suggest sg;
	suggest_init(&sg, name);
	for (int i = 0; i < s->nattrs; i++)
		suggest_add(&sg, s->attrs[i].name);
	const char *best = suggest_result(&sg);
	if (best)
		dsl_error(c->d, c->f, pos, "unknown attribute '%s' of '%s' (did you mean '%s'?)", name,
		          s->name, best);
	else
		dsl_error(c->d, c->f, pos, "unknown attribute '%s' of '%s'", name, s->name);
}

/* Attribute names given twice; true if attrs[i] repeats an earlier one. */
static bool attr_repeated(Checker *c, const AttrArg *attrs, int i)
{
	for (int j = 0; j < i; j++) {
		if (strcmp(attrs[j].name, attrs[i].name) == 0) {
			dsl_error(c->d, c->f, name_pos(attrs[i].pos, attrs[i].name),
			          "attribute '%s' is given twice", attrs[i].name);
			dsl_note(c->d, c->f, name_pos(attrs[j].pos, attrs[j].name), "first given here");
			return true;
		}
	}
	return false;
}

/* A canonical input given both as an old-form attribute and as an input. */
static void check_form_clash(Checker *c, const AttrArg *a, const OpsetForm *form, const OpSchema *s,
                             int npositional)
{
	if (form && npositional > form->input)
		dsl_error(c->d, c->f, name_pos(a->pos, a->name),
		          "'%s' of '%s' is given both as an attribute and as input %d", a->name, s->name,
		          form->input + 1);
}

/* ---- bindings ------------------------------------------------------------- */

static Binding *find_binding(Checker *c, const char *name)
{
	return c->names ? namemap_get(c->names, name) : NULL;
}

/* Bind name at its first occurrence; later occurrences are uses, which
 * must agree on the type. */
static Binding *bind(Checker *c, const char *name, SrcPos pos, DslType type, const Pattern *node)
{
	pos = name_pos(pos, name);
	Binding *b = find_binding(c, name);
	if (b) {
		b->uses++;
		bool same = b->type == type || type == TY_UNKNOWN || b->type == TY_UNKNOWN ||
		            (b->type == TY_NODE && type == TY_VALUE);
		if (node) {
			dsl_error(c->d, c->f, pos, "'%s' is already bound", name);
			dsl_note(c->d, c->f, b->pos, "'%s' is first bound here", name);
		} else if (!same) {
			dsl_error(c->d, c->f, pos, "'%s' is %s here, but %s where it is first bound", name,
			          type_name(type), type_name(b->type));
			dsl_note(c->d, c->f, b->pos, "'%s' is first bound here", name);
		}
		return b;
	}
	if (c->nb == c->cap)    /* count_binders() counted every occurrence */
		abort();
	BindInfo *in = &c->info[c->nb];
	b = &c->b[c->nb++];
	namemap_put(c->names, name, b);
	b->name = name;
	b->pos = pos;
	b->type = type;
	in->node = node;
	return b;
}

/* Node bindings first, so that s#1 or d may come before s @ / d @ in the
 * text: Concat(s#1, s @ Split(x)#0). */
static void bind_nodes(Checker *c, const Pattern *p)
{
	if (p->kind != PAT_OP)
		return;
	if (p->bind)
		bind(c, p->bind, p->bind_pos, TY_NODE, p);
	for (int i = 0; i < p->nargs; i++)
		bind_nodes(c, p->args[i]);
}

static int count_binders(const Pattern *p)
{
	if (!p)
		return 0;
	int n = 0;
	switch (p->kind) {
	case PAT_OP:
		n += p->bind != NULL;
		for (int i = 0; i < p->nattrs; i++)
			n += p->attrs[i].value && p->attrs[i].value->kind == EXPR_VAR;
		for (int i = 0; i < p->nargs; i++)
			n += count_binders(p->args[i]);
		break;
	case PAT_VAR:
	case PAT_REST:
		n = 1;
		break;
	default:
		break;
	}
	return n;
}

/* ---- expressions ------------------------------------------------------- */

static DslType type_expr(Checker *c, Expr *e, Side side);

static const char *article(DslType t)
{
	switch (t) {
	case TY_INT: return "an int";
	case TY_FLOAT: return "a float";
	case TY_BOOL: return "a bool";
	case TY_STRING: return "a string";
	case TY_DTYPE: return "a dtype";
	case TY_VALUE: return "a value";
	case TY_TENSOR: return "a tensor";
	case TY_GRAPH: return "a graph";
	case TY_NODE: return "a node binding";
	case TY_VALUES: return "a value list";
	default: return type_name(t);
	}
}

/* Only the result builds nodes; report it elsewhere.  what: "'sqrt'", ... */
static void builds_node(Checker *c, SrcPos pos, Side side, const char *what, const char *op)
{
	if (side != SIDE_RESULT) {
		dsl_error(c->d, c->f, pos, "%s builds an ONNX node, which only the result may do", what);
		return;
	}
	int since = needed_opset(op, c->hi);
	if (since > c->min_opset)
		c->min_opset = since;
}

static DslType type_var(Checker *c, Expr *e, Side side)
{
	Binding *b = find_binding(c, e->s);
	if (b) {
		b->uses++;
		e->binding = b;
		return b->type;
	}
	if (dsl_is_dtype_name(e->s))
		return TY_DTYPE;
	for (int i = 0; i < c->nunbound; i++)
		if (strcmp(c->unbound[i], e->s) == 0)
			return TY_UNKNOWN;
	if (c->nunbound < (int)(sizeof c->unbound / sizeof c->unbound[0]))
		c->unbound[c->nunbound++] = e->s;
	SrcPos pos = name_pos(e->pos, e->s);
	if (side == SIDE_RESULT)
		dsl_error(c->d, c->f, pos, "'%s' is used on the right side but never bound on the left", e->s);
	else if (side == SIDE_GUARD)
		dsl_error(c->d, c->f, pos, "'%s' is used in the guard but never bound on the left", e->s);
	else
		dsl_error(c->d, c->f, pos, "'%s' is used in an attribute but never bound on the left", e->s);
	return TY_UNKNOWN;
}

static DslType type_list(Checker *c, Expr *e, Side side)
{
	DslType t = TY_INTS;
	for (int i = 0; i < e->n; i++) {
		DslType it = type_expr(c, e->items[i], side);
		if (it == TY_UNKNOWN)
			return TY_UNKNOWN;
		if (it == TY_INT && t != TY_STRINGS)
			continue;
		if (it == TY_FLOAT && t != TY_STRINGS) {
			t = TY_FLOATS;
			continue;
		}
		if (it == TY_STRING && (i == 0 || t == TY_STRINGS)) {
			t = TY_STRINGS;
			continue;
		}
		dsl_error(c->d, c->f, e->items[i]->pos, "a list holds numbers or strings, got %s%s",
		          type_name(it), t == TY_STRINGS ? " among strings" : "");
		return TY_UNKNOWN;
	}
	return t;
}

/* Does an argument of type t (expression a) fit a builtin parameter? */
static bool param_accepts(Checker *c, ParamClass p, DslType t, const Expr *a)
{
	switch (p) {
	case P_VT: return is_valuelike(t);
	case P_VALUE: return t == TY_VALUE || t == TY_NODE;
	case P_NODE: return t == TY_NODE;
	case P_CONST: return a->kind == EXPR_VAR && a->binding && a->binding->is_const;
	case P_OPTIONAL: return a->kind == EXPR_VAR && a->binding && a->binding->optional;
	case P_INT: return t == TY_INT;
	case P_INTS: return t == TY_INTS;
	case P_DTYPE: return t == TY_DTYPE;
	case P_LIST: return t == TY_INTS || t == TY_FLOATS || t == TY_STRINGS || t == TY_VALUES;
	case P_NUMV: return is_number(t) || is_valuelike(t);
	case P_SHAPE: return t == TY_INTS || is_valuelike(t);
	}
	return false;
}

static const char *param_wants(ParamClass p)
{
	switch (p) {
	case P_VT: return "a value";
	case P_VALUE: return "a value";
	case P_NODE: return "a node binding (d @ Op(...))";
	case P_CONST: return "a constant (c:const)";
	case P_OPTIONAL: return "an optional input (x?)";
	case P_INT: return "an int";
	case P_INTS: return "ints";
	case P_DTYPE: return "a dtype";
	case P_LIST: return "a list";
	case P_NUMV: return "a number or a value";
	case P_SHAPE: return "ints or a value";
	}
	return "?";
}

static const char *got_str(const Expr *a, DslType t, char *buf, size_t size)
{
	if (a->kind == EXPR_VAR && (t == TY_VALUE || t == TY_NODE))
		snprintf(buf, size, "'%s'", a->s);
	else
		snprintf(buf, size, "%s", type_name(t));
	return buf;
}

static void arg_count_error(Checker *c, const Expr *e, int want)
{
	dsl_error(c->d, c->f, name_pos(e->pos, e->s), "'%s' takes %d argument%s, got %d", e->s, want,
	          want == 1 ? "" : "s", e->n);
}

static DslType type_call(Checker *c, Expr *e, Side side)
{
	DslType args[8];
	bool unknown = false;
	for (int i = 0; i < e->n; i++) {
		DslType t = type_expr(c, e->items[i], side);
		if (i < 8)
			args[i] = t;
		unknown |= t == TY_UNKNOWN;
	}
	const Builtin *bi = dsl_builtin_lookup(e->s);
	if (bi) {
		if (e->n != bi->nparams) {
			arg_count_error(c, e, bi->nparams);
			return TY_UNKNOWN;
		}
		if (unknown)
			return TY_UNKNOWN;
		bool valued = false, all_int = true, ok = true;
		for (int i = 0; i < e->n; i++) {
			if (!param_accepts(c, bi->params[i], args[i], e->items[i])) {
				char got[128];
				got_str(e->items[i], args[i], got, sizeof got);
				if (bi->nparams == 1)
					dsl_error(c->d, c->f, e->items[i]->pos, "'%s' expects %s, got %s", e->s,
					          param_wants(bi->params[i]), got);
				else
					dsl_error(c->d, c->f, e->items[i]->pos, "'%s' expects %s as argument %d, got %s",
					          e->s, param_wants(bi->params[i]), i + 1, got);
				ok = false;
			}
			valued |= is_valuelike(args[i]);
			all_int &= args[i] == TY_INT;
		}
		if (!ok)
			return TY_UNKNOWN;
		if (bi->op && (valued || bi->rule == RET_FIXED)) {
			for (int i = 0; i < e->n; i++)
				warn_float32_operand(c, e->items[i], side);
			char what[80];
			snprintf(what, sizeof what, "'%s'", e->s);
			builds_node(c, name_pos(e->pos, e->s), side, what, bi->op);
			return TY_VALUE;
		}
		if (bi->rule == RET_MATH_F)
			return TY_FLOAT;
		if (bi->rule == RET_MATH_J)
			return all_int ? TY_INT : TY_FLOAT;
		return bi->ret;
	}
	for (int k = 0; k < c->nexterns; k++) {
		Extern *x = c->externs[k].e;
		if (strcmp(x->name, e->s) != 0)
			continue;
		if (e->n != x->nparams) {
			arg_count_error(c, e, x->nparams);
			return TY_UNKNOWN;
		}
		for (int i = 0; i < e->n && !unknown; i++) {
			DslType p = x->params[i], t = args[i];
			bool fits = p == t || p == TY_UNKNOWN || (p == TY_FLOAT && t == TY_INT) ||
			            (p == TY_VALUE && t == TY_NODE) || (p == TY_FLOATS && t == TY_INTS);
			if (fits)
				continue;
			char got[128];
			got_str(e->items[i], t, got, sizeof got);
			if (x->nparams == 1)
				dsl_error(c->d, c->f, e->items[i]->pos, "'%s' expects %s, got %s", e->s,
				          article(p), got);
			else
				dsl_error(c->d, c->f, e->items[i]->pos, "'%s' expects %s as argument %d, got %s",
				          e->s, article(p), i + 1, got);
		}
		return x->ret;
	}
	Suggest sg;
	suggest_init(&sg, e->s);
	size_t nb;
	const Builtin *all = dsl_builtins(&nb);
	for (size_t i = 0; i < nb; i++)
		suggest_add(&sg, all[i].name);
	for (int k = 0; k < c->nexterns; k++)
		suggest_add(&sg, c->externs[k].e->name);
	const char *best = suggest_result(&sg);
	SrcPos pos = name_pos(e->pos, e->s);
	if (best)
		dsl_error(c->d, c->f, pos, "unknown function '%s' (did you mean '%s'?)", e->s, best);
	else
		dsl_error(c->d, c->f, pos, "unknown function '%s'", e->s);
	return TY_UNKNOWN;
}

static DslType type_binary(Checker *c, Expr *e, Side side)
{
	Expr *l = e->items[0], *r = e->items[1];
	DslType lt = type_expr(c, l, side), rt = type_expr(c, r, side);
	if (lt == TY_UNKNOWN || rt == TY_UNKNOWN)
		return TY_UNKNOWN;
	const char *op = exop_name(e->op);
	switch (e->op) {
	case EX_AND:
	case EX_OR:
		if (lt != TY_BOOL || rt != TY_BOOL) {
			dsl_error(c->d, c->f, lt != TY_BOOL ? l->pos : r->pos, "operator '%s' needs bool, got %s",
			          op, type_name(lt != TY_BOOL ? lt : rt));
			return TY_UNKNOWN;
		}
		return TY_BOOL;
	case EX_EQ:
	case EX_NE:
	case EX_LT:
	case EX_LE:
	case EX_GT:
	case EX_GE: {
		bool order = e->op != EX_EQ && e->op != EX_NE;
		if (is_nan_literal(l) || is_nan_literal(r)) {
			dsl_error(c->d, c->f, e->pos, "'%s' with nan is always %s: NaN equals nothing, itself included", op,
			          e->op == EX_NE ? "true" : "false");
			return TY_UNKNOWN;
		}
		/* element by element, every element: ints(p) == 0, ints(e) >= dims(x, a) */
		if ((lt == TY_INTS && (rt == TY_INT || (order && rt == TY_INTS))) || (lt == TY_INT && rt == TY_INTS))
			return TY_BOOL;
		if ((lt == TY_INTS && rt != TY_INTS && rt != TY_UNKNOWN) || (rt == TY_INTS && lt != TY_INTS && lt != TY_UNKNOWN)) {
			dsl_error(c->d, c->f, e->pos, "'%s' compares %s with %s: a list of ints compares element by element "
			          "with an int, or with another list", op, type_name(lt), type_name(rt));
			return TY_UNKNOWN;
		}
		for (int i = 0; i < 2; i++) {
			DslType t = i ? rt : lt;
			bool ok = order ? is_number(t) : !is_valuelike(t) && t != TY_VALUES && t != TY_GRAPH;
			if (!ok) {
				dsl_error(c->d, c->f, (i ? r : l)->pos, "operator '%s' needs %s, got %s", op,
				          order ? "numbers" : "numbers, lists, strings, bools or dtypes",
				          type_name(t));
				return TY_UNKNOWN;
			}
		}
		/* An int literal compares with a float (scalar(t) == 0); an int
		 * expression does not (rank(x) == 2.0 is a mistake).  A dtype
		 * equals an int, since ONNX writes dtypes as int attributes
		 * (dtype(x) == t for Cast[to = t]). */
		bool dtype_int = !order && ((lt == TY_DTYPE && rt == TY_INT) || (lt == TY_INT && rt == TY_DTYPE));
		bool same = lt == rt || dtype_int || (lt == TY_FLOAT && rt == TY_INT && is_int_literal(r)) ||
		            (rt == TY_FLOAT && lt == TY_INT && is_int_literal(l)) ||
		            (l->kind == EXPR_LIST && l->n == 0 && (rt == TY_INTS || rt == TY_FLOATS || rt == TY_STRINGS)) ||
		            (r->kind == EXPR_LIST && r->n == 0 && (lt == TY_INTS || lt == TY_FLOATS || lt == TY_STRINGS));
		if (!same) {
			dsl_error(c->d, c->f, e->pos, "'%s' compares %s with %s", op, type_name(lt), type_name(rt));
			return TY_UNKNOWN;
		}
		return TY_BOOL;
	}
	case EX_CONCAT: {
		bool lok = lt == TY_INTS || lt == TY_FLOATS || lt == TY_STRINGS;
		bool rok = rt == TY_INTS || rt == TY_FLOATS || rt == TY_STRINGS;
		if (!lok || !rok) {
			dsl_error(c->d, c->f, !lok ? l->pos : r->pos, "operator '++' needs lists, got %s",
			          type_name(!lok ? lt : rt));
			return TY_UNKNOWN;
		}
		if (lt == rt)
			return lt;
		if (lt != TY_STRINGS && rt != TY_STRINGS)
			return TY_FLOATS;
		dsl_error(c->d, c->f, e->pos, "'++' joins %s with %s", type_name(lt), type_name(rt));
		return TY_UNKNOWN;
	}
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_DIV: {
		bool lok = is_number(lt) || is_valuelike(lt), rok = is_number(rt) || is_valuelike(rt);
		if (!lok || !rok) {
			dsl_error(c->d, c->f, !lok ? l->pos : r->pos, "operator '%s' needs numbers or values, got %s",
			          op, type_name(!lok ? lt : rt));
			return TY_UNKNOWN;
		}
		if (is_valuelike(lt) || is_valuelike(rt)) {
			warn_float32_operand(c, is_valuelike(lt) ? r : l, side);
			char what[64];
			snprintf(what, sizeof what, "operator '%s' on a value", op);
			builds_node(c, e->pos, side, what, dsl_exop_onnx(e->op));
			return TY_VALUE;
		}
		return lt == TY_INT && rt == TY_INT ? TY_INT : TY_FLOAT;
	}
	default:
		return TY_UNKNOWN;
	}
}

/* Inputs of an op built on the right side, and the op itself. */
/* '_' as an input of an op the result builds: that input absent. */
static bool is_absent_arg(const Expr *a)
{
	return a->kind == EXPR_VAR && !strcmp(a->s, "_");
}

static DslType type_op(Checker *c, Expr *e, Side side)
{
	for (int i = 0; i < e->n; i++) {
		if (side == SIDE_RESULT && is_absent_arg(e->items[i])) {
			e->items[i]->type = TY_VALUE;
			continue;
		}
		DslType t = type_expr(c, e->items[i], side);
		if (t == TY_UNKNOWN || is_valuelike(t) || is_number(t) || t == TY_INTS || t == TY_FLOATS)
			continue;
		dsl_error(c->d, c->f, e->items[i]->pos, "input %d of '%s' must be a value, got %s", i + 1,
		          e->s, type_name(t));
	}
	SrcPos pos = name_pos(e->pos, e->s);
	if (side != SIDE_RESULT) {
		char what[160];
		snprintf(what, sizeof what, "'%s'", e->s);
		builds_node(c, pos, side, what, e->s);
		for (int i = 0; i < e->nattrs; i++)
			if (e->attrs[i].value)
				type_expr(c, e->attrs[i].value, side);
		return TY_VALUE;
	}
	int since = 0;
	const OpSchema *s = resolve_op(c, pos, e->domain, e->s, true, &since);
	e->schema = s;
	if (!s) {
		for (int i = 0; i < e->nattrs; i++)
			if (e->attrs[i].value)
				type_expr(c, e->attrs[i].value, side);
		return TY_VALUE;
	}
	if (since > c->min_opset)
		c->min_opset = since;
	for (int i = 0; i < e->n; i++)
		warn_float32_operand(c, e->items[i], side);
	int min, max;
	op_arity(s, &min, &max);
	if (e->n < min || e->n > max) {
		char got[32];
		snprintf(got, sizeof got, "%d", e->n);
		arity_error(c, pos, s, min, max, got);
	}
	for (int i = 0; i < e->n && i < s->ninputs; i++)
		if (is_absent_arg(e->items[i]) && (s->inputs[i].option != OPT_OPTIONAL || i == e->n - 1))
			dsl_error(c->d, c->f, e->items[i]->pos, "'_' leaves input %d of '%s' (%s) absent, which %s", i + 1,
			          e->s, s->inputs[i].name,
			          s->inputs[i].option != OPT_OPTIONAL ? "it may not be" : "only an input before a given one needs");
	check_expr_attrs(c, e, s, side);
	return TY_VALUE;
}

/* '[..d]' from another op (Conv into com.microsoft.FusedConv): every
 * attribute the bound op can carry must be one of the built op's, of the
 * same type. */
static void check_attrs_fit(Checker *c, SrcPos cp, const char *name, const OpSchema *from,
                            const OpSchema *to)
{
	for (int k = 0; k < from->nattrs; k++) {
		const OpAttrDef *a = &from->attrs[k];
		const OpAttrDef *b = NULL;
		for (int j = 0; j < to->nattrs && !b; j++)
			if (!strcmp(to->attrs[j].name, a->name))
				b = &to->attrs[j];
		if (!b || b->type != a->type) {
			dsl_error(c->d, c->f, cp, "'..%s' copies the attributes of '%s' into '%s', which has no %s '%s'",
			          name, from->name, to->name, attr_type_name((AttrType)a->type), a->name);
			return;
		}
	}
}

/* The attributes of an op built on the right side: known, once, of the
 * right type, required ones present (unless copied with [..d]). */
static void check_expr_attrs(Checker *c, Expr *e, const OpSchema *s, Side side)
{
	if (e->copy_attrs) {
		Binding *b = find_binding(c, e->copy_attrs);
		SrcPos cp = name_pos(e->copy_pos, e->copy_attrs);
		if (!b) {
			dsl_error(c->d, c->f, cp, "'%s' is used on the right side but never bound on the left",
			          e->copy_attrs);
		} else {
			b->uses++;
			const Pattern *node = c->info[b - c->b].node;
			if (b->type != TY_NODE || !node)
				dsl_error(c->d, c->f, cp, "'..%s' needs a node binding (%s @ Op(...)), got %s",
				          e->copy_attrs, e->copy_attrs, type_name(b->type));
			else if (node->schema && strcmp(node->schema->name, s->name) != 0)
				check_attrs_fit(c, cp, e->copy_attrs, node->schema, s);
		}
	}
	for (int i = 0; i < e->nattrs; i++) {
		AttrArg *a = &e->attrs[i];
		DslType t = a->value ? type_expr(c, a->value, side) : TY_UNKNOWN;
		if (attr_repeated(c, e->attrs, i))
			continue;
		const OpsetForm *form;
		const OpAttrDef *def = find_attr(s, a->name, &form);
		SrcPos pos = name_pos(a->pos, a->name);
		if (!def) {
			unknown_attr(c, pos, s, a->name);
			continue;
		}
		check_form_clash(c, a, form, s, e->n);
		if (a->value && (def->type == ATTR_FLOAT || def->type == ATTR_FLOATS))
			warn_float32(c, a->value);
		if (a->value && !attr_accepts((AttrType)def->type, t, a->value))
			dsl_error(c->d, c->f, a->value->pos, "attribute '%s' of '%s' is %s, got %s", a->name,
			          s->name, attr_type_name((AttrType)def->type), type_name(t));
	}
	if (e->copy_attrs)
		return;
	for (int k = 0; k < s->nattrs; k++) {
		const OpAttrDef *def = &s->attrs[k];
		if (!def->required)
			continue;
		bool given = false;
		for (int i = 0; i < e->nattrs; i++)
			given |= strcmp(e->attrs[i].name, def->name) == 0;
		const OpsetForm *f = opset_form_attr(s->name, def->name, s->since_version);
		if (!given && !(f && e->n > f->input))
			dsl_error(c->d, c->f, name_pos(e->pos, e->s), "'%s' needs attribute '%s'", s->name,
			          def->name);
	}
}

/* all(i in l: cond), any(...): l a list of ints; i an int, bound in cond
 * only (a name the rule binds already is an error); cond a bool. */
static DslType type_quant(Checker *c, Expr *e, Side side)
{
	const char *fn = e->op == EX_OR ? "any" : "all";
	DslType lt = type_expr(c, e->items[0], side);
	SrcPos vpos = name_pos(e->copy_pos, e->s);
	Binding *outer = find_binding(c, e->s);
	if (outer) {
		/* reported once: the condition is typed with i an int all the same,
		 * and the outer name counts as used */
		dsl_error(c->d, c->f, vpos, "'%s' is already bound: the variable of '%s' needs a new name", e->s, fn);
		dsl_note(c->d, c->f, outer->pos, "'%s' is first bound here", e->s);
		outer->uses++;
	}
	Binding *b = arena_alloc(c->f->arena, sizeof *b);
	b->name = e->s;
	b->pos = vpos;
	b->type = TY_INT;
	e->binding = b;
	namemap_put(c->names, e->s, b);
	DslType bt = type_expr(c, e->items[1], side);
	namemap_put(c->names, e->s, outer);        /* i is unbound after the condition */
	if (lt != TY_UNKNOWN && lt != TY_INTS) {
		dsl_error(c->d, c->f, e->items[0]->pos, "'%s' ranges over a list of ints, got %s", fn, type_name(lt));
		return TY_UNKNOWN;
	}
	if (bt != TY_UNKNOWN && bt != TY_BOOL) {
		dsl_error(c->d, c->f, e->items[1]->pos, "the condition of '%s' must be bool, got %s", fn, type_name(bt));
		return TY_UNKNOWN;
	}
	if (b->uses == 0 && !outer)
		dsl_warning(c->d, c->f, vpos, "'%s' is bound but never used", e->s);
	return lt == TY_UNKNOWN || bt == TY_UNKNOWN || outer ? TY_UNKNOWN : TY_BOOL;
}

static DslType type_expr(Checker *c, Expr *e, Side side)
{
	DslType t = TY_UNKNOWN;
	switch (e->kind) {
	case EXPR_INT: t = TY_INT; break;
	case EXPR_FLOAT: t = TY_FLOAT; break;
	case EXPR_BOOL: t = TY_BOOL; break;
	case EXPR_STRING: t = TY_STRING; break;
	case EXPR_LIST: t = type_list(c, e, side); break;
	case EXPR_VAR: t = type_var(c, e, side); break;
	case EXPR_CALL: t = type_call(c, e, side); break;
	case EXPR_OP: t = type_op(c, e, side); break;
	case EXPR_UNARY: {
		DslType a = type_expr(c, e->items[0], side);
		if (a == TY_UNKNOWN)
			break;
		if (e->op == EX_NOT) {
			if (a == TY_BOOL)
				t = TY_BOOL;
			else
				dsl_error(c->d, c->f, e->items[0]->pos, "operator '!' needs bool, got %s", type_name(a));
		} else if (is_number(a)) {
			t = a;
		} else if (is_valuelike(a)) {
			builds_node(c, e->pos, side, "operator '-' on a value", "Neg");
			t = TY_VALUE;
		} else {
			dsl_error(c->d, c->f, e->items[0]->pos, "operator '-' needs a number or a value, got %s",
			          type_name(a));
		}
		break;
	}
	case EXPR_BINARY: t = type_binary(c, e, side); break;
	case EXPR_QUANT: t = type_quant(c, e, side); break;
	case EXPR_INDEX: {
		DslType a = type_expr(c, e->items[0], side), i = type_expr(c, e->items[1], side);
		if (a == TY_UNKNOWN || i == TY_UNKNOWN)
			break;
		if (i != TY_INT) {
			dsl_error(c->d, c->f, e->items[1]->pos, "an index must be an int, got %s", type_name(i));
			break;
		}
		switch (a) {
		case TY_INTS: t = TY_INT; break;
		case TY_FLOATS: t = TY_FLOAT; break;
		case TY_STRINGS: t = TY_STRING; break;
		case TY_VALUES: t = TY_VALUE; break;
		default:
			dsl_error(c->d, c->f, e->items[0]->pos, "operator '[]' needs a list, got %s", type_name(a));
		}
		break;
	}
	case EXPR_DEFAULT: {
		Expr *l = e->items[0];
		DslType a = type_expr(c, l, side), b = type_expr(c, e->items[1], side);
		if (a == TY_UNKNOWN || b == TY_UNKNOWN)
			break;
		if (l->kind != EXPR_VAR || !l->binding || !l->binding->optional) {
			dsl_error(c->d, c->f, l->pos, "operator '?\?' needs an optional input (x?) on its left, got %s",
			          l->kind == EXPR_VAR ? l->s : type_name(a));
			break;
		}
		if (!is_number(b) && !is_valuelike(b) && b != TY_INTS && b != TY_FLOATS) {
			dsl_error(c->d, c->f, e->items[1]->pos, "operator '?\?' needs a number or a value, got %s",
			          type_name(b));
			break;
		}
		warn_float32_operand(c, e->items[1], side);
		t = TY_VALUE;
		break;
	}
	case EXPR_TUPLE:
		for (int i = 0; i < e->n; i++) {
			DslType it = type_expr(c, e->items[i], side);
			if (it != TY_UNKNOWN && it != TY_VALUE && it != TY_NODE)
				dsl_error(c->d, c->f, e->items[i]->pos, "the result must be a value, got %s",
				          type_name(it));
		}
		t = TY_VALUE;
		break;
	}
	e->type = t;
	return t;
}

/* ---- patterns -------------------------------------------------------------- */

/* x:!Conv: each op must exist in the rule's opset range (a misspelt one
 * would exclude nothing), once. */
static void check_nots(Checker *c, const Pattern *p)
{
	for (int i = 0; i < p->nnots; i++) {
		const PatNot *n = &p->nots[i];
		int since;
		if (!resolve_op(c, n->pos, n->domain, n->name, false, &since))
			continue;
		for (int k = 0; k < i; k++)
			if (!strcmp(p->nots[k].domain, n->domain) && !strcmp(p->nots[k].name, n->name)) {
				dsl_error(c->d, c->f, name_pos(n->pos, NULL), "':!%s' is given twice", n->name);
				break;
			}
	}
}

/* First pass over the pattern: resolve ops, check arity and attribute
 * names, bind variables (in source order: an attribute before the
 * operands).  Attribute values other than variables are typed afterwards,
 * once every binding is known. */
static void bind_pattern(Checker *c, Pattern *p)
{
	switch (p->kind) {
	case PAT_OP: {
		SrcPos pos = name_pos(p->pos, NULL);
		int since;
		const OpSchema *s = resolve_op(c, pos, p->domain, p->name, false, &since);
		p->schema = s;
		int npos = 0;
		bool rest = false;
		for (int i = 0; i < p->nargs; i++) {
			if (p->args[i]->kind == PAT_REST) {
				rest = true;
				if (i != p->nargs - 1)
					dsl_error(c->d, c->f, name_pos(p->args[i]->pos, p->args[i]->name),
					          "'%s...' must be the last operand", p->args[i]->name);
			} else {
				npos++;
			}
		}
		if (s) {
			int min, max;
			op_arity(s, &min, &max);
			if (npos > max || (!rest && npos < min)) {
				char got[32];
				snprintf(got, sizeof got, "%s%d", rest ? "at least " : "", npos);
				arity_error(c, pos, s, min, max, got);
			}
			if (p->output > 0 && p->output >= s->max_outputs)
				dsl_error(c->d, c->f, pos, "'%s' has %d output%s: #%d does not exist", s->name,
				          s->max_outputs, s->max_outputs == 1 ? "" : "s", p->output);
		}
		for (int i = 0; i < p->nattrs; i++) {
			AttrArg *a = &p->attrs[i];
			if (attr_repeated(c, p->attrs, i) || !s)
				continue;
			const OpsetForm *form;
			const OpAttrDef *def = find_attr(s, a->name, &form);
			if (!def) {
				unknown_attr(c, name_pos(a->pos, a->name), s, a->name);
				continue;
			}
			check_form_clash(c, a, form, s, npos);
			if (!form && !def->has_default && !def->required && !op_attr_implied(s->name, a->name))
				dsl_warning(c->d, c->f, name_pos(a->pos, a->name),
				            "attribute '%s' of '%s' has no default: the pattern matches only nodes that set it",
				            a->name, s->name);
			Expr *v = a->value;
			if (v && v->kind == EXPR_VAR && !dsl_is_dtype_name(v->s)) {
				DslType t = attr_dsl_type((AttrType)def->type);
				v->binding = bind(c, v->s, v->pos, t, NULL);
				v->type = v->binding->type;
			}
		}
		for (int i = 0; i < p->nargs; i++)
			bind_pattern(c, p->args[i]);
		break;
	}
	case PAT_VAR: {
		check_nots(c, p);
		Binding *b = bind(c, p->name, p->pos, TY_VALUE, NULL);
		if (p->has_output && b->type != TY_NODE && b->type != TY_UNKNOWN)
			dsl_error(c->d, c->f, name_pos(p->pos, p->name),
			          "'%s#%d' needs a node binding, but '%s' is %s", p->name, p->output, p->name,
			          article(b->type));
		if (b->uses == 0) {
			b->is_const = p->is_const;
			b->optional = p->optional;
		}
		break;
	}
	case PAT_REST:
		bind(c, p->name, p->pos, TY_VALUES, NULL);
		break;
	case PAT_WILDCARD:
		check_nots(c, p);
		break;
	case PAT_LITERAL:
		if (p->lit) {
			DslType t = type_expr(c, p->lit, SIDE_PATTERN);
			if (t != TY_UNKNOWN && !is_number(t) && t != TY_INTS && t != TY_FLOATS && t != TY_BOOL)
				dsl_error(c->d, c->f, p->lit->pos, "a literal operand must be a number or a list of numbers, got %s",
				          type_name(t));
			else if (!c->float64)
				warn_float32(c, p->lit);
		}
		break;
	}
}

/* Second pass: the attribute values that are not plain variables, and
 * outputs s#k of node bindings. */
static void type_pattern_attrs(Checker *c, Pattern *p)
{
	if (p->kind == PAT_VAR && p->has_output) {
		Binding *b = find_binding(c, p->name);
		const Pattern *node = b ? c->info[b - c->b].node : NULL;
		const OpSchema *s = node ? node->schema : NULL;
		if (s && p->output >= s->max_outputs)
			dsl_error(c->d, c->f, name_pos(p->pos, p->name), "'%s' has %d output%s: #%d does not exist",
			          s->name, s->max_outputs, s->max_outputs == 1 ? "" : "s", p->output);
	}
	if (p->kind != PAT_OP)
		return;
	for (int i = 0; i < p->nattrs; i++) {
		AttrArg *a = &p->attrs[i];
		Expr *v = a->value;
		if (!v || (v->kind == EXPR_VAR && v->binding))
			continue;
		DslType t = type_expr(c, v, SIDE_PATTERN);
		const OpsetForm *form;
		const OpAttrDef *def = p->schema ? find_attr(p->schema, a->name, &form) : NULL;
		if (def && !attr_accepts((AttrType)def->type, t, v))
			dsl_error(c->d, c->f, v->pos, "attribute '%s' of '%s' is %s, got %s", a->name,
			          p->schema->name, attr_type_name((AttrType)def->type), type_name(t));
		else if (def && (def->type == ATTR_FLOAT || def->type == ATTR_FLOATS))
			warn_float32(c, v);
	}
	for (int i = 0; i < p->nargs; i++)
		type_pattern_attrs(c, p->args[i]);
}

/* ---- rules ------------------------------------------------------------------ */

static bool set_range(Checker *c, Rule *r)
{
	c->lo_open = r->opset_min <= 0;
	c->hi_open = r->opset_max <= 0 || r->opset_max == INT32_MAX;
	c->lo = c->lo_open ? 1 : r->opset_min;
	c->hi = c->hi_open ? OPSCHEMA_MAX_OPSET : r->opset_max;
	if (c->lo > c->hi) {
		dsl_error(c->d, c->f, name_pos(r->pos, r->name), "rule '%s' has an empty opset range %d..%d",
		          r->name, c->lo, c->hi);
		return false;
	}
	if (c->lo > OPSCHEMA_MAX_OPSET) {
		dsl_error(c->d, c->f, name_pos(r->pos, r->name),
		          "rule '%s' starts at opset %d, after the newest opset graft knows (%d)", r->name,
		          c->lo, OPSCHEMA_MAX_OPSET);
		return false;
	}
	if (c->hi > OPSCHEMA_MAX_OPSET)
		c->hi = OPSCHEMA_MAX_OPSET;
	return true;
}

/* Does e read variable name (as a value, in an operand or attribute value)? */
static bool expr_reads(const Expr *e, const char *name)
{
	if (!e)
		return false;
	if (e->kind == EXPR_VAR && !strcmp(e->s, name))
		return true;
	for (int i = 0; i < e->n; i++)
		if (expr_reads(e->items[i], name))
			return true;
	for (int i = 0; i < e->nattrs; i++)
		if (expr_reads(e->attrs[i].value, name))
			return true;
	return false;
}

/* "y @" before the result and ", s => y#k" after it: y names an op the
 * result builds; each s a node of the pattern other than the root, once,
 * which the result does not read (it would read itself); k an output of y. */
static void check_also(Checker *c, Rule *r)
{
	const Expr *e = r->rhs;
	if (r->rhs_bind) {
		SrcPos pos = name_pos(r->rhs_bind_pos, r->rhs_bind);
		Binding *b = find_binding(c, r->rhs_bind);
		if (e->kind != EXPR_OP)
			dsl_error(c->d, c->f, pos, "'%s' names the result, which must then build an op", r->rhs_bind);
		else if (b) {
			dsl_error(c->d, c->f, pos, "'%s' is already bound", r->rhs_bind);
			dsl_note(c->d, c->f, b->pos, "'%s' is first bound here", r->rhs_bind);
		} else if (!r->nalso)
			dsl_warning(c->d, c->f, pos, "'%s' names the result but nothing reads it: add ', s => %s#k'",
			            r->rhs_bind, r->rhs_bind);
	}
	for (int i = 0; i < r->nalso; i++) {
		const RuleAlso *a = &r->also[i];
		SrcPos spos = name_pos(a->pos, a->name), ypos = name_pos(a->node_pos, a->node);
		Binding *b = find_binding(c, a->name);
		int k = b ? (int)(b - c->b) : -1;
		if (b)
			b->uses++;
		if (!r->rhs_bind || strcmp(a->node, r->rhs_bind)) {
			if (r->rhs_bind)
				dsl_error(c->d, c->f, ypos, "'%s' is not the result's name ('%s')", a->node, r->rhs_bind);
			else
				dsl_error(c->d, c->f, ypos, "'%s' is not the result's name: name it, as in '=> %s @ Op(...)'",
				          a->node, a->node);
			continue;
		}
		if (!b || b->type != TY_NODE || !c->info[k].node) {
			dsl_error(c->d, c->f, spos, "'%s' must name a node of the pattern ('%s @ Op(...)')", a->name, a->name);
			continue;
		}
		if (c->info[k].node == r->lhs) {
			dsl_error(c->d, c->f, spos, "'%s' is the root: the result itself replaces it", a->name);
			continue;
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(r->also[j].name, a->name))
				dsl_error(c->d, c->f, spos, "'%s' is replaced twice", a->name);
		if (expr_reads(e, a->name))
			dsl_error(c->d, c->f, spos, "the result reads '%s', which it replaces", a->name);
		if (e->kind == EXPR_OP && e->schema && a->output >= e->schema->max_outputs)
			dsl_error(c->d, c->f, ypos, "'%s' has %s%d output%s: %s#%d is none of them", e->schema->name,
			          e->schema->min_outputs == e->schema->max_outputs ? "" : "at most ",
			          e->schema->max_outputs, e->schema->max_outputs == 1 ? "" : "s", a->node, a->output);
	}
}

static void check_rule(Checker *c, Rule *r)
{
	c->r = r;
	c->nb = 0;
	c->nunbound = 0;
	c->min_opset = 1;
	c->float64 = guard_float64(r->guard);
	if (!set_range(c, r) || !r->lhs)
		return;
	c->cap = count_binders(r->lhs) + 1;
	c->b = arena_alloc(c->f->arena, sizeof *c->b * (size_t)c->cap);
	c->info = calloc((size_t)c->cap, sizeof *c->info);
	if (!c->info)
		abort();
	c->names = namemap_new((size_t)c->cap);

	if (r->lhs->kind == PAT_VAR || r->lhs->kind == PAT_WILDCARD)
		dsl_warning(c->d, c->f, name_pos(r->lhs->pos, r->lhs->name),
		            "the left side of rule '%s' is a single variable: it would match every value",
		            r->name);
	else if (r->lhs->kind != PAT_OP)
		dsl_error(c->d, c->f, r->lhs->pos, "the left side of rule '%s' must be an op", r->name);

	bind_nodes(c, r->lhs);
	bind_pattern(c, r->lhs);
	type_pattern_attrs(c, r->lhs);
	if (r->guard) {
		DslType t = type_expr(c, r->guard, SIDE_GUARD);
		if (t != TY_UNKNOWN && t != TY_BOOL)
			dsl_error(c->d, c->f, r->guard->pos, "the guard must be bool, got %s", type_name(t));
	}
	if (r->rhs) {
		DslType t = type_expr(c, r->rhs, SIDE_RESULT);
		if (t != TY_UNKNOWN && t != TY_VALUE && t != TY_NODE)
			dsl_error(c->d, c->f, r->rhs->pos, "the result must be a value, got %s", type_name(t));
		const OpSchema *root = r->lhs->kind == PAT_OP ? r->lhs->schema : NULL;
		if (r->rhs->kind == EXPR_TUPLE && root && r->rhs->n > root->max_outputs)
			dsl_error(c->d, c->f, r->rhs->pos, "the result has %d values, but '%s' has %s%d output%s",
			          r->rhs->n, root->name, root->min_outputs == root->max_outputs ? "" : "at most ",
			          root->max_outputs, root->max_outputs == 1 ? "" : "s");
		check_also(c, r);
	}
	/* Every binding counts, node bindings and optional operands too: a name
	 * that is never used is noise, and '_' / '_?' say "any" without one. */
	for (int i = 0; i < c->nb; i++)
		if (c->b[i].uses == 0)
			dsl_warning(c->d, c->f, c->b[i].pos, "'%s' is bound but never used", c->b[i].name);
	r->bindings = c->b;
	r->nbindings = c->nb;
	r->min_opset_needed = c->min_opset;
	free(c->info);
	c->info = NULL;
	namemap_free(c->names);
	c->names = NULL;
}

/* Two declarations of one extern: the same signature and C function. */
static bool same_extern(const Extern *a, const Extern *b)
{
	if (a->ret != b->ret || a->nparams != b->nparams || strcmp(a->c_name ? a->c_name : a->name, b->c_name ? b->c_name : b->name))
		return false;
	for (int i = 0; i < a->nparams; i++)
		if (a->params[i] != b->params[i])
			return false;
	return true;
}

static void check_externs(Checker *c, RuleFile **files, int nfiles)
{
	int n = 0;
	for (int i = 0; i < nfiles; i++)
		if (files[i])
			n += files[i]->nexterns;
	c->externs = calloc((size_t)n + 1, sizeof *c->externs);
	if (!c->externs)
		abort();
	for (int i = 0; i < nfiles; i++) {
		RuleFile *f = files[i];
		if (!f)
			continue;
		for (int k = 0; k < f->nexterns; k++) {
			Extern *e = f->externs[k];
			SrcPos pos = name_pos(e->pos, e->name);
			if (dsl_builtin_lookup(e->name)) {
				dsl_error(c->d, f, pos, "'%s' is a builtin function; an extern cannot redefine it",
				          e->name);
				continue;
			}
			ExternRef *prev = NULL;
			for (int j = 0; j < c->nexterns; j++)
				if (strcmp(c->externs[j].e->name, e->name) == 0)
					prev = &c->externs[j];
			if (prev && same_extern(prev->e, e))
				continue; /* one helper declared by each rule set that calls it */
			if (prev) {
				dsl_error(c->d, f, pos, "duplicate extern '%s'", e->name);
				dsl_note(c->d, prev->f, name_pos(prev->e->pos, e->name), "'%s' is first declared here",
				         e->name);
				continue;
			}
			c->externs[c->nexterns++] = (ExternRef){e, f};
		}
	}
}

bool dsl_check(RuleFile **files, int nfiles, Diag *d)
{
	int errors = d->nerrors;
	Checker c = {.d = d};
	check_externs(&c, files, nfiles);
	/* each rule name with where it is first defined: file index and rule */
	size_t nrules = 0;
	for (int i = 0; i < nfiles; i++)
		nrules += files[i] ? (size_t)files[i]->nrules : 0;
	NameMap *rule_names = namemap_new(nrules);
	struct First { int file; const Rule *rule; } *firsts = calloc(nrules + 1, sizeof *firsts);
	size_t nfirst = 0;
	if (!firsts)
		abort();
	for (int i = 0; i < nfiles; i++) {
		RuleFile *f = files[i];
		if (!f)
			continue;
		c.f = f;
		for (int k = 0; k < f->nrules; k++) {
			Rule *r = f->rules[k];
			if (!r || !r->name)
				continue;
			/* Duplicate names, across every file given. */
			const struct First *first = namemap_get(rule_names, r->name);
			if (first) {
				dsl_error(d, f, name_pos(r->pos, r->name), "duplicate rule name '%s'", r->name);
				dsl_note(d, files[first->file], name_pos(first->rule->pos, first->rule->name),
				         "'%s' is first defined here", r->name);
			} else {
				firsts[nfirst] = (struct First){i, r};
				namemap_put(rule_names, r->name, &firsts[nfirst++]);
			}
			check_rule(&c, r);
		}
	}
	namemap_free(rule_names);
	free(firsts);
	free(c.externs);
	return d->nerrors == errors;
}
