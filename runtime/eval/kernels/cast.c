/* cast.c - Cast and CastLike: conversions among the number types, bool and
 * strings.
 *
 * Number to number conversions round exactly once (ew_util.h): float to a
 * narrower float rounds to nearest even, integers to float round to
 * nearest, float to integer truncates toward zero, integers wrap, and
 * anything to bool is "not zero".
 *
 * Float to integer where C leaves it undefined (NaN, infinities, values out
 * of range) gives what ONNX Runtime's CPU Cast gives, which is what x86's
 * truncating conversions (cvttss2si / cvttsd2si) make of it: a value they
 * cannot convert becomes the "integer indefinite" INT_MIN of their width
 * (float_to_int below; docs/evaluator.md has the table).
 *
 * Strings follow ONNX's Cast text: parsing accepts plain and scientific
 * notation and "INF", "+INF", "-INF", "NaN" in any case, and a fractional
 * string cast to an integer truncates ("100.5" -> 100).  Numbers print as
 * numpy's str() does, which ONNX's tests record: the shortest digits that
 * read back to the same value of the source type, positional between 1e-4
 * and 1e16 ("0.039187793", "100.0"), scientific outside ("1e-05", "1.5e+20");
 * bools print as "True" / "False".
 *
 * float->bfloat16 rounds to nearest even, as ONNX Runtime and ONNX's later
 * reference do; ONNX 1.12's test data truncates instead (onnx/onnx#3876).
 * The float8 and 4-bit types are not supported (the `saturate` attribute
 * only concerns float8). */
#include "ew_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

static bool castable(int dt)
{
	switch (dt) {
	case DT_FLOAT: case DT_DOUBLE: case DT_FLOAT16: case DT_BFLOAT16:
	case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64:
	case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64:
	case DT_BOOL: case DT_STRING:
		return true;
	default:
		return false;
	}
}

/* ---- numbers to strings ------------------------------------------------- */

/* Does the decimal text read back as v in type dt? */
static bool reads_back(const char *s, double v, int dt)
{
	switch (dt) {
	case DT_FLOAT: return strtof(s, NULL) == (float)v;
	case DT_FLOAT16: return ew_d2h(strtod(s, NULL)) == ew_d2h(v);
	case DT_BFLOAT16: return ew_d2bf(strtod(s, NULL)) == ew_d2bf(v);
	default: return strtod(s, NULL) == v;
	}
}

/* numpy's str() of a float scalar of type dt (value v, exact in double). */
static void format_float(double v, int dt, char *out, size_t size)
{
	if (isnan(v)) {
		snprintf(out, size, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(out, size, v > 0 ? "inf" : "-inf");
		return;
	}
	/* shortest round-tripping digits: %.Ne gives the nearest N+1 digits */
	char sci[64];
	for (int prec = 0; prec < 17; prec++) {
		snprintf(sci, sizeof sci, "%.*e", prec, v);
		if (reads_back(sci, v, dt))
			break;
	}
	/* split "-d.ddde+XX" into sign, digits and exponent */
	const char *s = sci;
	bool neg = *s == '-';
	if (neg)
		s++;
	char digits[32];
	int nd = 0;
	for (; *s && *s != 'e'; s++)
		if (isdigit((unsigned char)*s))
			digits[nd++] = *s;
	int e10 = *s == 'e' ? atoi(s + 1) : 0;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = 0;
	double a = fabs(v);
	size_t n = 0;
#define PUT(ch) do { if (n + 1 < size) out[n++] = (ch); } while (0)
	if (neg)
		PUT('-');
	if (a == 0 || (a >= 1e-4 && a < 1e16)) {
		if (e10 >= 0) {
			for (int i = 0; i <= e10; i++)
				PUT(i < nd ? digits[i] : '0');
			PUT('.');
			if (nd > e10 + 1)
				for (int i = e10 + 1; i < nd; i++)
					PUT(digits[i]);
			else
				PUT('0');
		} else {
			PUT('0');
			PUT('.');
			for (int i = 0; i < -e10 - 1; i++)
				PUT('0');
			for (int i = 0; i < nd; i++)
				PUT(digits[i]);
		}
		out[n] = 0;
	} else {
		PUT(digits[0]);
		if (nd > 1) {
			PUT('.');
			for (int i = 1; i < nd; i++)
				PUT(digits[i]);
		}
		out[n] = 0;
		snprintf(out + n, size - n, "e%c%02d", e10 < 0 ? '-' : '+', abs(e10));
	}
#undef PUT
}

static char *to_string(const EvValue *x, int64_t i)
{
	char buf[80];
	if (ev_is_float(x->dtype))
		format_float(ew_get_f(x, i), x->dtype, buf, sizeof buf);
	else if (x->dtype == DT_BOOL)
		snprintf(buf, sizeof buf, "%s", ((const uint8_t *)x->data)[i] ? "True" : "False");
	else if (x->dtype == DT_UINT64)
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)ew_get_u(x, i));
	else
		snprintf(buf, sizeof buf, "%lld", (long long)ew_get_s(x, i));
	return strdup(buf);
}

/* ---- strings to numbers ------------------------------------------------- */

static bool all_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == 0;
}

/* Parse s into element i of y; false if s is not a number. */
static bool from_string(const char *s, EvValue *y, int64_t i)
{
	char *end;
	if (!s || all_space(s))
		return false;
	if (y->dtype == DT_BOOL) {
		const char *t = s;
		while (isspace((unsigned char)*t))
			t++;
		if (strncasecmp(t, "true", 4) == 0 && all_space(t + 4)) {
			ew_set_u(y, i, 1);
			return true;
		}
		if (strncasecmp(t, "false", 5) == 0 && all_space(t + 5)) {
			ew_set_u(y, i, 0);
			return true;
		}
	}
	if (!ev_is_float(y->dtype)) {
		/* integers read exactly when written as integers */
		errno = 0;
		if (y->dtype == DT_UINT64 && !strchr(s, '-')) {
			unsigned long long u = strtoull(s, &end, 10);
			if (end != s && all_space(end) && errno == 0) {
				ew_set_u(y, i, u);
				return true;
			}
		} else {
			long long v = strtoll(s, &end, 10);
			if (end != s && all_space(end) && errno == 0) {
				ew_set_s(y, i, v);
				return true;
			}
		}
	}
	errno = 0;
	if (y->dtype == DT_FLOAT) {
		float f = strtof(s, &end); /* one rounding, not through double */
		if (end == s || !all_space(end))
			return false;
		((float *)y->data)[i] = f;
		return true;
	}
	double d = strtod(s, &end);
	if (end == s || !all_space(end))
		return false;
	ew_set_f(y, i, d);
	return true;
}

/* ---- float to integer, as ONNX Runtime ---------------------------------- */

/* Element i of y (an integer type) from v: ev_set_f_as_ort (value.c). */
static void float_to_int(EvValue *y, int64_t i, double v)
{
	if (y->dtype == DT_BOOL)
		ew_set_f(y, i, v);   /* bool: v != 0 */
	else
		ev_set_f_as_ort(y, i, v);
}

/* ---- numbers to numbers ------------------------------------------------ */

void ev_cast_row(int from, int to, const void *xd, void *yd, int64_t n)
{
	EvValue xs = {.kind = EV_TENSOR, .dtype = from, .rank = 1, .numel = n, .data = (void *)xd};
	EvValue ys = {.kind = EV_TENSOR, .dtype = to, .rank = 1, .numel = n, .data = yd};
	const EvValue *x = &xs;
	EvValue *y = &ys;
	if (x->dtype == DT_FLOAT && to == DT_FLOAT16) {
		const float *a = x->data;
		uint16_t *b = y->data;
		for (int64_t i = 0; i < n; i++)
			b[i] = ev_float_to_half(a[i]);
	} else if (x->dtype == DT_FLOAT16 && to == DT_FLOAT) {
		const uint16_t *a = x->data;
		float *b = y->data;
		for (int64_t i = 0; i < n; i++)
			b[i] = ev_half_to_float(a[i]);
	} else if (ev_is_float(x->dtype) && !ev_is_float(to)) {
		for (int64_t i = 0; i < n; i++)
			float_to_int(y, i, ew_get_f(x, i));
	} else if (ev_is_float(x->dtype)) {
		for (int64_t i = 0; i < n; i++)
			ew_set_f(y, i, ew_get_f(x, i));
	} else if (ev_is_signed_int(x->dtype)) {
		for (int64_t i = 0; i < n; i++)
			ew_set_s(y, i, ew_get_s(x, i));
	} else {
		for (int64_t i = 0; i < n; i++)
			ew_set_u(y, i, ew_get_u(x, i));
	}
}

bool ev_cast_numbers(int from, int to)
{
	return castable(from) && castable(to) && from != DT_STRING && to != DT_STRING;
}

/* ---- the kernels -------------------------------------------------------- */

static bool cast(EvCtx *c, EvValue *x, int to, EvValue **out)
{
	if (x->dtype == to) {
		out[0] = ev_ref(x);
		return true;
	}
	if (!castable(x->dtype) || !castable(to))
		return ev_fail(c, "%s from %s to %s is not supported", ew_op(c), dtype_name(x->dtype), dtype_name(to));
	EvValue *y = ew_new(c, to, x->rank, x->dims);
	if (!y)
		return false;
	int64_t n = x->numel;
	if (to == DT_STRING) {
		char **s = y->data;
		for (int64_t i = 0; i < n; i++)
			if (!(s[i] = to_string(x, i))) {
				ev_unref(y);
				return ev_fail(c, "%s: out of memory", ew_op(c));
			}
	} else if (x->dtype == DT_STRING) {
		char *const *s = x->data;
		for (int64_t i = 0; i < n; i++)
			if (!from_string(s[i], y, i)) {
				ev_fail(c, "%s: cannot read \"%.60s\" as %s", ew_op(c), s[i] ? s[i] : "", dtype_name(to));
				ev_unref(y);
				return false;
			}
	} else {
		ev_cast_row(x->dtype, to, x->data, y->data, n);
	}
	out[0] = y;
	return true;
}

static bool k_Cast(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!ew_need(c, in, nin, 0))
		return false;
	const IrAttr *to = ev_attr(c, "to");
	if (to && to->type == ATTR_STRING) { /* Cast-1: a type name, "FLOAT" */
		char name[32];
		size_t len = to->s.len < sizeof name - 1 ? to->s.len : sizeof name - 1;
		for (size_t i = 0; i < len; i++)
			name[i] = (char)(((const char *)to->s.data)[i] | 0x20);
		name[len] = 0;
		int dt = dtype_from_name(name);
		if (dt == DT_UNDEFINED)
			return ev_fail(c, "Cast: 'to' is '%s', not a known type", name);
		return cast(c, in[0], dt, out);
	}
	if (!to || to->type != ATTR_INT)
		return ev_fail(c, "Cast: the 'to' attribute is missing");
	if (to->i <= 0 || to->i >= DT_COUNT)
		return ev_fail(c, "Cast: 'to' is %lld, not a known type", (long long)to->i);
	return cast(c, in[0], (int)to->i, out);
}

static bool k_CastLike(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	if (!ew_need(c, in, nin, 0) || !ew_need(c, in, nin, 1))
		return false;
	return cast(c, in[0], in[1]->dtype, out);
}

#define ALL (EW_MASK_NUM | EW_MASK_B | EW_BIT(DT_STRING))
const EvKernel ev_kernels_cast[] = {
	EV_KERNEL(Cast, k_Cast, ALL),
	EV_KERNEL(CastLike, k_CastLike, ALL),
	{0},
};
