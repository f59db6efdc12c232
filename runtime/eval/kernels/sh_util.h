/* sh_util.h - helpers shared by the data-movement kernel families (shape.c,
 * gather.c, sequence.c, resize.c, misc.c).
 *
 * These ops move elements without doing arithmetic on them, so they are
 * written once for every dtype by element size: a numeric element is copied
 * as its bytes, a string element is duplicated (each string tensor owns its
 * strings).  The 4-bit packed types have no byte-addressable element and are
 * refused by sh_esize's callers. */
#ifndef GRAFT_SH_UTIL_H
#define GRAFT_SH_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "runtime/eval/eval.h"

#define SH_BIT(dt) (1u << (dt))
#define SH_T_FLOAT (SH_BIT(DT_FLOAT) | SH_BIT(DT_DOUBLE) | SH_BIT(DT_FLOAT16) | SH_BIT(DT_BFLOAT16))
#define SH_T_SINT (SH_BIT(DT_INT8) | SH_BIT(DT_INT16) | SH_BIT(DT_INT32) | SH_BIT(DT_INT64))
#define SH_T_UINT (SH_BIT(DT_UINT8) | SH_BIT(DT_UINT16) | SH_BIT(DT_UINT32) | SH_BIT(DT_UINT64))
#define SH_T_INT (SH_T_SINT | SH_T_UINT)
#define SH_T_NUM (SH_T_FLOAT | SH_T_INT)
#define SH_T_ALL (SH_T_NUM | SH_BIT(DT_BOOL) | SH_BIT(DT_STRING))
/* float8 types move like any byte-sized element */
#define SH_T_F8 (SH_BIT(DT_FLOAT8E4M3FN) | SH_BIT(DT_FLOAT8E4M3FNUZ) | SH_BIT(DT_FLOAT8E5M2) | SH_BIT(DT_FLOAT8E5M2FNUZ))

/* Bytes of one element, sizeof(char *) for strings, 0 for packed 4-bit
 * types (which have no addressable element). */
static inline size_t sh_esize(int dtype)
{
	return ev_elem_size(dtype);
}

/* Fails (with a message) for tensors this family cannot move. */
static inline bool sh_check_movable(EvCtx *c, const EvValue *v, const char *what)
{
	if (!v || v->kind != EV_TENSOR)
		return ev_fail(c, "%s must be a tensor", what);
	if (sh_esize(v->dtype) == 0)
		return ev_fail(c, "%s: dtype %s is not supported (4-bit packed types cannot be moved element-wise)",
		               what, dtype_name(v->dtype));
	return true;
}

static inline bool sh_is_int_index(const EvValue *v)
{
	return v && v->kind == EV_TENSOR && (v->dtype == DT_INT64 || v->dtype == DT_INT32);
}

/* Element i of an int32/int64 tensor (other types through ev_get_i). */
static inline int64_t sh_idx(const EvValue *t, int64_t i)
{
	if (t->dtype == DT_INT64)
		return ((const int64_t *)t->data)[i];
	if (t->dtype == DT_INT32)
		return ((const int32_t *)t->data)[i];
	return ev_get_i(t, i);
}

/* Copy n elements src[si..] -> dst[di..] (same dtype). */
static inline void sh_copy(EvValue *dst, int64_t di, const EvValue *src, int64_t si, int64_t n)
{
	if (n <= 0)
		return;
	if (dst->dtype == DT_STRING) {
		char **d = (char **)dst->data;
		char *const *s = (char *const *)src->data;
		for (int64_t k = 0; k < n; k++) {
			free(d[di + k]);
			d[di + k] = strdup(s[si + k] ? s[si + k] : "");
		}
		return;
	}
	size_t es = sh_esize(dst->dtype);
	memcpy((char *)dst->data + (size_t)di * es, (const char *)src->data + (size_t)si * es, (size_t)n * es);
}

/* Copy one element; cheaper than sh_copy for the common sizes. */
static inline void sh_copy1(EvValue *dst, int64_t di, const EvValue *src, int64_t si, size_t es)
{
	char *d = dst->data;
	const char *s = src->data;
	switch (es) {
	case 1: d[di] = s[si]; return;
	case 2: ((uint16_t *)d)[di] = ((const uint16_t *)s)[si]; return;
	case 4: ((uint32_t *)d)[di] = ((const uint32_t *)s)[si]; return;
	case 8:
		if (dst->dtype == DT_STRING)
			break;
		((uint64_t *)d)[di] = ((const uint64_t *)s)[si];
		return;
	default: break;
	}
	sh_copy(dst, di, src, si, 1);
}

/* String tensors come out of ev_tensor_new holding NULLs; make every
 * element a real (empty) string so the result is well formed. */
static inline void sh_fill_empty_strings(EvValue *t)
{
	if (t->dtype != DT_STRING)
		return;
	char **d = (char **)t->data;
	for (int64_t i = 0; i < t->numel; i++)
		if (!d[i])
			d[i] = strdup("");
}

/* A new tensor, failing through ev_fail if it cannot be made. */
static inline EvValue *sh_new(EvCtx *c, int dtype, int rank, const int64_t *dims)
{
	if (rank > EV_MAX_RANK) {
		ev_fail(c, "output rank %d exceeds the evaluator's limit %d", rank, EV_MAX_RANK);
		return NULL;
	}
	for (int i = 0; i < rank; i++)
		if (dims[i] < 0) {
			ev_fail(c, "negative output dimension %lld", (long long)dims[i]);
			return NULL;
		}
	EvValue *v = ev_tensor_new(dtype, rank, dims);
	if (!v)
		ev_fail(c, "cannot allocate a %s tensor of rank %d", dtype_name(dtype), rank);
	return v;
}

/* Copy a strided view of src into the whole of dst, in dst's row-major
 * order: dst element (i0..in) reads src[off + sum ik * sstr[k]].  This one
 * loop serves Transpose, Slice, Expand, DepthToSpace and SpaceToDepth. */
/* A transpose's core: the output's last dim walks the source with stride
 * istr while output dim j walks it contiguously.  Copied in 16 x 16 tiles of
 * (j, last), so both sides stay in a few cache lines; the other dims by an
 * odometer.  Fixed-size elements only. */
static inline void sh_tiled_copy(EvValue *dst, const EvValue *src, const int64_t *sstr, int64_t off, int j, size_t es)
{
	enum { T = 16 };
	int r = dst->rank;
	int64_t dstr[EV_MAX_RANK], idx[EV_MAX_RANK] = {0};
	ev_strides(r, dst->dims, dstr);
	int64_t nj = dst->dims[j], nk = dst->dims[r - 1], istr = sstr[r - 1], dj = dstr[j];
	char *d = dst->data;
	const char *s = src->data;
	int64_t so = off, di = 0;
	for (;;) {
		for (int64_t jb = 0; jb < nj; jb += T)
			for (int64_t kb = 0; kb < nk; kb += T) {
				int64_t je = jb + T < nj ? jb + T : nj, ke = kb + T < nk ? kb + T : nk;
#define SH_TILE(TY) \
	for (int64_t k = kb; k < ke; k++) \
		for (int64_t jj = jb; jj < je; jj++) \
			((TY *)d)[di + jj * dj + k] = ((const TY *)s)[so + jj + k * istr];
				switch (es) {
				case 1: SH_TILE(uint8_t) break;
				case 2: SH_TILE(uint16_t) break;
				case 4: SH_TILE(uint32_t) break;
				case 8: SH_TILE(uint64_t) break;
				default:
					for (int64_t k = kb; k < ke; k++)
						for (int64_t jj = jb; jj < je; jj++)
							memcpy(d + (size_t)(di + jj * dj + k) * es, s + (size_t)(so + jj + k * istr) * es, es);
				}
#undef SH_TILE
			}
		/* next index of the dims other than j and the last */
		int a = r - 2;
		for (; a >= 0; a--) {
			if (a == j)
				continue;
			so += sstr[a];
			di += dstr[a];
			if (++idx[a] < dst->dims[a])
				break;
			so -= sstr[a] * dst->dims[a];
			di -= dstr[a] * dst->dims[a];
			idx[a] = 0;
		}
		if (a < 0)
			break;
	}
}

static inline void sh_strided_copy(EvValue *dst, const EvValue *src, const int64_t *sstr, int64_t off)
{
	int r = dst->rank;
	if (dst->numel == 0)
		return;
	if (r == 0) {
		sh_copy(dst, 0, src, off, 1);
		return;
	}
	size_t es = sh_esize(dst->dtype);
	int64_t inner = dst->dims[r - 1], istr = sstr[r - 1];
	if (istr != 1 && dst->dtype != DT_STRING && es && inner > 1) {
		for (int j = 0; j < r - 1; j++)
			if (sstr[j] == 1 && dst->dims[j] > 1) {
				sh_tiled_copy(dst, src, sstr, off, j, es);
				return;
			}
	}
	int64_t idx[EV_MAX_RANK] = {0};
	int64_t so = off, di = 0;
	for (;;) {
		if (istr == 1 && dst->dtype != DT_STRING) {
			memcpy((char *)dst->data + (size_t)di * es, (const char *)src->data + (size_t)so * es,
			       (size_t)inner * es);
		} else {
			for (int64_t k = 0; k < inner; k++)
				sh_copy1(dst, di + k, src, so + k * istr, es);
		}
		di += inner;
		int d = r - 2;
		for (; d >= 0; d--) {
			so += sstr[d];
			if (++idx[d] < dst->dims[d])
				break;
			so -= sstr[d] * dst->dims[d];
			idx[d] = 0;
		}
		if (d < 0)
			break;
	}
}

/* Read a 1-D (or scalar) integer tensor into out[max]; *n gets the count. */
static inline bool sh_read_ints(EvCtx *c, const EvValue *t, const char *what, int64_t *out, int max, int *n)
{
	*n = 0;
	if (!t || t->kind != EV_TENSOR)
		return ev_fail(c, "%s must be a tensor", what);
	if (t->dtype != DT_INT64 && t->dtype != DT_INT32)
		return ev_fail(c, "%s must be int32 or int64, not %s", what, dtype_name(t->dtype));
	if (t->rank > 1)
		return ev_fail(c, "%s must be 1-D", what);
	if (t->numel > max)
		return ev_fail(c, "%s has %lld elements, more than the %d supported", what, (long long)t->numel, max);
	for (int64_t i = 0; i < t->numel; i++)
		out[i] = sh_idx(t, i);
	*n = (int)t->numel;
	return true;
}

/* Normalise axis in [-rank, rank) (or [-(rank+1), rank] with extra = 1, for
 * ops that insert an axis).  Unlike ev_axis, rank 0 has no axis. */
static inline bool sh_axis(EvCtx *c, int64_t axis, int rank, int extra, int *out)
{
	int64_t r = rank + extra;
	int64_t a = axis < 0 ? axis + r : axis;
	*out = 0;
	if (a < 0 || a >= r)
		return ev_fail(c, "axis %lld is out of range for rank %d", (long long)axis, rank);
	*out = (int)a;
	return true;
}

/* As nn_prod (nn_util.h): unsigned, for the dims of empty tensors. */
static inline int64_t sh_prod(const int64_t *dims, int from, int to)
{
	uint64_t p = 1;
	for (int i = from; i < to; i++)
		p *= (uint64_t)dims[i];
	return (int64_t)p;
}

#endif
