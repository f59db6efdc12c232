/* sequence.c - kernels on sequence and optional values: SequenceConstruct,
 * SequenceAt, SequenceEmpty, SequenceErase, SequenceInsert, SequenceLength,
 * SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement,
 * OptionalGetElement.
 *
 * Values are immutable once made, so a sequence op shares its items with
 * its input (ev_ref) instead of copying them; only SplitToSequence and
 * ConcatFromSequence move tensor data.  An empty optional is an EV_NONE
 * value; a full one is the value itself. */
#include "runtime/eval/eval.h"
#include "sh_util.h"

#include <stdlib.h>
#include <string.h>

#define T_MOVE (SH_T_ALL | SH_T_F8)

static bool need_seq(EvCtx *c, const EvValue *s)
{
	if (!s || s->kind != EV_SEQUENCE)
		return ev_fail(c, "input_sequence must be a sequence");
	return true;
}

static bool need_tensor(EvCtx *c, const EvValue *t, const char *what)
{
	if (!t || t->kind != EV_TENSOR)
		return ev_fail(c, "%s must be a tensor", what);
	return true;
}

/* A new sequence holding references to items [0, n) of src except `skip`
 * (-1: none), with `ins` inserted at `at` (-1: nowhere). */
static EvValue *seq_edit(const EvValue *src, int skip, EvValue *ins, int at)
{
	EvValue *s = ev_sequence_new(src->dtype);
	for (int i = 0; i <= src->nitems; i++) {
		if (i == at)
			ev_sequence_push(s, ev_ref(ins));
		if (i < src->nitems && i != skip)
			ev_sequence_push(s, ev_ref(src->items[i]));
	}
	return s;
}

/* The position input as an index into a sequence of n items: in [-n, n-1],
 * or [-n, n] when inserting. */
static bool position_arg(EvCtx *c, const EvValue *p, int n, bool insert, int *out)
{
	if (!sh_is_int_index(p) || p->numel != 1)
		return ev_fail(c, "position must be a one-element int32/int64 tensor");
	int64_t k = sh_idx(p, 0), hi = insert ? n : n - 1;
	if (k < -(int64_t)n || k > hi)
		return ev_fail(c, "position %lld is out of range for a sequence of %d", (long long)k, n);
	*out = (int)(k < 0 ? k + n : k);
	return true;
}

static bool k_sequenceconstruct(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 1)
		return ev_fail(c, "SequenceConstruct needs at least one input");
	for (int i = 0; i < nin; i++) {
		if (!need_tensor(c, in[i], "input"))
			return false;
		if (in[i]->dtype != in[0]->dtype)
			return ev_fail(c, "input %d is %s, input 0 is %s", i, dtype_name(in[i]->dtype),
			               dtype_name(in[0]->dtype));
	}
	EvValue *s = ev_sequence_new(in[0]->dtype);
	for (int i = 0; i < nin; i++)
		ev_sequence_push(s, ev_ref(in[i]));
	out[0] = s;
	return true;
}

static bool k_sequenceempty(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	out[0] = ev_sequence_new((int)ev_attr_int(c, "dtype", DT_FLOAT));
	return true;
}

static bool k_sequenceat(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	int k;
	if (!need_seq(c, in[0]))
		return false;
	if (nin < 2 || !in[1])
		return ev_fail(c, "SequenceAt needs a position");
	if (!position_arg(c, in[1], in[0]->nitems, false, &k))
		return false;
	out[0] = ev_ref(in[0]->items[k]);
	return true;
}

static bool k_sequenceerase(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!need_seq(c, in[0]))
		return false;
	int n = in[0]->nitems, k = n - 1;
	if (nin > 1 && in[1]) {
		if (!position_arg(c, in[1], n, false, &k))
			return false;
	} else if (n == 0) {
		return ev_fail(c, "cannot erase from an empty sequence");
	}
	out[0] = seq_edit(in[0], k, NULL, -1);
	return true;
}

static bool k_sequenceinsert(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!need_seq(c, in[0]) || nin < 2 || !need_tensor(c, in[1], "tensor"))
		return false;
	if (in[0]->nitems > 0 && in[0]->dtype && in[1]->dtype != in[0]->dtype)
		return ev_fail(c, "inserting %s into a sequence of %s", dtype_name(in[1]->dtype), dtype_name(in[0]->dtype));
	int n = in[0]->nitems, k = n;
	if (nin > 2 && in[2] && !position_arg(c, in[2], n, true, &k))
		return false;
	EvValue *s = seq_edit(in[0], -1, in[1], k);
	s->dtype = in[1]->dtype;
	out[0] = s;
	return true;
}

static bool k_sequencelength(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!need_seq(c, in[0]))
		return false;
	EvValue *o = sh_new(c, DT_INT64, 0, NULL);
	if (!o)
		return false;
	((int64_t *)o->data)[0] = in[0]->nitems;
	out[0] = o;
	return true;
}

/* ---- SplitToSequence, ConcatFromSequence --------------------------------------------- */

/* x's slab [start, start + len) along axis a; with drop_axis (len 1) the axis goes. */
static EvValue *slab(EvCtx *c, const EvValue *x, int a, int64_t start, int64_t len, bool drop_axis)
{
	int64_t dims[EV_MAX_RANK];
	int r = 0;
	for (int i = 0; i < x->rank; i++) {
		if (i == a && drop_axis)
			continue;
		dims[r++] = i == a ? len : x->dims[i];
	}
	EvValue *o = sh_new(c, x->dtype, r, dims);
	if (!o)
		return NULL;
	int64_t outer = sh_prod(x->dims, 0, a), inner = sh_prod(x->dims, a + 1, x->rank), d = x->dims[a];
	for (int64_t p = 0; p < outer; p++)
		sh_copy(o, p * len * inner, x, (p * d + start) * inner, len * inner);
	return o;
}

static bool k_splittosequence(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0], *sp = nin > 1 ? in[1] : NULL;
	if (!sh_check_movable(c, x, "input"))
		return false;
	int a;
	if (x->rank < 1)
		return ev_fail(c, "SplitToSequence needs rank >= 1");
	if (!sh_axis(c, ev_attr_int(c, "axis", 0), x->rank, 0, &a))
		return false;
	int64_t d = x->dims[a];
	bool keep = ev_attr_int(c, "keepdims", 1) != 0;
	EvValue *s = ev_sequence_new(x->dtype);
	if (!sp) { /* pieces of one, the axis dropped unless keepdims */
		for (int64_t j = 0; j < d; j++) {
			EvValue *t = slab(c, x, a, j, 1, !keep);
			if (!t)
				goto fail;
			ev_sequence_push(s, t);
		}
	} else {
		if (!sh_is_int_index(sp) || sp->rank > 1)
			return ev_unref(s), ev_fail(c, "split must be an int32/int64 scalar or 1-D tensor");
		if (sp->rank == 0) { /* equal chunks, the last one smaller */
			int64_t chunk = sh_idx(sp, 0);
			if (chunk <= 0)
				return ev_unref(s), ev_fail(c, "split must be positive");
			for (int64_t j = 0; j < d; j += chunk) {
				EvValue *t = slab(c, x, a, j, d - j < chunk ? d - j : chunk, false);
				if (!t)
					goto fail;
				ev_sequence_push(s, t);
			}
		} else {
			int64_t sum = 0;
			for (int64_t i = 0; i < sp->numel; i++) {
				if (sh_idx(sp, i) < 0)
					return ev_unref(s), ev_fail(c, "split[%lld] is negative", (long long)i);
				sum += sh_idx(sp, i);
			}
			if (sum != d)
				return ev_unref(s), ev_fail(c, "split sums to %lld, dimension is %lld", (long long)sum, (long long)d);
			int64_t at = 0;
			for (int64_t i = 0; i < sp->numel; i++) {
				EvValue *t = slab(c, x, a, at, sh_idx(sp, i), false);
				if (!t)
					goto fail;
				ev_sequence_push(s, t);
				at += sh_idx(sp, i);
			}
		}
	}
	out[0] = s;
	return true;
fail:
	ev_unref(s);
	return false;
}

static bool k_concatfromsequence(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *s = in[0];
	if (!need_seq(c, s))
		return false;
	if (s->nitems == 0)
		return ev_fail(c, "cannot concatenate an empty sequence");
	const IrAttr *aa = ev_attr(c, "axis");
	if (!aa)
		return ev_fail(c, "ConcatFromSequence needs an axis attribute");
	bool stack = ev_attr_int(c, "new_axis", 0) != 0;
	const EvValue *f = s->items[0];
	if (!sh_check_movable(c, f, "item"))
		return false;
	int r = f->rank, a;
	if (!stack && r == 0)
		return ev_fail(c, "cannot concatenate scalars");
	if (!sh_axis(c, aa->i, r, stack ? 1 : 0, &a))
		return false;
	int n = s->nitems;
	int64_t dims[EV_MAX_RANK], along = 0;
	for (int i = 0; i < n; i++) {
		const EvValue *t = s->items[i];
		if (t->kind != EV_TENSOR || t->dtype != f->dtype || t->rank != r)
			return ev_fail(c, "item %d differs from item 0 in type or rank", i);
		for (int k = 0; k < r; k++)
			if ((stack || k != a) && t->dims[k] != f->dims[k])
				return ev_fail(c, "item %d differs from item 0 in dimension %d", i, k);
		along += stack ? 1 : t->dims[a];
	}
	int ro = stack ? r + 1 : r;
	if (ro > EV_MAX_RANK)
		return ev_fail(c, "output rank too large");
	for (int i = 0, k = 0; i < ro; i++) {
		if (i == a) {
			dims[i] = along;
			k += !stack; /* concatenating replaces the axis, stacking inserts it */
		} else {
			dims[i] = f->dims[k++];
		}
	}
	EvValue *o = sh_new(c, f->dtype, ro, dims);
	if (!o)
		return false;
	/* each item contributes one block of (its extent along a) x inner per outer index */
	int64_t outer = sh_prod(f->dims, 0, a), inner = sh_prod(f->dims, stack ? a : a + 1, r), pos = 0;
	for (int64_t p = 0; p < outer; p++)
		for (int i = 0; i < n; i++) {
			const EvValue *t = s->items[i];
			int64_t blk = (stack ? 1 : t->dims[a]) * inner;
			sh_copy(o, pos, t, p * blk, blk);
			pos += blk;
		}
	out[0] = o;
	return true;
}

/* ---- optionals ---------------------------------------------------------------------- */

static bool k_optional(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	out[0] = nin > 0 && in[0] ? ev_ref(in[0]) : ev_none();
	return true;
}

static bool k_optionalhaselement(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *o = sh_new(c, DT_BOOL, 0, NULL);
	if (!o)
		return false;
	((uint8_t *)o->data)[0] = nin > 0 && in[0] && in[0]->kind != EV_NONE;
	out[0] = o;
	return true;
}

static bool k_optionalgetelement(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 1 || !in[0] || in[0]->kind == EV_NONE)
		return ev_fail(c, "the optional is empty");
	out[0] = ev_ref(in[0]);
	return true;
}

const EvKernel ev_kernels_sequence[] = {
	EV_KERNEL(SequenceConstruct, k_sequenceconstruct, T_MOVE),
	EV_KERNEL(SequenceAt, k_sequenceat, T_MOVE),
	EV_KERNEL(SequenceEmpty, k_sequenceempty, T_MOVE),
	EV_KERNEL(SequenceErase, k_sequenceerase, T_MOVE),
	EV_KERNEL(SequenceInsert, k_sequenceinsert, T_MOVE),
	EV_KERNEL(SequenceLength, k_sequencelength, T_MOVE),
	EV_KERNEL(SplitToSequence, k_splittosequence, T_MOVE),
	EV_KERNEL(ConcatFromSequence, k_concatfromsequence, T_MOVE),
	EV_KERNEL(Optional, k_optional, T_MOVE),
	EV_KERNEL(OptionalHasElement, k_optionalhaselement, T_MOVE),
	EV_KERNEL(OptionalGetElement, k_optionalgetelement, T_MOVE),
	{0},
};
