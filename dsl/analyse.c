/* analyse.c - compile-time analysis of checked rules: shadowed rules,
 * conflicting rules and rules that recreate their own left side.
 *
 * graftc calls dsl_analyse_rules after dsl_check found no error, on the
 * programs dsl_lower made of the rules (dsl/mprog.h), the ones both back
 * ends run.  Each left side is read from its program into a small term
 * tree (Term, section "left sides as terms"): ops with their inputs at the
 * positions the program reads, variables (the registers MProg.vnames
 * names), wildcards, literals and attributes, the commutative ops where the
 * program has a commute step, the nodes it asks single use of.  Three
 * questions are then asked of those trees:
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
 * trying every orientation of the first rule's commute sites.  Negative
 * patterns (x:!Conv), rest lists (xs...) and outputs s#k of a node binding
 * are terms too.  Guards (section "guards") are conjunctions of atoms: a
 * shadow needs the later rule's guard to imply every atom of the earlier
 * one's, a conflict needs the two guards not to be provably exclusive, and
 * a recreated left side needs the guard not surely false on the result.
 * Guards are read from the program's guard step too (its variables are the
 * registers MProg.vnames names), and results from the values it builds
 * (MProg.results; a value an MI_PRE step computes is read through it);
 * only whether a result may fail to build (result_partial, its reason
 * worded after the source) is still read from the syntax tree.  Rules with
 * a construct these trees do not model, or that the lowering refused, are
 * listed as not analysed.  The declarations and the exact semantics are in
 * analyse.h. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyse.h"
#include "mprog.h"
#include "check_internal.h"
#include "ir/ir.h"
#include "namemap.h"
#include "opset_forms.h"

#define MAX_COMMUTATIVE 12      /* more orientations than 2^12 are not tried */

/* A literal of a term: a number (with its tolerance ~), a dtype, a string,
 * or a 1-D list of numbers, from the program's checks or the result's text. */
typedef struct Lit {
	bool str, list, dtype;
	double v, tol;              /* a number; a dtype: its DType number */
	const char *s;              /* str */
	const double *items;        /* list */
	int n;
} Lit;

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
	const Lit *lit;             /* T_LIT, T_ALIT (NULL: a right side's computed attribute) */
	bool is_const, optional;    /* T_VAR: as written here (what a pattern asks) */
	bool g_const, g_optional;   /* T_VAR: from the binding (what the value guarantees) */
	bool form_slot;             /* an input older opsets give as an attribute */
	bool shared, fresh, root, vendor;
	bool open;                  /* T_OP: inputs past nslots may be anything (no check says absent) */
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
	const Term *first;          /* T_VAR, T_AVAR of a left side: the variable's first term (VarRef.t) */
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
	int ncommut;
	Skip skip;                  /* why it takes no part as a sure rule */
	char why[200];
	const char *partial;        /* the result may fail to build: what */
	bool shadowed;
	bool vendor;                /* its result emits vendor ops */
	struct Atom *atoms;         /* its guard's top-level && terms (section "guards") */
	int natoms;
	const MRule *m;             /* its program; NULL when the lowering has none */
	const MExpr **pre;          /* per register: what an MI_PRE step computes into it, or NULL */
	bool text;                  /* its left side and guard's text (m) tell it from others; false: partial */
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

/* ---- left sides as terms, read from the rule's program ------------------------------
 *
 * The lowering (dsl/lower.c) decided what the pattern matches: the steps of
 * MProg say which input of which node a register reads, which op must
 * produce it, which attribute it is, and the checks on it (present, a
 * constant, a literal, the same value as a variable, no output of some ops,
 * the inputs from i on absent).  Each register the pattern reads becomes
 * one term, refined by the checks on it as they come; a node's register
 * its op term.  Commutative ops are the program's commute steps; variables
 * are named by the registers they bind (MProg.vnames). */

typedef struct Build {
	Analyser *an;
	RuleInfo *ri;
	const MProg *p;
	Term **node;                /* per register: the op term of a node register */
	Term **val;                 /* per register: the term of a register an input read */
	const MInsn **arg;          /* per register: the MI_ARG that read it (an attribute at older opsets) */
	Term **attr_node;           /* per register: an MI_ATTR temporary's node, */
	const char **attr_name;     /* and the attribute */
	int *maxslot;               /* per register: inputs of the node the program names */
	int *maxattr;
} Build;

/* A number or list literal of the program as a Lit, or NULL if it is computed. */
static const Lit *mlit(Analyser *an, const MExpr *e)
{
	Lit l = {0};
	switch (e->kind) {
	case ME_INT: case ME_BOOL: l.v = (double)e->i; break;
	case ME_FLOAT: l.v = e->f; l.tol = e->tol; break;
	case ME_DTYPE: l.v = (double)e->i; l.dtype = true; break;
	case ME_STR: l.str = true; l.s = e->s; break;
	case ME_NEG: {
		const Lit *k = mlit(an, e->kids[0]);
		if (!k || k->str || k->list || k->dtype)
			return NULL;
		l = *k;
		l.v = -l.v;
		break;
	}
	case ME_AS_FLOAT: case ME_TO_FLOATS:
		return mlit(an, e->kids[0]);
	case ME_LIST: {
		double *items = arena_alloc(an->arena, sizeof *items * (size_t)(e->nkids + 1));
		for (int i = 0; i < e->nkids; i++) {
			const Lit *k = mlit(an, e->kids[i]);
			if (!k || k->str || k->list || k->dtype)
				return NULL;
			items[i] = k->v;
		}
		l.list = true;
		l.items = items;
		l.n = e->nkids;
		break;
	}
	default:
		return NULL;
	}
	Lit *r = arena_alloc(an->arena, sizeof *r);
	*r = l;
	return r;
}

/* The term of register reg: a new one where an input is read. */
static Term *slot_at(Build *b, const MInsn *x)
{
	Term *parent = b->node[x->src];
	if (!parent) {
		unsupported(b->ri, "an input of a node the program does not fetch");
		return NULL;
	}
	if (!parent->open && x->index >= parent->nslots)
		return NULL;            /* an attribute older opsets add, which must be absent: it is */
	const char *vn = b->p->vnames[x->reg];
	Term *t = lhs_term(b->an, b->ri, vn ? T_VAR : T_ANY);
	t->optional = true;         /* until a check says present */
	t->form_slot = x->kind == MI_ARG;
	if (vn) {
		t->name = vn;
		note_var(b->ri, vn, t);
	}
	parent->slots[x->index] = t;
	if (x->index + 1 > parent->nslots)
		parent->nslots = x->index + 1;
	b->val[x->reg] = t;
	if (x->kind == MI_ARG)
		b->arg[x->reg] = x;
	return t;
}

static Term *node_term(Build *b, int reg, Term *t, const char *domain, const char *op, int output)
{
	t->kind = T_OP;
	t->name = op;
	t->domain = domain;
	t->vendor = *domain != 0;
	t->open = true;             /* until an absent-from check closes it */
	t->shared = true;           /* until a single-use step */
	t->output = output;
	t->types = output_types(domain, op, output);
	t->bind = b->p->vnames[reg];
	t->slots = arena_alloc(b->an->arena, sizeof *t->slots * (size_t)(b->maxslot[reg] + 1));
	t->attrs = arena_alloc(b->an->arena, sizeof *t->attrs * (size_t)(b->maxattr[reg] + 1));
	if (t->bind)
		note_var(b->ri, t->bind, t);
	b->node[reg] = t;
	return t;
}

/* A variable bound through an attribute spelling of an input: not modelled
 * (the guard sees a list or number where the terms have a value). */
static bool attr_bound(Build *b, int reg, const char *var)
{
	const MInsn *a = b->arg[reg];
	const Rule *r = b->ri->r;
	if (!a)
		return false;
	for (int i = 0; var && i < r->nbindings; i++)
		if (!strcmp(r->bindings[i].name, var)) {
			if (r->bindings[i].type == TY_VALUE)
				return false;
			break;
		}
	unsupported(b->ri, "an input bound through its older attribute ('%s')", a->nforms ? a->forms[0].attr : "?");
	return true;
}

/* An attribute of a node: a variable, or the literal a check compares it with. */
static void add_attr(Term *n, const char *name, Term *v)
{
	n->attrs[n->nattrs++] = (TAttr){name, v};
}

static void build_check(Build *b, const MInsn *x)
{
	const MExpr *e = x->e;
	bool neg = x->index == 1;
	Analyser *an = b->an;
	Term *t = e->kind == ME_ABSENT_FROM || e->kind == ME_BIN || e->kind == ME_SAME ? NULL : b->val[e->reg];
	switch (e->kind) {
	case ME_ABSENT:
		if (!t)
			return;
		if (neg)
			t->optional = false;
		else
			t->kind = T_ABSENT;
		return;
	case ME_IS_CONST:
		if (t)
			t->is_const = true;
		return;
	case ME_ATTR_IS_SET:
		return;                 /* the op a producer step asks is no attribute */
	case ME_EQUALS: case ME_EQUALS_LIST: {
		if (!t)
			return;
		Lit *l = arena_alloc(an->arena, sizeof *l);
		if (e->kind == ME_EQUALS) {
			l->v = e->f;
			l->tol = e->tol;
		} else {
			l->list = true;
			l->items = e->nums;
			l->n = e->nnums;
		}
		t->kind = T_LIT;
		t->lit = l;
		return;
	}
	case ME_FROM: {
		if (!t)
			return;
		PatNot *nots = arena_alloc(an->arena, sizeof *nots * (size_t)(t->nnots + 1));
		for (int i = 0; i < t->nnots; i++)
			nots[i] = t->nots[i];
		nots[t->nnots] = (PatNot){.domain = e->domain ? e->domain : "", .name = e->s};
		t->nots = nots;
		t->nnots++;
		return;
	}
	case ME_ABSENT_FROM: {
		Term *n = b->node[e->reg];
		if (!n)
			break;
		n->open = false;
		if ((int)e->i > n->nslots)
			n->nslots = (int)e->i;
		return;
	}
	case ME_SAME: {
		int reg = e->kids[0]->reg;
		const MExpr *other = e->kids[1];
		t = b->val[reg];
		if (!t)
			break;
		if (other->kind == ME_OUT) {
			/* s#k, or a node binding's name used as a value */
			Term *n = b->node[other->reg];
			const char *vn = b->p->vnames[other->reg];
			if (n && other->i != n->output) {
				int id = t->id;
				*t = *n;
				t->id = id;
				t->bind = NULL;
				t->root = false;
				t->shared = true;       /* its node is matched where s is */
				t->cidx = -1;
				t->output = (int)other->i;
				t->node_of = node_of(n);
				t->types = output_types(t->domain, t->name, t->output);
				return;
			}
			if (!vn || (!n && other->i != 0)) {
				unsupported(b->ri, "an output '%s#%lld' of a node binding", vn ? vn : "?", (long long)other->i);
				return;
			}
			t->kind = T_VAR;
			t->name = vn;
			t->optional = false;
			return;
		}
		const char *vn = other->kind == ME_REG ? b->p->vnames[other->reg] : NULL;
		if (other->kind == ME_REG && attr_bound(b, reg, vn))
			return;
		if (!vn)
			break;
		t->kind = T_VAR;
		t->name = vn;
		t->optional = false;
		return;
	}
	case ME_BIN: {
		/* an attribute compared with a literal or another variable */
		const MExpr *a = e->kids[0], *want = e->kids[1];
		if (e->op != EX_EQ || a->kind != ME_REG || !b->attr_node[a->reg])
			break;
		while (want->kind == ME_AS_FLOAT || want->kind == ME_TO_FLOATS)
			want = want->kids[0];
		const char *vn = want->kind == ME_REG ? b->p->vnames[want->reg] : NULL;
		const Lit *l = vn ? NULL : mlit(an, want);
		if (!vn && !l) {
			unsupported(b->ri, "an attribute computed from an expression");
			return;
		}
		Term *v = lhs_term(an, b->ri, vn ? T_AVAR : T_ALIT);
		v->name = vn;
		v->lit = l;
		add_attr(b->attr_node[a->reg], b->attr_name[a->reg], v);
		return;
	}
	default:
		break;
	}
	unsupported(b->ri, "a check of its program that the terms lack");
}

/* The left side of rule m as terms; NULL after unsupported(). */
static Term *from_program(Analyser *an, RuleInfo *ri, const MRule *m)
{
	const MProg *p = &m->prog;
	int n = p->nregs + 1;
	Build b = {.an = an, .ri = ri, .p = p};
	b.node = calloc((size_t)n, sizeof *b.node);
	b.val = calloc((size_t)n, sizeof *b.val);
	b.arg = calloc((size_t)n, sizeof *b.arg);
	b.attr_node = calloc((size_t)n, sizeof *b.attr_node);
	b.attr_name = calloc((size_t)n, sizeof *b.attr_name);
	b.maxslot = calloc((size_t)n, sizeof *b.maxslot);
	b.maxattr = calloc((size_t)n, sizeof *b.maxattr);
	if (!b.node || !b.val || !b.arg || !b.attr_node || !b.attr_name || !b.maxslot || !b.maxattr)
		abort();
	int end = p->ninsns;
	for (int i = 0; i < p->ninsns; i++) {
		const MInsn *x = &p->insns[i];
		if (x->kind == MI_GUARD || x->kind == MI_PRE || x->kind == MI_PRE_KNOWN || x->kind == MI_LIKE) {
			end = i;
			break;
		}
		int k = x->kind == MI_INPUT || x->kind == MI_ARG || x->kind == MI_REST ? x->index + 1
		        : x->kind == MI_CHECK && x->e->kind == ME_ABSENT_FROM      ? (int)x->e->i
		                                                                   : 0;
		int src = x->kind == MI_CHECK ? (x->e->kind == ME_ABSENT_FROM ? x->e->reg : -1) : x->src;
		if (src >= 0 && src < p->nregs && k > b.maxslot[src])
			b.maxslot[src] = k;
		if (x->kind == MI_ATTR && x->src >= 0 && x->src < p->nregs)
			b.maxattr[x->src]++;
	}
	Term *root = node_term(&b, 0, lhs_term(an, ri, T_OP), m->root_domain, m->root_op, p->out0);
	root->root = true;
	root->shared = false;
	for (int i = 0; i < end && ri->skip != SKIP_CONSTRUCT; i++) {
		const MInsn *x = &p->insns[i];
		switch (x->kind) {
		case MI_COMMUTE:
			if (b.node[x->src])
				b.node[x->src]->cidx = x->index;
			break;
		case MI_INPUT: case MI_ARG: {
			Term *t = slot_at(&b, x);
			if (t && x->kind == MI_ARG && t->kind == T_VAR)
				attr_bound(&b, x->reg, t->name);
			break;
		}
		case MI_PRODUCER: {
			Term *t = b.val[x->src];
			if (!t) {
				unsupported(ri, "an op where the program reads no input");
				break;
			}
			node_term(&b, x->reg, t, x->domain, x->op, x->index);
			break;
		}
		case MI_ATTR: {
			Term *nd = b.node[x->src];
			if (!nd)
				break;
			const char *vn = p->vnames[x->reg];
			if (vn) {
				Term *v = lhs_term(an, ri, T_AVAR);
				v->name = vn;
				note_var(ri, vn, v);
				add_attr(nd, x->name, v);
			} else {
				b.attr_node[x->reg] = nd;
				b.attr_name[x->reg] = x->name;
			}
			break;
		}
		case MI_REST: {
			Term *nd = b.node[x->src];
			if (!nd)
				break;
			Term *t = lhs_term(an, ri, T_REST);
			t->name = p->vnames[x->reg];
			if (t->name)
				note_var(ri, t->name, t);
			nd->slots[x->index] = t;
			if (x->index + 1 > nd->nslots)
				nd->nslots = x->index + 1;
			break;
		}
		case MI_CHECK:
			build_check(&b, x);
			break;
		case MI_SINGLE_USE:
			if (b.node[x->src])
				b.node[x->src]->shared = false;
			break;
		default:
			break;
		}
	}
	/* what a variable's value guarantees: what its binding occurrence asked */
	for (int i = 0; i < ri->nterms; i++) {
		Term *t = ri->terms[i];
		if (t->kind != T_VAR && t->kind != T_AVAR)
			continue;
		const VarRef *v = find_var(ri, t->name);
		t->first = v ? v->t : NULL;
		if (t->kind != T_VAR)
			continue;
		const Term *first = v && v->t->kind == T_VAR ? v->t : t;
		t->g_const = first->is_const;
		t->g_optional = first->optional || t->optional;
	}
	ri->ncommut = m->nsites;
	free(b.node);
	free(b.val);
	free(b.arg);
	free(b.attr_node);
	free(b.attr_name);
	free(b.maxslot);
	free(b.maxattr);
	return ri->skip == SKIP_CONSTRUCT ? NULL : root;
}

/* ---- right sides as terms (for "recreates its left side") ------------------------ */


static Term *from_result(Analyser *an, RuleInfo *ri, const MVal *v);
static const Lit *mlit(Analyser *an, const MExpr *e);

/* e, or what the MI_PRE step that computes register e computes. */
static const MExpr *computed(const RuleInfo *ri, const MExpr *e)
{
	while (e && e->kind == ME_REG && ri->pre && e->reg >= 0 && e->reg < ri->m->prog.nregs && ri->pre[e->reg])
		e = ri->pre[e->reg];
	return e;
}

/* The pattern variable a result value is, bare (a value, a node binding, an
 * operand read in place), or NULL. */
static const char *result_var(const RuleInfo *ri, const MVal *v)
{
	const MProg *p = &ri->m->prog;
	int reg = v->kind == MV_ARG                                                           ? v->reg
	          : v->kind == MV_EXPR && (v->e->kind == ME_REG || v->e->kind == ME_OUT) ? v->e->reg
	                                                                                   : -1;
	return reg >= 0 && reg < p->nregs ? p->vnames[reg] : NULL;
}

/* A node the right side builds: op on kids, with attributes attrs. */
static Term *built_op(Analyser *an, RuleInfo *ri, const char *domain, const char *op, MVal *const *kids, int n,
                      const MSetAttr *attrs, int nattrs, const char *copy)
{
	const OpSchema *s = op_schema_lookup(domain, op, ri->hi);
	if (!s)
		return new_term(an, ri, T_OPAQUE);
	Term *t = new_term(an, ri, T_OP);
	t->name = op;
	t->domain = domain;
	t->vendor = t->open = *t->domain != 0;
	t->fresh = true;
	t->schema = s;
	t->slots = arena_alloc(an->arena, sizeof *t->slots * (size_t)(n + 1));
	t->nslots = n;
	t->attrs = arena_alloc(an->arena, sizeof *t->attrs * (size_t)(nattrs + 1));
	for (int i = 0; i < n; i++)
		t->slots[i] = kids[i] ? from_result(an, ri, kids[i]) : new_term(an, ri, T_OPAQUE);
	for (int i = 0; i < nattrs; i++) {
		const MExpr *e = computed(ri, attrs[i].e);
		const char *vn = e->kind == ME_REG && e->reg < ri->m->prog.nregs ? ri->m->prog.vnames[e->reg] : NULL;
		Term *a = new_term(an, ri, vn ? T_AVAR : T_ALIT);
		a->name = vn;
		a->lit = vn ? NULL : mlit(an, e);
		t->attrs[t->nattrs++] = (TAttr){attrs[i].name, a};
	}
	if (copy) {
		VarRef *c = find_var(ri, copy);
		t->node = c ? c->t : NULL;
	}
	return t;
}

/* The value v of a result as a term: what it builds, or T_OPAQUE. */
static Term *from_result(Analyser *an, RuleInfo *ri, const MVal *v)
{
	switch (v->kind) {
	case MV_EXPR: case MV_ARG: {
		const char *name = result_var(ri, v);
		if (!name)
			break;
		VarRef *r = find_var(ri, name);
		const Term *first = r && r->t->kind == T_VAR ? r->t : NULL;
		Term *t = new_term(an, ri, T_VAR);
		t->name = name;
		t->is_const = t->g_const = first && first->is_const;
		t->optional = t->g_optional = first && first->optional;
		if (r && (r->t->kind == T_VAR || r->t->kind == T_ANY)) {
			t->nots = r->t->nots;   /* the value x:!Conv matched is still no Conv output */
			t->nnots = r->t->nnots;
		}
		return t;
	}
	case MV_SCALAR: {
		Term *t = new_term(an, ri, T_LIT);
		t->lit = mlit(an, computed(ri, v->e));
		return t;
	}
	case MV_ABSENT:
		return &an->absent;
	case MV_OP:
		return built_op(an, ri, "", v->op, v->kids, v->nkids, NULL, 0, NULL);
	case MV_NODE:
		return built_op(an, ri, v->domain, v->op, v->kids, v->nkids, v->attrs, v->nattrs,
		                v->copy && v->reg < ri->m->prog.nregs ? ri->m->prog.vnames[v->reg] : NULL);
	default:
		break;
	}
	return new_term(an, ri, T_OPAQUE);
}

/* ---- literals ----------------------------------------------------------------------- */

/* Two literal numbers match the same constants: equal, or both nan (a
 * literal nan matches any NaN, as rw_literal_equal says). */
static bool same_num(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

static bool is_num(const Lit *l)
{
	return !l->str && !l->list;
}

/* The same literal (numbers compared as numbers, with their tolerance). */
static bool lit_equal(const Lit *a, const Lit *b)
{
	if (!a || !b || a->str != b->str || a->list != b->list || a->dtype != b->dtype)
		return false;
	if (a->str)
		return strcmp(a->s, b->s) == 0;
	if (a->list) {
		if (a->n != b->n)
			return false;
		for (int i = 0; i < a->n; i++)
			if (!same_num(a->items[i], b->items[i]))
				return false;
		return true;
	}
	return same_num(a->v, b->v) && a->tol == b->tol;
}

static bool num_covers(double va, double ta, double vb, double tb)
{
	return same_num(va, vb) && (ta == tb || (tb > 0 && ta >= tb));
}

/* Does every constant literal b matches also match literal a?  Same number
 * and tolerance, or b within a tolerance no wider than a's; a scalar a
 * covers a list b whose every element it covers. */
static bool lit_covers(const Lit *a, const Lit *b)
{
	if (a->str || b->str || a->dtype || b->dtype)
		return false;
	if (!a->list && !b->list)
		return num_covers(a->v, a->tol, b->v, b->tol);
	if (a->list && b->list) {
		if (a->n != b->n)
			return false;
		for (int i = 0; i < a->n; i++)
			if (!num_covers(a->items[i], 0, b->items[i], 0))
				return false;
		return true;
	}
	if (b->list && b->n > 0) {
		for (int i = 0; i < b->n; i++)
			if (!num_covers(a->v, a->tol, b->items[i], 0))
				return false;
		return true;
	}
	return false;
}

static bool num_compatible(double va, double ta, double vb, double tb)
{
	return same_num(va, vb) || fabs(va - vb) <= ta + tb;
}

/* Can one constant match both literals? */
static bool lit_compatible(const Lit *a, const Lit *b)
{
	if (a->str || b->str || a->dtype || b->dtype)
		return false;
	if (!a->list && !b->list)
		return num_compatible(a->v, a->tol, b->v, b->tol);
	if (a->list && b->list) {
		if (a->n != b->n)
			return false;
		for (int i = 0; i < a->n; i++)
			if (!num_compatible(a->items[i], 0, b->items[i], 0))
				return false;
		return true;
	}
	const Lit *list = a->list ? a : b, *x = list == a ? b : a;
	for (int i = 0; i < list->n; i++)
		if (!num_compatible(list->items[i], 0, x->v, x->tol))
			return false;
	return true;
}

/* Is literal attribute value l the attribute's schema default? */
static bool is_default(const Lit *l, const OpAttrDef *def)
{
	switch ((AttrType)def->type) {
	case ATTR_INT: return is_num(l) && l->v == (double)def->i;
	case ATTR_FLOAT: return is_num(l) && l->v == def->f;
	case ATTR_STRING: return l->str && def->s && strcmp(l->s, def->s) == 0;
	case ATTR_INTS: case ATTR_FLOATS:
		if (!l->list || l->n != def->n)
			return false;
		for (int i = 0; i < l->n; i++)
			if (l->items[i] != (def->type == ATTR_INTS ? (double)def->ints[i] : (double)def->floats[i]))
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
	case T_ALIT: return lit_equal(x->lit, y->lit);
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
		} else if (!bv || (bv->kind == T_ALIT ? !lit_equal(av->lit, bv->lit) :
		                   bv->kind == T_ADEF ? !is_default(av->lit, bv->def) : true)) {
			return false;
		}
	}
	bool swap = a->cidx >= 0 && (s->swaps >> a->cidx & 1);
	int n = a->nslots > b->nslots ? a->nslots : b->nslots;
	for (int i = 0; i < n; i++) {
		if (i >= a->nslots) {
			/* A wants the inputs it does not mention absent (unless open: anything) */
			if (!a->open)
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
		/* past B's inputs: absent (open: anything); a gap of B: any value or none */
		const Term *bi = i < b->nslots ? b->slots[i] : b->open ? NULL : &s->an->absent;
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
		return rb && rb->kind == T_LIT && a->lit && rb->lit && lit_covers(a->lit, rb->lit);
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

/* Once A matched, does it surely commit wherever B would?  The engine
 * refuses a rewrite that leaves a used output of the root unreplaced, or
 * that would rename a graph output to a value without producer: so A must
 * replace every output B does, and where A's result is a bare variable it
 * must be a node of B's match or what B's result is too. */
static bool commits_where(Sub *s, const RuleInfo *a, const RuleInfo *b)
{
	const MProg *pa = &a->m->prog, *pb = &b->m->prog;
	int a0 = pa->out0, b0 = pb->out0;
	int an = pa->nresults, bn = pb->nresults;
	if (a0 > b0 || a0 + an < b0 + bn)
		return false;
	for (int k = 0; k < an; k++) {
		const MVal *e = pa->results[k];
		if (e->kind != MV_ABSENT && !result_var(a, e))
			continue;
		const char *name = result_var(a, e);
		const Term *t = name ? resolve(s, bound(s, name)) : NULL;
		if (t && t->kind == T_OP && !t->shared && !t->root)
			continue;
		int kb = a0 + k - b0;
		if (kb < 0 || kb >= bn)
			return false;
		const char *bname = result_var(b, pb->results[kb]);
		VarRef *v = bname ? find_var(b, bname) : NULL;
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
	if (!ri->lhs || ri->m->prog.nresults != 1 || ri->m->prog.out0 != 0 || ri->ncommut > MAX_COMMUTATIVE)
		return false;
	Term *res = from_result(an, ri, ri->m->prog.results[0]);
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
 * unconstrained (a gap, or past the inputs of an open op), the absent
 * input past the inputs the pattern mentions. */
static const Term *oriented(const Uf *u, const Term *t, int i)
{
	if (i >= t->nslots)
		return t->open ? NULL : u->absent;
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
	if (cx.lit && cy.lit && !(cx.lit->lit && cy.lit->lit && lit_compatible(cx.lit->lit, cy.lit->lit)))
		return false;
	if (cx.alit && cy.alit && !lit_equal(cx.alit->lit, cy.alit->lit))
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
			if (t->first && !unify(u, t->first, t))
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

/* ---- guards ------------------------------------------------------------------------------ */

/* A guard is the conjunction of its top-level && terms, its atoms, read
 * from the program's guard step (MI_GUARD, the expression the back ends
 * evaluate: every element of a list compared with an int is ME_EVERY, two
 * dims shown equal ME_SAME_DIM).  An atom
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

typedef enum ConsKind { C_OPAQUE, C_IN, C_NOTIN, C_RANGE } ConsKind;

typedef struct Atom {
	const MExpr *e;             /* the atom as lowered */
	ConsKind kind;
	const MExpr *subj;          /* the subject (the value, for dtype(v)) */
	bool dtype_of;              /* the subject is dtype(subj) */
	Val v[MAX_VALS];            /* C_IN, C_NOTIN */
	int n;
	double lo, hi;              /* C_RANGE */
	bool lo_in, hi_in;
} Atom;

/* A literal number (an int, float, bool or a negated one). */
static bool mnum(const MExpr *e, double *v)
{
	switch (e->kind) {
	case ME_INT: case ME_BOOL: *v = (double)e->i; return true;
	case ME_FLOAT: *v = e->f; return true;
	case ME_NEG:
		if (e->nkids == 1 && e->kids[0] && mnum(e->kids[0], v)) {
			*v = -*v;
			return true;
		}
		return false;
	default:
		return false;
	}
}

static bool val_of(const MExpr *e, Val *v)
{
	if (mnum(e, &v->num)) {
		v->kind = V_NUM;
		return true;
	}
	if (e->kind == ME_DTYPE && e->i) {
		v->kind = V_DTYPE;
		v->num = (double)e->i;
		return true;
	}
	if (e->kind == ME_STR) {
		v->kind = V_STR;
		v->s = e->s;
		return true;
	}
	return false;
}

/* Does kind k read its register field reg? */
static bool reads_reg(const MExpr *e)
{
	switch (e->kind) {
	case ME_REG: case ME_OUT: case ME_OUTPUTS: case ME_REST_LEN: case ME_REST_AT: case ME_ALL: case ME_ANY:
	case ME_ABSENT_FROM: case ME_FROM: case ME_ATTR_IS_SET:
		return true;
	case ME_SCALAR: case ME_INTSOF: case ME_ABSENT: case ME_IS_CONST: case ME_SAME: case ME_EQUALS:
	case ME_EQUALS_LIST:
		return e->arg;
	default:
		return false;
	}
}

/* The same expression of one rule's program (registers as they are). */
static bool mexpr_equal(const MExpr *x, const MExpr *y)
{
	double a, b;
	if (!x || !y)
		return x == y;
	if (mnum(x, &a) && mnum(y, &b))
		return same_num(a, b) && x->tol == y->tol;
	if (x->kind != y->kind || x->op != y->op || x->nkids != y->nkids || x->arg != y->arg || x->i != y->i ||
	    x->math != y->math || x->to_int != y->to_int || x->ext != y->ext || (reads_reg(x) && x->reg != y->reg))
		return false;
	if ((x->s || y->s) && (!x->s || !y->s || strcmp(x->s, y->s) != 0))
		return false;
	for (int i = 0; i < x->nkids; i++)
		if (!mexpr_equal(x->kids[i], y->kids[i]))
			return false;
	return true;
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

static void set_subject(Atom *a, const MExpr *subj)
{
	a->dtype_of = subj->kind == ME_DTYPEOF && subj->nkids == 1;
	a->subj = a->dtype_of ? subj->kids[0] : subj;
}

/* x op lit (or lit op x) */
static void compare_atom(const MExpr *x, const MExpr *y, ExprOp op, Atom *a)
{
	static const ExprOp flipped[] = {[EX_EQ] = EX_EQ, [EX_NE] = EX_NE, [EX_LT] = EX_GT,
	                                 [EX_LE] = EX_GE, [EX_GT] = EX_LT, [EX_GE] = EX_LE};
	const MExpr *subj = x, *lit = y;
	Val v, w;
	if (val_of(subj, &w)) {
		if (val_of(lit, &v))
			return;             /* two literals */
		subj = y;
		lit = x;
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

static void atom_of(const MExpr *e, Atom *a)
{
	memset(a, 0, sizeof *a);
	a->e = e;
	a->kind = C_OPAQUE;
	if (e->kind == ME_BIN && e->op >= EX_EQ && e->op <= EX_GE) {
		compare_atom(e->kids[0], e->kids[1], (ExprOp)e->op, a);
	} else if (e->kind == ME_EVERY && e->i) {
		/* every element of a list compared with an int: the list is the subject */
		compare_atom(e->kids[0], e->kids[1], (ExprOp)e->op, a);
	} else if (e->kind == ME_BIN && e->op == EX_OR) {
		Atom x, y;
		atom_of(e->kids[0], &x);
		atom_of(e->kids[1], &y);
		if (x.kind == C_IN && y.kind == C_IN && x.dtype_of == y.dtype_of && mexpr_equal(x.subj, y.subj) &&
		    x.n + y.n <= MAX_VALS) {
			*a = x;
			a->e = e;
			for (int i = 0; i < y.n; i++)
				a->v[a->n++] = y.v[i];
		}
	} else if (e->kind == ME_NOT) {
		atom_of(e->kids[0], a);
		a->e = e;
		if (a->kind == C_IN || a->kind == C_NOTIN)
			a->kind = a->kind == C_IN ? C_NOTIN : C_IN;
		else
			a->kind = C_OPAQUE;
	} else if ((e->kind == ME_IS_INT || e->kind == ME_IS_FLOAT) && e->nkids == 1) {
		bool is_int = e->kind == ME_IS_INT;
		const int *dts = is_int ? int_dtypes : float_dtypes;
		size_t n = is_int ? sizeof int_dtypes / sizeof *int_dtypes : sizeof float_dtypes / sizeof *float_dtypes;
		a->kind = C_IN;
		a->dtype_of = true;
		a->subj = e->kids[0];
		for (size_t i = 0; i < n; i++)
			a->v[a->n++] = (Val){.kind = V_DTYPE, .num = dts[i]};
	}
}

static void split_guard(RuleInfo *ri, const MExpr *e, int *cap)
{
	if (!e)
		return;
	if (e->kind == ME_BIN && e->op == EX_AND) {
		split_guard(ri, e->kids[0], cap);
		split_guard(ri, e->kids[1], cap);
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

/* dim(kid 0, kid 1) of ME_SAME_DIM's side `side`, as an expression of its own. */
static const MExpr *same_dim_side(Analyser *an, const MExpr *e, int side)
{
	MExpr *d = arena_alloc(an->arena, sizeof *d);
	d->kind = ME_DIM;
	d->type = MT_INT;
	d->kids = arena_alloc(an->arena, sizeof *d->kids * 2);
	d->kids[0] = e->kids[2 * side];
	d->kids[1] = e->kids[2 * side + 1];
	d->nkids = 2;
	return d;
}

/* An atom S == T (neither a literal) lets what the guard says of T be said
 * of S, and the other way round: len(ints(u)) == len(ints(a)) && len(ints(a)) > 0
 * gives len(ints(u)) > 0.  One step, no chains. */
static void derive_equals(Analyser *an, RuleInfo *ri, int *cap)
{
	int n = ri->natoms;
	for (int i = 0; i < n; i++) {
		const MExpr *e = ri->atoms[i].e;
		Val v;
		const MExpr *sides[2];
		if (e->kind == ME_SAME_DIM && e->nkids == 4) {
			sides[0] = same_dim_side(an, e, 0);
			sides[1] = same_dim_side(an, e, 1);
		} else if (e->kind == ME_BIN && e->op == EX_EQ && !val_of(e->kids[0], &v) && !val_of(e->kids[1], &v)) {
			sides[0] = e->kids[0];
			sides[1] = e->kids[1];
		} else {
			continue;
		}
		for (int side = 0; side < 2; side++) {
			const MExpr *from = sides[side], *to = sides[1 - side];
			for (int k = 0; k < n; k++) {
				Atom *a = &ri->atoms[k];
				if (k == i || a->kind == C_OPAQUE || a->dtype_of || !mexpr_equal(a->subj, from))
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

/* The pattern variable expression v of ri's program names (a register the
 * pattern binds, or a node binding's output), or NULL. */
static const char *mvar(const RuleInfo *ri, const MExpr *v)
{
	if (!v || (v->kind != ME_REG && v->kind != ME_OUT) || v->reg < 0 || v->reg >= ri->m->prog.nregs)
		return NULL;
	const char *n = ri->m->prog.vnames[v->reg];
	return n && find_var(ri, n) ? n : NULL;
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

/* Registers x (of A) and y (of B) hold the same value: pattern variables
 * through the match, others (a quantifier's element) by their name. */
static bool gvar_same(const GMap *g, int x, int y)
{
	const MProg *pa = &g->ri[0]->m->prog, *pb = &g->ri[1]->m->prog;
	if (x < 0 || x >= pa->nregs || y < 0 || y >= pb->nregs)
		return false;
	const char *nx = pa->vnames[x], *ny = pb->vnames[y];
	bool px = nx && find_var(g->ri[0], nx), py = ny && find_var(g->ri[1], ny);
	if (!px || !py) {
		const char *cx = pa->cnames[x], *cy = pb->cnames[y];
		return !px && !py && cx && cy && strcmp(cx, cy) == 0;
	}
	if (g->u)
		return var_class(g->u, 0, nx) == var_class(g->u, 1, ny);
	const char *n = term_name(resolve(g->s, bound(g->s, nx)));
	return n && strcmp(n, ny) == 0;
}

/* What the match binds variable v of side `side` to: under a unifier its
 * class's op term (op) or attribute literal (!op), else (a one-way match,
 * side 0) the term it was bound to. */
static const Term *gvar_term(const GMap *g, int side, const char *v, bool op)
{
	if (g->u) {
		int c = var_class(g->u, side, v);
		return c < 0 ? NULL : op ? g->u->cls[c].op : g->u->cls[c].alit;
	}
	return side == 0 ? resolve(g->s, bound(g->s, v)) : NULL;
}

/* The literal an attribute variable of side `side` surely is, or NULL. */
static const Lit *gvar_lit(const GMap *g, int side, const MExpr *e)
{
	const char *v = mvar(g->ri[side], e);
	if (!v)
		return NULL;
	const Term *t = gvar_term(g, side, v, false);
	return t && t->kind == T_ALIT ? t->lit : NULL;
}

/* The dtypes a variable of side `side` may have: those of the op that
 * makes it, if the match says; 0 when not known. */
static const Term *gvar_op(const GMap *g, int side, const MExpr *v);

static uint32_t gvar_types(const GMap *g, int side, const MExpr *v)
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

/* A fact of one operand (scalar, ints, absent, is_const), in place or of a
 * value: the operand's register in *reg. */
static bool operand_fact(const MExpr *e, int *reg)
{
	if (e->kind != ME_SCALAR && e->kind != ME_INTSOF && e->kind != ME_ABSENT && e->kind != ME_IS_CONST)
		return false;
	if (e->arg) {
		*reg = e->reg;
		return true;
	}
	const MExpr *k = e->nkids == 1 ? e->kids[0] : NULL;
	if (!k || (k->kind != ME_REG && k->kind != ME_OUT))
		return false;
	*reg = k->reg;
	return true;
}

/* x (of A) and y (of B) are the same expression of the same values. */
static bool gx_equal(const GMap *g, const MExpr *x, const MExpr *y)
{
	double a, b;
	x = computed(g->ri[0], x);
	y = computed(g->ri[1], y);
	if (!x || !y)
		return x == y;
	if (mnum(x, &a) && mnum(y, &b))
		return same_num(a, b) && x->tol == y->tol;
	/* a variable: a register, or a node binding's output */
	bool vx = x->kind == ME_REG || x->kind == ME_OUT, vy = y->kind == ME_REG || y->kind == ME_OUT;
	if (vx || vy)
		return vx && vy && gvar_same(g, x->reg, y->reg);
	/* a fact of an operand, read in place (arg: older opsets spell it as an attribute) or as a value */
	int ox, oy;
	if (operand_fact(x, &ox) && operand_fact(y, &oy))
		return x->kind == y->kind && x->i == y->i && gvar_same(g, ox, oy);
	if (x->kind != y->kind || x->op != y->op || x->nkids != y->nkids || x->arg != y->arg || x->math != y->math ||
	    x->to_int != y->to_int || x->ext != y->ext)
		return false;
	if (x->kind != ME_ALL && x->kind != ME_ANY && x->i != y->i)  /* a quantifier's i numbers it */
		return false;
	if ((x->s || y->s) && (!x->s || !y->s || strcmp(x->s, y->s) != 0))
		return false;
	if (reads_reg(x) && !gvar_same(g, x->reg, y->reg))
		return false;
	for (int i = 0; i < x->nkids; i++)
		if (!gx_equal(g, x->kids[i], y->kids[i]))
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
static const Term *gvar_op(const GMap *g, int side, const MExpr *e)
{
	const char *v = mvar(g->ri[side], e);
	if (!v)
		return NULL;
	const Term *t = gvar_term(g, side, v, true);
	return t && t->kind == T_OP ? t : NULL;
}

/* The rank of variable v of side `side`, when an op of the match fixes it
 * (a Transpose's perm literal has one item per axis); -1 if not known. */
static int gvar_rank(const GMap *g, int side, const MExpr *v)
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
		return p->kind == T_ALIT && p->lit && p->lit->list ? p->lit->n : -1;
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
	const MExpr *e = x->subj;
	if (e->kind == ME_RANK && e->nkids == 1) {
		int r = gvar_rank(g, side, e->kids[0]);
		return r >= 0 ? sat(x, &(Val){.kind = V_NUM, .num = r}) : -1;
	}
	if (e->kind != ME_REG)
		return -1;
	const Lit *l = gvar_lit(g, side, e);
	if (!l || l->list)
		return -1;
	Val v = {.kind = l->str ? V_STR : l->dtype ? V_DTYPE : V_NUM, .num = l->v, .s = l->s};
	return sat(x, &v);
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
	const MExpr *xe = x->e, *ye = y->e;
	if (!xe || !ye)
		return same_subject(g, x, y) && cons_exclusive(x, y);
	if (xe->kind == ME_NOT && gx_equal(g, xe->kids[0], ye))
		return true;
	if (ye->kind == ME_NOT && gx_equal(g, xe, ye->kids[0]))
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

/* Is the op a result builds commutative (its two operands may swap)? */
static bool commutes(const RuleInfo *ri, const MVal *v)
{
	if ((v->kind != MV_OP && v->kind != MV_NODE) || v->nkids != 2)
		return false;
	const OpSchema *s = op_schema_lookup(v->domain ? v->domain : "", v->op, ri->hi);
	return s && (s->flags & OPF_COMMUTATIVE);
}

/* Do A's result value x and B's y build the same thing under the unifier? */
static bool results_same(const GMap *g, const MVal *x, const MVal *y)
{
	if (!x || !y)
		return x == y;
	const char *vx = result_var(g->ri[0], x), *vy = result_var(g->ri[1], y);
	if (vx || vy) {
		if (!vx || !vy)
			return false;
		int cx = var_class(g->u, 0, vx), cy = var_class(g->u, 1, vy);
		return cx >= 0 && cy >= 0 ? cx == cy : cx < 0 && cy < 0 && strcmp(vx, vy) == 0;
	}
	if (x->kind != y->kind || x->nkids != y->nkids || x->nattrs != y->nattrs || x->copy != y->copy)
		return false;
	switch (x->kind) {
	case MV_ABSENT:
		return true;
	case MV_EXPR: case MV_SCALAR: case MV_INTS:
		if (!gx_equal(g, x->e, y->e))
			return false;
		if (x->kind == MV_SCALAR)
			return true;    /* the dtype it takes from a value beside it is the context's */
		break;
	case MV_ARG: case MV_DEFAULT:
		if (!gvar_same(g, x->reg, y->reg))
			return false;
		break;
	case MV_EXTERN:
		if (x->ext != y->ext)
			return false;
		for (int i = 0; i < x->nkids; i++)
			if (!x->kids[i] != !y->kids[i] || (!x->kids[i] && !gx_equal(g, x->args[i], y->args[i])))
				return false;
		break;
	case MV_OP: case MV_NODE:
		if (strcmp(x->op, y->op) != 0 || strcmp(x->domain ? x->domain : "", y->domain ? y->domain : "") != 0)
			return false;
		if (x->copy && !gvar_same(g, x->reg, y->reg))
			return false;
		for (int i = 0; i < x->nattrs; i++) {
			bool found = false;
			for (int k = 0; k < y->nattrs && !found; k++)
				found = strcmp(x->attrs[i].name, y->attrs[k].name) == 0 && gx_equal(g, x->attrs[i].e, y->attrs[k].e);
			if (!found)
				return false;
		}
		break;
	}
	bool straight = true;
	for (int i = 0; i < x->nkids && straight; i++)
		straight = results_same(g, x->kids[i], y->kids[i]);
	if (straight)
		return true;
	return commutes(g->ri[0], x) && results_same(g, x->kids[0], y->kids[1]) && results_same(g, x->kids[1], y->kids[0]);
}

static bool all_results_same(const GMap *g)
{
	const MProg *pa = &g->ri[0]->m->prog, *pb = &g->ri[1]->m->prog;
	if (pa->nresults != pb->nresults)
		return false;
	for (int i = 0; i < pa->nresults; i++)
		if (!results_same(g, pa->results[i], pb->results[i]))
			return false;
	return true;
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
		bool differ = overlap && !all_results_same(&g);
		free(u.parent);
		free(u.cls);
		if (differ)
			return true;
	}
	return false;
}

/* ---- the driver ------------------------------------------------------------------------------ */

static void describe(Analyser *an, RuleInfo *ri)
{
	const Rule *r = ri->r;
	const MRule *m = ri->m;
	ri->level = dsl_rule_level(ri->f, r);
	ri->lo = dsl_rule_opset_lo(r);
	ri->hi = dsl_rule_opset_hi(r);
	if (!m) {
		unsupported(ri, "a left side that is not an op");
		return;
	}
	if (m->failed) {
		unsupported(ri, "a construct the code generator does not support");
		return;
	}
	snprintf(ri->key, sizeof ri->key, "%s%s%s", m->root_domain, *m->root_domain ? "." : "", m->root_op);
	ri->pre = calloc((size_t)m->prog.nregs + 1, sizeof *ri->pre);
	if (!ri->pre)
		abort();
	for (int i = 0; i < m->prog.ninsns; i++)
		if (m->prog.insns[i].kind == MI_PRE && m->prog.insns[i].reg < m->prog.nregs)
			ri->pre[m->prog.insns[i].reg] = m->prog.insns[i].e;
	ri->lhs = from_program(an, ri, m);
	if (!ri->lhs)
		return;
	int cap = 0;
	for (int i = 0; i < m->prog.ninsns; i++)
		if (m->prog.insns[i].kind == MI_GUARD)
			split_guard(ri, m->prog.insns[i].e, &cap);
	derive_equals(an, ri, &cap);
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

/* The left side's text, then the guard's (none first). */
static int text_cmp(const RuleInfo *a, const RuleInfo *b)
{
	int c = strcmp(a->m->pat_text, b->m->pat_text);
	if (c || !a->m->guard_text || !b->m->guard_text)
		return c ? c : !!a->m->guard_text - !!b->m->guard_text;
	return strcmp(a->m->guard_text, b->m->guard_text);
}

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
		if ((c = text_cmp(a, b)))
			return c;
	}
	return a->order < b->order ? -1 : a->order > b->order;
}

static bool alike(const RuleInfo *a, const RuleInfo *b)
{
	return a->text && b->text && a->f == b->f && !strcmp(a->key, b->key) && a->level == b->level &&
	       a->lo == b->lo && a->hi == b->hi && a->r->priority == b->r->priority && a->vendor == b->vendor &&
	       a->skip == b->skip && !text_cmp(a, b);
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
		ri->text = !ri->partial;
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
	Diag quiet;                 /* what the lowering refuses the analysis lists as not analysed */
	diag_init(&quiet, NULL);
	MRuleSet *rs = dsl_lower_each(files, nfiles, &quiet);
	bool ok = dsl_analyse_rules(rs, files, nfiles, d, out);
	dsl_lower_free(rs);
	return ok;
}

bool dsl_analyse_rules(const MRuleSet *rs, RuleFile **files, int nfiles, Diag *d, DslAnalysis *out)
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
	int next = 0;               /* rs->rules are in the same order, those with an op at the root */
	for (int i = 0; i < nfiles; i++) {
		for (int k = 0; files[i] && k < files[i]->nrules; k++) {
			const Rule *r = files[i]->rules[k];
			const MRule *m = rs && next < rs->nrules && rs->rules[next].rule == r ? &rs->rules[next++] : NULL;
			if (!r || !r->name || !r->lhs || !r->rhs)
				continue;
			RuleInfo *ri = &an.rules[an.nrules];
			ri->f = files[i];
			ri->r = r;
			ri->m = m;
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
		free(an.rules[i].pre);
		free(an.rules[i].vars);
		namemap_free(an.rules[i].var_index);
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
