/* onnx_load.c - ONNX file -> IR, with protobuf-c.
 *
 * 1. A bounded scan of the protobuf wire format measures how deeply graphs
 *    and types nest, so a hostile file cannot overflow the stack of
 *    protobuf-c's recursive unpacker (or ours).
 * 2. protobuf-c unpacks the ModelProto.  The unpacked message stays alive
 *    with the model: it carries every field the IR does not model, and the
 *    IR's strings and tensor bytes point into it.  protobuf-c copies every
 *    bytes field it unpacks; for a file that outlives the model (ir_load_file's
 *    mapping, or LoadOptions.borrow) the large raw_data fields are not handed
 *    to it: a copy of the message skeleton carries a marker in their place,
 *    and after the unpack each tensor's raw_data points into the file
 *    (weights no rule touches are never copied; see "zero-copy" below).
 * 3. The IR is built graph by graph, and everything a protobuf parse cannot
 *    check is validated: a graph and opset imports present, every node input
 *    naming a value in scope, unique value names, tensor dims that agree with
 *    their data, no cycle.  The first problem is reported as one line naming
 *    the file and the node or tensor, and no model is returned. */
#include "ir.h"
#include "ir_internal.h"
#include "arena.h"
#include "gen/onnx.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_MAX_GRAPH_DEPTH 64
#define MAX_MESSAGE_DEPTH 512

/* ---- 1. wire-format depth scan ---------------------------------------- */

/* The messages on paths that can nest: graphs inside attributes, and types
 * inside types.  Other fields are skipped without looking inside. */
enum WireMsg { W_NONE, W_MODEL, W_TRAINING, W_FUNCTION, W_GRAPH, W_NODE, W_ATTR,
               W_VALUEINFO, W_TYPE, W_TYPE_ELEM, W_TYPE_MAP };

static enum WireMsg wire_child(enum WireMsg parent, uint32_t field)
{
	switch (parent) {
	case W_MODEL: return field == 7 ? W_GRAPH : field == 25 ? W_FUNCTION : field == 20 ? W_TRAINING : W_NONE;
	case W_TRAINING: return field == 1 || field == 2 ? W_GRAPH : W_NONE;
	case W_FUNCTION: return field == 7 ? W_NODE : W_NONE;
	case W_GRAPH: return field == 1 ? W_NODE : field >= 11 && field <= 13 ? W_VALUEINFO : W_NONE;
	case W_NODE: return field == 5 ? W_ATTR : W_NONE;
	case W_ATTR: return field == 6 || field == 11 ? W_GRAPH : field == 14 || field == 15 ? W_TYPE : W_NONE;
	case W_VALUEINFO: return field == 2 ? W_TYPE : W_NONE;
	case W_TYPE: return field == 4 || field == 9 ? W_TYPE_ELEM : field == 5 ? W_TYPE_MAP : W_NONE;
	case W_TYPE_ELEM: return field == 1 ? W_TYPE : W_NONE;
	case W_TYPE_MAP: return field == 2 ? W_TYPE : W_NONE;
	default: return W_NONE;
	}
}

typedef struct Scan {
	int max_graphs;
	const char *error;  /* set when a limit is exceeded */
} Scan;

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* Returns false only when a limit is exceeded; malformed bytes are left for
 * protobuf-c to reject with its own check. */
static bool scan_msg(Scan *s, const uint8_t *p, const uint8_t *end, enum WireMsg type,
                     int depth, int graphs)
{
	if (type == W_GRAPH && ++graphs > s->max_graphs) {
		s->error = "graph";
		return false;
	}
	if (++depth > MAX_MESSAGE_DEPTH) {
		s->error = "message";
		return false;
	}
	while (p < end) {
		uint64_t tag, len;
		if (!read_varint(&p, end, &tag))
			return true;
		switch (tag & 7) {
		case 0: if (!read_varint(&p, end, &len)) return true; break;
		case 1: p += 8; break;
		case 5: p += 4; break;
		case 2:
			if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p))
				return true;
			enum WireMsg child = wire_child(type, (uint32_t)(tag >> 3));
			if (child != W_NONE && !scan_msg(s, p, p + len, child, depth, graphs))
				return false;
			p += len;
			break;
		default:
			return true;
		}
	}
	return true;
}

/* ---- 2. zero-copy unpack ----------------------------------------------- *
 *
 * strip_measure and strip_emit walk the wire format along the paths that
 * lead to TensorProtos (model -> graph -> initializer, node -> attribute ->
 * t/tensors/bodies; functions and training graphs likewise) and write a copy
 * of the file in which each raw_data of ALIAS_MIN bytes or more is replaced
 * by an unknown field MARK_FIELD holding an index into a table of (pointer,
 * length) into the file.  Enclosing messages get their new lengths (the
 * measure pass records them in pre-order; the emit pass writes them).
 * protobuf-c unpacks that copy, keeping the markers as unknown fields;
 * alias_patch then turns each marker back into raw_data pointing into the
 * file.  Anything unusual (a field number MARK_FIELD already in use, raw_data
 * twice in one tensor, groups, malformed bytes, a marker that does not come
 * back exactly once) abandons the shortcut and unpacks the file itself: the
 * result is then the same, only slower.  The model's allocator leaves
 * pointers into the file alone when protobuf-c frees the message. */

#define MARK_FIELD 536870911u  /* the largest field number: no ONNX message uses it */
#define ALIAS_MIN 256          /* shorter raw_data is copied: the marker saves nothing */
#define BORROW_MIN_FILE (256u << 10) /* ir_load_file aliases files this large (see there) */

enum { W_TENSOR = W_TYPE_MAP + 1 };

static int strip_child(int parent, uint32_t field)
{
	switch (parent) {
	case W_MODEL: return field == 7 ? W_GRAPH : field == 25 ? W_FUNCTION : field == 20 ? W_TRAINING : W_NONE;
	case W_TRAINING: return field == 1 || field == 2 ? W_GRAPH : W_NONE;
	case W_FUNCTION: return field == 7 ? W_NODE : W_NONE;
	case W_GRAPH: return field == 1 ? W_NODE : field == 5 ? W_TENSOR : W_NONE;
	case W_NODE: return field == 5 ? W_ATTR : W_NONE;
	case W_ATTR: return field == 5 || field == 10 ? W_TENSOR : field == 6 || field == 11 ? W_GRAPH : W_NONE;
	default: return W_NONE;
	}
}

typedef struct Alias {
	const uint8_t *data;
	size_t len;
	bool claimed;
} Alias;

typedef struct Strip {
	Alias *alias;
	size_t nalias, capalias, nemitted;
	size_t *sizes;            /* new length of each rewritten message, pre-order */
	size_t nsizes, capsizes, next;
	uint8_t *out;
	size_t olen;
	bool bail;
} Strip;

static size_t varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(Strip *S, uint64_t v)
{
	while (v >= 0x80) {
		S->out[S->olen++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	S->out[S->olen++] = (uint8_t)v;
}

/* How many raw_data fields a TensorProto has (only one is replaced). */
static int count_raw(const uint8_t *p, const uint8_t *end)
{
	int n = 0;
	while (p < end) {
		uint64_t tag, len;
		if (!read_varint(&p, end, &tag))
			return -1;
		switch (tag & 7) {
		case 0: if (!read_varint(&p, end, &len)) return -1; break;
		case 1: if (end - p < 8) return -1; p += 8; break;
		case 5: if (end - p < 4) return -1; p += 4; break;
		case 2:
			if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p))
				return -1;
			n += (tag >> 3) == 9;
			p += len;
			break;
		default:
			return -1;
		}
	}
	return n;
}

/* One walk for both passes: emit == false measures (returns the new size and
 * records message sizes), emit == true writes the copy.  Both passes take the
 * same decisions from the same bytes. */
static size_t strip_walk(Strip *S, const uint8_t *p, const uint8_t *end, int type, bool emit)
{
	size_t out = 0;
	int nraw = type == W_TENSOR ? count_raw(p, end) : 0;
	if (nraw < 0) {
		S->bail = true;
		return 0;
	}
	while (p < end && !S->bail) {
		const uint8_t *field = p;
		uint64_t tag, len;
		if (!read_varint(&p, end, &tag) || (tag >> 3) == MARK_FIELD) {
			S->bail = true;
			break;
		}
		const uint8_t *body = p;
		switch (tag & 7) {
		case 0: if (!read_varint(&p, end, &len)) S->bail = true; break;
		case 1: if (end - p < 8) S->bail = true; else p += 8; break;
		case 5: if (end - p < 4) S->bail = true; else p += 4; break;
		case 2: {
			if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p)) {
				S->bail = true;
				break;
			}
			uint32_t num = (uint32_t)(tag >> 3);
			int child = strip_child(type, num);
			if (type == W_TENSOR && num == 9 && nraw == 1 && len >= ALIAS_MIN) {
				size_t idx = emit ? S->nemitted++ : S->nalias;
				uint64_t mtag = (uint64_t)MARK_FIELD << 3;
				if (emit) {
					put_varint(S, mtag);
					put_varint(S, idx);
				} else {
					if (S->nalias == S->capalias) {
						S->capalias = S->capalias ? 2 * S->capalias : 64;
						S->alias = realloc(S->alias, sizeof *S->alias * S->capalias);
						if (!S->alias)
							abort();
					}
					S->alias[S->nalias++] = (Alias){p, (size_t)len, false};
				}
				out += varint_size(mtag) + varint_size(idx);
			} else if (child != W_NONE) {
				size_t slot, sz;
				if (emit) {
					slot = S->next++;
					sz = S->sizes[slot];
					memcpy(S->out + S->olen, field, (size_t)(body - field));
					S->olen += (size_t)(body - field);
					put_varint(S, sz);
					strip_walk(S, p, p + len, child, true);
				} else {
					if (S->nsizes == S->capsizes) {
						S->capsizes = S->capsizes ? 2 * S->capsizes : 256;
						S->sizes = realloc(S->sizes, sizeof *S->sizes * S->capsizes);
						if (!S->sizes)
							abort();
					}
					slot = S->nsizes++;
					sz = strip_walk(S, p, p + len, child, false);
					S->sizes[slot] = sz;
				}
				out += (size_t)(body - field) + varint_size(sz) + sz;
			} else {
				if (emit) {
					memcpy(S->out + S->olen, field, (size_t)(p + len - field));
					S->olen += (size_t)(p + len - field);
				}
				out += (size_t)(p + len - field);
			}
			p += len;
			continue;
		}
		default:
			S->bail = true;
		}
		if (!S->bail) {
			if (emit) {
				memcpy(S->out + S->olen, field, (size_t)(p - field));
				S->olen += (size_t)(p - field);
			}
			out += (size_t)(p - field);
		}
	}
	return out;
}

static void *alias_alloc(void *data, size_t size)
{
	(void)data;
	void *p = malloc(size ? size : 1);
	if (!p)
		abort();
	return p;
}

/* Frees what protobuf-c allocated; pointers into the file are not its own. */
static void alias_free(void *data, void *p)
{
	const IrModel *m = data;
	const uint8_t *b = p;
	if (m->alias_base && b >= m->alias_base && b < m->alias_base + m->alias_len)
		return;
	free(p);
}

static bool patch_graph(Strip *S, Onnx__GraphProto *g);

static bool patch_tensor(Strip *S, Onnx__TensorProto *t)
{
	ProtobufCMessage *b = &t->base;
	unsigned keep = 0;
	bool ok = true;
	for (unsigned i = 0; i < b->n_unknown_fields; i++) {
		ProtobufCMessageUnknownField *u = &b->unknown_fields[i];
		if (u->tag != MARK_FIELD) {
			b->unknown_fields[keep++] = *u;
			continue;
		}
		const uint8_t *q = u->data;
		uint64_t idx;
		if (!ok || u->wire_type != PROTOBUF_C_WIRE_TYPE_VARINT || !read_varint(&q, u->data + u->len, &idx) ||
		    idx >= S->nalias || S->alias[idx].claimed || t->has_raw_data)
			ok = false;
		else {
			S->alias[idx].claimed = true;
			t->has_raw_data = 1;
			t->raw_data.data = (uint8_t *)S->alias[idx].data;
			t->raw_data.len = S->alias[idx].len;
		}
		free(u->data);
	}
	b->n_unknown_fields = keep;
	return ok;
}

static bool patch_node(Strip *S, Onnx__NodeProto *n)
{
	for (size_t a = 0; a < n->n_attribute; a++) {
		Onnx__AttributeProto *ap = n->attribute[a];
		if (ap->t && !patch_tensor(S, ap->t))
			return false;
		for (size_t i = 0; i < ap->n_tensors; i++)
			if (!patch_tensor(S, ap->tensors[i]))
				return false;
		if (ap->g && !patch_graph(S, ap->g))
			return false;
		for (size_t i = 0; i < ap->n_graphs; i++)
			if (!patch_graph(S, ap->graphs[i]))
				return false;
	}
	return true;
}

static bool patch_graph(Strip *S, Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (!patch_tensor(S, g->initializer[i]))
			return false;
	for (size_t i = 0; i < g->n_node; i++)
		if (!patch_node(S, g->node[i]))
			return false;
	return true;
}

static bool patch_model(Strip *S, Onnx__ModelProto *mp)
{
	if (mp->graph && !patch_graph(S, mp->graph))
		return false;
	for (size_t i = 0; i < mp->n_functions; i++)
		for (size_t k = 0; k < mp->functions[i]->n_node; k++)
			if (!patch_node(S, mp->functions[i]->node[k]))
				return false;
	for (size_t i = 0; i < mp->n_training_info; i++) {
		Onnx__TrainingInfoProto *ti = mp->training_info[i];
		if ((ti->initialization && !patch_graph(S, ti->initialization)) ||
		    (ti->algorithm && !patch_graph(S, ti->algorithm)))
			return false;
	}
	for (size_t i = 0; i < S->nalias; i++)
		if (!S->alias[i].claimed)
			return false;
	return true;
}

/* Unpack buf into m->proto, aliasing large raw_data into buf when `borrow`
 * (buf then outlives m).  False if protobuf-c rejects the bytes. */
static bool unpack_model(IrModel *m, const uint8_t *buf, size_t len, bool borrow)
{
	ProtobufCAllocator plain = {alias_alloc, alias_free, m};
	m->alloc = malloc(sizeof plain);
	if (!m->alloc)
		abort();
	memcpy(m->alloc, &plain, sizeof plain);
	if (borrow) {
		Strip S = {0};
		size_t size = strip_walk(&S, buf, buf + len, W_MODEL, false);
		if (!S.bail && S.nalias) {
			S.out = malloc(size ? size : 1);
			if (!S.out)
				abort();
			strip_walk(&S, buf, buf + len, W_MODEL, true);
		}
		if (!S.bail && S.nalias && S.olen == size && S.next == S.nsizes && S.nemitted == S.nalias) {
			m->alias_base = buf;
			m->alias_len = len;
			m->proto = onnx__model_proto__unpack(m->alloc, S.olen, S.out);
			if (m->proto && !patch_model(&S, m->proto)) {
				onnx__model_proto__free_unpacked(m->proto, m->alloc);
				m->proto = NULL;
			}
			if (!m->proto) {
				m->alias_base = NULL;
				m->alias_len = 0;
			}
		}
		free(S.out);
		free(S.alias);
		free(S.sizes);
		if (m->proto)
			return true;
	}
	m->proto = onnx__model_proto__unpack(m->alloc, len, buf);
	return m->proto != NULL;
}

/* ---- 3. building the IR ------------------------------------------------ */

typedef struct Loader {
	IrModel *m;
	Diag *d;
	const char *where;  /* file name for messages */
	int depth;
} Loader;

static const char *str(const char *s) { return s ? s : ""; }

IrDeclKind ir_value_declared_kind(IrModel *m, ValueId v)
{
	const Onnx__ValueInfoProto *vi = ir_value(m, v)->info;
	/* a graph output's declared type is in its graph's output entry */
	IrGraph *gr = ir_graph(m, ir_value(m, v)->graph);
	for (uint32_t i = 0; !vi && i < gr->noutputs; i++)
		if (gr->outputs[i] == v)
			vi = gr->output_info[i];
	if (!vi || !vi->type)
		return IR_DECL_TENSOR;
	switch (vi->type->value_case) {
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return IR_DECL_SEQUENCE;
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return IR_DECL_OPTIONAL;
	default: return IR_DECL_TENSOR;
	}
}

/* The declared type of value v.  A rank over graft's limit is refused here,
 * once, so nothing later meets one. */
static bool parse_type(Loader *L, ValueId v, const Onnx__TypeProto *tp)
{
	IrValue *val = ir_value(L->m, v);
	if (tp && tp->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET &&
	    tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		val->non_tensor = true;
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return true;
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	val->dtype = tt->has_elem_type ? tt->elem_type : DT_UNDEFINED;
	if (!tt->shape)
		return true;
	if (tt->shape->n_dim > IR_MAX_RANK) {
		diag_error(L->d, L->where, "tensor '%s': rank %zu is over graft's limit of %d",
		           val->name, tt->shape->n_dim, IR_MAX_RANK);
		return false;
	}
	int rank = (int)tt->shape->n_dim;
	Dim *dims = arena_alloc(L->m->arena, sizeof *dims * (size_t)(rank ? rank : 1));
	int64_t numel = 1;  /* of the known dims (a negative one is unknown) */
	for (int i = 0; i < rank; i++) {
		const Onnx__TensorShapeProto__Dimension *dp = tt->shape->dim[i];
		dims[i].size = -1;
		if (dp->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			dims[i].size = dp->dim_value;
		else if (dp->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
			dims[i].param = dp->dim_param;
		if (dims[i].size >= 0 && __builtin_mul_overflow(numel, dims[i].size, &numel)) {
			diag_error(L->d, L->where, "tensor '%s': element count overflows int64", val->name);
			return false;
		}
	}
	val->shape.rank = rank;
	val->shape.dims = dims;
	return true;
}

enum { MAX_KEPT_FDS = 64 };

bool ir_mapped_range(const IrModel *m, const uint8_t *data, size_t len, int *fd, int64_t *offset)
{
	const uint8_t *mb = m->map;
	if (m->map_fd >= 0 && data >= mb && data <= mb + m->map_len && len <= m->map_len - (size_t)(data - mb)) {
		*fd = m->map_fd;
		*offset = (int64_t)(data - mb);
		return true;
	}
	for (uint32_t i = 0; i < m->next_maps; i++) {
		const IrMapping *p = &m->ext_maps[i];
		const uint8_t *base = p->base;
		if (p->fd >= 0 && data >= base && data <= base + p->len && len <= p->len - (size_t)(data - base)) {
			*fd = p->fd;
			*offset = (int64_t)(data - base);
			return true;
		}
	}
	return false;
}

/* The mapping of the external data file open as fd (st: its status, path
 * for messages), made on first use, and its size in *mapped (the file's
 * when first mapped: it may have grown since); NULL with errno if it cannot
 * be mapped. */
static const uint8_t *map_external(Loader *L, int fd, const struct stat *st, const char *path, size_t *mapped)
{
	IrModel *m = L->m;
	for (uint32_t i = 0; i < m->next_maps; i++)
		if (m->ext_maps[i].dev == (uint64_t)st->st_dev && m->ext_maps[i].ino == (uint64_t)st->st_ino) {
			*mapped = m->ext_maps[i].len;
			return m->ext_maps[i].base;
		}
	size_t size = (size_t)st->st_size;
	*mapped = size;
	void *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED)
		return NULL;
	IrMapping *maps = realloc(m->ext_maps, sizeof *maps * (m->next_maps + 1));
	if (!maps)
		abort();
	m->ext_maps = maps;
	/* the descriptor stays open for copy_file_range (onnx_save.c), for
	 * the first files: a model of one file per tensor keeps its mappings */
	int keep = m->next_maps < MAX_KEPT_FDS ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	maps[m->next_maps++] = (IrMapping){(uint64_t)st->st_dev, (uint64_t)st->st_ino, base, size, keep};
	ir_guard_add(base, size, path); /* a SIGBUS in it is the file shrinking (input_file.c) */
	return base;
}

/* Read external data for tensor t, refusing paths outside the model's folder. */
static bool load_external(Loader *L, TensorId id)
{
	IrTensor *t = ir_tensor(L->m, id);
	const Onnx__TensorProto *p = t->proto;
	const char *tname = str(p->name), *location = NULL;
	int64_t offset = 0, length = -1;
	for (size_t i = 0; i < p->n_external_data; i++) {
		const char *k = str(p->external_data[i]->key), *v = str(p->external_data[i]->value);
		char *e;
		if (strcmp(k, "location") == 0)
			location = v;
		else if (strcmp(k, "offset") == 0 || strcmp(k, "length") == 0) {
			errno = 0;
			long long x = strtoll(v, &e, 10);
			if (errno || *e || x < 0 || e == v) {
				diag_error(L->d, L->where, "tensor '%s': bad external data %s '%s'", tname, k, v);
				return false;
			}
			*(k[0] == 'o' ? &offset : &length) = x;
		}
	}
	if (!location || !*location) {
		diag_error(L->d, L->where, "tensor '%s': external data without a location", tname);
		return false;
	}
	if (!L->m->dir) {
		diag_error(L->d, L->where, "tensor '%s': external data '%s' needs the model's folder", tname, location);
		return false;
	}
	/* Refuse absolute paths and '..' components, then make sure symlinks
	 * do not lead out of the folder either. */
	bool escapes = location[0] == '/';
	for (const char *c = location; !escapes && *c; ) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);
		escapes = n == 2 && c[0] == '.' && c[1] == '.';
		c += n + (slash != NULL);
	}
	char *path = arena_printf(L->m->arena, "%s/%s", L->m->dir, location);
	char real_dir[PATH_MAX], real_file[PATH_MAX];
	if (!escapes && realpath(L->m->dir, real_dir) && realpath(path, real_file)) {
		size_t n = strlen(real_dir);
		escapes = strncmp(real_file, real_dir, n) != 0 || (real_file[n] != '/' && strcmp(real_dir, "/") != 0);
	}
	if (escapes) {
		diag_error(L->d, L->where, "tensor '%s': external data location '%s' is outside the model's folder",
		           tname, location);
		return false;
	}
	struct stat st;
	int err;
	int fd = ir_open_regular(path, &st, &err);
	if (fd < 0) {
		if (err == IR_OPEN_NOT_REGULAR)
			diag_error(L->d, L->where, "tensor '%s': external data '%s': not a regular file", tname, location);
		else
			diag_error(L->d, L->where, "tensor '%s': cannot read external data '%s': %s", tname, location,
			           strerror(err));
		return false;
	}
	if (length < 0)
		length = st.st_size > offset ? st.st_size - offset : 0;
	if ((size_t)length != t->nbytes || offset > st.st_size || length > st.st_size - offset) { /* no int64 overflow */
		diag_error(L->d, L->where, "tensor '%s': external data '%s' has %lld bytes at offset %lld, dims need %zu",
		           tname, location, (long long)(st.st_size > offset ? (length < st.st_size - offset ? length : st.st_size - offset) : 0),
		           (long long)offset, t->nbytes);
		close(fd);
		return false;
	}
	if (t->nbytes) {
		/* mapped, not copied: only the pages of the tensors something
		 * reads are ever read, and a save copies them from the page cache
		 * once; a file written over while mapped is a rename onto the
		 * path (outfile.c), so these bytes stay the old file's */
		size_t mapped;
		const uint8_t *base = map_external(L, fd, &st, path, &mapped);
		close(fd);
		if (!base) {
			diag_error(L->d, L->where, "tensor '%s': cannot read external data '%s': %s", tname, location,
			           strerror(errno));
			return false;
		}
		/* the file was mapped for an earlier tensor, and has grown since:
		 * only the mapped bytes exist for us */
		if ((uint64_t)offset + (uint64_t)length > mapped) {
			diag_error(L->d, L->where, "tensor '%s': external data '%s' changed while the model was read "
			           "(%zu bytes when first mapped, offset %lld + %lld needed)", tname, location, mapped,
			           (long long)offset, (long long)length);
			return false;
		}
		t->data = base + offset;
		t->owns_data = false;
		t->ext_location = location;
		t->ext_offset = offset;
		return true;
	}
	uint8_t *buf = malloc(t->nbytes ? t->nbytes : 1);
	if (!buf)
		abort();
	size_t got = 0;
	while (got < t->nbytes) {
		ssize_t r = pread(fd, buf + got, t->nbytes - got, offset + (off_t)got);
		if (r <= 0) {
			diag_error(L->d, L->where, "tensor '%s': cannot read external data '%s': %s", tname, location,
			           r < 0 ? strerror(errno) : "unexpected end of file");
			free(buf);
			close(fd);
			return false;
		}
		got += (size_t)r;
	}
	close(fd);
	t->data = buf;
	t->owns_data = true;
	t->ext_location = location;
	t->ext_offset = offset;
	return true;
}

static TensorId load_tensor(Loader *L, const Onnx__TensorProto *p)
{
	TensorId t = ir_tensor_from_proto(L->m, p, L->where, L->d);
	if (t && ir_tensor(L->m, t)->external && !load_external(L, t))
		return 0;
	return t;
}

static bool build_graph(Loader *L, GraphId g, const Onnx__GraphProto *gp);

static const char *node_label(Loader *L, NodeId n, char *buf, size_t size)
{
	return ir_node_label(L->m, n, buf, size);
}

static bool load_attr(Loader *L, NodeId n, IrAttr *a, const Onnx__AttributeProto *ap)
{
	IrModel *m = L->m;
	a->orig = ap;
	a->name = str(ap->name);
	int type = ap->has_type ? (int)ap->type : 0;
	if (!type) /* IR version 1-2 files may omit the type: infer it from the field in use */
		type = ap->has_f ? ATTR_FLOAT : ap->has_i ? ATTR_INT : ap->has_s ? ATTR_STRING :
		       ap->t ? ATTR_TENSOR : ap->g ? ATTR_GRAPH : ap->n_floats ? ATTR_FLOATS :
		       ap->n_ints ? ATTR_INTS : ap->n_strings ? ATTR_STRINGS : ap->n_tensors ? ATTR_TENSORS :
		       ap->n_graphs ? ATTR_GRAPHS : ap->sparse_tensor ? ATTR_SPARSE_TENSOR :
		       ap->n_sparse_tensors ? ATTR_SPARSE_TENSORS : ap->tp ? ATTR_TYPE_PROTO :
		       ap->n_type_protos ? ATTR_TYPE_PROTOS : ATTR_UNDEFINED;
	a->type = (uint8_t)type;
	a->f = ap->f;
	a->i = ap->i;
	a->s.data = ap->s.data;
	a->s.len = ap->s.len;
	switch (type) {
	case ATTR_TENSOR:
		if (!ap->t || !(a->t = load_tensor(L, ap->t)))
			return ap->t ? false : true;
		break;
	case ATTR_GRAPH:
		if (ap->g) {
			a->g = ir_graph_new(m, m->nodes[n].graph, str(ap->g->name));
			m->graphs[a->g].owner = n;
			if (!build_graph(L, a->g, ap->g))
				return false;
		}
		break;
	case ATTR_FLOATS: a->floats = ap->floats; a->n = ap->n_floats; break;
	case ATTR_INTS: a->ints = ap->ints; a->n = ap->n_ints; break;
	case ATTR_STRINGS: {
		IrBytes *s = arena_alloc(m->arena, sizeof *s * (ap->n_strings ? ap->n_strings : 1));
		for (size_t i = 0; i < ap->n_strings; i++)
			s[i] = (IrBytes){ap->strings[i].data, ap->strings[i].len};
		a->strings = s;
		a->n = ap->n_strings;
		break;
	}
	case ATTR_TENSORS: {
		TensorId *ts = arena_alloc(m->arena, sizeof *ts * (ap->n_tensors ? ap->n_tensors : 1));
		for (size_t i = 0; i < ap->n_tensors; i++)
			if (!(ts[i] = load_tensor(L, ap->tensors[i])))
				return false;
		a->tensors = ts;
		a->n = ap->n_tensors;
		break;
	}
	case ATTR_GRAPHS: {
		GraphId *gs = arena_alloc(m->arena, sizeof *gs * (ap->n_graphs ? ap->n_graphs : 1));
		a->graphs = gs;
		a->n = ap->n_graphs;
		for (size_t i = 0; i < ap->n_graphs; i++) {
			gs[i] = ir_graph_new(m, m->nodes[n].graph, str(ap->graphs[i]->name));
			m->graphs[gs[i]].owner = n;
			if (!build_graph(L, gs[i], ap->graphs[i]))
				return false;
		}
		break;
	}
	default:
		break;
	}
	return true;
}

static bool build_graph(Loader *L, GraphId g, const Onnx__GraphProto *gp)
{
	IrModel *m = L->m;
	IrGraph *gr = ir_graph(m, g);
	gr->orig = gp;
	gr->name = str(gp->name);
	const char *gname = gr->name;
	char label[256];

	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		ValueId v = ir_new_value_borrowed(m, g, str(vi->name));
		if (!v) {
			diag_error(L->d, L->where, "graph '%s': input '%s' is listed twice", gname, str(vi->name));
			return false;
		}
		gr = ir_graph(m, g);
		ir_value(m, v)->is_input = true;
		ir_value(m, v)->info = vi;
		if (!parse_type(L, v, vi->type))
			return false;
		gr = ir_graph(m, g);
		gr->inputs = realloc(gr->inputs, sizeof *gr->inputs * (gr->ninputs + 1));
		gr->inputs[gr->ninputs++] = v;
		gr->capinputs = gr->ninputs;
	}
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		TensorId t = load_tensor(L, tp);
		if (!t)
			return false;
		/* ir_add_initializer copies the name; borrow it instead by renaming after */
		ValueId v = ir_add_initializer(m, g, str(tp->name), t);
		if (!v) {
			diag_error(L->d, L->where, "graph '%s': initializer '%s' is defined twice", gname, str(tp->name));
			return false;
		}
		ir_value(m, v)->type_dirty = false;
	}
	for (size_t i = 0; i < gp->n_sparse_initializer; i++) {
		const Onnx__SparseTensorProto *sp = gp->sparse_initializer[i];
		const char *name = sp->values ? str(sp->values->name) : "";
		ValueId v = ir_lookup(m, g, name);
		if (v && ir_value(m, v)->graph == g && ir_value(m, v)->is_input && !ir_value(m, v)->tensor) {
			/* overridable, like a dense initializer listed as an input */
		} else if (!(v = ir_new_value_borrowed(m, g, name))) {
			diag_error(L->d, L->where, "graph '%s': sparse initializer '%s' is defined twice", gname, name);
			return false;
		}
		IrValue *val = ir_value(m, v);
		val->sparse = sp;
		if (sp->values && !val->dtype)
			val->dtype = sp->values->data_type;
		gr = ir_graph(m, g);
		gr->sparse_inits = realloc(gr->sparse_inits, sizeof *gr->sparse_inits * (gr->nsparse + 1));
		gr->sparse_inits[gr->nsparse++] = v;
		gr->capsparse = gr->nsparse;
	}

	/* Nodes in two passes: define every output first, so an input naming a
	 * later node (unsorted files, cycles) resolves, and the topological check
	 * below can say what is wrong. */
	NodeId first_new = m->nnodes;
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		NodeId n = ir_node_alloc(m, g, 0, str(np->domain), str(np->op_type), str(np->name),
		                         (uint32_t)np->n_input, (uint32_t)np->n_output);
		IrNode *node = ir_node(m, n);
		node->orig = np;
		node->orig_index = (uint32_t)i;
		for (size_t o = 0; o < np->n_output; o++) {
			const char *oname = str(np->output[o]);
			if (!*oname)
				continue;
			if (!ir_node_define_output(m, n, (uint32_t)o, oname)) {
				diag_error(L->d, L->where, "node '%s': output '%s' is already defined",
				           node_label(L, n, label, sizeof label), oname);
				return false;
			}
		}
	}
	for (size_t i = 0; i < gp->n_node; i++) {
		NodeId n = first_new + (NodeId)i;
		const Onnx__NodeProto *np = gp->node[i];
		/* attributes first: bodies may define nothing the node's inputs need,
		 * but building them now keeps the error order the file's order */
		IrAttr *attrs = arena_alloc(m->arena, sizeof *attrs * (np->n_attribute ? np->n_attribute : 1));
		ir_node(m, n)->attrs = attrs;
		ir_node(m, n)->nattrs = (uint32_t)np->n_attribute;
		for (size_t a = 0; a < np->n_attribute; a++)
			if (!load_attr(L, n, &attrs[a], np->attribute[a]))
				return false;
		for (size_t k = 0; k < np->n_input; k++) {
			const char *iname = str(np->input[k]);
			if (!*iname)
				continue;
			ValueId v = ir_lookup(m, g, iname);
			if (!v) {
				diag_error(L->d, L->where, "node '%s': input '%s' names no value",
				           node_label(L, n, label, sizeof label), iname);
				return false;
			}
			ir_node(m, n)->inputs[k] = v;
			ir_node_add_use(m, n, (uint32_t)k);
		}
	}
	/* value_info gives types of intermediate values; the entries themselves
	 * ride along in gp and are written back while their value lives */
	for (size_t i = 0; i < gp->n_value_info; i++) {
		ValueId v = ir_lookup(m, g, str(gp->value_info[i]->name));
		if (v && ir_value(m, v)->graph == g && !ir_value(m, v)->dtype && ir_value(m, v)->shape.rank < 0 &&
		    !ir_value(m, v)->non_tensor)
			if (!parse_type(L, v, gp->value_info[i]->type))
				return false;
	}
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		ValueId v = ir_lookup(m, g, str(vi->name));
		if (!v) {
			diag_error(L->d, L->where, "graph '%s': output '%s' names no value", gname, str(vi->name));
			return false;
		}
		ir_add_output(m, g, v);
		ir_graph(m, g)->output_info[i] = vi;
		IrValue *val = ir_value(m, v);
		if (!val->info && val->graph == g && !val->tensor && !parse_type(L, v, vi->type))
			return false;
	}
	return true;
}

static bool check_cycles(Loader *L)
{
	for (GraphId g = 1; g < L->m->ngraphs; g++) {
		uint32_t count;
		Diag quiet;
		diag_init(&quiet, NULL);
		NodeId *order = ir_topo_order(L->m, g, &count, &quiet);
		if (!order) {
			diag_error(L->d, NULL, "%s", quiet.first); /* already names the file */
			return false;
		}
		free(order);
	}
	return true;
}

IrModel *ir_load_bytes(const uint8_t *buf, size_t len, const char *name, const char *dir,
                       const LoadOptions *opt, Diag *d)
{
	if (len == 0) {
		diag_error(d, name, "not an ONNX model: the file is empty");
		return NULL;
	}
	Scan s = {opt && opt->max_graph_depth ? opt->max_graph_depth : DEFAULT_MAX_GRAPH_DEPTH, NULL};
	if (!scan_msg(&s, buf, buf + len, W_MODEL, 0, 0)) {
		if (strcmp(s.error, "graph") == 0)
			diag_error(d, name, "subgraphs nested more than %d levels deep", s.max_graphs);
		else
			diag_error(d, name, "messages nested more than %d levels deep", MAX_MESSAGE_DEPTH);
		return NULL;
	}
	IrModel *m = ir_model_new();
	if (!unpack_model(m, buf, len, opt && opt->borrow)) {
		diag_error(d, name, "not an ONNX model: protobuf parse failed (truncated or corrupt file)");
		ir_model_free(m);
		return NULL;
	}
	Onnx__ModelProto *mp = m->proto;
	m->path = name;
	if (dir)
		m->dir = strdup(dir);
	if (!mp->graph) {
		diag_error(d, name, "not an ONNX model: no graph");
		goto fail;
	}
	if (mp->n_opset_import == 0) {
		diag_error(d, name, "not an ONNX model: no opset_import");
		goto fail;
	}
	m->ir_version = mp->ir_version;
	m->opsets = calloc(mp->n_opset_import, sizeof *m->opsets);
	m->nopsets = (uint32_t)mp->n_opset_import;
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		m->opsets[i].domain = str(mp->opset_import[i]->domain);
		m->opsets[i].version = mp->opset_import[i]->version;
	}
	Loader L = {m, d, name, 0};
	GraphId g = ir_graph_new(m, 0, str(mp->graph->name));
	if (!build_graph(&L, g, mp->graph) || !check_cycles(&L) || !ir_check_declarations(m, d))
		goto fail;
	return m;
fail:
	ir_model_free(m);
	return NULL;
}

IrModel *ir_load_file(const char *path, const LoadOptions *opt, Diag *d)
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
		diag_error(d, path, "too large: %lld bytes, over protobuf's 2 GiB limit (larger models keep their "
		           "weights in external data files)", (long long)st.st_size);
		close(fd);
		return NULL;
	}
	size_t len = (size_t)st.st_size;
	uint8_t *buf = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : NULL;
	if (len && buf == MAP_FAILED) {
		diag_error(d, path, "cannot read: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (len)
		ir_guard_add(buf, len, path); /* a SIGBUS in it is the file shrinking (input_file.c) */
	char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
	LoadOptions o = opt ? *opt : (LoadOptions){0};
	/* a small file's bytes cost less to copy than the walk that avoids it */
	o.borrow = len >= BORROW_MIN_FILE;
	IrModel *m = ir_load_bytes(buf, len, path, dir, &o, d);
	free(dir);
	if (m && m->alias_base) {
		/* tensors point into the mapping: the model unmaps it when freed,
		 * and keeps the file open for the saver to copy them file to file */
		m->map = buf;
		m->map_len = len;
		m->map_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	} else if (len) {
		ir_guard_remove(buf);
		munmap(buf, len);
	}
	close(fd);
	if (m)
		m->path = arena_strdup(m->arena, path);
	return m;
}

const char *ir_model_producer(const IrModel *m, char *buf, size_t size)
{
	const Onnx__ModelProto *mp = m->proto;
	if (!mp || !mp->producer_name || !*mp->producer_name)
		snprintf(buf, size, "(none)");
	else
		snprintf(buf, size, "%s%s%s", mp->producer_name,
		         mp->producer_version && *mp->producer_version ? " " : "", str(mp->producer_version));
	return buf;
}
