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

/* Print the source line that starts at ls (rest bytes to the end of the
 * source) with a caret of `width` columns under col, in one write.  A long
 * line (generated rules: thousands of operands) is shown as a window of
 * LINE_WINDOW bytes around col, so n messages on it cost n windows, not n
 * times the line. */
enum { LINE_WINDOW = 160, LINE_LONG = 240 };

static void show_line(Diag *d, int line, int col, int width, const char *ls, size_t rest)
{
	size_t end = 0;
	while (end < rest && ls[end] != '\n' && ls[end] != '\r')
		end++;
	size_t from = 0, to = end, c0 = col > 0 ? (size_t)col - 1 : 0;
	if (end > LINE_LONG) {
		from = c0 > LINE_WINDOW / 2 ? c0 - LINE_WINDOW / 2 : 0;
		to = from + LINE_WINDOW < end ? from + LINE_WINDOW : end;
	}
	const char *pre = from ? "..." : "", *post = to < end ? "..." : "";
	if (c0 > to)
		c0 = to;
	if (width > LINE_WINDOW)
		width = LINE_WINDOW;
	char caret[LINE_LONG + LINE_WINDOW + 8];
	size_t n = 0;
	for (size_t k = 0; k < strlen(pre); k++)
		caret[n++] = ' ';
	for (size_t c = from; c < c0 && n < sizeof caret - LINE_WINDOW - 2; c++)
		caret[n++] = ls[c] == '\t' ? '\t' : ' ';
	caret[n++] = '^';
	for (int w = 1; w < width; w++)
		caret[n++] = '~';
	caret[n] = 0;
	fprintf(d->out, "%5d | %s%.*s%s\n      | %s\n", line, pre, (int)(to - from), ls + from, post, caret);
}

static void vdiag_at(Diag *d, DiagLevel level, const char *file, int line, int col, int width,
                     const char *src, size_t srclen, size_t line_start, const char *fmt, va_list ap)
{
	char body[700], msg[1024];
	vsnprintf(body, sizeof body, fmt, ap);
	snprintf(msg, sizeof msg, "%s:%d:%d: %s: %s", file, line, col, level_name(level), body);
	int limit = d->max_errors ? d->max_errors : 100;
	int shown = level != DIAG_ERROR || d->nerrors < limit;
	record(d, level, msg);
	if (!d->out || !shown || !src)
		return;
	if (line_start == (size_t)-1) {
		/* find the line from the source's start */
		line_start = 0;
		for (int l = 1; l < line && line_start < srclen; line_start++)
			if (src[line_start] == '\n')
				l++;
	}
	show_line(d, line, col, width, src + line_start, srclen - line_start);
}

void diag_at(Diag *d, DiagLevel level, const char *file, int line, int col, int width,
             const char *src, size_t srclen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdiag_at(d, level, file, line, col, width, src, srclen, (size_t)-1, fmt, ap);
	va_end(ap);
}

void diag_at_offset(Diag *d, DiagLevel level, const char *file, int line, int col, int width,
                    const char *src, size_t srclen, size_t offset, const char *fmt, ...)
{
	/* the line's start is the byte after the last newline before offset:
	 * a walk over one line, not over the file before it */
	size_t ls = (size_t)-1;
	if (src && offset <= srclen && (offset > 0 || line == 1)) {
		ls = offset;
		while (ls > 0 && src[ls - 1] != '\n')
			ls--;
	}
	va_list ap;
	va_start(ap, fmt);
	vdiag_at(d, level, file, line, col, width, src, srclen, ls, fmt, ap);
	va_end(ap);
}
