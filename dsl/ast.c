/* ast.c - what every pass over the rule syntax tree shares: reading and
 * freeing a file, diagnostics at a source position (GCC's format, with the
 * source line and a caret, through ir/diag.h), and the names of types and
 * levels. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ast.h"
#include "ir/ir.h"

void dsl_free(RuleFile *f)
{
	if (f)
		arena_free(f->arena);   /* f itself lives in its arena */
}

static void report(Diag *d, DiagLevel level, const RuleFile *f, SrcPos pos, const char *fmt, va_list ap)
{
	char msg[700];
	vsnprintf(msg, sizeof msg, fmt, ap);
	diag_at_offset(d, level, f ? f->path : "<input>", pos.line, pos.col, pos.len > 0 ? pos.len : 1,
	               f ? f->src : NULL, f ? f->srclen : 0, pos.offset, "%s", msg);
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

char dsl_type_letter(DslType t)
{
	switch (t) {
	case TY_BOOL: return 'b';
	case TY_INT: return 'i';
	case TY_FLOAT: return 'f';
	case TY_DTYPE: return 'd';
	case TY_STRING: return 's';
	case TY_INTS: return 'I';
	case TY_FLOATS: return 'F';
	case TY_VALUE: return 'v';
	case TY_TENSOR: return 't';
	default: return '?';
	}
}

/* The levels' names: the one table the rules files, --level, --enable and
 * --disable, the audit and the report read. */
static const char *const level_names[] = {
	[LEVEL_NONE] = "none", [LEVEL_BASIC] = "basic", [LEVEL_EXTENDED] = "extended", [LEVEL_LAYOUT] = "layout",
};

const char *dsl_level_name(Level l)
{
	return l >= LEVEL_NONE && l <= LEVEL_LAYOUT ? level_names[l] : "?";
}

Level dsl_level_parse(const char *name, size_t len)
{
	for (Level l = LEVEL_BASIC; l <= LEVEL_LAYOUT; l++)
		if (strlen(level_names[l]) == len && strncmp(name, level_names[l], len) == 0)
			return l;
	return LEVEL_NONE;
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

char *dsl_read_file(const char *path, uint32_t *len, int *err)
{
	FILE *fp = stdin;
	size_t cap = 1 << 14;
	if (strcmp(path, "-") != 0) {
		/* a regular file, whose size says at once whether it is too large */
		struct stat st;
		int fd = ir_open_regular(path, &st, err);
		if (fd < 0) {
			if (*err == IR_OPEN_NOT_REGULAR)
				*err = DSL_READ_NOT_REGULAR;
			return NULL;
		}
		if ((uint64_t)st.st_size > DSL_MAX_FILE) {
			close(fd);
			*err = DSL_READ_TOO_LARGE;
			return NULL;
		}
		if ((size_t)st.st_size >= cap)
			cap = (size_t)st.st_size + 1;
		if (!(fp = fdopen(fd, "rb"))) {
			*err = errno;
			close(fd);
			return NULL;
		}
	}
	size_t n = 0;
	char *buf = malloc(cap);
	if (!buf)
		abort();
	for (;;) {
		if (n == cap) {
			/* standard input, or a file that grew while read: a byte
			 * past the limit is enough to refuse it */
			if (n > DSL_MAX_FILE) {
				*err = DSL_READ_TOO_LARGE;
				free(buf);
				if (fp != stdin)
					fclose(fp);
				return NULL;
			}
			cap = cap * 2 < DSL_MAX_FILE + 1 ? cap * 2 : DSL_MAX_FILE + 1;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got == 0)
			break;
	}
	bool bad = ferror(fp);
	if (fp != stdin)
		fclose(fp);
	if (bad || n > DSL_MAX_FILE) {
		*err = bad ? DSL_READ_FAILED : DSL_READ_TOO_LARGE;
		free(buf);
		return NULL;
	}
	*len = (uint32_t)n;
	return buf;
}

const char *dsl_read_strerror(int err, char *buf, size_t size)
{
	switch (err) {
	case DSL_READ_TOO_LARGE: return "too large (over 64 MiB)";
	case DSL_READ_FAILED: return "cannot read";
	case DSL_READ_NOT_REGULAR: return "not a regular file";
	default:
		snprintf(buf, size, "cannot open: %s", strerror(err));
		return buf;
	}
}
