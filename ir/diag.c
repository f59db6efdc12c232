/* diag.c - the diagnostics sink (see diag.h). */
#include "diag.h"

#include <stdarg.h>
#include <string.h>

void diag_init(Diag *d, FILE *out)
{
	memset(d, 0, sizeof *d);
	d->out = out;
}

static void record(Diag *d, DiagLevel level, const char *msg)
{
	int limit = d->max_errors ? d->max_errors : 100;
	if (level == DIAG_ERROR) {
		if (d->nerrors++ >= limit)
			return;
		if (d->nerrors == 1)
			snprintf(d->first, sizeof d->first, "%s", msg);
	} else if (level == DIAG_WARNING) {
		d->nwarnings++;
	}
	snprintf(d->last, sizeof d->last, "%s", msg);
	if (d->out)
		fprintf(d->out, "%s\n", msg);
}

static void vline(Diag *d, DiagLevel level, const char *where, const char *fmt, va_list ap)
{
	char body[900], msg[1024];
	vsnprintf(body, sizeof body, fmt, ap);
	if (where)
		snprintf(msg, sizeof msg, "%s: %s", where, body);
	else
		snprintf(msg, sizeof msg, "%s", body);
	record(d, level, msg);
}

void diag_error(Diag *d, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(d, DIAG_ERROR, where, fmt, ap);
	va_end(ap);
}

void diag_warning(Diag *d, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(d, DIAG_WARNING, where, fmt, ap);
	va_end(ap);
}

static const char *level_name(DiagLevel l)
{
	return l == DIAG_ERROR ? "error" : l == DIAG_WARNING ? "warning" : "note";
}

void diag_at(Diag *d, DiagLevel level, const char *file, int line, int col, int width,
             const char *src, size_t srclen, const char *fmt, ...)
{
	char body[700], msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof msg, "%s:%d:%d: %s: %s", file, line, col, level_name(level), body);
	int limit = d->max_errors ? d->max_errors : 100;
	int shown = level != DIAG_ERROR || d->nerrors < limit;
	record(d, level, msg);
	if (!d->out || !shown || !src)
		return;
	/* Find the line in the source and print it with a caret under col. */
	size_t i = 0;
	for (int l = 1; l < line && i < srclen; i++)
		if (src[i] == '\n')
			l++;
	size_t end = i;
	while (end < srclen && src[end] != '\n' && src[end] != '\r')
		end++;
	fprintf(d->out, "%5d | %.*s\n      | ", line, (int)(end - i), src + i);
	for (int c = 1; c < col; c++)
		fputc(i + c - 1 < end && src[i + c - 1] == '\t' ? '\t' : ' ', d->out);
	fputc('^', d->out);
	for (int w = 1; w < width; w++)
		fputc('~', d->out);
	fputc('\n', d->out);
}
