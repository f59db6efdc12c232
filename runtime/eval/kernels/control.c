/* control.c - If, Loop and Scan: ops whose bodies are graphs.  Each runs its
 * body through the context's run_body entry (EvCtx.run_body, eval.c's
 * interpreter, which these kernels sit below), which shares the
 * interpreter's value table, so a body reads outer values directly. */
#include "runtime/eval/eval.h"

#include <stdlib.h>
#include <string.h>

static GraphId body_of(EvCtx *c, const char *name)
{
	const IrAttr *a = ev_attr(c, name);
	return a && a->type == ATTR_GRAPH ? a->g : 0;
}

static bool truthy(const EvValue *v)
{
	return v && v->kind == EV_TENSOR && v->numel > 0 && ev_get_f(v, 0) != 0;
}

static bool k_if(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 1 || !in[0] || in[0]->kind != EV_TENSOR || in[0]->numel != 1)
		return ev_fail(c, "If needs a one-element condition");
	GraphId g = body_of(c, truthy(in[0]) ? "then_branch" : "else_branch");
	if (!g)
		return ev_fail(c, "If has no %s", truthy(in[0]) ? "then_branch" : "else_branch");
	if (ir_graph(c->m, g)->noutputs != (uint32_t)nout)
		return ev_fail(c, "branch has %u outputs, node has %d", ir_graph(c->m, g)->noutputs, nout);
	return c->run_body(c, g, NULL, 0, out, (uint32_t)nout);
}

/* Stack n same-shaped tensors along a new axis (reversed if asked).  With
 * no iteration (n == 0) nothing computed says the per-iteration shape but
 * the body output's own (body_out, its declared or inferred shape): the
 * result is that shape with 0 inserted at the axis, 0 for a dim not known,
 * as ONNX Runtime makes it; [0] when its rank is not known either (it was
 * [0] always, and inference, which knows the body's rank, disagreed). */
static EvValue *stack(EvCtx *c, EvValue **items, int n, int axis, bool reverse, int dtype, ValueId body_out)
{
	if (n == 0) {
		int64_t dims[EV_MAX_RANK] = {0};
		int r = 1;
		const Shape *sh = body_out ? &ir_value(c->m, body_out)->shape : NULL;
		if (sh && sh->rank >= 0 && sh->rank < EV_MAX_RANK) {
			r = sh->rank + 1;
			int at = axis < 0 ? axis + r : axis;
			if (at < 0 || at >= r)
				at = 0;
			for (int i = 0, k = 0; i < r; i++)
				if (i != at) {
					dims[i] = sh->dims[k].size >= 0 ? sh->dims[k].size : 0;
					k++;
				}
		}
		return ev_tensor_new(dtype ? dtype : DT_FLOAT, r, dims);
	}
	const EvValue *f = items[0];
	if (f->kind != EV_TENSOR || f->rank + 1 > EV_MAX_RANK) {
		ev_fail(c, "scan output is not a tensor");
		return NULL;
	}
	int64_t dims[EV_MAX_RANK];
	int r = f->rank + 1;
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r) {
		ev_fail(c, "scan output axis out of range");
		return NULL;
	}
	for (int i = 0, k = 0; i < r; i++)
		dims[i] = i == axis ? n : f->dims[k++];
	for (int i = 1; i < n; i++)
		if (items[i]->kind != EV_TENSOR || items[i]->rank != f->rank || items[i]->dtype != f->dtype ||
		    memcmp(items[i]->dims, f->dims, sizeof *f->dims * (size_t)f->rank) != 0) {
			ev_fail(c, "scan outputs of iterations 0 and %d differ in shape or type", i);
			return NULL;
		}
	EvValue *o = ev_tensor_new(f->dtype, r, dims);
	if (!o) {
		ev_fail(c, "scan output too large");
		return NULL;
	}
	size_t es = ev_elem_size(f->dtype);
	int64_t outer = 1, inner = f->numel;
	for (int i = 0; i < axis; i++)
		outer *= f->dims[i];
	inner = outer ? f->numel / outer : 0;
	for (int it = 0; it < n; it++) {
		const EvValue *src = items[reverse ? n - 1 - it : it];
		for (int64_t o1 = 0; o1 < outer; o1++) {
			size_t dst = (size_t)((o1 * n + it) * inner) * es;
			if (f->dtype == DT_STRING) {
				for (int64_t j = 0; j < inner; j++)
					((char **)o->data)[(o1 * n + it) * inner + j] = strdup(((char **)src->data)[o1 * inner + j]);
			} else {
				memcpy((char *)o->data + dst, (const char *)src->data + (size_t)(o1 * inner) * es, (size_t)inner * es);
			}
		}
	}
	return o;
}

static bool k_loop(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	GraphId g = body_of(c, "body");
	if (!g)
		return ev_fail(c, "Loop has no body");
	IrGraph *body = ir_graph(c->m, g);
	int ncarried = nin - 2;
	int nscan = (int)body->noutputs - 1 - ncarried;
	if (ncarried < 0 || nscan < 0 || (int)body->ninputs != 2 + ncarried || nout != ncarried + nscan)
		return ev_fail(c, "Loop body signature does not match the node");
	int64_t max_trip = in[0] ? ev_get_i(in[0], 0) : INT64_MAX;
	bool cond = in[1] ? truthy(in[1]) : true;
	EvValue **carried = calloc((size_t)ncarried + 1, sizeof *carried);
	EvValue ***scans = calloc((size_t)nscan + 1, sizeof *scans);
	int nits = 0, cap = 0;
	for (int i = 0; i < ncarried; i++)
		carried[i] = ev_ref(in[2 + i]);
	bool ok = true;
	EvValue **bin = calloc((size_t)body->ninputs + 1, sizeof *bin);
	EvValue **bout = calloc((size_t)body->noutputs + 1, sizeof *bout);
	for (int64_t it = 0; ok && it < max_trip && cond; it++) {
		if (it >= c->max_loop_trips) {
			ok = ev_fail(c, "Loop ran over %lld iterations", (long long)c->max_loop_trips);
			break;
		}
		bin[0] = ev_tensor_new(DT_INT64, 0, NULL);
		((int64_t *)bin[0]->data)[0] = it;
		bin[1] = ev_tensor_new(DT_BOOL, 0, NULL);
		((uint8_t *)bin[1]->data)[0] = cond;
		for (int i = 0; i < ncarried; i++)
			bin[2 + i] = carried[i];
		ok = c->run_body(c, g, bin, body->ninputs, bout, body->noutputs);
		ev_unref(bin[0]);
		ev_unref(bin[1]);
		if (!ok)
			break;
		cond = truthy(bout[0]);
		ev_unref(bout[0]);
		for (int i = 0; i < ncarried; i++) {
			ev_unref(carried[i]);
			carried[i] = bout[1 + i];
		}
		if (nits == cap) {
			cap = cap ? cap * 2 : 16;
			for (int s = 0; s < nscan; s++)
				scans[s] = realloc(scans[s], sizeof **scans * (size_t)cap);
		}
		for (int s = 0; s < nscan; s++)
			scans[s][nits] = bout[1 + ncarried + s];
		nits++;
	}
	for (int i = 0; i < ncarried; i++) {
		if (ok)
			out[i] = carried[i];
		else
			ev_unref(carried[i]);
	}
	for (int s = 0; s < nscan; s++) {
		if (ok) {
			ValueId v = ir_node(c->m, c->node)->outputs[ncarried + s];
			out[ncarried + s] = stack(c, scans[s], nits, 0, false, v ? ir_value(c->m, v)->dtype : 0,
			                          body->outputs[1 + ncarried + s]);
			ok = out[ncarried + s] != NULL;
		}
		for (int i = 0; i < nits; i++)
			ev_unref(scans[s][i]);
		free(scans[s]);
	}
	free(scans);
	free(carried);
	free(bin);
	free(bout);
	return ok;
}

/* Slice `t` at index i along `axis`, dropping that axis. */
static EvValue *take(const EvValue *t, int axis, int64_t i)
{
	int64_t dims[EV_MAX_RANK];
	for (int k = 0, j = 0; k < t->rank; k++)
		if (k != axis)
			dims[j++] = t->dims[k];
	EvValue *o = ev_tensor_new(t->dtype, t->rank - 1, dims);
	if (!o)
		return NULL;
	size_t es = ev_elem_size(t->dtype);
	int64_t outer = 1, inner = 1;
	for (int k = 0; k < axis; k++)
		outer *= t->dims[k];
	for (int k = axis + 1; k < t->rank; k++)
		inner *= t->dims[k];
	for (int64_t o1 = 0; o1 < outer; o1++) {
		int64_t src = (o1 * t->dims[axis] + i) * inner;
		if (t->dtype == DT_STRING)
			for (int64_t j = 0; j < inner; j++)
				((char **)o->data)[o1 * inner + j] = strdup(((char **)t->data)[src + j]);
		else
			memcpy((char *)o->data + (size_t)(o1 * inner) * es, (const char *)t->data + (size_t)src * es, (size_t)inner * es);
	}
	return o;
}

static bool scan9(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout);

/* Scan-8: a leading optional sequence_lens input and a batch axis 0 on every
 * state and scan input (scan inputs then scan along axis 1).  Runs the
 * opset-9 scan on each batch entry and stacks the results. */
static bool scan8(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	int64_t ma = ev_attr_int(c, "num_scan_inputs", 0);
	if (ma <= 0 || ma >= nin)  /* before any arithmetic on it */
		return ev_fail(c, "Scan body signature does not match the node");
	int m = (int)ma;
	int n = nin - 1 - m, k = nout - n;
	if (n < 0 || k < 0)
		return ev_fail(c, "Scan body signature does not match the node");
	EvValue **vals = in + 1;
	for (int i = 0; i < n + m; i++)
		if (!vals[i] || vals[i]->kind != EV_TENSOR || vals[i]->rank < 1)
			return ev_fail(c, "Scan-8 inputs need a batch axis");
	int64_t batch = vals[0]->dims[0];
	for (int i = 0; i < n + m; i++)
		if (vals[i]->dims[0] != batch)
			return ev_fail(c, "Scan-8 inputs differ in batch size");
	if (in[0])
		for (int64_t b = 0; b < in[0]->numel; b++)
			if (ev_get_i(in[0], b) != vals[n]->dims[1])
				return ev_fail(c, "Scan-8 with sequence_lens shorter than the sequence is not supported");
	EvValue ***per = calloc((size_t)nout + 1, sizeof *per);
	for (int o = 0; o < nout; o++)
		per[o] = calloc((size_t)batch + 1, sizeof **per);
	bool ok = true;
	EvValue **slice = calloc((size_t)(n + m) + 1, sizeof *slice), **res = calloc((size_t)nout + 1, sizeof *res);
	if (!slice || !res)
		abort();
	for (int64_t b = 0; ok && b < batch; b++) {
		for (int i = 0; i < n + m; i++)
			slice[i] = take(vals[i], 0, b);
		ok = scan9(c, slice, n + m, res, nout);
		for (int i = 0; i < n + m; i++)
			ev_unref(slice[i]);
		for (int o = 0; ok && o < nout; o++)
			per[o][b] = res[o];
	}
	free(slice);
	free(res);
	for (int o = 0; o < nout; o++) {
		if (ok) {
			out[o] = stack(c, per[o], (int)batch, 0, false, 0, 0);
			ok = out[o] != NULL;
		}
		for (int64_t b = 0; b < batch; b++)
			ev_unref(per[o][b]);
		free(per[o]);
	}
	free(per);
	return ok;
}

static bool k_scan(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return c->opset < 9 ? scan8(c, in, nin, out, nout) : scan9(c, in, nin, out, nout);
}

/* Scan-9 and later: states, then scan inputs sliced along their scan axes. */
static bool scan9(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	GraphId g = body_of(c, "body");
	if (!g)
		return ev_fail(c, "Scan has no body");
	IrGraph *body = ir_graph(c->m, g);
	int64_t ma = ev_attr_int(c, "num_scan_inputs", 0);
	if (ma <= 0 || ma > nin)  /* before any arithmetic on it */
		return ev_fail(c, "Scan body signature does not match the node");
	int m = (int)ma;
	int n = nin - m;
	int k = (int)body->noutputs - n;
	if (n < 0 || k < 0 || (int)body->ninputs != n + m || nout != n + k)
		return ev_fail(c, "Scan body signature does not match the node");
	int na, nd, noa, nod;
	const int64_t *in_axes = ev_attr_ints(c, "scan_input_axes", &na);
	const int64_t *in_dirs = ev_attr_ints(c, c->opset < 9 ? "directions" : "scan_input_directions", &nd);
	const int64_t *out_axes = ev_attr_ints(c, "scan_output_axes", &noa);
	const int64_t *out_dirs = ev_attr_ints(c, "scan_output_directions", &nod);
	int64_t len = -1;
	int *axes = calloc((size_t)m + 1, sizeof *axes);  /* as many as the node has inputs */
	if (!axes)
		abort();
	for (int j = 0; j < m; j++) {
		const EvValue *t = in[n + j];
		bool fine;
		if (!t || t->kind != EV_TENSOR || t->rank < 1)
			fine = ev_fail(c, "scan input %d is not a tensor of rank >= 1", j);
		else
			fine = ev_axis(c, na > j ? in_axes[j] : 0, t->rank, &axes[j]) &&
			       (len < 0 || t->dims[axes[j]] == len || ev_fail(c, "scan inputs differ in length"));
		if (!fine) {
			free(axes);
			return false;
		}
		len = t->dims[axes[j]];
	}
	EvValue **state = calloc((size_t)n + 1, sizeof *state);
	EvValue ***scans = calloc((size_t)k + 1, sizeof *scans);
	EvValue **bin = calloc((size_t)(n + m) + 1, sizeof *bin);
	EvValue **bout = calloc((size_t)(n + k) + 1, sizeof *bout);
	for (int s = 0; s < k; s++)
		scans[s] = calloc((size_t)len + 1, sizeof **scans);
	for (int i = 0; i < n; i++)
		state[i] = ev_ref(in[i]);
	bool ok = true;
	for (int64_t it = 0; ok && it < len; it++) {
		for (int i = 0; i < n; i++)
			bin[i] = state[i];
		for (int j = 0; j < m; j++) {
			int64_t at = nd > j && in_dirs[j] ? len - 1 - it : it;
			bin[n + j] = take(in[n + j], axes[j], at);
		}
		ok = c->run_body(c, g, bin, (uint32_t)(n + m), bout, (uint32_t)(n + k));
		for (int j = 0; j < m; j++)
			ev_unref(bin[n + j]);
		if (!ok)
			break;
		for (int i = 0; i < n; i++) {
			ev_unref(state[i]);
			state[i] = bout[i];
		}
		for (int s = 0; s < k; s++)
			scans[s][it] = bout[n + s];
	}
	for (int i = 0; i < n; i++) {
		if (ok)
			out[i] = state[i];
		else
			ev_unref(state[i]);
	}
	for (int s = 0; s < k; s++) {
		if (ok) {
			int axis = noa > s ? (int)out_axes[s] : 0;
			out[n + s] = stack(c, scans[s], (int)len, axis, nod > s && out_dirs[s], 0, body->outputs[n + s]);
			ok = out[n + s] != NULL;
		}
		for (int64_t i = 0; i < len; i++)
			ev_unref(scans[s][i]);
		free(scans[s]);
	}
	free(scans);
	free(state);
	free(bin);
	free(bout);
	free(axes);
	return ok;
}

#define ALL_TYPES 0x3ffffeu
const EvKernel ev_kernels_control[] = {
	EV_KERNEL(If, k_if, ALL_TYPES),
	EV_KERNEL(Loop, k_loop, ALL_TYPES),
	EV_KERNEL(Scan, k_scan, ALL_TYPES),
	{0},
};
