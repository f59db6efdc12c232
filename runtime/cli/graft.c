/* graft.c - the `graft` command line: one verb per job, each a short script
 * over libgraft.  Errors go to stderr as one line naming the file (and the
 * node or tensor); exit codes are documented in usage() and the README. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/eval/eval.h"
#include "dsl/ast.h"
#include "runtime/api/graft_api.h"
#include "runtime/engine/audit.h"
#include "runtime/report/html_report.h"
#include "runtime/convert/convert.h"
#include "runtime/engine/fold.h"
#include "runtime/engine/rewrite.h"
#include "runtime/engine/rules.h"
#include "runtime/engine/rw_interp.h"
#include "runtime/infer/infer.h"
#include "ir/ir.h"
#include "ir/outfile.h"
#include "progress.h"
#include "runtime/plan/plan.h"
#include "runtime/eval/run.h"
#include "ir/text.h"
#include "runtime/verify/verify.h"

/* Exit codes. */
enum {
	EXIT_OK = 0,
	EXIT_INPUT = 1,   /* bad or unreadable input, or a failed save */
	EXIT_USAGE = 2,   /* bad command line */
	EXIT_STOPPED = 3, /* optimize: stopped by fuel or a rewrite cycle (a valid model was saved) */
};

/* The commands' work is in the library (runtime/api/graft_api.h): graft
 * optimize, convert, compare and verify run the code the Python module runs. */

static const char *const usage_text =
	"usage: graft <command> [options] MODEL\n"
	"\n"
	"commands:\n"
	"  info MODEL                 producer, IR version, opsets, counts and an op histogram\n"
	"  print MODEL                the graph in ONNX's textual syntax\n"
	"  roundtrip MODEL -o OUT     load and save through the IR (byte-identical if unchanged)\n"
	"  run MODEL [-o DIR]         run the model on the reference evaluator\n"
	"  compare A B                run two models on the same inputs; exit 0 only if they agree\n"
	"  ops                        the ops the evaluator supports, with their types\n"
	"  optimize MODEL -o OUT      rewrite to a fixpoint; report what fired (--report FILE.json)\n"
	"  explain REPORT.json NODE   which rules touched a node, and what a new node stands for\n"
	"  fold MODEL -o OUT          constant folding alone, to a fixpoint\n"
	"  convert MODEL --opset N -o OUT   convert the model to another opset (1 to 23)\n"
	"  shapes MODEL               inferred dtype and shape of every value\n"
	"  plan MODEL                 the static memory plan: lifetimes, in-place reuse, arena offsets\n"
	"  verify FILE.rules...       try each rule on generated graphs; exit 0 only if all are right\n"
	"\n"
	"Run 'graft <command> --help' for a command's options.\n"
	"\n"
	"exit status: 0 success, 1 bad input, failed save, (compare, run --expect)\n"
	"             outputs that differ or (verify) a rule not verified, 2 bad command\n"
	"             line, 3 optimize stopped by fuel\n"
	"             or a rewrite cycle (the model it reached is still saved)\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "graft: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(run 'graft --help' for usage)\n");
	return EXIT_USAGE;
}

/* The numeric argument s of option `flag`: a whole decimal number from lo
 * to hi, else false after the usage error ("graft: --opset: '4294967309'
 * is not a number from 1 to 23"; the caller exits with EXIT_USAGE).  Every
 * numeric option goes through here: nothing wraps or is cut to fit. */
static bool parse_int_arg(const char *flag, const char *s, long long lo, long long hi, long long *out)
{
	/* digits, maybe after a minus: no blanks, no plus, no empty string */
	bool digits = (s[0] >= '0' && s[0] <= '9') || (s[0] == '-' && s[1] >= '0' && s[1] <= '9');
	char *end = (char *)s;
	errno = 0;
	long long v = digits ? strtoll(s, &end, 10) : 0;
	if (!digits || *end || errno == ERANGE || v < lo || v > hi) {
		fprintf(stderr, "graft: %s: '%s' is not a number from %lld to %lld\n(run 'graft --help' for usage)\n", flag, s,
		        lo, hi);
		return false;
	}
	*out = v;
	return true;
}

/* The same for a real number from lo to hi (not NaN). */
static bool parse_real_arg(const char *flag, const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno == ERANGE || !(v >= lo && v <= hi)) {
		fprintf(stderr, "graft: %s: '%s' is not a number from %g to %g\n(run 'graft --help' for usage)\n", flag, s, lo,
		        hi);
		return false;
	}
	*out = v;
	return true;
}

/* Save m to path as every command that writes a model does (graft_save):
 * ONNX's textual syntax when it ends in ".onnxtxt", binary protobuf otherwise. */
static bool save_model(IrModel *m, const char *path, const SaveOptions *so, Diag *d)
{
	progress_stage("saving", path, 0);
	bool ok = graft_save(m, path, so, progress_log(), d);
	progress_end();
	return ok;
}

/* ---- the options of every command that saves a model -------------------------
 * roundtrip, optimize, convert and fold take these besides their own: one
 * table, one parser, one help text. */
enum { OPT_EXTERNAL = 0x100, OPT_EXT_THRESHOLD, OPT_OVERWRITE, OPT_QUIET, OPT_PROGRESS };

static const struct option save_opts[] = {
	{"external-data", no_argument, NULL, OPT_EXTERNAL},
	{"external-data-threshold", required_argument, NULL, OPT_EXT_THRESHOLD},
	{"overwrite", no_argument, NULL, OPT_OVERWRITE},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"progress", no_argument, NULL, OPT_PROGRESS},
};
/* --quiet / --progress (progress.h); the last given wins */
static ProgressMode progress_mode = PROGRESS_AUTO;
enum { NSAVE_OPTS = sizeof save_opts / sizeof save_opts[0] };

static const char *const save_help =
	"  --external-data       write every tensor of 1 KiB or more to one data file,\n"
	"                        OUT.data beside OUT, each at an offset aligned to 4096\n"
	"                        bytes; it holds only the tensors OUT refers to.  Done\n"
	"                        without asking (with a note on stderr) when MODEL has\n"
	"                        external data or OUT would pass protobuf's 2 GB limit\n"
	"  --external-data-threshold BYTES   the same, with the tensors of BYTES or more\n"
	"  --overwrite           allow OUT to be MODEL (and OUT.data MODEL's data file)\n"
	"  --quiet               no progress line (shown on a terminal when a run takes\n"
	"                        over a second: the stage, bytes, rate and time)\n"
	"  --progress            the progress line from the start, also when stderr is\n"
	"                        not a terminal (then a line per stage as it ends)\n";

/* The command's own options (ending in {0}) followed by save_opts, in buf. */
static const struct option *with_save_opts(const struct option *own, struct option *buf, size_t cap)
{
	size_t n = 0;
	while (own[n].name)
		n++;
	if (n + NSAVE_OPTS + 1 > cap)
		abort(); /* a table too small: a bug, found at the first run */
	memcpy(buf, own, sizeof *own * n);
	memcpy(buf + n, save_opts, sizeof save_opts);
	memset(&buf[n + NSAVE_OPTS], 0, sizeof *buf);
	return buf;
}

/* Apply option c (from save_opts) to so: 1 if it was one, 0 if it is not a
 * save option, -1 after a usage error (the caller exits with EXIT_USAGE). */
static int save_option(int c, const char *arg, SaveOptions *so)
{
	long long v;
	switch (c) {
	case OPT_EXTERNAL:
		so->external = EXT_ALL;
		return 1;
	case OPT_EXT_THRESHOLD:
		if (!parse_int_arg("--external-data-threshold", arg, 1, INT64_MAX, &v))
			return -1;
		so->external = EXT_ALL;
		so->ext_threshold = (size_t)v;
		return 1;
	case OPT_OVERWRITE:
		so->overwrite_input = true;
		return 1;
	case OPT_QUIET:
		progress_mode = PROGRESS_NEVER;
		return 1;
	case OPT_PROGRESS:
		progress_mode = PROGRESS_ALWAYS;
		return 1;
	}
	return 0;
}

/* Memory for a model of many megabytes: large buffers come from the heap,
 * which is kept (a tensor freed is memory the next one reuses) and asked
 * for huge pages.  On virtual machines a first touch of fresh memory costs
 * more than the copy that fills it (issue 13): on resnet18 this turns about
 * 19,000 page faults of `graft optimize` into about 1,500.  Untouched, the
 * reserve costs nothing. */
static void prepare_heap(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || st.st_size < (8 << 20))
		return;
	enum { PIECE = 16 << 20, NPIECES = 64 };
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	void *piece[NPIECES];
	size_t n = 0;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (off_t got = 0; got < 2 * st.st_size && n < NPIECES; got += PIECE) {
		if (!(piece[n] = malloc(PIECE)))
			break;
		uintptr_t p = (uintptr_t)piece[n++];
		lo = p < lo ? p : lo;
		hi = p + PIECE > hi ? p + PIECE : hi;
	}
	uintptr_t huge = 2 << 20, a = (lo + huge - 1) & ~(huge - 1), b = hi & ~(huge - 1);
	if (n && a < b)
		madvise((void *)a, b - a, MADV_HUGEPAGE); /* advice: failing changes nothing */
	while (n)
		free(piece[--n]);
}

/* ---- the files of this run --------------------------------------------------
 * Every output is claimed before anything is written (ir/outfile.h): one that
 * is the same file as an input (the model, its external data, rules files,
 * input tensors) or as another output, or that exists and is not a regular
 * file, ends the run with exit 2 and nothing written. */
static FileSet run_files;

static bool claim(const char *path, unsigned allow)
{
	Diag d;
	diag_init(&d, stderr);
	return fileset_output(&run_files, path, allow, &d);
}

/* Claim a model output: OUT, and the data file beside it when the save will
 * write one (the model has external data, --external-data, or it is over
 * 2 GB already; one that passes 2 GB while optimized is checked by the save
 * itself against its inputs).  With --overwrite, OUT may be the input model and its data file
 * the input's external data. */
static bool claim_model_output(IrModel *m, const char *out, const SaveOptions *so)
{
	Diag d;
	diag_init(&d, stderr);
	return graft_claim_model_output(&run_files, m, out, so, &d);
}

/* A model file; one whose name ends in ".onnxtxt" is ONNX's textual syntax
 * (what `graft print` writes and onnx.parser reads), so a fixture can be
 * written by hand and saved as ONNX with `graft roundtrip`. */
/* The size of the file at path, or 0. */
static uint64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static IrModel *load_with(const char *path, Diag *d)
{
	prepare_heap(path);
	return graft_load(path, &run_files, d);
}

static IrModel *load(const char *path)
{
	Diag d;
	diag_init(&d, progress_log()); /* stderr, or through the progress line's eraser */
	progress_stage("loading", path, file_size(path)); /* a command that saves a model shows it */
	IrModel *m = load_with(path, &d);
	if (!m)
		progress_end();
	return m;
}

/* ---- info -------------------------------------------------------------- */

typedef struct OpCount {
	const char *domain, *op;
	unsigned count;
} OpCount;

static int cmp_count(const void *a, const void *b)
{
	const OpCount *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	int c = strcmp(x->domain, y->domain);
	return c ? c : strcmp(x->op, y->op);
}

static int cmd_info(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: graft info MODEL\n"
		       "Prints the producer, IR version, opset imports, node and initializer\n"
		       "counts, initializer bytes, the external data files and the tensors each\n"
		       "holds, and an op-type histogram (nodes in subgraphs included).\n");
		return EXIT_OK;
	}
	if (argc != 2)
		return usage_error("info: expected one MODEL%s", "");
	IrModel *m = load(argv[1]);
	if (!m)
		return EXIT_INPUT;
	uint32_t nodes = 0, sub_nodes = 0, inits = 0, graphs = 0;
	size_t init_bytes = 0;
	OpCount *hist = NULL;
	size_t nhist = 0;
	for (GraphId g = 1; g < m->ngraphs; g++) {
		IrGraph *gr = ir_graph(m, g);
		if (gr->dead)
			continue;
		graphs++;
		for (NodeId n = gr->first; n; n = ir_next(m, n)) {
			IrNode *node = ir_node(m, n);
			if (g == IR_MAIN_GRAPH)
				nodes++;
			else
				sub_nodes++;
			size_t i;
			for (i = 0; i < nhist; i++)
				if (strcmp(hist[i].op, node->op_type) == 0 && strcmp(hist[i].domain, node->domain) == 0)
					break;
			if (i == nhist) {
				hist = realloc(hist, sizeof *hist * (nhist + 1));
				hist[nhist++] = (OpCount){node->domain, node->op_type, 0};
			}
			hist[i].count++;
		}
		for (uint32_t i = 0; i < gr->ninits; i++) {
			IrValue *v = ir_value(m, gr->inits[i]);
			if (v->dead || !v->tensor)
				continue;
			inits++;
			init_bytes += ir_tensor(m, v->tensor)->nbytes;
		}
	}
	qsort(hist, nhist, sizeof *hist, cmp_count);

	printf("model         %s\n", argv[1]);
	char producer[256];
	printf("producer      %s\n", ir_model_producer(m, producer, sizeof producer));
	printf("ir_version    %lld\n", (long long)m->ir_version);
	printf("opsets       ");
	for (uint32_t i = 0; i < m->nopsets; i++)
		printf(" %s %lld%s", *m->opsets[i].domain ? m->opsets[i].domain : "ai.onnx",
		       (long long)m->opsets[i].version, i + 1 < m->nopsets ? "," : "");
	printf("\n");
	IrGraph *main = ir_graph(m, IR_MAIN_GRAPH);
	printf("graph         '%s': %u inputs, %u outputs\n", main->name, main->ninputs, main->noutputs);
	printf("nodes         %u", nodes);
	if (graphs > 1)
		printf(" (+%u in %u subgraphs)", sub_nodes, graphs - 1);
	char hb[32];
	human_bytes(hb, sizeof hb, (double)init_bytes);
	printf("\ninitializers  %u, %zu bytes (%s)\n", inits, init_bytes, hb);
	/* where external data comes from: per data file, its tensors and bytes */
	for (TensorId t = 1; t < m->ntensors; t++) {
		const IrTensor *x = ir_tensor(m, t);
		bool first = x->external && x->ext_location;
		for (TensorId u = 1; first && u < t; u++)
			first = !(ir_tensor(m, u)->external && ir_tensor(m, u)->ext_location &&
			          !strcmp(ir_tensor(m, u)->ext_location, x->ext_location));
		if (!first)
			continue;
		uint32_t count = 0;
		size_t bytes = 0;
		for (TensorId u = t; u < m->ntensors; u++)
			if (ir_tensor(m, u)->external && ir_tensor(m, u)->ext_location &&
			    !strcmp(ir_tensor(m, u)->ext_location, x->ext_location)) {
				count++;
				bytes += ir_tensor(m, u)->nbytes;
			}
		printf("external      %u tensor%s, %zu bytes in '%s'\n", count, count == 1 ? "" : "s", bytes, x->ext_location);
	}
	int w = 2;
	for (size_t i = 0; i < nhist; i++) {
		int len = (int)(strlen(hist[i].op) + (*hist[i].domain ? strlen(hist[i].domain) + 1 : 0));
		if (len > w)
			w = len;
	}
	printf("\n%-*s  %6s\n", w, "op", "count");
	for (size_t i = 0; i < nhist; i++) {
		char name[512];
		snprintf(name, sizeof name, "%s%s%s", hist[i].domain, *hist[i].domain ? "." : "", hist[i].op);
		printf("%-*s  %6u\n", w, name, hist[i].count);
	}
	free(hist);
	ir_model_free(m);
	return EXIT_OK;
}

/* ---- print ------------------------------------------------------------- */

static int cmd_print(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: graft print MODEL\n"
		       "Prints the model in ONNX's textual syntax (the one onnx.parser reads).\n");
		return EXIT_OK;
	}
	if (argc != 2)
		return usage_error("print: expected one MODEL%s", "");
	IrModel *m = load(argv[1]);
	if (!m)
		return EXIT_INPUT;
	Diag d;
	diag_init(&d, stderr);
	bool ok = ir_print_model(m, stdout, &d);
	ir_model_free(m);
	return ok ? EXIT_OK : EXIT_INPUT;
}

/* ---- roundtrip --------------------------------------------------------- */

static int cmd_roundtrip(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct option table[16];
	SaveOptions so = {0};
	const char *out = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", with_save_opts(opts, table, sizeof table / sizeof *table), NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'h':
			printf("usage: graft roundtrip MODEL -o OUT [--external-data] [--overwrite]\n"
			       "Loads MODEL into the IR and saves it from the IR.  Unchanged, the output\n"
			       "is byte-identical to the input (external data: when its tensors lie at\n"
			       "4096-byte aligned offsets, as graft writes them).\n"
			       "  -o, --output OUT      where to write (required)\n"
			       "%s", save_help);
			return EXIT_OK;
		default: {
			int r = save_option(c, optarg, &so);
			if (r < 0)
				return EXIT_USAGE;
			if (!r)
				return usage_error("roundtrip: unknown option '%s'", argv[optind - 1]);
		}
		}
	}
	if (optind != argc - 1)
		return usage_error("roundtrip: expected one MODEL%s", "");
	if (!out)
		return usage_error("roundtrip: missing -o OUT%s", "");
	progress_begin(progress_mode);
	IrModel *m = load(argv[optind]);
	if (!m)
		return EXIT_INPUT;
	if (!claim_model_output(m, out, &so)) {
		progress_end();
		ir_model_free(m);
		return EXIT_USAGE;
	}
	Diag d;
	diag_init(&d, progress_log());
	bool ok = save_model(m, out, &so, &d);
	ir_model_free(m);
	return ok ? EXIT_OK : EXIT_INPUT;
}

/* ---- run / compare -------------------------------------------------------- */

/* Options shared by run and compare. */
typedef struct RunArgs {
	RunOptions ro;
	const char *names[64];
	int64_t values[64];
	const char *out_dir, *expect_dir;
	double rtol, atol;
	bool exact;        /* --exact: bit for bit */
	bool plan;         /* run: inside the static memory plan (runtime/plan) */
	int runs;
	bool runs_given;   /* --runs on the command line */
	int repeat;        /* run: time this many runs and print the median */
} RunArgs;

static const struct option run_opts[] = {
	{"inputs", required_argument, NULL, 'i'},
	{"output", required_argument, NULL, 'o'},
	{"seed", required_argument, NULL, 's'},
	{"dim", required_argument, NULL, 'd'},
	{"int-range", required_argument, NULL, 'r'},
	{"expect", required_argument, NULL, 'e'},
	{"rtol", required_argument, NULL, 'R'},
	{"atol", required_argument, NULL, 'A'},
	{"exact", no_argument, NULL, 'x'},
	{"runs", required_argument, NULL, 'n'},
	{"repeat", required_argument, NULL, 'p'},
	{"plan", no_argument, NULL, 'P'},
	{"max-memory", required_argument, NULL, 'm'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

/* The evaluator's default memory limit: half the machine's memory (4 GiB
 * when it cannot be known), so a model whose tensors would not fit stops
 * with a message instead of sending the machine into swap or the OOM killer. */
static size_t default_max_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || size <= 0)
		return (size_t)4 << 30;
	return (size_t)pages / 2 * (size_t)size;
}

static const char *const run_help =
	"  --inputs DIR        input_K.pb files (TensorProto), matched by name, else by position;\n"
	"                      without it, inputs are generated as ort-run.mjs does (floats uniform\n"
	"                      in [-1,1), ints in [0,100); symbolic dims 1 for run, 2..5 for\n"
	"                      compare)\n"
	"  --seed N            seed of generated inputs (default 0)\n"
	"  --dim NAME=V        value of a symbolic dim (repeatable)\n"
	"  --int-range LO:HI   range of generated integer inputs\n"
	"  --rtol X --atol Y   agreement: |b - a| <= atol + rtol*|a| (default 1e-3, 1e-4)\n"
	"  --exact             agreement: the same bits (-0 is not 0; NaN agrees with NaN)\n"
	"  --max-memory N      the most bytes of tensors the evaluator may hold at once\n"
	"                      (default: half the machine's memory, 4 GiB if unknown); a\n"
	"                      kernel whose output would go over it stops the run, before\n"
	"                      allocating, with a message naming the node\n";

/* Parse shared options; returns -1 to continue, else an exit code. */
static int parse_run_args(int argc, char **argv, RunArgs *a, const char *usage)
{
	memset(a, 0, sizeof *a);
	a->ro.int_hi = 100;
	a->ro.dim_names = a->names;
	a->ro.dim_values = a->values;
	a->rtol = 1e-3;
	a->atol = 1e-4;
	a->runs = 1;
	size_t max_memory = default_max_memory();
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", run_opts, NULL)) != -1) {
		long long v;
		switch (c) {
		case 'm':
			if (!parse_int_arg("--max-memory", optarg, 1, INT64_MAX, &v))
				return EXIT_USAGE;
			max_memory = (uint64_t)v;
			break;
		case 'i': a->ro.inputs_dir = optarg; break;
		case 'o': a->out_dir = optarg; break;
		case 'e': a->expect_dir = optarg; break;
		case 's':
			if (!parse_int_arg("--seed", optarg, 0, UINT32_MAX, &v))
				return EXIT_USAGE;
			a->ro.seed = (uint32_t)v;
			break;
		case 'p':
			if (!parse_int_arg("--repeat", optarg, 1, 1000000, &v))
				return EXIT_USAGE;
			a->repeat = (int)v;
			break;
		case 'n':
			if (!parse_int_arg("--runs", optarg, 1, 1000000, &v))
				return EXIT_USAGE;
			a->runs = (int)v;
			a->runs_given = true;
			break;
		case 'x': a->exact = true; break;
		case 'P': a->plan = true; break;
		case 'R': case 'A':
			if (!parse_real_arg(c == 'R' ? "--rtol" : "--atol", optarg, 0, HUGE_VAL, c == 'R' ? &a->rtol : &a->atol))
				return EXIT_USAGE;
			break;
		case 'r': {
			/* LO:HI, each a number; the span HI - LO must fit int64 */
			char *colon = strchr(optarg, ':');
			long long lo, hi, span;
			if (!colon)
				return usage_error("--int-range expects LO:HI with LO < HI, got '%s'", optarg);
			*colon = 0;
			bool ok = parse_int_arg("--int-range", optarg, INT64_MIN, INT64_MAX, &lo) &&
			          parse_int_arg("--int-range", colon + 1, INT64_MIN, INT64_MAX, &hi);
			*colon = ':';
			if (!ok)
				return EXIT_USAGE;
			if (hi <= lo || __builtin_sub_overflow(hi, lo, &span))
				return usage_error("--int-range expects LO:HI with LO < HI and HI - LO below 2^63, got '%s'", optarg);
			a->ro.int_lo = lo;
			a->ro.int_hi = hi;
			break;
		}
		case 'd': {
			char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || a->ro.ndims >= 64)
				return usage_error("--dim expects NAME=VALUE, got '%s'", optarg);
			*eq = 0;
			a->names[a->ro.ndims] = optarg;
			if (!parse_int_arg("--dim", eq + 1, 0, INT64_MAX, &v))
				return EXIT_USAGE;
			a->values[a->ro.ndims++] = v;
			break;
		}
		case 'h':
			printf("%s%s", usage, run_help);
			return EXIT_OK;
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	ev_set_memory_limit(max_memory);
	return -1;
}

static void print_shape(const EvValue *v, char *buf, size_t size)
{
	if (v->kind == EV_SEQUENCE) {
		snprintf(buf, size, "sequence of %d", v->nitems);
		return;
	}
	if (v->kind == EV_NONE) {
		snprintf(buf, size, "none");
		return;
	}
	int n = snprintf(buf, size, "%s", dtype_name(v->dtype));
	if ((size_t)n < size)
		run_format_dims(v, buf + n, size - (size_t)n);
}

/* Run m on inputs; outputs[] receives one reference per graph output. */
static bool run_model(IrModel *m, EvValue **inputs, EvValue **outputs)
{
	Diag d;
	diag_init(&d, stderr);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	return ev_run(m, (const EvValue *const *)inputs, g->ninputs, outputs, NULL, &d);
}

static void free_values(EvValue **v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ev_unref(v[i]);
}

/* graft run --plan: plan for the inputs' shapes, run inside the plan's
 * arena, and replace outputs[] by the planned run's outputs if every one is
 * bit-identical to the run without the plan. */
static bool run_planned(IrModel *m, EvValue **inputs, EvValue **outputs, Diag *d)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	Plan p;
	if (!plan_bind_values(m, inputs, d) || !plan_model(m, NULL, &p, d))
		return false;
	EvPlacement pl;
	plan_placement(&p, &pl);
	EvPlaceStats st;
	EvOptions eo = {.placement = &pl, .stats = &st};
	EvValue **planned = calloc(g->noutputs + 1, sizeof *planned);
	bool ok = ev_run(m, (const EvValue *const *)inputs, g->ninputs, planned, &eo, d);
	if (ok) {
		printf("plan: one arena of %zu bytes (lower bound %zu, naive %zu; planned in %.3f ms); %u tensors: "
		       "%u written into place by their kernel (%u of them over their input), %u copied into place, "
		       "%u views; %u not planned\n",
		       p.peak_bytes, p.lower_bound_bytes, p.naive_bytes, p.seconds * 1e3, p.ntensors, st.direct, st.inplace,
		       st.copied, st.views, p.nskipped);
		for (uint32_t i = 0; i < g->noutputs; i++) {
			RunDiff r;
			run_compare_exact(outputs[i], planned[i], &r);
			if (!r.agree) {
				fprintf(stderr, "%s: output '%s': the run inside the plan differs from the run without it "
				        "(%lld elements)\n", m->path, ir_value(m, g->outputs[i])->name, (long long)r.mismatches);
				ok = false;
			}
		}
	}
	if (ok) {
		printf("plan: every output is bit-identical to the run without the plan\n");
		for (uint32_t i = 0; i < g->noutputs; i++) {
			ev_unref(outputs[i]);
			outputs[i] = planned[i];
		}
	} else {
		free_values(planned, g->noutputs);
	}
	free(planned);
	plan_free(&p);
	return ok;
}

static int cmd_run(int argc, char **argv)
{
	static const char *usage = "usage: graft run MODEL [--inputs DIR] [-o DIR] [--expect DIR] [options]\n"
		"Runs MODEL on graft's reference evaluator and prints each output's type, shape\n"
		"and range.\n"
		"  -o, --output DIR    write the inputs used (input_K.pb) and the outputs (output_K.pb)\n"
		"  --expect DIR        compare the outputs with DIR/output_K.pb; exit 1 if they differ\n"
		"  --repeat N          run N times and print the median inference time\n"
		"  --plan              run again with every planned tensor placed in one arena by\n"
		"                      the static memory plan (graft plan) and check the outputs are\n"
		"                      bit-identical to the first run; exit 1 if not.  --expect and\n"
		"                      -o then see the planned run's outputs\n";
	RunArgs a;
	int rc = parse_run_args(argc, argv, &a, usage);
	if (rc >= 0)
		return rc;
	if (optind != argc - 1)
		return usage_error("run: expected one MODEL%s", "");
	IrModel *m = load(argv[optind]);
	if (!m)
		return EXIT_INPUT;
	Diag d;
	diag_init(&d, stderr);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	EvValue **inputs = calloc(g->ninputs + 1, sizeof *inputs);
	EvValue **outputs = calloc(g->noutputs + 1, sizeof *outputs);
	rc = EXIT_INPUT;
	if (!run_prepare_inputs(m, &a.ro, inputs, &d) || !run_model(m, inputs, outputs))
		goto done;
	if (a.plan && !run_planned(m, inputs, outputs, &d))
		goto done;
	rc = EXIT_OK;
	if (a.repeat) {
		double *ms = calloc((size_t)a.repeat, sizeof *ms);
		for (int r = 0; r < a.repeat && rc == EXIT_OK; r++) {
			EvValue **again = calloc(g->noutputs + 1, sizeof *again);
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (!run_model(m, inputs, again))
				rc = EXIT_INPUT;
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ms[r] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
			free_values(again, g->noutputs);
			free(again);
		}
		for (int i = 1; i < a.repeat; i++) /* insertion sort: a handful of numbers */
			for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
				double t = ms[j];
				ms[j] = ms[j - 1];
				ms[j - 1] = t;
			}
		printf("inference: median %.2f ms, min %.2f ms over %d runs\n", ms[a.repeat / 2], ms[0], a.repeat);
		free(ms);
	}
	if (a.out_dir) {
		/* the input and expected tensors read are inputs of this run too */
		for (uint32_t i = 0; i < g->ninputs + g->noutputs; i++) {
			char path[4096];
			const char *dir = i < g->ninputs ? a.ro.inputs_dir : a.expect_dir;
			if (dir) {
				snprintf(path, sizeof path, "%s/%s_%u.pb", dir, i < g->ninputs ? "input" : "output",
				         i < g->ninputs ? i : i - g->ninputs);
				fileset_input(&run_files, path, FILE_INPUT);
			}
		}
		struct stat st;
		if (mkdir(a.out_dir, 0777) != 0 && (lstat(a.out_dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
			fprintf(stderr, "%s: cannot write into it: not a folder\n", a.out_dir);
			rc = EXIT_USAGE;
			goto done;
		}
		ValueId *fed = calloc(g->ninputs + 1, sizeof *fed);  /* any number of inputs */
		if (!fed)
			abort();
		uint32_t nfed = run_fed_inputs(m, fed);
		/* every file claimed first, then written */
		for (int pass = 0; pass < 2; pass++) {
			for (uint32_t i = 0, f = 0; i < g->ninputs && rc == EXIT_OK; i++) {
				if (f < nfed && g->inputs[i] == fed[f]) {
					char path[4096];
					snprintf(path, sizeof path, "%s/input_%u.pb", a.out_dir, f++);
					if (pass == 0 ? !claim(path, 0) : !ev_save_pb(path, inputs[i], ir_value(m, g->inputs[i])->name, &d))
						rc = pass == 0 ? EXIT_USAGE : EXIT_INPUT;
				}
			}
			for (uint32_t i = 0; i < g->noutputs && rc == EXIT_OK; i++) {
				char path[4096];
				snprintf(path, sizeof path, "%s/output_%u.pb", a.out_dir, i);
				if (pass == 0 ? !claim(path, 0) : !ev_save_pb(path, outputs[i], ir_value(m, g->outputs[i])->name, &d))
					rc = pass == 0 ? EXIT_USAGE : EXIT_INPUT;
			}
		}
		free(fed);
	}
	for (uint32_t i = 0; i < g->noutputs; i++) {
		const EvValue *v = outputs[i];
		char shape[256];
		print_shape(v, shape, sizeof shape);
		printf("%-24s %-24s", ir_value(m, g->outputs[i])->name, shape);
		if (v->kind == EV_TENSOR && v->dtype != DT_STRING && v->numel > 0) {
			double lo = INFINITY, hi = -INFINITY, sum = 0;
			for (int64_t k = 0; k < v->numel; k++) {
				double x = ev_get_f(v, k);
				lo = x < lo ? x : lo;
				hi = x > hi ? x : hi;
				sum += x;
			}
			printf(" min %-12.6g max %-12.6g mean %.6g", lo, hi, sum / (double)v->numel);
		}
		printf("\n");
		if (a.expect_dir) {
			char path[4096];
			snprintf(path, sizeof path, "%s/output_%u.pb", a.expect_dir, i);
			EvValue *want = ev_load_pb(path, ev_declared_kind(m, g->outputs[i]), NULL, &d);
			if (!want) {
				rc = EXIT_INPUT;
				continue;
			}
			RunDiff r;
			if (a.exact)
				run_compare_exact(want, v, &r);
			else
				run_compare(want, v, a.rtol, a.atol, &r);
			printf("  vs %s: %s (max abs %.3g, max rel %.3g%s)\n", path, r.agree ? "agree" : "DIFFER",
			       r.max_abs, r.max_rel, r.same_shape ? "" : ", shape differs");
			if (!r.agree)
				rc = EXIT_INPUT;
			ev_unref(want);
		}
	}
done:
	free_values(inputs, g->ninputs);
	free_values(outputs, g->noutputs);
	free(inputs);
	free(outputs);
	ir_model_free(m);
	return rc;
}

static int cmd_compare(int argc, char **argv)
{
	static const char *usage = "usage: graft compare A.onnx B.onnx [--inputs DIR] [--runs N] [options]\n"
		"Runs both models on the same inputs and reports, per output, the largest absolute\n"
		"and relative difference.  Exit 0 only when every output agrees; the interface\n"
		"(input and output names) must be the same.\n"
		"  --runs N            N sets of generated inputs (seeds seed..seed+N-1; default 1,\n"
		"                      2 when the inputs have symbolic dims)\n"
		"Generated inputs give each symbolic dim name a size of its own from 2 to 5,\n"
		"another in each run (not 1, as ort-run.mjs and graft run do), so a rewrite right\n"
		"only when a dim is 1 shows; each run prints its sizes ('run 1: dims N=2, seq=3').\n"
		"--dim NAME=V pins a name.  A run A cannot make with those sizes is made with 1\n"
		"for every unpinned name instead, and its line says why.\n";
	RunArgs a;
	int rc = parse_run_args(argc, argv, &a, usage);
	if (rc >= 0)
		return rc;
	if (a.plan)
		return usage_error("compare: --plan is an option of graft run%s", "");
	if (optind != argc - 2)
		return usage_error("compare: expected two models%s", "");
	IrModel *ma = load(argv[optind]), *mb = ma ? load(argv[optind + 1]) : NULL;
	if (!ma || !mb) {
		ir_model_free(ma);
		return EXIT_INPUT;
	}
	Diag d;
	diag_init(&d, stderr);
	GraftCompareOptions o = {.ro = a.ro, .rtol = a.rtol, .atol = a.atol, .exact = a.exact,
	                         .runs = a.runs_given ? a.runs : 0};
	GraftCompare c;
	rc = graft_compare_models(ma, mb, argv[optind], argv[optind + 1], &o, stdout, &c, &d);
	graft_compare_free(&c);
	ir_model_free(ma);
	ir_model_free(mb);
	return rc;
}

/* ---- fold ------------------------------------------------------------------- */

static int cmd_fold(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"max-bytes", required_argument, NULL, 'm'},
		{"max-fold-bytes", required_argument, NULL, 'B'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct option table[20];
	FoldOptions fo = {.max_bytes = FOLD_DEFAULT_MAX_BYTES};
	SaveOptions so = {0};
	const char *out = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:hv", with_save_opts(opts, table, sizeof table / sizeof *table), NULL)) != -1) {
		long long v;
		switch (c) {
		case 'o': out = optarg; break;
		case 'v': fo.report_errors = true; break;
		case 'm': case 'B': {
			if (!parse_int_arg(c == 'm' ? "--max-bytes" : "--max-fold-bytes", optarg, 0, INT64_MAX, &v))
				return EXIT_USAGE;
			if (c == 'm')
				fo.max_bytes = (uint64_t)v;
			else
				fo.max_total_bytes = v ? (uint64_t)v : 1; /* 0: fold nothing that adds bytes */
			break;
		}
		case 'h':
			printf("usage: graft fold MODEL -o OUT [--max-bytes N] [--max-fold-bytes N] [-v] [save options]\n"
			       "Folds constants to a fixpoint: nodes whose inputs are all constant become\n"
			       "initializers, Constant nodes become initializers, Shape/Size of static\n"
			       "tensors become constants.  Never folds overridable initializers, random ops or\n"
			       "DequantizeLinear; never creates a tensor over the size cap, nor goes over the\n"
			       "fold budget; both are checked before the result is computed.\n"
			       "  --max-bytes N       size cap per folded tensor (default 1073741824, 1 GB)\n"
			       "  --max-fold-bytes N  the fold budget: the most bytes folding may add to the\n"
			       "                      model in all (folded tensors less the constants they\n"
			       "                      replace); default: the model's initializer bytes, at\n"
			       "                      least 64 MiB (so folding at most doubles the weights)\n"
			       "  -v, --verbose       say why a node that looked foldable was not folded\n"
			       "%s", save_help);
			return EXIT_OK;
		default: {
			int r = save_option(c, optarg, &so);
			if (r < 0)
				return EXIT_USAGE;
			if (!r)
				return usage_error("fold: unknown option '%s'", argv[optind - 1]);
		}
		}
	}
	if (optind != argc - 1)
		return usage_error("fold: expected one MODEL%s", "");
	if (!out)
		return usage_error("fold: missing -o OUT%s", "");
	progress_begin(progress_mode);
	IrModel *m = load(argv[optind]);
	if (!m)
		return EXIT_INPUT;
	if (!claim_model_output(m, out, &so)) {
		progress_end();
		ir_model_free(m);
		return EXIT_USAGE;
	}
	Diag d;
	diag_init(&d, progress_log());
	uint32_t before = 0, after = 0;
	for (GraphId g = 1; g < m->ngraphs; g++)
		before += ir_graph(m, g)->dead ? 0 : ir_graph(m, g)->nnodes;
	FoldStats st;
	progress_stage("folding", NULL, 0);
	bool ok = fold_model(m, &fo, &st, &d);
	for (GraphId g = 1; g < m->ngraphs; g++)
		after += ir_graph(m, g)->dead ? 0 : ir_graph(m, g)->nnodes;
	if (ok)
		ok = save_model(m, out, &so, &d);
	if (ok)
		fprintf(stderr, "fold: %u -> %u nodes: %u folded, %u Constant nodes to initializers, "
		        "%u Shape/Size of static tensors, %u Reshape shapes made constant, %u dead nodes removed; "
		        "%u unused initializers removed; left alone: %u over the size cap, %u over the fold budget, "
		        "%u refused by their kernel\n",
		        before, after, st.folded, st.constants, st.shapes, st.reshapes, st.dead, st.removed_initializers,
		        st.over_cap, st.over_budget, st.errors);
	ir_model_free(m);
	return ok ? EXIT_OK : EXIT_INPUT;
}

/* ---- convert ------------------------------------------------------------------ */

/* Convert m to `target`, saying what was done on stderr; on failure, the
 * converter's message and that nothing was written. */
static bool convert_and_say(IrModel *m, int target, Diag *d)
{
	progress_stage("converting", NULL, 0);
	return graft_convert_and_say(m, target, progress_log(), d);
}

static int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"opset", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct option table[16];
	SaveOptions so = {0};
	const char *out = NULL;
	int target = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", with_save_opts(opts, table, sizeof table / sizeof *table), NULL)) != -1) {
		long long v;
		switch (c) {
		case 'o': out = optarg; break;
		case 'n':
			if (!parse_int_arg("--opset", optarg, CONVERT_MIN_OPSET, OPSCHEMA_MAX_OPSET, &v))
				return EXIT_USAGE;
			target = (int)v;
			break;
		case 'h':
			printf("usage: graft convert MODEL --opset N -o OUT [save options]\n"
			       "Converts the model's default-domain opset to N (1 to 23), one version at a\n"
			       "time, in every graph: attributes that became inputs (axes, pads, split, k,\n"
			       "scales, min/max, ratio) move, replaced ops are renamed (Upsample -> Resize,\n"
			       "Scatter -> ScatterElements), changed defaults and semantics are spelled out\n"
			       "(Softmax's axis at 13, ...).  Downgrades are exact or refused: an input that\n"
			       "goes back to an attribute must be a constant.  The IR version is raised to\n"
			       "what opset N needs.  An op with no conversion is an error naming the node;\n"
			       "nothing is written.  The table: docs/opset-conversion.md.\n"
			       "%s", save_help);
			return EXIT_OK;
		default: {
			int r = save_option(c, optarg, &so);
			if (r < 0)
				return EXIT_USAGE;
			if (!r)
				return usage_error("convert: unknown option '%s'", argv[optind - 1]);
		}
		}
	}
	if (optind != argc - 1)
		return usage_error("convert: expected one MODEL%s", "");
	if (!out)
		return usage_error("convert: missing -o OUT%s", "");
	if (!target)
		return usage_error("convert: missing --opset N%s", "");
	progress_begin(progress_mode);
	IrModel *m = load(argv[optind]);
	if (!m)
		return EXIT_INPUT;
	if (!claim_model_output(m, out, &so)) {
		progress_end();
		ir_model_free(m);
		return EXIT_USAGE;
	}
	Diag d;
	diag_init(&d, progress_log());
	bool ok = convert_and_say(m, target, &d) && save_model(m, out, &so, &d);
	ir_model_free(m);
	return ok ? EXIT_OK : EXIT_INPUT;
}

/* ---- optimize --------------------------------------------------------------- */

/* --why RULE: one line per node left with the rule's root op. */
static void print_why(const RwRuleSet *const *sets, const RwRule *rule, const RwResult *r)
{
	long fired = 0;
	for (size_t i = 0; i < r->nfirings; i++)
		fired += r->firings[i].rule >= 0 && strcmp(rw_firing_name(sets, &r->firings[i]), rule->name) == 0;
	printf("why %s (%s:%d), which fired %ld time%s: ", rule->name, rule->file, rule->line, fired, fired == 1 ? "" : "s");
	if (!r->nwhy) {
		printf("no %s node is left\n", rule->root_op);
		return;
	}
	printf("%d %s node%s left\n", r->nwhy, rule->root_op, r->nwhy == 1 ? "" : "s");
	for (int i = 0; i < r->nwhy; i++)
		printf("  %s: %s%s%s%s%s\n", r->why[i].node, rw_why_kind_name(r->why[i].kind), *r->why[i].detail ? ": " : "",
		       r->why[i].detail, *r->why[i].values ? ": " : "", r->why[i].values);
}

static int optimize_with(int argc, char **argv, RwOptions *o, SaveOptions *so, const char *out,
                         const char *report, const char *dot, bool list, int target_opset,
                         const RwRuleSet *const *rule_sets, int nrule_sets);
static const char *html_out;  /* --html FILE.html */

static int cmd_optimize(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"level", required_argument, NULL, 'l'},
		{"allow-vendor-ops", no_argument, NULL, 'V'},
		{"enable", required_argument, NULL, 'e'},
		{"disable", required_argument, NULL, 'x'},
		{"max-rewrites", required_argument, NULL, 'M'},
		{"fuel", required_argument, NULL, 'F'},
		{"shuffle", required_argument, NULL, 'S'},
		{"trace", no_argument, NULL, 't'},
		{"report", required_argument, NULL, 'r'},
		{"list-rules", no_argument, NULL, 'L'},
		{"dot", required_argument, NULL, 'D'},
		{"no-fold", no_argument, NULL, '1'},
		{"no-cse", no_argument, NULL, '2'},
		{"no-dce", no_argument, NULL, '3'},
		{"max-bytes", required_argument, NULL, 'm'},
		{"max-fold-bytes", required_argument, NULL, 'b'},
		{"why", required_argument, NULL, 'y'},
		{"match-each", no_argument, NULL, 'E'},
		{"rules", required_argument, NULL, 'R'},
		{"no-library", no_argument, NULL, 'N'},
		{"target-opset", required_argument, NULL, 'T'},
		{"layout", required_argument, NULL, 'A'},
		{"html", required_argument, NULL, 'H'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct option table[48];
	RwOptions ro = {.trace_out = stderr};
	int target_opset = 0;
	SaveOptions so = {0};
	const char *out = NULL, *report = NULL, *dot = NULL;
	const char *enabled[128], *disabled[128];
	const char *rule_files[256];
	int nrule_files = 0;
	bool list = false, no_library = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", with_save_opts(opts, table, sizeof table / sizeof *table), NULL)) != -1) {
		long long v;
		switch (c) {
		case 'o': out = optarg; break;
		case 'r': report = optarg; break;
		case 'D': dot = optarg; break;
		case 'H': html_out = optarg; break;
		case 'V': ro.allow_vendor_ops = true; break;
		case 't': ro.trace = true; break;
		case 'L': list = true; break;
		case '1': ro.no_fold = true; break;
		case '2': ro.no_cse = true; break;
		case '3': ro.no_dce = true; break;
		case 'y': ro.why_rule = optarg; break;
		case 'E': ro.match_each = true; break;
		case 'N': no_library = true; break;
		case 'A':
			if (strcmp(optarg, "nhwc") != 0)
				return usage_error("--layout expects nhwc, got '%s'", optarg);
			ro.layout_nhwc = true;
			break;
		case 'T':
			if (!parse_int_arg("--target-opset", optarg, CONVERT_MIN_OPSET, OPSCHEMA_MAX_OPSET, &v))
				return EXIT_USAGE;
			target_opset = (int)v;
			break;
		case 'R':
			if (nrule_files >= 256)
				return usage_error("too many --rules%s", "");
			rule_files[nrule_files++] = optarg;
			break;
		case 'l':
			if (graft_level_bit(optarg) < 0)
				return usage_error(GRAFT_LEVEL_ERROR, optarg);
			ro.levels |= (unsigned)graft_level_bit(optarg);
			break;
		case 'e': case 'x':
			if ((c == 'e' ? ro.nenabled : ro.ndisabled) >= 128)
				return usage_error("too many --enable/--disable%s", "");
			if (c == 'e')
				enabled[ro.nenabled++] = optarg;
			else
				disabled[ro.ndisabled++] = optarg;
			break;
		case 'M':
			if (!parse_int_arg("--max-rewrites", optarg, 0, LONG_MAX, &v))
				return EXIT_USAGE;
			ro.max_rewrites = (long)v;
			ro.limit_rewrites = true; /* 0 too: none at all */
			break;
		case 'b':
			if (!parse_int_arg("--max-fold-bytes", optarg, 0, INT64_MAX, &v))
				return EXIT_USAGE;
			ro.fold.max_total_bytes = v ? (uint64_t)v : 1; /* 0: fold nothing that adds bytes */
			break;
		case 'F':
			if (!parse_int_arg("--fuel", optarg, 1, LONG_MAX, &v))
				return EXIT_USAGE;
			ro.fuel = (long)v;
			break;
		case 'S':
			if (!parse_int_arg("--shuffle", optarg, 0, INT64_MAX, &v))
				return EXIT_USAGE;
			ro.shuffle_seed = v ? (uint64_t)v : 1;
			break;
		case 'm':
			if (!parse_int_arg("--max-bytes", optarg, 0, INT64_MAX, &v))
				return EXIT_USAGE;
			ro.fold.max_bytes = (uint64_t)v;
			break;
		case 'h':
			printf("usage: graft optimize MODEL -o OUT [options]\n"
			       "Rewrites MODEL to a fixpoint: constant folding, common-subexpression\n"
			       "elimination, dead-code elimination and the compiled rules, then saves OUT and\n"
			       "prints the op histogram before and after and what fired.\n"
			       "  --rules FILE...       also run the rules of these files, loaded now (no\n"
			       "                        compiler needed), tried before the library's; one\n"
			       "                        marked [override] replaces the library's of its name\n"
			       "  --no-library          leave graft's compiled rule library out\n"
			       "  --level L             basic, extended, layout or all (default: all; repeatable)\n"
			       "  --allow-vendor-ops    also run rules that emit com.microsoft ops\n"
			       "  --layout nhwc         channels-last activations (needs --allow-vendor-ops): each\n"
			       "                        4-D Conv becomes com.microsoft NhwcConv (ONNX Runtime's\n"
			       "                        CUDA provider runs it, its CPU provider does not),\n"
			       "                        GlobalAveragePool ReduceMean, BatchNormalization Mul and\n"
			       "                        Add; Transposes stay at the graph's inputs and outputs\n"
			       "                        (interface unchanged) and around the ops with no\n"
			       "                        channels-last form (MaxPool, AveragePool, Reshape, ...)\n"
			       "  --enable NAME         only these rules (a rule, a rule file or a level; repeatable)\n"
			       "  --disable NAME        not these (same kinds of names; repeatable)\n"
			       "  --max-rewrites N      apply only the first N rewrites (to bisect a bad one)\n"
			       "  --fuel N              stop after N rewrites (default 1000000; exit 3)\n"
			       "  --shuffle SEED        randomize the worklist order\n"
			       "  --trace               print each firing as it happens\n"
			       "  --report FILE.json    the audit: every firing, its nodes and their provenance\n"
			       "  --dot FILE            the optimized graph for Graphviz, rewritten nodes highlighted\n"
			       "  --html FILE.html      the audit as one page that opens offline in a browser\n"
			       "  --list-rules          list the rules and exit\n"
			       "  --why RULE            at each node left with RULE's root op, the first\n"
			       "                        condition of RULE that fails there (on stdout)\n"
			       "  --match-each          try each rule in turn instead of the decision trees\n"
			       "  --no-fold --no-cse --no-dce   switch a built-in pass off\n"
			       "  --max-bytes N         size cap per folded tensor (default 1 GB)\n"
			       "  --max-fold-bytes N    the most bytes folding may add to the model in all\n"
			       "                        (default: its initializer bytes, at least 64 MiB);\n"
			       "                        a fold over it is not done (the node stays)\n"
			       "  --target-opset N      convert to opset N first (as graft convert); without it\n"
			       "                        the model's opset never changes\n"
			       "%s", save_help);
			return EXIT_OK;
		default: {
			int r = save_option(c, optarg, &so);
			if (r < 0)
				return EXIT_USAGE;
			if (!r)
				return usage_error("optimize: unknown option '%s'", argv[optind - 1]);
		}
		}
	}
	ro.enabled = enabled;
	ro.disabled = disabled;
	/* --rules FILE...: the shell expands a glob of rules files after one --rules,
	 * so every other argument naming a .rules file is one too */
	for (int i = optind; i < argc;) {
		size_t n = strlen(argv[i]);
		if (n > 6 && !strcmp(argv[i] + n - 6, ".rules")) {
			if (!nrule_files)
				return usage_error("optimize: '%s' is a rules file: give rules files after --rules", argv[i]);
			if (nrule_files >= 256)
				return usage_error("too many --rules%s", "");
			rule_files[nrule_files++] = argv[i];
			memmove(argv + i, argv + i + 1, sizeof *argv * (size_t)(argc - i - 1));
			argc--;
		} else {
			i++;
		}
	}
	for (int i = 0; i < nrule_files; i++)
		fileset_input(&run_files, rule_files[i], FILE_INPUT);
	/* the rule sets: --rules files (interpreted), then the library */
	GraftRules rules;
	Diag rd;
	diag_init(&rd, stderr);
	if (!graft_rules_open(&rules, rule_files, nrule_files, no_library, stderr, &rd))
		return EXIT_INPUT;
	int rc = optimize_with(argc, argv, &ro, &so, out, report, dot, list, target_opset, rules.sets, rules.nsets);
	graft_rules_close(&rules);
	return rc;
}

/* GraftOptimize's stage hook: the progress line's stage (NULL: the run's
 * summary follows, the line goes). */
static void on_stage(const char *stage, const char *what)
{
	if (stage)
		progress_stage(stage, what, 0);
	else
		progress_end();
}

/* graft optimize, once the rule sets are known. */
static int optimize_with(int argc, char **argv, RwOptions *o, SaveOptions *so, const char *out,
                         const char *report, const char *dot, bool list, int target_opset,
                         const RwRuleSet *const *rule_sets, int nrule_sets)
{
	RwOptions ro = *o;
	/* which nodes each firing touched is for the report, the graph and the
	 * trace; the summary only counts */
	ro.counts_only = !report && !dot && !ro.trace && !html_out;
	if (list) {
		printf("%-32s %-9s %s\n", "rule", "level", "source");
		for (int s = 0; s < nrule_sets; s++)
			for (int i = 0; i < rule_sets[s]->nrules; i++) {
				const RwRule *r = &rule_sets[s]->rules[i];
				const char *level = dsl_level_name((Level)r->level);
				const RwRule *o = rw_rules_overrider(rule_sets, nrule_sets, s, r->name);
				if (o)
					printf("%-32s %-9s %s:%d  overridden by %s:%d\n", r->name, level, r->file, r->line,
					       o->file, o->line);
				else
					printf("%-32s %-9s %s:%d  %s\n", r->name, level, r->file, r->line, r->doc ? r->doc : "");
			}
		printf("built-in passes: fold, inline-if (an If on a constant condition, A13; part of fold), cse, dce,\n"
		       "  push-transpose (layout level: Transposes pushed through the ops that commute with them, J122-J124),\n"
		       "  split-slices (extended level: Slices that tile a value along one axis become one Split, B21),\n"
		       "  concat-concat (basic level: a Concat's inputs that are Concats on its axis, read by it alone, spliced in, D54),\n"
		       "  layout-nhwc (--layout nhwc: Conv to com.microsoft NhwcConv between Transposes, J125)\n");
		return EXIT_OK;
	}
	const RwRule *why_rule = NULL;
	for (int s = 0; ro.why_rule && s < nrule_sets; s++)
		for (int i = 0; i < rule_sets[s]->nrules && !why_rule; i++)
			if (strcmp(rule_sets[s]->rules[i].name, ro.why_rule) == 0)
				why_rule = &rule_sets[s]->rules[i];
	if (ro.why_rule && !why_rule)
		return usage_error("--why: no rule named '%s' (graft optimize --list-rules)", ro.why_rule);
	Diag d;
	diag_init(&d, stderr);
	if (!graft_check_rule_names(rule_sets, nrule_sets, &ro, stderr, &d))
		return EXIT_USAGE;
	if (optind != argc - 1)
		return usage_error("optimize: expected one MODEL%s", "");
	if (!out)
		return usage_error("optimize: missing -o OUT%s", "");
	if (ro.layout_nhwc && !ro.allow_vendor_ops)
		return usage_error("--layout nhwc needs --allow-vendor-ops: standard ONNX has no channels-last Conv "
		                   "(each Conv becomes com.microsoft NhwcConv)%s", "");
	progress_begin(progress_mode);
	diag_init(&d, progress_log()); /* an error erases the progress line first */
	IrModel *m = load(argv[optind]);
	if (!m)
		return EXIT_INPUT;
	if (!claim_model_output(m, out, so) || (report && !claim(report, 0)) || (dot && !claim(dot, 0)) ||
	    (html_out && !claim(html_out, 0))) {
		progress_end();
		ir_model_free(m);
		return EXIT_USAGE;
	}
	/* convert, rewrite, save, the summary on stderr (the library's work) */
	GraftOptimize job = {.rw = ro, .save = *so, .target_opset = target_opset, .sets = rule_sets, .nsets = nrule_sets,
	                     .input = argv[optind], .output = out, .memory_plan = report != NULL,
	                     .log = progress_log(), .stage = on_stage};
	int rc = graft_optimize_model(&job, m, &d);
	progress_end();
	AuditHist before = job.before, after = job.after;
	RwResult r = job.r;
	if (rc != EXIT_INPUT) {
		if (report && !audit_write_report(report, argv[optind], out, &before, &after, rule_sets, nrule_sets, &r, &d))
			rc = EXIT_INPUT;
		if (html_out && !html_write_report(html_out, report, argv[optind], out, &before, &after, rule_sets, nrule_sets, &r, &d))
			rc = EXIT_INPUT;
		if (dot && !audit_write_dot(m, &r, dot, &d))
			rc = EXIT_INPUT;
		if (why_rule)
			print_why(rule_sets, why_rule, &r);
	}
	graft_optimize_free(&job);
#ifdef GRAFT_DEBUG
	ir_model_free(m); /* for the leak checkers (make sanitize) */
#else
	(void)m; /* the process ends here: the system takes the model back at once,
	            where freeing it was a walk over every message and node */
#endif
	return rc;
}

/* ---- explain ------------------------------------------------------------------ */

static int cmd_explain(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: graft explain REPORT.json NODE\n"
		       "       graft explain REPORT.json --html OUT.html   (the audit as a page)\n"
		       "Where a node came from and which rules touched it: every firing in the report\n"
		       "(from graft optimize --report) that matched, created or removed NODE, with the\n"
		       "input nodes a created node stands for.  NODE is a node name, or Op#index for an\n"
		       "unnamed node of the input model.\n");
		return EXIT_OK;
	}
	Diag d;
	diag_init(&d, stderr);
	if (argc == 4 && strcmp(argv[2], "--html") == 0)
		return html_render(argv[1], argv[3], &d) ? EXIT_OK : EXIT_INPUT;
	if (argc != 3)
		return usage_error("explain: expected REPORT.json and NODE%s", "");
	int hits = audit_explain(argv[1], argv[2], stdout, &d);
	return hits < 0 ? EXIT_INPUT : EXIT_OK;
}

/* ---- shapes ------------------------------------------------------------------ */

static int cmd_shapes(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: graft shapes MODEL\n"
		       "Infers the dtype and shape of every value and prints one line per value,\n"
		       "'name: dtype[d0,d1,...]', with symbolic dims by name and unknown dims as '?'\n"
		       "(a scalar is 'float[]', an unknown rank 'float[*]').  Exit 1 if the model's\n"
		       "shapes contradict its ops.\n");
		return EXIT_OK;
	}
	if (argc != 2)
		return usage_error("shapes: expected one MODEL%s", "");
	IrModel *m = load(argv[1]);
	if (!m)
		return EXIT_INPUT;
	Diag d;
	diag_init(&d, stderr);
	InferState *s = infer_new(m);
	bool ok = infer_model(s, &d);
	infer_print(m, stdout);
	infer_free(s);
	ir_model_free(m);
	return ok ? EXIT_OK : EXIT_INPUT;
}

/* ---- plan ------------------------------------------------------------------ */

static int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"input-shape", required_argument, NULL, 'i'},
		{"summary", no_argument, NULL, 's'},
		{"no-alias", no_argument, NULL, 'n'},
		{"repeat", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	enum { MAX_SHAPES = 64 };
	const char *names[MAX_SHAPES];
	int64_t dims[MAX_SHAPES][EV_MAX_RANK];
	const int64_t *dimp[MAX_SHAPES];
	int ranks[MAX_SHAPES], nshapes = 0, c;
	bool json = false, summary = false;
	int repeat = 1;
	PlanOptions po = {0};
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 's': summary = true; break;
		case 'n': po.no_alias = true; break;
		case 'r': {
			long long v;
			if (!parse_int_arg("--repeat", optarg, 1, 1000, &v))
				return EXIT_USAGE;
			repeat = (int)v;
			break;
		}
		case 'i': {
			char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || nshapes >= MAX_SHAPES)
				return usage_error("--input-shape expects NAME=D0,D1,..., got '%s'", optarg);
			*eq = 0;
			names[nshapes] = optarg;
			int r = 0;
			for (char *q = eq + 1; *q;) {
				char *comma = strchr(q, ',');
				if (comma)
					*comma = 0;
				long long v;
				bool ok = r < EV_MAX_RANK && parse_int_arg("--input-shape", q, 0, INT64_MAX, &v);
				if (comma)
					*comma = ',';
				if (!ok)
					return r < EV_MAX_RANK ? EXIT_USAGE : usage_error("--input-shape: too many sizes in '%s'", eq + 1);
				dims[nshapes][r++] = v;
				q = comma ? comma + 1 : q + strlen(q);
			}
			dimp[nshapes] = dims[nshapes];
			ranks[nshapes++] = r;
			break;
		}
		case 'h':
			printf("usage: graft plan MODEL [--input-shape NAME=D0,D1,...] [--json] [--summary]\n"
			       "Plans where every intermediate tensor of the main graph lives before running:\n"
			       "lifetimes over the saved node order, Reshape/Squeeze/Unsqueeze/Flatten outputs\n"
			       "as views of their input, elementwise outputs written in place over an input of\n"
			       "the same size that dies there, and offsets in one arena (several greedy\n"
			       "strategies tried, the smallest kept).  Sizes are numel x element size rounded\n"
			       "up to %d bytes.  Prints the arena (peak), the live-set lower bound for this\n"
			       "schedule, one-buffer-per-tensor (naive), the buffers alive at the peak, then\n"
			       "one line per tensor: step, node, bytes, offset, lifetime, and how it is placed.\n"
			       "Graph inputs and initializers are not planned.  docs/memory-plan.md.\n"
			       "  --input-shape NAME=D0,D1,...   the shape of an input with symbolic dims\n"
			       "                                 (repeatable); without it such a model is refused,\n"
			       "                                 naming the unknown dims\n"
			       "  --json        the plan as JSON (peak_bytes, lower_bound_bytes, naive_bytes,\n"
			       "                strategies, peak_tensors, schedule, tensors_planned)\n"
			       "  --summary     the figures only, not the per-tensor table\n"
			       "  --no-alias    no in-place reuse and no views (to see what they save)\n"
			       "  --repeat N    plan N times; the planning time reported is the fastest\n"
			       "                (the machine's noise aside), the median beside it\n",
			       PLAN_ALIGN);
			return EXIT_OK;
		default:
			return usage_error("plan: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("plan: expected one MODEL%s", "");
	IrModel *m = load(argv[optind]);
	if (!m)
		return EXIT_INPUT;
	Diag d;
	diag_init(&d, stderr);
	int rc = EXIT_INPUT;
	Plan p;
	char unknown[1024];
	if (!plan_bind_inputs(m, names, dimp, ranks, nshapes, &d))
		goto done;
	if (plan_unknown_inputs(m, unknown, sizeof unknown)) {
		diag_error(&d, m->path, "input dims unknown: %s; give each with --input-shape NAME=D0,D1,...", unknown);
		goto done;
	}
	if (!plan_model(m, &po, &p, &d))
		goto done;
	if (repeat > 1) {
		double times[repeat];
		times[0] = p.seconds;
		for (int r = 1; r < repeat; r++) {
			Plan again;
			if (!plan_model(m, &po, &again, &d)) {
				plan_free(&p);
				goto done;
			}
			times[r] = again.seconds;
			plan_free(&again);
		}
		for (int i = 1; i < repeat; i++) /* insertion sort: a handful of numbers */
			for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
				double t = times[j];
				times[j] = times[j - 1];
				times[j - 1] = t;
			}
		p.seconds = times[0];
		if (!json)
			printf("planning     fastest of %d runs %.3f ms, median %.3f ms\n", repeat, times[0] * 1e3,
			       times[repeat / 2] * 1e3);
	}
	if (json) {
		char *text = plan_json(&p, !summary);
		printf("%s\n", text);
		free(text);
	} else {
		plan_print(&p, stdout, !summary);
	}
	plan_free(&p);
	rc = EXIT_OK;
done:
	ir_model_free(m);
	return rc;
}

/* ---- ops ------------------------------------------------------------------- */

static int cmp_kernel(const void *a, const void *b)
{
	return strcmp((*(const EvKernel *const *)a)->op, (*(const EvKernel *const *)b)->op);
}

static int cmd_ops(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: graft ops\nLists the ops graft's evaluator computes, with the element types of each.\n");
		return EXIT_OK;
	}
	if (argc != 1)
		return usage_error("ops: takes no arguments%s", "");
	size_t n;
	const EvKernel *const *all = ev_kernels_all(&n);
	const EvKernel **sorted = malloc(sizeof *sorted * (n + 1));
	memcpy(sorted, all, sizeof *sorted * n);
	qsort(sorted, n, sizeof *sorted, cmp_kernel);
	for (size_t i = 0; i < n; i++) {
		printf("%-28s", sorted[i]->op);
		for (int dt = 1; dt < DT_COUNT; dt++)
			if (sorted[i]->dtypes & (1u << dt))
				printf(" %s", dtype_name(dt));
		printf("\n");
	}
	printf("%zu ops\n", n);
	free(sorted);
	return EXIT_OK;
}

/* ---- verify ------------------------------------------------------------------ */

static int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seed", required_argument, NULL, 's'},
		{"instances", required_argument, NULL, 'n'},
		{"tries", required_argument, NULL, 't'},
		{"out", required_argument, NULL, 'o'},
		{"rule", required_argument, NULL, 'r'},
		{"verbose", no_argument, NULL, 'v'},
		{"keep", required_argument, NULL, 'k'},
		{"max-memory", required_argument, NULL, 'm'},
		{"no-library", no_argument, NULL, 'N'},
		{"strict", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	VerifyOptions vo = {.out = stdout};
	bool no_library = false;
	bool strict = false;
	const char *only[128];
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:hv", opts, NULL)) != -1) {
		switch (c) {
		case 's': case 'n': case 't': case 'k': {
			long long v;
			const char *flag = c == 's' ? "--seed" : c == 'n' ? "--instances" : c == 't' ? "--tries" : "--keep";
			if (!parse_int_arg(flag, optarg, c == 's' || c == 'k' ? 0 : 1, c == 's' ? INT64_MAX : 1000000, &v))
				return EXIT_USAGE;
			if (c == 's')
				vo.seed = v;
			else if (c == 'n')
				vo.instances = (int)v;
			else if (c == 't')
				vo.tries = (int)v;
			else
				vo.keep = (int)v;
			break;
		}
		case 'm': {
			long long v;
			if (!parse_int_arg("--max-memory", optarg, 1, INT64_MAX, &v))
				return EXIT_USAGE;
			vo.max_memory = (size_t)v;
			break;
		}
		case 'o': vo.out_dir = optarg; break;
		case 'v': vo.verbose = true; break;
		case 'N': no_library = true; break;
		case 'S': strict = true; break;
		case 'r':
			if (vo.nonly >= 128)
				return usage_error("too many --rule%s", "");
			only[vo.nonly++] = optarg;
			break;
		case 'h':
			printf("usage: graft verify FILE.rules... [options]\n"
			       "Tries every rule of the files on graphs generated from its left side (dtypes,\n"
			       "ranks 0-6, broadcasting shapes, attribute values at the boundaries of the\n"
			       "guard and of the op's shape arithmetic, data at the edges: 0, -0, 1, -1, huge,\n"
			       "tiny, denormal, inf, NaN), runs each graph where the rule fires before and\n"
			       "after the rewrite on the reference evaluator, and compares the outputs: dtype,\n"
			       "shape and every bit (NaN agrees with NaN), or within the rule's [tolerance X]\n"
			       "(inf, -inf and NaN still where they were).  One line per rule: verified (with\n"
			       "the element types, rank classes and opset forms it fired on), WRONG (the\n"
			       "counterexample saved as ONNX, before and after, and printed), or not exercised\n"
			       "(it never fired, with the condition that failed most often).  Exit 0 only when\n"
			       "every rule is verified.\n"
			       "  --seed N            the draws (default 0); the same seed, the same instances\n"
			       "  --instances N       firing instances wanted in each element type, rank class\n"
			       "                      and opset form a rule fires in (default 100)\n"
			       "  --tries N           most graphs generated per rule (default 10000)\n"
			       "  --strict            a rule verified with fewer firings than wanted in one of\n"
			       "                      those is an error too (exit 1), not only a warning\n"
			       "  --rule NAME         verify only this rule (repeatable)\n"
			       "  -o, --out DIR       where counterexamples go (default graft-verify/)\n"
			       "  --keep N            also save each rule's first N firing graphs, before and after,\n"
			       "                      to DIR (RULE.K.onnx, RULE.K.rewritten.onnx), to run elsewhere\n"
			       "  -v, --verbose       per rule, the tries and why graphs were dropped\n"
			       "  --max-memory N      the most bytes of tensors an instance may hold at once\n"
			       "                      (default 1 GiB); an instance that needs more is dropped\n"
			       "  --no-library        the rules will run without the library (optimize --no-library):\n"
			       "                      no warning for a rule named like one of the library's\n");
			return EXIT_OK;
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	vo.only = only;
	if (optind >= argc)
		return usage_error("verify: expected rules files%s", "");
	Diag d;
	diag_init(&d, stderr);
	return graft_verify_files((const char *const *)argv + optind, argc - optind, &vo, no_library, strict, &d);
}

/* Called when graft must stop at once (a mapped input shrank: SIGBUS; out
 * of memory): async-signal-safe only.  Removes the temporary output files. */
static void (*const emergency_cleanup)(void) = out_remove_pending;

static void out_of_memory(void)
{
	static const char msg[] = "graft: out of memory\n";
	ssize_t r = write(2, msg, sizeof msg - 1);
	(void)r;
	if (emergency_cleanup)
		emergency_cleanup();
	_exit(EXIT_INPUT);
}

int main(int argc, char **argv)
{
	out_catch_signals();
	fileset_init(&run_files);
	/* a model file truncated while mapped: one line, not SIGBUS */
	ir_guard_mapped_inputs(emergency_cleanup);
	ev_set_oom_handler(out_of_memory);
	if (argc < 2)
		return usage_error("missing command%s", "");
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage_text, stdout);
		return EXIT_OK;
	}
	if (strcmp(cmd, "info") == 0)
		return cmd_info(argc - 1, argv + 1);
	if (strcmp(cmd, "print") == 0)
		return cmd_print(argc - 1, argv + 1);
	if (strcmp(cmd, "roundtrip") == 0)
		return cmd_roundtrip(argc - 1, argv + 1);
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "compare") == 0)
		return cmd_compare(argc - 1, argv + 1);
	if (strcmp(cmd, "ops") == 0)
		return cmd_ops(argc - 1, argv + 1);
	if (strcmp(cmd, "fold") == 0)
		return cmd_fold(argc - 1, argv + 1);
	if (strcmp(cmd, "convert") == 0)
		return cmd_convert(argc - 1, argv + 1);
	if (strcmp(cmd, "optimize") == 0)
		return cmd_optimize(argc - 1, argv + 1);
	if (strcmp(cmd, "explain") == 0)
		return cmd_explain(argc - 1, argv + 1);
	if (strcmp(cmd, "shapes") == 0)
		return cmd_shapes(argc - 1, argv + 1);
	if (strcmp(cmd, "plan") == 0)
		return cmd_plan(argc - 1, argv + 1);
	if (strcmp(cmd, "verify") == 0)
		return cmd_verify(argc - 1, argv + 1);
	return usage_error("unknown command '%s'", cmd);
}
