/* value.c - runtime values of the evaluator: allocation and reference
 * counts, element access with ONNX's conversion rules, float16/bfloat16,
 * broadcasting, TensorProto (.pb) files, and the attribute helpers kernels
 * use.  See eval.h.  A tensor's TensorProto form is the IR's to read and
 * write (ir_tensor_decode, ir_tensor_encode, ir_tensor_string): only
 * SequenceProto and OptionalProto, which ONNX's libraries do not ship, are
 * read here, field by field. */
#include "ir/outfile.h"
#include "eval.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- allocation ---------------------------------------------------------- */

size_t ev_elem_size(int dt)
{
	int bits = dtype_bits(dt);
	if (dt == DT_STRING)
		return sizeof(char *);
	return bits >= 8 ? (size_t)bits / 8 : 0;
}

/* ---- out of memory, and the memory limit ---------------------------------- */

static void (*oom_handler)(void);

void ev_set_oom_handler(void (*handler)(void))
{
	oom_handler = handler;
}

_Noreturn void ev_out_of_memory(void)
{
	if (oom_handler)
		oom_handler();
	/* no handler (a library user), or it returned: one line, then stop */
	static const char msg[] = "graft: out of memory\n";
	fwrite(msg, 1, sizeof msg - 1, stderr);
	abort();
}

/* Bytes of tensor data the evaluator owns now (tensor_new's, less what was
 * freed or handed over), the limit on them (0: none), and a refusal the
 * next ev_fail is to explain. */
static _Thread_local size_t mem_in_use, mem_limit, mem_refused;

void ev_set_memory_limit(size_t bytes)
{
	mem_limit = bytes;
	mem_refused = 0;
}

size_t ev_memory_limit(void)
{
	return mem_limit;
}

size_t ev_memory_in_use(void)
{
	return mem_in_use;
}

bool ev_memory_charge(size_t bytes)
{
	if (mem_limit && (bytes > mem_limit || mem_in_use > mem_limit - bytes)) {
		mem_refused = bytes;
		return false;
	}
	mem_in_use += bytes;
	return true;
}

void ev_memory_release(size_t bytes)
{
	mem_in_use = mem_in_use > bytes ? mem_in_use - bytes : 0;
}

size_t ev_memory_refused(void)
{
	size_t r = mem_refused;
	mem_refused = 0;
	return r;
}

static EvValue *value_alloc(EvKind kind)
{
	EvValue *v = calloc(1, sizeof *v);
	if (!v)
		ev_out_of_memory();
	v->kind = kind;
	v->refs = 1;
	return v;
}

/* The output slots of the node being run in a memory plan (eval.c). */
static _Thread_local EvSlot *slots;
static _Thread_local int nslots;

void ev_set_slots(EvSlot *s, int n)
{
	slots = s;
	nslots = n;
}

EvSlot *ev_get_slots(int *n)
{
	*n = nslots;
	return slots;
}

static EvSlot *take_slot(int dtype, size_t nbytes)
{
	for (int i = 0; i < nslots; i++)
		if (!slots[i].taken && slots[i].dtype == dtype && slots[i].nbytes == nbytes) {
			slots[i].taken = true;
			return &slots[i];
		}
	return NULL;
}

static EvValue *tensor_new(int dtype, int rank, const int64_t *dims, bool zero);

EvValue *ev_tensor_new(int dtype, int rank, const int64_t *dims)
{
	return tensor_new(dtype, rank, dims, true);
}

EvValue *ev_tensor_new_uninit(int dtype, int rank, const int64_t *dims)
{
	/* strings: NULL pointers to free; 4-bit types: nibbles are or-ed in */
	return tensor_new(dtype, rank, dims, dtype == DT_STRING || dtype_bits(dtype) < 8);
}

/* The most elements one tensor may hold (ev_set_numel_limit). */
static int64_t numel_limit = INT64_C(1) << 40;

void ev_set_numel_limit(int64_t n)
{
	numel_limit = n > 0 && n < (INT64_C(1) << 40) ? n : INT64_C(1) << 40;
}

static EvValue *tensor_new(int dtype, int rank, const int64_t *dims, bool zero)
{
	if (rank < 0 || rank > EV_MAX_RANK)
		return NULL;
	int64_t numel = ir_numel(dims, rank);
	if (numel < 0)
		return NULL;
	int bits = dtype == DT_STRING ? 64 : dtype_bits(dtype);
	if (bits == 0 || numel > numel_limit)
		return NULL; /* unknown dtype, or over 1 T elements (or the limit set): refuse rather than thrash */
	EvValue *v = value_alloc(EV_TENSOR);
	v->dtype = dtype;
	v->rank = rank;
	if (rank)
		memcpy(v->dims, dims, sizeof *dims * (size_t)rank);
	v->numel = numel;
	v->nbytes = dtype == DT_STRING ? (size_t)numel * sizeof(char *) : ((size_t)numel * (size_t)bits + 7) / 8;
	EvSlot *s = nslots && dtype != DT_STRING ? take_slot(dtype, v->nbytes) : NULL;
	if (s) {
		v->data = s->data;
		v->borrowed = true;
		if (!s->keep && zero)
			memset(v->data, 0, v->nbytes);
		return v;
	}
	/* the limit is checked before the bytes are asked for */
	if (!ev_memory_charge(v->nbytes)) {
		free(v);
		return NULL;
	}
	v->data = zero ? calloc(1, v->nbytes ? v->nbytes : 1) : malloc(v->nbytes ? v->nbytes : 1);
	if (!v->data) {
		ev_memory_release(v->nbytes);
		free(v);
		return NULL;
	}
	return v;
}

EvValue *ev_scalar_f(int dtype, double x)
{
	EvValue *v = ev_tensor_new(dtype, 0, NULL);
	ev_set_f(v, 0, x);
	return v;
}

EvValue *ev_tensor_borrow(int dtype, int rank, const int64_t *dims, const void *data, size_t nbytes)
{
	if (rank < 0 || rank > EV_MAX_RANK)
		return NULL;
	EvValue *v = value_alloc(EV_TENSOR);
	v->dtype = dtype;
	v->rank = rank;
	if (rank)
		memcpy(v->dims, dims, sizeof *dims * (size_t)rank);
	v->numel = ir_numel(dims, rank);
	v->data = (void *)data;
	v->nbytes = nbytes;
	v->borrowed = true;
	return v;
}

void *ev_take_data(EvValue *v)
{
	if (!v || v->kind != EV_TENSOR || v->refs != 1 || v->borrowed || v->dtype == DT_STRING || !v->data)
		return NULL;
	void *d = v->data;
	v->data = NULL;
	v->borrowed = true; /* nothing left to free */
	ev_memory_release(v->nbytes); /* the new owner's now */
	return d;
}

EvValue *ev_sequence_new(int elem_dtype)
{
	EvValue *v = value_alloc(EV_SEQUENCE);
	v->dtype = elem_dtype;
	return v;
}

void ev_sequence_push(EvValue *seq, EvValue *item)
{
	EvValue **items = realloc(seq->items, sizeof *items * (size_t)(seq->nitems + 1));
	if (!items)
		ev_out_of_memory();
	seq->items = items;
	seq->items[seq->nitems++] = item;
	if (!seq->dtype && item)
		seq->dtype = item->dtype;
}

EvValue *ev_none(void)
{
	return value_alloc(EV_NONE);
}

EvValue *ev_ref(EvValue *v)
{
	if (v)
		v->refs++;
	return v;
}

void ev_unref(EvValue *v)
{
	if (!v || --v->refs > 0)
		return;
	if (v->kind == EV_SEQUENCE) {
		for (int i = 0; i < v->nitems; i++)
			ev_unref(v->items[i]);
		free(v->items);
	}
	if (!v->borrowed) {
		if (v->dtype == DT_STRING && v->kind == EV_TENSOR)
			for (int64_t i = 0; i < v->numel; i++)
				free(((char **)v->data)[i]);
		if (v->kind == EV_TENSOR && v->data)
			ev_memory_release(v->nbytes);
		free(v->data);
	}
	free(v);
}

EvValue *ev_copy(const EvValue *v)
{
	if (v->kind == EV_NONE)
		return ev_none();
	if (v->kind == EV_SEQUENCE) {
		EvValue *s = ev_sequence_new(v->dtype);
		for (int i = 0; i < v->nitems; i++)
			ev_sequence_push(s, ev_copy(v->items[i]));
		return s;
	}
	EvValue *c = ev_tensor_new(v->dtype, v->rank, v->dims);
	if (!c)
		return NULL;
	if (v->dtype == DT_STRING) {
		for (int64_t i = 0; i < v->numel; i++) {
			const char *s = ((char **)v->data)[i];
			((char **)c->data)[i] = strdup(s ? s : "");
		}
	} else if (v->nbytes) {
		memcpy(c->data, v->data, v->nbytes);
	}
	return c;
}

/* ---- dtype classes and conversions ------------------------------------------ */

bool ev_is_float(int dt)
{
	return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_FLOAT16 || dt == DT_BFLOAT16 ||
	       (dt >= DT_FLOAT8E4M3FN && dt <= DT_FLOAT8E5M2FNUZ) || dt == DT_FLOAT4E2M1;
}

bool ev_is_signed_int(int dt)
{
	return dt == DT_INT8 || dt == DT_INT16 || dt == DT_INT32 || dt == DT_INT64 || dt == DT_INT4;
}

bool ev_is_unsigned_int(int dt)
{
	return dt == DT_UINT8 || dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64 ||
	       dt == DT_BOOL || dt == DT_UINT4;
}

float ev_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	if (exp == 0) {
		if (man == 0) {
			bits = sign;
		} else { /* subnormal: normalise */
			int e = -1;
			do {
				e++;
				man <<= 1;
			} while (!(man & 0x400));
			bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
		}
	} else if (exp == 31) {
		bits = sign | 0x7f800000u | man << 13; /* inf or NaN (payload kept) */
	} else {
		bits = sign | (exp + 127 - 15) << 23 | man << 13;
	}
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

uint16_t ev_float_to_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	int32_t exp = (int32_t)((x >> 23) & 0xff);
	uint32_t man = x & 0x7fffff;
	if (exp == 255) /* inf / NaN: keep NaN a NaN */
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
	int32_t e = exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) { /* subnormal or zero in half */
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		uint32_t shift = (uint32_t)(14 - e);
		uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
		if (rem > mid || (rem == mid && (half & 1)))
			half++;
		return (uint16_t)(sign | half);
	}
	uint32_t half = sign | (uint32_t)e << 10 | man >> 13, rem = man & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
		half++; /* may carry into the exponent: correct, rounds up to inf at the top */
	return (uint16_t)half;
}

float ev_bf16_to_float(uint16_t b)
{
	uint32_t bits = (uint32_t)b << 16;
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

uint16_t ev_float_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
	uint32_t rounding = 0x7fff + ((x >> 16) & 1);
	return (uint16_t)((x + rounding) >> 16);
}

/* Float to integer as C casts do, but defined for NaN and out-of-range
 * values (which C leaves undefined): saturate, NaN -> 0. */
static int64_t f_to_i64(double v)
{
	if (isnan(v))
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

void ev_set_f(EvValue *t, int64_t i, double v)
{
	void *d = t->data;
	switch (t->dtype) {
	case DT_FLOAT: ((float *)d)[i] = (float)v; break;
	case DT_DOUBLE: ((double *)d)[i] = v; break;
	case DT_FLOAT16: ((uint16_t *)d)[i] = ev_float_to_half((float)v); break;
	case DT_BFLOAT16: ((uint16_t *)d)[i] = ev_float_to_bf16((float)v); break;
	case DT_BOOL: ((uint8_t *)d)[i] = v != 0; break;
	case DT_UINT64: ((uint64_t *)d)[i] = v >= 18446744073709551615.0 ? UINT64_MAX : v > 0 ? (uint64_t)v : (uint64_t)f_to_i64(v); break;
	default: ev_set_i(t, i, f_to_i64(v)); break;
	}
}

/* x86's truncating conversion to int32: INT32_MIN for NaN and for values
 * whose truncation does not fit. */
static int32_t cvt32(double v)
{
	return v > -2147483649.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN;
}

/* ... and to int64. */
static int64_t cvt64(double v)
{
	return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}

/* Element i of y (an integer type) from v, as ONNX Runtime 1.30's CPU Cast
 * computes it (measured for float, double, float16 and bfloat16 sources):
 * int8, int16, uint8 and uint16 through int32 and wrapped; int32 and int64
 * directly; uint32 through int64 and wrapped; uint64 as compilers do it,
 * subtracting 2^63 from values at or above 2^63. */
void ev_set_f_as_ort(EvValue *y, int64_t i, double v)
{
	void *d = y->data;
	switch (y->dtype) {
	case DT_INT8: ((int8_t *)d)[i] = (int8_t)cvt32(v); break;
	case DT_INT16: ((int16_t *)d)[i] = (int16_t)cvt32(v); break;
	case DT_UINT8: ((uint8_t *)d)[i] = (uint8_t)cvt32(v); break;
	case DT_UINT16: ((uint16_t *)d)[i] = (uint16_t)cvt32(v); break;
	case DT_INT32: ((int32_t *)d)[i] = cvt32(v); break;
	case DT_INT64: ((int64_t *)d)[i] = cvt64(v); break;
	case DT_UINT32: ((uint32_t *)d)[i] = (uint32_t)cvt64(v); break;
	case DT_UINT64:
		((uint64_t *)d)[i] = v >= 9223372036854775808.0
			? (uint64_t)cvt64(v - 9223372036854775808.0) ^ UINT64_C(0x8000000000000000)
			: (uint64_t)cvt64(v);
		break;
	default: ev_set_f(y, i, v); break;
	}
}

int64_t ev_get_i(const EvValue *t, int64_t i)
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
	default: return f_to_i64(ev_get_f(t, i));
	}
}

/* Integer stores wrap modulo 2^bits, as ONNX's reference (numpy) does. */
void ev_set_i(EvValue *t, int64_t i, int64_t v)
{
	void *d = t->data;
	switch (t->dtype) {
	case DT_INT8: ((int8_t *)d)[i] = (int8_t)v; break;
	case DT_INT16: ((int16_t *)d)[i] = (int16_t)v; break;
	case DT_INT32: ((int32_t *)d)[i] = (int32_t)v; break;
	case DT_INT64: ((int64_t *)d)[i] = v; break;
	case DT_UINT8: ((uint8_t *)d)[i] = (uint8_t)v; break;
	case DT_BOOL: ((uint8_t *)d)[i] = v != 0; break;
	case DT_UINT16: ((uint16_t *)d)[i] = (uint16_t)v; break;
	case DT_UINT32: ((uint32_t *)d)[i] = (uint32_t)v; break;
	case DT_UINT64: ((uint64_t *)d)[i] = (uint64_t)v; break;
	default:
		/* the floats ev_set_f stores; float8, 4-bit and complex ones have
		 * no setter (ev_set_f would come back here for them) */
		if (ev_is_float(t->dtype) && dtype_bits(t->dtype) >= 16)
			ev_set_f(t, i, (double)v);
		break;
	}
}

uint64_t ev_get_u(const EvValue *t, int64_t i)
{
	if (t->dtype == DT_UINT64)
		return ((const uint64_t *)t->data)[i];
	return (uint64_t)ev_get_i(t, i);
}

void ev_set_u(EvValue *t, int64_t i, uint64_t v)
{
	if (t->dtype == DT_UINT64)
		((uint64_t *)t->data)[i] = v;
	else if (ev_is_float(t->dtype))
		ev_set_f(t, i, (double)v);
	else
		ev_set_i(t, i, (int64_t)v);
}

/* ---- shapes --------------------------------------------------------------- */

bool ev_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *rout, int64_t *out)
{
	int r = ra > rb ? ra : rb;
	if (r > EV_MAX_RANK)
		return false;
	for (int i = 0; i < r; i++) {
		int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
		int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
		if (da != db && da != 1 && db != 1)
			return false;
		out[i] = da == 1 ? db : da;
	}
	*rout = r;
	return true;
}

void ev_strides(int rank, const int64_t *dims, int64_t *strides)
{
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		strides[i] = s;
		/* wraps only for an empty tensor with huge other dims, whose strides
		 * nothing follows: computed unsigned, so it is not undefined */
		s = (int64_t)((uint64_t)s * (uint64_t)dims[i]);
	}
}

void ev_broadcast_strides(int r, const int64_t *dims, int rout, const int64_t *out, int64_t *strides)
{
	int64_t own[EV_MAX_RANK];
	ev_strides(r, dims, own);
	for (int i = 0; i < rout; i++) {
		int k = i - (rout - r);
		strides[i] = k < 0 || dims[k] == 1 ? 0 : own[k];
	}
	(void)out;
}

/* ---- from the IR and from/to .pb files -------------------------------------- */

EvValue *ev_value_from_ir_tensor(IrModel *m, TensorId id)
{
	IrTensor *t = ir_tensor(m, id);
	if (t->dtype == DT_STRING) {
		/* strings live in the proto's string_data: copy them into a tensor */
		EvValue *v = ev_tensor_new(DT_STRING, t->rank, t->dims);
		if (!v)
			return NULL;
		size_t len;
		const uint8_t *s;
		for (int64_t i = 0; i < v->numel && (s = ir_tensor_string(m, id, i, &len)) != NULL; i++)
			((char **)v->data)[i] = len ? strndup((const char *)s, len) : strdup("");
		for (int64_t i = 0; i < v->numel; i++)
			if (!((char **)v->data)[i])
				((char **)v->data)[i] = strdup("");
		return v;
	}
	if (!t->data && t->deferred) {
		/* a recipe (a deferred fold) computed into a value of its own: the
		 * tensor stays a recipe, so a fold that reads it, or tries to and
		 * fails, leaves no whole copy in the model */
		EvValue *v = ev_tensor_new_uninit(t->dtype, t->rank, t->dims);
		if (v && v->nbytes == t->nbytes) {
			ir_tensor_read(m, id, 0, t->nbytes, v->data);
			return v;
		}
		ev_unref(v); /* over the evaluator's limits: computed in the model, below */
	}
	size_t n;
	const uint8_t *bytes = ir_tensor_raw(m, id, &n);
	if (bytes && !ir_tensor_aligned(t)) {
		/* aliased into the input file at an odd offset: the kernels get an
		 * aligned copy of their own, freed with the value (the model keeps
		 * pointing into the file, and a weight read once is copied once) */
		EvValue *v = ev_tensor_new_uninit(t->dtype, t->rank, t->dims);
		if (v && v->nbytes == n)
			memcpy(v->data, bytes, n);
		else if (v) {
			ev_unref(v);
			v = NULL;
		}
		if (v)
			return v;
		bytes = ir_tensor_bytes(m, id, &n);
	}
	return ev_tensor_borrow(t->dtype, t->rank, t->dims, bytes ? bytes : (const uint8_t *)"", n);
}

/* A serialized TensorProto into an owned value (via a throwaway IR model,
 * which knows every way a TensorProto can hold its data).  *parsed: the
 * bytes were a TensorProto; name (may be NULL): a copy of its name, if it
 * has one. */
static EvValue *from_tensor_bytes(const uint8_t *buf, size_t len, const char *where, char **name, bool *parsed,
                                  Diag *d)
{
	IrModel *tmp = ir_model_new();
	const char *tname;
	TensorId id = ir_tensor_decode(tmp, buf, len, where, &tname, parsed, d);
	if (name && tname)
		*name = strdup(tname);
	EvValue *v = NULL;
	if (id) {
		if (ir_tensor(tmp, id)->external) {
			diag_error(d, where, "tensor '%s': external data in a .pb file is not supported", tname ? tname : "");
		} else {
			EvValue *b = ev_value_from_ir_tensor(tmp, id);
			v = b ? ev_copy(b) : NULL;
			ev_unref(b);
			if (!v)
				diag_error(d, where, "tensor '%s': too large or of an unsupported type", tname ? tname : "");
		}
	}
	ir_model_free(tmp);
	return v;
}

/* onnx-data.proto's SequenceProto / OptionalProto, read by hand (Debian's
 * libonnx-dev does not ship that .proto):
 *   SequenceProto { 1 name; 2 elem_type; 3 repeated TensorProto tensor_values;
 *                   5 repeated SequenceProto sequence_values; ... }
 *   OptionalProto { 1 name; 2 elem_type; 3 TensorProto tensor_value; 5 SequenceProto; ... }
 * elem_type: 1 tensor, 3 sequence, 6 optional (0 undefined). */
static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (int s = 0; s < 64 && *p < end; s += 7) {
		uint8_t b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static EvValue *parse_container(const uint8_t *p, const uint8_t *end, bool optional, char **name,
                                const char *where, Diag *d, int depth)
{
	if (depth > 16) {
		diag_error(d, where, "sequences nested too deeply");
		return NULL;
	}
	EvValue *seq = optional ? NULL : ev_sequence_new(0), *opt = NULL;
	bool ok = true;
	while (ok && p < end) {
		uint64_t tag, len;
		if (!read_varint(&p, end, &tag)) {
			ok = false;
			break;
		}
		int field = (int)(tag >> 3), wt = (int)(tag & 7);
		if (wt == 0) {
			ok = read_varint(&p, end, &len);
			continue;
		}
		if (wt != 2 || !read_varint(&p, end, &len) || len > (uint64_t)(end - p)) {
			ok = false;
			break;
		}
		const uint8_t *body = p;
		p += len;
		EvValue *item = NULL;
		if (field == 1 && name && !*name) {
			*name = strndup((const char *)body, len);
		} else if (field == 3) {
			bool parsed;
			item = from_tensor_bytes(body, len, where, NULL, &parsed, d);
			if (!parsed) {
				ok = false;
				break;
			}
			ok = item != NULL;
		} else if (field == 5) {
			item = parse_container(body, body + len, false, NULL, where, d, depth + 1);
			ok = item != NULL;
		}
		if (item) {
			if (optional) {
				ev_unref(opt);
				opt = item;
			} else {
				ev_sequence_push(seq, item);
			}
		}
	}
	if (!ok) {
		diag_error(d, where, "not a TensorProto, SequenceProto or OptionalProto");
		ev_unref(seq);
		ev_unref(opt);
		return NULL;
	}
	return optional ? (opt ? opt : ev_none()) : seq;
}

EvValue *ev_load_pb(const char *path, EvKind kind, char **name, Diag *d)
{
	struct stat st;
	int err;
	int fd = ir_open_regular(path, &st, &err);
	if (fd < 0) {
		if (err == IR_OPEN_NOT_REGULAR)
			diag_error(d, path, "not a regular file");
		else
			diag_error(d, path, "cannot open: %s", strerror(err));
		return NULL;
	}
	if (st.st_size > IR_MAX_MODEL_FILE) {
		diag_error(d, path, "too large: %lld bytes, over protobuf's 2 GiB limit", (long long)st.st_size);
		close(fd);
		return NULL;
	}
	long len = (long)st.st_size;
	uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf) {
		diag_error(d, path, "out of memory reading %ld bytes", len);
		close(fd);
		return NULL;
	}
	for (long got = 0; got < len;) {
		ssize_t r = read(fd, buf + got, (size_t)(len - got));
		if (r <= 0) {
			diag_error(d, path, "cannot read: %s", r < 0 ? strerror(errno) : "the file shrank while read");
			free(buf);
			close(fd);
			return NULL;
		}
		got += r;
	}
	close(fd);
	if (name)
		*name = NULL;
	EvValue *v = NULL;
	/* The file does not say what it holds (a SequenceProto even parses as a
	 * TensorProto), so the caller says, from the graph's declared type. */
	if (kind == EV_TENSOR) {
		bool parsed;
		v = from_tensor_bytes(buf, (size_t)len, path, name, &parsed, d);
		if (!parsed)
			diag_error(d, path, "not a TensorProto: protobuf parse failed");
	} else {
		v = parse_container(buf, buf + len, kind == EV_NONE, name, path, d, 0);
	}
	free(buf);
	return v;
}

bool ev_save_pb(const char *path, const EvValue *v, const char *name, Diag *d)
{
	if (v->kind != EV_TENSOR) {
		diag_error(d, path, "writing sequences and optionals to .pb is not supported");
		return false;
	}
	size_t len;
	uint8_t *buf = ir_tensor_encode(name, v->dtype, v->rank, v->dims, v->data, v->nbytes, &len);
	bool ok = out_write_file(path, buf, len, d);
	free(buf);
	return ok;
}

/* ---- kernel helpers ---------------------------------------------------------- */

bool ev_fail(EvCtx *c, const char *fmt, ...)
{
	char msg[700], label[256];
	size_t refused = ev_memory_refused();
	if (refused) {
		/* the kernel could not allocate because of the limit: say so,
		 * rather than its guess at why */
		diag_error(c->d, c->where, "node '%s' (%s): needs %zu more bytes with %zu in use, over the memory "
		           "limit of %zu bytes (--max-memory)", ir_node_label(c->m, c->node, label, sizeof label),
		           ir_node(c->m, c->node)->op_type, refused, mem_in_use, mem_limit);
		return false;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_error(c->d, c->where, "node '%s': %s", ir_node_label(c->m, c->node, label, sizeof label), msg);
	return false;
}

const IrAttr *ev_attr(EvCtx *c, const char *name)
{
	return ir_attr(c->m, c->node, name);
}

int64_t ev_attr_int(EvCtx *c, const char *name, int64_t def)
{
	const IrAttr *a = ev_attr(c, name);
	return a && a->type == ATTR_INT ? a->i : def;
}

float ev_attr_float(EvCtx *c, const char *name, float def)
{
	const IrAttr *a = ev_attr(c, name);
	return a && a->type == ATTR_FLOAT ? a->f : def;
}

const int64_t *ev_attr_ints(EvCtx *c, const char *name, int *n)
{
	const IrAttr *a = ev_attr(c, name);
	if (!a || a->type != ATTR_INTS) {
		*n = -1;
		return NULL;
	}
	*n = (int)a->n;
	return a->ints;
}

const float *ev_attr_floats(EvCtx *c, const char *name, int *n)
{
	const IrAttr *a = ev_attr(c, name);
	if (!a || a->type != ATTR_FLOATS) {
		*n = -1;
		return NULL;
	}
	*n = (int)a->n;
	return a->floats;
}

const char *ev_attr_string(EvCtx *c, const char *name, const char *def, char *buf, size_t size)
{
	const IrAttr *a = ev_attr(c, name);
	if (!a || a->type != ATTR_STRING)
		return def;
	size_t n = a->s.len < size - 1 ? a->s.len : size - 1;
	if (n)
		memcpy(buf, a->s.data, n);
	buf[n] = 0;
	return buf;
}

bool ev_axis(EvCtx *c, int64_t axis, int rank, int *out)
{
	if (rank == 0 && (axis == 0 || axis == -1)) { /* a scalar has one "axis" */
		*out = 0;
		return true;
	}
	int64_t a = axis < 0 ? axis + rank : axis;
	if (a < 0 || a >= rank)
		return ev_fail(c, "axis %lld is out of range for rank %d", (long long)axis, rank);
	*out = (int)a;
	return true;
}
