/* verify.c - graft verify: each rule of a loaded set run on generated
 * instances (gen.c) and checked on the reference evaluator; see verify.h.
 *
 * One instance: the evaluator runs it; the engine runs on it with only this
 * rule enabled and no built-in pass (no folding, CSE or DCE), so what
 * changes is the rule's doing; if the rule fired, the evaluator runs the
 * rewritten graph and each graph output is compared with the one before:
 * same dtype, same shape, and every element bit for bit (NaN with any NaN),
 * or, for a rule with [tolerance X], within X of the largest magnitude of
 * the output (at least 1), X scaled to the dtype's precision for float16
 * and bfloat16; inf, -inf and NaN must stay where they were, element by
 * element, for every rule.  An approximate rule is tried on every edge
 * value but the dtype's largest, tiny and denormal ones (gen.c).
 *
 * The first disagreement ends a rule: both graphs are saved (inputs as the
 * graph inputs' default values, so `graft compare A B` alone reproduces it)
 * and printed.  A rule that never fires is "not exercised", with the
 * condition --why gave most often at the root. */
#include "verify.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval.h"
#include "outfile.h"
#include "mprog.h"
#include "run.h"
#include "rw_interp.h"
#include "text.h"
#include "verify_internal.h"

/* ---- tallies of reasons -------------------------------------------------------- */

#define TALLY_MAX 32

typedef struct Tally {
	char *what[TALLY_MAX];
	int count[TALLY_MAX];
	int n, other;
} Tally;

static void tally_add(Tally *t, const char *what)
{
	for (int i = 0; i < t->n; i++)
		if (strcmp(t->what[i], what) == 0) {
			t->count[i]++;
			return;
		}
	if (t->n == TALLY_MAX) {
		t->other++;
		return;
	}
	t->what[t->n] = strdup(what);
	t->count[t->n++] = 1;
}

static int tally_top(const Tally *t)
{
	int best = -1;
	for (int i = 0; i < t->n; i++)
		if (best < 0 || t->count[i] > t->count[best])
			best = i;
	return best;
}

static void tally_free(Tally *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->what[i]);
	memset(t, 0, sizeof *t);
}

/* ---- comparing outputs ----------------------------------------------------------- */

typedef struct Mismatch {
	char text[512];
} Mismatch;

/* The tolerance for a dtype: X as stated for float32, scaled up to the
 * epsilon of narrower floats. */
static double tolerance_for(double tol, int dt)
{
	if (dt == DT_FLOAT16)
		return tol * 8192.0;    /* 2^-10 / 2^-23 */
	if (dt == DT_BFLOAT16)
		return tol * 65536.0;   /* 2^-7 / 2^-23 */
	return tol;
}

static void format_index(const EvValue *t, int64_t i, char *buf, size_t size)
{
	int64_t idx[EV_MAX_RANK];
	for (int d = t->rank - 1; d >= 0; d--) {
		idx[d] = t->dims[d] ? i % t->dims[d] : 0;
		i = t->dims[d] ? i / t->dims[d] : 0;
	}
	size_t o = (size_t)snprintf(buf, size, "[");
	for (int d = 0; d < t->rank && o < size; d++)
		o += (size_t)snprintf(buf + o, size - o, "%s%lld", d ? "," : "", (long long)idx[d]);
	if (o < size)
		snprintf(buf + o, size - o, "]");
}

static void format_elem(const EvValue *t, int64_t i, char *buf, size_t size)
{
	if (ev_is_float(t->dtype)) {
		double x = ev_get_f(t, i);
		size_t es = ev_elem_size(t->dtype);
		uint64_t bits = 0;
		memcpy(&bits, (const uint8_t *)t->data + (size_t)i * es, es);
		snprintf(buf, size, "%s%.9g (0x%0*llx)", x == 0 && signbit(x) ? "-" : "", x == 0 ? 0.0 : x, (int)es * 2,
		         (unsigned long long)bits);
	} else if (ev_is_unsigned_int(t->dtype)) {
		snprintf(buf, size, "%llu", (unsigned long long)ev_get_u(t, i));
	} else {
		snprintf(buf, size, "%lld", (long long)ev_get_i(t, i));
	}
}

/* Do a (before) and b (after) agree?  *err gets the error (tolerance mode),
 * in float32 terms: |b - a| / max(1, max |a|), divided by the dtype's scale. */
static bool agree(const char *name, const EvValue *a, const EvValue *b, double tol, double *err, double *scale_out,
                  Mismatch *mm)
{
	char x[96], y[96], at[96];
	if (a->kind != EV_TENSOR || b->kind != EV_TENSOR) {
		snprintf(mm->text, sizeof mm->text, "output %s: not a tensor", name);
		return false;
	}
	if (a->dtype != b->dtype) {
		snprintf(mm->text, sizeof mm->text, "output %s: dtype %s before, %s after", name, dtype_name(a->dtype),
		         dtype_name(b->dtype));
		return false;
	}
	if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof *a->dims * (size_t)a->rank) != 0) {
		run_format_dims(a, x, sizeof x);
		run_format_dims(b, y, sizeof y);
		snprintf(mm->text, sizeof mm->text, "output %s: shape %s before, %s after", name, x, y);
		return false;
	}
	bool fl = ev_is_float(a->dtype);
	size_t es = ev_elem_size(a->dtype);
	double scale = 1, unit = tolerance_for(1, a->dtype);
	if (tol > 0)
		for (int64_t i = 0; i < a->numel; i++) {
			double w = fabs(ev_get_f(a, i));
			if (isfinite(w) && w > scale)
				scale = w;
		}
	*scale_out = scale;
	int64_t worst = -1;
	double worst_err = 0;
	for (int64_t i = 0; i < a->numel; i++) {
		bool same;
		if (a->dtype == DT_STRING)
			same = strcmp(((char **)a->data)[i], ((char **)b->data)[i]) == 0;
		else
			same = memcmp((const uint8_t *)a->data + (size_t)i * es, (const uint8_t *)b->data + (size_t)i * es, es) == 0;
		if (same)
			continue;
		double p = fl || tol > 0 ? ev_get_f(a, i) : 0, q = fl || tol > 0 ? ev_get_f(b, i) : 0;
		if (fl && isnan(p) && isnan(q))
			continue;
		if (tol > 0 && isfinite(p) && isfinite(q)) {
			double e = fabs(p - q) / scale / unit;
			if (e > *err)
				*err = e;
			if (e <= tol)
				continue;
			if (worst < 0 || e > worst_err) {
				worst = i;
				worst_err = e;
			}
			continue;
		}
		worst = i;
		break;
	}
	if (worst < 0)
		return true;
	format_index(a, worst, at, sizeof at);
	format_elem(a, worst, x, sizeof x);
	format_elem(b, worst, y, sizeof y);
	if (tol > 0 && isfinite(ev_get_f(a, worst)) && isfinite(ev_get_f(b, worst)))
		snprintf(mm->text, sizeof mm->text, "output %s%s: %s before, %s after (error %.3g > tolerance %g)", name, at, x, y,
		         worst_err, tol);
	else
		snprintf(mm->text, sizeof mm->text, "%soutput %s%s: %s before, %s after", tol > 0 ? "" : "not exact: ", name, at,
		         x, y);
	return false;
}

/* ---- one rule ------------------------------------------------------------------------- */

static bool run_model(IrModel *m, EvValue **outs, Diag *d)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	const EvValue *ins[g->ninputs + 1];
	memset(ins, 0, sizeof ins);   /* every input has its default value */
	EvOptions eo = {0};
	return ev_run(m, ins, g->ninputs, outs, &eo, d);
}

static void free_outs(EvValue **outs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ev_unref(outs[i]);
}

static bool write_bytes(const char *path, const uint8_t *buf, size_t len, Diag *d)
{
	return out_write_file(path, buf, len, d);
}

/* m in graft print's form, indented; the first 60 lines. */
static void print_indented(IrModel *m, FILE *out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	Diag d;
	diag_init(&d, NULL);
	if (mem) {
		bool ok = ir_print_model(m, mem, &d);
		fclose(mem);
		int n = 0;
		for (char *line = text, *nl; ok && line && *line; line = nl ? nl + 1 : NULL, n++) {
			nl = strchr(line, '\n');
			if (n < 60)
				fprintf(out, "      %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
		}
		if (n > 60)
			fprintf(out, "      ... (%d more lines)\n", n - 60);
		if (!ok)
			fprintf(out, "      (cannot print: %s)\n", d.first);
	}
	free(text);
}

typedef struct RuleRun {
	const MRule *mr;
	int index;
	double tol;
	int fired, tries, invalid;
	double max_err;
	uint32_t dtypes, ranks;     /* of the outputs of firing instances (bit masks) */
	int opset_lo, opset_hi;
	Tally why, bad;
	bool wrong;
	char wrong_text[1200];
} RuleRun;

static bool make_dir(const char *dir, Diag *d)
{
	struct stat st;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		diag_error(d, dir, "cannot create the folder: %s", strerror(errno));
		return false;
	}
	/* an existing name must be a real folder: not a symlink leading elsewhere */
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		diag_error(d, dir, "refusing to write into it: not a folder");
		return false;
	}
	return true;
}

/* Keep a firing instance, before and after (VerifyOptions.keep). */
static bool keep_instance(const VerifyOptions *o, const RuleRun *rr, const uint8_t *before, size_t blen,
                          IrModel *after, Diag *d)
{
	const char *dir = o->out_dir ? o->out_dir : "graft-verify";
	char pa[4096], pb[4096];
	snprintf(pa, sizeof pa, "%s/%s.%d.onnx", dir, rr->mr->name, rr->fired);
	snprintf(pb, sizeof pb, "%s/%s.%d.rewritten.onnx", dir, rr->mr->name, rr->fired);
	return make_dir(dir, d) && write_bytes(pa, before, blen, d) && ir_save_file(after, pb, NULL, d);
}

/* Save and print the counterexample; false if it cannot be saved. */
static bool counterexample(const VerifyOptions *o, RuleRun *rr, const uint8_t *before, size_t blen, IrModel *after,
                           double atol, Diag *d)
{
	const char *dir = o->out_dir ? o->out_dir : "graft-verify";
	if (o->no_save) {
		print_indented(after, o->out);
		return true;
	}
	if (!make_dir(dir, d))
		return false;
	char pa[4096], pb[4096];
	snprintf(pa, sizeof pa, "%s/%s.onnx", dir, rr->mr->name);
	snprintf(pb, sizeof pb, "%s/%s.rewritten.onnx", dir, rr->mr->name);
	if (!write_bytes(pa, before, blen, d) || !ir_save_file(after, pb, NULL, d))
		return false;
	FILE *out = o->out;
	fprintf(out, "    counterexample: %s (rewritten: %s)\n", pa, pb);
	Diag q;
	diag_init(&q, NULL);
	IrModel *m = ir_load_bytes(before, blen, pa, dir, NULL, &q);
	if (m) {
		fprintf(out, "    before (inputs are the graph inputs' values):\n");
		print_indented(m, out);
		ir_model_free(m);
	}
	fprintf(out, "    after:\n");
	print_indented(after, out);
	if (rr->tol > 0)
		fprintf(out, "    reproduce: graft compare %s %s --rtol 0 --atol %.17g\n", pa, pb, atol);
	else
		fprintf(out, "    reproduce: graft compare %s %s --exact\n", pa, pb);
	return true;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211u;
	return h;
}

/* The condition --why gave at the root of an instance where the rule did not fire. */
static void tally_why(RuleRun *rr, const RwResult *res)
{
	for (int i = 0; i < res->nwhy; i++)
		if (strcmp(res->why[i].node, "root") == 0) {
			char buf[512];
			snprintf(buf, sizeof buf, "%s%s%s", rw_why_kind_name(res->why[i].kind), res->why[i].detail ? ": " : "",
			         res->why[i].detail ? res->why[i].detail : "");
			tally_add(&rr->why, buf);
		}
}

/* A firing instance that agreed: counted, with what it covered. */
static void count_firing(RuleRun *rr, const EvValue *out, int opset)
{
	rr->fired++;
	rr->dtypes |= 1u << (out->dtype & 31);
	rr->ranks |= 1u << (out->rank & 31);
	if (!rr->opset_lo || opset < rr->opset_lo)
		rr->opset_lo = opset;
	if (opset > rr->opset_hi)
		rr->opset_hi = opset;
}

/* Draw and judge one instance of rule rr: dropped (invalid), not fired
 * (why tallied), agreed (counted, kept if asked), or WRONG (reported and
 * saved).  False only when a file cannot be written. */
static bool one_instance(const RwRuleSet *set, const VerifyOptions *o, RuleRun *rr, Rng *rng, int lo, int hi, Diag *d)
{
	GenInstance inst;
	if (!gen_instance(rr->mr->rule, lo, hi, rr->tol > 0, rng, &inst)) {
		rr->invalid++;
		tally_add(&rr->bad, inst.why);
		ir_model_free(inst.m);
		return true;
	}
	IrModel *m = inst.m;
	uint32_t nout = ir_graph(m, IR_MAIN_GRAPH)->noutputs;
	EvValue *before[nout + 1], *after[nout + 1];
	memset(before, 0, sizeof before);
	memset(after, 0, sizeof after);
	Diag q;
	diag_init(&q, NULL);
	uint8_t *bytes = NULL;
	size_t blen = 0;
	RwResult res;
	memset(&res, 0, sizeof res);
	bool ok = true;
	double atol = 0;
	if (!run_model(m, before, &q) || !ir_save_bytes(m, &bytes, &blen, &q)) {
		rr->invalid++;
		tally_add(&rr->bad, q.first);
	} else {
		const char *enabled[1] = {rr->mr->name};
		const RwRuleSet *sets[1] = {set};
		RwOptions ro = {.fuel = 1000, .enabled = enabled, .nenabled = 1, .no_cse = true,
		                .no_dce = true, .allow_vendor_ops = true, .why_rule = rr->mr->name};
		bool ran = rw_run(m, sets, 1, &ro, &res, &q), fired = false;
		for (size_t i = 0; i < res.nfirings; i++)
			fired |= res.firings[i].set == 0 && res.firings[i].rule == rr->index;
		if (!ran) {
			rr->wrong = true;
			snprintf(rr->wrong_text, sizeof rr->wrong_text, "the rewrite failed: %s", q.first);
		} else if (!fired) {
			tally_why(rr, &res);
		} else if (!run_model(m, after, &q)) {
			rr->wrong = true;
			snprintf(rr->wrong_text, sizeof rr->wrong_text, "the rewritten graph does not run: %s", q.first);
		} else {
			IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
			for (uint32_t i = 0; i < nout && !rr->wrong; i++) {
				Mismatch mm;
				double err = 0, scale = 1;
				if (!agree(ir_value(m, g->outputs[i])->name, before[i], after[i], rr->tol, &err, &scale, &mm)) {
					rr->wrong = true;
					snprintf(rr->wrong_text, sizeof rr->wrong_text, "%s", mm.text);
					/* the same bound, elementwise, for graft compare --atol */
					atol = tolerance_for(rr->tol, before[i]->dtype) * scale;
				}
				rr->max_err = fmax(rr->max_err, err);
			}
			if (!rr->wrong && rr->fired < o->keep)
				ok = keep_instance(o, rr, bytes, blen, m, d);
			if (!rr->wrong && ok)
				count_firing(rr, before[0], inst.opset);
		}
		if (rr->wrong) {
			fprintf(o->out, "%-14s %-24s %s:%d: instance %d (opset %d): %s\n", "WRONG", rr->mr->name,
			        rr->mr->file->path, rr->mr->line, rr->tries, inst.opset, rr->wrong_text);
			ok = counterexample(o, rr, bytes, blen, m, atol, d);
		}
	}
	free_outs(before, nout);
	free_outs(after, nout);
	rw_result_free(&res);
	ir_model_free(m);
	free(bytes);
	return ok;
}

/* Try rule rr until it has o->instances firings, a counterexample, or no tries left. */
static bool verify_rule(const RwRuleSet *set, const VerifyOptions *o, RuleRun *rr, Diag *d)
{
	const Rule *r = rr->mr->rule;
	int lo = dsl_rule_opset_lo(r), hi = dsl_rule_opset_hi(r);
	if (hi > 23)
		hi = 23;
	if (lo > hi) {
		tally_add(&rr->bad, "the rule's opsets are beyond 23");
		return true;
	}
	Rng rng = {o->seed ^ name_hash(rr->mr->name)};
	int instances = o->instances > 0 ? o->instances : 100, tries = o->tries > 0 ? o->tries : 10000;
	while (rr->tries < tries && rr->fired < instances && !rr->wrong) {
		rr->tries++;
		if (!one_instance(set, o, rr, &rng, lo, hi, d))
			return false;
	}
	return true;
}

static void report(const VerifyOptions *o, RuleRun *rr, VerifyCounts *c)
{
	FILE *out = o->out;
	const MRule *mr = rr->mr;
	if (rr->wrong) {
		c->wrong++;
		return;
	}
	if (rr->fired == 0) {
		c->unexercised++;
		int w = tally_top(&rr->why), b = tally_top(&rr->bad);
		fprintf(out, "%-14s %-24s %s:%d: fired on 0 of %d instances", "not exercised", mr->name, mr->file->path, mr->line,
		        rr->tries - rr->invalid);
		if (w >= 0)
			fprintf(out, "; most often: %s (%d)", rr->why.what[w], rr->why.count[w]);
		else if (b >= 0)
			fprintf(out, "; no valid instance: %s (%d of %d)", rr->bad.what[b], rr->bad.count[b], rr->tries);
		fprintf(out, "\n");
		if (o->verbose && w >= 0 && b >= 0)
			fprintf(out, "    invalid most often: %s (%d of %d)\n", rr->bad.what[b], rr->bad.count[b], rr->tries);
		return;
	}
	c->verified++;
	fprintf(out, "%-14s %-24s %s:%d: %d instance%s", "verified", mr->name, mr->file->path, mr->line, rr->fired,
	        rr->fired == 1 ? "" : "s");
	if (rr->tol > 0)
		fprintf(out, ", max error %.2g (tolerance %g)\n", rr->max_err, rr->tol);
	else
		fprintf(out, ", exact\n");
	if (o->verbose) {
		fprintf(out, "    %d tries, %d invalid; fired at opsets %d..%d, on", rr->tries, rr->invalid, rr->opset_lo,
		        rr->opset_hi);
		for (int t = 1; t < 32; t++)
			if (rr->dtypes & (1u << t))
				fprintf(out, " %s", dtype_name(t));
		fprintf(out, ", ranks");
		for (int k = 0; k < 32; k++)
			if (rr->ranks & (1u << k))
				fprintf(out, " %d", k);
		fprintf(out, "\n");
		int b = tally_top(&rr->bad), w = tally_top(&rr->why);
		if (b >= 0)
			fprintf(out, "    invalid most often: %s (%d)\n", rr->bad.what[b], rr->bad.count[b]);
		if (w >= 0)
			fprintf(out, "    did not fire most often: %s (%d)\n", rr->why.what[w], rr->why.count[w]);
	}
}

bool verify_rules(const RwRuleSet *set, const VerifyOptions *o, VerifyCounts *c, Diag *d)
{
	memset(c, 0, sizeof *c);
	const MRuleSet *prog = rw_rules_programs(set);
	if (!prog) {
		diag_error(d, set->name, "not a rule set loaded at run time");
		return false;
	}
	for (int k = 0; k < o->nonly; k++) {
		bool found = false;
		for (int i = 0; i < prog->nrules && !found; i++)
			found = strcmp(prog->rules[i].name, o->only[k]) == 0;
		if (!found) {
			diag_error(d, "graft verify", "no rule named '%s' in the files given", o->only[k]);
			return false;
		}
	}
	bool ok = true;
	for (int i = 0; i < prog->nrules && ok; i++) {
		const MRule *mr = &prog->rules[i];
		bool chosen = o->nonly == 0;
		for (int k = 0; k < o->nonly; k++)
			chosen |= strcmp(mr->name, o->only[k]) == 0;
		if (!chosen)
			continue;
		RuleRun rr = {.mr = mr, .index = i, .tol = mr->rule->tolerance};
		ok = verify_rule(set, o, &rr, d);
		if (ok)
			report(o, &rr, c);
		fflush(o->out);
		tally_free(&rr.why);
		tally_free(&rr.bad);
	}
	return ok;
}
