/* dump.c - the syntax tree as indented text (graftc --dump-ast).
 *
 * One line per node, two spaces per level, each with its source position
 * as @line:col.  What the checker fills in (types, schemas, bindings, the
 * minimum opset a rule's result needs) is shown when it is there, so the
 * same dump serves before and after checking.  The output depends only on
 * the tree, never on addresses, so tests keep golden copies of it
 * (tests/data/dsl/NAME.ast). */
#include <stdlib.h>
#include <string.h>

#include "ast.h"

static void indent(FILE *out, int depth)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", out);
}

/* dsl_lhs_text leaves the positions out (only there: nothing runs two dumps at once) */
static bool hide_pos;

static void at(FILE *out, SrcPos pos)
{
	if (!hide_pos)
		fprintf(out, " @%d:%d", pos.line, pos.col);
}

/* Shortest text that reads back as the same double. */
static void put_double(FILE *out, double v)
{
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* keep floats recognizable: 2 -> 2.0 */
	if (!strpbrk(buf, ".eEn"))
		strcat(buf, ".0");
	fputs(buf, out);
}

static void put_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u{%x}", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static const char *op_text(ExprOp op)
{
	static const char *const names[] = {
		[EX_NONE] = "?", [EX_NEG] = "-", [EX_NOT] = "!", [EX_ADD] = "+", [EX_SUB] = "-",
		[EX_MUL] = "*", [EX_DIV] = "/", [EX_CONCAT] = "++", [EX_EQ] = "==", [EX_NE] = "!=",
		[EX_LT] = "<", [EX_LE] = "<=", [EX_GT] = ">", [EX_GE] = ">=", [EX_AND] = "&&", [EX_OR] = "||",
	};
	return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static void put_opname(FILE *out, const char *domain, const char *name)
{
	if (domain && domain[0])
		fprintf(out, "%s.", domain);
	fputs(name ? name : "?", out);
}

static void put_schema(FILE *out, const OpSchema *s)
{
	if (!s)
		return;
	fprintf(out, " (schema ");
	put_opname(out, s->domain, s->name);
	fprintf(out, "-%d)", s->since_version);
}

static void dump_expr(FILE *out, const Expr *e, int depth);

static void dump_attrs(FILE *out, const AttrArg *attrs, int n, int depth)
{
	for (int i = 0; i < n; i++) {
		indent(out, depth);
		fprintf(out, "attr %s", attrs[i].name);
		at(out, attrs[i].pos);
		fputc('\n', out);
		dump_expr(out, attrs[i].value, depth + 1);
	}
}

static void dump_expr(FILE *out, const Expr *e, int depth)
{
	indent(out, depth);
	if (!e) {
		fputs("(none)\n", out);
		return;
	}
	switch (e->kind) {
	case EXPR_INT:
		fprintf(out, "int %lld", (long long)e->i);
		break;
	case EXPR_FLOAT:
		fputs("float ", out);
		put_double(out, e->f);
		if (e->tol > 0) {
			fputs(" ~ ", out);
			put_double(out, e->tol);
		}
		break;
	case EXPR_BOOL:
		fputs(e->i ? "bool true" : "bool false", out);
		break;
	case EXPR_STRING:
		fputs("string ", out);
		put_string(out, e->s);
		break;
	case EXPR_LIST:
		fprintf(out, "list of %d", e->n);
		break;
	case EXPR_VAR:
		fprintf(out, "var %s", e->s);
		break;
	case EXPR_CALL:
		fprintf(out, "call %s", e->s);
		break;
	case EXPR_OP:
		fputs("op ", out);
		put_opname(out, e->domain, e->s);
		if (e->copy_attrs) {
			fprintf(out, " [..%s", e->copy_attrs);
			at(out, e->copy_pos);
			fputc(']', out);
		}
		break;
	case EXPR_UNARY:
		fprintf(out, "unary '%s'", op_text(e->op));
		break;
	case EXPR_BINARY:
		fprintf(out, "binary '%s'", op_text(e->op));
		break;
	case EXPR_INDEX:
		fputs("index", out);
		break;
	case EXPR_DEFAULT:
		fputs("default '?\?'", out);
		break;
	case EXPR_TUPLE:
		fprintf(out, "tuple of %d", e->n);
		break;
	case EXPR_QUANT:
		fprintf(out, "%s %s in", e->op == EX_OR ? "any" : "all", e->s);
		break;
	}
	at(out, e->pos);
	if (e->type != TY_UNKNOWN)
		fprintf(out, " : %s", dsl_type_name(e->type));
	if (e->kind == EXPR_OP)
		put_schema(out, e->schema);
	fputc('\n', out);
	if (e->kind == EXPR_OP)
		dump_attrs(out, e->attrs, e->nattrs, depth + 1);
	for (int i = 0; i < e->n; i++)
		dump_expr(out, e->items[i], depth + 1);
}

static void dump_pattern(FILE *out, const Pattern *p, int depth)
{
	indent(out, depth);
	if (!p) {
		fputs("(none)\n", out);
		return;
	}
	switch (p->kind) {
	case PAT_OP:
		fputs("op ", out);
		put_opname(out, p->domain, p->name);
		if (p->has_output)
			fprintf(out, " #%d", p->output);
		at(out, p->pos);
		if (p->shared)
			fputs(" shared", out);
		if (p->bind) {
			fprintf(out, " bind %s", p->bind);
			at(out, p->bind_pos);
		}
		put_schema(out, p->schema);
		fputc('\n', out);
		dump_attrs(out, p->attrs, p->nattrs, depth + 1);
		for (int i = 0; i < p->nargs; i++)
			dump_pattern(out, p->args[i], depth + 1);
		return;
	case PAT_VAR:
		fprintf(out, "var %s", p->name);
		if (p->has_output)
			fprintf(out, " #%d", p->output);
		if (p->is_const)
			fputs(" :const", out);
		if (p->optional)
			fputs(" ?", out);
		break;
	case PAT_WILDCARD:
		fputs(p->optional ? "any _?" : "any _", out);
		break;
	case PAT_REST:
		fprintf(out, "rest %s...", p->name);
		break;
	case PAT_LITERAL:
		fputs("literal", out);
		break;
	}
	for (int i = 0; i < p->nnots; i++) {
		fputs(" not ", out);
		put_opname(out, p->nots[i].domain, p->nots[i].name);
	}
	at(out, p->pos);
	fputc('\n', out);
	if (p->kind == PAT_LITERAL)
		dump_expr(out, p->lit, depth + 1);
}

static void dump_rule(FILE *out, const RuleFile *f, const Rule *r)
{
	fprintf(out, "rule %s", r->name);
	at(out, r->pos);
	fputc('\n', out);
	if (r->doc) {
		fputs("  doc ", out);
		put_string(out, r->doc);
		fputc('\n', out);
	}
	if (r->level != LEVEL_NONE) {
		fprintf(out, "  level %s", dsl_level_name(r->level));
		at(out, r->level_pos);
		fputc('\n', out);
	} else {
		fprintf(out, "  level %s (file)\n", dsl_level_name(f->default_level));
	}
	fputs("  opset ", out);
	if (r->opset_min == 0 && r->opset_max == INT32_MAX)
		fputs("any", out);
	else if (r->opset_max == INT32_MAX)
		fprintf(out, "%d..", r->opset_min);
	else if (r->opset_min == 0)
		fprintf(out, "..%d", r->opset_max);
	else
		fprintf(out, "%d..%d", r->opset_min, r->opset_max);
	fputc('\n', out);
	if (r->has_priority)
		fprintf(out, "  priority %d\n", r->priority);
	if (r->tolerance > 0)
		fprintf(out, "  tolerance %g\n", r->tolerance);
	if (r->finite_data)
		fprintf(out, "  finite_data\n");
	if (r->override)
		fprintf(out, "  override\n");
	if (r->moderate_data)
		fprintf(out, "  moderate_data\n");
	if (r->nonneg_indices)
		fprintf(out, "  nonnegative_indices\n");
	if (r->min_opset_needed > 0)
		fprintf(out, "  result needs opset %d\n", r->min_opset_needed);
	fputs("  match\n", out);
	dump_pattern(out, r->lhs, 2);
	if (r->guard) {
		fputs("  guard\n", out);
		dump_expr(out, r->guard, 2);
	}
	if (r->has_arrow) {
		if (r->rhs_bind)
			fprintf(out, "  result %s @\n", r->rhs_bind);
		else
			fputs("  result\n", out);
		dump_expr(out, r->rhs, 2);
		for (int i = 0; i < r->nalso; i++)
			fprintf(out, "  also %s => %s#%d\n", r->also[i].name, r->also[i].node, r->also[i].output);
	} else {
		fputs("  result missing (no '=>')\n", out);
	}
	if (r->nbindings > 0) {
		fputs("  bindings\n", out);
		for (int i = 0; i < r->nbindings; i++) {
			const Binding *b = &r->bindings[i];
			fprintf(out, "    %s : %s", b->name, dsl_type_name(b->type));
			if (b->is_const)
				fputs(" const", out);
			if (b->optional)
				fputs(" optional", out);
			at(out, b->pos);
			fprintf(out, " uses %d\n", b->uses);
		}
	}
}

void dsl_dump(const RuleFile *f, FILE *out)
{
	fprintf(out, "file %s\n", f->path);
	fprintf(out, "level %s\n", dsl_level_name(f->default_level));
	for (int i = 0; i < f->nexterns; i++) {
		const Extern *x = f->externs[i];
		fprintf(out, "extern %s %s(", dsl_type_name(x->ret), x->name);
		for (int k = 0; k < x->nparams; k++)
			fprintf(out, "%s%s", k ? ", " : "", dsl_type_name(x->params[k]));
		fprintf(out, ") = %s", x->c_name);
		at(out, x->pos);
		fputc('\n', out);
	}
	for (int i = 0; i < f->nrules; i++) {
		fputc('\n', out);
		dump_rule(out, f, f->rules[i]);
	}
}

char *dsl_lhs_text(const Rule *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		return NULL;
	hide_pos = true;
	dump_pattern(out, r->lhs, 0);
	if (r->guard) {
		fputs("guard\n", out);
		dump_expr(out, r->guard, 0);
	}
	hide_pos = false;
	if (fclose(out) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
