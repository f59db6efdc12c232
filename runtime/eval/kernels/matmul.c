/* matmul.c - MatMul (numpy matmul: batched, broadcasting batch dims, 1-D
 * operands promoted and their unit dim dropped), Gemm, MatMulInteger and
 * QLinearMatMul.
 *
 * Float matrices run on the blocked GEMM of nn_util.h: every output is
 * the sum of its products in increasing k, in float for float32 (float16 and
 * bfloat16 widened to float32, rounded once at the end) and in double for
 * float64.  Integer matrices multiply and add in 64-bit two's complement,
 * wrapping like the machine, and are truncated to the output type. */
#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MM_INTS (NN_BIT(DT_INT32) | NN_BIT(DT_INT64) | NN_BIT(DT_UINT32) | NN_BIT(DT_UINT64))

/* A batched matrix product: output batch dims, and for each batch the
 * element offsets of its A and B matrices (0 along broadcast dims). */
typedef struct MatGeom {
	int64_t m, k, n;
	int rank;                       /* output rank */
	int64_t dims[EV_MAX_RANK];      /* output shape */
	int64_t nbatch;
	int64_t *aoff, *boff;           /* nbatch entries each */
	bool flat;                      /* B is shared by every batch and A is not broadcast:
	                                   one GEMM with nbatch * m rows does it all */
} MatGeom;

static void geom_free(MatGeom *g)
{
	free(g->aoff);
	free(g->boff);
}

/* numpy matmul shapes: a 1-D A is [1, K] and a 1-D B is [K, 1], their unit
 * dims dropped from the result; other leading dims broadcast. */
static bool matmul_geom(EvCtx *c, const EvValue *a, const EvValue *b, MatGeom *g)
{
	if (a->rank < 1 || b->rank < 1)
		return ev_fail(c, "MatMul operands must have rank >= 1 (got %d and %d)", a->rank, b->rank);
	int64_t ad[EV_MAX_RANK + 1], bd[EV_MAX_RANK + 1];
	int ra = a->rank, rb = b->rank;
	memcpy(ad, a->dims, sizeof(int64_t) * (size_t)ra);
	memcpy(bd, b->dims, sizeof(int64_t) * (size_t)rb);
	if (ra == 1) {
		ad[1] = ad[0];
		ad[0] = 1;
		ra = 2;
	}
	if (rb == 1) {
		bd[1] = 1;
		rb = 2;
	}
	g->m = ad[ra - 2];
	g->k = ad[ra - 1];
	g->n = bd[rb - 1];
	if (bd[rb - 2] != g->k)
		return ev_fail(c, "MatMul inner dims differ: %lld vs %lld", (long long)g->k, (long long)bd[rb - 2]);
	int64_t bat[EV_MAX_RANK];
	int rbat;
	if (!ev_broadcast_shape(ra - 2, ad, rb - 2, bd, &rbat, bat))
		return ev_fail(c, "MatMul batch dims do not broadcast");
	g->rank = 0;
	memcpy(g->dims, bat, sizeof(int64_t) * (size_t)rbat);
	g->rank = rbat;
	if (a->rank > 1)
		g->dims[g->rank++] = g->m;
	if (b->rank > 1)
		g->dims[g->rank++] = g->n;
	if (g->rank > EV_MAX_RANK)
		return ev_fail(c, "MatMul result rank exceeds %d", EV_MAX_RANK);
	g->nbatch = nn_prod(bat, rbat);
	int64_t as[EV_MAX_RANK], bs[EV_MAX_RANK], idx[EV_MAX_RANK] = {0};
	ev_broadcast_strides(ra - 2, ad, rbat, bat, as);
	ev_broadcast_strides(rb - 2, bd, rbat, bat, bs);
	g->aoff = nn_alloc(sizeof(int64_t) * (size_t)(g->nbatch + 1));
	g->boff = nn_alloc(sizeof(int64_t) * (size_t)(g->nbatch + 1));
	bool b_shared = true, a_full = true;
	for (int d = 0; d < rbat; d++) {
		if (bs[d] && bat[d] > 1)
			b_shared = false;
		if (!as[d] && bat[d] > 1)
			a_full = false;
	}
	g->flat = b_shared && a_full;
	for (int64_t i = 0; i < g->nbatch; i++) {
		int64_t ao = 0, bo = 0;
		for (int d = 0; d < rbat; d++) {
			ao += idx[d] * as[d];
			bo += idx[d] * bs[d];
		}
		g->aoff[i] = ao * g->m * g->k;
		g->boff[i] = bo * g->k * g->n;
		for (int d = rbat - 1; d >= 0; d--) {
			if (++idx[d] < bat[d])
				break;
			idx[d] = 0;
		}
	}
	return true;
}

/* c[m x n] = a[m x k] * b[k x n] with strides, in wrapping 64-bit integers. */
static void gemm_int(const EvValue *a, int64_t abase, int64_t ars, int64_t acs,
                     const EvValue *b, int64_t bbase, int64_t brs, int64_t bcs,
                     int64_t m, int64_t n, int64_t k, uint64_t *acc)
{
	bool au = ev_is_unsigned_int(a->dtype), bu = ev_is_unsigned_int(b->dtype);
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			uint64_t s = 0;
			for (int64_t p = 0; p < k; p++) {
				int64_t ai = abase + i * ars + p * acs, bi = bbase + p * brs + j * bcs;
				uint64_t av = au ? ev_get_u(a, ai) : (uint64_t)ev_get_i(a, ai);
				uint64_t bv = bu ? ev_get_u(b, bi) : (uint64_t)ev_get_i(b, bi);
				s += av * bv;
			}
			acc[i * n + j] = s;
		}
}

static void store_int(EvValue *y, int64_t at, uint64_t v)
{
	if (ev_is_unsigned_int(y->dtype))
		ev_set_u(y, at, v);
	else
		ev_set_i(y, at, (int64_t)v);
}

static bool run_matmul(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *a = in[0], *b = nin > 1 ? in[1] : NULL;
	if (!a || !b)
		return ev_fail(c, "needs inputs A and B");
	if (a->dtype != b->dtype)
		return ev_fail(c, "A (%s) and B (%s) must have the same dtype", dtype_name(a->dtype), dtype_name(b->dtype));
	if (!nn_is_float_type(a->dtype) && !(MM_INTS & NN_BIT(a->dtype)))
		return ev_fail(c, "unsupported dtype %s", dtype_name(a->dtype));
	MatGeom g;
	if (!matmul_geom(c, a, b, &g))
		return false;
	EvValue *y = nn_new(c, a->dtype, g.rank, g.dims);
	if (!y) {
		geom_free(&g);
		return false;
	}
	if (y->numel == 0) {
		/* nothing to compute; the batch offsets of huge empty operands
		 * need not even be formed (fuzz-graph, UBSan) */
		geom_free(&g);
		out[0] = y;
		return true;
	}
	int64_t mn = g.m * g.n;
	if (a->dtype == DT_DOUBLE) {
		const double *av = a->data, *bv = b->data;
		double *yv = y->data;
		if (g.flat)
			nn_gemm_f64(g.nbatch * g.m, g.n, g.k, av, g.k, 1, bv + g.boff[0], g.n, 1, yv, g.n, false);
		else
			for (int64_t i = 0; i < g.nbatch; i++)
				nn_gemm_f64(g.m, g.n, g.k, av + g.aoff[i], g.k, 1, bv + g.boff[i], g.n, 1,
				            yv + i * mn, g.n, false);
	} else if (nn_is_float_type(a->dtype)) {
		const float *av = nn_f32_view(a), *bv = nn_f32_view(b);
		float *yv = nn_f32_out(y);
		if (g.flat)
			nn_gemm_f32(g.nbatch * g.m, g.n, g.k, av, g.k, 1, bv + g.boff[0], g.n, 1, yv, g.n, false);
		else
			for (int64_t i = 0; i < g.nbatch; i++)
				nn_gemm_f32(g.m, g.n, g.k, av + g.aoff[i], g.k, 1, bv + g.boff[i], g.n, 1,
				            yv + i * mn, g.n, false);
		nn_f32_commit(y, yv);
		nn_f32_release(a, av);
		nn_f32_release(b, bv);
	} else {
		uint64_t *acc = nn_alloc(sizeof(uint64_t) * (size_t)mn);
		for (int64_t i = 0; i < g.nbatch; i++) {
			gemm_int(a, g.aoff[i], g.k, 1, b, g.boff[i], g.n, 1, g.m, g.n, g.k, acc);
			for (int64_t j = 0; j < mn; j++)
				store_int(y, i * mn + j, acc[j]);
		}
		free(acc);
	}
	geom_free(&g);
	out[0] = y;
	return true;
}

/* ---- Gemm -------------------------------------------------------------------- */

/* Y = alpha * A' B' + beta * C, evaluated as ONNX's reference writes it:
 * the product first, then alpha times it, then plus beta times C. */
static bool run_gemm(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *a = in[0], *b = nin > 1 ? in[1] : NULL, *cc = nin > 2 ? in[2] : NULL;
	if (!a || !b)
		return ev_fail(c, "needs inputs A and B");
	if (a->dtype != b->dtype || (cc && cc->dtype != a->dtype))
		return ev_fail(c, "A, B and C must have the same dtype");
	if (!nn_is_float_type(a->dtype) && !(MM_INTS & NN_BIT(a->dtype)))
		return ev_fail(c, "unsupported dtype %s", dtype_name(a->dtype));
	if (a->rank != 2 || b->rank != 2)
		return ev_fail(c, "A and B must be matrices (ranks %d and %d)", a->rank, b->rank);
	bool ta = ev_attr_int(c, "transA", 0) != 0, tb = ev_attr_int(c, "transB", 0) != 0;
	float alpha = ev_attr_float(c, "alpha", 1.0f), beta = ev_attr_float(c, "beta", 1.0f);
	int64_t m = ta ? a->dims[1] : a->dims[0], k = ta ? a->dims[0] : a->dims[1];
	int64_t n = tb ? b->dims[0] : b->dims[1], kb = tb ? b->dims[1] : b->dims[0];
	if (k != kb)
		return ev_fail(c, "inner dims differ: %lld vs %lld", (long long)k, (long long)kb);
	/* strides of A'[i][p] and B'[p][j] in the stored matrices */
	int64_t ars = ta ? 1 : a->dims[1], acs = ta ? a->dims[1] : 1;
	int64_t brs = tb ? 1 : b->dims[1], bcs = tb ? b->dims[1] : 1;
	int64_t dims[2] = {m, n}, cst[2] = {0, 0};
	if (cc) {
		int64_t bd[EV_MAX_RANK];
		int rb;
		if (cc->rank > 2 || !ev_broadcast_shape(2, dims, cc->rank, cc->dims, &rb, bd) ||
		    bd[0] != m || bd[1] != n)
			return ev_fail(c, "C does not broadcast to [%lld, %lld]", (long long)m, (long long)n);
		ev_broadcast_strides(cc->rank, cc->dims, 2, dims, cst);
	}
	EvValue *y = nn_new(c, a->dtype, 2, dims);
	if (!y)
		return false;
	if (a->dtype == DT_DOUBLE) {
		const double *av = a->data, *bv = b->data, *cv = cc ? cc->data : NULL;
		double *yv = y->data, al = alpha, be = beta;
		nn_gemm_f64(m, n, k, av, ars, acs, bv, brs, bcs, yv, n, false);
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++) {
				double v = al * yv[i * n + j];
				yv[i * n + j] = cv ? v + be * cv[i * cst[0] + j * cst[1]] : v;
			}
	} else if (nn_is_float_type(a->dtype)) {
		const float *av = nn_f32_view(a), *bv = nn_f32_view(b), *cv = cc ? nn_f32_view(cc) : NULL;
		float *yv = nn_f32_out(y);
		nn_gemm_f32(m, n, k, av, ars, acs, bv, brs, bcs, yv, n, false);
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++) {
				float v = alpha * yv[i * n + j];
				yv[i * n + j] = cv ? v + beta * cv[i * cst[0] + j * cst[1]] : v;
			}
		nn_f32_commit(y, yv);
		nn_f32_release(a, av);
		nn_f32_release(b, bv);
		nn_f32_release(cc, cv);
	} else {
		uint64_t *acc = nn_alloc(sizeof(uint64_t) * (size_t)(m * n));
		gemm_int(a, 0, ars, acs, b, 0, brs, bcs, m, n, k, acc);
		bool integral = alpha == 1.0f && beta == 1.0f;
		bool uns = ev_is_unsigned_int(a->dtype);
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++) {
				int64_t at = i * n + j, ci = i * cst[0] + j * cst[1];
				if (integral) {
					uint64_t v = acc[at];
					if (cc)
						v += uns ? ev_get_u(cc, ci) : (uint64_t)ev_get_i(cc, ci);
					store_int(y, at, v);
				} else {
					/* fractional alpha/beta on integers: computed in double, truncated */
					double v = alpha * (uns ? (double)acc[at] : (double)(int64_t)acc[at]);
					if (cc)
						v += beta * ev_get_f(cc, ci);
					ev_set_f(y, at, v);
				}
			}
		free(acc);
	}
	out[0] = y;
	return true;
}

/* ---- MatMulInteger, QLinearMatMul --------------------------------------------- */

/* Zero points: a scalar, or one per row of A (per column of B), possibly
 * carrying unit dims ([.., M, 1] / [.., 1, N]) as the spec allows.  Returns
 * the zero point for row/column i of batch b. */
static int64_t zero_point(const EvValue *zp, int64_t i, int64_t per)
{
	if (!zp || zp->numel == 0)
		return 0;
	if (zp->numel == 1)
		return ev_get_i(zp, 0);
	return ev_get_i(zp, i % per);
}

static bool zp_ok(EvCtx *c, const EvValue *zp, int64_t per, const char *what)
{
	if (zp && zp->numel > 1 && zp->numel != per)
		return ev_fail(c, "%s has %lld elements, expected 1 or %lld", what, (long long)zp->numel, (long long)per);
	return true;
}

/* The int32 accumulators (x - xzp) . (w - wzp) of a batched product. */
static bool int_product(EvCtx *c, const EvValue *a, const EvValue *azp, const EvValue *b,
                        const EvValue *bzp, MatGeom *g, int32_t **acc)
{
	if (!ev_is_signed_int(a->dtype) && a->dtype != DT_UINT8)
		return ev_fail(c, "unsupported dtype %s for A", dtype_name(a->dtype));
	if (!ev_is_signed_int(b->dtype) && b->dtype != DT_UINT8)
		return ev_fail(c, "unsupported dtype %s for B", dtype_name(b->dtype));
	if (!matmul_geom(c, a, b, g))
		return false;
	if (!zp_ok(c, azp, g->m, "a_zero_point") || !zp_ok(c, bzp, g->n, "b_zero_point")) {
		geom_free(g);
		return false;
	}
	int64_t mn = g->m * g->n;
	int32_t *r = nn_alloc(sizeof(int32_t) * (size_t)(g->nbatch * mn));
	for (int64_t bt = 0; bt < g->nbatch; bt++)
		for (int64_t i = 0; i < g->m; i++) {
			int64_t az = zero_point(azp, i, g->m);
			for (int64_t j = 0; j < g->n; j++) {
				int64_t bz = zero_point(bzp, j, g->n);
				uint32_t s = 0;
				for (int64_t p = 0; p < g->k; p++) {
					int64_t av = ev_get_i(a, g->aoff[bt] + i * g->k + p) - az;
					int64_t bv = ev_get_i(b, g->boff[bt] + p * g->n + j) - bz;
					s += (uint32_t)(av * bv);
				}
				r[bt * mn + i * g->n + j] = (int32_t)s;
			}
		}
	*acc = r;
	return true;
}

static bool run_matmul_integer(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *a = in[0], *b = nin > 1 ? in[1] : NULL;
	if (!a || !b)
		return ev_fail(c, "needs inputs A and B");
	MatGeom g;
	int32_t *acc;
	if (!int_product(c, a, nin > 2 ? in[2] : NULL, b, nin > 3 ? in[3] : NULL, &g, &acc))
		return false;
	EvValue *y = nn_new(c, DT_INT32, g.rank, g.dims);
	if (y)
		memcpy(y->data, acc, sizeof(int32_t) * (size_t)y->numel);
	free(acc);
	geom_free(&g);
	out[0] = y;
	return y != NULL;
}

/* y = saturate(round_half_even(acc * (a_scale * b_scale / y_scale)) + y_zp),
 * the multiplier and product in float as ONNX Runtime computes them. */
static bool run_qlinear_matmul(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 8)
		return ev_fail(c, "needs 8 inputs");
	for (int i = 0; i < 8; i++)
		if (!in[i] && i != 2 && i != 5 && i != 7)
			return ev_fail(c, "missing input %d", i);
	const EvValue *ys = in[6], *yz = in[7];
	if (in[1]->numel != 1 || in[4]->numel != 1 || ys->numel != 1)
		return ev_fail(c, "only per-tensor scales are supported");
	MatGeom g;
	int32_t *acc;
	if (!int_product(c, in[0], in[2], in[3], in[5], &g, &acc))
		return false;
	int ydt = yz ? yz->dtype : DT_UINT8;
	EvValue *y = nn_new(c, ydt, g.rank, g.dims);
	if (!y) {
		free(acc);
		geom_free(&g);
		return false;
	}
	float mult = (float)ev_get_f(in[1], 0) * (float)ev_get_f(in[4], 0) / (float)ev_get_f(ys, 0);
	double zp = yz ? (double)ev_get_i(yz, 0) : 0;
	double lo = ydt == DT_UINT8 ? 0 : -128, hi = ydt == DT_UINT8 ? 255 : 127;
	for (int64_t i = 0; i < y->numel; i++) {
		double v = nearbyint((float)acc[i] * mult) + zp;
		ev_set_f(y, i, v < lo ? lo : v > hi ? hi : v);
	}
	free(acc);
	geom_free(&g);
	out[0] = y;
	return true;
}

const EvKernel ev_kernels_matmul[] = {
	EV_KERNEL(MatMul, run_matmul, NN_FLOATS | MM_INTS),
	EV_KERNEL(Gemm, run_gemm, NN_FLOATS | MM_INTS),
	EV_KERNEL(MatMulInteger, run_matmul_integer, NN_BIT(DT_INT8) | NN_BIT(DT_UINT8)),
	EV_KERNEL(QLinearMatMul, run_qlinear_matmul, NN_BIT(DT_INT8) | NN_BIT(DT_UINT8)),
	{0},
};
