/* check_resources.c - what graft does with inputs that would hang it or
 * exhaust the machine (issue 24): FIFOs and oversized files as models and
 * rules files, folds over the size cap or the fold budget, runs over the
 * memory limit, a mapped model file that shrinks (SIGBUS), the pages of
 * mapped weights after CSE's sampled hash, and rule files whose checks used
 * to be quadratic. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dsl/ast.h"
#include "runtime/eval/eval.h"
#include "runtime/engine/fold.h"
#include "ir/ir.h"
#include "runtime/engine/rw_interp.h"
#include "testutil.h"
#include "ir/text.h"

static char *tmp;

static void setup(void)
{
	tmp = temp_dir();
}

static void teardown(void)
{
	rm_rf(tmp);
	free(tmp);
	tmp = NULL;
}

static char *tpath(const char *name)
{
	size_t n = strlen(tmp) + strlen(name) + 2;
	char *p = malloc(n);
	snprintf(p, n, "%s/%s", tmp, name);
	return p;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}


/* ---- files that are not files ------------------------------------------------ */

START_TEST(test_fifo_model)
{
	char *p = tpath("m.onnx");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	double t0 = now();
	char want[4200];
	snprintf(want, sizeof want, "%s: not a regular file", p);
	ck_assert_str_eq(load_error(p), want);
	ck_assert_msg(now() - t0 < 5, "refusing a FIFO took %.1f s", now() - t0);
	free(p);
}
END_TEST

START_TEST(test_fifo_rules)
{
	char *p = tpath("r.rules");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	uint32_t len;
	int err = 0;
	ck_assert_ptr_null(dsl_read_file(p, &len, &err));
	ck_assert_int_eq(err, DSL_READ_NOT_REGULAR);
	/* and as graft optimize --rules loads it */
	Diag d;
	diag_init(&d, NULL);
	const char *paths[] = {p};
	ck_assert_ptr_null(rw_rules_load(paths, 1, "rules", NULL, 0, &d));
	char want[4200];
	snprintf(want, sizeof want, "%s: not a regular file", p);
	ck_assert_str_eq(d.first, want);
	free(p);
}
END_TEST

START_TEST(test_fifo_text_model_cli)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *p = tpath("m.onnxtxt");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	char cmd[8300], *out, want[4200];
	snprintf(cmd, sizeof cmd, "%s info %s", graft, p);
	ck_assert_int_eq(run_shell(cmd, &out), 1);
	snprintf(want, sizeof want, "%s: not a regular file\n", p);
	ck_assert_str_eq(out, want);
	free(out);
	free(p);
}
END_TEST

START_TEST(test_fifo_inputs_cli)
{
	/* graft run --inputs DIR with a FIFO for input_0.pb */
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *model = tpath("id.onnxtxt"), *dir = tpath("in"), *pb = tpath("in/input_0.pb");
	const char *text = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y) {\n"
	                   "  y = Identity (x)\n}\n";
	ck_assert(write_file(model, text, strlen(text)));
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(mkfifo(pb, 0600), 0);
	char cmd[9000], *out, want[4200];
	snprintf(cmd, sizeof cmd, "%s run %s --inputs %s", graft, model, dir);
	ck_assert_int_eq(run_shell(cmd, &out), 1);
	snprintf(want, sizeof want, "%s: not a regular file\n", pb);
	ck_assert_str_eq(out, want);
	free(out);
	free(model);
	free(dir);
	free(pb);
}
END_TEST

/* A sparse file of `size` bytes (no disk blocks). */
static char *sparse(const char *name, off_t size)
{
	char *p = tpath(name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	close(fd);
	return p;
}

START_TEST(test_rules_too_large)
{
	/* refused from its size: nothing read (a read of 65 MiB of zeros would
	 * take its time and memory) */
	char *p = sparse("big.rules", (off_t)DSL_MAX_FILE + 1);
	uint32_t len;
	int err = 0;
	ck_assert_ptr_null(dsl_read_file(p, &len, &err));
	ck_assert_int_eq(err, DSL_READ_TOO_LARGE);
	Diag d;
	diag_init(&d, NULL);
	const char *paths[] = {p};
	ck_assert_ptr_null(rw_rules_load(paths, 1, "rules", NULL, 0, &d));
	char want[4200];
	snprintf(want, sizeof want, "%s: too large (over 64 MiB)", p);
	ck_assert_str_eq(d.first, want);
	free(p);
	/* exactly the limit is read (and is not rules: an error of another kind) */
	p = sparse("limit.rules", 100);
	char *text = dsl_read_file(p, &len, &err);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(len, 100);
	free(text);
	free(p);
}
END_TEST

START_TEST(test_model_too_large)
{
	char *p = sparse("big.onnx", (off_t)IR_MAX_MODEL_FILE + 1);
	char want[4200];
	snprintf(want, sizeof want, "%s: too large: 2147483648 bytes, over protobuf's 2 GiB limit (larger models "
	         "keep their weights in external data files)", p);
	ck_assert_str_eq(load_error(p), want);
	free(p);
}
END_TEST

/* ---- folding: the size cap before allocation, the fold budget ---------------- */

static const char tile_1e9[] =
	"<ir_version: 8, opset_import: [\"\" : 17]>\n"
	"g () => (float[1000000000] y) {\n"
	"  x = Constant <value = float[10] {1,2,3,4,5,6,7,8,9,10}> ()\n"
	"  r = Constant <value = int64[1] {100000000}> ()\n"
	"  y = Tile (x, r)\n"
	"}\n";

START_TEST(test_fold_tile_refused_before_allocating)
{
	/* 4 GB of result, 1 GB cap: refused from the predicted size, so the
	 * peak memory hardly moves (it was 3.9 GB).  In a child, so that the
	 * peak is this fold's. */
	IrModel *m = parse_text_model(tile_1e9);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rusage before, after;
		getrusage(RUSAGE_SELF, &before);
		FoldOptions o = {.max_bytes = FOLD_DEFAULT_MAX_BYTES, .report_errors = true};
		FoldStats st;
		Diag d;
		diag_init(&d, NULL);
		bool ok = fold_model(m, &o, &st, &d);
		getrusage(RUSAGE_SELF, &after);
		long grew_kb = after.ru_maxrss - before.ru_maxrss;
		const char *want = "t.onnx: node 'Tile#2' (Tile) not folded: its result would take 4000000000 bytes, "
		                   "over the size cap of 1073741824 (--max-bytes)";
		int rc = !ok ? 2 : st.over_cap != 1 || st.folded != 0 ? 3 : strcmp(d.last, want) ? 4 :
		         grew_kb > 64 * 1024 ? 5 : 0;
		ir_model_free(m); /* the child's copy: make valgrind see no leak */
		_exit(rc);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d (2: fold failed, 3: stats, "
	              "4: message, 5: memory grew over 64 MiB)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	ir_model_free(m);
}
END_TEST

/* n Tiles of the same 10 floats, each `times` times: n results of 40 * times bytes. */
static IrModel *tiles(int n, long times)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "<ir_version: 8, opset_import: [\"\" : 17]>\ng () => (");
	for (int i = 0; i < n; i++)
		fprintf(f, "%sfloat[%ld] y%d", i ? ", " : "", 10 * times, i);
	fprintf(f, ") {\n  x = Constant <value = float[10] {1,2,3,4,5,6,7,8,9,10}> ()\n"
	           "  r = Constant <value = int64[1] {%ld}> ()\n", times);
	for (int i = 0; i < n; i++)
		fprintf(f, "  y%d = Tile (x, r)\n", i);
	fprintf(f, "}\n");
	fclose(f);
	IrModel *m = parse_text_model(text);
	free(text);
	return m;
}

static unsigned count_op(IrModel *m, const char *op)
{
	unsigned k = 0;
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	for (NodeId n = g->first; n; n = ir_next(m, n))
		k += strcmp(ir_node(m, n)->op_type, op) == 0;
	return k;
}

START_TEST(test_fold_budget)
{
	/* 12 Tiles of 400,000 bytes each, a budget of 1,000,000 bytes: two are
	 * folded, the other ten stay, each with its reason */
	IrModel *m = tiles(12, 10000);
	FoldOptions o = {.max_bytes = FOLD_DEFAULT_MAX_BYTES, .max_total_bytes = 1000000, .report_errors = true};
	FoldStats st;
	Diag d;
	diag_init(&d, NULL);
	ck_assert(fold_model(m, &o, &st, &d));
	ck_assert_uint_eq(st.folded, 2);
	ck_assert_uint_eq(st.over_budget, 10);
	ck_assert_uint_eq(count_op(m, "Tile"), 10);
	ck_assert_int_eq(d.nwarnings, 10);
	ck_assert_str_eq(d.last, "t.onnx: node 'Tile#13' (Tile) not folded: its 400000 bytes would bring what folding "
	                         "added to the model to 1200000 bytes, over the fold budget of 1000000 (--max-fold-bytes)");
	ir_model_free(m);

	/* the default: the model's initializer bytes, at least 64 MiB */
	m = tiles(12, 10000);
	ck_assert_uint_eq(fold_default_budget(m), FOLD_MIN_BUDGET);
	o = (FoldOptions){.max_bytes = FOLD_DEFAULT_MAX_BYTES};
	ck_assert(fold_model(m, &o, &st, &d));
	ck_assert_uint_eq(st.folded, 12); /* 4.8 MB in all: within it */
	ck_assert_uint_eq(st.over_budget, 0);
	ir_model_free(m);
}
END_TEST

START_TEST(test_fold_budget_default_cli)
{
	/* 12 Tiles of 16 MiB each: the default budget (64 MiB for this tiny
	 * model) lets 4 fold; optimize says how many were not done */
	const char *graft = cli_graft();
	if (!graft || heavy_skipped())
		return;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "<ir_version: 8, opset_import: [\"\" : 17]>\ng () => (");
	for (int i = 0; i < 12; i++)
		fprintf(f, "%sfloat[4194304] y%d", i ? ", " : "", i);
	fprintf(f, ") {\n  x = Constant <value = float[4] {1,2,3,4}> ()\n  r = Constant <value = int64[1] {1048576}> ()\n");
	for (int i = 0; i < 12; i++)
		fprintf(f, "  y%d = Tile (x, r)\n", i);
	fprintf(f, "}\n");
	fclose(f);
	char *in = tpath("tiles.onnxtxt"), *outp = tpath("out.onnx");
	ck_assert(write_file(in, text, len));
	char cmd[9000], *out;
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s --no-library", graft, in, outp);
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	ck_assert_msg(strstr(out, "fold: 8 folds not done: over the fold budget of 67108864 bytes added to the model "
	                          "(--max-fold-bytes)\n"), "%s", out);
	free(out);
	snprintf(cmd, sizeof cmd, "%s fold %s -o %s --overwrite --max-fold-bytes 20000000", graft, in, outp);
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	ck_assert_msg(strstr(out, "left alone: 0 over the size cap, 11 over the fold budget"), "%s", out);
	free(out);
	free(text);
	free(in);
	free(outp);
}
END_TEST

/* ---- the evaluator's memory limit ------------------------------------------------ */

START_TEST(test_run_memory_limit)
{
	IrModel *m = parse_text_model("<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                              "g (float[10] x, int64[1] r) => (float[N] y) {\n"
	                              "  y = Tile (x, r)\n"
	                              "}\n");
	int64_t ten = 10, one = 1;
	EvValue *x = ev_tensor_new(DT_FLOAT, 1, &ten), *r = ev_tensor_new(DT_INT64, 1, &one);
	((int64_t *)r->data)[0] = 100000000; /* 4 GB of output */
	const EvValue *in[] = {x, r};
	EvValue *out[1] = {0};
	ev_set_memory_limit(100000000);
	Diag d;
	diag_init(&d, NULL);
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	ck_assert(!ev_run(m, in, 2, out, NULL, &d));
	getrusage(RUSAGE_SELF, &after);
	ck_assert_int_lt(after.ru_maxrss - before.ru_maxrss, 64 * 1024);
	char want[512];
	snprintf(want, sizeof want, "t.onnx: node 'Tile#0' (Tile): needs 4000000000 more bytes with %zu in use, over "
	         "the memory limit of 100000000 bytes (--max-memory)", ev_memory_in_use());
	ck_assert_str_eq(d.first, want);
	ck_assert_int_eq(d.nerrors, 1);
	/* within the limit, the same model runs */
	((int64_t *)r->data)[0] = 1000;
	diag_init(&d, NULL);
	ck_assert_msg(ev_run(m, in, 2, out, NULL, &d), "%s", d.first);
	ck_assert_int_eq(out[0]->numel, 10000);
	ev_unref(out[0]);
	ev_set_memory_limit(0);
	ev_unref(x);
	ev_unref(r);
	ir_model_free(m);
}
END_TEST

START_TEST(test_run_memory_limit_cli)
{
	const char *graft = cli_graft();
	if (!graft)
		return;
	char *in = tpath("ones.onnxtxt");
	const char *text = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
	                   "g () => (float[1000000000] y) {\n"
	                   "  s = Constant <value = int64[1] {1000000000}> ()\n"
	                   "  y = ConstantOfShape (s)\n"
	                   "}\n";
	ck_assert(write_file(in, text, strlen(text)));
	char cmd[4500], *out, want[4500];
	snprintf(cmd, sizeof cmd, "%s run %s --max-memory 1000000", graft, in);
	ck_assert_int_eq(run_shell(cmd, &out), 1);
	/* in use: the kernel's default fill value, a float (s is the model's) */
	snprintf(want, sizeof want, "%s: node 'ConstantOfShape#1' (ConstantOfShape): needs 4000000000 more bytes with "
	         "4 in use, over the memory limit of 1000000 bytes (--max-memory)\n", in);
	ck_assert_str_eq(out, want);
	free(out);
	snprintf(cmd, sizeof cmd, "%s run %s --max-memory lots", graft, in);
	ck_assert_int_eq(run_shell(cmd, &out), 2);
	free(out);
	free(in);
}
END_TEST

/* ---- a mapped model file that shrinks -------------------------------------------- */

/* A model over 256 KiB (it is mapped, its weight pointing into the
 * mapping) saved to tpath(name); returns the path. */
static char *big_model_file(const char *name)
{
	enum { N = 100000 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[%d] x) => (float[%d] y) <float[%d] w = {", N, N, N);
	for (int i = 0; i < N; i++)
		fprintf(f, "%s%d", i ? "," : "", i % 7);
	fprintf(f, "}> {\n  y = Add (x, w)\n}\n");
	fclose(f);
	IrModel *src = parse_text_model(text);
	free(text);
	uint8_t *bytes;
	size_t nbytes;
	Diag d;
	diag_init(&d, NULL);
	ck_assert(ir_save_bytes(src, &bytes, &nbytes, &d));
	ir_model_free(src);
	ck_assert_uint_gt(nbytes, 256 << 10);
	char *p = tpath(name);
	ck_assert(write_file(p, bytes, nbytes));
	free(bytes);
	return p;
}

/* Truncate the file of model `last` (loaded from p, others mapped before
 * it), touch its weight in a child: the guard must turn SIGBUS into one
 * line naming p and exit status 1. */
static void expect_sigbus_line(IrModel *last, const char *p)
{
	IrGraph *g = ir_graph(last, IR_MAIN_GRAPH);
	const IrTensor *w = NULL;
	for (uint32_t i = 0; i < g->ninits && !w; i++)
		w = ir_tensor(last, ir_value(last, g->inits[i])->tensor);
	ck_assert_ptr_nonnull(w);
	const uint8_t *map = last->map;
	ck_assert_msg(map && w->data >= map && w->data + w->nbytes <= map + last->map_len,
	              "the weight does not point into the mapped file");
	char *errp = tpath("stderr.txt");
	ck_assert(ir_guard_mapped_inputs(NULL));
	ck_assert_int_eq(truncate(p, 0), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		volatile uint8_t sum = 0;
		for (size_t i = 0; i < w->nbytes; i += 4096)
			sum += w->data[i];
		_exit(sum == 255 ? 3 : 0); /* 0: no SIGBUS (the test fails) */
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	signal(SIGBUS, SIG_DFL);
	ck_assert_msg(WIFEXITED(status), "the child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	ck_assert_int_eq(WEXITSTATUS(status), 1);
	size_t elen;
	char *err = (char *)read_file(errp, &elen);
	ck_assert_ptr_nonnull(err);
	char want[4200];
	snprintf(want, sizeof want, "graft: %s: the file changed size while graft was reading it\n", p);
	ck_assert_uint_eq(elen, strlen(want));
	ck_assert(memcmp(err, want, elen) == 0);
	free(err);
	free(errp);
}

START_TEST(test_sigbus_shrunk_model)
{
	/* a model over 256 KiB is mapped and its weights point into the
	 * mapping; truncated behind graft's back, touching them raises SIGBUS,
	 * which the guard turns into one line and exit status 1 */
	char *p = big_model_file("big.onnx");
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(p, NULL, &d);
	ck_assert_msg(m != NULL, "%s", d.first);
	expect_sigbus_line(m, p);
	ir_model_free(m);
	free(p);
}
END_TEST

/* The same for the 20th file mapped at once (a model with external data
 * maps each data file, and torch's or onnx's savers may write one per
 * tensor): the guard held 16 and let the rest crash. */
START_TEST(test_sigbus_twentieth_mapping)
{
	enum { K = 20 };
	IrModel *m[K];
	char *p[K];
	Diag d;
	diag_init(&d, NULL);
	for (int i = 0; i < K; i++) {
		char name[32];
		snprintf(name, sizeof name, "big%d.onnx", i);
		p[i] = big_model_file(name);
		m[i] = ir_load_file(p[i], NULL, &d);
		ck_assert_msg(m[i] != NULL, "%s", d.first);
	}
	expect_sigbus_line(m[K - 1], p[K - 1]);
	for (int i = 0; i < K; i++) {
		ir_model_free(m[i]);
		free(p[i]);
	}
}
END_TEST

/* ---- pages of mapped weights after CSE's sampled hash ------------------------------- */

/* Minor page faults of reading one byte in every page of t's bytes. */
static long faults_reading(IrModel *m, TensorId t)
{
	size_t n;
	const volatile uint8_t *b = ir_tensor_raw(m, t, &n);
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	unsigned sum = 0;
	for (size_t i = 0; i < n; i += 4096)
		sum += b[i];
	getrusage(RUSAGE_SELF, &after);
	(void)sum;
	return after.ru_minflt - before.ru_minflt;
}

/* The model's one tensor of 100,000 floats (big_model_file's w). */
static TensorId weight_of(IrModel *m)
{
	for (TensorId t = 1; t < m->ntensors; t++)
		if (ir_tensor(m, t)->nbytes == 400000)
			return t;
	ck_abort_msg("no 400,000-byte tensor");
	return 0;
}

/* ir_tensor_evict_sampled keeps the pages of a model whose bytes are its
 * own file (mapped whole at load: a sample faulted nothing in, and the next
 * reader would fault them all back), and drops those of an external data
 * file as ir_tensor_evict does (mapped on demand). */
START_TEST(test_sampled_pages_kept_in_model_file)
{
	char *p = big_model_file("big.onnx"), *ext = tpath("ext.onnx");
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(p, NULL, &d);
	ck_assert_msg(m != NULL, "%s", d.first);
	TensorId w = weight_of(m);
	faults_reading(m, w);
	ir_tensor_evict_sampled(m, w);
	ck_assert_int_eq(faults_reading(m, w), 0);
	ir_tensor_evict(m, w); /* the saver's eviction still drops them */
	ck_assert_int_gt(faults_reading(m, w), 0);
	SaveOptions so = {.external = EXT_ALL, .ext_threshold = 256};
	ck_assert(ir_save_file(m, ext, &so, &d));
	ir_model_free(m);

	m = ir_load_file(ext, NULL, &d);
	ck_assert_msg(m != NULL, "%s", d.first);
	w = weight_of(m);
	ck_assert(ir_tensor(m, w)->external);
	faults_reading(m, w);
	ck_assert_int_eq(faults_reading(m, w), 0);
	ir_tensor_evict_sampled(m, w);
	ck_assert_int_gt(faults_reading(m, w), 0);
	ir_model_free(m);
	free(p);
	free(ext);
}
END_TEST

/* ---- large rule files ---------------------------------------------------------------- */

START_TEST(test_graftc_many_unused_variables)
{
	/* 5,000 bindings on one line, 4,999 of them unused: a warning each,
	 * each with a window of the line, not the whole line (was minutes) */
	const char *graftc = getenv("GRAFTC");
	if (!graftc)
		return;
	char *p = tpath("unused.rules"), *c = tpath("unused.c");
	FILE *f = fopen(p, "w");
	fprintf(f, "rule r: Concat(");
	for (int i = 1; i <= 5000; i++)
		fprintf(f, "%sx%d", i > 1 ? ", " : "", i);
	fprintf(f, ") => x1;\n");
	fclose(f);
	char cmd[9000], *out;
	snprintf(cmd, sizeof cmd, "%s %s -o %s", graftc, p, c);
	ck_assert_int_eq(run_shell(cmd, &out), 0);
	ck_assert_msg(strstr(out, "graftc: 0 errors, 4999 warnings"), "%.300s", out);
	/* the last warning's excerpt: a window around x5000, its caret under it */
	const char *last = strstr(out, "'x5000' is bound but never used\n");
	ck_assert_ptr_nonnull(last);
	const char *line = strchr(last, '\n') + 1, *caret = strchr(line, '\n') + 1;
	ck_assert_msg(strncmp(line, "    1 | ...", 11) == 0, "%.200s", line);
	ck_assert_int_lt(strchr(line, '\n') - line, 200);
	ck_assert_int_eq(strstr(line, "x5000") - line, strchr(caret, '^') - caret);
	free(out);
	free(p);
	free(c);
}
END_TEST

START_TEST(test_many_shadowed_rules)
{
	/* 3,000 copies of one rule: each copy after the first is shadowed by the
	 * first (compared once with it, not with every copy before it) */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "level basic;\n");
	for (int i = 1; i <= 3000; i++)
		fprintf(f, "rule r%d: Relu(Relu(x)) => Relu(x);\n", i);
	fclose(f);
	Diag d;
	diag_init(&d, NULL);
	RwRuleSet *set = rw_rules_load_text("many.rules", text, (uint32_t)len, "many", &d);
	ck_assert_msg(set != NULL, "%s", d.first);
	ck_assert_int_eq(d.nwarnings, 2999);
	ck_assert_str_eq(d.last, "many.rules:3001:6: warning: rule 'r3000' is shadowed by rule 'r1' (many.rules:2), "
	                         "tried first with a left side as general: 'r3000' never fires");
	rw_rules_free(set);
	free(text);
}
END_TEST

START_TEST(test_rule_too_wide)
{
	/* a rule whose Sum has 5,000 operands: refused when loaded, not a
	 * stack of 5,000 registers and operands at each match */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "level basic;\nrule wide: Sum(");
	for (int i = 0; i < 5000; i++)
		fprintf(f, "%sx%d", i ? ", " : "", i);
	fprintf(f, ") => Max(");
	for (int i = 0; i < 5000; i++)
		fprintf(f, "%sx%d", i ? ", " : "", i);
	fprintf(f, ");\n");
	fclose(f);
	Diag d;
	diag_init(&d, NULL);
	ck_assert_ptr_null(rw_rules_load_text("wide.rules", text, (uint32_t)len, "wide", &d));
	ck_assert_str_eq(d.first, "wide.rules: rule 'wide' (line 2) is too large for graft: 5001 operands or steps, "
	                          "the limit is 4096");
	free(text);
}
END_TEST

Suite *suite_resources(void)
{
	Suite *s = suite_create("resources");
	TCase *tc = tcase_create("files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fifo_model);
	tcase_add_test(tc, test_fifo_rules);
	tcase_add_test(tc, test_fifo_text_model_cli);
	tcase_add_test(tc, test_fifo_inputs_cli);
	tcase_add_test(tc, test_rules_too_large);
	tcase_add_test(tc, test_model_too_large);
	tcase_add_test(tc, test_sigbus_shrunk_model);
	tcase_add_test(tc, test_sigbus_twentieth_mapping);
	tcase_add_test(tc, test_sampled_pages_kept_in_model_file);
	suite_add_tcase(s, tc);
	tc = tcase_create("budgets");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_fold_tile_refused_before_allocating);
	tcase_add_test(tc, test_fold_budget);
	tcase_add_test(tc, test_fold_budget_default_cli);
	tcase_add_test(tc, test_run_memory_limit);
	tcase_add_test(tc, test_run_memory_limit_cli);
	suite_add_tcase(s, tc);
	tc = tcase_create("rule_files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_graftc_many_unused_variables);
	tcase_add_test(tc, test_many_shadowed_rules);
	tcase_add_test(tc, test_rule_too_wide);
	suite_add_tcase(s, tc);
	return s;
}
