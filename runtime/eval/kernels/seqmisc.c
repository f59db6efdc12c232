/* seqmisc.c - assorted kernels that fit no other family: ReverseSequence,
 * MaxUnpool, SequenceMap (runs a body graph per sequence position, through
 * EvCtx.run_body as the control-flow kernels do), NonMaxSuppression, RoiAlign
 * and GridSample.
 *
 * ReverseSequence, MaxUnpool and SequenceMap move elements and take every
 * dtype.  NonMaxSuppression, RoiAlign and GridSample compute geometry and
 * interpolation in double, following ONNX's reference (itself a port of
 * onnxruntime's CPU kernels) step by step, and round each output once. */
#include "runtime/eval/eval.h"
#include "nn_util.h"
#include "sh_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- ReverseSequence ---------------------------------------------------------- */

static bool run_reverse_sequence(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *lens = nin > 1 ? in[1] : NULL;
	if (!sh_check_movable(c, x, "input") || !sh_is_int_index(lens))
		return false;
	if (x->rank < 2)
		return ev_fail(c, "input must have rank >= 2");
	int ta, ba;
	if (!sh_axis(c, ev_attr_int(c, "time_axis", 0), x->rank, 0, &ta) ||
	    !sh_axis(c, ev_attr_int(c, "batch_axis", 1), x->rank, 0, &ba))
		return false;
	if (ta == ba || (ta > 1 || ba > 1))
		return ev_fail(c, "time_axis and batch_axis must be 0 and 1 in some order");
	if (lens->numel != x->dims[ba])
		return ev_fail(c, "sequence_lens has %lld elements for batch %lld", (long long)lens->numel,
		               (long long)x->dims[ba]);
	EvValue *y = sh_new(c, x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	int64_t inner = sh_prod(x->dims, 2, x->rank), st[EV_MAX_RANK];
	ev_strides(x->rank, x->dims, st);
	for (int64_t b = 0; b < x->dims[ba]; b++) {
		int64_t len = sh_idx(lens, b);
		if (len < 0 || len > x->dims[ta]) {
			ev_unref(y);
			return ev_fail(c, "sequence length %lld is out of range", (long long)len);
		}
		for (int64_t t = 0; t < x->dims[ta]; t++) {
			int64_t src = t < len ? len - 1 - t : t;
			sh_copy(y, b * st[ba] + t * st[ta], x, b * st[ba] + src * st[ta], inner);
		}
	}
	out[0] = y;
	return true;
}

/* ---- MaxUnpool ------------------------------------------------------------------ */

/* Y is zero but for Y.flat[I[j]] = X.flat[j]; the indices address the whole
 * output (N, C and spatial), as MaxPool's Indices output does. */
static bool run_max_unpool(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *idx = nin > 1 ? in[1] : NULL, *os = nin > 2 ? in[2] : NULL;
	if (!sh_check_movable(c, x, "X") || !sh_is_int_index(idx))
		return false;
	if (x->rank < 3 || idx->numel != x->numel)
		return ev_fail(c, "X must have rank >= 3 and I as many elements");
	int ns = x->rank - 2, nk, npads, nstr;
	const int64_t *ks = ev_attr_ints(c, "kernel_shape", &nk);
	const int64_t *pads = ev_attr_ints(c, "pads", &npads);
	const int64_t *strides = ev_attr_ints(c, "strides", &nstr);
	if (!ks || nk != ns)
		return ev_fail(c, "kernel_shape must have %d values", ns);
	int64_t dims[EV_MAX_RANK];
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int i = 0; i < ns; i++) {
		int64_t s = strides && nstr == ns ? strides[i] : 1;
		int64_t pb = pads && npads == 2 * ns ? pads[i] : 0, pe = pads && npads == 2 * ns ? pads[i + ns] : 0;
		dims[i + 2] = (x->dims[i + 2] - 1) * s + ks[i] - pb - pe;
	}
	/* the indices address the inferred shape; an explicit output_shape
	 * places each element at the same coordinates in the larger output */
	int64_t inf[EV_MAX_RANK];
	memcpy(inf, dims, sizeof inf);
	if (os) {
		int n;
		if (!sh_read_ints(c, os, "output_shape", dims, EV_MAX_RANK, &n))
			return false;
		if (n != x->rank)
			return ev_fail(c, "output_shape has %d values for rank %d", n, x->rank);
	}
	EvValue *y = sh_new(c, x->dtype, x->rank, dims);
	if (!y)
		return false;
	sh_fill_empty_strings(y);
	int64_t ninf = sh_prod(inf, 0, x->rank);
	for (int64_t j = 0; j < x->numel; j++) {
		int64_t k = sh_idx(idx, j), at = 0, rest = k, mul = 1;
		bool inside = k >= 0 && k < ninf;
		for (int d = x->rank - 1; d >= 0 && inside; d--) {
			int64_t coord = rest % inf[d];
			rest /= inf[d];
			if (coord >= dims[d])
				inside = false;
			at += coord * mul;
			mul *= dims[d];
		}
		if (!inside) {
			ev_unref(y);
			return ev_fail(c, "index %lld is out of range for output shape", (long long)k);
		}
		sh_copy(y, at, x, j, 1);
	}
	out[0] = y;
	return true;
}

/* ---- SequenceMap --------------------------------------------------------------- */

static bool run_sequence_map(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const IrAttr *a = ev_attr(c, "body");
	if (!a || a->type != ATTR_GRAPH)
		return ev_fail(c, "SequenceMap needs a body graph");
	GraphId g = a->g;
	IrGraph *body = ir_graph(c->m, g);
	if (nin < 1 || !in[0] || in[0]->kind != EV_SEQUENCE)
		return ev_fail(c, "input_sequence must be a sequence");
	if ((int)body->ninputs != nin || (int)body->noutputs != nout)
		return ev_fail(c, "body has %u inputs and %u outputs, node %d and %d", body->ninputs, body->noutputs,
		               nin, nout);
	int n = in[0]->nitems;
	for (int i = 1; i < nin; i++)
		if (!in[i] || (in[i]->kind == EV_SEQUENCE && in[i]->nitems != n))
			return ev_fail(c, "input %d is missing or its length differs from input_sequence's %d", i, n);
	for (int k = 0; k < nout; k++) {
		ValueId v = body->outputs[k];
		out[k] = ev_sequence_new(ir_value(c->m, v)->dtype);
	}
	EvValue **bin = calloc((size_t)nin + 1, sizeof *bin), **bout = calloc((size_t)nout + 1, sizeof *bout);
	if (!bin || !bout)
		ev_out_of_memory();
	bool ok = true;
	for (int it = 0; ok && it < n; it++) {
		for (int i = 0; i < nin; i++)
			bin[i] = in[i]->kind == EV_SEQUENCE ? in[i]->items[it] : in[i];
		ok = c->run_body(c, g, bin, (uint32_t)nin, bout, (uint32_t)nout);
		for (int k = 0; ok && k < nout; k++) {
			if (bout[k]->kind != EV_TENSOR) {
				ok = ev_fail(c, "body output %d is not a tensor", k);
				break;
			}
			if (!out[k]->dtype)
				out[k]->dtype = bout[k]->dtype;
			ev_sequence_push(out[k], bout[k]);
			bout[k] = NULL;
		}
		for (int k = 0; k < nout; k++) {
			ev_unref(bout[k]);
			bout[k] = NULL;
		}
	}
	free(bin);
	free(bout);
	return ok;
}

/* ---- NonMaxSuppression ------------------------------------------------------ */

typedef struct Cand {
	double score;
	int64_t i;
} Cand;

static int cand_cmp(const void *pa, const void *pb)
{
	const Cand *a = pa, *b = pb;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* Box as (y1, x1, y2, x2) with y1 <= y2, x1 <= x2. */
static void nms_box(const EvValue *boxes, int64_t at, bool center, double *bx)
{
	double v[4];
	for (int k = 0; k < 4; k++)
		v[k] = ev_get_f(boxes, at + k);
	if (center) {
		/* x_center, y_center, width, height */
		bx[0] = v[1] - v[3] / 2;
		bx[2] = v[1] + v[3] / 2;
		bx[1] = v[0] - v[2] / 2;
		bx[3] = v[0] + v[2] / 2;
	} else {
		bx[0] = fmin(v[0], v[2]);
		bx[2] = fmax(v[0], v[2]);
		bx[1] = fmin(v[1], v[3]);
		bx[3] = fmax(v[1], v[3]);
	}
}

static double iou(const double *a, const double *b)
{
	double ya = fmax(a[0], b[0]), xa = fmax(a[1], b[1]), yb = fmin(a[2], b[2]), xb = fmin(a[3], b[3]);
	double inter = fmax(0, yb - ya) * fmax(0, xb - xa);
	double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
	if (area_a <= 0 || area_b <= 0 || inter <= 0)
		return 0;
	return inter / (area_a + area_b - inter);
}

static bool run_nms(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *boxes = in[0], *scores = nin > 1 ? in[1] : NULL;
	const EvValue *mo = nin > 2 ? in[2] : NULL, *it = nin > 3 ? in[3] : NULL, *st = nin > 4 ? in[4] : NULL;
	if (!boxes || !scores || boxes->kind != EV_TENSOR || scores->kind != EV_TENSOR)
		return ev_fail(c, "boxes and scores must be tensors");
	if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 || scores->dims[0] != boxes->dims[0] ||
	    scores->dims[2] != boxes->dims[1])
		return ev_fail(c, "boxes must be (B, N, 4) and scores (B, C, N)");
	int64_t maxout = mo && mo->numel > 0 ? ev_get_i(mo, 0) : 0;
	double iou_th = it && it->numel > 0 ? ev_get_f(it, 0) : 0;
	bool has_st = st && st->numel > 0;
	double score_th = has_st ? ev_get_f(st, 0) : 0;
	bool center = ev_attr_int(c, "center_point_box", 0) != 0;
	int64_t nb = boxes->dims[0], nbox = boxes->dims[1], ncls = scores->dims[1];
	int64_t cap = 16, nsel = 0;
	int64_t *sel = nn_alloc(sizeof(int64_t) * 3 * (size_t)cap);
	Cand *cand = nn_alloc(sizeof(Cand) * (size_t)(nbox + 1));
	double *bx = nn_alloc(sizeof(double) * 4 * (size_t)(nbox + 1));
	int64_t *kept = nn_alloc(sizeof(int64_t) * (size_t)(nbox + 1));
	for (int64_t b = 0; b < nb; b++) {
		for (int64_t i = 0; i < nbox; i++)
			nms_box(boxes, (b * nbox + i) * 4, center, bx + 4 * i);
		for (int64_t k = 0; k < ncls; k++) {
			int64_t nc = 0, nk = 0;
			for (int64_t i = 0; i < nbox; i++) {
				double s = ev_get_f(scores, (b * ncls + k) * nbox + i);
				if (!has_st || s > score_th)
					cand[nc++] = (Cand){s, i};
			}
			qsort(cand, (size_t)nc, sizeof *cand, cand_cmp);
			for (int64_t j = 0; j < nc && nk < maxout; j++) {
				bool keep = true;
				for (int64_t q = 0; q < nk && keep; q++)
					if (iou(bx + 4 * cand[j].i, bx + 4 * kept[q]) > iou_th)
						keep = false;
				if (!keep)
					continue;
				kept[nk++] = cand[j].i;
				if (nsel == cap) {
					cap *= 2;
					sel = realloc(sel, sizeof(int64_t) * 3 * (size_t)cap);
					if (!sel)
						ev_out_of_memory();
				}
				sel[3 * nsel] = b;
				sel[3 * nsel + 1] = k;
				sel[3 * nsel + 2] = cand[j].i;
				nsel++;
			}
		}
	}
	free(cand);
	free(bx);
	free(kept);
	int64_t dims[2] = {nsel, 3};
	EvValue *y = nn_new(c, DT_INT64, 2, dims);
	if (y)
		memcpy(y->data, sel, sizeof(int64_t) * 3 * (size_t)nsel);
	free(sel);
	out[0] = y;
	return y != NULL;
}

/* ---- RoiAlign ------------------------------------------------------------------- */

static bool run_roi_align(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *rois = nin > 1 ? in[1] : NULL, *bi = nin > 2 ? in[2] : NULL;
	if (!x || x->kind != EV_TENSOR || !nn_is_float_type(x->dtype) || x->rank != 4)
		return ev_fail(c, "X must be a 4-D float tensor");
	if (!rois || rois->rank != 2 || rois->dims[1] != 4 || !sh_is_int_index(bi) || bi->numel != rois->dims[0])
		return ev_fail(c, "rois must be (R, 4) and batch_indices (R) integers");
	char buf[32];
	const char *mode = ev_attr_string(c, "mode", "avg", buf, sizeof buf);
	bool is_max = !strcmp(mode, "max");
	if (!is_max && strcmp(mode, "avg") != 0)
		return ev_fail(c, "unknown mode '%s'", mode);
	char buf2[32];
	bool half_pixel = c->opset >= 16 &&
	                  !strcmp(ev_attr_string(c, "coordinate_transformation_mode", "half_pixel", buf2, sizeof buf2),
	                          "half_pixel");
	int64_t oh = ev_attr_int(c, "output_height", 1), ow = ev_attr_int(c, "output_width", 1);
	int64_t sr = ev_attr_int(c, "sampling_ratio", 0);
	double scale = ev_attr_float(c, "spatial_scale", 1.0f);
	int64_t nr = rois->dims[0], ch = x->dims[1], H = x->dims[2], W = x->dims[3];
	int64_t dims[4] = {nr, ch, oh, ow};
	EvValue *y = nn_new(c, x->dtype, 4, dims);
	if (!y)
		return false;
	double off = half_pixel ? 0.5 : 0.0;
	for (int64_t r = 0; r < nr; r++) {
		int64_t b = sh_idx(bi, r);
		if (b < 0 || b >= x->dims[0]) {
			ev_unref(y);
			return ev_fail(c, "batch index %lld is out of range", (long long)b);
		}
		double sw = ev_get_f(rois, r * 4) * scale - off, sh = ev_get_f(rois, r * 4 + 1) * scale - off;
		double ew = ev_get_f(rois, r * 4 + 2) * scale - off, eh = ev_get_f(rois, r * 4 + 3) * scale - off;
		double rw = ew - sw, rh = eh - sh;
		if (!half_pixel) {
			rw = fmax(rw, 1.0);
			rh = fmax(rh, 1.0);
		}
		double bh = rh / (double)oh, bw = rw / (double)ow;
		int64_t gh = sr > 0 ? sr : (int64_t)ceil(rh / (double)oh), gw = sr > 0 ? sr : (int64_t)ceil(rw / (double)ow);
		double count = (double)(gh * gw > 1 ? gh * gw : 1);
		for (int64_t k = 0; k < ch; k++) {
			int64_t base = (b * ch + k) * H * W;
			for (int64_t ph = 0; ph < oh; ph++)
				for (int64_t pw = 0; pw < ow; pw++) {
					double acc = 0;
					bool first = true;
					for (int64_t iy = 0; iy < gh; iy++)
						for (int64_t ix = 0; ix < gw; ix++) {
							double yy = sh + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
							double xx = sw + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
							double v = 0;
							if (!(yy < -1.0 || yy > (double)H || xx < -1.0 || xx > (double)W)) {
								if (yy <= 0)
									yy = 0;
								if (xx <= 0)
									xx = 0;
								int64_t yl = (int64_t)yy, xl = (int64_t)xx, yh, xh;
								if (yl >= H - 1) {
									yh = yl = H - 1;
									yy = (double)yl;
								} else {
									yh = yl + 1;
								}
								if (xl >= W - 1) {
									xh = xl = W - 1;
									xx = (double)xl;
								} else {
									xh = xl + 1;
								}
								double ly = yy - (double)yl, lx = xx - (double)xl, hy = 1 - ly, hx = 1 - lx;
								double v1 = hy * hx * ev_get_f(x, base + yl * W + xl);
								double v2 = hy * lx * ev_get_f(x, base + yl * W + xh);
								double v3 = ly * hx * ev_get_f(x, base + yh * W + xl);
								double v4 = ly * lx * ev_get_f(x, base + yh * W + xh);
								v = is_max ? fmax(fmax(v1, v2), fmax(v3, v4)) : v1 + v2 + v3 + v4;
							}
							if (is_max)
								acc = first ? v : fmax(acc, v);
							else
								acc += v;
							first = false;
						}
					ev_set_f(y, ((r * ch + k) * oh + ph) * ow + pw, is_max ? acc : acc / count);
				}
		}
	}
	out[0] = y;
	return true;
}

/* ---- GridSample ----------------------------------------------------------------- */

enum { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECT };

typedef struct Gs {
	int mode, pad;
	bool align;
	int n;                          /* spatial dims */
	int64_t size[EV_MAX_RANK];      /* spatial extents */
	double lo[EV_MAX_RANK], hi[EV_MAX_RANK];
	const EvValue *x;
} Gs;

/* Reflect x by the nearer border until it lies within [lo, hi]. */
static double gs_reflect(double x, double lo, double hi)
{
	double rng = hi - lo;
	if (rng <= 0)
		return lo;
	if (x < lo) {
		double dx = lo - x;
		int64_t n = (int64_t)(dx / rng);
		double r = dx - (double)n * rng;
		return n % 2 == 0 ? lo + r : hi - r;
	}
	if (x > hi) {
		double dx = x - hi;
		int64_t n = (int64_t)(dx / rng);
		double r = dx - (double)n * rng;
		return n % 2 == 0 ? hi - r : lo + r;
	}
	return x;
}

/* The input element at integer coordinates pos[] of plane base, by the padding mode. */
static double gs_pixel(const Gs *g, int64_t base, const int64_t *pos)
{
	int64_t off = 0;
	for (int d = 0; d < g->n; d++) {
		int64_t p = pos[d];
		if (p < 0 || p >= g->size[d]) {
			if (g->pad == GS_ZEROS)
				return 0;
			if (g->pad == GS_BORDER)
				p = p < 0 ? 0 : g->size[d] - 1;
			else
				p = (int64_t)gs_reflect((double)p, g->lo[d], g->hi[d]);
			if (p < 0)
				p = 0;
			if (p >= g->size[d])
				p = g->size[d] - 1;
		}
		off = off * g->size[d] + p;
	}
	return ev_get_f(g->x, base + off);
}

static void cubic_coeffs(double t, double *cf)
{
	const double A = -0.75;
	double x = fabs(t);
	cf[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
	cf[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
	cf[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
	cf[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

/* Interpolate over dims d.. recursively: pos[0..d) fixed already. */
static double gs_interp(const Gs *g, int64_t base, const double *coord, int64_t *pos, int d)
{
	if (d == g->n)
		return gs_pixel(g, base, pos);
	double x = coord[d];
	if (g->mode == GS_NEAREST) {
		pos[d] = (int64_t)x;
		return gs_interp(g, base, coord, pos, d + 1);
	}
	if (g->mode == GS_LINEAR) {
		double x0 = floor(x), dx = x - x0;
		pos[d] = (int64_t)x0;
		double a = gs_interp(g, base, coord, pos, d + 1);
		pos[d] = (int64_t)x0 + 1;
		double b = gs_interp(g, base, coord, pos, d + 1);
		return (1 - dx) * a + dx * b;
	}
	double x0 = floor(x) - 1, cf[4], s = 0;
	cubic_coeffs(x - x0 - 1, cf);
	for (int k = 0; k < 4; k++) {
		pos[d] = (int64_t)x0 + k;
		s += cf[k] * gs_interp(g, base, coord, pos, d + 1);
	}
	return s;
}

static bool run_grid_sample(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *grid = nin > 1 ? in[1] : NULL;
	if (!x || x->kind != EV_TENSOR || !nn_is_float_type(x->dtype) || x->rank < 3)
		return ev_fail(c, "X must be a float tensor of rank >= 3");
	int n = x->rank - 2;
	if (!grid || grid->kind != EV_TENSOR || !nn_is_float_type(grid->dtype) || grid->rank != x->rank ||
	    grid->dims[0] != x->dims[0] || grid->dims[x->rank - 1] != n)
		return ev_fail(c, "grid must be (N, D1_out.., %d)", n);
	Gs g;
	memset(&g, 0, sizeof g);
	g.x = x;
	g.n = n;
	char buf[32];
	const char *mode = ev_attr_string(c, "mode", c->opset >= 20 ? "linear" : "bilinear", buf, sizeof buf);
	if (!strcmp(mode, "bilinear") || !strcmp(mode, "linear"))
		g.mode = GS_LINEAR;
	else if (!strcmp(mode, "nearest"))
		g.mode = GS_NEAREST;
	else if (!strcmp(mode, "bicubic") || !strcmp(mode, "cubic"))
		g.mode = GS_CUBIC;
	else
		return ev_fail(c, "unknown mode '%s'", mode);
	if (g.mode == GS_CUBIC && n != 2)
		return ev_fail(c, "cubic mode needs 2 spatial dims");
	char buf2[32];
	const char *pm = ev_attr_string(c, "padding_mode", "zeros", buf2, sizeof buf2);
	g.pad = !strcmp(pm, "zeros") ? GS_ZEROS : !strcmp(pm, "border") ? GS_BORDER : !strcmp(pm, "reflection") ? GS_REFLECT : -1;
	if (g.pad < 0)
		return ev_fail(c, "unknown padding_mode '%s'", pm);
	g.align = ev_attr_int(c, "align_corners", 0) != 0;
	for (int d = 0; d < n; d++) {
		g.size[d] = x->dims[2 + d];
		g.lo[d] = g.align ? 0 : -0.5;
		g.hi[d] = g.align ? (double)g.size[d] - 1 : (double)g.size[d] - 0.5;
	}
	int64_t dims[EV_MAX_RANK];
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int d = 0; d < n; d++)
		dims[2 + d] = grid->dims[1 + d];
	EvValue *y = nn_new(c, x->dtype, x->rank, dims);
	if (!y)
		return false;
	int64_t osp = nn_prod(dims + 2, n), isp = nn_prod(g.size, n), nch = x->dims[1];
	for (int64_t b = 0; b < x->dims[0]; b++)
		for (int64_t p = 0; p < osp; p++) {
			/* grid's last axis lists coordinates innermost first (x, y, z...) */
			double coord[EV_MAX_RANK];
			for (int d = 0; d < n; d++) {
				double v = ev_get_f(grid, (b * osp + p) * n + (n - 1 - d));
				double sz = (double)g.size[d];
				v = g.align ? (v + 1) / 2 * (sz - 1) : ((v + 1) * sz - 1) / 2;
				if (g.mode == GS_NEAREST)
					v = nearbyint(v);
				if (v < g.lo[d] || v > g.hi[d]) {
					if (g.pad == GS_BORDER)
						v = v < 0 ? 0 : v > sz - 1 ? sz - 1 : v;
					else if (g.pad == GS_REFLECT)
						v = gs_reflect(v, g.lo[d], g.hi[d]);
				}
				coord[d] = v;
			}
			for (int64_t k = 0; k < nch; k++) {
				int64_t pos[EV_MAX_RANK];
				double v = gs_interp(&g, (b * nch + k) * isp, coord, pos, 0);
				ev_set_f(y, (b * nch + k) * osp + p, v);
			}
		}
	out[0] = y;
	return true;
}

const EvKernel ev_kernels_seqmisc[] = {
	EV_KERNEL(ReverseSequence, run_reverse_sequence, SH_T_ALL),
	EV_KERNEL(MaxUnpool, run_max_unpool, SH_T_NUM),
	EV_KERNEL(SequenceMap, run_sequence_map, SH_T_ALL),
	EV_KERNEL(NonMaxSuppression, run_nms, NN_BIT(DT_FLOAT) | NN_BIT(DT_INT64)),
	EV_KERNEL(RoiAlign, run_roi_align, NN_FLOATS),
	EV_KERNEL(GridSample, run_grid_sample, NN_FLOATS),
	{0},
};
