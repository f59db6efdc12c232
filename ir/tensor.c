/* tensor.c - tensor constants of the IR: data types, element counts, and
 * access to a tensor's bytes whatever field of the TensorProto holds them.
 *
 * Bytes are shared, not copied: a tensor loaded with raw_data points into the
 * unpacked protobuf, or for large ones into the input file itself (copied on
 * first typed access only if misaligned for the element type).  Typed fields
 * (float_data, int64_data, ...) are decoded to raw little-endian bytes on
 * first use and the buffer is owned.  A deferred tensor's bytes are computed
 * on first use too, or read piece by piece (ir_tensor_read).
 *
 * A tensor converts to and from a TensorProto's bytes here too (.pb files,
 * ir_tensor_decode / ir_tensor_encode), and string elements are read here
 * (ir_tensor_string), so the evaluator never sees protobuf.
 *
 * The model's storage is freed here too, below graph.c's ir_model_free:
 * the tensors' own buffers, then the loaded file (unpacked protobuf, input
 * file and external-data mappings) that onnx_load.c attached and the
 * borrowed bytes point into. */
#include "ir.h"
#include "ir_internal.h"
#include "arena.h"
#include "gen/onnx.pb-c.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const struct { const char *name; int bits; } dtypes[DT_COUNT] = {
	[DT_UNDEFINED] = {"undefined", 0},
	[DT_FLOAT] = {"float", 32},     [DT_UINT8] = {"uint8", 8},
	[DT_INT8] = {"int8", 8},        [DT_UINT16] = {"uint16", 16},
	[DT_INT16] = {"int16", 16},     [DT_INT32] = {"int32", 32},
	[DT_INT64] = {"int64", 64},     [DT_STRING] = {"string", 0},
	[DT_BOOL] = {"bool", 8},        [DT_FLOAT16] = {"float16", 16},
	[DT_DOUBLE] = {"double", 64},   [DT_UINT32] = {"uint32", 32},
	[DT_UINT64] = {"uint64", 64},   [DT_COMPLEX64] = {"complex64", 64},
	[DT_COMPLEX128] = {"complex128", 128}, [DT_BFLOAT16] = {"bfloat16", 16},
	[DT_FLOAT8E4M3FN] = {"float8e4m3fn", 8}, [DT_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 8},
	[DT_FLOAT8E5M2] = {"float8e5m2", 8}, [DT_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 8},
	[DT_UINT4] = {"uint4", 4},      [DT_INT4] = {"int4", 4},
	[DT_FLOAT4E2M1] = {"float4e2m1", 4},
};

const char *dtype_name(int dt)
{
	return dt > 0 && dt < DT_COUNT ? dtypes[dt].name : "?";
}

int dtype_from_name(const char *name)
{
	for (int dt = 1; dt < DT_COUNT; dt++)
		if (strcmp(dtypes[dt].name, name) == 0)
			return dt;
	return DT_UNDEFINED;
}

int dtype_bits(int dt)
{
	return dt > 0 && dt < DT_COUNT ? dtypes[dt].bits : 0;
}

int64_t ir_numel(const int64_t *dims, int rank)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || __builtin_mul_overflow(n, dims[i], &n))
			return -1;
	}
	return n;
}

/* Bytes needed for numel elements of dt (sub-byte types round up), or -1. */
static int64_t data_bytes(int dt, int64_t numel)
{
	int bits = dtype_bits(dt);
	int64_t b;
	if (numel < 0 || __builtin_mul_overflow(numel, (int64_t)bits, &b))
		return -1;
	return (b + 7) / 8;
}

static TensorId tensor_alloc(IrModel *m)
{
	if (m->ntensors + 1 > m->captensors) {
		uint32_t cap = m->captensors * 2;
		IrTensor *t = realloc(m->tensors, cap * sizeof *t);
		if (!t)
			abort();
		memset(t + m->captensors, 0, (cap - m->captensors) * sizeof *t);
		m->tensors = t;
		m->captensors = cap;
	}
	TensorId id = m->ntensors++;
	memset(&m->tensors[id], 0, sizeof m->tensors[id]);
	return id;
}

TensorId ir_tensor_new(IrModel *m, int dtype, const int64_t *dims, int rank, const void *data, size_t nbytes)
{
	TensorId id = tensor_alloc(m);
	IrTensor *t = &m->tensors[id];
	t->dtype = dtype;
	t->rank = rank;
	t->dims = arena_dup(m->arena, dims, sizeof *dims * (size_t)rank);
	t->numel = ir_numel(dims, rank);
	if (nbytes) {
		uint8_t *copy = malloc(nbytes);
		if (!copy)
			abort();
		memcpy(copy, data, nbytes);
		t->data = copy;
		t->owns_data = true;
	}
	t->nbytes = nbytes;
	t->dirty = true;
	return id;
}

TensorId ir_tensor_adopt(IrModel *m, int dtype, const int64_t *dims, int rank, void *data, size_t nbytes)
{
	TensorId id = ir_tensor_new(m, dtype, dims, rank, NULL, 0);
	IrTensor *t = &m->tensors[id];
	if (nbytes) {
		t->data = data;
		t->owns_data = true;
		t->nbytes = nbytes;
	} else {
		free(data);
	}
	return id;
}

/* The typed fields of a TensorProto, used when raw_data is not. */
enum { F_FLOAT, F_DOUBLE, F_INT64, F_UINT64, F_INT32, F_COUNT };
static const char *const field_names[F_COUNT] = {
	"float_data", "double_data", "int64_data", "uint64_data", "int32_data",
};

/* The one field that holds dt's values (decode_typed reads no other). */
static int typed_field(int dt)
{
	switch (dt) {
	case DT_FLOAT: case DT_COMPLEX64: return F_FLOAT;
	case DT_DOUBLE: case DT_COMPLEX128: return F_DOUBLE;
	case DT_INT64: return F_INT64;
	case DT_UINT32: case DT_UINT64: return F_UINT64;
	default: return F_INT32;  /* every other type of 32 bits or less */
	}
}

static size_t typed_count(const Onnx__TensorProto *p, int f)
{
	switch (f) {
	case F_FLOAT: return p->n_float_data;
	case F_DOUBLE: return p->n_double_data;
	case F_INT64: return p->n_int64_data;
	case F_UINT64: return p->n_uint64_data;
	default: return p->n_int32_data;
	}
}

/* Wrap a loaded TensorProto.  Checks that dims and data agree, so every
 * later reader can trust nbytes.  External data is resolved by the loader. */
TensorId ir_tensor_from_proto(IrModel *m, const Onnx__TensorProto *p, const char *where, Diag *d)
{
	const char *tname = p->name ? p->name : "";
	if (p->n_dims > IR_MAX_RANK) {
		diag_error(d, where, "tensor '%s': rank %zu is over graft's limit of %d", tname, p->n_dims, IR_MAX_RANK);
		return 0;
	}
	int64_t numel = ir_numel(p->dims, (int)p->n_dims);
	if (numel < 0) {
		for (size_t i = 0; i < p->n_dims; i++)
			if (p->dims[i] < 0) {
				diag_error(d, where, "tensor '%s': negative dimension %lld",
				           tname, (long long)p->dims[i]);
				return 0;
			}
		diag_error(d, where, "tensor '%s': element count overflows int64", tname);
		return 0;
	}
	int dt = p->data_type;
	if (dt <= 0 || dt >= DT_COUNT) {
		diag_error(d, where, "tensor '%s': unknown data type %d", tname, dt);
		return 0;
	}
	int64_t need = data_bytes(dt, numel);
	if (dt != DT_STRING && need < 0) {
		diag_error(d, where, "tensor '%s': byte size overflows int64", tname);
		return 0;
	}
	bool external = p->has_data_location &&
	                p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	if (!external && dt != DT_STRING) {
		size_t have;
		const char *field = "raw_data";
		if (p->has_raw_data) {
			have = p->raw_data.len;
		} else {
			/* the one typed field dt keeps its values in (decode_typed
			 * reads only that one): data in another is refused */
			int f = typed_field(dt);
			field = field_names[f];
			for (int o = 0; o < F_COUNT; o++)
				if (o != f && typed_count(p, o)) {
					diag_error(d, where, "tensor '%s': %s values are in %s, not %s",
					           tname, dtype_name(dt), field_names[o], field);
					return 0;
				}
			int per = dt == DT_COMPLEX64 || dt == DT_COMPLEX128 ? 2 : 1;
			size_t elems = typed_count(p, f);
			if (elems % (size_t)per) {
				diag_error(d, where, "tensor '%s': %s holds %zu values, not pairs",
				           tname, field, elems);
				return 0;
			}
			have = elems / (size_t)per;
		}
		/* typed fields count elements (4-bit types: one packed byte, two
		 * values, per int32 entry); raw_data counts bytes */
		int64_t want = p->has_raw_data ? need : dtype_bits(dt) == 4 ? (numel + 1) / 2 : numel;
		if ((int64_t)have != want) {
			diag_error(d, where, "tensor '%s': %s holds %zu %s, dims need %lld",
			           tname, field, have, p->has_raw_data ? "bytes" : "elements", (long long)want);
			return 0;
		}
	} else if (!external && (int64_t)p->n_string_data != numel) {
		diag_error(d, where, "tensor '%s': string_data holds %zu strings, dims need %lld",
		           tname, p->n_string_data, (long long)numel);
		return 0;
	}
	TensorId id = tensor_alloc(m);
	IrTensor *t = &m->tensors[id];
	t->proto = p;
	t->dtype = dt;
	t->rank = (int)p->n_dims;
	t->dims = p->dims;
	t->numel = numel;
	t->external = external;
	if (!external && p->has_raw_data) {
		t->data = p->raw_data.data;
		t->nbytes = p->raw_data.len;
	} else if (dt != DT_STRING) {
		t->nbytes = (size_t)need;
	}
	return id;
}

/* Decode typed fields into little-endian raw bytes (x86 and ARM are little-endian;
 * a big-endian port would byte-swap here). */
static uint8_t *decode_typed(const Onnx__TensorProto *p, int dt, int64_t numel, size_t nbytes)
{
	uint8_t *out = calloc(1, nbytes ? nbytes : 1);
	if (!out)
		abort();
	for (int64_t i = 0; i < numel; i++) {
		switch (dt) {
		case DT_FLOAT: ((float *)out)[i] = p->float_data[i]; break;
		case DT_COMPLEX64: memcpy(out, p->float_data, nbytes); return out;
		case DT_DOUBLE: ((double *)out)[i] = p->double_data[i]; break;
		case DT_COMPLEX128: memcpy(out, p->double_data, nbytes); return out;
		case DT_INT64: ((int64_t *)out)[i] = p->int64_data[i]; break;
		case DT_UINT32: ((uint32_t *)out)[i] = (uint32_t)p->uint64_data[i]; break;
		case DT_UINT64: ((uint64_t *)out)[i] = p->uint64_data[i]; break;
		case DT_INT32: ((int32_t *)out)[i] = p->int32_data[i]; break;
		case DT_INT16: case DT_UINT16: case DT_FLOAT16: case DT_BFLOAT16:
			((uint16_t *)out)[i] = (uint16_t)p->int32_data[i]; break;
		case DT_UINT4: case DT_INT4: case DT_FLOAT4E2M1:
			/* int32_data holds one packed byte (two values) per entry */
			for (size_t b = 0; b < nbytes; b++)
				out[b] = (uint8_t)p->int32_data[b];
			return out;
		default: /* 8-bit types and bool */
			out[i] = (uint8_t)p->int32_data[i]; break;
		}
	}
	return out;
}

const uint8_t *ir_tensor_raw(IrModel *m, TensorId id, size_t *nbytes)
{
	IrTensor *t = &m->tensors[id];
	if (t->dtype == DT_STRING) {
		*nbytes = 0;
		return NULL;
	}
	if (!t->data && t->proto) {
		t->data = decode_typed(t->proto, t->dtype, t->numel, t->nbytes);
		t->owns_data = true;
	}
	if (!t->data && t->deferred) {
		/* computed all at once for a reader that wants it all; the recipe
		 * (and its hold on what it reads) goes */
		uint8_t *buf = malloc(t->nbytes ? t->nbytes : 1);
		if (!buf)
			abort();
		IrDeferred *d = t->deferred;
		d->fill(m, d, 0, t->nbytes, buf);
		t = &m->tensors[id];
		t->data = buf;
		t->owns_data = true;
		t->deferred = NULL;
		d->release(m, d);
	}
	*nbytes = t->nbytes;
	return t->data;
}

TensorId ir_tensor_deferred(IrModel *m, int dtype, const int64_t *dims, int rank, size_t nbytes, IrDeferred *d)
{
	TensorId id = ir_tensor_new(m, dtype, dims, rank, NULL, 0);
	m->tensors[id].nbytes = nbytes;
	m->tensors[id].deferred = d;
	return id;
}

void ir_tensor_read(IrModel *m, TensorId id, size_t off, size_t len, uint8_t *out)
{
	IrTensor *t = &m->tensors[id];
	if (!t->data && t->deferred) {
		if (off > t->nbytes || len > t->nbytes - off)
			return; /* outside the tensor: nothing to read */
		/* a recipe computes whole elements into memory aligned for them;
		 * any other piece goes through an aligned buffer */
		size_t es = dtype_bits(t->dtype) >= 8 ? (size_t)dtype_bits(t->dtype) / 8 : 1;
		if (off % es == 0 && len % es == 0 && (uintptr_t)out % es == 0) {
			t->deferred->fill(m, t->deferred, off, len, out);
			return;
		}
		_Alignas(16) uint8_t buf[4096];
		while (len) {
			size_t start = off / es * es, end = start + sizeof buf;
			if (end > t->nbytes)
				end = t->nbytes;
			t->deferred->fill(m, t->deferred, start, end - start, buf);
			size_t k = end - off < len ? end - off : len;
			memcpy(out, buf + (off - start), k);
			out += k, off += k, len -= k;
		}
		return;
	}
	size_t n;
	const uint8_t *b = ir_tensor_raw(m, id, &n);
	if (len && b && off <= n && len <= n - off)
		memcpy(out, b + off, len);
}

void ir_tensor_hold(IrModel *m, TensorId id)
{
	m->tensors[id].nholds++;
}

/* The whole pages of [p, p + n), bytes of a mapped external data file,
 * leave the process's memory (they stay in the file and the page cache; a
 * later read maps them back): a weight nothing reads no longer counts. */
static void drop_pages(const uint8_t *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
	if (lo < hi)
		madvise((void *)lo, hi - lo, MADV_DONTNEED); /* advice: failing changes nothing */
}

/* Do [p, p + n) lie in a file m mapped (the model file, an external data file)? */
static bool in_mapped_file(const IrModel *m, const uint8_t *p, size_t n)
{
	const uint8_t *base = m->map;
	if (base && p >= base && p <= base + m->map_len && n <= m->map_len - (size_t)(p - base))
		return true;
	for (uint32_t i = 0; i < m->next_maps; i++) {
		base = m->ext_maps[i].base;
		if (base && p >= base && p <= base + m->ext_maps[i].len && n <= m->ext_maps[i].len - (size_t)(p - base))
			return true;
	}
	return false;
}

/* The pages of [p, p + n) leave memory if they lie in a mapped file. */
static void evict_range(const IrModel *m, const uint8_t *p, size_t n)
{
	if (p && in_mapped_file(m, p, n))
		drop_pages(p, n);
}

void ir_tensor_evict(IrModel *m, TensorId id)
{
	IrTensor *t = &m->tensors[id];
	if (!t->owns_data)
		evict_range(m, t->data, t->nbytes);
	if (t->deferred && t->deferred->evict)
		t->deferred->evict(m, t->deferred);
}

void ir_tensor_evict_sampled(IrModel *m, TensorId id)
{
	if (m->next_maps)
		ir_tensor_evict(m, id);
}

/* Nothing reads t any more (no live value, no recipe): bytes the IR made go,
 * and so does a recipe, with its own holds; pages of a mapped external
 * tensor leave memory. */
void ir_tensor_let_go(IrModel *m, TensorId id)
{
	IrTensor *t = &m->tensors[id];
	if (!t->nvalues && !t->nholds && t->external && !t->owns_data && t->data)
		drop_pages(t->data, t->nbytes);
	if (t->nvalues || t->nholds || t->proto || t->external)
		return;
	if (t->owns_data) {
		free((void *)t->data);
		t->data = NULL;
		t->owns_data = false;
		t->nbytes = 0;
	}
	if (t->deferred) {
		IrDeferred *d = t->deferred;
		t->deferred = NULL;
		t->nbytes = 0;
		if (!t->owns_data)
			t->data = NULL; /* bytes shared with what the recipe held */
		d->release(m, d);
	}
}

void ir_tensor_unhold(IrModel *m, TensorId id)
{
	if (m->tensors[id].nholds && --m->tensors[id].nholds == 0)
		ir_tensor_let_go(m, id);
}

bool ir_tensor_aligned(const IrTensor *t)
{
	int bits = dtype_bits(t->dtype);
	uintptr_t align = bits >= 64 ? 8 : bits >= 8 ? (uintptr_t)bits / 8 : 1;
	return !((uintptr_t)t->data & (align - 1));
}

const uint8_t *ir_tensor_bytes(IrModel *m, TensorId id, size_t *nbytes)
{
	IrTensor *t = &m->tensors[id];
	ir_tensor_raw(m, id, nbytes);
	/* Bytes aliased into the input file (onnx_load.c) sit wherever the file
	 * put them; readers cast them to the element type, so a misaligned one
	 * is copied once, here, to memory aligned for it. */
	if (t->data && !t->owns_data && !ir_tensor_aligned(t)) {
		uint8_t *copy = malloc(t->nbytes ? t->nbytes : 1);
		if (!copy)
			abort();
		memcpy(copy, t->data, t->nbytes);
		t->data = copy;
		t->owns_data = true;
	}
	return t->data;
}

/* ---- TensorProto bytes ------------------------------------------------- */

const uint8_t *ir_tensor_string(IrModel *m, TensorId id, int64_t i, size_t *len)
{
	const Onnx__TensorProto *p = ir_tensor(m, id)->proto;
	if (!p || i < 0 || (size_t)i >= p->n_string_data)
		return NULL;
	*len = p->string_data[i].len;
	return p->string_data[i].data ? p->string_data[i].data : (const uint8_t *)"";
}

static void *arena_pb_alloc(void *arena, size_t size) { return arena_alloc(arena, size ? size : 1); }
static void arena_pb_free(void *arena, void *p) { (void)arena, (void)p; }

TensorId ir_tensor_decode(IrModel *m, const uint8_t *buf, size_t len, const char *where, const char **name,
                          bool *parsed, Diag *d)
{
	/* unpacked into m's arena: the tensor's bytes and strings point into
	 * the message, which lives as long as m */
	ProtobufCAllocator alloc = {arena_pb_alloc, arena_pb_free, m->arena};
	Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&alloc, len, buf);
	*parsed = tp != NULL;
	*name = tp ? tp->name : NULL;
	return tp ? ir_tensor_from_proto(m, tp, where, d) : 0;
}

uint8_t *ir_tensor_encode(const char *name, int dtype, int rank, const int64_t *dims, const void *data,
                          size_t nbytes, size_t *len)
{
	Onnx__TensorProto tp;
	onnx__tensor_proto__init(&tp);
	tp.name = (char *)name;
	tp.has_data_type = 1;
	tp.data_type = dtype;
	tp.n_dims = (size_t)rank;
	tp.dims = (int64_t *)dims;
	ProtobufCBinaryData *strs = NULL;
	if (dtype == DT_STRING) {
		int64_t numel = ir_numel(dims, rank);
		strs = calloc((size_t)numel + 1, sizeof *strs);
		for (int64_t i = 0; i < numel; i++) {
			const char *s = ((char *const *)data)[i];
			strs[i].data = (uint8_t *)s;
			strs[i].len = s ? strlen(s) : 0;
		}
		tp.n_string_data = (size_t)numel;
		tp.string_data = strs;
	} else {
		tp.has_raw_data = 1;
		tp.raw_data.data = (uint8_t *)data;
		tp.raw_data.len = nbytes;
	}
	*len = onnx__tensor_proto__get_packed_size(&tp);
	uint8_t *buf = malloc(*len ? *len : 1);
	onnx__tensor_proto__pack(&tp, buf);
	free(strs);
	return buf;
}

/* ---- freeing ------------------------------------------------------------- */

void ir_tensors_free(IrModel *m)
{
	/* recipes first: letting go of their holds may free what they read */
	for (uint32_t i = 1; i < m->ntensors; i++)
		if (m->tensors[i].deferred) {
			IrDeferred *d = m->tensors[i].deferred;
			m->tensors[i].deferred = NULL;
			d->release(m, d);
		}
	for (uint32_t i = 1; i < m->ntensors; i++)
		if (m->tensors[i].owns_data)
			free((void *)m->tensors[i].data);
}

/* The loaded file the tensors' bytes may point into: the unpacked
 * protobuf, the mapped input file and external-data files. */
void ir_proto_free(IrModel *m)
{
	if (m->proto)
		onnx__model_proto__free_unpacked(m->proto, m->alloc);
	m->proto = NULL;
	free(m->alloc);
	m->alloc = NULL;
	if (m->map) {
		ir_guard_remove(m->map);
		munmap(m->map, m->map_len);
	}
	m->map = NULL;
	if (m->map_fd >= 0)
		close(m->map_fd);
	m->map_fd = -1;
	for (uint32_t i = 0; i < m->next_maps; i++) {
		ir_guard_remove(m->ext_maps[i].base);
		munmap(m->ext_maps[i].base, m->ext_maps[i].len);
		if (m->ext_maps[i].fd >= 0)
			close(m->ext_maps[i].fd);
	}
	free(m->ext_maps);
	m->ext_maps = NULL;
	m->next_maps = 0;
}
