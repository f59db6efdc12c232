/* fold_move.c - folds that only move a constant's bytes (Transpose, Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity, Slice, Gather with constant
 * indices, Cast, Concat, and chains of them), deferred: the result is a
 * recipe (ir.h, IrDeferred) that computes any piece of its bytes from the
 * source's, so the saver writes it straight into the output a buffer at a
 * time and the folded weight never exists whole in memory.
 *
 * Most are views: element i of the result is source element
 * offset + sum(idx_k * stride_k) (or a table's entry for a gathered axis),
 * converted once by Cast's own row function.  A movement of a view is a view
 * of the same source (a Transpose of a Reshape of a weight reads the weight),
 * and a view that is the whole source in order is no recipe at all: the
 * result shares the source's bytes (a Reshape of a weight copies nothing).
 * Concat reads its parts, whatever they are, piece by piece.
 *
 * The result's dims are checked against the ones inference gave the
 * node's output; anything unusual (sub-byte or string types, a Cast of a
 * Cast, a Reshape a view cannot express, indices out of range) is left to
 * the kernel, which computes the result whole as before.  Any reader that
 * wants the bytes whole gets them computed once (ir_tensor_raw). */
#include "fold_move.h"
#include "ir/geometry.h"

#include <stdlib.h>
#include <string.h>

enum { MOVE_MIN_BYTES = 64 << 10 };  /* smaller results are computed at once */

#define R EV_MAX_RANK

/* ---- views ---------------------------------------------------------------- */

typedef struct Layout {
	int rank;
	int64_t dims[R];
	int64_t stride[R];      /* in source elements */
	int64_t *table[R];      /* or NULL: the offsets along a gathered axis */
} Layout;

typedef struct View {
	IrDeferred base;
	TensorId src;           /* whose bytes are read (held) */
	int sdtype, dtype;      /* source and result types (they differ after a Cast) */
	size_t ses, es;
	int64_t offset;         /* in source elements, of the result's first element */
	Layout shape;           /* the result's own dims, as a view */
	Layout walk;            /* the same, size-1 dims dropped and runs merged */
	int64_t woffset;        /* the walk's offset (a gathered size-1 dim's entry added) */
} View;

static void view_fill(IrModel *m, const IrDeferred *d, size_t off, size_t len, uint8_t *out);

/* n elements from src, element i at base + (tab ? tab[i0 + i] : (i0 + i) * st), to dst. */
static void gather_run(const uint8_t *src, size_t es, int64_t base, const int64_t *tab, int64_t st,
                       int64_t i0, int64_t n, uint8_t *dst)
{
	if (!tab && st == 1) {
		memcpy(dst, src + (size_t)(base + i0) * es, (size_t)n * es);
		return;
	}
#define GATHER(T) do { \
		for (int64_t i = 0; i < n; i++) { \
			int64_t s = base + (tab ? tab[i0 + i] : (i0 + i) * st); \
			memcpy(dst + (size_t)i * sizeof(T), src + (size_t)s * sizeof(T), sizeof(T)); \
		} \
	} while (0)
	switch (es) {
	case 1: GATHER(uint8_t); break;
	case 2: GATHER(uint16_t); break;
	case 4: GATHER(uint32_t); break;
	case 8: GATHER(uint64_t); break;
	default:
		for (int64_t i = 0; i < n; i++) {
			int64_t s = base + (tab ? tab[i0 + i] : (i0 + i) * st);
			memcpy(dst + (size_t)i * es, src + (size_t)s * es, es);
		}
	}
#undef GATHER
}

/* rows x cols elements, element (j, c) from src[base + j * rs + c * cs], to
 * dst row-major: in tiles of TILE columns, so a tile's source lines are
 * read by consecutive rows while they are in cache (a transposed weight is
 * read across its rows). */
enum { TILE = 32 };
static void tiled_copy(const uint8_t *src, size_t es, int64_t base, int64_t rs, int64_t cs,
                       int64_t rows, int64_t cols, uint8_t *dst)
{
#define TILED(T) do { \
		for (int64_t c0 = 0; c0 < cols; c0 += TILE) { \
			int64_t c1 = c0 + TILE < cols ? c0 + TILE : cols; \
			for (int64_t j = 0; j < rows; j++) \
				for (int64_t c = c0; c < c1; c++) \
					memcpy(dst + (size_t)(j * cols + c) * sizeof(T), \
					       src + (size_t)(base + j * rs + c * cs) * sizeof(T), sizeof(T)); \
		} \
	} while (0)
	switch (es) {
	case 1: TILED(uint8_t); break;
	case 2: TILED(uint16_t); break;
	case 4: TILED(uint32_t); break;
	case 8: TILED(uint64_t); break;
	default:
		for (int64_t j = 0; j < rows; j++)
			gather_run(src, es, base + j * rs, NULL, cs, 0, cols, dst + (size_t)(j * cols) * es);
	}
#undef TILED
}

static void view_fill(IrModel *m, const IrDeferred *d, size_t off, size_t len, uint8_t *out)
{
	const View *v = (const View *)d;
	const Layout *w = &v->walk;
	const uint8_t *src = m->tensors[v->src].data;
	int r = w->rank;
	int64_t idx[R], at = (int64_t)(off / v->es), left = (int64_t)(len / v->es);
	for (int k = r - 1; k >= 0; k--) {
		idx[k] = at % w->dims[k];
		at /= w->dims[k];
	}
	_Alignas(16) uint8_t tmp[8192];
	int64_t chunk = (int64_t)(sizeof tmp / v->ses);
	while (left > 0) {
		int64_t base = v->woffset;
		for (int k = 0; k < r - 1; k++)
			base += w->table[k] ? w->table[k][idx[k]] : idx[k] * w->stride[k];
		int64_t run = w->dims[r - 1] - idx[r - 1];
		if (r >= 2 && idx[r - 1] == 0 && left >= 2 * run && v->dtype == v->sdtype && w->stride[r - 1] != 1 &&
		    !w->table[r - 1] && !w->table[r - 2] && w->stride[r - 2] == 1) {
			/* whole rows of a transposed source: tiled, up to 256 rows at once */
			int64_t rows = w->dims[r - 2] - idx[r - 2];
			if (rows > left / run)
				rows = left / run;
			if (rows > 256)
				rows = 256;
			tiled_copy(src, v->es, base, 1, w->stride[r - 1], rows, run, out);
			out += (size_t)(rows * run) * v->es;
			left -= rows * run;
			idx[r - 2] += rows;
			for (int k = r - 2; k > 0 && idx[k] == w->dims[k]; k--) {
				idx[k] = 0;
				idx[k - 1]++;
			}
			continue;
		}
		if (run > left)
			run = left;
		if (v->dtype == v->sdtype) {
			gather_run(src, v->es, base, w->table[r - 1], w->stride[r - 1], idx[r - 1], run, out);
			out += (size_t)run * v->es;
		} else {
			/* gathered in the source's type, then converted as Cast does */
			for (int64_t done = 0; done < run; done += chunk) {
				int64_t n = run - done < chunk ? run - done : chunk;
				gather_run(src, v->ses, base, w->table[r - 1], w->stride[r - 1], idx[r - 1] + done, n, tmp);
				ev_cast_row(v->sdtype, v->dtype, tmp, out, n);
				out += (size_t)n * v->es;
			}
		}
		left -= run;
		idx[r - 1] += run;
		for (int k = r - 1; k > 0 && idx[k] == w->dims[k]; k--) {
			idx[k] = 0;
			idx[k - 1]++;
		}
	}
}

static void view_evict(IrModel *m, const IrDeferred *d)
{
	ir_tensor_evict(m, ((const View *)d)->src);
}

/* The same source read the same way (two Transposes of one weight). */
static bool view_same(IrModel *m, const IrDeferred *a, const IrDeferred *b)
{
	const View *x = (const View *)a, *y = (const View *)b;
	const Layout *p = &x->walk, *q = &y->walk;
	if (x->src != y->src || x->sdtype != y->sdtype || x->dtype != y->dtype || x->woffset != y->woffset ||
	    p->rank != q->rank)
		return false;
	for (int k = 0; k < p->rank; k++) {
		if (p->dims[k] != q->dims[k] || !p->table[k] != !q->table[k])
			return false;
		if (p->table[k] ? memcmp(p->table[k], q->table[k], sizeof *p->table[k] * (size_t)p->dims[k]) != 0
		                : p->stride[k] != q->stride[k])
			return false;
	}
	return true;
}

static void layout_free(Layout *l)
{
	for (int k = 0; k < l->rank; k++) {
		free(l->table[k]);
		l->table[k] = NULL;
	}
}

static void view_release(IrModel *m, IrDeferred *d)
{
	View *v = (View *)d;
	ir_tensor_unhold(m, v->src);
	layout_free(&v->shape);  /* walk shares shape's tables */
	free(v);
}

static int64_t *table_dup(const int64_t *t, int64_t n)
{
	if (!t)
		return NULL;
	int64_t *c = malloc(sizeof *c * (size_t)(n ? n : 1));
	if (!c)
		abort();
	memcpy(c, t, sizeof *c * (size_t)n);
	return c;
}

/* Element size of dt if its elements are whole bytes, else 0. */
static size_t whole_bytes(int dt)
{
	int bits = dtype_bits(dt);
	return dt != DT_STRING && bits >= 8 && bits % 8 == 0 ? (size_t)bits / 8 : 0;
}

/* v becomes a view of tensor t's bytes: of t itself, or of what t's own view
 * reads (tables copied).  False for tensors no view can read (other recipes,
 * strings, sub-byte types). */
static bool view_of(IrModel *m, TensorId t, View *v)
{
	IrTensor *x = ir_tensor(m, t);
	size_t es = whole_bytes(x->dtype);
	if (!es || x->rank > R || x->numel < 0 || (size_t)x->numel * es != x->nbytes)
		return false;
	memset(v, 0, sizeof *v);
	if (!x->data && x->deferred) {
		if (x->deferred->fill != view_fill)
			return false;
		const View *s = (const View *)x->deferred;
		*v = *s;
		for (int k = 0; k < v->shape.rank; k++)
			v->shape.table[k] = table_dup(s->shape.table[k], s->shape.dims[k]);
		memset(&v->walk, 0, sizeof v->walk);
		return true;
	}
	size_t n;
	if (!ir_tensor_raw(m, t, &n) || !(x = ir_tensor(m, t))->data)
		return false;
	v->src = t;
	v->sdtype = v->dtype = x->dtype;
	v->ses = v->es = es;
	v->shape.rank = x->rank;
	int64_t s = 1;
	for (int k = x->rank - 1; k >= 0; k--) {
		v->shape.dims[k] = x->dims[k];
		v->shape.stride[k] = s;
		s *= x->dims[k];
	}
	return true;
}

/* The view reads its whole source in order, unconverted. */
static bool view_is_identity(IrModel *m, const View *v)
{
	const Layout *w = &v->walk;
	return v->dtype == v->sdtype && v->woffset == 0 && w->rank == 1 && !w->table[0] &&
	       w->stride[0] == 1 && w->dims[0] == ir_tensor(m, v->src)->numel;
}

/* The walk: the shape without its size-1 dims, neighbours that step
 * through the source as one merged (long rows for the copy loop). */
static void view_plan(View *v)
{
	Layout *w = &v->walk, *s = &v->shape;
	memset(w, 0, sizeof *w);
	v->woffset = v->offset;
	for (int k = 0; k < s->rank; k++) {
		if (s->dims[k] == 1) {
			if (s->table[k])
				v->woffset += s->table[k][0];
			continue;
		}
		int j = w->rank - 1;
		if (j >= 0 && !w->table[j] && !s->table[k] && w->stride[j] == s->stride[k] * s->dims[k]) {
			w->dims[j] *= s->dims[k];
			w->stride[j] = s->stride[k];
		} else {
			w->dims[w->rank] = s->dims[k];
			w->stride[w->rank] = s->stride[k];
			w->table[w->rank++] = s->table[k];
		}
	}
	if (!w->rank) {
		w->rank = 1;
		w->dims[0] = 1;
	}
}

/* ---- the movements, on a view ---------------------------------------------- */

/* Up to max integers of a small constant int32/int64 tensor of rank <= 1;
 * the count, or -1. */
static int const_ints(IrModel *m, ValueId v, int64_t *out, int max, int *rank)
{
	if (!v || !ir_is_constant(m, v))
		return -1;
	TensorId t = ir_value(m, v)->tensor;
	IrTensor *x = ir_tensor(m, t);
	if ((x->dtype != DT_INT64 && x->dtype != DT_INT32) || x->rank > 1 || x->numel > max)
		return -1;
	size_t n;
	const uint8_t *b = ir_tensor_bytes(m, t, &n);
	if (!b && x->numel)
		return -1;
	for (int64_t i = 0; i < x->numel; i++)
		out[i] = x->dtype == DT_INT64 ? ((const int64_t *)b)[i] : ((const int32_t *)b)[i];
	if (rank)
		*rank = x->rank;
	return (int)x->numel;
}

static bool norm_axis(int64_t a, int rank, int *out)
{
	if (a < -rank || a >= rank)
		return false;
	*out = (int)(a < 0 ? a + rank : a);
	return true;
}

/* The dims a Reshape, Flatten, Squeeze, Unsqueeze or Identity of an input of
 * dims x (rank r) gives, as the kernels (shape.c) compute them; the rank, or
 * -1 where they would fail (or take what is not a small constant). */
static int reshaped_dims(IrModel *m, NodeId n, const int64_t *x, int r, int64_t *out)
{
	IrNode *node = ir_node(m, n);
	int64_t v[R * 2];
	int k = -1;
	switch (node->kind) {
	case OP_Identity:
		memcpy(out, x, sizeof *x * (size_t)r);
		return r;
	case OP_Reshape: {
		if (node->ninputs < 2 || (k = const_ints(m, node->inputs[1], v, R, NULL)) < 0)
			return -1;
		const IrAttr *az = ir_attr(m, n, "allowzero");
		int infer = -1;
		int64_t known = 1;
		for (int i = 0; i < k; i++) {
			if (v[i] == 0 && !(ir_opset(m, "") >= 14 && az && az->i)) {
				if (i >= r)
					return -1;
				v[i] = x[i];
			}
			if (v[i] == -1) {
				if (infer >= 0)
					return -1;
				infer = i;
				continue;
			}
			if (v[i] < 0 || __builtin_mul_overflow(known, v[i], &known))
				return -1;
			out[i] = v[i];
		}
		int64_t total = ir_numel(x, r);
		if (infer >= 0) {
			if (known == 0 || total % known)
				return -1;
			out[infer] = total / known;
		} else if (known != total) {
			return -1;
		}
		return k;
	}
	case OP_Flatten: {
		const IrAttr *aa = ir_attr(m, n, "axis");
		int64_t a = aa ? aa->i : 1;
		if (a < 0)
			a += r;
		if (a < 0 || a > r)
			return -1;
		out[0] = ir_numel(x, (int)a);
		out[1] = ir_numel(x + a, r - (int)a);
		return 2;
	}
	case OP_Squeeze: case OP_Unsqueeze: {
		if (ir_opset(m, "") < 13) {
			const IrAttr *aa = ir_attr(m, n, "axes");
			if (aa && (aa->type != ATTR_INTS || aa->n > R * 2))
				return -1;
			k = aa ? (int)aa->n : 0;
			if (k)
				memcpy(v, aa->ints, sizeof *v * (size_t)k);
			if (!aa)
				k = -1; /* none: Squeeze drops every 1 */
		} else if (node->ninputs > 1 && node->inputs[1]) {
			if ((k = const_ints(m, node->inputs[1], v, R * 2, NULL)) < 0)
				return -1;
		}
		bool mark[R] = {false};
		if (node->kind == OP_Squeeze) {
			for (int i = 0; i < r; i++)
				mark[i] = k < 0 && x[i] == 1;
			for (int i = 0; i < k; i++) {
				int a;
				if (!norm_axis(v[i], r, &a) || x[a] != 1)
					return -1;
				mark[a] = true;
			}
			int o = 0;
			for (int i = 0; i < r; i++)
				if (!mark[i])
					out[o++] = x[i];
			return o;
		}
		if (k < 0 || r + k > R)
			return -1;
		for (int i = 0; i < k; i++) {
			int a;
			if (!norm_axis(v[i], r + k, &a) || mark[a])
				return -1;
			mark[a] = true;
		}
		for (int i = 0, j = 0; i < r + k; i++)
			out[i] = mark[i] ? 1 : x[j++];
		return r + k;
	}
	default:
		return -1;
	}
}

static bool move_transpose(IrModel *m, NodeId n, View *v)
{
	Layout *s = &v->shape, o = *s;
	int r = s->rank;
	const IrAttr *p = ir_attr(m, n, "perm");
	bool used[R] = {false};
	if (p && (p->type != ATTR_INTS || (int)p->n != r))
		return false;
	for (int i = 0; i < r; i++) {
		int64_t a = p ? p->ints[i] : r - 1 - i;
		if (a < 0 || a >= r || used[a])
			return false; /* the view unchanged */
		used[a] = true;
	}
	for (int i = 0; i < r; i++) {
		int a = p ? (int)p->ints[i] : r - 1 - i;
		s->dims[i] = o.dims[a];
		s->stride[i] = o.stride[a];
		s->table[i] = o.table[a];
	}
	return true;
}

/* The view takes the dims `nd` (same element count), if its layout can
 * express them without a copy: each run of old dims merged or split must
 * step through the source evenly, and a gathered axis stays whole. */
static bool move_reshape(View *v, int nr, const int64_t *nd)
{
	Layout o = {0}, *s = &v->shape;
	/* the old dims of size 1 go (a gathered one fixes the offset) */
	for (int k = 0; k < s->rank; k++) {
		if (s->dims[k] == 1) {
			if (s->table[k]) {
				v->offset += s->table[k][0];
				free(s->table[k]);
			}
			continue;
		}
		o.dims[o.rank] = s->dims[k];
		o.stride[o.rank] = s->stride[k];
		o.table[o.rank++] = s->table[k];
	}
	Layout n = {.rank = nr};
	int i = 0, j = 0;
	bool ok = true;
	while (ok && j < nr) {
		if (nd[j] == 1) {
			n.dims[j++] = 1;
			continue;
		}
		if (i >= o.rank) {
			ok = false;
			break;
		}
		int i0 = i, j0 = j;
		int64_t po = o.dims[i], pn = nd[j];
		while (po != pn) {
			if (po < pn) {
				if (++i >= o.rank)
					break;
				po *= o.dims[i];
			} else {
				if (++j >= nr)
					break;
				pn *= nd[j];
			}
		}
		if (po != pn) {
			ok = false;
			break;
		}
		if (i == i0 && j == j0 && o.table[i0]) {
			n.dims[j0] = nd[j0];
			n.stride[j0] = o.stride[i0];
			n.table[j0] = o.table[i0];
			o.table[i0] = NULL;
		} else {
			for (int k = i0; k <= i && ok; k++)
				ok = !o.table[k] && (k == i || o.stride[k] == o.stride[k + 1] * o.dims[k + 1]);
			for (int k = j; k >= j0 && ok; k--) {
				n.dims[k] = nd[k];
				n.stride[k] = k == j ? o.stride[i] : n.stride[k + 1] * nd[k + 1];
			}
		}
		i++;
		j++;
	}
	if (i < o.rank)
		ok = false;
	layout_free(&o);
	if (!ok) {
		layout_free(&n);
		s->rank = 0;
		return false;
	}
	*s = n;
	return true;
}

/* Slice from opset 10 on (starts, ends, axes, steps as inputs), as the
 * kernel (shape.c) computes its first index, count and step per axis. */
static bool move_slice(IrModel *m, NodeId n, View *v)
{
	IrNode *node = ir_node(m, n);
	Layout *s = &v->shape;
	int r = s->rank;
	int64_t st[R], en[R], ax[R], sp[R];
	if (ir_opset(m, "") < 10 || node->ninputs < 3)
		return false;
	int ns = const_ints(m, node->inputs[1], st, R, NULL), ne = const_ints(m, node->inputs[2], en, R, NULL);
	int na = node->ninputs > 3 && node->inputs[3] ? const_ints(m, node->inputs[3], ax, R, NULL) : -2;
	int nst = node->ninputs > 4 && node->inputs[4] ? const_ints(m, node->inputs[4], sp, R, NULL) : -2;
	if (ns < 0 || ne != ns || na == -1 || nst == -1 || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
		return false;
	if (na < 0) {
		if (ns > r)
			return false;
		for (int i = 0; i < ns; i++)
			ax[i] = i;
	}
	bool seen[R] = {false};
	for (int i = 0; i < ns; i++) {
		int a;
		if (!norm_axis(ax[i], r, &a) || seen[a])
			return false;
		seen[a] = true;
		int64_t b, k = nst >= 0 ? sp[i] : 1, cnt;
		if (k == 0)
			return false;
		cnt = ir_slice_range(s->dims[a], st[i], en[i], k, &b);
		if (cnt <= 0)
			return false;
		if (s->table[a]) {
			/* a gathered axis keeps the entries taken */
			int64_t *t = malloc(sizeof *t * (size_t)cnt);
			if (!t)
				abort();
			for (int64_t j = 0; j < cnt; j++)
				t[j] = s->table[a][b + j * k];
			free(s->table[a]);
			s->table[a] = t;
		} else {
			int64_t bo, ko;
			if (__builtin_mul_overflow(b, s->stride[a], &bo) ||
			    (cnt > 1 && __builtin_mul_overflow(k, s->stride[a], &ko)))
				return false;
			v->offset += bo;
			if (cnt > 1)
				s->stride[a] = ko;
		}
		s->dims[a] = cnt;
	}
	return true;
}

/* Gather along an axis by constant indices of rank 0 or 1. */
static bool move_gather(IrModel *m, NodeId n, View *v)
{
	IrNode *node = ir_node(m, n);
	Layout *s = &v->shape;
	int r = s->rank, a, q;
	const IrAttr *aa = ir_attr(m, n, "axis");
	if (node->ninputs < 2 || !norm_axis(aa ? aa->i : 0, r, &a))
		return false;
	ValueId iv = node->inputs[1];
	if (!iv || !ir_is_constant(m, iv))
		return false;
	IrTensor *it = ir_tensor(m, ir_value(m, iv)->tensor);
	if (it->numel > (int64_t)1 << 24)
		return false;
	int64_t cnt = it->numel;
	int64_t *idx = malloc(sizeof *idx * (size_t)(cnt ? cnt : 1));
	if (!idx)
		abort();
	if (const_ints(m, iv, idx, (int)cnt, &q) != cnt) {
		free(idx);
		return false;
	}
	int64_t d = s->dims[a];
	for (int64_t i = 0; i < cnt; i++) {
		if (idx[i] < -d || idx[i] >= d) {
			free(idx);
			return false; /* the kernel's error */
		}
		int64_t t = idx[i] < 0 ? idx[i] + d : idx[i];
		idx[i] = s->table[a] ? s->table[a][t] : t * s->stride[a];
	}
	free(s->table[a]);
	if (q == 0) {
		v->offset += idx[0];
		free(idx);
		for (int k = a; k < r - 1; k++) {
			s->dims[k] = s->dims[k + 1];
			s->stride[k] = s->stride[k + 1];
			s->table[k] = s->table[k + 1];
		}
		s->table[--s->rank] = NULL;
		return true;
	}
	s->dims[a] = cnt;
	s->stride[a] = 0;
	s->table[a] = idx;
	return true;
}

static bool move_cast(IrModel *m, NodeId n, View *v)
{
	const IrAttr *to = ir_attr(m, n, "to");
	if (!to || to->type != ATTR_INT || to->i <= 0 || to->i >= DT_COUNT)
		return false;
	int dt = (int)to->i;
	if (dt == v->dtype)
		return true; /* the kernel hands its input back */
	if (v->dtype != v->sdtype || !ev_cast_numbers(v->sdtype, dt) || !whole_bytes(dt))
		return false;
	v->dtype = dt;
	v->es = whole_bytes(dt);
	return true;
}

/* ---- Concat ----------------------------------------------------------------- */

typedef struct Joined {
	IrDeferred base;
	uint32_t nparts;
	size_t row;             /* bytes of one outer row of the result */
	TensorId *part;         /* held */
	size_t *chunk;          /* bytes of one outer row of each part */
} Joined;

static void joined_fill(IrModel *m, const IrDeferred *d, size_t off, size_t len, uint8_t *out)
{
	const Joined *c = (const Joined *)d;
	size_t o = off / c->row, at = off % c->row;
	while (len) {
		size_t start = 0;
		for (uint32_t p = 0; p < c->nparts && len; p++) {
			size_t ch = c->chunk[p];
			if (at < start + ch) {
				size_t from = at - start, k = ch - from < len ? ch - from : len;
				ir_tensor_read(m, c->part[p], o * ch + from, k, out);
				out += k, at += k, len -= k;
			}
			start += ch;
		}
		o++;
		at = 0;
	}
}

static void joined_release(IrModel *m, IrDeferred *d)
{
	Joined *c = (Joined *)d;
	for (uint32_t p = 0; p < c->nparts; p++)
		ir_tensor_unhold(m, c->part[p]);
	free(c->part);
	free(c->chunk);
	free(c);
}

static void joined_evict(IrModel *m, const IrDeferred *d)
{
	const Joined *c = (const Joined *)d;
	for (uint32_t p = 0; p < c->nparts; p++)
		ir_tensor_evict(m, c->part[p]);
}

static TensorId defer_concat(IrModel *m, NodeId n, const Shape *os, int odt)
{
	IrNode *node = ir_node(m, n);
	const IrAttr *aa = ir_attr(m, n, "axis");
	if (!aa || aa->type != ATTR_INT || node->ninputs < 1 || !node->inputs[0])
		return 0;
	IrTensor *f = ir_tensor(m, ir_value(m, node->inputs[0])->tensor);
	int r = f->rank, a;
	size_t es = whole_bytes(f->dtype);
	if (!es || r < 1 || r > R || !norm_axis(aa->i, r, &a) || f->dtype != odt || os->rank != r)
		return 0;
	int64_t axis = 0, outer = 1;
	for (int k = 0; k < a; k++)
		outer *= f->dims[k];
	for (uint32_t i = 0; i < node->ninputs; i++) {
		if (!node->inputs[i])
			return 0;
		IrTensor *x = ir_tensor(m, ir_value(m, node->inputs[i])->tensor);
		if (x->dtype != f->dtype || x->rank != r || (size_t)x->numel * es != x->nbytes ||
		    (x->data == NULL && x->deferred == NULL && x->proto == NULL))
			return 0;
		for (int k = 0; k < r; k++)
			if (k != a && x->dims[k] != f->dims[k])
				return 0;
		axis += x->dims[a];
	}
	for (int k = 0; k < r; k++)
		if (os->dims[k].size != (k == a ? axis : f->dims[k]))
			return 0;
	int64_t inner = 1, numel;
	for (int k = a + 1; k < r; k++)
		inner *= f->dims[k];
	if (__builtin_mul_overflow(outer, axis, &numel) || __builtin_mul_overflow(numel, inner, &numel) ||
	    numel <= 0 || (size_t)numel * es < MOVE_MIN_BYTES)
		return 0;
	Joined *c = calloc(1, sizeof *c);
	if (!c || !(c->part = calloc(node->ninputs, sizeof *c->part)) ||
	    !(c->chunk = calloc(node->ninputs, sizeof *c->chunk)))
		abort();
	c->base.fill = joined_fill;
	c->base.release = joined_release;
	c->base.evict = joined_evict;
	c->nparts = node->ninputs;
	for (uint32_t i = 0; i < node->ninputs; i++) {
		TensorId t = ir_value(m, node->inputs[i])->tensor;
		c->part[i] = t;
		c->chunk[i] = ir_tensor(m, t)->nbytes / (size_t)outer;
		c->row += c->chunk[i];
		ir_tensor_hold(m, t);
	}
	int64_t dims[R];
	for (int k = 0; k < r; k++)
		dims[k] = os->dims[k].size;
	return ir_tensor_deferred(m, f->dtype, dims, r, (size_t)numel * es, &c->base);
}

/* ---- the fold ----------------------------------------------------------------- */

/* A result that shares src's bytes: no recipe to run, only a hold on src
 * (released with the tensor). */
static void alias_fill(IrModel *m, const IrDeferred *d, size_t off, size_t len, uint8_t *out)
{
	(void)m, (void)d, (void)off, (void)len, (void)out; /* never called: the tensor has its data */
}

typedef struct Alias {
	IrDeferred base;
	TensorId src;
} Alias;

static void alias_evict(IrModel *m, const IrDeferred *d)
{
	ir_tensor_evict(m, ((const Alias *)d)->src);
}

static void alias_release(IrModel *m, IrDeferred *d)
{
	ir_tensor_unhold(m, ((Alias *)d)->src);
	free(d);
}

static bool shape_is(const Layout *l, const Shape *s)
{
	if (l->rank != s->rank)
		return false;
	for (int k = 0; k < l->rank; k++)
		if (l->dims[k] != s->dims[k].size)
			return false;
	return true;
}

TensorId fold_defer_move(IrModel *m, NodeId n)
{
	IrNode *node = ir_node(m, n);
	if (node->noutputs != 1 || !node->outputs[0] || node->ninputs < 1 || !node->inputs[0])
		return 0;
	const IrValue *ov = ir_value(m, node->outputs[0]);
	const Shape *os = &ov->shape;
	if (os->rank < 0 || os->rank > R)
		return 0;
	for (int k = 0; k < os->rank; k++)
		if (os->dims[k].size < 0)
			return 0;
	if (node->kind == OP_Concat)
		return defer_concat(m, n, os, ov->dtype);
	View v;
	bool ok;
	switch (node->kind) {
	case OP_Transpose: case OP_Reshape: case OP_Flatten: case OP_Squeeze: case OP_Unsqueeze:
	case OP_Identity: case OP_Slice: case OP_Gather: case OP_Cast:
		break;
	default:
		return 0;
	}
	if (!view_of(m, ir_value(m, node->inputs[0])->tensor, &v))
		return 0;
	switch (node->kind) {
	case OP_Transpose: ok = move_transpose(m, n, &v); break;
	case OP_Slice: ok = move_slice(m, n, &v); break;
	case OP_Gather: ok = move_gather(m, n, &v); break;
	case OP_Cast: ok = move_cast(m, n, &v); break;
	default: {
		/* the reshapes */
		int64_t nd[R * 2];
		int nr = reshaped_dims(m, n, v.shape.dims, v.shape.rank, nd);
		ok = nr >= 0 && nr <= R && ir_numel(nd, nr) == ir_numel(v.shape.dims, v.shape.rank) &&
		     move_reshape(&v, nr, nd);
	}
	}
	int64_t numel = ir_numel(v.shape.dims, v.shape.rank);
	if (!ok || !shape_is(&v.shape, os) || v.dtype != ov->dtype || numel <= 0 ||
	    (size_t)numel * v.es < MOVE_MIN_BYTES) {
		layout_free(&v.shape);
		return 0;
	}
	view_plan(&v);
	IrTensor *src = ir_tensor(m, v.src);
	if (view_is_identity(m, &v) && src->data) {
		/* the same bytes in the same order: shared, not copied */
		Alias *al = calloc(1, sizeof *al);
		if (!al)
			abort();
		al->base.fill = alias_fill;
		al->base.release = alias_release;
		al->base.evict = alias_evict;
		al->src = v.src;
		layout_free(&v.shape);
		ir_tensor_hold(m, v.src);
		TensorId t = ir_tensor_deferred(m, v.dtype, v.shape.dims, v.shape.rank, src->nbytes, &al->base);
		m->tensors[t].data = m->tensors[v.src].data;
		return t;
	}
	View *h = malloc(sizeof *h);
	if (!h)
		abort();
	*h = v;
	h->base.fill = view_fill;
	h->base.release = view_release;
	h->base.evict = view_evict;
	h->base.same = view_same;
	ir_tensor_hold(m, v.src);
	return ir_tensor_deferred(m, v.dtype, v.shape.dims, v.shape.rank, (size_t)numel * v.es, &h->base);
}
