/* analyse.c - compile-time analysis of checked rules: shadowed rules,
 * conflicting rules and rules that recreate their own left side.
 *
 * graftc calls dsl_analyse after dsl_check found no error.  Each left side
 * is first turned into a small term tree (Term): ops with their inputs in
 * canonical order (an input an older opset spells as an attribute goes to
 * its slot, like the code generator does), variables, wildcards, literals
 * and attributes.  Three questions are then asked of those trees:
 *
 *   - subsumes(A, B): does every graph that matches B's left side match A's?
 *     A one-way match of A's pattern against B's pattern, B's variables
 *     being opaque values.  Used for shadowing, and with B the right side
 *     of a rule for "recreates its left side".
 *   - overlap(A, B): can one graph match both?  Unification with union-find
 *     over the terms of both rules; then the right sides are compared under
 *     the unifier.  Used for conflicts at equal priority.
 *
 * Both are conservative: when unsure, "no".  Commutative ops are handled by
 * trying every orientation of the first rule's commutative nodes.  Negative
 * patterns (x:!Conv), rest lists (xs...) and outputs s#k of a node binding
 * are terms too.  Guards (section "guards") are conjunctions of atoms: a
 * shadow needs the later rule's guard to imply every atom of the earlier
 * one's, a conflict needs the two guards not to be provably exclusive, and
 * a recreated left side needs the guard not surely false on the result.
 * Rules with a construct these trees do not model are listed as not
 * analysed.  The declarations and the exact semantics are in analyse.h. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyse.h"
#include "check_internal.h"
#include "ir/ir.h"
#include "namemap.h"
#include "opset_forms.h"

#define MAX_COMMUTATIVE 12      /* more orientations than 2^12 are not tried */

/* ---- terms -------------------------------------------------------------------- */

typedef enum TermKind {
	T_OP,           /* an op node (of a pattern, or built by a right side: fresh) */
	T_VAR,          /* a variable (or a node binding used as a value) */
	T_ANY,          /* _ or _? (optional), or "any value or none" */
	T_LIT,          /* a literal operand (or a number a right side turns into a constant) */
	T_ABSENT,       /* no input at all */
	T_OPAQUE,       /* a value a right side computes in a way not modelled */
	T_AVAR,         /* an attribute variable */
	T_ALIT,         /* an attribute value: a literal, or an expression of a right side */
	T_AREF,         /* attribute `name` of node `node`, whatever it is */
	T_ADEF,         /* an attribute the right side leaves at its schema default */
	T_REST,         /* xs...: the op's remaining inputs, any number */
} TermKind;

typedef struct RuleInfo RuleInfo;
typedef struct Term Term;


typedef struct TAttr {
	const char *name;
	Term *value;
} TAttr;

struct Term {
	TermKind kind;
	int id;                     /* index in the owner's terms (left sides only), else -1 */
	const RuleInfo *owner;
	const char *name;           /* T_VAR, T_AVAR, T_AREF: the name; T_OP: the op */
	const char *domain;         /* T_OP */
	const char *bind;           /* T_OP: d @ Op(...) */
	const Expr *lit;            /* T_LIT, T_ALIT */
	bool is_const, optional;    /* T_VAR: as written here (what a pattern asks) */
	bool g_const, g_optional;   /* T_VAR: from the binding (what the value guarantees) */
	bool form_slot;             /* an input older opsets give as an attribute */
	bool shared, fresh, root, vendor;
	int cidx;                   /* T_OP: index among the rule's commutative nodes, or -1 */
	int output;
	Term **slots;               /* T_OP: inputs in canonical order; NULL: any value or none */
	int nslots;
	TAttr *attrs;               /* T_OP: attributes other than inputs */
	int nattrs;
	const OpSchema *schema;
	Term *node;                 /* T_AREF: the node; T_OP on a right side: [..c]'s node */
	const OpAttrDef *def;       /* T_ADEF */
	uint32_t types;             /* T_OP of a left side: the dtypes its output may have (0: any) */
	const Term *node_of;        /* T_OP: s#k, another output of node s's term; NULL: its own node */
	const PatNot *nots;         /* T_VAR, T_ANY: x:!Conv, no output of these ops */
	int nnots;
};

/* The node an op term is an output of. */
static const Term *node_of(const Term *t)
{
	return t->node_of ? t->node_of : t;
}

/* Is op term t surely none of the ops in nots? */
static bool not_one_of(const Term *t, const PatNot *nots, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(nots[i].name, t->name) == 0 && strcmp(nots[i].domain ? nots[i].domain : "", t->domain) == 0)
			return false;
	return true;
}

typedef struct VarRef {
	const char *name;
	Term *t;                    /* first occurrence; for a node binding its op */
} VarRef;

typedef enum Skip { SKIP_NONE, SKIP_CONSTRUCT, SKIP_RESULT } Skip;

struct RuleInfo {
	const RuleFile *f;
	const Rule *r;
	int order;                  /* source order across the files */
	Level level;
	int lo, hi;                 /* the opsets where it can fire */
	char key[160];              /* root op: "Conv", "com.microsoft.FusedConv" */
	Term *lhs;                  /* NULL: not modelled (why says why) */
	Term **terms;               /* every term of the left side, by id */
	int nterms, capterms;
	VarRef *vars;
	int nvars, capvars;
	NameMap *var_index;         /* name -> 1 + index in vars */
	NameMap *binding_index;     /* name -> its Binding in r (made at first use) */
	int ncommut;
	Skip skip;                  /* why it takes no part as a sure rule */
	char why[200];
	const char *partial;        /* the result may fail to build: what */
	bool shadowed;
	bool vendor;                /* its result emits vendor ops */
	struct Atom *atoms;         /* its guard's top-level && terms (section "guards") */
	int natoms;
	char *text;                 /* left side and guard without positions (dsl_lhs_text); NULL: partial */
	bool rep;                   /* the first of the rules alike in all that shadowing asks (below) */
	int glo, ghi;               /* its root op's rules in Analyser.group (source order) */
	int clo, chi;               /* and its root op's representatives in Analyser.reps */
};

typedef struct Analyser {
	Diag *d;
	Arena *arena;
	RuleInfo *rules;
	int nrules;
	RuleInfo **group;           /* rules with a left side, by root op, then in source order */
	RuleInfo **reps;            /* the same, representatives only */
	Term absent;                /* the one absent input */
} Analyser;

static Term *new_term(Analyser *an, RuleInfo *ri, TermKind kind)
{
	Term *t = arena_alloc(an->arena, sizeof *t);
	t->kind = kind;
	t->owner = ri;
	t->id = -1;
	t->cidx = -1;
	return t;
}

/* A term of a left side: numbered, so unification can index it. */
static Term *lhs_term(Analyser *an, RuleInfo *ri, TermKind kind)
{
	Term *t = new_term(an, ri, kind);
	if (ri->nterms == ri->capterms) {
		ri->capterms = ri->capterms ? 2 * ri->capterms : 16;
		ri->terms = realloc(ri->terms, sizeof *ri->terms * (size_t)ri->capterms);
		if (!ri->terms)
			abort();
	}
	t->id = ri->nterms;
	ri->terms[ri->nterms++] = t;
	return t;
}

static VarRef *find_var(const RuleInfo *ri, const char *name)
{
	intptr_t i = ri->var_index ? (intptr_t)namemap_get(ri->var_index, name) : 0;
	return i ? &ri->vars[i - 1] : NULL;
}

static void note_var(RuleInfo *ri, const char *name, Term *t)
{
	if (find_var(ri, name))
		return;
	if (ri->nvars == ri->capvars) {
		ri->capvars = ri->capvars ? 2 * ri->capvars : 16;
		ri->vars = realloc(ri->vars, sizeof *ri->vars * (size_t)ri->capvars);
		if (!ri->vars)
			abort();
	}
	if (!ri->var_index)
		ri->var_index = namemap_new(16);
	namemap_put(ri->var_index, name, (void *)(intptr_t)(ri->nvars + 1));
	ri->vars[ri->nvars++] = (VarRef){name, t};
}

static const Binding *binding_of(RuleInfo *ri, const char *name)
{
	const Rule *r = ri->r;
	if (!ri->binding_index) {
		ri->binding_index = namemap_new((size_t)r->nbindings);
		for (int i = r->nbindings - 1; i >= 0; i--) /* the first of a name wins */
			namemap_put(ri->binding_index, r->bindings[i].name, &r->bindings[i]);
	}
	return namemap_get(ri->binding_index, name);
}

static void unsupported(RuleInfo *ri, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void unsupported(RuleInfo *ri, const char *fmt, ...)
{
	if (ri->skip == SKIP_CONSTRUCT)
		return;
	va_list ap;
	va_start(ap, fmt);
	char what[150];
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	ri->skip = SKIP_CONSTRUCT;
	snprintf(ri->why, sizeof ri->why, "it uses %s, which the analysis does not model", what);
}

/* A constant attribute value: number, bool, string, dtype name, or a list of them. */
static bool is_literal(const Expr *e)
{
	switch (e->kind) {
	case EXPR_INT: case EXPR_FLOAT: case EXPR_BOOL: case EXPR_STRING:
		return true;
	case EXPR_VAR:
		return !e->binding && dsl_is_dtype_name(e->s);
	case EXPR_UNARY:
		return e->op == EX_NEG && (e->items[0]->kind == EXPR_INT || e->items[0]->kind == EXPR_FLOAT);
	case EXPR_LIST:
		for (int i = 0; i < e->n; i++)
			if (!is_literal(e->items[i]))
				return false;
		return true;
	default:
		return false;
	}
}


static bool is_form_slot(const OpSchema *s, int input)
{
	if (!s || *s->domain)
		return false;
	size_t n;
	const OpsetForm *all = opset_forms_all(&n);
	for (size_t i = 0; i < n; i++)
		if ((all[i].kind == FORM_ATTR || all[i].kind == FORM_MOVED) && all[i].input == input &&
		    strcmp(all[i].op, s->name) == 0)
			return true;
	return false;
}

static bool commutative(const OpSchema *s, int npos, int nslots, Term **slots)
{
	return s && (s->flags & OPF_COMMUTATIVE) && npos == 2 && nslots == 2 && !(slots[0] && slots[0]->form_slot) &&
	       !(slots[1] && slots[1]->form_slot) && !is_form_slot(s, 0) && !is_form_slot(s, 1);
}


/* The dtypes output k of an op may have in any opset, as a mask over DType
 * numbers, from its schemas' type constraints; 0 when not known. */
static uint32_t output_types(const char *domain, const char *op, int k)
{
	size_t n;
	const OpSchema *all = op_schema_all(&n);
	size_t lo = 0, hi = n;
	while (lo < hi) {               /* the first of (domain, op) */
		size_t mid = (lo + hi) / 2;
		int c = strcmp(all[mid].domain, domain);
		if (!c)
			c = strcmp(all[mid].name, op);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t mask = 0;
	for (size_t i = lo; i < n && !strcmp(all[i].domain, domain) && !strcmp(all[i].name, op); i++) {
		const OpSchema *s = &all[i];
		if (s->noutputs == 0)
			return 0;
		const OpFormal *f = &s->outputs[k < s->noutputs ? k : s->noutputs - 1];
		uint32_t m = 0;
		if (!f->type_str)
			return 0;
		if (strncmp(f->type_str, "tensor(", 7) == 0) {
			char name[32];
			size_t len = strlen(f->type_str);
			snprintf(name, sizeof name, "%.*s", (int)(len > 8 ? len - 8 : 0), f->type_str + 7);
			int dt = dtype_from_name(name);
			m = dt ? UINT32_C(1) << dt : 0;
		}
		for (int c = 0; c < s->nconstraints && !m; c++)
			if (strcmp(s->constraints[c].param, f->type_str) == 0 && !s->constraints[c].has_non_tensor)
				m = s->constraints[c].tensor_types;
		if (!m)
			return 0;
		mask |= m;
	}
	return mask;
}

static Term *from_pattern(Analyser *an, RuleInfo *ri, const Pattern *p, bool root);

static Term *attr_term(Analyser *an, RuleInfo *ri, const Expr *v)
{
	if (v->kind == EXPR_VAR && v->binding) {
		Term *t = lhs_term(an, ri, T_AVAR);
		t->name = v->s;
		note_var(ri, v->s, t);
		return t;
	}
	if (!is_literal(v)) {
		unsupported(ri, "an attribute computed from an expression");
		return NULL;
	}
	Term *t = lhs_term(an, ri, T_ALIT);
	t->lit = v;
	return t;
}

static Term *op_pattern(Analyser *an, RuleInfo *ri, const Pattern *p, bool root)
{
	const OpSchema *s = p->schema;
	if (!s) {
		unsupported(ri, "an op the checker did not resolve");
		return NULL;
	}
	Term *t = lhs_term(an, ri, T_OP);
	t->name = p->name;
	t->domain = p->domain ? p->domain : "";
	t->vendor = *t->domain != 0;
	t->bind = p->bind;
	t->shared = p->shared;
	t->root = root;
	t->output = p->output;
	t->schema = s;
	t->types = output_types(t->domain, t->name, p->output);
	if (p->bind)
		note_var(ri, p->bind, t);
	int npos = p->nargs, nslots = npos;
	bool rest = npos > 0 && p->args[npos - 1]->kind == PAT_REST;
	for (int i = 0; i < p->nattrs; i++) {
		int k = opset_form_attr_input(s, p->attrs[i].name);
		if (k + 1 > nslots)
			nslots = k + 1;
	}
	t->slots = arena_alloc(an->arena, sizeof *t->slots * (size_t)(nslots + 1));
	t->nslots = nslots;
	t->attrs = arena_alloc(an->arena, sizeof *t->attrs * (size_t)(p->nattrs + 1));
	/* attributes first, then the operands: the order the checker binds in */
	for (int i = 0; i < p->nattrs; i++) {
		const AttrArg *a = &p->attrs[i];
		int k = opset_form_attr_input(s, a->name);
		Term *v = a->value ? attr_term(an, ri, a->value) : NULL;
		if (!v)
			return NULL;
		if (k >= 0) {
			if (v->kind != T_ALIT) {
				unsupported(ri, "an input bound through its older attribute ('%s')", a->name);
				return NULL;
			}
			v->kind = T_LIT;        /* a constant input in newer opsets */
			v->form_slot = true;
			t->slots[k] = v;
		} else {
			t->attrs[t->nattrs++] = (TAttr){a->name, v};
		}
	}
	for (int i = 0; i < npos; i++) {
		Term *a = from_pattern(an, ri, p->args[i], false);
		if (!a)
			return NULL;
		a->form_slot = is_form_slot(s, i);
		t->slots[i] = a;
	}
	if (!rest && commutative(s, npos, nslots, t->slots))
		t->cidx = ri->ncommut++;
	return t;
}

static Term *from_pattern(Analyser *an, RuleInfo *ri, const Pattern *p, bool root)
{
	switch (p->kind) {
	case PAT_OP:
		return op_pattern(an, ri, p, root);
	case PAT_VAR: {
		VarRef *node = p->has_output ? find_var(ri, p->name) : NULL;
		if (node && node->t->kind == T_OP) {
			/* s#k: output k of the node s binds (bound before, left to right) */
			Term *t = lhs_term(an, ri, T_OP);
			const Term *n = node->t;
			*t = *n;
			t->id = ri->nterms - 1;
			t->bind = NULL;
			t->root = false;
			t->shared = true;   /* its node is matched where s is */
			t->cidx = -1;
			t->output = p->output;
			t->node_of = node_of(n);
			t->types = output_types(t->domain, t->name, p->output);
			return t;
		}
		if (p->has_output) {
			unsupported(ri, "an output '%s#%d' of a node binding", p->name, p->output);
			return NULL;
		}
		const Binding *b = binding_of(ri, p->name);
		Term *t = lhs_term(an, ri, T_VAR);
		t->name = p->name;
		t->is_const = p->is_const;
		t->optional = p->optional;
		t->g_const = b ? b->is_const : false;
		t->g_optional = b ? b->optional || p->optional : true;
		t->nots = p->nots;
		t->nnots = p->nnots;
		if (b && b->type != TY_NODE)
			note_var(ri, p->name, t);
		return t;
	}
	case PAT_WILDCARD: {
		Term *t = lhs_term(an, ri, T_ANY);
		t->optional = p->optional;
		t->nots = p->nots;
		t->nnots = p->nnots;
		return t;
	}
	case PAT_LITERAL: {
		Term *t = lhs_term(an, ri, T_LIT);
		t->lit = p->lit;
		return t;
	}
	case PAT_REST: {
		Term *t = lhs_term(an, ri, T_REST);
		t->name = p->name;
		note_var(ri, p->name, t);
		return t;
	}
	}
	return NULL;
}

/* ---- right sides as terms (for "recreates its left side") ------------------------ */


static Term *from_result(Analyser *an, RuleInfo *ri, const Expr *e);

/* A node the right side builds: op on items, with attributes attrs. */
static Term *built_op(Analyser *an, RuleInfo *ri, const char *domain, const char *op, const OpSchema *s,
                      Expr *const *items, int n, const AttrArg *attrs, int nattrs, const char *copy)
{
	if (!s)
		return new_term(an, ri, T_OPAQUE);
	Term *t = new_term(an, ri, T_OP);
	t->name = op;
	t->domain = domain ? domain : "";
	t->vendor = *t->domain != 0;
	t->fresh = true;
	t->schema = s;
	int nslots = n;
	for (int i = 0; i < nattrs; i++) {
		int k = opset_form_attr_input(s, attrs[i].name);
		if (k + 1 > nslots)
			nslots = k + 1;
	}
	t->slots = arena_alloc(an->arena, sizeof *t->slots * (size_t)(nslots + 1));
	t->nslots = nslots;
	t->attrs = arena_alloc(an->arena, sizeof *t->attrs * (size_t)(nattrs + 1));
	for (int i = 0; i < n; i++)
		t->slots[i] = from_result(an, ri, items[i]);
	for (int i = 0; i < nattrs; i++) {
		const Expr *v = attrs[i].value;
		if (!v)
			continue;
		Term *a = new_term(an, ri, v->kind == EXPR_VAR && v->binding ? T_AVAR : T_ALIT);
		a->name = v->s;
		a->lit = v;
		int k = opset_form_attr_input(s, attrs[i].name);
		if (k >= 0)
			t->slots[k] = new_term(an, ri, T_OPAQUE);
		else
			t->attrs[t->nattrs++] = (TAttr){attrs[i].name, a};
	}
	if (copy) {
		VarRef *c = find_var(ri, copy);
		t->node = c ? c->t : NULL;
	}
	return t;
}

static Term *from_result(Analyser *an, RuleInfo *ri, const Expr *e)
{
	switch (e->kind) {
	case EXPR_VAR: {
		const Binding *b = e->binding;
		if (!b || (b->type != TY_VALUE && b->type != TY_NODE))
			break;
		Term *t = new_term(an, ri, T_VAR);
		t->name = e->s;
		t->is_const = t->g_const = b->is_const;
		t->optional = t->g_optional = b->optional;
		VarRef *v = find_var(ri, e->s);
		if (v && (v->t->kind == T_VAR || v->t->kind == T_ANY)) {
			t->nots = v->t->nots;   /* the value x:!Conv matched is still no Conv output */
			t->nnots = v->t->nnots;
		}
		return t;
	}
	case EXPR_INT: case EXPR_FLOAT: {
		Term *t = new_term(an, ri, T_LIT);
		t->lit = e;
		return t;
	}
	case EXPR_OP: {
		const char *dom = e->domain ? e->domain : "";
		return built_op(an, ri, dom, e->s, e->schema, e->items, e->n, e->attrs, e->nattrs, e->copy_attrs);
	}
	case EXPR_BINARY: {
		const char *op = dsl_exop_onnx(e->op);
		if (!op || e->type != TY_VALUE)
			break;
		return built_op(an, ri, "", op, op_schema_lookup("", op, ri->hi), e->items, 2, NULL, 0, NULL);
	}
	case EXPR_UNARY:
		if (e->op != EX_NEG || e->type != TY_VALUE)
			break;
		return built_op(an, ri, "", "Neg", op_schema_lookup("", "Neg", ri->hi), e->items, 1, NULL, 0, NULL);
	case EXPR_CALL: {
		const Builtin *b = dsl_builtin_lookup(e->s);
		if (!b || !b->op || e->type != TY_VALUE || !strcmp(e->s, "cast") || !strcmp(e->s, "reshape"))
			break;
		return built_op(an, ri, "", b->op, op_schema_lookup("", b->op, ri->hi), e->items, e->n, NULL, 0,
		                NULL);
	}
	default:
		break;
	}
	return new_term(an, ri, T_OPAQUE);
}

/* ---- literals ----------------------------------------------------------------------- */

static bool num_of(const Expr *e, double *v)
{
	switch (e->kind) {
	case EXPR_INT: case EXPR_BOOL: *v = (double)e->i; return true;
	case EXPR_FLOAT: *v = e->f; return true;
	case EXPR_UNARY:
		if (e->op == EX_NEG && num_of(e->items[0], v)) {
			*v = -*v;
			return true;
		}
		return false;
	default:
		return false;
	}
}

/* Two literal numbers match the same constants: equal, or both nan (a
 * literal nan matches any NaN, as rw_literal_equal says). */
static bool same_num(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* The same expression, written the same way (numbers compared as numbers). */
static bool expr_equal(const Expr *x, const Expr *y)
{
	double a, b;
	if (num_of(x, &a) && num_of(y, &b))
		return same_num(a, b) && x->tol == y->tol;
	if (x->kind != y->kind || x->op != y->op || x->n != y->n || x->nattrs != y->nattrs)
		return false;
	switch (x->kind) {
	case EXPR_STRING: case EXPR_VAR: case EXPR_CALL:
		if (strcmp(x->s, y->s) != 0)
			return false;
		break;
	case EXPR_OP:
		if (strcmp(x->s, y->s) != 0 || strcmp(x->domain ? x->domain : "", y->domain ? y->domain : "") != 0 ||
		    (x->copy_attrs ? !y->copy_attrs || strcmp(x->copy_attrs, y->copy_attrs) : y->copy_attrs != NULL))
			return false;
		for (int i = 0; i < x->nattrs; i++)
			if (strcmp(x->attrs[i].name, y->attrs[i].name) != 0 ||
			    !expr_equal(x->attrs[i].value, y->attrs[i].value))
				return false;
		break;
	default:
		break;
	}
	for (int i = 0; i < x->n; i++)
		if (!expr_equal(x->items[i], y->items[i]))
			return false;
	return true;
}

/* Does every constant literal b matches also match literal a?  Same number
 * and tolerance, or b within a tolerance no wider than a's; a scalar a
 * covers a list b whose every element it covers. */
static bool lit_covers(const Expr *a, const Expr *b)
{
	double va, vb;
	if (num_of(a, &va) && num_of(b, &vb))
		return same_num(va, vb) && (a->tol == b->tol || (b->tol > 0 && a->tol >= b->tol));
	if (b->kind == EXPR_LIST && a->kind == EXPR_LIST) {
		if (a->n != b->n)
			return false;
		for (int i = 0; i < a->n; i++)
			if (!lit_covers(a->items[i], b->items[i]))
				return false;
		return true;
	}
	if (b->kind == EXPR_LIST && b->n > 0) {
		for (int i = 0; i < b->n; i++)
			if (!lit_covers(a, b->items[i]))
				return false;
		return true;
	}
	return false;
}

/* Can one constant match both literals? */
static bool lit_compatible(const Expr *a, const Expr *b)
{
	double va, vb;
	if (num_of(a, &va) && num_of(b, &vb))
		return same_num(va, vb) || fabs(va - vb) <= a->tol + b->tol;
	if (a->kind == EXPR_LIST && b->kind == EXPR_LIST) {
		if (a->n != b->n)
			return false;
		for (int i = 0; i < a->n; i++)
			if (!lit_compatible(a->items[i], b->items[i]))
				return false;
		return true;
	}
	const Expr *list = a->kind == EXPR_LIST ? a : b, *x = list == a ? b : a;
	if (list->kind != EXPR_LIST || !num_of(x, &va))
		return false;
	for (int i = 0; i < list->n; i++)
		if (!lit_compatible(list->items[i], x))
			return false;
	return true;
}

/* Is literal attribute value e the attribute's schema default? */
static bool is_default(const Expr *e, const OpAttrDef *def)
{
	double v;
	switch ((AttrType)def->type) {
	case ATTR_INT: return num_of(e, &v) && v == (double)def->i;
	case ATTR_FLOAT: return num_of(e, &v) && v == def->f;
	case ATTR_STRING: return e->kind == EXPR_STRING && def->s && strcmp(e->s, def->s) == 0;
	case ATTR_INTS: case ATTR_FLOATS:
		if (e->kind != EXPR_LIST || e->n != def->n)
			return false;
		for (int i = 0; i < e->n; i++)
			if (!num_of(e->items[i], &v) ||
			    v != (def->type == ATTR_INTS ? (double)def->ints[i] : (double)def->floats[i]))
				return false;
		return true;
	default:
		return false;
	}
}

/* ---- subsumption: does every graph matching B match A? ------------------------------ */

typedef struct SubBind {
	const char *name;
	const Term *t;
} SubBind;

typedef struct Sub {
	Analyser *an;
	const RuleInfo *b;          /* B, when B is a left side (its node bindings resolve) */
	unsigned swaps;             /* orientation of A's commutative nodes */
	SubBind *binds;
	int nbinds, capbinds;
	const Term **hit;           /* B's op terms that A's op terms matched */
	int nhit, caphit;
	bool single_use;            /* A has an inner node that must be used only inside the match */
} Sub;

/* A variable of B naming a node binding stands for that node. */
static const Term *resolve(const Sub *s, const Term *t)
{
	if (t && t->kind == T_VAR && s->b && t->owner == s->b) {
		VarRef *v = find_var(s->b, t->name);
		if (v && v->t->kind == T_OP)
			return v->t;
	}
	return t;
}

/* Terms of B that are surely the same value (or attribute) in every match. */
static bool same(const Sub *s, const Term *x, const Term *y)
{
	x = resolve(s, x);
	y = resolve(s, y);
	if (!x || !y)
		return false;
	if (x == y)
		return true;
	if (x->kind != y->kind)
		return false;
	switch (x->kind) {
	case T_VAR: case T_AVAR: return strcmp(x->name, y->name) == 0;
	case T_ABSENT: return true;
	case T_ALIT: return expr_equal(x->lit, y->lit);
	case T_AREF: return x->node == y->node && strcmp(x->name, y->name) == 0;
	case T_ADEF: return x->def == y->def;
	default: return false;
	}
}

static bool bind_or_same(Sub *s, const char *name, const Term *t)
{
	for (int i = 0; i < s->nbinds; i++)
		if (strcmp(s->binds[i].name, name) == 0)
			return same(s, s->binds[i].t, t);
	if (s->nbinds == s->capbinds) {
		s->capbinds = s->capbinds ? 2 * s->capbinds : 16;
		s->binds = realloc(s->binds, sizeof *s->binds * (size_t)s->capbinds);
		if (!s->binds)
			abort();
	}
	s->binds[s->nbinds++] = (SubBind){name, t};
	return true;
}

static const Term *bound(const Sub *s, const char *name)
{
	for (int i = 0; i < s->nbinds; i++)
		if (strcmp(s->binds[i].name, name) == 0)
			return s->binds[i].t;
	return NULL;
}

/* Surely a value (not absent)?  Surely a constant? */
static bool present(const Term *b)
{
	if (!b || b->kind == T_ABSENT)
		return false;
	if (b->kind == T_VAR)
		return !b->g_optional;
	if (b->kind == T_ANY)
		return !b->optional;
	return true;
}

static bool constant(const Term *b)
{
	return b && (b->kind == T_LIT || (b->kind == T_VAR && b->g_const));
}

static Term *maybe_term(Analyser *an)
{
	Term *t = new_term(an, NULL, T_ANY);
	t->optional = true;
	return t;
}

/* B's value for attribute `name` of op b. */
static const Term *b_attr(Sub *s, const Term *b, const char *name)
{
	for (int i = 0; i < b->nattrs; i++)
		if (strcmp(b->attrs[i].name, name) == 0)
			return b->attrs[i].value;
	const Term *node = b;
	if (b->fresh && b->node) {
		for (int i = 0; i < b->node->nattrs; i++)
			if (strcmp(b->node->attrs[i].name, name) == 0)
				return b->node->attrs[i].value;
		node = b->node;
	} else if (b->fresh) {
		const OpAttrDef *def = op_schema_attr(b->schema, name);
		if (!def || !def->has_default)
			return NULL;
		Term *t = new_term(s->an, NULL, T_ADEF);
		t->def = def;
		return t;
	}
	Term *t = new_term(s->an, NULL, T_AREF);
	t->node = (Term *)node;
	t->name = name;
	return t;
}

static bool sub_match(Sub *s, const Term *a, const Term *b);

static void note_hit(Sub *s, const Term *b)
{
	if (s->nhit == s->caphit) {
		s->caphit = s->caphit ? 2 * s->caphit : 16;
		s->hit = realloc(s->hit, sizeof *s->hit * (size_t)s->caphit);
		if (!s->hit)
			abort();
	}
	s->hit[s->nhit++] = b;
}

static bool sub_op(Sub *s, const Term *a, const Term *b)
{
	b = resolve(s, b);
	if (a->node_of) {
		/* s#k: B's term must be output k of the node A's s matched */
		if (!b || b->kind != T_OP || b->output != a->output)
			return false;
		const Term *n = resolve(s, bound(s, a->node_of->bind));
		note_hit(s, b);
		return n && n->kind == T_OP && node_of(n) == node_of(b);
	}
	if (!b || b->kind != T_OP || strcmp(a->name, b->name) != 0 || strcmp(a->domain, b->domain) != 0)
		return false;
	if (!a->root && a->output != b->output)
		return false;
	if (!a->root && !a->shared) {
		if (b->shared || b->root)
			return false;
		s->single_use = true;
	}
	note_hit(s, b);
	if (a->bind && !bind_or_same(s, a->bind, b))
		return false;
	for (int i = 0; i < a->nattrs; i++) {
		const Term *av = a->attrs[i].value;
		const Term *bv = b_attr(s, b, a->attrs[i].name);
		if (av->kind == T_AVAR) {
			if (!bind_or_same(s, av->name, bv))
				return false;
		} else if (!bv || (bv->kind == T_ALIT ? !expr_equal(av->lit, bv->lit) :
		                   bv->kind == T_ADEF ? !is_default(av->lit, bv->def) : true)) {
			return false;
		}
	}
	bool swap = a->cidx >= 0 && (s->swaps >> a->cidx & 1);
	int n = a->nslots > b->nslots ? a->nslots : b->nslots;
	for (int i = 0; i < n; i++) {
		if (i >= a->nslots) {
			/* A wants the inputs it does not mention absent (vendor ops: anything) */
			if (!a->vendor)
				return false;   /* B mentions input i */
			continue;
		}
		const Term *ai = a->slots[swap ? 1 - i : i];
		if (ai && ai->kind == T_REST) {
			/* A's rest list takes whatever B has from here on */
			const Term *br = i < b->nslots ? b->slots[i] : NULL;
			return br && br->kind == T_REST ? bind_or_same(s, ai->name, br) : true;
		}
		if (i < b->nslots && b->slots[i] && b->slots[i]->kind == T_REST)
			return false;   /* B may have any number of inputs here, A asks for these */
		/* past B's inputs: absent (vendor ops: anything); a gap of B: any value or none */
		const Term *bi = i < b->nslots ? b->slots[i] : b->vendor ? NULL : &s->an->absent;
		if (!bi)
			bi = maybe_term(s->an);
		if (!sub_match(s, ai, bi))
			return false;
	}
	return true;
}

/* A's x:!Conv matches only what is surely not an output of those ops. */
static bool surely_not(const Term *a, const Term *b)
{
	if (!a->nnots)
		return true;
	if (!b)
		return false;
	switch (b->kind) {
	case T_OP:
		return not_one_of(b, a->nots, a->nnots);
	case T_ABSENT:
		return true;
	case T_LIT:                 /* a constant: an initializer or a Constant's output */
		return not_one_of(&(Term){.name = "Constant", .domain = ""}, a->nots, a->nnots);
	case T_VAR: case T_ANY:
		for (int i = 0; i < a->nnots; i++) {
			bool found = false;
			for (int k = 0; k < b->nnots && !found; k++)
				found = !strcmp(a->nots[i].name, b->nots[k].name) &&
				        !strcmp(a->nots[i].domain ? a->nots[i].domain : "", b->nots[k].domain ? b->nots[k].domain : "");
			if (!found)
				return false;
		}
		return true;
	default:
		return false;
	}
}

static bool sub_match(Sub *s, const Term *a, const Term *b)
{
	if (!a)
		return true;                /* a gap of A: any value or none */
	if (a->nnots && !surely_not(a, resolve(s, b)))
		return false;
	switch (a->kind) {
	case T_ANY:
		return a->optional || present(b);
	case T_VAR: {
		const Term *rb = resolve(s, b);
		if (!a->optional && !present(rb))
			return false;
		if (a->is_const && (a->form_slot || !constant(rb)))
			return false;
		return bind_or_same(s, a->name, b);
	}
	case T_LIT: {
		const Term *rb = resolve(s, b);
		return rb && rb->kind == T_LIT && lit_covers(a->lit, rb->lit);
	}
	case T_OP:
		return sub_op(s, a, b);
	default:
		return false;
	}
}

/* One orientation of A's commutative nodes.  When A asks single use of an
 * inner node, B's match must not have nodes A's lacks: one of them could be
 * the extra consumer that makes A fail. */
static bool subsumes_with(Sub *s, const RuleInfo *a, const Term *bterm, const RuleInfo *b)
{
	if (!sub_match(s, a->lhs, bterm))
		return false;
	if (!s->single_use || !b)
		return true;
	for (int i = 0; i < b->nterms; i++) {
		const Term *t = b->terms[i];
		if (t->kind != T_OP)
			continue;
		bool hit = false;
		for (int k = 0; k < s->nhit && !hit; k++)
			hit = s->hit[k] == t;
		if (!hit)
			return false;
	}
	return true;
}

/* ---- results ----------------------------------------------------------------------------- */

/* What may make a result fail to build after its pattern matched (an
 * unknown rank, a number whose dtype is unknown, ...), or NULL if nothing. */
static const char *attr_partial(const Expr *e)
{
	if (is_literal(e) || e->kind == EXPR_VAR)
		return NULL;
	if (e->kind == EXPR_CALL)
		return e->s;
	return "an attribute computed at match time";
}

static const char *result_partial(const RuleInfo *ri, const Expr *e)
{
	switch (e->kind) {
	case EXPR_VAR: {
		const Binding *b = e->binding;
		if (!b || (b->type != TY_VALUE && b->type != TY_NODE))
			return "a list or number as a value";
		if (b->optional)
			return "an optional input as the result";
		VarRef *v = find_var(ri, e->s);
		if (v && v->t->form_slot)
			return "an input older opsets give as an attribute";
		return NULL;
	}
	case EXPR_OP:
		for (int i = 0; i < e->n; i++)
			if (is_form_slot(e->schema, i))
				return "building an op whose input older opsets give as an attribute";
		for (int i = 0; i < e->nattrs; i++) {
			const char *w = e->attrs[i].value ? attr_partial(e->attrs[i].value) : NULL;
			if (w)
				return w;
		}
		break;
	case EXPR_BINARY:
		if (!dsl_exop_onnx(e->op) || e->type != TY_VALUE)
			return "a computed value";
		break;
	case EXPR_UNARY:
		if (e->op != EX_NEG || e->type != TY_VALUE)
			return "a computed value";
		break;
	case EXPR_CALL: {
		const Builtin *b = dsl_builtin_lookup(e->s);
		if (!b || !b->op || e->type != TY_VALUE || !strcmp(e->s, "cast") || !strcmp(e->s, "reshape"))
			return e->s;
		break;
	}
	case EXPR_TUPLE:
		break;
	case EXPR_INT: case EXPR_FLOAT:
		return "a number, whose dtype is found at match time";
	default:
		return "a computed value";
	}
	for (int i = 0; i < e->n; i++) {
		const char *w = result_partial(ri, e->items[i]);
		if (w)
			return w;
	}
	return NULL;
}

static int result_count(const Rule *r)
{
	return r->rhs->kind == EXPR_TUPLE ? r->rhs->n : 1;
}

static const Expr *result_item(const Rule *r, int k)
{
	return r->rhs->kind == EXPR_TUPLE ? r->rhs->items[k] : r->rhs;
}

/* Once A matched, does it surely commit wherever B would?  The engine
 * refuses a rewrite that leaves a used output of the root unreplaced, or
 * that would rename a graph output to a value without producer: so A must
 * replace every output B does, and where A's result is a bare variable it
 * must be a node of B's match or what B's result is too. */
static bool commits_where(Sub *s, const RuleInfo *a, const RuleInfo *b)
{
	int a0 = a->r->lhs->output, b0 = b->r->lhs->output;
	int an = result_count(a->r), bn = result_count(b->r);
	if (a0 > b0 || a0 + an < b0 + bn)
		return false;
	for (int k = 0; k < an; k++) {
		const Expr *e = result_item(a->r, k);
		if (e->kind != EXPR_VAR)
			continue;
		const Term *t = resolve(s, bound(s, e->s));
		if (t && t->kind == T_OP && !t->shared && !t->root)
			continue;
		int kb = a0 + k - b0;
		if (kb < 0 || kb >= bn)
			return false;
		const Expr *be = result_item(b->r, kb);
		VarRef *v = be->kind == EXPR_VAR ? find_var(b, be->s) : NULL;
		if (!v || !same(s, t, v->t))
			return false;
	}
	return true;
}

static void sub_free(Sub *s)
{
	free(s->binds);
	free(s->hit);
}

static bool guard_implied(Sub *s, const RuleInfo *a, const RuleInfo *b);
static bool guard_excluded(Sub *s, const RuleInfo *ri);

/* Does every graph matching B's left side match A's?  (commit: and does A
 * then surely rewrite it?  guards: and does B's guard imply A's?) */
static bool subsumes(Analyser *an, const RuleInfo *a, const RuleInfo *b, bool commit, bool guards)
{
	if (!a->lhs || !b->lhs || a->ncommut > MAX_COMMUTATIVE)
		return false;
	for (unsigned m = 0; m < 1u << a->ncommut; m++) {
		Sub s = {.an = an, .b = b, .swaps = m};
		bool ok = subsumes_with(&s, a, b->lhs, b) && (!commit || commits_where(&s, a, b)) &&
		          (!guards || guard_implied(&s, a, b));
		sub_free(&s);
		if (ok)
			return true;
	}
	return false;
}

/* Does the result of r, as a graph, match r's own left side, with r's
 * guard possibly holding there (not surely false given that it held on
 * the match the result replaces)? */
static bool recreates(Analyser *an, RuleInfo *ri)
{
	if (!ri->lhs || ri->r->rhs->kind == EXPR_TUPLE || ri->r->lhs->output != 0 || ri->ncommut > MAX_COMMUTATIVE)
		return false;
	Term *res = from_result(an, ri, ri->r->rhs);
	if (res->kind != T_OP)
		return false;
	for (unsigned m = 0; m < 1u << ri->ncommut; m++) {
		Sub s = {.an = an, .swaps = m};
		bool ok = subsumes_with(&s, ri, res, NULL) && !guard_excluded(&s, ri);
		sub_free(&s);
		if (ok)
			return true;
	}
	return false;
}

/* ---- overlap: can one graph match both A and B? --------------------------------------- */

typedef struct Class {
	const Term *op, *lit, *alit;
	const Term *neg;            /* a term with :!Op, whose ops the value is not */
	bool absent, present, konst;
} Class;

typedef struct Uf {
	const RuleInfo *ri[2];
	const Term *absent;
	int n;                      /* A's terms, B's, the absent input */
	int *parent;
	Class *cls;
	unsigned swaps;
	int depth;
} Uf;

static int gid(const Uf *u, const Term *t)
{
	if (t->kind == T_ABSENT)
		return u->n - 1;
	return t->owner == u->ri[0] ? t->id : u->ri[0]->nterms + t->id;
}

static int find(Uf *u, int i)
{
	while (u->parent[i] != i)
		i = u->parent[i] = u->parent[u->parent[i]];
	return i;
}

static bool unify(Uf *u, const Term *x, const Term *y);

/* Input i of op t as the orientation being tried has it: NULL when
 * unconstrained (a gap, or past the inputs of a vendor op), the absent
 * input past the inputs the pattern mentions. */
static const Term *oriented(const Uf *u, const Term *t, int i)
{
	if (i >= t->nslots)
		return t->vendor ? NULL : u->absent;
	bool swap = t->owner == u->ri[0] && t->cidx >= 0 && (u->swaps >> t->cidx & 1);
	return t->slots[swap ? 1 - i : i];
}

static bool unify_ops(Uf *u, const Term *x, const Term *y)
{
	if (strcmp(x->name, y->name) != 0 || strcmp(x->domain, y->domain) != 0)
		return false;
	if (!(x->root && y->root) && x->output != y->output)
		return false;
	for (int i = 0; i < x->nattrs; i++)
		for (int k = 0; k < y->nattrs; k++)
			if (strcmp(x->attrs[i].name, y->attrs[k].name) == 0 && !unify(u, x->attrs[i].value, y->attrs[k].value))
				return false;
	/* A's commutative nodes are oriented as told; B's stay as written */
	int n = x->nslots > y->nslots ? x->nslots : y->nslots;
	for (int i = 0; i < n; i++) {
		const Term *xi = oriented(u, x, i), *yi = oriented(u, y, i);
		bool xr = xi && xi->kind == T_REST, yr = yi && yi->kind == T_REST;
		if (xr || yr)           /* a rest list: any inputs from here on */
			return !(xr && yr) || unify(u, xi, yi);
		if (xi && yi && !unify(u, xi, yi))
			return false;
	}
	return true;
}

static bool unify(Uf *u, const Term *x, const Term *y)
{
	int rx = find(u, gid(u, x)), ry = find(u, gid(u, y));
	if (rx == ry)
		return true;
	if (++u->depth > 1000)
		return false;
	Class cx = u->cls[rx], cy = u->cls[ry];
	u->parent[ry] = rx;
	Class m = {
		.op = cx.op ? cx.op : cy.op,
		.lit = cx.lit ? cx.lit : cy.lit,
		.alit = cx.alit ? cx.alit : cy.alit,
		.neg = cx.neg ? cx.neg : cy.neg,
		.absent = cx.absent || cy.absent,
		.present = cx.present || cy.present,
		.konst = cx.konst || cy.konst,
	};
	u->cls[rx] = m;
	if (m.absent && m.present)
		return false;
	if (m.op && ((cx.neg && !not_one_of(m.op, cx.neg->nots, cx.neg->nnots)) ||
	             (cy.neg && !not_one_of(m.op, cy.neg->nots, cy.neg->nnots))))
		return false;
	if (m.op && (m.konst || m.lit) && strcmp(m.op->name, "Constant") != 0)
		return false;
	if (cx.lit && cy.lit && !lit_compatible(cx.lit->lit, cy.lit->lit))
		return false;
	if (cx.alit && cy.alit && !expr_equal(cx.alit->lit, cy.alit->lit))
		return false;
	if (cx.op && cy.op)
		return unify_ops(u, cx.op, cy.op);
	return true;
}

static const Term *term_at(const Uf *u, int i)
{
	int na = u->ri[0]->nterms;
	if (i < na)
		return u->ri[0]->terms[i];
	if (i < u->n - 1)
		return u->ri[1]->terms[i - na];
	return u->absent;
}

/* The graph the unifier describes has no cycle. */
static bool acyclic_from(Uf *u, int c, char *color)
{
	color[c] = 1;
	for (int i = 0; i < u->n; i++) {
		const Term *t = term_at(u, i);
		if (t->kind != T_OP || find(u, i) != c)
			continue;
		for (int k = 0; k < t->nslots; k++) {
			if (!t->slots[k])
				continue;
			int d = find(u, gid(u, t->slots[k]));
			if (color[d] == 1 || (color[d] == 0 && !acyclic_from(u, d, color)))
				return false;
		}
	}
	color[c] = 2;
	return true;
}

/* Every inner node of side `side` that must be used only inside its match
 * is consumed, in the unified graph, only by nodes of that match. */
static bool single_use_holds(Uf *u, int side)
{
	const RuleInfo *ri = u->ri[side];
	for (int i = 0; i < ri->nterms; i++) {
		const Term *n = ri->terms[i];
		if (n->kind != T_OP || n->root || n->shared)
			continue;
		int c = find(u, gid(u, n));
		for (int j = 0; j < u->n; j++) {
			const Term *t = term_at(u, j);
			if (t->kind != T_OP)
				continue;
			bool consumes = false;
			for (int k = 0; k < t->nslots && !consumes; k++)
				consumes = t->slots[k] && find(u, gid(u, t->slots[k])) == c;
			if (!consumes)
				continue;
			int tc = find(u, j);
			bool inside = false;
			for (int k = 0; k < ri->nterms && !inside; k++)
				inside = ri->terms[k]->kind == T_OP && find(u, gid(u, ri->terms[k])) == tc;
			if (!inside)
				return false;
		}
	}
	return true;
}

static void class_init(Class *c, const Term *t)
{
	memset(c, 0, sizeof *c);
	switch (t->kind) {
	case T_OP: c->op = t; c->present = true; break;
	case T_LIT: c->lit = t; c->present = c->konst = true; break;
	case T_VAR: c->present = !t->optional; c->konst = t->is_const; c->neg = t->nnots ? t : NULL; break;
	case T_ANY: c->present = !t->optional; c->neg = t->nnots ? t : NULL; break;
	case T_ALIT: c->alit = t; break;
	case T_ABSENT: c->absent = true; break;
	default: break;
	}
}

static bool uf_setup(Uf *u, const RuleInfo *a, const RuleInfo *b, const Term *absent, unsigned swaps)
{
	u->ri[0] = a;
	u->ri[1] = b;
	u->absent = absent;
	u->swaps = swaps;
	u->n = a->nterms + b->nterms + 1;
	u->parent = malloc(sizeof *u->parent * (size_t)u->n);
	u->cls = malloc(sizeof *u->cls * (size_t)u->n);
	if (!u->parent || !u->cls)
		abort();
	for (int i = 0; i < u->n; i++) {
		u->parent[i] = i;
		class_init(&u->cls[i], term_at(u, i));
	}
	/* every occurrence of a variable is the same value (or an equal constant) */
	for (int side = 0; side < 2; side++) {
		const RuleInfo *ri = u->ri[side];
		for (int i = 0; i < ri->nterms; i++) {
			const Term *t = ri->terms[i];
			if (t->kind != T_VAR && t->kind != T_AVAR)
				continue;
			VarRef *v = find_var(ri, t->name);
			if (v && !unify(u, v->t, t))
				return false;
		}
	}
	return unify(u, a->lhs, b->lhs);
}

static int var_class(Uf *u, int side, const char *name)
{
	VarRef *v = find_var(u->ri[side], name);
	return v ? find(u, gid(u, v->t)) : -1;
}

static bool commutes(const Expr *e)
{
	if (e->kind == EXPR_OP)
		return e->schema && (e->schema->flags & OPF_COMMUTATIVE) && e->n == 2;
	return e->kind == EXPR_BINARY && (e->op == EX_ADD || e->op == EX_MUL || e->op == EX_EQ || e->op == EX_NE ||
	                                  e->op == EX_AND || e->op == EX_OR);
}

/* Do A's result x and B's result y build the same thing under the unifier? */
static bool results_same(Uf *u, const Expr *x, const Expr *y)
{
	double a, b;
	if (num_of(x, &a) && num_of(y, &b))
		return a == b;
	if (x->kind != y->kind || x->op != y->op || x->n != y->n || x->nattrs != y->nattrs)
		return false;
	switch (x->kind) {
	case EXPR_VAR: {
		int cx = var_class(u, 0, x->s), cy = var_class(u, 1, y->s);
		if (cx < 0 || cy < 0)
			return cx < 0 && cy < 0 && strcmp(x->s, y->s) == 0;
		return cx == cy;
	}
	case EXPR_STRING: case EXPR_CALL:
		if (strcmp(x->s, y->s) != 0)
			return false;
		break;
	case EXPR_OP:
		if (strcmp(x->s, y->s) != 0 || strcmp(x->domain ? x->domain : "", y->domain ? y->domain : "") != 0)
			return false;
		if (x->copy_attrs || y->copy_attrs) {
			if (!x->copy_attrs || !y->copy_attrs ||
			    var_class(u, 0, x->copy_attrs) != var_class(u, 1, y->copy_attrs))
				return false;
		}
		for (int i = 0; i < x->nattrs; i++) {
			bool found = false;
			for (int k = 0; k < y->nattrs && !found; k++)
				found = strcmp(x->attrs[i].name, y->attrs[k].name) == 0 &&
				        results_same(u, x->attrs[i].value, y->attrs[k].value);
			if (!found)
				return false;
		}
		break;
	default:
		break;
	}
	bool straight = true;
	for (int i = 0; i < x->n && straight; i++)
		straight = results_same(u, x->items[i], y->items[i]);
	if (straight)
		return true;
	return commutes(x) && x->n == 2 && results_same(u, x->items[0], y->items[1]) &&
	       results_same(u, x->items[1], y->items[0]);
}

/* ---- guards ------------------------------------------------------------------------------ */

/* A guard is the conjunction of its top-level && terms, its atoms.  An atom
 * that compares an expression, its subject, with a literal (==, !=, <, <=,
 * >, >=), a || of equalities of one subject, the ! of such a set,
 * is_int(v) or is_float(v) (a set of dtype(v)) is a constraint: the subject
 * lies in a set of literals, outside one, or in an interval.  Any other
 * atom (a helper call, a || of other things) is opaque, compared only as
 * written.  The two rules' variables are compared through the subsumption
 * (A's variable -> B's term) or through the unifier.  A guard that cannot
 * be evaluated (an unknown dtype or rank) does not hold, so a known atom of
 * B's implies what it implies. */

#define MAX_VALS 16

typedef enum ValKind { V_NUM, V_DTYPE, V_STR } ValKind;

typedef struct Val {
	ValKind kind;
	double num;                 /* V_NUM; V_DTYPE: the DType number */
	const char *s;              /* V_STR */
} Val;

/* A dtype's DSL name as its DType number (float32 is ONNX's "float"). */
static int dsl_dtype(const char *name)
{
	if (strcmp(name, "float32") == 0)
		return DT_FLOAT;
	if (strcmp(name, "float64") == 0)
		return DT_DOUBLE;
	return dtype_from_name(name);
}

typedef enum ConsKind { C_OPAQUE, C_IN, C_NOTIN, C_RANGE } ConsKind;

typedef struct Atom {
	const Expr *e;              /* the atom as written */
	ConsKind kind;
	const Expr *subj;           /* the subject (the value, for dtype(v)) */
	bool dtype_of;              /* the subject is dtype(subj) */
	Val v[MAX_VALS];            /* C_IN, C_NOTIN */
	int n;
	double lo, hi;              /* C_RANGE */
	bool lo_in, hi_in;
} Atom;

static bool val_of(const Expr *e, Val *v)
{
	if (num_of(e, &v->num)) {
		v->kind = V_NUM;
		return true;
	}
	if (e->kind == EXPR_VAR && !e->binding && dsl_is_dtype_name(e->s) && dsl_dtype(e->s)) {
		v->kind = V_DTYPE;
		v->num = dsl_dtype(e->s);
		return true;
	}
	if (e->kind == EXPR_STRING) {
		v->kind = V_STR;
		v->s = e->s;
		return true;
	}
	return false;
}

/* 1 equal, 0 not, -1 not comparable */
static int val_eq(const Val *a, const Val *b)
{
	if (a->kind != b->kind)
		return -1;
	return a->kind == V_STR ? strcmp(a->s, b->s) == 0 : a->num == b->num;
}

/* Does v satisfy atom x?  1 yes, 0 no, -1 unknown. */
static int sat(const Atom *x, const Val *v)
{
	switch (x->kind) {
	case C_IN: case C_NOTIN: {
		bool in = false;
		for (int i = 0; i < x->n; i++) {
			int e = val_eq(&x->v[i], v);
			if (e < 0)
				return -1;
			in = in || e;
		}
		return in == (x->kind == C_IN);
	}
	case C_RANGE:
		if (v->kind != V_NUM || isnan(v->num))
			return v->kind == V_NUM ? 0 : -1;
		return (v->num > x->lo || (v->num == x->lo && x->lo_in)) && (v->num < x->hi || (v->num == x->hi && x->hi_in));
	default:
		return -1;
	}
}

/* is_int(v) and is_float(v), as rw_gen.c's rwg_is_int and rwg_is_float decide */
static const int int_dtypes[] = {DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_INT4,
                                 DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_UINT4};
static const int float_dtypes[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, DT_FLOAT8E4M3FN,
                                   DT_FLOAT8E4M3FNUZ, DT_FLOAT8E5M2, DT_FLOAT8E5M2FNUZ, DT_FLOAT4E2M1};

static void set_subject(Atom *a, const Expr *subj)
{
	a->dtype_of = subj->kind == EXPR_CALL && strcmp(subj->s, "dtype") == 0 && subj->n == 1;
	a->subj = a->dtype_of ? subj->items[0] : subj;
}

/* x op lit (or lit op x) */
static void compare_atom(const Expr *e, Atom *a)
{
	static const ExprOp flipped[] = {[EX_EQ] = EX_EQ, [EX_NE] = EX_NE, [EX_LT] = EX_GT,
	                                 [EX_LE] = EX_GE, [EX_GT] = EX_LT, [EX_GE] = EX_LE};
	const Expr *subj = e->items[0], *lit = e->items[1];
	ExprOp op = e->op;
	Val v, w;
	if (val_of(subj, &w)) {
		if (val_of(lit, &v))
			return;             /* two literals */
		subj = e->items[1];
		lit = e->items[0];
		op = flipped[op];
	}
	if (!val_of(lit, &v))
		return;
	set_subject(a, subj);
	if (a->dtype_of != (v.kind == V_DTYPE))
		return;
	if (op == EX_EQ || op == EX_NE) {
		a->kind = op == EX_EQ ? C_IN : C_NOTIN;
		a->v[a->n++] = v;
		return;
	}
	if (v.kind != V_NUM || isnan(v.num))
		return;
	a->kind = C_RANGE;
	a->lo = -INFINITY;
	a->hi = INFINITY;
	if (op == EX_LT || op == EX_LE) {
		a->hi = v.num;
		a->hi_in = op == EX_LE;
	} else {
		a->lo = v.num;
		a->lo_in = op == EX_GE;
	}
}

static void atom_of(const Expr *e, Atom *a)
{
	memset(a, 0, sizeof *a);
	a->e = e;
	a->kind = C_OPAQUE;
	if (e->kind == EXPR_BINARY && e->op >= EX_EQ && e->op <= EX_GE) {
		compare_atom(e, a);
	} else if (e->kind == EXPR_BINARY && e->op == EX_OR) {
		Atom x, y;
		atom_of(e->items[0], &x);
		atom_of(e->items[1], &y);
		if (x.kind == C_IN && y.kind == C_IN && x.dtype_of == y.dtype_of && expr_equal(x.subj, y.subj) &&
		    x.n + y.n <= MAX_VALS) {
			*a = x;
			a->e = e;
			for (int i = 0; i < y.n; i++)
				a->v[a->n++] = y.v[i];
		}
	} else if (e->kind == EXPR_UNARY && e->op == EX_NOT) {
		atom_of(e->items[0], a);
		a->e = e;
		if (a->kind == C_IN || a->kind == C_NOTIN)
			a->kind = a->kind == C_IN ? C_NOTIN : C_IN;
		else
			a->kind = C_OPAQUE;
	} else if (e->kind == EXPR_CALL && e->n == 1 && (!strcmp(e->s, "is_int") || !strcmp(e->s, "is_float"))) {
		bool is_int = e->s[3] == 'i';
		const int *dts = is_int ? int_dtypes : float_dtypes;
		size_t n = is_int ? sizeof int_dtypes / sizeof *int_dtypes : sizeof float_dtypes / sizeof *float_dtypes;
		a->kind = C_IN;
		a->dtype_of = true;
		a->subj = e->items[0];
		for (size_t i = 0; i < n; i++)
			a->v[a->n++] = (Val){.kind = V_DTYPE, .num = dts[i]};
	}
}

static void split_guard(RuleInfo *ri, const Expr *e, int *cap)
{
	if (!e)
		return;
	if (e->kind == EXPR_BINARY && e->op == EX_AND) {
		split_guard(ri, e->items[0], cap);
		split_guard(ri, e->items[1], cap);
		return;
	}
	if (ri->natoms == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		ri->atoms = realloc(ri->atoms, sizeof *ri->atoms * (size_t)*cap);
		if (!ri->atoms)
			abort();
	}
	atom_of(e, &ri->atoms[ri->natoms++]);
}


/* An atom S == T (neither a literal) lets what the guard says of T be said
 * of S, and the other way round: len(ints(u)) == len(ints(a)) && len(ints(a)) > 0
 * gives len(ints(u)) > 0.  One step, no chains. */
static void derive_equals(RuleInfo *ri, int *cap)
{
	int n = ri->natoms;
	for (int i = 0; i < n; i++) {
		const Expr *e = ri->atoms[i].e;
		Val v;
		if (e->kind != EXPR_BINARY || e->op != EX_EQ || val_of(e->items[0], &v) || val_of(e->items[1], &v))
			continue;
		for (int side = 0; side < 2; side++) {
			const Expr *from = e->items[side], *to = e->items[1 - side];
			for (int k = 0; k < n; k++) {
				Atom *a = &ri->atoms[k];
				if (k == i || a->kind == C_OPAQUE || a->dtype_of || !expr_equal(a->subj, from))
					continue;
				if (ri->natoms == *cap) {
					*cap = 2 * *cap;
					ri->atoms = realloc(ri->atoms, sizeof *ri->atoms * (size_t)*cap);
					if (!ri->atoms)
						abort();
					a = &ri->atoms[k];
				}
				Atom d = *a;
				d.subj = to;
				d.e = NULL;     /* derived: compared by its constraint only */
				ri->atoms[ri->natoms++] = d;
			}
		}
	}
}

/* How two rules' variables correspond: A's (side 0) and B's (side 1). */
typedef struct GMap {
	const RuleInfo *ri[2];
	Sub *s;                     /* A's variables -> B's terms (shadowing, recreation) */
	Uf *u;                      /* or the unifier (conflicts) */
} GMap;

static bool pattern_var(const RuleInfo *ri, const Expr *v)
{
	return v->binding && find_var(ri, v->s) != NULL;
}

/* The name B's guard knows term t by, if any. */
static const char *term_name(const Term *t)
{
	if (!t)
		return NULL;
	if (t->kind == T_VAR || t->kind == T_AVAR || t->kind == T_REST)
		return t->name;
	return t->kind == T_OP ? t->bind : NULL;
}

static bool gvar_same(const GMap *g, const Expr *x, const Expr *y)
{
	bool px = pattern_var(g->ri[0], x), py = pattern_var(g->ri[1], y);
	if (!px || !py)             /* a quantifier's element (or a dtype's name) */
		return !px && !py && strcmp(x->s, y->s) == 0;
	if (g->u)
		return var_class(g->u, 0, x->s) == var_class(g->u, 1, y->s);
	const char *n = term_name(resolve(g->s, bound(g->s, x->s)));
	return n && strcmp(n, y->s) == 0;
}

/* What the match binds variable v of side `side` to: under a unifier its
 * class's op term (op) or attribute literal (!op), else (a one-way match,
 * side 0) the term it was bound to. */
static const Term *gvar_term(const GMap *g, int side, const Expr *v, bool op)
{
	if (g->u) {
		int c = var_class(g->u, side, v->s);
		return c < 0 ? NULL : op ? g->u->cls[c].op : g->u->cls[c].alit;
	}
	return side == 0 ? resolve(g->s, bound(g->s, v->s)) : NULL;
}

/* The literal an attribute variable of side `side` surely is, or NULL. */
static const Expr *gvar_lit(const GMap *g, int side, const Expr *v)
{
	if (!pattern_var(g->ri[side], v))
		return NULL;
	const Term *t = gvar_term(g, side, v, false);
	return t && t->kind == T_ALIT && is_literal(t->lit) ? t->lit : NULL;
}

/* The dtypes a variable of side `side` may have: those of the op that
 * makes it, if the match says; 0 when not known. */
static const Term *gvar_op(const GMap *g, int side, const Expr *v);

static uint32_t gvar_types(const GMap *g, int side, const Expr *v)
{
	const Term *t = gvar_op(g, side, v);
	return t ? t->types : 0;
}

/* Atom x of side `side` on the dtype of a value an op makes: 1 true for
 * every dtype the op allows, 0 for none, -1 not known. */
static int atom_on_types(const GMap *g, int side, const Atom *x)
{
	uint32_t m = x->kind != C_OPAQUE && x->dtype_of ? gvar_types(g, side, x->subj) : 0;
	if (!m)
		return -1;
	bool some = false, all = true;
	for (int dt = 1; dt < 32; dt++) {
		if (!(m >> dt & 1))
			continue;
		int r = sat(x, &(Val){.kind = V_DTYPE, .num = dt});
		some = some || r != 0;
		all = all && r == 1;
	}
	return all ? 1 : some ? -1 : 0;
}

/* x (of A) and y (of B) are the same expression of the same values. */
static bool gx_equal(const GMap *g, const Expr *x, const Expr *y)
{
	double a, b;
	if (num_of(x, &a) && num_of(y, &b))
		return same_num(a, b) && x->tol == y->tol;
	if (x->kind != y->kind || x->op != y->op || x->n != y->n || x->nattrs != y->nattrs)
		return false;
	switch (x->kind) {
	case EXPR_VAR:
		if (x->binding && y->binding)
			return gvar_same(g, x, y);
		return !x->binding && !y->binding && strcmp(x->s, y->s) == 0;
	case EXPR_STRING: case EXPR_CALL: case EXPR_QUANT:
		if (strcmp(x->s, y->s) != 0)
			return false;
		break;
	case EXPR_OP:
		return false;
	default:
		break;
	}
	for (int i = 0; i < x->n; i++)
		if (!gx_equal(g, x->items[i], y->items[i]))
			return false;
	return true;
}

static bool same_subject(const GMap *g, const Atom *x, const Atom *y)
{
	return x->kind != C_OPAQUE && y->kind != C_OPAQUE && x->dtype_of == y->dtype_of && gx_equal(g, x->subj, y->subj);
}

/* Does constraint y imply constraint x (of the same subject)? */
static bool cons_implies(const Atom *y, const Atom *x)
{
	switch (y->kind) {
	case C_IN:
		for (int i = 0; i < y->n; i++)
			if (sat(x, &y->v[i]) != 1)
				return false;
		return true;
	case C_NOTIN:
		if (x->kind != C_NOTIN)
			return false;
		for (int i = 0; i < x->n; i++) {
			bool found = false;
			for (int k = 0; k < y->n && !found; k++)
				found = val_eq(&x->v[i], &y->v[k]) == 1;
			if (!found)
				return false;
		}
		return true;
	case C_RANGE:
		if (x->kind == C_NOTIN) {
			for (int i = 0; i < x->n; i++)
				if (sat(y, &x->v[i]) != 0)
					return false;
			return true;
		}
		return x->kind == C_RANGE && (x->lo < y->lo || (x->lo == y->lo && (x->lo_in || !y->lo_in))) &&
		       (x->hi > y->hi || (x->hi == y->hi && (x->hi_in || !y->hi_in)));
	default:
		return false;
	}
}

/* Can no subject satisfy both? */
static bool cons_exclusive(const Atom *x, const Atom *y)
{
	if (y->kind == C_IN) {
		const Atom *t = x;
		x = y;
		y = t;
	}
	if (x->kind == C_IN) {
		for (int i = 0; i < x->n; i++)
			if (sat(y, &x->v[i]) != 0)
				return false;
		return true;
	}
	if (x->kind == C_RANGE && y->kind == C_RANGE)
		return x->hi < y->lo || (x->hi == y->lo && !(x->hi_in && y->lo_in)) || y->hi < x->lo ||
		       (y->hi == x->lo && !(y->hi_in && x->lo_in));
	return false;
}

/* The op term that makes variable v of side `side`, if the match says. */
static const Term *gvar_op(const GMap *g, int side, const Expr *v)
{
	if (v->kind != EXPR_VAR || !pattern_var(g->ri[side], v))
		return NULL;
	const Term *t = gvar_term(g, side, v, true);
	return t && t->kind == T_OP ? t : NULL;
}

/* The rank of variable v of side `side`, when an op of the match fixes it
 * (a Transpose's perm literal has one item per axis); -1 if not known. */
static int gvar_rank(const GMap *g, int side, const Expr *v)
{
	const Term *t = gvar_op(g, side, v);
	if (!t || *t->domain || strcmp(t->name, "Transpose") != 0)
		return -1;
	for (int i = 0; i < t->nattrs; i++) {
		if (strcmp(t->attrs[i].name, "perm") != 0)
			continue;
		const Term *p = t->attrs[i].value;
		if (g->u && p->id >= 0 && p->kind == T_AVAR) {
			const Term *l = g->u->cls[find(g->u, gid(g->u, p))].alit;
			p = l ? l : p;
		}
		return p->kind == T_ALIT && p->lit->kind == EXPR_LIST && is_literal(p->lit) ? p->lit->n : -1;
	}
	return -1;
}

/* Atom x of side `side` on an attribute variable the match pins to a
 * literal, or on the rank of a value an op of the match fixes: 1 true
 * there, 0 false, -1 not known. */
static int atom_on_literal(const GMap *g, int side, const Atom *x)
{
	if (x->kind == C_OPAQUE || x->dtype_of)
		return -1;
	const Expr *e = x->subj;
	if (e->kind == EXPR_CALL && strcmp(e->s, "rank") == 0 && e->n == 1) {
		int r = gvar_rank(g, side, e->items[0]);
		return r >= 0 ? sat(x, &(Val){.kind = V_NUM, .num = r}) : -1;
	}
	if (e->kind != EXPR_VAR)
		return -1;
	const Expr *l = gvar_lit(g, side, e);
	Val v;
	return l && val_of(l, &v) ? sat(x, &v) : -1;
}

/* Does B's guard make atom x of A hold? */
static bool atom_implied(const GMap *g, const Atom *x, const RuleInfo *b)
{
	if (atom_on_literal(g, 0, x) == 1 || atom_on_types(g, 0, x) == 1)
		return true;
	for (int i = 0; i < b->natoms; i++) {
		const Atom *y = &b->atoms[i];
		if ((x->e && y->e && gx_equal(g, x->e, y->e)) || (same_subject(g, x, y) && cons_implies(y, x)))
			return true;
	}
	return false;
}

/* Can atom x of A and atom y of B not both hold? */
static bool atoms_exclusive(const GMap *g, const Atom *x, const Atom *y)
{
	const Expr *xe = x->e, *ye = y->e;
	if (!xe || !ye)
		return same_subject(g, x, y) && cons_exclusive(x, y);
	if (xe->kind == EXPR_UNARY && xe->op == EX_NOT && gx_equal(g, xe->items[0], ye))
		return true;
	if (ye->kind == EXPR_UNARY && ye->op == EX_NOT && gx_equal(g, xe, ye->items[0]))
		return true;
	return same_subject(g, x, y) && cons_exclusive(x, y);
}

/* Can A's guard and B's not both hold on one match? */
static bool guards_exclusive(const GMap *g, const RuleInfo *a, const RuleInfo *b)
{
	for (int i = 0; i < a->natoms; i++)
		if (atom_on_literal(g, 0, &a->atoms[i]) == 0 || atom_on_types(g, 0, &a->atoms[i]) == 0)
			return true;
	for (int k = 0; k < b->natoms; k++)
		if (atom_on_literal(g, 1, &b->atoms[k]) == 0 || atom_on_types(g, 1, &b->atoms[k]) == 0)
			return true;
	for (int i = 0; i < a->natoms; i++)
		for (int k = 0; k < b->natoms; k++)
			if (atoms_exclusive(g, &a->atoms[i], &b->atoms[k]))
				return true;
	return false;
}

/* Under subsumption s of B by A: does B's guard imply every atom of A's? */
static bool guard_implied(Sub *s, const RuleInfo *a, const RuleInfo *b)
{
	GMap g = {.ri = {a, b}, .s = s};
	for (int i = 0; i < a->natoms; i++)
		if (a->atoms[i].e && !atom_implied(&g, &a->atoms[i], b))   /* derived atoms follow from the others */
			return false;
	return true;
}

/* s matched ri's left side against its own result, ri's variables standing
 * for the values they had at the match the result replaces: is ri's guard
 * surely false there, given that it held on that match? */
static bool guard_excluded(Sub *s, const RuleInfo *ri)
{
	GMap g = {.ri = {ri, ri}, .s = s};
	return guards_exclusive(&g, ri, ri);
}

/* Is there a graph both left sides match, where the results differ? */
static bool conflicts(Analyser *an, const RuleInfo *a, const RuleInfo *b)
{
	if (a->ncommut > MAX_COMMUTATIVE)
		return false;
	for (unsigned m = 0; m < 1u << a->ncommut; m++) {
		Uf u = {0};
		bool overlap = uf_setup(&u, a, b, &an->absent, m);
		if (overlap) {
			char *color = calloc((size_t)u.n, 1);
			if (!color)
				abort();
			for (int i = 0; i < u.n && overlap; i++)
				if (!color[find(&u, i)])
					overlap = acyclic_from(&u, find(&u, i), color);
			free(color);
		}
		overlap = overlap && single_use_holds(&u, 0) && single_use_holds(&u, 1);
		GMap g = {.ri = {a, b}, .u = &u};
		overlap = overlap && !guards_exclusive(&g, a, b);
		bool differ = overlap && !results_same(&u, a->r->rhs, b->r->rhs);
		free(u.parent);
		free(u.cls);
		if (differ)
			return true;
	}
	return false;
}

/* ---- the driver ------------------------------------------------------------------------------ */

static Level rule_level(const RuleFile *f, const Rule *r)
{
	Level l = r->level ? r->level : f->default_level;
	return l ? l : LEVEL_BASIC;
}

static void describe(Analyser *an, RuleInfo *ri)
{
	const Rule *r = ri->r;
	ri->level = rule_level(ri->f, r);
	ri->lo = r->opset_min > 0 ? r->opset_min : 1;
	if (r->min_opset_needed > ri->lo)
		ri->lo = r->min_opset_needed;
	ri->hi = r->opset_max > 0 && r->opset_max < OPSCHEMA_MAX_OPSET ? r->opset_max : OPSCHEMA_MAX_OPSET;
	const Pattern *p = r->lhs;
	if (p->kind != PAT_OP) {
		unsupported(ri, "a left side that is not an op");
		return;
	}
	snprintf(ri->key, sizeof ri->key, "%s%s%s", p->domain ? p->domain : "", p->domain && *p->domain ? "." : "",
	         p->name);
	ri->lhs = from_pattern(an, ri, p, true);
	if (ri->skip == SKIP_CONSTRUCT)
		ri->lhs = NULL;
	if (!ri->lhs)
		return;
	int cap = 0;
	split_guard(ri, r->guard, &cap);
	derive_equals(ri, &cap);
	ri->partial = result_partial(ri, r->rhs);
}

/* The order the engine tries a root op's rules in: higher priority, then source order. */
static bool tried_before(const RuleInfo *a, const RuleInfo *b)
{
	if (a->r->priority != b->r->priority)
		return a->r->priority > b->r->priority;
	return a->order < b->order;
}

static bool ranges_cover(const RuleInfo *a, const RuleInfo *b)
{
	return a->lo <= b->lo && a->hi >= b->hi;
}

static bool ranges_meet(const RuleInfo *a, const RuleInfo *b)
{
	return a->lo <= b->hi && b->lo <= a->hi;
}

static SrcPos name_pos(const Rule *r)
{
	SrcPos p = r->pos;
	if (p.len <= 0)
		p.len = (int)strlen(r->name);
	return p;
}

/* ---- grouping: shadowing and conflicts are between rules of one root op,
 * and rules alike (the same left side and guard text, file, level, opsets,
 * priority, vendor result and skip) shadow the same rules: only the first
 * of them, tried before the others, need be asked.  So n rules cost n times
 * the distinct rules of their root op, not n squared (15,000 copies of one
 * rule were minutes of graftc). */

static int cmp_alike(const void *x, const void *y)
{
	const RuleInfo *a = *(RuleInfo *const *)x, *b = *(RuleInfo *const *)y;
	int c = strcmp(a->key, b->key);
	if (c)
		return c;
	if (!a->text != !b->text)
		return a->text ? -1 : 1;
	if (a->text) {
		if (a->f != b->f)
			return (uintptr_t)a->f < (uintptr_t)b->f ? -1 : 1;
		if (a->level != b->level)
			return a->level < b->level ? -1 : 1;
		if (a->lo != b->lo || a->hi != b->hi)
			return a->lo != b->lo ? (a->lo < b->lo ? -1 : 1) : (a->hi < b->hi ? -1 : 1);
		if (a->r->priority != b->r->priority)
			return a->r->priority < b->r->priority ? -1 : 1;
		if (a->vendor != b->vendor || a->skip != b->skip)
			return a->vendor != b->vendor ? (a->vendor ? 1 : -1) : (a->skip < b->skip ? -1 : 1);
		if ((c = strcmp(a->text, b->text)))
			return c;
	}
	return a->order < b->order ? -1 : a->order > b->order;
}

static bool alike(const RuleInfo *a, const RuleInfo *b)
{
	return a->text && b->text && a->f == b->f && !strcmp(a->key, b->key) && a->level == b->level &&
	       a->lo == b->lo && a->hi == b->hi && a->r->priority == b->r->priority && a->vendor == b->vendor &&
	       a->skip == b->skip && !strcmp(a->text, b->text);
}

static int cmp_key_order(const void *x, const void *y)
{
	const RuleInfo *a = *(RuleInfo *const *)x, *b = *(RuleInfo *const *)y;
	int c = strcmp(a->key, b->key);
	return c ? c : a->order < b->order ? -1 : a->order > b->order;
}

static void make_groups(Analyser *an)
{
	int n = 0;
	an->group = calloc((size_t)an->nrules + 1, sizeof *an->group);
	an->reps = calloc((size_t)an->nrules + 1, sizeof *an->reps);
	if (!an->group || !an->reps)
		abort();
	for (int i = 0; i < an->nrules; i++) {
		RuleInfo *ri = &an->rules[i];
		if (!ri->lhs)
			continue;
		ri->vendor = dsl_expr_emits_vendor(ri->r->rhs);
		ri->text = ri->partial ? NULL : dsl_lhs_text(ri->r);
		ri->rep = true;
		an->group[n++] = ri;
	}
	/* alike rules side by side, the first in source order first */
	qsort(an->group, (size_t)n, sizeof *an->group, cmp_alike);
	for (int i = 1; i < n; i++)
		if (alike(an->group[i - 1], an->group[i]))
			an->group[i]->rep = false;
	qsort(an->group, (size_t)n, sizeof *an->group, cmp_key_order);
	int nreps = 0;
	for (int lo = 0, hi; lo < n; lo = hi) {
		int rlo = nreps;
		for (hi = lo; hi < n && !strcmp(an->group[hi]->key, an->group[lo]->key); hi++)
			if (an->group[hi]->rep)
				an->reps[nreps++] = an->group[hi];
		for (int k = lo; k < hi; k++) {
			an->group[k]->glo = lo;
			an->group[k]->ghi = hi;
			an->group[k]->clo = rlo;
			an->group[k]->chi = nreps;
		}
	}
}

/* Is b shadowed?  The first rule tried before it that surely fires wherever b matches. */
static void check_shadowed(Analyser *an, RuleInfo *b)
{
	const RuleInfo *best = NULL;
	for (int i = b->clo; i < b->chi; i++) {
		RuleInfo *a = an->reps[i];
		if (a == b || !a->lhs || !tried_before(a, b))
			continue;
		if (a->skip != SKIP_NONE || a->level != b->level || !ranges_cover(a, b) || (a->vendor && !b->vendor))
			continue;
		if (a->partial) {
			/* it would shadow b if its result always built: say so rather than pass */
			if (subsumes(an, a, b, false, true) && a->skip == SKIP_NONE) {
				a->skip = SKIP_RESULT;
				snprintf(a->why, sizeof a->why,
				         "its result may fail to build (%s), so whether it shadows '%s' is not decided",
				         a->partial, b->r->name);
			}
			continue;
		}
		if (subsumes(an, a, b, true, true) && (!best || tried_before(a, best)))
			best = a;
	}
	if (best) {
		b->shadowed = true;
		dsl_warning(an->d, b->f, name_pos(b->r),
		            "rule '%s' is shadowed by rule '%s' (%s:%d), tried first with a left side as general: '%s' never fires",
		            b->r->name, best->r->name, best->f->path, best->r->pos.line, b->r->name);
	}
}

/* Does b conflict with a rule of equal priority before it? */
static void check_conflicts(Analyser *an, RuleInfo *b)
{
	for (int i = b->glo; i < b->ghi; i++) {
		RuleInfo *a = an->group[i];
		if (a == b || !a->lhs || a->r->priority != b->r->priority || a->order > b->order || a->shadowed)
			continue;
		if (a->level != b->level || !ranges_meet(a, b))
			continue;
		/* a special case before a general rule is deliberate, not a conflict */
		if (subsumes(an, a, b, false, false) || subsumes(an, b, a, false, false))
			continue;
		if (conflicts(an, a, b)) {
			dsl_warning(an->d, b->f, name_pos(b->r),
			            "rules '%s' (%s:%d) and '%s' have equal priority and rewrite the same match differently: "
			            "'%s' wins by source order; give one of them a priority",
			            a->r->name, a->f->path, a->r->pos.line, b->r->name, a->r->name);
			return;
		}
	}
}

static const char *skip_kind(Skip s)
{
	switch (s) {
	case SKIP_CONSTRUCT: return "unsupported construct";
	case SKIP_RESULT: return "result that may not build";
	default: return NULL;
	}
}

bool dsl_analyse(RuleFile **files, int nfiles, Diag *d, DslAnalysis *out)
{
	int errors = d->nerrors;
	Analyser an = {.d = d, .arena = arena_new()};
	an.absent.kind = T_ABSENT;
	an.absent.id = -1;
	an.absent.cidx = -1;
	int n = 0;
	for (int i = 0; i < nfiles; i++)
		n += files[i] ? files[i]->nrules : 0;
	an.rules = calloc((size_t)n + 1, sizeof *an.rules);
	if (!an.rules)
		abort();
	for (int i = 0; i < nfiles; i++) {
		for (int k = 0; files[i] && k < files[i]->nrules; k++) {
			const Rule *r = files[i]->rules[k];
			if (!r || !r->name || !r->lhs || !r->rhs)
				continue;
			RuleInfo *ri = &an.rules[an.nrules];
			ri->f = files[i];
			ri->r = r;
			ri->order = an.nrules++;
			describe(&an, ri);
		}
	}
	make_groups(&an);
	for (int i = 0; i < an.nrules; i++)
		if (an.rules[i].lhs)
			check_shadowed(&an, &an.rules[i]);
	for (int i = 0; i < an.nrules; i++) {
		RuleInfo *ri = &an.rules[i];
		if (!ri->lhs || ri->shadowed)
			continue;
		check_conflicts(&an, ri);
		if (recreates(&an, ri))
			dsl_error(d, ri->f, ri->r->rhs->pos,
			          "the result of rule '%s' matches its own left side again: it would rewrite forever",
			          ri->r->name);
	}
	if (out) {
		memset(out, 0, sizeof *out);
		out->skipped = calloc((size_t)an.nrules + 1, sizeof *out->skipped);
		if (!out->skipped)
			abort();
		for (int i = 0; i < an.nrules; i++) {
			RuleInfo *ri = &an.rules[i];
			if (ri->skip == SKIP_NONE)
				continue;
			DslUnanalysed *u = &out->skipped[out->nskipped++];
			u->file = ri->f;
			u->rule = ri->r;
			u->kind = skip_kind(ri->skip);
			snprintf(u->reason, sizeof u->reason, "%s", ri->why);
		}
	}
	for (int i = 0; i < an.nrules; i++) {
		free(an.rules[i].terms);
		free(an.rules[i].atoms);
		free(an.rules[i].text);
		free(an.rules[i].vars);
		namemap_free(an.rules[i].var_index);
		namemap_free(an.rules[i].binding_index);
	}
	free(an.rules);
	free(an.group);
	free(an.reps);
	arena_free(an.arena);
	return d->nerrors == errors;
}

void dsl_analysis_free(DslAnalysis *a)
{
	if (!a)
		return;
	free(a->skipped);
	a->skipped = NULL;
	a->nskipped = 0;
}

char *dsl_analysis_summary(const DslAnalysis *a)
{
	if (!a || a->nskipped == 0)
		return NULL;
	static const char *const kinds[] = {"unsupported construct", "result that may not build"};
	const char *seen[2];
	int nseen = 0;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < a->nskipped; i++)
			if (strcmp(a->skipped[i].kind, kinds[k]) == 0) {
				seen[nseen++] = kinds[k];
				break;
			}
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	if (!m)
		abort();
	fputs("not analysed (", m);
	for (int k = 0; k < nseen; k++)
		fprintf(m, "%s%s", k == 0 ? "" : k == nseen - 1 ? " or " : ", ", seen[k]);
	fputs("):", m);
	for (int i = 0; i < a->nskipped; i++)
		fprintf(m, "%s %s", i ? "," : "", a->skipped[i].rule->name);
	fclose(m);
	return s;
}

void dsl_analysis_print(const DslAnalysis *a, RuleFile **files, int nfiles, FILE *out)
{
	for (int i = 0; i < nfiles; i++) {
		for (int k = 0; files[i] && k < files[i]->nrules; k++) {
			const Rule *r = files[i]->rules[k];
			if (!r || !r->name)
				continue;
			const DslUnanalysed *u = NULL;
			for (int j = 0; a && j < a->nskipped && !u; j++)
				if (a->skipped[j].rule == r)
					u = &a->skipped[j];
			if (u)
				fprintf(out, "%s:%d: %s: not analysed: %s\n", files[i]->path, r->pos.line, r->name, u->reason);
			else
				fprintf(out, "%s:%d: %s: analysed\n", files[i]->path, r->pos.line, r->name);
		}
	}
}
