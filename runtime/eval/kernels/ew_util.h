/* ew_util.h - shared helpers of the elementwise kernel families (unary.c,
 * binary.c, cast.c): the element-type lists the kernels are generated from,
 * exact conversions between the number kinds, and a broadcasting iterator
 * that walks the output one contiguous row at a time.
 *
 * Element types fall in three "domains", each computed in one wide C type:
 *   F  float, double, float16, bfloat16: computed in double;
 *   S  int8..int64: computed in int64 (wrapping, through uint64 where C
 *      would overflow);
 *   U  uint8..uint64 (and bool where an op takes it): computed in uint64.
 * Computing a float32 +, -, *, / or sqrt in double and rounding once gives
 * exactly the IEEE float32 result (53 >= 2*24+2), and likewise for float16
 * and bfloat16; transcendental functions come out within a hair of correctly
 * rounded, and independent of the libm's float variants.  Narrow stores
 * wrap (integers) or round to nearest even (floats), with no double
 * rounding: see ew_d2f_odd. */
#ifndef GRAFT_EW_UTIL_H
#define GRAFT_EW_UTIL_H

#include "runtime/eval/eval.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Per-call parameters of an elementwise op: attributes and scalar inputs,
 * plus an error flag the row functions raise (integer division by zero). */
typedef struct EwArgs {
	double alpha, beta, gamma, lambd, bias;
	double lo_f, hi_f;      /* Clip bounds, per domain */
	int64_t lo_s, hi_s;
	uint64_t lo_u, hi_u;
	int64_t flag, flag2;    /* integer attributes (fmod, direction, approximate...) */
	bool scalar_exponent;   /* Pow: the exponent has one element */
	int err;                /* set by a row function: 1 = integer division by zero */
} EwArgs;

/* ---- activations shared by unary.c and the vendor kernels (vendor.c) ---- */

/* written so neither branch overflows exp */
static inline double ew_sigmoid(double x)
{
	if (x >= 0)
		return 1 / (1 + exp(-x));
	double e = exp(x);
	return e / (1 + e);
}

/* GELU's tanh form (Gelu approximate = "tanh", com.microsoft.FastGelu) */
static inline double ew_gelu_tanh(double x)
{
	return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

/* ---- conversions -------------------------------------------------------- */

/* double -> float rounded to odd: truncate, and set the last bit if anything
 * was lost.  Rounding that result again to nearest even at 11 or 8 bits
 * (float16, bfloat16) equals rounding the double directly, which rounding
 * to float first would not. */
static inline float ew_d2f_odd(double d)
{
	float f = (float)d;
	if ((double)f == d || isnan(d))
		return f;
	uint32_t u;
	memcpy(&u, &f, 4);
	if (u & 1)
		return f;
	return nextafterf(f, (double)f < d ? INFINITY : -INFINITY);
}

static inline uint16_t ew_d2h(double d) { return ev_float_to_half(ew_d2f_odd(d)); }
static inline uint16_t ew_d2bf(double d) { return ev_float_to_bf16(ew_d2f_odd(d)); }

/* uint64 / int64 -> double rounded to odd (exact below 2^53), for the same
 * reason: one later rounding to float, float16 or bfloat16 is then correct. */
static inline double ew_u2d_odd(uint64_t u)
{
	if (u < (UINT64_C(1) << 53))
		return (double)u;
	int s = 64 - __builtin_clzll(u) - 53;
	uint64_t v = (u >> s) | ((u & ((UINT64_C(1) << s) - 1)) != 0);
	return ldexp((double)v, s);
}

static inline double ew_s2d_odd(int64_t i)
{
	uint64_t mag = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
	double d = ew_u2d_odd(mag);
	return i < 0 ? -d : d;
}

/* Float -> integer, truncating toward zero.  C leaves NaN and out-of-range
 * values undefined; we define them: NaN -> 0; values inside int64 wrap to
 * the narrower target as numpy does on x86 (-1.0 -> uint8 255); beyond
 * int64 (uint64 for unsigned targets) they saturate. */
static inline int64_t ew_d2s(double d)
{
	if (isnan(d))
		return 0;
	if (d >= 9223372036854775808.0)
		return INT64_MAX;
	if (d < -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)d;
}

static inline uint64_t ew_d2u(double d)
{
	if (isnan(d))
		return 0;
	if (d >= 18446744073709551616.0)
		return UINT64_MAX;
	if (d >= 9223372036854775808.0)
		return (uint64_t)d;
	return (uint64_t)ew_d2s(d);
}

/* Loads into a domain and stores from it, by storage type. */
#define ew_ld_id(x) ((double)(x))
#define ew_ld_h(x) ((double)ev_half_to_float(x))
#define ew_ld_bf(x) ((double)ev_bf16_to_float(x))
#define ew_st_f32(d) ((float)(d))
#define ew_st_f64(d) (d)
#define ew_ld_s(x) ((int64_t)(x))
#define ew_ld_u(x) ((uint64_t)(x))

/* ---- element-type lists -------------------------------------------------
 * X(A, dtype, C type, suffix, load-to-double, store-from-double); A is passed
 * through so one list can generate functions for many ops. */
#define EW_FLOAT_TYPES(X, A) \
	X(A, DT_FLOAT, float, f32, ew_ld_id, ew_st_f32) \
	X(A, DT_DOUBLE, double, f64, ew_ld_id, ew_st_f64) \
	X(A, DT_FLOAT16, uint16_t, f16, ew_ld_h, ew_d2h) \
	X(A, DT_BFLOAT16, uint16_t, bf16, ew_ld_bf, ew_d2bf)
/* X(A, dtype, C type, suffix) */
#define EW_SINT_TYPES(X, A) \
	X(A, DT_INT8, int8_t, i8) X(A, DT_INT16, int16_t, i16) \
	X(A, DT_INT32, int32_t, i32) X(A, DT_INT64, int64_t, i64)
#define EW_UINT_TYPES(X, A) \
	X(A, DT_UINT8, uint8_t, u8) X(A, DT_UINT16, uint16_t, u16) \
	X(A, DT_UINT32, uint32_t, u32) X(A, DT_UINT64, uint64_t, u64)

#define EW_BIT(dt) (1u << (dt))
#define EW_MASK_F (EW_BIT(DT_FLOAT) | EW_BIT(DT_DOUBLE) | EW_BIT(DT_FLOAT16) | EW_BIT(DT_BFLOAT16))
#define EW_MASK_S (EW_BIT(DT_INT8) | EW_BIT(DT_INT16) | EW_BIT(DT_INT32) | EW_BIT(DT_INT64))
#define EW_MASK_U (EW_BIT(DT_UINT8) | EW_BIT(DT_UINT16) | EW_BIT(DT_UINT32) | EW_BIT(DT_UINT64))
#define EW_MASK_B EW_BIT(DT_BOOL)
#define EW_MASK_NUM (EW_MASK_F | EW_MASK_S | EW_MASK_U)

/* Slow but general element access by domain (for the odd paths: Pow's mixed
 * types, Cast, Clip's bounds).  Integers beyond 2^53 read as double round to
 * nearest; to store an integer into a float tensor use ew_set_s / ew_set_u,
 * which round once. */
static inline double ew_get_f(const EvValue *t, int64_t i)
{
	return ev_get_f(t, i);
}

/* Integers as their two's-complement bits in 64 (sign- or zero-extended);
 * floats truncate (ew_d2s). */
static inline int64_t ew_get_s(const EvValue *t, int64_t i)
{
	const void *d = t->data;
	switch (t->dtype) {
	case DT_INT8: return ((const int8_t *)d)[i];
	case DT_INT16: return ((const int16_t *)d)[i];
	case DT_INT32: return ((const int32_t *)d)[i];
	case DT_INT64: return ((const int64_t *)d)[i];
	case DT_UINT8: case DT_BOOL: return ((const uint8_t *)d)[i];
	case DT_UINT16: return ((const uint16_t *)d)[i];
	case DT_UINT32: return ((const uint32_t *)d)[i];
	case DT_UINT64: return (int64_t)((const uint64_t *)d)[i];
	default: return ew_d2s(ew_get_f(t, i));
	}
}

static inline uint64_t ew_get_u(const EvValue *t, int64_t i)
{
	if (ev_is_float(t->dtype))
		return ew_d2u(ew_get_f(t, i));
	return (uint64_t)ew_get_s(t, i);
}

/* Stores: floats round to nearest even (once); integers wrap; bool is != 0. */
static inline void ew_set_f(EvValue *t, int64_t i, double v)
{
	void *d = t->data;
	switch (t->dtype) {
	case DT_FLOAT: ((float *)d)[i] = (float)v; break;
	case DT_DOUBLE: ((double *)d)[i] = v; break;
	case DT_FLOAT16: ((uint16_t *)d)[i] = ew_d2h(v); break;
	case DT_BFLOAT16: ((uint16_t *)d)[i] = ew_d2bf(v); break;
	case DT_BOOL: ((uint8_t *)d)[i] = v != 0; break;
	case DT_UINT64: ((uint64_t *)d)[i] = ew_d2u(v); break;
	case DT_INT8: ((int8_t *)d)[i] = (int8_t)ew_d2s(v); break;
	case DT_INT16: ((int16_t *)d)[i] = (int16_t)ew_d2s(v); break;
	case DT_INT32: ((int32_t *)d)[i] = (int32_t)ew_d2s(v); break;
	case DT_INT64: ((int64_t *)d)[i] = ew_d2s(v); break;
	case DT_UINT8: ((uint8_t *)d)[i] = (uint8_t)ew_d2s(v); break;
	case DT_UINT16: ((uint16_t *)d)[i] = (uint16_t)ew_d2s(v); break;
	case DT_UINT32: ((uint32_t *)d)[i] = (uint32_t)ew_d2s(v); break;
	default: break;
	}
}

/* Integer stores into float tensors round once: float and double convert
 * directly, float16 and bfloat16 from a round-to-odd double. */
static inline void ew_set_u(EvValue *t, int64_t i, uint64_t v)
{
	void *d = t->data;
	switch (t->dtype) {
	case DT_INT8: case DT_UINT8: ((uint8_t *)d)[i] = (uint8_t)v; break;
	case DT_BOOL: ((uint8_t *)d)[i] = v != 0; break;
	case DT_INT16: case DT_UINT16: ((uint16_t *)d)[i] = (uint16_t)v; break;
	case DT_INT32: case DT_UINT32: ((uint32_t *)d)[i] = (uint32_t)v; break;
	case DT_INT64: case DT_UINT64: ((uint64_t *)d)[i] = v; break;
	case DT_FLOAT: ((float *)d)[i] = (float)v; break;
	case DT_DOUBLE: ((double *)d)[i] = (double)v; break;
	default: ew_set_f(t, i, ew_u2d_odd(v)); break;
	}
}

static inline void ew_set_s(EvValue *t, int64_t i, int64_t v)
{
	switch (t->dtype) {
	case DT_FLOAT: ((float *)t->data)[i] = (float)v; break;
	case DT_DOUBLE: ((double *)t->data)[i] = (double)v; break;
	case DT_FLOAT16: case DT_BFLOAT16: ew_set_f(t, i, ew_s2d_odd(v)); break;
	default: ew_set_u(t, i, (uint64_t)v); break;
	}
}

/* ---- broadcasting ------------------------------------------------------- */

#define EW_MAXIN 3

/* Walks an output shape one row (the innermost dimension) at a time, with
 * each input's element offset at the row's start.  Dimensions of size 1 are
 * dropped and neighbours that every input reads contiguously are merged,
 * so same-shape operands make one long row and [N,C,H,W] + [C,1,1] makes
 * rows of H*W. */
typedef struct EwIter {
	int rank;                           /* >= 1 after coalescing */
	int nin;
	int64_t dims[EV_MAX_RANK];
	int64_t st[EW_MAXIN][EV_MAX_RANK];  /* element strides, 0 where broadcast */
	int64_t idx[EV_MAX_RANK];
	int64_t off[EW_MAXIN];              /* offsets of the current row's start */
	int64_t n;                          /* row length */
	int64_t nrows;
} EwIter;

static inline void ew_iter_init(EwIter *it, int rout, const int64_t *out, int nin, const EvValue *const *ins)
{
	int64_t st[EW_MAXIN][EV_MAX_RANK];
	int64_t numel = 1;
	memset(it, 0, sizeof *it);
	it->nin = nin;
	for (int d = 0; d < rout; d++)
		if (out[d] == 0) {
			/* nothing to visit; the other dims may be huge, and their
			 * products overflow (fuzz-graph, UBSan) */
			it->rank = 1;
			return;
		}
	for (int k = 0; k < nin; k++)
		ev_broadcast_strides(ins[k]->rank, ins[k]->dims, rout, out, st[k]);
	int r = 0;
	for (int d = 0; d < rout; d++) {
		numel *= out[d];
		if (out[d] == 1)
			continue;
		bool merge = r > 0;
		for (int k = 0; k < nin && merge; k++)
			if (it->st[k][r - 1] != st[k][d] * out[d])
				merge = false;
		if (merge) {
			it->dims[r - 1] *= out[d];
			for (int k = 0; k < nin; k++)
				it->st[k][r - 1] = st[k][d];
			continue;
		}
		it->dims[r] = out[d];
		for (int k = 0; k < nin; k++)
			it->st[k][r] = st[k][d];
		r++;
	}
	if (r == 0) {
		it->dims[0] = 1;
		r = 1;
	}
	it->rank = r;
	it->n = it->dims[r - 1];
	it->nrows = it->n ? numel / it->n : 0;
}

/* Inner stride of input k along a row. */
static inline int64_t ew_iter_step(const EwIter *it, int k) { return it->st[k][it->rank - 1]; }

static inline void ew_iter_next(EwIter *it)
{
	for (int d = it->rank - 2; d >= 0; d--) {
		it->idx[d]++;
		for (int k = 0; k < it->nin; k++)
			it->off[k] += it->st[k][d];
		if (it->idx[d] < it->dims[d])
			return;
		for (int k = 0; k < it->nin; k++)
			it->off[k] -= it->st[k][d] * it->dims[d];
		it->idx[d] = 0;
	}
}

/* ---- small kernel helpers ----------------------------------------------- */

static inline const char *ew_op(EvCtx *c) { return ir_node(c->m, c->node)->op_type; }

/* The tensor input i, or a failure message when it is missing or not a tensor. */
static inline bool ew_need(EvCtx *c, EvValue **in, int nin, int i)
{
	if (i >= nin || !in[i])
		return ev_fail(c, "%s: input %d is missing", ew_op(c), i);
	if (in[i]->kind != EV_TENSOR)
		return ev_fail(c, "%s: input %d is not a tensor", ew_op(c), i);
	return true;
}

/* "[2,3,4]" for messages. */
static inline const char *ew_shape_str(const EvValue *v, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = 0;
	n += (size_t)snprintf(buf, size, "[");
	for (int i = 0; i < v->rank && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)v->dims[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
	return buf;
}

/* An output every element of which the kernel writes (full: not zeroed first). */
static inline EvValue *ew_new_ex(EvCtx *c, int dtype, int rank, const int64_t *dims, bool full)
{
	EvValue *t = full ? ev_tensor_new_uninit(dtype, rank, dims) : ev_tensor_new(dtype, rank, dims);
	if (!t)
		ev_fail(c, "%s: cannot allocate a %s output of rank %d (too large?)", ew_op(c), dtype_name(dtype), rank);
	return t;
}

static inline EvValue *ew_new(EvCtx *c, int dtype, int rank, const int64_t *dims)
{
	return ew_new_ex(c, dtype, rank, dims, false);
}

#endif
