/* ir.h - graft's graph IR: the model that rewrite rules change.
 *
 * Designed for rewriting, not as a copy of the protobuf structs:
 *   - nodes, values, graphs and tensors are small integer ids into arrays of
 *     the IrModel (QBE-style); id 0 always means "none";
 *   - a value knows its producer in O(1) and its uses (node, input slot) in
 *     O(uses); node removal and ir_replace_all_uses are O(uses);
 *   - one model holds the main graph and every subgraph (If/Loop/Scan bodies);
 *     a body node that reads an outer value is an ordinary use of that value;
 *   - node identity never depends on names (most real models have empty or
 *     duplicate node names);
 *   - nodes of a graph form a doubly linked list in a deterministic order
 *     (the file's order, new nodes inserted where the caller says).
 *
 * Anything the IR does not model (doc strings, metadata, value_info,
 * functions, unknown fields...) rides along with the IR object it belongs to,
 * as a pointer to the protobuf message it was loaded from ("orig"), and is
 * written back by the saver (onnx_save.c).  A model that is loaded and saved
 * without change comes out byte-identical.
 *
 * Errors in user input are reported through a Diag (diag.h); library code
 * never exits. */
#ifndef GRAFT_IR_H
#define GRAFT_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "opschema.h"

typedef uint32_t NodeId;
typedef uint32_t ValueId;
typedef uint32_t GraphId;
typedef uint32_t TensorId;

/* The protobuf messages (from protoc-c's onnx.pb-c.h), opaque here. */
typedef struct Onnx__ModelProto Onnx__ModelProto;
typedef struct Onnx__GraphProto Onnx__GraphProto;
typedef struct Onnx__NodeProto Onnx__NodeProto;
typedef struct Onnx__AttributeProto Onnx__AttributeProto;
typedef struct Onnx__TensorProto Onnx__TensorProto;
typedef struct Onnx__SparseTensorProto Onnx__SparseTensorProto;
typedef struct Onnx__ValueInfoProto Onnx__ValueInfoProto;

/* ONNX TensorProto.DataType numbers. */
typedef enum DType {
	DT_UNDEFINED = 0, DT_FLOAT = 1, DT_UINT8 = 2, DT_INT8 = 3, DT_UINT16 = 4,
	DT_INT16 = 5, DT_INT32 = 6, DT_INT64 = 7, DT_STRING = 8, DT_BOOL = 9,
	DT_FLOAT16 = 10, DT_DOUBLE = 11, DT_UINT32 = 12, DT_UINT64 = 13,
	DT_COMPLEX64 = 14, DT_COMPLEX128 = 15, DT_BFLOAT16 = 16,
	DT_FLOAT8E4M3FN = 17, DT_FLOAT8E4M3FNUZ = 18, DT_FLOAT8E5M2 = 19,
	DT_FLOAT8E5M2FNUZ = 20, DT_UINT4 = 21, DT_INT4 = 22, DT_FLOAT4E2M1 = 23,
	DT_COUNT
} DType;

const char *dtype_name(int dt);        /* "float", "int64", ... (ONNX text syntax); "?" if unknown */
int dtype_from_name(const char *name); /* DT_UNDEFINED if unknown */
/* Size in bits of one element (4 for int4), 0 for strings and unknown types. */
int dtype_bits(int dt);

/* A dimension: a known size, a symbolic name, or unknown. */
typedef struct Dim {
	int64_t size;       /* >= 0 if known, -1 otherwise */
	const char *param;  /* symbolic name ("N") if size < 0, else NULL; NULL + size < 0: unknown */
} Dim;

/* The rewrite engine names each unknown dim of the main graph's inputs
 * "graft.anon.K" (ir_name_anonymous_dims), so that inference can tell dims
 * that come from the same one apart from the rest; the saver writes such a
 * dim unknown again, and printers show it as '?'. */
#define IR_ANON_DIM_PREFIX "graft.anon."
bool ir_dim_is_anon(const char *param);
/* How messages show an unknown dim: its symbol, or '?'. */
static inline const char *ir_dim_label(const Dim *d)
{
	return d->param && !ir_dim_is_anon(d->param) ? d->param : "?";
}

/* The highest tensor rank graft handles: the loader and the text parser
 * refuse a tensor or a declared type of higher rank, shape inference leaves
 * a higher output rank unknown, and the evaluator's values (EvValue) and
 * kernels size their dims arrays by it. */
#define IR_MAX_RANK 16

typedef struct Shape {
	int rank;           /* -1: rank unknown (dims is NULL) */
	Dim *dims;
} Shape;

typedef struct Use {
	NodeId node;
	uint32_t slot;      /* input index in that node */
} Use;

/* A value: an edge of the graph.  Exactly one of these holds:
 *   producer != 0              output `out_slot` of node `producer`;
 *   is_input                   a graph input (if also tensor/sparse != 0, an
 *                              overridable initializer: never a constant);
 *   tensor != 0 or sparse      an initializer (a constant). */
typedef struct IrValue {
	const char *name;
	GraphId graph;          /* scope that defines it */
	NodeId producer;
	uint32_t out_slot;
	bool is_input;
	bool is_output;         /* listed among its graph's outputs */
	bool dead;              /* removed; the id is not reused */
	bool type_dirty;        /* dtype/shape changed since load: saver rebuilds the TypeProto */
	bool non_tensor;        /* declared with a sequence, optional, map, sparse or opaque type:
	                           dtype and shape say nothing, and the declared type (in info or
	                           value_info) is what the saver writes */
	TensorId tensor;        /* initializer data, 0 if none */
	const Onnx__SparseTensorProto *sparse; /* sparse initializer (carried, not modeled) */
	int dtype;              /* DType, DT_UNDEFINED if unknown (also for non-tensor types) */
	Shape shape;
	Use *uses;
	uint32_t nuses, capuses;
	const Onnx__ValueInfoProto *info; /* carried: the graph input/output entry it came from */
} IrValue;

/* A byte string (attribute "s" and "strings" values): not NUL-terminated. */
typedef struct IrBytes {
	const uint8_t *data;
	size_t len;
} IrBytes;

/* An attribute.  `type` says which value fields are valid:
 *   FLOAT: f   INT: i   STRING: s   TENSOR: t   GRAPH: g
 *   FLOATS: floats[n]  INTS: ints[n]  STRINGS: strings[n]
 *   TENSORS: tensors[n]  GRAPHS: graphs[n]
 *   sparse tensors and type protos are carried in orig, not modeled. */
typedef struct IrAttr {
	const char *name;
	uint8_t type;           /* AttrType */
	float f;
	int64_t i;
	IrBytes s;
	TensorId t;
	GraphId g;
	size_t n;
	const float *floats;
	const int64_t *ints;
	const IrBytes *strings;
	const TensorId *tensors;
	const GraphId *graphs;
	const Onnx__AttributeProto *orig; /* carried: doc_string, ref_attr_name, unknown fields */
} IrAttr;

typedef struct IrNode {
	const char *op_type;
	const char *domain;     /* "" for the default ONNX domain */
	const char *name;       /* "" if unnamed; may repeat */
	OpKind kind;            /* OP_UNKNOWN unless default domain and known */
	GraphId graph;
	NodeId prev, next;      /* list order within the graph */
	ValueId *inputs;        /* 0 for an omitted optional input ("") */
	uint32_t ninputs;
	ValueId *outputs;       /* 0 for an omitted optional output */
	uint32_t noutputs;
	IrAttr *attrs;
	uint32_t nattrs;
	uint32_t orig_index;    /* position in the loaded file's node list, or UINT32_MAX if new */
	bool dead;
	const Onnx__NodeProto *orig; /* carried: doc_string, unknown fields */
} IrNode;

typedef struct NameMap NameMap;   /* value name -> ValueId, private to graph.c */

typedef struct IrGraph {
	const char *name;
	GraphId parent;         /* enclosing graph, 0 for the main graph */
	NodeId owner;           /* node whose attribute holds this body, 0 for the main graph */
	bool dead;
	NodeId first, last;     /* node list */
	uint32_t nnodes;
	bool topo_sorted;       /* the list is known to be in topological order: set by
	                           ir_topo_order, kept by appends, cleared by graph.c on
	                           any change that might break it */
	ValueId *inputs;  uint32_t ninputs, capinputs;
	ValueId *outputs; uint32_t noutputs, capoutputs;
	const Onnx__ValueInfoProto **output_info; /* carried entry per output (NULL if new), same cap */
	ValueId *inits;   uint32_t ninits, capinits;   /* initializers, file order */
	ValueId *sparse_inits; uint32_t nsparse, capsparse;
	NameMap *names;         /* values defined in this scope */
	const Onnx__GraphProto *orig; /* carried: doc_string, value_info, annotations, unknown fields */
} IrGraph;

typedef struct IrModel IrModel;

/* Bytes not computed yet: a tensor whose data is a function of other
 * tensors (a fold's elementwise result over a large weight, see fold.c)
 * keeps the recipe, and its bytes are computed when something reads them:
 * by the saver piece by piece straight into the output file, by anything
 * else all at once (ir_tensor_raw).  Embedded as the first member of the
 * recipe's own struct. */
typedef struct IrDeferred {
	/* write bytes [off, off + len) of the tensor's data to out */
	void (*fill)(IrModel *m, const struct IrDeferred *d, size_t off, size_t len, uint8_t *out);
	/* let go of what the recipe holds, and free it */
	void (*release)(IrModel *m, struct IrDeferred *d);
	/* may be NULL: the result was written out, so what the recipe reads
	 * from mapped files need not stay in memory (ir_tensor_evict on it) */
	void (*evict)(IrModel *m, const struct IrDeferred *d);
	/* may be NULL: true if b (a recipe of the same fill) computes the same
	 * bytes as d, known without computing them (CSE's comparison) */
	bool (*same)(IrModel *m, const struct IrDeferred *d, const struct IrDeferred *b);
} IrDeferred;

/* A tensor constant.  Bytes are shared, never copied: `data` points into the
 * loaded protobuf (raw_data), into the mapped input file itself (large
 * raw_data: read-only, maybe not aligned for the element type, see
 * ir_tensor_raw), into an external data file mapped at load (the same), or
 * into a buffer the IR owns; or they are not computed yet (`deferred`).  Little-endian,
 * row-major, as ONNX raw_data.
 * Strings: data is NULL and `proto` holds string_data. */
typedef struct IrTensor {
	int dtype;
	int rank;
	const int64_t *dims;
	int64_t numel;
	const uint8_t *data;    /* may be NULL until ir_tensor_bytes() decodes typed fields */
	size_t nbytes;
	bool owns_data;
	bool external;          /* came from external data (location below) */
	const char *ext_location;
	int64_t ext_offset;
	const Onnx__TensorProto *proto; /* where it came from; NULL for tensors the IR made */
	bool dirty;             /* data changed: the saver rebuilds the TensorProto */
	uint32_t nvalues;       /* live initializer values holding it; a tensor the IR made
	                           loses its bytes when the last one goes (graph.c) */
	IrDeferred *deferred;   /* data is NULL: computed on demand from this recipe */
	uint32_t nholds;        /* deferred tensors reading this one's bytes: kept for them */
} IrTensor;

typedef struct OpsetImport {
	const char *domain;     /* "" for ai.onnx */
	int64_t version;
} OpsetImport;

typedef struct Arena Arena;

/* An external data file the loader mapped (read-only, private): tensors
 * read from it point into the mapping, which lives as long as the model. */
typedef struct IrMapping {
	uint64_t dev, ino;      /* the file (the key) */
	void *base;
	size_t len;
	int fd;                 /* kept open (read-only) for file-to-file copies, or -1 */
} IrMapping;

typedef struct IrModel {
	IrNode *nodes;     uint32_t nnodes, capnodes;     /* [0] unused */
	IrValue *values;   uint32_t nvalues, capvalues;   /* [0] unused */
	IrGraph *graphs;   uint32_t ngraphs, capgraphs;   /* [0] unused, [1] main graph */
	IrTensor *tensors; uint32_t ntensors, captensors; /* [0] unused */
	OpsetImport *opsets; uint32_t nopsets;
	bool opsets_dirty;
	int64_t ir_version;
	Arena *arena;                 /* strings and small arrays of the IR */
	Onnx__ModelProto *proto;      /* the unpacked file; carries everything not modeled */
	const uint8_t *alias_base;    /* raw_data of loaded tensors may point into these bytes */
	size_t alias_len;             /* (the input file; see onnx_load.c, "zero-copy") */
	void *map;                    /* ir_load_file's mapping when tensors point into it */
	size_t map_len;
	int map_fd;                   /* that file, kept open for file-to-file copies, or -1 */
	IrMapping *ext_maps;          /* external data files mapped (onnx_load.c) */
	uint32_t next_maps;
	void *alloc;                  /* protobuf-c allocator of proto (leaves alias_base alone) */
	const char *path;             /* path the model was loaded from (for messages) */
	char *dir;                    /* folder of the model file (external data) */
	uint32_t name_counter;        /* for fresh names */
} IrModel;

#define IR_MAIN_GRAPH 1u

static inline IrNode *ir_node(IrModel *m, NodeId n) { return &m->nodes[n]; }
static inline IrValue *ir_value(IrModel *m, ValueId v) { return &m->values[v]; }
static inline IrGraph *ir_graph(IrModel *m, GraphId g) { return &m->graphs[g]; }
static inline IrTensor *ir_tensor(IrModel *m, TensorId t) { return &m->tensors[t]; }

/* Iterate the nodes of graph g in list order: for (n = ir_first(m,g); n; n = ir_next(m,n)). */
static inline NodeId ir_first(IrModel *m, GraphId g) { return m->graphs[g].first; }
static inline NodeId ir_next(IrModel *m, NodeId n) { return m->nodes[n].next; }

/* graph.c: building and changing the IR */
IrModel *ir_model_new(void);
void ir_model_free(IrModel *m);
/* Opset version of `domain` ("" or "ai.onnx" for the default), 0 if not imported. */
int64_t ir_opset(const IrModel *m, const char *domain);
void ir_set_opset(IrModel *m, const char *domain, int64_t version);
/* Drop the import of a non-default domain no live node of any graph uses. */
void ir_drop_unused_opset(IrModel *m, const char *domain);

GraphId ir_graph_new(IrModel *m, GraphId parent, const char *name);
/* Values: a graph input, an initializer (tensor), or found by name in g or an enclosing scope. */
ValueId ir_add_input(IrModel *m, GraphId g, const char *name, int dtype, const Shape *shape);
ValueId ir_add_initializer(IrModel *m, GraphId g, const char *name, TensorId t);
void ir_add_output(IrModel *m, GraphId g, ValueId v);
ValueId ir_lookup(IrModel *m, GraphId g, const char *name);
/* A name not yet used by any value of the model, built from `hint`. */
const char *ir_fresh_name(IrModel *m, const char *hint);
/* Names every unknown dim of the main graph's inputs (IR_ANON_DIM_PREFIX K);
 * the inputs' declared types are not marked changed. */
void ir_name_anonymous_dims(IrModel *m);
/* Rename v; fails (returns false) if the name is taken in its scope. */
bool ir_value_rename(IrModel *m, ValueId v, const char *name);
void ir_value_set_type(IrModel *m, ValueId v, int dtype, const Shape *shape);
/* v's type as the audit shows it: "float[1,N,?]", "float[]" for a scalar,
 * "float[*]" for an unknown rank. */
void ir_value_type_print(const IrValue *v, FILE *f);
/* What value v is declared to hold, from the graph input or output entry it
 * came with (onnx_load.c): a sequence, an optional, or else a tensor (also
 * when nothing is declared). */
typedef enum IrDeclKind { IR_DECL_TENSOR = 0, IR_DECL_SEQUENCE, IR_DECL_OPTIONAL } IrDeclKind;
IrDeclKind ir_value_declared_kind(IrModel *m, ValueId v);
/* A constant: an initializer callers cannot override.  An initializer also
 * listed as a graph input is overridable from IR version 4 on; before that
 * ONNX required every initializer to be listed as an input, so it is not. */
bool ir_is_constant(const IrModel *m, ValueId v);
/* Remove an initializer or graph-input value that nothing uses and that is
 * not a graph output; false (and nothing changes) otherwise. */
bool ir_value_remove(IrModel *m, ValueId v);
/* Graph output slot i of g now refers to v (the interface keeps its names: the caller renames). */
void ir_set_output(IrModel *m, GraphId g, uint32_t i, ValueId v);

/* Create a node in g before node `before` (0: at the end).  Its outputs are
 * new values named output_names[i] (NULL, or a NULL entry: a fresh name;
 * "" : an omitted optional output).  Returns 0 if a name is already taken. */
NodeId ir_node_new(IrModel *m, GraphId g, NodeId before, const char *domain,
                   const char *op_type, const char *name, const ValueId *inputs,
                   uint32_t ninputs, const char *const *output_names, uint32_t noutputs);
void ir_set_input(IrModel *m, NodeId n, uint32_t slot, ValueId v);
/* Remove n; its outputs must have no uses left and not be graph outputs.
 * Bodies in its graph attributes are removed with it. */
void ir_node_remove(IrModel *m, NodeId n);
/* Move n before `before` (0: to the end) within its graph. */
void ir_node_move(IrModel *m, NodeId n, NodeId before);
/* Every node input that reads `old` now reads `new` (graph outputs are left
 * alone: the interface is the caller's business).  O(uses of old). */
void ir_replace_all_uses(IrModel *m, ValueId old, ValueId new_);
/* A label for messages: the node's name, or "Op#index" when it has none. */
const char *ir_node_label(IrModel *m, NodeId n, char *buf, size_t size);

/* Attributes.  Setting an existing name replaces its value. */
const IrAttr *ir_attr(const IrModel *m, NodeId n, const char *name);
IrAttr *ir_attr_set(IrModel *m, NodeId n, const char *name, AttrType type);
void ir_attr_set_int(IrModel *m, NodeId n, const char *name, int64_t v);
void ir_attr_set_float(IrModel *m, NodeId n, const char *name, float v);
void ir_attr_set_string(IrModel *m, NodeId n, const char *name, const void *s, size_t len);
void ir_attr_set_ints(IrModel *m, NodeId n, const char *name, const int64_t *v, size_t count);
void ir_attr_set_floats(IrModel *m, NodeId n, const char *name, const float *v, size_t count);
void ir_attr_set_strings(IrModel *m, NodeId n, const char *name, const IrBytes *v, size_t count);
void ir_attr_set_tensor(IrModel *m, NodeId n, const char *name, TensorId t);
void ir_attr_set_tensors(IrModel *m, NodeId n, const char *name, const TensorId *t, size_t count);
/* The body becomes owned by n (its owner and parent are updated). */
void ir_attr_set_graph(IrModel *m, NodeId n, const char *name, GraphId body);
void ir_attr_set_graphs(IrModel *m, NodeId n, const char *name, const GraphId *bodies, size_t count);
bool ir_attr_remove(IrModel *m, NodeId n, const char *name);
/* Every attribute of `from` set on `to` (values shared, not copied; bodies
 * are shared too: the caller moves or drops them). */
void ir_copy_attrs(IrModel *m, NodeId to, NodeId from);

/* tensor.c: constants */
/* A new tensor owning a copy of `data` (nbytes must match dtype and dims). */
TensorId ir_tensor_new(IrModel *m, int dtype, const int64_t *dims, int rank, const void *data, size_t nbytes);
/* The same, taking ownership of `data` (from malloc) instead of copying it:
 * a computed result goes into the model without a second copy. */
TensorId ir_tensor_adopt(IrModel *m, int dtype, const int64_t *dims, int rank, void *data, size_t nbytes);
/* The raw little-endian bytes of t, decoding typed proto fields on first use.
 * NULL for strings (and sets *nbytes to 0). */
const uint8_t *ir_tensor_bytes(IrModel *m, TensorId t, size_t *nbytes);
/* The same bytes where they lie, maybe not aligned for the element type
 * (aliased into the input file): for hashing, comparing, copying, writing.
 * ir_tensor_bytes copies a misaligned tensor once to aligned memory. */
const uint8_t *ir_tensor_raw(IrModel *m, TensorId t, size_t *nbytes);
bool ir_tensor_aligned(const IrTensor *t);
/* A tensor whose bytes `d` computes on demand (owned by the tensor). */
TensorId ir_tensor_deferred(IrModel *m, int dtype, const int64_t *dims, int rank, size_t nbytes, IrDeferred *d);
/* Bytes [off, off + len) of t into out (any range inside it, any out),
 * without computing or copying the rest of a deferred or misaligned tensor:
 * for streaming and sampling.  A range outside t writes nothing. */
void ir_tensor_read(IrModel *m, TensorId t, size_t off, size_t len, uint8_t *out);
/* String element i of a DT_STRING tensor: its bytes (not NUL-terminated),
 * the count in *len; NULL past the strings the tensor holds. */
const uint8_t *ir_tensor_string(IrModel *m, TensorId t, int64_t i, size_t *len);
/* A serialized TensorProto (a .pb file of ONNX's backend tests, an item of
 * a SequenceProto) as a tensor of m: the message is kept in m's arena, its
 * name in *name (NULL if it has none).  0 when the bytes are no TensorProto
 * (*parsed false, nothing said) or the tensor in them is not valid (*parsed
 * true, the reason on d, naming `where`). */
TensorId ir_tensor_decode(IrModel *m, const uint8_t *buf, size_t len, const char *where, const char **name,
                          bool *parsed, Diag *d);
/* A tensor as a serialized TensorProto named `name` (malloc'd, *len bytes):
 * dtype, dims, and nbytes of raw little-endian data, or for DT_STRING the
 * product of dims NUL-terminated strings (data is char *[]; NULL for ""). */
uint8_t *ir_tensor_encode(const char *name, int dtype, int rank, const int64_t *dims, const void *data,
                          size_t nbytes, size_t *len);
/* A deferred tensor's recipe reads t: its bytes stay until the hold ends,
 * whatever happens to the values holding t. */
void ir_tensor_hold(IrModel *m, TensorId t);
void ir_tensor_unhold(IrModel *m, TensorId t);
/* t's bytes were written out: the pages of a mapped input file (the model
 * file, an external data file) that hold them, or that its recipe read,
 * leave the process's memory.  Always safe (the mappings are private and
 * read-only: a later reader faults the same bytes back in); the saver calls
 * it after each deferred tensor, so memory holds one source at a time. */
void ir_tensor_evict(IrModel *m, TensorId t);
/* t was only sampled (CSE's hash reads 65 windows of a large constant): the
 * pages the samples mapped leave memory again, as ir_tensor_evict, if the
 * model has external data files, which are mapped on demand (a sample maps
 * a whole folio).  Without them the model's bytes are its own file, mapped
 * whole at load (MAP_POPULATE): the samples mapped nothing new, and dropping
 * the pages would only make the next reader (a rule's moderate(w), a fold,
 * the saver) fault them back in. */
void ir_tensor_evict_sampled(IrModel *m, TensorId t);
/* Element count of dims, or -1 if it overflows int64 or a dim is negative. */
int64_t ir_numel(const int64_t *dims, int rank);

/* validate.c: the IR's invariants (for tests and debug builds).  Reports the
 * first few problems to d; returns true if there are none. */
bool ir_validate(IrModel *m, Diag *d);
/* Node ids of graph g in a topological order that keeps list order wherever
 * the list allows (so a sorted list comes back unchanged), or NULL (and a diagnostic) on a
 * cycle.  The caller frees the array; *count receives its length.  A list
 * known to be sorted (IrGraph.topo_sorted) is returned without a check. */
NodeId *ir_topo_order(IrModel *m, GraphId g, uint32_t *count, Diag *d);

/* schema_check.c: does node n fit its op's schema at the model's opset
 * (opschema.h)?  The op exists there; input and output counts; attribute
 * names, types and required ones; the element types known against the type
 * constraints; attribute values the spec bounds (axis, axes and perm by the
 * input's known rank, Cast's `to`).  NULL if it fits (or is an op of a custom
 * domain), else why, written to buf ("input 0 ('x') is int32, which
 * LeakyRelu-16 does not take as T"). */
const char *ir_node_schema_error(IrModel *m, NodeId n, char *buf, size_t size);
/* What a loaded model declares and the IR would otherwise take silently:
 * attributes of another type than their op's schema says ("file: node 'n'
 * (Softmax): attribute 'axis' must be an int, not a string"), negative
 * dims in a graph input's or output's type.  Reports to d; false if any. */
bool ir_check_declarations(IrModel *m, Diag *d);
/* input_file.c: open a user's file for reading, refusing anything but a
 * regular file (a FIFO would block forever, a device never end).  Returns
 * the descriptor and fills *st, or -1 with *err an errno value or
 * IR_OPEN_NOT_REGULAR; ir_open_strerror gives the text ("not a regular
 * file", or strerror's).  A directory gives EISDIR. */
struct stat;
enum { IR_OPEN_NOT_REGULAR = -100 };
int ir_open_regular(const char *path, struct stat *st, int *err);
const char *ir_open_strerror(int err);
/* A model file mapped by ir_load_file that shrinks while the model lives
 * raises SIGBUS when its bytes are touched.  ir_guard_mapped_inputs installs
 * a SIGBUS handler that, for an address inside a mapping ir_load_file
 * registered (ir_guard_add; removed when the model is freed), writes
 * "graft: PATH: the file changed size while graft was reading it", calls
 * cleanup (may be NULL; it must be async-signal-safe) and _exit(1)s; other
 * SIGBUS keep the default action.  For programs, not libraries. */
bool ir_guard_mapped_inputs(void (*cleanup)(void));
void ir_guard_add(const void *base, size_t len, const char *path);
void ir_guard_remove(const void *base);
/* The largest model file ir_load_file reads (protobuf's 2 GiB limit: larger
 * models keep their weights in external data files). */
#define IR_MAX_MODEL_FILE ((int64_t)INT32_MAX)

/* onnx_load.c / onnx_save.c */
typedef struct LoadOptions {
	int max_graph_depth;    /* subgraph nesting limit, 0: default (64) */
	bool borrow;            /* ir_load_bytes: buf outlives the model, so large tensor
	                           bytes point into it instead of being copied
	                           (ir_load_file maps its file and always borrows) */
} LoadOptions;
IrModel *ir_load_file(const char *path, const LoadOptions *opt, Diag *d);
IrModel *ir_load_bytes(const uint8_t *buf, size_t len, const char *name, const char *dir,
                       const LoadOptions *opt, Diag *d);

/* "producer_name producer_version" of a loaded model, or "(none)". */
const char *ir_model_producer(const IrModel *m, char *buf, size_t size);

typedef enum ExternalMode {
	EXT_KEEP = 0,  /* a model loaded with external data saves as EXT_ALL (its folded
	                  tensors join the others in OUT.data); else inline, unless the
	                  model would exceed 2 GB (then as EXT_ALL) */
	EXT_ALL,       /* every tensor of at least ext_threshold bytes goes external */
} ExternalMode;
typedef struct SaveOptions {
	ExternalMode external;
	size_t ext_threshold;   /* EXT_ALL: smallest tensor written externally (default 1024) */
	const char *ext_file;   /* file name (in the output's folder, no '/') of the external
	                           data file; default "<output file name>.data" */
	bool overwrite_input;   /* allow saving onto the path the model was loaded from */
	size_t inline_limit;    /* inline tensor bytes above which EXT_KEEP acts as EXT_ALL
	                           (0: 2 GB less 64 MB of headroom for the graph itself) */
	bool *wrote_data;       /* out (may be NULL): set to whether the save wrote a data file */
	size_t direct_min;      /* files of this many bytes or more are written by a thread,
	                           past the page cache (outfile.h, out_direct); 0: 64 MiB */
} SaveOptions;
bool ir_save_file(IrModel *m, const char *path, const SaveOptions *opt, Diag *d);
/* Why a save of m with opt writes its large tensors to external data (each
 * at a 4096-byte aligned offset of the one data file), or EXT_WHY_NONE. */
typedef enum ExternalWhy {
	EXT_WHY_NONE = 0,
	EXT_WHY_ASKED,  /* EXT_ALL (--external-data) */
	EXT_WHY_INPUT,  /* the model came with external data */
	EXT_WHY_SIZE,   /* inline, it would pass protobuf's 2 GB limit (opt->inline_limit) */
} ExternalWhy;
ExternalWhy ir_save_external_why(const IrModel *m, const SaveOptions *opt);
/* Bytes [data, data + len) lie in an external data file m mapped: its open
 * descriptor and their offset in it (the saver copies them file to file,
 * without reading them into memory); false otherwise. */
bool ir_mapped_range(const IrModel *m, const uint8_t *data, size_t len, int *fd, int64_t *offset);
/* The path of the external data file ir_save_file(path) writes if it writes
 * one: "OUT.data" (or opt->ext_file) in OUT's folder.  The caller frees it. */
char *ir_save_data_path(const char *path, const SaveOptions *opt);
/* Did m come with external data (a tensor still read from a data file)?  A
 * save then writes OUT.data (EXT_KEEP acts as EXT_ALL). */
bool ir_model_has_external(const IrModel *m);
/* Note the files m was read from in s (outfile.h): its path as
 * FILE_INPUT_MODEL, each external data file as FILE_INPUT_DATA. */
struct FileSet;
void ir_model_files(IrModel *m, struct FileSet *s);
/* Serialize to memory (no external data).  The caller frees *out. */
bool ir_save_bytes(IrModel *m, uint8_t **out, size_t *len, Diag *d);
/* The same with every tensor inline, those the model read from external
 * data too: the whole model in memory (refused over 2 GB). */
bool ir_save_bytes_inline(IrModel *m, uint8_t **out, size_t *len, Diag *d);
/* The ModelProto the saver writes, built in arena `a` (shallow: it points
 * into the IR and the loaded proto; free it by freeing the arena). */
Onnx__ModelProto *ir_emit(IrModel *m, Arena *a, Diag *d);

#endif
