/* parse.c - rule text -> syntax tree (see ast.h and docs/rule-language.md).
 *
 * dsl_parse() runs the lexer of lexer.re and feeds each token to the Lemon
 * parser of grammar.y; the grammar's actions are the dsl_* builders below,
 * which allocate the tree in the file's arena.  Syntax errors are reported
 * here with what the parser expected, and parsing goes on after each (see
 * grammar.y for the recovery), so one run shows every error of a file. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gen/dsl_grammar.h"
#include "parse_internal.h"

/* ---- small helpers ---------------------------------------------------------- */

PtrVec *dsl_vec_push(DslParser *p, PtrVec *v, void *x)
{
	if (!v)
		v = arena_alloc(p->a, sizeof *v);
	if (v->n == v->cap) {
		int cap = v->cap ? v->cap * 2 : 4;
		void **nv = arena_alloc(p->a, (size_t)cap * sizeof *nv);
		if (v->n)
			memcpy(nv, v->v, (size_t)v->n * sizeof *nv);
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return v;
}

static char *tokstr(DslParser *p, Token t)
{
	return arena_strndup(p->a, t.z, t.n);
}

static bool tokis(Token t, const char *s)
{
	return t.z && strlen(s) == t.n && memcmp(t.z, s, t.n) == 0;
}

/* The position from a's start to b's end, when both are on one line. */
static SrcPos span(SrcPos a, SrcPos b)
{
	if (b.line == a.line && b.col + b.len > a.col)
		a.len = b.col + b.len - a.col;
	return a;
}

static void error_at(DslParser *p, SrcPos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void error_at(DslParser *p, SrcPos pos, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	dsl_error(p->d, p->f, pos, "%s", msg);
}

/* ---- syntax errors -------------------------------------------------------- */

/* How a token is named in "expected ..." lists. */
static const char *tok_desc(int code)
{
	switch (code) {
	case TK_RULE: return "'rule'";
	case TK_LEVEL: return "'level'";
	case TK_EXTERN: return "'extern'";
	case TK_IF: return "'if'";
	case TK_SHARED: return "'shared'";
	case TK_CONST: return "'const'";
	case TK_TRUE: return "'true'";
	case TK_FALSE: return "'false'";
	case TK_NAME: return "a name";
	case TK_OP: return "an op name";
	case TK_INT: return "an integer";
	case TK_FLOAT: return "a number";
	case TK_STRING: return "a string";
	case TK_ARROW: return "'=>'";
	case TK_DOTDOT: return "'..'";
	case TK_ELLIPSIS: return "'...'";
	case TK_QQ: return "'?\?'";
	case TK_CONCAT: return "'++'";
	case TK_ANDAND: return "'&&'";
	case TK_OROR: return "'||'";
	case TK_EQEQ: return "'=='";
	case TK_NE: return "'!='";
	case TK_LE: return "'<='";
	case TK_GE: return "'>='";
	case TK_LT: return "'<'";
	case TK_GT: return "'>'";
	case TK_ASSIGN: return "'='";
	case TK_NOT: return "'!'";
	case TK_PLUS: return "'+'";
	case TK_MINUS: return "'-'";
	case TK_STAR: return "'*'";
	case TK_SLASH: return "'/'";
	case TK_LPAREN: return "'('";
	case TK_RPAREN: return "')'";
	case TK_LBRACKET: return "'['";
	case TK_RBRACKET: return "']'";
	case TK_COMMA: return "','";
	case TK_COLON: return "':'";
	case TK_SEMI: return "';'";
	case TK_AT: return "'@'";
	case TK_HASH: return "'#'";
	case TK_TILDE: return "'~'";
	case TK_QUESTION: return "'?'";
	default: return NULL;       /* UMINUS, error: not real tokens */
	}
}

static bool has_all(const bool *set, const int *codes, int n)
{
	for (int i = 0; i < n; i++)
		if (!set[codes[i]])
			return false;
	return true;
}

static void clear(bool *set, const int *codes, int n)
{
	for (int i = 0; i < n; i++)
		set[codes[i]] = false;
}

/* "expected X, Y or Z" from the set of tokens the parser would take, in
 * words: whole groups become "an expression" / "a pattern", and operators
 * and decorations that could also follow are left out when something
 * more telling is expected. */
static void describe_expected(const bool *expected, char *out, size_t size)
{
	static const int expr_start[] = {TK_NAME, TK_OP, TK_INT, TK_FLOAT, TK_STRING, TK_TRUE, TK_FALSE,
	                                 TK_LBRACKET, TK_LPAREN, TK_MINUS, TK_NOT};
	static const int pat_start[] = {TK_SHARED, TK_NAME, TK_OP, TK_INT, TK_FLOAT, TK_LBRACKET,
	                                TK_MINUS, TK_TRUE, TK_FALSE};
	static const int operators[] = {TK_QQ, TK_OROR, TK_ANDAND, TK_EQEQ, TK_NE, TK_LT, TK_LE, TK_GT,
	                                TK_GE, TK_CONCAT, TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH,
	                                TK_LBRACKET, TK_TILDE};
	static const int decorations[] = {TK_COLON, TK_QUESTION, TK_ELLIPSIS, TK_HASH, TK_AT};
	enum { N = 128 };
	bool set[N];
	memcpy(set, expected, sizeof set);
	const char *words[N];
	int nwords = 0;
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
	if (has_all(set, expr_start, COUNT(expr_start))) {
		clear(set, expr_start, COUNT(expr_start));
		words[nwords++] = "an expression";
	} else if (has_all(set, pat_start, COUNT(pat_start))) {
		clear(set, pat_start, COUNT(pat_start));
		words[nwords++] = "a pattern";
	}
	/* after a pattern operand: x:const, x?, x..., x#1, d @ ... */
	if (set[TK_QUESTION] || set[TK_HASH])
		clear(set, decorations, COUNT(decorations));
	/* after an expression: any operator, x[i], f(...) could follow */
	if (set[TK_PLUS] && set[TK_STAR]) {
		clear(set, operators, COUNT(operators));
		set[TK_LPAREN] = false;
	}
	if (set[TK_ARROW])
		set[TK_SEMI] = false;   /* a rule without '=>' parses, but is an error */
	if (set[TK_SEMI])       /* after a result: ', s => y#k' or 'y @' may follow; ';' is the likely want */
		set[TK_COMMA] = set[TK_AT] = false;
	if (set[TK_FLOAT])
		set[TK_INT] = false;
	for (int k = 1; k < N; k++)
		if (set[k] && tok_desc(k))
			words[nwords++] = tok_desc(k);
#undef COUNT
	size_t len = 0;
	out[0] = 0;
	for (int i = 0; i < nwords && len < size; i++) {
		const char *sep = i == 0 ? "" : i == nwords - 1 ? " or " : ", ";
		len += (size_t)snprintf(out + len, size - len, "%s%s", sep, words[i]);
	}
}

void dsl_syntax_error(DslParser *p, int major, Token tok)
{
	bool cascade = p->in_error || p->lost > p->lost_at_item;
	p->in_error = true;
	if (cascade)
		return;                 /* a lexical error in this item explains it */
	if (p->rule && p->expected[TK_ARROW] &&
	    (major == 0 || major == TK_RULE || major == TK_LEVEL || major == TK_EXTERN)) {
		error_at(p, p->prev_end, "rule '%s' has no '=>'", p->rule->name);
		return;
	}
	if (major == TK_LPAREN && p->prev_code == TK_NAME && p->prev.n < 60) {
		/* relu(x) in a pattern: ops are capitalized, functions are only for guards and results */
		Token n = p->prev;
		error_at(p, n.pos, "'%.*s' is not an op: op names start with a capital letter (did you mean '%c%.*s'?)",
		         (int)n.n, n.z, n.z[0] >= 'a' && n.z[0] <= 'z' ? n.z[0] - 'a' + 'A' : n.z[0],
		         (int)n.n - 1, n.z + 1);
		return;
	}
	if (major == TK_FLOAT && p->expected[TK_NAME] && (tokis(tok, "inf") || tokis(tok, "nan"))) {
		error_at(p, tok.pos, "'%.*s' is a number (a float constant), not a name", (int)tok.n, tok.z);
		return;
	}
	char exp[400];
	describe_expected(p->expected, exp, sizeof exp);
	char what[80];
	if (major == 0)
		snprintf(what, sizeof what, "end of input");
	else
		snprintf(what, sizeof what, "'%.*s'", tok.n > 40 ? 40 : (int)tok.n, tok.z);
	SrcPos at = major == 0 && p->prev_end.line ? p->prev_end : tok.pos;
	if (exp[0])
		error_at(p, at, "unexpected %s (expected %s)", what, exp);
	else
		error_at(p, at, "unexpected %s", what);
}

void dsl_stack_overflow(DslParser *p)
{
	error_at(p, p->look.pos, "rule nested too deeply");
	p->overflow = true;
	p->in_error = false;
	p->rule = NULL;
}

void dsl_resynced(DslParser *p)
{
	p->in_error = false;
	p->rule = NULL;
}

/* ---- items ---------------------------------------------------------------- */

static Level level_of(Token t)
{
	return t.z ? dsl_level_parse(t.z, t.n) : LEVEL_NONE;
}

static void unknown_level(DslParser *p, Token t)
{
	error_at(p, t.pos, "unknown level '%.*s' (expected basic, extended or layout)", (int)t.n, t.z);
}

/* "level L;": the level of the rules that follow.  The first one (before
 * any rule) is the file's default; rules after a later, different one get
 * it explicitly. */
void dsl_level_line(DslParser *p, Token name)
{
	Level l = level_of(name);
	if (l == LEVEL_NONE) {
		unknown_level(p, name);
		return;
	}
	if (!p->seen_level && p->rules == NULL)
		p->f->default_level = l;
	p->seen_level = true;
	p->cur_level = l;
	p->cur_level_pos = name.pos;
}

static bool type_of(Token t, DslType *ty)
{
	static const struct { const char *name; DslType type; } types[] = {
		{"bool", TY_BOOL}, {"int", TY_INT}, {"float", TY_FLOAT}, {"string", TY_STRING},
		{"ints", TY_INTS}, {"floats", TY_FLOATS}, {"dtype", TY_DTYPE}, {"value", TY_VALUE},
		{"tensor", TY_TENSOR},
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (tokis(t, types[i].name)) {
			*ty = types[i].type;
			return true;
		}
	return false;
}

static DslType extern_type(DslParser *p, Token t)
{
	DslType ty;
	if (type_of(t, &ty))
		return ty;
	error_at(p, t.pos, "unknown type '%.*s' (expected bool, int, float, string, ints, floats, dtype, value or tensor)",
	         (int)t.n, t.z);
	return TY_UNKNOWN;
}

static bool is_c_identifier(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

void dsl_extern(DslParser *p, Token ret, Token name, PtrVec *params, Token cname)
{
	Extern *x = arena_alloc(p->a, sizeof *x);
	x->name = tokstr(p, name);
	x->pos = name.pos;
	x->ret = extern_type(p, ret);
	if (params) {
		x->nparams = params->n;
		x->params = arena_alloc(p->a, (size_t)params->n * sizeof *x->params);
		for (int i = 0; i < params->n; i++)
			x->params[i] = extern_type(p, *(Token *)params->v[i]);
	}
	x->c_name = x->name;
	if (cname.z) {
		if (!is_c_identifier(cname.s))
			error_at(p, cname.pos, "'%s' is not a C function name", cname.s);
		else
			x->c_name = cname.s;
	}
	p->externs = dsl_vec_push(p, p->externs, x);
}

/* ---- rules ---------------------------------------------------------------- */

Rule *dsl_rule_begin(DslParser *p, Token name)
{
	Rule *r = arena_alloc(p->a, sizeof *r);
	r->name = tokstr(p, name);
	r->pos = name.pos;
	r->opset_min = 0;
	r->opset_max = INT32_MAX;
	p->rule = r;
	p->rule_bad = false;
	return r;
}

void dsl_rule_end(DslParser *p, Rule *r, Lhs lhs, Expr *rhs, Token arrow, Token semi)
{
	r->lhs = lhs.pat;
	r->guard = lhs.guard;
	r->rhs = rhs;
	r->has_arrow = arrow.z != NULL;
	if (!r->has_arrow && p->lost == p->lost_at_item)
		error_at(p, semi.pos, "rule '%s' has no '=>'", r->name);
	if (r->level == LEVEL_NONE && p->cur_level != p->f->default_level) {
		r->level = p->cur_level;
		r->level_pos = p->cur_level_pos;
	}
	if (!p->rule_bad)
		p->rules = dsl_vec_push(p, p->rules, r);
	p->rule = NULL;
}

static bool int_in(DslParser *p, Token t, bool neg, long lo, long hi, int *out);

void dsl_result_bind(DslParser *p, Token name)
{
	if (!p->rule)
		return;
	p->rule->rhs_bind = tokstr(p, name);
	p->rule->rhs_bind_pos = name.pos;
}

void dsl_also(DslParser *p, Token s, Token y, Token k)
{
	Rule *r = p->rule;
	if (!r)
		return;
	RuleAlso a = {tokstr(p, s), s.pos, tokstr(p, y), y.pos, 0};
	int_in(p, k, false, 0, 31, &a.output);
	RuleAlso *n = arena_alloc(p->a, sizeof *n * (size_t)(r->nalso + 1));
	if (r->nalso)
		memcpy(n, r->also, sizeof *n * (size_t)r->nalso);
	n[r->nalso++] = a;
	r->also = n;
}

void dsl_rule_doc(DslParser *p, Token doc)
{
	if (p->rule)
		p->rule->doc = doc.s;
}

/* What may stand in a rule's [...], for "unknown metadata" messages. */
#define META_WORDS "basic, extended, layout, opset, priority, tolerance, finite_data, moderate_data, nonnegative_indices or override"

void dsl_meta_word(DslParser *p, Token key)
{
	Rule *r = p->rule;
	Level l = level_of(key);
	if (l != LEVEL_NONE) {
		if (r->level != LEVEL_NONE)
			error_at(p, key.pos, "the level of rule '%s' is given twice", r->name);
		r->level = l;
		r->level_pos = key.pos;
	} else if (tokis(key, "opset")) {
		error_at(p, key.pos, "'opset' needs a range: 'opset 13..', 'opset ..12' or 'opset 13..17'");
	} else if (tokis(key, "priority")) {
		error_at(p, key.pos, "'priority' needs a number, as in 'priority 1'");
	} else if (tokis(key, "tolerance")) {
		error_at(p, key.pos, "'tolerance' needs a number, as in 'tolerance 1e-6'");
	} else if (tokis(key, "finite_data")) {
		if (r->finite_data)
			error_at(p, key.pos, "'finite_data' of rule '%s' is given twice", r->name);
		r->finite_data = true;
	} else if (tokis(key, "override")) {
		if (r->override)
			error_at(p, key.pos, "'override' of rule '%s' is given twice", r->name);
		r->override = true;
		r->override_pos = key.pos;
	} else if (tokis(key, "moderate_data")) {
		if (r->moderate_data)
			error_at(p, key.pos, "'moderate_data' of rule '%s' is given twice", r->name);
		r->moderate_data = true;
	} else if (tokis(key, "nonnegative_indices")) {
		if (r->nonneg_indices)
			error_at(p, key.pos, "'nonnegative_indices' of rule '%s' is given twice", r->name);
		r->nonneg_indices = true;
	} else {
		unknown_level(p, key);
	}
}

/* An integer token as an int in [lo, hi], or report it. */
static bool int_in(DslParser *p, Token t, bool neg, long lo, long hi, int *out)
{
	errno = 0;
	long v = strtol(t.z, NULL, 10);   /* the token is all digits */
	if (neg)
		v = -v;
	if (errno == ERANGE || v < lo || v > hi) {
		error_at(p, t.pos, "%s%.*s is out of range (%ld to %ld)", neg ? "-" : "", (int)t.n, t.z, lo, hi);
		return false;
	}
	*out = (int)v;
	return true;
}

void dsl_meta_int(DslParser *p, Token key, Token minus, Token value)
{
	Rule *r = p->rule;
	if (tokis(key, "priority")) {
		int v;
		if (r->has_priority)
			error_at(p, key.pos, "the priority of rule '%s' is given twice", r->name);
		if (int_in(p, value, minus.z != NULL, -1000000, 1000000, &v)) {
			r->has_priority = true;
			r->priority = v;
		}
	} else if (tokis(key, "opset")) {
		error_at(p, value.pos, "'opset' needs a range: 'opset 13..', 'opset ..12' or 'opset 13..17'");
	} else if (tokis(key, "tolerance")) {
		if (minus.z)
			error_at(p, minus.pos, "a tolerance is not negative");
		else
			dsl_meta_float(p, key, value);
	} else {
		error_at(p, key.pos, "unknown metadata '%.*s' (expected " META_WORDS ")",
		         (int)key.n, key.z);
	}
}

/* [tolerance X]: the rule is approximate; graft verify accepts outputs
 * within X (see docs/rule-language.md, "Verifying rules"). */
void dsl_meta_float(DslParser *p, Token key, Token value)
{
	Rule *r = p->rule;
	if (!tokis(key, "tolerance")) {
		error_at(p, key.pos, "unknown metadata '%.*s' (expected " META_WORDS ")",
		         (int)key.n, key.z);
		return;
	}
	if (r->tolerance > 0)
		error_at(p, key.pos, "the tolerance of rule '%s' is given twice", r->name);
	double v = strtod(value.z, NULL);
	if (!(v > 0 && v < 1))
		error_at(p, value.pos, "a tolerance is a number between 0 and 1 (exclusive), as in 'tolerance 1e-6'");
	else
		r->tolerance = v;
}

void dsl_meta_range(DslParser *p, Token key, Token lo, Token hi)
{
	Rule *r = p->rule;
	if (!tokis(key, "opset")) {
		error_at(p, key.pos, "unknown metadata '%.*s' (expected " META_WORDS ")",
		         (int)key.n, key.z);
		return;
	}
	if (r->opset_min != 0 || r->opset_max != INT32_MAX)
		error_at(p, key.pos, "the opset range of rule '%s' is given twice", r->name);
	int a = 0, b = INT32_MAX;
	if (lo.z && !int_in(p, lo, false, 1, 1000, &a))
		return;
	if (hi.z && !int_in(p, hi, false, 1, 1000, &b))
		return;
	if (a > b) {
		error_at(p, span(lo.pos, hi.pos), "empty opset range %d..%d", a, b);
		return;
	}
	r->opset_min = a;
	r->opset_max = b;
}

/* ---- expressions ---------------------------------------------------------- */

static Expr *new_expr(DslParser *p, ExprKind kind, SrcPos pos)
{
	Expr *e = arena_alloc(p->a, sizeof *e);
	e->kind = kind;
	e->pos = pos;
	e->depth = 1;
	return e;
}

/* Set e's items from a list (or one or two items), tracking the depth. */
static void set_items(DslParser *p, Expr *e, PtrVec *v, Expr *x, Expr *y)
{
	int n = (v ? v->n : 0) + (x != NULL) + (y != NULL);
	if (!n)
		return;
	e->items = arena_alloc(p->a, (size_t)n * sizeof *e->items);
	if (x)
		e->items[e->n++] = x;
	if (y)
		e->items[e->n++] = y;
	for (int i = 0; v && i < v->n; i++)
		e->items[e->n++] = v->v[i];
	for (int i = 0; i < e->n; i++)
		if (e->items[i]->depth + 1 > e->depth)
			e->depth = e->items[i]->depth + 1;
	if (e->depth > DSL_MAX_DEPTH && !p->rule_bad) {
		error_at(p, e->pos, "expression nested too deeply (more than %d levels)", DSL_MAX_DEPTH);
		p->rule_bad = true;
	}
}

static void set_attrs(DslParser *p, PtrVec *v, AttrArg **attrs, int *nattrs)
{
	if (!v)
		return;
	*attrs = arena_alloc(p->a, (size_t)v->n * sizeof **attrs);
	for (int i = 0; i < v->n; i++)
		(*attrs)[i] = *(AttrArg *)v->v[i];
	*nattrs = v->n;
}

/* "com.microsoft.Gelu" -> domain "com.microsoft", name "Gelu". */
static void split_op(DslParser *p, Token t, const char **domain, const char **name)
{
	const char *dot = NULL;
	for (const char *s = t.z; s < t.z + t.n; s++)
		if (*s == '.')
			dot = s;
	if (!dot) {
		*domain = "";
		*name = tokstr(p, t);
	} else {
		*domain = arena_strndup(p->a, t.z, (size_t)(dot - t.z));
		*name = arena_strndup(p->a, dot + 1, (size_t)(t.z + t.n - dot - 1));
	}
}

Expr *dsl_num(DslParser *p, Token num, bool is_float)
{
	Expr *e = new_expr(p, is_float ? EXPR_FLOAT : EXPR_INT, num.pos);
	if (!is_float) {
		uint64_t v = 0;
		for (unsigned i = 0; i < num.n; i++) {
			unsigned d = (unsigned)(num.z[i] - '0');
			if (v > ((uint64_t)INT64_MAX - d) / 10) {
				error_at(p, num.pos, "integer %.*s is too large", (int)num.n, num.z);
				return e;
			}
			v = v * 10 + d;
		}
		e->i = (int64_t)v;
		e->f = (double)v;
		return e;
	}
	char buf[64];
	if (num.n >= sizeof buf) {
		error_at(p, num.pos, "number %.20s... has too many digits", num.z);
		return e;
	}
	memcpy(buf, num.z, num.n);
	buf[num.n] = 0;
	errno = 0;
	e->f = strtod(buf, NULL);
	if (errno == ERANGE && isinf(e->f)) {
		error_at(p, num.pos, "number %s is out of range", buf);
		e->f = 0;
	}
	return e;
}

Expr *dsl_bool(DslParser *p, Token t, bool v)
{
	Expr *e = new_expr(p, EXPR_BOOL, t.pos);
	e->i = v;
	return e;
}

Expr *dsl_string(DslParser *p, Token t)
{
	Expr *e = new_expr(p, EXPR_STRING, t.pos);
	e->s = t.s;
	return e;
}

Expr *dsl_var(DslParser *p, Token name)
{
	Expr *e = new_expr(p, EXPR_VAR, name.pos);
	e->s = tokstr(p, name);
	return e;
}

Expr *dsl_list(DslParser *p, Token lbracket, PtrVec *items, Token rbracket)
{
	Expr *e = new_expr(p, EXPR_LIST, span(lbracket.pos, rbracket.pos));
	set_items(p, e, items, NULL, NULL);
	return e;
}

Expr *dsl_call(DslParser *p, Token name, PtrVec *args)
{
	Expr *e = new_expr(p, EXPR_CALL, name.pos);
	e->s = tokstr(p, name);
	set_items(p, e, args, NULL, NULL);
	return e;
}

Expr *dsl_op(DslParser *p, Token op, OpAttrs attrs, PtrVec *args)
{
	Expr *e = new_expr(p, EXPR_OP, op.pos);
	split_op(p, op, &e->domain, &e->s);
	set_attrs(p, attrs.attrs, &e->attrs, &e->nattrs);
	for (int i = 0; i < e->nattrs; i++)
		if (e->attrs[i].value->depth + 1 > e->depth)
			e->depth = e->attrs[i].value->depth + 1;
	if (attrs.copy.z) {
		e->copy_attrs = tokstr(p, attrs.copy);
		e->copy_pos = attrs.copy.pos;
	}
	set_items(p, e, args, NULL, NULL);
	return e;
}

Expr *dsl_unary(DslParser *p, Token op, ExprOp kind, Expr *x)
{
	if (kind == EX_NEG && (x->kind == EXPR_INT || x->kind == EXPR_FLOAT) && x->tol == 0) {
		/* -1 is a literal, not a negation (attribute values, list items) */
		x->i = -x->i;
		x->f = -x->f;
		x->pos = span(op.pos, x->pos);
		return x;
	}
	Expr *e = new_expr(p, EXPR_UNARY, op.pos);
	e->op = kind;
	set_items(p, e, NULL, x, NULL);
	return e;
}

Expr *dsl_binary(DslParser *p, Token op, ExprOp kind, Expr *l, Expr *r)
{
	Expr *e = new_expr(p, EXPR_BINARY, op.pos);
	e->op = kind;
	set_items(p, e, NULL, l, r);
	return e;
}

Expr *dsl_index(DslParser *p, Token lbracket, Expr *x, Expr *i)
{
	Expr *e = new_expr(p, EXPR_INDEX, lbracket.pos);
	set_items(p, e, NULL, x, i);
	return e;
}

Expr *dsl_default(DslParser *p, Token op, Expr *x, Expr *dflt)
{
	Expr *e = new_expr(p, EXPR_DEFAULT, op.pos);
	set_items(p, e, NULL, x, dflt);
	return e;
}

Expr *dsl_tuple(DslParser *p, Token lparen, Expr *first, PtrVec *rest)
{
	Expr *e = new_expr(p, EXPR_TUPLE, lparen.pos);
	set_items(p, e, rest, first, NULL);
	return e;
}

/* all(v in list: body) and any(...): the words are names, not keywords
 * (a rule may call a variable `in`), so the parser checks them here. */
Expr *dsl_quant(DslParser *p, Token fn, Token var, Token in, Expr *list, Expr *body)
{
	Expr *e = new_expr(p, EXPR_QUANT, fn.pos);
	e->op = tokis(fn, "any") ? EX_OR : EX_AND;
	e->s = tokstr(p, var);
	e->copy_pos = var.pos;
	set_items(p, e, NULL, list, body);
	if (!tokis(fn, "all") && !tokis(fn, "any"))
		error_at(p, fn.pos, "'%.*s(%.*s in ...: ...)' is no quantifier: write all(%.*s in LIST: COND) or any(...)",
		         (int)fn.n, fn.z, (int)var.n, var.z, (int)var.n, var.z);
	else if (!tokis(in, "in"))
		error_at(p, in.pos, "expected 'in' after '%.*s', got '%.*s'", (int)var.n, var.z, (int)in.n, in.z);
	else if (tokis(var, "_"))
		error_at(p, var.pos, "'%.*s' needs a name for the element, not '_'", (int)fn.n, fn.z);
	return e;
}

Expr *dsl_paren(DslParser *p, Token lparen, Expr *x)
{
	(void)p;
	(void)lparen;
	return x;
}

AttrArg *dsl_attr(DslParser *p, Token name, Expr *value)
{
	AttrArg *a = arena_alloc(p->a, sizeof *a);
	a->name = tokstr(p, name);
	a->pos = name.pos;
	a->value = value;
	return a;
}

/* ---- patterns ------------------------------------------------------------- */

static Pattern *new_pat(DslParser *p, PatKind kind, SrcPos pos)
{
	Pattern *pat = arena_alloc(p->a, sizeof *pat);
	pat->kind = kind;
	pat->pos = pos;
	return pat;
}

Pattern *dsl_pat_op(DslParser *p, Token op, PtrVec *attrs, PtrVec *args, Token rparen, Token out)
{
	(void)rparen;
	Pattern *pat = new_pat(p, PAT_OP, op.pos);
	split_op(p, op, &pat->domain, &pat->name);
	set_attrs(p, attrs, &pat->attrs, &pat->nattrs);
	if (args) {
		pat->nargs = args->n;
		pat->args = arena_alloc(p->a, (size_t)args->n * sizeof *pat->args);
		memcpy(pat->args, args->v, (size_t)args->n * sizeof *pat->args);
	}
	if (out.z) {
		int_in(p, out, false, 0, 1000, &pat->output);
		pat->has_output = true;
	}
	return pat;
}

Pattern *dsl_pat_bind(DslParser *p, Token shared, Token name, Pattern *node)
{
	if (shared.z)
		node->shared = true;
	if (name.z) {
		if (tokis(name, "_"))
			error_at(p, name.pos, "'_' cannot name a node");
		node->bind = tokstr(p, name);
		node->bind_pos = name.pos;
	}
	return node;
}

Pattern *dsl_pat_var(DslParser *p, Token name, bool is_const, bool optional)
{
	if (tokis(name, "_")) {
		if (is_const)
			error_at(p, name.pos, "'_' matches any value: it cannot be ':const'");
		Pattern *pat = new_pat(p, PAT_WILDCARD, name.pos);
		pat->optional = optional;
		return pat;
	}
	Pattern *pat = new_pat(p, PAT_VAR, name.pos);
	pat->name = tokstr(p, name);
	pat->is_const = is_const;
	pat->optional = optional;
	return pat;
}

/* x:!Conv:!Gemm, _:!Conv: the ops (Token copies) x is no output of. */
Pattern *dsl_pat_nots(DslParser *p, Pattern *var, PtrVec *ops)
{
	var->nots = arena_alloc(p->a, (size_t)ops->n * sizeof *var->nots);
	for (int i = 0; i < ops->n; i++) {
		const Token *t = ops->v[i];
		PatNot *n = &var->nots[var->nnots++];
		split_op(p, *t, &n->domain, &n->name);
		n->pos = t->pos;
	}
	return var;
}

Pattern *dsl_pat_rest(DslParser *p, Token name)
{
	Pattern *pat = new_pat(p, PAT_REST, name.pos);
	pat->name = tokstr(p, name);
	return pat;
}

Pattern *dsl_pat_output(DslParser *p, Token name, Token k)
{
	if (tokis(name, "_"))
		error_at(p, name.pos, "'_' is not a node: it has no output #k");
	Pattern *pat = new_pat(p, PAT_VAR, name.pos);
	pat->name = tokstr(p, name);
	int_in(p, k, false, 0, 1000, &pat->output);
	pat->has_output = true;
	return pat;
}

Pattern *dsl_pat_literal(DslParser *p, Expr *lit)
{
	Pattern *pat = new_pat(p, PAT_LITERAL, lit->pos);
	pat->lit = lit;
	return pat;
}

/* An INT token is all digits; a FLOAT has a '.' or an exponent, or is inf or nan. */
static bool is_float_token(Token t)
{
	for (unsigned i = 0; i < t.n; i++)
		if (t.z[i] < '0' || t.z[i] > '9')
			return true;
	return false;
}

/* A literal operand: [-]NUMBER [~ TOLERANCE]. */
Expr *dsl_lit_number(DslParser *p, Token minus, Token num, Token tilde, Token tol)
{
	Expr *e = dsl_num(p, num, is_float_token(num));
	if (minus.z) {
		e->i = -e->i;
		e->f = -e->f;
		e->pos = span(minus.pos, e->pos);
	}
	if (tilde.z) {
		Expr *t = dsl_num(p, tol, is_float_token(tol));
		double v = t->kind == EXPR_INT ? (double)t->i : t->f;
		if (!isfinite(e->f))
			error_at(p, e->pos, "'%s' cannot have a tolerance: '~' needs a finite number",
			         isnan(e->f) ? "nan" : e->f < 0 ? "-inf" : "inf");
		if (!(v > 0) || isinf(v))
			error_at(p, tol.pos, "a tolerance must be positive and finite");
		if (e->kind == EXPR_INT) {
			e->kind = EXPR_FLOAT;
			e->f = (double)e->i;
		}
		e->tol = v;
		e->pos = span(e->pos, tol.pos);
	}
	return e;
}

/* ---- the driver ------------------------------------------------------------- */

static bool is_item_start(int code)
{
	return code == 0 || code == TK_RULE || code == TK_LEVEL || code == TK_EXTERN;
}

static void feed(DslParser *p, void *parser, int code, Token t)
{
	p->look = t;
	if (!p->in_error && !dsl_parser_accepts(parser, code)) {
		int n = dsl_parser_ntokens();
		memset(p->expected, 0, sizeof p->expected);
		for (int k = 1; k < n && k < (int)sizeof p->expected; k++)
			p->expected[k] = dsl_parser_accepts(parser, k);
	}
	DslParse(parser, code, t);
}

RuleFile *dsl_parse(const char *path, const char *src, uint32_t len, Diag *d)
{
	Arena *a = arena_new();
	RuleFile *f = arena_alloc(a, sizeof *f);
	f->path = arena_strdup(a, path ? path : "<input>");
	f->src = src;
	f->srclen = len;
	f->arena = a;

	/* re2c wants a NUL after the text */
	char *text = malloc((size_t)len + 1);
	if (!text)
		abort();
	if (len)
		memcpy(text, src, len);
	text[len] = 0;

	Lexer lx = {.src = text, .cur = text, .end = text + len, .f = f, .d = d,
	            .mark = text, .mark_line = 1, .mark_col = 1};
	DslParser p = {.f = f, .a = a, .d = d, .lx = &lx};
	void *parser = DslParseAlloc(malloc, &p);
	if (!parser)
		abort();
	for (;;) {
		Token t;
		int code = dsl_next_token(&lx, &t);
		if (code < 0) {
			p.lost++;
			continue;
		}
		if (p.overflow) {
			if (!is_item_start(code))
				continue;       /* the parser starts over at the next item */
			p.overflow = false;
		}
		if (is_item_start(code)) {
			Token semi = {t.z, 0, t.pos, NULL};
			/* in error recovery (and not merely with the ';' that ends it
			 * shifted, its reduction pending): close the broken item */
			if (p.in_error && dsl_parser_accepts(parser, TK_SEMI))
				feed(&p, parser, TK_SEMI, semi);
			feed(&p, parser, code, t);
			if (p.in_error && code != 0) {
				/* t ended the item badly (a missing ';'): close it, start again at t */
				feed(&p, parser, TK_SEMI, semi);
				feed(&p, parser, code, t);
			}
			p.lost_at_item = p.lost;
		} else {
			feed(&p, parser, code, t);
		}
		p.prev = t;
		p.prev_code = code;
		p.prev_end = t.pos;
		p.prev_end.col += t.pos.len;
		p.prev_end.offset += t.n;
		p.prev_end.len = 1;
		if (code == 0)
			break;
	}
	DslParseFree(parser, free);
	free(text);

	if (p.rules) {
		f->nrules = p.rules->n;
		f->rules = (Rule **)p.rules->v;
	}
	if (p.externs) {
		f->nexterns = p.externs->n;
		f->externs = (Extern **)p.externs->v;
	}
	return f;
}
