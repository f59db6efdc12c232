/* testutil.h - helpers shared by the Check suites: finding the conformance
 * and corpus models, reading files, loading models with errors captured. */
#ifndef GRAFT_TESTUTIL_H
#define GRAFT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

#define ONNX_TESTDATA "/usr/include/onnx/backend/test/data"
#define CORPUS_DIR "../shared/corpus"

/* Paths of every *.onnx under dir (following symlinks), sorted; NULL-terminated.
 * Free with paths_free.  *count gets the number (0 if dir is missing). */
char **find_models(const char *dir, size_t *count);
/* The same for any file name suffix (".txt"). */
char **find_files(const char *dir, const char *suffix, size_t *count);
void paths_free(char **paths);
/* Whole file into memory, NUL-terminated (the NUL not counted in *len; the
 * caller frees), or NULL. */
uint8_t *read_file(const char *path, size_t *len);
bool write_file(const char *path, const void *data, size_t len);
/* Fails the calling test unless files a and b hold the same bytes. */
void assert_same_file(const char *a, const char *b);
/* The graft binary the CLI tests run (env GRAFT, which make test sets), or
 * NULL after a note on stderr that the calling test is skipped. */
const char *cli_graft(void);
/* GRAFT_SKIP_HEAVY is set (not "0"): skip whole-model runs (make valgrind). */
bool heavy_skipped(void);
/* The corpus directory if it exists (env GRAFT_CORPUS overrides), else NULL. */
const char *corpus_dir(void);
/* A fresh temporary directory (removed by the caller with rm_rf). */
char *temp_dir(void);
void rm_rf(const char *path);
/* A model from ONNX's textual syntax, named "t.onnx" in messages; a parse
 * error fails the calling test with the parser's message. */
IrModel *parse_text_model(const char *text);
/* printf into a new string (the caller frees); fails the calling test if
 * it cannot. */
char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
/* Runs `sh -c cmd` with stdout and stderr into *out (malloc'd); the exit
 * status, or -2 if the command was killed. */
int run_shell(const char *cmd, char **out);
/* Load, expecting failure: returns the first error message (static buffer). */
const char *load_error(const char *path);

/* ---- comparing models (check_text.c) ---------------------------------------
 * Structural equality of two IRs, independent of ids: ir_version, opsets,
 * and the main graphs recursively (graph names; inputs and outputs by name,
 * dtype and shape; initializers by name, dtype, dims and bytes; nodes in
 * order by op, domain, name, input and output names, the types of their
 * outputs, and attributes by value, bodies included).  Floats compare by
 * bits.  Returns NULL if equal, else the first difference (static buffer). */
const char *model_diff(IrModel *a, IrModel *b);

#endif
