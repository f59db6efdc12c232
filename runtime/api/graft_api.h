/* graft_api.h - graft's jobs as library calls: what `graft optimize`,
 * `convert`, `run`, `compare` and `verify` do, shared by the command line
 * (runtime/cli/graft.c) and the Python module (python/graft/, over
 * libgraft.so with ctypes).  See graft_api.c.
 *
 * Two layers.  The first is for C callers that hold an IrModel and want the
 * command's work done step by step, printing what the command prints to a
 * FILE (stderr for the CLI).  The second ("the flat API", graft_optimize and
 * its siblings) takes paths or bytes and plain options, and hands back a
 * GraftResult: status, the one-line error the CLI would print, the text the
 * CLI would print on stderr, the model's bytes and the job's results as
 * JSON.  Nothing in it prints; it is what bindings call. */
#ifndef GRAFT_API_H
#define GRAFT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "runtime/engine/audit.h"
#include "runtime/eval/eval.h"
#include "ir/ir.h"
#include "ir/outfile.h"
#include "runtime/engine/rewrite.h"
#include "runtime/eval/run.h"
#include "runtime/verify/verify.h"

/* The status of a job: the graft command's exit codes. */
enum {
	GRAFT_OK = 0,
	GRAFT_INPUT = 1,    /* bad or unreadable input, a failed save, outputs that differ, a rule not verified */
	GRAFT_USAGE = 2,    /* bad options (the CLI: bad command line) */
	GRAFT_STOPPED = 3,  /* optimize stopped by fuel or a rewrite cycle (a valid model was still saved) */
};

/* ---- the C layer -------------------------------------------------------------- */

/* The compiled rule library (rules/basic, rules/extended). */
extern const RwRuleSet *const graft_library[];
extern const int graft_nlibrary;

/* A model file (".onnxtxt": ONNX's textual syntax); its files are noted in
 * files (may be NULL) as the run's inputs. */
IrModel *graft_load(const char *path, FileSet *files, Diag *d);
/* Save m to path as graft does: refused when a node graft made does not fit
 * its schema; ".onnxtxt" as text; a note on log when the weights go to
 * external data nobody asked for. */
bool graft_save(IrModel *m, const char *path, const SaveOptions *so, FILE *log, Diag *d);
/* Claim OUT (and the data file beside it when the save writes one) in files. */
bool graft_claim_model_output(FileSet *files, IrModel *m, const char *out, const SaveOptions *so, Diag *d);
/* Convert m to opset target, saying what was done on log. */
bool graft_convert_and_say(IrModel *m, int target, FILE *log, Diag *d);

/* The rule sets of a run: --rules files (interpreted), then the library. */
typedef struct GraftRules {
	RwRuleSet *loaded;
	const RwRuleSet *sets[4];
	int nsets;
} GraftRules;
bool graft_rules_open(GraftRules *r, const char *const *files, int nfiles, bool no_library, FILE *log, Diag *d);
void graft_rules_close(GraftRules *r);
/* "basic", "extended", "layout" -> its RwOptions.levels bit; "all" -> 0; else -1. */
long graft_level_bit(const char *name);
#define GRAFT_LEVEL_ERROR "--level expects basic, extended, layout or all, got '%s'"
/* Every --enable and --disable name names a rule, a rule file or a level;
 * else an error on d (and the usage hint on log). */
bool graft_check_rule_names(const RwRuleSet *const *sets, int nsets, const RwOptions *o, FILE *log, Diag *d);

/* graft optimize, once the model is loaded and its outputs claimed: convert
 * (target_opset), run the engine, save, print the summary on log. */
typedef struct GraftOptimize {
	RwOptions rw;
	SaveOptions save;
	int target_opset;                   /* 0: the model's opset never changes */
	const RwRuleSet *const *sets;
	int nsets;
	const char *input;                  /* the input's path, or its name when data is set */
	const void *data;                   /* the input's bytes when it came from memory */
	size_t size;
	const char *output;                 /* where to save; NULL: into out_data */
	bool memory_plan;                   /* the memory plan's figures before and after (the audit's) */
	FILE *log;                          /* what graft optimize prints on stderr */
	/* called as each stage starts ("converting", "rewriting", "saving" with
	 * the output's path) and with NULL before the summary; may be NULL */
	void (*stage)(const char *stage, const char *what);
	/* results */
	AuditHist before, after;
	RwResult r;
	uint8_t *out_data;                  /* output NULL: the optimized model's bytes (malloc'd) */
	size_t out_size;
} GraftOptimize;
/* GRAFT_OK, GRAFT_INPUT (message in d) or GRAFT_STOPPED. */
int graft_optimize_model(GraftOptimize *job, IrModel *m, Diag *d);
void graft_optimize_free(GraftOptimize *job);

/* graft compare: run a and b on the same inputs (RunOptions: --inputs, --seed,
 * --dim, --int-range); what the CLI prints on stdout goes to out, errors on d. */
typedef struct GraftCompareOptions {
	RunOptions ro;
	double rtol, atol;      /* default 1e-3, 1e-4 */
	bool exact;
	int runs;               /* 0: 1, 2 when the inputs have symbolic dims */
} GraftCompareOptions;
typedef struct GraftCompare {
	int runs;               /* runs made */
	uint32_t noutputs;
	const char **names;     /* per output of a (pointing into ma) */
	RunDiff *worst;         /* per output, over the runs */
	bool agree;
} GraftCompare;
/* GRAFT_OK (agree), GRAFT_INPUT (differ, or an error: c->worst NULL). */
int graft_compare_models(IrModel *ma, IrModel *mb, const char *name_a, const char *name_b,
                         const GraftCompareOptions *o, FILE *out, GraftCompare *c, Diag *d);
void graft_compare_free(GraftCompare *c);

/* graft verify FILE.rules...: the report on o->out; GRAFT_OK only if every
 * rule is verified (strict: with full coverage too). */
int graft_verify_files(const char *const *files, int nfiles, const VerifyOptions *o, bool no_library, bool strict,
                       Diag *d);

/* ---- the flat API --------------------------------------------------------------
 * A model is given as path, or as data/size (its bytes; path then names it
 * in messages and may be NULL).  Each call returns a GraftResult (never
 * NULL but when memory runs out) for graft_result_* to read and
 * graft_result_free to free.  One call at a time: parts of the library
 * keep process-wide state (the memory planner's sort order, tables built
 * on first use, the outputs being written), so callers in several threads
 * serialize their calls (the Python module holds a lock); reading and
 * freeing results needs no lock.  The evaluator's memory limit is per
 * thread (ev_set_memory_limit); unset, there is none. */
typedef struct GraftResult GraftResult;

typedef struct GraftOptions {
	const char *const *levels;          /* basic, extended, layout, all; none: all */
	int nlevels;
	const char *const *enable;          /* rules, rule files or levels */
	int nenable;
	const char *const *disable;
	int ndisable;
	const char *const *rules;           /* .rules files, interpreted, tried before the library */
	int nrules;
	int no_library;
	int allow_vendor_ops;
	int target_opset;                   /* 0: keep the model's */
	int external_data;                  /* with an output path: tensors of external_data_threshold
	                                       bytes or more (0: 1024) into OUT.data */
	size_t external_data_threshold;
} GraftOptions;

/* graft optimize MODEL -o OUT --report: out_path NULL gives the model's
 * bytes (graft_result_model).  The JSON (graft_result_json) is
 * {"nodes_before": N, "nodes_after": N, "rewrites": N, "stop": "fixpoint",
 *  "fired": {"rule": count, ...}}, the audit is graft_result_report. */
GraftResult *graft_optimize(const char *path, const void *data, size_t size, const char *out_path,
                            const GraftOptions *o);
/* graft convert MODEL --opset N. */
GraftResult *graft_convert(const char *path, const void *data, size_t size, const char *out_path, int opset);
/* graft compare A B --runs N [--exact] [--dim NAME=V...]: the JSON is
 * {"agree": true, "runs": N, "outputs": [{"name", "max_abs", "max_rel", "agree",
 *  "same_type", "same_shape", "mismatches"}]}; status GRAFT_INPUT when they differ. */
GraftResult *graft_compare(const char *path_a, const void *data_a, size_t size_a, const char *path_b,
                           const void *data_b, size_t size_b, int runs, int exact, const char *const *dim_names,
                           const int64_t *dim_values, int ndims);
/* Run the model on the reference evaluator.  Input k (the fed input named
 * names[k], or the k-th when names or names[k] is NULL) has element type
 * dtypes[k] (the ONNX TensorProto code; not strings), ranks[k] dims taken
 * from dims (every input's dims one after the other) and its elements at
 * tensors[k], dense and row-major; each is checked against the model's
 * declared type.  Inputs not given are generated as graft run does.  The
 * outputs: graft_result_ntensors and graft_result_tensor. */
GraftResult *graft_run(const char *path, const void *data, size_t size, int ninputs, const char *const *names,
                       const int *dtypes, const int *ranks, const int64_t *dims, const void *const *tensors);
/* graft verify FILE.rules... --instances N --seed S [-o DIR]: the text is
 * graft_result_log (what the CLI prints on stdout and stderr). */
GraftResult *graft_verify(const char *const *files, int nfiles, int instances, uint64_t seed, const char *out_dir,
                          int no_library);

int graft_result_status(const GraftResult *r);
/* The first error, as the CLI prints it (one line), or "" when none. */
const char *graft_result_error(const GraftResult *r);
/* What the CLI prints on stderr (and, for verify and compare, stdout). */
const char *graft_result_log(const GraftResult *r);
/* The output model's bytes (optimize, convert without out_path), or NULL. */
const void *graft_result_model(const GraftResult *r, size_t *size);
/* The job's results as JSON text, or NULL. */
const char *graft_result_json(const GraftResult *r);
/* optimize: the audit (graft optimize --report) as JSON text. */
const char *graft_result_report(const GraftResult *r);
/* run: the outputs, in the graph's order.  Returns output k's data
 * (row-major) and fills name, dtype (the ONNX code), rank, dims (rank
 * int64_t) and nbytes; NULL for a sequence or a string tensor. */
int graft_result_ntensors(const GraftResult *r);
const void *graft_result_tensor(const GraftResult *r, int k, const char **name, int *dtype, int *rank,
                                const int64_t **dims, size_t *nbytes);
void graft_result_free(GraftResult *r);

#endif
