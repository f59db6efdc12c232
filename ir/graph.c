/* graph.c - building and changing the graph IR (see ir.h).
 *
 * Ids index growable arrays of the model; an id is never reused, removed
 * objects are only marked dead, so ids held by a caller stay meaningful.
 * Per-scope name maps give name -> value lookup for loading and parsing;
 * the rewrite engine works by id and never needs names. */
#include "ir.h"
#include "ir_internal.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arena.h"

/* ---- growable arrays -------------------------------------------------- */

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	uint32_t c = *cap ? *cap : 4;
	while (c < need)
		c *= 2;
	void *q = realloc(p, (size_t)c * elem);
	if (!q)
		abort();
	memset((char *)q + (size_t)*cap * elem, 0, (size_t)(c - *cap) * elem);
	*cap = c;
	return q;
}

/* ---- name maps: open addressing, string -> id, with tombstones --------- */

/* A removed value keeps its entry until the map is next rehashed: lookups
 * see through it, and an insert of its name takes the entry over.  Removing
 * a node then never touches the map (on a big graph, a cache miss per
 * value).  Renaming deletes the old entry at once (a tombstone). */
struct NameMap {
	const IrModel *m;    /* whose values the ids are: to see removed ones */
	const char **keys;   /* NULL: empty; TOMB: deleted */
	uint32_t *vals;
	uint32_t cap, count, used;
};

static const char TOMB[1];

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;  /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static NameMap *namemap_new(const IrModel *m)
{
	NameMap *nm = calloc(1, sizeof *nm);
	if (!nm)
		abort();
	nm->m = m;
	return nm;
}

static void namemap_free(NameMap *nm)
{
	if (!nm)
		return;
	free(nm->keys);
	free(nm->vals);
	free(nm);
}

static uint32_t namemap_get(const NameMap *nm, const char *key)
{
	if (!nm || !nm->cap)
		return 0;
	uint32_t mask = nm->cap - 1;
	for (uint32_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
		const char *k = nm->keys[i];
		if (!k)
			return 0;
		if (k != TOMB && strcmp(k, key) == 0)
			return nm->m->values[nm->vals[i]].dead ? 0 : nm->vals[i];
	}
}

static void namemap_put(NameMap *nm, const char *key, uint32_t val);

static void namemap_rehash(NameMap *nm, uint32_t cap)
{
	const char **keys = nm->keys;
	uint32_t *vals = nm->vals, old = nm->cap;
	nm->keys = calloc(cap, sizeof *nm->keys);
	nm->vals = calloc(cap, sizeof *nm->vals);
	if (!nm->keys || !nm->vals)
		abort();
	nm->cap = cap;
	nm->count = nm->used = 0;
	for (uint32_t i = 0; i < old; i++)
		if (keys[i] && keys[i] != TOMB && !nm->m->values[vals[i]].dead)
			namemap_put(nm, keys[i], vals[i]);
	free(keys);
	free(vals);
}

/* Insert or overwrite.  `key` must outlive the map (it is not copied). */
static void namemap_put(NameMap *nm, const char *key, uint32_t val)
{
	if ((nm->used + 1) * 4 >= nm->cap * 3)
		namemap_rehash(nm, nm->cap ? (nm->count * 2 + 2 > nm->cap ? nm->cap * 2 : nm->cap) : 16);
	uint32_t mask = nm->cap - 1, tomb = UINT32_MAX;
	for (uint32_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
		const char *k = nm->keys[i];
		if (!k) {
			if (tomb != UINT32_MAX)
				i = tomb;
			else
				nm->used++;
			nm->keys[i] = key;
			nm->vals[i] = val;
			nm->count++;
			return;
		}
		if (k == TOMB) {
			if (tomb == UINT32_MAX)
				tomb = i;
		} else if (strcmp(k, key) == 0) {
			nm->keys[i] = key;   /* a removed value's entry, or an overwrite */
			nm->vals[i] = val;
			return;
		}
	}
}

static void namemap_del(NameMap *nm, const char *key)
{
	if (!nm->cap)
		return;
	uint32_t mask = nm->cap - 1;
	for (uint32_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
		const char *k = nm->keys[i];
		if (!k)
			return;
		if (k != TOMB && strcmp(k, key) == 0) {
			nm->keys[i] = TOMB;
			nm->count--;
			return;
		}
	}
}

/* ---- model ------------------------------------------------------------- */

IrModel *ir_model_new(void)
{
	IrModel *m = calloc(1, sizeof *m);
	if (!m)
		abort();
	m->arena = arena_new();
	m->map_fd = -1;
	/* id 0 of every table means "none" */
	m->nodes = grow(NULL, &m->capnodes, 64, sizeof *m->nodes);
	m->values = grow(NULL, &m->capvalues, 64, sizeof *m->values);
	m->graphs = grow(NULL, &m->capgraphs, 4, sizeof *m->graphs);
	m->tensors = grow(NULL, &m->captensors, 16, sizeof *m->tensors);
	m->nnodes = m->nvalues = m->ngraphs = m->ntensors = 1;
	m->ir_version = 8;
	return m;
}

void ir_model_free(IrModel *m)
{
	if (!m)
		return;
	for (uint32_t v = 1; v < m->nvalues; v++)
		free(m->values[v].uses);
	for (uint32_t g = 1; g < m->ngraphs; g++) {
		IrGraph *gr = &m->graphs[g];
		free(gr->inputs);
		free(gr->outputs);
		free(gr->output_info);
		free(gr->inits);
		free(gr->sparse_inits);
		namemap_free(gr->names);
	}
	ir_tensors_free(m);
	ir_proto_free(m);
	free(m->nodes);
	free(m->values);
	free(m->graphs);
	free(m->tensors);
	free(m->opsets);
	free(m->dir);
	arena_free(m->arena);
	free(m);
}

static bool is_default_domain(const char *d)
{
	return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

int64_t ir_opset(const IrModel *m, const char *domain)
{
	for (uint32_t i = 0; i < m->nopsets; i++) {
		const char *d = m->opsets[i].domain;
		if (is_default_domain(domain) ? is_default_domain(d) : strcmp(d, domain) == 0)
			return m->opsets[i].version;
	}
	return 0;
}

void ir_set_opset(IrModel *m, const char *domain, int64_t version)
{
	m->opsets_dirty = true;
	for (uint32_t i = 0; i < m->nopsets; i++) {
		const char *d = m->opsets[i].domain;
		if (is_default_domain(domain) ? is_default_domain(d) : strcmp(d, domain) == 0) {
			m->opsets[i].version = version;
			return;
		}
	}
	OpsetImport *o = realloc(m->opsets, (m->nopsets + 1) * sizeof *o);
	if (!o)
		abort();
	m->opsets = o;
	o[m->nopsets].domain = arena_strdup(m->arena, domain ? domain : "");
	o[m->nopsets].version = version;
	m->nopsets++;
}

void ir_drop_unused_opset(IrModel *m, const char *domain)
{
	if (is_default_domain(domain))
		return;
	for (NodeId n = 1; n < m->nnodes; n++)
		if (!m->nodes[n].dead && strcmp(m->nodes[n].domain, domain) == 0)
			return;
	for (uint32_t i = 0; i < m->nopsets; i++)
		if (strcmp(m->opsets[i].domain, domain) == 0) {
			memmove(&m->opsets[i], &m->opsets[i + 1], (m->nopsets - i - 1) * sizeof *m->opsets);
			m->nopsets--;
			m->opsets_dirty = true;
			return;
		}
}

/* ---- graphs and values ------------------------------------------------- */

GraphId ir_graph_new(IrModel *m, GraphId parent, const char *name)
{
	m->graphs = grow(m->graphs, &m->capgraphs, m->ngraphs + 1, sizeof *m->graphs);
	GraphId g = m->ngraphs++;
	IrGraph *gr = &m->graphs[g];
	memset(gr, 0, sizeof *gr);
	gr->name = arena_strdup(m->arena, name ? name : "");
	gr->parent = parent;
	gr->names = namemap_new(m);
	gr->topo_sorted = true; /* an empty list is */
	return g;
}

ValueId ir_lookup(IrModel *m, GraphId g, const char *name)
{
	for (; g; g = m->graphs[g].parent) {
		ValueId v = namemap_get(m->graphs[g].names, name);
		if (v)
			return v;
	}
	return 0;
}

/* A new value named `name` in scope g, or 0 if g already defines that name.
 * The name string must outlive the model (arena or loaded proto). */
static ValueId new_value(IrModel *m, GraphId g, const char *name)
{
	if (namemap_get(m->graphs[g].names, name))
		return 0;
	m->values = grow(m->values, &m->capvalues, m->nvalues + 1, sizeof *m->values);
	ValueId v = m->nvalues++;
	IrValue *val = &m->values[v];
	memset(val, 0, sizeof *val);
	val->name = name;
	val->graph = g;
	val->shape.rank = -1;
	namemap_put(m->graphs[g].names, name, v);
	return v;
}

/* Names handed to the IR by callers are copied; names from a loaded proto
 * are borrowed (the loader calls the _borrowed variants in onnx_load.c). */
ValueId ir_new_value_borrowed(IrModel *m, GraphId g, const char *name)
{
	return new_value(m, g, name);
}

void ir_value_type_print(const IrValue *v, FILE *f)
{
	fprintf(f, "%s", dtype_name(v->dtype));
	if (v->shape.rank < 0)
		fprintf(f, "[*]");
	for (int i = 0; i < v->shape.rank; i++) {
		const Dim *d = &v->shape.dims[i];
		if (d->size >= 0)
			fprintf(f, "%s%lld", i ? "," : "[", (long long)d->size);
		else
			fprintf(f, "%s%s", i ? "," : "[", ir_dim_label(d));
	}
	fprintf(f, "%s", v->shape.rank == 0 ? "[]" : v->shape.rank > 0 ? "]" : "");
}

void ir_value_set_type(IrModel *m, ValueId v, int dtype, const Shape *shape)
{
	IrValue *val = &m->values[v];
	val->dtype = dtype;
	if (shape && shape->rank >= 0) {
		val->shape.rank = shape->rank;
		val->shape.dims = arena_alloc(m->arena, sizeof(Dim) * (size_t)(shape->rank ? shape->rank : 1));
		for (int i = 0; i < shape->rank; i++) {
			val->shape.dims[i] = shape->dims[i];
			if (shape->dims[i].param)
				val->shape.dims[i].param = arena_strdup(m->arena, shape->dims[i].param);
		}
	} else {
		val->shape.rank = -1;
		val->shape.dims = NULL;
	}
	val->type_dirty = true;
}

ValueId ir_add_input(IrModel *m, GraphId g, const char *name, int dtype, const Shape *shape)
{
	ValueId v = new_value(m, g, arena_strdup(m->arena, name));
	if (!v)
		return 0;
	IrGraph *gr = &m->graphs[g];
	gr->inputs = grow(gr->inputs, &gr->capinputs, gr->ninputs + 1, sizeof *gr->inputs);
	gr->inputs[gr->ninputs++] = v;
	m->values[v].is_input = true;
	ir_value_set_type(m, v, dtype, shape);
	return v;
}

ValueId ir_add_initializer(IrModel *m, GraphId g, const char *name, TensorId t)
{
	/* An initializer may share its name with a graph input: then it is
	 * that input's (overridable) default, one value. */
	ValueId v = namemap_get(m->graphs[g].names, name);
	if (v && (!m->values[v].is_input || m->values[v].tensor || m->values[v].sparse))
		return 0;
	if (!v)
		v = new_value(m, g, arena_strdup(m->arena, name));
	IrGraph *gr = &m->graphs[g];
	gr->inits = grow(gr->inits, &gr->capinits, gr->ninits + 1, sizeof *gr->inits);
	gr->inits[gr->ninits++] = v;
	IrValue *val = &m->values[v];
	val->tensor = t;
	m->tensors[t].nvalues++;
	if (!val->dtype) {
		IrTensor *tt = &m->tensors[t];
		Shape s = {tt->rank, NULL};
		Dim *dims = malloc(sizeof *dims * (size_t)(tt->rank + 1));  /* any rank */
		if (!dims)
			abort();
		for (int i = 0; i < tt->rank; i++)
			dims[i] = (Dim){tt->dims[i], NULL};
		s.dims = dims;
		ir_value_set_type(m, v, tt->dtype, &s);
		free(dims);
		val = &m->values[v];
		val->type_dirty = false;
	}
	return v;
}

void ir_add_output(IrModel *m, GraphId g, ValueId v)
{
	IrGraph *gr = &m->graphs[g];
	uint32_t cap = gr->capoutputs;
	gr->outputs = grow(gr->outputs, &gr->capoutputs, gr->noutputs + 1, sizeof *gr->outputs);
	gr->output_info = grow(gr->output_info, &cap, gr->noutputs + 1, sizeof *gr->output_info);
	gr->outputs[gr->noutputs++] = v;
	m->values[v].is_output = true;
}

static bool listed_as_output(IrModel *m, ValueId v)
{
	IrGraph *gr = &m->graphs[m->values[v].graph];
	for (uint32_t i = 0; i < gr->noutputs; i++)
		if (gr->outputs[i] == v)
			return true;
	/* a body may output a value of an enclosing scope */
	for (uint32_t g = 1; g < m->ngraphs; g++) {
		if (m->graphs[g].dead || g == m->values[v].graph)
			continue;
		for (uint32_t i = 0; i < m->graphs[g].noutputs; i++)
			if (m->graphs[g].outputs[i] == v)
				return true;
	}
	return false;
}

void ir_set_output(IrModel *m, GraphId g, uint32_t i, ValueId v)
{
	IrGraph *gr = &m->graphs[g];
	ValueId old = gr->outputs[i];
	gr->outputs[i] = v;
	m->values[v].is_output = true;
	m->values[old].is_output = listed_as_output(m, old);
}

const char *ir_fresh_name(IrModel *m, const char *hint)
{
	for (;;) {
		char *name = arena_printf(m->arena, "%s__%u", hint && *hint ? hint : "v", ++m->name_counter);
		bool taken = false;
		for (uint32_t g = 1; g < m->ngraphs && !taken; g++)
			taken = namemap_get(m->graphs[g].names, name) != 0;
		if (!taken)
			return name;
	}
}

bool ir_value_rename(IrModel *m, ValueId v, const char *name)
{
	IrValue *val = &m->values[v];
	if (strcmp(val->name, name) == 0)
		return true;
	NameMap *nm = m->graphs[val->graph].names;
	if (namemap_get(nm, name))
		return false;
	namemap_del(nm, val->name);
	val->name = arena_strdup(m->arena, name);
	namemap_put(nm, val->name, v);
	return true;
}

/* ---- uses -------------------------------------------------------------- */

/* A new edge p -> n keeps the producer's graph sorted when n is the last
 * node of that same graph (appending, as builders do); otherwise the graph
 * is no longer known to be sorted. */
static void edge_added(IrModel *m, NodeId p, NodeId n)
{
	GraphId g = m->nodes[p].graph;
	if (m->graphs[g].topo_sorted && !(p != n && m->nodes[n].graph == g && m->graphs[g].last == n))
		m->graphs[g].topo_sorted = false;
}

static void add_use(IrModel *m, ValueId v, NodeId n, uint32_t slot)
{
	if (!v)
		return;
	IrValue *val = &m->values[v];
	if (val->producer)
		edge_added(m, val->producer, n);
	val->uses = grow(val->uses, &val->capuses, val->nuses + 1, sizeof *val->uses);
	val->uses[val->nuses++] = (Use){n, slot};
}

static void del_use(IrModel *m, ValueId v, NodeId n, uint32_t slot)
{
	if (!v)
		return;
	IrValue *val = &m->values[v];
	/* from the back: the newest uses go first (a node removed reads its
	 * inputs backwards), so a node reading one value a million times
	 * goes in linear time */
	for (uint32_t i = val->nuses; i-- > 0;)
		if (val->uses[i].node == n && val->uses[i].slot == slot) {
			/* keep the remaining uses in order: deterministic and readable */
			memmove(&val->uses[i], &val->uses[i + 1], (val->nuses - i - 1) * sizeof *val->uses);
			val->nuses--;
			return;
		}
	assert(!"use not found");
}

void ir_set_input(IrModel *m, NodeId n, uint32_t slot, ValueId v)
{
	IrNode *node = &m->nodes[n];
	if (slot >= node->ninputs) {
		ValueId *in = arena_alloc(m->arena, sizeof *in * (slot + 1));
		memcpy(in, node->inputs, sizeof *in * node->ninputs);
		memset(in + node->ninputs, 0, sizeof *in * (slot + 1 - node->ninputs)); /* skipped slots: omitted */
		node->inputs = in;
		node->ninputs = slot + 1;
	}
	del_use(m, node->inputs[slot], n, slot);
	node->inputs[slot] = v;
	add_use(m, v, n, slot);
}

void ir_replace_all_uses(IrModel *m, ValueId old, ValueId new_)
{
	if (old == new_)
		return;
	IrValue *o = &m->values[old];
	for (uint32_t i = 0; i < o->nuses; i++) {
		Use u = o->uses[i];
		m->nodes[u.node].inputs[u.slot] = new_;
		add_use(m, new_, u.node, u.slot);
		o = &m->values[old]; /* add_use may not move values, but stay safe */
	}
	o->nuses = 0;
}

/* ---- nodes ------------------------------------------------------------- */

static void link_before(IrModel *m, NodeId n, NodeId before)
{
	IrNode *node = &m->nodes[n];
	IrGraph *gr = &m->graphs[node->graph];
	if (!before) {
		node->prev = gr->last;
		node->next = 0;
		if (gr->last)
			m->nodes[gr->last].next = n;
		else
			gr->first = n;
		gr->last = n;
	} else {
		IrNode *b = &m->nodes[before];
		gr->topo_sorted = false; /* inserted: its inputs may come later */
		node->next = before;
		node->prev = b->prev;
		if (b->prev)
			m->nodes[b->prev].next = n;
		else
			gr->first = n;
		b->prev = n;
	}
	gr->nnodes++;
}

static void unlink_node(IrModel *m, NodeId n)
{
	IrNode *node = &m->nodes[n];
	IrGraph *gr = &m->graphs[node->graph];
	if (node->prev)
		m->nodes[node->prev].next = node->next;
	else
		gr->first = node->next;
	if (node->next)
		m->nodes[node->next].prev = node->prev;
	else
		gr->last = node->prev;
	node->prev = node->next = 0;
	gr->nnodes--;
}

/* Allocate a node without outputs; used by the loader and ir_node_new. */
NodeId ir_node_alloc(IrModel *m, GraphId g, NodeId before, const char *domain,
                     const char *op_type, const char *name, uint32_t ninputs, uint32_t noutputs)
{
	m->nodes = grow(m->nodes, &m->capnodes, m->nnodes + 1, sizeof *m->nodes);
	NodeId n = m->nnodes++;
	IrNode *node = &m->nodes[n];
	memset(node, 0, sizeof *node);
	node->op_type = op_type;
	node->domain = domain ? domain : "";
	node->name = name ? name : "";
	node->kind = is_default_domain(node->domain) ? op_kind_lookup(op_type) : OP_UNKNOWN;
	node->graph = g;
	node->orig_index = UINT32_MAX;
	node->ninputs = ninputs;
	node->inputs = arena_alloc(m->arena, sizeof(ValueId) * (ninputs ? ninputs : 1));
	node->noutputs = noutputs;
	node->outputs = arena_alloc(m->arena, sizeof(ValueId) * (noutputs ? noutputs : 1));
	link_before(m, n, before);
	return n;
}

/* Define output `slot` of n as a new value named `name` (borrowed); false if taken. */
bool ir_node_define_output(IrModel *m, NodeId n, uint32_t slot, const char *name)
{
	ValueId v = new_value(m, m->nodes[n].graph, name);
	if (!v)
		return false;
	m->values[v].producer = n;
	m->values[v].out_slot = slot;
	m->nodes[n].outputs[slot] = v;
	return true;
}

NodeId ir_node_new(IrModel *m, GraphId g, NodeId before, const char *domain,
                   const char *op_type, const char *name, const ValueId *inputs,
                   uint32_t ninputs, const char *const *output_names, uint32_t noutputs)
{
	/* check the names first, so a failure changes nothing */
	for (uint32_t i = 0; output_names && i < noutputs; i++) {
		const char *nm = output_names[i];
		if (nm && *nm && namemap_get(m->graphs[g].names, nm))
			return 0;
		for (uint32_t j = 0; nm && *nm && j < i; j++)
			if (output_names[j] && strcmp(output_names[j], nm) == 0)
				return 0;
	}
	NodeId n = ir_node_alloc(m, g, before, arena_strdup(m->arena, domain ? domain : ""),
	                         arena_strdup(m->arena, op_type), arena_strdup(m->arena, name ? name : ""),
	                         ninputs, noutputs);
	for (uint32_t i = 0; i < ninputs; i++) {
		m->nodes[n].inputs[i] = inputs[i];
		add_use(m, inputs[i], n, i);
	}
	for (uint32_t i = 0; i < noutputs; i++) {
		const char *nm = output_names ? output_names[i] : NULL;
		if (nm && !*nm)
			continue; /* omitted optional output */
		nm = nm ? arena_strdup(m->arena, nm) : ir_fresh_name(m, op_type);
		ir_node_define_output(m, n, i, nm);
	}
	return n;
}

/* The loader adds uses for inputs it resolved itself. */
void ir_node_add_use(IrModel *m, NodeId n, uint32_t slot)
{
	add_use(m, m->nodes[n].inputs[slot], n, slot);
}

static void remove_graph(IrModel *m, GraphId g);

/* A removed initializer's bytes in the mapped input file: the pages wholly
 * inside them leave the process's memory (a folded weight's original is not
 * kept beside its replacement).  Always safe: the mapping is private and
 * read-only, so a later reader (another value sharing the tensor, the
 * saver) faults the same bytes back in from the file. */
static void release_mapped(IrModel *m, TensorId t)
{
	const IrTensor *x = &m->tensors[t];
	const uint8_t *base = m->map;
	if (!base || !x->data || x->data < base || x->data >= base + m->map_len)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)x->data + page - 1) & ~(page - 1), b = ((uintptr_t)x->data + x->nbytes) & ~(page - 1);
	if (a < b)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

static void drop_value(IrModel *m, ValueId v)
{
	IrValue *val = &m->values[v];
	if (val->tensor && !val->dead) {
		IrTensor *t = &m->tensors[val->tensor];
		if (!t->nholds)
			release_mapped(m, val->tensor);
		/* A constant the IR computed (a fold's result: no proto behind it)
		 * that no live value holds any more is not kept until the model is
		 * freed: a chain of folds keeps only its last result, unless a
		 * deferred result still reads it (tensor.c).  Live node attributes
		 * never share such a tensor (only a Constant's, and the fold removes
		 * that node). */
		if (t->nvalues && --t->nvalues == 0)
			ir_tensor_let_go(m, val->tensor);
	}
	/* its name-map entry stays until a rehash (see NameMap) */
	free(val->uses);
	val->uses = NULL;
	val->nuses = val->capuses = 0;
	val->dead = true;
}

static void node_bodies(IrModel *m, NodeId n, void (*fn)(IrModel *, GraphId))
{
	IrNode *node = &m->nodes[n];
	for (uint32_t a = 0; a < node->nattrs; a++) {
		IrAttr *at = &node->attrs[a];
		if (at->type == ATTR_GRAPH && at->g)
			fn(m, at->g);
		else if (at->type == ATTR_GRAPHS)
			for (size_t i = 0; i < at->n; i++)
				fn(m, at->graphs[i]);
	}
}

static void remove_node_inner(IrModel *m, NodeId n, bool check)
{
	IrNode *node = &m->nodes[n];
	assert(!node->dead);
	node_bodies(m, n, remove_graph);
	node = &m->nodes[n];
	for (uint32_t i = node->ninputs; i-- > 0;)
		del_use(m, node->inputs[i], n, i);
	for (uint32_t i = 0; i < node->noutputs; i++) {
		ValueId v = node->outputs[i];
		if (!v)
			continue;
		assert(!check || (m->values[v].nuses == 0 && !m->values[v].is_output));
		drop_value(m, v);
	}
	unlink_node(m, n);
	node->dead = true;
}

static void remove_graph(IrModel *m, GraphId g)
{
	while (m->graphs[g].last)
		remove_node_inner(m, m->graphs[g].last, false);
	IrGraph *gr = &m->graphs[g];
	for (uint32_t i = 0; i < gr->ninputs; i++)
		drop_value(m, gr->inputs[i]);
	for (uint32_t i = 0; i < gr->ninits; i++)
		if (!m->values[gr->inits[i]].dead)
			drop_value(m, gr->inits[i]);
	for (uint32_t i = 0; i < gr->nsparse; i++)
		if (!m->values[gr->sparse_inits[i]].dead)
			drop_value(m, gr->sparse_inits[i]);
	gr->dead = true;
}

bool ir_is_constant(const IrModel *m, ValueId v)
{
	const IrValue *val = &m->values[v];
	return v && !val->dead && val->tensor && !val->producer && (!val->is_input || m->ir_version < 4);
}

bool ir_value_remove(IrModel *m, ValueId v)
{
	IrValue *val = &m->values[v];
	if (val->dead || val->producer || val->nuses || val->is_output)
		return false;
	IrGraph *gr = &m->graphs[val->graph];
	ValueId *lists[] = {gr->inputs, gr->inits, gr->sparse_inits};
	uint32_t *counts[] = {&gr->ninputs, &gr->ninits, &gr->nsparse};
	for (int l = 0; l < 3; l++)
		for (uint32_t i = 0; i < *counts[l]; i++)
			if (lists[l][i] == v) {
				memmove(&lists[l][i], &lists[l][i + 1], sizeof *lists[l] * (*counts[l] - i - 1));
				(*counts[l])--;
				break;
			}
	drop_value(m, v);
	return true;
}

void ir_node_remove(IrModel *m, NodeId n)
{
	remove_node_inner(m, n, true);
}

void ir_node_move(IrModel *m, NodeId n, NodeId before)
{
	if (n == before)
		return;
	unlink_node(m, n);
	link_before(m, n, before);
	m->graphs[m->nodes[n].graph].topo_sorted = false;
}

const char *ir_node_label(IrModel *m, NodeId n, char *buf, size_t size)
{
	IrNode *node = &m->nodes[n];
	if (node->name && *node->name)
		snprintf(buf, size, "%s", node->name);
	else if (node->orig_index != UINT32_MAX)
		snprintf(buf, size, "%s#%u", node->op_type, node->orig_index);
	else
		snprintf(buf, size, "%s#new%u", node->op_type, n);
	return buf;
}

/* ---- attributes -------------------------------------------------------- */

const IrAttr *ir_attr(const IrModel *m, NodeId n, const char *name)
{
	const IrNode *node = &m->nodes[n];
	for (uint32_t i = 0; i < node->nattrs; i++)
		if (strcmp(node->attrs[i].name, name) == 0)
			return &node->attrs[i];
	return NULL;
}

IrAttr *ir_attr_set(IrModel *m, NodeId n, const char *name, AttrType type)
{
	IrNode *node = &m->nodes[n];
	IrAttr *a = (IrAttr *)ir_attr(m, n, name);
	if (!a) {
		IrAttr *attrs = arena_alloc(m->arena, sizeof *attrs * (node->nattrs + 1));
		if (node->nattrs)
			memcpy(attrs, node->attrs, sizeof *attrs * node->nattrs);
		node->attrs = attrs;
		a = &attrs[node->nattrs++];
		a->name = arena_strdup(m->arena, name);
	} else {
		const Onnx__AttributeProto *orig = a->orig;
		const char *nm = a->name;
		memset(a, 0, sizeof *a);
		a->name = nm;
		a->orig = orig;  /* keeps doc_string etc. */
	}
	a->type = (uint8_t)type;
	return a;
}

bool ir_attr_remove(IrModel *m, NodeId n, const char *name)
{
	IrNode *node = &m->nodes[n];
	for (uint32_t i = 0; i < node->nattrs; i++)
		if (strcmp(node->attrs[i].name, name) == 0) {
			memmove(&node->attrs[i], &node->attrs[i + 1], sizeof *node->attrs * (node->nattrs - i - 1));
			node->nattrs--;
			return true;
		}
	return false;
}

void ir_attr_set_int(IrModel *m, NodeId n, const char *name, int64_t v)
{
	ir_attr_set(m, n, name, ATTR_INT)->i = v;
}

void ir_attr_set_float(IrModel *m, NodeId n, const char *name, float v)
{
	ir_attr_set(m, n, name, ATTR_FLOAT)->f = v;
}

void ir_attr_set_string(IrModel *m, NodeId n, const char *name, const void *s, size_t len)
{
	IrAttr *a = ir_attr_set(m, n, name, ATTR_STRING);
	a->s.data = arena_dup(m->arena, s, len);
	a->s.len = len;
}

void ir_attr_set_ints(IrModel *m, NodeId n, const char *name, const int64_t *v, size_t count)
{
	IrAttr *a = ir_attr_set(m, n, name, ATTR_INTS);
	a->ints = arena_dup(m->arena, v, sizeof *v * count);
	a->n = count;
}

void ir_attr_set_floats(IrModel *m, NodeId n, const char *name, const float *v, size_t count)
{
	IrAttr *a = ir_attr_set(m, n, name, ATTR_FLOATS);
	a->floats = arena_dup(m->arena, v, sizeof *v * count);
	a->n = count;
}

void ir_attr_set_strings(IrModel *m, NodeId n, const char *name, const IrBytes *v, size_t count)
{
	IrAttr *a = ir_attr_set(m, n, name, ATTR_STRINGS);
	IrBytes *s = arena_alloc(m->arena, sizeof *s * (count ? count : 1));
	for (size_t i = 0; i < count; i++) {
		s[i].data = arena_dup(m->arena, v[i].data, v[i].len);
		s[i].len = v[i].len;
	}
	a->strings = s;
	a->n = count;
}

void ir_attr_set_tensor(IrModel *m, NodeId n, const char *name, TensorId t)
{
	ir_attr_set(m, n, name, ATTR_TENSOR)->t = t;
}

void ir_attr_set_tensors(IrModel *m, NodeId n, const char *name, const TensorId *t, size_t count)
{
	IrAttr *a = ir_attr_set(m, n, name, ATTR_TENSORS);
	a->tensors = arena_dup(m->arena, t, sizeof *t * count);
	a->n = count;
}

static void adopt_body(IrModel *m, NodeId n, GraphId body)
{
	m->graphs[body].owner = n;
	m->graphs[body].parent = m->nodes[n].graph;
	/* the body's reads of outer values are now n's: any graph's order may break */
	for (GraphId g = 1; g < m->ngraphs; g++)
		m->graphs[g].topo_sorted = false;
}

void ir_attr_set_graph(IrModel *m, NodeId n, const char *name, GraphId body)
{
	ir_attr_set(m, n, name, ATTR_GRAPH)->g = body;
	adopt_body(m, n, body);
}

void ir_attr_set_graphs(IrModel *m, NodeId n, const char *name, const GraphId *bodies, size_t count)
{
	IrAttr *a = ir_attr_set(m, n, name, ATTR_GRAPHS);
	a->graphs = arena_dup(m->arena, bodies, sizeof *bodies * count);
	a->n = count;
	for (size_t i = 0; i < count; i++)
		adopt_body(m, n, bodies[i]);
}

void ir_copy_attrs(IrModel *m, NodeId to, NodeId from)
{
	for (uint32_t i = 0; i < ir_node(m, from)->nattrs; i++) {
		IrAttr a = ir_node(m, from)->attrs[i];
		IrAttr *t = ir_attr_set(m, to, a.name, (AttrType)a.type);
		const char *name = t->name;
		*t = a;
		t->name = name;
		t->orig = NULL;
	}
}

bool ir_dim_is_anon(const char *param)
{
	return param && strncmp(param, IR_ANON_DIM_PREFIX, sizeof IR_ANON_DIM_PREFIX - 1) == 0;
}

void ir_name_anonymous_dims(IrModel *m)
{
	int k = 0;
	const IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	for (uint32_t i = 0; i < g->ninputs; i++) {
		IrValue *v = ir_value(m, g->inputs[i]);
		for (int d = 0; d < v->shape.rank; d++)
			if (v->shape.dims[d].size < 0 && !v->shape.dims[d].param) {
				char name[48];
				snprintf(name, sizeof name, IR_ANON_DIM_PREFIX "%d", k++);
				v->shape.dims[d].param = arena_strdup(m->arena, name);
			}
	}
}
