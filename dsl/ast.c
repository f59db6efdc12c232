/* ast.c - what every pass over the rule syntax tree shares: freeing a file,
 * diagnostics at a source position (GCC's format, with the source line and
 * a caret, through ir/diag.h), and the names of types and levels. */
#include <stdarg.h>

#include "ast.h"

void dsl_free(RuleFile *f)
{
	if (f)
		arena_free(f->arena);   /* f itself lives in its arena */
}

static void report(Diag *d, DiagLevel level, const RuleFile *f, SrcPos pos, const char *fmt, va_list ap)
{
	char msg[700];
	vsnprintf(msg, sizeof msg, fmt, ap);
	diag_at(d, level, f ? f->path : "<input>", pos.line, pos.col, pos.len > 0 ? pos.len : 1,
	        f ? f->src : NULL, f ? f->srclen : 0, "%s", msg);
}

void dsl_error(Diag *d, const RuleFile *f, SrcPos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(d, DIAG_ERROR, f, pos, fmt, ap);
	va_end(ap);
}

void dsl_warning(Diag *d, const RuleFile *f, SrcPos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(d, DIAG_WARNING, f, pos, fmt, ap);
	va_end(ap);
}

void dsl_note(Diag *d, const RuleFile *f, SrcPos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(d, DIAG_NOTE, f, pos, fmt, ap);
	va_end(ap);
}

const char *dsl_type_name(DslType t)
{
	switch (t) {
	case TY_UNKNOWN: return "unknown";
	case TY_INT: return "int";
	case TY_FLOAT: return "float";
	case TY_BOOL: return "bool";
	case TY_STRING: return "string";
	case TY_INTS: return "ints";
	case TY_FLOATS: return "floats";
	case TY_STRINGS: return "strings";
	case TY_DTYPE: return "dtype";
	case TY_VALUE: return "value";
	case TY_TENSOR: return "tensor";
	case TY_GRAPH: return "graph";
	case TY_NODE: return "node";
	case TY_VALUES: return "values";
	}
	return "?";
}

const char *dsl_level_name(Level l)
{
	switch (l) {
	case LEVEL_NONE: return "none";
	case LEVEL_BASIC: return "basic";
	case LEVEL_EXTENDED: return "extended";
	case LEVEL_LAYOUT: return "layout";
	}
	return "?";
}

bool dsl_expr_emits_vendor(const Expr *e)
{
	if (!e)
		return false;
	if (e->kind == EXPR_OP && e->domain && *e->domain)
		return true;
	for (int i = 0; i < e->n; i++)
		if (dsl_expr_emits_vendor(e->items[i]))
			return true;
	for (int i = 0; i < e->nattrs; i++)
		if (dsl_expr_emits_vendor(e->attrs[i].value))
			return true;
	return false;
}
