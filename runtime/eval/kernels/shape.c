/* shape.c - kernels that reshape, reorder, cut, join, pad and generate
 * tensors: Reshape, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze,
 * Expand, Tile, Pad, Flatten, Shape, Size, Identity, ConstantOfShape,
 * Constant, Range, DepthToSpace, SpaceToDepth, Trilu, EyeLike, OneHot,
 * CenterCropPad.
 *
 * Apart from Range, EyeLike and OneHot they only move elements, so each is
 * written once for every dtype by element size (sh_util.h); strings are
 * duplicated.  Opset differences (attributes that became inputs) are chosen
 * by c->opset, as the op's schema history says. */
#include "runtime/eval/eval.h"
#include "sh_util.h"
#include "ir/geometry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T_MOVE (SH_T_ALL | SH_T_F8)

/* A copy of x's elements under a new shape (same element count). */
static bool emit_reshaped(EvCtx *c, const EvValue *x, int rank, const int64_t *dims, EvValue **out)
{
	EvValue *o = sh_new(c, x->dtype, rank, dims);
	if (!o)
		return false;
	if (o->numel != x->numel) {
		ev_unref(o);
		return ev_fail(c, "cannot reshape %lld elements into %lld", (long long)x->numel, (long long)o->numel);
	}
	sh_copy(o, 0, x, 0, x->numel);
	*out = o;
	return true;
}

/* ---- Reshape ---------------------------------------------------------------- */

static bool k_reshape(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "data"))
		return false;
	int64_t shape[EV_MAX_RANK + 1];
	int n = 0;
	if (c->opset < 5) {
		int na;
		const int64_t *a = ev_attr_ints(c, "shape", &na);
		if (na < 0)
			return ev_fail(c, "Reshape-1 needs a shape attribute");
		if (na > EV_MAX_RANK)
			return ev_fail(c, "shape has rank %d, over the limit %d", na, EV_MAX_RANK);
		memcpy(shape, a, sizeof *a * (size_t)na);
		n = na;
	} else {
		if (nin < 2 || !in[1])
			return ev_fail(c, "Reshape needs a shape input");
		if (!sh_read_ints(c, in[1], "shape", shape, EV_MAX_RANK, &n))
			return false;
	}
	bool allowzero = c->opset >= 14 && ev_attr_int(c, "allowzero", 0) != 0;
	int64_t dims[EV_MAX_RANK];
	int infer = -1;
	int64_t known = 1;
	for (int i = 0; i < n; i++) {
		int64_t s = shape[i];
		if (s == 0 && !allowzero) {
			if (i >= x->rank)
				return ev_fail(c, "shape[%d] is 0 (copy) but the input has rank %d", i, x->rank);
			dims[i] = x->dims[i];
		} else if (s == -1) {
			if (infer >= 0)
				return ev_fail(c, "shape has more than one -1");
			infer = i;
			continue;
		} else if (s < 0) {
			return ev_fail(c, "shape[%d] is %lld", i, (long long)s);
		} else {
			dims[i] = s;
		}
		if (__builtin_mul_overflow(known, dims[i], &known))
			return ev_fail(c, "shape overflows");
	}
	if (infer >= 0) {
		if (known == 0 || x->numel % known != 0)
			return ev_fail(c, "cannot infer the -1 dimension: %lld elements, %lld known",
			               (long long)x->numel, (long long)known);
		dims[infer] = x->numel / known;
		known *= dims[infer];
	}
	if (known != x->numel)
		return ev_fail(c, "cannot reshape %lld elements into %lld", (long long)x->numel, (long long)known);
	return emit_reshaped(c, x, n, dims, &out[0]);
}

/* ---- Transpose -------------------------------------------------------------- */

static bool k_transpose(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "data"))
		return false;
	int r = x->rank, np;
	const int64_t *p = ev_attr_ints(c, "perm", &np);
	int perm[EV_MAX_RANK];
	bool seen[EV_MAX_RANK] = {false};
	if (np < 0) {
		for (int i = 0; i < r; i++)
			perm[i] = r - 1 - i;
	} else {
		if (np != r)
			return ev_fail(c, "perm has %d entries for rank %d", np, r);
		for (int i = 0; i < r; i++) {
			int64_t a = p[i] < 0 ? p[i] + r : p[i];
			if (a < 0 || a >= r || seen[a])
				return ev_fail(c, "perm is not a permutation of 0..%d", r - 1);
			seen[a] = true;
			perm[i] = (int)a;
		}
	}
	int64_t dims[EV_MAX_RANK], xs[EV_MAX_RANK], ss[EV_MAX_RANK];
	ev_strides(r, x->dims, xs);
	for (int i = 0; i < r; i++) {
		dims[i] = x->dims[perm[i]];
		ss[i] = xs[perm[i]];
	}
	EvValue *o = sh_new(c, x->dtype, r, dims);
	if (!o)
		return false;
	sh_strided_copy(o, x, ss, 0);
	out[0] = o;
	return true;
}

/* ---- Concat ----------------------------------------------------------------- */

static bool k_concat(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 1)
		return ev_fail(c, "Concat needs at least one input");
	const IrAttr *aa = ev_attr(c, "axis");
	if (!aa && c->opset >= 4)
		return ev_fail(c, "Concat needs an axis attribute");
	int64_t axis = aa ? aa->i : 1;
	const EvValue *f = in[0];
	for (int i = 0; i < nin; i++)
		if (!sh_check_movable(c, in[i], "input"))
			return false;
	int r = f->rank, ax;
	if (r == 0)
		return ev_fail(c, "cannot concatenate scalars");
	if (!sh_axis(c, axis, r, 0, &ax))
		return false;
	int64_t dims[EV_MAX_RANK];
	memcpy(dims, f->dims, sizeof *dims * (size_t)r);
	dims[ax] = 0;
	for (int i = 0; i < nin; i++) {
		const EvValue *x = in[i];
		if (x->dtype != f->dtype)
			return ev_fail(c, "input %d is %s, input 0 is %s", i, dtype_name(x->dtype), dtype_name(f->dtype));
		if (x->rank != r)
			return ev_fail(c, "input %d has rank %d, input 0 has rank %d", i, x->rank, r);
		for (int k = 0; k < r; k++)
			if (k != ax && x->dims[k] != f->dims[k])
				return ev_fail(c, "input %d differs from input 0 in dimension %d", i, k);
		dims[ax] += x->dims[ax];
	}
	EvValue *o = sh_new(c, f->dtype, r, dims);
	if (!o)
		return false;
	int64_t outer = sh_prod(dims, 0, ax), inner = sh_prod(dims, ax + 1, r), pos = 0;
	for (int64_t k = 0; k < outer; k++)
		for (int i = 0; i < nin; i++) {
			int64_t n = in[i]->dims[ax] * inner;
			sh_copy(o, pos, in[i], k * n, n);
			pos += n;
		}
	out[0] = o;
	return true;
}

/* ---- Split ------------------------------------------------------------------ */

/* Copy the slab [start, start+len) of x along axis into a new tensor. */
static EvValue *slab(EvCtx *c, const EvValue *x, int ax, int64_t start, int64_t len)
{
	int64_t dims[EV_MAX_RANK];
	memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
	dims[ax] = len;
	EvValue *o = sh_new(c, x->dtype, x->rank, dims);
	if (!o)
		return NULL;
	int64_t outer = sh_prod(x->dims, 0, ax), inner = sh_prod(x->dims, ax + 1, x->rank);
	int64_t d = x->dims[ax];
	for (int64_t k = 0; k < outer; k++)
		sh_copy(o, k * len * inner, x, (k * d + start) * inner, len * inner);
	return o;
}

static bool k_split(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "input"))
		return false;
	int ax;
	if (!sh_axis(c, ev_attr_int(c, "axis", 0), x->rank, 0, &ax))
		return false;
	int64_t d = x->dims[ax];
	int64_t *sizes = calloc((size_t)nout + 1, sizeof *sizes);
	if (!sizes)
		return ev_fail(c, "out of memory");
	bool ok = false;
	const EvValue *sp = (c->opset >= 13 || c->opset < 2) && nin > 1 ? in[1] : NULL;
	int na;
	const int64_t *sa = c->opset < 13 ? ev_attr_ints(c, "split", &na) : NULL;
	if (sp && sp->numel > 0) {
		if (!sh_is_int_index(sp) || sp->rank > 1) {
			ev_fail(c, "split must be a 1-D integer tensor");
			goto done;
		}
		if (sp->numel != nout) {
			ev_fail(c, "split has %lld entries for %d outputs", (long long)sp->numel, nout);
			goto done;
		}
		for (int i = 0; i < nout; i++)
			sizes[i] = sh_idx(sp, i);
	} else if (sa && na > 0) {
		if (na != nout) {
			ev_fail(c, "split has %d entries for %d outputs", na, nout);
			goto done;
		}
		memcpy(sizes, sa, sizeof *sizes * (size_t)nout);
	} else {
		int64_t parts = c->opset >= 18 ? ev_attr_int(c, "num_outputs", nout) : nout;
		if (parts != nout || nout < 1) {
			ev_fail(c, "num_outputs is %lld but the node has %d outputs", (long long)parts, nout);
			goto done;
		}
		if (d % nout != 0 && c->opset < 18) {
			ev_fail(c, "dimension %lld does not split into %d equal parts", (long long)d, nout);
			goto done;
		}
		/* opset 18: chunks of ceil(d / n), the last one smaller */
		int64_t chunk = (d + nout - 1) / nout, left = d;
		for (int i = 0; i < nout; i++) {
			sizes[i] = left < chunk ? left : chunk;
			left -= sizes[i];
		}
	}
	int64_t sum = 0;
	for (int i = 0; i < nout; i++) {
		if (sizes[i] < 0) {
			ev_fail(c, "split[%d] is negative", i);
			goto done;
		}
		sum += sizes[i];
	}
	if (sum != d) {
		ev_fail(c, "split sums to %lld but the dimension is %lld", (long long)sum, (long long)d);
		goto done;
	}
	int64_t start = 0;
	for (int i = 0; i < nout; i++) {
		out[i] = slab(c, x, ax, start, sizes[i]);
		if (!out[i]) {
			for (int k = 0; k < i; k++) {
				ev_unref(out[k]);
				out[k] = NULL;
			}
			goto done;
		}
		start += sizes[i];
	}
	ok = true;
done:
	free(sizes);
	return ok;
}

/* ---- Slice ------------------------------------------------------------------ */

static bool k_slice(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "data"))
		return false;
	int r = x->rank;
	int64_t st[EV_MAX_RANK], en[EV_MAX_RANK], ax[EV_MAX_RANK], sp[EV_MAX_RANK];
	int ns, ne, na = -1, nst = -1;
	if (c->opset < 10) {
		const int64_t *a = ev_attr_ints(c, "starts", &ns), *b = ev_attr_ints(c, "ends", &ne);
		int nax;
		const int64_t *axa = ev_attr_ints(c, "axes", &nax);
		if (ns < 0 || ne < 0)
			return ev_fail(c, "Slice-1 needs starts and ends attributes");
		if (ns > EV_MAX_RANK || ne > EV_MAX_RANK || nax > EV_MAX_RANK)
			return ev_fail(c, "too many slice entries");
		/* an empty list (starts = []) has none to copy */
		if (ns)
			memcpy(st, a, sizeof *st * (size_t)ns);
		if (ne)
			memcpy(en, b, sizeof *en * (size_t)ne);
		if (nax >= 0) {
			if (nax)
				memcpy(ax, axa, sizeof *ax * (size_t)nax);
			na = nax;
		}
	} else {
		if (nin < 3 || !in[1] || !in[2])
			return ev_fail(c, "Slice needs starts and ends inputs");
		if (!sh_read_ints(c, in[1], "starts", st, EV_MAX_RANK, &ns) ||
		    !sh_read_ints(c, in[2], "ends", en, EV_MAX_RANK, &ne))
			return false;
		if (nin > 3 && in[3] && !sh_read_ints(c, in[3], "axes", ax, EV_MAX_RANK, &na))
			return false;
		if (nin > 4 && in[4] && !sh_read_ints(c, in[4], "steps", sp, EV_MAX_RANK, &nst))
			return false;
	}
	if (ns != ne)
		return ev_fail(c, "starts has %d entries, ends %d", ns, ne);
	if (na < 0) {
		if (ns > r)
			return ev_fail(c, "%d slice entries for rank %d", ns, r);
		for (int i = 0; i < ns; i++)
			ax[i] = i;
	} else if (na != ns) {
		return ev_fail(c, "axes has %d entries, starts %d", na, ns);
	}
	if (nst >= 0 && nst != ns)
		return ev_fail(c, "steps has %d entries, starts %d", nst, ns);
	/* per dimension: first index, count, step */
	int64_t first[EV_MAX_RANK], count[EV_MAX_RANK], step[EV_MAX_RANK];
	bool seen[EV_MAX_RANK] = {false};
	for (int i = 0; i < r; i++) {
		first[i] = 0;
		count[i] = x->dims[i];
		step[i] = 1;
	}
	for (int i = 0; i < ns; i++) {
		int a;
		if (!sh_axis(c, ax[i], r, 0, &a))
			return false;
		if (seen[a])
			return ev_fail(c, "axis %d is sliced twice", a);
		seen[a] = true;
		int64_t k = nst >= 0 ? sp[i] : 1;
		if (k == 0)
			return ev_fail(c, "slice step is 0");
		int64_t n = ir_slice_range(x->dims[a], st[i], en[i], k, &first[a]);
		count[a] = n;
		step[a] = n > 1 ? k : 1; /* a huge step that takes one element must not overflow strides */
	}
	int64_t xs[EV_MAX_RANK], ss[EV_MAX_RANK], off = 0;
	ev_strides(r, x->dims, xs);
	for (int i = 0; i < r; i++) {
		off += first[i] * xs[i];
		ss[i] = xs[i] * step[i];
	}
	EvValue *o = sh_new(c, x->dtype, r, count);
	if (!o)
		return false;
	sh_strided_copy(o, x, ss, off);
	out[0] = o;
	return true;
}

/* ---- Squeeze, Unsqueeze, Flatten --------------------------------------------- */

/* Axes from the attribute (before opset 13) or the second input. */
static bool axes_arg(EvCtx *c, EvValue **in, int nin, int64_t *axes, int *n)
{
	if (c->opset < 13) {
		const int64_t *a = ev_attr_ints(c, "axes", n);
		if (*n > EV_MAX_RANK * 2)
			return ev_fail(c, "too many axes");
		if (*n > 0)
			memcpy(axes, a, sizeof *a * (size_t)*n);
		return true;
	}
	*n = -1;
	if (nin > 1 && in[1])
		return sh_read_ints(c, in[1], "axes", axes, EV_MAX_RANK * 2, n);
	return true;
}

static bool k_squeeze(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "data"))
		return false;
	int64_t axes[EV_MAX_RANK * 2];
	int n;
	if (!axes_arg(c, in, nin, axes, &n))
		return false;
	bool drop[EV_MAX_RANK] = {false};
	if (n <= 0) {
		/* axes absent or empty: every 1-dim goes, as ONNX Runtime does
		 * (and inference, and squeeze_nothing); onnx's shape inference
		 * keeps them on empty axes, but ORT's kernel does not */
		for (int i = 0; i < x->rank; i++)
			drop[i] = x->dims[i] == 1;
	} else {
		for (int i = 0; i < n; i++) {
			int a;
			if (!sh_axis(c, axes[i], x->rank, 0, &a))
				return false;
			if (x->dims[a] != 1)
				return ev_fail(c, "cannot squeeze axis %d of size %lld", a, (long long)x->dims[a]);
			drop[a] = true;
		}
	}
	int64_t dims[EV_MAX_RANK];
	int r = 0;
	for (int i = 0; i < x->rank; i++)
		if (!drop[i])
			dims[r++] = x->dims[i];
	return emit_reshaped(c, x, r, dims, &out[0]);
}

static bool k_unsqueeze(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "data"))
		return false;
	int64_t axes[EV_MAX_RANK * 2];
	int n;
	if (!axes_arg(c, in, nin, axes, &n))
		return false;
	if (n < 0)
		return ev_fail(c, "Unsqueeze needs axes");
	int r = x->rank + n;
	if (r > EV_MAX_RANK)
		return ev_fail(c, "output rank %d exceeds the limit %d", r, EV_MAX_RANK);
	bool ins[EV_MAX_RANK] = {false};
	for (int i = 0; i < n; i++) {
		int a;
		if (!sh_axis(c, axes[i], r, 0, &a))
			return false;
		if (ins[a])
			return ev_fail(c, "axis %d repeats", a);
		ins[a] = true;
	}
	int64_t dims[EV_MAX_RANK];
	for (int i = 0, k = 0; i < r; i++)
		dims[i] = ins[i] ? 1 : x->dims[k++];
	return emit_reshaped(c, x, r, dims, &out[0]);
}

static bool k_flatten(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "input"))
		return false;
	/* axis is in [-r, r], a negative one counting from r (not r + 1) */
	int64_t a = ev_attr_int(c, "axis", 1);
	if (a < 0)
		a += x->rank;
	if (a < 0 || a > x->rank)
		return ev_fail(c, "axis %lld is out of range for rank %d", (long long)ev_attr_int(c, "axis", 1), x->rank);
	int64_t dims[2] = {sh_prod(x->dims, 0, (int)a), sh_prod(x->dims, (int)a, x->rank)};
	return emit_reshaped(c, x, 2, dims, &out[0]);
}

/* ---- Expand, Tile ------------------------------------------------------------- */

static bool k_expand(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "input"))
		return false;
	if (nin < 2 || !in[1])
		return ev_fail(c, "Expand needs a shape input");
	int64_t shape[EV_MAX_RANK], dims[EV_MAX_RANK], ss[EV_MAX_RANK];
	int n, r;
	if (!sh_read_ints(c, in[1], "shape", shape, EV_MAX_RANK, &n))
		return false;
	if (!ev_broadcast_shape(x->rank, x->dims, n, shape, &r, dims))
		return ev_fail(c, "input shape does not broadcast to the given shape");
	ev_broadcast_strides(x->rank, x->dims, r, dims, ss);
	EvValue *o = sh_new(c, x->dtype, r, dims);
	if (!o)
		return false;
	sh_strided_copy(o, x, ss, 0);
	out[0] = o;
	return true;
}

static bool k_tile(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "input"))
		return false;
	if (nin < 2 || !in[1])
		return ev_fail(c, "Tile needs a repeats input");
	int64_t rep[EV_MAX_RANK], dims[EV_MAX_RANK], xs[EV_MAX_RANK];
	int n, r = x->rank;
	if (!sh_read_ints(c, in[1], "repeats", rep, EV_MAX_RANK, &n))
		return false;
	if (n != r)
		return ev_fail(c, "repeats has %d entries for rank %d", n, r);
	for (int i = 0; i < r; i++) {
		if (rep[i] < 0)
			return ev_fail(c, "repeats[%d] is negative", i);
		if (__builtin_mul_overflow(x->dims[i], rep[i], &dims[i]))
			return ev_fail(c, "output dimension overflows");
	}
	EvValue *o = sh_new(c, x->dtype, r, dims);
	if (!o)
		return false;
	out[0] = o;
	if (o->numel == 0)
		return true;
	if (r == 0) {
		sh_copy(o, 0, x, 0, 1);
		return true;
	}
	/* for each output row (all dims but the last) find the source row and
	 * lay it down rep[last] times */
	ev_strides(r, x->dims, xs);
	int64_t idx[EV_MAX_RANK] = {0}, row = x->dims[r - 1], di = 0;
	for (;;) {
		int64_t so = 0;
		for (int k = 0; k < r - 1; k++)
			so += (idx[k] % x->dims[k]) * xs[k];
		for (int64_t t = 0; t < rep[r - 1]; t++, di += row)
			sh_copy(o, di, x, so, row);
		int d = r - 2;
		for (; d >= 0; d--) {
			if (++idx[d] < dims[d])
				break;
			idx[d] = 0;
		}
		if (d < 0)
			break;
	}
	return true;
}

/* ---- Pad and CenterCropPad ----------------------------------------------------- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

/* Pad x by pb[i] before and pe[i] after each dimension (negative values
 * crop).  Cropping comes first; the padding modes then see the cropped
 * tensor.  cv is a one-element tensor of x's dtype (PAD_CONSTANT). */
static bool pad_core(EvCtx *c, const EvValue *x, const int64_t *pb, const int64_t *pe, int mode,
                     const EvValue *cv, EvValue **res)
{
	int r = x->rank;
	int64_t dims[EV_MAX_RANK], lo[EV_MAX_RANK], len[EV_MAX_RANK], before[EV_MAX_RANK];
	for (int i = 0; i < r; i++) {
		if (pb[i] < -x->dims[i] || pe[i] < -x->dims[i])
			return ev_fail(c, "pads crop more than dimension %d holds", i);
		int64_t cb = pb[i] < 0 ? -pb[i] : 0, ce = pe[i] < 0 ? -pe[i] : 0;
		lo[i] = cb;
		len[i] = x->dims[i] - cb - ce;
		if (len[i] < 0)
			return ev_fail(c, "pads crop more than dimension %d holds", i);
		before[i] = pb[i] > 0 ? pb[i] : 0;
		if (__builtin_add_overflow(len[i], before[i], &dims[i]) ||
		    __builtin_add_overflow(dims[i], pe[i] > 0 ? pe[i] : 0, &dims[i]))
			return ev_fail(c, "padded dimension %d is too large", i);
		if (mode != PAD_CONSTANT && len[i] == 0 && dims[i] > 0)
			return ev_fail(c, "cannot pad an empty dimension except in constant mode");
	}
	EvValue *o = sh_new(c, x->dtype, r, dims);
	if (!o)
		return false;
	*res = o;
	if (o->numel == 0)
		return true;
	if (r == 0) {
		sh_copy(o, 0, x, 0, 1);
		return true;
	}
	/* map[i][k]: source index along dim i of output index k, or -1 for the constant */
	int64_t total = 0, *map[EV_MAX_RANK];
	for (int i = 0; i < r; i++)
		total += dims[i];
	int64_t *buf = malloc(sizeof *buf * (size_t)total);
	if (!buf) {
		ev_unref(o);
		*res = NULL;
		return ev_fail(c, "out of memory");
	}
	for (int i = 0, at = 0; i < r; at += (int)dims[i], i++) {
		map[i] = buf + at;
		for (int64_t k = 0; k < dims[i]; k++) {
			int64_t j = k - before[i], L = len[i];
			if (j < 0 || j >= L) {
				switch (mode) {
				case PAD_CONSTANT: j = -1; break;
				case PAD_EDGE: j = j < 0 ? 0 : L - 1; break;
				case PAD_WRAP: j = ((j % L) + L) % L; break;
				case PAD_REFLECT:
					if (L == 1) {
						j = 0;
					} else {
						int64_t per = 2 * (L - 1);
						j = ((j % per) + per) % per;
						if (j >= L)
							j = per - j;
					}
					break;
				}
			}
			map[i][k] = j < 0 ? -1 : lo[i] + j;
		}
	}
	int64_t xs[EV_MAX_RANK];
	ev_strides(r, x->dims, xs);
	size_t es = sh_esize(x->dtype);
	int64_t idx[EV_MAX_RANK] = {0}, row = dims[r - 1], di = 0;
	int64_t mid0 = before[r - 1], midn = len[r - 1];
	for (;;) {
		int64_t so = 0;
		bool fill = false;
		for (int k = 0; k < r - 1; k++) {
			int64_t m = map[k][idx[k]];
			if (m < 0)
				fill = true;
			so += m * xs[k];
		}
		if (fill) {
			for (int64_t k = 0; k < row; k++)
				sh_copy1(o, di + k, cv, 0, es);
		} else {
			for (int64_t k = 0; k < row; k++) {
				if (k == mid0 && midn > 0) {
					sh_copy(o, di + k, x, so + lo[r - 1], midn);
					k += midn - 1;
					continue;
				}
				int64_t m = map[r - 1][k];
				if (m < 0)
					sh_copy1(o, di + k, cv, 0, es);
				else
					sh_copy1(o, di + k, x, so + m, es);
			}
		}
		di += row;
		int d = r - 2;
		for (; d >= 0; d--) {
			if (++idx[d] < dims[d])
				break;
			idx[d] = 0;
		}
		if (d < 0)
			break;
	}
	free(buf);
	return true;
}

/* A one-element tensor of dtype holding zero ("" for strings). */
static EvValue *zero_of(EvCtx *c, int dtype)
{
	EvValue *v = sh_new(c, dtype, 0, NULL);
	if (v)
		sh_fill_empty_strings(v);
	return v;
}

static bool k_pad(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "data"))
		return false;
	int r = x->rank;
	char mbuf[32];
	const char *ms = ev_attr_string(c, "mode", "constant", mbuf, sizeof mbuf);
	int mode;
	if (!strcmp(ms, "constant"))
		mode = PAD_CONSTANT;
	else if (!strcmp(ms, "reflect"))
		mode = PAD_REFLECT;
	else if (!strcmp(ms, "edge"))
		mode = PAD_EDGE;
	else if (!strcmp(ms, "wrap") && c->opset >= 19)
		mode = PAD_WRAP;
	else
		return ev_fail(c, "unsupported pad mode '%s'", ms);

	int64_t raw[2 * EV_MAX_RANK], axes[EV_MAX_RANK];
	int n, na = -1;
	EvValue *cv = NULL;
	if (c->opset < 11) {
		const int64_t *p = ev_attr_ints(c, c->opset < 2 ? "paddings" : "pads", &n);
		if (n < 0)
			return ev_fail(c, "Pad needs a pads attribute");
		if (n > 2 * EV_MAX_RANK)
			return ev_fail(c, "too many pads");
		if (n)   /* pads = [] has no list to copy */
			memcpy(raw, p, sizeof *p * (size_t)n);
		cv = zero_of(c, x->dtype);
		if (!cv)
			return false;
		if (x->dtype != DT_STRING)
			ev_set_f(cv, 0, ev_attr_float(c, "value", 0.0f));
	} else {
		if (nin < 2 || !in[1])
			return ev_fail(c, "Pad needs a pads input");
		if (!sh_read_ints(c, in[1], "pads", raw, 2 * EV_MAX_RANK, &n))
			return false;
		if (nin > 3 && in[3] && !sh_read_ints(c, in[3], "axes", axes, EV_MAX_RANK, &na))
			return false;
		if (nin > 2 && in[2] && in[2]->kind == EV_TENSOR && in[2]->numel > 0) {
			if (in[2]->dtype != x->dtype)
				return ev_fail(c, "constant_value is %s, data is %s", dtype_name(in[2]->dtype),
				               dtype_name(x->dtype));
			cv = ev_ref(in[2]);
		} else {
			cv = zero_of(c, x->dtype);
			if (!cv)
				return false;
		}
	}
	int64_t pb[EV_MAX_RANK] = {0}, pe[EV_MAX_RANK] = {0};
	bool ok = true;
	if (na >= 0) {
		if (n != 2 * na) {
			ok = ev_fail(c, "pads has %d entries for %d axes", n, na);
		} else {
			for (int i = 0; i < na && ok; i++) {
				int a;
				if (!sh_axis(c, axes[i], r, 0, &a))
					ok = false;
				else {
					pb[a] = raw[i];
					pe[a] = raw[na + i];
				}
			}
		}
	} else if (n != 2 * r) {
		ok = ev_fail(c, "pads has %d entries for rank %d", n, r);
	} else {
		for (int i = 0; i < r; i++) {
			pb[i] = raw[i];
			pe[i] = raw[r + i];
		}
	}
	if (ok)
		ok = pad_core(c, x, pb, pe, mode, cv, &out[0]);
	ev_unref(cv);
	return ok;
}

static bool k_centercroppad(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "input_data"))
		return false;
	if (nin < 2 || !in[1])
		return ev_fail(c, "CenterCropPad needs a shape input");
	int64_t shape[EV_MAX_RANK], axes[EV_MAX_RANK];
	int n, na;
	if (!sh_read_ints(c, in[1], "shape", shape, EV_MAX_RANK, &n))
		return false;
	const int64_t *aa = ev_attr_ints(c, "axes", &na);
	if (na < 0) {
		na = x->rank;
		for (int i = 0; i < na; i++)
			axes[i] = i;
	} else {
		if (na > EV_MAX_RANK)
			return ev_fail(c, "too many axes");
		if (na > 0)
			memcpy(axes, aa, sizeof *aa * (size_t)na);
	}
	if (n != na)
		return ev_fail(c, "shape has %d entries for %d axes", n, na);
	int64_t pb[EV_MAX_RANK] = {0}, pe[EV_MAX_RANK] = {0};
	for (int i = 0; i < na; i++) {
		int a;
		if (!sh_axis(c, axes[i], x->rank, 0, &a))
			return false;
		int64_t d = x->dims[a], t = shape[i];
		if (t < 0)
			return ev_fail(c, "shape[%d] is negative", i);
		if (d > t) { /* crop: the extra element (odd difference) goes at the end */
			int64_t s = (d - t) / 2;
			pb[a] = -s;
			pe[a] = -(d - t - s);
		} else if (d < t) {
			int64_t s = (t - d) / 2;
			pb[a] = s;
			pe[a] = t - d - s;
		}
	}
	EvValue *cv = zero_of(c, x->dtype);
	if (!cv)
		return false;
	bool ok = pad_core(c, x, pb, pe, PAD_CONSTANT, cv, &out[0]);
	ev_unref(cv);
	return ok;
}

/* ---- Shape, Size, Identity ------------------------------------------------------ */

static bool k_shape(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR)
		return ev_fail(c, "Shape needs a tensor");
	int64_t r = x->rank, s = 0, e = r;
	if (c->opset >= 15) {
		s = ev_attr_int(c, "start", 0);
		e = ev_attr_int(c, "end", r);
		if (s < 0)
			s += r;
		if (e < 0)
			e += r;
		s = s < 0 ? 0 : s > r ? r : s;
		e = e < 0 ? 0 : e > r ? r : e;
	}
	int64_t n = e > s ? e - s : 0;
	EvValue *o = sh_new(c, DT_INT64, 1, &n);
	if (!o)
		return false;
	for (int64_t i = 0; i < n; i++)
		((int64_t *)o->data)[i] = x->dims[s + i];
	out[0] = o;
	return true;
}

static bool k_size(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!in[0] || in[0]->kind != EV_TENSOR)
		return ev_fail(c, "Size needs a tensor");
	EvValue *o = sh_new(c, DT_INT64, 0, NULL);
	if (!o)
		return false;
	((int64_t *)o->data)[0] = in[0]->numel;
	out[0] = o;
	return true;
}

/* Identity passes any value through (tensors, sequences and optionals from
 * opset 16); values are immutable, so a reference is enough. */
static bool k_identity(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 1 || !in[0])
		return ev_fail(c, "Identity needs an input");
	out[0] = ev_ref(in[0]);
	return true;
}

/* ---- ConstantOfShape, Constant ---------------------------------------------------- */

static bool k_constantofshape(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	int64_t dims[EV_MAX_RANK];
	int n;
	if (!sh_read_ints(c, in[0], "shape", dims, EV_MAX_RANK, &n))
		return false;
	const IrAttr *a = ev_attr(c, "value");
	EvValue *val;
	if (a && a->type == ATTR_TENSOR) {
		val = ev_value_from_ir_tensor(c->m, a->t);
		if (!val)
			return ev_fail(c, "cannot read the value attribute");
		if (val->numel != 1 || sh_esize(val->dtype) == 0) {
			ev_unref(val);
			return ev_fail(c, "value must hold one element of a byte-sized type");
		}
	} else {
		val = ev_scalar_f(DT_FLOAT, 0.0);
	}
	EvValue *o = sh_new(c, val->dtype, n, dims);
	if (!o) {
		ev_unref(val);
		return false;
	}
	size_t es = sh_esize(val->dtype);
	/* ONNX Runtime fills a zero value with memset, so a -0 comes out +0
	 * (docs/evaluator.md; make difftest seed 331719): a value whose bits
	 * other than a float's sign are all 0 gives all-zero bytes. */
	bool zero = true;
	const unsigned char *vb = (const unsigned char *)val->data;
	for (size_t k = 0; k < es; k++) {
		unsigned char sign = k == es - 1 && ev_is_float(val->dtype) ? 0x80 : 0;
		zero &= (vb[k] & (unsigned char)~sign) == 0;
	}
	if (zero)
		memset(o->data, 0, o->nbytes);
	for (int64_t i = 0; i < o->numel && !zero; i++)
		sh_copy1(o, i, val, 0, es);
	ev_unref(val);
	out[0] = o;
	return true;
}

static bool k_constant(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const IrNode *nd = ir_node(c->m, c->node);
	for (uint32_t i = 0; i < nd->nattrs; i++) {
		const IrAttr *a = &nd->attrs[i];
		const char *nm = a->name;
		EvValue *o = NULL;
		int64_t n = (int64_t)a->n;
		if (!strcmp(nm, "value") && a->type == ATTR_TENSOR) {
			o = ev_value_from_ir_tensor(c->m, a->t);
			if (!o)
				return ev_fail(c, "cannot read the value attribute");
		} else if (!strcmp(nm, "value_float") && a->type == ATTR_FLOAT) {
			if (!(o = sh_new(c, DT_FLOAT, 0, NULL)))
				return false;
			((float *)o->data)[0] = a->f;
		} else if (!strcmp(nm, "value_floats") && a->type == ATTR_FLOATS) {
			if (!(o = sh_new(c, DT_FLOAT, 1, &n)))
				return false;
			if (n)
				memcpy(o->data, a->floats, sizeof(float) * a->n);
		} else if (!strcmp(nm, "value_int") && a->type == ATTR_INT) {
			if (!(o = sh_new(c, DT_INT64, 0, NULL)))
				return false;
			((int64_t *)o->data)[0] = a->i;
		} else if (!strcmp(nm, "value_ints") && a->type == ATTR_INTS) {
			if (!(o = sh_new(c, DT_INT64, 1, &n)))
				return false;
			if (n)
				memcpy(o->data, a->ints, sizeof(int64_t) * a->n);
		} else if (!strcmp(nm, "value_string") && a->type == ATTR_STRING) {
			if (!(o = sh_new(c, DT_STRING, 0, NULL)))
				return false;
			((char **)o->data)[0] = strndup((const char *)a->s.data, a->s.len);
		} else if (!strcmp(nm, "value_strings") && a->type == ATTR_STRINGS) {
			if (!(o = sh_new(c, DT_STRING, 1, &n)))
				return false;
			for (size_t k = 0; k < a->n; k++)
				((char **)o->data)[k] = strndup((const char *)a->strings[k].data, a->strings[k].len);
		} else if (!strcmp(nm, "sparse_value")) {
			return ev_fail(c, "sparse_value constants are not supported");
		} else {
			continue;
		}
		out[0] = o;
		return true;
	}
	return ev_fail(c, "Constant has no value attribute");
}

/* ---- Range ----------------------------------------------------------------------- */

static bool k_range(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 3 || !in[0] || !in[1] || !in[2])
		return ev_fail(c, "Range needs start, limit and delta");
	for (int i = 0; i < 3; i++)
		if (in[i]->kind != EV_TENSOR || in[i]->numel != 1 || in[i]->dtype != in[0]->dtype)
			return ev_fail(c, "start, limit and delta must be one-element tensors of one type");
	int dt = in[0]->dtype;
	int64_t n;
	EvValue *o;
	if (ev_is_float(dt)) {
		double s = ev_get_f(in[0], 0), l = ev_get_f(in[1], 0), d = ev_get_f(in[2], 0);
		if (d == 0 || isnan(s) || isnan(l) || isnan(d))
			return ev_fail(c, "Range delta is zero or an input is NaN");
		double q = ceil((l - s) / d);
		if (q > (double)(INT64_C(1) << 40))
			return ev_fail(c, "Range would have %g elements", q);
		n = q > 0 ? (int64_t)q : 0;
		if (!(o = sh_new(c, dt, 1, &n)))
			return false;
		/* element i is start + i * delta, rounded once to the type (as the
		 * spec's loop writes it); float32 products are exact in double */
		if (dt == DT_FLOAT) {
			float fs = (float)s, fd = (float)d;
			for (int64_t i = 0; i < n; i++)
				((float *)o->data)[i] = (float)((double)fs + (double)i * (double)fd);
		} else {
			for (int64_t i = 0; i < n; i++)
				ev_set_f(o, i, s + (double)i * d);
		}
	} else if (ev_is_signed_int(dt) || ev_is_unsigned_int(dt)) {
		if (dt == DT_BOOL)
			return ev_fail(c, "Range does not take bool");
		int64_t s = ev_get_i(in[0], 0), l = ev_get_i(in[1], 0), d = ev_get_i(in[2], 0);
		if (d == 0)
			return ev_fail(c, "Range delta is zero");
		/* ceil((l - s) / d) without overflow, in 128 bits */
		__int128 span = (__int128)l - s, q;
		if (d > 0)
			q = span > 0 ? (span + d - 1) / d : 0;
		else
			q = span < 0 ? (-span + (-(__int128)d) - 1) / (-(__int128)d) : 0;
		if (q > ((__int128)1 << 40))
			return ev_fail(c, "Range would have too many elements");
		n = (int64_t)q;
		if (!(o = sh_new(c, dt, 1, &n)))
			return false;
		for (int64_t i = 0; i < n; i++)
			ev_set_i(o, i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
	} else {
		return ev_fail(c, "Range does not take %s", dtype_name(dt));
	}
	out[0] = o;
	return true;
}

/* ---- DepthToSpace, SpaceToDepth ------------------------------------------------------ */

static bool k_depthtospace(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "input"))
		return false;
	if (x->rank != 4)
		return ev_fail(c, "DepthToSpace needs a 4-D input");
	int64_t b = ev_attr_int(c, "blocksize", 0);
	char mbuf[16];
	const char *mode = ev_attr_string(c, "mode", "DCR", mbuf, sizeof mbuf);
	bool crd = c->opset >= 11 && !strcmp(mode, "CRD");
	if (!crd && strcmp(mode, "DCR") != 0)
		return ev_fail(c, "unknown mode '%s'", mode);
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], bb;
	if (b <= 0 || __builtin_mul_overflow(b, b, &bb))
		return ev_fail(c, "blocksize %lld is not a positive size", (long long)b);
	if (C % bb != 0)
		return ev_fail(c, "channels %lld do not divide by blocksize^2", (long long)C);
	int64_t Cp = C / bb, HW = H * W;
	/* output viewed as (N, C', H, b, W, b) reading the input's 6-D view */
	int64_t dims6[6] = {N, Cp, H, b, W, b}, ss[6];
	if (crd) { /* input (N, C', b1, b2, H, W) */
		int64_t sb1 = b * HW, sb2 = HW;
		int64_t t[6] = {C * HW, b * b * HW, W, sb1, 1, sb2};
		memcpy(ss, t, sizeof t);
	} else { /* DCR: input (N, b1, b2, C', H, W) */
		int64_t sb1 = b * Cp * HW, sb2 = Cp * HW;
		int64_t t[6] = {C * HW, HW, W, sb1, 1, sb2};
		memcpy(ss, t, sizeof t);
	}
	EvValue *o = sh_new(c, x->dtype, 6, dims6);
	if (!o)
		return false;
	sh_strided_copy(o, x, ss, 0);
	o->rank = 4;
	o->dims[0] = N;
	o->dims[1] = Cp;
	o->dims[2] = H * b;
	o->dims[3] = W * b;
	out[0] = o;
	return true;
}

static bool k_spacetodepth(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "input"))
		return false;
	if (x->rank != 4)
		return ev_fail(c, "SpaceToDepth needs a 4-D input");
	int64_t b = ev_attr_int(c, "blocksize", 0);
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	if (b <= 0)
		return ev_fail(c, "blocksize %lld is not a positive size", (long long)b);
	if (H % b != 0 || W % b != 0)
		return ev_fail(c, "spatial dims do not divide by blocksize");
	/* input viewed as (N, C, H/b, b1, W/b, b2); output (N, b1, b2, C, H/b, W/b) */
	int64_t dims6[6] = {N, b, b, C, H / b, W / b};
	int64_t ss[6] = {C * H * W, W, 1, H * W, b * W, b};
	EvValue *o = sh_new(c, x->dtype, 6, dims6);
	if (!o)
		return false;
	sh_strided_copy(o, x, ss, 0);
	o->rank = 4;
	o->dims[0] = N;
	o->dims[1] = C * b * b;
	o->dims[2] = H / b;
	o->dims[3] = W / b;
	out[0] = o;
	return true;
}

/* ---- Trilu, EyeLike, OneHot ----------------------------------------------------------- */

static bool k_trilu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!sh_check_movable(c, x, "input"))
		return false;
	if (x->rank < 2)
		return ev_fail(c, "Trilu needs rank >= 2");
	int64_t k = 0;
	if (nin > 1 && in[1] && in[1]->numel > 0) {
		if (!sh_is_int_index(in[1]))
			return ev_fail(c, "k must be int64");
		k = sh_idx(in[1], 0);
	}
	bool upper = ev_attr_int(c, "upper", 1) != 0;
	EvValue *o = sh_new(c, x->dtype, x->rank, x->dims);
	if (!o)
		return false;
	int64_t R = x->dims[x->rank - 2], C = x->dims[x->rank - 1];
	int64_t mats = R > 0 && C > 0 ? x->numel / (R * C) : 0;
	size_t es = sh_esize(x->dtype);
	for (int64_t m = 0; m < mats; m++)
		for (int64_t i = 0; i < R; i++)
			for (int64_t j = 0; j < C; j++) {
				int64_t p = (m * R + i) * C + j;
				/* j - i vs k, in 128 bits since k may be anything */
				__int128 diag = (__int128)j - i;
				if (upper ? diag >= k : diag <= k)
					sh_copy1(o, p, x, p, es);
			}
	sh_fill_empty_strings(o);
	out[0] = o;
	return true;
}

static bool k_eyelike(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR || x->rank != 2)
		return ev_fail(c, "EyeLike needs a 2-D tensor");
	int dt = (int)ev_attr_int(c, "dtype", x->dtype);
	if (dt == DT_STRING || sh_esize(dt) == 0)
		return ev_fail(c, "EyeLike cannot make %s", dtype_name(dt));
	int64_t k = ev_attr_int(c, "k", 0);
	EvValue *o = sh_new(c, dt, 2, x->dims);
	if (!o)
		return false;
	for (int64_t i = 0; i < x->dims[0]; i++) {
		__int128 j = (__int128)i + k;
		if (j >= 0 && j < x->dims[1])
			ev_set_f(o, i * x->dims[1] + (int64_t)j, 1.0);
	}
	out[0] = o;
	return true;
}

static bool k_onehot(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 3 || !in[0] || !in[1] || !in[2])
		return ev_fail(c, "OneHot needs indices, depth and values");
	EvValue *ind = in[0], *dep = in[1], *val = in[2];
	if (dep->kind != EV_TENSOR || dep->numel != 1 || dep->dtype == DT_STRING)
		return ev_fail(c, "depth must be a one-element numeric tensor");
	if (!sh_check_movable(c, val, "values") || val->numel != 2)
		return ev_fail(c, "values must hold [off, on]");
	if (ind->kind != EV_TENSOR || ind->dtype == DT_STRING || sh_esize(ind->dtype) == 0)
		return ev_fail(c, "indices must be numeric");
	int64_t depth = ev_get_i(dep, 0);
	if (depth <= 0)
		return ev_fail(c, "depth must be positive");
	int r = ind->rank + 1, a;
	if (!sh_axis(c, ev_attr_int(c, "axis", -1), ind->rank, 1, &a))
		return false;
	if (r > EV_MAX_RANK)
		return ev_fail(c, "output rank too large");
	int64_t dims[EV_MAX_RANK];
	for (int i = 0, k = 0; i < r; i++)
		dims[i] = i == a ? depth : ind->dims[k++];
	EvValue *o = sh_new(c, val->dtype, r, dims);
	if (!o)
		return false;
	size_t es = sh_esize(val->dtype);
	for (int64_t i = 0; i < o->numel; i++)
		sh_copy1(o, i, val, 0, es);
	int64_t outer = sh_prod(ind->dims, 0, a), inner = sh_prod(ind->dims, a, ind->rank);
	for (int64_t p = 0; p < outer; p++)
		for (int64_t q = 0; q < inner; q++) {
			int64_t v = ev_get_i(ind, p * inner + q);
			if (v < 0)
				v += depth;
			if (v >= 0 && v < depth)
				sh_copy1(o, (p * depth + v) * inner + q, val, 1, es);
		}
	out[0] = o;
	return true;
}

const EvKernel ev_kernels_shape[] = {
	EV_KERNEL(Reshape, k_reshape, T_MOVE),
	EV_KERNEL(Transpose, k_transpose, T_MOVE),
	EV_KERNEL(Concat, k_concat, T_MOVE),
	EV_KERNEL(Split, k_split, T_MOVE),
	EV_KERNEL(Slice, k_slice, T_MOVE),
	EV_KERNEL(Squeeze, k_squeeze, T_MOVE),
	EV_KERNEL(Unsqueeze, k_unsqueeze, T_MOVE),
	EV_KERNEL(Expand, k_expand, T_MOVE),
	EV_KERNEL(Tile, k_tile, T_MOVE),
	EV_KERNEL(Pad, k_pad, T_MOVE),
	EV_KERNEL(Flatten, k_flatten, T_MOVE),
	EV_KERNEL(Shape, k_shape, T_MOVE),
	EV_KERNEL(Size, k_size, T_MOVE),
	EV_KERNEL(Identity, k_identity, T_MOVE),
	EV_KERNEL(ConstantOfShape, k_constantofshape, SH_T_NUM | SH_BIT(DT_BOOL)),
	EV_KERNEL(Constant, k_constant, T_MOVE),
	EV_KERNEL(Range, k_range, SH_T_NUM),
	EV_KERNEL(DepthToSpace, k_depthtospace, T_MOVE),
	EV_KERNEL(SpaceToDepth, k_spacetodepth, T_MOVE),
	EV_KERNEL(Trilu, k_trilu, T_MOVE),
	EV_KERNEL(EyeLike, k_eyelike, SH_T_NUM | SH_BIT(DT_BOOL)),
	EV_KERNEL(OneHot, k_onehot, T_MOVE),
	EV_KERNEL(CenterCropPad, k_centercroppad, T_MOVE),
	{0},
};
