/* split_slices.c - CATALOGUE.md B21: Slices of one value along one axis that
 * tile it exactly become one Split.  The rule language matches one root;
 * this needs every Slice reading the value at once, so it is a built-in
 * pass of the rewrite engine (extended level, `split-slices`; rewrite.c
 * builds the Split and records the firing).  Torch writes a chunk() as such
 * Slices (shufflenet's channel split), and a roll as two Slices and a
 * Concat (Swin's shifted windows).
 *
 * Only what is surely the same: constant starts and ends, one axis, step 1,
 * a known dim on that axis, every Slice non-empty, the Slices in one graph
 * (the Split's, so a Slice output that is a graph output becomes a Split
 * output of the same graph, under its name), and together covering
 * [0, dim) with no gap and no overlap.  A Split copies what the Slices
 * copied: exact. */
#include "split_slices.h"

#include <stdlib.h>
#include <string.h>

/* The elements of a constant 1-D int32/int64 value; -1 if not one. */
static int const_ints(IrModel *m, ValueId v, int64_t *out, int max)
{
	if (!v || !ir_is_constant(m, v))
		return -1;
	IrTensor *t = ir_tensor(m, ir_value(m, v)->tensor);
	if (t->rank != 1 || t->numel > max || (t->dtype != DT_INT64 && t->dtype != DT_INT32))
		return -1;
	size_t nb;
	const uint8_t *b = ir_tensor_bytes(m, ir_value(m, v)->tensor, &nb);
	if (!b || nb != (size_t)t->numel * (t->dtype == DT_INT64 ? 8 : 4))
		return -1;
	for (int64_t i = 0; i < t->numel; i++) {
		if (t->dtype == DT_INT64) {
			memcpy(&out[i], b + 8 * i, 8);
		} else {
			int32_t x;
			memcpy(&x, b + 4 * i, 4);
			out[i] = x;
		}
	}
	return (int)t->numel;
}

/* Slice node s as a piece of its data along one axis: [*start, *end) on
 * *axis (0 <= axis < rank), clamped to the dim; false if it is not one. */
static bool slice_piece(IrModel *m, NodeId s, int64_t *axis, int64_t *start, int64_t *end)
{
	IrNode *node = ir_node(m, s);
	if (node->kind != OP_Slice || node->domain[0] || node->ninputs < 3 || node->noutputs != 1 || !node->outputs[0])
		return false;
	const Shape *sh = &ir_value(m, node->inputs[0])->shape;
	int64_t st, en, ax = 0, step = 1, v[2];
	if (const_ints(m, node->inputs[1], v, 1) != 1)
		return false;
	st = v[0];
	if (const_ints(m, node->inputs[2], v, 1) != 1)
		return false;
	en = v[0];
	if (node->ninputs > 3 && node->inputs[3]) {
		if (const_ints(m, node->inputs[3], v, 1) != 1)
			return false;
		ax = v[0];
	}
	if (node->ninputs > 4 && node->inputs[4]) {
		if (const_ints(m, node->inputs[4], v, 1) != 1)
			return false;
		step = v[0];
	}
	if (step != 1 || sh->rank < 1 || ax < -sh->rank || ax >= sh->rank)
		return false;
	if (ax < 0)
		ax += sh->rank;
	int64_t d = sh->dims[ax].size;
	if (d < 0)
		return false;
	/* ONNX's clamping for step 1: negative counts from the end, then [0, d] */
	if (st < 0)
		st = st < -d ? 0 : st + d;
	if (en < 0)
		en = en < -d ? 0 : en + d;
	st = st > d ? d : st;
	en = en > d ? d : en;
	*axis = ax;
	*start = st;
	*end = en;
	return true;
}

static int by_start(const void *a, const void *b)
{
	const SplitPiece *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

bool split_slices_find(IrModel *m, NodeId n, SplitPlan *p)
{
	memset(p, 0, sizeof *p);
	int64_t axis, start, end;
	if (!slice_piece(m, n, &axis, &start, &end))
		return false;
	IrNode *node = ir_node(m, n);
	ValueId x = node->inputs[0];
	const IrValue *xv = ir_value(m, x);
	int64_t dim = xv->shape.dims[axis].size;
	SplitPiece *pc = malloc(sizeof *pc * (xv->nuses + 1));
	if (!pc)
		return false;
	int k = 0;
	bool ok = true;
	for (uint32_t u = 0; u < xv->nuses && ok; u++) {
		NodeId s = xv->uses[u].node;
		IrNode *sn = ir_node(m, s);
		if (sn->dead || sn->kind != OP_Slice || xv->uses[u].slot != 0)
			continue;
		bool dup = false;
		for (int i = 0; i < k; i++)
			dup |= pc[i].slice == s;
		if (dup)
			continue;
		int64_t a, st, en;
		if (!slice_piece(m, s, &a, &st, &en))
			continue;   /* another kind of Slice: it stays */
		if (a != axis)
			continue;
		/* a Slice along this axis that cannot go into the Split: none do */
		if (sn->graph != node->graph || st >= en) {
			ok = false;
			break;
		}
		pc[k++] = (SplitPiece){s, st, en};
	}
	if (ok && k >= 2) {
		qsort(pc, (size_t)k, sizeof *pc, by_start);
		int64_t at = 0;
		for (int i = 0; i < k && ok; i++) {
			ok = pc[i].start == at;
			at = pc[i].end;
		}
		ok = ok && at == dim;
	}
	if (!ok || k < 2) {
		free(pc);
		return false;
	}
	p->x = x;
	p->axis = axis;
	p->pieces = pc;
	p->npieces = k;
	return true;
}

void split_plan_free(SplitPlan *p)
{
	free(p->pieces);
	p->pieces = NULL;
	p->npieces = 0;
}
