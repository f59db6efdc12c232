/* binary.c - elementwise kernels of two or more inputs with numpy-style
 * broadcasting: arithmetic (Add, Sub, Mul, Div, Mod, Pow), the variadic
 * Sum/Mean/Max/Min, comparisons, logic and bitwise ops, BitShift, PRelu,
 * Where and Clip.
 *
 * As in unary.c, each op is a scalar function per domain (ew_util.h) from
 * which macros generate one row loop per storage type and a table by dtype.
 * A row is one run of the innermost (coalesced) output dimension; an input's
 * stride along it is 1, or 0 where it is broadcast.
 *
 * Defined where C is not: integer overflow wraps (arithmetic goes through
 * uint64), INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0; integer
 * division or modulo by zero fails the node with a message (numpy gives 0
 * and a warning, ONNX Runtime crashes: neither is a value to fold into a
 * model).  Max and Min propagate NaN as numpy.maximum does; which zero they
 * return for +0 against -0 is said at max_f. */
#include "ew_util.h"

#include <float.h>
#include <stdlib.h>

/* No restrict on the rows: o may be an input's own bytes (runtime/plan runs
 * these ops in place over an input that dies there); each row reads element
 * i before it writes element i, which is what makes that safe. */
typedef void (*EwRow2)(void *o, const void *a, const void *b, int64_t n, int64_t sa, int64_t sb,
                       EwArgs *p);

/* ---- row generators ------------------------------------------------------ */

/* LOOP2 runs EXPR (over the loaded elements x and y) for a row, with
 * separate loops the compiler can vectorize for unit strides and for one
 * side broadcast (a weight times a per-channel factor, folding Conv+BN). */
#define LOOP2(EXPR) \
	if (sa == 1 && sb == 1) \
		for (int64_t i = 0; i < n; i++) { \
			TL x = a[i], y = b[i]; \
			o[i] = EXPR; \
		} \
	else if (sa == 1 && sb == 0) \
		for (int64_t i = 0; i < n; i++) { \
			TL x = a[i], y = b[0]; \
			o[i] = EXPR; \
		} \
	else if (sa == 0 && sb == 1) \
		for (int64_t i = 0; i < n; i++) { \
			TL x = a[0], y = b[i]; \
			o[i] = EXPR; \
		} \
	else \
		for (int64_t i = 0; i < n; i++) { \
			TL x = a[i * sa], y = b[i * sb]; \
			o[i] = EXPR; \
		}

#define ROW_F(A, DT, T, SUF, LD, ST) \
	static void A##_##SUF(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa, \
	                      int64_t sb, EwArgs *p) \
	{ \
		typedef T TL; \
		T *o = o_; \
		const T *a = a_, *b = b_; \
		LOOP2(ST(A##_f(LD(x), LD(y), p))) \
	}
#define ROW_S(A, DT, T, SUF) \
	static void A##_##SUF(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa, \
	                      int64_t sb, EwArgs *p) \
	{ \
		typedef T TL; \
		T *o = o_; \
		const T *a = a_, *b = b_; \
		LOOP2((T)A##_s((int64_t)x, (int64_t)y, p)) \
	}
#define ROW_U(A, DT, T, SUF) \
	static void A##_##SUF(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa, \
	                      int64_t sb, EwArgs *p) \
	{ \
		typedef T TL; \
		T *o = o_; \
		const T *a = a_, *b = b_; \
		LOOP2((T)A##_u((uint64_t)x, (uint64_t)y, p)) \
	}
/* comparisons: bool out */
#define ROW_CF(A, DT, T, SUF, LD, ST) \
	static void A##_##SUF(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa, \
	                      int64_t sb, EwArgs *p) \
	{ \
		typedef T TL; \
		uint8_t *o = o_; \
		const T *a = a_, *b = b_; \
		LOOP2(A##_f(LD(x), LD(y))) \
	}
#define ROW_CS(A, DT, T, SUF) \
	static void A##_##SUF(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa, \
	                      int64_t sb, EwArgs *p) \
	{ \
		typedef T TL; \
		uint8_t *o = o_; \
		const T *a = a_, *b = b_; \
		LOOP2(A##_s((int64_t)x, (int64_t)y)) \
	}
#define ROW_CU(A, DT, T, SUF) \
	static void A##_##SUF(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa, \
	                      int64_t sb, EwArgs *p) \
	{ \
		typedef T TL; \
		uint8_t *o = o_; \
		const T *a = a_, *b = b_; \
		LOOP2(A##_u((uint64_t)x, (uint64_t)y)) \
	}

#define ENT_F(A, DT, T, SUF, LD, ST) [DT] = A##_##SUF,
#define ENT_I(A, DT, T, SUF) [DT] = A##_##SUF,

#define OP_FSU(A) \
	EW_FLOAT_TYPES(ROW_F, A) EW_SINT_TYPES(ROW_S, A) EW_UINT_TYPES(ROW_U, A) \
	static const EwRow2 A##_rows[DT_COUNT] = { EW_FLOAT_TYPES(ENT_F, A) EW_SINT_TYPES(ENT_I, A) \
	                                           EW_UINT_TYPES(ENT_I, A) };
#define OP_SU(A) \
	EW_SINT_TYPES(ROW_S, A) EW_UINT_TYPES(ROW_U, A) \
	static const EwRow2 A##_rows[DT_COUNT] = { EW_SINT_TYPES(ENT_I, A) EW_UINT_TYPES(ENT_I, A) };
#define OP_U(A) \
	EW_UINT_TYPES(ROW_U, A) \
	static const EwRow2 A##_rows[DT_COUNT] = { EW_UINT_TYPES(ENT_I, A) };
/* comparisons over every numeric type and bool */
#define OP_CMP(A) \
	EW_FLOAT_TYPES(ROW_CF, A) EW_SINT_TYPES(ROW_CS, A) EW_UINT_TYPES(ROW_CU, A) \
	ROW_CU(A, DT_BOOL, uint8_t, b) \
	static const EwRow2 A##_rows[DT_COUNT] = { EW_FLOAT_TYPES(ENT_F, A) EW_SINT_TYPES(ENT_I, A) \
	                                           EW_UINT_TYPES(ENT_I, A) [DT_BOOL] = A##_b };
/* logic on bool */
#define OP_BOOL(A) \
	ROW_U(A, DT_BOOL, uint8_t, b) \
	static const EwRow2 A##_rows[DT_COUNT] = { [DT_BOOL] = A##_b };

/* ---- the scalar functions ------------------------------------------------ */

static inline double add_f(double a, double b, EwArgs *p) { return a + b; }
static inline int64_t add_s(int64_t a, int64_t b, EwArgs *p) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline uint64_t add_u(uint64_t a, uint64_t b, EwArgs *p) { return a + b; }
static inline double sub_f(double a, double b, EwArgs *p) { return a - b; }
static inline int64_t sub_s(int64_t a, int64_t b, EwArgs *p) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline uint64_t sub_u(uint64_t a, uint64_t b, EwArgs *p) { return a - b; }
static inline double mul_f(double a, double b, EwArgs *p) { return a * b; }
static inline int64_t mul_s(int64_t a, int64_t b, EwArgs *p) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline uint64_t mul_u(uint64_t a, uint64_t b, EwArgs *p) { return a * b; }
OP_FSU(add) OP_FSU(sub) OP_FSU(mul)

/* Integer division truncates toward zero, as C and ONNX Runtime do (numpy
 * floors; ONNX's tests use only non-negative operands). */
static inline double div_f(double a, double b, EwArgs *p) { return a / b; }
static inline int64_t div_s(int64_t a, int64_t b, EwArgs *p)
{
	if (b == 0) {
		p->err = 1;
		return 0;
	}
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a); /* INT64_MIN / -1 wraps */
	return a / b;
}
static inline uint64_t div_u(uint64_t a, uint64_t b, EwArgs *p)
{
	if (b == 0) {
		p->err = 1;
		return 0;
	}
	return a / b;
}
OP_FSU(div)

/* Mod: fmod=1 takes the dividend's sign (C's fmod and %); fmod=0 the
 * divisor's (Python's %).  ONNX asks floats to set fmod=1; for fmod=0 we
 * give numpy.mod's answer rather than refuse. */
static inline double mod_f(double a, double b, EwArgs *p)
{
	double r = fmod(a, b);
	if (!p->flag && r != 0 && (r < 0) != (b < 0))
		r += b;
	return r;
}
static inline int64_t mod_s(int64_t a, int64_t b, EwArgs *p)
{
	if (b == 0) {
		p->err = 1;
		return 0;
	}
	if (b == -1)
		return 0;
	int64_t r = a % b;
	if (!p->flag && r != 0 && (r < 0) != (b < 0))
		r += b;
	return r;
}
static inline uint64_t mod_u(uint64_t a, uint64_t b, EwArgs *p)
{
	if (b == 0) {
		p->err = 1;
		return 0;
	}
	return a % b;
}
OP_FSU(mod)

/* Max, Min: a NaN operand wins (numpy.maximum, ONNX Runtime).  Equal
 * operands differ only for floats, +0 against -0, and there ONNX Runtime has
 * no one answer (docs/evaluator.md): its vectorized loop returns Eigen's
 * second operand, its scalar tail (the last n mod 4 or 8 elements) the first.
 * graft follows the vectorized loop: for float32 and float64 the zero of the
 * operand broadcast along the row, if just one is, else the second
 * operand's; for float16 and bfloat16 (a loop of its own in ONNX Runtime)
 * the other one; a one-element result the second's.  p->flag says "a wins
 * a tie", set per row by MINMAX_ROW. */
static inline double max_f(double a, double b, EwArgs *p) { return a != a ? a : b != b ? b : a > b ? a : b > a ? b : p->flag ? a : b; }
static inline int64_t max_s(int64_t a, int64_t b, EwArgs *p) { return a >= b ? a : b; }
static inline uint64_t max_u(uint64_t a, uint64_t b, EwArgs *p) { return a >= b ? a : b; }
static inline double min_f(double a, double b, EwArgs *p) { return a != a ? a : b != b ? b : a < b ? a : b < a ? b : p->flag ? a : b; }
static inline int64_t min_s(int64_t a, int64_t b, EwArgs *p) { return a <= b ? a : b; }
static inline uint64_t min_u(uint64_t a, uint64_t b, EwArgs *p) { return a <= b ? a : b; }
#define MINMAX_ROW(A, DT, T, SUF, LD, ST) \
	static void A##_##SUF(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa, \
	                      int64_t sb, EwArgs *p) \
	{ \
		typedef T TL; \
		T *o = o_; \
		const T *a = a_, *b = b_; \
		bool a_broadcast = sa == 0 && sb != 0; \
		p->flag = n > 1 && (DT == DT_FLOAT || DT == DT_DOUBLE ? a_broadcast : !a_broadcast); \
		LOOP2(ST(A##_f(LD(x), LD(y), p))) \
	}
#define OP_MINMAX(A) \
	EW_FLOAT_TYPES(MINMAX_ROW, A) EW_SINT_TYPES(ROW_S, A) EW_UINT_TYPES(ROW_U, A) \
	static const EwRow2 A##_rows[DT_COUNT] = { EW_FLOAT_TYPES(ENT_F, A) EW_SINT_TYPES(ENT_I, A) \
	                                           EW_UINT_TYPES(ENT_I, A) };
OP_MINMAX(max) OP_MINMAX(min)

/* PRelu: the slope (y) multiplies negative x */
static inline double prelu_f(double a, double b, EwArgs *p) { return a < 0 ? b * a : a; }
static inline int64_t prelu_s(int64_t a, int64_t b, EwArgs *p) { return a < 0 ? mul_s(a, b, p) : a; }
static inline uint64_t prelu_u(uint64_t a, uint64_t b, EwArgs *p) { return a; }
OP_FSU(prelu)

#define CMP(A, OP) \
	static inline bool A##_f(double a, double b) { return a OP b; } \
	static inline bool A##_s(int64_t a, int64_t b) { return a OP b; } \
	static inline bool A##_u(uint64_t a, uint64_t b) { return a OP b; } \
	OP_CMP(A)
CMP(eq, ==) CMP(gt, >) CMP(lt, <) CMP(ge, >=) CMP(le, <=)

static inline uint64_t and_u(uint64_t a, uint64_t b, EwArgs *p) { return a && b; }
static inline uint64_t or_u(uint64_t a, uint64_t b, EwArgs *p) { return a || b; }
static inline uint64_t xor_u(uint64_t a, uint64_t b, EwArgs *p) { return !a != !b; }
OP_BOOL(and) OP_BOOL(or) OP_BOOL(xor)

static inline int64_t band_s(int64_t a, int64_t b, EwArgs *p) { return a & b; }
static inline uint64_t band_u(uint64_t a, uint64_t b, EwArgs *p) { return a & b; }
static inline int64_t bor_s(int64_t a, int64_t b, EwArgs *p) { return a | b; }
static inline uint64_t bor_u(uint64_t a, uint64_t b, EwArgs *p) { return a | b; }
static inline int64_t bxor_s(int64_t a, int64_t b, EwArgs *p) { return a ^ b; }
static inline uint64_t bxor_u(uint64_t a, uint64_t b, EwArgs *p) { return a ^ b; }
OP_SU(band) OP_SU(bor) OP_SU(bxor)

/* BitShift: shifting by the width or more gives 0 (C leaves it undefined);
 * the narrow store drops the bits shifted out on the left. */
static inline uint64_t shift_u(uint64_t a, uint64_t b, EwArgs *p)
{
	if (b >= 64)
		return 0;
	return p->flag ? a >> b : a << b;
}
OP_U(shift)

/* ---- drivers ------------------------------------------------------------- */

static bool check_tensor(EvCtx *c, const EvValue *v, int i)
{
	if (!v)
		return ev_fail(c, "%s: input %d is missing", ew_op(c), i);
	if (v->kind != EV_TENSOR)
		return ev_fail(c, "%s: input %d is not a tensor", ew_op(c), i);
	return true;
}

static bool row_for(EvCtx *c, const void *const *rows, int dtype)
{
	if (dtype <= 0 || dtype >= DT_COUNT || !rows[dtype])
		return ev_fail(c, "%s does not take %s tensors", ew_op(c), dtype_name(dtype));
	return true;
}

static bool bcast(EvCtx *c, const EvValue *a, const EvValue *b, int *rank, int64_t *dims)
{
	char sa[128], sb[128];
	if (!ev_broadcast_shape(a->rank, a->dims, b->rank, b->dims, rank, dims))
		return ev_fail(c, "%s: shapes %s and %s do not broadcast", ew_op(c), ew_shape_str(a, sa, sizeof sa),
		               ew_shape_str(b, sb, sizeof sb));
	return true;
}

/* y = row(a, b) over the broadcast of a and b; y is already allocated. */
static void apply2(EvValue *y, const EvValue *a, const EvValue *b, EwRow2 row, EwArgs *p)
{
	const EvValue *ins[2] = {a, b};
	EwIter it;
	ew_iter_init(&it, y->rank, y->dims, 2, ins);
	size_t ey = ev_elem_size(y->dtype), ea = ev_elem_size(a->dtype), eb = ev_elem_size(b->dtype);
	int64_t sa = ew_iter_step(&it, 0), sb = ew_iter_step(&it, 1);
	for (int64_t r = 0; r < it.nrows; r++) {
		row((char *)y->data + (size_t)(r * it.n) * ey, (const char *)a->data + (size_t)it.off[0] * ea,
		    (const char *)b->data + (size_t)it.off[1] * eb, it.n, sa, sb, p);
		ew_iter_next(&it);
	}
}

/* A new tensor: rows[dtype](a, b) broadcast; bool output for comparisons. */
static EvValue *binary(EvCtx *c, const EvValue *a, const EvValue *b, const EwRow2 *rows, bool to_bool, EwArgs *p)
{
	if (a->dtype != b->dtype) {
		ev_fail(c, "%s: input types differ (%s and %s)", ew_op(c), dtype_name(a->dtype), dtype_name(b->dtype));
		return NULL;
	}
	if (!row_for(c, (const void *const *)rows, a->dtype))
		return NULL;
	int rank;
	int64_t dims[EV_MAX_RANK];
	if (!bcast(c, a, b, &rank, dims))
		return NULL;
	EvValue *y = ew_new_ex(c, to_bool ? DT_BOOL : a->dtype, rank, dims, true); /* apply2 writes every row */
	if (!y)
		return NULL;
	apply2(y, a, b, rows[a->dtype], p);
	if (p->err) {
		ev_unref(y);
		ev_fail(c, "%s: integer division by zero", ew_op(c));
		return NULL;
	}
	return y;
}

/* Before opset 7, broadcast = 1 with an axis aligns B with A from that axis
 * on: B (a view) gets trailing 1-dims for numpy's rule. */
static bool legacy_align(EvCtx *c, const EvValue *a, EvValue *b)
{
	int64_t axis = ev_attr_int(c, "axis", -1);
	if (c->opset >= 7 || !ev_attr_int(c, "broadcast", 0) || axis < 0)
		return true;
	if (axis + b->rank > a->rank)
		return ev_fail(c, "%s: broadcast axis %lld does not fit a rank-%d B in a rank-%d A", ew_op(c),
		               (long long)axis, b->rank, a->rank);
	while (b->rank < a->rank - axis)
		b->dims[b->rank++] = 1;
	return true;
}

static bool two(EvCtx *c, EvValue **in, int nin, EvValue **out, const EwRow2 *rows, bool to_bool, EwArgs *p)
{
	if (nin < 2)
		return ev_fail(c, "%s takes two inputs", ew_op(c));
	if (!check_tensor(c, in[0], 0) || !check_tensor(c, in[1], 1))
		return false;
	EvValue b = *in[1];
	if (!legacy_align(c, in[0], &b))
		return false;
	out[0] = binary(c, in[0], &b, rows, to_bool, p);
	return out[0] != NULL;
}

bool ev_arith_row(int op_kind, int dtype, void *o, const void *a, const void *b, int64_t n, int64_t sa, int64_t sb)
{
	const EwRow2 *rows = op_kind == OP_Add ? add_rows : op_kind == OP_Sub ? sub_rows
	                   : op_kind == OP_Mul ? mul_rows : op_kind == OP_Div ? div_rows : NULL;
	if (!rows || !ev_is_float(dtype) || dtype <= 0 || dtype >= DT_COUNT || !rows[dtype])
		return false;
	EwArgs p = {0};
	rows[dtype](o, a, b, n, sa, sb, &p);
	return true;
}

#define TWO(Name, rows, to_bool) \
	static bool k_##Name(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout) \
	{ \
		EwArgs p = {0}; \
		return two(c, in, nin, out, rows, to_bool, &p); \
	}
TWO(Add, add_rows, false) TWO(Sub, sub_rows, false) TWO(Mul, mul_rows, false) TWO(Div, div_rows, false)
TWO(Greater, gt_rows, true) TWO(Less, lt_rows, true)
TWO(GreaterOrEqual, ge_rows, true) TWO(LessOrEqual, le_rows, true)
TWO(And, and_rows, false) TWO(Or, or_rows, false) TWO(Xor, xor_rows, false)
TWO(BitwiseAnd, band_rows, false) TWO(BitwiseOr, bor_rows, false) TWO(BitwiseXor, bxor_rows, false)

static bool k_Mod(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = { .flag = ev_attr_int(c, "fmod", 0) };
	return two(c, in, nin, out, mod_rows, false, &p);
}

static bool k_BitShift(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	char buf[16];
	const char *dir = ev_attr_string(c, "direction", "", buf, sizeof buf);
	EwArgs p = {0};
	if (strcmp(dir, "RIGHT") == 0)
		p.flag = 1;
	else if (strcmp(dir, "LEFT") != 0)
		return ev_fail(c, "BitShift: direction must be LEFT or RIGHT, not '%s'", dir);
	return two(c, in, nin, out, shift_rows, false, &p);
}

/* Equal also compares strings (opset 19). */
static bool k_Equal(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = {0};
	if (nin < 2)
		return ev_fail(c, "Equal takes two inputs");
	if (!check_tensor(c, in[0], 0) || !check_tensor(c, in[1], 1))
		return false;
	const EvValue *a = in[0], *b = in[1];
	if (a->dtype != DT_STRING || b->dtype != DT_STRING)
		return two(c, in, nin, out, eq_rows, true, &p);
	int rank;
	int64_t dims[EV_MAX_RANK];
	if (!bcast(c, a, b, &rank, dims))
		return false;
	EvValue *y = ew_new(c, DT_BOOL, rank, dims);
	if (!y)
		return false;
	const EvValue *ins[2] = {a, b};
	EwIter it;
	ew_iter_init(&it, rank, dims, 2, ins);
	char *const *sa = a->data, *const *sb = b->data;
	uint8_t *o = y->data;
	int64_t da = ew_iter_step(&it, 0), db = ew_iter_step(&it, 1);
	for (int64_t r = 0; r < it.nrows; r++) {
		for (int64_t i = 0; i < it.n; i++) {
			const char *x = sa[it.off[0] + i * da], *z = sb[it.off[1] + i * db];
			*o++ = strcmp(x ? x : "", z ? z : "") == 0;
		}
		ew_iter_next(&it);
	}
	out[0] = y;
	return true;
}

/* PRelu: X and the slope broadcast both ways (opset 7 on), as ONNX Runtime
 * runs it: the spec has the slope broadcast to X's shape, but ORT's kernel
 * takes a scalar X with a [1] slope and gives [1] (docs/evaluator.md).  Before
 * opset 7 a slope of C values applies per channel (axis 1), as in Caffe;
 * PyTorch's exports of that era rely on it. */
static bool k_PRelu(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EwArgs p = {0};
	if (nin < 2)
		return ev_fail(c, "PRelu takes two inputs");
	if (!check_tensor(c, in[0], 0) || !check_tensor(c, in[1], 1))
		return false;
	const EvValue *x = in[0];
	EvValue slope = *in[1]; /* a view: only its shape may change */
	if (c->opset < 7 && slope.numel > 1 && x->rank >= 2 && slope.numel == x->dims[1] &&
	    (slope.rank == 1 || slope.rank == x->rank - 1)) {
		slope.rank = x->rank - 1;
		slope.dims[0] = x->dims[1];
		for (int i = 1; i < slope.rank; i++)
			slope.dims[i] = 1;
	}
	int rank;
	int64_t dims[EV_MAX_RANK];
	if (!ev_broadcast_shape(x->rank, x->dims, slope.rank, slope.dims, &rank, dims))
		return ev_fail(c, "PRelu: X and the slope do not broadcast");
	out[0] = binary(c, x, &slope, prelu_rows, false, &p);
	return out[0] != NULL;
}

/* Sum, Mean, Max, Min: fold the inputs left to right, rounding to the
 * tensor's type after each step as a chain of binary ops would. */
static bool variadic(EvCtx *c, EvValue **in, int nin, EvValue **out, const EwRow2 *rows, bool mean)
{
	if (nin < 1)
		return ev_fail(c, "%s needs at least one input", ew_op(c));
	for (int i = 0; i < nin; i++)
		if (!check_tensor(c, in[i], i))
			return false;
	if (!row_for(c, (const void *const *)rows, in[0]->dtype))
		return false;
	if (mean && !ev_is_float(in[0]->dtype))
		return ev_fail(c, "Mean does not take %s tensors", dtype_name(in[0]->dtype));
	EvValue *acc = ev_ref(in[0]);
	for (int i = 1; i < nin; i++) {
		EwArgs p = {0};
		EvValue *next = binary(c, acc, in[i], rows, false, &p);
		ev_unref(acc);
		if (!next)
			return false;
		acc = next;
	}
	if (mean && nin > 1) {
		if (acc->dtype == DT_FLOAT) {
			float *d = acc->data;
			for (int64_t i = 0; i < acc->numel; i++)
				d[i] = (float)((double)d[i] / nin); /* exact: one rounding of the quotient */
		} else {
			for (int64_t i = 0; i < acc->numel; i++)
				ew_set_f(acc, i, ew_get_f(acc, i) / nin);
		}
	}
	out[0] = acc;
	return true;
}

static bool k_Sum(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout) { return variadic(c, in, nin, out, add_rows, false); }
static bool k_Mean(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout) { return variadic(c, in, nin, out, add_rows, true); }
static bool k_Max(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout) { return variadic(c, in, nin, out, max_rows, false); }
static bool k_Min(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout) { return variadic(c, in, nin, out, min_rows, false); }

/* ---- Pow ----------------------------------------------------------------- */

/* Integer power by squaring, wrapping. */
static uint64_t ipow(uint64_t b, uint64_t k)
{
	uint64_t r = 1;
	while (k) {
		if (k & 1)
			r *= b;
		b *= b;
		k >>= 1;
	}
	return r;
}

/* A negative integer exponent gives the truncated 1/x^-e: 1 and -1 keep
 * their magnitude, anything else but 0 becomes 0 (as C's pow then a
 * truncating cast would); 0 is a division by zero. */
static uint64_t ipow_neg(int64_t base, int64_t e, bool *err)
{
	if (base == 1)
		return 1;
	if (base == -1)
		return (e & 1) ? UINT64_MAX : 1;
	if (base == 0)
		*err = true;
	return 0;
}

/* ONNX Runtime's Pow by a one-element exponent of 2 or 3 multiplies (x * x,
 * x * x * x, in the element type: 1e20^3 is inf in float32 before any
 * rounding of a double); other float32 exponents take powf, double ones pow
 * (measured against ORT 1.30: docs/evaluator.md). */
static void pow_f32(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa, int64_t sb, EwArgs *p)
{
	float *o = o_;
	const float *a = a_, *b = b_;
	if (p->scalar_exponent && b[0] == 2)
		for (int64_t i = 0; i < n; i++)
			o[i] = a[i * sa] * a[i * sa];
	else if (p->scalar_exponent && b[0] == 3)
		for (int64_t i = 0; i < n; i++)
			o[i] = a[i * sa] * a[i * sa] * a[i * sa];
	else
		for (int64_t i = 0; i < n; i++)
			o[i] = powf(a[i * sa], b[i * sb]);
}

static void pow_f64(void *o_, const void *a_, const void *b_, int64_t n, int64_t sa, int64_t sb, EwArgs *p)
{
	double *o = o_;
	const double *a = a_, *b = b_;
	if (p->scalar_exponent && b[0] == 2)
		for (int64_t i = 0; i < n; i++)
			o[i] = a[i * sa] * a[i * sa];
	else if (p->scalar_exponent && b[0] == 3)
		for (int64_t i = 0; i < n; i++)
			o[i] = a[i * sa] * a[i * sa] * a[i * sa];
	else
		for (int64_t i = 0; i < n; i++)
			o[i] = pow(a[i * sa], b[i * sb]);
}

/* Pow(X: T, Y: T1) -> T, T and T1 any numeric types (opset 12 on):
 * float bases take pow() in double rounded to T, except that a float or
 * double base to a one-element exponent 2 or 3 (of any type) is x * x or
 * x * x * x in T, as ONNX Runtime computes them; integer bases with integer
 * exponents multiply exactly (wrapping); integer bases with float exponents
 * truncate pow()'s result. */
static bool k_Pow(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 2)
		return ev_fail(c, "Pow takes two inputs");
	if (!check_tensor(c, in[0], 0) || !check_tensor(c, in[1], 1))
		return false;
	EvValue ev = *in[1];
	if (!legacy_align(c, in[0], &ev))
		return false;
	const EvValue *x = in[0], *e = &ev;
	uint32_t num = EW_MASK_NUM;
	if (x->dtype <= 0 || x->dtype >= DT_COUNT || !(num & EW_BIT(x->dtype)) ||
	    e->dtype <= 0 || e->dtype >= DT_COUNT || !(num & EW_BIT(e->dtype)))
		return ev_fail(c, "Pow does not take %s ^ %s", dtype_name(x->dtype), dtype_name(e->dtype));
	int rank;
	int64_t dims[EV_MAX_RANK];
	if (!bcast(c, x, e, &rank, dims))
		return false;
	EvValue *y = ew_new(c, x->dtype, rank, dims);
	if (!y)
		return false;
	/* ORT squares and cubes a float or double base by multiplying, for a
	 * one-element exponent of any type (2 as int64 too): the exponent as x's type */
	bool fx = x->dtype == DT_FLOAT || x->dtype == DT_DOUBLE;
	double e0 = e->numel == 1 ? ew_get_f(e, 0) : 0;
	EvValue *es = NULL;
	if (fx && e->dtype != x->dtype && (e0 == 2 || e0 == 3) && !(es = ev_scalar_f(x->dtype, e0))) {
		ev_unref(y);
		return ev_fail(c, "Pow: out of memory");
	}
	if (fx && (e->dtype == x->dtype || es)) {
		EwArgs p = {.scalar_exponent = e->numel == 1};
		apply2(y, x, es ? es : e, x->dtype == DT_FLOAT ? pow_f32 : pow_f64, &p);
		if (es)
			ev_unref(es);
		out[0] = y;
		return true;
	}
	const EvValue *ins[2] = {x, e};
	EwIter it;
	ew_iter_init(&it, rank, dims, 2, ins);
	int64_t dx = ew_iter_step(&it, 0), de = ew_iter_step(&it, 1), k = 0;
	bool xf = ev_is_float(x->dtype), ef = ev_is_float(e->dtype), err = false;
	for (int64_t r = 0; r < it.nrows; r++) {
		for (int64_t i = 0; i < it.n; i++, k++) {
			int64_t ix = it.off[0] + i * dx, ie = it.off[1] + i * de;
			if (xf || ef) {
				ew_set_f(y, k, pow(ew_get_f(x, ix), ew_get_f(e, ie)));
			} else {
				int64_t ev = ew_get_s(e, ie);
				if (ev < 0 && e->dtype != DT_UINT64)
					ew_set_u(y, k, ipow_neg(ew_get_s(x, ix), ev, &err));
				else
					ew_set_u(y, k, ipow((uint64_t)ew_get_s(x, ix), (uint64_t)ev));
			}
		}
		ew_iter_next(&it);
	}
	if (err) {
		ev_unref(y);
		return ev_fail(c, "Pow: integer 0 to a negative power");
	}
	out[0] = y;
	return true;
}

/* ---- Where --------------------------------------------------------------- */

/* A float -0 of es bytes made +0 (the sign bit is the top bit of the last byte). */
static void pos_zero(char *v, size_t es)
{
	for (size_t i = 0; i + 1 < es; i++)
		if (v[i])
			return;
	if ((unsigned char)v[es - 1] == 0x80)
		v[es - 1] = 0;
}

static bool k_Where(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 3)
		return ev_fail(c, "Where takes three inputs");
	for (int i = 0; i < 3; i++)
		if (!check_tensor(c, in[i], i))
			return false;
	const EvValue *cond = in[0], *x = in[1], *z = in[2];
	if (cond->dtype != DT_BOOL)
		return ev_fail(c, "Where: condition is %s, not bool", dtype_name(cond->dtype));
	if (x->dtype != z->dtype)
		return ev_fail(c, "Where: X is %s but Y is %s", dtype_name(x->dtype), dtype_name(z->dtype));
	size_t es = ev_elem_size(x->dtype);
	if (es == 0)
		return ev_fail(c, "Where does not take %s tensors", dtype_name(x->dtype));
	int r1, rank;
	int64_t d1[EV_MAX_RANK], dims[EV_MAX_RANK];
	if (!ev_broadcast_shape(cond->rank, cond->dims, x->rank, x->dims, &r1, d1) ||
	    !ev_broadcast_shape(r1, d1, z->rank, z->dims, &rank, dims)) {
		char sc[128], sx[128], sz[128];
		return ev_fail(c, "Where: shapes %s, %s and %s do not broadcast", ew_shape_str(cond, sc, sizeof sc),
		               ew_shape_str(x, sx, sizeof sx), ew_shape_str(z, sz, sizeof sz));
	}
	EvValue *y = ew_new(c, x->dtype, rank, dims);
	if (!y)
		return false;
	/* ONNX Runtime's Where gives +0 where it takes X's -0 (Y's -0 stays), in
	 * every float type: docs/evaluator.md */
	bool neg_zero_to_pos = ev_is_float(x->dtype);
	const EvValue *ins[3] = {cond, x, z};
	EwIter it;
	ew_iter_init(&it, rank, dims, 3, ins);
	int64_t dc = ew_iter_step(&it, 0), dx = ew_iter_step(&it, 1), dz = ew_iter_step(&it, 2), k = 0;
	const uint8_t *cd = cond->data;
	const char *xd = x->data, *zd = z->data;
	char *yd = y->data;
	for (int64_t r = 0; r < it.nrows; r++) {
		for (int64_t i = 0; i < it.n; i++, k++) {
			const char *src = cd[it.off[0] + i * dc] ? xd + (size_t)(it.off[1] + i * dx) * es
			                                         : zd + (size_t)(it.off[2] + i * dz) * es;
			if (x->dtype == DT_STRING) {
				const char *s = *(char *const *)src;
				char *copy = strdup(s ? s : "");
				if (!copy) {
					ev_unref(y);
					return ev_fail(c, "Where: out of memory");
				}
				((char **)yd)[k] = copy;
			} else {
				memcpy(yd + (size_t)k * es, src, es);
				if (neg_zero_to_pos && cd[it.off[0] + i * dc])
					pos_zero(yd + (size_t)k * es, es);
			}
		}
		ew_iter_next(&it);
	}
	out[0] = y;
	return true;
}

/* ---- Clip ---------------------------------------------------------------- */

typedef void (*EwRow1)(void *o, const void *x, int64_t n, const EwArgs *p);

/* NaN passes through, and min > max gives max everywhere, as numpy.clip */
#define CLIP_ROW(T, SUF, VT, LD, ST, LO, HI) \
	static void clip_##SUF(void *o_, const void *x_, int64_t n, const EwArgs *p) \
	{ \
		T *o = o_; \
		const T *x = x_; \
		for (int64_t i = 0; i < n; i++) { \
			VT v = LD(x[i]); \
			if (v < p->LO) \
				v = p->LO; \
			if (v > p->HI) \
				v = p->HI; \
			o[i] = ST(v); \
		} \
	}
#define CLIP_F(A, DT, T, SUF, LD, ST) CLIP_ROW(T, SUF, double, LD, ST, lo_f, hi_f)
#define CLIP_S(A, DT, T, SUF) CLIP_ROW(T, SUF, int64_t, (int64_t), (T), lo_s, hi_s)
#define CLIP_U(A, DT, T, SUF) CLIP_ROW(T, SUF, uint64_t, (uint64_t), (T), lo_u, hi_u)
#define CLIP_ENT_F(A, DT, T, SUF, LD, ST) [DT] = clip_##SUF,
#define CLIP_ENT_I(A, DT, T, SUF) [DT] = clip_##SUF,
EW_FLOAT_TYPES(CLIP_F, _) EW_SINT_TYPES(CLIP_S, _) EW_UINT_TYPES(CLIP_U, _)
static const EwRow1 clip_rows[DT_COUNT] = {
	EW_FLOAT_TYPES(CLIP_ENT_F, _) EW_SINT_TYPES(CLIP_ENT_I, _) EW_UINT_TYPES(CLIP_ENT_I, _)
};

/* A bound given as an input: a one-element tensor of X's type. */
static bool clip_bound(EvCtx *c, const EvValue *b, const EvValue *x, bool hi, EwArgs *p)
{
	if (!b || b->kind == EV_NONE)
		return true;
	if (b->kind != EV_TENSOR || b->numel != 1)
		return ev_fail(c, "Clip: %s must be a scalar", hi ? "max" : "min");
	if (b->dtype != x->dtype)
		return ev_fail(c, "Clip: %s is %s but input is %s", hi ? "max" : "min", dtype_name(b->dtype),
		               dtype_name(x->dtype));
	if (ev_is_float(x->dtype))
		*(hi ? &p->hi_f : &p->lo_f) = ew_get_f(b, 0);
	else if (ev_is_signed_int(x->dtype))
		*(hi ? &p->hi_s : &p->lo_s) = ew_get_s(b, 0);
	else
		*(hi ? &p->hi_u : &p->lo_u) = ew_get_u(b, 0);
	return true;
}

/* Clip: bounds are attributes before opset 11 (defaulting to float's
 * range, as that schema says) and optional scalar inputs from 11 on, an
 * absent one the type's lowest or largest value (the spec; ONNX Runtime
 * too, so inf becomes FLT_MAX), except float16 at opset 11, where ONNX
 * Runtime's kernel clamps to nothing (docs/evaluator.md).  A NaN bound
 * clips nothing; an element equal to a bound (+0 against -0) stays. */
static bool k_Clip(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (nin < 1 || !check_tensor(c, in[0], 0))
		return false;
	const EvValue *x = in[0];
	if (!row_for(c, (const void *const *)clip_rows, x->dtype))
		return false;
	EwArgs p = { .lo_f = -INFINITY, .hi_f = INFINITY, .lo_s = INT64_MIN, .hi_s = INT64_MAX,
	             .lo_u = 0, .hi_u = UINT64_MAX };
	if (c->opset < 11) {
		p.lo_f = ev_attr_float(c, "min", -FLT_MAX);
		p.hi_f = ev_attr_float(c, "max", FLT_MAX);
	} else {
		if (!(c->opset == 11 && x->dtype == DT_FLOAT16)) {
			double top = x->dtype == DT_DOUBLE ? DBL_MAX : x->dtype == DT_FLOAT16 ? 65504.0
			           : x->dtype == DT_BFLOAT16 ? 3.3895313892515355e38 : FLT_MAX;
			p.lo_f = -top;
			p.hi_f = top;
		}
		if (!clip_bound(c, nin > 1 ? in[1] : NULL, x, false, &p) ||
		    !clip_bound(c, nin > 2 ? in[2] : NULL, x, true, &p))
			return false;
	}
	EvValue *y = ew_new(c, x->dtype, x->rank, x->dims);
	if (!y)
		return false;
	clip_rows[x->dtype](y->data, x->data, x->numel, &p);
	out[0] = y;
	return true;
}

#define F EW_MASK_F
#define S EW_MASK_S
#define U EW_MASK_U
#define B EW_MASK_B
const EvKernel ev_kernels_binary[] = {
	EV_KERNEL(Add, k_Add, F | S | U),
	EV_KERNEL(Sub, k_Sub, F | S | U),
	EV_KERNEL(Mul, k_Mul, F | S | U),
	EV_KERNEL(Div, k_Div, F | S | U),
	EV_KERNEL(Mod, k_Mod, F | S | U),
	EV_KERNEL(Pow, k_Pow, F | S | U),
	EV_KERNEL(Max, k_Max, F | S | U),
	EV_KERNEL(Min, k_Min, F | S | U),
	EV_KERNEL(Sum, k_Sum, F | S | U),
	EV_KERNEL(Mean, k_Mean, F),
	EV_KERNEL(And, k_And, B),
	EV_KERNEL(Or, k_Or, B),
	EV_KERNEL(Xor, k_Xor, B),
	EV_KERNEL(Equal, k_Equal, F | S | U | B | EW_BIT(DT_STRING)),
	EV_KERNEL(Greater, k_Greater, F | S | U | B),
	EV_KERNEL(Less, k_Less, F | S | U | B),
	EV_KERNEL(GreaterOrEqual, k_GreaterOrEqual, F | S | U | B),
	EV_KERNEL(LessOrEqual, k_LessOrEqual, F | S | U | B),
	EV_KERNEL(BitShift, k_BitShift, U),
	EV_KERNEL(BitwiseAnd, k_BitwiseAnd, S | U),
	EV_KERNEL(BitwiseOr, k_BitwiseOr, S | U),
	EV_KERNEL(BitwiseXor, k_BitwiseXor, S | U),
	EV_KERNEL(PRelu, k_PRelu, F | S | U),
	EV_KERNEL(Where, k_Where, F | S | U | B | EW_BIT(DT_STRING)),
	EV_KERNEL(Clip, k_Clip, F | S | U),
	{0},
};
