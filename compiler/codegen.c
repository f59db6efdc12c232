/* codegen.c - the C emitter of graftc: checked rules -> readable matchers.
 *
 * Each rule becomes one function, straight-line code in the order of its
 * pattern (root first, then each operand, depth first, the way the checker
 * binds): the root's attributes, then its operands, each either a value
 * named after the pattern variable, a node named after its binding (or its
 * path, n_0_1), a constant check or a literal.  A failed check leaves the
 * function, or, inside a commutative op's swap loop, tries the other order.
 * Then single use, the guard, and the result built through the builder API.
 * Operands that older opsets spell as attributes (dsl/opset_forms) are
 * RwgArgs, read and compared by runtime/engine/rw_gen.c whatever their form.
 *
 * The same generator, run with `leaf` set once per way a rule's
 * commutative ops can take their operands, writes apply_<rule>_<k>(): the
 * rule without the checks a decision tree can share (Test: an operand's
 * producer op, an int attribute literal, an operand present or constant,
 * inputs absent), which it records instead.  The tree (tree_insert) is a
 * trie of those tests over the rules of one root op in the order they are
 * tried; emit_kids writes it as nested ifs, with a switch where sibling
 * tests ask for different ops of the same operand.  With `why` set, the
 * straight-line function reports its first failed condition (WHY) instead
 * of failing silently, for graft optimize --why.
 *
 * Everything the generator cannot compile yet is an error at its position
 * ("not supported by the code generator yet: ..."): a rule is compiled
 * right or not at all. */
#include "codegen.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "mprog.h"
#include "opset_forms.h"

/* ---- growing strings ----------------------------------------------------------------- */

typedef struct Buf {
	char *s;
	size_t n, cap;
} Buf;

static void bput(Buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s)
			abort();
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

/* A formatted string (malloc'd): what every emitter below formats with. */
static char *vfmt(const char *f, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, f, ap) < 0)
		abort();
	return s;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char *s = vfmt(f, ap);
	va_end(ap);
	return s;
}

static void bprintf(Buf *b, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(Buf *b, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char *s = vfmt(f, ap);
	va_end(ap);
	bput(b, s, strlen(s));
	free(s);
}

/* One line of code at depth tabs. */
static void vline(Buf *out, int depth, const char *f, va_list ap)
{
	for (int i = 0; i < depth; i++)
		bput(out, "\t", 1);
	char *s = vfmt(f, ap);
	bput(out, s, strlen(s));
	bput(out, "\n", 1);
	free(s);
}

/* ---- per-rule state ------------------------------------------------------------------ */

typedef enum VarKind {
	VK_NONE, VK_VALUE, VK_ARG, VK_NODE, VK_REST, VK_INT, VK_FLOAT, VK_STR, VK_INTS, VK_FLOATS,
} VarKind;

typedef struct Var {
	const char *name;
	char *cname;
	VarKind kind;
	bool bound;                 /* declared by the code so far */
	const Pattern *node;        /* VK_NODE: the pattern it binds */
} Var;

/* A test the decision tree makes once for every rule of a root op that
 * needs it.  Paths name nodes by the inputs that lead to them from the
 * root: "" the root, "_1_0" the producer of input 0 of the producer of
 * input 1; the tree calls that node p_1_0. */
typedef enum TestKind {
	T_OP,                       /* input `index` of path is output `out` of a default-domain `op` */
	T_PRESENT,                  /* input `index` of path is present */
	T_CONST,                    /* input `index` of path is a constant */
	T_ABSENT_FROM,              /* inputs `index` on of path are absent */
	T_ATTR_INT,                 /* int attribute `attr` of path (or its default) is `value` */
} TestKind;

typedef struct Test {
	TestKind kind;
	const char *path;
	int index;
	const char *op;
	int out;
	const char *attr;
	int64_t value;
	char *key;                  /* equal keys: the same test */
} Test;

typedef struct Gen {
	Diag *d;
	const RuleFile *f;
	const Rule *r;
	Buf *out;                   /* the function body being written */
	Buf pre;                    /* result: values computed before rw_begin */
	int depth;                  /* indentation */
	int loops;                  /* open swap loops: failing continues the innermost */
	int nloop;                  /* swap loops so far (their counters' names) */
	Var *vars;
	int nvars;
	char **nodes;               /* matched nodes, root first */
	char **node_desc;           /* for --why: "c (Conv)" */
	bool *shared;
	int nnodes, capnodes;
	char **deferred;            /* checks that need every binding */
	char **deferred_why;
	int ndeferred;
	char **likes;               /* values whose dtype a scalar takes: must be known */
	int nlikes;
	int ntmp;
	bool failed;
	bool build_unknown;         /* building may find something unknown: check before commit */
	int lo, hi;                 /* the opsets the rule can run at */
	int step;                   /* conditions so far: the step of a --why failure */
	/* a leaf (apply_<rule>_<variant>) for the decision tree: */
	bool leaf;
	unsigned orient;            /* bit k set: swap site k takes its operands the other way round */
	int nsites;                 /* swap sites in the rule */
	Test *tests;                /* the checks left to the tree, in order */
	int ntests;
	char **tree_paths;          /* node paths the tree names */
	int ntree_paths;
} Gen;

static void unsupported(Gen *g, SrcPos pos, const char *what, ...) __attribute__((format(printf, 3, 4)));
static void unsupported(Gen *g, SrcPos pos, const char *what, ...)
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

static void line(Gen *g, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void line(Gen *g, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	vline(g->out, g->depth, f, ap);
	va_end(ap);
}

static const char *fail_stmt(Gen *g)
{
	return g->loops ? "continue;" : "return false;";
}

/* Is s one call, f(...), so that !s needs no parentheses? */
static bool is_call(const char *s)
{
	const char *p = s;
	while (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
		p++;
	if (p == s || *p != '(')
		return *p == 0 && p != s;
	int depth = 0;
	for (; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p[1] == 0;
	}
	return false;
}

/* s without parentheses around all of it (takes and returns ownership) */
static char *strip_parens(char *s)
{
	size_t n = strlen(s);
	while (n >= 2 && s[0] == '(' && s[n - 1] == ')') {
		int depth = 0;
		bool whole = true;
		for (size_t i = 0; i < n - 1 && whole; i++) {
			depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
			whole = depth > 0;
		}
		if (!whole)
			break;
		memmove(s, s + 1, n - 2);
		n -= 2;
		s[n] = 0;
	}
	return s;
}

/* What a failed check says in a --why run: the C arguments of
 * rw_why_fail after the step, `RW_WHY_KIND, "format", args...` (malloc'd). */
static char *why(const char *kind, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *why(const char *kind, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char *args = vfmt(f, ap);
	va_end(ap);
	char *r = fmt("RW_WHY_%s, %s", kind, args);
	free(args);
	return r;
}

/* The statement after a failed condition; w (owned) says why, for --why.
 * In a leaf (apply_) function there is no --why: just fail. */
static void fail(Gen *g, char *w)
{
	int step = g->step++;
	if (g->leaf || !w) {
		line(g, "\t%s", fail_stmt(g));
	} else if (!g->loops) {
		line(g, "\treturn WHY(%d, %s);", step, w);
	} else {
		line(g, "\t(void)WHY(%d, %s);", step, w);
		line(g, "\tcontinue;");
	}
	free(w);
}

/* `if (<fail_if>) fail`: braces when the failure takes two statements */
static void fail_if(Gen *g, const char *fail_if, char *w)
{
	bool braces = !g->leaf && w && g->loops;
	line(g, "if (%s)%s", fail_if, braces ? " {" : "");
	fail(g, w);
	if (braces)
		line(g, "}");
}

/* if (!(cond)) fail */
static void check(Gen *g, char *w, const char *cond)
{
	char *s = is_call(cond) ? fmt("!%s", cond) : fmt("!(%s)", cond);
	fail_if(g, s, w);
	free(s);
}

/* if (cond) fail: cond says what is wrong */
static void check_not(Gen *g, char *w, const char *cond)
{
	fail_if(g, cond, w);
}

/* check / check_not with a formatted condition: one formatter, two emitters */
static void check_vf(Gen *g, char *w, bool negate, const char *f, va_list ap)
{
	char *s = vfmt(f, ap);
	if (negate)
		check_not(g, w, s);
	else
		check(g, w, s);
	free(s);
}

static void checkf(Gen *g, char *w, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void checkf(Gen *g, char *w, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	check_vf(g, w, false, f, ap);
	va_end(ap);
}

static void check_notf(Gen *g, char *w, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void check_notf(Gen *g, char *w, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	check_vf(g, w, true, f, ap);
	va_end(ap);
}

/* ---- tests the decision tree makes ------------------------------------------------------ */

/* Is the node at path one the tree names (p_0_1)?  The root is; a node
 * fetched by a T_OP test is; nodes under a vendor op's operand are not. */
static bool tree_path(Gen *g, const char *path)
{
	if (!*path)
		return true;
	for (int i = 0; i < g->ntree_paths; i++)
		if (!strcmp(g->tree_paths[i], path))
			return true;
	return false;
}

/* A check the decision tree can make instead of the rule: in a straight
 * rule_ function it is emitted like check_not(fail_cond); in a leaf it is
 * left out and recorded for the tree. */
static void tree_test(Gen *g, Test t, char *w, const char *fail_cond)
{
	if (!g->leaf) {
		check_not(g, w, fail_cond);
		return;
	}
	free(w);
	switch (t.kind) {
	case T_OP: t.key = fmt("op%s:%d=%s/%d", t.path, t.index, t.op, t.out); break;
	case T_PRESENT: t.key = fmt("present%s:%d", t.path, t.index); break;
	case T_CONST: t.key = fmt("const%s:%d", t.path, t.index); break;
	case T_ABSENT_FROM: t.key = fmt("absent%s:%d", t.path, t.index); break;
	case T_ATTR_INT: t.key = fmt("attr%s:%s=%lld", t.path, t.attr, (long long)t.value); break;
	}
	t.path = fmt("%s", t.path);
	/* a constant is present: the T_CONST test makes the T_PRESENT before it */
	Test *last = g->ntests ? &g->tests[g->ntests - 1] : NULL;
	if (t.kind == T_CONST && last && last->kind == T_PRESENT && last->index == t.index && !strcmp(last->path, t.path)) {
		free((char *)last->path);
		free(last->key);
		g->ntests--;
	}
	g->tests = realloc(g->tests, sizeof *g->tests * (size_t)(g->ntests + 1));
	if (!g->tests)
		abort();
	g->tests[g->ntests++] = t;
	if (t.kind == T_OP) {
		g->tree_paths = realloc(g->tree_paths, sizeof *g->tree_paths * (size_t)(g->ntree_paths + 1));
		if (!g->tree_paths)
			abort();
		g->tree_paths[g->ntree_paths++] = fmt("%s_%d", t.path, t.index);
	}
}

static Var *var(Gen *g, const char *name)
{
	for (int i = 0; i < g->nvars; i++)
		if (strcmp(g->vars[i].name, name) == 0)
			return &g->vars[i];
	return NULL;
}

static char *tmp_name(Gen *g, const char *prefix)
{
	return fmt("%s_%d", prefix, ++g->ntmp);
}

static void add_node(Gen *g, const char *cname, bool shared, const Pattern *p)
{
	if (g->nnodes == g->capnodes) {
		g->capnodes = g->capnodes ? g->capnodes * 2 : 8;
		g->nodes = realloc(g->nodes, sizeof *g->nodes * (size_t)g->capnodes);
		g->node_desc = realloc(g->node_desc, sizeof *g->node_desc * (size_t)g->capnodes);
		g->shared = realloc(g->shared, sizeof *g->shared * (size_t)g->capnodes);
		if (!g->nodes || !g->node_desc || !g->shared)
			abort();
	}
	g->nodes[g->nnodes] = fmt("%s", cname);
	g->node_desc[g->nnodes] = p->bind ? fmt("%s (%s)", p->bind, p->name) : fmt("%s", p->name);
	g->shared[g->nnodes++] = shared;
}

static void defer(Gen *g, char *cond, char *w)
{
	g->deferred = realloc(g->deferred, sizeof *g->deferred * (size_t)(g->ndeferred + 1));
	g->deferred_why = realloc(g->deferred_why, sizeof *g->deferred_why * (size_t)(g->ndeferred + 1));
	if (!g->deferred || !g->deferred_why)
		abort();
	g->deferred_why[g->ndeferred] = w;
	g->deferred[g->ndeferred++] = cond;
}

/* ---- literals -------------------------------------------------------------------------- */

/* A double as C source that reads back exactly, always with a '.' or exponent. */
static char *c_double(double v)
{
	char buf[48];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".eEni"))
		strcat(buf, ".0");
	if (strstr(buf, "inf"))
		return fmt("%sHUGE_VAL", v < 0 ? "-" : "");
	return fmt("%s", buf);
}

/* s as the inside of a C string literal; in_format: also for a printf
 * format (% doubled). */
static char *c_escaped(const char *s, bool in_format)
{
	Buf b = {0};
	bput(&b, "", 0);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			bprintf(&b, "\\%c", c);
		else if (c == '%' && in_format)
			bput(&b, "%%", 2);
		else if (c < 0x20 || c >= 0x7f)
			bprintf(&b, "\\%03o", c);
		else
			bput(&b, (const char *)&c, 1);
	}
	return b.s;
}

static char *c_string(const char *s)
{
	char *in = c_escaped(s, false), *r = fmt("\"%s\"", in);
	free(in);
	return r;
}

static const char *dtype_c(const char *name)
{
	static const char *const map[][2] = {
		{"float32", "DT_FLOAT"}, {"float16", "DT_FLOAT16"}, {"float64", "DT_DOUBLE"},
		{"bfloat16", "DT_BFLOAT16"}, {"int8", "DT_INT8"}, {"int16", "DT_INT16"},
		{"int32", "DT_INT32"}, {"int64", "DT_INT64"}, {"uint8", "DT_UINT8"},
		{"uint16", "DT_UINT16"}, {"uint32", "DT_UINT32"}, {"uint64", "DT_UINT64"}, {"bool", "DT_BOOL"},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(map[i][0], name) == 0)
			return map[i][1];
	return NULL;
}

/* ---- opset forms ------------------------------------------------------------------------- */

/* The FORM_ATTR entry of canonical input `input` of op within g's opsets,
 * or NULL; *count gets how many there are (the generator handles one). */
static const OpsetForm *attr_form(Gen *g, const char *op, int input, int *count)
{
	size_t n;
	const OpsetForm *all = opset_forms_all(&n), *found = NULL;
	*count = 0;
	for (size_t i = 0; i < n; i++) {
		const OpsetForm *f = &all[i];
		if (f->kind == FORM_ATTR && f->input == input && strcmp(f->op, op) == 0 && f->first <= g->hi &&
		    f->last >= g->lo) {
			found = found ? found : f;
			(*count)++;
		}
	}
	return found;
}

/* ---- expressions: guards and computed values --------------------------------------------- */

static char *num_expr(Gen *g, const Expr *e);
static char *val_expr(Gen *g, const Expr *e, const char *like);

/* A value for a fact (rank, shape, ...): a ValueId expression. */
static char *fact_value(Gen *g, const Expr *e, bool allow_arg)
{
	if (e->kind == EXPR_CALL && strcmp(e->s, "value") == 0 && e->n == 1)
		e = e->items[0];
	if (e->kind == EXPR_VAR) {
		Var *v = var(g, e->s);
		if (v && v->kind == VK_VALUE)
			return fmt("%s", v->cname);
		if (v && v->kind == VK_NODE)
			return fmt("rwg_out(rw, %s, %d)", v->cname, v->node ? v->node->output : 0);
		if (v && v->kind == VK_ARG && allow_arg)
			return fmt("%s", v->cname);
		if (v && v->kind == VK_ARG) {
			unsupported(g, e->pos, "'%s' here: an operand that older opsets spell as an attribute", e->s);
			return fmt("0");
		}
	}
	if (e->kind == EXPR_INDEX && e->items[0]->type == TY_VALUES)
		return num_expr(g, e);
	unsupported(g, e->pos, "a fact of a value built by the result");
	return fmt("0");
}

static bool is_arg_var(Gen *g, const Expr *e)
{
	if (e->kind == EXPR_CALL && strcmp(e->s, "value") == 0 && e->n == 1)
		e = e->items[0];
	Var *v = e->kind == EXPR_VAR ? var(g, e->s) : NULL;
	return v && v->kind == VK_ARG;
}

static char *call_expr(Gen *g, const Expr *e)
{
	const char *f = e->s;
	char *a = NULL, *b = NULL, *r = NULL;
#define ARG(i) (e->n > (i) ? e->items[i] : NULL)
	if (!strcmp(f, "rank") || !strcmp(f, "shape") || !strcmp(f, "numel") || !strcmp(f, "dtype")) {
		a = fact_value(g, ARG(0), false);
		r = fmt("rwg_%s(rw, %s, &unknown)", strcmp(f, "dtype") ? f : "dtype_k", a);
	} else if (!strcmp(f, "dim")) {
		a = fact_value(g, ARG(0), false);
		b = num_expr(g, ARG(1));
		r = fmt("rwg_dim(rw, %s, %s, &unknown)", a, b);
	} else if (!strcmp(f, "uses")) {
		a = fact_value(g, ARG(0), false);
		r = fmt("rwg_uses(rw, %s)", a);
	} else if (!strcmp(f, "outputs")) {
		Var *v = var(g, ARG(0)->s);
		r = fmt("rwg_outputs(rw, %s)", v ? v->cname : "0");
	} else if (!strcmp(f, "scalar") || !strcmp(f, "ints")) {
		bool arg = is_arg_var(g, ARG(0));
		a = fact_value(g, ARG(0), true);
		r = fmt("rwg_%s%s(rw, %s, &unknown)", arg ? "arg_" : "", f, a);
	} else if (!strcmp(f, "absent")) {
		Var *v = var(g, ARG(0)->s);
		if (v && v->kind == VK_ARG)
			r = fmt("rwg_arg_absent(rw, %s)", v->cname);
		else
			r = fmt("!%s", v ? v->cname : "0");
	} else if (!strcmp(f, "len")) {
		const Expr *l = ARG(0);
		if (l->type == TY_VALUES) {
			Var *v = var(g, l->s);
			r = fmt("rwg_rest_len(rw, %s)", v ? v->cname : "?");
		} else if (l->type == TY_INTS || l->type == TY_FLOATS) {
			a = num_expr(g, l);
			r = fmt("(int64_t)%s.n", a);
		} else {
			unsupported(g, e->pos, "len() of strings");
		}
	} else if (!strcmp(f, "is_identity")) {
		a = num_expr(g, ARG(0));
		r = fmt("rwg_is_identity(%s)", a);
	} else if (!strcmp(f, "compose")) {
		a = num_expr(g, ARG(0));
		b = num_expr(g, ARG(1));
		r = fmt("rwg_compose(%s, %s, &unknown)", a, b);
	} else if (!strcmp(f, "ones")) {
		a = num_expr(g, ARG(0));
		r = fmt("rwg_ones(%s, &unknown)", a);
	} else if (!strcmp(f, "opset")) {
		r = fmt("(int64_t)rw_opset(rw)");
	} else if (!strcmp(f, "value")) {
		r = fact_value(g, e, false);
	} else {
		/* math on plain numbers */
		static const char *const math[][2] = {
			{"abs", "fabs"}, {"ceil", "ceil"}, {"floor", "floor"}, {"erf", "erf"}, {"exp", "exp"},
			{"log", "log"}, {"sqrt", "sqrt"}, {"tanh", "tanh"}, {"max", "fmax"}, {"min", "fmin"},
			{"pow", "pow"},
		};
		const char *cf = NULL;
		for (size_t i = 0; i < sizeof math / sizeof math[0]; i++)
			if (!strcmp(math[i][0], f))
				cf = math[i][1];
		if (e->n >= 1)
			a = num_expr(g, ARG(0));
		if (e->n >= 2)
			b = num_expr(g, ARG(1));
		const char *cast = e->type == TY_INT ? "(int64_t)" : "";
		if (cf && e->n == 1)
			r = fmt("%s%s((double)%s)", cast, cf, a);
		else if (cf && e->n == 2)
			r = fmt("%s%s((double)%s, (double)%s)", cast, cf, a, b);
		else if (!strcmp(f, "neg"))
			r = fmt("(-%s)", a);
		else if (!strcmp(f, "relu"))
			r = fmt("(%s > 0 ? %s : 0)", a, a);
		else if (!strcmp(f, "reciprocal"))
			r = fmt("(1.0 / %s)", a);
		else if (!strcmp(f, "sigmoid"))
			r = fmt("(1.0 / (1.0 + exp(-(double)%s)))", a);
		else
			unsupported(g, e->pos, "'%s' in a guard", f);
	}
#undef ARG
	free(a);
	free(b);
	return r ? r : fmt("0");
}

/* An extern call: C_NAME(rw, args). */
static const Extern *find_extern(RuleFile **files, int nfiles, const char *name);
static RuleFile **g_files;
static int g_nfiles;

static char *extern_call(Gen *g, const Expr *e)
{
	const Extern *x = find_extern(g_files, g_nfiles, e->s);
	if (!x) {
		unsupported(g, e->pos, "call of '%s'", e->s);
		return fmt("0");
	}
	Buf b = {0};
	bprintf(&b, "%s(rw", x->c_name ? x->c_name : x->name);
	for (int i = 0; i < e->n; i++) {
		DslType p = i < x->nparams ? x->params[i] : TY_UNKNOWN;
		char *a;
		if (p == TY_VALUE || p == TY_TENSOR)
			a = fact_value(g, e->items[i], false);
		else if (p == TY_FLOATS && e->items[i]->type == TY_INTS) {
			char *in = num_expr(g, e->items[i]);
			a = fmt("rwg_ints_to_floats(%s)", in);
			free(in);
		} else
			a = num_expr(g, e->items[i]);
		bprintf(&b, ", %s", a);
		free(a);
	}
	bput(&b, ")", 1);
	return b.s;
}

/* A guard or computed expression (not a built value) as a C expression:
 * int64_t, double, bool, int (dtype), RwgStr, RwgInts or RwgFloats. */
static char *num_expr(Gen *g, const Expr *e)
{
	char *a = NULL, *b = NULL, *r = NULL;
	switch (e->kind) {
	case EXPR_INT: return fmt("%lld", (long long)e->i);
	case EXPR_FLOAT: return c_double(e->f);
	case EXPR_BOOL: return fmt("%s", e->i ? "true" : "false");
	case EXPR_STRING: {
		char *s = c_string(e->s);
		r = fmt("rwg_str(%s, %zu)", s, strlen(e->s));
		free(s);
		return r;
	}
	case EXPR_LIST: {
		if (e->type == TY_STRINGS) {
			unsupported(g, e->pos, "lists of strings");
			return fmt("0");
		}
		bool fl = e->type == TY_FLOATS;
		if (e->n == 0)
			return fmt("rwg_%s_lit(0, NULL)", fl ? "floats" : "ints");
		Buf bb = {0};
		bprintf(&bb, "rwg_%s_lit(%d, (const %s[]){", fl ? "floats" : "ints", e->n, fl ? "double" : "int64_t");
		for (int i = 0; i < e->n; i++) {
			char *it = num_expr(g, e->items[i]);
			bprintf(&bb, "%s%s", i ? ", " : "", it);
			free(it);
		}
		bput(&bb, "})", 2);
		return bb.s;
	}
	case EXPR_VAR: {
		Var *v = var(g, e->s);
		if (!v) {
			const char *dt = dtype_c(e->s);
			return fmt("%s", dt ? dt : "0");
		}
		if (v->kind == VK_VALUE || v->kind == VK_NODE || v->kind == VK_ARG)
			return fact_value(g, e, true);
		return fmt("%s", v->cname);
	}
	case EXPR_CALL:
		if (dsl_builtin_lookup(e->s))
			return call_expr(g, e);
		return extern_call(g, e);
	case EXPR_UNARY:
		a = num_expr(g, e->items[0]);
		r = fmt(e->op == EX_NOT ? "!%s" : "(-%s)", a);
		free(a);
		return r;
	case EXPR_BINARY: {
		const Expr *l = e->items[0], *rr = e->items[1];
		a = num_expr(g, l);
		b = num_expr(g, rr);
		bool lists = l->type == TY_INTS || l->type == TY_FLOATS || rr->type == TY_INTS || rr->type == TY_FLOATS;
		bool strs = l->type == TY_STRING || rr->type == TY_STRING;
		switch (e->op) {
		case EX_CONCAT:
			if (l->type == TY_INTS && rr->type == TY_INTS)
				r = fmt("rwg_ints_concat(%s, %s, &unknown)", a, b);
			else
				unsupported(g, e->pos, "'++' of floats");
			break;
		case EX_EQ:
		case EX_NE: {
			const char *neg = e->op == EX_NE ? "!" : "";
			if (strs)
				r = fmt("%srwg_str_eq(%s, %s)", neg, a, b);
			else if (l->type == TY_INTS && rr->type == TY_INTS)
				r = fmt("%srwg_ints_eq(%s, %s)", neg, a, b);
			else if (lists) {
				char *fa = l->type == TY_INTS ? fmt("rwg_ints_to_floats(%s)", a) : fmt("%s", a);
				char *fb = rr->type == TY_INTS ? fmt("rwg_ints_to_floats(%s)", b) : fmt("%s", b);
				r = fmt("%srwg_floats_eq(%s, %s)", neg, fa, fb);
				free(fa);
				free(fb);
			} else
				r = fmt("%s %s %s", a, e->op == EX_EQ ? "==" : "!=", b);
			break;
		}
		case EX_DIV:
			if (l->type == TY_INT && rr->type == TY_INT)
				r = fmt("rwg_idiv(%s, %s, &unknown)", a, b);
			else
				r = fmt("((double)%s / %s)", a, b);
			break;
		default: {
			static const char *const ops[] = {
				[EX_ADD] = "+", [EX_SUB] = "-", [EX_MUL] = "*", [EX_LT] = "<", [EX_LE] = "<=",
				[EX_GT] = ">", [EX_GE] = ">=", [EX_AND] = "&&", [EX_OR] = "||",
			};
			if (lists || strs || (size_t)e->op >= sizeof ops / sizeof ops[0] || !ops[e->op]) {
				unsupported(g, e->pos, "this operator on lists or strings");
				break;
			}
			bool paren = e->op == EX_AND || e->op == EX_OR || e->op == EX_ADD || e->op == EX_SUB;
			r = fmt(paren ? "(%s %s %s)" : "%s %s %s", a, ops[e->op], b);
		}
		}
		free(a);
		free(b);
		return r ? r : fmt("0");
	}
	case EXPR_INDEX: {
		const Expr *l = e->items[0];
		b = num_expr(g, e->items[1]);
		if (l->type == TY_VALUES) {
			Var *v = var(g, l->s);
			r = fmt("rwg_rest_at(rw, %s, %s, &unknown)", v ? v->cname : "?", b);
		} else {
			a = num_expr(g, l);
			r = fmt("rwg_%s_at(%s, %s, &unknown)", l->type == TY_FLOATS ? "floats" : "ints", a, b);
		}
		free(a);
		free(b);
		return r;
	}
	default:
		unsupported(g, e->pos, "this expression in a guard or attribute");
		return fmt("0");
	}
}

/* The C type of a computed expression. */
static const char *c_type(DslType t)
{
	switch (t) {
	case TY_INT: return "int64_t";
	case TY_FLOAT: return "double";
	case TY_BOOL: return "bool";
	case TY_DTYPE: return "int";
	case TY_STRING: return "RwgStr";
	case TY_INTS: return "RwgInts";
	case TY_FLOATS: return "RwgFloats";
	default: return "ValueId";
	}
}

/* A computed expression of the result as a name or literal: anything that
 * may be unknown goes to a local computed before rw_begin. */
static char *pre_value(Gen *g, const Expr *e)
{
	char *x = num_expr(g, e);
	if (dsl_is_literal(e))
		return x;
	if (e->kind == EXPR_VAR) {
		Var *v = var(g, e->s);
		if (v && v->kind != VK_VALUE && v->kind != VK_NODE && v->kind != VK_ARG)
			return x;
	}
	char *t = tmp_name(g, "a");
	bprintf(&g->pre, "%s %s = %s;\n", c_type(e->type), t, x);
	free(x);
	return t;
}

/* ---- results: building values ---------------------------------------------------------------- */

/* A pattern value (never absent) whose dtype e's value has, or NULL. */
static char *like_of(Gen *g, const Expr *e)
{
	switch (e->kind) {
	case EXPR_VAR: {
		Var *v = var(g, e->s);
		if (v && v->kind == VK_VALUE && !(e->binding && e->binding->optional))
			return fmt("%s", v->cname);
		if (v && v->kind == VK_NODE)
			return fmt("rwg_out(rw, %s, %d)", v->cname, v->node ? v->node->output : 0);
		return NULL;
	}
	case EXPR_BINARY:
	case EXPR_UNARY:
	case EXPR_CALL:
		if (e->kind == EXPR_CALL && (!strcmp(e->s, "cast") || !dsl_builtin_lookup(e->s)))
			return NULL;
		for (int i = 0; i < e->n && (e->kind != EXPR_CALL || strcmp(e->s, "reshape") || i == 0); i++) {
			char *l = like_of(g, e->items[i]);
			if (l)
				return l;
		}
		return NULL;
	case EXPR_DEFAULT:
		return like_of(g, e->items[1]);
	case EXPR_OP:
		if (e->schema && e->n > 0 && e->schema->ninputs > 0 && e->schema->noutputs > 0 &&
		    strcmp(e->schema->inputs[0].type_str, e->schema->outputs[0].type_str) == 0)
			return like_of(g, e->items[0]);
		return NULL;
	default:
		return NULL;
	}
}

static bool is_number_type(DslType t)
{
	return t == TY_INT || t == TY_FLOAT || t == TY_BOOL;
}

static void add_like(Gen *g, const char *like)
{
	for (int i = 0; i < g->nlikes; i++)
		if (!strcmp(g->likes[i], like))
			return;
	g->likes = realloc(g->likes, sizeof *g->likes * (size_t)(g->nlikes + 1));
	if (!g->likes)
		abort();
	g->likes[g->nlikes++] = fmt("%s", like);
}

/* A value the result builds, as a statement of its own: the builder calls
 * happen in the order the result is read (C leaves the order of calls in
 * one argument list open), the order the interpreter builds in too.
 * Takes ownership of expr; returns the temporary's name. */
static char *hoist(Gen *g, char *expr)
{
	char *t = tmp_name(g, "t");
	line(g, "ValueId %s = %s;", t, expr);
	free(expr);
	return t;
}

/* A number as a scalar constant of like's dtype. */
static char *scalar_value(Gen *g, const Expr *e, const char *like)
{
	if (!like) {
		unsupported(g, e->pos, "a number with no value beside it to take its dtype from");
		return fmt("0");
	}
	add_like(g, like);
	char *x = pre_value(g, e);
	char *r = hoist(g, fmt("rw_const_scalar(rw, rwg_dtype(rw, %s), %s)", like, x));
	free(x);
	return r;
}

/* Build a node: inputs ins[0..nin) (C ValueId expressions, canonical
 * order), in the model opset's form when an input may be an attribute.
 * Returns the node's C name. */
static char *build_node(Gen *g, SrcPos pos, const char *domain, const char *op, char **ins, int nin, int nout)
{
	char *k = tmp_name(g, "k");
	char *in = tmp_name(g, "in");
	int nforms = 0;
	Buf forms = {0};
	for (int i = 0; i < nin && !*domain; i++) {
		int count;
		const OpsetForm *f = attr_form(g, op, i, &count);
		if (dsl_moved_form(op, i, g->lo, g->hi)) {
			unsupported(g, pos, "building '%s', whose input %d moved in older opsets", op, i + 1);
			return k;
		}
		for (size_t a = 0, n; f && a < (opset_forms_all(&n), n); a++) {
			const OpsetForm *x = &opset_forms_all(&n)[a];
			if (x->kind == FORM_ATTR && x->input == i && !strcmp(x->op, op) && x->first <= g->hi &&
			    x->last >= g->lo) {
				bprintf(&forms, "%s{%d, \"%s\", %d, %d}", nforms ? ", " : "", i, x->attr, x->first, x->last);
				nforms++;
			}
		}
	}
	if (nforms) {
		Buf args = {0};
		for (int i = 0; i < nin; i++)
			bprintf(&args, "%srwg_val(%s)", i ? ", " : "", ins[i]);
		line(g, "RwgArg %s[] = {%s};", in, args.s);
		line(g, "static const RwgForm %s_forms[] = {%s};", in, forms.s);
		line(g, "NodeId %s = rwg_node_forms(rw, \"%s\", %s, %d, %d, %s_forms, %d, &unknown);", k, op, in, nin,
		     nout, in, nforms);
		g->build_unknown = true;
		free(args.s);
	} else {
		Buf args = {0};
		for (int i = 0; i < nin; i++)
			bprintf(&args, "%s%s", i ? ", " : "", ins[i]);
		if (nin)
			line(g, "ValueId %s[] = {%s};", in, args.s);
		if (*domain)
			line(g, "NodeId %s = rwg_node_in(rw, \"%s\", \"%s\", %s, %d, %d);", k, domain, op, nin ? in : "NULL",
			     nin, nout);
		else
			line(g, "NodeId %s = rwg_node(rw, \"%s\", %s, %d, %d);", k, op, nin ? in : "NULL", nin, nout);
		free(args.s);
	}
	free(forms.s);
	free(in);
	return k;
}

static char *op1(Gen *g, const char *op, const char *a)
{
	char *t = tmp_name(g, "t");
	line(g, "ValueId %s = rwg_op1(rw, \"%s\", %s);", t, op, a);
	return t;
}

static char *op2(Gen *g, const char *op, const char *a, const char *b)
{
	char *t = tmp_name(g, "t");
	line(g, "ValueId %s = rwg_op2(rw, \"%s\", %s, %s);", t, op, a, b);
	return t;
}

/* Set attribute a of built node k from expression v (a computed value). */
static void set_attr(Gen *g, const char *k, const OpSchema *s, const AttrArg *a)
{
	const OpAttrDef *def = dsl_attr_def(s, a->name);
	if (!def || !a->value) {
		unsupported(g, a->pos, "attribute '%s'", a->name);
		return;
	}
	char *x = pre_value(g, a->value);
	switch (def->type) {
	case ATTR_INT: line(g, "rwg_set_int(rw, %s, \"%s\", %s);", k, a->name, x); break;
	case ATTR_FLOAT: line(g, "rwg_set_float(rw, %s, \"%s\", %s);", k, a->name, x); break;
	case ATTR_STRING: line(g, "rwg_set_str(rw, %s, \"%s\", %s);", k, a->name, x); break;
	case ATTR_INTS: line(g, "rwg_set_ints(rw, %s, \"%s\", %s);", k, a->name, x); break;
	case ATTR_FLOATS:
		if (a->value->type == TY_INTS)
			line(g, "rwg_set_floats(rw, %s, \"%s\", rwg_ints_to_floats(%s));", k, a->name, x);
		else
			line(g, "rwg_set_floats(rw, %s, \"%s\", %s);", k, a->name, x);
		break;
	default: unsupported(g, a->pos, "attribute '%s' of type %s", a->name, attr_type_name((AttrType)def->type));
	}
	free(x);
}

/* The value of a result expression (a C ValueId expression), building what
 * it needs; like: a pattern value whose dtype numbers take. */
static char *val_expr(Gen *g, const Expr *e, const char *like)
{
	if (is_number_type(e->type))
		return scalar_value(g, e, like);
	if (e->type == TY_INTS && e->kind != EXPR_VAR) {
		char *x = pre_value(g, e);
		char *r = hoist(g, fmt("rwg_const_ints(rw, %s)", x));
		free(x);
		return r;
	}
	switch (e->kind) {
	case EXPR_VAR: {
		Var *v = var(g, e->s);
		if (v && v->kind == VK_ARG) {
			g->build_unknown = true;
			return hoist(g, fmt("rwg_arg_value(rw, %s, &unknown)", v->cname));
		}
		if (v && (v->kind == VK_VALUE || v->kind == VK_NODE))
			return fact_value(g, e, false);
		if (v && v->kind == VK_INTS)
			return hoist(g, fmt("rwg_const_ints(rw, %s)", v->cname));
		unsupported(g, e->pos, "'%s' as a value", e->s);
		return fmt("0");
	}
	case EXPR_LIST:
		if (e->type == TY_INTS) {
			char *x = pre_value(g, e);
			char *r = hoist(g, fmt("rwg_const_ints(rw, %s)", x));
			free(x);
			return r;
		}
		unsupported(g, e->pos, "a list of floats as a value");
		return fmt("0");
	case EXPR_INDEX:
		if (e->items[0]->type == TY_VALUES)
			return pre_value(g, e);
		break;
	case EXPR_UNARY:
		if (e->op == EX_NEG) {
			char *mine = like_of(g, e);
			char *a = val_expr(g, e->items[0], mine ? mine : like);
			char *r = op1(g, "Neg", a);
			free(a);
			free(mine);
			return r;
		}
		break;
	case EXPR_BINARY: {
		const char *op = dsl_exop_onnx(e->op);
		if (!op)
			break;
		char *mine = like_of(g, e);
		const char *l = mine ? mine : like;
		char *a = val_expr(g, e->items[0], l), *b = val_expr(g, e->items[1], l);
		char *r = op2(g, op, a, b);
		free(a);
		free(b);
		free(mine);
		return r;
	}
	case EXPR_DEFAULT: {
		Var *v = e->items[0]->kind == EXPR_VAR ? var(g, e->items[0]->s) : NULL;
		if (!v || v->kind != VK_VALUE) {
			unsupported(g, e->pos, "'?\?' on this operand");
			return fmt("0");
		}
		char *t = tmp_name(g, "t");
		line(g, "ValueId %s = %s;", t, v->cname);
		line(g, "if (!%s) {", t);
		g->depth++;
		char *b = val_expr(g, e->items[1], like);
		line(g, "%s = %s;", t, b);
		free(b);
		g->depth--;
		line(g, "}");
		return t;
	}
	case EXPR_CALL: {
		const char *f = e->s;
		if (!dsl_builtin_lookup(f)) {
			/* an extern that builds a value: called inside the transaction;
			 * 0 abandons the rewrite */
			const Extern *x = find_extern(g_files, g_nfiles, f);
			if (!x || (x->ret != TY_VALUE && x->ret != TY_TENSOR)) {
				unsupported(g, e->pos, "'%s' as a value", f);
				return fmt("0");
			}
			Buf call = {0};
			bprintf(&call, "%s(rw", x->c_name ? x->c_name : x->name);
			for (int i = 0; i < e->n; i++) {
				DslType p = i < x->nparams ? x->params[i] : TY_UNKNOWN;
				char *a = p == TY_VALUE ? val_expr(g, e->items[i], like)
				          : p == TY_TENSOR ? fact_value(g, e->items[i], false) : num_expr(g, e->items[i]);
				bprintf(&call, ", %s", a);
				free(a);
			}
			char *t = tmp_name(g, "x");
			line(g, "ValueId %s = %s);", t, call.s);
			line(g, "if (!%s)", t);
			line(g, "\tunknown = true;");
			g->build_unknown = true;
			free(call.s);
			return t;
		}
		char *mine = like_of(g, e);
		const char *l = mine ? mine : like;
		char *r = NULL;
		if (!strcmp(f, "reshape")) {
			char *x = val_expr(g, e->items[0], l);
			char *s = e->items[1]->type == TY_INTS ? val_expr(g, e->items[1], NULL)
			                                       : val_expr(g, e->items[1], NULL);
			char *ins[2] = {x, s};
			char *k = build_node(g, e->pos, "", "Reshape", ins, 2, 1);
			r = fmt("rw_output(rw, %s, 0)", k);
			free(k);
			free(x);
			free(s);
		} else if (!strcmp(f, "cast")) {
			char *x = val_expr(g, e->items[0], l);
			char *t = pre_value(g, e->items[1]);
			char *k = build_node(g, e->pos, "", "Cast", &x, 1, 1);
			line(g, "rwg_set_int(rw, %s, \"to\", %s);", k, t);
			r = fmt("rw_output(rw, %s, 0)", k);
			free(k);
			free(x);
			free(t);
		} else {
			const Builtin *bi = dsl_builtin_lookup(f);
			char *a = e->n > 0 ? val_expr(g, e->items[0], l) : NULL;
			char *b = e->n > 1 ? val_expr(g, e->items[1], l) : NULL;
			if (bi->op && e->n == 1)
				r = op1(g, bi->op, a);
			else if (bi->op && e->n == 2)
				r = op2(g, bi->op, a, b);
			else
				unsupported(g, e->pos, "'%s' as a value", f);
			free(a);
			free(b);
		}
		free(mine);
		return r ? r : fmt("0");
	}
	case EXPR_OP: {
		const OpSchema *s = e->schema;
		int nin = e->n;
		for (int i = 0; i < e->nattrs; i++) {
			int k = opset_form_attr_input(s, e->attrs[i].name);
			if (k + 1 > nin)
				nin = k + 1;
		}
		char **ins = calloc((size_t)nin + 1, sizeof *ins);
		if (!ins)
			abort();
		char *mine = like_of(g, e);
		for (int i = 0; i < e->n; i++)
			if (!mine)
				mine = like_of(g, e->items[i]);
		for (int i = 0; i < e->n; i++)
			ins[i] = val_expr(g, e->items[i], mine);
		for (int i = 0; i < e->nattrs; i++) {
			int k = opset_form_attr_input(s, e->attrs[i].name);
			if (k >= 0)
				ins[k] = val_expr(g, e->attrs[i].value, NULL);
		}
		for (int i = 0; i < nin; i++)
			if (!ins[i])
				ins[i] = fmt("0");
		char *k = build_node(g, e->pos, e->domain ? e->domain : "", e->s, ins, nin, 1);
		if (e->copy_attrs) {
			Var *c = var(g, e->copy_attrs);
			line(g, "rw_copy_attrs(rw, %s, %s);", k, c ? c->cname : "0");
		}
		for (int i = 0; i < e->nattrs; i++)
			if (opset_form_attr_input(s, e->attrs[i].name) < 0)
				set_attr(g, k, s, &e->attrs[i]);
		for (int i = 0; i < nin; i++)
			free(ins[i]);
		free(ins);
		free(mine);
		char *r = fmt("rw_output(rw, %s, 0)", k);
		free(k);
		return r;
	}
	default:
		break;
	}
	unsupported(g, e->pos, "this expression as a value");
	return fmt("0");
}

/* ---- patterns ---------------------------------------------------------------------------- */

static void gen_op(Gen *g, const Pattern *p, const char *node, const char *path);

/* One operand slot of an op pattern: its pattern, C name, form. */
typedef struct Slot {
	const Pattern *pat;         /* NULL: a literal or variable from an attribute (lit) */
	const Expr *lit;            /* an attribute spelling this input: ReduceMean[axes = [-1]] */
	SrcPos pos;
	char *name;
	bool binds;                 /* the slot's name is the variable it binds */
	const OpsetForm *form;      /* the input may be this attribute */
	int nforms;                 /* ... or one of several (by opset) */
	const char *node;           /* the C name of the node it is an input of */
	const char *node_path;      /* that node's path */
	int in;                     /* its input index; -1 in a swap loop (then idx) */
	char *idx;                  /* its input index as C: "1", "i_0", "1 - i_0" */
	char *what;                 /* for --why: "input 1 (x) of Conv"; in a swap loop "input %d ..." */
	char *what_args;            /* "" or, in a swap loop, ", (int)(i_0)" */
} Slot;

/* The check that value `val` (ValueId or RwgArg) matches literal e. */
static char *literal_check(Gen *g, const Expr *e, const char *val, bool arg)
{
	double v, tol;
	if (dsl_literal_value(e, &v, &tol)) {
		char *x = c_double(v), *t = c_double(tol);
		char *r = fmt("%s(rw, %s, %s, %s)", arg ? "rwg_arg_equals" : "rw_const_equals", val, x, t);
		free(x);
		free(t);
		return r;
	}
	if (e->kind == EXPR_LIST) {
		Buf b = {0};
		for (int i = 0; i < e->n; i++) {
			double tol2;
			if (!dsl_literal_value(e->items[i], &v, &tol2)) {
				unsupported(g, e->items[i]->pos, "a list literal holding something other than numbers");
				free(b.s);
				return fmt("false");
			}
			char *x = c_double(v);
			bprintf(&b, "%s%s", i ? ", " : "", x);
			free(x);
		}
		char *r = e->n ? fmt("%s(rw, %s, (const double[]){%s}, %d)", arg ? "rwg_arg_equals_list" : "rwg_const_equals_list",
		                     val, b.s, e->n)
		               : fmt("%s(rw, %s, NULL, 0)", arg ? "rwg_arg_equals_list" : "rwg_const_equals_list", val);
		free(b.s);
		return r;
	}
	unsupported(g, e->pos, "this literal operand");
	return fmt("false");
}

/* A reference to output k of node binding s: a check on val. */
static void node_ref(Gen *g, const Pattern *p, Slot *s)
{
	Var *v = var(g, p->name);
	if (!v)
		return;
	int k = p->output > 0 ? p->output : v->node ? v->node->output : 0;
	char *cond = fmt("%s == rwg_out(rw, %s, %d)", s->name, v->cname, k);
	if (v->bound)
		check(g, why("SAME", "\"%s is not output %d of %s\"%s", s->what, k, v->cname, s->what_args), cond), free(cond);
	else
		defer(g, cond, why("SAME", "\"%s is not output %d of %s\"%s", s->what, k, v->cname, s->what_args));
}

static void gen_operand(Gen *g, Slot *s, const char *path)
{
	const Pattern *p = s->pat;
	bool arg = s->form != NULL;
	bool tree = !arg && s->in >= 0 && tree_path(g, s->node_path);
	if (!p) { /* an attribute spelling of the input: a literal or a variable */
		const Expr *e = s->lit;
		if (e->kind == EXPR_VAR && e->binding) {
			Var *v = var(g, e->s);
			if (s->binds)
				return;
			char *cond = v->kind == VK_ARG ? fmt("rwg_arg_same(rw, %s, %s)", s->name, v->cname)
			                               : fmt("rwg_arg_same(rw, %s, rwg_val(%s))", s->name, v->cname);
			check(g, why("SAME", "\"%s is not the same as %s\"%s", s->what, e->s, s->what_args), cond);
			free(cond);
			return;
		}
		char *cond = literal_check(g, e, s->name, true);
		check(g, why("VALUE", "\"%s is not the literal the rule names\"%s", s->what, s->what_args), cond);
		free(cond);
		return;
	}
	switch (p->kind) {
	case PAT_OP: {
		/* where older opsets spell the operand as an attribute, no op makes it */
		char *val = arg ? fmt("%s.v", s->name) : fmt("%s", s->name);
		if (arg)
			check_notf(g, why("PRODUCER", "\"%s is an attribute at this opset, not the output of %s\"%s", s->what,
			                  p->name, s->what_args),
			           "%s.attr", s->name);
		Var *b = p->bind ? var(g, p->bind) : NULL;
		char *node = b ? fmt("%s", b->cname) : fmt("n%s", path);
		bool vendor = p->domain && *p->domain;
		if (!vendor && tree && g->leaf) {
			/* the tree found it: fetch it without testing again */
			line(g, "NodeId %s = rw_producer(rw, %s);", node, val);
			tree_test(g, (Test){T_OP, s->node_path, s->in, p->name, p->output, NULL, 0, NULL}, NULL, NULL);
		} else {
			if (vendor)
				line(g, "NodeId %s = rwg_producer_named(rw, %s, \"%s\", \"%s\", %d);", node, val, p->domain,
				     p->name, p->output);
			else
				line(g, "NodeId %s = rwg_producer_op(rw, %s, OP_%s, %d);", node, val, p->name, p->output);
			check(g, why("PRODUCER", "\"%s comes from %%s, not %s\"%s, rwg_what(rw, %s)", s->what, p->name,
			             s->what_args, val), node);
		}
		free(val);
		if (b)
			b->bound = true;
		add_node(g, node, p->shared, p);
		gen_op(g, p, node, path);
		free(node);
		break;
	}
	case PAT_VAR: {
		Var *v = var(g, p->name);
		if (!v)
			break;
		if (v->kind == VK_NODE) {
			if (arg)
				unsupported(g, p->pos, "a node output where older opsets have an attribute");
			node_ref(g, p, s);
			break;
		}
		if (s->binds) {
			char *missing = why("OPERANDS", "\"%s is missing\"%s", s->what, s->what_args);
			char *notc = why("NOT_CONST", "\"%s is not a constant\"%s", s->what, s->what_args);
			if (!p->optional && tree) {
				char *c = fmt("!%s", s->name);
				tree_test(g, (Test){T_PRESENT, s->node_path, s->in, NULL, 0, NULL, 0, NULL}, missing, c);
				free(c);
			} else if (!p->optional) {
				check_notf(g, missing, arg ? "rwg_arg_absent(rw, %s)" : "!%s", s->name);
			} else {
				free(missing);
			}
			if (p->is_const && !arg && !p->optional && tree) {
				char *c = fmt("!rw_is_const(rw, %s)", s->name);
				tree_test(g, (Test){T_CONST, s->node_path, s->in, NULL, 0, NULL, 0, NULL}, notc, c);
				free(c);
			} else if (p->is_const && !arg)
				check_notf(g, notc, p->optional ? "%s && !rw_is_const(rw, %s)" : "!rw_is_const(rw, %s)%.0s", s->name,
				           s->name);
			else if (p->is_const && arg)
				check_notf(g, notc, "!%s.attr && %s.v && !rw_is_const(rw, %s.v)", s->name, s->name, s->name);
			else
				free(notc);
			break;
		}
		char *cond;
		if (!arg && v->kind == VK_VALUE)
			cond = fmt("rw_same_value(rw, %s, %s)", s->name, v->cname);
		else if (v->kind == VK_VALUE || v->kind == VK_ARG)
			cond = fmt(arg ? "rwg_arg_same(rw, %s, " : "rwg_arg_same(rw, rwg_val(%s), ", s->name);
		else
			cond = NULL;
		if (cond && (arg || v->kind == VK_ARG)) {
			char *full = fmt(v->kind == VK_ARG ? "%s%s)" : "%srwg_val(%s))", cond, v->cname);
			free(cond);
			cond = full;
		}
		if (!cond) {
			unsupported(g, p->pos, "'%s' as an operand", p->name);
			break;
		}
		check(g, why("SAME", "\"%s is not the same value as %s\"%s", s->what, p->name, s->what_args), cond);
		free(cond);
		break;
	}
	case PAT_WILDCARD:
		if (!p->optional)
			check_notf(g, why("OPERANDS", "\"%s is missing\"%s", s->what, s->what_args),
			           arg ? "rwg_arg_absent(rw, %s)" : "!%s", s->name);
		break;
	case PAT_LITERAL: {
		char *cond = literal_check(g, p->lit, s->name, arg);
		check(g, why("VALUE", "\"%s is not the constant the rule names\"%s", s->what, s->what_args), cond);
		free(cond);
		break;
	}
	case PAT_REST:
		break;
	}
}

/* The slot's C name: the variable it binds, if it is the variable's first
 * occurrence, else the path's value name v_0_1. */
static void name_slot(Gen *g, Slot *s, const char *path)
{
	const char *vn = NULL;
	if (s->pat && s->pat->kind == PAT_VAR && s->pat->output == 0)
		vn = s->pat->name;
	if (!s->pat && s->lit && s->lit->kind == EXPR_VAR && s->lit->binding)
		vn = s->lit->s;
	Var *v = vn ? var(g, vn) : NULL;
	if (v && !v->bound && (v->kind == VK_VALUE || v->kind == VK_ARG)) {
		v->kind = s->form ? VK_ARG : VK_VALUE;
		v->bound = true;
		s->binds = true;
		s->name = fmt("%s", v->cname);
	} else {
		s->name = fmt("v%s", path);
	}
}

/* Does C text s use identifier id? */
static bool mentions(const char *s, const char *id)
{
	size_t n = strlen(id);
	for (const char *p = strstr(s, id); p; p = strstr(p + 1, id)) {
		char before = p == s ? ' ' : p[-1], after = p[n];
		bool ident_b = before == '_' || (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
		               (before >= '0' && before <= '9') || before == '"';
		bool ident_a = after == '_' || (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
		               (after >= '0' && after <= '9') || after == '"';
		if (!ident_b && !ident_a)
			return true;
	}
	return false;
}

static void gen_op(Gen *g, const Pattern *p, const char *node, const char *path)
{
	const OpSchema *sch = p->schema;
	char *desc = p->bind ? fmt("%s (%s)", p->bind, p->name) : fmt("%s", p->name);
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
		const char *getter, *ctype;
		switch (def->type) {
		case ATTR_INT: getter = "int", ctype = "int64_t"; break;
		case ATTR_FLOAT: getter = "float", ctype = "double"; break;
		case ATTR_STRING: getter = "str", ctype = "RwgStr"; break;
		case ATTR_INTS: getter = "ints", ctype = "RwgInts"; break;
		case ATTR_FLOATS: getter = "floats", ctype = "RwgFloats"; break;
		default:
			unsupported(g, a->pos, "matching attribute '%s' of type %s", a->name,
			            attr_type_name((AttrType)def->type));
			continue;
		}
		const Expr *e = a->value;
		Var *v = e->kind == EXPR_VAR && e->binding ? var(g, e->s) : NULL;
		if (v && !v->bound) {
			line(g, "%s %s;", ctype, v->cname);
			checkf(g, why("ATTR", "\"%s has no attribute %s\"", desc, a->name), "rwg_attr_%s(rw, %s, \"%s\", &%s)",
			       getter, node, a->name, v->cname);
			v->bound = true;
			continue;
		}
		bool lit_int = def->type == ATTR_INT && (e->kind == EXPR_INT || e->kind == EXPR_BOOL) && !v;
		if (lit_int && g->leaf && tree_path(g, path)) {
			tree_test(g, (Test){T_ATTR_INT, path, 0, NULL, 0, a->name, e->i, NULL}, NULL, NULL);
			continue;
		}
		char *t = tmp_name(g, a->name);
		line(g, "%s %s;", ctype, t);
		checkf(g, why("ATTR", "\"%s has no attribute %s\"", desc, a->name), "rwg_attr_%s(rw, %s, \"%s\", &%s)",
		       getter, node, a->name, t);
		/* compare with the pattern's expression, as that attribute's type */
		char *x = num_expr(g, e);
		char *cond;
		if (def->type == ATTR_INTS)
			cond = fmt("rwg_ints_eq(%s, %s)", t, x);
		else if (def->type == ATTR_FLOATS)
			cond = e->type == TY_INTS ? fmt("rwg_floats_eq(%s, rwg_ints_to_floats(%s))", t, x)
			                          : fmt("rwg_floats_eq(%s, %s)", t, x);
		else if (def->type == ATTR_STRING)
			cond = fmt("rwg_str_eq(%s, %s)", t, x);
		else if (def->type == ATTR_FLOAT)
			cond = fmt("%s == (double)(float)%s", t, x);
		else
			cond = fmt("%s == %s", t, x);
		free(x);
		/* an expression naming a node or value bound later waits for the whole match */
		bool later = false;
		for (int k = 0; k < g->nvars; k++)
			if (!g->vars[k].bound && mentions(cond, g->vars[k].cname))
				later = true;
		char *w = lit_int ? why("ATTR", "\"attribute %s of %s is %%lld, not %lld\", (long long)%s", a->name, desc,
		                        (long long)e->i, t)
		                  : why("ATTR", "\"attribute %s of %s has another value\"", a->name, desc);
		if (later)
			defer(g, cond, w);
		else
			check(g, w, cond), free(cond);
		free(t);
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
		if (p->args[i]->kind != PAT_REST) {
			slots[k].pat = p->args[i];
			slots[k++].pos = p->args[i]->pos;
		}
	for (int i = 0; i < p->nattrs; i++) {
		int k = opset_form_attr_input(sch, p->attrs[i].name);
		if (k >= 0) {
			slots[k].lit = p->attrs[i].value;
			slots[k].pos = p->attrs[i].pos;
		}
	}
	const char *op = p->name;
	bool vendor = p->domain && *p->domain;
	for (int i = 0; i < nslots; i++) {
		int count = 0;
		slots[i].form = vendor ? NULL : attr_form(g, op, i, &count);
		slots[i].nforms = count;
		if (!vendor && dsl_moved_form(op, i, g->lo, g->hi))
			unsupported(g, p->pos, "'%s' input %d, which moved in older opsets", op, i + 1);
		if (!slots[i].pat && !slots[i].lit) /* a gap: any value or none */
			slots[i].pat = NULL;
	}

	bool swap = sch && (sch->flags & OPF_COMMUTATIVE) && npos == 2 && rest < 0 && nslots == 2 &&
	            !slots[0].form && !slots[1].form;
	/* in a leaf the swap site's order is fixed: slot i is input i ^ o */
	int o = 0;
	if (swap && g->leaf) {
		int site = g->nloop++;
		o = (int)(g->orient >> (g->nsites - 1 - site)) & 1;
	}
	char *iv = swap && !g->leaf ? fmt("i_%d", g->nloop++) : NULL;
	for (int i = 0; i < nslots; i++) {
		Slot *sl = &slots[i];
		sl->node = node;
		sl->node_path = path;
		sl->in = iv ? -1 : i ^ o;
		sl->idx = iv ? fmt(i ? "1 - %s" : "%s", iv) : fmt("%d", sl->in);
		char *sub = fmt("%s_%d", path, iv ? i : sl->in);
		name_slot(g, sl, sub);
		free(sub);
		const char *vn = sl->pat && sl->pat->kind == PAT_VAR ? sl->pat->name
		                 : !sl->pat && sl->lit && sl->lit->kind == EXPR_VAR ? sl->lit->s : NULL;
		char *in = iv ? fmt("%%d") : fmt("%d", sl->in);
		sl->what = vn ? fmt("input %s (%s) of %s", in, vn, desc) : fmt("input %s of %s", in, desc);
		sl->what_args = iv ? fmt(", (int)(%s)", sl->idx) : fmt("%s", "");
		free(in);
	}
	if (swap && g->leaf) {
		line(g, "ValueId %s = rw_input(rw, %s, %d), %s = rw_input(rw, %s, %d);", slots[0].name, node, o,
		     slots[1].name, node, 1 - o);
		for (int i = 0; i < 2; i++)
			if (slots[i].pat->kind == PAT_WILDCARD && slots[i].pat->optional)
				line(g, "(void)%s;", slots[i].name);
	} else if (swap) {
		line(g, "for (int %s = 0; %s < 2; %s++) {", iv, iv, iv);
		g->depth++;
		g->loops++;
		line(g, "ValueId %s = rw_input(rw, %s, %s), %s = rw_input(rw, %s, 1 - %s);", slots[0].name, node, iv,
		     slots[1].name, node, iv);
		for (int i = 0; i < 2; i++)
			if (slots[i].pat->kind == PAT_WILDCARD && slots[i].pat->optional)
				line(g, "(void)%s;", slots[i].name);
	} else {
		for (int i = 0; i < nslots; i++) {
			bool any = slots[i].pat && slots[i].pat->kind == PAT_WILDCARD && slots[i].pat->optional;
			if ((!slots[i].pat && !slots[i].lit) || any)
				continue;
			if (slots[i].form && slots[i].nforms > 1) {
				/* several old spellings (Pad's paddings, then pads): the opset picks one */
				Buf forms = {0};
				size_t nall;
				const OpsetForm *all = opset_forms_all(&nall);
				for (size_t k = 0; k < nall; k++)
					if (all[k].kind == FORM_ATTR && all[k].input == i && !strcmp(all[k].op, op) &&
					    all[k].first <= g->hi && all[k].last >= g->lo)
						bprintf(&forms, "%s{%d, \"%s\", %d, %d}", forms.n ? ", " : "", i, all[k].attr, all[k].first,
						        all[k].last);
				line(g, "static const RwgForm %s_forms[] = {%s};", slots[i].name, forms.s);
				line(g, "RwgArg %s = rwg_arg_forms(rw, %s, %d, %s_forms, %d);", slots[i].name, node, i, slots[i].name,
				     slots[i].nforms);
				free(forms.s);
			} else if (slots[i].form) {
				line(g, "RwgArg %s = rwg_arg(rw, %s, %d, \"%s\", %d, %d);", slots[i].name, node, i,
				     slots[i].form->attr, slots[i].form->first, slots[i].form->last);
			}
			else
				line(g, "ValueId %s = rw_input(rw, %s, %d);", slots[i].name, node, i);
		}
	}
	for (int i = 0; i < nslots; i++) {
		if (!slots[i].pat && !slots[i].lit)
			continue;
		char *sub = fmt("%s_%d", path, iv ? i : slots[i].in);
		gen_operand(g, &slots[i], sub);
		free(sub);
	}
	if (rest >= 0) {
		Var *v = var(g, p->args[rest]->name);
		if (v && !v->bound) {
			line(g, "RwgRest %s = {%s, %d};", v->cname, node, nslots);
			v->bound = true;
		} else {
			unsupported(g, p->args[rest]->pos, "a rest list used twice");
		}
	} else if (!vendor && sch) {
		/* inputs the pattern does not mention must be absent */
		int max = sch->max_inputs;
		if (max > nslots) {
			char *c = fmt("!rwg_absent_from(rw, %s, %d)", node, nslots);
			char *w = why("OPERANDS", "\"%s has more inputs than the rule names\"", desc);
			if (tree_path(g, path))
				tree_test(g, (Test){T_ABSENT_FROM, path, nslots, NULL, 0, NULL, 0, NULL}, w, c);
			else
				check_not(g, w, c);
			free(c);
		}
		size_t n;
		const OpsetForm *all = opset_forms_all(&n);
		for (size_t k = 0; k < n; k++)
			if (all[k].kind == FORM_ATTR && all[k].input >= nslots && !strcmp(all[k].op, op) &&
			    all[k].first <= g->hi && all[k].last >= g->lo)
				checkf(g, why("OPERANDS", "\"%s has attribute %s, which the rule does not name\"", desc, all[k].attr),
				       "rwg_arg_absent(rw, rwg_arg(rw, %s, %d, \"%s\", %d, %d))", node, all[k].input,
				             all[k].attr, all[k].first, all[k].last);
	}
	for (int i = 0; i < nslots; i++) {
		free(slots[i].name);
		free(slots[i].idx);
		free(slots[i].what);
		free(slots[i].what_args);
	}
	free(slots);
	free(iv);
	free(desc);
}

/* ---- source text for the comments ---------------------------------------------------------- */

/* ---- rules ------------------------------------------------------------------------------------ */

static void find_node_pats(Gen *g, const Pattern *p)
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

/* The decision tree's view of one way a rule can match (a rule with k
 * commutative swap sites has 2^k): the tests the tree makes, then a call
 * of the leaf that does the rest. */
typedef struct Variant {
	const Rule *r;
	char *leaf;                 /* "apply_conv_add_bias_1" */
	Test *tests;
	int ntests;
} Variant;


/* One rule's function into out: the straight-line rule_<name>(rw, n, why),
 * or (leaf) apply_<name>[_<variant>](rw, n), which leaves the tests it
 * records in *rec to the decision tree.  Returns the rule's swap sites, or
 * -1 if it cannot be compiled. */
static int gen_rule(Diag *d, const RuleFile *f, const Rule *r, Buf *out, bool leaf, unsigned orient, int nsites,
                    Variant *rec)
{
	Gen g = {.d = d, .f = f, .r = r, .lo = dsl_rule_opset_lo(r), .hi = dsl_rule_opset_hi(r), .step = 2, .leaf = leaf, .orient = orient,
	         .nsites = nsites};
	Buf body = {0};
	g.out = &body;
	g.vars = calloc((size_t)r->nbindings + 1, sizeof *g.vars);
	if (!g.vars)
		abort();
	for (int i = 0; i < r->nbindings; i++) {
		Var *v = &g.vars[g.nvars++];
		v->name = r->bindings[i].name;
		v->cname = dsl_c_name(v->name);
		switch (r->bindings[i].type) {
		case TY_VALUE: v->kind = VK_VALUE; break;
		case TY_NODE: v->kind = VK_NODE; break;
		case TY_VALUES: v->kind = VK_REST; break;
		case TY_INT: case TY_BOOL: case TY_DTYPE: v->kind = VK_INT; break;
		case TY_FLOAT: v->kind = VK_FLOAT; break;
		case TY_STRING: v->kind = VK_STR; break;
		case TY_INTS: v->kind = VK_INTS; break;
		case TY_FLOATS: v->kind = VK_FLOATS; break;
		default:
			unsupported(&g, r->bindings[i].pos, "binding '%s' of type %s", v->name,
			            dsl_type_name(r->bindings[i].type));
		}
	}
	find_node_pats(&g, r->lhs);
	const Pattern *root = r->lhs;

	g.depth = 1;
	add_node(&g, "n", false, root);
	if (root->bind) {
		Var *v = var(&g, root->bind);
		line(&g, "NodeId %s = n;", v->cname);
		v->bound = true;
	}
	line(&g, "if (!rw_enabled(rw, RULE_%s))", r->name);
	if (leaf)
		line(&g, "\treturn false;");
	else
		line(&g, "\treturn why && rw_why_disabled(rw, RULE_%s);", r->name);
	gen_op(&g, root, "n", "");

	/* the matched nodes; every one but the root used only inside the match */
	Buf list = {0};
	for (int i = 0; i < g.nnodes; i++)
		bprintf(&list, "%s%s", i ? ", " : "", g.nodes[i]);
	line(&g, "NodeId nodes[] = {%s};", list.s);
	free(list.s);
	for (int i = 1; i < g.nnodes; i++) {
		if (g.shared[i])
			continue;
		char *c = fmt("!rwg_single_use_node(rw, %s, nodes, %d)", g.nodes[i], g.nnodes);
		if (leaf) {
			check_not(&g, NULL, c);
		} else {
			/* --why tells a graph output from a consumer outside the match */
			char *w = fmt("why && rwg_why_use(rw, %d, %s, nodes, %d, \"%s\")", g.step++, g.nodes[i], g.nnodes,
			              g.node_desc[i]);
			line(&g, "if (%s)%s", c, g.loops ? " {" : "");
			if (g.loops) {
				line(&g, "\t(void)(%s);", w);
				line(&g, "\tcontinue;");
				line(&g, "}");
			} else {
				line(&g, "\treturn %s;", w);
			}
			free(w);
		}
		free(c);
	}
	for (int i = 0; i < g.ndeferred; i++) {
		check(&g, g.deferred_why[i], g.deferred[i]);
		free(g.deferred[i]);
	}
	char *pat, *guard, *result;
	dsl_rule_text(f, r, &pat, &guard, &result);
	char *guard_text = guard ? c_escaped(guard, true) : NULL;
	bool uses_unknown = false;
	if (r->guard) {
		char *cond = strip_parens(num_expr(&g, r->guard));
		if (strstr(cond, "&unknown")) {
			if (g.loops)
				line(&g, "unknown = false;");
			char *w = why("GUARD", "\"%%s%s\", unknown ? \"undecided, something it needs is unknown: \" : \"\"",
			              guard_text);
			if (is_call(cond) || (cond[0] == '!' && is_call(cond + 1)))
				check_notf(&g, w, "!%s || unknown", cond);
			else
				check_notf(&g, w, "!(%s) || unknown", cond);
			uses_unknown = true;
		} else {
			check(&g, why("GUARD", "\"%s\"", guard_text), cond);
		}
		free(cond);
	}

	/* the result: build into a separate buffer, computing values first */
	Buf build = {0};
	g.out = &build;
	int save_depth = g.depth;
	const Expr *rhs = r->rhs;
	int nres = rhs->kind == EXPR_TUPLE ? rhs->n : 1;
	char **res = calloc((size_t)nres + 1, sizeof *res);
	if (!res)
		abort();
	for (int i = 0; i < nres; i++)
		res[i] = val_expr(&g, rhs->kind == EXPR_TUPLE ? rhs->items[i] : rhs, NULL);
	g.out = &body;
	if (g.pre.n || g.nlikes) {
		if (g.pre.n && strstr(g.pre.s, "&unknown")) {
			if (g.loops || uses_unknown)
				line(&g, "unknown = false;");
			uses_unknown = true;
		}
		/* pre holds whole lines without indentation */
		for (char *q = g.pre.s; q && *q;) {
			char *nl = strchr(q, '\n');
			*nl = 0;
			line(&g, "%s", q);
			q = nl + 1;
		}
		if (g.pre.n && strstr(g.pre.s, "&unknown"))
			check_not(&g, why("UNKNOWN", "\"the result needs a shape, dtype or constant that is unknown\""), "unknown");
		for (int i = 0; i < g.nlikes; i++)
			checkf(&g, why("UNKNOWN", "\"the dtype of %s is unknown\"", g.likes[i]), "rwg_dtype(rw, %s)", g.likes[i]);
	}
	line(&g, "rw_begin(rw, RULE_%s, n, nodes, %d);", r->name, g.nnodes);
	bput(&body, build.s ? build.s : "", build.n);
	g.depth = save_depth;
	int out0 = root->output > 0 ? root->output : 0;
	for (int i = 0; i < nres; i++)
		line(&g, "rw_replace(rw, %d, %s);", out0 + i, res[i]);
	if (g.build_unknown) {
		uses_unknown = true;
		line(&g, "if (unknown) {");
		line(&g, "\trw_abort(rw);");
		fail(&g, leaf ? NULL : why("UNKNOWN", "\"building the result failed: a helper declined, or a shape, dtype or constant it needs is unknown\""));
		line(&g, "}");
	}
	line(&g, "return rw_commit(rw);");
	while (g.loops) {
		g.loops--;
		g.depth--;
		line(&g, "}");
	}
	if (g.nloop && !leaf)
		line(&g, "return false;");

	/* the function: comments from the source, then the body */
	if (leaf) {
		rec->r = r;
		rec->leaf = nsites ? fmt("apply_%s_%u", r->name, orient) : fmt("apply_%s", r->name);
		rec->tests = g.tests;
		rec->ntests = g.ntests;
		bprintf(out, "// %s without the tests its decision tree made", r->name);
		for (int k = 0; k < nsites; k++)
			bprintf(out, "%s swap site %d: %s", k ? ";" : ":", k,
			        (orient >> (nsites - 1 - k)) & 1 ? "operands swapped" : "operands in order");
		bprintf(out, "\nstatic bool %s(Rewriter *rw, NodeId n)\n{\n", rec->leaf);
	} else {
		bprintf(out, "// match:  %s\n", pat);
		if (guard)
			bprintf(out, "// cond:   %s\n", guard);
		bprintf(out, "// result: %s\n", result);
		bprintf(out, "// %s:%d\n", f->path, r->pos.line);
		bprintf(out, "static bool rule_%s(Rewriter *rw, NodeId n, bool why)\n{\n", r->name);
	}
	if (uses_unknown || strstr(body.s, "&unknown"))
		bprintf(out, "\tbool unknown = false;\n");
	bput(out, body.s, body.n);
	bprintf(out, "}\n\n");
	free(pat);
	free(guard);
	free(guard_text);
	free(result);

	for (int i = 0; i < nres; i++)
		free(res[i]);
	free(res);
	free(body.s);
	free(build.s);
	free(g.pre.s);
	for (int i = 0; i < g.nvars; i++)
		free(g.vars[i].cname);
	free(g.vars);
	for (int i = 0; i < g.nnodes; i++)
		free(g.nodes[i]);
	free(g.nodes);
	free(g.shared);
	free(g.deferred);
	free(g.deferred_why);
	for (int i = 0; i < g.nnodes; i++)
		free(g.node_desc[i]);
	free(g.node_desc);
	for (int i = 0; i < g.ntree_paths; i++)
		free(g.tree_paths[i]);
	free(g.tree_paths);
	for (int i = 0; i < g.nlikes; i++)
		free(g.likes[i]);
	free(g.likes);
	if (!leaf)
		free(g.tests);
	return g.failed ? -1 : g.nloop; /* errors were reported by unsupported() */
}

static const Extern *find_extern(RuleFile **files, int nfiles, const char *name)
{
	for (int i = 0; i < nfiles; i++)
		for (int k = 0; files[i] && k < files[i]->nexterns; k++)
			if (!strcmp(files[i]->externs[k]->name, name))
				return files[i]->externs[k];
	return NULL;
}

static const char *extern_c_type(DslType t)
{
	switch (t) {
	case TY_BOOL: return "bool";
	case TY_INT: return "int64_t";
	case TY_FLOAT: return "double";
	case TY_STRING: return "RwgStr";
	case TY_INTS: return "RwgInts";
	case TY_FLOATS: return "RwgFloats";
	case TY_DTYPE: return "int";
	case TY_VALUE: case TY_TENSOR: return "ValueId";
	default: return NULL;
	}
}

/* ---- the file ----------------------------------------------------------------------------- */

typedef struct RuleRef {
	const RuleFile *f;
	const Rule *r;
	int order;                  /* source order across the files */
} RuleRef;

/* Root op key: "Conv" or "com.microsoft.FusedConv". */
static char *root_key(const Rule *r)
{
	const Pattern *p = r->lhs;
	return p->domain && *p->domain ? fmt("%s.%s", p->domain, p->name) : fmt("%s", p->name);
}

static int by_root_then_priority(const void *a, const void *b)
{
	const RuleRef *x = a, *y = b;
	char *kx = root_key(x->r), *ky = root_key(y->r);
	int c = strcmp(kx, ky);
	free(kx);
	free(ky);
	if (c)
		return c;
	if (x->r->priority != y->r->priority)
		return x->r->priority > y->r->priority ? -1 : 1;
	return x->order - y->order;
}

static char *c_ident(const char *s)
{
	char *r = fmt("%s", s);
	for (char *p = r; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			*p = '_';
	return r;
}

/* ---- the decision tree ----------------------------------------------------------------------- */

static char *tree_node_var(const char *path)
{
	return *path ? fmt("p%s", path) : fmt("n");
}

/* A node of a root op's decision tree: a test, whose subtree runs when it
 * holds, or a leaf calling one variant's apply_ function.  Children run in
 * order; a leaf that fires returns from the match. */
typedef struct TNode {
	const Test *test;           /* NULL: the root, or a leaf */
	const Variant *leaf;
	struct TNode **kids;
	int nkids;
} TNode;

static TNode *tnode(const Test *t, const Variant *leaf)
{
	TNode *n = calloc(1, sizeof *n);
	if (!n)
		abort();
	n->test = t;
	n->leaf = leaf;
	return n;
}

static void add_kid(TNode *t, TNode *k)
{
	t->kids = realloc(t->kids, sizeof *t->kids * (size_t)(t->nkids + 1));
	if (!t->kids)
		abort();
	t->kids[t->nkids++] = k;
}

/* T_OP tests of the same input: at most one holds. */
static bool same_input(const Test *a, const Test *b)
{
	return a->kind == T_OP && b->kind == T_OP && a->index == b->index && !strcmp(a->path, b->path);
}

/* Insert variant v's tests from k on under t.  Rules are inserted in the
 * order they are tried, and a rule joins only t's last child, so the tree
 * tries them in that order; except among the trailing children testing the
 * op of the same input, which exclude each other, so a rule may join
 * whichever of them tests its op. */
static void tree_insert(TNode *t, const Variant *v, int k)
{
	if (k == v->ntests) {
		add_kid(t, tnode(NULL, v));
		return;
	}
	const Test *x = &v->tests[k];
	for (int j = t->nkids - 1; j >= 0 && t->kids[j]->test; j--) {
		const Test *y = t->kids[j]->test;
		if (!strcmp(y->key, x->key)) {
			tree_insert(t->kids[j], v, k + 1);
			return;
		}
		if (!same_input(x, y))
			break;
	}
	TNode *c = tnode(x, NULL);
	add_kid(t, c);
	tree_insert(c, v, k + 1);
}

static void tree_free(TNode *t)
{
	for (int i = 0; i < t->nkids; i++)
		tree_free(t->kids[i]);
	free(t->kids);
	free(t);
}

/* The rules a subtree serves, in order, each once: "conv_bn, conv_add_bias". */
static void served(const TNode *t, Buf *b)
{
	if (t->leaf) {
		const char *name = t->leaf->r->name;
		size_t n = strlen(name);
		for (const char *p = b->s ? strstr(b->s, name) : NULL; p; p = strstr(p + 1, name))
			if ((p == b->s || p[-1] == ' ') && (p[n] == ',' || p[n] == 0))
				return;
		bprintf(b, "%s%s", b->n ? ", " : "", name);
	}
	for (int i = 0; i < t->nkids; i++)
		served(t->kids[i], b);
}

static void tline(Buf *out, int depth, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void tline(Buf *out, int depth, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	vline(out, depth, f, ap);
	va_end(ap);
}

/* The condition of a test other than T_OP. */
static char *test_cond(const Test *t)
{
	char *nv = tree_node_var(t->path), *c;
	switch (t->kind) {
	case T_PRESENT: c = fmt("rw_input(rw, %s, %d)", nv, t->index); break;
	case T_CONST: c = fmt("rw_is_const(rw, rw_input(rw, %s, %d))", nv, t->index); break;
	case T_ABSENT_FROM: c = fmt("rwg_absent_from(rw, %s, %d)", nv, t->index); break;
	case T_ATTR_INT: c = fmt("rwg_attr_int_is(rw, %s, \"%s\", %lld)", nv, t->attr, (long long)t->value); break;
	default: c = fmt("false"); break;
	}
	free(nv);
	return c;
}

static void emit_kids(const TNode *t, Buf *out, int depth, const char *parent_rules);
static bool listed(const char *list, const char *v);
static const char *g_tree_vars;

/* Each decision point names the rules it serves, when they are not simply
 * those of the point around it. */
static char *emit_comment(const TNode *t, Buf *out, int depth, const char *parent_rules)
{
	Buf b = {0};
	served(t, &b);
	if (!parent_rules || strcmp(b.s, parent_rules))
		tline(out, depth, "/* %s */", b.s);
	return b.s;
}

/* Children of a node that are T_OP tests of one input with the same output
 * slot: one switch on the producer's op. */
static void emit_switch(TNode *const *kids, int n, Buf *out, int depth)
{
	const Test *t0 = kids[0]->test;
	char *nv = tree_node_var(t0->path), *child = fmt("p%s_%d", t0->path, t0->index);
	tline(out, depth, "switch (rwg_producer_kind(rw, rw_input(rw, %s, %d), %d)) {", nv, t0->index, t0->out);
	for (int i = 0; i < n; i++) {
		tline(out, depth, "case OP_%s:", kids[i]->test->op);
		char *rules = emit_comment(kids[i], out, depth + 1, NULL);
		if (listed(g_tree_vars, child))
			tline(out, depth + 1, "%s = rw_producer(rw, rw_input(rw, %s, %d));", child, nv, t0->index);
		emit_kids(kids[i], out, depth + 1, rules);
		tline(out, depth + 1, "break;");
		free(rules);
	}
	tline(out, depth, "default:");
	tline(out, depth + 1, "break;");
	tline(out, depth, "}");
	free(nv);
	free(child);
}

static void emit_kids(const TNode *t, Buf *out, int depth, const char *parent_rules)
{
	for (int i = 0; i < t->nkids;) {
		const TNode *k = t->kids[i];
		if (k->leaf) {
			tline(out, depth, "if (%s(rw, n))", k->leaf->leaf);
			tline(out, depth + 1, "return true;");
			i++;
			continue;
		}
		const Test *x = k->test;
		if (x->kind == T_OP) {
			int j = i + 1;
			while (j < t->nkids && t->kids[j]->test && same_input(x, t->kids[j]->test) &&
			       t->kids[j]->test->out == x->out)
				j++;
			if (j - i >= 2) {
				emit_switch(t->kids + i, j - i, out, depth);
				i = j;
				continue;
			}
		}
		char *rules = emit_comment(k, out, depth, parent_rules);
		if (x->kind == T_OP) {
			char *nv = tree_node_var(x->path);
			char *child = fmt("p%s_%d", x->path, x->index);
			if (listed(g_tree_vars, child))
				tline(out, depth, "if ((%s = rwg_producer_op(rw, rw_input(rw, %s, %d), OP_%s, %d))) {", child, nv,
				      x->index, x->op, x->out);
			else
				tline(out, depth, "if (rwg_producer_op(rw, rw_input(rw, %s, %d), OP_%s, %d)) {", nv, x->index, x->op,
				      x->out);
			free(nv);
			free(child);
		} else {
			/* a chain of tests with nothing between them is one condition */
			Buf c = {0};
			for (;;) {
				char *one = test_cond(k->test);
				if (c.n)
					bprintf(&c, " &&\n");
				for (int d = 0; c.n && d < depth; d++)
					bput(&c, "\t", 1);
				bprintf(&c, "%s%s", c.n ? "    " : "", one);
				free(one);
				if (k->nkids != 1 || !k->kids[0]->test || k->kids[0]->test->kind == T_OP)
					break;
				k = k->kids[0];
			}
			tline(out, depth, "if (%s) {", c.s);
			free(c.s);
		}
		emit_kids(k, out, depth + 1, rules);
		tline(out, depth, "}");
		free(rules);
		i++;
	}
}

/* Is v in the list "p_0, p_1_0"? */
static bool listed(const char *list, const char *v)
{
	size_t n = strlen(v);
	for (const char *p = list ? strstr(list, v) : NULL; p; p = strstr(p + 1, v))
		if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == 0))
			return true;
	return false;
}

/* Node variables the tree's tests read (p_0, p_0_1): declared once at the
 * top, assigned where a T_OP test finds the node. */
static void tree_vars(const TNode *t, Buf *names)
{
	if (t->test && *t->test->path) {
		char *v = tree_node_var(t->test->path);
		if (!listed(names->s, v))
			bprintf(names, "%s%s", names->n ? ", " : "", v);
		free(v);
	}
	for (int i = 0; i < t->nkids; i++)
		tree_vars(t->kids[i], names);
}

/* g_tree_vars: tree_vars of the tree being emitted */

/* match_<fn>: the decision tree over the variants of one root op's rules. */
static void emit_tree(const char *fn, const Variant *vs, int nv, Buf *out)
{
	TNode *root = tnode(NULL, NULL);
	for (int i = 0; i < nv; i++)
		tree_insert(root, &vs[i], 0);
	bprintf(out, "static bool match_%s(Rewriter *rw, NodeId n)\n{\n", fn);
	Buf names = {0};
	tree_vars(root, &names);
	if (names.s) { /* NodeId p_0, p_1, ...; wrapped at 100 columns */
		Buf decl = {0};
		int col = 8 + 7;
		bput(&decl, "NodeId ", 7);
		bool first = true;
		for (char *p = names.s, *next; p; p = next ? next + 2 : NULL) {
			next = strstr(p, ", ");
			int len = next ? (int)(next - p) : (int)strlen(p);
			if (!first && col + len + 2 > 100) {
				bput(&decl, ",\n\t       ", 10);
				col = 8 + 7;
			} else if (!first) {
				bput(&decl, ", ", 2);
				col += 2;
			}
			bput(&decl, p, (size_t)len);
			col += len;
			first = false;
		}
		bput(&decl, ";", 1);
		tline(out, 1, "%s", decl.s);
		free(decl.s);
	}
	g_tree_vars = names.s;
	emit_kids(root, out, 1, NULL);
	g_tree_vars = NULL;
	bprintf(out, "\treturn false;\n}\n\n");
	free(names.s);
	tree_free(root);
}

/* With line_path (graftc --line): `#line N "rules file"` above a rule's
 * functions, and back to the generated file's own lines after them. */
static void line_mark(Buf *out, const char *file, int line, const char *line_path)
{
	if (!line_path)
		return;
	if (file) {
		char *f = c_string(file);
		bprintf(out, "#line %d %s\n", line, f);
		free(f);
		return;
	}
	int lines = 1;
	for (size_t i = 0; i < out->n; i++)
		lines += out->s[i] == '\n';
	char *f = c_string(line_path);
	bprintf(out, "#line %d %s\n", lines + 1, f);
	free(f);
}

char *codegen_c(RuleFile **files, int nfiles, const char *set, const char *line_path, Diag *d)
{
	int errors = d->nerrors;
	g_files = files;
	g_nfiles = nfiles;
	int nrules = 0;
	for (int i = 0; i < nfiles; i++)
		nrules += files[i] ? files[i]->nrules : 0;
	RuleRef *refs = calloc((size_t)nrules + 1, sizeof *refs);
	if (!refs)
		abort();
	int n = 0;
	for (int i = 0; i < nfiles; i++)
		for (int k = 0; files[i] && k < files[i]->nrules; k++)
			if (files[i]->rules[k] && files[i]->rules[k]->lhs && files[i]->rules[k]->lhs->kind == PAT_OP)
				refs[n] = (RuleRef){files[i], files[i]->rules[k], n}, n++;

	Buf out = {0};
	bprintf(&out, "/* Code generated by graftc from ");
	for (int i = 0; i < nfiles; i++)
		bprintf(&out, "%s%s", i ? (i == nfiles - 1 ? " and " : ", ") : "", files[i]->path);
	bprintf(&out, "; DO NOT EDIT.\n"
	              " *\n"
	              " * Rule set '%s': %d rule%s.  How the matcher is organised:\n"
	              " *   - rules[] describes each rule (level, source line, doc, opsets, root\n"
	              " *     op) for the engine and the audit; RULE_<name> indexes it;\n"
	              " *   - rule_<name>(rw, n, why) matches one rule at a node, straight-line\n"
	              " *     code in the order of its pattern (root, then operands depth\n"
	              " *     first), trying a commutative op's operands both ways; then single\n"
	              " *     use, the guard, and the result built between rw_begin and\n"
	              " *     rw_commit.  With why set (graft optimize --why) each failed\n"
	              " *     condition says what failed, and nothing changes;\n"
	              " *   - the decision tree: each rule is split into the tests a tree can\n"
	              " *     share (the op producing an operand, an int attribute's literal\n"
	              " *     value, an operand present, constant, or inputs absent) and the\n"
	              " *     rest, apply_<name>[_<k>]() (k: which way each commutative op's\n"
	              " *     operands go).  match_<Op>() is a trie of those tests over the\n"
	              " *     rules rooted at <Op> in the order they are tried (priority, then\n"
	              " *     source order): a rule shares the tests of the rule before it as\n"
	              " *     far as they are the same, and tests of the op of one operand that\n"
	              " *     exclude each other become one switch.  Each test runs once for\n"
	              " *     all the rules below it, and the first rule that fires ends the\n"
	              " *     match, as if the rules were tried in turn;\n"
	              " *   - match_each_<Op>() tries the same rules in turn (--match-each);\n"
	              " *   - match() and match_each() switch on the node's op (vendor ops by\n"
	              " *     name). */\n",
	        set, n, n == 1 ? "" : "s");
	bprintf(&out, "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n\n"
	              "#include \"rewrite.h\"\n#include \"rw_gen.h\"\n\n");
	bprintf(&out, "_Static_assert(GRAFT_BUILDER_API_VERSION == 1,\n"
	              "               \"generated for builder API 1: regenerate with this libgraft's graftc\");\n\n");

	/* externs */
	int nx = 0;
	for (int i = 0; i < nfiles; i++)
		for (int k = 0; k < files[i]->nexterns; k++) {
			const Extern *x = files[i]->externs[k];
			const char *rt = extern_c_type(x->ret);
			Buf ps = {0};
			bool ok = rt != NULL;
			for (int j = 0; j < x->nparams; j++) {
				const char *pt = extern_c_type(x->params[j]);
				ok = ok && pt;
				bprintf(&ps, ", %s", pt ? pt : "?");
			}
			if (!ok)
				dsl_error(d, files[i], x->pos, "not supported by the code generator yet: extern types of '%s'", x->name);
			else
				bprintf(&out, "%s%s %s(Rewriter *rw%s);\n", nx++ ? "" : "/* C helpers the rules call (extern) */\n",
				        rt, x->c_name ? x->c_name : x->name, ps.s ? ps.s : "");
			free(ps.s);
		}
	if (nx)
		bput(&out, "\n", 1);

	/* the rule table */
	bprintf(&out, "enum {\n");
	for (int i = 0; i < n; i++)
		bprintf(&out, "\tRULE_%s,\n", refs[i].r->name);
	bprintf(&out, "\tRULE_COUNT\n};\n\n");
	bprintf(&out, "static const RwRule rules[RULE_COUNT + 1] = {\n");
	static const char *const levels[] = {"RW_LEVEL_BASIC", "RW_LEVEL_BASIC", "RW_LEVEL_EXTENDED", "RW_LEVEL_LAYOUT"};
	for (int i = 0; i < n; i++) {
		const Rule *r = refs[i].r;
		char *path = c_string(refs[i].f->path), *doc = c_string(r->doc ? r->doc : "");
		int hi = r->opset_max > 0 && r->opset_max < INT32_MAX ? r->opset_max : 0;
		bprintf(&out, "\t[RULE_%s] = {\"%s\", %s, %s, %d,\n\t\t%s,\n\t\t%d, %d, %d, %s, \"%s\", \"%s\"},\n", r->name,
		        r->name, levels[dsl_rule_level(refs[i].f, r)], path, r->pos.line, doc, r->priority, dsl_rule_opset_lo(r), hi,
		        dsl_expr_emits_vendor(r->rhs) ? "true" : "false", r->lhs->domain ? r->lhs->domain : "", r->lhs->name);
		free(path);
		free(doc);
	}
	bprintf(&out, "};\n\n");

	bprintf(&out, "/* A failed condition, in a --why run: say which (graft optimize --why). */\n"
	              "#define WHY(step, ...) (why && rw_why_fail(rw, step, __VA_ARGS__))\n\n");

	/* one straight-line function per rule */
	int *sites = calloc((size_t)n + 1, sizeof *sites);
	if (!sites)
		abort();
	for (int i = 0; i < n; i++) {
		line_mark(&out, refs[i].f->path, refs[i].r->pos.line, line_path);
		sites[refs[i].order] = gen_rule(d, refs[i].f, refs[i].r, &out, false, 0, 0, NULL);
		line_mark(&out, NULL, 0, line_path);
	}
	bprintf(&out, "static const RwRuleFn rule_fns[RULE_COUNT + 1] = {\n");
	for (int i = 0; i < n; i++)
		bprintf(&out, "\t[RULE_%s] = rule_%s,\n", refs[i].r->name, refs[i].r->name);
	bprintf(&out, "};\n\n");

	/* per root op: its leaves, its decision tree, and its rules in turn */
	qsort(refs, (size_t)n, sizeof *refs, by_root_then_priority);
	Buf dispatch = {0}, vendor = {0}, each = {0}, each_vendor = {0};
	for (int i = 0; i < n;) {
		char *key = root_key(refs[i].r);
		char *fn = c_ident(key);
		const Pattern *p = refs[i].r->lhs;
		int j = i;
		while (j < n) {
			char *k2 = root_key(refs[j].r);
			bool same = !strcmp(k2, key);
			free(k2);
			if (!same)
				break;
			j++;
		}
		bprintf(&out, "/* ---- %s: %d rule%s ---- */\n\n", key, j - i, j - i == 1 ? "" : "s");
		Variant *vs = NULL;
		int nv = 0;
		for (int k = i; k < j; k++) {
			int ns = sites[refs[k].order];
			if (ns < 0)
				continue;
			for (unsigned o = 0; o < 1u << ns; o++) {
				vs = realloc(vs, sizeof *vs * (size_t)(nv + 1));
				if (!vs)
					abort();
				line_mark(&out, refs[k].f->path, refs[k].r->pos.line, line_path);
				gen_rule(d, refs[k].f, refs[k].r, &out, true, o, ns, &vs[nv++]);
				line_mark(&out, NULL, 0, line_path);
			}
		}
		emit_tree(fn, vs, nv, &out);
		for (int k = 0; k < nv; k++) {
			free(vs[k].leaf);
			for (int t = 0; t < vs[k].ntests; t++) {
				free((char *)vs[k].tests[t].path);
				free(vs[k].tests[t].key);
			}
			free(vs[k].tests);
		}
		free(vs);
		bprintf(&out, "/* the same rules tried one after another (graft optimize --match-each) */\n");
		bprintf(&out, "static bool match_each_%s(Rewriter *rw, NodeId n)\n{\n", fn);
		for (int k = i; k < j; k++)
			bprintf(&out, "\t%s rule_%s(rw, n, false)%s\n", k == i ? "return" : "      ", refs[k].r->name,
			        k + 1 < j ? " ||" : ";");
		bprintf(&out, "}\n\n");
		if (p->domain && *p->domain) {
			bprintf(&vendor, "\tif (!strcmp(node->domain, \"%s\") && !strcmp(node->op_type, \"%s\"))\n\t\treturn match_%s(rw, n);\n",
			        p->domain, p->name, fn);
			bprintf(&each_vendor, "\tif (!strcmp(node->domain, \"%s\") && !strcmp(node->op_type, \"%s\"))\n\t\treturn match_each_%s(rw, n);\n",
			        p->domain, p->name, fn);
		} else {
			bprintf(&dispatch, "\tcase OP_%s: return match_%s(rw, n);\n", p->name, fn);
			bprintf(&each, "\tcase OP_%s: return match_each_%s(rw, n);\n", p->name, fn);
		}
		free(key);
		free(fn);
		i = j;
	}
	const char *dispatch_fn = "static bool %s(Rewriter *rw, NodeId n)\n{\n"
	                          "\tconst IrNode *node = ir_node(rw_model(rw), n);\n"
	                          "\tswitch (node->kind) {\n%s"
	                          "\tdefault: break;\n\t}\n%s"
	                          "\treturn false;\n}\n\n";
	bprintf(&out, "/* ---- the set: dispatch on the node's op (vendor ops by name) ---- */\n\n");
	bprintf(&out, dispatch_fn, "match", dispatch.s ? dispatch.s : "", vendor.s ? vendor.s : "\t(void)node;\n");
	bprintf(&out, dispatch_fn, "match_each", each.s ? each.s : "", each_vendor.s ? each_vendor.s : "\t(void)node;\n");
	bprintf(&out, "const RwRuleSet graft_rules_%s = {\"graft-%s\", GRAFT_BUILDER_API_VERSION, rules, RULE_COUNT,\n"
	              "                                 match, match_each, rule_fns, NULL};\n",
	        set, set);
	free(dispatch.s);
	free(vendor.s);
	free(each.s);
	free(each_vendor.s);
	free(sites);
	free(refs);
	if (d->nerrors != errors) {
		free(out.s);
		return NULL;
	}
	return out.s;
}

bool codegen_write_if_changed(const char *path, const char *text)
{
	size_t len = strlen(text);
	FILE *fp = fopen(path, "rb");
	if (fp) {
		bool same = true;
		size_t i = 0;
		int c;
		while (same && (c = fgetc(fp)) != EOF)
			same = i < len && (char)c == text[i++];
		same = same && i == len;
		fclose(fp);
		if (same)
			return true;
	}
	char *tmp = fmt("%s.tmp", path);
	fp = fopen(tmp, "wb");
	if (!fp || fwrite(text, 1, len, fp) != len || fclose(fp) != 0) {
		fprintf(stderr, "graftc: cannot write '%s': %s\n", tmp, strerror(errno));
		free(tmp);
		return false;
	}
	if (rename(tmp, path) != 0) {
		fprintf(stderr, "graftc: cannot write '%s': %s\n", path, strerror(errno));
		remove(tmp);
		free(tmp);
		return false;
	}
	free(tmp);
	return true;
}
