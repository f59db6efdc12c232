/* verify.c - graft verify: each rule of a loaded set run on generated
 * instances (gen.c) and checked on the reference evaluator; see verify.h.
 *
 * One instance: the evaluator runs it; the engine runs on it with only this
 * rule enabled and no CSE or DCE (folding stays, for the constant
 * arithmetic a result builds), so what changes is the rule's doing; if the
 * rule fired, the evaluator runs the rewritten graph and each graph output
 * is compared with the one before: same dtype, same shape, and every
 * element bit for bit (NaN with any NaN),
 * or, for a rule with [tolerance X], the same non-finite class at each
 * element (inf with inf of the same sign, NaN with NaN) and every finite
 * element within X of the largest magnitude of the output (at least 1), X
 * scaled to the dtype's precision for float16 and bfloat16: a finite value
 * against an inf is wrong at any tolerance.
 *
 * Instances are aimed (GenTarget) at the element type, rank class and
 * opset form the rule has fired in least (coverage, below), every other
 * one a step of gen.c's sweep of edge classes and windows.  The first
 * disagreement ends a rule: both graphs are saved (inputs as the graph
 * inputs' default values, so `graft compare A B` alone reproduces it) and
 * printed, with a hint where the outputs differ only by rounding, and one
 * where the other element types, tried next, all agree.  A rule that never
 * fires is "not exercised", with the condition --why gave most often at
 * the root. */
#include "verify.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/eval/eval.h"
#include "ir/outfile.h"
#include "dsl/mprog.h"
#include "runtime/eval/run.h"
#include "runtime/engine/rw_interp.h"
#include "ir/text.h"
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

/* Do a (before) and b (after) differ only by rounding: the same dtype and
 * shape, and every element the same bits, NaN both, or finite both and
 * apart by at most 8 steps of the dtype's precision at the output's scale
 * (max(1, max |a|)), some by more than nothing (-0 against 0 is a sign,
 * not a rounding)?  *err: the largest difference in agree()'s units. */
static bool rounding_only(const EvValue *a, const EvValue *b, double *err)
{
	*err = 0;
	if (a->kind != EV_TENSOR || b->kind != EV_TENSOR || a->dtype != b->dtype || !ev_is_float(a->dtype) ||
	    a->rank != b->rank || memcmp(a->dims, b->dims, sizeof *a->dims * (size_t)a->rank) != 0)
		return false;
	double eps = a->dtype == DT_DOUBLE ? 0x1p-52 : a->dtype == DT_FLOAT16 ? 0x1p-10 : a->dtype == DT_BFLOAT16 ? 0x1p-7 : 0x1p-23;
	double scale = 1, unit = tolerance_for(1, a->dtype);
	for (int64_t i = 0; i < a->numel; i++) {
		double w = fabs(ev_get_f(a, i));
		if (isfinite(w) && w > scale)
			scale = w;
	}
	size_t es = ev_elem_size(a->dtype);
	for (int64_t i = 0; i < a->numel; i++) {
		double p = ev_get_f(a, i), q = ev_get_f(b, i);
		if (memcmp((const uint8_t *)a->data + (size_t)i * es, (const uint8_t *)b->data + (size_t)i * es, es) == 0 ||
		    (isnan(p) && isnan(q)))
			continue;
		if (!isfinite(p) || !isfinite(q) || fabs(p - q) > 8 * eps * scale)
			return false;
		*err = fmax(*err, fabs(p - q) / scale / unit);
	}
	return *err > 0;
}

/* The hint under a WRONG line whose outputs differ only by rounding: the
 * error, and the [tolerance X] (a power of ten) that would cover it. */
static void print_rounding_hint(FILE *out, double tol, double err)
{
	double x = pow(10, ceil(log10(err * 1.5)));
	fprintf(out, "    only rounding: every element within %.2g of the one before (float32 terms)", err);
	if (tol > 0)
		fprintf(out, "; the rule's [tolerance %g] is too tight, [tolerance %g] would cover it\n", tol, x);
	else
		fprintf(out, "; if the rule is approximate, say so: [tolerance %g]\n", x);
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

/* ---- coverage ---------------------------------------------------------------------------
 * A rule is tried until it has fired (and agreed) o->instances times in
 * every cell of three partitions of its instances: the element type of its
 * root's first input, the rank class of that input, and the opset form of
 * its pattern (gen_opset_forms).  Each instance is aimed at the cell of
 * each partition that has fired least; a cell aimed at many times (twenty
 * times the tries a firing has taken on average) without one firing is one
 * the rule cannot match (a guard on the dtype, a Conv of rank 0), and is
 * left out.  A rule verified with a cell it fired in short of the count
 * has a coverage warning (--strict: an error). */

enum { NRANKS = 5, MAX_TYPES = 16, MAX_FORMS = 12 };
static const int rank_lo[NRANKS] = {0, 1, 2, 3, 5}, rank_hi[NRANKS] = {0, 1, 2, 4, 6};
static const char *const rank_name[NRANKS] = {"0", "1", "2", "3-4", "5-6"};

typedef struct Cell {
	int fired;                  /* firing instances that agreed */
	int aimed;                  /* instances aimed at it */
	int valid;                  /* valid graphs that had it (fired or not) */
	int refused;                /* element types: graphs of it where the rule matched and the
	                               engine refused the result (no ORT kernel, a schema, a type) */
	bool excluded;              /* the guard rules it out (guard_cells) */
} Cell;

typedef struct Coverage {
	int dtypes[MAX_TYPES];      /* the candidate element types */
	Cell dt[MAX_TYPES];
	int ndtypes;
	Cell rk[NRANKS];
	int form_lo[MAX_FORMS], form_hi[MAX_FORMS];
	Cell fm[MAX_FORMS];
	int nforms;
	uint32_t types_at[24];      /* gen_root_types per opset */
	uint32_t fired_at[MAX_TYPES];   /* per element type, the opsets it fired at (bit o) */
	bool guarded;               /* guard_cells has run */
} Coverage;

typedef struct RuleRun {
	const MRuleSet *set;        /* the rules, mr's among them */
	const MRule *mr;
	int index;
	double tol;
	int fired, tries, invalid;
	double max_err;
	Coverage cov;
	Tally why, bad;
	bool wrong;
	char wrong_text[1200];
	/* after a counterexample: is the rule wrong on its element type only? */
	int wrong_dtype;            /* the counterexample's (its first graph input's) */
	char wrong_var[64];         /* the pattern variable of that input */
	bool probing;               /* trying the other element types: disagreements are only noted */
	bool probe_wrong;           /* one of those disagreed too */
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

/* The ranks (bit r) and element types (bit dt) the guard e of program p
 * (as lowered: gen_guard) lets variable v have: rank(v) == 4,
 * dtype(v) != float16, and those under && and ||; anything else lets it
 * have all. */
static void guard_sets(const MProg *p, const MExpr *e, const char *v, uint32_t *ranks, uint32_t *types)
{
	*ranks = *types = UINT32_MAX;
	if (!e || e->kind != ME_BIN)
		return;
	if (e->op == EX_AND || e->op == EX_OR) {
		uint32_t r0, t0, r1, t1;
		guard_sets(p, e->kids[0], v, &r0, &t0);
		guard_sets(p, e->kids[1], v, &r1, &t1);
		*ranks = e->op == EX_AND ? r0 & r1 : r0 | r1;
		*types = e->op == EX_AND ? t0 & t1 : t0 | t1;
		return;
	}
	if (e->op != EX_EQ && e->op != EX_NE)
		return;
	for (int side = 0; side < 2; side++) {
		const MExpr *fact = e->kids[side], *lit = e->kids[1 - side];
		const char *of = (fact->kind == ME_RANK || fact->kind == ME_DTYPEOF) ? gen_var_name(p, fact->kids[0]) : NULL;
		if (!of || strcmp(of, v) != 0)
			continue;
		uint32_t bit = 0;
		if (fact->kind == ME_RANK && lit->kind == ME_INT && lit->i >= 0 && lit->i < 32)
			bit = 1u << lit->i;
		else if (fact->kind == ME_DTYPEOF && lit->kind == ME_DTYPE)   /* float32, float64 or ONNX's own */
			bit = lit->i > 0 && lit->i < 32 ? 1u << lit->i : 0;
		if (!bit)
			continue;
		uint32_t set = e->op == EX_EQ ? bit : ~bit;
		if (fact->kind == ME_RANK)
			*ranks = set;
		else
			*types = set;
	}
}

/* Once the first graph input's variable is known: the element types and
 * rank classes the guard rules out for it are left out, not aimed at. */
static void guard_cells(Coverage *c, const MProg *p, const char *var)
{
	uint32_t ranks, types;
	c->guarded = true;
	guard_sets(p, gen_guard(p), var, &ranks, &types);
	for (int i = 0; i < c->ndtypes; i++)
		c->dt[i].excluded = !(types & (1u << c->dtypes[i]));
	for (int i = 0; i < NRANKS; i++)
		c->rk[i].excluded = !(ranks & (((2u << rank_hi[i]) - 1) & ~((1u << rank_lo[i]) - 1)));
}

/* The cells instance inst is in (NULL where none); add: a cell for its
 * element type if it has none (a type the root's first input does not take). */
static void cells_of(Coverage *c, const GenInstance *inst, bool add, Cell **out)
{
	out[0] = out[1] = out[2] = NULL;
	int d = 0;
	while (d < c->ndtypes && c->dtypes[d] != inst->dtype)
		d++;
	if (d == c->ndtypes && add && d < MAX_TYPES)
		c->dtypes[c->ndtypes++] = inst->dtype;
	if (d < c->ndtypes)
		out[0] = &c->dt[d];
	for (int i = 0; i < NRANKS; i++)
		if (inst->rank >= rank_lo[i] && inst->rank <= rank_hi[i])
			out[1] = &c->rk[i];
	for (int i = 0; i < c->nforms; i++)
		if (inst->opset >= c->form_lo[i] && inst->opset <= c->form_hi[i])
			out[2] = &c->fm[i];
}

/* A valid instance (it ran), fired or not: counted in its cells. */
static void count_valid(Coverage *c, const GenInstance *inst)
{
	Cell *cells[3];
	cells_of(c, inst, false, cells);
	for (int i = 0; i < 3; i++)
		if (cells[i])
			cells[i]->valid++;
}

/* A firing instance that agreed: counted, in the cells it covers. */
static void count_firing(RuleRun *rr, const GenInstance *inst)
{
	Cell *cells[3];
	rr->fired++;
	cells_of(&rr->cov, inst, true, cells);
	for (int i = 0; i < 3; i++)
		if (cells[i])
			cells[i]->fired++;
	if (cells[0] && inst->opset < 32)
		rr->cov.fired_at[cells[0] - rr->cov.dt] |= 1u << inst->opset;
}

/* The condition --why gave at the root of an instance where the rule did
 * not fire; where the engine refused the result, the instance's element
 * type is counted against (ONNX Runtime's kernels go by type). */
static void tally_why(RuleRun *rr, const RwResult *res, const GenInstance *inst)
{
	for (int i = 0; i < res->nwhy; i++)
		if (strcmp(res->why[i].node, "root") == 0) {
			RwWhyKind k = res->why[i].kind;
			if (k == RW_WHY_TYPE || k == RW_WHY_SCHEMA || k == RW_WHY_KERNEL) {
				/* a kernel or schema by element type: the type's cell */
				Cell *cells[3];
				cells_of(&rr->cov, inst, false, cells);
				if (cells[0])
					cells[0]->refused++;
			}
			char buf[512];
			snprintf(buf, sizeof buf, "%s%s%s", rw_why_kind_name(res->why[i].kind), res->why[i].detail ? ": " : "",
			         res->why[i].detail ? res->why[i].detail : "");
			tally_add(&rr->why, buf);
		}
}

/* Draw and judge one instance of rule rr: dropped (invalid), not fired
 * (why tallied), agreed (counted, kept if asked), or WRONG (reported and
 * saved).  False only when a file cannot be written. */
static bool one_instance(const RwRuleSet *set, const VerifyOptions *o, RuleRun *rr, Rng *rng, const GenTarget *t,
                         Diag *d)
{
	GenInstance inst;
	if (!gen_instance(rr->set, rr->mr, t, rng, &inst)) {
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
	bool ok = true, bad = false;
	double atol = 0, round_err = -1;
	char text[sizeof rr->wrong_text];
	if (!run_model(m, before, &q) || !ir_save_bytes(m, &bytes, &blen, &q)) {
		rr->invalid++;
		tally_add(&rr->bad, q.first);
	} else {
		if (!rr->cov.guarded && inst.first_var)
			guard_cells(&rr->cov, &rr->mr->prog, inst.first_var);
		count_valid(&rr->cov, &inst);
		const char *enabled[1] = {rr->mr->name};
		const RwRuleSet *sets[1] = {set};
		RwOptions ro = {.fuel = 1000, .enabled = enabled, .nenabled = 1, .no_cse = true,
		                .no_dce = true, .allow_vendor_ops = true, .why_rule = rr->mr->name};
		bool ran = rw_run(m, sets, 1, &ro, &res, &q), fired = false;
		for (size_t i = 0; i < res.nfirings; i++)
			fired |= res.firings[i].set == 0 && res.firings[i].rule == rr->index;
		if (!ran) {
			bad = true;
			snprintf(text, sizeof text, "the rewrite failed: %s", q.first);
		} else if (!fired) {
			tally_why(rr, &res, &inst);
		} else if (!run_model(m, after, &q)) {
			bad = true;
			snprintf(text, sizeof text, "the rewritten graph does not run: %s", q.first);
		} else {
			IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
			for (uint32_t i = 0; i < nout && !bad; i++) {
				Mismatch mm;
				double err = 0, scale = 1;
				if (!agree(ir_value(m, g->outputs[i])->name, before[i], after[i], rr->tol, &err, &scale, &mm)) {
					bad = true;
					snprintf(text, sizeof text, "%s", mm.text);
					/* the same bound, elementwise, for graft compare --atol */
					atol = tolerance_for(rr->tol, before[i]->dtype) * scale;
					/* only rounding, in every output? */
					round_err = 0;
					for (uint32_t j = 0; j < nout && round_err >= 0; j++) {
						double e;
						round_err = rounding_only(before[j], after[j], &e) ? fmax(round_err, e) : -1;
					}
				}
				if (!rr->probing)
					rr->max_err = fmax(rr->max_err, err);
			}
			if (!bad && !rr->probing && rr->fired < o->keep)
				ok = keep_instance(o, rr, bytes, blen, m, d);
			if (!bad && ok)
				count_firing(rr, &inst);
		}
		if (bad && rr->probing) {
			rr->probe_wrong = true;
		} else if (bad) {
			rr->wrong = true;
			snprintf(rr->wrong_text, sizeof rr->wrong_text, "%s", text);
			rr->wrong_dtype = inst.dtype;
			snprintf(rr->wrong_var, sizeof rr->wrong_var, "%s", inst.first_var ? inst.first_var : "x");
			fprintf(o->out, "%-14s %-24s %s:%d: instance %d (opset %d): %s\n", "WRONG", rr->mr->name,
			        rr->mr->file->path, rr->mr->line, rr->tries, inst.opset, rr->wrong_text);
			ok = counterexample(o, rr, bytes, blen, m, atol, d);
			if (round_err >= 0)
				print_rounding_hint(o->out, rr->tol, round_err);
		}
	}
	free_outs(before, nout);
	free_outs(after, nout);
	rw_result_free(&res);
	ir_model_free(m);
	free(bytes);
	return ok;
}

/* The cells of rule mr: the element types (those its root's first input
 * takes; another an instance's first input has joins when it fires), rank
 * classes and opset forms its instances can have in lo..hi. */
static void coverage_init(Coverage *c, const MRule *mr, int lo, int hi)
{
	uint32_t all = 0;
	for (int o = lo; o <= hi; o++)
		all |= c->types_at[o] = gen_root_types(mr, o);
	for (int t = 1; t < 32 && c->ndtypes < MAX_TYPES; t++)
		if (all & (1u << t))
			c->dtypes[c->ndtypes++] = t;
	c->nforms = gen_opset_forms(mr, lo, hi, c->form_lo, c->form_hi, MAX_FORMS);
}

/* Is cell c one the rule cannot match: aimed at `giveup` times without a
 * firing, 20 times without one valid graph in it (a dtype an op of the
 * pattern does not take), or matched 10 times and the result refused each
 * time (ONNX Runtime has no kernel for it)? */
static bool dead(const Cell *c, int giveup)
{
	return c->fired == 0 && (c->excluded || c->aimed >= giveup || (c->aimed >= 20 && c->valid == 0) || c->refused >= 10);
}

/* The cell of cells[n] to aim at: the live one below `want` that has fired
 * least (-1: none). */
static int neediest(const Cell *cells, int n, int want, int giveup)
{
	int best = -1;
	for (int i = 0; i < n; i++) {
		const Cell *c = &cells[i];
		if (c->fired >= want || dead(c, giveup))
			continue;
		if (best < 0 || c->fired < cells[best].fired || (c->fired == cells[best].fired && c->aimed < cells[best].aimed))
			best = i;
	}
	return best;
}

/* How often a cell of cells[n] is aimed at before it counts as one the
 * rule cannot match: ten times the aims a firing has taken in the cells
 * that fired (a cell as live as those is missed once in 20000, one a
 * quarter as live once in 12), at least 40; a quarter of the tries while
 * none has. */
static int giveup_after(const Cell *cells, int n, int tries)
{
	int64_t aimed = 0, fired = 0;
	for (int i = 0; i < n; i++)
		if (cells[i].fired) {
			aimed += cells[i].aimed;
			fired += cells[i].fired;
		}
	int64_t cap = tries / 4 > 40 ? tries / 4 : 40, g = fired ? 10 * (aimed + fired) / fired : cap;
	return (int)(g < 40 ? 40 : g > cap ? cap : g);
}

/* The next instance's target; false when every live cell has enough firings. */
static bool next_target(RuleRun *rr, int lo, int hi, int want, int tries, GenTarget *t)
{
	Coverage *c = &rr->cov;
	int d = neediest(c->dt, c->ndtypes, want, giveup_after(c->dt, c->ndtypes, tries));
	int k = neediest(c->rk, NRANKS, want, giveup_after(c->rk, NRANKS, tries));
	int f = neediest(c->fm, c->nforms, want, giveup_after(c->fm, c->nforms, tries));
	if (d < 0 && k < 0 && f < 0 && rr->fired >= want)
		return false;
	/* the opsets where the pattern's ops exist, or the form aimed at */
	if (c->nforms > 0) {
		lo = c->form_lo[0];
		hi = c->form_hi[c->nforms - 1];
	}
	*t = (GenTarget){lo, hi, 0, -1, -1, rr->tries % 2 == 0 ? rr->tries / 2 : -1};
	if (f >= 0) {
		t->opset_lo = c->form_lo[f];
		t->opset_hi = c->form_hi[f];
	}
	if (d >= 0) {
		/* the opsets of the form where the root takes the type, else any
		 * where it does; a type only another input has: the form's */
		uint32_t bit = 1u << c->dtypes[d];
		int a = t->opset_lo, b = t->opset_hi;
		while (a <= b && !(c->types_at[a] & bit))
			a++;
		while (b >= a && !(c->types_at[b] & bit))
			b--;
		if (a > b) {
			a = lo;
			b = hi;
			while (a <= b && !(c->types_at[a] & bit))
				a++;
			while (b >= a && !(c->types_at[b] & bit))
				b--;
			if (a > b) {
				a = t->opset_lo;
				b = t->opset_hi;
			} else {
				f = -1;
			}
		}
		/* three times in four, the opsets in a..b where the type has fired
		 * (a result op may take it only from some opset on) */
		uint32_t at = c->fired_at[d] & (uint32_t)(((2ull << b) - 1) & ~((1ull << a) - 1));
		if (at && rr->tries % 4) {
			a = __builtin_ctz(at);
			b = 31 - __builtin_clz(at);
		}
		t->opset_lo = a;
		t->opset_hi = b;
		t->dtype = c->dtypes[d];
		c->dt[d].aimed++;
	}
	if (k >= 0) {
		t->rank_lo = rank_lo[k];
		t->rank_hi = rank_hi[k];
		c->rk[k].aimed++;
	} else {
		/* every rank class has enough: draw among those the rule fires in */
		int live[NRANKS], n = 0;
		for (int i = 0; i < NRANKS; i++)
			if (c->rk[i].fired)
				live[n++] = i;
		if (n) {
			int i = live[rr->tries % n];
			t->rank_lo = rank_lo[i];
			t->rank_hi = rank_hi[i];
		}
	}
	if (f >= 0)
		c->fm[f].aimed++;
	return true;
}

/* dtype dt as a guard spells it (float32, float64, ...). */
static const char *guard_dtype_name(int dt)
{
	return dt == DT_FLOAT ? "float32" : dt == DT_DOUBLE ? "float64" : dtype_name(dt);
}

/* After a counterexample: is the rule wrong on its element type only?  The
 * other types it can fire in are tried (20 agreeing firings each, 3000
 * tries at most, no more than --tries); if none of them disagrees, the
 * hint names the type and the guard that would leave it out. */
enum { PROBE_FIRINGS = 20, PROBE_TRIES = 3000 };

static bool probe_dtypes(const RwRuleSet *set, const VerifyOptions *o, RuleRun *rr, Rng *rng, int lo, int hi, Diag *d)
{
	Coverage *c = &rr->cov;
	if (c->nforms > 0) {
		lo = c->form_lo[0];
		hi = c->form_hi[c->nforms - 1];
	}
	rr->probing = true;
	int budget = o->tries > 0 && o->tries < PROBE_TRIES ? o->tries : PROBE_TRIES;
	for (int n = 0; n < budget && !rr->probe_wrong; n++) {
		/* the other type that has fired least (and may still fire) */
		int giveup = giveup_after(c->dt, c->ndtypes, budget), best = -1;
		for (int i = 0; i < c->ndtypes; i++) {
			const Cell *ci = &c->dt[i];
			if (c->dtypes[i] == rr->wrong_dtype || ci->fired >= PROBE_FIRINGS || dead(ci, giveup))
				continue;
			if (best < 0 || ci->fired < c->dt[best].fired)
				best = i;
		}
		if (best < 0)
			break;
		c->dt[best].aimed++;
		uint32_t bit = 1u << c->dtypes[best];
		int a = lo, b = hi;
		while (a < b && !(c->types_at[a] & bit))
			a++;
		while (b > a && !(c->types_at[b] & bit))
			b--;
		GenTarget t = {a, b, c->dtypes[best], -1, -1, n % 2 == 0 ? n / 2 : -1};
		if (!one_instance(set, o, rr, rng, &t, d))
			return false;
	}
	rr->probing = false;
	int others = 0;
	char names[256] = "";
	size_t len = 0;
	for (int i = 0; i < c->ndtypes; i++)
		if (c->dtypes[i] != rr->wrong_dtype && c->dt[i].fired) {
			others += c->dt[i].fired;
			if (len < sizeof names)
				len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
				                        guard_dtype_name(c->dtypes[i]));
		}
	if (!rr->probe_wrong && others >= PROBE_FIRINGS)
		fprintf(o->out, "    only on %s: %d instances of %s agreed; to leave it out, guard with dtype(%s) != %s\n",
		        guard_dtype_name(rr->wrong_dtype), others, names, rr->wrong_var, guard_dtype_name(rr->wrong_dtype));
	return true;
}

/* Try rule rr until every cell it can fire in has o->instances firings, a
 * counterexample, or no tries left. */
static bool verify_rule(const RwRuleSet *set, const VerifyOptions *o, RuleRun *rr, Diag *d)
{
	int lo = rr->mr->opset_min, hi = rr->mr->opset_max ? rr->mr->opset_max : 23;
	if (hi > 23)
		hi = 23;
	if (lo < 1)
		lo = 1;
	if (lo > hi) {
		tally_add(&rr->bad, "the rule's opsets are beyond 23");
		return true;
	}
	coverage_init(&rr->cov, rr->mr, lo, hi);
	Rng rng = {o->seed ^ name_hash(rr->mr->name)};
	int instances = o->instances > 0 ? o->instances : 100, tries = o->tries > 0 ? o->tries : 10000;
	GenTarget t;
	while (rr->tries < tries && !rr->wrong && next_target(rr, lo, hi, instances, tries, &t)) {
		rr->tries++;
		if (!one_instance(set, o, rr, &rng, &t, d))
			return false;
	}
	if (rr->wrong)
		return probe_dtypes(set, o, rr, &rng, lo, hi, d);
	return true;
}

/* The cells of a partition a verified rule fired in, with their counts
 * (verbose) or as names; then (verbose) those it never fired in. */
static void print_cells(FILE *out, const char *what, const Cell *cells, const char *const *names, int n, bool verbose)
{
	fprintf(out, "%s", what);
	bool first = true;
	for (int i = 0; i < n; i++)
		if (cells[i].fired) {
			fprintf(out, "%s%s", first ? " " : ", ", names[i]);
			if (verbose)
				fprintf(out, " %d", cells[i].fired);
			first = false;
		}
	bool none = true;
	for (int i = 0; i < n && verbose; i++)
		if (!cells[i].fired) {
			fprintf(out, "%s%s (aimed at %d times)", none ? "; never: " : ", ", names[i], cells[i].aimed);
			none = false;
		}
}

/* The cells a rule fired in short of `want` times, as "int8 (12), rank 5-6 (40)"; how many. */
static int short_cells(const Coverage *c, const char *const *dnames, const char *const *fnames, int want, char *buf,
                       size_t size)
{
	int n = 0;
	size_t o = 0;
	buf[0] = 0;
	const Cell *parts[3] = {c->dt, c->rk, c->fm};
	const char *const *names[3] = {dnames, rank_name, fnames};
	const char *prefix[3] = {"", "rank ", "opsets "};
	int counts[3] = {c->ndtypes, NRANKS, c->nforms};
	for (int p = 0; p < 3; p++)
		for (int i = 0; i < counts[p]; i++)
			if (parts[p][i].fired && parts[p][i].fired < want) {
				if (o < size)
					o += (size_t)snprintf(buf + o, size - o, "%s%s%s (%d)", n ? ", " : "", prefix[p], names[p][i],
					                      parts[p][i].fired);
				n++;
			}
	return n;
}

/* A verified rule's coverage: one line, a warning if short (counted in c). */
static void report_coverage(const VerifyOptions *o, RuleRun *rr, VerifyCounts *c)
{
	FILE *out = o->out;
	const Coverage *cv = &rr->cov;
	const char *dnames[MAX_TYPES];
	char fbuf[MAX_FORMS][24];
	const char *fnames[MAX_FORMS];
	for (int i = 0; i < cv->ndtypes; i++)
		dnames[i] = dtype_name(cv->dtypes[i]);
	for (int i = 0; i < cv->nforms; i++) {
		if (cv->form_lo[i] == cv->form_hi[i])
			snprintf(fbuf[i], sizeof fbuf[i], "%d", cv->form_lo[i]);
		else
			snprintf(fbuf[i], sizeof fbuf[i], "%d-%d", cv->form_lo[i], cv->form_hi[i]);
		fnames[i] = fbuf[i];
	}
	int want = o->instances > 0 ? o->instances : 100;
	fprintf(out, "    ");
	print_cells(out, "fired on", cv->dt, dnames, cv->ndtypes, o->verbose);
	print_cells(out, o->verbose ? "\n    ranks" : "; ranks", cv->rk, rank_name, NRANKS, o->verbose);
	print_cells(out, o->verbose ? "\n    opsets" : "; opsets", cv->fm, fnames, cv->nforms, o->verbose);
	fprintf(out, "\n");
	char buf[512];
	if (short_cells(cv, dnames, fnames, want, buf, sizeof buf) > 0) {
		c->short_coverage++;
		fprintf(out, "    warning: fewer than %d firings on %s after %d tries\n", want, buf, rr->tries);
	}
}

/* The three reasons of tally t given most often, most often first. */
static void print_top(FILE *out, const char *what, Tally *t)
{
	int shown[3], n = 0;
	for (; n < 3; n++) {
		int best = -1;
		for (int i = 0; i < t->n; i++) {
			bool seen = false;
			for (int k = 0; k < n; k++)
				seen |= shown[k] == i;
			if (!seen && (best < 0 || t->count[i] > t->count[best]))
				best = i;
		}
		if (best < 0)
			break;
		shown[n] = best;
		fprintf(out, "    %s%s: %s (%d)\n", what, n ? ", then" : " most often", t->what[best], t->count[best]);
	}
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
	report_coverage(o, rr, c);
	if (o->verbose) {
		fprintf(out, "    %d tries, %d invalid\n", rr->tries, rr->invalid);
		print_top(out, "invalid", &rr->bad);
		print_top(out, "did not fire", &rr->why);
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
	/* a drawn instance may ask for a huge tensor (a Range to a drawn limit,
	 * a Less of it with itself): the evaluator refuses it, the instance is
	 * dropped */
	size_t limit_before = ev_memory_limit();
	ev_set_memory_limit(o->max_memory ? o->max_memory : VERIFY_MAX_MEMORY);
	bool ok = true;
	for (int i = 0; i < prog->nrules && ok; i++) {
		const MRule *mr = &prog->rules[i];
		bool chosen = o->nonly == 0;
		for (int k = 0; k < o->nonly; k++)
			chosen |= strcmp(mr->name, o->only[k]) == 0;
		if (!chosen)
			continue;
		RuleRun rr = {.set = prog, .mr = mr, .index = i, .tol = mr->tolerance};
		ok = verify_rule(set, o, &rr, d);
		if (ok)
			report(o, &rr, c);
		fflush(o->out);
		tally_free(&rr.why);
		tally_free(&rr.bad);
	}
	ev_set_memory_limit(limit_before);
	return ok;
}
