/* graph_gen.c - the structure-aware graph fuzzer (issue 24): the input bytes
 * are not a model but a sequence of choices (a byte reader that gives 0 once
 * the bytes run out, so a short input is a small, plain model) from which a
 * model is built out of the op schema table: ops of every domain graft knows,
 * operands whose dtypes the ops' type constraints allow, attributes with
 * hostile values (0, negative, huge, axes out of range), ranks 0..6 and now
 * and then 17 or 64, dims 0, 1, small or 1<<40, shared intermediates and
 * intermediates that are graph outputs, constants holding inf, NaN and
 * denormals in raw or typed fields, If and Loop bodies reading outer values,
 * and external data, right (a data file in a private temp folder) or hostile
 * ('../', absolute, huge offsets).  The model then goes the way graft
 * optimize and graft compare take it: load (bytes or file), shape inference,
 * the compiled rule library at the default levels and at extended with
 * vendor ops, save to bytes, load again, and the original and the optimized
 * model run on the same small inputs (tensors over NUMEL_LIMIT elements
 * refused).  The oracle is the sanitizers, plus: a rewritten graph is valid
 * and what graft saves loads again.  Outputs that differ are only reported
 * (FUZZ_GRAPH_DIFF=1: trapped); differential bugs are issue 25's.
 * FUZZ_GRAPH_VERBOSE=1 prints each stage's errors.  FUZZ_GRAPH_TAME=1 leaves
 * out the inputs of the crashes the other issue-24 branches fix (ranks over
 * 16, dims of 2^31 and more, typed data in the wrong field, variadic ops of
 * dozens of operands, blocksize 0, loops of 100000 trips), so a campaign
 * finds what is new. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/arena.h"
#include "runtime/eval/eval.h"
#include "graph_gen.h"
#include "runtime/infer/infer.h"
#include "ir/ir.h"
#include "gen/onnx.pb-c.h"
#include "ir/opschema.h"
#include "runtime/engine/rewrite.h"
#include "runtime/engine/rules.h"
#include "runtime/eval/run.h"

enum {
	MAX_VALS = 192,      /* values the ops may read, across scopes */
	MAX_NODES = 16,      /* per graph */
	MAX_DEPTH = 2,       /* If/Loop bodies nested */
	NUMEL_LIMIT = 1 << 16,
};

typedef struct GVal {
	const char *name;
	int dtype;
} GVal;

/* A graph under construction (the main graph or a body). */
typedef struct GGraph {
	Onnx__NodeProto **nodes;
	size_t nnodes;
	Onnx__ValueInfoProto **inputs;
	size_t ninputs;
	Onnx__TensorProto **inits;
	size_t ninits;
	Onnx__ValueInfoProto **outputs;
	size_t noutputs;
} GGraph;

typedef struct Gen {
	const uint8_t *p;
	size_t n, at;
	Arena *A;
	int opset;
	int depth;
	bool flat;          /* inside a body of 100000 trips: no If or Loop */
	unsigned counter;          /* fresh names */
	GVal vals[MAX_VALS];       /* in scope: outer values, then the current body's */
	int nvals;
	char dir[64];              /* private folder for external data and the model file ("" : none) */
	uint8_t *ext;              /* the data file's bytes */
	size_t next;
	bool vendor;               /* a com.microsoft op was used */
	bool load_file;            /* write the model into dir and ir_load_file it */
	bool tame;                 /* FUZZ_GRAPH_TAME=1: leave out what other branches fix */
} Gen;

/* ---- the byte reader ---------------------------------------------------------- */

static unsigned byte(Gen *g)
{
	return g->at < g->n ? g->p[g->at++] : 0;
}

/* A choice in [0, n); 0 once the bytes run out. */
static unsigned pick(Gen *g, unsigned n)
{
	if (n <= 1)
		return 0;
	unsigned v = byte(g);
	if (n > 256)
		v = v << 8 | byte(g);
	return v % n;
}

/* True once in n (never once the bytes run out). */
static bool one_in(Gen *g, unsigned n)
{
	return pick(g, n) == n - 1;
}

#define PUSH(A, arr, n, item)                                           \
	do {                                                                \
		void *grown_ = arena_alloc(A, sizeof *(arr) * ((n) + 1));       \
		if (n)                                                          \
			memcpy(grown_, arr, sizeof *(arr) * (n));                   \
		(arr) = grown_;                                                 \
		(arr)[(n)++] = (item);                                          \
	} while (0)

static const char *fresh(Gen *g, const char *prefix)
{
	return arena_printf(g->A, "%s%u", prefix, g->counter++);
}

static void add_val(Gen *g, const char *name, int dtype)
{
	if (g->nvals < MAX_VALS)
		g->vals[g->nvals++] = (GVal){name, dtype};
}

/* ---- values ------------------------------------------------------------------- */

/* Preferred first: a run out of bytes picks float. */
static const int dtype_order[] = {
	DT_FLOAT, DT_INT64, DT_INT32, DT_BOOL, DT_DOUBLE, DT_FLOAT16, DT_UINT8, DT_INT8, DT_INT16,
	DT_UINT16, DT_UINT32, DT_UINT64, DT_BFLOAT16, DT_STRING, DT_FLOAT8E4M3FN, DT_FLOAT8E5M2,
	DT_FLOAT8E4M3FNUZ, DT_FLOAT8E5M2FNUZ, DT_UINT4, DT_INT4, DT_FLOAT4E2M1, DT_COMPLEX64, DT_COMPLEX128,
};

/* A dtype the mask allows (0: any of the common ones). */
static int pick_dtype(Gen *g, uint32_t mask)
{
	int ok[32], n = 0;
	int common = 13;
	for (int i = 0; i < (int)(sizeof dtype_order / sizeof *dtype_order); i++)
		if (mask ? (mask >> dtype_order[i] & 1) : i < common)
			ok[n++] = dtype_order[i];
	if (!n)
		return DT_FLOAT;
	return pick(g, 4) < 3 ? ok[pick(g, n < 3 ? (unsigned)n : 3)] : ok[pick(g, (unsigned)n)];
}

static int64_t gen_int(Gen *g, int rank)
{
	static const int64_t hostile[] = {
		0, -1, 17, 64, -100, 1000, 65536, INT32_MAX, INT32_MIN, (int64_t)1 << 31, (int64_t)1 << 40,
		INT64_MAX, INT64_MIN, INT64_MIN + 1, -((int64_t)1 << 40),
	};
	unsigned c = pick(g, 16);
	if (c < 10)
		return pick(g, 5);                                    /* 0..4 */
	if (c < 14)
		return (int64_t)pick(g, (unsigned)(2 * rank + 3)) - rank - 1;   /* an axis, maybe one out */
	return hostile[pick(g, g->tame ? 7 : sizeof hostile / sizeof *hostile)];
}

static double gen_float(Gen *g)
{
	static const double special[] = {
		INFINITY, -INFINITY, NAN, 1e-45, -0.0, 3.4e38, 1e-40, 65504, 1e300, -1e300, 5e-324,
	};
	if (one_in(g, 16))
		return special[pick(g, sizeof special / sizeof *special)];
	return ((double)(int)byte(g) - 128) / 16;
}

static int gen_rank(Gen *g)
{
	unsigned c = pick(g, 64);
	if (c < 56)
		return (int)pick(g, 5);
	if (c < 62 || g->tame)
		return 5 + (int)pick(g, 2);
	return c == 62 ? 17 : 64;
}

static int64_t gen_dim(Gen *g)
{
	unsigned c = pick(g, 32);
	if (c < 24)
		return 1 + pick(g, 4);
	if (c < 27)
		return 0;
	if (c < 30)
		return 5 + pick(g, 12);
	static const int64_t huge[] = {(int64_t)1 << 40, (int64_t)1 << 31, 65536, INT64_MAX, -1, -7};
	unsigned i = pick(g, sizeof huge / sizeof *huge);
	return g->tame && huge[i] >= (int64_t)1 << 31 ? 16 : huge[i];
}

static Onnx__TypeProto *tensor_type(Gen *g, int dtype, int rank, const int64_t *dims, const char *const *params)
{
	Onnx__TypeProto *t = arena_alloc(g->A, sizeof *t);
	onnx__type_proto__init(t);
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = arena_alloc(g->A, sizeof *t->tensor_type);
	onnx__type_proto__tensor__init(t->tensor_type);
	t->tensor_type->has_elem_type = 1;
	t->tensor_type->elem_type = dtype;
	if (rank < 0)
		return t;   /* shape unknown */
	Onnx__TensorShapeProto *s = arena_alloc(g->A, sizeof *s);
	onnx__tensor_shape_proto__init(s);
	s->n_dim = (size_t)rank;
	s->dim = arena_alloc(g->A, sizeof *s->dim * (size_t)(rank + 1));
	for (int i = 0; i < rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = arena_alloc(g->A, sizeof *d);
		onnx__tensor_shape_proto__dimension__init(d);
		if (params && params[i]) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = (char *)params[i];
		} else {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
		}
		s->dim[i] = d;
	}
	t->tensor_type->shape = s;
	return t;
}

static Onnx__ValueInfoProto *value_info(Gen *g, const char *name, Onnx__TypeProto *type)
{
	Onnx__ValueInfoProto *v = arena_alloc(g->A, sizeof *v);
	onnx__value_info_proto__init(v);
	v->name = (char *)name;
	v->type = type;
	return v;
}

/* The private folder, made on first use. */
static const char *private_dir(Gen *g)
{
	if (!g->dir[0]) {
		snprintf(g->dir, sizeof g->dir, "/tmp/fuzz-graph-XXXXXX");
		if (!mkdtemp(g->dir))
			g->dir[0] = 0;
	}
	return g->dir[0] ? g->dir : NULL;
}

static Onnx__StringStringEntryProto *entry(Gen *g, const char *k, const char *v)
{
	Onnx__StringStringEntryProto *e = arena_alloc(g->A, sizeof *e);
	onnx__string_string_entry_proto__init(e);
	e->key = (char *)k;
	e->value = (char *)v;
	return e;
}

/* t's bytes go to the data file (or somewhere hostile). */
static void make_external(Gen *g, Onnx__TensorProto *t, const uint8_t *bytes, size_t nbytes)
{
	const char *dir = private_dir(g);
	if (!dir)
		return;
	size_t offset = g->next;
	uint8_t *grown = realloc(g->ext, g->next + nbytes + 1);
	if (!grown)
		return;
	g->ext = grown;
	memcpy(g->ext + g->next, bytes, nbytes);
	g->next += nbytes;
	const char *location = "w.bin";
	const char *off = arena_printf(g->A, "%zu", offset), *len = arena_printf(g->A, "%zu", nbytes);
	switch (pick(g, 12)) {
	case 8: location = "../w.bin"; break;
	case 9: location = arena_printf(g->A, "%s/w.bin", dir); break;   /* absolute, into our own folder */
	case 10: {
		static const char *const bad[] = {"99999999999999999", "9223372036854775807", "-1", "", "1e3", "4294967296"};
		*(pick(g, 2) ? &off : &len) = bad[pick(g, 6)];
		break;
	}
	case 11: {
		static const char *const bad[] = {"", ".", "missing.bin", "w.bin/", "./w.bin", "w.bin\n"};
		location = bad[pick(g, 6)];
		break;
	}
	default: break;
	}
	Onnx__StringStringEntryProto **ents = arena_alloc(g->A, sizeof *ents * 4);
	size_t n = 0;
	if (!one_in(g, 32))
		ents[n++] = entry(g, "location", location);
	if (pick(g, 2) || offset)
		ents[n++] = entry(g, "offset", off);
	if (pick(g, 2))
		ents[n++] = entry(g, "length", len);
	t->n_external_data = n;
	t->external_data = ents;
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* A tensor proto of dtype and shape; shape_like: ints that read as axes,
 * sizes or indices. */
static Onnx__TensorProto *make_tensor(Gen *g, const char *name, int dtype, int rank, const int64_t *dims, bool shape_like)
{
	Onnx__TensorProto *t = arena_alloc(g->A, sizeof *t);
	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = dtype;
	t->n_dims = (size_t)rank;
	t->dims = rank ? arena_dup(g->A, dims, sizeof *dims * (size_t)rank) : NULL;
	/* the data: as many elements as the dims say, unless they say too many */
	int64_t numel = 1;
	for (int i = 0; i < rank && numel >= 0; i++)
		numel = dims[i] < 0 || (dims[i] && numel > 4096 / dims[i]) ? -1 : numel * dims[i];
	if (numel < 0 || numel > 4096)
		numel = pick(g, 4);   /* dims that lie about the data */
	if (dtype == DT_STRING) {
		static const char *const strs[] = {"a", "", "hello", "\xff\xfe"};
		t->n_string_data = (size_t)numel;
		t->string_data = arena_alloc(g->A, sizeof *t->string_data * (size_t)(numel + 1));
		for (int64_t i = 0; i < numel; i++) {
			const char *s = strs[pick(g, 4)];
			t->string_data[i] = (ProtobufCBinaryData){strlen(s), (uint8_t *)s};
		}
		return t;
	}
	/* the standard dtypes through the evaluator's setters; float8, 4-bit
	 * and complex ones as random bytes */
	bool standard = dtype >= DT_FLOAT && dtype <= DT_BFLOAT16 && dtype != DT_COMPLEX64 && dtype != DT_COMPLEX128;
	int64_t flat = numel;
	EvValue *v = ev_tensor_new(dtype, 1, &flat);
	if (!v)
		return t;
	bool is_float = ev_is_float(dtype);
	for (int64_t i = 0; standard && i < numel; i++) {
		if (is_float)
			ev_set_f(v, i, gen_float(g));
		else if (dtype == DT_BOOL)
			ev_set_i(v, i, pick(g, 2) ? 0 : 1);
		else
			ev_set_i(v, i, shape_like ? gen_int(g, 4) : (int64_t)pick(g, 8) - 2);
	}
	for (size_t i = 0; !standard && i < v->nbytes; i++)
		((uint8_t *)v->data)[i] = (uint8_t)byte(g);
	unsigned how = pick(g, 16);
	if (how < 11 || v->nbytes == 0 || (!standard && how < 14)) {
		t->has_raw_data = 1;
		t->raw_data.len = v->nbytes;
		t->raw_data.data = arena_alloc(g->A, v->nbytes + 1);
		memcpy(t->raw_data.data, v->data, v->nbytes);
	} else if (how < 14) {
		/* the typed field ONNX keeps this dtype in; wrong ones now and then */
		int field = dtype == DT_FLOAT ? 0 : dtype == DT_DOUBLE ? 1 : dtype == DT_INT64 ? 2
		          : dtype == DT_UINT32 || dtype == DT_UINT64 ? 3 : 4;
		if (how == 13 && !g->tame)
			field = (int)pick(g, 5);
		size_t n = (size_t)numel;
		if (one_in(g, 8))
			n = n ? n - 1 : 1;   /* one element short or over */
		switch (field) {
		case 0:
			t->n_float_data = n;
			t->float_data = arena_alloc(g->A, sizeof(float) * (n + 1));
			for (size_t i = 0; i < n && i < (size_t)numel; i++)
				t->float_data[i] = (float)ev_get_f(v, (int64_t)i);
			break;
		case 1:
			t->n_double_data = n;
			t->double_data = arena_alloc(g->A, sizeof(double) * (n + 1));
			for (size_t i = 0; i < n && i < (size_t)numel; i++)
				t->double_data[i] = ev_get_f(v, (int64_t)i);
			break;
		case 2:
			t->n_int64_data = n;
			t->int64_data = arena_alloc(g->A, sizeof(int64_t) * (n + 1));
			for (size_t i = 0; i < n && i < (size_t)numel; i++)
				t->int64_data[i] = ev_get_i(v, (int64_t)i);
			break;
		case 3:
			t->n_uint64_data = n;
			t->uint64_data = arena_alloc(g->A, sizeof(uint64_t) * (n + 1));
			for (size_t i = 0; i < n && i < (size_t)numel; i++)
				t->uint64_data[i] = ev_get_u(v, (int64_t)i);
			break;
		default: {
			/* int32_data: small ints by value, 16- and 8-bit floats by their bits */
			int bits = dtype_bits(dtype);
			t->n_int32_data = n;
			t->int32_data = arena_alloc(g->A, sizeof(int32_t) * (n + 1));
			for (size_t i = 0; i < n && i < (size_t)numel; i++) {
				if (is_float && bits == 16)
					t->int32_data[i] = ((const uint16_t *)v->data)[i];
				else if (is_float && bits == 8)
					t->int32_data[i] = ((const uint8_t *)v->data)[i];
				else
					t->int32_data[i] = (int32_t)ev_get_i(v, (int64_t)i);
			}
			break;
		}
		}
	} else if (how == 14) {
		make_external(g, t, v->data, v->nbytes);
	} else {
		/* raw bytes of the wrong length, or raw and typed both */
		size_t len = pick(g, 2) ? v->nbytes + 1 + pick(g, 8) : v->nbytes / 2;
		t->has_raw_data = 1;
		t->raw_data.len = len;
		t->raw_data.data = arena_alloc(g->A, len + 1);
		memcpy(t->raw_data.data, v->data, len < v->nbytes ? len : v->nbytes);
		if (pick(g, 2) && !g->tame) {
			t->n_float_data = 1;
			t->float_data = arena_alloc(g->A, sizeof(float));
		}
	}
	ev_unref(v);
	return t;
}

/* A new constant initializer of the current graph. */
static const char *add_const(Gen *g, GGraph *gr, int dtype, bool shape_like)
{
	int64_t dims[64];
	int rank;
	if (shape_like) {
		rank = one_in(g, 8) ? 0 : 1;
		dims[0] = pick(g, 5);
		if (one_in(g, 32))
			dims[0] = gen_dim(g);
	} else {
		rank = gen_rank(g);
		for (int i = 0; i < rank; i++)
			dims[i] = gen_dim(g);
	}
	const char *name = fresh(g, "c");
	PUSH(g->A, gr->inits, gr->ninits, make_tensor(g, name, dtype, rank, dims, shape_like));
	add_val(g, name, dtype);
	return name;
}

/* A new scalar initializer holding *bytes. */
static const char *add_scalar(Gen *g, GGraph *gr, int dtype, const void *bytes)
{
	Onnx__TensorProto *t = arena_alloc(g->A, sizeof *t);
	onnx__tensor_proto__init(t);
	t->name = (char *)fresh(g, "c");
	t->has_data_type = 1;
	t->data_type = dtype;
	t->has_raw_data = 1;
	t->raw_data.len = (size_t)dtype_bits(dtype) / 8;
	t->raw_data.data = arena_dup(g->A, bytes, t->raw_data.len);
	PUSH(g->A, gr->inits, gr->ninits, t);
	add_val(g, t->name, dtype);
	return t->name;
}

/* A new input of the main graph. */
static const char *add_input(Gen *g, GGraph *gr, int dtype)
{
	static const char *const syms[] = {"N", "batch", "S"};
	int64_t dims[64];
	const char *params[64] = {0};
	int rank = gen_rank(g);
	for (int i = 0; i < rank; i++) {
		dims[i] = gen_dim(g);
		if (one_in(g, 8))
			params[i] = syms[pick(g, 3)];
	}
	const char *name = fresh(g, "in");
	PUSH(g->A, gr->inputs, gr->ninputs, value_info(g, name, tensor_type(g, dtype, rank, dims, params)));
	add_val(g, name, dtype);
	return name;
}

static bool is_shape_like(const char *formal)
{
	static const char *const names[] = {
		"shape", "axes", "pads", "repeats", "starts", "ends", "steps", "split", "K", "k", "sizes", "scales",
		"indices", "M", "trip_count", "max_output_boxes_per_class", "depth", "output_shape", "axis",
		"input_shape", "num_outputs", "sequence_lens", "position", "blocksize", "limit", "start", "delta",
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(formal, names[i]) == 0)
			return true;
	return false;
}

/* An operand of dtype: a value in scope (the most recent first), or a new
 * graph input or constant. */
static const char *operand(Gen *g, GGraph *gr, int dtype, bool shape_like)
{
	bool int_like = dtype == DT_INT64 || dtype == DT_INT32;
	if (shape_like && int_like && pick(g, 4) < 3)
		return add_const(g, gr, dtype, true);
	int cand[MAX_VALS], nc = 0;
	for (int i = g->nvals - 1; i >= 0; i--)
		if (g->vals[i].dtype == dtype)
			cand[nc++] = i;
	unsigned c = pick(g, 4);
	if (nc && c < 3)
		return g->vals[cand[pick(g, (unsigned)nc)]].name;
	if (g->depth == 0 && (c == 0 || pick(g, 2) == 0))
		return add_input(g, gr, dtype);
	return add_const(g, gr, dtype, shape_like);
}

/* ---- nodes ---------------------------------------------------------------------- */

typedef struct Bind {
	const char *param;
	int dtype;
} Bind;

/* The dtype of a formal: its concrete type, the one its type parameter is
 * bound to, or a new choice the constraint allows (then bound). */
static int formal_dtype(Gen *g, const OpSchema *s, const char *ts, Bind *b, int *nb)
{
	if (strncmp(ts, "tensor(", 7) == 0) {
		char buf[32];
		size_t n = strcspn(ts + 7, ")");
		snprintf(buf, sizeof buf, "%.*s", (int)(n < 31 ? n : 31), ts + 7);
		int dt = dtype_from_name(buf);
		return dt ? dt : DT_FLOAT;
	}
	for (int i = 0; i < *nb; i++)
		if (strcmp(b[i].param, ts) == 0)
			return b[i].dtype;
	uint32_t mask = 0;
	for (int i = 0; i < s->nconstraints; i++)
		if (strcmp(s->constraints[i].param, ts) == 0)
			mask = s->constraints[i].tensor_types;
	int dt = pick_dtype(g, mask);
	if (*nb < 16)
		b[(*nb)++] = (Bind){ts, dt};
	return dt;
}

static Onnx__NodeProto *new_node(Gen *g, const char *domain, const char *op)
{
	Onnx__NodeProto *n = arena_alloc(g->A, sizeof *n);
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->domain = (char *)domain;
	n->name = (char *)fresh(g, "n");
	return n;
}

static void node_io(Gen *g, Onnx__NodeProto *n, const char *const *in, int nin, const char *const *out, int nout)
{
	n->n_input = (size_t)nin;
	n->input = arena_alloc(g->A, sizeof *n->input * (size_t)(nin + 1));
	for (int i = 0; i < nin; i++)
		n->input[i] = (char *)in[i];
	n->n_output = (size_t)nout;
	n->output = arena_alloc(g->A, sizeof *n->output * (size_t)(nout + 1));
	for (int i = 0; i < nout; i++)
		n->output[i] = (char *)out[i];
}

static void add_attr(Gen *g, Onnx__NodeProto *n, Onnx__AttributeProto *a)
{
	PUSH(g->A, n->attribute, n->n_attribute, a);
}

static Onnx__AttributeProto *new_attr(Gen *g, const char *name, int type)
{
	Onnx__AttributeProto *a = arena_alloc(g->A, sizeof *a);
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = (Onnx__AttributeProto__AttributeType)type;
	return a;
}

static void gen_node(Gen *g, GGraph *gr);

/* A body graph: inputs of in_dt (named fresh, in scope inside it), a few
 * nodes reading them and outer values, and nout outputs, each an Identity
 * of a value in scope of out_dt[k] (0: any, and out_dt[k] is set). */
static Onnx__GraphProto *gen_body(Gen *g, int nin, const int *in_dt, int nout, int *out_dt)
{
	GGraph b = {0};
	int saved = g->nvals;
	g->depth++;
	for (int i = 0; i < nin; i++) {
		const char *name = fresh(g, "b");
		PUSH(g->A, b.inputs, b.ninputs, value_info(g, name, tensor_type(g, in_dt[i], one_in(g, 4) ? -1 : 0, NULL, NULL)));
		add_val(g, name, in_dt[i]);
	}
	int nnodes = g->depth > MAX_DEPTH ? 0 : (int)pick(g, 4);
	for (int i = 0; i < nnodes; i++)
		gen_node(g, &b);
	for (int k = 0; k < nout; k++) {
		if (!out_dt[k])
			out_dt[k] = g->nvals ? g->vals[g->nvals - 1 - (int)pick(g, (unsigned)g->nvals)].dtype : DT_FLOAT;
		const char *v = operand(g, &b, out_dt[k], false), *o = fresh(g, "bo");
		Onnx__NodeProto *id = new_node(g, "", "Identity");
		node_io(g, id, &v, 1, &o, 1);
		PUSH(g->A, b.nodes, b.nnodes, id);
		PUSH(g->A, b.outputs, b.noutputs, value_info(g, o, tensor_type(g, out_dt[k], -1, NULL, NULL)));
	}
	g->nvals = saved;
	g->depth--;
	Onnx__GraphProto *gp = arena_alloc(g->A, sizeof *gp);
	onnx__graph_proto__init(gp);
	gp->name = (char *)fresh(g, "body");
	gp->node = b.nodes;
	gp->n_node = b.nnodes;
	gp->input = b.inputs;
	gp->n_input = b.ninputs;
	gp->initializer = b.inits;
	gp->n_initializer = b.ninits;
	gp->output = b.outputs;
	gp->n_output = b.noutputs;
	return gp;
}

/* If: a bool condition (often constant: then the folder inlines a branch),
 * two bodies with outputs of the same dtypes. */
static void gen_if(Gen *g, GGraph *gr)
{
	int nout = 1 + (int)pick(g, 2), dt[2] = {0, 0};
	uint8_t c = (uint8_t)pick(g, 2);
	const char *cond = pick(g, 4) == 3 ? operand(g, gr, DT_BOOL, false) : add_scalar(g, gr, DT_BOOL, &c);
	Onnx__NodeProto *n = new_node(g, "", "If");
	Onnx__AttributeProto *then = new_attr(g, "then_branch", ATTR_GRAPH), *els = new_attr(g, "else_branch", ATTR_GRAPH);
	then->g = gen_body(g, 0, NULL, nout, dt);
	els->g = gen_body(g, 0, NULL, nout, dt);
	add_attr(g, n, then);
	if (!one_in(g, 16))
		add_attr(g, n, els);
	const char *out[2];
	for (int i = 0; i < nout; i++)
		out[i] = fresh(g, "v");
	node_io(g, n, &cond, 1, out, nout);
	PUSH(g->A, gr->nodes, gr->nnodes, n);
	for (int i = 0; i < nout; i++)
		add_val(g, out[i], dt[i]);
}

/* Loop: a trip count (small; now and then hostile), a condition, up to two
 * carried values and a scan output. */
static void gen_loop(Gen *g, GGraph *gr)
{
	int ncarried = (int)pick(g, 3), nscan = (int)pick(g, 2);
	const char *in[4];
	int in_dt[4] = {DT_INT64, DT_BOOL}, out_dt[6] = {DT_BOOL};
	bool no_m = one_in(g, 8), long_loop = false;
	if (no_m) {
		in[0] = "";
	} else {
		int64_t m = pick(g, 4);
		if (one_in(g, 16))
			m = pick(g, 2) && !g->tame ? 100000 : -1;
		long_loop = m == 100000;
		in[0] = add_scalar(g, gr, DT_INT64, &m);
	}
	/* no trip count: a false condition, or the loop would never end */
	uint8_t no = 0;
	in[1] = no_m ? add_scalar(g, gr, DT_BOOL, &no) : pick(g, 2) ? "" : operand(g, gr, DT_BOOL, false);
	for (int i = 0; i < ncarried; i++) {
		int dt = g->nvals ? g->vals[g->nvals - 1 - (int)pick(g, (unsigned)g->nvals)].dtype : DT_FLOAT;
		in[2 + i] = operand(g, gr, dt, false);
		in_dt[2 + i] = dt;
		out_dt[1 + i] = dt;
	}
	Onnx__NodeProto *n = new_node(g, "", "Loop");
	Onnx__AttributeProto *body = new_attr(g, "body", ATTR_GRAPH);
	/* a hostile trip count runs a body without nested If/Loop: 100000
	 * trips of nested loops are a legitimately long run (10 s under ASan),
	 * not a bug the campaign should stop on */
	bool flat = g->flat;
	g->flat = g->flat || long_loop;
	body->g = gen_body(g, 2 + ncarried, in_dt, 1 + ncarried + nscan, out_dt);
	g->flat = flat;
	/* the body's condition out: the condition in, mostly */
	if (pick(g, 4))
		body->g->node[body->g->n_node - 1 - ncarried - nscan]->input[0] = body->g->input[1]->name;
	add_attr(g, n, body);
	const char *out[4];
	for (int i = 0; i < ncarried + nscan; i++)
		out[i] = fresh(g, "v");
	node_io(g, n, in, 2 + ncarried, out, ncarried + nscan);
	PUSH(g->A, gr->nodes, gr->nnodes, n);
	for (int i = 0; i < ncarried + nscan; i++)
		add_val(g, out[i], out_dt[1 + i]);
}

static const char *const strings[] = {
	"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "linear", "nearest", "cubic", "constant", "reflect",
	"edge", "half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "round_prefer_floor",
	"floor", "ceil", "DCR", "CRD", "none", "tanh", "mean", "sum", "", "bogus", "ij,jk->ik", "i,i", "...",
	"Relu", "Sigmoid", "Tanh", "forward", "reverse", "bidirectional", "max", "min", "add", "mul",
};

static Onnx__AttributeProto *gen_attr(Gen *g, GGraph *gr, const OpAttrDef *ad, int out_dtype)
{
	int type = ad->type;
	if (one_in(g, 64))
		type = 1 + (int)pick(g, 8);   /* the wrong type for the name */
	Onnx__AttributeProto *a = new_attr(g, ad->name, type);
	switch (type) {
	case ATTR_INT:
		a->has_i = 1;
		if (!strcmp(ad->name, "to") || !strcmp(ad->name, "dtype") || !strcmp(ad->name, "output_dtype"))
			a->i = one_in(g, 16) ? gen_int(g, 4) : out_dtype;
		else
			a->i = gen_int(g, 4);
		if (g->tame && !strcmp(ad->name, "blocksize") && a->i < 1)
			a->i = 1;
		break;
	case ATTR_FLOAT:
		a->has_f = 1;
		a->f = (float)gen_float(g);
		break;
	case ATTR_STRING: {
		const char *s = ad->has_default && ad->s && pick(g, 2) ? ad->s : strings[pick(g, sizeof strings / sizeof *strings)];
		a->has_s = 1;
		a->s = (ProtobufCBinaryData){strlen(s), (uint8_t *)s};
		break;
	}
	case ATTR_INTS: {
		int n = (int)pick(g, 7);
		a->n_ints = (size_t)n;
		a->ints = arena_alloc(g->A, sizeof *a->ints * (size_t)(n + 1));
		bool perm = !strcmp(ad->name, "perm") && pick(g, 4);
		for (int i = 0; i < n; i++)
			a->ints[i] = perm ? i : gen_int(g, n);
		for (int i = n - 1; perm && i > 0; i--) {   /* a permutation, shuffled */
			int j = (int)pick(g, (unsigned)i + 1);
			int64_t t = a->ints[i];
			a->ints[i] = a->ints[j];
			a->ints[j] = t;
		}
		break;
	}
	case ATTR_FLOATS: {
		int n = (int)pick(g, 5);
		a->n_floats = (size_t)n;
		a->floats = arena_alloc(g->A, sizeof *a->floats * (size_t)(n + 1));
		for (int i = 0; i < n; i++)
			a->floats[i] = (float)gen_float(g);
		break;
	}
	case ATTR_STRINGS: {
		int n = (int)pick(g, 4);
		a->n_strings = (size_t)n;
		a->strings = arena_alloc(g->A, sizeof *a->strings * (size_t)(n + 1));
		for (int i = 0; i < n; i++) {
			const char *s = strings[pick(g, sizeof strings / sizeof *strings)];
			a->strings[i] = (ProtobufCBinaryData){strlen(s), (uint8_t *)s};
		}
		break;
	}
	case ATTR_TENSOR: {
		int64_t dims[64];
		int rank = gen_rank(g);
		for (int i = 0; i < rank; i++)
			dims[i] = gen_dim(g);
		a->t = make_tensor(g, "", out_dtype ? out_dtype : pick_dtype(g, 0), rank, dims, false);
		break;
	}
	case ATTR_GRAPH: {
		int dt[1] = {0};
		int nin = (int)pick(g, 3), in_dt[2] = {DT_FLOAT, DT_FLOAT};
		a->g = gen_body(g, nin, in_dt, 1, dt);
		break;
	}
	default:
		break;   /* an empty list of graphs, tensors, types */
	}
	(void)gr;
	return a;
}

/* One node of an op of the schema table. */
static void gen_node(Gen *g, GGraph *gr)
{
	size_t nall;
	const OpSchema *all = op_schema_all(&nall), *s = NULL;
	for (int t = 0; t < 8 && !s; t++) {
		const OpSchema *e = &all[pick(g, (unsigned)nall)];
		if (e->flags & OPF_VENDOR)
			s = e;
		else
			s = op_schema_lookup("", e->name, g->opset);
	}
	if (!s)
		s = op_schema_lookup("", "Relu", g->opset);
	if (!strcmp(s->domain, "") && !strcmp(s->name, "If") && g->depth <= MAX_DEPTH && !g->flat) {
		gen_if(g, gr);
		return;
	}
	if (!strcmp(s->domain, "") && !strcmp(s->name, "Loop") && g->depth <= MAX_DEPTH && !g->flat) {
		gen_loop(g, gr);
		return;
	}
	if (s->flags & OPF_VENDOR)
		g->vendor = true;
	Bind b[16];
	int nb = 0;
	/* inputs, positional: "" for an optional one left out before others */
	const char *in[128];
	int nin = 0;
	for (int i = 0; i < s->ninputs && nin < 100; i++) {
		const OpFormal *f = &s->inputs[i];
		int count = 1;
		if (f->option == OPT_OPTIONAL && pick(g, 3) == 2) {
			in[nin++] = "";
			continue;
		}
		if (f->option == OPT_VARIADIC)
			count = one_in(g, 32) && !g->tame ? 20 + (int)pick(g, 60) : 1 + (int)pick(g, 3);
		int dt = formal_dtype(g, s, f->type_str, b, &nb);
		for (int k = 0; k < count && nin < 100; k++) {
			int dtk = k && !f->homogeneous ? pick_dtype(g, 0) : dt;
			in[nin++] = operand(g, gr, dtk, is_shape_like(f->name));
		}
	}
	while (nin > 0 && !in[nin - 1][0] && pick(g, 8))
		nin--;   /* trailing omitted inputs left off, mostly */
	if (one_in(g, 32) && nin)
		nin--;   /* one input short */
	/* outputs */
	const char *out[128];
	int out_dt[128], nout = 0;
	for (int i = 0; i < s->noutputs && nout < 100; i++) {
		const OpFormal *f = &s->outputs[i];
		int count = 1;
		if (f->option == OPT_OPTIONAL && pick(g, 2)) {
			if (i == s->noutputs - 1)
				break;
			out[nout] = "";
			out_dt[nout++] = 0;
			continue;
		}
		if (f->option == OPT_VARIADIC)
			count = one_in(g, 32) && !g->tame ? 20 + (int)pick(g, 60) : 1 + (int)pick(g, 3);
		int dt = formal_dtype(g, s, f->type_str, b, &nb);
		for (int k = 0; k < count && nout < 100; k++) {
			out[nout] = fresh(g, "v");
			out_dt[nout++] = dt;
		}
	}
	Onnx__NodeProto *n = new_node(g, s->domain, s->name);
	if (!strcmp(s->name, "Constant") && !one_in(g, 8)) {
		add_attr(g, n, gen_attr(g, gr, &(OpAttrDef){.name = "value", .type = ATTR_TENSOR}, nout ? out_dt[0] : 0));
	} else {
		for (int i = 0; i < s->nattrs; i++)
			if (s->attrs[i].required || pick(g, 2))
				add_attr(g, n, gen_attr(g, gr, &s->attrs[i], nout ? out_dt[0] : 0));
		if (one_in(g, 64))
			add_attr(g, n, gen_attr(g, gr, &(OpAttrDef){.name = "bogus", .type = ATTR_INT}, 0));
	}
	node_io(g, n, in, nin, out, nout);
	PUSH(g->A, gr->nodes, gr->nnodes, n);
	for (int i = 0; i < nout; i++)
		if (out[i][0])
			add_val(g, out[i], out_dt[i]);
}

/* ---- the model ------------------------------------------------------------------ */

static Onnx__OperatorSetIdProto *opset_id(Gen *g, const char *domain, int version)
{
	Onnx__OperatorSetIdProto *o = arena_alloc(g->A, sizeof *o);
	onnx__operator_set_id_proto__init(o);
	o->domain = (char *)domain;
	o->has_version = 1;
	o->version = version;
	return o;
}

/* The model the choices in g describe, packed; NULL if none. */
static uint8_t *generate(Gen *g, size_t *len)
{
	static const int opsets[] = {17, 13, 11, 18, 21, 9, 7, 23, 15, 19, 14, 12};
	g->opset = opsets[pick(g, sizeof opsets / sizeof *opsets)];
	GGraph gr = {0};
	int ninputs = 1 + (int)pick(g, 3);
	for (int i = 0; i < ninputs; i++)
		add_input(g, &gr, pick_dtype(g, 0));
	int nconsts = (int)pick(g, 3);
	for (int i = 0; i < nconsts; i++)
		add_const(g, &gr, pick_dtype(g, 0), false);
	int first_node_val = g->nvals;
	int nnodes = 1 + (int)pick(g, MAX_NODES);
	for (int i = 0; i < nnodes; i++)
		gen_node(g, &gr);
	/* graph outputs: the newest values mostly, now and then an intermediate
	 * that other nodes read too, or an input */
	int nout = 1 + (int)pick(g, 3);
	for (int i = 0; i < nout && g->nvals; i++) {
		int span = one_in(g, 8) || g->nvals == first_node_val ? g->nvals : g->nvals - first_node_val;
		const GVal *v = &g->vals[g->nvals - 1 - (int)pick(g, (unsigned)span)];
		Onnx__TypeProto *t = one_in(g, 16) ? NULL : tensor_type(g, v->dtype, -1, NULL, NULL);
		PUSH(g->A, gr.outputs, gr.noutputs, value_info(g, v->name, t));
	}
	g->load_file = one_in(g, 4);
	Onnx__GraphProto graph;
	onnx__graph_proto__init(&graph);
	graph.name = (char *)"fuzz";
	graph.node = gr.nodes;
	graph.n_node = gr.nnodes;
	graph.input = gr.inputs;
	graph.n_input = gr.ninputs;
	graph.initializer = gr.inits;
	graph.n_initializer = gr.ninits;
	graph.output = gr.outputs;
	graph.n_output = gr.noutputs;
	Onnx__ModelProto m;
	onnx__model_proto__init(&m);
	m.has_ir_version = 1;
	m.ir_version = g->opset <= 17 ? 8 : g->opset <= 20 ? 9 : 10;
	m.producer_name = (char *)"fuzz-graph";
	Onnx__OperatorSetIdProto *ops[2] = {opset_id(g, "", g->opset), opset_id(g, "com.microsoft", 1)};
	m.opset_import = ops;
	m.n_opset_import = g->vendor ? 2 : 1;
	m.graph = &graph;
	*len = onnx__model_proto__get_packed_size(&m);
	uint8_t *buf = malloc(*len ? *len : 1);
	if (buf)
		onnx__model_proto__pack(&m, buf);
	return buf;
}

static void gen_init(Gen *g, const uint8_t *data, size_t size)
{
	memset(g, 0, sizeof *g);
	g->p = data;
	g->n = size;
	g->A = arena_new();
	const char *tame = getenv("FUZZ_GRAPH_TAME");
	g->tame = tame && *tame && strcmp(tame, "0") != 0;
}

static void gen_cleanup(Gen *g)
{
	if (g->dir[0]) {
		char path[128];
		snprintf(path, sizeof path, "%s/w.bin", g->dir);
		unlink(path);
		snprintf(path, sizeof path, "%s/m.onnx", g->dir);
		unlink(path);
		rmdir(g->dir);
	}
	free(g->ext);
	arena_free(g->A);
}

uint8_t *fuzz_graph_model(const uint8_t *data, size_t size, size_t *len)
{
	Gen g;
	gen_init(&g, data, size);
	uint8_t *buf = generate(&g, len);
	gen_cleanup(&g);
	return buf;
}

/* ---- running it ------------------------------------------------------------------ */

static FILE *verbose;

/* FUZZ_GRAPH_STATS=1: how far the inputs got, printed at exit. */
static struct {
	long inputs, loaded, inferred, optimized, saved, ran, ran_both, compared, differed, dims_checked, dims_wrong;
} stats;

static void print_stats(void)
{
	fprintf(stderr, "fuzz-graph: %ld inputs, %ld loaded, %ld inferred; %ld optimizations ran, %ld saved and "
	        "reloaded; %ld runs of the original, %ld of both; %ld outputs compared, %ld differ; %ld inferred "
	        "dims checked, %ld wrong\n", stats.inputs, stats.loaded, stats.inferred, stats.optimized, stats.saved,
	        stats.ran, stats.ran_both, stats.compared, stats.differed, stats.dims_checked, stats.dims_wrong);
}

static IrModel *load(Gen *g, const uint8_t *buf, size_t len, const char *stage)
{
	Diag d;
	diag_init(&d, verbose);
	IrModel *m;
	if (g->load_file && g->dir[0]) {
		char path[128];
		snprintf(path, sizeof path, "%s/m.onnx", g->dir);
		FILE *f = fopen(path, "wb");
		if (!f)
			return NULL;
		fwrite(buf, 1, len, f);
		fclose(f);
		m = ir_load_file(path, NULL, &d);
	} else {
		m = ir_load_bytes(buf, len, stage, g->dir[0] ? g->dir : NULL, NULL, &d);
	}
	if (!m && (!d.nerrors || !d.first[0]))
		abort();   /* refused without a message */
	return m;
}

static bool all_finite(const EvValue *v)
{
	for (int64_t i = 0; i < v->numel; i++)
		if (!isfinite(ev_get_f(v, i)))
			return false;
	return true;
}

static void differ(const char *what, const char *name)
{
	if (verbose)
		fprintf(verbose, "fuzz-graph: %s: %s\n", name, what);
	const char *e = getenv("FUZZ_GRAPH_DIFF");
	stats.differed++;
	if (e && *e && strcmp(e, "0") != 0) {
		fprintf(stderr, "fuzz-graph: the optimized model differs: output '%s': %s\n", name, what);
		__builtin_trap();
	}
}

/* How the fuzzer runs models: a Loop of up to 100 iterations (a drawn
 * trip count near the evaluator's default of 100,000,000 ran for minutes,
 * a libFuzzer timeout). */
static const EvOptions fuzz_run = {.max_loop_trips = 100};

/* Run a and b on the same generated inputs; compare where both ran. */
static void run_both(IrModel *a, IrModel *b, uint32_t seed)
{
	Diag d;
	diag_init(&d, verbose);
	IrGraph *ga = ir_graph(a, IR_MAIN_GRAPH), *gb = ir_graph(b, IR_MAIN_GRAPH);
	ValueId *fa = calloc(ga->ninputs + 1, sizeof *fa), *fb = calloc(gb->ninputs + 1, sizeof *fb);
	uint32_t na = run_fed_inputs(a, fa), nb = run_fed_inputs(b, fb);
	bool same = na == nb && ga->noutputs == gb->noutputs;
	for (uint32_t i = 0; same && i < na; i++)
		same = strcmp(ir_value(a, fa[i])->name, ir_value(b, fb[i])->name) == 0;
	for (uint32_t i = 0; same && i < ga->noutputs; i++)
		same = strcmp(ir_value(a, ga->outputs[i])->name, ir_value(b, gb->outputs[i])->name) == 0;
	free(fa);
	free(fb);
	if (!same) {
		differ("the interface changed", "-");
		return;
	}
	RunOptions ro = {.seed = seed, .int_lo = -1, .int_hi = 4};
	EvValue **ia = calloc(ga->ninputs + 1, sizeof *ia), **ib = calloc(gb->ninputs + 1, sizeof *ib);
	EvValue **oa = calloc(ga->noutputs + 1, sizeof *oa), **ob = calloc(gb->noutputs + 1, sizeof *ob);
	bool ok = run_prepare_inputs(a, &ro, ia, &d);
	for (uint32_t i = 0; ok && i < gb->ninputs; i++)
		for (uint32_t k = 0; k < ga->ninputs; k++)
			if (ia[k] && strcmp(ir_value(a, ga->inputs[k])->name, ir_value(b, gb->inputs[i])->name) == 0)
				ib[i] = ev_ref(ia[k]);
	bool ok_a = ok && ev_run(a, (const EvValue *const *)ia, ga->ninputs, oa, &fuzz_run, &d);
	bool ok_b = ok_a && ev_run(b, (const EvValue *const *)ib, gb->ninputs, ob, &fuzz_run, &d);
	stats.ran += ok_a;
	stats.ran_both += ok_a && ok_b;
	if (ok_a && !ok_b)
		differ(d.last, "(the optimized model fails to run)");
	for (uint32_t i = 0; ok_a && ok_b && i < ga->noutputs; i++) {
		const EvValue *x = oa[i], *y = ob[i];
		const char *name = ir_value(a, ga->outputs[i])->name;
		if (!x || !y || x->kind != y->kind) {
			differ("a value of another kind", name);
			continue;
		}
		if (x->kind != EV_TENSOR || x->dtype == DT_STRING || y->dtype == DT_STRING)
			continue;
		RunDiff r;
		stats.compared++;
		if (ev_is_float(x->dtype) || ev_is_float(y->dtype)) {
			if (x->dtype == y->dtype && (!all_finite(x) || !all_finite(y)))
				continue;
			run_compare(x, y, 1e-3, 1e-4, &r);
		} else {
			run_compare_exact(x, y, &r);
		}
		if (!r.agree)
			differ(!r.same_type ? "dtype differs" : !r.same_shape ? "shape differs" : "values differ", name);
	}
	for (uint32_t i = 0; i < ga->ninputs; i++)
		ev_unref(ia[i]);
	for (uint32_t i = 0; i < gb->ninputs; i++)
		ev_unref(ib[i]);
	for (uint32_t i = 0; i < ga->noutputs; i++)
		ev_unref(oa[i]);
	for (uint32_t i = 0; i < gb->noutputs; i++)
		ev_unref(ob[i]);
	free(ia);
	free(ib);
	free(oa);
	free(ob);
}

/* Optimize a fresh load of the model one way, save, reload, run against orig. */
static void optimize_one(Gen *g, const uint8_t *buf, size_t len, IrModel *orig, const RwOptions *ro, uint32_t seed)
{
	static const RwRuleSet *const library[] = {&graft_rules_basic, &graft_rules_extended};
	IrModel *m = load(g, buf, len, "fuzz.onnx");
	if (!m)
		abort();   /* loaded once, refused the second time */
	Diag d;
	diag_init(&d, verbose);
	RwResult r;
	rw_run(m, library, 2, ro, &r, &d);
	RwStop stop = r.stop;
	rw_result_free(&r);
	stats.optimized += stop != RW_ERROR;
	if (stop == RW_ERROR) {
		ir_model_free(m);
		return;
	}
	if (!ir_validate(m, &d)) {
		fprintf(stderr, "fuzz-graph: the optimized graph is invalid: %s\n", d.first);
		abort();
	}
	uint8_t *out;
	size_t outlen;
	if (!ir_save_bytes(m, &out, &outlen, &d)) {
		ir_model_free(m);
		return;
	}
	ir_model_free(m);
	Diag d2;
	diag_init(&d2, verbose);
	IrModel *back = ir_load_bytes(out, outlen, "fuzz.opt.onnx", g->dir[0] ? g->dir : NULL, NULL, &d2);
	if (!back) {
		fprintf(stderr, "fuzz-graph: graft cannot load what it saved: %s\n", d2.first);
		abort();
	}
	stats.saved++;
	run_both(orig, back, seed);
	ir_model_free(back);
	free(out);
}

/* Shape inference against the kernels: every value of the main graph made a
 * graph output, the model inferred and run; a dim inference claims to know
 * must be the dim the kernel computed (a wrong one is a wrong fold waiting
 * to happen: the Shape of it).  Counted; a trap with FUZZ_GRAPH_DIMS=1 (or
 * FUZZ_GRAPH_DIFF=1, which also traps on outputs that differ). */
static void check_inferred_dims(Gen *g, const uint8_t *buf, size_t len, uint32_t seed)
{
	IrModel *m = load(g, buf, len, "fuzz.onnx");
	if (!m)
		abort();   /* loaded once, refused the second time */
	IrGraph *gr = ir_graph(m, IR_MAIN_GRAPH);
	for (NodeId n = gr->first; n; n = ir_node(m, n)->next) {
		IrNode *node = ir_node(m, n);
		for (uint32_t k = 0; k < node->noutputs; k++)
			if (node->outputs[k] && !ir_value(m, node->outputs[k])->is_output)
				ir_add_output(m, IR_MAIN_GRAPH, node->outputs[k]);
	}
	Diag d;
	diag_init(&d, verbose);
	InferState *s = infer_new(m);
	bool inferred = infer_model(s, &d);
	infer_free(s);
	gr = ir_graph(m, IR_MAIN_GRAPH);
	RunOptions ro = {.seed = seed, .int_lo = -1, .int_hi = 4};
	EvValue **in = calloc(gr->ninputs + 1, sizeof *in), **out = calloc(gr->noutputs + 1, sizeof *out);
	if (inferred && run_prepare_inputs(m, &ro, in, &d) &&
	    ev_run(m, (const EvValue *const *)in, gr->ninputs, out, &fuzz_run, &d)) {
		for (uint32_t i = 0; i < gr->noutputs; i++) {
			const IrValue *v = ir_value(m, gr->outputs[i]);
			const EvValue *x = out[i];
			if (!x || x->kind != EV_TENSOR || v->shape.rank < 0)
				continue;
			bool wrong = v->shape.rank != x->rank;
			for (int k = 0; !wrong && k < v->shape.rank; k++)
				wrong = v->shape.dims[k].size >= 0 && v->shape.dims[k].size != x->dims[k];
			stats.dims_checked++;
			if (!wrong)
				continue;
			stats.dims_wrong++;
			if (verbose)
				fprintf(verbose, "fuzz-graph: %s: inferred dims differ from the computed ones\n", v->name);
			const char *e = getenv("FUZZ_GRAPH_DIMS"), *f = getenv("FUZZ_GRAPH_DIFF");
			if ((e && *e && strcmp(e, "0") != 0) || (f && *f && strcmp(f, "0") != 0)) {
				fprintf(stderr, "fuzz-graph: value '%s': inferred rank %d dims differ from the computed rank %d\n",
				        v->name, v->shape.rank, x->rank);
				__builtin_trap();
			}
		}
	}
	for (uint32_t i = 0; i < gr->ninputs; i++)
		ev_unref(in[i]);
	for (uint32_t i = 0; i < gr->noutputs; i++)
		ev_unref(out[i]);
	free(in);
	free(out);
	ir_model_free(m);
}

int fuzz_graph_one(const uint8_t *data, size_t size)
{
	if (!verbose && getenv("FUZZ_GRAPH_VERBOSE"))
		verbose = stderr;
	if (!stats.inputs++ && getenv("FUZZ_GRAPH_STATS"))
		atexit(print_stats);
	ev_set_numel_limit(NUMEL_LIMIT);
	Gen g;
	gen_init(&g, data, size);
	size_t len;
	uint8_t *buf = generate(&g, &len);
	uint32_t seed = byte(&g);
	bool nhwc = one_in(&g, 4);
	if (g.next && private_dir(&g)) {
		char path[128];
		snprintf(path, sizeof path, "%s/w.bin", g.dir);
		FILE *f = fopen(path, "wb");
		if (f) {
			fwrite(g.ext, 1, g.next, f);
			fclose(f);
		}
	}
	if (g.load_file)
		private_dir(&g);
	IrModel *orig = buf ? load(&g, buf, len, "fuzz.onnx") : NULL;
	if (orig) {
		Diag d;
		diag_init(&d, verbose);
		InferState *s = infer_new(orig);
		stats.loaded++;
		stats.inferred += infer_model(s, &d);
		infer_free(s);
		check_inferred_dims(&g, buf, len, seed);
		RwOptions def = {.fuel = 2000, .fold = {.max_bytes = NUMEL_LIMIT}};
		optimize_one(&g, buf, len, orig, &def, seed);
		RwOptions ext = {.fuel = 2000, .fold = {.max_bytes = NUMEL_LIMIT}, .allow_vendor_ops = true,
		                 .levels = 1u << RW_LEVEL_EXTENDED};
		if (nhwc) {
			ext.levels = 0;
			ext.layout_nhwc = true;
		}
		optimize_one(&g, buf, len, orig, &ext, seed);
		ir_model_free(orig);
	}
	free(buf);
	gen_cleanup(&g);
	ev_set_numel_limit(0);   /* the process may go on to other things (make test with CK_FORK=no) */
	return 0;
}
