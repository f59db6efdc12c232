/* onnx_save.c - IR -> ONNX file, with protobuf-c.
 *
 * The IR is the source of truth: the saved graph is emitted from it, node by
 * node.  Each emitted message starts as a shallow copy of the message it was
 * loaded from (so doc strings, metadata, value_info, functions and unknown
 * fields ride along) and the modeled fields are then set from the IR.  An
 * unchanged model therefore comes out byte-identical.  Emitted messages live
 * in an arena and point into the IR and the loaded proto; nothing is deep-
 * copied, so saving costs about one protobuf pack.
 *
 * Files are written through outfile.c (a temporary file beside the target,
 * fsync, rename), so a failed save never leaves a half-written model.  A
 * save never writes over the files the model was read from (the model itself
 * only with overwrite_input).  External data goes to one file named after
 * the output ("OUT.data", in OUT's folder; never a location read from the
 * input), holding exactly the tensors the output refers to, each at an
 * offset aligned to EXT_ALIGN (runtimes map the file and use the bytes in
 * place), written before the model that refers to it. */
#include "ir.h"
#include "arena.h"
#include "gen/onnx.pb-c.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROTOBUF_LIMIT ((size_t)2 << 30)  /* protobuf messages must stay below 2 GB */
#define EXT_ALIGN 4096                     /* every tensor's offset in a data file: a page */

/* An external data file being planned: which tensors go where.  A
 * deferred tensor (data NULL, tensor set) is computed into the file piece
 * by piece as it is written. */
typedef struct ExtWrite {
	const uint8_t *data;
	TensorId tensor;
	size_t len;
	int64_t offset;
} ExtWrite;

typedef struct ExtFile {
	const char *location;
	ExtWrite *writes;
	size_t nwrites, cap;
	size_t *slots, nslots;  /* hash of the writes (index + 1; 0: empty), by ext_key */
	int64_t end;
} ExtFile;

typedef struct Emit {
	IrModel *m;
	Arena *a;
	Diag *d;
	bool stream;            /* deferred tensors get placeholders (fd_append computes them) */
	bool externalize;       /* move inline tensors >= threshold to new_location */
	size_t threshold;
	bool threshold_given;   /* external tensors of the input under it go inline too */
	const char *new_location;
	bool inline_external;   /* the input's external tensors go inline (ir_save_bytes_inline) */
	ExtFile *files;
	size_t nfiles;
} Emit;

static const char *str(const char *s) { return s ? s : ""; }

/* The loaded string if it still says the same (keeps "absent" distinct from
 * "empty", as in the file), else the IR's (NULL for an empty new string). */
static char *keep_str(const char *orig, const char *ir, bool has_orig)
{
	if (has_orig && strcmp(str(orig), str(ir)) == 0)
		return (char *)orig;
	return ir && *ir ? (char *)ir : NULL;
}

/* ---- external data planning -------------------------------------------- */

static ExtFile *ext_file(Emit *e, const char *location)
{
	for (size_t i = 0; i < e->nfiles; i++)
		if (strcmp(e->files[i].location, location) == 0)
			return &e->files[i];
	ExtFile *f = realloc(e->files, sizeof *f * (e->nfiles + 1));
	if (!f)
		abort();
	e->files = f;
	f = &e->files[e->nfiles++];
	memset(f, 0, sizeof *f);
	f->location = location;
	return f;
}

/* The key of some bytes to place: the deferred tensor, or where the bytes lie. */
static uintptr_t ext_key(const uint8_t *data, TensorId tensor)
{
	return tensor ? (uintptr_t)tensor << 1 | 1 : (uintptr_t)data;
}

/* The write already placed for these bytes (a tensor two initializers
 * share, two references to the same bytes of the input), or NULL. */
static ExtWrite *ext_find(ExtFile *f, const uint8_t *data, TensorId tensor, size_t len)
{
	uintptr_t key = ext_key(data, tensor);
	for (size_t h = key * 0x9e3779b97f4a7c15u % (f->nslots ? f->nslots : 1); f->nslots; h = (h + 1) % f->nslots) {
		size_t i = f->slots[h];
		if (!i)
			return NULL;
		ExtWrite *w = &f->writes[i - 1];
		if (ext_key(w->data, w->tensor) == key && w->len == len)
			return w;
	}
	return NULL;
}

/* Note write i (0-based) in the table, which stays at most half full. */
static void ext_index(ExtFile *f, size_t i)
{
	if (2 * (f->nwrites + 1) > f->nslots) {
		size_t n = f->nslots ? 2 * f->nslots : 64;
		free(f->slots);
		if (!(f->slots = calloc(n, sizeof *f->slots)))
			abort();
		f->nslots = n;
		for (size_t k = 0; k < f->nwrites; k++)
			if (k != i)
				ext_index(f, k);
	}
	const ExtWrite *w = &f->writes[i];
	size_t h = ext_key(w->data, w->tensor) * 0x9e3779b97f4a7c15u % f->nslots;
	while (f->slots[h])
		h = (h + 1) % f->nslots;
	f->slots[h] = i + 1;
}

/* Append data (or the deferred tensor's bytes) to the file at the next
 * aligned offset, unless they are there already: the file so holds
 * exactly the tensors the model refers to, each once, in the order they
 * are written (a round trip of a data file graft wrote keeps every
 * offset).  Returns the offset. */
static int64_t ext_place(ExtFile *f, const uint8_t *data, TensorId tensor, size_t len)
{
	const ExtWrite *was = ext_find(f, data, tensor, len);
	if (was)
		return was->offset;
	int64_t off = (f->end + EXT_ALIGN - 1) / EXT_ALIGN * EXT_ALIGN;
	if (f->nwrites == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 16;
		f->writes = realloc(f->writes, sizeof *f->writes * f->cap);
		if (!f->writes)
			abort();
	}
	f->writes[f->nwrites] = (ExtWrite){data, tensor, len, off};
	ext_index(f, f->nwrites);
	f->nwrites++;
	f->end = off + (int64_t)len;
	return off;
}

static Onnx__StringStringEntryProto *kv(Emit *e, const char *k, const char *v)
{
	Onnx__StringStringEntryProto *p = arena_alloc(e->a, sizeof *p);
	onnx__string_string_entry_proto__init(p);
	p->key = (char *)k;
	p->value = (char *)v;
	return p;
}

/* Turn tp (a copy we own) into a reference to external data. */
static void make_external(Emit *e, Onnx__TensorProto *tp, const char *location, int64_t offset, size_t len)
{
	tp->has_raw_data = 0;
	tp->raw_data.len = 0;
	tp->raw_data.data = NULL;
	tp->n_float_data = tp->n_int32_data = tp->n_int64_data = 0;
	tp->n_double_data = tp->n_uint64_data = 0;
	tp->has_data_location = 1;
	tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	tp->n_external_data = 3;
	tp->external_data = arena_alloc(e->a, sizeof *tp->external_data * 3);
	tp->external_data[0] = kv(e, "location", location);
	tp->external_data[1] = kv(e, "offset", arena_printf(e->a, "%lld", (long long)offset));
	tp->external_data[2] = kv(e, "length", arena_printf(e->a, "%zu", len));
}

/* ---- emitting messages ------------------------------------------------- */

static Onnx__TensorProto *emit_tensor(Emit *e, TensorId id, const char *name)
{
	IrModel *m = e->m;
	IrTensor *t = ir_tensor(m, id);
	const Onnx__TensorProto *orig = t->proto;
	Onnx__TensorProto *tp;
	if (orig && !t->dirty) {
		bool same_name = !name || strcmp(str(orig->name), name) == 0;
		if (t->external && ((e->threshold_given && t->nbytes < e->threshold && e->new_location) ||
		                    e->inline_external)) {
			/* under the threshold asked for, or a whole model in memory: inline */
			tp = arena_dup(e->a, orig, sizeof *tp);
			tp->has_data_location = 0;
			tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
			tp->n_external_data = 0;
			tp->external_data = NULL;
			tp->has_raw_data = 1;
			tp->raw_data.data = (uint8_t *)t->data;
			tp->raw_data.len = t->nbytes;
		} else if (t->external && !e->new_location) {
			/* a save to memory (no data file is written): the reference
			 * as loaded.  It once got the offset a new, aligned data file
			 * would have given it, which no file held (fuzz-graph) */
			if (same_name)
				return (Onnx__TensorProto *)orig;
			tp = arena_dup(e->a, orig, sizeof *tp);
		} else if (t->external) {
			/* A file save writes the bytes to the output's own data file
			 * (never to a location taken from the input: that may be the
			 * input's data file, or any name a crafted model chose), at
			 * the next aligned offset (the old one if the input was laid
			 * out as graft lays it). */
			const char *loc = e->new_location;
			ExtFile *f = ext_file(e, loc);
			int64_t off = ext_place(f, t->data, 0, t->nbytes);
			if (off == t->ext_offset && same_name && strcmp(loc, t->ext_location) == 0)
				return (Onnx__TensorProto *)orig;
			tp = arena_dup(e->a, orig, sizeof *tp);
			make_external(e, tp, loc, off, t->nbytes);
		} else if (same_name && !(e->externalize && t->nbytes >= e->threshold && t->dtype != DT_STRING)) {
			return (Onnx__TensorProto *)orig;
		} else {
			tp = arena_dup(e->a, orig, sizeof *tp);
		}
		if (name)
			tp->name = keep_str(orig->name, name, true);
	} else {
		tp = arena_alloc(e->a, sizeof *tp);
		onnx__tensor_proto__init(tp);
		tp->n_dims = (size_t)t->rank;
		tp->dims = (int64_t *)t->dims;
		tp->has_data_type = 1;
		tp->data_type = t->dtype;
		tp->name = name && *name ? (char *)name : NULL;
		size_t n;
		const uint8_t *bytes;
		if (t->deferred && e->stream && e->externalize && t->nbytes >= e->threshold) {
			/* not computed yet: write_ext_file computes it into the
			 * data file a buffer at a time */
			int64_t off = ext_place(ext_file(e, e->new_location), NULL, id, t->nbytes);
			make_external(e, tp, e->new_location, off, t->nbytes);
			return tp;
		}
		if (t->deferred && e->stream) {
			/* not computed yet: the file writer (fd_append) knows this
			 * placeholder, the tensor's own record, and computes the bytes
			 * into its buffer piece by piece as it writes them */
			bytes = (const uint8_t *)t;
			n = t->nbytes;
		} else {
			bytes = ir_tensor_raw(m, id, &n);
		}
		tp->has_raw_data = 1;
		tp->raw_data.data = (uint8_t *)bytes;
		tp->raw_data.len = n;
	}
	if (e->externalize && tp->has_raw_data && tp->raw_data.len >= e->threshold) {
		ExtFile *f = ext_file(e, e->new_location);
		size_t len = tp->raw_data.len;
		int64_t off = ext_place(f, tp->raw_data.data, 0, len);
		if (tp == orig)
			tp = arena_dup(e->a, orig, sizeof *tp);
		make_external(e, tp, e->new_location, off, len);
	}
	return tp;
}

static Onnx__GraphProto *emit_graph(Emit *e, GraphId g);

static Onnx__AttributeProto *emit_attr(Emit *e, const IrAttr *a)
{
	const Onnx__AttributeProto *o = a->orig;
	Onnx__AttributeProto *ap = arena_alloc(e->a, sizeof *ap);
	if (o)
		*ap = *o;
	else
		onnx__attribute_proto__init(ap);
	ap->name = keep_str(o ? o->name : NULL, a->name, o != NULL);
	/* Same type as loaded: keep the presence bits of the file (old files may
	 * omit `type`, or set a zero explicitly).  Else start clean. */
	bool same = o && (o->has_type ? (int)o->type == a->type : true);
	if (!same) {
		Onnx__AttributeProto clean;
		onnx__attribute_proto__init(&clean);
		clean.name = ap->name;
		clean.doc_string = ap->doc_string;
		clean.ref_attr_name = ap->ref_attr_name;
		*ap = clean;
		ap->has_type = 1;
		ap->type = (Onnx__AttributeProto__AttributeType)a->type;
	}
	switch (a->type) {
	case ATTR_FLOAT:
		ap->has_f = same ? (ap->has_f || memcmp(&ap->f, &a->f, sizeof a->f) != 0) : 1;
		ap->f = a->f;
		break;
	case ATTR_INT:
		ap->has_i = same ? (ap->has_i || ap->i != a->i) : 1;
		ap->i = a->i;
		break;
	case ATTR_STRING:
		ap->has_s = same ? (ap->has_s || ap->s.len != a->s.len ||
		                    (a->s.len && memcmp(ap->s.data, a->s.data, a->s.len) != 0)) : 1;
		ap->s.data = (uint8_t *)a->s.data;
		ap->s.len = a->s.len;
		break;
	case ATTR_TENSOR:
		ap->t = a->t ? emit_tensor(e, a->t, NULL) : NULL;
		break;
	case ATTR_GRAPH:
		ap->g = a->g ? emit_graph(e, a->g) : NULL;
		break;
	case ATTR_FLOATS:
		ap->n_floats = a->n;
		ap->floats = (float *)a->floats;
		break;
	case ATTR_INTS:
		ap->n_ints = a->n;
		ap->ints = (int64_t *)a->ints;
		break;
	case ATTR_STRINGS:
		ap->n_strings = a->n;
		ap->strings = arena_alloc(e->a, sizeof *ap->strings * (a->n ? a->n : 1));
		for (size_t i = 0; i < a->n; i++)
			ap->strings[i] = (ProtobufCBinaryData){a->strings[i].len, (uint8_t *)a->strings[i].data};
		break;
	case ATTR_TENSORS:
		ap->n_tensors = a->n;
		ap->tensors = arena_alloc(e->a, sizeof *ap->tensors * (a->n ? a->n : 1));
		for (size_t i = 0; i < a->n; i++)
			ap->tensors[i] = emit_tensor(e, a->tensors[i], NULL);
		break;
	case ATTR_GRAPHS:
		ap->n_graphs = a->n;
		ap->graphs = arena_alloc(e->a, sizeof *ap->graphs * (a->n ? a->n : 1));
		for (size_t i = 0; i < a->n; i++)
			ap->graphs[i] = emit_graph(e, a->graphs[i]);
		break;
	default: /* sparse tensors and type protos ride along in orig */
		break;
	}
	return ap;
}

static char **value_names(Emit *e, const ValueId *ids, uint32_t n)
{
	char **names = arena_alloc(e->a, sizeof *names * (n ? n : 1));
	for (uint32_t i = 0; i < n; i++)
		names[i] = ids[i] ? (char *)ir_value(e->m, ids[i])->name : (char *)"";
	return names;
}

/* The domain a node is written with.  ONNX Runtime registers its
 * LayerNormalization (below opset 17) and SimplifiedLayerNormalization in the
 * ONNX domain, not in com.microsoft (ir/opschema_vendor.py); graft calls them
 * com.microsoft.* inside, so rules and the schema table can tell them from
 * the standard op, and writes them as ONNX Runtime reads them. */
static const char *ort_domain(const IrNode *node)
{
	if (!strcmp(node->domain, "com.microsoft") &&
	    (!strcmp(node->op_type, "LayerNormalization") || !strcmp(node->op_type, "SimplifiedLayerNormalization")))
		return "";
	return node->domain;
}

static Onnx__NodeProto *emit_node(Emit *e, NodeId n)
{
	IrNode *node = ir_node(e->m, n);
	const Onnx__NodeProto *o = node->orig;
	Onnx__NodeProto *np = arena_alloc(e->a, sizeof *np);
	if (o)
		*np = *o;
	else
		onnx__node_proto__init(np);
	np->n_input = node->ninputs;
	np->input = value_names(e, node->inputs, node->ninputs);
	np->n_output = node->noutputs;
	np->output = value_names(e, node->outputs, node->noutputs);
	np->name = keep_str(o ? o->name : NULL, node->name, o != NULL);
	np->op_type = keep_str(o ? o->op_type : NULL, node->op_type, o != NULL);
	np->domain = keep_str(o ? o->domain : NULL, ort_domain(node), o != NULL);
	np->n_attribute = node->nattrs;
	np->attribute = arena_alloc(e->a, sizeof *np->attribute * (node->nattrs ? node->nattrs : 1));
	for (uint32_t i = 0; i < node->nattrs; i++)
		np->attribute[i] = emit_attr(e, &node->attrs[i]);
	return np;
}

/* A TypeProto for a tensor value from the IR's dtype and shape. */
static Onnx__TypeProto *emit_type(Emit *e, const IrValue *val)
{
	Onnx__TypeProto *tp = arena_alloc(e->a, sizeof *tp);
	onnx__type_proto__init(tp);
	Onnx__TypeProto__Tensor *tt = arena_alloc(e->a, sizeof *tt);
	onnx__type_proto__tensor__init(tt);
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	if (val->dtype) {
		tt->has_elem_type = 1;
		tt->elem_type = val->dtype;
	}
	if (val->shape.rank >= 0) {
		Onnx__TensorShapeProto *sp = arena_alloc(e->a, sizeof *sp);
		onnx__tensor_shape_proto__init(sp);
		sp->n_dim = (size_t)val->shape.rank;
		sp->dim = arena_alloc(e->a, sizeof *sp->dim * (sp->n_dim ? sp->n_dim : 1));
		int64_t numel = 1; /* of the dims written so far */
		for (size_t i = 0; i < sp->n_dim; i++) {
			Onnx__TensorShapeProto__Dimension *dp = arena_alloc(e->a, sizeof *dp);
			onnx__tensor_shape_proto__dimension__init(dp);
			const Dim *dim = &val->shape.dims[i];
			/* never a shape whose element count overflows int64 (the loader
			 * refuses it): such a dim is written unknown */
			int64_t next;
			if (dim->size >= 0 && !__builtin_mul_overflow(numel, dim->size, &next)) {
				numel = next;
				dp->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
				dp->dim_value = dim->size;
			} else if (dim->param && !ir_dim_is_anon(dim->param)) {
				dp->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
				dp->dim_param = (char *)dim->param;
			}
			sp->dim[i] = dp;
		}
		tt->shape = sp;
	}
	return tp;
}

static Onnx__ValueInfoProto *emit_value_info(Emit *e, ValueId v, const Onnx__ValueInfoProto *orig)
{
	const IrValue *val = ir_value(e->m, v);
	if (orig && !val->type_dirty && strcmp(str(orig->name), val->name) == 0)
		return (Onnx__ValueInfoProto *)orig;
	Onnx__ValueInfoProto *vi = arena_alloc(e->a, sizeof *vi);
	if (orig)
		*vi = *orig;
	else
		onnx__value_info_proto__init(vi);
	vi->name = (char *)val->name;
	/* The IR types tensors only: a value it knows no element type of (a
	 * sequence, an optional, an untyped body input) keeps the declared type,
	 * or goes without one; never a tensor type of undefined element type,
	 * which ONNX Runtime refuses ("Invalid tensor data type 0"). */
	if (val->non_tensor || !val->dtype || (orig && orig->type && val->shape.rank < 0))
		vi->type = orig ? orig->type : NULL; /* nor lose a declared shape to an unknown one */
	else if (!orig || val->type_dirty)
		vi->type = emit_type(e, val);
	return vi;
}

static Onnx__GraphProto *emit_graph(Emit *e, GraphId g)
{
	IrModel *m = e->m;
	IrGraph *gr = ir_graph(m, g);
	const Onnx__GraphProto *o = gr->orig;
	Onnx__GraphProto *gp = arena_alloc(e->a, sizeof *gp);
	if (o)
		*gp = *o;
	else
		onnx__graph_proto__init(gp);
	gp->name = keep_str(o ? o->name : NULL, gr->name, o != NULL);

	uint32_t count;
	NodeId *order = ir_topo_order(m, g, &count, e->d);
	if (!order)
		return NULL;
	gp->n_node = count;
	gp->node = arena_alloc(e->a, sizeof *gp->node * (count ? count : 1));
	for (uint32_t i = 0; i < count; i++)
		gp->node[i] = emit_node(e, order[i]);
	free(order);

	gp->initializer = arena_alloc(e->a, sizeof *gp->initializer * (gr->ninits ? gr->ninits : 1));
	gp->n_initializer = 0;
	for (uint32_t i = 0; i < gr->ninits; i++) {
		IrValue *val = ir_value(m, gr->inits[i]);
		if (!val->dead && val->tensor)
			gp->initializer[gp->n_initializer++] = emit_tensor(e, val->tensor, val->name);
	}
	gp->sparse_initializer = arena_alloc(e->a, sizeof *gp->sparse_initializer * (gr->nsparse ? gr->nsparse : 1));
	gp->n_sparse_initializer = 0;
	for (uint32_t i = 0; i < gr->nsparse; i++) {
		IrValue *val = ir_value(m, gr->sparse_inits[i]);
		if (!val->dead && val->sparse)
			gp->sparse_initializer[gp->n_sparse_initializer++] = (Onnx__SparseTensorProto *)val->sparse;
	}
	gp->n_input = gr->ninputs;
	gp->input = arena_alloc(e->a, sizeof *gp->input * (gr->ninputs ? gr->ninputs : 1));
	for (uint32_t i = 0; i < gr->ninputs; i++)
		gp->input[i] = emit_value_info(e, gr->inputs[i], ir_value(m, gr->inputs[i])->info);
	gp->n_output = gr->noutputs;
	gp->output = arena_alloc(e->a, sizeof *gp->output * (gr->noutputs ? gr->noutputs : 1));
	for (uint32_t i = 0; i < gr->noutputs; i++)
		gp->output[i] = emit_value_info(e, gr->outputs[i], gr->output_info[i]);
	/* value_info entries ride along while their value lives */
	if (o && o->n_value_info) {
		gp->value_info = arena_alloc(e->a, sizeof *gp->value_info * o->n_value_info);
		gp->n_value_info = 0;
		for (size_t i = 0; i < o->n_value_info; i++) {
			ValueId v = ir_lookup(m, g, str(o->value_info[i]->name));
			if (v && ir_value(m, v)->graph == g)
				gp->value_info[gp->n_value_info++] = o->value_info[i];
		}
	}
	return gp;
}

static Onnx__ModelProto *emit_model(Emit *e)
{
	IrModel *m = e->m;
	Onnx__ModelProto *mp = arena_alloc(e->a, sizeof *mp);
	const Onnx__ModelProto *o = m->proto;
	if (o)
		*mp = *o;
	else
		onnx__model_proto__init(mp);
	/* IR version 3 cannot express an initializer that is not also a graph
	 * input (a fold adds such initializers): write IR version 4 then. */
	if (m->ir_version < 4) {
		bool unlisted = false;
		for (GraphId g = 1; g < m->ngraphs && !unlisted; g++)
			for (uint32_t i = 0; !ir_graph(m, g)->dead && i < ir_graph(m, g)->ninits; i++) {
				IrValue *v = ir_value(m, ir_graph(m, g)->inits[i]);
				if (!v->dead && !v->is_input)
					unlisted = true;
			}
		if (unlisted)
			m->ir_version = 4;
	}
	if (!o || mp->ir_version != m->ir_version) {
		mp->has_ir_version = 1;
		mp->ir_version = m->ir_version;
	}
	if (!o || m->opsets_dirty) {
		mp->n_opset_import = m->nopsets;
		mp->opset_import = arena_alloc(e->a, sizeof *mp->opset_import * (m->nopsets ? m->nopsets : 1));
		for (uint32_t i = 0; i < m->nopsets; i++) {
			Onnx__OperatorSetIdProto *op = arena_alloc(e->a, sizeof *op);
			onnx__operator_set_id_proto__init(op);
			op->domain = (char *)m->opsets[i].domain;
			op->has_version = 1;
			op->version = m->opsets[i].version;
			mp->opset_import[i] = op;
		}
	}
	mp->graph = emit_graph(e, IR_MAIN_GRAPH);
	return mp->graph ? mp : NULL;
}

Onnx__ModelProto *ir_emit(IrModel *m, Arena *a, Diag *d)
{
	Emit e = {.m = m, .a = a, .d = d};
	Onnx__ModelProto *mp = emit_model(&e);
	for (size_t i = 0; i < e.nfiles; i++) {
		free(e.files[i].writes);
		free(e.files[i].slots);
	}
	free(e.files);
	return mp;
}

static bool save_bytes(IrModel *m, bool inline_external, uint8_t **out, size_t *len, Diag *d)
{
	Arena *a = arena_new();
	Emit e = {.m = m, .a = a, .d = d, .inline_external = inline_external};
	Onnx__ModelProto *mp = emit_model(&e);
	bool ok = false;
	if (mp && inline_external && (*len = onnx__model_proto__get_packed_size(mp)) > (size_t)IR_MAX_MODEL_FILE) {
		diag_error(d, m->path, "the model is over 2 GB (%zu bytes) with its tensors inline: save it to a file, "
		           "with external data", *len);
		mp = NULL;
	}
	if (mp) {
		*len = onnx__model_proto__get_packed_size(mp);
		*out = malloc(*len ? *len : 1);
		if (!*out)
			abort();
		onnx__model_proto__pack(mp, *out);
		ok = true;
	}
	for (size_t i = 0; i < e.nfiles; i++) {
		free(e.files[i].writes);
		free(e.files[i].slots);
	}
	free(e.files);
	arena_free(a);
	return ok;
}

bool ir_save_bytes(IrModel *m, uint8_t **out, size_t *len, Diag *d)
{
	return save_bytes(m, false, out, len, d);
}

bool ir_save_bytes_inline(IrModel *m, uint8_t **out, size_t *len, Diag *d)
{
	return save_bytes(m, true, out, len, d);
}

/* ---- writing files ----------------------------------------------------- */

/* A ProtobufCBuffer that streams the packed bytes to an output file. */
typedef struct FdBuffer {
	ProtobufCBuffer base;
	IrModel *m;             /* whose deferred tensors' placeholders may come */
	OutFile *out;
	size_t used;
	uint8_t *piece;         /* write_deferred's, made on first use */
	uint8_t buf[1 << 20];
} FdBuffer;

static void fd_flush(FdBuffer *b)
{
	out_write(b->out, b->buf, b->used);
	b->used = 0;
}

/* Pieces of DIRECT_WRITE bytes or more (tensor bytes, mostly still in the
 * mapped input file) go to the file as they are, not through the buffer. */
#define DIRECT_WRITE (64 << 10)

/* A deferred tensor is computed DEFER_PIECE bytes at a time straight into
 * the file (appended, or at offset at >= 0): the result never exists whole in
 * memory, and what it read leaves memory after.  8 MiB, not less: a
 * transposed weight's piece must hold enough rows (16 or more of a
 * 50,000-column LM head) for the tiled copy to use each line of the source
 * it reads whole; at 1 MiB GPT-2's tied head took 0.5 s. */
#define DEFER_PIECE DIRECT_BUF

/* Files of DIRECT_MIN bytes or more are written by a thread past the page
 * cache (out_direct, SaveOptions.direct_min): 2-4x faster on this machine
 * for files of hundreds of MB (BENCHMARKS.md); a small file is written
 * through the cache, where a reader finds it. */
#define DIRECT_MIN ((size_t)64 << 20)
static void write_deferred(IrModel *m, TensorId id, size_t len, OutFile *out, int64_t at, uint8_t **piece)
{
	for (size_t off = 0, n; off < len && !out->failed; off += n) {
		n = len - off < DEFER_PIECE ? len - off : DEFER_PIECE;
		if (out->direct && at >= 0) {
			/* computed into the writer's buffer, handed over whole */
			uint8_t *p = out_buffer(out);
			if (!p)
				break;
			ir_tensor_read(m, id, off, n, p);
			out_submit(out, n, (off_t)(at + (int64_t)off));
			continue;
		}
		/* an aligned piece of our own (a recipe computes whole elements
		 * into aligned memory, where an append may start at any byte) */
		if (!*piece && posix_memalign((void **)piece, 4096, DEFER_PIECE) != 0)
			abort();
		ir_tensor_read(m, id, off, n, *piece);
		if (at < 0)
			out_write(out, *piece, n);
		else
			out_pwrite(out, *piece, n, (off_t)(at + (int64_t)off));
	}
	ir_tensor_evict(m, id);
}

/* The deferred tensor whose placeholder (its IrTensor record, see
 * emit_tensor) `data` is, or 0: no packed bytes ever point into the IR's
 * tensor array otherwise. */
static TensorId placeholder(const IrModel *m, const uint8_t *data, size_t len)
{
	uintptr_t p = (uintptr_t)data, lo = (uintptr_t)m->tensors, hi = (uintptr_t)(m->tensors + m->ntensors);
	if (p < lo || p >= hi || (p - lo) % sizeof *m->tensors)
		return 0;
	TensorId id = (TensorId)((p - lo) / sizeof *m->tensors);
	return m->tensors[id].deferred && m->tensors[id].nbytes == len ? id : 0;
}

/* Bytes of a file the model mapped (the input model, an external data
 * file) into out, at offset at (or appended, at < 0), file to file
 * (out_copy: shared blocks where the file system can, never mapped into
 * graft's memory).  False (nothing written) if they lie in no such file. */
static bool copy_mapped(const IrModel *m, const uint8_t *data, size_t len, OutFile *out, int64_t at)
{
	int fd;
	int64_t src;
	if (out->failed || !ir_mapped_range(m, data, len, &fd, &src))
		return false;
	size_t left = out_copy(out, fd, (off_t)src, len, (off_t)at);
	size_t done = len - left; /* what the kernel did not copy goes through memory */
	if (left && at < 0)
		out_write(out, data + done, left);
	else if (left)
		out_pwrite(out, data + done, left, (off_t)(at + (int64_t)done));
	return true;
}

static void fd_append(ProtobufCBuffer *base, size_t len, const uint8_t *data)
{
	FdBuffer *b = (FdBuffer *)base;
	TensorId id = placeholder(b->m, data, len);
	if (id && b->m->tensors[id].data) {
		/* a recipe's result sharing bytes that exist (a reshaped weight) */
		fd_flush(b);
		if (!copy_mapped(b->m, b->m->tensors[id].data, len, b->out, -1))
			out_write(b->out, b->m->tensors[id].data, len);
		ir_tensor_evict(b->m, id);
		return;
	}
	if (id) {
		fd_flush(b);
		write_deferred(b->m, id, len, b->out, -1, &b->piece);
		return;
	}
	if (b->used + len > sizeof b->buf || len >= DIRECT_WRITE)
		fd_flush(b);
	if (len >= DIRECT_WRITE) {
		if (!copy_mapped(b->m, data, len, b->out, -1))
			out_write(b->out, data, len);
		return;
	}
	if (len)
		memcpy(b->buf + b->used, data, len);
	b->used += len;
}

static bool write_ext_file(IrModel *m, ExtFile *f, OutFile *out, const char *final, size_t direct_min, Diag *d)
{
	if (!out_open(out, final, d))
		return false;
	if ((size_t)f->end >= direct_min)
		out_direct(out);
	uint8_t *buf = NULL;
	for (size_t i = 0; i < f->nwrites && !out->failed; i++) {
		const ExtWrite *w = &f->writes[i];
		if (!w->tensor) {
			if (!copy_mapped(m, w->data, w->len, out, w->offset))
				out_pwrite(out, w->data, w->len, (off_t)w->offset);
			continue;
		}
		/* a recipe's result sharing bytes that exist (a reshaped
		 * weight): copied as they are, file to file where they lie in one */
		if (m->tensors[w->tensor].data) {
			ExtWrite c = *w;
			c.data = m->tensors[w->tensor].data;
			if (!copy_mapped(m, c.data, c.len, out, c.offset))
				out_pwrite(out, c.data, c.len, (off_t)c.offset);
			ir_tensor_evict(m, w->tensor);
			continue;
		}
		write_deferred(m, w->tensor, w->len, out, w->offset, &buf);
	}
	free(buf);
	if (out_wait(out) && ftruncate(out->fd, f->end) != 0) {
		out->failed = true;
		out->err = errno;
	}
	return out_finish(out, d);
}

/* Does the file at path mention name (the existing model at -o refers to
 * the existing data file beside it: a previous output, replaced together)? */
static bool file_mentions(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	struct stat st;
	bool found = false;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			found = memmem(p, (size_t)st.st_size, name, strlen(name)) != NULL;
			munmap(p, (size_t)st.st_size);
		}
	}
	close(fd);
	return found;
}

/* Inline bytes of every live tensor: decides when the 2 GB limit forces
 * external data. */
static size_t inline_bytes(const IrModel *m)
{
	size_t total = 0;
	for (TensorId t = 1; t < m->ntensors; t++)
		if (!m->tensors[t].external)
			total += m->tensors[t].nbytes;
	return total;
}

bool ir_model_has_external(const IrModel *m)
{
	for (TensorId t = 1; t < m->ntensors; t++)
		if (m->tensors[t].external)
			return true;
	return false;
}

void ir_model_files(IrModel *m, FileSet *s)
{
	if (m->path)
		fileset_input(s, m->path, FILE_INPUT_MODEL);
	for (TensorId t = 1; m->dir && t < m->ntensors; t++) {
		const char *loc = m->tensors[t].external ? m->tensors[t].ext_location : NULL;
		if (!loc)
			continue;
		bool seen = false;
		for (TensorId u = 1; u < t && !seen; u++)
			seen = m->tensors[u].external && m->tensors[u].ext_location &&
			       strcmp(m->tensors[u].ext_location, loc) == 0;
		if (!seen) {
			char *p = malloc(strlen(m->dir) + strlen(loc) + 2);
			if (!p)
				abort();
			sprintf(p, "%s/%s", m->dir, loc);
			fileset_input(s, p, FILE_INPUT_DATA);
			free(p);
		}
	}
}

ExternalWhy ir_save_external_why(const IrModel *m, const SaveOptions *opt)
{
	size_t limit = opt && opt->inline_limit ? opt->inline_limit : PROTOBUF_LIMIT - (64u << 20);
	if (opt && opt->external == EXT_ALL)
		return EXT_WHY_ASKED;
	/* a model that came with external data keeps its large tensors there,
	 * the ones folding made included */
	if (ir_model_has_external(m))
		return EXT_WHY_INPUT;
	return inline_bytes(m) > limit ? EXT_WHY_SIZE : EXT_WHY_NONE;
}

char *ir_save_data_path(const char *path, const SaveOptions *opt)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *name = opt && opt->ext_file ? opt->ext_file : NULL;
	size_t dirlen = (size_t)(base - path);
	char *p = malloc(dirlen + strlen(name ? name : base) + 8);
	if (!p)
		abort();
	if (name)
		sprintf(p, "%.*s%s", (int)dirlen, path, name);
	else
		sprintf(p, "%.*s%s.data", (int)dirlen, path, base);
	return p;
}

bool ir_save_file(IrModel *m, const char *path, const SaveOptions *opt, Diag *d)
{
	SaveOptions defaults = {0};
	if (!opt)
		opt = &defaults;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (opt->ext_file && (!*opt->ext_file || strchr(opt->ext_file, '/') || !strcmp(opt->ext_file, ".") ||
	                      !strcmp(opt->ext_file, ".."))) {
		diag_error(d, path, "the external data file name '%s' must be a plain file name", opt->ext_file);
		return false;
	}
	/* never onto the files the model was read from (but the model itself
	 * with --overwrite, and then its data files with it) */
	FileSet inputs;
	fileset_init(&inputs);
	ir_model_files(m, &inputs);
	const FileEntry *hit = fileset_find(&inputs, path);
	bool onto_input = hit && hit->role == FILE_INPUT_MODEL;
	bool ok = fileset_output(&inputs, path, opt->overwrite_input ? FILE_INPUT_MODEL : 0, d);
	char *data_path = ir_save_data_path(path, opt);

	Arena *a = arena_new();
	Emit e = {.m = m, .a = a, .d = d, .stream = true};
	e.threshold = opt->ext_threshold ? opt->ext_threshold : 1024;
	e.threshold_given = opt->ext_threshold != 0;
	e.new_location = opt->ext_file ? opt->ext_file : arena_printf(a, "%s.data", base);
	e.externalize = ir_save_external_why(m, opt) != EXT_WHY_NONE;
	if (opt->wrote_data)
		*opt->wrote_data = false;

	OutFile data = {.fd = -1}, model = {.fd = -1};
	size_t direct_min = opt->direct_min ? opt->direct_min : DIRECT_MIN;
	bool have_data = false;
	Onnx__ModelProto *mp = ok ? emit_model(&e) : NULL;
	ok = false;
	if (!mp)
		goto done;
	if (onnx__model_proto__get_packed_size(mp) >= PROTOBUF_LIMIT) {
		diag_error(d, path, "the model is over 2 GB even with its large tensors as external data");
		goto done;
	}
	/* External data first, so the model never refers to a missing file. */
	if (e.nfiles) {
		if (!fileset_output(&inputs, data_path, opt->overwrite_input && onto_input ? FILE_INPUT_DATA : 0, d))
			goto done;
		/* An existing data file is replaced only together with the model
		 * that refers to it: the input with --overwrite, or a previous
		 * output at the same path.  Anything else is someone's file. */
		struct stat st;
		const FileEntry *was = fileset_find(&inputs, data_path);
		bool input_data = was && was->role == FILE_INPUT_DATA;
		if (!input_data && lstat(data_path, &st) == 0 && S_ISREG(st.st_mode) && !file_mentions(path, e.new_location)) {
			diag_error(d, data_path, "refusing to replace it: it exists and is not the external data of '%s' "
			           "(remove it or choose another output name)", path);
			goto done;
		}
		if (!write_ext_file(m, &e.files[0], &data, data_path, direct_min, d))
			goto done;
		have_data = true;
	}
	if (!out_open(&model, path, d))
		goto done;
	if (onnx__model_proto__get_packed_size(mp) >= direct_min)
		out_direct(&model);
	FdBuffer *fb = malloc(sizeof *fb);
	if (!fb)
		abort();
	fb->base.append = fd_append;
	fb->m = m;
	fb->out = &model;
	fb->used = 0;
	fb->piece = NULL;
	onnx__model_proto__pack_to_buffer(mp, &fb->base);
	fd_flush(fb);
	free(fb->piece);
	free(fb);
	if (!out_finish(&model, d))
		goto done;
	/* the data file, then the model: both or (but for a failing rename)
	 * neither */
	ok = have_data ? out_rename_pair(&data, &model, d) : out_rename(&model, d);
	have_data = false;
	if (ok && opt->wrote_data)
		*opt->wrote_data = e.nfiles > 0;
done:
	if (have_data)
		out_abandon(&data);
	out_abandon(&model);
	for (size_t i = 0; i < e.nfiles; i++) {
		free(e.files[i].writes);
		free(e.files[i].slots);
	}
	free(e.files);
	arena_free(a);
	free(data_path);
	fileset_free(&inputs);
	return ok;
}
