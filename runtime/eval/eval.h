/* eval.h - graft's reference evaluator: runtime values, kernels and the
 * graph interpreter.
 *
 * Written for clarity and correctness first.  It proves that rewrites keep a
 * model's meaning (graft run / graft compare), and the constant folder calls
 * the same kernels, so graft has one arithmetic implementation, not two.
 *
 * A kernel computes one node: it reads its inputs (EvValue, NULL for an
 * omitted optional input), reads attributes through the ev_attr_* helpers
 * (which fall back to the schema's defaults), and allocates its outputs with
 * ev_tensor_new.  On bad input (shapes that do not fit, unsupported dtype)
 * it reports one line through ev_fail and returns false; it never exits. */
#ifndef GRAFT_EVAL_H
#define GRAFT_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

#define EV_MAX_RANK IR_MAX_RANK   /* one limit for the whole of graft (ir.h) */

typedef enum EvKind {
	EV_TENSOR = 0,
	EV_SEQUENCE,     /* items[nitems], each a tensor */
	EV_NONE,         /* an empty optional */
} EvKind;

/* A runtime value.  For tensors: dtype, rank, dims, numel and data (numel
 * elements, row-major, little-endian; 4-bit types packed two per byte as in
 * ONNX raw_data; bool one byte 0/1; strings: data is char *[numel], each a
 * NUL-terminated malloc'd string owned by the tensor).
 * Values are reference counted: ev_ref / ev_unref. */
typedef struct EvValue {
	EvKind kind;
	int dtype;              /* tensors: DType; sequences: element dtype (may be 0) */
	int rank;
	int64_t dims[EV_MAX_RANK];
	int64_t numel;
	void *data;
	size_t nbytes;
	bool borrowed;          /* data belongs to someone else (an IR initializer) */
	int refs;
	struct EvValue **items; /* EV_SEQUENCE */
	int nitems;
} EvValue;

/* ---- values (value.c) --------------------------------------------------- */
/* A new tensor with zeroed data; NULL if too big, of no fixed-size dtype, or
 * rank > EV_MAX_RANK (the caller reports it, naming the node). */
EvValue *ev_tensor_new(int dtype, int rank, const int64_t *dims);
/* The same with the bytes left unset, for a caller that writes every element
 * (zeroing a large result first was a pass of its own); strings and 4-bit
 * types are zeroed all the same. */
EvValue *ev_tensor_new_uninit(int dtype, int rank, const int64_t *dims);
EvValue *ev_scalar_f(int dtype, double v);          /* rank-0 tensor */
/* Refuse (as too big) every new tensor of more than n elements, for the
 * whole process; n <= 0 restores the default, 1 T elements.  The graph
 * fuzzer sets a small limit so its runs stay small. */
void ev_set_numel_limit(int64_t n);
/* NULL if rank > EV_MAX_RANK. */
EvValue *ev_tensor_borrow(int dtype, int rank, const int64_t *dims, const void *data, size_t nbytes);
EvValue *ev_sequence_new(int elem_dtype);
void ev_sequence_push(EvValue *seq, EvValue *item);   /* takes the reference */
EvValue *ev_none(void);
EvValue *ev_ref(EvValue *v);
void ev_unref(EvValue *v);
EvValue *ev_copy(const EvValue *v);                  /* deep copy, owned data */
/* The data of a tensor nobody else holds (one reference, not borrowed, not
 * strings), handed to the caller (free() it) and detached from v; NULL
 * otherwise.  v is still to be unref'd. */
void *ev_take_data(EvValue *v);
/* Element size in bytes (0 for sub-byte and string types). */
size_t ev_elem_size(int dtype);
bool ev_is_float(int dtype);      /* float, double, float16, bfloat16, float8 kinds */
bool ev_is_signed_int(int dtype);
bool ev_is_unsigned_int(int dtype); /* includes bool */

/* Element access as double / int64 / uint64 with ONNX conversion rules
 * (float16/bfloat16 decoded; setting rounds to nearest even). */
/* Defined here, inline: kernels call it in their inner loops. */
static inline double ev_get_f(const EvValue *t, int64_t i);
void ev_set_f(EvValue *t, int64_t i, double v);
/* Element i from v as ONNX Runtime's CPU kernels turn a double into the
 * element type: for integers x86's truncation (NaN and what does not fit
 * give the type's lowest through int32/int64, as Cast measures it); floats
 * and bool as ev_set_f.  Cast, and integer reductions that take a log or a
 * square root, store through it. */
void ev_set_f_as_ort(EvValue *t, int64_t i, double v);
int64_t ev_get_i(const EvValue *t, int64_t i);
void ev_set_i(EvValue *t, int64_t i, int64_t v);
uint64_t ev_get_u(const EvValue *t, int64_t i);
void ev_set_u(EvValue *t, int64_t i, uint64_t v);

/* IEEE half and bfloat16 conversions (round to nearest even, NaN kept). */
float ev_half_to_float(uint16_t h);
uint16_t ev_float_to_half(float f);
float ev_bf16_to_float(uint16_t b);
uint16_t ev_float_to_bf16(float f);

/* numpy-style broadcasting of shapes: false if they do not broadcast. */
bool ev_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *rout, int64_t *out);
/* Strides (in elements) to read a tensor of shape (r, dims) as if broadcast
 * to (rout, out): 0 along broadcast dimensions. */
void ev_broadcast_strides(int r, const int64_t *dims, int rout, const int64_t *out, int64_t *strides);
/* One row of a float Add, Sub, Mul or Div as the kernel computes it:
 * o[i] = a[i * sa] op b[i * sb] for i < n, in dtype's storage (float,
 * double, float16, bfloat16); o may be a or b.  False (nothing written) for
 * another op or dtype; with n = 0 it only asks.  For computing a fold's result piece by piece with
 * the same arithmetic (runtime/engine/fold.c, deferred results). */
bool ev_arith_row(int op_kind, int dtype, void *o, const void *a, const void *b, int64_t n, int64_t sa, int64_t sb);
/* Cast's conversion of n numbers of type `from` at x to type `to` at y (the
 * kernel's own, cast.c), for types ev_cast_numbers accepts (the number
 * types Cast supports and bool; no strings). */
void ev_cast_row(int from, int to, const void *x, void *y, int64_t n);
bool ev_cast_numbers(int from, int to);
/* Row-major strides of a shape. */
void ev_strides(int rank, const int64_t *dims, int64_t *strides);

/* TensorProto (.pb) files, as in ONNX's backend tests; sequences and
 * optionals use onnx-data's SequenceProto / OptionalProto when needed. */
EvValue *ev_value_from_ir_tensor(IrModel *m, TensorId t);   /* borrows the bytes */
/* kind: what the file holds (EV_TENSOR, EV_SEQUENCE, or EV_NONE for an
 * OptionalProto), from the graph's declared type.  *name: malloc'd or NULL. */
EvValue *ev_load_pb(const char *path, EvKind kind, char **name, Diag *d);
/* The container kind of value v's declared type: EV_SEQUENCE, EV_NONE for
 * optional, else EV_TENSOR. */
EvKind ev_declared_kind(IrModel *m, ValueId v);
bool ev_save_pb(const char *path, const EvValue *v, const char *name, Diag *d);

/* ---- memory (value.c) --------------------------------------------------------
 * The evaluator counts the tensor bytes it owns (ev_tensor_new's, until freed
 * or taken).  With a limit set, an allocation that would take the count over
 * it is refused before any memory is asked for: ev_tensor_new returns NULL,
 * and the kernel's failure (ev_fail) is reported as over the limit, naming
 * the node and the bytes.  Out of memory where a kernel cannot report it (a
 * small allocation, scratch space) calls ev_out_of_memory: the handler set
 * (the CLI's prints one line and exits), else one line and abort(). */
void ev_set_memory_limit(size_t bytes);     /* 0: no limit */
/* Is the result out[0..nout) of op, computed from in[0..nin), what ONNX
 * Runtime's kernels give too (no inf/NaN or overflow met in an order-sensitive
 * op)?  Folding and inference keep only such results (portable.c). */
bool ev_result_portable(const char *op, EvValue *const *in, uint32_t nin, EvValue *const *out, uint32_t nout);
size_t ev_memory_limit(void);
size_t ev_memory_in_use(void);
/* Count `bytes` more (the memory plan's arena); false (nothing counted) if
 * that would go over the limit. */
bool ev_memory_charge(size_t bytes);
void ev_memory_release(size_t bytes);
/* The size of the last allocation refused by the limit (0: none), cleared. */
size_t ev_memory_refused(void);
void ev_set_oom_handler(void (*handler)(void));
_Noreturn void ev_out_of_memory(void);

/* ---- kernels (runtime/kernels/) ---------------------------------------------- */
typedef struct EvCtx {
	IrModel *m;
	NodeId node;
	int opset;              /* the default-domain opset of the model */
	Diag *d;
	const char *where;      /* model path for messages */
	uint64_t seed;          /* for random ops */
	struct EvEnv *env;      /* the interpreter, for ops with bodies */
	/* Run one body graph (If/Loop/Scan, SequenceMap) inside the current
	 * evaluation: the interpreter's entry (eval.c), which the kernels call
	 * through the context rather than by name, as they sit below it. */
	bool (*run_body)(struct EvCtx *c, GraphId body, EvValue **inputs, uint32_t ninputs, EvValue **outputs,
	                 uint32_t noutputs);
	int64_t max_loop_trips; /* EvOptions.max_loop_trips, or its default */
} EvCtx;

typedef bool (*EvKernelFn)(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout);

typedef struct EvKernel {
	const char *op;         /* the op's name */
	OpKind kind;            /* a standard op's kind (ir/ops.def); OP_UNKNOWN for vendor ops */
	EvKernelFn fn;
	uint32_t dtypes;        /* bit mask of DTypes the kernel computes (for graft ops) */
} EvKernel;
/* A family table's entry for standard op `name`: a name not in ir/ops.def
 * does not compile. */
#define EV_KERNEL(name, f, dt) {.op = #name, .kind = OP_##name, .fn = (f), .dtypes = (dt)}

/* The kernel of op in domain ("" or "ai.onnx": the standard kernels;
 * "com.microsoft": vendor.c's), or NULL (eval.c). */
const EvKernel *ev_kernel_find(const char *domain, const char *op);
/* The standard kernel of a default-domain op, or NULL: each kernel family
 * exports a table ending with {NULL}; kernels/registry.c lists them. */
const EvKernel *ev_kernel_std(const char *op);
/* The com.microsoft kernel of op, or NULL (vendor.c). */
const EvKernel *ev_kernel_vendor(const char *op);
/* Every standard kernel, for `graft ops`: count in *n. */
const EvKernel *const *ev_kernels_all(size_t *n);

/* One-line failure naming the node: "<model>: node 'Conv_3': <message>". Returns false. */
bool ev_fail(EvCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Attributes with the schema's default when absent. */
int64_t ev_attr_int(EvCtx *c, const char *name, int64_t def);
float ev_attr_float(EvCtx *c, const char *name, float def);
/* Ints list; *n = -1 (and NULL) when absent. */
const int64_t *ev_attr_ints(EvCtx *c, const char *name, int *n);
const float *ev_attr_floats(EvCtx *c, const char *name, int *n);
/* String attribute as a NUL-terminated copy in a per-call buffer, or def. */
const char *ev_attr_string(EvCtx *c, const char *name, const char *def, char *buf, size_t size);
const IrAttr *ev_attr(EvCtx *c, const char *name);

/* Normalise a possibly negative axis against rank; false (and a message) if out of range. */
bool ev_axis(EvCtx *c, int64_t axis, int rank, int *out);

/* ---- running inside a memory plan (runtime/plan) --------------------------- */
/* How a planned value gets its bytes. */
enum { EV_PLACE_NONE = 0, EV_PLACE_OWN, EV_PLACE_INPLACE, EV_PLACE_VIEW };

/* A memory plan of the main graph: every placed value's data lives at its
 * offset in one arena (one allocation), which the interpreter hands to the
 * kernel as the output it allocates.  A buffer is one region that values
 * share at once (a value, its views, an output written in place over it);
 * its bytes are addressable only from its first step to its last (under
 * ASan the rest of the arena is poisoned). */
typedef struct EvPlacement {
	const NodeId *order;       /* the schedule: every main-graph node once */
	uint32_t norder;
	size_t arena_bytes;
	const int64_t *offset;     /* by ValueId: byte offset in the arena, -1 if not placed */
	const size_t *nbytes;      /* by ValueId: the bytes of a placed value */
	const uint8_t *how;        /* by ValueId: EV_PLACE_* */
	uint32_t nbufs;
	const size_t *buf_offset, *buf_nbytes;
	const uint32_t *buf_first, *buf_last;  /* steps of the schedule */
} EvPlacement;

/* What happened to the placed values in a run. */
typedef struct EvPlaceStats {
	uint32_t direct;    /* written by their kernel straight into their place */
	uint32_t inplace;   /* of those, written over their dying input */
	uint32_t copied;    /* made elsewhere by their kernel, copied into their place */
	uint32_t views;     /* Reshape-like outputs left on their input's bytes */
	uint32_t escaped;   /* unplaced values that pointed into the arena: copied out */
} EvPlaceStats;

/* Slots for the outputs of the node being run: while set, ev_tensor_new
 * returns the first untaken slot of the same dtype and byte size (zeroed
 * unless `keep`, which an in-place output over its input needs). */
typedef struct EvSlot {
	int dtype;
	size_t nbytes;
	void *data;
	bool keep;
	bool taken;
} EvSlot;
void ev_set_slots(EvSlot *slots, int n);
EvSlot *ev_get_slots(int *n);

/* ---- the interpreter (eval.c) ------------------------------------------- */
typedef struct EvOptions {
	uint64_t seed;
	const EvPlacement *placement;  /* run inside this plan (NULL: malloc per value) */
	EvPlaceStats *stats;           /* with placement: filled in */
	int64_t max_loop_trips;        /* a Loop that would run more iterations fails (0: 100,000,000;
	                                  the fuzzers run models with fewer) */
} EvOptions;

/* Run graph g of m on values for its inputs (in graph-input order; an
 * overridable initializer may be given NULL to use its default).  On success
 * outputs[i] holds a reference per graph output. */
bool ev_run(IrModel *m, const EvValue *const *inputs, uint32_t ninputs,
            EvValue **outputs, const EvOptions *opt, Diag *d);
/* Evaluate one node on given input values (the constant folder's entry). */
bool ev_eval_node(IrModel *m, NodeId n, EvValue **in, EvValue **out, Diag *d);

/* ---- inline definitions ---- */
#include <math.h>

static inline double ev_get_f(const EvValue *t, int64_t i)
{
	const void *d = t->data;
	switch (t->dtype) {
	case DT_FLOAT: return ((const float *)d)[i];
	case DT_DOUBLE: return ((const double *)d)[i];
	case DT_FLOAT16: return ev_half_to_float(((const uint16_t *)d)[i]);
	case DT_BFLOAT16: return ev_bf16_to_float(((const uint16_t *)d)[i]);
	case DT_INT8: return ((const int8_t *)d)[i];
	case DT_INT16: return ((const int16_t *)d)[i];
	case DT_INT32: return ((const int32_t *)d)[i];
	case DT_INT64: return (double)((const int64_t *)d)[i];
	case DT_UINT8: case DT_BOOL: return ((const uint8_t *)d)[i];
	case DT_UINT16: return ((const uint16_t *)d)[i];
	case DT_UINT32: return ((const uint32_t *)d)[i];
	case DT_UINT64: return (double)((const uint64_t *)d)[i];
	default: return NAN;
	}
}

#endif
