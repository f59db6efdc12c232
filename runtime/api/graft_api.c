/* graft_api.c - graft's jobs as library calls (see graft_api.h): the work of
 * `graft optimize`, `convert`, `compare` and `verify`, moved here from the
 * command line so the CLI and the Python module run the same code, and the
 * flat API (paths or bytes in, a GraftResult out) the Python module calls. */
#include "graft_api.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dsl/ast.h"
#include "runtime/convert/convert.h"
#include "ir/opschema.h"
#include "runtime/plan/plan.h"
#include "runtime/engine/rules.h"
#include "runtime/engine/rw_interp.h"
#include "ir/text.h"

/* The compiled rule sets graft carries: graftc generates them at build time
 * from rules/basic/ and rules/extended/ (build/gen/rules_*.c). */
const RwRuleSet *const graft_library[] = {&graft_rules_basic, &graft_rules_extended};
const int graft_nlibrary = sizeof graft_library / sizeof graft_library[0];

/* ---- loading, saving, claiming ----------------------------------------------- */

/* A model file; one whose name ends in ".onnxtxt" is ONNX's textual syntax
 * (what `graft print` writes and onnx.parser reads), so a fixture can be
 * written by hand and saved as ONNX with `graft roundtrip`. */
IrModel *graft_load(const char *path, FileSet *files, Diag *d)
{
	size_t n = strlen(path);
	if (n < 8 || strcmp(path + n - 8, ".onnxtxt")) {
		IrModel *m = ir_load_file(path, NULL, d);
		if (m && files)
			ir_model_files(m, files);
		return m;
	}
	/* the rule files' reader (dsl/ast.c): whole file, or why not */
	uint32_t len;
	int err;
	char *text = dsl_read_file(path, &len, &err);
	if (!text) {
		char buf[256];
		diag_error(d, path, "%s", dsl_read_strerror(err, buf, sizeof buf));
		return NULL;
	}
	IrModel *m = ir_parse_model(text, len, path, d);
	free(text);
	if (m && files)
		fileset_input(files, path, FILE_INPUT_MODEL);
	return m;
}

/* A model from memory: name labels it in messages.  The bytes outlive the
 * model (the callers free it first), so its tensors point into them. */
static IrModel *load_bytes(const void *data, size_t size, const char *name, Diag *d)
{
	LoadOptions lo = {.borrow = true};
	return ir_load_bytes(data, size, name, NULL, &lo, d);
}

/* The last line of defence: every node graft made (a rule's are checked
 * when the rewrite commits; the built-in passes' and the converter's here)
 * fits its schema, or nothing is written. */
static bool made_nodes_fit(IrModel *m, const char *path, Diag *d)
{
	for (GraphId g = 1; g < m->ngraphs; g++) {
		if (ir_graph(m, g)->dead)
			continue;
		for (NodeId nd = ir_first(m, g); nd; nd = ir_next(m, nd)) {
			char why[512], label[256];
			if (ir_node(m, nd)->orig_index != UINT32_MAX || !ir_node_schema_error(m, nd, why, sizeof why))
				continue;
			diag_error(d, path, "node '%s', made by graft, does not fit its schema: %s; nothing was written "
			           "(a bug in graft: please report it)", ir_node_label(m, nd, label, sizeof label), why);
			return false;
		}
	}
	return true;
}

/* Save m to path in the format its name asks for: ONNX's textual syntax
 * when it ends in ".onnxtxt" (what graft_load reads back), binary protobuf
 * otherwise.  Every command that writes a model saves through here. */
bool graft_save(IrModel *m, const char *path, const SaveOptions *so, FILE *log, Diag *d)
{
	if (!made_nodes_fit(m, path, d))
		return false;
	size_t n = strlen(path);
	if (n < 8 || strcmp(path + n - 8, ".onnxtxt") != 0) {
		/* external data nobody asked for: say where the weights went */
		ExternalWhy why = ir_save_external_why(m, so);
		bool wrote = false;
		SaveOptions o = *so;
		o.wrote_data = &wrote;
		if (!ir_save_file(m, path, &o, d))
			return false;
		if (wrote && (why == EXT_WHY_INPUT || why == EXT_WHY_SIZE) && log) {
			char *data = ir_save_data_path(path, so);
			fprintf(log, "graft: note: tensors of %zu bytes or more written to external data '%s' (%s)\n",
			        so->ext_threshold ? so->ext_threshold : 1024, data,
			        why == EXT_WHY_INPUT ? "the input model has external data"
			                             : "inline, the model would pass protobuf's 2 GB limit");
			free(data);
		}
		return true;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		abort();
	bool ok = ir_print_model(m, f, d);
	if (fclose(f) != 0)
		abort();
	ok = ok && out_write_file(path, text, len, d); /* claimed by the caller (graft_claim_model_output) */
	free(text);
	return ok;
}

/* Claim a model output: OUT, and the data file beside it when the save will
 * write one (the model has external data, --external-data, or it is over
 * 2 GB already; one that passes 2 GB while optimized is checked by the save
 * itself against its inputs).  With --overwrite, OUT may be the input model and its data file
 * the input's external data. */
bool graft_claim_model_output(FileSet *files, IrModel *m, const char *out, const SaveOptions *so, Diag *d)
{
	const FileEntry *in = fileset_find(files, out);
	bool onto_input = in && in->role == FILE_INPUT_MODEL;
	if (!fileset_output(files, out, so->overwrite_input ? FILE_INPUT_MODEL : 0, d))
		return false;
	if (ir_save_external_why(m, so) == EXT_WHY_NONE)
		return true;
	char *data = ir_save_data_path(out, so);
	bool ok = fileset_output(files, data, so->overwrite_input && onto_input ? FILE_INPUT_DATA : 0, d);
	free(data);
	return ok;
}

/* Convert m to `target`, saying what was done on log; on failure, the
 * converter's message and that nothing was written. */
bool graft_convert_and_say(IrModel *m, int target, FILE *log, Diag *d)
{
	ConvertStats st;
	if (!convert_opset(m, target, &st, d)) {
		if (log)
			fprintf(log, "graft: the model cannot be converted to opset %d; nothing was written\n", target);
		return false;
	}
	if (!log)
		return true;
	if (st.from != st.to)
		fprintf(log, "convert: opset %d -> %d (IR version %lld -> %lld): %u node%s adapted, %u added\n", st.from,
		        st.to, (long long)st.ir_from, (long long)st.ir_to, st.adapted, st.adapted == 1 ? "" : "s", st.added);
	else
		fprintf(log, "convert: the model is already at opset %d\n", st.to);
	return true;
}

/* ---- rule sets ------------------------------------------------------------------ */

bool graft_rules_open(GraftRules *r, const char *const *files, int nfiles, bool no_library, FILE *log, Diag *d)
{
	memset(r, 0, sizeof *r);
	if (nfiles) {
		r->loaded = rw_rules_load(files, nfiles, "rules", graft_library, no_library ? 0 : graft_nlibrary, d);
		if (!r->loaded) {
			if (log)
				fprintf(log, "graft: %d error%s in the rules; nothing was written\n", d->nerrors,
				        d->nerrors == 1 ? "" : "s");
			return false;
		}
		r->sets[r->nsets++] = r->loaded;
	}
	for (int s = 0; s < graft_nlibrary && !no_library; s++)
		r->sets[r->nsets++] = graft_library[s];
	return true;
}

void graft_rules_close(GraftRules *r)
{
	rw_rules_free(r->loaded);
	memset(r, 0, sizeof *r);
}

long graft_level_bit(const char *name)
{
	Level l = dsl_level_parse(name, strlen(name));
	if (l != LEVEL_NONE)
		return 1L << l;
	return strcmp(name, "all") == 0 ? 0 : -1;
}

bool graft_check_rule_names(const RwRuleSet *const *sets, int nsets, const RwOptions *o, FILE *log, Diag *d)
{
	for (int k = 0; k < o->nenabled + o->ndisabled; k++) {
		const char *name = k < o->nenabled ? o->enabled[k] : o->disabled[k - o->nenabled];
		if (!rw_name_known(sets, nsets, name)) {
			diag_error(d, "graft", "%s: no rule, rule file or level is named '%s'",
			           k < o->nenabled ? "--enable" : "--disable", name);
			if (log)
				fprintf(log, "(run 'graft --help' for usage)\n");
			return false;
		}
	}
	return true;
}

/* ---- optimize ------------------------------------------------------------------- */

/* The memory plan's figures of a model (the file at path, or its bytes
 * data), for the audit (a json_t *, or NULL with a note on log): symbolic
 * input dims are 1, as graft run generates them, and the report says which
 * were assumed. */
static void *plan_figures(const char *path, const void *data, size_t size, int target_opset, FILE *log)
{
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = data ? load_bytes(data, size, path, &d) : graft_load(path, NULL, &d);
	if (!m)
		return NULL;
	if (target_opset) {
		ConvertStats cs;
		if (!convert_opset(m, target_opset, &cs, &d)) {
			ir_model_free(m);
			return NULL;
		}
	}
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	char unknown[1024];
	bool assumed = plan_unknown_inputs(m, unknown, sizeof unknown);
	for (uint32_t i = 0; assumed && i < g->ninputs; i++) {
		IrValue *v = ir_value(m, g->inputs[i]);
		if (v->tensor || v->non_tensor || v->shape.rank < 0)
			continue;
		Dim *dims = malloc(sizeof *dims * (size_t)(v->shape.rank + 1));  /* any rank */
		if (!dims)
			abort();
		for (int k = 0; k < v->shape.rank; k++)
			dims[k] = (Dim){v->shape.dims[k].size >= 0 ? v->shape.dims[k].size : 1, NULL};
		Shape sh = {v->shape.rank, dims};
		ir_value_set_type(m, g->inputs[i], v->dtype, &sh);
		free(dims);
	}
	Plan p;
	json_t *o = NULL;
	if (plan_bind_inputs(m, NULL, NULL, NULL, 0, &d) && plan_model(m, NULL, &p, &d)) {
		o = plan_json_summary(&p);
		if (assumed)
			json_object_set_new(o, "assumed_input_dims_1", json_string(unknown));
		plan_free(&p);
	} else if (log) {
		fprintf(log, "graft: no memory plan for %s: %s\n", path, d.first);
	}
	ir_model_free(m);
	return o;
}

static void print_memory(FILE *log, const AuditHist *before, const AuditHist *after)
{
	json_t *b = before->memory, *a = after->memory;
	if (!b || !a || !log)
		return;
	fprintf(log, "memory plan: peak %lld -> %lld bytes (lower bound %lld -> %lld, naive %lld -> %lld)\n",
	        (long long)json_integer_value(json_object_get(b, "peak_bytes")),
	        (long long)json_integer_value(json_object_get(a, "peak_bytes")),
	        (long long)json_integer_value(json_object_get(b, "lower_bound_bytes")),
	        (long long)json_integer_value(json_object_get(a, "lower_bound_bytes")),
	        (long long)json_integer_value(json_object_get(b, "naive_bytes")),
	        (long long)json_integer_value(json_object_get(a, "naive_bytes")));
}

int graft_optimize_model(GraftOptimize *job, IrModel *m, Diag *d)
{
	RwOptions ro = job->rw;
	FILE *log = job->log;
	if (job->target_opset && job->stage)
		job->stage("converting", NULL);
	if (job->target_opset && !graft_convert_and_say(m, job->target_opset, log, d))
		return GRAFT_INPUT;
	audit_histogram(m, &job->before);
	if (job->memory_plan)
		job->before.memory = plan_figures(job->input, job->data, job->size, job->target_opset, log);
	if (!ro.fold.max_total_bytes)
		ro.fold.max_total_bytes = fold_default_budget(m);
	if (job->stage)
		job->stage("rewriting", NULL);
	bool ok = rw_run(m, job->sets, job->nsets, &ro, &job->r, d);
	RwResult *r = &job->r;
	if (r->fold_over_budget && log)
		fprintf(log, "fold: %u fold%s not done: over the fold budget of %zu bytes added to the model "
		        "(--max-fold-bytes)\n", r->fold_over_budget, r->fold_over_budget == 1 ? "" : "s",
		        ro.fold.max_total_bytes);
	int rc = ok ? GRAFT_OK : r->stop == RW_ERROR ? GRAFT_INPUT : GRAFT_STOPPED;
	audit_histogram(m, &job->after);
	if (r->stop != RW_ERROR) {
		if (job->stage && job->output)
			job->stage("saving", job->output);
		bool saved = job->output ? graft_save(m, job->output, &job->save, log, d)
		                         : made_nodes_fit(m, job->input, d) && ir_save_bytes_inline(m, &job->out_data, &job->out_size, d);
		if (!saved)
			rc = GRAFT_INPUT;
	}
	if (job->stage)
		job->stage(NULL, NULL);
	if (rc != GRAFT_INPUT && job->memory_plan) {
		job->after.memory = job->output ? plan_figures(job->output, NULL, 0, 0, log)
		                                : plan_figures(job->input, job->out_data, job->out_size, 0, log);
		print_memory(log, &job->before, &job->after);
	}
	if (rc != GRAFT_INPUT && log) {
		/* composed in memory and written at once: stderr is unbuffered,
		 * and a write per line was a system call per line */
		char *text = NULL;
		size_t len = 0;
		FILE *sum = open_memstream(&text, &len);
		if (!sum)
			sum = log;
		audit_print_summary(sum, &job->before, &job->after, job->sets, r);
		fprintf(sum, "%ld rewrites in %.3f s; %u -> %u nodes; %s\n", r->rewrites, r->seconds, r->nodes_before,
		        r->nodes_after, r->stop == RW_FIXPOINT ? "fixpoint" : r->stop == RW_MAX_REWRITES ? "stopped at --max-rewrites" : "stopped early");
		if (sum != log) {
			fclose(sum);
			fwrite(text, 1, len, log);
			free(text);
		}
	}
	return rc;
}

void graft_optimize_free(GraftOptimize *job)
{
	audit_hist_free(&job->before);
	audit_hist_free(&job->after);
	rw_result_free(&job->r);
	free(job->out_data);
	job->out_data = NULL;
}

/* ---- compare -------------------------------------------------------------------- */

static void free_values(EvValue **v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ev_unref(v[i]);
}

static bool run_model(IrModel *m, EvValue **inputs, EvValue **outputs, Diag *d)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	return ev_run(m, (const EvValue *const *)inputs, g->ninputs, outputs, NULL, d);
}

/* The --dim value given for name, or -1. */
static int64_t pinned_dim(const RunOptions *ro, const char *name)
{
	for (int k = 0; k < ro->ndims; k++)
		if (strcmp(ro->dim_names[k], name) == 0)
			return ro->dim_values[k];
	return -1;
}

/* Sizes for the symbolic dim names[0..n-1] in the run with this seed: the
 * --dim value, else run_drawn_dim's (1 if ones); "N=2, seq=3" into line.
 * Returns whether any was drawn. */
static bool choose_dims(const RunOptions *pinned, const char **names, int n, uint32_t seed, bool ones,
                        int64_t *values, char *line, size_t size)
{
	bool drawn = false;
	size_t o = 0;
	line[0] = 0;
	for (int k = 0; k < n; k++) {
		values[k] = pinned_dim(pinned, names[k]);
		if (values[k] < 0) {
			values[k] = ones ? 1 : run_drawn_dim(seed, k);
			drawn = true;
		}
		if (o < size)
			o += (size_t)snprintf(line + o, size - o, "%s%s=%lld", k ? ", " : "", names[k], (long long)values[k]);
	}
	return drawn;
}

/* Generated inputs and A's outputs for one run of compare when A's inputs
 * have the symbolic dims names[0..n-1], and a line saying which sizes the
 * run used.  If A fails with drawn sizes (a Reshape to a constant shape
 * needs 1), the run is made with 1 for every unpinned name instead and the
 * line says so: never a verdict on a run that did not happen. */
static bool run_a_with_dims(const RunOptions *pinned, IrModel *ma, RunOptions ro, const char **names, int n, int run,
                            EvValue **ia, EvValue **oa, FILE *out, Diag *d)
{
	uint32_t nin = ir_graph(ma, IR_MAIN_GRAPH)->ninputs, nout = ir_graph(ma, IR_MAIN_GRAPH)->noutputs;
	int64_t values[64];
	char sizes[1024], ones[1024];
	bool drawn = choose_dims(pinned, names, n, ro.seed, false, values, sizes, sizeof sizes);
	ro.dim_names = names;
	ro.dim_values = values;
	ro.ndims = n;
	if (!run_prepare_inputs(ma, &ro, ia, d))
		return false;
	Diag quiet;  /* A's error is the fallback's reason, not the run's end */
	diag_init(&quiet, NULL);
	if (ev_run(ma, (const EvValue *const *)ia, nin, oa, NULL, &quiet)) {
		fprintf(out, "run %d: dims %s\n", run + 1, sizes);
		fflush(out); /* before any error of B's on stderr */
		return true;
	}
	if (!drawn) {
		diag_error(d, NULL, "%s", quiet.first);
		return false;
	}
	free_values(ia, nin);
	free_values(oa, nout);
	memset(oa, 0, sizeof *oa * nout);
	choose_dims(pinned, names, n, ro.seed, true, values, ones, sizeof ones);
	fprintf(out, "run %d: dims %s (A fails with %s: %s)\n", run + 1, ones, sizes, quiet.first);
	fflush(out);
	return run_prepare_inputs(ma, &ro, ia, d) && run_model(ma, ia, oa, d);
}

int graft_compare_models(IrModel *ma, IrModel *mb, const char *name_a, const char *name_b,
                         const GraftCompareOptions *o, FILE *out, GraftCompare *c, Diag *d)
{
	memset(c, 0, sizeof *c);
	IrGraph *ga = ir_graph(ma, IR_MAIN_GRAPH), *gb = ir_graph(mb, IR_MAIN_GRAPH);
	/* on the heap: a graph may have any number of inputs and outputs */
	ValueId *fa = calloc(ga->ninputs + 1, sizeof *fa), *fb = calloc(gb->ninputs + 1, sizeof *fb);
	if (!fa || !fb)
		abort();
	uint32_t na = run_fed_inputs(ma, fa), nb = run_fed_inputs(mb, fb);
	bool same = na == nb && ga->noutputs == gb->noutputs;
	for (uint32_t i = 0; same && i < na; i++)
		same = strcmp(ir_value(ma, fa[i])->name, ir_value(mb, fb[i])->name) == 0;
	for (uint32_t i = 0; same && i < ga->noutputs; i++)
		same = strcmp(ir_value(ma, ga->outputs[i])->name, ir_value(mb, gb->outputs[i])->name) == 0;
	free(fa);
	free(fb);
	if (!same) {
		diag_error(d, "graft", "compare: %s and %s have different inputs or outputs", name_a, name_b);
		return GRAFT_INPUT;
	}
	int rc = GRAFT_OK;
	RunDiff *worst = calloc(ga->noutputs + 1, sizeof *worst);
	if (!worst)
		abort();
	for (uint32_t i = 0; i < ga->noutputs; i++)
		worst[i].agree = true;
	/* generated inputs: each symbolic dim its --dim value, else drawn per run */
	const char *dim_names[64];
	int64_t scratch[64];
	char line[1024];
	int ndims = o->ro.inputs_dir ? 0 : run_symbolic_dims(ma, dim_names, 64);
	int runs = o->runs;
	if (choose_dims(&o->ro, dim_names, ndims, 0, false, scratch, line, sizeof line) && !runs)
		runs = 2;
	runs = runs ? runs : 1;
	for (int run = 0; run < runs && rc != 2; run++) {
		RunOptions ro = o->ro;
		ro.seed += (uint32_t)run;
		EvValue **ia = calloc(ga->ninputs + 1, sizeof *ia), **ib = calloc(gb->ninputs + 1, sizeof *ib);
		EvValue **oa = calloc(ga->noutputs + 1, sizeof *oa), **ob = calloc(gb->noutputs + 1, sizeof *ob);
		bool ok = ndims ? run_a_with_dims(&o->ro, ma, ro, dim_names, ndims, run, ia, oa, out, d)
		                : run_prepare_inputs(ma, &ro, ia, d) && run_model(ma, ia, oa, d);
		/* B gets exactly A's inputs, by name */
		for (uint32_t i = 0; ok && i < gb->ninputs; i++)
			for (uint32_t k = 0; k < ga->ninputs; k++)
				if (ia[k] && strcmp(ir_value(ma, ga->inputs[k])->name, ir_value(mb, gb->inputs[i])->name) == 0)
					ib[i] = ev_ref(ia[k]);
		ok = ok && run_model(mb, ib, ob, d);
		for (uint32_t i = 0; ok && i < ga->noutputs; i++) {
			RunDiff r;
			if (o->exact)
				run_compare_exact(oa[i], ob[i], &r);
			else
				run_compare(oa[i], ob[i], o->rtol, o->atol, &r);
			if (r.max_abs > worst[i].max_abs)
				worst[i].max_abs = r.max_abs;
			if (r.max_rel > worst[i].max_rel)
				worst[i].max_rel = r.max_rel;
			worst[i].mismatches += r.mismatches;
			worst[i].agree &= r.agree;
			worst[i].same_shape = r.same_shape;
			worst[i].same_type = r.same_type;
		}
		if (!ok)
			rc = 2; /* marker: stop */
		free_values(ia, ga->ninputs);
		free_values(ib, gb->ninputs);
		free_values(oa, ga->noutputs);
		free_values(ob, gb->noutputs);
		free(ia);
		free(ib);
		free(oa);
		free(ob);
	}
	if (rc == 2) {
		free(worst);
		return GRAFT_INPUT;
	}
	c->runs = runs;
	c->noutputs = ga->noutputs;
	c->worst = worst;
	c->names = calloc(ga->noutputs + 1, sizeof *c->names);
	if (!c->names)
		abort();
	c->agree = true;
	fprintf(out, "%-24s %12s %12s  %s\n", "output", "max abs", "max rel", "result");
	for (uint32_t i = 0; i < ga->noutputs; i++) {
		const RunDiff *r = &worst[i];
		c->names[i] = ir_value(ma, ga->outputs[i])->name;
		fprintf(out, "%-24s %12.3g %12.3g  %s\n", c->names[i], r->max_abs, r->max_rel,
		        r->agree ? "agree" : !r->same_type ? "DIFFER (type)" : !r->same_shape ? "DIFFER (shape)" : "DIFFER");
		c->agree &= r->agree;
	}
	if (o->exact)
		fprintf(out, "%s (%d run%s, exact)\n", c->agree ? "models agree" : "models differ", runs, runs == 1 ? "" : "s");
	else
		fprintf(out, "%s (%d run%s, rtol %g, atol %g)\n", c->agree ? "models agree" : "models differ", runs,
		        runs == 1 ? "" : "s", o->rtol, o->atol);
	return c->agree ? GRAFT_OK : GRAFT_INPUT;
}

void graft_compare_free(GraftCompare *c)
{
	free(c->worst);
	free(c->names);
	memset(c, 0, sizeof *c);
}

/* ---- verify --------------------------------------------------------------------- */

int graft_verify_files(const char *const *files, int nfiles, const VerifyOptions *vo, bool no_library, bool strict,
                       Diag *d)
{
	RwRuleSet *set = rw_rules_load(files, nfiles, "rules", NULL, 0, d);
	if (!set) {
		if (d->out)
			fprintf(d->out, "graft: %d error%s in the rules\n", d->nerrors, d->nerrors == 1 ? "" : "s");
		return GRAFT_INPUT;
	}
	/* each rule runs alone here, but optimize --rules would refuse a library rule's name: say so now */
	rw_rules_name_clashes(rw_rules_programs(set), graft_library, no_library ? 0 : graft_nlibrary, true, d);
	VerifyCounts vc;
	bool ok = verify_rules(set, vo, &vc, d);
	rw_rules_free(set);
	if (!ok)
		return GRAFT_INPUT;
	fprintf(vo->out, "%d verified, %d wrong, %d not exercised (seed %llu)", vc.verified, vc.wrong, vc.unexercised,
	        (unsigned long long)vo->seed);
	if (vc.short_coverage)
		fprintf(vo->out, "; %d verified with fewer than %d firings in some dtype, rank class or opset form",
		        vc.short_coverage, vo->instances > 0 ? vo->instances : 100);
	fprintf(vo->out, "\n");
	return vc.wrong || vc.unexercised || (strict && vc.short_coverage) ? GRAFT_INPUT : GRAFT_OK;
}

/* ---- the flat API --------------------------------------------------------------- */

typedef struct ResultTensor {
	char *name;
	int dtype, rank;
	int64_t dims[EV_MAX_RANK];
	void *data;                 /* malloc'd (not the evaluator's, whose accounting is per thread) */
	size_t nbytes;
} ResultTensor;

struct GraftResult {
	int status;
	Diag d;                     /* prints to log; d.first is the error */
	FILE *log;
	char *log_text;
	size_t log_len;
	uint8_t *model;
	size_t model_size;
	char *json, *report;
	ResultTensor *tensors;
	int ntensors;
};

/* A result whose Diag prints to its log, as the CLI's print to stderr. */
static GraftResult *result_new(void)
{
	GraftResult *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->log = open_memstream(&r->log_text, &r->log_len);
	if (!r->log) {
		free(r);
		return NULL;
	}
	diag_init(&r->d, r->log);
	return r;
}

/* The call is over: the log is closed, to be read. */
static GraftResult *result_done(GraftResult *r, int status)
{
	r->status = status;
	fclose(r->log);
	r->log = NULL;
	return r;
}

/* A usage error as the CLI prints it: "graft: MESSAGE" and the hint. */
__attribute__((format(printf, 2, 3)))
static GraftResult *usage_fail(GraftResult *r, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_error(&r->d, "graft", "%s", msg);
	fprintf(r->log, "(run 'graft --help' for usage)\n");
	return result_done(r, GRAFT_USAGE);
}

/* The model of a call: from path, or from its bytes (named path, or "<memory>"). */
static IrModel *load_model(const char *path, const void *data, size_t size, FileSet *files, Diag *d)
{
	if (data)
		return load_bytes(data, size, path ? path : "<memory>", d);
	return graft_load(path, files, d);
}

static bool opset_ok(GraftResult *r, const char *flag, int opset)
{
	if (opset >= CONVERT_MIN_OPSET && opset <= OPSCHEMA_MAX_OPSET)
		return true;
	diag_error(&r->d, "graft", "%s: '%d' is not a number from %d to %d", flag, opset, CONVERT_MIN_OPSET,
	           OPSCHEMA_MAX_OPSET);
	fprintf(r->log, "(run 'graft --help' for usage)\n");
	r->status = GRAFT_USAGE;
	return false;
}

GraftResult *graft_optimize(const char *path, const void *data, size_t size, const char *out_path,
                            const GraftOptions *o)
{
	GraftResult *res = result_new();
	if (!res)
		return NULL;
	Diag *d = &res->d;
	RwOptions ro = {.trace_out = res->log, .allow_vendor_ops = o->allow_vendor_ops,
	                .enabled = o->enable, .nenabled = o->nenable, .disabled = o->disable, .ndisabled = o->ndisable};
	for (int i = 0; i < o->nlevels; i++) {
		long bit = graft_level_bit(o->levels[i]);
		if (bit < 0)
			return usage_fail(res, GRAFT_LEVEL_ERROR, o->levels[i]);
		ro.levels |= (unsigned)bit;
	}
	if (o->target_opset && !opset_ok(res, "--target-opset", o->target_opset))
		return result_done(res, GRAFT_USAGE);
	SaveOptions so = {0};
	if (o->external_data) {
		so.external = EXT_ALL;
		so.ext_threshold = o->external_data_threshold;
	}
	FileSet files;
	fileset_init(&files);
	for (int i = 0; i < o->nrules; i++)
		fileset_input(&files, o->rules[i], FILE_INPUT);
	GraftRules rules;
	if (!graft_rules_open(&rules, o->rules, o->nrules, o->no_library, res->log, d)) {
		fileset_free(&files);
		return result_done(res, GRAFT_INPUT);
	}
	int rc = GRAFT_INPUT;
	IrModel *m = NULL;
	GraftOptimize job = {.rw = ro, .save = so, .target_opset = o->target_opset, .sets = rules.sets,
	                     .nsets = rules.nsets, .input = data ? (path ? path : "<memory>") : path, .data = data,
	                     .size = size, .output = out_path, .memory_plan = true, .log = res->log};
	if (!graft_check_rule_names(rules.sets, rules.nsets, &ro, res->log, d)) {
		rc = GRAFT_USAGE;
		goto done;
	}
	if (!(m = load_model(path, data, size, &files, d)))
		goto done;
	if (out_path && !graft_claim_model_output(&files, m, out_path, &so, d)) {
		rc = GRAFT_USAGE;
		goto done;
	}
	rc = graft_optimize_model(&job, m, d);
	if (rc != GRAFT_INPUT) {
		res->report = audit_report_text(job.input, data, size, out_path, &job.before, &job.after, rules.sets, rules.nsets, &job.r);
		json_t *fired = json_object();
		for (size_t i = 0; i < job.r.nfirings; i++) {
			const char *name = rw_firing_name(rules.sets, &job.r.firings[i]);
			json_t *n = json_object_get(fired, name);
			json_object_set_new(fired, name, json_integer(n ? json_integer_value(n) + 1 : 1));
		}
		static const char *const stops[] = {"fixpoint", "out_of_fuel", "cycle", "max_rewrites", "error"}; /* the audit's */
		json_t *j = json_pack("{s:i, s:i, s:I, s:s, s:o}", "nodes_before", (int)job.r.nodes_before, "nodes_after",
		                      (int)job.r.nodes_after, "rewrites", (json_int_t)job.r.rewrites, "stop",
		                      stops[job.r.stop], "fired", fired);
		res->json = json_dumps(j, JSON_PRESERVE_ORDER | JSON_COMPACT);
		json_decref(j);
		res->model = job.out_data;
		res->model_size = job.out_size;
		job.out_data = NULL;
	}
done:
	graft_optimize_free(&job);
	ir_model_free(m);
	graft_rules_close(&rules);
	fileset_free(&files);
	return result_done(res, rc);
}

GraftResult *graft_convert(const char *path, const void *data, size_t size, const char *out_path, int opset)
{
	GraftResult *res = result_new();
	if (!res)
		return NULL;
	if (!opset_ok(res, "--opset", opset))
		return result_done(res, GRAFT_USAGE);
	Diag *d = &res->d;
	FileSet files;
	fileset_init(&files);
	SaveOptions so = {0};
	int rc = GRAFT_INPUT;
	IrModel *m = load_model(path, data, size, &files, d);
	if (m && out_path && !graft_claim_model_output(&files, m, out_path, &so, d))
		rc = GRAFT_USAGE;
	else if (m && graft_convert_and_say(m, opset, res->log, d)) {
		bool ok = out_path ? graft_save(m, out_path, &so, res->log, d)
		                   : made_nodes_fit(m, path ? path : "<memory>", d) &&
		                     ir_save_bytes_inline(m, &res->model, &res->model_size, d);
		rc = ok ? GRAFT_OK : GRAFT_INPUT;
	}
	ir_model_free(m);
	fileset_free(&files);
	return result_done(res, rc);
}

/* A number for JSON, which has no inf or NaN: those as "inf", "-inf", "nan". */
static json_t *real_json(double x)
{
	if (isfinite(x))
		return json_real(x);
	return json_string(isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

GraftResult *graft_compare(const char *path_a, const void *data_a, size_t size_a, const char *path_b,
                           const void *data_b, size_t size_b, int runs, int exact, const char *const *dim_names,
                           const int64_t *dim_values, int ndims)
{
	GraftResult *res = result_new();
	if (!res)
		return NULL;
	Diag *d = &res->d;
	const char *name_a = path_a ? path_a : "A", *name_b = path_b ? path_b : "B";
	IrModel *ma = data_a ? load_bytes(data_a, size_a, name_a, d) : graft_load(path_a, NULL, d);
	IrModel *mb = ma ? (data_b ? load_bytes(data_b, size_b, name_b, d) : graft_load(path_b, NULL, d)) : NULL;
	int rc = GRAFT_INPUT;
	if (ma && mb) {
		GraftCompareOptions o = {.ro = {.int_hi = 100, .dim_names = (const char **)dim_names, .dim_values = dim_values,
		                                .ndims = ndims},
		                         .rtol = 1e-3, .atol = 1e-4, .exact = exact, .runs = runs};
		GraftCompare c;
		rc = graft_compare_models(ma, mb, name_a, name_b, &o, res->log, &c, d);
		if (c.worst) {
			json_t *outs = json_array();
			for (uint32_t i = 0; i < c.noutputs; i++) {
				const RunDiff *w = &c.worst[i];
				json_array_append_new(outs, json_pack("{s:s, s:o, s:o, s:b, s:b, s:b, s:I}", "name", c.names[i],
				                                      "max_abs", real_json(w->max_abs), "max_rel",
				                                      real_json(w->max_rel), "agree", w->agree,
				                                      "same_type", w->same_type, "same_shape", w->same_shape,
				                                      "mismatches", (json_int_t)w->mismatches));
			}
			json_t *j = json_pack("{s:b, s:i, s:o}", "agree", c.agree, "runs", c.runs, "outputs", outs);
			res->json = json_dumps(j, JSON_PRESERVE_ORDER | JSON_COMPACT);
			json_decref(j);
		}
		graft_compare_free(&c);
	}
	ir_model_free(ma);
	ir_model_free(mb);
	return result_done(res, rc);
}

GraftResult *graft_run(const char *path, const void *data, size_t size, int ninputs, const char *const *names,
                       const int *dtypes, const int *ranks, const int64_t *dims, const void *const *tensors)
{
	GraftResult *res = result_new();
	if (!res)
		return NULL;
	Diag *d = &res->d;
	IrModel *m = load_model(path, data, size, NULL, d);
	if (!m)
		return result_done(res, GRAFT_INPUT);
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	EvValue **inputs = calloc(g->ninputs + 1, sizeof *inputs);
	EvValue **outputs = calloc(g->noutputs + 1, sizeof *outputs);
	EvValue **given = calloc(g->ninputs + 1, sizeof *given);   /* per fed input */
	ValueId *fed = calloc(g->ninputs + 1, sizeof *fed);
	if (!inputs || !outputs || !given || !fed)
		abort();
	uint32_t nfed = run_fed_inputs(m, fed);
	int rc = GRAFT_INPUT;
	const int64_t *dim = dims;   /* input k's dims */
	for (int k = 0; k < ninputs; dim += ranks[k++]) {
		uint32_t f = names && names[k] ? 0 : (uint32_t)k;   /* by name, else by position */
		while (names && names[k] && f < nfed && strcmp(ir_value(m, fed[f])->name, names[k]) != 0)
			f++;
		if (f >= nfed) {
			if (names && names[k])
				diag_error(d, m->path, "no graph input is named '%s'", names[k]);
			else
				diag_error(d, m->path, "%d inputs given, the model takes %u", ninputs, nfed);
			goto done;
		}
		EvValue *v = ev_elem_size(dtypes[k]) && ranks[k] >= 0 && ranks[k] <= EV_MAX_RANK
		                 ? ev_tensor_new_uninit(dtypes[k], ranks[k], dim) : NULL;
		if (!v) {
			diag_error(d, m->path, "input '%s': cannot make a tensor of %s with %d dims", ir_value(m, fed[f])->name,
			           dtype_name(dtypes[k]), ranks[k]);
			goto done;
		}
		memcpy(v->data, tensors[k], v->nbytes);
		ev_unref(given[f]);
		given[f] = v;
	}
	/* the rest generated as graft run does */
	RunOptions ro = {.int_hi = 100};
	if (!run_prepare_given(m, &ro, given, inputs, d))
		goto done;
	if (!run_model(m, inputs, outputs, d))
		goto done;
	res->tensors = calloc(g->noutputs + 1, sizeof *res->tensors);
	if (!res->tensors)
		abort();
	res->ntensors = (int)g->noutputs;
	for (uint32_t i = 0; i < g->noutputs; i++) {
		ResultTensor *t = &res->tensors[i];
		t->name = strdup(ir_value(m, g->outputs[i])->name);
		if (outputs[i]->kind != EV_TENSOR || !ev_elem_size(outputs[i]->dtype))
			continue;
		const EvValue *v = outputs[i];
		t->dtype = v->dtype;
		t->rank = v->rank;
		memcpy(t->dims, v->dims, sizeof t->dims);
		t->nbytes = v->nbytes;
		if (!(t->data = malloc(v->nbytes ? v->nbytes : 1)))
			abort();
		memcpy(t->data, v->data, v->nbytes);
	}
	rc = GRAFT_OK;
done:
	free_values(inputs, g->ninputs);
	free_values(outputs, g->noutputs);
	free_values(given, g->ninputs);
	free(inputs);
	free(outputs);
	free(given);
	free(fed);
	ir_model_free(m);
	return result_done(res, rc);
}

GraftResult *graft_verify(const char *const *files, int nfiles, int instances, uint64_t seed, const char *out_dir,
                          int no_library)
{
	GraftResult *res = result_new();
	if (!res)
		return NULL;
	VerifyOptions vo = {.out = res->log, .seed = seed, .instances = instances, .out_dir = out_dir};
	int rc = graft_verify_files(files, nfiles, &vo, no_library, false, &res->d);
	return result_done(res, rc);
}

int graft_result_status(const GraftResult *r)
{
	return r->status;
}

const char *graft_result_error(const GraftResult *r)
{
	return r->d.first;
}

const char *graft_result_log(const GraftResult *r)
{
	return r->log_text ? r->log_text : "";
}

const void *graft_result_model(const GraftResult *r, size_t *size)
{
	*size = r->model_size;
	return r->model;
}

const char *graft_result_json(const GraftResult *r)
{
	return r->json;
}

const char *graft_result_report(const GraftResult *r)
{
	return r->report;
}

int graft_result_ntensors(const GraftResult *r)
{
	return r->ntensors;
}

const void *graft_result_tensor(const GraftResult *r, int k, const char **name, int *dtype, int *rank,
                                const int64_t **dims, size_t *nbytes)
{
	const ResultTensor *t = &r->tensors[k];
	*name = t->name;
	*dtype = t->dtype;
	*rank = t->rank;
	*dims = t->dims;
	*nbytes = t->nbytes;
	return t->data;
}

void graft_result_free(GraftResult *r)
{
	if (!r)
		return;
	if (r->log)
		fclose(r->log);
	free(r->log_text);
	free(r->model);
	free(r->json);
	free(r->report);
	for (int i = 0; i < r->ntensors; i++) {
		free(r->tensors[i].name);
		free(r->tensors[i].data);
	}
	free(r->tensors);
	free(r);
}
