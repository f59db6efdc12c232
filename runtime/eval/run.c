/* run.c - running whole models for `graft run` and `graft compare`: the
 * inputs (from .pb files, or generated deterministically exactly as
 * ../shared/tools/ort/ort-run.mjs generates them, so both tools feed the same
 * numbers for the same seed; graft compare alone gives symbolic dims sizes
 * other than ort-run.mjs's 1, run_drawn_dim) and the comparison of outputs. */
#include "run.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- deterministic inputs (mulberry32, seeded per input index) ---------------- */

static uint32_t seed_for(uint32_t seed, uint32_t index)
{
	uint32_t h = 2166136261u ^ seed;
	h = (h ^ (index + 0x9e3779b9u)) * 16777619u;
	h = (h ^ (h >> 13)) * 0x5bd1e995u;
	return h ^ (h >> 15);
}

static double mulberry32(uint32_t *a)
{
	*a += 0x6D2B79F5u;
	uint32_t t = (*a ^ (*a >> 15)) * (1u | *a);
	t = (t + ((t ^ (t >> 7)) * (61u | t))) ^ t;
	return (double)(t ^ (t >> 14)) / 4294967296.0;
}

/* ort-run.mjs's float -> half for generated inputs (rounds half up). */
static uint16_t js_float_to_half(float v)
{
	uint32_t x;
	memcpy(&x, &v, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	int exp = (int)((x >> 23) & 0xff) - 127 + 15;
	uint32_t mant = x & 0x7fffff;
	if (((x >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	if (exp >= 0x1f)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		if (exp < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		int shift = 14 - exp;
		uint32_t h = mant >> shift;
		if ((mant >> (shift - 1)) & 1)
			h += 1;
		return (uint16_t)(sign | h);
	}
	uint32_t h = sign | (uint32_t)exp << 10 | mant >> 13;
	if (mant & 0x1000)
		h += 1;
	return (uint16_t)h;
}

static int64_t dim_value(const Dim *d, const RunOptions *o)
{
	if (d->size >= 0)
		return d->size;
	for (int i = 0; d->param && i < o->ndims; i++)
		if (strcmp(o->dim_names[i], d->param) == 0)
			return o->dim_values[i];
	return 1; /* unknown and symbolic dims default to 1, as ort-run.mjs does */
}

EvValue *run_generate_input(IrModel *m, ValueId v, uint32_t index, const RunOptions *o, Diag *d)
{
	IrValue *val = ir_value(m, v);
	int64_t dims[EV_MAX_RANK];
	int rank = val->shape.rank < 0 ? 1 : val->shape.rank;
	if (rank > EV_MAX_RANK) {
		diag_error(d, m->path, "input '%s': rank %d is too large", val->name, rank);
		return NULL;
	}
	for (int i = 0; i < rank; i++)
		dims[i] = val->shape.rank < 0 ? 1 : dim_value(&val->shape.dims[i], o);
	/* float8, 4-bit and complex values: no generator (and no kernel) */
	int dt = val->dtype;
	bool generable = dt == DT_STRING || (dt >= DT_FLOAT && dt <= DT_BFLOAT16 && dt != DT_COMPLEX64 && dt != DT_COMPLEX128);
	EvValue *t = generable ? ev_tensor_new(dt, rank, dims) : NULL;
	if (!t) {
		diag_error(d, m->path, "input '%s': cannot generate values of type %s (use --inputs)", val->name,
		           dtype_name(val->dtype));
		return NULL;
	}
	uint32_t state = seed_for((uint32_t)o->seed, index);
	int64_t lo = o->int_lo, span = o->int_hi - o->int_lo;
	for (int64_t i = 0; i < t->numel; i++) {
		double r = mulberry32(&state);
		switch (t->dtype) {
		case DT_FLOAT: ((float *)t->data)[i] = (float)(r * 2 - 1); break;
		case DT_DOUBLE: ((double *)t->data)[i] = r * 2 - 1; break;
		case DT_FLOAT16: ((uint16_t *)t->data)[i] = js_float_to_half((float)(r * 2 - 1)); break;
		case DT_BOOL: ((uint8_t *)t->data)[i] = r < 0.5; break;
		case DT_STRING: {
			char buf[32];
			snprintf(buf, sizeof buf, "s%d", (int)floor(r * 1000));
			((char **)t->data)[i] = strdup(buf);
			break;
		}
		default:
			if (ev_is_float(t->dtype))
				ev_set_f(t, i, r * 2 - 1);
			else
				ev_set_i(t, i, lo + (int64_t)floor(r * (double)span));
			break;
		}
	}
	return t;
}

/* ---- symbolic dims of generated inputs (graft compare) ----------------------------- */

int run_symbolic_dims(IrModel *m, const char **names, int max)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	int n = 0;
	for (uint32_t i = 0; i < g->ninputs; i++) {
		const IrValue *v = ir_value(m, g->inputs[i]);
		for (int k = 0; !v->tensor && k < v->shape.rank; k++) {
			const char *p = v->shape.dims[k].size < 0 ? v->shape.dims[k].param : NULL;
			int j = 0;
			while (p && j < n && strcmp(names[j], p) != 0)
				j++;
			if (p && j == n && n < max)
				names[n++] = p;
		}
	}
	return n;
}

int64_t run_drawn_dim(uint32_t seed, int index)
{
	/* 2..5 in turn: up to four names get four different sizes, and each
	 * name a different size from one seed to the next */
	return 2 + (int64_t)((seed + (uint32_t)index) % 4);
}

/* ---- inputs for a run ---------------------------------------------------------- */

uint32_t run_fed_inputs(IrModel *m, ValueId *ids)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->ninputs; i++)
		if (!ir_value(m, g->inputs[i])->tensor)
			ids[n++] = g->inputs[i];
	return n;
}

/* The declared type of graph input v written as "float[N,3]" into buf. */
static const char *declared(const IrValue *v, char *buf, size_t size)
{
	size_t o = (size_t)snprintf(buf, size, "%s", v->dtype ? dtype_name(v->dtype) : "?");
	if (v->shape.rank < 0)
		return buf;
	o += (size_t)snprintf(buf + o, size > o ? size - o : 0, "[");
	for (int i = 0; i < v->shape.rank && o < size; i++) {
		const Dim *dm = &v->shape.dims[i];
		if (dm->size >= 0)
			o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "", (long long)dm->size);
		else
			o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "," : "", ir_dim_label(dm));
	}
	if (o < size)
		snprintf(buf + o, size - o, "]");
	return buf;
}

/* Does the tensor t given for graph input v (from file `path`) fit v's
 * declared dtype and known dims?  A symbolic dim takes one size across all
 * the inputs (and the --dim value, if given): names[], sizes[] and from[]
 * hold what earlier inputs bound. */
static bool given_fits(IrModel *m, ValueId v, const EvValue *t, const char *path, const RunOptions *o,
                       const char **names, int64_t *sizes, const char **from, int *nbound, Diag *d)
{
	const IrValue *val = ir_value(m, v);
	char buf[200], got[64];
	if (val->non_tensor || t->kind != EV_TENSOR)
		return true;
	if (val->dtype && t->dtype != val->dtype) {
		diag_error(d, path, "input '%s' is %s, the model declares %s", val->name, dtype_name(t->dtype),
		           dtype_name(val->dtype));
		return false;
	}
	if (val->shape.rank < 0)
		return true;
	run_format_dims(t, got, sizeof got);
	if (t->rank != val->shape.rank) {
		diag_error(d, path, "input '%s' has shape %s, the model declares %s", val->name, got,
		           declared(val, buf, sizeof buf));
		return false;
	}
	for (int i = 0; i < t->rank; i++) {
		const Dim *dm = &val->shape.dims[i];
		if (dm->size >= 0 && dm->size != t->dims[i]) {
			diag_error(d, path, "input '%s' has shape %s, the model declares %s", val->name, got,
			           declared(val, buf, sizeof buf));
			return false;
		}
		if (dm->size >= 0 || !dm->param)
			continue;
		for (int k = 0; k < o->ndims; k++)
			if (strcmp(o->dim_names[k], dm->param) == 0 && o->dim_values[k] != t->dims[i]) {
				diag_error(d, path, "input '%s' has shape %s, but --dim %s=%lld", val->name, got, dm->param,
				           (long long)o->dim_values[k]);
				return false;
			}
		int k = 0;
		while (k < *nbound && strcmp(names[k], dm->param) != 0)
			k++;
		if (k < *nbound && sizes[k] != t->dims[i]) {
			diag_error(d, path, "input '%s' has shape %s, but %s is %lld in input '%s'", val->name, got, dm->param,
			           (long long)sizes[k], from[k]);
			return false;
		}
		if (k == *nbound && k < EV_MAX_RANK * 16) {
			names[k] = dm->param;
			sizes[k] = t->dims[i];
			from[k] = val->name;
			(*nbound)++;
		}
	}
	return true;
}

/* fed and given: room for every input of the main graph, given all NULL. */
static bool prepare_inputs(IrModel *m, const RunOptions *o, EvValue **inputs, Diag *d, ValueId *fed, EvValue **given)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	uint32_t nfed = run_fed_inputs(m, fed);
	memset(inputs, 0, sizeof *inputs * g->ninputs);
	if (o->inputs_dir) {
		/* input_K.pb files, matched by name, else by position */
		EvValue *files[256] = {0};
		char *names[256] = {0};
		uint32_t nfiles = 0;
		for (; nfiles < 256; nfiles++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/input_%u.pb", o->inputs_dir, nfiles);
			struct stat st;
			if (stat(path, &st) != 0)
				break;
			EvKind kind = nfiles < nfed ? ev_declared_kind(m, fed[nfiles]) : EV_TENSOR;
			files[nfiles] = ev_load_pb(path, kind, &names[nfiles], d);
			if (!files[nfiles]) {
				for (uint32_t i = 0; i < nfiles; i++) {
					ev_unref(files[i]);
					free(names[i]);
				}
				free(names[nfiles]);
				return false;
			}
		}
		bool used[256] = {0};
		uint32_t *file_of = calloc(nfed + 1, sizeof *file_of);  /* any number of inputs */
		if (!file_of)
			abort();
		for (uint32_t f = 0; f < nfed; f++)
			for (uint32_t k = 0; k < nfiles && !given[f]; k++)
				if (!used[k] && names[k] && strcmp(names[k], ir_value(m, fed[f])->name) == 0) {
					given[f] = files[k];
					file_of[f] = k;
					used[k] = true;
				}
		for (uint32_t f = 0, k = 0; f < nfed; f++) {
			while (!given[f] && k < nfiles && used[k])
				k++;
			if (!given[f] && k < nfiles) {
				given[f] = files[k];
				file_of[f] = k;
				used[k++] = true;
			}
		}
		for (uint32_t k = 0; k < nfiles; k++) {
			if (!used[k])
				ev_unref(files[k]);
			free(names[k]);
		}
		/* each given tensor against its input's declared type */
		const char *bound[EV_MAX_RANK * 16], *bound_from[EV_MAX_RANK * 16];
		int64_t bound_size[EV_MAX_RANK * 16];
		int nbound = 0;
		for (uint32_t f = 0; f < nfed; f++) {
			char path[4096];
			if (given[f])
				snprintf(path, sizeof path, "%s/input_%u.pb", o->inputs_dir, file_of[f]);
			if (!given[f])
				diag_error(d, o->inputs_dir, "no input_K.pb for graph input '%s'", ir_value(m, fed[f])->name);
			if (!given[f] ||
			    !given_fits(m, fed[f], given[f], path, o, bound, bound_size, bound_from, &nbound, d)) {
				for (uint32_t i = 0; i < nfed; i++)
					ev_unref(given[i]);
				free(file_of);
				return false;
			}
		}
		free(file_of);
	} else {
		for (uint32_t f = 0; f < nfed; f++) {
			given[f] = run_generate_input(m, fed[f], f, o, d);
			if (!given[f]) {
				for (uint32_t i = 0; i < f; i++)
					ev_unref(given[i]);
				return false;
			}
		}
	}
	for (uint32_t i = 0, f = 0; i < g->ninputs; i++)
		if (f < nfed && g->inputs[i] == fed[f])
			inputs[i] = given[f++];
	return true;
}

bool run_prepare_inputs(IrModel *m, const RunOptions *o, EvValue **inputs, Diag *d)
{
	/* on the heap: a graph may have any number of inputs */
	uint32_t n = ir_graph(m, IR_MAIN_GRAPH)->ninputs;
	ValueId *fed = calloc(n + 1, sizeof *fed);
	EvValue **given = calloc(n + 1, sizeof *given);
	if (!fed || !given)
		abort();
	bool ok = prepare_inputs(m, o, inputs, d, fed, given);
	free(fed);
	free(given);
	return ok;
}

/* ---- comparing outputs ----------------------------------------------------------- */

void run_compare(const EvValue *a, const EvValue *b, double rtol, double atol, RunDiff *r)
{
	memset(r, 0, sizeof *r);
	if (a->kind == EV_SEQUENCE && b->kind == EV_SEQUENCE) {
		/* item by item: the worst error, every mismatch counted */
		r->same_type = r->same_shape = r->agree = a->nitems == b->nitems;
		for (int i = 0; i < a->nitems && i < b->nitems; i++) {
			RunDiff item;
			run_compare(a->items[i], b->items[i], rtol, atol, &item);
			r->agree &= item.agree;
			r->same_type &= item.same_type;
			r->same_shape &= item.same_shape;
			r->max_abs = fmax(r->max_abs, item.max_abs);
			r->max_rel = fmax(r->max_rel, item.max_rel);
			r->mismatches += item.mismatches;
		}
		return;
	}
	r->same_type = a->kind == b->kind && a->dtype == b->dtype;
	r->same_shape = a->kind == EV_TENSOR && b->kind == EV_TENSOR && a->rank == b->rank &&
	                memcmp(a->dims, b->dims, sizeof *a->dims * (size_t)a->rank) == 0;
	if (a->kind != EV_TENSOR || b->kind != EV_TENSOR) {
		r->agree = a->kind == b->kind && a->kind == EV_NONE;
		return;
	}
	r->agree = r->same_type && r->same_shape;
	if (!r->agree)
		return;
	for (int64_t i = 0; i < a->numel; i++) {
		if (a->dtype == DT_STRING) {
			if (strcmp(((char **)a->data)[i], ((char **)b->data)[i]) != 0) {
				r->agree = false;
				r->mismatches++;
			}
			continue;
		}
		double x = ev_get_f(a, i), y = ev_get_f(b, i);
		if (isnan(x) || isnan(y)) {
			if (isnan(x) != isnan(y)) {
				r->agree = false;
				r->mismatches++;
			}
			continue;
		}
		double diff = x == y ? 0 : fabs(x - y);
		double rel = diff == 0 ? 0 : diff / fmax(fabs(x), 1e-30);
		if (diff > r->max_abs)
			r->max_abs = diff;
		if (rel > r->max_rel)
			r->max_rel = rel;
		if (!(diff <= atol + rtol * fabs(x))) {
			r->agree = false;
			r->mismatches++;
		}
	}
}

void run_compare_exact(const EvValue *a, const EvValue *b, RunDiff *r)
{
	run_compare(a, b, 0, 0, r);
	if (!r->same_type || !r->same_shape || a->kind != EV_TENSOR || a->dtype == DT_STRING)
		return;
	/* bit for bit: -0 is not 0; any NaN equals any NaN */
	size_t es = ev_elem_size(a->dtype);
	r->agree = true;
	r->mismatches = 0;
	for (int64_t i = 0; i < a->numel; i++) {
		if (memcmp((const uint8_t *)a->data + (size_t)i * es, (const uint8_t *)b->data + (size_t)i * es, es) == 0)
			continue;
		if (ev_is_float(a->dtype) && isnan(ev_get_f(a, i)) && isnan(ev_get_f(b, i)))
			continue;
		r->agree = false;
		r->mismatches++;
	}
}

void run_format_dims(const EvValue *t, char *buf, size_t size)
{
	size_t o = (size_t)snprintf(buf, size, "[");
	for (int d = 0; d < t->rank && o < size; d++)
		o += (size_t)snprintf(buf + o, size - o, "%s%lld", d ? "," : "", (long long)t->dims[d]);
	if (o < size)
		snprintf(buf + o, size - o, "]");
}

/* ---- inputs handed over by a caller (the Python module's graft.run) --------------- */

bool run_prepare_given(IrModel *m, const RunOptions *o, EvValue *const *given, EvValue **inputs, Diag *d)
{
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	ValueId *fed = calloc(g->ninputs + 1, sizeof *fed);
	if (!fed)
		abort();
	uint32_t nfed = run_fed_inputs(m, fed);
	const char *bound[EV_MAX_RANK * 16], *bound_from[EV_MAX_RANK * 16];
	int64_t bound_size[EV_MAX_RANK * 16];
	int nbound = 0;
	bool ok = true;
	memset(inputs, 0, sizeof *inputs * g->ninputs);
	for (uint32_t i = 0, f = 0; ok && i < g->ninputs; i++) {
		if (f >= nfed || g->inputs[i] != fed[f])
			continue;
		if (given[f]) {
			ok = given_fits(m, fed[f], given[f], m->path, o, bound, bound_size, bound_from, &nbound, d);
			inputs[i] = ok ? ev_ref(given[f]) : NULL;
		} else {
			ok = (inputs[i] = run_generate_input(m, fed[f], f, o, d)) != NULL;
		}
		f++;
	}
	for (uint32_t i = 0; !ok && i < g->ninputs; i++) {
		ev_unref(inputs[i]);
		inputs[i] = NULL;
	}
	free(fed);
	return ok;
}
