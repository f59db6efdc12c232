/* codegen.c - the C printer of graftc: matcher programs -> readable matchers.
 *
 * The rules are lowered first (dsl/lower.c: dsl_lower), and this file
 * prints the programs it makes (dsl/mprog.h) as C; it reads the syntax
 * tree only for the source text it quotes in comments and the externs it
 * declares.  Each rule's program becomes the leaf apply_<rule>(),
 * straight-line code in the order of its steps (the pattern's root, then
 * its operands depth first, single use, deferred checks, the guard, the
 * values computed before building, then the result built through the
 * builder API), without the steps the lowering marks as tests a decision
 * tree can share (MTest: an operand's producer op, an int attribute
 * literal, an operand present or constant, inputs absent; only steps
 * before the first commute step are), which the tree makes.  A commute
 * step (a commutative op's swap site) becomes a loop over both orders of
 * its operands, so a failed check continues the loop instead of leaving
 * the function; checks in a row are one `if`, a condition per line.
 * Registers keep the C names the lowering gives them (values and nodes
 * after the pattern's variables or their paths, v_0_1, n_0; a value read
 * once is read where it is used); temporaries are numbered as the lowering
 * numbers them.  The tree is dsl_trees()'s (dsl/mtree.h): a trie of those
 * tests over the rules of one root op in the order they are tried, the
 * one the interpreter walks; emit_kids writes it as nested ifs, with a
 * switch where sibling tests ask for different ops of the same operand.
 *
 * --why and --match-each are not compiled: the file carries the rules
 * files verbatim and an adapter per C helper (RwSources, rw_interp.h),
 * and the engine runs those in the interpreter, which says why a rule
 * failed from the same programs.
 *
 * Everything the lowering cannot compile yet is an error at its position
 * ("not supported by the code generator yet: ..."): a rule is compiled
 * right or not at all. */
#include "codegen.h"
#include "ir/outfile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/check_internal.h"
#include "ir/ir.h"
#include "dsl/mprog.h"
#include "dsl/mtree.h"

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
static void put_line(Buf *out, int depth, const char *s)
{
	for (int i = 0; i < depth; i++)
		bput(out, "\t", 1);
	bput(out, s, strlen(s));
	bput(out, "\n", 1);
}

static void vline(Buf *out, int depth, const char *f, va_list ap)
{
	char *s = vfmt(f, ap);
	put_line(out, depth, s);
	free(s);
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

/* s without parentheses around all of it (takes and returns ownership);
 * a statement expression ({ ... }) keeps them */
static char *strip_parens(char *s)
{
	size_t n = strlen(s);
	while (n >= 2 && s[0] == '(' && s[1] != '{' && s[n - 1] == ')') {
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
	if (isinf(v))
		return fmt("%sHUGE_VAL", v < 0 ? "-" : "");
	if (isnan(v))   /* the rule language's nan (-nan: its sign bit set, as the interpreter has it) */
		return fmt("%sNAN", signbit(v) ? "-" : "");
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

/* ---- one program as one C function -------------------------------------------------------- */

/* Printing one program as the leaf apply_<name>(rw, n), which leaves the
 * steps marked as tests to the decision tree; its commute steps become
 * loops over both orders. */
typedef struct Fn {
	const MRuleSet *set;
	const MRule *m;
	const MProg *p;
	Buf *out;
	int depth;                  /* indentation */
	int loops;                  /* open swap loops: failing continues the innermost */
	char **names;               /* per register: its C name (or, for an MI_ARG read in place, the read) */
	int *skipped;               /* temporaries of MTEST_ATTR_INT steps, which the tree makes */
	int nskipped;
	int *uses;                  /* per register: how often the program reads it (at least) */
	char **conds;               /* failure conditions of checks in a row, not yet printed: */
	int nconds;                 /* one `if` with a condition per line (flush_checks) */
} Fn;

static const char *fail_stmt(const Fn *F);

/* The checks in a row so far as one `if`:
 *     if (!n_0 ||
 *         !rw_same_value(rw, v_0_1, x))
 *             continue;
 * (a failed check leaves the same way whichever fails). */
static void flush_checks(Fn *F)
{
	if (!F->nconds)
		return;
	/* a few short conditions fit on one line: if (!q || !k) */
	size_t len = 4 + (size_t)F->depth * 8;
	bool plain = true;
	for (int i = 0; i < F->nconds; i++) {
		len += strlen(F->conds[i]) + 4;
		plain = plain && !strstr(F->conds[i], "&&") && !strchr(F->conds[i], '?') && !strstr(F->conds[i], " = ");
	}
	if (F->nconds > 1 && plain && len <= 110) {
		Buf b = {0};
		for (int i = 0; i < F->nconds; i++) {
			bprintf(&b, "%s%s", i ? " || " : "if (", F->conds[i]);
			free(F->conds[i]);
		}
		bprintf(&b, ")");
		put_line(F->out, F->depth, b.s);
		free(b.s);
		F->nconds = 0;
		put_line(F->out, F->depth + 1, fail_stmt(F));
		return;
	}
	for (int i = 0; i < F->nconds; i++) {
		char *c = F->conds[i];
		bool wrap = F->nconds > 1 && (strstr(c, "&&") || strchr(c, '?') || strstr(c, " = "));
		char *t = fmt("%s%s%s%s%s", i ? "    " : "if (", wrap ? "(" : "", c, wrap ? ")" : "",
		              i + 1 < F->nconds ? " ||" : ")");
		put_line(F->out, F->depth, t);
		free(t);
		free(c);
	}
	F->nconds = 0;
	put_line(F->out, F->depth + 1, fail_stmt(F));
}

static void line(Fn *F, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void line(Fn *F, const char *f, ...)
{
	flush_checks(F);
	va_list ap;
	va_start(ap, f);
	vline(F->out, F->depth, f, ap);
	va_end(ap);
}

/* A temporary's name: prefix_<tmp>, numbered as graftc always has (in a
 * leaf, without the temporaries of the tests left to the tree). */
static char *tmp_name(const Fn *F, const char *prefix, int tmp)
{
	int n = tmp;
	for (int i = 0; i < F->nskipped; i++)
		n -= F->skipped[i] < tmp;
	return fmt("%s_%d", prefix, n);
}

/* The node in register r where it is read from: the root is n. */
static const char *node_name(const Fn *F, int r)
{
	return r == 0 ? "n" : F->names[r];
}

static const char *dtype_c_of(int64_t dt)
{
	static const char *const names[] = {"float32", "float16", "float64", "bfloat16", "int8", "int16", "int32",
	                                    "int64", "uint8", "uint16", "uint32", "uint64", "bool"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const char *n = !strcmp(names[i], "float32") ? "float" : !strcmp(names[i], "float64") ? "double" : names[i];
		if (dt && dtype_from_name(n) == dt)
			return dtype_c(names[i]);
	}
	return "0";
}

/* An expression as C: int64_t, double, bool, int (dtype), RwgStr, RwgInts,
 * RwgFloats, ValueId or RwgArg (malloc'd). */
static char *cx(const Fn *F, const MExpr *e)
{
	char *a = e->nkids > 0 && e->kids[0] ? cx(F, e->kids[0]) : NULL;
	char *b = e->nkids > 1 && e->kids[1] ? cx(F, e->kids[1]) : NULL;
	const char *name = F->names[e->reg];
	char *r = NULL;
	switch (e->kind) {
	case ME_INT: r = fmt("%lld", (long long)e->i); break;
	case ME_FLOAT: r = c_double(e->f); break;
	case ME_BOOL: r = fmt("%s", e->i ? "true" : "false"); break;
	case ME_DTYPE: r = fmt("%s", dtype_c_of(e->i)); break;
	case ME_STR: {
		char *s = c_string(e->s);
		r = fmt("rwg_str(%s, %zu)", s, e->slen);
		free(s);
		break;
	}
	case ME_LIST: {
		bool fl = e->type == MT_FLOATS;
		if (e->nkids == 0) {
			r = fmt("rwg_%s_lit(0, NULL)", fl ? "floats" : "ints");
			break;
		}
		Buf bb = {0};
		bprintf(&bb, "rwg_%s_lit(%d, (const %s[]){", fl ? "floats" : "ints", e->nkids, fl ? "double" : "int64_t");
		for (int i = 0; i < e->nkids; i++) {
			char *it = cx(F, e->kids[i]);
			bprintf(&bb, "%s%s", i ? ", " : "", it);
			free(it);
		}
		bput(&bb, "})", 2);
		r = bb.s;
		break;
	}
	case ME_REG: r = fmt("%s", name); break;
	case ME_OUT: r = fmt("rwg_out(rw, %s, %lld)", name, (long long)e->i); break;
	case ME_RANK: r = fmt("rwg_rank(rw, %s, &unknown)", a); break;
	case ME_SHAPE: r = fmt("rwg_shape(rw, %s, &unknown)", a); break;
	case ME_DIM: r = fmt("rwg_dim(rw, %s, %s, &unknown)", a, b); break;
	case ME_SAME_DIM: {
		char *c = cx(F, e->kids[2]), *d = cx(F, e->kids[3]);
		r = fmt("rwg_same_dim(rw, %s, %s, %s, %s, &unknown)", a, b, c, d);
		free(c);
		free(d);
		break;
	}
	case ME_NUMEL: r = fmt("rwg_numel(rw, %s, &unknown)", a); break;
	case ME_DTYPEOF: r = fmt("rwg_dtype_k(rw, %s, &unknown)", a); break;
	case ME_USES: r = fmt("rwg_uses(rw, %s)", a); break;
	case ME_SCALAR: r = e->arg ? fmt("rwg_arg_scalar(rw, %s, &unknown)", name) : fmt("rwg_scalar(rw, %s, &unknown)", a); break;
	case ME_INTSOF: r = e->arg ? fmt("rwg_arg_ints(rw, %s, &unknown)", name) : fmt("rwg_ints(rw, %s, &unknown)", a); break;
	case ME_OUTPUTS: r = fmt("rwg_outputs(rw, %s)", name); break;
	case ME_ABSENT: r = e->arg ? fmt("rwg_arg_absent(rw, %s)", name) : fmt("!%s", a); break;
	case ME_REST_LEN: r = fmt("rwg_rest_len(rw, %s)", name); break;
	case ME_REST_AT: r = fmt("rwg_rest_at(rw, %s, %s, &unknown)", name, a); break;
	case ME_LEN: r = fmt("(int64_t)%s.n", a); break;
	case ME_IS_IDENTITY: r = fmt("rwg_is_identity(%s)", a); break;
	case ME_COMPOSE: r = fmt("rwg_compose(%s, %s, &unknown)", a, b); break;
	case ME_ONES: r = fmt("rwg_ones(%s, &unknown)", a); break;
	case ME_RANGE: r = fmt("rwg_range(%s, &unknown)", a); break;
	case ME_DIMS: r = fmt("rwg_dims(rw, %s, %s, &unknown)", a, b); break;
	case ME_IS_FLOAT: r = fmt("rwg_is_float(rw, %s, &unknown)", a); break;
	case ME_IS_INT: r = fmt("rwg_is_int(rw, %s, &unknown)", a); break;
	case ME_MERGE_AXES: {
		char *c = cx(F, e->kids[2]);
		r = fmt("rwg_merge_axes(%s, %s, %s, &unknown)", a, b, c);
		free(c);
		break;
	}
	case ME_DISTINCT: r = fmt("rwg_distinct(%s)", a); break;
	case ME_FINITE: r = fmt("rwg_finite(rw, %s, &unknown)", a); break;
	case ME_MODERATE: r = fmt("rwg_moderate(rw, %s, &unknown)", a); break;
	case ME_EVERY: {
		static const char *const cmps[] = {[EX_EQ] = "RWG_EQ", [EX_NE] = "RWG_NE", [EX_LT] = "RWG_LT",
		                                   [EX_LE] = "RWG_LE", [EX_GT] = "RWG_GT", [EX_GE] = "RWG_GE"};
		r = fmt("rwg_ints_every%s(%s, %s, %s)", e->i ? "_k" : "", a, cmps[e->op], b);
		break;
	}
	case ME_ALL:
	case ME_ANY: {
		/* a loop inside the expression (a GNU C statement expression, which
		 * gcc and clang take): the guard's && and || stay short-circuit */
		bool all = e->kind == ME_ALL;
		long long q = (long long)e->i;
		r = fmt("({ RwgInts l_%lld = %s; bool q_%lld = %s; "
		        "for (int k_%lld = 0; %sq_%lld && k_%lld < l_%lld.n; k_%lld++) { int64_t %s = l_%lld.v[k_%lld]; q_%lld = %s; } "
		        "q_%lld; })",
		        q, a, q, all ? "true" : "false", q, all ? "" : "!", q, q, q, q, name, q, q, q, b, q);
		break;
	}
	case ME_OPSET: r = fmt("(int64_t)rw_opset(rw)"); break;
	case ME_MATH: {
		const char *cast = e->to_int ? "(int64_t)" : "";
		if (!strcmp(e->fn, "neg"))
			r = fmt("(-%s)", a);
		else if (!strcmp(e->fn, "relu"))
			r = fmt("(%s > 0 ? %s : 0)", a, a);
		else if (!strcmp(e->fn, "reciprocal"))
			r = fmt("(1.0 / %s)", a);
		else if (!strcmp(e->fn, "sigmoid"))
			r = fmt("(1.0 / (1.0 + exp(-(double)%s)))", a);
		else if (b)
			r = fmt("%s%s((double)%s, (double)%s)", cast, e->fn, a, b);
		else
			r = fmt("%s%s((double)%s)", cast, e->fn, a);
		break;
	}
	case ME_NOT: r = fmt("!%s", a); break;
	case ME_NEG: r = fmt("(-%s)", a); break;
	case ME_BIN: {
		MType lt = e->kids[0]->type, rt = e->kids[1]->type;
		switch (e->op) {
		case EX_CONCAT: r = fmt("rwg_ints_concat(%s, %s, &unknown)", a, b); break;
		case EX_EQ:
		case EX_NE: {
			const char *neg = e->op == EX_NE ? "!" : "";
			if (lt == MT_STR || rt == MT_STR)
				r = fmt("%srwg_str_eq(%s, %s)", neg, a, b);
			else if (lt == MT_INTS && rt == MT_INTS)
				r = fmt("%srwg_ints_eq(%s, %s)", neg, a, b);
			else if (lt == MT_INTS || lt == MT_FLOATS || rt == MT_INTS || rt == MT_FLOATS)
				r = fmt("%srwg_floats_eq(%s, %s)", neg, a, b);
			else
				r = fmt("%s %s %s", a, e->op == EX_EQ ? "==" : "!=", b);
			break;
		}
		case EX_DIV:
			r = e->type == MT_INT ? fmt("rwg_idiv(%s, %s, &unknown)", a, b) : fmt("((double)%s / %s)", a, b);
			break;
		default: {
			static const char *const ops[] = {
				[EX_ADD] = "+", [EX_SUB] = "-", [EX_MUL] = "*", [EX_LT] = "<", [EX_LE] = "<=",
				[EX_GT] = ">", [EX_GE] = ">=", [EX_AND] = "&&", [EX_OR] = "||",
			};
			bool paren = e->op == EX_AND || e->op == EX_OR || e->op == EX_ADD || e->op == EX_SUB;
			const char *o = (size_t)e->op < sizeof ops / sizeof *ops && ops[e->op] ? ops[e->op] : "?";
			/* a chain of && (or of ||) reads flat: (a && b && c), not ((a && b) && c) */
			const char *l = a, *rr = b;
			size_t ll = strlen(a), rl = strlen(b);
			for (int k = 0; k < 2 && (e->op == EX_AND || e->op == EX_OR); k++) {
				const MExpr *kid = e->kids[k];
				if (kid->kind == ME_BIN && kid->op == e->op) {
					if (k == 0)
						l = a + 1, ll -= 2;
					else
						rr = b + 1, rl -= 2;
				}
			}
			r = fmt(paren ? "(%.*s %s %.*s)" : "%.*s %s %.*s", (int)ll, l, o, (int)rl, rr);
		}
		}
		break;
	}
	case ME_INDEX:
		r = fmt("rwg_%s_at(%s, %s, &unknown)", e->kids[0]->type == MT_FLOATS ? "floats" : "ints", a, b);
		break;
	case ME_TO_FLOATS: r = fmt("rwg_ints_to_floats(%s)", a); break;
	case ME_AS_FLOAT: r = fmt("(double)(float)%s", a); break;
	case ME_EXTERN: {
		Buf c = {0};
		bprintf(&c, "%s(rw", F->set->externs[e->ext].c_name);
		for (int i = 0; i < e->nkids; i++) {
			char *x = cx(F, e->kids[i]);
			bprintf(&c, ", %s", x);
			free(x);
		}
		bput(&c, ")", 1);
		r = c.s;
		break;
	}
	case ME_IS_CONST: /* (as a check, fail_cond prints its negation) */
		r = e->arg ? fmt("(%s.attr || !%s.v || rw_is_const(rw, %s.v))", name, name, name)
		    : e->i ? fmt("(!%s || rw_is_const(rw, %s))", a, a)
		           : fmt("rw_is_const(rw, %s)", a);
		break;
	case ME_ABSENT_FROM: r = fmt("rwg_absent_from(rw, %s, %lld)", node_name(F, e->reg), (long long)e->i); break;
	case ME_SAME:
		if (e->i) {
			r = fmt("%s == %s", a, b);
		} else if (e->arg) {
			char *x = e->kids[0]->type == MT_ARG ? fmt("%s", a) : fmt("rwg_val(%s)", a);
			char *y = e->kids[1]->type == MT_ARG ? fmt("%s", b) : fmt("rwg_val(%s)", b);
			r = fmt("rwg_arg_same(rw, %s, %s)", x, y);
			free(x);
			free(y);
		} else {
			r = fmt("rw_same_value(rw, %s, %s)", a, b);
		}
		break;
	case ME_EQUALS: {
		char *x = c_double(e->f), *t = c_double(e->tol);
		r = e->arg ? fmt("rwg_arg_equals(rw, %s, %s, %s)", name, x, t) : fmt("rw_const_equals(rw, %s, %s, %s)", a, x, t);
		free(x);
		free(t);
		break;
	}
	case ME_EQUALS_LIST: {
		const char *fn = e->arg ? "rwg_arg_equals_list" : "rwg_const_equals_list";
		const char *v = e->arg ? name : a;
		if (!e->nnums) {
			r = fmt("%s(rw, %s, NULL, 0)", fn, v);
			break;
		}
		Buf l = {0};
		for (int i = 0; i < e->nnums; i++) {
			char *x = c_double(e->nums[i]);
			bprintf(&l, "%s%s", i ? ", " : "", x);
			free(x);
		}
		r = fmt("%s(rw, %s, (const double[]){%s}, %d)", fn, v, l.s, e->nnums);
		free(l.s);
		break;
	}
	case ME_ATTR_IS_SET: r = fmt("%s.attr", name); break;
	case ME_FROM:
		r = e->arg ? fmt("(!%s.attr && rwg_from(rw, %s.v, \"%s\", \"%s\"))", name, name, e->domain, e->s)
		           : fmt("rwg_from(rw, %s, \"%s\", \"%s\")", name, e->domain, e->s);
		break;
	}
	free(a);
	free(b);
	return r;
}

/* The C type of a register. */
static const char *c_type(MType t)
{
	switch (t) {
	case MT_INT: return "int64_t";
	case MT_FLOAT: return "double";
	case MT_BOOL: return "bool";
	case MT_DTYPE: return "int";
	case MT_STR: return "RwgStr";
	case MT_INTS: return "RwgInts";
	case MT_FLOATS: return "RwgFloats";
	default: return "ValueId";
	}
}

static const char *attr_getter(AttrType t, const char **ctype)
{
	switch (t) {
	case ATTR_INT: *ctype = "int64_t"; return "int";
	case ATTR_FLOAT: *ctype = "double"; return "float";
	case ATTR_STRING: *ctype = "RwgStr"; return "str";
	case ATTR_INTS: *ctype = "RwgInts"; return "ints";
	case ATTR_FLOATS: *ctype = "RwgFloats"; return "floats";
	default: *ctype = "?"; return "?";
	}
}

/* ---- failing ---------------------------------------------------------------------------------- */

static const char *fail_stmt(const Fn *F)
{
	return F->loops ? "continue;" : "return false;";
}

/* The statement after a failed condition: on to the next operand order,
 * or out. */
static void fail(Fn *F)
{
	line(F, "\t%s", fail_stmt(F));
}

/* `if (<cond>) fail`, joined with the checks right before it */
static void fail_if(Fn *F, const char *cond)
{
	F->conds = realloc(F->conds, sizeof *F->conds * (size_t)(F->nconds + 1));
	if (!F->conds)
		abort();
	F->conds[F->nconds++] = fmt("%s", cond);
}

/* if (!(cond)) fail */
static void check(Fn *F, const char *cond)
{
	char *s = is_call(cond) ? fmt("!%s", cond) : fmt("!(%s)", cond);
	fail_if(F, s);
	free(s);
}

/* The condition under which MI_CHECK x fails, as C. */
static char *fail_cond(const Fn *F, const MInsn *x)
{
	const MExpr *e = x->e;
	if (x->index)
		return cx(F, e);
	if (e->kind == ME_IS_CONST) {
		/* an operand that may be absent (or an attribute) passes */
		if (e->arg)
			return fmt("!%s.attr && %s.v && !rw_is_const(rw, %s.v)", F->names[e->reg], F->names[e->reg],
			           F->names[e->reg]);
		char *v = cx(F, e->kids[0]);
		char *r = e->i ? fmt("%s && !rw_is_const(rw, %s)", v, v) : fmt("!rw_is_const(rw, %s)", v);
		free(v);
		return r;
	}
	char *c = cx(F, e);
	char *r = is_call(c) ? fmt("!%s", c) : fmt("!(%s)", c);
	free(c);
	return r;
}

/* An int or ints attribute read only to be compared with a literal (the
 * pattern's Op[axis = -1], Transpose[perm = [0, 2, 1, 3]]): x's read and
 * the check after it printed as one test, rwg_attr_int_is or
 * rwg_attr_ints_is, where they were a variable and two tests.  False (and
 * nothing printed) for any other pair of steps. */
static bool attr_literal(Fn *F, const MInsn *x, const MInsn *next)
{
	if (x->kind != MI_ATTR || (x->attr_type != ATTR_INT && x->attr_type != ATTR_INTS) || F->uses[x->reg] != 1 ||
	    next->kind != MI_CHECK || next->index || x->test || next->test)
		return false;
	const MExpr *e = next->e;
	if (e->kind != ME_BIN || e->op != EX_EQ || e->nkids != 2 || e->kids[0]->kind != ME_REG ||
	    e->kids[0]->reg != x->reg)
		return false;
	const MExpr *lit = e->kids[1];
	bool ints = x->attr_type == ATTR_INTS;
	if (ints ? lit->kind != ME_LIST || lit->type != MT_INTS : lit->kind != ME_INT)
		return false;
	for (int k = 0; ints && k < lit->nkids; k++)
		if (lit->kids[k]->kind != ME_INT)
			return false;
	char *want = cx(F, lit);
	char *c = fmt("!rwg_attr_%s_is(rw, %s, \"%s\", %s)", ints ? "ints" : "int", node_name(F, x->src), x->name, want);
	fail_if(F, c);
	free(c);
	free(want);
	return true;
}

/* ---- the tests a leaf leaves to the tree ------------------------------------------------------ */

/* Step i of a leaf, marked as a test: the tree makes it (dsl/mtree.c
 * records the same steps).  Returns the steps it takes (an attribute's
 * read and its check: 2). */
static int leave_test(Fn *F, int i)
{
	const MInsn *x = &F->p->insns[i];
	switch (x->test) {
	case MTEST_OP:
		line(F, "NodeId %s = rw_producer(rw, %s);", node_name(F, x->reg), F->names[x->src]);
		return 1;
	case MTEST_PRESENT:
	case MTEST_CONST:
	case MTEST_ABSENT_FROM:
		return 1;
	case MTEST_ATTR_INT:
		return 2;
	default:
		return 0;
	}
}

/* ---- matching -------------------------------------------------------------------------------- */

/* The single-use steps from i on, in a row, as one check: the refs of each
 * matched node in `nodes` order, 0 for those not checked (the root, shared
 * nodes).  Returns the steps taken. */
static int print_single_uses(Fn *F, int i)
{
	const MProg *p = F->p;
	int *refs = calloc((size_t)p->nnodes + 1, sizeof *refs), n = 0;
	if (!refs)
		abort();
	for (; i + n < p->ninsns && p->insns[i + n].kind == MI_SINGLE_USE; n++)
		for (int k = 0; k < p->nnodes; k++)
			if (p->nodes[k] == p->insns[i + n].src)
				refs[k] = p->insns[i + n].index;
	Buf b = {0};
	bprintf(&b, "!rwg_single_use_nodes(rw, nodes, %d, (const int[]){", p->nnodes);
	for (int k = 0; k < p->nnodes; k++)
		bprintf(&b, "%s%d", k ? ", " : "", refs[k]);
	bprintf(&b, "})");
	fail_if(F, b.s);
	free(b.s);
	free(refs);
	return n;
}

/* Operands of one node read in a row (MI_INPUT steps from i on, each kept in
 * a variable), declared on one line while it stays short.  Returns the steps
 * printed, or 1 (nothing printed) when the next step is no such read. */
static int print_inputs(Fn *F, int i)
{
	const MProg *p = F->p;
	const MInsn *x = &p->insns[i];
	int n = 1;
	size_t len = (size_t)F->depth * 8 + strlen(F->names[x->reg]) + 40;
	while (i + n < p->ninsns && i + n != p->nmatch) {
		const MInsn *y = &p->insns[i + n];
		if (y->kind != MI_INPUT || y->test || y->swap || y->src != x->src || F->uses[y->reg] == 1)
			break;
		len += strlen(F->names[y->reg]) + 30;
		if (len > 120)
			break;
		n++;
	}
	if (n == 1)
		return 1;
	const char *node = node_name(F, x->src);
	Buf b = {0};
	for (int k = 0; k < n; k++)
		bprintf(&b, "%s%s = rw_input(rw, %s, %d)", k ? ", " : "ValueId ", F->names[p->insns[i + k].reg], node,
		        p->insns[i + k].index);
	line(F, "%s;", b.s);
	free(b.s);
	return n;
}

/* A commute step and the reads of operands 0 and 1 of its commutative op
 * (steps a, b): a loop over both orders, which a failure continues. */
static void print_swap(Fn *F, const MInsn *a, const MInsn *b)
{
	const char *node = node_name(F, a->src);
	int site = a->swap - 1;
	line(F, "for (int i_%d = 0; i_%d < 2; i_%d++) {", site, site, site);
	F->depth++;
	F->loops++;
	line(F, "ValueId %s = rw_input(rw, %s, i_%d), %s = rw_input(rw, %s, 1 - i_%d);", F->names[a->reg], node, site,
	     F->names[b->reg], node, site);
	if (a->unused)
		line(F, "(void)%s;", F->names[a->reg]);
	if (b->unused)
		line(F, "(void)%s;", F->names[b->reg]);
}

/* e is a list of int or float literals (nothing in it reads the match). */
static bool literal_list(const MExpr *e)
{
	if (e->kind != ME_LIST)
		return false;
	for (int k = 0; k < e->nkids; k++)
		if (e->kids[k]->kind != ME_INT && e->kids[k]->kind != ME_FLOAT)
			return false;
	return true;
}

static void print_step(Fn *F, const MInsn *x)
{
	const char *name = F->names[x->reg];
	switch (x->kind) {
	case MI_COMMUTE: /* print_fn prints it with its reads (print_swap) */
		break;
	case MI_INPUT:
		if (F->uses[x->reg] == 1 && !x->swap) { /* read where it is used */
			free(F->names[x->reg]);
			F->names[x->reg] = fmt("rw_input(rw, %s, %d)", node_name(F, x->src), x->index);
			break;
		}
		line(F, "ValueId %s = rw_input(rw, %s, %d);", name, node_name(F, x->src), x->index);
		break;
	case MI_ARG: {
		const char *node = node_name(F, x->src);
		if (!F->p->cnames[x->reg]) /* read in place: F->names holds the read */
			break;
		if (x->nforms > 1) {
			/* several old spellings (Pad's paddings, then pads): the opset picks one */
			Buf forms = {0};
			for (int k = 0; k < x->nforms; k++)
				bprintf(&forms, "%s{%d, \"%s\", %d, %d}", k ? ", " : "", x->forms[k].input, x->forms[k].attr,
				        x->forms[k].first, x->forms[k].last);
			line(F, "static const RwgForm %s_forms[] = {%s};", name, forms.s);
			line(F, "RwgArg %s = rwg_arg_forms(rw, %s, %d, %s_forms, %d);", name, node, x->index, name, x->nforms);
			free(forms.s);
		} else {
			line(F, "RwgArg %s = rwg_arg(rw, %s, %d, \"%s\", %d, %d);", name, node, x->index, x->forms[0].attr,
			     x->forms[0].first, x->forms[0].last);
		}
		break;
	}
	case MI_PRODUCER: {
		char *val = x->e->type == MT_ARG ? fmt("%s.v", F->names[x->src]) : fmt("%s", F->names[x->src]);
		const char *node = node_name(F, x->reg);
		if (*x->domain)
			line(F, "NodeId %s = rwg_producer_named(rw, %s, \"%s\", \"%s\", %d);", node, val, x->domain, x->op,
			     x->index);
		else
			line(F, "NodeId %s = rwg_producer_op(rw, %s, OP_%s, %d);", node, val, x->op, x->index);
		check(F, node);
		free(val);
		break;
	}
	case MI_ATTR: {
		const char *ctype, *getter = attr_getter(x->attr_type, &ctype);
		line(F, "%s %s;", ctype, name);
		char *c = fmt("rwg_attr_%s(rw, %s, \"%s\", &%s)", getter, node_name(F, x->src), x->name, name);
		check(F, c);
		free(c);
		break;
	}
	case MI_REST:
		line(F, "RwgRest %s = {%s, %d};", name, node_name(F, x->src), x->index);
		break;
	case MI_CHECK: {
		char *c = fail_cond(F, x);
		fail_if(F, c);
		free(c);
		break;
	}
	case MI_SINGLE_USE: {
		char *c = fmt("!rwg_single_use_node(rw, %s, nodes, %d, %d)", node_name(F, x->src), F->p->nnodes, x->index);
		fail_if(F, c);
		free(c);
		break;
	}
	case MI_GUARD: {
		char *cond = strip_parens(cx(F, x->e));
		if (x->index && F->loops)
			line(F, "unknown = false;");
		char *c;
		if (x->index)
			c = is_call(cond) || (cond[0] == '!' && is_call(cond + 1)) ? fmt("!%s || unknown", cond)
			                                                            : fmt("!(%s) || unknown", cond);
		else
			c = is_call(cond) ? fmt("!%s", cond) : fmt("!(%s)", cond);
		fail_if(F, c);
		free(c);
		free(cond);
		break;
	}
	case MI_PRE: {
		char *v = cx(F, x->e);
		if (literal_list(x->e)) {
			/* a list of literals cannot be unknown: printed where it is used */
			free(F->names[x->reg]);
			F->names[x->reg] = v;
			break;
		}
		line(F, "%s %s = %s;", c_type(x->e->type), name, v);
		free(v);
		break;
	}
	case MI_PRE_KNOWN:
		fail_if(F, "unknown");
		break;
	case MI_LIKE: {
		char *v = cx(F, x->e), *c = fmt("rwg_dtype(rw, %s)", v);
		check(F, c);
		free(v);
		free(c);
		break;
	}
	}
}

/* ---- building -------------------------------------------------------------------------------- */

/* A built value, as a statement of its own: the builder calls happen in
 * the order the result is read (C leaves the order of calls in one
 * argument list open), the order the interpreter builds in too.  Takes
 * ownership of expr; returns the temporary's name. */
static char *hoist(Fn *F, int tmp, char *expr)
{
	char *t = tmp_name(F, "t", tmp);
	line(F, "ValueId %s = %s;", t, expr);
	free(expr);
	return t;
}

/* The value v builds, as a C ValueId expression (malloc'd), after the
 * statements that build it. */
static char *cv(Fn *F, const MVal *v)
{
	switch (v->kind) {
	case MV_ABSENT: return fmt("0");
	case MV_EXPR: return cx(F, v->e);
	case MV_ARG: return hoist(F, v->tmp, fmt("rwg_arg_value(rw, %s, &unknown)", F->names[v->reg]));
	case MV_SCALAR: {
		char *like = cx(F, v->kids[0]->e), *x = cx(F, v->e);
		char *r = hoist(F, v->tmp, fmt("rw_const_scalar(rw, rwg_dtype(rw, %s), %s)", like, x));
		free(like);
		free(x);
		return r;
	}
	case MV_INTS: {
		char *x = cx(F, v->e);
		char *r = hoist(F, v->tmp, fmt("rwg_const_ints(rw, %s)", x));
		free(x);
		return r;
	}
	case MV_OP: {
		char *a = cv(F, v->kids[0]), *b = v->nkids > 1 ? cv(F, v->kids[1]) : NULL;
		char *r = b ? hoist(F, v->tmp, fmt("rwg_op2(rw, \"%s\", %s, %s)", v->op, a, b))
		            : hoist(F, v->tmp, fmt("rwg_op1(rw, \"%s\", %s)", v->op, a));
		free(a);
		free(b);
		return r;
	}
	case MV_DEFAULT: {
		char *t = tmp_name(F, "t", v->tmp);
		line(F, "ValueId %s = %s;", t, F->names[v->reg]);
		line(F, "if (!%s) {", t);
		F->depth++;
		char *b = cv(F, v->kids[0]);
		line(F, "%s = %s;", t, b);
		free(b);
		F->depth--;
		line(F, "}");
		return t;
	}
	case MV_EXTERN: {
		/* an extern that builds a value: called inside the transaction; 0 abandons the rewrite */
		Buf call = {0};
		bprintf(&call, "%s(rw", F->set->externs[v->ext].c_name);
		for (int i = 0; i < v->nkids; i++) {
			char *a = v->kids[i] ? cv(F, v->kids[i]) : cx(F, v->args[i]);
			bprintf(&call, ", %s", a);
			free(a);
		}
		char *t = tmp_name(F, "x", v->tmp);
		line(F, "ValueId %s = %s);", t, call.s);
		line(F, "if (!%s)", t);
		line(F, "\tunknown = true;");
		free(call.s);
		return t;
	}
	case MV_NODE: {
		char **ins = calloc((size_t)v->nkids + 1, sizeof *ins);
		if (!ins)
			abort();
		for (int i = 0; i < v->nkids; i++)
			ins[i] = cv(F, v->kids[i]);
		char *k = tmp_name(F, "k", v->tmp), *in = tmp_name(F, "in", v->tmp + 1);
		Buf args = {0};
		for (int i = 0; i < v->nkids; i++)
			bprintf(&args, v->nforms ? "%srwg_val(%s)" : "%s%s", i ? ", " : "", ins[i]);
		if (v->nforms) {
			/* in the model opset's form where an input may be an attribute */
			Buf forms = {0};
			for (int i = 0; i < v->nforms; i++)
				bprintf(&forms, "%s{%d, \"%s\", %d, %d}", i ? ", " : "", v->forms[i].input, v->forms[i].attr,
				        v->forms[i].first, v->forms[i].last);
			line(F, "RwgArg %s[] = {%s};", in, args.s);
			line(F, "static const RwgForm %s_forms[] = {%s};", in, forms.s);
			line(F, "NodeId %s = rwg_node_forms(rw, \"%s\", %s, %d, 1, %s_forms, %d, &unknown);", k, v->op, in,
			     v->nkids, in, v->nforms);
			free(forms.s);
		} else {
			/* the inputs as a compound literal in the call: one line a node */
			char *inputs = v->nkids ? fmt("(ValueId[]){%s}", args.s) : fmt("NULL");
			if (v->outs)   /* the outputs the rule reads (", s => y#k"), the other optional ones omitted */
				line(F, "NodeId %s = rwg_node_outs(rw, \"%s\", \"%s\", %s, %d, 0x%xu);", k, v->domain, v->op,
				     inputs, v->nkids, v->outs);
			else if (*v->domain)
				line(F, "NodeId %s = rwg_node_in(rw, \"%s\", \"%s\", %s, %d, 1);", k, v->domain, v->op, inputs,
				     v->nkids);
			else
				line(F, "NodeId %s = rwg_node(rw, \"%s\", %s, %d, 1);", k, v->op, inputs, v->nkids);
			free(inputs);
		}
		if (v->copy)
			line(F, "rw_copy_attrs(rw, %s, %s);", k, F->names[v->reg]);
		for (int i = 0; i < v->nattrs; i++) {
			const MSetAttr *a = &v->attrs[i];
			const char *ctype, *setter = attr_getter(a->type, &ctype);
			char *x = cx(F, a->e);
			if (a->to_floats)
				line(F, "rwg_set_floats(rw, %s, \"%s\", rwg_ints_to_floats(%s));", k, a->name, x);
			else
				line(F, "rwg_set_%s(rw, %s, \"%s\", %s);", setter, k, a->name, x);
			free(x);
		}
		char *r = fmt("rw_output(rw, %s, 0)", k);
		for (int i = 0; i < v->nkids; i++)
			free(ins[i]);
		free(ins);
		free(args.s);
		free(k);
		free(in);
		return r;
	}
	}
	return fmt("0");
}

/* ---- the function ----------------------------------------------------------------------------- */

/* The reads of registers in e and v (counted generously: a register read
 * once is printed in place, and reading it twice is only slower). */
static void count_expr(int *uses, const MExpr *e)
{
	if (!e)
		return;
	uses[e->reg] += e->kind == ME_IS_CONST ? 2 : 1;
	for (int k = 0; k < e->nkids; k++)
		count_expr(uses, e->kids[k]);
	if (e->kind == ME_IS_CONST)
		for (int k = 0; k < e->nkids; k++)
			count_expr(uses, e->kids[k]);
}

static void count_val(int *uses, const MVal *v)
{
	if (!v)
		return;
	uses[v->reg]++;
	count_expr(uses, v->e);
	for (int k = 0; k < v->nkids; k++)
		count_val(uses, v->kids[k]);
	for (int k = 0; v->args && k < v->nkids; k++)
		count_expr(uses, v->args[k]);
	for (int k = 0; k < v->nattrs; k++)
		count_expr(uses, v->attrs[k].e);
}

/* Names of the registers, and the temporaries the tree's tests take away. */
static void fn_init(Fn *F)
{
	const MProg *p = F->p;
	int n = p->nregs + 1;
	F->names = calloc((size_t)n, sizeof *F->names);
	F->skipped = calloc((size_t)p->ninsns + 1, sizeof *F->skipped);
	F->uses = calloc((size_t)n, sizeof *F->uses);
	if (!F->names || !F->skipped || !F->uses)
		abort();
	for (int i = 0; i < p->ninsns; i++) {
		const MInsn *x = &p->insns[i];
		F->uses[x->src]++;
		/* the tree makes these checks: the leaf does not print them */
		if (x->test != MTEST_PRESENT && x->test != MTEST_CONST && x->test != MTEST_ABSENT_FROM)
			count_expr(F->uses, x->e);
	}
	for (int i = 0; i < p->nresults; i++)
		count_val(F->uses, p->results[i]);
	for (int r = 0; r < p->nregs; r++)
		F->names[r] = fmt("%s", p->cnames[r] ? p->cnames[r] : "0");
	for (int i = 0; i < p->ninsns; i++) {
		const MInsn *x = &p->insns[i];
		if (x->kind == MI_ATTR && x->test == MTEST_ATTR_INT)
			F->skipped[F->nskipped++] = x->tmp;
	}
	for (int i = 0; i < p->ninsns; i++) {
		const MInsn *x = &p->insns[i];
		if (x->tmp) {
			free(F->names[x->reg]);
			F->names[x->reg] = tmp_name(F, p->cnames[x->reg], x->tmp);
		}
		if (x->kind == MI_ARG && !p->cnames[x->reg]) {
			free(F->names[x->reg]);
			F->names[x->reg] = fmt("rwg_arg(rw, %s, %d, \"%s\", %d, %d)", node_name(F, x->src), x->index,
			                       x->forms[0].attr, x->forms[0].first, x->forms[0].last);
		}
	}
}

static void fn_free(Fn *F)
{
	for (int r = 0; r <= F->p->nregs; r++) {
		free(F->names[r]);
	}
	free(F->names);
	free(F->skipped);
	free(F->conds);
	free(F->uses);
}

/* The matched nodes, after the pattern's steps: what single use and rw_begin take. */
static void print_nodes(Fn *F)
{
	Buf list = {0};
	for (int j = 0; j < F->p->nnodes; j++)
		bprintf(&list, "%s%s", j ? ", " : "", node_name(F, F->p->nodes[j]));
	line(F, "NodeId nodes[] = {%s};", list.s);
	free(list.s);
}

/* The program of rule m into out as the leaf apply_<name>(), without the
 * tests it leaves to the decision tree (which asks rw_enabled first). */
static void print_fn(const MRuleSet *set, const MRule *m, Buf *out)
{
	Fn F = {.set = set, .m = m, .p = &m->prog, .depth = 1};
	const MProg *p = F.p;
	Buf body = {0};
	F.out = &body;
	fn_init(&F);

	if (strcmp(p->cnames[0], "n"))
		line(&F, "NodeId %s = n;", p->cnames[0]);

	bool uses_unknown = false, has_pre = false;
	for (int i = 0; i < p->ninsns; i++) {
		const MInsn *x = &p->insns[i];
		if (i == p->nmatch)
			print_nodes(&F);
		if (x->test) {
			i += leave_test(&F, i) - 1;
			continue;
		}
		if (x->kind == MI_COMMUTE) {
			print_swap(&F, &p->insns[i + 1], &p->insns[i + 2]);
			i += 2;
			continue;
		}
		if (i + 1 < p->ninsns && attr_literal(&F, x, &p->insns[i + 1])) {
			i++;
			continue;
		}
		if (x->kind == MI_SINGLE_USE && i + 1 < p->ninsns && p->insns[i + 1].kind == MI_SINGLE_USE) {
			i += print_single_uses(&F, i) - 1;
			continue;
		}
		if (x->kind == MI_INPUT && !x->swap && F.uses[x->reg] != 1) {
			int n = print_inputs(&F, i);
			if (n > 1) {
				i += n - 1;
				continue;
			}
		}
		if (x->kind == MI_GUARD && x->index)
			uses_unknown = true;
		if (x->kind == MI_PRE && !has_pre) {
			/* the values computed before building start with nothing unknown */
			has_pre = true;
			bool pre_unknown = false;
			for (int j = i; j < p->ninsns; j++)
				pre_unknown = pre_unknown || p->insns[j].kind == MI_PRE_KNOWN;
			if (pre_unknown && (F.loops || uses_unknown))
				line(&F, "unknown = false;");
			uses_unknown = uses_unknown || pre_unknown;
		}
		print_step(&F, x);
	}
	if (p->nmatch == p->ninsns)
		print_nodes(&F);

	/* the result; in a loop over operand orders, what an earlier order's
	 * build found unknown must not decide this one's */
	if (p->build_step && F.loops && !has_pre)
		line(&F, "unknown = false;");
	line(&F, "rw_begin(rw, RULE_%s, n, nodes, %d);", m->name, p->nnodes);
	char **res = calloc((size_t)p->nresults + 1, sizeof *res);
	if (!res)
		abort();
	for (int i = 0; i < p->nresults; i++)
		res[i] = cv(&F, p->results[i]);
	for (int i = 0; i < p->nresults; i++) {
		line(&F, "rw_replace(rw, %d, %s);", p->out0 + i, res[i]);
		free(res[i]);
	}
	free(res);
	for (int i = 0; i < p->nalso; i++) {
		char *k = tmp_name(&F, "k", p->results[0]->tmp);
		line(&F, "rw_replace_also(rw, %s, %d, rw_output(rw, %s, %d));", node_name(&F, p->also[i].reg),
		     p->also[i].node_out, k, p->also[i].out);
		free(k);
	}
	if (p->build_step) {
		uses_unknown = true;
		line(&F, "if (unknown) {");
		line(&F, "\trw_abort(rw);");
		fail(&F);
		line(&F, "}");
	}
	/* a refused commit (the interface, the result's type) leaves the other
	 * operand orders to try, as the decision tree's leaves do */
	if (F.loops) {
		line(&F, "if (rw_commit(rw))");
		line(&F, "\treturn true;");
	} else {
		line(&F, "return rw_commit(rw);");
	}
	while (F.loops) {
		F.loops--;
		F.depth--;
		line(&F, "}");
	}
	if (m->nsites)
		line(&F, "return false;");

	flush_checks(&F);
	/* the function: what the rule says, then the body */
	bprintf(out, "// match:  %s\n", m->pat_text);
	if (m->guard_text)
		bprintf(out, "// cond:   %s\n", m->guard_text);
	bprintf(out, "// result: %s\n", m->res_text);
	bprintf(out, "// %s:%d, without the tests its decision tree made\n", m->file->path, m->line);
	bprintf(out, "static bool apply_%s(Rewriter *rw, NodeId n)\n{\n", m->name);
	if (uses_unknown || strstr(body.s, "&unknown"))
		bprintf(out, "\tbool unknown = false;\n");
	bput(out, body.s, body.n);
	bprintf(out, "}\n\n");
	free(body.s);
	fn_free(&F);
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

/* Printing one root op's tree: the set (the leaves' rule names) and the
 * node variables the tree's tests read ("p_0, p_1_0"). */
typedef struct TreeOut {
	const MRuleSet *set;
	Buf *out;
	const char *vars;
} TreeOut;

/* The rules a subtree serves, in order, each once: "conv_bn, conv_add_bias". */
static void served(const TreeOut *T, const MTreeNode *t, Buf *b)
{
	if (!t->test && t->rule >= 0) {
		const char *name = T->set->rules[t->rule].name;
		size_t n = strlen(name);
		for (const char *p = b->s ? strstr(b->s, name) : NULL; p; p = strstr(p + 1, name))
			if ((p == b->s || p[-1] == ' ') && (p[n] == ',' || p[n] == 0))
				return;
		bprintf(b, "%s%s", b->n ? ", " : "", name);
	}
	for (int i = 0; i < t->nkids; i++)
		served(T, t->kids[i], b);
}

static void tline(Buf *out, int depth, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void tline(Buf *out, int depth, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	vline(out, depth, f, ap);
	va_end(ap);
}

/* The condition of a test other than an op test. */
static char *test_cond(const MTreeTest *t)
{
	char *nv = tree_node_var(t->path), *c;
	switch (t->kind) {
	case MTEST_PRESENT: c = fmt("rw_input(rw, %s, %d)", nv, t->index); break;
	case MTEST_CONST: c = fmt("rw_is_const(rw, rw_input(rw, %s, %d))", nv, t->index); break;
	case MTEST_ABSENT_FROM: c = fmt("rwg_absent_from(rw, %s, %d)", nv, t->index); break;
	case MTEST_ATTR_INT: c = fmt("rwg_attr_int_is(rw, %s, \"%s\", %lld)", nv, t->attr, (long long)t->value); break;
	default: c = fmt("false"); break;
	}
	free(nv);
	return c;
}

static void emit_kids(const TreeOut *T, const MTreeNode *t, int depth, const char *parent_rules);
static bool listed(const char *list, const char *v);

/* Each decision point names the rules it serves, when they are not simply
 * those of the point around it. */
static char *emit_comment(const TreeOut *T, const MTreeNode *t, int depth, const char *parent_rules)
{
	Buf b = {0};
	served(T, t, &b);
	if (!parent_rules || strcmp(b.s, parent_rules))
		tline(T->out, depth, "/* %s */", b.s);
	return b.s;
}

/* Children of a node that are op tests of one input with the same output
 * slot (MTreeNode.run): one switch on the producer's op. */
static void emit_switch(const TreeOut *T, MTreeNode *const *kids, int n, int depth)
{
	const MTreeTest *t0 = kids[0]->test;
	char *nv = tree_node_var(t0->path), *child = fmt("p%s_%d", t0->path, t0->index);
	tline(T->out, depth, "switch (rwg_producer_kind(rw, rw_input(rw, %s, %d), %d)) {", nv, t0->index, t0->out);
	for (int i = 0; i < n; i++) {
		tline(T->out, depth, "case OP_%s:", kids[i]->test->op);
		char *rules = emit_comment(T, kids[i], depth + 1, NULL);
		if (listed(T->vars, child))
			tline(T->out, depth + 1, "%s = rw_producer(rw, rw_input(rw, %s, %d));", child, nv, t0->index);
		emit_kids(T, kids[i], depth + 1, rules);
		tline(T->out, depth + 1, "break;");
		free(rules);
	}
	tline(T->out, depth, "default:");
	tline(T->out, depth + 1, "break;");
	tline(T->out, depth, "}");
	free(nv);
	free(child);
}

static void emit_kids(const TreeOut *T, const MTreeNode *t, int depth, const char *parent_rules)
{
	Buf *out = T->out;
	for (int i = 0; i < t->nkids;) {
		const MTreeNode *k = t->kids[i];
		if (!k->test) {
			/* leaves in a row: one condition, a leaf per line */
			int end = i;
			while (end < t->nkids && !t->kids[end]->test)
				end++;
			const char *open = end - i > 1 ? "(" : "", *close = end - i > 1 ? ")" : "";
			for (int j = i; j < end; j++) {
				const char *name = T->set->rules[t->kids[j]->rule].name;
				tline(out, depth, "%s%srw_enabled(rw, RULE_%s) && apply_%s(rw, n)%s%s", j == i ? "if (" : "    ", open,
				      name, name, close, j + 1 < end ? " ||" : ")");
			}
			tline(out, depth + 1, "return true;");
			i = end;
			continue;
		}
		const MTreeTest *x = k->test;
		if (x->kind == MTEST_OP && k->run >= 2) {
			emit_switch(T, t->kids + i, k->run, depth);
			i += k->run;
			continue;
		}
		char *rules = emit_comment(T, k, depth, parent_rules);
		if (x->kind == MTEST_OP) {
			char *nv = tree_node_var(x->path);
			char *child = fmt("p%s_%d", x->path, x->index);
			if (listed(T->vars, child))
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
				if (k->nkids != 1 || !k->kids[0]->test || k->kids[0]->test->kind == MTEST_OP)
					break;
				k = k->kids[0];
			}
			tline(out, depth, "if (%s) {", c.s);
			free(c.s);
		}
		emit_kids(T, k, depth + 1, rules);
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

/* Node variables the tree's tests read (p_0, p_1_0): declared once at the
 * top, assigned where an op test finds the node. */
static void tree_vars(const MTreeNode *t, Buf *names)
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

/* match_<fn>: the decision tree of one root op (dsl_trees). */
static void emit_tree(const MRuleSet *set, const char *fn, const MRoot *root, Buf *out)
{
	bprintf(out, "static bool match_%s(Rewriter *rw, NodeId n)\n{\n", fn);
	Buf names = {0};
	tree_vars(root->tree, &names);
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
	TreeOut T = {set, out, names.s};
	emit_kids(&T, root->tree, 1, NULL);
	bprintf(out, "\treturn false;\n}\n\n");
	free(names.s);
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


/* ---- the file ----------------------------------------------------------------------------- */

/* Root op key: "Conv" or "com.microsoft.FusedConv". */
static char *root_key(const MRule *m)
{
	return *m->root_domain ? fmt("%s.%s", m->root_domain, m->root_op) : fmt("%s", m->root_op);
}

static int by_root_then_priority(const void *a, const void *b)
{
	const MRule *x = *(const MRule *const *)a, *y = *(const MRule *const *)b;
	char *kx = root_key(x), *ky = root_key(y);
	int c = strcmp(kx, ky);
	free(kx);
	free(ky);
	if (c)
		return c;
	if (x->rule->priority != y->rule->priority)
		return x->rule->priority > y->rule->priority ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The field of RwReg (rw_interp.h) that holds a value of the type of
 * signature letter c, with the C conversion to the helper's type. */
static const char *reg_field(char c, const char **cast)
{
	*cast = c == 'd' ? "(int)" : "";
	switch (c) {
	case 'f': return "f";
	case 's': return "s";
	case 'I': return "ints";
	case 'F': return "floats";
	case 'v': case 't': return "v";
	default: return "i"; /* b, i, d */
	}
}

/* Each C helper the rules call, once, as the interpreter calls it
 * (RwExternFn), and the table of them: `externs`. */
static void print_adapters(Buf *out, RuleFile **files, int nfiles)
{
	Buf table = {0};
	for (int i = 0; i < nfiles; i++)
		for (int k = 0; k < files[i]->nexterns; k++) {
			const Extern *x = files[i]->externs[k];
			const char *c_name = x->c_name ? x->c_name : x->name;
			char *key = fmt("{\"%s\",", c_name);
			bool seen = table.s && strstr(table.s, key);
			free(key);
			if (seen)
				continue;
			Buf sig = {0}, args = {0};
			bprintf(&sig, "%c(", dsl_type_letter(x->ret));
			for (int j = 0; j < x->nparams; j++) {
				const char *cast, *field = reg_field(dsl_type_letter(x->params[j]), &cast);
				bprintf(&sig, "%c", dsl_type_letter(x->params[j]));
				bprintf(&args, ", %sa[%d].%s", cast, j, field);
			}
			bprintf(&sig, ")");
			const char *cast, *ret = reg_field(dsl_type_letter(x->ret), &cast);
			bprintf(out, "static void x_%s(Rewriter *rw, const RwReg *a, RwReg *ret) { %sret->%s = %s(rw%s); }\n",
			        c_name, x->nparams ? "" : "(void)a; ", ret, c_name, args.s ? args.s : "");
			bprintf(&table, "\t{\"%s\", \"%s\", x_%s},\n", c_name, sig.s, c_name);
			free(sig.s);
			free(args.s);
		}
	bprintf(out, "%sstatic const RwExternDef externs[] = {\n%s\t{NULL, NULL, NULL},\n};\n\n", table.s ? "\n" : "",
	        table.s ? table.s : "");
	free(table.s);
}

/* A file's text as C string literals, one per line of it, each on a line
 * of its own ("\t \"text\\n\"") */
static void print_text(Buf *out, const char *src, uint32_t len)
{
	for (uint32_t i = 0; i < len;) {
		uint32_t end = i;
		while (end < len && src[end] != '\n')
			end++;
		char *text = fmt("%.*s", (int)(end - i), src + i);
		char *lit = c_escaped(text, false);
		bprintf(out, "\t \"%s%s\"", lit, end < len ? "\\n" : "");
		bput(out, end + 1 < len ? "\n" : "", end + 1 < len ? 1 : 0);
		free(text);
		free(lit);
		i = end + 1;
	}
	if (!len)
		bprintf(out, "\t \"\"");
}

/* The rules files verbatim and the adapters of their C helpers, ending in
 * the RwSources: `static const RwSources sources` in the matchers' file,
 * or, exported (own), graft_rules_<set>_sources in a file of its own. */
static void print_sources(Buf *out, RuleFile **files, int nfiles, const char *set, bool own)
{
	bprintf(out, "/* ---- for the interpreter (graft optimize --why, --match-each): the C helpers, the rules text ---- */\n\n");
	print_adapters(out, files, nfiles);
	bprintf(out, "static const RwSource files[] = {\n");
	for (int i = 0; i < nfiles; i++) {
		char *path = c_string(files[i]->path);
		bprintf(out, "\t{%s,\n", path);
		free(path);
		print_text(out, files[i]->src, files[i]->srclen);
		bprintf(out, "},\n");
	}
	bprintf(out, "\t{NULL, NULL},\n};\n\n");
	if (own)
		bprintf(out, "const RwSources graft_rules_%s_sources = {files, externs};\n", set);
	else
		bprintf(out, "static const RwSources sources = {files, externs};\n\n");
}

/* A generated file's first words: "Code generated by graftc from a, b and c" (in a comment). */
static void generated_from(Buf *out, RuleFile **files, int nfiles)
{
	bprintf(out, "/* Code generated by graftc from ");
	for (int i = 0; i < nfiles; i++)
		bprintf(out, "%s%s", i ? (i == nfiles - 1 ? " and " : ", ") : "", files[i]->path);
}

char *codegen_c(RuleFile **files, int nfiles, MRuleSet *rs, const char *set, const char *line_path, char **sources,
                Diag *d)
{
	if (sources)
		*sources = NULL;
	int errors = d->nerrors;
	/* [override] replaces a rule of the compiled library when graft loads a
	 * file at run time; a set graftc compiles has nothing to replace, and
	 * the library itself must not pretend to */
	for (int i = 0; i < nfiles; i++)
		for (int k = 0; files[i] && k < files[i]->nrules; k++)
			if (files[i]->rules[k] && files[i]->rules[k]->override)
				dsl_error(d, files[i], files[i]->rules[k]->override_pos,
				          "'override' is for rules loaded with graft optimize --rules, where they replace the "
				          "library rule of their name; graftc compiles rule sets, which replace nothing");
	if (d->nerrors != errors) {
		dsl_lower_free(rs);
		return NULL;
	}
	int n = 0;
	for (int i = 0; i < nfiles; i++)
		for (int k = 0; files[i] && k < files[i]->nrules; k++)
			if (files[i]->rules[k] && files[i]->rules[k]->lhs && files[i]->rules[k]->lhs->kind == PAT_OP)
				n++;

	Buf out = {0};
	generated_from(&out, files, nfiles);
	bprintf(&out, "; DO NOT EDIT.\n"
	              " *\n"
	              " * Rule set '%s': %d rule%s.  How the matcher is organised:\n"
	              " *   - rules[] describes each rule (level, source line, doc, opsets, root\n"
	              " *     op) for the engine and the audit; RULE_<name> indexes it;\n"
	              " *   - each rule is split into the tests a decision tree can share (the\n"
	              " *     op producing an operand, an int attribute's literal value, an\n"
	              " *     operand present, constant, or inputs absent) and the rest,\n"
	              " *     apply_<name>(): straight-line code in the order of its pattern\n"
	              " *     (root, then operands depth first), a commutative op's operands\n"
	              " *     as a loop over both orders; then single use, the guard, and the\n"
	              " *     result built between rw_begin and rw_commit;\n"
	              " *   - match_<Op>() is a trie of those tests over the rules rooted at\n"
	              " *     <Op> in the order they are tried (priority, then source order):\n"
	              " *     a rule shares the tests of the rule before it as far as they are\n"
	              " *     the same, and tests of the op of one operand that exclude each\n"
	              " *     other become one switch.  Each test runs once for all the rules\n"
	              " *     below it, and the first rule that fires ends the match, as if the\n"
	              " *     rules were tried in turn;\n"
	              " *   - match() switches on the node's op (vendor ops by name);\n"
	              "%s",
	        set, n, n == 1 ? "" : "s",
	        sources ? "" : " *   - sources[] holds the rules files verbatim: graft optimize --why\n"
	                       " *     and --match-each run them in the interpreter (rw_interp.h). */\n");
	if (sources)
		bprintf(&out, " *   - the rules files verbatim, which graft optimize --why and\n"
		              " *     --match-each run in the interpreter (rw_interp.h), are in\n"
		              " *     another file: graft_rules_%s_sources (graftc --sources). */\n",
		        set);
	bprintf(&out, "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n\n"
	              "#include \"runtime/engine/rewrite.h\"\n"
	              "#include \"runtime/engine/rw_gen.h\"\n"
	              "#include \"runtime/engine/rw_interp.h\"\n\n");
	bprintf(&out, "_Static_assert(GRAFT_BUILDER_API_VERSION == 2,\n"
	              "               \"generated for builder API 2: regenerate with this libgraft's graftc\");\n\n");

	/* externs (declared in the sources file too, whose adapters call them) */
	Buf decls = {0};
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
				bprintf(&decls, "%s%s %s(Rewriter *rw%s);\n", nx++ ? "" : "/* C helpers the rules call (extern) */\n",
				        rt, x->c_name ? x->c_name : x->name, ps.s ? ps.s : "");
			free(ps.s);
		}
	if (nx)
		bprintf(&decls, "\n");
	if (decls.s)
		bput(&out, decls.s, decls.n);

	/* the programs: from here on the rules are printed from them */
	if (!rs && d->nerrors == errors)
		rs = dsl_lower(files, nfiles, d);
	if (!rs || d->nerrors != errors) {
		dsl_lower_free(rs);
		free(out.s);
		return NULL;
	}

	/* the rule table */
	bprintf(&out, "enum {\n");
	for (int i = 0; i < rs->nrules; i++)
		bprintf(&out, "\tRULE_%s,\n", rs->rules[i].name);
	bprintf(&out, "\tRULE_COUNT\n};\n\n");
	bprintf(&out, "static const RwRule rules[RULE_COUNT + 1] = {\n");
	static const char *const levels[] = {"RW_LEVEL_BASIC", "RW_LEVEL_BASIC", "RW_LEVEL_EXTENDED", "RW_LEVEL_LAYOUT"};
	for (int i = 0; i < rs->nrules; i++) {
		const MRule *m = &rs->rules[i];
		char *path = c_string(m->file->path), *doc = c_string(m->rule->doc ? m->rule->doc : "");
		bprintf(&out, "\t[RULE_%s] = {.name = \"%s\", .level = %s, .file = %s, .line = %d,\n\t\t.doc = %s,\n"
		        "\t\t.priority = %d, .opset_min = %d, .opset_max = %d, .vendor = %s, .root_domain = \"%s\", "
		        ".root_op = \"%s\"},\n", m->name, m->name, levels[m->level], path, m->line, doc, m->rule->priority,
		        m->opset_min, m->opset_max, m->vendor ? "true" : "false", m->root_domain, m->root_op);
		free(path);
		free(doc);
	}
	bprintf(&out, "};\n\n");

	/* per root op: its leaves and its decision tree */
	const MTrees *trees = dsl_trees(rs);
	const MRule **refs = calloc((size_t)rs->nrules + 1, sizeof *refs);
	if (!refs)
		abort();
	for (int i = 0; i < rs->nrules; i++)
		refs[i] = &rs->rules[i];
	qsort(refs, (size_t)rs->nrules, sizeof *refs, by_root_then_priority);
	Buf dispatch = {0}, vendor = {0};
	for (int i = 0; i < rs->nrules;) {
		char *key = root_key(refs[i]);
		char *fn = c_ident(key);
		const MRule *r0 = refs[i];
		int j = i;
		while (j < rs->nrules) {
			char *k2 = root_key(refs[j]);
			bool same = !strcmp(k2, key);
			free(k2);
			if (!same)
				break;
			j++;
		}
		bprintf(&out, "/* ---- %s: %d rule%s ---- */\n\n", key, j - i, j - i == 1 ? "" : "s");
		for (int k = i; k < j; k++) {
			line_mark(&out, refs[k]->file->path, refs[k]->line, line_path);
			print_fn(rs, refs[k], &out);
			line_mark(&out, NULL, 0, line_path);
		}
		const MRoot *root = NULL;
		for (int t = 0; t < trees->nroots && !root; t++)
			if (!strcmp(trees->roots[t].domain, r0->root_domain) && !strcmp(trees->roots[t].op, r0->root_op))
				root = &trees->roots[t];
		emit_tree(rs, fn, root, &out);
		if (*r0->root_domain) {
			bprintf(&vendor, "\tif (!strcmp(node->domain, \"%s\") && !strcmp(node->op_type, \"%s\"))\n\t\treturn match_%s(rw, n);\n",
			        r0->root_domain, r0->root_op, fn);
		} else {
			bprintf(&dispatch, "\tcase OP_%s: return match_%s(rw, n);\n", r0->root_op, fn);
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

	/* the rules files and their C helpers, for --why and --match-each: here
	 * or in the sources file */
	Buf text = {0};
	print_sources(&text, files, nfiles, set, sources != NULL);
	if (sources) {
		Buf src = {0};
		generated_from(&src, files, nfiles);
		bprintf(&src, "; DO NOT EDIT.\n"
		              " *\n"
		              " * Rule set '%s', its rules files verbatim and an adapter per C helper they\n"
		              " * call: graft optimize --why and --match-each run them in the interpreter\n"
		              " * (rw_interp.h).  The matchers are in the other file graftc wrote. */\n"
		              "#include \"runtime/engine/rw_interp.h\"\n\n",
		        set);
		if (decls.s)
			bput(&src, decls.s, decls.n);
		bput(&src, text.s, text.n);
		*sources = src.s;
		bprintf(&out, "extern const RwSources graft_rules_%s_sources;\n\n", set);
	} else {
		bput(&out, text.s, text.n);
	}
	free(text.s);
	free(decls.s);
	char *text_name = sources ? fmt("graft_rules_%s_sources", set) : fmt("sources");
	bprintf(&out, "/* The interpreter runs the set's rules one at a time (--why, --match-each,\n"
	              " * [override]) in a program that links it, as any program that loads rules\n"
	              " * files does: a weak reference, so that an optimizer running compiled sets\n"
	              " * only links no rule-language front end (the set has no back end there). */\n"
	              "extern const RwBackEnd rw_interpreter __attribute__((weak));\n\n");
	bprintf(&out, "const RwRuleSet graft_rules_%s = {\"graft-%s\", GRAFT_BUILDER_API_VERSION, rules, RULE_COUNT,\n"
	              "                                 match, NULL, &%s, NULL, &rw_interpreter};\n",
	        set, set, text_name);
	free(text_name);
	free(dispatch.s);
	free(vendor.s);
	free(refs);
	dsl_lower_free(rs);
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
	Diag d;
	diag_init(&d, stderr);
	return out_write_file(path, text, len, &d);
}
