/* unary.c - elementwise one-input kernels: math (Abs, Exp, Sqrt, Round...),
 * trigonometry, activations (Relu, Sigmoid, Gelu, Selu...), predicates
 * (IsNaN, IsInf) and bit/logic negation.
 *
 * Each op is one scalar function per domain (see ew_util.h): name_f on
 * double for the float types, name_s on int64 for signed and name_u on
 * uint64 for unsigned integers.  The macros below stamp out one tight row
 * loop per storage type from those, and a table indexed by dtype; a missing
 * table entry is a dtype the op does not take.  Float results are computed
 * in double and rounded once to the tensor's type: exact for the ops IEEE
 * defines (sqrt, 1/x, floor...), nearly correctly rounded for the rest. */
#include "ew_util.h"

#include <float.h>

#ifndef M_SQRT1_2
#define M_SQRT1_2 0.70710678118654752440
#endif
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* No restrict on the rows: o may be an input's own bytes (runtime/plan runs
 * these ops in place over an input that dies there); each row reads element
 * i before it writes element i, which is what makes that safe. */
typedef void (*EwRow1)(void *o, const void *x, int64_t n, const EwArgs *p);

/* ---- row generators ------------------------------------------------------ */

/* float types, through double */
#define ROW_F(A, DT, T, SUF, LD, ST) \
	static void A##_##SUF(void *o_, const void *x_, int64_t n, const EwArgs *p) \
	{ \
		T *o = o_; \
		const T *x = x_; \
		for (int64_t i = 0; i < n; i++) \
			o[i] = ST(A##_f(LD(x[i]), p)); \
	}
/* float types to bool (predicates) */
#define ROW_PF(A, DT, T, SUF, LD, ST) \
	static void A##_##SUF(void *o_, const void *x_, int64_t n, const EwArgs *p) \
	{ \
		uint8_t *o = o_; \
		const T *x = x_; \
		for (int64_t i = 0; i < n; i++) \
			o[i] = A##_f(LD(x[i]), p); \
	}
/* integers in their own domain (stores wrap) */
#define ROW_S(A, DT, T, SUF) \
	static void A##_##SUF(void *o_, const void *x_, int64_t n, const EwArgs *p) \
	{ \
		T *o = o_; \
		const T *x = x_; \
		for (int64_t i = 0; i < n; i++) \
			o[i] = (T)A##_s((int64_t)x[i], p); \
	}
#define ROW_U(A, DT, T, SUF) \
	static void A##_##SUF(void *o_, const void *x_, int64_t n, const EwArgs *p) \
	{ \
		T *o = o_; \
		const T *x = x_; \
		for (int64_t i = 0; i < n; i++) \
			o[i] = (T)A##_u((uint64_t)x[i], p); \
	}
/* integers through the double function (ops defined by real arithmetic,
 * like Shrink's float bias): truncate toward zero, then wrap */
#define ROW_SF(A, DT, T, SUF) \
	static void A##_##SUF(void *o_, const void *x_, int64_t n, const EwArgs *p) \
	{ \
		T *o = o_; \
		const T *x = x_; \
		for (int64_t i = 0; i < n; i++) \
			o[i] = (T)ew_d2s(A##_f((double)x[i], p)); \
	}
#define ROW_UF(A, DT, T, SUF) \
	static void A##_##SUF(void *o_, const void *x_, int64_t n, const EwArgs *p) \
	{ \
		T *o = o_; \
		const T *x = x_; \
		for (int64_t i = 0; i < n; i++) \
			o[i] = (T)ew_d2u(A##_f((double)x[i], p)); \
	}

#define ENT_F(A, DT, T, SUF, LD, ST) [DT] = A##_##SUF,
#define ENT_I(A, DT, T, SUF) [DT] = A##_##SUF,

/* An op on the float types only / floats and signed / all numeric types. */
#define OP_F(A) \
	EW_FLOAT_TYPES(ROW_F, A) \
	static const EwRow1 A##_rows[DT_COUNT] = { EW_FLOAT_TYPES(ENT_F, A) };
#define OP_FS(A) \
	EW_FLOAT_TYPES(ROW_F, A) EW_SINT_TYPES(ROW_S, A) \
	static const EwRow1 A##_rows[DT_COUNT] = { EW_FLOAT_TYPES(ENT_F, A) EW_SINT_TYPES(ENT_I, A) };
#define OP_FSU(A) \
	EW_FLOAT_TYPES(ROW_F, A) EW_SINT_TYPES(ROW_S, A) EW_UINT_TYPES(ROW_U, A) \
	static const EwRow1 A##_rows[DT_COUNT] = { EW_FLOAT_TYPES(ENT_F, A) EW_SINT_TYPES(ENT_I, A) \
	                                           EW_UINT_TYPES(ENT_I, A) };
/* all numeric types through the double function */
#define OP_FVIA(A) \
	EW_FLOAT_TYPES(ROW_F, A) EW_SINT_TYPES(ROW_SF, A) EW_UINT_TYPES(ROW_UF, A) \
	static const EwRow1 A##_rows[DT_COUNT] = { EW_FLOAT_TYPES(ENT_F, A) EW_SINT_TYPES(ENT_I, A) \
	                                           EW_UINT_TYPES(ENT_I, A) };
#define OP_PRED(A) \
	EW_FLOAT_TYPES(ROW_PF, A) \
	static const EwRow1 A##_rows[DT_COUNT] = { EW_FLOAT_TYPES(ENT_F, A) };

/* ---- the scalar functions ------------------------------------------------ */

static inline double abs_f(double x, const EwArgs *p) { return fabs(x); }
static inline int64_t abs_s(int64_t x, const EwArgs *p) { return x < 0 ? (int64_t)(0 - (uint64_t)x) : x; }
static inline uint64_t abs_u(uint64_t x, const EwArgs *p) { return x; }
OP_FSU(abs)

static inline double neg_f(double x, const EwArgs *p) { return -x; }
static inline int64_t neg_s(int64_t x, const EwArgs *p) { return (int64_t)(0 - (uint64_t)x); }
OP_FS(neg)

/* numpy's sign: 0 for both zeros, NaN stays NaN */
static inline double sign_f(double x, const EwArgs *p) { return x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x; }
static inline int64_t sign_s(int64_t x, const EwArgs *p) { return (x > 0) - (x < 0); }
static inline uint64_t sign_u(uint64_t x, const EwArgs *p) { return x != 0; }
OP_FSU(sign)

static inline double relu_f(double x, const EwArgs *p) { return x < 0 ? 0 : x; }
static inline int64_t relu_s(int64_t x, const EwArgs *p) { return x < 0 ? 0 : x; }
OP_FS(relu)

static inline double exp_f(double x, const EwArgs *p) { return exp(x); }
static inline double log_f(double x, const EwArgs *p) { return log(x); }
static inline double sqrt_f(double x, const EwArgs *p) { return sqrt(x); }
static inline double recip_f(double x, const EwArgs *p) { return 1.0 / x; }
static inline double floor_f(double x, const EwArgs *p) { return floor(x); }
static inline double ceil_f(double x, const EwArgs *p) { return ceil(x); }
/* halves to even, as ONNX specifies (the default rounding mode) */
static inline double round_f(double x, const EwArgs *p) { return nearbyint(x); }
OP_F(exp) OP_F(log) OP_F(sqrt) OP_F(recip) OP_F(floor) OP_F(ceil) OP_F(round)

static inline double erf_f(double x, const EwArgs *p) { return erf(x); }
OP_FVIA(erf)

static inline double sin_f(double x, const EwArgs *p) { return sin(x); }
static inline double cos_f(double x, const EwArgs *p) { return cos(x); }
static inline double tan_f(double x, const EwArgs *p) { return tan(x); }
static inline double asin_f(double x, const EwArgs *p) { return asin(x); }
static inline double acos_f(double x, const EwArgs *p) { return acos(x); }
static inline double atan_f(double x, const EwArgs *p) { return atan(x); }
static inline double sinh_f(double x, const EwArgs *p) { return sinh(x); }
static inline double cosh_f(double x, const EwArgs *p) { return cosh(x); }
static inline double asinh_f(double x, const EwArgs *p) { return asinh(x); }
static inline double acosh_f(double x, const EwArgs *p) { return acosh(x); }
static inline double atanh_f(double x, const EwArgs *p) { return atanh(x); }
static inline double tanh_f(double x, const EwArgs *p) { return tanh(x); }
OP_F(sin) OP_F(cos) OP_F(tan) OP_F(asin) OP_F(acos) OP_F(atan)
OP_F(sinh) OP_F(cosh) OP_F(asinh) OP_F(acosh) OP_F(atanh) OP_F(tanh)

static inline double sigmoid_f(double x, const EwArgs *p) { return ew_sigmoid(x); }
OP_F(sigmoid)

static inline double leaky_f(double x, const EwArgs *p) { return x < 0 ? p->alpha * x : x; }
static inline double elu_f(double x, const EwArgs *p) { return x < 0 ? p->alpha * expm1(x) : x; }
static inline double selu_f(double x, const EwArgs *p)
{
	return x <= 0 ? p->gamma * (p->alpha * expm1(x)) : p->gamma * x;
}
/* max(0,x) + min(0, alpha*(exp(x/alpha)-1)), with NaN kept */
static inline double celu_f(double x, const EwArgs *p) { return x > 0 ? x : p->alpha * expm1(x / p->alpha); }
static inline double hsig_f(double x, const EwArgs *p)
{
	double v = p->alpha * x + p->beta;
	return v < 0 ? 0 : v > 1 ? 1 : v;
}
static inline double hswish_f(double x, const EwArgs *p)
{
	double v = x / 6 + 0.5;
	return x * (v < 0 ? 0 : v > 1 ? 1 : v);
}
/* log(1 + exp(x)) without overflow */
static inline double softplus_d(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static inline double softplus_f(double x, const EwArgs *p) { return softplus_d(x); }
static inline double softsign_f(double x, const EwArgs *p) { return x / (1 + fabs(x)); }
static inline double gelu_f(double x, const EwArgs *p)
{
	if (p->flag) /* approximate = "tanh" */
		return ew_gelu_tanh(x);
	return 0.5 * x * (1 + erf(x * M_SQRT1_2));
}
static inline double mish_f(double x, const EwArgs *p) { return x * tanh(softplus_d(x)); }
static inline double threlu_f(double x, const EwArgs *p) { return x > p->alpha ? x : 0; }
OP_F(leaky) OP_F(elu) OP_F(selu) OP_F(celu) OP_F(hsig) OP_F(hswish) OP_F(softplus)
OP_F(softsign) OP_F(gelu) OP_F(mish) OP_F(threlu)

static inline double shrink_f(double x, const EwArgs *p)
{
	return x < -p->lambd ? x + p->bias : x > p->lambd ? x - p->bias : 0;
}
OP_FVIA(shrink)

static inline bool isnan_f(double x, const EwArgs *p) { return isnan(x); }
static inline bool isinf_f(double x, const EwArgs *p)
{
	return isinf(x) && (x > 0 ? p->flag != 0 : p->flag2 != 0); /* detect_positive, detect_negative */
}
OP_PRED(isnan) OP_PRED(isinf)

static inline int64_t bnot_s(int64_t x, const EwArgs *p) { return ~x; }
static inline uint64_t bnot_u(uint64_t x, const EwArgs *p) { return ~x; }
EW_SINT_TYPES(ROW_S, bnot) EW_UINT_TYPES(ROW_U, bnot)
static const EwRow1 bnot_rows[DT_COUNT] = { EW_SINT_TYPES(ENT_I, bnot) EW_UINT_TYPES(ENT_I, bnot) };

static void not_b(void *o_, const void *x_, int64_t n, const EwArgs *p)
{
	uint8_t *o = o_;
	const uint8_t *x = x_;
	for (int64_t i = 0; i < n; i++)
		o[i] = !x[i];
}
static const EwRow1 not_rows[DT_COUNT] = { [DT_BOOL] = not_b };

/* ---- the driver ---------------------------------------------------------- */

/* out[0] = rows[dtype](in[0]); out_dtype 0 means the input's type. */
static bool unary(EvCtx *c, EvValue **in, int nin, EvValue **out, const EwRow1 *rows, int out_dtype,
                  const EwArgs *p)
{
	if (!ew_need(c, in, nin, 0))
		return false;
	const EvValue *x = in[0];
	if (x->dtype <= 0 || x->dtype >= DT_COUNT || !rows[x->dtype])
		return ev_fail(c, "%s does not take %s tensors", ew_op(c), dtype_name(x->dtype));
	EvValue *y = ew_new(c, out_dtype ? out_dtype : x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	rows[x->dtype](y->data, x->data, x->numel, p);
	out[0] = y;
	return true;
}

#define SIMPLE(Name, rows) \
	static bool k_##Name(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout) \
	{ \
		EwArgs p = {0}; \
		return unary(c, in, nin, out, rows, 0, &p); \
	}
SIMPLE(Abs, abs_rows) SIMPLE(Neg, neg_rows) SIMPLE(Sign, sign_rows) SIMPLE(Relu, relu_rows)
SIMPLE(Exp, exp_rows) SIMPLE(Log, log_rows) SIMPLE(Sqrt, sqrt_rows) SIMPLE(Reciprocal, recip_rows)
SIMPLE(Floor, floor_rows) SIMPLE(Ceil, ceil_rows) SIMPLE(Round, round_rows) SIMPLE(Erf, erf_rows)
SIMPLE(Sin, sin_rows) SIMPLE(Cos, cos_rows) SIMPLE(Tan, tan_rows) SIMPLE(Asin, asin_rows)
SIMPLE(Acos, acos_rows) SIMPLE(Atan, atan_rows) SIMPLE(Sinh, sinh_rows) SIMPLE(Cosh, cosh_rows)
SIMPLE(Asinh, asinh_rows) SIMPLE(Acosh, acosh_rows) SIMPLE(Atanh, atanh_rows)
SIMPLE(Tanh, tanh_rows) SIMPLE(Sigmoid, sigmoid_rows) SIMPLE(HardSwish, hswish_rows)
SIMPLE(Softplus, softplus_rows) SIMPLE(Softsign, softsign_rows) SIMPLE(Mish, mish_rows)
SIMPLE(Not, not_rows) SIMPLE(BitwiseNot, bnot_rows)

/* Attributes are float32 in ONNX; the defaults below are the schema's. */
static bool k_LeakyRelu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = { .alpha = ev_attr_float(c, "alpha", 0.01f) };
	return unary(c, in, nin, out, leaky_rows, 0, &p);
}

static bool k_Elu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = { .alpha = ev_attr_float(c, "alpha", 1.0f) };
	return unary(c, in, nin, out, elu_rows, 0, &p);
}

static bool k_Selu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = { .alpha = ev_attr_float(c, "alpha", 1.67326319217681884765625f),
	             .gamma = ev_attr_float(c, "gamma", 1.05070102214813232421875f) };
	return unary(c, in, nin, out, selu_rows, 0, &p);
}

static bool k_Celu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = { .alpha = ev_attr_float(c, "alpha", 1.0f) };
	if (p.alpha == 0)
		return ev_fail(c, "Celu: alpha must not be 0");
	return unary(c, in, nin, out, celu_rows, 0, &p);
}

static bool k_HardSigmoid(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = { .alpha = ev_attr_float(c, "alpha", 0.2f), .beta = ev_attr_float(c, "beta", 0.5f) };
	return unary(c, in, nin, out, hsig_rows, 0, &p);
}

static bool k_ThresholdedRelu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = { .alpha = ev_attr_float(c, "alpha", 1.0f) };
	return unary(c, in, nin, out, threlu_rows, 0, &p);
}

static bool k_Shrink(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = { .lambd = ev_attr_float(c, "lambd", 0.5f), .bias = ev_attr_float(c, "bias", 0.0f) };
	return unary(c, in, nin, out, shrink_rows, 0, &p);
}

static bool k_Gelu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	char buf[16];
	const char *a = ev_attr_string(c, "approximate", "none", buf, sizeof buf);
	EwArgs p = {0};
	if (strcmp(a, "tanh") == 0)
		p.flag = 1;
	else if (strcmp(a, "none") != 0)
		return ev_fail(c, "Gelu: unknown approximate '%s'", a);
	return unary(c, in, nin, out, gelu_rows, 0, &p);
}

static bool k_IsNaN(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = {0};
	return unary(c, in, nin, out, isnan_rows, DT_BOOL, &p);
}

static bool k_IsInf(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = { .flag = ev_attr_int(c, "detect_positive", 1), .flag2 = ev_attr_int(c, "detect_negative", 1) };
	return unary(c, in, nin, out, isinf_rows, DT_BOOL, &p);
}

#define F EW_MASK_F
#define S EW_MASK_S
#define U EW_MASK_U
const EvKernel ev_kernels_unary[] = {
	EV_KERNEL(Abs, k_Abs, F | S | U),
	EV_KERNEL(Neg, k_Neg, F | S),
	EV_KERNEL(Sign, k_Sign, F | S | U),
	EV_KERNEL(Relu, k_Relu, F | S),
	EV_KERNEL(Exp, k_Exp, F),
	EV_KERNEL(Log, k_Log, F),
	EV_KERNEL(Sqrt, k_Sqrt, F),
	EV_KERNEL(Reciprocal, k_Reciprocal, F),
	EV_KERNEL(Floor, k_Floor, F),
	EV_KERNEL(Ceil, k_Ceil, F),
	EV_KERNEL(Round, k_Round, F),
	EV_KERNEL(Erf, k_Erf, F | S | U),
	EV_KERNEL(Sin, k_Sin, F),
	EV_KERNEL(Cos, k_Cos, F),
	EV_KERNEL(Tan, k_Tan, F),
	EV_KERNEL(Asin, k_Asin, F),
	EV_KERNEL(Acos, k_Acos, F),
	EV_KERNEL(Atan, k_Atan, F),
	EV_KERNEL(Sinh, k_Sinh, F),
	EV_KERNEL(Cosh, k_Cosh, F),
	EV_KERNEL(Asinh, k_Asinh, F),
	EV_KERNEL(Acosh, k_Acosh, F),
	EV_KERNEL(Atanh, k_Atanh, F),
	EV_KERNEL(Tanh, k_Tanh, F),
	EV_KERNEL(Sigmoid, k_Sigmoid, F),
	EV_KERNEL(LeakyRelu, k_LeakyRelu, F),
	EV_KERNEL(Elu, k_Elu, F),
	EV_KERNEL(Selu, k_Selu, F),
	EV_KERNEL(Celu, k_Celu, F),
	EV_KERNEL(HardSigmoid, k_HardSigmoid, F),
	EV_KERNEL(HardSwish, k_HardSwish, F),
	EV_KERNEL(Softplus, k_Softplus, F),
	EV_KERNEL(Softsign, k_Softsign, F),
	EV_KERNEL(Gelu, k_Gelu, F),
	EV_KERNEL(Mish, k_Mish, F),
	EV_KERNEL(Shrink, k_Shrink, F | S | U),
	EV_KERNEL(ThresholdedRelu, k_ThresholdedRelu, F),
	EV_KERNEL(IsNaN, k_IsNaN, F),
	EV_KERNEL(IsInf, k_IsInf, F),
	EV_KERNEL(Not, k_Not, EW_MASK_B),
	EV_KERNEL(BitwiseNot, k_BitwiseNot, S | U),
	{0},
};
