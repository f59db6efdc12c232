/* lower.c - checked rules -> matcher programs (mprog.h).
 *
 * The one walk over a rule's syntax tree that both back ends share (the
 * interpreter runs its programs, graftc's compiler/codegen.c prints them
 * as C): the root's attributes, then its operands in canonical order (each
 * a value, an operand that older opsets spell as an attribute, a node of
 * the pattern, a constant check or a literal), then single use, the checks
 * that had to wait for a later binding, the guard, the values the result
 * computes before building, and the result as a tree of values to build.
 * One program per rule: a commutative op's operands are read after a
 * commute step (MI_COMMUTE), where matching tries them in order and then
 * the other way round, backtracking into the second order when a later
 * step fails.
 *
 * Step numbers and --why messages are carried by the steps, for the
 * interpreter, which answers --why for compiled rule sets too.  For
 * graftc's C printer (compiler/codegen.c) the walk also names registers
 * and temporaries as the C it prints names them (v_0_1: input 1 of input 0
 * of the root, by the inputs that lead to it; t_3: the third temporary),
 * marks the steps a decision tree can share, and which steps concern an
 * operand of a commutative swap site. */
#include "mprog.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "ir/ir.h"
#include "namemap.h"

/* ---- helpers the lowering exports (mprog.h) ----------------------------------------------- */

Level dsl_rule_level(const RuleFile *f, const Rule *r)
{
	Level l = r->level ? r->level : f->default_level;
	return l ? l : LEVEL_BASIC;
}

int dsl_rule_opset_lo(const Rule *r)
{
	int lo = r->opset_min > 0 ? r->opset_min : 1;
	return r->min_opset_needed > lo ? r->min_opset_needed : lo;
}

int dsl_rule_opset_hi(const Rule *r)
{
	return r->opset_max > 0 && r->opset_max < OPSCHEMA_MAX_OPSET ? r->opset_max : OPSCHEMA_MAX_OPSET;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Source text from..to with each run of whitespace one space, none inside
 * brackets (malloc'd). */
static char *collapsed(const char *from, const char *to)
{
	char *b = malloc((size_t)(to - from) + 1);
	if (!b)
		abort();
	size_t n = 0;
	bool space = false;
	for (const char *q = from; q < to; q++) {
		if (blank(*q)) {
			space = n > 0;
			continue;
		}
		if (space && !(n && (b[n - 1] == '(' || b[n - 1] == '[')) && *q != ')' && *q != ']')
			b[n++] = ' ';
		space = false;
		b[n++] = *q;
	}
	b[n] = 0;
	return b;
}

void dsl_rule_text(const RuleFile *f, const Rule *r, char **pat, char **guard, char **res)
{
	const char *s = f->src, *end = f->src + f->srclen;
	const char *p = s + r->pos.offset;
	int depth = 0;
	const char *colon = NULL, *arrow = NULL, *iff = NULL, *semi = NULL;
	for (; p < end && !semi; p++) {
		if (*p == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\')
					p++;
			continue;
		}
		if (p + 1 < end && p[0] == '/' && p[1] == '/') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		if (p + 1 < end && p[0] == '/' && p[1] == '*') {
			for (p += 2; p + 1 < end && !(p[0] == '*' && p[1] == '/'); p++)
				;
			p++;
			continue;
		}
		if (*p == '(' || *p == '[')
			depth++;
		else if (*p == ')' || *p == ']')
			depth--;
		else if (depth == 0 && *p == ':' && !colon)
			colon = p;
		else if (depth == 0 && colon && !arrow && p + 1 < end && p[0] == '=' && p[1] == '>')
			arrow = p;
		else if (depth == 0 && colon && !arrow && !iff && p[0] == 'i' && p + 2 < end && p[1] == 'f' &&
		         (p[2] == ' ' || p[2] == '\n' || p[2] == '\t' || p[2] == '(') &&
		         (p[-1] == ' ' || p[-1] == '\n' || p[-1] == '\t' || p[-1] == ')'))
			iff = p;
		else if (depth == 0 && *p == ';' && arrow)
			semi = p;
	}
	if (!colon || !arrow || !semi) {
		*pat = strdup(r->name);
		*guard = NULL;
		*res = strdup("?");
		if (!*pat || !*res)
			abort();
		return;
	}
	const char *cuts[][2] = {{colon + 1, iff ? iff : arrow}, {iff ? iff + 2 : NULL, arrow}, {arrow + 2, semi}};
	char **outs[] = {pat, guard, res};
	for (int k = 0; k < 3; k++)
		*outs[k] = cuts[k][0] ? collapsed(cuts[k][0], cuts[k][1]) : NULL;
}

/* ---- state -------------------------------------------------------------------------------- */

typedef struct Var {
	const char *name;
	const char *cname;          /* graftc's C name, which --why messages show */
	MType kind;
	int reg;
	bool bound;
	const Pattern *node;        /* MT_NODE: the pattern it binds */
} Var;

typedef struct Vec {
	void *p;
	int n, cap;
} Vec;

static void *vec_push(Vec *v, size_t size)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->p = realloc(v->p, size * (size_t)v->cap);
		if (!v->p)
			abort();
	}
	char *slot = (char *)v->p + size * (size_t)v->n++;
	memset(slot, 0, size);
	return slot;
}

typedef struct L {
	Diag *d;
	const RuleFile *f;
	const Rule *r;
	MRuleSet *set;
	RuleFile **files;           /* of the run: their externs */
	int nfiles;
	Arena *A;
	int lo, hi;
	int step;                   /* conditions so far, as graftc counts them */
	int nloop;                  /* commute steps (swap sites) so far */
	Var *vars;
	int nvars;
	NameMap *var_names;         /* name -> its Var (a rule may bind thousands) */
	Vec insns;                  /* MInsn */
	Vec nodes;                  /* int: registers of matched nodes */
	Vec node_desc;              /* const char * */
	Vec shared;                 /* bool */
	Vec refs;                   /* int: how many times the pattern reads each matched node */
	Vec pats;                   /* MPatNode, per matched node */
	Vec deferred;               /* MInsn (step given when placed) */
	Vec pre;                    /* MInsn */
	Vec likes;                  /* MExpr * */
	Vec like_text;              /* const char * */
	Vec regs;                   /* MType */
	Vec cnames;                 /* const char *, per register */
	Vec tree;                   /* bool, per register: a node the decision tree fetches */
	int ntmp;                   /* temporaries named so far (t_1, axis_2, ...) */
	int nquant;                 /* quantifiers so far (graftc's l_1, k_1, q_1) */
	bool build_unknown;
	bool failed;
	bool why;                   /* write the --why texts: failed steps' messages, the guard's parts
	                               (the interpreter's; graftc and the analysis need none) */
} L;

static void unsupported(L *g, SrcPos pos, const char *what, ...) __attribute__((format(printf, 3, 4)));
static void unsupported(L *g, SrcPos pos, const char *what, ...)
{
	char buf[300];
	va_list ap;
	va_start(ap, what);
	vsnprintf(buf, sizeof buf, what, ap);
	va_end(ap);
	if (pos.len <= 0)
		pos.len = 1;
	dsl_error(g->d, g->f, pos, "not supported by the code generator yet: %s", buf);
	g->failed = true;
}

/* f formatted into the arena. */
static char *vS(L *g, const char *f, va_list ap)
{
	char *tmp = NULL;
	if (vasprintf(&tmp, f, ap) < 0)
		abort();
	char *r = arena_strdup(g->A, tmp);
	free(tmp);
	return r;
}

static char *S(L *g, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *S(L *g, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char *r = vS(g, f, ap);
	va_end(ap);
	return r;
}

/* A --why text (a failed step's message): formatted as S() does, or ""
 * when the rules are lowered for graftc or the analysis. */
static char *W(L *g, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *W(L *g, const char *f, ...)
{
	if (!g->why)
		return "";
	va_list ap;
	va_start(ap, f);
	char *r = vS(g, f, ap);
	va_end(ap);
	return r;
}

/* A register; cname: its C name, or the prefix of a temporary. */
static int new_reg_named(L *g, MType t, const char *cname)
{
	*(MType *)vec_push(&g->regs, sizeof(MType)) = t;
	*(const char **)vec_push(&g->cnames, sizeof(char *)) = cname;
	vec_push(&g->tree, sizeof(bool));
	return g->regs.n - 1;
}

static int new_reg(L *g, MType t)
{
	return new_reg_named(g, t, NULL);
}

/* A node the decision tree fetches: the tree makes its tests only before
 * the first commute step, as what comes after depends on the orientation. */
static bool is_tree(L *g, int reg)
{
	return ((bool *)g->tree.p)[reg] && g->nloop == 0;
}

static Var *var(L *g, const char *name)
{
	return namemap_get(g->var_names, name);
}

static MExpr *ex(L *g, MExprKind k, MType t)
{
	MExpr *e = arena_alloc(g->A, sizeof *e);
	e->kind = k;
	e->type = t;
	return e;
}

static MExpr *ex1(L *g, MExprKind k, MType t, MExpr *a)
{
	MExpr *e = ex(g, k, t);
	e->kids = arena_alloc(g->A, sizeof *e->kids * 2);
	e->kids[0] = a;
	e->nkids = a ? 1 : 0;
	return e;
}

static MExpr *ex2(L *g, MExprKind k, MType t, MExpr *a, MExpr *b)
{
	MExpr *e = ex1(g, k, t, a);
	e->kids[1] = b;
	e->nkids = 2;
	return e;
}

static MExpr *reg_ex(L *g, int reg, MType t)
{
	MExpr *e = ex(g, ME_REG, t);
	e->reg = reg;
	return e;
}

static MExpr *int_ex(L *g, int64_t i)
{
	MExpr *e = ex(g, ME_INT, MT_INT);
	e->i = i;
	return e;
}

static MInsn *insn(L *g, MInsnKind k)
{
	MInsn *x = vec_push(&g->insns, sizeof(MInsn));
	x->kind = k;
	return x;
}

/* A failing step: numbered in the order graftc numbers them. */
static MInsn *check(L *g, MExpr *e, bool neg, int why_kind, char *why)
{
	MInsn *x = insn(g, MI_CHECK);
	x->e = e;
	x->index = neg;
	x->step = g->step++;
	x->why_kind = why_kind;
	x->why = why;
	return x;
}

static MInsn *defer(L *g, MExpr *e, int why_kind, char *why)
{
	MInsn *x = vec_push(&g->deferred, sizeof(MInsn));
	x->kind = MI_CHECK;
	x->e = e;
	x->why_kind = why_kind;
	x->why = why;
	return x;
}

static void add_node(L *g, int reg, bool shared, const Pattern *p)
{
	*(int *)vec_push(&g->nodes, sizeof(int)) = reg;
	*(const char **)vec_push(&g->node_desc, sizeof(char *)) = p->bind ? W(g, "%s (%s)", p->bind, p->name)
	                                                                  : W(g, "%s", p->name);
	*(bool *)vec_push(&g->shared, sizeof(bool)) = shared;
	*(int *)vec_push(&g->refs, sizeof(int)) = 1;
	MPatNode *pn = vec_push(&g->pats, sizeof(MPatNode));
	*pn = (MPatNode){.reg = reg, .op = p->name, .domain = p->domain ? p->domain : "", .schema = p->schema,
	                 .output = p->output};
}

/* One more read of the matched node in register reg (s#k, or its binding's
 * name used again: Mul(xf @ Cast(x), xf)). */
static void count_ref(L *g, int reg)
{
	for (int i = 0; i < g->nodes.n; i++)
		if (((int *)g->nodes.p)[i] == reg)
			((int *)g->refs.p)[i]++;
}

/* Why kinds: the values of RwWhyKind (rewrite.h), which dsl/ cannot include. */
enum { W_PRODUCER = 3, W_ATTR = 4, W_NOT_CONST = 5, W_VALUE = 6, W_OPERANDS = 7, W_SAME = 8, W_GUARD = 11,
       W_UNKNOWN = 12 };

/* ---- C names (what graftc calls a variable, shown in some --why messages) ------------------ */

static const char *const c_reserved[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
	"extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
	"short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
	"volatile", "while", "bool", "true", "false", "rw", "n", "nodes", "unknown", "in", "m", NULL,
};

char *dsl_c_name(const char *name)
{
	bool clash = false;
	for (int i = 0; c_reserved[i] && !clash; i++)
		clash = strcmp(c_reserved[i], name) == 0 && strcmp(name, "m") != 0;
	const char *u = strchr(name, '_');
	if (u && u - name <= 3 && u[1] >= '0' && u[1] <= '9')
		clash = true;
	char *r = NULL;
	if (asprintf(&r, clash ? "%s_" : "%s", name) < 0)
		abort();
	return r;
}

/* ---- opset forms ----------------------------------------------------------------------------- */

static int attr_forms(L *g, const char *op, int input, const MForm **out)
{
	size_t n;
	const OpsetForm *all = opset_forms_all(&n);
	int count = 0;
	for (size_t i = 0; i < n; i++)
		if (all[i].kind == FORM_ATTR && all[i].input == input && !strcmp(all[i].op, op) && all[i].first <= g->hi &&
		    all[i].last >= g->lo)
			count++;
	if (!out)
		return count;
	MForm *f = count ? arena_alloc(g->A, sizeof *f * (size_t)count) : NULL;
	for (size_t i = 0, k = 0; i < n; i++)
		if (all[i].kind == FORM_ATTR && all[i].input == input && !strcmp(all[i].op, op) && all[i].first <= g->hi &&
		    all[i].last >= g->lo)
			f[k++] = (MForm){input, all[i].attr, all[i].first, all[i].last};
	*out = f;
	return count;
}

bool dsl_moved_form(const char *op, int input, int lo, int hi)
{
	size_t n;
	const OpsetForm *all = opset_forms_all(&n);
	for (size_t i = 0; i < n; i++)
		if (all[i].kind == FORM_MOVED && all[i].input == input && strcmp(all[i].op, op) == 0 &&
		    all[i].first <= hi && all[i].last >= lo)
			return true;
	return false;
}

const OpAttrDef *dsl_attr_def(const OpSchema *s, const char *name)
{
	if (!s)
		return NULL;
	const OpAttrDef *a = op_schema_attr(s, name);
	for (int v = s->since_version - 1; !a && v >= 1 && !*s->domain; v--) {
		const OpSchema *old = op_schema_lookup("", s->name, v);
		a = old ? op_schema_attr(old, name) : NULL;
	}
	return a;
}

/* ---- expressions -------------------------------------------------------------------------------- */

static MExpr *num_expr(L *g, const Expr *e);
static void add_part(L *g, const Expr *e, Vec *parts);
static void *vec_to_arena(L *g, Vec *v, size_t size);

static MType mtype(DslType t)
{
	switch (t) {
	case TY_INT: return MT_INT;
	case TY_FLOAT: return MT_FLOAT;
	case TY_BOOL: return MT_BOOL;
	case TY_DTYPE: return MT_DTYPE;
	case TY_STRING: return MT_STR;
	case TY_INTS: return MT_INTS;
	case TY_FLOATS: return MT_FLOATS;
	default: return MT_VALUE;
	}
}

/* A value for a fact: a value register, a node's output, xs[i]; an operand
 * register when allow_arg. */
static MExpr *fact_value(L *g, const Expr *e, bool allow_arg)
{
	if (e->kind == EXPR_CALL && strcmp(e->s, "value") == 0 && e->n == 1)
		e = e->items[0];
	if (e->kind == EXPR_VAR) {
		Var *v = var(g, e->s);
		if (v && v->kind == MT_VALUE)
			return reg_ex(g, v->reg, MT_VALUE);
		if (v && v->kind == MT_NODE) {
			MExpr *x = ex(g, ME_OUT, MT_VALUE);
			x->reg = v->reg;
			x->i = v->node ? v->node->output : 0;
			return x;
		}
		if (v && v->kind == MT_ARG && allow_arg)
			return reg_ex(g, v->reg, MT_ARG);
		if (v && v->kind == MT_ARG) {
			unsupported(g, e->pos, "'%s' here: an operand that older opsets spell as an attribute", e->s);
			return int_ex(g, 0);
		}
	}
	if (e->kind == EXPR_INDEX && e->items[0]->type == TY_VALUES)
		return num_expr(g, e);
	unsupported(g, e->pos, "a fact of a value built by the result");
	return int_ex(g, 0);
}

static bool is_arg_var(L *g, const Expr *e)
{
	if (e->kind == EXPR_CALL && strcmp(e->s, "value") == 0 && e->n == 1)
		e = e->items[0];
	Var *v = e->kind == EXPR_VAR ? var(g, e->s) : NULL;
	return v && v->kind == MT_ARG;
}

static int extern_index(L *g, const Expr *call)
{
	const Extern *x = NULL;
	for (int i = 0; i < g->set->nexterns; i++)
		if (!strcmp(g->set->externs[i].decl->name, call->s))
			return i;
	for (int i = 0; !x && i < g->nfiles; i++)
		for (int k = 0; g->files[i] && k < g->files[i]->nexterns; k++)
			if (!strcmp(g->files[i]->externs[k]->name, call->s))
				x = g->files[i]->externs[k];
	if (!x)
		return -1;
	int n = g->set->nexterns++;
	g->set->externs = realloc(g->set->externs, sizeof *g->set->externs * (size_t)(n + 1));
	if (!g->set->externs)
		abort();
	g->set->externs[n] = (MExtern){x, x->c_name ? x->c_name : x->name, g->f, call->pos};
	return n;
}

static MExpr *call_expr(L *g, const Expr *e)
{
	const char *f = e->s;
#define ARG(i) (e->n > (i) ? e->items[i] : NULL)
	static const struct { const char *name; MExprKind k; MType t; } facts[] = {
		{"rank", ME_RANK, MT_INT}, {"shape", ME_SHAPE, MT_INTS}, {"numel", ME_NUMEL, MT_INT},
		{"dtype", ME_DTYPEOF, MT_DTYPE}, {"uses", ME_USES, MT_INT},
	};
	for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
		if (!strcmp(f, facts[i].name))
			return ex1(g, facts[i].k, facts[i].t, fact_value(g, ARG(0), false));
	if (!strcmp(f, "dim"))
		return ex2(g, ME_DIM, MT_INT, fact_value(g, ARG(0), false), num_expr(g, ARG(1)));
	if (!strcmp(f, "outputs")) {
		Var *v = var(g, ARG(0)->s);
		MExpr *x = ex(g, ME_OUTPUTS, MT_INT);
		x->reg = v ? v->reg : 0;
		return x;
	}
	if (!strcmp(f, "scalar") || !strcmp(f, "ints")) {
		MExprKind k = f[0] == 's' ? ME_SCALAR : ME_INTSOF;
		MType t = f[0] == 's' ? MT_FLOAT : MT_INTS;
		MExpr *a = fact_value(g, ARG(0), true);
		if (is_arg_var(g, ARG(0))) {
			MExpr *x = ex(g, k, t);
			x->arg = true;
			x->reg = a->reg;
			return x;
		}
		return ex1(g, k, t, a);
	}
	if (!strcmp(f, "absent")) {
		Var *v = var(g, ARG(0)->s);
		if (v && v->kind == MT_ARG) {
			MExpr *x = ex(g, ME_ABSENT, MT_BOOL);
			x->arg = true;
			x->reg = v->reg;
			return x;
		}
		return ex1(g, ME_ABSENT, MT_BOOL, reg_ex(g, v ? v->reg : 0, MT_VALUE));
	}
	if (!strcmp(f, "len")) {
		const Expr *l = ARG(0);
		if (l->type == TY_VALUES) {
			Var *v = var(g, l->s);
			MExpr *x = ex(g, ME_REST_LEN, MT_INT);
			x->reg = v ? v->reg : 0;
			return x;
		}
		if (l->type == TY_INTS || l->type == TY_FLOATS)
			return ex1(g, ME_LEN, MT_INT, num_expr(g, l));
		unsupported(g, e->pos, "len() of strings");
		return int_ex(g, 0);
	}
	if (!strcmp(f, "is_identity"))
		return ex1(g, ME_IS_IDENTITY, MT_BOOL, num_expr(g, ARG(0)));
	if (!strcmp(f, "compose"))
		return ex2(g, ME_COMPOSE, MT_INTS, num_expr(g, ARG(0)), num_expr(g, ARG(1)));
	if (!strcmp(f, "ones"))
		return ex1(g, ME_ONES, MT_INTS, num_expr(g, ARG(0)));
	if (!strcmp(f, "range"))
		return ex1(g, ME_RANGE, MT_INTS, num_expr(g, ARG(0)));
	if (!strcmp(f, "dims"))
		return ex2(g, ME_DIMS, MT_INTS, fact_value(g, ARG(0), false), num_expr(g, ARG(1)));
	if (!strcmp(f, "is_float") || !strcmp(f, "is_int"))
		return ex1(g, f[3] == 'f' ? ME_IS_FLOAT : ME_IS_INT, MT_BOOL, fact_value(g, ARG(0), false));
	if (!strcmp(f, "merge_axes")) {
		MExpr *x = ex(g, ME_MERGE_AXES, MT_INTS);
		x->kids = arena_alloc(g->A, sizeof *x->kids * 3);
		x->kids[0] = num_expr(g, ARG(0));
		x->kids[1] = num_expr(g, ARG(1));
		x->kids[2] = num_expr(g, ARG(2));
		x->nkids = 3;
		return x;
	}
	if (!strcmp(f, "distinct"))
		return ex1(g, ME_DISTINCT, MT_BOOL, num_expr(g, ARG(0)));
	if (!strcmp(f, "finite") || !strcmp(f, "moderate"))
		return ex1(g, f[0] == 'f' ? ME_FINITE : ME_MODERATE, MT_BOOL, fact_value(g, ARG(0), false));
	if (!strcmp(f, "opset"))
		return ex(g, ME_OPSET, MT_INT);
	if (!strcmp(f, "value"))
		return fact_value(g, e, false);
	/* math on plain numbers */
	static const struct { const char *name, *c; MMath math; int nargs; } math[] = {
		{"abs", "fabs", MM_FABS, 1}, {"ceil", "ceil", MM_CEIL, 1}, {"floor", "floor", MM_FLOOR, 1},
		{"erf", "erf", MM_ERF, 1}, {"exp", "exp", MM_EXP, 1}, {"log", "log", MM_LOG, 1},
		{"sqrt", "sqrt", MM_SQRT, 1}, {"tanh", "tanh", MM_TANH, 1}, {"max", "fmax", MM_FMAX, 2},
		{"min", "fmin", MM_FMIN, 2}, {"pow", "pow", MM_POW, 2}, {"neg", "neg", MM_NEG, 1},
		{"relu", "relu", MM_RELU, 1}, {"reciprocal", "reciprocal", MM_RECIPROCAL, 1},
		{"sigmoid", "sigmoid", MM_SIGMOID, 1},
	};
	int m = -1;
	for (int i = 0; i < (int)(sizeof math / sizeof math[0]); i++)
		if (!strcmp(math[i].name, f))
			m = i;
	if (m < 0 || e->n != math[m].nargs) {
		unsupported(g, e->pos, "'%s' in a guard", f);
		return int_ex(g, 0);
	}
	MExpr *a = num_expr(g, ARG(0));
	MExpr *x = e->n == 2 ? ex2(g, ME_MATH, MT_FLOAT, a, num_expr(g, ARG(1))) : ex1(g, ME_MATH, MT_FLOAT, a);
	x->fn = math[m].c;
	x->math = math[m].math;
	if (x->math == MM_NEG || x->math == MM_RELU)
		x->type = a->type == MT_FLOAT ? MT_FLOAT : MT_INT;
	else if (x->math != MM_RECIPROCAL && x->math != MM_SIGMOID && e->type == TY_INT)
		x->to_int = true, x->type = MT_INT;
	return x;
#undef ARG
}

static MExpr *extern_call(L *g, const Expr *e)
{
	int xi = extern_index(g, e);
	if (xi < 0) {
		unsupported(g, e->pos, "call of '%s'", e->s);
		return int_ex(g, 0);
	}
	const Extern *x = g->set->externs[xi].decl;
	MExpr *c = ex(g, ME_EXTERN, mtype(x->ret));
	c->ext = xi;
	c->kids = arena_alloc(g->A, sizeof *c->kids * (size_t)(e->n + 1));
	c->nkids = e->n;
	for (int i = 0; i < e->n; i++) {
		DslType p = i < x->nparams ? x->params[i] : TY_UNKNOWN;
		if (p == TY_VALUE || p == TY_TENSOR)
			c->kids[i] = fact_value(g, e->items[i], false);
		else if (p == TY_FLOATS && e->items[i]->type == TY_INTS)
			c->kids[i] = ex1(g, ME_TO_FLOATS, MT_FLOATS, num_expr(g, e->items[i]));
		else
			c->kids[i] = num_expr(g, e->items[i]);
	}
	return c;
}

static MExpr *num_expr(L *g, const Expr *e)
{
	switch (e->kind) {
	case EXPR_INT: return int_ex(g, e->i);
	case EXPR_FLOAT: {
		MExpr *x = ex(g, ME_FLOAT, MT_FLOAT);
		x->f = e->f;
		return x;
	}
	case EXPR_BOOL: {
		MExpr *x = ex(g, ME_BOOL, MT_BOOL);
		x->i = e->i != 0;
		return x;
	}
	case EXPR_STRING: {
		MExpr *x = ex(g, ME_STR, MT_STR);
		x->s = arena_strdup(g->A, e->s);
		x->slen = strlen(e->s);
		return x;
	}
	case EXPR_LIST: {
		if (e->type == TY_STRINGS) {
			unsupported(g, e->pos, "lists of strings");
			return int_ex(g, 0);
		}
		MExpr *x = ex(g, ME_LIST, e->type == TY_FLOATS ? MT_FLOATS : MT_INTS);
		x->kids = arena_alloc(g->A, sizeof *x->kids * (size_t)(e->n + 1));
		x->nkids = e->n;
		for (int i = 0; i < e->n; i++)
			x->kids[i] = num_expr(g, e->items[i]);
		if (e->n > 64) /* RWG_MAX_INTS: what a list literal in C may hold */
			unsupported(g, e->pos, "a list of more than 64 items");
		return x;
	}
	case EXPR_VAR: {
		Var *v = var(g, e->s);
		if (!v) {
			MExpr *x = ex(g, ME_DTYPE, MT_DTYPE);
			x->i = dsl_is_dtype_name(e->s) ? dtype_from_name(strcmp(e->s, "float32") == 0   ? "float"
			                                                 : strcmp(e->s, "float64") == 0 ? "double"
			                                                                                : e->s)
			                               : 0;
			return x;
		}
		if (v->kind == MT_VALUE || v->kind == MT_NODE || v->kind == MT_ARG)
			return fact_value(g, e, true);
		return reg_ex(g, v->reg, v->kind);
	}
	case EXPR_CALL:
		if (dsl_builtin_lookup(e->s))
			return call_expr(g, e);
		return extern_call(g, e);
	case EXPR_UNARY: {
		MExpr *a = num_expr(g, e->items[0]);
		if (e->op == EX_NOT)
			return ex1(g, ME_NOT, MT_BOOL, a);
		return ex1(g, ME_NEG, a->type == MT_FLOAT ? MT_FLOAT : MT_INT, a);
	}
	case EXPR_BINARY: {
		const Expr *l = e->items[0], *rr = e->items[1];
		MExpr *a = num_expr(g, l), *b = num_expr(g, rr);
		bool lists = l->type == TY_INTS || l->type == TY_FLOATS || rr->type == TY_INTS || rr->type == TY_FLOATS;
		bool strs = l->type == TY_STRING || rr->type == TY_STRING;
		bool cmp = e->op == EX_EQ || e->op == EX_NE || e->op == EX_LT || e->op == EX_LE || e->op == EX_GT ||
		           e->op == EX_GE;
		bool order = cmp && e->op != EX_EQ && e->op != EX_NE;
		if (cmp && ((l->type == TY_INTS && (rr->type == TY_INT || (order && rr->type == TY_INTS))) ||
		            (l->type == TY_INT && rr->type == TY_INTS))) {
			/* every element: the list goes left (0 < ints(s) is ints(s) > 0) */
			bool flip = l->type != TY_INTS;
			MExpr *x = ex2(g, ME_EVERY, MT_BOOL, flip ? b : a, flip ? a : b);
			static const ExprOp mirror[] = {[EX_EQ] = EX_EQ, [EX_NE] = EX_NE, [EX_LT] = EX_GT,
			                                [EX_LE] = EX_GE, [EX_GT] = EX_LT, [EX_GE] = EX_LE};
			x->op = flip ? (int)mirror[e->op] : (int)e->op;
			x->i = x->kids[1]->type == MT_INT;
			return x;
		}
		if (e->op == EX_EQ && l->kind == EXPR_CALL && rr->kind == EXPR_CALL && !strcmp(l->s, "dim") &&
		    !strcmp(rr->s, "dim") && l->n == 2 && rr->n == 2) {
			/* dims shown equal: a symbol (batch, seq) equals itself */
			MExpr *x = ex(g, ME_SAME_DIM, MT_BOOL);
			x->kids = arena_alloc(g->A, sizeof *x->kids * 4);
			x->nkids = 4;
			x->kids[0] = fact_value(g, l->items[0], false);
			x->kids[1] = num_expr(g, l->items[1]);
			x->kids[2] = fact_value(g, rr->items[0], false);
			x->kids[3] = num_expr(g, rr->items[1]);
			return x;
		}
		MExpr *x = ex2(g, ME_BIN, MT_BOOL, a, b);
		x->op = e->op;
		switch (e->op) {
		case EX_CONCAT:
			if (!(l->type == TY_INTS && rr->type == TY_INTS))
				unsupported(g, e->pos, "'++' of floats");
			x->type = MT_INTS;
			return x;
		case EX_EQ:
		case EX_NE:
			if (lists && !strs && !(l->type == TY_INTS && rr->type == TY_INTS)) {
				if (l->type == TY_INTS)
					x->kids[0] = ex1(g, ME_TO_FLOATS, MT_FLOATS, a);
				if (rr->type == TY_INTS)
					x->kids[1] = ex1(g, ME_TO_FLOATS, MT_FLOATS, b);
			}
			return x;
		case EX_DIV:
			x->type = l->type == TY_INT && rr->type == TY_INT ? MT_INT : MT_FLOAT;
			return x;
		case EX_ADD: case EX_SUB: case EX_MUL:
			if (lists || strs)
				break;
			x->type = a->type == MT_FLOAT || b->type == MT_FLOAT ? MT_FLOAT : MT_INT;
			return x;
		case EX_LT: case EX_LE: case EX_GT: case EX_GE: case EX_AND: case EX_OR:
			if (lists || strs)
				break;
			return x;
		default:
			break;
		}
		unsupported(g, e->pos, "this operator on lists or strings");
		return x;
	}
	case EXPR_QUANT: {
		/* the variable is a register of its own, named in the condition only */
		int n = ++g->nquant;
		MExpr *list = num_expr(g, e->items[0]);
		Var *q = arena_alloc(g->A, sizeof *q);
		char *c = dsl_c_name(e->s);
		q->name = e->s;
		q->cname = arena_strdup(g->A, c);
		free(c);
		q->kind = MT_INT;
		q->reg = new_reg_named(g, MT_INT, q->cname);
		q->bound = true;
		Var *outer = var(g, e->s);
		namemap_put(g->var_names, e->s, q);
		MExpr *x = ex2(g, e->op == EX_OR ? ME_ANY : ME_ALL, MT_BOOL, list, num_expr(g, e->items[1]));
		namemap_put(g->var_names, e->s, outer);
		x->reg = q->reg;
		x->i = n;
		return x;
	}
	case EXPR_INDEX: {
		const Expr *l = e->items[0];
		MExpr *b = num_expr(g, e->items[1]);
		if (l->type == TY_VALUES) {
			Var *v = var(g, l->s);
			MExpr *x = ex1(g, ME_REST_AT, MT_VALUE, b);
			x->reg = v ? v->reg : 0;
			return x;
		}
		return ex2(g, ME_INDEX, l->type == TY_FLOATS ? MT_FLOAT : MT_INT, num_expr(g, l), b);
	}
	default:
		unsupported(g, e->pos, "this expression in a guard or attribute");
		return int_ex(g, 0);
	}
}

/* Does evaluating e pass graftc's `&unknown` (a fact that may be unknown)? */
static bool may_unknown(const MExpr *e)
{
	switch (e->kind) {
	case ME_RANK: case ME_SHAPE: case ME_DIM: case ME_SAME_DIM: case ME_NUMEL: case ME_DTYPEOF: case ME_SCALAR: case ME_INTSOF:
	case ME_COMPOSE: case ME_ONES: case ME_REST_AT: case ME_INDEX: case ME_RANGE: case ME_DIMS:
	case ME_IS_FLOAT: case ME_IS_INT: case ME_MERGE_AXES: case ME_FINITE: case ME_MODERATE:
		return true;
	case ME_BIN:
		if (e->op == EX_CONCAT || (e->op == EX_DIV && e->type == MT_INT))
			return true;
		break;
	default:
		break;
	}
	for (int i = 0; i < e->nkids; i++)
		if (e->kids[i] && may_unknown(e->kids[i]))
			return true;
	return false;
}

/* Does e read a register not bound yet (then its check waits)? */
static bool reads_unbound(L *g, const MExpr *e)
{
	if (e->kind == ME_REG || e->kind == ME_OUT || e->kind == ME_OUTPUTS || e->kind == ME_REST_LEN ||
	    e->kind == ME_REST_AT || e->arg)
		for (int i = 0; i < g->nvars; i++)
			if (g->vars[i].reg == e->reg && !g->vars[i].bound)
				return true;
	for (int i = 0; i < e->nkids; i++)
		if (e->kids[i] && reads_unbound(g, e->kids[i]))
			return true;
	return false;
}

/* ---- results ------------------------------------------------------------------------------------ */

static MVal *val(L *g, MValKind k)
{
	MVal *v = arena_alloc(g->A, sizeof *v);
	v->kind = k;
	return v;
}

bool dsl_literal_value(const Expr *e, double *v, double *tol)
{
	*tol = 0;
	if (e->kind == EXPR_UNARY && e->op == EX_NEG && dsl_literal_value(e->items[0], v, tol)) {
		*v = -*v;
		return true;
	}
	switch (e->kind) {
	case EXPR_INT: *v = (double)e->i; return true;
	case EXPR_BOOL: *v = (double)e->i; return true;
	case EXPR_FLOAT: *v = e->f; *tol = e->tol; return true;
	default: return false;
	}
}

bool dsl_is_literal(const Expr *e)
{
	double v, tol;
	return dsl_literal_value(e, &v, &tol) || e->kind == EXPR_STRING ||
	       (e->kind == EXPR_VAR && dsl_is_dtype_name(e->s) && !e->binding);
}

/* A computed expression of the result: literals and plain variables as they
 * are, anything else computed into a register before building. */
static MExpr *pre_value(L *g, const Expr *e)
{
	MExpr *x = num_expr(g, e);
	if (dsl_is_literal(e))
		return x;
	if (e->kind == EXPR_VAR) {
		Var *v = var(g, e->s);
		if (v && v->kind != MT_VALUE && v->kind != MT_NODE && v->kind != MT_ARG)
			return x;
	}
	Vec part = {0};
	if (may_unknown(x) && !g->failed)
		add_part(g, e, &part);
	MInsn *p = vec_push(&g->pre, sizeof(MInsn));
	p->kind = MI_PRE;
	p->reg = new_reg_named(g, x->type, "a");
	p->tmp = ++g->ntmp;
	p->e = x;
	p->nparts = part.n;
	p->parts = part.n ? vec_to_arena(g, &part, sizeof(MPart)) : NULL;
	free(part.p);
	return reg_ex(g, p->reg, x->type);
}

/* A pattern value (never absent) whose dtype e's value has, or NULL; *text
 * gets graftc's C text for it (for a --why message). */
static MExpr *like_of(L *g, const Expr *e, const char **text)
{
	switch (e->kind) {
	case EXPR_VAR: {
		Var *v = var(g, e->s);
		if (v && v->kind == MT_VALUE && !(e->binding && e->binding->optional)) {
			*text = v->cname;
			return reg_ex(g, v->reg, MT_VALUE);
		}
		if (v && v->kind == MT_NODE) {
			int k = v->node ? v->node->output : 0;
			*text = S(g, "rwg_out(rw, %s, %d)", v->cname, k);
			MExpr *x = ex(g, ME_OUT, MT_VALUE);
			x->reg = v->reg;
			x->i = k;
			return x;
		}
		return NULL;
	}
	case EXPR_BINARY:
	case EXPR_UNARY:
	case EXPR_CALL:
		if (e->kind == EXPR_CALL && (!strcmp(e->s, "cast") || !dsl_builtin_lookup(e->s)))
			return NULL;
		for (int i = 0; i < e->n && (e->kind != EXPR_CALL || strcmp(e->s, "reshape") || i == 0); i++) {
			MExpr *l = like_of(g, e->items[i], text);
			if (l)
				return l;
		}
		return NULL;
	case EXPR_DEFAULT:
		return like_of(g, e->items[1], text);
	case EXPR_OP:
		if (e->schema && e->n > 0 && e->schema->ninputs > 0 && e->schema->noutputs > 0 &&
		    strcmp(e->schema->inputs[0].type_str, e->schema->outputs[0].type_str) == 0)
			return like_of(g, e->items[0], text);
		return NULL;
	default:
		return NULL;
	}
}

typedef struct Like {
	MExpr *e;
	const char *text;
} Like;

/* The dtype a number literal at input i of the op e builds takes: that of a
 * sibling input of the same type constraint (Where(m, c, 0.0): c's, not the
 * bool condition's); else, where input i has the type of e's output, the
 * dtype e's own place takes (`outer`: MultiHeadAttention(q, .., Expand(
 * Where(m, -inf, 0.0), s)) gives the Where q's); else `mine` (e's first
 * value). */
static Like like_of_formal(L *g, const Expr *e, int i, Like mine, Like outer)
{
	const OpSchema *s = e->schema;
	if (!s || i >= s->ninputs)
		return mine;
	for (int j = 0; j < e->n && j < s->ninputs; j++) {
		const char *t = NULL;
		MExpr *m = j != i && !strcmp(s->inputs[j].type_str, s->inputs[i].type_str) ? like_of(g, e->items[j], &t) : NULL;
		if (m)
			return (Like){m, t};
	}
	if (outer.e && s->noutputs > 0 && !strcmp(s->outputs[0].type_str, s->inputs[i].type_str))
		return outer;
	return mine;
}

static void add_like(L *g, Like like)
{
	for (int i = 0; i < g->like_text.n; i++)
		if (!strcmp(((const char **)g->like_text.p)[i], like.text))
			return;
	*(MExpr **)vec_push(&g->likes, sizeof(MExpr *)) = like.e;
	*(const char **)vec_push(&g->like_text, sizeof(char *)) = like.text;
}

static Like mine_or(L *g, const Expr *e, Like like)
{
	const char *t = NULL;
	MExpr *m = like_of(g, e, &t);
	return m ? (Like){m, t} : like;
}

static bool is_number_type(DslType t)
{
	return t == TY_INT || t == TY_FLOAT || t == TY_BOOL;
}

static MVal *val_expr(L *g, const Expr *e, Like like);

static MVal *scalar_value(L *g, const Expr *e, Like like)
{
	if (!like.e) {
		unsupported(g, e->pos, "a number with no value beside it to take its dtype from");
		return val(g, MV_ABSENT);
	}
	add_like(g, like);
	MVal *v = val(g, MV_SCALAR);
	v->e = pre_value(g, e);
	v->tmp = ++g->ntmp;
	v->kids = arena_alloc(g->A, sizeof *v->kids);
	v->kids[0] = val(g, MV_EXPR);
	v->kids[0]->e = like.e;
	v->nkids = 1;
	return v;
}

static MVal *ints_value(L *g, MExpr *x)
{
	MVal *v = val(g, MV_INTS);
	v->e = x;
	v->tmp = ++g->ntmp;
	return v;
}

/* Build op on ins[0..nin), in the model opset's form where an input may be
 * an attribute. */
static MVal *build_node(L *g, SrcPos pos, const char *domain, const char *op, MVal **ins, int nin)
{
	MVal *v = val(g, MV_NODE);
	v->tmp = g->ntmp + 1; /* k_<tmp>, in_<tmp + 1> */
	g->ntmp += 2;
	v->op = arena_strdup(g->A, op);
	v->domain = arena_strdup(g->A, domain);
	v->kids = ins;
	v->nkids = nin;
	int n = 0;
	for (int i = 0; i < nin && !*domain; i++) {
		if (dsl_moved_form(op, i, g->lo, g->hi)) {
			unsupported(g, pos, "building '%s', whose input %d moved in older opsets", op, i + 1);
			return v;
		}
		n += attr_forms(g, op, i, NULL);
	}
	if (n) {
		MForm *all = arena_alloc(g->A, sizeof *all * (size_t)n);
		int k = 0;
		for (int i = 0; i < nin; i++) {
			const MForm *f;
			int c = attr_forms(g, op, i, &f);
			if (c)
				memcpy(all + k, f, sizeof *f * (size_t)c);
			k += c;
		}
		v->forms = all;
		v->nforms = n;
		g->build_unknown = true;
	}
	return v;
}

static void set_attr(L *g, MVal *node, const OpSchema *s, const AttrArg *a)
{
	const OpAttrDef *def = dsl_attr_def(s, a->name);
	if (!def || !a->value) {
		unsupported(g, a->pos, "attribute '%s'", a->name);
		return;
	}
	MExpr *x = pre_value(g, a->value);
	switch (def->type) {
	case ATTR_INT: case ATTR_FLOAT: case ATTR_STRING: case ATTR_INTS: case ATTR_FLOATS: break;
	default:
		unsupported(g, a->pos, "attribute '%s' of type %s", a->name, attr_type_name((AttrType)def->type));
		return;
	}
	node->attrs = realloc(node->attrs, sizeof *node->attrs * (size_t)(node->nattrs + 1));
	if (!node->attrs)
		abort();
	node->attrs[node->nattrs++] = (MSetAttr){arena_strdup(g->A, a->name), (AttrType)def->type, x,
	                                         def->type == ATTR_FLOATS && a->value->type == TY_INTS};
}

static MVal *op_val(L *g, const char *op, MVal *a, MVal *b)
{
	MVal *v = val(g, MV_OP);
	v->tmp = ++g->ntmp;
	v->op = op;
	v->kids = arena_alloc(g->A, sizeof *v->kids * 2);
	v->kids[0] = a;
	v->kids[1] = b;
	v->nkids = b ? 2 : 1;
	return v;
}

static MVal *val_expr(L *g, const Expr *e, Like like)
{
	if (is_number_type(e->type))
		return scalar_value(g, e, like);
	if (e->type == TY_INTS && e->kind != EXPR_VAR)
		return ints_value(g, pre_value(g, e));
	switch (e->kind) {
	case EXPR_VAR: {
		if (!strcmp(e->s, "_") && !e->binding)
			return val(g, MV_ABSENT); /* an input the result leaves absent */
		Var *v = var(g, e->s);
		if (v && v->kind == MT_ARG) {
			g->build_unknown = true;
			MVal *r = val(g, MV_ARG);
			r->reg = v->reg;
			r->tmp = ++g->ntmp;
			return r;
		}
		if (v && (v->kind == MT_VALUE || v->kind == MT_NODE)) {
			MVal *r = val(g, MV_EXPR);
			r->e = fact_value(g, e, false);
			return r;
		}
		if (v && v->kind == MT_INTS)
			return ints_value(g, reg_ex(g, v->reg, MT_INTS));
		unsupported(g, e->pos, "'%s' as a value", e->s);
		return val(g, MV_ABSENT);
	}
	case EXPR_LIST:
		unsupported(g, e->pos, "a list of floats as a value");
		return val(g, MV_ABSENT);
	case EXPR_INDEX:
		if (e->items[0]->type == TY_VALUES) {
			MVal *r = val(g, MV_EXPR);
			r->e = pre_value(g, e);
			return r;
		}
		break;
	case EXPR_UNARY:
		if (e->op == EX_NEG)
			return op_val(g, "Neg", val_expr(g, e->items[0], mine_or(g, e, like)), NULL);
		break;
	case EXPR_BINARY: {
		const char *op = dsl_exop_onnx(e->op);
		if (!op)
			break;
		Like l = mine_or(g, e, like);
		MVal *a = val_expr(g, e->items[0], l);
		MVal *b = val_expr(g, e->items[1], l);
		return op_val(g, op, a, b);
	}
	case EXPR_DEFAULT: {
		Var *v = e->items[0]->kind == EXPR_VAR ? var(g, e->items[0]->s) : NULL;
		if (!v || v->kind != MT_VALUE) {
			unsupported(g, e->pos, "'?\?' on this operand");
			return val(g, MV_ABSENT);
		}
		MVal *r = val(g, MV_DEFAULT);
		r->reg = v->reg;
		r->tmp = ++g->ntmp;
		r->kids = arena_alloc(g->A, sizeof *r->kids);
		r->kids[0] = val_expr(g, e->items[1], like);
		r->nkids = 1;
		return r;
	}
	case EXPR_CALL: {
		const char *f = e->s;
		if (!dsl_builtin_lookup(f)) {
			/* an extern that builds a value: called inside the transaction */
			int xi = extern_index(g, e);
			const Extern *x = xi >= 0 ? g->set->externs[xi].decl : NULL;
			if (!x || (x->ret != TY_VALUE && x->ret != TY_TENSOR)) {
				unsupported(g, e->pos, "'%s' as a value", f);
				return val(g, MV_ABSENT);
			}
			MVal *r = val(g, MV_EXTERN);
			r->ext = xi;
			r->kids = arena_alloc(g->A, sizeof *r->kids * (size_t)(e->n + 1));
			r->args = arena_alloc(g->A, sizeof *r->args * (size_t)(e->n + 1));
			r->nkids = e->n;
			for (int i = 0; i < e->n; i++) {
				DslType p = i < x->nparams ? x->params[i] : TY_UNKNOWN;
				if (p == TY_VALUE)
					r->kids[i] = val_expr(g, e->items[i], like);
				else if (p == TY_TENSOR)
					r->args[i] = fact_value(g, e->items[i], false);
				else
					r->args[i] = num_expr(g, e->items[i]);
			}
			r->tmp = ++g->ntmp;
			g->build_unknown = true;
			return r;
		}
		Like l = mine_or(g, e, like);
		if (!strcmp(f, "reshape")) {
			MVal **ins = arena_alloc(g->A, sizeof *ins * 2);
			ins[0] = val_expr(g, e->items[0], l);
			ins[1] = val_expr(g, e->items[1], (Like){0});
			return build_node(g, e->pos, "", "Reshape", ins, 2);
		}
		if (!strcmp(f, "cast")) {
			MVal **ins = arena_alloc(g->A, sizeof *ins);
			ins[0] = val_expr(g, e->items[0], l);
			MExpr *t = pre_value(g, e->items[1]);
			MVal *k = build_node(g, e->pos, "", "Cast", ins, 1);
			k->attrs = arena_alloc(g->A, sizeof *k->attrs);
			k->attrs[k->nattrs++] = (MSetAttr){"to", ATTR_INT, t, false};
			return k;
		}
		const Builtin *bi = dsl_builtin_lookup(f);
		MVal *a = e->n > 0 ? val_expr(g, e->items[0], l) : NULL;
		MVal *b = e->n > 1 ? val_expr(g, e->items[1], l) : NULL;
		if (bi->op && (e->n == 1 || e->n == 2))
			return op_val(g, bi->op, a, b);
		unsupported(g, e->pos, "'%s' as a value", f);
		return val(g, MV_ABSENT);
	}
	case EXPR_OP: {
		const OpSchema *s = e->schema;
		int nin = e->n;
		for (int i = 0; i < e->nattrs; i++) {
			int k = opset_form_attr_input(s, e->attrs[i].name);
			if (k + 1 > nin)
				nin = k + 1;
		}
		MVal **ins = arena_alloc(g->A, sizeof *ins * (size_t)(nin + 1));
		const char *t = NULL;
		MExpr *m = like_of(g, e, &t);
		for (int i = 0; i < e->n && !m; i++)
			m = like_of(g, e->items[i], &t);
		Like mine = {m, t};
		for (int i = 0; i < e->n; i++)
			ins[i] = val_expr(g, e->items[i], like_of_formal(g, e, i, mine, like));
		for (int i = 0; i < e->nattrs; i++) {
			int k = opset_form_attr_input(s, e->attrs[i].name);
			if (k >= 0)
				ins[k] = val_expr(g, e->attrs[i].value, (Like){0});
		}
		for (int i = 0; i < nin; i++)
			if (!ins[i])
				ins[i] = val(g, MV_ABSENT);
		MVal *k = build_node(g, e->pos, e->domain ? e->domain : "", e->s, ins, nin);
		if (e->copy_attrs) {
			Var *c = var(g, e->copy_attrs);
			k->copy = true;
			k->reg = c ? c->reg : 0;
		}
		for (int i = 0; i < e->nattrs; i++)
			if (opset_form_attr_input(s, e->attrs[i].name) < 0)
				set_attr(g, k, s, &e->attrs[i]);
		if (k->nattrs) { /* into the arena */
			MSetAttr *a = arena_dup(g->A, k->attrs, sizeof *a * (size_t)k->nattrs);
			free(k->attrs);
			k->attrs = a;
		}
		return k;
	}
	default:
		break;
	}
	unsupported(g, e->pos, "this expression as a value");
	return val(g, MV_ABSENT);
}

/* ---- patterns ------------------------------------------------------------------------------------- */

static void lower_op(L *g, const Pattern *p, int node, const char *path);

typedef struct Slot {
	const Pattern *pat;         /* NULL: a literal or variable from an attribute (lit) */
	const Expr *lit;
	int reg;                    /* MT_VALUE or MT_ARG */
	bool binds;
	bool arg;                   /* older opsets may spell it as an attribute */
	int nforms;
	int node;                   /* register of the node it is an input of */
	int in;                     /* input index */
	const char *what;           /* "input 1 (x) of Conv" */
	const char *path;           /* "_0_1": input 1 of input 0 of the root (C names: v_0_1, n_0_1) */
	int swap;                   /* 1 + its swap site, or 0 */
	int slot;                   /* its place in the swap site */
	int pat_node;               /* an op: its index in the matched nodes */
	const MExpr *lit_check;     /* a literal: its check */
} Slot;

/* A step whose why message is about slot s (starts with s->what). */
static MInsn *about(MInsn *x, const Slot *s)
{
	x->swap = s->swap;
	x->slot = s->slot;
	return x;
}

/* A check of slot s that a decision tree can make instead, when the slot's
 * node is one the tree fetches and the slot is no attribute. */
static void tree_check(L *g, MInsn *x, const Slot *s, MTest t)
{
	if (!s->arg && is_tree(g, s->node))
		x->test = t;
}

static MExpr *literal_check(L *g, const Expr *e, int reg, bool arg)
{
	double v, tol;
	MExpr *x;
	if (dsl_literal_value(e, &v, &tol)) {
		x = ex(g, ME_EQUALS, MT_BOOL);
		x->f = v;
		x->tol = tol;
	} else if (e->kind == EXPR_LIST) {
		x = ex(g, ME_EQUALS_LIST, MT_BOOL);
		double *nums = arena_alloc(g->A, sizeof *nums * (size_t)(e->n + 1));
		for (int i = 0; i < e->n; i++) {
			double tol2;
			if (!dsl_literal_value(e->items[i], &nums[i], &tol2)) {
				unsupported(g, e->items[i]->pos, "a list literal holding something other than numbers");
				break;
			}
		}
		x->nums = nums;
		x->nnums = e->n;
	} else {
		unsupported(g, e->pos, "this literal operand");
		return ex(g, ME_BOOL, MT_BOOL);
	}
	x->arg = arg;
	x->reg = reg;
	if (!arg)
		x->kids = arena_alloc(g->A, sizeof *x->kids), x->kids[0] = reg_ex(g, reg, MT_VALUE), x->nkids = 1;
	return x;
}

static MExpr *same_ex(L *g, int a, bool a_arg, int b, bool b_arg)
{
	MExpr *x = ex2(g, ME_SAME, MT_BOOL, reg_ex(g, a, a_arg ? MT_ARG : MT_VALUE), reg_ex(g, b, b_arg ? MT_ARG : MT_VALUE));
	x->arg = a_arg || b_arg;
	return x;
}

static void node_ref(L *g, const Pattern *p, Slot *s)
{
	Var *v = var(g, p->name);
	if (!v)
		return;
	int k = p->has_output ? p->output : v->node ? v->node->output : 0;
	count_ref(g, v->reg);
	MExpr *out = ex(g, ME_OUT, MT_VALUE);
	out->reg = v->reg;
	out->i = k;
	MExpr *cond = ex2(g, ME_SAME, MT_BOOL, reg_ex(g, s->reg, MT_VALUE), out);
	cond->i = 1; /* identity only: s == rwg_out(...) */
	char *w = W(g, "%s is not output %d of %s", s->what, k, v->cname);
	if (v->bound)
		about(check(g, cond, false, W_SAME, w), s);
	else
		about(defer(g, cond, W_SAME, w), s);
}

static void lower_operand(L *g, Slot *s)
{
	const Pattern *p = s->pat;
	bool arg = s->arg;
	if (!p) { /* an attribute spelling of the input: a literal or a variable */
		const Expr *e = s->lit;
		if (e->kind == EXPR_VAR && e->binding) {
			Var *v = var(g, e->s);
			if (s->binds)
				return;
			if (!v || (v->kind != MT_VALUE && v->kind != MT_ARG)) {
				/* Squeeze[axes = a](x) with a read as ints, where axes is an input in
				 * some of the rule's opsets: the operand, not an attribute's value */
				unsupported(g, e->pos, "'%s' as the value of an attribute that is an input in some of the rule's "
				            "opsets: write it as an operand and read it with ints()", e->s);
				return;
			}
			about(check(g, same_ex(g, s->reg, arg, v->reg, v->kind == MT_ARG), false, W_SAME,
			            W(g, "%s is not the same as %s", s->what, e->s)), s);
			return;
		}
		/* arg is false when every opset of the rule spells it as an input */
		about(check(g, literal_check(g, e, s->reg, arg), false, W_VALUE,
		            W(g, "%s is not the literal the rule names", s->what)), s);
		return;
	}
	switch (p->kind) {
	case PAT_OP: {
		if (arg) {
			MExpr *x = ex(g, ME_ATTR_IS_SET, MT_BOOL);
			x->reg = s->reg;
			about(check(g, x, true, W_PRODUCER,
			            W(g, "%s is an attribute at this opset, not the output of %s", s->what, p->name)), s);
		}
		Var *b = p->bind ? var(g, p->bind) : NULL;
		int node = b ? b->reg : new_reg_named(g, MT_NODE, S(g, "n%s", s->path));
		MInsn *x = about(insn(g, MI_PRODUCER), s);
		x->reg = node;
		x->src = s->reg;
		x->e = arg ? reg_ex(g, s->reg, MT_ARG) : reg_ex(g, s->reg, MT_VALUE);
		x->op = p->name;
		x->domain = p->domain ? p->domain : "";
		x->op_kind = *x->domain ? OP_UNKNOWN : op_kind_lookup(p->name);
		x->index = p->output;
		x->step = g->step++;
		x->why_kind = W_PRODUCER;
		x->why = W(g, "%s comes from %%s, not %s", s->what, p->name);
		if (!*x->domain) {
			tree_check(g, x, s, MTEST_OP);
			((bool *)g->tree.p)[node] = x->test == MTEST_OP;
		}
		if (b)
			b->bound = true;
		s->pat_node = g->nodes.n;
		add_node(g, node, p->shared, p);
		lower_op(g, p, node, s->path);
		break;
	}
	case PAT_VAR: {
		Var *v = var(g, p->name);
		if (!v)
			break;
		if (v->kind == MT_NODE) {
			if (arg)
				unsupported(g, p->pos, "a node output where older opsets have an attribute");
			node_ref(g, p, s);
			break;
		}
		MExpr *val_e = reg_ex(g, s->reg, arg ? MT_ARG : MT_VALUE);
		if (s->binds) {
			if (!p->optional) {
				MExpr *x = ex1(g, ME_ABSENT, MT_BOOL, arg ? NULL : val_e);
				x->arg = arg;
				x->reg = s->reg;
				tree_check(g, about(check(g, x, true, W_OPERANDS, W(g, "%s is missing", s->what)), s), s,
				           MTEST_PRESENT);
			}
			if (p->is_const) {
				/* optional: absent or a constant */
				MExpr *x = ex1(g, ME_IS_CONST, MT_BOOL, arg ? NULL : val_e);
				x->arg = arg;
				x->reg = s->reg;
				x->i = p->optional || arg; /* an absent value passes */
				MInsn *c = about(check(g, x, false, W_NOT_CONST, W(g, "%s is not a constant", s->what)), s);
				if (!p->optional)
					tree_check(g, c, s, MTEST_CONST);
			}
			break;
		}
		if (v->kind != MT_VALUE && v->kind != MT_ARG) {
			unsupported(g, p->pos, "'%s' as an operand", p->name);
			break;
		}
		about(check(g, same_ex(g, s->reg, arg, v->reg, v->kind == MT_ARG), false, W_SAME,
		            W(g, "%s is not the same value as %s", s->what, p->name)), s);
		break;
	}
	case PAT_WILDCARD:
		if (!p->optional) {
			MExpr *x = ex1(g, ME_ABSENT, MT_BOOL, arg ? NULL : reg_ex(g, s->reg, MT_VALUE));
			x->arg = arg;
			x->reg = s->reg;
			about(check(g, x, true, W_OPERANDS, W(g, "%s is missing", s->what)), s);
		}
		break;
	case PAT_LITERAL:
		s->lit_check = literal_check(g, p->lit, s->reg, arg);
		about(check(g, (MExpr *)s->lit_check, false, W_VALUE, W(g, "%s is not the constant the rule names", s->what)),
		      s);
		break;
	case PAT_REST:
		break;
	}
}

/* x:!Conv:!Gemm, _:!Conv: fail when the slot's value is an output of one
 * of the ops (an attribute spelling of it is none). */
static void lower_nots(L *g, const Slot *s)
{
	for (int i = 0; i < s->pat->nnots; i++) {
		const PatNot *n = &s->pat->nots[i];
		MExpr *x = ex(g, ME_FROM, MT_BOOL);
		x->arg = s->arg;
		x->reg = s->reg;
		x->s = n->name;
		x->domain = n->domain;
		about(check(g, x, true, W_PRODUCER, W(g, "%s comes from %s, which the rule excludes", s->what, n->name)), s);
	}
}

/* The slot's register: the variable it binds, if this is the variable's
 * first occurrence, else a fresh one. */
static void name_slot(L *g, Slot *s)
{
	const char *vn = NULL;
	if (s->pat && s->pat->kind == PAT_VAR && !s->pat->has_output)
		vn = s->pat->name;
	if (!s->pat && s->lit && s->lit->kind == EXPR_VAR && s->lit->binding)
		vn = s->lit->s;
	Var *v = vn ? var(g, vn) : NULL;
	if (v && !v->bound && (v->kind == MT_VALUE || v->kind == MT_ARG)) {
		v->kind = s->arg ? MT_ARG : MT_VALUE;
		v->bound = true;
		s->binds = true;
		s->reg = v->reg;
		((MType *)g->regs.p)[v->reg] = v->kind;
	} else {
		s->reg = new_reg_named(g, s->arg ? MT_ARG : MT_VALUE, S(g, "v%s", s->path));
	}
}

/* Does the pattern constrain attribute `name` ([name = ...])? */
static bool names_attr(const Pattern *p, const char *name)
{
	for (int i = 0; i < p->nattrs; i++)
		if (!strcmp(p->attrs[i].name, name))
			return true;
	return false;
}

/* An attribute's value as MPatAttr.value holds it: a literal, else NULL. */
static const MExpr *attr_literal(L *g, const Expr *e)
{
	double v, tol;
	if (dsl_literal_value(e, &v, &tol) || e->kind == EXPR_STRING || (e->kind == EXPR_VAR && !e->binding))
		return num_expr(g, e);
	if (e->kind != EXPR_LIST || e->type == TY_STRINGS || e->n > 64)
		return NULL;
	for (int i = 0; i < e->n; i++)
		if (!dsl_literal_value(e->items[i], &v, &tol))
			return NULL;
	return num_expr(g, e);
}

/* The pattern of node p as written (MPatNode), from its operands' slots
 * (the positional operands, in order) once they are lowered. */
static void record_pattern(L *g, const Pattern *p, int node, const Slot *slots)
{
	int at = 0;
	while (((int *)g->nodes.p)[at] != node)
		at++;
	MOperand *ops = arena_alloc(g->A, sizeof *ops * (size_t)(p->nargs + 1));
	for (int i = 0, k = 0; i < p->nargs; i++) {
		const Pattern *a = p->args[i];
		MOperand *o = &ops[i];
		*o = (MOperand){.optional = a->optional, .is_const = a->is_const, .reg = -1};
		if (a->kind == PAT_REST) {
			Var *v = var(g, a->name);
			o->kind = MO_REST;
			o->reg = v ? v->reg : -1;
			continue;
		}
		const Slot *sl = &slots[k++];
		switch (a->kind) {
		case PAT_OP: o->kind = MO_NODE; o->node = sl->pat_node; break;
		case PAT_VAR: {
			Var *v = var(g, a->name);
			o->kind = MO_VAR;
			o->reg = v ? v->reg : -1;
			o->output = a->output;
			break;
		}
		case PAT_WILDCARD: o->kind = MO_ANY; break;
		case PAT_LITERAL: o->kind = MO_LITERAL; o->lit = sl->lit_check; break;
		case PAT_REST: break;
		}
		if (a->nnots) {
			MNot *nots = arena_alloc(g->A, sizeof *nots * (size_t)a->nnots);
			for (int j = 0; j < a->nnots; j++)
				nots[j] = (MNot){a->nots[j].name, a->nots[j].domain ? a->nots[j].domain : ""};
			o->nots = nots;
			o->nnots = a->nnots;
		}
	}
	MPatAttr *attrs = arena_alloc(g->A, sizeof *attrs * (size_t)(p->nattrs + 1));
	for (int i = 0; i < p->nattrs; i++) {
		const Expr *e = p->attrs[i].value;
		Var *v = e && e->kind == EXPR_VAR && e->binding ? var(g, e->s) : NULL;
		attrs[i] = (MPatAttr){p->attrs[i].name, v ? v->reg : -1, v || !e ? NULL : attr_literal(g, e)};
	}
	MPatNode *pn = &((MPatNode *)g->pats.p)[at];
	pn->operands = ops;
	pn->noperands = p->nargs;
	pn->attrs = attrs;
	pn->nattrs = p->nattrs;
}

static void lower_op(L *g, const Pattern *p, int node, const char *path)
{
	const OpSchema *sch = p->schema;
	const char *desc = p->bind ? W(g, "%s (%s)", p->bind, p->name) : W(g, "%s", p->name);
	/* attributes: a variable binds (or compares), anything else compares */
	for (int i = 0; i < p->nattrs; i++) {
		const AttrArg *a = &p->attrs[i];
		if (opset_form_attr_input(sch, a->name) >= 0 || !a->value)
			continue;
		const OpAttrDef *def = dsl_attr_def(sch, a->name);
		if (!def) {
			unsupported(g, a->pos, "attribute '%s'", a->name);
			continue;
		}
		MType t;
		switch (def->type) {
		case ATTR_INT: t = MT_INT; break;
		case ATTR_FLOAT: t = MT_FLOAT; break;
		case ATTR_STRING: t = MT_STR; break;
		case ATTR_INTS: t = MT_INTS; break;
		case ATTR_FLOATS: t = MT_FLOATS; break;
		default:
			unsupported(g, a->pos, "matching attribute '%s' of type %s", a->name, attr_type_name((AttrType)def->type));
			continue;
		}
		const Expr *e = a->value;
		Var *v = e->kind == EXPR_VAR && e->binding ? var(g, e->s) : NULL;
		MInsn *x = insn(g, MI_ATTR);
		x->src = node;
		x->name = a->name;
		x->attr_type = (AttrType)def->type;
		x->step = g->step++;
		x->why_kind = W_ATTR;
		x->why = W(g, "attribute '%s' not set on node %%s", a->name);
		if (v && !v->bound) {
			x->reg = v->reg;
			((MType *)g->regs.p)[v->reg] = t;
			v->bound = true;
			continue;
		}
		x->reg = new_reg_named(g, t, a->name);
		x->tmp = ++g->ntmp;
		bool lit_int = def->type == ATTR_INT && (e->kind == EXPR_INT || e->kind == EXPR_BOOL) && !v;
		if (lit_int && is_tree(g, node))
			x->test = MTEST_ATTR_INT;
		MExpr *want = num_expr(g, e);
		if (def->type == ATTR_FLOATS && e->type == TY_INTS)
			want = ex1(g, ME_TO_FLOATS, MT_FLOATS, want);
		else if (def->type == ATTR_FLOAT)
			want = ex1(g, ME_AS_FLOAT, MT_FLOAT, want);
		/* x points into g->insns, which check() may move: keep what is needed */
		int reg = x->reg;
		MTest test = x->test;
		MExpr *cond = ex2(g, ME_BIN, MT_BOOL, reg_ex(g, reg, t), want);
		cond->op = EX_EQ;
		char *w = lit_int ? W(g, "attribute %s of %s is %%lld, not %lld", a->name, desc, (long long)e->i)
		                  : W(g, "attribute %s of %s has another value", a->name, desc);
		if (reads_unbound(g, want)) {
			defer(g, cond, W_ATTR, w);
			if (lit_int)
				((MInsn *)g->deferred.p)[g->deferred.n - 1].why_arg = reg_ex(g, reg, t);
		} else {
			MInsn *c = check(g, cond, false, W_ATTR, w);
			c->test = test;
			if (lit_int)
				c->why_arg = reg_ex(g, reg, t);
		}
	}

	/* operands by canonical position */
	int npos = 0, rest = -1;
	for (int i = 0; i < p->nargs; i++)
		if (p->args[i]->kind == PAT_REST)
			rest = i;
		else
			npos++;
	int nslots = npos;
	for (int i = 0; i < p->nattrs; i++) {
		int k = opset_form_attr_input(sch, p->attrs[i].name);
		if (k + 1 > nslots)
			nslots = k + 1;
	}
	Slot *slots = calloc((size_t)nslots + 1, sizeof *slots);
	if (!slots)
		abort();
	for (int i = 0, k = 0; i < p->nargs; i++)
		if (p->args[i]->kind != PAT_REST)
			slots[k++].pat = p->args[i];
	for (int i = 0; i < p->nattrs; i++) {
		int k = opset_form_attr_input(sch, p->attrs[i].name);
		if (k >= 0)
			slots[k].lit = p->attrs[i].value;
	}
	const char *op = p->name;
	bool vendor = p->domain && *p->domain;
	for (int i = 0; i < nslots; i++) {
		slots[i].nforms = vendor ? 0 : attr_forms(g, op, i, NULL);
		slots[i].arg = slots[i].nforms > 0;
		if (!vendor && dsl_moved_form(op, i, g->lo, g->hi))
			unsupported(g, p->pos, "'%s' input %d, which moved in older opsets", op, i + 1);
	}
	bool swap = sch && (sch->flags & OPF_COMMUTATIVE) && npos == 2 && rest < 0 && nslots == 2 && !slots[0].arg &&
	            !slots[1].arg;
	int site = -1;
	if (swap) {
		/* the two operand reads below, in order and then swapped */
		MInsn *c = insn(g, MI_COMMUTE);
		c->src = node;
		c->index = site = g->nloop++;
	}
	for (int i = 0; i < nslots; i++) {
		Slot *sl = &slots[i];
		sl->node = node;
		sl->in = i;
		sl->path = S(g, "%s_%d", path, sl->in);
		sl->swap = site + 1;
		sl->slot = i;
		name_slot(g, sl);
		const char *vn = sl->pat && sl->pat->kind == PAT_VAR ? sl->pat->name
		                 : !sl->pat && sl->lit && sl->lit->kind == EXPR_VAR ? sl->lit->s : NULL;
		sl->what = vn ? W(g, "input %d (%s) of %s", sl->in, vn, desc) : W(g, "input %d of %s", sl->in, desc);
	}
	for (int i = 0; i < nslots; i++) {
		Slot *sl = &slots[i];
		bool any = sl->pat && sl->pat->kind == PAT_WILDCARD && sl->pat->optional && !sl->pat->nnots;
		if ((!sl->pat && !sl->lit) || (any && !swap))
			continue;
		MInsn *x = insn(g, sl->arg ? MI_ARG : MI_INPUT);
		x->reg = sl->reg;
		x->src = node;
		x->index = sl->in;
		x->swap = sl->swap;
		x->slot = i;
		x->unused = any;
		if (sl->arg)
			x->nforms = attr_forms(g, op, i, &x->forms);
	}
	for (int i = 0; i < nslots; i++)
		if (slots[i].pat || slots[i].lit) {
			lower_operand(g, &slots[i]);
			if (slots[i].pat && slots[i].pat->nnots)
				lower_nots(g, &slots[i]);
		}
	if (rest >= 0) {
		Var *v = var(g, p->args[rest]->name);
		if (v && !v->bound) {
			MInsn *x = insn(g, MI_REST);
			x->reg = v->reg;
			x->src = node;
			x->index = nslots;
			v->bound = true;
		} else {
			unsupported(g, p->args[rest]->pos, "a rest list used twice");
		}
	} else if (!vendor && sch) {
		/* inputs the pattern does not mention must be absent */
		if (sch->max_inputs > nslots) {
			MExpr *x = ex(g, ME_ABSENT_FROM, MT_BOOL);
			x->reg = node;
			x->i = nslots;
			MInsn *c = check(g, x, false, W_OPERANDS, W(g, "%s has more inputs than the rule names", desc));
			if (is_tree(g, node))
				c->test = MTEST_ABSENT_FROM;
		}
		size_t n;
		const OpsetForm *all = opset_forms_all(&n);
		for (size_t k = 0; k < n; k++)
			if (all[k].kind == FORM_ATTR && all[k].input >= nslots && !strcmp(all[k].op, op) &&
			    all[k].first <= g->hi && all[k].last >= g->lo && !names_attr(p, all[k].attr)) {
				int r = new_reg(g, MT_ARG);
				MInsn *a = insn(g, MI_ARG);
				a->reg = r;
				a->src = node;
				a->index = all[k].input;
				MForm *f = arena_alloc(g->A, sizeof *f);
				*f = (MForm){all[k].input, all[k].attr, all[k].first, all[k].last};
				a->forms = f;
				a->nforms = 1;
				MExpr *x = ex(g, ME_ABSENT, MT_BOOL);
				x->arg = true;
				x->reg = r;
				check(g, x, false, W_OPERANDS,
				      W(g, "%s has attribute %s, which the rule does not name", desc, all[k].attr));
			}
	}
	record_pattern(g, p, node, slots);
	free(slots);
}

/* ---- rules ------------------------------------------------------------------------------------------ */

static void *vec_to_arena(L *g, Vec *v, size_t size)
{
	void *r = v->n ? arena_dup(g->A, v->p, size * (size_t)v->n) : NULL;
	free(v->p);
	*v = (Vec){0};
	return r;
}

static void find_node_pats(L *g, const Pattern *p)
{
	if (p->kind != PAT_OP)
		return;
	if (p->bind) {
		Var *v = var(g, p->bind);
		if (v)
			v->node = p;
	}
	for (int i = 0; i < p->nargs; i++)
		find_node_pats(g, p->args[i]);
}

/* The guard's source text with % doubled (a printf format, as graftc writes it). */
static char *guard_format(L *g, const char *guard)
{
	size_t n = guard ? strlen(guard) : 0;
	char *out = arena_alloc(g->A, n * 2 + 1), *q = out;
	for (size_t i = 0; i < n; i++) {
		if (guard[i] == '%')
			*q++ = '%';
		*q++ = guard[i];
	}
	return out;
}

/* ---- --why: a guard's parts and the values they show ------------------------------------------ */

/* The first byte from p on that is neither blank nor inside a comment. */
static const char *skip_blank(const char *p, const char *end)
{
	for (;;) {
		while (p < end && blank(*p))
			p++;
		if (p + 1 < end && p[0] == '/' && p[1] == '/') {
			while (p < end && *p != '\n')
				p++;
		} else if (p + 1 < end && p[0] == '/' && p[1] == '*') {
			for (p += 2; p + 1 < end && !(p[0] == '*' && p[1] == '/'); p++)
				;
			p = p + 2 < end ? p + 2 : end;
		} else {
			return p;
		}
	}
}

/* Where e's text starts and ends in its file (an operator's position is
 * the operator's; a call's, its name's). */
static const char *expr_start(const RuleFile *f, const Expr *e)
{
	if (e->kind == EXPR_BINARY || e->kind == EXPR_INDEX || e->kind == EXPR_DEFAULT)
		return expr_start(f, e->items[0]);
	return f->src + e->pos.offset;
}

static const char *expr_end(const RuleFile *f, const Expr *e)
{
	const char *end = f->src + f->srclen, *p;
	switch (e->kind) {
	case EXPR_UNARY:
		return expr_end(f, e->items[0]);
	case EXPR_BINARY:
	case EXPR_DEFAULT:
		return expr_end(f, e->items[1]);
	case EXPR_QUANT:  /* all(i in l: body) ends at the ')' after its body */
		p = skip_blank(expr_end(f, e->items[1]), end);
		return p < end && *p == ')' ? p + 1 : p;
	case EXPR_CALL:
	case EXPR_LIST:
	case EXPR_INDEX:
		if (e->n) {
			p = skip_blank(expr_end(f, e->items[e->n - 1]), end);
			if (p < end && *p == ',')
				p++;
		} else if (e->kind == EXPR_LIST) {
			p = f->src + e->pos.offset + 1;
		} else {
			p = skip_blank(f->src + e->pos.offset + e->pos.len, end);
			p += p < end && *p == '(';
		}
		p = skip_blank(p, end);
		return p < end && *p == (e->kind == EXPR_CALL ? ')' : ']') ? p + 1 : p;
	default:
		return f->src + e->pos.offset + e->pos.len;
	}
}

/* e as written, whitespace collapsed, with the brackets around an operand
 * it starts or ends with: `(a + b) * c`. */
static const char *expr_text(L *g, const Expr *e)
{
	const char *src = g->f->src, *end = src + g->f->srclen;
	const char *a = expr_start(g->f, e), *b = expr_end(g->f, e);
	if (b < a)
		b = a;
	int open = 0, close = 0;
	for (const char *p = a; p < b; p++) {
		if (*p == '"') {
			for (p++; p < b && *p != '"'; p++)
				p += *p == '\\';
		} else if (*p == '(' || *p == '[') {
			open++;
		} else if (*p == ')' || *p == ']') {
			if (open)
				open--;
			else
				close++;
		}
	}
	for (; close > 0; close--) {
		const char *q = a;
		while (q > src && blank(q[-1]))
			q--;
		if (q == src || (q[-1] != '(' && q[-1] != '['))
			break;
		a = q - 1;
	}
	for (; open > 0; open--) {
		const char *q = skip_blank(b, end);
		if (q == end || (*q != ')' && *q != ']'))
			break;
		b = q + 1;
	}
	char *t = collapsed(a, b);
	const char *r = arena_strdup(g->A, t);
	free(t);
	return r;
}

/* What builtin call e needs of its first argument to be known. */
static MNeed call_need(const Expr *e)
{
	static const struct { const char *name; MNeed need; } needs[] = {
		{"rank", MN_SHAPE}, {"shape", MN_SHAPE}, {"dim", MN_SHAPE}, {"numel", MN_SHAPE}, {"dims", MN_SHAPE},
		{"dtype", MN_DTYPE}, {"is_float", MN_DTYPE}, {"is_int", MN_DTYPE}, {"scalar", MN_SCALAR},
		{"ints", MN_INTS}, {"finite", MN_CONST}, {"moderate", MN_CONST},
	};
	if (e->kind != EXPR_CALL || e->n < 1 || !dsl_builtin_lookup(e->s))
		return MN_NONE;
	for (size_t i = 0; i < sizeof needs / sizeof *needs; i++)
		if (!strcmp(e->s, needs[i].name))
			return needs[i].need;
	return MN_NONE;
}

/* The values e shows when it fails: its largest parts that are neither
 * literals, operators nor graph values, each once, in reading order; for
 * a predicate (is_identity(p)), what it reads, and itself where it may be
 * unknown (finite(c)). */
static void shown_of(L *g, const Expr *e, Vec *out)
{
	switch (e->kind) {
	case EXPR_INT: case EXPR_FLOAT: case EXPR_BOOL: case EXPR_STRING:
		return;
	case EXPR_LIST: case EXPR_UNARY: case EXPR_BINARY:
		for (int i = 0; i < e->n; i++)
			shown_of(g, e->items[i], out);
		return;
	default:
		break;
	}
	if ((e->kind == EXPR_VAR && !var(g, e->s)) || mtype(e->type) == MT_VALUE)
		return; /* a dtype's name; a value of the graph */
	MNeed need = call_need(e);
	if (e->kind == EXPR_CALL && e->type == TY_BOOL && dsl_builtin_lookup(e->s)) {
		for (int i = 0; i < e->n; i++)
			shown_of(g, e->items[i], out);
		if (need == MN_NONE)
			return;
	}
	const char *text = expr_text(g, e);
	for (int i = 0; i < out->n; i++)
		if (!strcmp(((MShown *)out->p)[i].text, text))
			return;
	MShown *sh = vec_push(out, sizeof *sh);
	sh->e = num_expr(g, e);
	sh->text = text;
	sh->need = need;
	if (need != MN_NONE) {
		/* scalar() and ints() read an operand an older opset spells as an attribute */
		sh->of = fact_value(g, e->items[0], need == MN_SCALAR || need == MN_INTS);
		sh->of_text = expr_text(g, e->items[0]);
	}
}

/* One part: e, lowered again on its own, and the values it shows. */
static void add_part(L *g, const Expr *e, Vec *parts)
{
	Vec shown = {0};
	shown_of(g, e, &shown);
	MPart *p = vec_push(parts, sizeof *p);
	p->e = num_expr(g, e);
	p->text = expr_text(g, e);
	p->nshown = shown.n;
	p->shown = vec_to_arena(g, &shown, sizeof(MShown));
	free(shown.p);
}

static void guard_parts(L *g, const Expr *e, Vec *parts)
{
	if (e->kind == EXPR_BINARY && e->op == EX_AND) {
		guard_parts(g, e->items[0], parts);
		guard_parts(g, e->items[1], parts);
		return;
	}
	add_part(g, e, parts);
}

/* The program of a rule.  Returns its swap sites, -1 on error. */
static int lower_rule(MRuleSet *set, RuleFile **files, int nfiles, Diag *d, const RuleFile *f, const Rule *r,
                      const char *guard_text, bool why, MProg *out)
{
	L g = {.d = d, .f = f, .r = r, .set = set, .files = files, .nfiles = nfiles, .A = set->arena, .lo = dsl_rule_opset_lo(r),
	       .hi = dsl_rule_opset_hi(r), .step = 2, .why = why};
	g.vars = calloc((size_t)r->nbindings + 1, sizeof *g.vars);
	if (!g.vars)
		abort();
	g.var_names = namemap_new((size_t)r->nbindings);
	new_reg_named(&g, MT_NODE, "n"); /* register 0: the root */
	((bool *)g.tree.p)[0] = true;
	for (int i = 0; i < r->nbindings; i++) {
		Var *v = &g.vars[g.nvars++];
		v->name = r->bindings[i].name;
		if (!namemap_get(g.var_names, v->name)) /* the first of a name, as the search found it */
			namemap_put(g.var_names, v->name, v);
		char *c = dsl_c_name(v->name);
		v->cname = arena_strdup(g.A, c);
		free(c);
		switch (r->bindings[i].type) {
		case TY_VALUE: v->kind = MT_VALUE; break;
		case TY_NODE: v->kind = MT_NODE; break;
		case TY_VALUES: v->kind = MT_REST; break;
		case TY_INT: case TY_BOOL: case TY_DTYPE: v->kind = MT_INT; break;
		case TY_FLOAT: v->kind = MT_FLOAT; break;
		case TY_STRING: v->kind = MT_STR; break;
		case TY_INTS: v->kind = MT_INTS; break;
		case TY_FLOATS: v->kind = MT_FLOATS; break;
		default:
			unsupported(&g, r->bindings[i].pos, "binding '%s' of type %s", v->name, dsl_type_name(r->bindings[i].type));
		}
		v->reg = new_reg_named(&g, v->kind, v->cname);
	}
	find_node_pats(&g, r->lhs);
	const Pattern *root = r->lhs;
	add_node(&g, 0, false, root);
	if (root->bind) {
		Var *v = var(&g, root->bind);
		v->reg = 0;
		v->bound = true;
		((const char **)g.cnames.p)[0] = v->cname;
	}
	lower_op(&g, root, 0, "");
	out->nmatch = g.insns.n;

	/* single use of every matched node but the root */
	for (int i = 1; i < g.nodes.n; i++) {
		if (((bool *)g.shared.p)[i])
			continue;
		MInsn *x = insn(&g, MI_SINGLE_USE);
		x->src = ((int *)g.nodes.p)[i];
		x->index = ((int *)g.refs.p)[i];
		x->desc = ((const char **)g.node_desc.p)[i];
		x->step = g.step++;
	}
	for (int i = 0; i < g.deferred.n; i++) {
		MInsn *x = insn(&g, MI_CHECK);
		*x = ((MInsn *)g.deferred.p)[i];
		x->step = g.step++;
	}
	if (r->guard) {
		MInsn *x = insn(&g, MI_GUARD);
		x->e = num_expr(&g, r->guard);
		x->index = may_unknown(x->e);
		x->step = g.step++;
		x->why_kind = W_GUARD;
		x->why = x->index ? S(&g, "%%s%s", guard_format(&g, guard_text)) : guard_format(&g, guard_text);
		if (!g.failed && g.why) {
			/* x points into g.insns, which lowering the parts leaves alone */
			Vec parts = {0};
			guard_parts(&g, r->guard, &parts);
			x->nparts = parts.n;
			x->parts = vec_to_arena(&g, &parts, sizeof(MPart));
			free(parts.p);
		}
	}

	/* the result: what it computes first (MI_PRE), then the tree to build */
	const Expr *rhs = r->rhs;
	int nres = rhs->kind == EXPR_TUPLE ? rhs->n : 1;
	out->results = arena_alloc(g.A, sizeof *out->results * (size_t)(nres + 1));
	out->nresults = nres;
	for (int i = 0; i < nres; i++)
		out->results[i] = val_expr(&g, rhs->kind == EXPR_TUPLE ? rhs->items[i] : rhs, (Like){0});
	if (r->nalso) {
		MVal *y = out->results[0];
		if (y->kind != MV_NODE || y->nforms)
			unsupported(&g, r->rhs_bind_pos, "naming a result whose op moves an input to an attribute in older opsets");
		out->also = arena_alloc(g.A, sizeof *out->also * (size_t)r->nalso);
		out->nalso = r->nalso;
		y->outs = 1;
		for (int i = 0; i < r->nalso; i++) {
			Var *v = var(&g, r->also[i].name);
			out->also[i] = (MAlso){v ? v->reg : 0, v && v->node ? v->node->output : 0, r->also[i].output};
			y->outs |= 1u << r->also[i].output;
		}
	}
	bool pre_unknown = false;
	for (int i = 0; i < g.pre.n; i++) {
		*(MInsn *)vec_push(&g.insns, sizeof(MInsn)) = ((MInsn *)g.pre.p)[i];
		pre_unknown = pre_unknown || may_unknown(((MInsn *)g.pre.p)[i].e);
	}
	if (pre_unknown) {
		MInsn *x = insn(&g, MI_PRE_KNOWN);
		x->step = g.step++;
		x->why_kind = W_UNKNOWN;
		x->why = "the result needs a shape, dtype or constant that is unknown";
	}
	for (int i = 0; i < g.likes.n; i++) {
		MInsn *x = insn(&g, MI_LIKE);
		x->e = ((MExpr **)g.likes.p)[i];
		x->step = g.step++;
		x->why_kind = W_UNKNOWN;
		x->why = W(&g, "the dtype of %s is unknown", ((const char **)g.like_text.p)[i]);
	}
	out->build_step = g.build_unknown ? g.step++ : 0;
	out->out0 = root->output > 0 ? root->output : 0;
	out->nnodes = g.nodes.n;
	out->nodes = vec_to_arena(&g, &g.nodes, sizeof(int));
	out->pats = vec_to_arena(&g, &g.pats, sizeof(MPatNode));
	out->ninsns = g.insns.n;
	out->insns = vec_to_arena(&g, &g.insns, sizeof(MInsn));
	out->nregs = g.regs.n;
	out->cnames = vec_to_arena(&g, &g.cnames, sizeof(char *));
	out->vnames = arena_alloc(g.A, sizeof *out->vnames * (size_t)(out->nregs + 1));
	for (int i = 0; i < g.nvars; i++)
		if (var(&g, g.vars[i].name) == &g.vars[i] && g.vars[i].bound && g.vars[i].reg < out->nregs)
			out->vnames[g.vars[i].reg] = g.vars[i].name;
	free(g.regs.p);
	free(g.tree.p);
	free(g.node_desc.p);
	free(g.shared.p);
	free(g.refs.p);
	free(g.deferred.p);
	free(g.pre.p);
	free(g.likes.p);
	free(g.like_text.p);
	free(g.vars);
	namemap_free(g.var_names);
	return g.failed ? -1 : g.nloop;
}

static int by_root_then_priority(const void *a, const void *b, void *ctx)
{
	const MRule *rules = ctx;
	const MRule *x = &rules[*(const int *)a], *y = &rules[*(const int *)b];
	int c = strcmp(x->root_domain, y->root_domain);
	if (!c)
		c = strcmp(x->root_op, y->root_op);
	if (c)
		return c;
	if (x->rule->priority != y->rule->priority)
		return x->rule->priority > y->rule->priority ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

static MRuleSet *lower_set(RuleFile **files, int nfiles, Diag *d, bool each)
{
	int errors = d->nerrors;
	MRuleSet *set = calloc(1, sizeof *set);
	if (!set)
		abort();
	set->arena = arena_new();
	int n = 0;
	for (int i = 0; i < nfiles; i++)
		n += files[i] ? files[i]->nrules : 0;
	set->rules = arena_alloc(set->arena, sizeof *set->rules * (size_t)(n + 1));
	for (int i = 0; i < nfiles; i++)
		for (int k = 0; files[i] && k < files[i]->nrules; k++) {
			const Rule *r = files[i]->rules[k];
			if (!r || !r->lhs || r->lhs->kind != PAT_OP)
				continue;
			MRule *m = &set->rules[set->nrules++];
			m->file = files[i];
			m->rule = r;
			m->name = r->name;
			m->level = dsl_rule_level(files[i], r);
			m->line = r->pos.line;
			m->opset_min = dsl_rule_opset_lo(r);
			m->opset_max = r->opset_max > 0 && r->opset_max < INT32_MAX ? r->opset_max : 0;
			m->vendor = dsl_expr_emits_vendor(r->rhs);
			m->tolerance = r->tolerance;
			m->finite_data = r->finite_data;
			m->moderate_data = r->moderate_data;
			m->nonneg_indices = r->nonneg_indices;
			m->root_domain = r->lhs->domain ? r->lhs->domain : "";
			m->root_op = r->lhs->name;
			m->root_kind = *m->root_domain ? OP_UNKNOWN : op_kind_lookup(m->root_op);
			char *pat, *guard, *res;
			dsl_rule_text(files[i], r, &pat, &guard, &res);
			m->pat_text = arena_strdup(set->arena, pat);
			m->guard_text = guard ? arena_strdup(set->arena, guard) : NULL;
			m->res_text = arena_strdup(set->arena, res);
			free(pat);
			free(guard);
			free(res);
			int errs = d->nerrors;
			int ns = lower_rule(set, files, nfiles, d, files[i], r, m->guard_text, !each, &m->prog);
			m->failed = ns < 0 || d->nerrors != errs;
			if (ns < 0)
				continue;
			m->nsites = ns;
		}
	set->order = arena_alloc(set->arena, sizeof *set->order * (size_t)(set->nrules + 1));
	for (int i = 0; i < set->nrules; i++)
		set->order[i] = i;
	qsort_r(set->order, (size_t)set->nrules, sizeof *set->order, by_root_then_priority, set->rules);
	if (d->nerrors != errors && !each) {
		dsl_lower_free(set);
		return NULL;
	}
	return set;
}

MRuleSet *dsl_lower(RuleFile **files, int nfiles, Diag *d)
{
	return lower_set(files, nfiles, d, false);
}

MRuleSet *dsl_lower_each(RuleFile **files, int nfiles, Diag *d)
{
	return lower_set(files, nfiles, d, true);
}

void dsl_lower_free(MRuleSet *s)
{
	if (!s)
		return;
	arena_free(s->arena);
	free(s->externs);
	free(s);
}
