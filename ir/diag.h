/* diag.h - the diagnostics sink shared by every part of graft.
 *
 * Library code never prints or exits: it reports to a Diag and returns a
 * status.  One format everywhere, GCC's, so editors can jump to it:
 *     file:line:col: error: message          (source text: rules, text graphs)
 *     model.onnx: node 'Conv_17': message    (models: file, then node/tensor)
 * Source diagnostics are followed by the source line and a caret.  The sink
 * prints to `out` (if set) and keeps the first and last error for tests. */
#ifndef GRAFT_DIAG_H
#define GRAFT_DIAG_H

#include <stdio.h>

typedef enum DiagLevel { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct Diag {
	FILE *out;          /* where messages are printed; NULL: only recorded */
	int nerrors;
	int nwarnings;
	int max_errors;     /* stop recording/printing errors after this many (0: 100) */
	char first[1024];   /* first error, without the trailing newline */
	char last[1024];    /* most recent message of any level */
} Diag;

void diag_init(Diag *d, FILE *out);
/* A one-line message: "<where>: <message>", where is a file name (or NULL). */
void diag_error(Diag *d, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A message about source text: "file:line:col: error: msg", then the line
 * (taken from src, which need not be NUL-terminated at the line's end) and a
 * caret of `width` columns under the spot.  src may be NULL. */
void diag_at(Diag *d, DiagLevel level, const char *file, int line, int col, int width,
             const char *src, size_t srclen, const char *fmt, ...)
	__attribute__((format(printf, 9, 10)));
/* The same for a spot known by its byte offset in src too (line and col
 * still label it): the line is found from there, not from src's start, so
 * many messages about a large file cost no more than the lines they show. */
void diag_at_offset(Diag *d, DiagLevel level, const char *file, int line, int col, int width,
                    const char *src, size_t srclen, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 10, 11)));

#endif
