/* conformance.c - runs ONNX's backend tests (model.onnx plus
 * test_data_set_N/{input,output}_K.pb folders, as in libonnx-testdata) on the
 * evaluator and compares with the expected outputs at ONNX's tolerances
 * (|got - want| <= atol + rtol * |want|, rtol 1e-3, atol 1e-7; NaN equals
 * NaN; integers, bools and strings exactly).
 *
 * Each test is counted under its op: the single node's op, or for composite
 * tests (e.g. *_expanded) the op named by the test.  A test is unsupported
 * when some node has no kernel; excluded when the exclusion file names it. */
#include "conformance.h"
#include "run.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct Exclusion {
	char *test;
	char *reason;
} Exclusion;

/* ---- helpers ---------------------------------------------------------------- */

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted subdirectory names of dir. */
static char **list_dirs(const char *dir, size_t *n)
{
	DIR *dp = opendir(dir);
	char **names = NULL;
	size_t cnt = 0;
	if (dp) {
		struct dirent *de;
		while ((de = readdir(dp))) {
			if (de->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
			if (!is_dir(path))
				continue;
			names = realloc(names, sizeof *names * (cnt + 1));
			names[cnt++] = strdup(de->d_name);
		}
		closedir(dp);
	}
	if (cnt)
		qsort(names, cnt, sizeof *names, cmp_str);
	*n = cnt;
	return names;
}

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

/* The op a test is about: the only node's op, else the longest op name that
 * the test name starts with (ignoring case and underscores). */
static const char *primary_op(IrModel *m, const char *test)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	if (g->nnodes == 1)
		return ir_node(m, g->first)->op_type;
	char flat[256];
	size_t k = 0;
	for (const char *s = strncmp(test, "test_", 5) == 0 ? test + 5 : test; *s && k + 1 < sizeof flat; s++)
		if (*s != '_')
			flat[k++] = (char)tolower((unsigned char)*s);
	flat[k] = 0;
	size_t nall;
	const OpSchema *all = op_schema_all(&nall);
	const char *best = NULL;
	size_t bestlen = 0;
	for (size_t i = 0; i < nall; i++) {
		if (*all[i].domain)
			continue;
		const char *op = all[i].name;
		size_t len = strlen(op);
		if (len <= bestlen || len > k)
			continue;
		size_t j = 0;
		while (j < len && tolower((unsigned char)op[j]) == flat[j])
			j++;
		if (j == len) {
			best = op;
			bestlen = len;
		}
	}
	return best ? best : "(composite)";
}

/* First node (any graph) with no kernel, or NULL. */
static const char *missing_kernel(IrModel *m)
{
	for (NodeId n = 1; n < m->nnodes; n++) {
		IrNode *node = ir_node(m, n);
		if (!node->dead && !ev_kernel_find(node->domain, node->op_type))
			return node->op_type;
	}
	return NULL;
}

/* ---- comparing ------------------------------------------------------------- */

static bool close_enough(double got, double want)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want))
		return got == want;
	return fabs(got - want) <= 1e-7 + 1e-3 * fabs(want);
}

/* NULL if equal, else a description in buf. */
static const char *compare(const EvValue *got, const EvValue *want, char *buf, size_t size)
{
	if (got->kind != want->kind) {
		snprintf(buf, size, "kind %d, expected %d", got->kind, want->kind);
		return buf;
	}
	if (want->kind == EV_NONE)
		return NULL;
	if (want->kind == EV_SEQUENCE) {
		if (got->nitems != want->nitems) {
			snprintf(buf, size, "sequence of %d, expected %d", got->nitems, want->nitems);
			return buf;
		}
		for (int i = 0; i < want->nitems; i++)
			if (compare(got->items[i], want->items[i], buf, size))
				return buf;
		return NULL;
	}
	if (got->dtype != want->dtype) {
		snprintf(buf, size, "dtype %s, expected %s", dtype_name(got->dtype), dtype_name(want->dtype));
		return buf;
	}
	if (got->rank != want->rank || memcmp(got->dims, want->dims, sizeof *got->dims * (size_t)got->rank) != 0) {
		int n = snprintf(buf, size, "shape [");
		for (int i = 0; i < got->rank && (size_t)n < size; i++)
			n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? "," : "", (long long)got->dims[i]);
		n += snprintf(buf + n, size - (size_t)n, "], expected [");
		for (int i = 0; i < want->rank && (size_t)n < size; i++)
			n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? "," : "", (long long)want->dims[i]);
		snprintf(buf + n, size - (size_t)n, "]");
		return buf;
	}
	for (int64_t i = 0; i < want->numel; i++) {
		bool ok;
		if (want->dtype == DT_STRING)
			ok = strcmp(((char **)got->data)[i], ((char **)want->data)[i]) == 0;
		else if (ev_is_float(want->dtype))
			ok = close_enough(ev_get_f(got, i), ev_get_f(want, i));
		else if (want->dtype == DT_UINT64)
			ok = ev_get_u(got, i) == ev_get_u(want, i);
		else if (dtype_bits(want->dtype) == 4)
			ok = ((const uint8_t *)got->data)[i / 2] == ((const uint8_t *)want->data)[i / 2];
		else
			ok = ev_get_i(got, i) == ev_get_i(want, i);
		if (!ok) {
			if (want->dtype == DT_STRING)
				snprintf(buf, size, "element %lld is \"%s\", expected \"%s\"", (long long)i,
				         ((char **)got->data)[i], ((char **)want->data)[i]);
			else
				snprintf(buf, size, "element %lld is %.9g, expected %.9g", (long long)i, ev_get_f(got, i), ev_get_f(want, i));
			return buf;
		}
	}
	return NULL;
}

/* ONNX 1.12's test data stores bfloat16 tensors as uint16: take the graph's
 * declared type. */
static void relabel_bf16(IrModel *m, ValueId v, EvValue *x)
{
	if (x && x->kind == EV_TENSOR && x->dtype == DT_UINT16 && ir_value(m, v)->dtype == DT_BFLOAT16)
		x->dtype = DT_BFLOAT16;
}

/* ---- one test ------------------------------------------------------------------ */

typedef enum { T_PASS, T_FAIL, T_UNSUPPORTED, T_EXCLUDED } TestStatus;


static TestStatus run_dataset(IrModel *m, const char *dir, char *why, size_t size)
{
	Diag d;
	diag_init(&d, NULL);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ValueId *fed = calloc(g->ninputs + 1, sizeof *fed);
	if (!fed)
		abort();
	uint32_t nfed = run_fed_inputs(m, fed); /* inputs that are not initializers */
	const EvValue **inputs = calloc(g->ninputs + 1, sizeof *inputs);
	EvValue **loaded = calloc(g->ninputs + 1, sizeof *loaded);
	EvValue **outputs = calloc(g->noutputs + 1, sizeof *outputs);
	TestStatus st = T_PASS;
	uint32_t k = 0;
	for (;; k++) {
		char path[4600];
		snprintf(path, sizeof path, "%s/input_%u.pb", dir, k);
		if (!exists(path))
			break;
		if (k >= nfed) {
			snprintf(why, size, "%.300s: more input files than graph inputs", dir);
			st = T_FAIL;
			goto done;
		}
		loaded[k] = ev_load_pb(path, ev_declared_kind(m, fed[k]), NULL, &d);
		relabel_bf16(m, fed[k], loaded[k]);
		if (!loaded[k]) {
			snprintf(why, size, "%.1000s", d.first);
			st = T_FAIL;
			goto done;
		}
	}
	/* place each fed value at its graph-input position */
	for (uint32_t i = 0, f = 0; i < g->ninputs; i++)
		if (f < nfed && g->inputs[i] == fed[f])
			inputs[i] = loaded[f++];
	if (!ev_run(m, inputs, g->ninputs, outputs, NULL, &d)) {
		snprintf(why, size, "%.1000s", d.first);
		st = T_FAIL;
		goto done;
	}
	for (uint32_t i = 0; i < g->noutputs; i++) {
		char path[4600], msg[512];
		snprintf(path, sizeof path, "%s/output_%u.pb", dir, i);
		if (!exists(path))
			continue;
		EvValue *want = ev_load_pb(path, ev_declared_kind(m, g->outputs[i]), NULL, &d);
		relabel_bf16(m, g->outputs[i], want);
		if (!want) {
			snprintf(why, size, "%.1000s", d.first);
			st = T_FAIL;
			goto done;
		}
		const char *diff = compare(outputs[i], want, msg, sizeof msg);
		ev_unref(want);
		if (diff) {
			snprintf(why, size, "%.300s: output %u ('%.100s'): %.400s", dir, i, ir_value(m, g->outputs[i])->name, diff);
			st = T_FAIL;
			goto done;
		}
	}
done:
	for (uint32_t i = 0; i < g->ninputs; i++)
		ev_unref(loaded[i]);
	for (uint32_t i = 0; i < g->noutputs; i++)
		ev_unref(outputs[i]);
	free(fed);
	free(inputs);
	free(loaded);
	free(outputs);
	return st;
}

/* ---- the run ------------------------------------------------------------------- */

static ConfOp *op_entry(ConfSummary *s, const char *op)
{
	for (size_t i = 0; i < s->nops; i++)
		if (strcmp(s->ops[i].op, op) == 0)
			return &s->ops[i];
	s->ops = realloc(s->ops, sizeof *s->ops * (s->nops + 1));
	ConfOp *e = &s->ops[s->nops++];
	memset(e, 0, sizeof *e);
	snprintf(e->op, sizeof e->op, "%s", op);
	return e;
}

static Exclusion *load_exclusions(const char *path, size_t *n)
{
	*n = 0;
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f)
		return NULL;
	Exclusion *ex = NULL;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s || *s == '#')
			continue;
		char *end = s;
		while (*end && !isspace((unsigned char)*end))
			end++;
		char *reason = end;
		if (*reason)
			*reason++ = 0;
		while (isspace((unsigned char)*reason))
			reason++;
		reason[strcspn(reason, "\n")] = 0;
		ex = realloc(ex, sizeof *ex * (*n + 1));
		ex[*n].test = strdup(s);
		ex[*n].reason = strdup(reason);
		(*n)++;
	}
	fclose(f);
	return ex;
}

static bool wanted(const ConfOptions *o, const char *test, const char *op)
{
	if (o->filter && !strstr(test, o->filter))
		return false;
	if (o->nonly == 0)
		return true;
	for (int i = 0; i < o->nonly; i++)
		if (strcmp(o->only[i], op) == 0)
			return true;
	return false;
}

static void run_test(const char *root, const char *name, const ConfOptions *o, ConfSummary *s,
                     const Exclusion *ex, size_t nex)
{
	char dir[4096], model[4200];
	snprintf(dir, sizeof dir, "%s/%s", root, name);
	snprintf(model, sizeof model, "%s/model.onnx", dir);
	if (!exists(model))
		return;
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(model, NULL, &d);
	const char *op = m ? primary_op(m, name) : "(unloadable)";
	if (!wanted(o, name, op)) {
		ir_model_free(m);
		return;
	}
	ConfOp *e = op_entry(s, op);
	e->total++;
	s->total++;
	for (size_t i = 0; i < nex; i++)
		if (strcmp(ex[i].test, name) == 0) {
			e->excluded++;
			s->excluded++;
			if (o->verbose && o->out)
				fprintf(o->out, "excluded     %s: %s\n", name, ex[i].reason);
			ir_model_free(m);
			return;
		}
	if (!m) {
		e->failed++;
		s->failed++;
		if (o->out)
			fprintf(o->out, "FAIL         %s: %s\n", name, d.first);
		return;
	}
	const char *missing = missing_kernel(m);
	if (missing) {
		e->unsupported++;
		s->unsupported++;
		if (o->verbose && o->out)
			fprintf(o->out, "unsupported  %s: no kernel for %s\n", name, missing);
		ir_model_free(m);
		return;
	}
	size_t nsets;
	char **sets = list_dirs(dir, &nsets);
	TestStatus st = T_PASS;
	char why[1024] = "";
	for (size_t i = 0; i < nsets && st == T_PASS; i++) {
		if (strncmp(sets[i], "test_data_set_", 14) != 0)
			continue;
		char setdir[4400];
		snprintf(setdir, sizeof setdir, "%s/%s", dir, sets[i]);
		st = run_dataset(m, setdir, why, sizeof why);
	}
	free_list(sets, nsets);
	if (st == T_PASS) {
		e->passed++;
		s->passed++;
		if (o->verbose && o->out)
			fprintf(o->out, "pass         %s\n", name);
	} else {
		e->failed++;
		s->failed++;
		if (o->out)
			fprintf(o->out, "FAIL         %s: %s\n", name, why);
	}
	ir_model_free(m);
}

static int cmp_op(const void *a, const void *b)
{
	return strcmp(((const ConfOp *)a)->op, ((const ConfOp *)b)->op);
}

bool conf_run(const char *const *roots, int nroots, const ConfOptions *o, ConfSummary *s)
{
	memset(s, 0, sizeof *s);
	size_t nex;
	Exclusion *ex = load_exclusions(o->exclusions, &nex);
	for (int r = 0; r < nroots; r++) {
		if (!is_dir(roots[r])) {
			if (o->out)
				fprintf(o->out, "conformance: %s: not a folder\n", roots[r]);
			continue;
		}
		/* a folder of tests, or a folder of such folders (node/, simple/, ...) */
		char probe[4096];
		size_t n;
		char **names = list_dirs(roots[r], &n);
		for (size_t i = 0; i < n; i++) {
			snprintf(probe, sizeof probe, "%s/%s/model.onnx", roots[r], names[i]);
			if (exists(probe)) {
				run_test(roots[r], names[i], o, s, ex, nex);
			} else {
				char sub[4096];
				snprintf(sub, sizeof sub, "%s/%s", roots[r], names[i]);
				size_t n2;
				char **names2 = list_dirs(sub, &n2);
				for (size_t j = 0; j < n2; j++)
					run_test(sub, names2[j], o, s, ex, nex);
				free_list(names2, n2);
			}
		}
		free_list(names, n);
	}
	for (size_t i = 0; i < nex; i++) {
		free(ex[i].test);
		free(ex[i].reason);
	}
	free(ex);
	if (s->nops)
		qsort(s->ops, s->nops, sizeof *s->ops, cmp_op);
	return s->failed == 0;
}

void conf_print_summary(const ConfSummary *s, FILE *out)
{
	fprintf(out, "%-28s %7s %7s %7s %11s %8s\n", "op", "tests", "passed", "failed", "unsupported", "excluded");
	for (size_t i = 0; i < s->nops; i++) {
		const ConfOp *e = &s->ops[i];
		fprintf(out, "%-28s %7u %7u %7u %11u %8u\n", e->op, e->total, e->passed, e->failed, e->unsupported, e->excluded);
	}
	unsigned supported = s->total - s->unsupported - s->excluded;
	fprintf(out, "total: %u tests; supported %u: %u passed, %u failed; %u unsupported; %u excluded\n",
	        s->total, supported, s->passed, s->failed, s->unsupported, s->excluded);
}

void conf_summary_free(ConfSummary *s)
{
	free(s->ops);
	memset(s, 0, sizeof *s);
}
