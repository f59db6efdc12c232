/* gather.c - kernels that pick elements by index or by condition: Gather,
 * GatherElements, GatherND, Scatter, ScatterElements, ScatterND, NonZero,
 * TopK, Compress, Unique.
 *
 * Gathers and scatters move elements by element size (sh_util.h), so they
 * serve every dtype, strings included.  The scatter reductions (add, mul,
 * max, min) do arithmetic: float32/float64 in their own type, float16 and
 * bfloat16 in float32 rounded back to the type, integers with wraparound.
 * An index out of range is an error, never a silent clamp. */
#include "runtime/eval/eval.h"
#include "sh_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T_MOVE (SH_T_ALL | SH_T_F8)

/* Read index i of an index tensor against a dimension of size d, accepting
 * negative indices; false if it is out of range. */
static bool index_at(EvCtx *c, const EvValue *ind, int64_t i, int64_t d, int64_t *out)
{
	int64_t k = sh_idx(ind, i);
	if (k < 0)
		k += d;
	if (k < 0 || k >= d)
		return ev_fail(c, "index %lld is out of range for a dimension of size %lld",
		               (long long)sh_idx(ind, i), (long long)d);
	*out = k;
	return true;
}

static bool need_index_tensor(EvCtx *c, const EvValue *ind)
{
	if (!sh_is_int_index(ind))
		return ev_fail(c, "indices must be an int32 or int64 tensor");
	return true;
}

/* ---- Gather ---------------------------------------------------------------------- */

static bool k_gather(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0], *ind = nin > 1 ? in[1] : NULL;
	if (!sh_check_movable(c, x, "data") || !need_index_tensor(c, ind))
		return false;
	int r = x->rank, q = ind->rank, a;
	if (r < 1)
		return ev_fail(c, "Gather needs data of rank >= 1");
	if (!sh_axis(c, ev_attr_int(c, "axis", 0), r, 0, &a))
		return false;
	if (r - 1 + q > EV_MAX_RANK)
		return ev_fail(c, "output rank too large");
	int64_t dims[EV_MAX_RANK];
	int k = 0;
	for (int i = 0; i < a; i++)
		dims[k++] = x->dims[i];
	for (int i = 0; i < q; i++)
		dims[k++] = ind->dims[i];
	for (int i = a + 1; i < r; i++)
		dims[k++] = x->dims[i];
	int64_t d = x->dims[a], ni = ind->numel;
	for (int64_t i = 0; i < ni; i++) {
		int64_t t;
		if (!index_at(c, ind, i, d, &t))
			return false;
	}
	EvValue *o = sh_new(c, x->dtype, k, dims);
	if (!o)
		return false;
	int64_t outer = sh_prod(x->dims, 0, a), inner = sh_prod(x->dims, a + 1, r);
	size_t es = sh_esize(x->dtype);
	for (int64_t p = 0; p < outer; p++)
		for (int64_t i = 0; i < ni; i++) {
			int64_t t = sh_idx(ind, i);
			if (t < 0)
				t += d;
			int64_t so = (p * d + t) * inner, di = (p * ni + i) * inner;
			if (inner == 1)
				sh_copy1(o, di, x, so, es);
			else
				sh_copy(o, di, x, so, inner);
		}
	out[0] = o;
	return true;
}

/* ---- GatherElements ----------------------------------------------------------------- */

static bool k_gatherelements(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0], *ind = nin > 1 ? in[1] : NULL;
	if (!sh_check_movable(c, x, "data") || !need_index_tensor(c, ind))
		return false;
	int r = x->rank, a;
	if (r < 1 || ind->rank != r)
		return ev_fail(c, "data and indices must have the same rank >= 1");
	if (!sh_axis(c, ev_attr_int(c, "axis", 0), r, 0, &a))
		return false;
	for (int i = 0; i < r; i++)
		if (i != a && ind->dims[i] > x->dims[i])
			return ev_fail(c, "indices dimension %d exceeds the data's", i);
	EvValue *o = sh_new(c, x->dtype, r, ind->dims);
	if (!o)
		return false;
	int64_t xs[EV_MAX_RANK], idx[EV_MAX_RANK] = {0};
	ev_strides(r, x->dims, xs);
	size_t es = sh_esize(x->dtype);
	for (int64_t i = 0; i < o->numel; i++) {
		int64_t t;
		if (!index_at(c, ind, i, x->dims[a], &t)) {
			ev_unref(o);
			return false;
		}
		int64_t so = 0;
		for (int k = 0; k < r; k++)
			so += (k == a ? t : idx[k]) * xs[k];
		sh_copy1(o, i, x, so, es);
		for (int k = r - 1; k >= 0; k--) {
			if (++idx[k] < ind->dims[k])
				break;
			idx[k] = 0;
		}
	}
	out[0] = o;
	return true;
}

/* ---- GatherND ---------------------------------------------------------------------- */

static bool k_gathernd(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0], *ind = nin > 1 ? in[1] : NULL;
	if (!sh_check_movable(c, x, "data") || !need_index_tensor(c, ind))
		return false;
	int r = x->rank, q = ind->rank;
	int64_t b = c->opset >= 12 ? ev_attr_int(c, "batch_dims", 0) : 0;
	if (q < 1 || r < 1)
		return ev_fail(c, "GatherND needs data and indices of rank >= 1");
	if (b < 0 || b >= q || b >= r)
		return ev_fail(c, "batch_dims %lld is out of range", (long long)b);
	int64_t m = ind->dims[q - 1];
	if (m < 1 || m > r - b)
		return ev_fail(c, "index tuples of length %lld do not fit data of rank %d", (long long)m, r);
	for (int i = 0; i < b; i++)
		if (ind->dims[i] != x->dims[i])
			return ev_fail(c, "batch dimension %d differs between data and indices", i);
	int64_t dims[EV_MAX_RANK];
	int k = 0;
	for (int i = 0; i < q - 1; i++)
		dims[k++] = ind->dims[i];
	for (int i = (int)(b + m); i < r; i++)
		dims[k++] = x->dims[i];
	if (k > EV_MAX_RANK)
		return ev_fail(c, "output rank too large");
	EvValue *o = sh_new(c, x->dtype, k, dims);
	if (!o)
		return false;
	int64_t xs[EV_MAX_RANK];
	ev_strides(r, x->dims, xs);
	int64_t B = sh_prod(x->dims, 0, (int)b), S = sh_prod(x->dims, (int)(b + m), r);
	int64_t N = sh_prod(ind->dims, (int)b, q - 1), bsize = sh_prod(x->dims, (int)b, r);
	for (int64_t bi = 0; bi < B; bi++)
		for (int64_t n = 0; n < N; n++) {
			int64_t tup = (bi * N + n) * m, so = bi * bsize;
			for (int64_t j = 0; j < m; j++) {
				int64_t t;
				if (!index_at(c, ind, tup + j, x->dims[b + j], &t)) {
					ev_unref(o);
					return false;
				}
				so += t * xs[b + j];
			}
			sh_copy(o, (bi * N + n) * S, x, so, S);
		}
	out[0] = o;
	return true;
}

/* ---- scatter reductions ---------------------------------------------------------------- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static bool reduction_arg(EvCtx *c, int *red)
{
	char buf[16];
	const char *s = ev_attr_string(c, "reduction", "none", buf, sizeof buf);
	if (!strcmp(s, "none"))
		*red = RED_NONE;
	else if (!strcmp(s, "add") && c->opset >= 16)
		*red = RED_ADD;
	else if (!strcmp(s, "mul") && c->opset >= 16)
		*red = RED_MUL;
	else if (!strcmp(s, "max") && c->opset >= 18)
		*red = RED_MAX;
	else if (!strcmp(s, "min") && c->opset >= 18)
		*red = RED_MIN;
	else
		return ev_fail(c, "unsupported reduction '%s'", s);
	return true;
}

static double red_f(double a, double b, int red)
{
	switch (red) {
	case RED_ADD: return a + b;
	case RED_MUL: return a * b;
	case RED_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
	default: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
	}
}

static float red_f32(float a, float b, int red)
{
	switch (red) {
	case RED_ADD: return a + b;
	case RED_MUL: return a * b;
	case RED_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
	default: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
	}
}

/* o[oi] = o[oi] (red) u[ui]; plain copy for RED_NONE. */
static void red_apply(EvValue *o, int64_t oi, const EvValue *u, int64_t ui, int red, size_t es)
{
	if (red == RED_NONE) {
		sh_copy1(o, oi, u, ui, es);
		return;
	}
	switch (o->dtype) {
	case DT_FLOAT: {
		float *d = o->data;
		d[oi] = red_f32(d[oi], ((const float *)u->data)[ui], red);
		return;
	}
	case DT_DOUBLE: {
		double *d = o->data;
		d[oi] = red_f(d[oi], ((const double *)u->data)[ui], red);
		return;
	}
	case DT_FLOAT16: case DT_BFLOAT16:
		/* in float32, rounded once to the type */
		ev_set_f(o, oi, red_f32((float)ev_get_f(o, oi), (float)ev_get_f(u, ui), red));
		return;
	case DT_BOOL: {
		uint8_t *d = o->data, v = ((const uint8_t *)u->data)[ui];
		d[oi] = (red == RED_ADD || red == RED_MAX) ? (d[oi] || v) : (d[oi] && v);
		return;
	}
	case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64: {
		uint64_t a = ev_get_u(o, oi), b = ev_get_u(u, ui);
		uint64_t v = red == RED_ADD ? a + b : red == RED_MUL ? a * b : red == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
		ev_set_u(o, oi, v);
		return;
	}
	default: {
		int64_t a = ev_get_i(o, oi), b = ev_get_i(u, ui), v;
		if (red == RED_ADD)
			v = (int64_t)((uint64_t)a + (uint64_t)b);
		else if (red == RED_MUL)
			v = (int64_t)((uint64_t)a * (uint64_t)b);
		else
			v = red == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
		ev_set_i(o, oi, v);
		return;
	}
	}
}

static bool check_reducible(EvCtx *c, const EvValue *x, int red)
{
	if (red == RED_NONE)
		return true;
	if (x->dtype == DT_STRING || !((SH_T_NUM | SH_BIT(DT_BOOL)) & SH_BIT(x->dtype)))
		return ev_fail(c, "reduction on %s is not supported", dtype_name(x->dtype));
	return true;
}

/* A fresh copy of data, the starting point of every scatter. */
static EvValue *copy_of(EvCtx *c, const EvValue *x)
{
	EvValue *o = sh_new(c, x->dtype, x->rank, x->dims);
	if (o)
		sh_copy(o, 0, x, 0, x->numel);
	return o;
}

/* ---- ScatterElements, Scatter ------------------------------------------------------------- */

static bool scatter_elements(EvCtx *c, EvValue **in, int nin, EvValue **out, int red)
{
	EvValue *x = in[0], *ind = nin > 1 ? in[1] : NULL, *u = nin > 2 ? in[2] : NULL;
	if (!sh_check_movable(c, x, "data") || !need_index_tensor(c, ind) || !sh_check_movable(c, u, "updates"))
		return false;
	if (!check_reducible(c, x, red))
		return false;
	int r = x->rank, a;
	if (u->dtype != x->dtype)
		return ev_fail(c, "updates are %s, data is %s", dtype_name(u->dtype), dtype_name(x->dtype));
	if (r < 1 || ind->rank != r || u->rank != r)
		return ev_fail(c, "data, indices and updates must have the same rank >= 1");
	for (int i = 0; i < r; i++)
		if (ind->dims[i] != u->dims[i])
			return ev_fail(c, "indices and updates differ in shape");
	if (!sh_axis(c, ev_attr_int(c, "axis", 0), r, 0, &a))
		return false;
	for (int i = 0; i < r; i++)
		if (i != a && ind->dims[i] > x->dims[i])
			return ev_fail(c, "indices dimension %d exceeds the data's", i);
	EvValue *o = copy_of(c, x);
	if (!o)
		return false;
	int64_t xs[EV_MAX_RANK], idx[EV_MAX_RANK] = {0};
	ev_strides(r, x->dims, xs);
	size_t es = sh_esize(x->dtype);
	for (int64_t i = 0; i < ind->numel; i++) {
		int64_t t;
		if (!index_at(c, ind, i, x->dims[a], &t)) {
			ev_unref(o);
			return false;
		}
		int64_t so = 0;
		for (int k = 0; k < r; k++)
			so += (k == a ? t : idx[k]) * xs[k];
		red_apply(o, so, u, i, red, es);
		for (int k = r - 1; k >= 0; k--) {
			if (++idx[k] < ind->dims[k])
				break;
			idx[k] = 0;
		}
	}
	out[0] = o;
	return true;
}

static bool k_scatterelements(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	int red;
	if (!reduction_arg(c, &red))
		return false;
	return scatter_elements(c, in, nin, out, red);
}

static bool k_scatter(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return scatter_elements(c, in, nin, out, RED_NONE);
}

/* ---- ScatterND ---------------------------------------------------------------------------- */

static bool k_scatternd(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0], *ind = nin > 1 ? in[1] : NULL, *u = nin > 2 ? in[2] : NULL;
	if (!sh_check_movable(c, x, "data") || !need_index_tensor(c, ind) || !sh_check_movable(c, u, "updates"))
		return false;
	int red;
	if (!reduction_arg(c, &red) || !check_reducible(c, x, red))
		return false;
	if (u->dtype != x->dtype)
		return ev_fail(c, "updates are %s, data is %s", dtype_name(u->dtype), dtype_name(x->dtype));
	int r = x->rank, q = ind->rank;
	if (q < 1)
		return ev_fail(c, "indices must have rank >= 1");
	int64_t k = ind->dims[q - 1];
	if (k > r)
		return ev_fail(c, "index tuples of length %lld exceed the data's rank %d", (long long)k, r);
	/* updates: indices.shape[:-1] + data.shape[k:] */
	if (u->rank != q - 1 + r - (int)k)
		return ev_fail(c, "updates have rank %d, expected %d", u->rank, q - 1 + r - (int)k);
	for (int i = 0; i < q - 1; i++)
		if (u->dims[i] != ind->dims[i])
			return ev_fail(c, "updates do not match indices in dimension %d", i);
	for (int i = (int)k; i < r; i++)
		if (u->dims[q - 1 + i - (int)k] != x->dims[i])
			return ev_fail(c, "updates do not match data in dimension %d", i);
	EvValue *o = copy_of(c, x);
	if (!o)
		return false;
	int64_t xs[EV_MAX_RANK];
	ev_strides(r, x->dims, xs);
	int64_t S = sh_prod(x->dims, (int)k, r), N = sh_prod(ind->dims, 0, q - 1);
	size_t es = sh_esize(x->dtype);
	for (int64_t n = 0; n < N; n++) {
		int64_t so = 0;
		for (int64_t j = 0; j < k; j++) {
			int64_t t;
			if (!index_at(c, ind, n * k + j, x->dims[j], &t)) {
				ev_unref(o);
				return false;
			}
			so += t * xs[j];
		}
		if (red == RED_NONE)
			sh_copy(o, so, u, n * S, S);
		else
			for (int64_t e = 0; e < S; e++)
				red_apply(o, so + e, u, n * S + e, red, es);
	}
	out[0] = o;
	return true;
}

/* ---- NonZero ------------------------------------------------------------------------------ */

static bool is_nonzero(const EvValue *x, int64_t i, size_t es)
{
	switch (x->dtype) {
	case DT_STRING: {
		const char *s = ((char *const *)x->data)[i];
		return s && *s;
	}
	case DT_FLOAT: return ((const float *)x->data)[i] != 0;
	case DT_DOUBLE: return ((const double *)x->data)[i] != 0;
	case DT_FLOAT16: case DT_BFLOAT16:
		return (((const uint16_t *)x->data)[i] & 0x7fff) != 0; /* -0 is zero */
	default: {
		const unsigned char *p = (const unsigned char *)x->data + (size_t)i * es;
		for (size_t k = 0; k < es; k++)
			if (p[k])
				return true;
		return false;
	}
	}
}

static bool k_nonzero(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "X"))
		return false;
	if (ev_is_float(x->dtype) && !(SH_T_FLOAT & SH_BIT(x->dtype)))
		return ev_fail(c, "NonZero on %s is not supported", dtype_name(x->dtype));
	size_t es = sh_esize(x->dtype);
	int64_t nnz = 0;
	for (int64_t i = 0; i < x->numel; i++)
		nnz += is_nonzero(x, i, es);
	int r = x->rank ? x->rank : 1; /* a scalar counts as one element of a 1-D tensor, as numpy does */
	int64_t dims[2] = {r, nnz};
	EvValue *o = sh_new(c, DT_INT64, 2, dims);
	if (!o)
		return false;
	int64_t *d = o->data, idx[EV_MAX_RANK] = {0}, k = 0;
	for (int64_t i = 0; i < x->numel; i++) {
		if (is_nonzero(x, i, es)) {
			for (int j = 0; j < x->rank; j++)
				d[j * nnz + k] = idx[j];
			k++;
		}
		for (int j = x->rank - 1; j >= 0; j--) {
			if (++idx[j] < x->dims[j])
				break;
			idx[j] = 0;
		}
	}
	out[0] = o;
	return true;
}

/* ---- sorting keys (TopK, Unique) --------------------------------------------------------------- */

enum { KEY_F, KEY_I, KEY_U, KEY_S };

static int key_kind(int dtype)
{
	if (dtype == DT_STRING)
		return KEY_S;
	if (ev_is_float(dtype))
		return KEY_F;
	if (ev_is_signed_int(dtype))
		return KEY_I;
	return KEY_U;
}

/* Three-way compare of x[i] and x[j]; NaN sorts above every number. */
static int elem_cmp(const EvValue *x, int kind, int64_t i, int64_t j)
{
	switch (kind) {
	case KEY_F: {
		double a = ev_get_f(x, i), b = ev_get_f(x, j);
		if (isnan(a) || isnan(b))
			return isnan(a) - isnan(b);
		return (a > b) - (a < b);
	}
	case KEY_I: {
		int64_t a = ev_get_i(x, i), b = ev_get_i(x, j);
		return (a > b) - (a < b);
	}
	case KEY_U: {
		uint64_t a = ev_get_u(x, i), b = ev_get_u(x, j);
		return (a > b) - (a < b);
	}
	default: {
		const char *a = ((char *const *)x->data)[i], *b = ((char *const *)x->data)[j];
		int r = strcmp(a ? a : "", b ? b : "");
		return (r > 0) - (r < 0);
	}
	}
}

/* ---- TopK ---------------------------------------------------------------------------------- */

typedef struct TopkCtx {
	const EvValue *x;
	int kind;
	bool largest;
	int64_t base, stride;  /* element j of the slice is x[base + j * stride] */
} TopkCtx;

static int topk_cmp(const void *pa, const void *pb, void *arg)
{
	const TopkCtx *t = arg;
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	int64_t ia = t->base + a * t->stride, ib = t->base + b * t->stride;
	int r;
	if (t->kind == KEY_F && (isnan(ev_get_f(t->x, ia)) || isnan(ev_get_f(t->x, ib)))) {
		/* NaN ranks last either way, as in the reference's argsort */
		r = isnan(ev_get_f(t->x, ia)) - isnan(ev_get_f(t->x, ib));
	} else {
		r = elem_cmp(t->x, t->kind, ia, ib);
		if (t->largest)
			r = -r;
	}
	return r ? r : (a > b) - (a < b); /* ties: the lower index first */
}

static bool k_topk(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "X"))
		return false;
	if (x->dtype == DT_STRING || !(SH_T_NUM & SH_BIT(x->dtype)))
		return ev_fail(c, "TopK on %s is not supported", dtype_name(x->dtype));
	int64_t K;
	if (c->opset < 10) {
		K = ev_attr_int(c, "k", -1);
	} else {
		if (nin < 2 || !in[1] || !sh_is_int_index(in[1]) || in[1]->numel != 1)
			return ev_fail(c, "K must be a one-element int64 tensor");
		K = sh_idx(in[1], 0);
	}
	int r = x->rank, a;
	if (r < 1)
		return ev_fail(c, "TopK needs rank >= 1");
	if (!sh_axis(c, ev_attr_int(c, "axis", -1), r, 0, &a))
		return false;
	int64_t d = x->dims[a];
	if (K < 0 || K > d)
		return ev_fail(c, "K = %lld is out of range for a dimension of %lld", (long long)K, (long long)d);
	TopkCtx t = {x, key_kind(x->dtype), c->opset < 11 || ev_attr_int(c, "largest", 1) != 0, 0, 0};
	int64_t dims[EV_MAX_RANK];
	memcpy(dims, x->dims, sizeof *dims * (size_t)r);
	dims[a] = K;
	EvValue *v = sh_new(c, x->dtype, r, dims);
	EvValue *ix = v ? sh_new(c, DT_INT64, r, dims) : NULL;
	int64_t *order = malloc(sizeof *order * (size_t)(d ? d : 1));
	if (!v || !ix || !order) {
		ev_unref(v);
		ev_unref(ix);
		free(order);
		return v && ix ? ev_fail(c, "out of memory") : false;
	}
	int64_t outer = sh_prod(x->dims, 0, a), inner = sh_prod(x->dims, a + 1, r);
	size_t es = sh_esize(x->dtype);
	/* always sorted: sorted=0 leaves the order unspecified, and sorted is one valid order */
	for (int64_t p = 0; p < outer; p++)
		for (int64_t q = 0; q < inner; q++) {
			t.base = p * d * inner + q;
			t.stride = inner;
			for (int64_t j = 0; j < d; j++)
				order[j] = j;
			qsort_r(order, (size_t)d, sizeof *order, topk_cmp, &t);
			for (int64_t j = 0; j < K; j++) {
				int64_t oi = (p * K + j) * inner + q;
				sh_copy1(v, oi, x, t.base + order[j] * inner, es);
				((int64_t *)ix->data)[oi] = order[j];
			}
		}
	free(order);
	out[0] = v;
	if (nout > 1)
		out[1] = ix;
	else
		ev_unref(ix);
	return true;
}

/* ---- Compress ------------------------------------------------------------------------------ */

static bool k_compress(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0], *cond = nin > 1 ? in[1] : NULL;
	if (!sh_check_movable(c, x, "input"))
		return false;
	if (!cond || cond->kind != EV_TENSOR || cond->rank != 1 || cond->dtype == DT_STRING)
		return ev_fail(c, "condition must be a 1-D bool tensor");
	const IrAttr *aa = ev_attr(c, "axis");
	int a = 0, r;
	int64_t d, outer, inner, dims[EV_MAX_RANK];
	if (aa) {
		if (!sh_axis(c, aa->i, x->rank, 0, &a))
			return false;
		r = x->rank;
		memcpy(dims, x->dims, sizeof *dims * (size_t)r);
		d = x->dims[a];
		outer = sh_prod(x->dims, 0, a);
		inner = sh_prod(x->dims, a + 1, r);
	} else { /* on the flattened input */
		r = 1;
		d = x->numel;
		outer = inner = 1;
	}
	if (cond->numel > d)
		return ev_fail(c, "condition has %lld entries for a dimension of %lld", (long long)cond->numel, (long long)d);
	int64_t n = 0;
	for (int64_t j = 0; j < cond->numel; j++)
		n += ev_get_f(cond, j) != 0;
	dims[aa ? a : 0] = n;
	EvValue *o = sh_new(c, x->dtype, r, dims);
	if (!o)
		return false;
	int64_t di = 0;
	for (int64_t p = 0; p < outer; p++)
		for (int64_t j = 0; j < cond->numel; j++)
			if (ev_get_f(cond, j) != 0) {
				sh_copy(o, di, x, (p * d + j) * inner, inner);
				di += inner;
			}
	out[0] = o;
	return true;
}

/* ---- Unique ---------------------------------------------------------------------------------- */

typedef struct UniqCtx {
	const EvValue *x;
	int kind;
	int64_t n, outer, inner;  /* slice s is x[(o * n + s) * inner + q] for o < outer, q < inner */
} UniqCtx;

static int slice_cmp(const UniqCtx *u, int64_t a, int64_t b)
{
	for (int64_t o = 0; o < u->outer; o++)
		for (int64_t q = 0; q < u->inner; q++) {
			int r = elem_cmp(u->x, u->kind, (o * u->n + a) * u->inner + q, (o * u->n + b) * u->inner + q);
			if (r)
				return r;
		}
	return 0;
}

static int uniq_cmp(const void *pa, const void *pb, void *arg)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	int r = slice_cmp(arg, a, b);
	return r ? r : (a > b) - (a < b);
}

/* Groups by first occurrence (Unique with sorted = 0). */
static int first_cmp(const void *pa, const void *pb, void *arg)
{
	const int64_t *first = arg;
	int64_t a = first[*(const int64_t *)pa], b = first[*(const int64_t *)pb];
	return (a > b) - (a < b);
}

static bool k_unique(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "X"))
		return false;
	const IrAttr *aa = ev_attr(c, "axis");
	bool sorted = ev_attr_int(c, "sorted", 1) != 0;
	UniqCtx u = {x, key_kind(x->dtype), x->numel, 1, 1};
	int a = 0;
	if (aa) {
		if (!sh_axis(c, aa->i, x->rank, 0, &a))
			return false;
		u.n = x->dims[a];
		u.outer = sh_prod(x->dims, 0, a);
		u.inner = sh_prod(x->dims, a + 1, x->rank);
	}
	int64_t n = u.n;
	size_t sz = sizeof(int64_t) * (size_t)(n ? n : 1);
	int64_t *order = malloc(sz), *group = malloc(sz), *first = malloc(sz), *count = malloc(sz),
	        *rank = malloc(sz), *perm = malloc(sz);
	bool ok = false;
	EvValue *y = NULL, *oi = NULL, *inv = NULL, *cnt = NULL;
	if (!order || !group || !first || !count || !rank || !perm) {
		ev_fail(c, "out of memory");
		goto done;
	}
	for (int64_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, (size_t)n, sizeof *order, uniq_cmp, &u);
	/* groups of equal slices, in sorted order; the first member is the
	 * lowest index, since ties sort by index */
	int64_t ng = 0;
	for (int64_t i = 0; i < n; i++) {
		if (i == 0 || slice_cmp(&u, order[i - 1], order[i]) != 0) {
			first[ng] = order[i];
			count[ng] = 0;
			ng++;
		}
		group[order[i]] = ng - 1;
		count[ng - 1]++;
	}
	/* perm[k]: the group that comes k-th in the output */
	for (int64_t g = 0; g < ng; g++)
		perm[g] = g;
	if (!sorted)
		qsort_r(perm, (size_t)ng, sizeof *perm, first_cmp, first);
	for (int64_t k = 0; k < ng; k++)
		rank[perm[k]] = k;
	int64_t dims[EV_MAX_RANK];
	int r = aa ? x->rank : 1;
	if (aa)
		memcpy(dims, x->dims, sizeof *dims * (size_t)r);
	dims[a] = ng;
	if (!(y = sh_new(c, x->dtype, r, dims)) || !(oi = sh_new(c, DT_INT64, 1, &ng)) ||
	    !(inv = sh_new(c, DT_INT64, 1, &n)) || !(cnt = sh_new(c, DT_INT64, 1, &ng)))
		goto done;
	for (int64_t k = 0; k < ng; k++) {
		int64_t g = perm[k];
		for (int64_t o = 0; o < u.outer; o++)
			sh_copy(y, (o * ng + k) * u.inner, x, (o * n + first[g]) * u.inner, u.inner);
		((int64_t *)oi->data)[k] = first[g];
		((int64_t *)cnt->data)[k] = count[g];
	}
	for (int64_t i = 0; i < n; i++)
		((int64_t *)inv->data)[i] = rank[group[i]];
	EvValue *res[4] = {y, oi, inv, cnt};
	for (int i = 0; i < 4; i++) {
		if (i < nout)
			out[i] = res[i];
		else
			ev_unref(res[i]);
	}
	y = oi = inv = cnt = NULL;
	ok = true;
done:
	ev_unref(y);
	ev_unref(oi);
	ev_unref(inv);
	ev_unref(cnt);
	free(order);
	free(group);
	free(first);
	free(count);
	free(rank);
	free(perm);
	return ok;
}

const EvKernel ev_kernels_gather[] = {
	EV_KERNEL(Gather, k_gather, T_MOVE),
	EV_KERNEL(GatherElements, k_gatherelements, T_MOVE),
	EV_KERNEL(GatherND, k_gathernd, T_MOVE),
	EV_KERNEL(Scatter, k_scatter, T_MOVE),
	EV_KERNEL(ScatterElements, k_scatterelements, T_MOVE),
	EV_KERNEL(ScatterND, k_scatternd, T_MOVE),
	EV_KERNEL(NonZero, k_nonzero, SH_T_ALL),
	EV_KERNEL(TopK, k_topk, SH_T_NUM),
	EV_KERNEL(Compress, k_compress, T_MOVE),
	EV_KERNEL(Unique, k_unique, SH_T_ALL),
	{0},
};
