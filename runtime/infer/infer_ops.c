/* infer_ops.c - one shape and dtype rule per ONNX op, looked up by name in
 * the table at the end (ops without a rule get their dtype from the schema in
 * infer_driver.c and an unknown shape).
 *
 * A rule reads its inputs' types, attributes and known inputs through the
 * inf_* helpers (infer.c) and fills the outputs with inf_set.  It fails only
 * on a real contradiction (MatMul 2x3 by 4x5); anything it cannot know it
 * leaves unknown.  Opset differences (axes as an attribute or an input,
 * ...) are decided with c->opset, the model's default-domain opset. */
#include "infer_internal.h"
#include "ir/geometry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define R INF_MAX_RANK

/* ---- shared pieces ----------------------------------------------------------------- */

/* Product of dims: a number, a lone symbol times 1, or unknown. */
static Dim dim_product(const Dim *d, int from, int to)
{
	int64_t n = 1;
	Dim sym = dim_unknown();
	int nsym = 0;
	for (int i = from; i < to; i++) {
		if (dim_known(d[i])) {
			if (__builtin_mul_overflow(n, d[i].size, &n))
				return dim_unknown();
		} else if (d[i].param && nsym == 0) {
			sym = d[i];
			nsym++;
		} else
			return dim_unknown();
	}
	if (nsym == 0)
		return dim_n(n);
	return n == 1 ? sym : (n == 0 ? dim_n(0) : dim_unknown());
}

/* a * k; unknown if the product is no dim (negative k, or over int64) */
static Dim dim_mul(Dim a, int64_t k)
{
	int64_t p;
	if (k == 1)
		return a;
	if (k < 0)
		return dim_unknown();
	if (!dim_known(a))
		return k == 0 ? dim_n(0) : dim_unknown();
	return __builtin_mul_overflow(a.size, k, &p) ? dim_unknown() : dim_n(p);
}

static Dim dim_add(InferCtx *c, Dim a, Dim b)
{
	int64_t sum;
	if (dim_known(a) && dim_known(b))
		return __builtin_add_overflow(a.size, b.size, &sum) ? dim_unknown() : dim_n(sum);
	if (a.size == 0)
		return b;
	if (b.size == 0)
		return a;
	if (!dim_known(a) && !dim_known(b) && a.param && b.param) {
		Dim d = {-1, sym_sum_name(c->m, a.param, b.param)};
		if (d.param)
			return d;
	}
	return dim_unknown();
}

/* The known elements of input i as Dims (for shapes given as tensors):
 * count, or -1 if even the length is unknown. */
static int input_shape_dims(InferCtx *c, int i, Dim *out, int max)
{
	const IVec *v = inf_vec(c, i);
	if (v && v->rank == 1) {
		if (v->n > max)
			return -1;
		for (int k = 0; k < v->n; k++)
			out[k] = dim_from_sym(v->e[k]);
		return v->n;
	}
	const Dim *d = inf_dims(c, i);
	if (inf_rank(c, i) == 1 && dim_known(d[0]) && d[0].size <= max) {
		for (int k = 0; k < d[0].size; k++)
			out[k] = dim_unknown();
		return (int)d[0].size;
	}
	return -1;
}

/* Axes from an attribute (before `input_since`) or from input `slot`:
 * count, -1 if unknown, -2 if absent (the op's default applies). */
static int get_axes(InferCtx *c, const char *attr, int slot, int64_t input_since, int64_t *axes, int max)
{
	if (c->opset < input_since || !inf_has(c, slot)) {
		const int64_t *a;
		int n = inf_attr_ints(c, attr, &a);
		if (n < 0 || (c->opset >= input_since && n < 0))
			return -2;
		if (n > max)
			return -1;
		if (n)   /* axes = [] has no list to copy */
			memcpy(axes, a, sizeof *a * (size_t)n);
		return n;
	}
	return inf_ints(c, slot, axes, max);
}

/* ---- elementwise ---------------------------------------------------------------- */

static bool r_same(InferCtx *c)
{
	inf_copy(c, 0, 0);
	return true;
}

static bool r_bool_same(InferCtx *c)
{
	inf_set(c, 0, DT_BOOL, inf_rank(c, 0), inf_dims(c, 0));
	return true;
}

/* Broadcast every input; dtype of input `dt_from` (or `fixed`). */
static bool bcast_all(InferCtx *c, int first, int dtype)
{
	int rank = 0;
	Dim dims[R], tmp[R];
	/* before opset 7, broadcast = 1: B (aligned at `axis`) broadcasts to A,
	 * and the result has A's shape */
	if (c->opset < 7 && first == 0 && inf_nin(c) == 2 && inf_attr_i(c, "broadcast", 0)) {
		inf_set(c, 0, dtype, inf_rank(c, 0), inf_dims(c, 0));
		return true;
	}
	for (int i = first; i < inf_nin(c); i++) {
		if (!inf_has(c, i))
			continue;
		int r = inf_rank(c, i);
		if (r < 0 || rank < 0) {
			rank = -1;
			continue;
		}
		if (!inf_broadcast(c, rank, dims, r, inf_dims(c, i), &rank, tmp))
			return false;
		if (rank >= 0)
			memcpy(dims, tmp, sizeof *dims * (size_t)rank);
	}
	inf_set(c, 0, dtype, rank, dims);
	return true;
}

static int common_dtype(InferCtx *c, int first, int last)
{
	int dt = DT_UNDEFINED;
	for (int i = first; i <= last && i < inf_nin(c); i++) {
		int x = inf_dtype(c, i);
		if (!x)
			continue;
		if (dt && x != dt) {
			inf_fail(c, "inputs have different types (%s and %s)", dtype_name(dt), dtype_name(x));
			return -1;
		}
		dt = x;
	}
	return dt;
}

static bool r_binary(InferCtx *c)
{
	int dt = common_dtype(c, 0, inf_nin(c) - 1);
	return dt >= 0 && bcast_all(c, 0, dt);
}

/* Pow and BitShift-like ops whose operands may differ in type. */
static bool r_binary_first(InferCtx *c)
{
	return bcast_all(c, 0, inf_dtype(c, 0));
}

static bool r_compare(InferCtx *c)
{
	return common_dtype(c, 0, 1) >= 0 && bcast_all(c, 0, DT_BOOL);
}

static bool r_where(InferCtx *c)
{
	int dt = common_dtype(c, 1, 2);
	return dt >= 0 && bcast_all(c, 0, dt);
}

static bool r_prelu(InferCtx *c)
{
	/* before opset 7 the slope was matched to channels, not broadcast */
	if (c->opset < 7)
		return r_same(c);
	/* the spec: the slope broadcasts to X, and Y has X's shape (ONNX's
	 * inference, which ORT runs at load); ORT's kernel broadcasts both ways
	 * (a [1] slope on a scalar X gives [1]).  Where the two differ, Y's
	 * shape is unknown and no declaration fills it (InferOut.contested). */
	if (!bcast_all(c, 0, inf_dtype(c, 0)))
		return false;
	int rx = inf_rank(c, 0);
	if (rx < 0)
		return true;
	const Dim *x = inf_dims(c, 0);
	bool differ = c->out[0].rank != rx;
	for (int i = 0; i < rx && !differ; i++)
		differ = dim_known(x[i]) && dim_known(c->out[0].dims[i]) && x[i].size != c->out[0].dims[i].size;
	if (differ) {
		c->out[0].rank = -1;
		c->out[0].contested = ~0u;
		return true;
	}
	for (int i = 0; i < rx; i++)
		if (dim_known(x[i]) || x[i].param)
			c->out[0].dims[i] = x[i];
	return true;
}

static bool r_cast(InferCtx *c)
{
	inf_set(c, 0, (int)inf_attr_i(c, "to", 0), inf_rank(c, 0), inf_dims(c, 0));
	return true;
}

static bool r_castlike(InferCtx *c)
{
	inf_set(c, 0, inf_dtype(c, 1), inf_rank(c, 0), inf_dims(c, 0));
	return true;
}

static bool r_dropout(InferCtx *c)
{
	inf_copy(c, 0, 0);
	inf_set(c, 1, DT_BOOL, inf_rank(c, 0), inf_dims(c, 0));
	return true;
}

/* Output dtype from attribute "dtype", else input 0's. */
static bool r_like(InferCtx *c)
{
	int dt = (int)inf_attr_i(c, "dtype", inf_dtype(c, 0));
	inf_set(c, 0, dt, inf_rank(c, 0), inf_dims(c, 0));
	return true;
}

static bool r_random(InferCtx *c)
{
	const int64_t *s;
	int n = inf_attr_ints(c, "shape", &s);
	Dim d[R];
	for (int i = 0; i < n && i < R; i++)
		d[i] = dim_n(s[i]);
	inf_set(c, 0, (int)inf_attr_i(c, "dtype", DT_FLOAT), n, d);
	return true;
}

static bool r_multinomial(InferCtx *c)
{
	Dim d[2] = {dim_unknown(), dim_n(inf_attr_i(c, "sample_size", 1))};
	if (inf_rank(c, 0) == 2)
		d[0] = inf_dims(c, 0)[0];
	inf_set(c, 0, (int)inf_attr_i(c, "dtype", DT_INT32), 2, d);
	return true;
}

/* ---- normalization ------------------------------------------------------------------ */

static bool r_batchnorm(InferCtx *c)
{
	inf_copy(c, 0, 0);
	Dim ch = inf_rank(c, 0) >= 2 ? inf_dims(c, 0)[1] : dim_unknown();
	for (int o = 1; o < c->nout; o++)
		inf_set(c, o, inf_dtype(c, o <= 2 ? 3 : 1), 1, &ch);
	return true;
}

static bool r_layernorm(InferCtx *c)
{
	inf_copy(c, 0, 0);
	int rank = inf_rank(c, 0);
	int dt = (int)inf_attr_i(c, "stash_type", DT_FLOAT);
	if (rank < 0) {
		inf_set_dtype(c, 1, dt);
		inf_set_dtype(c, 2, dt);
		return true;
	}
	int axis;
	if (!inf_axis(c, inf_attr_i(c, "axis", -1), rank, &axis))
		return false;
	Dim d[R];
	for (int i = 0; i < rank; i++)
		d[i] = i < axis ? inf_dims(c, 0)[i] : dim_n(1);
	inf_set(c, 1, dt, rank, d);
	inf_set(c, 2, dt, rank, d);
	return true;
}

/* Attention-23: Y is [B, Hq, Sq, Dv] (4-D) or [B, Sq, Hq * Dv] (3-D, heads
 * from the attributes); present_key/value are K and V with the past in
 * front, 4-D; qk_matmul_output [B, Hq, Sq, Skv]. */
static bool r_attention(InferCtx *c)
{
	int dt = inf_dtype(c, 0), vdt = inf_dtype(c, 2);
	int rq = inf_rank(c, 0), rk = inf_rank(c, 1), rv = inf_rank(c, 2);
	inf_set_dtype(c, 0, dt);
	inf_set_dtype(c, 1, dt);
	inf_set_dtype(c, 2, vdt);
	inf_set_dtype(c, 3, dt);
	if (rq < 0 || rk < 0 || rv < 0)
		return true;
	if (rq != rk || rq != rv || (rq != 3 && rq != 4))
		return inf_fail(c, "Q, K and V must all be 3-D or all 4-D (ranks %d, %d, %d)", rq, rk, rv);
	const Dim *q = inf_dims(c, 0), *k = inf_dims(c, 1), *v = inf_dims(c, 2);
	Dim batch = q[0], seq = rq == 4 ? q[2] : q[1], kvlen = rq == 4 ? k[2] : k[1];
	Dim qh, kvh, dk, dv;
	if (rq == 4) {
		qh = q[1];
		kvh = k[1];
		dk = k[3];
		dv = v[3];
	} else {
		int64_t nq = inf_attr_i(c, "q_num_heads", 0), nkv = inf_attr_i(c, "kv_num_heads", 0);
		if (nq <= 0 || nkv <= 0)
			return inf_fail(c, "3-D inputs need q_num_heads and kv_num_heads");
		qh = dim_n(nq);
		kvh = dim_n(nkv);
		dk = dim_known(k[2]) ? dim_n(k[2].size / nkv) : dim_unknown();
		dv = dim_known(v[2]) ? dim_n(v[2].size / nkv) : dim_unknown();
	}
	Dim total = kvlen;
	if (inf_has(c, 4)) {
		int rp = inf_rank(c, 4);
		const Dim *pk = inf_dims(c, 4);
		total = rp == 4 ? dim_add(c, pk[2], kvlen) : dim_unknown();   /* past + seq, symbols too */
	}
	if (rq == 4) {
		Dim y[4] = {batch, qh, seq, dv};
		inf_set(c, 0, dt, 4, y);
	} else {
		Dim y[3] = {batch, seq, dim_known(dv) ? dim_n(qh.size * dv.size) : dim_unknown()};
		inf_set(c, 0, dt, 3, y);
	}
	Dim pk[4] = {batch, kvh, total, dk}, pv[4] = {batch, kvh, total, dv}, qk[4] = {batch, qh, seq, total};
	inf_set(c, 1, dt, 4, pk);
	inf_set(c, 2, vdt, 4, pv);
	inf_set(c, 3, dt, 4, qk);
	return true;
}

/* ---- matrix products ---------------------------------------------------------------- */

static bool matmul_shape(InferCtx *c, int ia, int ib, int dtype)
{
	int ra = inf_rank(c, ia), rb = inf_rank(c, ib);
	if (ra < 0 || rb < 0) {
		inf_set_dtype(c, 0, dtype);
		return true;
	}
	if (ra == 0 || rb == 0)
		return inf_fail(c, "MatMul operands must not be scalars");
	const Dim *a = inf_dims(c, ia), *b = inf_dims(c, ib);
	Dim a2[R], b2[R];
	int na = ra, nb = rb;
	if (ra == 1) { a2[0] = dim_n(1); a2[1] = a[0]; na = 2; } else memcpy(a2, a, sizeof *a * (size_t)ra);
	if (rb == 1) { b2[0] = b[0]; b2[1] = dim_n(1); nb = 2; } else memcpy(b2, b, sizeof *b * (size_t)rb);
	Dim k;
	if (!dim_unify(a2[na - 1], b2[nb - 2], &k))
		return inf_fail(c, "inner dimensions %lld and %lld differ", (long long)a2[na - 1].size,
		                (long long)b2[nb - 2].size);
	Dim out[R];
	int rank;
	if (!inf_broadcast(c, na - 2, a2, nb - 2, b2, &rank, out))
		return false;
	if (rank < 0 || rank + 2 > R) {
		inf_set_dtype(c, 0, dtype);
		return true;
	}
	if (ra != 1)
		out[rank++] = a2[na - 2];
	if (rb != 1)
		out[rank++] = b2[nb - 1];
	inf_set(c, 0, dtype, rank, out);
	return true;
}

static bool r_matmul(InferCtx *c)
{
	int dt = common_dtype(c, 0, 1);
	return dt >= 0 && matmul_shape(c, 0, 1, dt);
}

static bool r_matmul_int(InferCtx *c)
{
	return matmul_shape(c, 0, 1, DT_INT32);
}

static bool r_qlinear_matmul(InferCtx *c)
{
	return matmul_shape(c, 0, 3, inf_dtype(c, 7));
}

static bool r_gemm(InferCtx *c)
{
	int dt = common_dtype(c, 0, 1);
	if (dt < 0)
		return false;
	if (inf_rank(c, 0) != 2 || inf_rank(c, 1) != 2) {
		if (inf_rank(c, 0) >= 0 && inf_rank(c, 0) != 2)
			return inf_fail(c, "A must be 2-D, not rank %d", inf_rank(c, 0));
		if (inf_rank(c, 1) >= 0 && inf_rank(c, 1) != 2)
			return inf_fail(c, "B must be 2-D, not rank %d", inf_rank(c, 1));
		inf_set(c, 0, dt, 2, NULL);
		return true;
	}
	const Dim *a = inf_dims(c, 0), *b = inf_dims(c, 1);
	bool ta = inf_attr_i(c, "transA", 0), tb = inf_attr_i(c, "transB", 0);
	Dim k;
	if (!dim_unify(a[ta ? 0 : 1], b[tb ? 1 : 0], &k))
		return inf_fail(c, "inner dimensions %lld and %lld differ", (long long)a[ta ? 0 : 1].size,
		                (long long)b[tb ? 1 : 0].size);
	Dim out[2] = {a[ta ? 1 : 0], b[tb ? 0 : 1]};
	inf_set(c, 0, dt, 2, out);
	return true;
}

/* Einsum: explicit equations ("ij,jk->ik"), with "..." broadcast. */
static bool r_einsum(InferCtx *c)
{
	char eq[256];
	inf_attr_s(c, "equation", "", eq, sizeof eq);
	int dt = common_dtype(c, 0, inf_nin(c) - 1);
	if (dt < 0)
		return false;
	inf_set_dtype(c, 0, dt);
	char *arrow = strstr(eq, "->");
	if (!arrow)
		return true;   /* implicit output: left unknown */
	Dim letter[128];
	bool seen[128] = {false};
	Dim ell[R];
	int nell = 0;
	char *p = eq;
	for (int i = 0; i < inf_nin(c); i++) {
		char term[128];
		int len = 0;
		while (*p == ' ')
			p++;
		while (*p && *p != ',' && *p != '-' && len < 127)
			if (*p != ' ')
				term[len++] = *p++;
			else
				p++;
		term[len] = 0;
		if (*p == ',')
			p++;
		int rank = inf_rank(c, i);
		if (rank < 0)
			return true;
		const Dim *d = inf_dims(c, i);
		char *dots = strstr(term, "...");
		int nletters = len - (dots ? 3 : 0);
		int ne = rank - nletters;
		if (ne < 0)
			return inf_fail(c, "equation term '%s' does not fit rank %d", term, rank);
		int k = 0;
		for (int j = 0; j < len; j++) {
			if (term[j] == '.') {
				Dim tmp[R];
				int rr;
				if (!inf_broadcast(c, nell, ell, ne, d + k, &rr, tmp))
					return false;
				memcpy(ell, tmp, sizeof *tmp * (size_t)rr);
				nell = rr;
				k += ne;
				j += 2;
				continue;
			}
			unsigned char ch = (unsigned char)term[j];
			if (ch >= 128)
				return true;
			if (!seen[ch] || letter[ch].size == 1)
				letter[ch] = d[k];
			else if (d[k].size != 1 && !dim_unify(letter[ch], d[k], &letter[ch]))
				return inf_fail(c, "label '%c' has sizes %lld and %lld", ch,
				                (long long)letter[ch].size, (long long)d[k].size);
			seen[ch] = true;
			k++;
		}
	}
	Dim out[R];
	int rank = 0;
	for (char *q = arrow + 2; *q && rank < R; q++) {
		if (*q == ' ')
			continue;
		if (*q == '.') {
			for (int j = 0; j < nell && rank < R; j++)
				out[rank++] = ell[j];
			q += 2;
			continue;
		}
		unsigned char ch = (unsigned char)*q;
		out[rank++] = ch < 128 && seen[ch] ? letter[ch] : dim_unknown();
	}
	inf_set(c, 0, dt, rank, out);
	return true;
}

/* ---- convolution and pooling --------------------------------------------------------- */

/* Spatial output sizes of a sliding window.  kernel[i] is known (> 0).
 * Pools only (contested not NULL): bit i of *contested marks a dim left
 * unknown because ONNX's inference and ONNX Runtime's kernel disagree. */
static bool window_dims(InferCtx *c, const Dim *x, int nsp, const int64_t *kernel, uint32_t *contested, Dim *out)
{
	bool pool = contested != NULL;
	const int64_t *strides, *dil, *pads;
	int ns = inf_attr_ints(c, "strides", &strides);
	int nd = inf_attr_ints(c, "dilations", &dil);
	int np = inf_attr_ints(c, "pads", &pads);
	if ((ns >= 0 && ns != nsp) || (nd >= 0 && nd != nsp) || (np >= 0 && np != 2 * nsp))
		return inf_fail(c, "strides/dilations/pads do not match %d spatial dims", nsp);
	char buf[32];
	const char *ap = inf_attr_s(c, "auto_pad", "NOTSET", buf, sizeof buf);
	bool ceil_mode = pool && inf_attr_i(c, "ceil_mode", 0);
	for (int i = 0; i < nsp; i++) {
		int64_t s = ns > 0 ? strides[i] : 1, dl = nd > 0 ? dil[i] : 1, ek;
		if (s <= 0 || dl <= 0)
			return inf_fail(c, "strides and dilations must be positive");
		if (kernel[i] <= 0)
			return inf_fail(c, "kernel size %lld is not positive", (long long)kernel[i]);
		if (__builtin_mul_overflow(kernel[i] - 1, dl, &ek) || __builtin_add_overflow(ek, 1, &ek))
			return inf_fail(c, "dilated kernel size overflows int64");
		if (np > 0 && (pads[i] < 0 || pads[i + nsp] < 0))
			return inf_fail(c, "pads must not be negative");
		if (!dim_known(x[i])) {
			out[i] = dim_unknown();
			continue;
		}
		int64_t in = x[i].size, o, padded = in;
		if (np > 0 && (__builtin_add_overflow(in, pads[i], &padded) ||
		               __builtin_add_overflow(padded, pads[i + nsp], &padded)))
			return inf_fail(c, "padded input size overflows int64");
		/* ceil(a / s) as (a - 1) / s + 1: no overflow for any stride */
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"))
			o = in ? (in - 1) / s + 1 : 0;
		else if (!strcmp(ap, "VALID")) {
			o = in >= ek ? (in - ek) / s + 1 : 0;
			/* ONNX's inference ignores ceil_mode under VALID; ONNX Runtime's
			 * pool kernels do not (the ceiling, less a last window starting
			 * past the input): where the two differ the dim is contested */
			if (ceil_mode && in >= ek) {
				int64_t oc = (in - ek ? (in - ek - 1) / s + 1 : 0) + 1;
				if ((oc - 1) * s >= in)
					oc--;
				if (oc != o) {
					out[i] = dim_unknown();
					*contested |= 1u << i;
					continue;
				}
			}
		} else {
			int64_t pb = np > 0 ? pads[i] : 0;
			int64_t span = padded - ek;
			if (span < 0)
				return inf_fail(c, "window %lld is larger than padded input %lld", (long long)ek,
				                (long long)padded);
			if (ceil_mode) {
				o = (span ? (span - 1) / s + 1 : 0) + 1;
				/* ONNX Runtime's kernel (and PyTorch) drop a last window that
				 * starts past the input and the begin padding; the ONNX shape
				 * inference ORT runs at load does not.  Neither size is safe
				 * to fold (a Shape of it contradicts one or the other): the
				 * dim is unknown, and no declared dim fills it. */
				if ((o - 1) * s >= in + pb) {
					out[i] = dim_unknown();
					*contested |= 1u << i;
					continue;
				}
			} else
				o = span / s + 1;
		}
		out[i] = dim_n(o);
	}
	return true;
}

static bool r_conv(InferCtx *c)
{
	int dt = c->node->kind == OP_ConvInteger ? DT_INT32
	       : c->node->kind == OP_QLinearConv ? inf_dtype(c, 7) : inf_dtype(c, 0);
	int iw = c->node->kind == OP_QLinearConv ? 3 : 1;
	int rx = inf_rank(c, 0), rw = inf_rank(c, iw);
	if (rx < 0 && rw < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	int rank = rx >= 0 ? rx : rw;
	if (rank < 3)
		return inf_fail(c, "input must have rank >= 3, not %d", rank);
	if (rx >= 0 && rw >= 0 && rx != rw)
		return inf_fail(c, "X has rank %d but W has rank %d", rx, rw);
	Dim out[R];
	for (int i = 0; i < rank; i++)
		out[i] = dim_unknown();
	if (rx >= 0)
		out[0] = inf_dims(c, 0)[0];
	if (rw >= 0)
		out[1] = inf_dims(c, iw)[0];
	int64_t group = inf_attr_i(c, "group", 1), need;
	if (group <= 0)
		return inf_fail(c, "group %lld is not positive", (long long)group);
	if (rx >= 0 && rw >= 0) {
		Dim cin = inf_dims(c, 0)[1], wc = inf_dims(c, iw)[1];
		if (dim_known(cin) && dim_known(wc) &&
		    (__builtin_mul_overflow(wc.size, group, &need) || cin.size != need))
			return inf_fail(c, "X has %lld channels but W expects %lld x group %lld", (long long)cin.size,
			                (long long)wc.size, (long long)group);
	}
	int nsp = rank - 2;
	int64_t kernel[R];
	const int64_t *ks;
	int nk = inf_attr_ints(c, "kernel_shape", &ks);
	bool have_k = true;
	for (int i = 0; i < nsp; i++) {
		if (nk == nsp)
			kernel[i] = ks[i];
		else if (rw >= 0 && dim_known(inf_dims(c, iw)[2 + i]))
			kernel[i] = inf_dims(c, iw)[2 + i].size;
		else
			have_k = false;
	}
	if (rx >= 0 && have_k && !window_dims(c, inf_dims(c, 0) + 2, nsp, kernel, NULL, out + 2))
		return false;
	inf_set(c, 0, dt, rank, out);
	return true;
}

/* com.microsoft NhwcConv: Conv with the channels last, X [N, D.., C],
 * W [M, k.., C/group], Y [N, D'.., M] (--layout nhwc emits it). */
bool infer_nhwc_conv(InferCtx *c)
{
	int dt = inf_dtype(c, 0);
	int rx = inf_rank(c, 0), rw = inf_rank(c, 1);
	if (rx < 0 || rw < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	if (rx < 3 || rx != rw)
		return inf_fail(c, "X and W need the same rank, at least 3 (got %d and %d)", rx, rw);
	const Dim *x = inf_dims(c, 0), *w = inf_dims(c, 1);
	int64_t group = inf_attr_i(c, "group", 1), need;
	if (group <= 0)
		return inf_fail(c, "group %lld is not positive", (long long)group);
	if (dim_known(x[rx - 1]) && dim_known(w[rx - 1]) &&
	    (__builtin_mul_overflow(w[rx - 1].size, group, &need) || x[rx - 1].size != need))
		return inf_fail(c, "X has %lld channels but W expects %lld x group %lld", (long long)x[rx - 1].size,
		                (long long)w[rx - 1].size, (long long)group);
	int nsp = rx - 2;
	Dim out[R];
	out[0] = x[0];
	out[rx - 1] = w[0];
	for (int i = 1; i < rx - 1; i++)
		out[i] = dim_unknown();
	int64_t kernel[R];
	const int64_t *ks;
	int nk = inf_attr_ints(c, "kernel_shape", &ks);
	bool have_k = true;
	for (int i = 0; i < nsp; i++) {
		if (nk == nsp)
			kernel[i] = ks[i];
		else if (dim_known(w[1 + i]))
			kernel[i] = w[1 + i].size;
		else
			have_k = false;
	}
	if (have_k && !window_dims(c, x + 1, nsp, kernel, NULL, out + 1))
		return false;
	inf_set(c, 0, dt, rx, out);
	return true;
}

static bool r_conv_transpose(InferCtx *c)
{
	int dt = inf_dtype(c, 0);
	int rx = inf_rank(c, 0), rw = inf_rank(c, 1);
	if (rx < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	if (rx < 3)
		return inf_fail(c, "input must have rank >= 3, not %d", rx);
	int nsp = rx - 2;
	const Dim *x = inf_dims(c, 0);
	Dim out[R];
	out[0] = x[0];
	int64_t group = inf_attr_i(c, "group", 1);
	/* W is (C, M/group, k...): a W of lower rank has no such dims to read */
	out[1] = rw >= 2 ? dim_mul(inf_dims(c, 1)[1], group) : dim_unknown();
	const int64_t *ks, *strides, *dil, *pads, *opad, *oshape;
	int nk = inf_attr_ints(c, "kernel_shape", &ks);
	int ns = inf_attr_ints(c, "strides", &strides);
	int nd = inf_attr_ints(c, "dilations", &dil);
	int np = inf_attr_ints(c, "pads", &pads);
	int nop = inf_attr_ints(c, "output_padding", &opad);
	int nos = inf_attr_ints(c, "output_shape", &oshape);
	char buf[32];
	const char *ap = inf_attr_s(c, "auto_pad", "NOTSET", buf, sizeof buf);
	for (int i = 0; i < nsp; i++) {
		out[2 + i] = dim_unknown();
		if (nos >= nsp) {
			out[2 + i] = dim_n(oshape[nos - nsp + i]);
			continue;
		}
		int64_t k;
		if (nk == nsp)
			k = ks[i];
		else if (rw > 2 + i && dim_known(inf_dims(c, 1)[2 + i]))
			k = inf_dims(c, 1)[2 + i].size;
		else
			continue;
		if (!dim_known(x[2 + i]))
			continue;
		int64_t s = ns == nsp ? strides[i] : 1, dl = nd == nsp ? dil[i] : 1;
		int64_t op = nop == nsp ? opad[i] : 0;
		int64_t in = x[2 + i].size;
		/* in int64 or unknown: a crafted stride, pad or kernel size may take
		 * the size out of range (the kernel refuses such a node) */
		int64_t v, t;
		bool ok;
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"))
			ok = !__builtin_mul_overflow(in, s, &v);
		else {
			int64_t pb = np == 2 * nsp ? pads[i] : 0, pe = np == 2 * nsp ? pads[i + nsp] : 0;
			ok = !__builtin_mul_overflow(s, in - 1, &v) && !__builtin_add_overflow(v, op, &v) &&
			     !__builtin_sub_overflow(k, 1, &t) && !__builtin_mul_overflow(t, dl, &t) &&
			     !__builtin_add_overflow(v, t, &v) && !__builtin_add_overflow(v, 1, &v) &&
			     !__builtin_sub_overflow(v, pb, &v) && !__builtin_sub_overflow(v, pe, &v);
		}
		out[2 + i] = ok && v >= 0 ? dim_n(v) : dim_unknown();
	}
	inf_set(c, 0, dt, rx, out);
	return true;
}

static bool r_pool(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	if (rank < 0) {
		inf_set_dtype(c, 0, dt);
		inf_set_dtype(c, 1, DT_INT64);
		return true;
	}
	if (rank < 3)
		return inf_fail(c, "input must have rank >= 3, not %d", rank);
	const int64_t *ks;
	int nk = inf_attr_ints(c, "kernel_shape", &ks);
	if (nk != rank - 2)
		return inf_fail(c, "kernel_shape has %d entries for %d spatial dims", nk, rank - 2);
	Dim out[R];
	const Dim *x = inf_dims(c, 0);
	out[0] = x[0];
	out[1] = x[1];
	uint32_t contested = 0;
	if (!window_dims(c, x + 2, rank - 2, ks, &contested, out + 2))
		return false;
	inf_set(c, 0, dt, rank, out);
	inf_set(c, 1, DT_INT64, rank, out);
	for (int o = 0; o < 2 && o < c->nout; o++)
		c->out[o].contested = contested << 2;
	return true;
}

static bool r_global_pool(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	Dim out[R];
	for (int i = 0; i < rank; i++)
		out[i] = i < 2 ? inf_dims(c, 0)[i] : dim_n(1);
	inf_set(c, 0, inf_dtype(c, 0), rank, out);
	return true;
}

static bool r_roi(InferCtx *c)
{
	Dim out[4] = {dim_unknown(), dim_unknown(), dim_unknown(), dim_unknown()};
	if (inf_rank(c, 1) == 2)
		out[0] = inf_dims(c, 1)[0];
	if (inf_rank(c, 0) == 4)
		out[1] = inf_dims(c, 0)[1];
	const int64_t *p;
	if (inf_attr_ints(c, "pooled_shape", &p) == 2) {
		out[2] = dim_n(p[0]);
		out[3] = dim_n(p[1]);
	} else if (c->node->kind == OP_RoiAlign) {
		out[2] = dim_n(inf_attr_i(c, "output_height", 1));
		out[3] = dim_n(inf_attr_i(c, "output_width", 1));
	}
	inf_set(c, 0, inf_dtype(c, 0), 4, out);
	return true;
}

/* ---- reductions --------------------------------------------------------------------- */

static bool reduce_shape(InferCtx *c, int dtype, int64_t input_since)
{
	int rank = inf_rank(c, 0);
	bool keep = inf_attr_i(c, "keepdims", 1);
	int64_t axes[R];
	int na = get_axes(c, "axes", 1, input_since, axes, R);
	if (rank < 0 || na == -1) {
		inf_set(c, 0, dtype, keep ? rank : -1, NULL);
		return true;
	}
	bool red[R] = {false};
	if (na <= 0) {
		if (inf_attr_i(c, "noop_with_empty_axes", 0)) {
			inf_set(c, 0, dtype, rank, inf_dims(c, 0));
			return true;
		}
		for (int i = 0; i < rank; i++)
			red[i] = true;
	}
	for (int i = 0; i < na; i++) {
		int a;
		if (!inf_axis(c, axes[i], rank, &a))
			return false;
		red[a] = true;
	}
	/* a kept dim reduced from 0 is 1 (the spec); ONNX Runtime keeps the 0
	 * where the axis was given negative (make difftest seed 461513): not
	 * known */
	Dim out[R];
	int n = 0;
	for (int i = 0; i < rank; i++)
		if (!red[i])
			out[n++] = inf_dims(c, 0)[i];
		else if (keep)
			out[n++] = inf_dims(c, 0)[i].size == 0 ? dim_unknown() : dim_n(1);
	inf_set(c, 0, dtype, n, out);
	return true;
}

static bool r_reduce(InferCtx *c)
{
	/* ReduceSum took axes as an input at 13, the others at 18 */
	int64_t since = c->node->kind == OP_ReduceSum ? 13 : 18;
	return reduce_shape(c, inf_dtype(c, 0), since);
}

static bool r_argminmax(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	if (rank < 0) {
		inf_set_dtype(c, 0, DT_INT64);
		return true;
	}
	int axis;
	if (!inf_axis(c, inf_attr_i(c, "axis", 0), rank, &axis))
		return false;
	bool keep = inf_attr_i(c, "keepdims", 1);
	Dim out[R];
	int n = 0;
	for (int i = 0; i < rank; i++)
		if (i != axis)
			out[n++] = inf_dims(c, 0)[i];
		else if (keep)
			out[n++] = dim_n(1);
	inf_set(c, 0, DT_INT64, n, out);
	return true;
}

static bool r_topk(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	inf_set_dtype(c, 0, inf_dtype(c, 0));
	inf_set_dtype(c, 1, DT_INT64);
	if (rank < 0)
		return true;
	int axis;
	if (!inf_axis(c, inf_attr_i(c, "axis", -1), rank, &axis))
		return false;
	Dim out[R];
	memcpy(out, inf_dims(c, 0), sizeof *out * (size_t)rank);
	int64_t k[1];
	if (c->opset < 10)
		out[axis] = dim_n(inf_attr_i(c, "k", 0));
	else
		out[axis] = inf_ints(c, 1, k, 1) == 1 ? dim_n(k[0]) : dim_unknown();
	inf_set(c, 0, inf_dtype(c, 0), rank, out);
	inf_set(c, 1, DT_INT64, rank, out);
	return true;
}

/* ---- data movement ---------------------------------------------------------------------- */

static bool r_reshape(InferCtx *c)
{
	int dt = inf_dtype(c, 0);
	Dim sh[R];
	int n;
	const int64_t *as;
	if (c->opset < 5) {
		n = inf_attr_ints(c, "shape", &as);
		for (int i = 0; i < n && i < R; i++)
			sh[i] = as[i] >= 0 ? dim_n(as[i]) : dim_unknown();
	} else
		n = input_shape_dims(c, 1, sh, R);
	if (n < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	/* which entries are 0 (copy) and -1 (infer): read the raw numbers */
	int64_t raw[R];
	bool raw_known[R];
	const IVec *v = c->opset < 5 ? NULL : inf_vec(c, 1);
	for (int i = 0; i < n; i++) {
		raw_known[i] = c->opset < 5 ? true : v && v->e[i].known;
		raw[i] = c->opset < 5 ? as[i] : raw_known[i] ? v->e[i].v : 0;
	}
	bool allowzero = inf_attr_i(c, "allowzero", 0);
	int rin = inf_rank(c, 0);
	const Dim *x = inf_dims(c, 0);
	int infer_at = -1;
	for (int i = 0; i < n; i++) {
		if (!raw_known[i])
			continue;
		if (raw[i] == 0 && !allowzero) {
			sh[i] = i < rin ? x[i] : dim_unknown();
			if (rin >= 0 && i >= rin)
				return inf_fail(c, "shape entry %d is 0 but the input has rank %d", i, rin);
		} else if (raw[i] == -1) {
			if (infer_at >= 0)
				return inf_fail(c, "shape has more than one -1");
			infer_at = i;
			sh[i] = dim_unknown();
		} else if (raw[i] < -1)
			return inf_fail(c, "shape entry %lld is invalid", (long long)raw[i]);
	}
	if (infer_at >= 0 && rin >= 0) {
		/* cancel symbols common to both sides, then divide the numbers */
		bool used[R] = {false};
		int64_t pin = 1, pout = 1;
		bool ok = true;
		for (int i = 0; i < n && ok; i++) {
			if (i == infer_at)
				continue;
			if (dim_known(sh[i])) {
				ok = !__builtin_mul_overflow(pout, sh[i].size, &pout);
				continue;
			}
			ok = false;
			for (int j = 0; j < rin; j++)
				if (!used[j] && sh[i].param && dim_same(x[j], sh[i])) {
					used[j] = true;
					ok = true;
					break;
				}
		}
		const char *sym = NULL;
		int nsym = 0;
		for (int j = 0; j < rin && ok; j++) {
			if (used[j])
				continue;
			if (dim_known(x[j]))
				ok = !__builtin_mul_overflow(pin, x[j].size, &pin);
			else if (x[j].param && nsym++ == 0)
				sym = x[j].param;
			else
				ok = false;
		}
		if (ok && nsym == 0) {
			if (pout == 0 || pin % pout != 0)
				return inf_fail(c, "cannot reshape %lld elements into a multiple of %lld", (long long)pin,
				                (long long)pout);
			sh[infer_at] = dim_n(pin / pout);
		} else if (ok && nsym == 1 && pin == pout) {
			Dim d = {-1, sym};
			sh[infer_at] = d;
		}
	} else if (infer_at < 0 && rin >= 0) {
		/* a fully static reshape must keep the element count */
		Dim a = dim_product(x, 0, rin), b = dim_product(sh, 0, n);
		if (dim_known(a) && dim_known(b) && a.size != b.size)
			return inf_fail(c, "cannot reshape %lld elements into %lld", (long long)a.size, (long long)b.size);
	}
	inf_set(c, 0, dt, n, sh);
	return true;
}

static bool r_flatten(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	if (rank < 0) {
		inf_set(c, 0, inf_dtype(c, 0), 2, NULL);
		return true;
	}
	int64_t axis = inf_attr_i(c, "axis", 1);
	if (axis < 0)
		axis += rank;
	if (axis < 0 || axis > rank)
		return inf_fail(c, "axis %lld is out of range for rank %d", (long long)inf_attr_i(c, "axis", 1), rank);
	Dim out[2] = {dim_product(inf_dims(c, 0), 0, (int)axis), dim_product(inf_dims(c, 0), (int)axis, rank)};
	inf_set(c, 0, inf_dtype(c, 0), 2, out);
	return true;
}

static bool r_transpose(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	if (rank < 0) {
		inf_set_dtype(c, 0, inf_dtype(c, 0));
		return true;
	}
	const int64_t *perm;
	int np = inf_attr_ints(c, "perm", &perm);
	if (np >= 0 && np != rank)
		return inf_fail(c, "perm has %d entries for rank %d", np, rank);
	Dim out[R];
	bool seen[R] = {false};
	for (int i = 0; i < rank; i++) {
		int64_t p = np >= 0 ? perm[i] : rank - 1 - i;
		if (p < 0)
			p += rank;
		if (p < 0 || p >= rank || seen[p])
			return inf_fail(c, "perm is not a permutation of 0..%d", rank - 1);
		seen[p] = true;
		out[i] = inf_dims(c, 0)[p];
	}
	inf_set(c, 0, inf_dtype(c, 0), rank, out);
	return true;
}

static bool r_concat(InferCtx *c)
{
	int dt = common_dtype(c, 0, inf_nin(c) - 1);
	if (dt < 0)
		return false;
	int rank = -1;
	for (int i = 0; i < inf_nin(c); i++) {
		int r = inf_rank(c, i);
		if (r < 0)
			continue;
		if (rank >= 0 && r != rank)
			return inf_fail(c, "inputs have ranks %d and %d", rank, r);
		rank = r;
	}
	if (rank < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	int axis;
	if (!inf_axis(c, inf_attr_i(c, "axis", 0), rank, &axis))
		return false;
	Dim out[R];
	for (int k = 0; k < rank; k++)
		out[k] = k == axis ? dim_n(0) : dim_unknown();
	bool first = true;
	for (int i = 0; i < inf_nin(c); i++) {
		if (!inf_has(c, i))
			continue;
		const Dim *d = inf_dims(c, i);
		if (!d) {
			out[axis] = dim_unknown();
			continue;
		}
		for (int k = 0; k < rank; k++) {
			if (k == axis)
				out[k] = first ? d[k] : dim_add(c, out[k], d[k]);
			else if (!dim_unify(out[k], d[k], &out[k]))
				return inf_fail(c, "dim %d differs between inputs (%lld and %lld)", k,
				                (long long)out[k].size, (long long)d[k].size);
		}
		first = false;
	}
	inf_set(c, 0, dt, rank, out);
	return true;
}

static bool r_split(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	for (int o = 0; o < c->nout; o++)
		inf_set_dtype(c, o, dt);
	if (rank < 0)
		return true;
	int axis;
	if (!inf_axis(c, inf_attr_i(c, "axis", 0), rank, &axis))
		return false;
	const Dim *x = inf_dims(c, 0);
	int64_t split[256];
	int ns;
	if (c->opset < 13) {
		const int64_t *a;
		ns = inf_attr_ints(c, "split", &a);
		if (ns > 256)
			ns = -1;
		if (ns > 0)
			memcpy(split, a, sizeof *a * (size_t)ns);
		else if (ns == 0)
			ns = -2;
		else
			ns = -2;
		if (ns == -2 && inf_has(c, 1))   /* opset 2..12 allowed an input too */
			ns = inf_ints(c, 1, split, 256);
	} else
		ns = inf_has(c, 1) ? inf_ints(c, 1, split, 256) : -2;
	Dim out[R];
	memcpy(out, x, sizeof *out * (size_t)rank);
	for (int o = 0; o < c->nout; o++) {
		Dim d = dim_unknown();
		if (ns >= 0) {
			if (ns != c->nout)
				return inf_fail(c, "split has %d entries for %d outputs", ns, c->nout);
			d = dim_n(split[o]);
		} else if (ns == -2 && dim_known(x[axis])) {
			int64_t total = x[axis].size, k = c->nout;
			if (inf_has_attr(c, "num_outputs")) {
				int64_t chunk = (total + k - 1) / k;
				int64_t left = total - chunk * o;
				d = dim_n(left < 0 ? 0 : left < chunk ? left : chunk);
			} else {
				if (total % k != 0)
					return inf_fail(c, "dim %lld does not split evenly into %lld outputs", (long long)total, (long long)k);
				d = dim_n(total / k);
			}
		}
		out[axis] = d;
		inf_set(c, o, dt, rank, out);
	}
	if (ns >= 0 && dim_known(x[axis])) {
		int64_t sum = 0;
		for (int i = 0; i < ns; i++)
			if (split[i] < 0 || __builtin_add_overflow(sum, split[i], &sum))
				return inf_fail(c, "split sizes are not sizes (negative, or their sum overflows)");
		if (sum != x[axis].size)
			return inf_fail(c, "split sizes add up to %lld, not %lld", (long long)sum, (long long)x[axis].size);
	}
	return true;
}

static bool r_slice(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	if (rank < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	const Dim *x = inf_dims(c, 0);
	Dim out[R];
	memcpy(out, x, sizeof *out * (size_t)rank);
	SymInt st[R], en[R];
	int64_t axes[R], steps[R];
	int n;
	if (c->opset < 10) {
		const int64_t *s, *e, *a;
		n = inf_attr_ints(c, "starts", &s);
		if (n < 0 || n > R || inf_attr_ints(c, "ends", &e) != n)
			return inf_fail(c, "starts and ends must have the same length");
		int na = inf_attr_ints(c, "axes", &a);
		for (int i = 0; i < n; i++) {
			st[i] = (SymInt){true, s[i], NULL};
			en[i] = (SymInt){true, e[i], NULL};
			axes[i] = na == n ? a[i] : i;
			steps[i] = 1;
		}
	} else {
		const IVec *s = inf_vec(c, 1), *e = inf_vec(c, 2);
		if (!s || !e) {
			/* which axes are sliced is still known if axes are */
			int64_t a[R];
			int na = inf_has(c, 3) ? inf_ints(c, 3, a, R) : -1;
			for (int i = 0; i < na; i++) {
				int ax;
				if (!inf_axis(c, a[i], rank, &ax))
					return false;
				out[ax] = dim_unknown();
			}
			inf_set(c, 0, dt, rank, na >= 0 ? out : NULL);
			return true;
		}
		n = s->n;
		if (e->n != n || n > R)
			return inf_fail(c, "starts and ends must have the same length");
		for (int i = 0; i < n; i++) {
			st[i] = s->e[i];
			en[i] = e->e[i];
			axes[i] = i;
			steps[i] = 1;
		}
		if (inf_has(c, 3) && inf_ints(c, 3, axes, R) != n) {
			inf_set(c, 0, dt, rank, NULL);
			return true;
		}
		if (inf_has(c, 4) && inf_ints(c, 4, steps, R) != n) {
			for (int i = 0; i < n; i++) {
				int ax;
				if (!inf_axis(c, axes[i], rank, &ax))
					return false;
				out[ax] = dim_unknown();
			}
			inf_set(c, 0, dt, rank, out);
			return true;
		}
	}
	for (int i = 0; i < n; i++) {
		int ax;
		if (!inf_axis(c, axes[i], rank, &ax))
			return false;
		if (steps[i] == 0)
			return inf_fail(c, "slice step must not be 0");
		Dim d = x[ax];
		if (!st[i].known || !en[i].known) {
			/* x[0:Shape(x)[k]] keeps the symbol */
			if (st[i].known && st[i].v == 0 && steps[i] == 1 && !en[i].known && en[i].sym &&
			    d.param && !strcmp(d.param, en[i].sym))
				out[ax] = d;
			else
				out[ax] = dim_unknown();
			continue;
		}
		int64_t first;
		if (dim_known(d))
			out[ax] = dim_n(ir_slice_range(d.size, st[i].v, en[i].v, steps[i], &first));
		else if (st[i].v == 0 && steps[i] == 1 && en[i].v >= INT32_MAX)
			out[ax] = d;   /* the whole dim, whatever it is */
		else if (steps[i] == -1 && st[i].v == -1 && en[i].v <= INT32_MIN)
			out[ax] = d;   /* reversed */
		else
			out[ax] = dim_unknown();
	}
	inf_set(c, 0, dt, rank, out);
	return true;
}

static bool r_gather(InferCtx *c)
{
	int rd = inf_rank(c, 0), ri = inf_rank(c, 1);
	int dt = inf_dtype(c, 0);
	if (rd < 0 || ri < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	int axis;
	if (!inf_axis(c, inf_attr_i(c, "axis", 0), rd, &axis))
		return false;
	Dim out[R];
	int n = 0;
	if (rd + ri - 1 > R) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	for (int i = 0; i < axis; i++)
		out[n++] = inf_dims(c, 0)[i];
	for (int i = 0; i < ri; i++)
		out[n++] = inf_dims(c, 1)[i];
	for (int i = axis + 1; i < rd; i++)
		out[n++] = inf_dims(c, 0)[i];
	inf_set(c, 0, dt, n, out);
	return true;
}

static bool r_gather_elements(InferCtx *c)
{
	inf_set(c, 0, inf_dtype(c, 0), inf_rank(c, 1), inf_dims(c, 1));
	return true;
}

static bool r_gather_nd(InferCtx *c)
{
	int rd = inf_rank(c, 0), ri = inf_rank(c, 1);
	int64_t bd = c->opset >= 12 ? inf_attr_i(c, "batch_dims", 0) : 0;
	int dt = inf_dtype(c, 0);
	if (rd < 0 || ri < 1 || !dim_known(inf_dims(c, 1)[ri - 1])) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	/* as the kernel checks it: a negative batch_dims read dims before the data's */
	if (bd < 0 || bd >= rd || bd >= ri)
		return inf_fail(c, "batch_dims %lld is out of range", (long long)bd);
	int64_t last = inf_dims(c, 1)[ri - 1].size;
	if (bd + last > rd)
		return inf_fail(c, "indices address %lld dims of a rank-%d tensor", (long long)(bd + last), rd);
	int b = (int)bd;
	Dim out[R];
	int n = 0;
	for (int i = 0; i < ri - 1 && n < R; i++)
		out[n++] = inf_dims(c, 1)[i];
	for (int i = b + (int)last; i < rd && n < R; i++)
		out[n++] = inf_dims(c, 0)[i];
	inf_set(c, 0, dt, n, out);
	return true;
}

static bool r_squeeze(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	int64_t axes[R];
	int na = get_axes(c, "axes", 1, 13, axes, R);
	if (rank < 0 || na == -1) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	const Dim *x = inf_dims(c, 0);
	bool drop[R] = {false};
	if (na <= 0) {
		for (int i = 0; i < rank; i++) {
			if (!dim_known(x[i])) {   /* might be 1: the rank is unknown */
				inf_set_dtype(c, 0, dt);
				return true;
			}
			drop[i] = x[i].size == 1;
		}
	}
	for (int i = 0; i < na; i++) {
		int a;
		if (!inf_axis(c, axes[i], rank, &a))
			return false;
		if (dim_known(x[a]) && x[a].size != 1)
			return inf_fail(c, "cannot squeeze dim %d of size %lld", a, (long long)x[a].size);
		drop[a] = true;
	}
	Dim out[R];
	int n = 0;
	for (int i = 0; i < rank; i++)
		if (!drop[i])
			out[n++] = x[i];
	inf_set(c, 0, dt, n, out);
	return true;
}

static bool r_unsqueeze(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	int64_t axes[R];
	int na = get_axes(c, "axes", 1, 13, axes, R);
	if (rank < 0 || na < 0 || rank + na > R) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	int r = rank + na;
	bool ins[R] = {false};
	for (int i = 0; i < na; i++) {
		int a;
		if (!inf_axis(c, axes[i], r, &a))
			return false;
		if (ins[a])
			return inf_fail(c, "axis %d is repeated", a);
		ins[a] = true;
	}
	Dim out[R];
	int k = 0;
	for (int i = 0; i < r; i++)
		out[i] = ins[i] ? dim_n(1) : inf_dims(c, 0)[k++];
	inf_set(c, 0, dt, r, out);
	return true;
}

static bool r_expand(InferCtx *c)
{
	int dt = inf_dtype(c, 0);
	Dim sh[R];
	int n = input_shape_dims(c, 1, sh, R);
	int rank = inf_rank(c, 0);
	if (n < 0 || rank < 0) {
		/* the rank is at least the shape's length */
		inf_set_dtype(c, 0, dt);
		return true;
	}
	/* an unknown entry of the shape broadcasts like an unknown dim, but an
	 * entry of 1 keeps the input's dim */
	Dim out[R];
	int r;
	if (!inf_broadcast(c, rank, inf_dims(c, 0), n, sh, &r, out))
		return false;
	inf_set(c, 0, dt, r, out);
	return true;
}

static bool r_tile(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	if (rank < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	const IVec *rep = inf_vec(c, 1);
	Dim out[R];
	for (int i = 0; i < rank; i++) {
		if (rep && rep->n != rank)
			return inf_fail(c, "repeats has %d entries for rank %d", rep->n, rank);
		out[i] = rep && rep->e[i].known ? dim_mul(inf_dims(c, 0)[i], rep->e[i].v) : dim_unknown();
	}
	inf_set(c, 0, dt, rank, out);
	return true;
}

static bool r_pad(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	if (rank < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	int64_t pads[2 * R], axes[R];
	int np;
	if (c->opset < 11) {
		const int64_t *p;
		np = inf_attr_ints(c, "pads", &p);
		if (np < 0)
			np = inf_attr_ints(c, "paddings", &p);
		if (np > 2 * R)
			np = -1;
		if (np > 0)
			memcpy(pads, p, sizeof *p * (size_t)np);
	} else
		np = inf_ints(c, 1, pads, 2 * R);
	int na = rank;
	for (int i = 0; i < rank; i++)
		axes[i] = i;
	if (c->opset >= 18 && inf_has(c, 3)) {
		na = inf_ints(c, 3, axes, R);
		if (na < 0) {
			inf_set(c, 0, dt, rank, NULL);
			return true;
		}
	}
	Dim out[R];
	memcpy(out, inf_dims(c, 0), sizeof *out * (size_t)rank);
	if (np < 0) {
		for (int i = 0; i < na; i++) {
			int a;
			if (!inf_axis(c, axes[i], rank, &a))
				return false;
			out[a] = dim_unknown();
		}
		inf_set(c, 0, dt, rank, out);
		return true;
	}
	if (np != 2 * na)
		return inf_fail(c, "pads has %d entries for %d axes", np, na);
	for (int i = 0; i < na; i++) {
		int a;
		if (!inf_axis(c, axes[i], rank, &a))
			return false;
		int64_t add, size;
		if (__builtin_add_overflow(pads[i], pads[i + na], &add) ||
		    (dim_known(out[a]) && __builtin_add_overflow(out[a].size, add, &size)))
			return inf_fail(c, "pads of axis %d overflow int64", a);
		out[a] = add == 0 ? out[a] : dim_known(out[a]) ? dim_n(out[a].size + add) : dim_unknown();
		if (dim_known(out[a]) && out[a].size < 0)
			return inf_fail(c, "negative pads leave dim %d with size %lld", a, (long long)out[a].size);
	}
	inf_set(c, 0, dt, rank, out);
	return true;
}

static bool r_shape(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	if (rank < 0) {
		inf_set(c, 0, DT_INT64, 1, NULL);
		return true;
	}
	int64_t start = inf_attr_i(c, "start", 0), end = inf_attr_i(c, "end", rank);
	if (start < 0) start += rank;
	if (end < 0) end += rank;
	start = start < 0 ? 0 : start > rank ? rank : start;
	end = end < 0 ? 0 : end > rank ? rank : end;
	Dim d = dim_n(end > start ? end - start : 0);
	inf_set(c, 0, DT_INT64, 1, &d);
	return true;
}

static bool r_size(InferCtx *c)
{
	inf_set(c, 0, DT_INT64, 0, NULL);
	return true;
}

static bool r_constant(InferCtx *c)
{
	IrNode *node = c->node;
	for (uint32_t i = 0; i < node->nattrs; i++) {
		const IrAttr *a = &node->attrs[i];
		Dim d[R];
		if (!strcmp(a->name, "value") && a->type == ATTR_TENSOR) {
			IrTensor *t = ir_tensor(c->m, a->t);
			for (int k = 0; k < t->rank && k < R; k++)
				d[k] = dim_n(t->dims[k]);
			inf_set(c, 0, t->dtype, t->rank, d);
		} else if (!strcmp(a->name, "value_int"))
			inf_set(c, 0, DT_INT64, 0, NULL);
		else if (!strcmp(a->name, "value_float"))
			inf_set(c, 0, DT_FLOAT, 0, NULL);
		else if (!strcmp(a->name, "value_string"))
			inf_set(c, 0, DT_STRING, 0, NULL);
		else if (!strcmp(a->name, "value_ints") || !strcmp(a->name, "value_floats") ||
		         !strcmp(a->name, "value_strings")) {
			d[0] = dim_n((int64_t)a->n);
			inf_set(c, 0, a->name[6] == 'i' ? DT_INT64 : a->name[6] == 'f' ? DT_FLOAT : DT_STRING, 1, d);
		} else
			continue;
		return true;
	}
	return true;
}

static bool r_constant_of_shape(InferCtx *c)
{
	int dt = DT_FLOAT;
	const IrAttr *v = ir_attr(c->m, c->n, "value");
	if (v && v->type == ATTR_TENSOR)
		dt = ir_tensor(c->m, v->t)->dtype;
	Dim sh[R];
	int n = input_shape_dims(c, 0, sh, R);
	for (int i = 0; i < n; i++)
		if (dim_known(sh[i]) && sh[i].size < 0)
			return inf_fail(c, "negative dim %lld", (long long)sh[i].size);
	inf_set(c, 0, dt, n, sh);
	return true;
}

static bool r_range(InferCtx *c)
{
	int dt = common_dtype(c, 0, 2);
	if (dt < 0)
		return false;
	double s[1], l[1], d[1];
	Dim n = dim_unknown();
	if (inf_floats(c, 0, s, 1) == 1 && inf_floats(c, 1, l, 1) == 1 && inf_floats(c, 2, d, 1) == 1) {
		if (d[0] == 0)
			return inf_fail(c, "delta must not be 0");
		double k = ceil((l[0] - s[0]) / d[0]);
		n = dim_n(k > 0 ? (int64_t)k : 0);
	} else if (inf_floats(c, 0, s, 1) == 1 && s[0] == 0 && inf_floats(c, 2, d, 1) == 1 && d[0] == 1) {
		/* Range(0, n, 1) with n a symbolic dim (Gather(Shape(ids), 1), the
		 * position ids of a sequence): n elements */
		const IVec *lv = inf_vec(c, 1);
		if (lv && lv->n == 1 && lv->rank <= 1)
			n = dim_from_sym(lv->e[0]);
	}
	inf_set(c, 0, dt, 1, &n);
	return true;
}

static bool r_eyelike(InferCtx *c)
{
	return r_like(c);
}

/* [rank, count]; a scalar counts as rank 1, as ONNX Runtime's kernel (and
 * graft's) computes it: [1, 0 or 1], where onnx's inference says [0, ?]
 * (a Shape of it folded to 0 rows; fuzz-graph found it). */
static bool r_nonzero(InferCtx *c)
{
	int r = inf_rank(c, 0);
	Dim d[2] = {r >= 0 ? dim_n(r ? r : 1) : dim_unknown(), dim_unknown()};
	inf_set(c, 0, DT_INT64, 2, d);
	return true;
}

static bool r_compress(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	if (!inf_has_attr(c, "axis")) {
		Dim d = dim_unknown();
		inf_set(c, 0, dt, 1, &d);
		return true;
	}
	if (rank < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	int axis;
	if (!inf_axis(c, inf_attr_i(c, "axis", 0), rank, &axis))
		return false;
	Dim out[R];
	memcpy(out, inf_dims(c, 0), sizeof *out * (size_t)rank);
	out[axis] = dim_unknown();
	inf_set(c, 0, dt, rank, out);
	return true;
}

static bool r_onehot(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 2);
	if (rank < 0 || rank + 1 > R) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	int axis;
	if (!inf_axis(c, inf_attr_i(c, "axis", -1), rank + 1, &axis))
		return false;
	/* depth as the kernel reads it (a float saturates, NaN is 0); one the
	 * kernel refuses (<= 0) leaves the dim unknown */
	const EvValue *dv = inf_val(c, 1);
	Dim dd = dim_unknown();
	if (dv && dv->kind == EV_TENSOR && dv->numel == 1 && dv->dtype != DT_STRING && ev_elem_size(dv->dtype)) {
		int64_t depth = ev_get_i(dv, 0);
		if (depth > 0)
			dd = dim_n(depth);
	} else if (!dv) {
		int64_t depth[1];
		if (inf_ints(c, 1, depth, 1) == 1 && depth[0] > 0)
			dd = dim_n(depth[0]);
	}
	Dim out[R];
	int k = 0;
	for (int i = 0; i <= rank; i++)
		out[i] = i == axis ? dd : inf_dims(c, 0)[k++];
	inf_set(c, 0, dt, rank + 1, out);
	return true;
}

static bool r_depth_space(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	if (rank != 4) {
		if (rank >= 0)
			return inf_fail(c, "input must be 4-D, not rank %d", rank);
		inf_set_dtype(c, 0, dt);
		return true;
	}
	int64_t b = inf_attr_i(c, "blocksize", 1), bb;
	if (b <= 0 || __builtin_mul_overflow(b, b, &bb))
		return inf_fail(c, "blocksize %lld is not a positive size", (long long)b);
	const Dim *x = inf_dims(c, 0);
	Dim out[4] = {x[0], x[1], x[2], x[3]};
	if (c->node->kind == OP_DepthToSpace) {
		if (dim_known(x[1]) && x[1].size % bb)
			return inf_fail(c, "channels %lld do not divide by blocksize^2 (%lld)", (long long)x[1].size,
			                (long long)bb);
		out[1] = dim_known(x[1]) ? dim_n(x[1].size / bb) : dim_unknown();
		out[2] = dim_mul(x[2], b);
		out[3] = dim_mul(x[3], b);
	} else {
		for (int i = 2; i < 4; i++)
			if (dim_known(x[i]) && x[i].size % b)
				return inf_fail(c, "spatial dim %lld does not divide by blocksize %lld", (long long)x[i].size,
				                (long long)b);
		out[1] = dim_mul(x[1], bb);
		out[2] = dim_known(x[2]) ? dim_n(x[2].size / b) : dim_unknown();
		out[3] = dim_known(x[3]) ? dim_n(x[3].size / b) : dim_unknown();
	}
	inf_set(c, 0, dt, 4, out);
	return true;
}

static bool r_resize(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	int dt = inf_dtype(c, 0);
	if (rank < 0) {
		inf_set_dtype(c, 0, dt);
		return true;
	}
	const Dim *x = inf_dims(c, 0);
	Dim out[R];
	double sc[R];
	int64_t sizes[R], axes[R];
	int na = rank;
	for (int i = 0; i < rank; i++)
		axes[i] = i;
	const int64_t *aa;
	int nattr = inf_attr_ints(c, "axes", &aa);
	if (nattr > 0 && nattr <= rank) {
		na = nattr;
		memcpy(axes, aa, sizeof *aa * (size_t)na);
	}
	memcpy(out, x, sizeof *out * (size_t)rank);
	int ns = -1, nz = -1;
	if (c->node->kind == OP_Upsample && c->opset < 9) {
		const float *f;
		ns = inf_attr_floats(c, "scales", &f);
		for (int i = 0; i < ns && i < R; i++)
			sc[i] = f[i];
	} else if (c->node->kind == OP_Upsample || c->opset < 11)
		ns = inf_floats(c, 1, sc, R);
	else {
		nz = inf_has(c, 3) ? inf_ints(c, 3, sizes, R) : -1;
		if (nz < 0 && inf_has(c, 2)) {
			ns = inf_floats(c, 2, sc, R);
			if (ns == 0)
				ns = -1;
		}
		if (nz == 0)
			nz = -1;
	}
	char buf[32];
	const char *keep = inf_attr_s(c, "keep_aspect_ratio_policy", "stretch", buf, sizeof buf);
	if (nz == na && !strcmp(keep, "stretch")) {
		for (int i = 0; i < na; i++) {
			int a;
			if (!inf_axis(c, axes[i], rank, &a))
				return false;
			out[a] = dim_n(sizes[i]);
		}
	} else if (ns == na) {
		for (int i = 0; i < na; i++) {
			int a;
			if (!inf_axis(c, axes[i], rank, &a))
				return false;
			/* a scale that takes the size out of int64 (or below 0) gives
			 * no size: the kernel refuses such a node */
			double v = dim_known(x[a]) ? floor((double)x[a].size * sc[i]) : -1;
			out[a] = sc[i] == 1.0 ? x[a] : v >= 0 && v < 0x1p62 ? dim_n((int64_t)v) : dim_unknown();
		}
	} else {
		inf_set(c, 0, dt, rank, NULL);
		return true;
	}
	inf_set(c, 0, dt, rank, out);
	return true;
}

static bool r_det(InferCtx *c)
{
	int rank = inf_rank(c, 0);
	inf_set(c, 0, inf_dtype(c, 0), rank >= 2 ? rank - 2 : -1, inf_dims(c, 0));
	return true;
}

/* ---- quantization ------------------------------------------------------------------- */

static bool r_quantize(InferCtx *c)
{
	int dt = inf_has(c, 2) ? inf_dtype(c, 2) : (int)inf_attr_i(c, "output_dtype", DT_UINT8);
	if (!dt)
		dt = DT_UINT8;
	inf_set(c, 0, dt, inf_rank(c, 0), inf_dims(c, 0));
	return true;
}

static bool r_dequantize(InferCtx *c)
{
	int dt = c->opset >= 19 ? inf_dtype(c, 1) : DT_FLOAT;
	inf_set(c, 0, dt, inf_rank(c, 0), inf_dims(c, 0));
	return true;
}

static bool r_dyn_quantize(InferCtx *c)
{
	inf_set(c, 0, DT_UINT8, inf_rank(c, 0), inf_dims(c, 0));
	inf_set(c, 1, DT_FLOAT, 0, NULL);
	inf_set(c, 2, DT_UINT8, 0, NULL);
	return true;
}

/* ---- recurrent ----------------------------------------------------------------------- */

static bool r_rnn(InferCtx *c)
{
	int dt = inf_dtype(c, 0);
	char buf[32];
	const char *dir = inf_attr_s(c, "direction", "forward", buf, sizeof buf);
	Dim nd = dim_n(!strcmp(dir, "bidirectional") ? 2 : 1);
	Dim hid = inf_has_attr(c, "hidden_size") ? dim_n(inf_attr_i(c, "hidden_size", 0)) : dim_unknown();
	bool layout = inf_attr_i(c, "layout", 0);
	Dim seq = dim_unknown(), batch = dim_unknown();
	if (inf_rank(c, 0) == 3) {
		seq = inf_dims(c, 0)[layout ? 1 : 0];
		batch = inf_dims(c, 0)[layout ? 0 : 1];
	}
	Dim y[4], h[3];
	if (layout) {
		y[0] = batch; y[1] = seq; y[2] = nd; y[3] = hid;
		h[0] = batch; h[1] = nd; h[2] = hid;
	} else {
		y[0] = seq; y[1] = nd; y[2] = batch; y[3] = hid;
		h[0] = nd; h[1] = batch; h[2] = hid;
	}
	inf_set(c, 0, dt, 4, y);
	inf_set(c, 1, dt, 3, h);
	inf_set(c, 2, dt, 3, h);
	return true;
}

/* ---- control flow ------------------------------------------------------------------- */

static GraphId attr_graph(InferCtx *c, const char *name)
{
	const IrAttr *a = ir_attr(c->m, c->n, name);
	return a && a->type == ATTR_GRAPH ? a->g : 0;
}

/* What two branches can both produce. */
static void merge_branch(InferCtx *c, int o, const IrValue *a, const IrValue *b)
{
	int dt = a->dtype == b->dtype ? a->dtype : a->dtype ? a->dtype : b->dtype;
	if (a->shape.rank < 0 || a->shape.rank != b->shape.rank || a->shape.rank > R) {
		inf_set_dtype(c, o, dt);
		return;
	}
	Dim out[R];
	for (int i = 0; i < a->shape.rank; i++)
		out[i] = dim_same(a->shape.dims[i], b->shape.dims[i]) ? a->shape.dims[i] : dim_unknown();
	inf_set(c, o, dt, a->shape.rank, out);
}

static bool r_if(InferCtx *c)
{
	GraphId t = attr_graph(c, "then_branch"), e = attr_graph(c, "else_branch");
	if (!t || !e)
		return true;
	IrGraph *gt = ir_graph(c->m, t), *ge = ir_graph(c->m, e);
	if (gt->noutputs != ge->noutputs || (int)gt->noutputs != c->nout)
		return inf_fail(c, "branches have %u and %u outputs for %d", gt->noutputs, ge->noutputs, c->nout);
	/* a known condition picks its branch */
	int64_t cond[1];
	bool known = inf_ints(c, 0, cond, 1) == 1;
	for (int o = 0; o < c->nout; o++) {
		const IrValue *a = ir_value(c->m, gt->outputs[o]), *b = ir_value(c->m, ge->outputs[o]);
		if (known)
			a = b = cond[0] ? a : b;
		merge_branch(c, o, a, b);
	}
	return true;
}

/* Does the body keep going while it can: is its condition output the
 * condition input passed through (by Identity or not at all)?  Only then do
 * M iterations run when M is known and no condition is given; a body that
 * computes its condition may stop at any iteration. */
static bool body_cond_passes_through(IrModel *m, const IrGraph *g)
{
	if (g->noutputs < 1 || g->ninputs < 2)
		return false;
	ValueId v = g->outputs[0];
	for (int hops = 0; v && hops < 64; hops++) {
		if (v == g->inputs[1])
			return true;
		const IrValue *val = ir_value(m, v);
		const IrNode *p = val->producer ? ir_node(m, val->producer) : NULL;
		if (!p || strcmp(p->op_type, "Identity") || p->domain[0] || p->ninputs != 1)
			return false;
		v = p->inputs[0];
	}
	return false;
}

static bool r_loop(InferCtx *c)
{
	GraphId body = attr_graph(c, "body");
	if (!body)
		return true;
	IrGraph *g = ir_graph(c->m, body);
	int ncarried = inf_nin(c) - 2;
	for (int o = 0; o < c->nout && o + 1 < (int)g->noutputs; o++) {
		const IrValue *b = ir_value(c->m, g->outputs[o + 1]);
		if (o < ncarried) {
			/* a carried value keeps what the first and later iterations share */
			IrValue in = {0};
			in.dtype = inf_dtype(c, o + 2);
			in.shape.rank = inf_rank(c, o + 2);
			in.shape.dims = (Dim *)inf_dims(c, o + 2);
			merge_branch(c, o, &in, b);
		} else {
			/* a scan output stacks the body's value along a new first axis */
			if (b->shape.rank < 0 || b->shape.rank + 1 > R) {
				inf_set_dtype(c, o, b->dtype);
				continue;
			}
			Dim out[R];
			int64_t trip[1];
			/* M iterations only if nothing can stop the loop earlier (a
			 * computed condition once made a [3] of what ran once) */
			out[0] = inf_ints(c, 0, trip, 1) == 1 && !inf_has(c, 1) && body_cond_passes_through(c->m, g)
			         ? dim_n(trip[0]) : dim_unknown();
			for (int i = 0; i < b->shape.rank; i++)
				out[i + 1] = b->shape.dims[i];
			inf_set(c, o, b->dtype, b->shape.rank + 1, out);
		}
	}
	return true;
}

/* ---- sequences ----------------------------------------------------------------------- */

/* Merge an element type into a running one (first: take it). */
static void seq_merge(InferOut *acc, bool first, int dtype, int rank, const Dim *dims)
{
	if (first) {
		acc->dtype = dtype;
		acc->rank = rank > IR_MAX_RANK ? -1 : rank;
		for (int i = 0; i < acc->rank; i++)
			acc->dims[i] = dims[i];
		return;
	}
	if (!acc->dtype)
		acc->dtype = dtype;
	if (acc->rank != rank)
		acc->rank = -1;
	for (int i = 0; i < acc->rank; i++)
		if (!dim_same(acc->dims[i], dims[i]))
			acc->dims[i] = dim_unknown();
}

static bool r_seq_construct(InferCtx *c)
{
	InferOut acc = {0};
	acc.rank = -1;
	for (int i = 0; i < inf_nin(c); i++)
		seq_merge(&acc, i == 0, inf_dtype(c, i), inf_rank(c, i), inf_dims(c, i));
	inf_set_seq(c, 0, acc.dtype, acc.rank, acc.dims);
	return true;
}

static bool r_seq_empty(InferCtx *c)
{
	inf_set_seq(c, 0, (int)inf_attr_i(c, "dtype", DT_FLOAT), -1, NULL);
	return true;
}

static bool r_seq_insert(InferCtx *c)
{
	const InferOut *e = inf_seq(c, 0);
	if (!e) {
		inf_set_seq(c, 0, inf_dtype(c, 1), -1, NULL);
		return true;
	}
	InferOut acc = *e;
	/* an empty sequence's elements have no shape yet: take the tensor's */
	if (c->s->m->values[c->node->inputs[0]].producer &&
	    ir_node(c->m, c->s->m->values[c->node->inputs[0]].producer)->kind == OP_SequenceEmpty)
		seq_merge(&acc, true, inf_dtype(c, 1), inf_rank(c, 1), inf_dims(c, 1));
	else
		seq_merge(&acc, false, inf_dtype(c, 1), inf_rank(c, 1), inf_dims(c, 1));
	inf_set_seq(c, 0, acc.dtype, acc.rank, acc.dims);
	return true;
}

static bool r_seq_same(InferCtx *c)
{
	const InferOut *e = inf_seq(c, 0);
	if (e)
		inf_set_seq(c, 0, e->dtype, e->rank, e->dims);
	else
		inf_set_seq(c, 0, DT_UNDEFINED, -1, NULL);
	return true;
}

static bool r_seq_at(InferCtx *c)
{
	const InferOut *e = inf_seq(c, 0);
	if (e)
		inf_set(c, 0, e->dtype, e->rank, e->dims);
	return true;
}

static bool r_seq_length(InferCtx *c)
{
	inf_set(c, 0, DT_INT64, 0, NULL);
	return true;
}

static bool r_split_to_seq(InferCtx *c)
{
	int rank = inf_rank(c, 0), dt = inf_dtype(c, 0);
	if (rank < 0) {
		inf_set_seq(c, 0, dt, -1, NULL);
		return true;
	}
	int axis;
	if (!inf_axis(c, inf_attr_i(c, "axis", 0), rank, &axis))
		return false;
	Dim out[R];
	memcpy(out, inf_dims(c, 0), sizeof *out * (size_t)rank);
	int64_t sp[1];
	if (!inf_has(c, 1)) {
		if (!inf_attr_i(c, "keepdims", 1)) {
			memmove(out + axis, out + axis + 1, sizeof *out * (size_t)(rank - axis - 1));
			inf_set_seq(c, 0, dt, rank - 1, out);
			return true;
		}
		out[axis] = dim_n(1);
	} else if (inf_rank(c, 1) == 0 && inf_ints(c, 1, sp, 1) == 1 && dim_known(out[axis]) && sp[0] > 0 &&
	           out[axis].size % sp[0] == 0)
		out[axis] = dim_n(sp[0]);
	else
		out[axis] = dim_unknown();
	inf_set_seq(c, 0, dt, rank, out);
	return true;
}

static bool r_concat_from_seq(InferCtx *c)
{
	const InferOut *e = inf_seq(c, 0);
	if (!e)
		return true;
	if (e->rank < 0) {
		inf_set_dtype(c, 0, e->dtype);
		return true;
	}
	bool new_axis = inf_attr_i(c, "new_axis", 0);
	int rank = e->rank + (new_axis ? 1 : 0);
	int axis;
	if (rank > R || !inf_axis(c, inf_attr_i(c, "axis", 0), rank, &axis))
		return rank > R;
	Dim out[R];
	int k = 0;
	for (int i = 0; i < rank; i++) {
		if (i == axis) {
			out[i] = dim_unknown();  /* how many elements: not tracked */
			if (new_axis)
				continue;
			k++;
			continue;
		}
		out[i] = e->dims[k++];
	}
	inf_set(c, 0, e->dtype, rank, out);
	return true;
}

/* ---- the table ------------------------------------------------------------------------ */

/* Each op's shape rule, indexed by its kind (ir/ops.def): an op misspelt
 * here does not compile, and one given twice is a warning
 * (-Woverride-init). */
static const InferFn by_kind[OP_COUNT] = {
	/* same type and shape as input 0 */
	[OP_Abs] = r_same, [OP_Acos] = r_same, [OP_Acosh] = r_same, [OP_Asin] = r_same, [OP_Asinh] = r_same,
	[OP_Atan] = r_same, [OP_Atanh] = r_same, [OP_BitwiseNot] = r_same, [OP_Ceil] = r_same, [OP_Celu] = r_same,
	[OP_Clip] = r_same, [OP_Cos] = r_same, [OP_Cosh] = r_same, [OP_CumSum] = r_same, [OP_Elu] = r_same,
	[OP_Erf] = r_same, [OP_Exp] = r_same, [OP_Floor] = r_same, [OP_Gelu] = r_same, [OP_HardSigmoid] = r_same,
	[OP_HardSwish] = r_same, [OP_Hardmax] = r_same, [OP_Identity] = r_same,
	[OP_InstanceNormalization] = r_same, [OP_LRN] = r_same, [OP_LeakyRelu] = r_same, [OP_Log] = r_same,
	[OP_LogSoftmax] = r_same, [OP_LpNormalization] = r_same, [OP_MeanVarianceNormalization] = r_same,
	[OP_Mish] = r_same, [OP_Neg] = r_same, [OP_Not] = r_same, [OP_Reciprocal] = r_same, [OP_Relu] = r_same,
	[OP_ReverseSequence] = r_same, [OP_Round] = r_same, [OP_Scatter] = r_same, [OP_ScatterElements] = r_same,
	[OP_ScatterND] = r_same, [OP_Selu] = r_same, [OP_Shrink] = r_same, [OP_Sigmoid] = r_same, [OP_Sign] = r_same,
	[OP_Sin] = r_same, [OP_Sinh] = r_same, [OP_Softmax] = r_same, [OP_Softplus] = r_same, [OP_Softsign] = r_same,
	[OP_Sqrt] = r_same, [OP_Tan] = r_same, [OP_Tanh] = r_same, [OP_ThresholdedRelu] = r_same, [OP_Trilu] = r_same,
	[OP_IsInf] = r_bool_same, [OP_IsNaN] = r_bool_same,
	[OP_GroupNormalization] = r_same,
	/* broadcasting */
	[OP_Add] = r_binary, [OP_And] = r_binary, [OP_BitwiseAnd] = r_binary, [OP_BitwiseOr] = r_binary,
	[OP_BitwiseXor] = r_binary, [OP_BitShift] = r_binary, [OP_Div] = r_binary, [OP_Max] = r_binary,
	[OP_Mean] = r_binary, [OP_Min] = r_binary, [OP_Mod] = r_binary, [OP_Mul] = r_binary, [OP_Or] = r_binary,
	[OP_Sub] = r_binary, [OP_Sum] = r_binary, [OP_Xor] = r_binary, [OP_Pow] = r_binary_first,
	[OP_Equal] = r_compare, [OP_Greater] = r_compare, [OP_GreaterOrEqual] = r_compare, [OP_Less] = r_compare,
	[OP_LessOrEqual] = r_compare, [OP_Where] = r_where, [OP_PRelu] = r_prelu, [OP_Expand] = r_expand,
	/* types */
	[OP_Cast] = r_cast, [OP_CastLike] = r_castlike, [OP_Dropout] = r_dropout,
	[OP_Bernoulli] = r_like, [OP_RandomNormalLike] = r_like, [OP_RandomUniformLike] = r_like,
	[OP_EyeLike] = r_eyelike, [OP_RandomNormal] = r_random, [OP_RandomUniform] = r_random,
	[OP_Multinomial] = r_multinomial,
	/* normalization */
	[OP_BatchNormalization] = r_batchnorm, [OP_LayerNormalization] = r_layernorm,
	[OP_RMSNormalization] = r_same, [OP_Attention] = r_attention, [OP_RotaryEmbedding] = r_same,
	/* products */
	[OP_MatMul] = r_matmul, [OP_MatMulInteger] = r_matmul_int, [OP_QLinearMatMul] = r_qlinear_matmul,
	[OP_Gemm] = r_gemm, [OP_Einsum] = r_einsum,
	/* windows */
	[OP_Conv] = r_conv, [OP_ConvInteger] = r_conv, [OP_QLinearConv] = r_conv,
	[OP_ConvTranspose] = r_conv_transpose, [OP_AveragePool] = r_pool, [OP_MaxPool] = r_pool,
	[OP_LpPool] = r_pool, [OP_GlobalAveragePool] = r_global_pool, [OP_GlobalMaxPool] = r_global_pool,
	[OP_GlobalLpPool] = r_global_pool, [OP_MaxRoiPool] = r_roi, [OP_RoiAlign] = r_roi,
	/* reductions */
	[OP_ReduceL1] = r_reduce, [OP_ReduceL2] = r_reduce, [OP_ReduceLogSum] = r_reduce,
	[OP_ReduceLogSumExp] = r_reduce, [OP_ReduceMax] = r_reduce, [OP_ReduceMean] = r_reduce,
	[OP_ReduceMin] = r_reduce, [OP_ReduceProd] = r_reduce, [OP_ReduceSum] = r_reduce,
	[OP_ReduceSumSquare] = r_reduce, [OP_ArgMax] = r_argminmax, [OP_ArgMin] = r_argminmax, [OP_TopK] = r_topk,
	/* data movement */
	[OP_Reshape] = r_reshape, [OP_Flatten] = r_flatten, [OP_Transpose] = r_transpose, [OP_Concat] = r_concat,
	[OP_Split] = r_split, [OP_Slice] = r_slice, [OP_Gather] = r_gather, [OP_GatherElements] = r_gather_elements,
	[OP_GatherND] = r_gather_nd, [OP_Squeeze] = r_squeeze, [OP_Unsqueeze] = r_unsqueeze, [OP_Tile] = r_tile,
	[OP_Pad] = r_pad, [OP_Shape] = r_shape, [OP_Size] = r_size, [OP_Constant] = r_constant,
	[OP_ConstantOfShape] = r_constant_of_shape, [OP_Range] = r_range, [OP_NonZero] = r_nonzero,
	[OP_Compress] = r_compress, [OP_OneHot] = r_onehot, [OP_DepthToSpace] = r_depth_space,
	[OP_SpaceToDepth] = r_depth_space, [OP_Resize] = r_resize, [OP_Upsample] = r_resize, [OP_Det] = r_det,
	/* quantization */
	[OP_QuantizeLinear] = r_quantize, [OP_DequantizeLinear] = r_dequantize,
	[OP_DynamicQuantizeLinear] = r_dyn_quantize,
	/* recurrent */
	[OP_RNN] = r_rnn, [OP_GRU] = r_rnn, [OP_LSTM] = r_rnn,
	/* sequences */
	[OP_SequenceConstruct] = r_seq_construct, [OP_SequenceEmpty] = r_seq_empty,
	[OP_SequenceInsert] = r_seq_insert, [OP_SequenceErase] = r_seq_same, [OP_SequenceAt] = r_seq_at,
	[OP_SequenceLength] = r_seq_length, [OP_SplitToSequence] = r_split_to_seq,
	[OP_ConcatFromSequence] = r_concat_from_seq,
	/* control flow */
	[OP_If] = r_if, [OP_Loop] = r_loop,
};

InferFn infer_rule_find(const char *op)
{
	OpKind k = op_kind_lookup(op);
	return k == OP_UNKNOWN ? NULL : by_kind[k];
}
