/* rewrite.c - the rewrite engine: a true worklist to a fixpoint (see
 * rewrite.h and docs/engine.md).
 *
 * Cost follows the rewrites, not rounds x graph size: the worklist is seeded
 * once with every node in topological order; afterwards only what a rewrite
 * touched is revisited (the nodes it created, the consumers of the values it
 * replaced, the producers of its operands).  Nodes are removed as they die.
 * Built-in passes run first on every popped node: constant folding, then
 * common-subexpression elimination; each is reported like a rule.
 *
 * Rule sets are run only through their interface (rewrite.h): a set's
 * match functions, and for --why, --match-each and [override] its back end
 * (RwRuleSet.back_end, the interpreter's for graftc's and loaded sets).
 * The back ends sit above this file: they build through its builder API,
 * and it names none of them. */
#include "rewrite.h"
#include "dsl/ast.h"
#include "runtime/infer/infer.h"
#include "layout.h"
#include "split_slices.h"
#include "ir/arena.h"
#include "ir/ort_kernels.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_FUEL 1000000L
#define CSE_HASH_ALL 4096      /* constants up to this many bytes hash every byte; larger ones a sample */

typedef struct CseEntry {
	uint64_t hash;
	NodeId node;
} CseEntry;

struct Rewriter {
	IrModel *m;
	const RwRuleSet *const *sets;
	int nsets;
	int cur;                    /* set being matched */
	RwOptions o;
	Diag *d;
	RwResult *res;
	int64_t fold_added;         /* bytes folding has added to the model (its budget: fold.h) */
	size_t capfirings;          /* of res->firings */
	InferState *infer;
	bool imported_vendor;  /* the rewriter imported com.microsoft (dropped at the end if unused) */
	Layout *layout;             /* the layout level's Transpose pushing; NULL when off */
	bool split_slices;          /* the extended level's Slices -> Split pass is on */
	bool concat_concat;         /* the basic level's Concat-of-Concat pass is on */
	bool allow_vendor_ops_asked;    /* o.allow_vendor_ops as asked (--layout nhwc holds it back) */
	bool check_kernels;         /* every node of the input has an ORT CPU kernel: results must too */
	bool **enabled;             /* [set][rule] */
	/* the order rules are tried at a node: every set's rules by priority, higher first, a
	 * tie to the earlier set (loaded rules come before the library), as runs
	 * of one set over a band of priorities (order_passes) */
	struct RwPass { int set, lo, hi; } *passes;
	int npasses;
	int band_lo, band_hi;       /* the band of the pass being matched */
	/* worklist */
	NodeId *work;
	size_t nwork, capwork;
	uint8_t *queued;
	uint32_t capqueued;
	uint64_t rng;
	/* provenance by NodeId: the input-file nodes a node stands for */
	char ***prov;               /* indexed by NodeId - prov_base: only created nodes have one */
	int *nprov;
	uint32_t capprov;
	NodeId prov_base;           /* the first id of a node created by the run */
	/* the transaction of the rewrite being built */
	bool tx;
	int tx_rule;
	NodeId tx_root;
	NodeId *tx_matched;
	int ntx_matched;
	NodeId *tx_created;
	int ntx_created, captx_created;
	ValueId *tx_old, *tx_repl;  /* what is replaced by what: the root's outputs (0: absent), then
	                               the values rw_replace_also adds (a shared node's outputs) */
	uint32_t ntx_repl, ntx_root_outs, captx_repl;
	ValueId *tx_consts;         /* initializers made by rw_const_* (an abort removes them) */
	int ntx_consts, captx_consts;
	/* CSE table: open addressing over (hash, node) */
	CseEntry *cse;
	uint32_t capcse, ncse;
	uint64_t *thash;            /* content hash per tensor, 0 = not yet computed */
	uint32_t nthash;
	/* cycle detection: fingerprints of graph states once rewrites run long */
	uint64_t *seen;
	size_t nseen, capseen;
	const char *last_rules[8];
	int nlast;
#ifdef GRAFT_DEBUG
	bool debug_failed;          /* a debug check failed: the run stops with RW_ERROR */
	long naborts;               /* rw_abort calls, so a refused commit is not taken for a change */
#endif
	/* --why: the furthest failed condition of the rule being asked; while
	 * why_active, rw_commit only says whether it would commit, and aborts */
	bool why_active;
	int why_step;
	RwWhyKind why_kind;
	char why_detail[600];
	char why_values[600];
	char label[256];            /* rw_node_label */
};

#ifdef GRAFT_DEBUG
static void debug_validate(Rewriter *rw, const char *what);
#endif

/* ---- small helpers ---------------------------------------------------------------- */

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		abort();
	return q;
}

static char *label_of(IrModel *m, NodeId n)
{
	char buf[300];
	return strdup(ir_node_label(m, n, buf, sizeof buf));
}

/* A value's type for the audit: "float[1,N,?]", "float[*]" for an unknown rank. */
static void type_text(const IrValue *v, char *buf, size_t size)
{
	FILE *f = fmemopen(buf, size, "w");
	if (!f) {
		snprintf(buf, size, "?");
		return;
	}
	ir_value_type_print(v, f);
	fclose(f);
}

static json_t *value_names(Rewriter *rw, const ValueId *ids, uint32_t n)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < n; i++) {
		if (!ids[i]) {
			json_array_append_new(a, json_string(""));
			continue;
		}
		const IrValue *v = ir_value(rw->m, ids[i]);
		json_array_append_new(a, json_string(v->name));
		if (!json_object_get(rw->res->values, v->name)) {
			char buf[400];
			size_t k = (size_t)snprintf(buf, sizeof buf, "%s", v->tensor ? "const " : "");
			type_text(v, buf + k, sizeof buf - k);
			json_object_set_new(rw->res->values, v->name, json_string(buf));
		}
	}
	return a;
}

/* A node's label for a firing's record; NULL (not recorded) with counts_only.
 * The node's op and values go to RwResult.nodes the first time it is named. */
static char *firing_label(Rewriter *rw, NodeId n)
{
	if (rw->o.counts_only)
		return NULL;
	char *l = label_of(rw->m, n);
	RwResult *r = rw->res;
	if (!r->nodes) {
		r->nodes = json_object();
		r->values = json_object();
	}
	if (!json_object_get(r->nodes, l)) {
		const IrNode *x = ir_node(rw->m, n);
		json_t *o = json_object();
		char op[300];
		snprintf(op, sizeof op, "%s%s%s", x->domain, *x->domain ? "." : "", x->op_type);
		json_object_set_new(o, "op", json_string(op));
		json_object_set_new(o, "inputs", value_names(rw, x->inputs, x->ninputs));
		json_object_set_new(o, "outputs", value_names(rw, x->outputs, x->noutputs));
		json_object_set_new(r->nodes, l, o);
	}
	return l;
}

static void grow_node_tables(Rewriter *rw)
{
	uint32_t need = rw->m->nnodes + 1;
	if (need > rw->capqueued) {
		uint32_t cap = need * 2;
		rw->queued = xrealloc(rw->queued, cap);
		memset(rw->queued + rw->capqueued, 0, cap - rw->capqueued);
		rw->capqueued = cap;
	}
	need -= rw->prov_base;
	if (need > rw->capprov) {
		uint32_t cap = need * 2;
		rw->prov = xrealloc(rw->prov, sizeof *rw->prov * cap);
		rw->nprov = xrealloc(rw->nprov, sizeof *rw->nprov * cap);
		memset(rw->prov + rw->capprov, 0, sizeof *rw->prov * (cap - rw->capprov));
		memset(rw->nprov + rw->capprov, 0, sizeof *rw->nprov * (cap - rw->capprov));
		rw->capprov = cap;
	}
}

static void push(Rewriter *rw, NodeId n)
{
	grow_node_tables(rw);
	if (!n || rw->queued[n] || ir_node(rw->m, n)->dead)
		return;
	if (rw->nwork == rw->capwork) {
		rw->capwork = rw->capwork ? rw->capwork * 2 : 256;
		rw->work = xrealloc(rw->work, sizeof *rw->work * rw->capwork);
	}
	rw->work[rw->nwork++] = n;
	rw->queued[n] = 1;
}

/* Pop the next node: from the front (a FIFO keeps topological order for the
 * seeded nodes), or at random with --shuffle. */
static NodeId pop(Rewriter *rw, size_t *h)
{
	while (*h < rw->nwork) {
		size_t i = *h;
		if (rw->o.shuffle_seed) {
			rw->rng ^= rw->rng << 13;
			rw->rng ^= rw->rng >> 7;
			rw->rng ^= rw->rng << 17;
			size_t j = i + (size_t)(rw->rng % (rw->nwork - i));
			NodeId t = rw->work[i];
			rw->work[i] = rw->work[j];
			rw->work[j] = t;
		}
		NodeId n = rw->work[(*h)++];
		rw->queued[n] = 0;
		if (!ir_node(rw->m, n)->dead)
			return n;
	}
	return 0;
}

/* When a value changes, a rule may now match at any node whose pattern
 * reaches it: push its readers, their readers, ... down to the depth of the
 * deepest pattern (a written-out LayerNorm is 6 deep), at most 64 nodes. */
#define PATTERN_DEPTH 6
#define PUSH_LIMIT 64
static void push_consumers(Rewriter *rw, ValueId v)
{
	IrModel *m = rw->m;
	ValueId frontier[PUSH_LIMIT], next[PUSH_LIMIT];
	int nf = 1, pushed = 0;
	frontier[0] = v;
	for (int depth = 0; depth < PATTERN_DEPTH && nf && pushed < PUSH_LIMIT; depth++) {
		int nn = 0;
		for (int i = 0; i < nf && pushed < PUSH_LIMIT; i++) {
			IrValue *val = ir_value(m, frontier[i]);
			for (uint32_t u = 0; !val->dead && u < val->nuses && pushed < PUSH_LIMIT; u++) {
				NodeId c = val->uses[u].node;
				push(rw, c);
				pushed++;
				IrNode *node = ir_node(m, c);
				for (uint32_t o = 0; o < node->noutputs && nn < PUSH_LIMIT; o++)
					if (node->outputs[o])
						next[nn++] = node->outputs[o];
			}
		}
		memcpy(frontier, next, sizeof *next * (size_t)nn);
		nf = nn;
	}
}

/* ---- audit records ---------------------------------------------------------------- */

static RwFiring *new_firing(Rewriter *rw, int rule, const char *builtin)
{
	RwResult *r = rw->res;
	if (r->nfirings == rw->capfirings) {
		rw->capfirings = rw->capfirings ? rw->capfirings * 2 : 64;
		r->firings = xrealloc(r->firings, sizeof *r->firings * rw->capfirings);
	}
	RwFiring *f = &r->firings[r->nfirings++];
	memset(f, 0, sizeof *f);
	f->set = rule >= 0 ? rw->cur : -1;
	f->rule = rule;
	f->builtin = builtin;
	return f;
}

static void add_name(char ***list, int *n, char *s)
{
	if (!s)
		return; /* not recorded (counts_only) */
	*list = xrealloc(*list, sizeof **list * (size_t)(*n + 1));
	(*list)[(*n)++] = s;
}

/* Provenance of node n: itself if it came from the input file. */
static void prov_of(Rewriter *rw, NodeId n, char ***out, int *nout)
{
	if (rw->o.counts_only)
		return;
	grow_node_tables(rw);
	NodeId p = n - rw->prov_base;
	if (n >= rw->prov_base && rw->nprov[p]) {
		for (int i = 0; i < rw->nprov[p]; i++) {
			bool dup = false;
			for (int k = 0; k < *nout && !dup; k++)
				dup = strcmp((*out)[k], rw->prov[p][i]) == 0;
			if (!dup)
				add_name(out, nout, strdup(rw->prov[p][i]));
		}
	} else if (ir_node(rw->m, n)->orig_index != UINT32_MAX) {
		char *l = label_of(rw->m, n);
		bool dup = false;
		for (int k = 0; k < *nout && !dup; k++)
			dup = strcmp((*out)[k], l) == 0;
		if (dup)
			free(l);
		else
			add_name(out, nout, l);
	}
}

/* ---- removing what died ------------------------------------------------------------- */

static bool node_is_dead(IrModel *m, NodeId n)
{
	IrNode *node = ir_node(m, n);
	if (node->dead)
		return false;
	for (uint32_t i = 0; i < node->noutputs; i++) {
		ValueId v = node->outputs[i];
		if (v && (ir_value(m, v)->nuses || ir_value(m, v)->is_output))
			return false;
	}
	return true;
}

/* Remove n if nothing reads it, then its producers that die with it.
 * Removed labels go to `removed` (NULL: not recorded). */
static void remove_if_dead(Rewriter *rw, NodeId n, RwFiring *f)
{
	IrModel *m = rw->m;
	NodeId stack[256];
	int sp = 0;
	stack[sp++] = n;
	while (sp) {
		NodeId x = stack[--sp];
		if (!node_is_dead(m, x))
			continue;
		IrNode *node = ir_node(m, x);
		uint32_t nin = node->ninputs;
		ValueId *ins = malloc(sizeof *ins * (nin + 1));  /* any number of inputs */
		if (!ins)
			abort();
		memcpy(ins, node->inputs, sizeof *ins * nin);
		if (f)
			add_name(&f->removed, &f->nremoved, firing_label(rw, x));
		ir_node_remove(m, x);
		for (uint32_t i = 0; i < nin; i++) {
			if (!ins[i] || ir_value(m, ins[i])->dead)
				continue;
			NodeId p = ir_value(m, ins[i])->producer;
			if (p && sp < 256)
				stack[sp++] = p;
			else if (!p && ir_is_constant(m, ins[i]) && !ir_value(m, ins[i])->is_input &&
			         !ir_value(m, ins[i])->nuses)
				ir_value_remove(m, ins[i]); /* an initializer nothing reads any more */
			else if (p)
				push(rw, p);
			/* the input lost a reader: a pattern that wants its remaining
			 * reader to be the only one (a non-shared node) may match now */
			if (!ir_value(m, ins[i])->dead && ir_value(m, ins[i])->nuses)
				push_consumers(rw, ins[i]);
		}
		free(ins);
	}
}

/* ---- common-subexpression elimination ------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* Constants are compared by content, so Conv(x, W1) and Conv(x, W2) merge
 * when W1 and W2 hold the same bytes (light models fill weights from one
 * ConstantOfShape value).  Strings are left alone. */
static bool cse_const(IrModel *m, ValueId v)
{
	return ir_is_constant(m, v) && ir_tensor(m, ir_value(m, v)->tensor)->dtype != DT_STRING;
}

/* A tensor's content hash: every byte up to CSE_HASH_ALL, else 64 strided
 * samples of 64 bytes (equal hashes are confirmed with memcmp, so a sample
 * only costs a compare on a collision).  Tensors never change after they are
 * made, so the hash is computed once per tensor. */
static uint64_t tensor_hash(Rewriter *rw, TensorId t)
{
	IrModel *m = rw->m;
	if (t >= rw->nthash) {
		uint32_t n = m->ntensors > t ? m->ntensors : t + 1;
		rw->thash = xrealloc(rw->thash, sizeof *rw->thash * n);
		memset(rw->thash + rw->nthash, 0, sizeof *rw->thash * (n - rw->nthash));
		rw->nthash = n;
	}
	if (rw->thash[t])
		return rw->thash[t];
	IrTensor *x = ir_tensor(m, t);
	size_t n = x->nbytes;
	uint64_t h;
	if (n <= CSE_HASH_ALL) {
		const uint8_t *b = ir_tensor_raw(m, t, &n);
		h = hash_bytes(b, n);
	} else {
		/* 65 windows, read without computing a deferred tensor whole */
		_Alignas(16) uint8_t w[64];
		ir_tensor_read(m, t, n - 64, 64, w);
		h = mix(n, hash_bytes(w, 64));
		for (size_t i = 0; i < 64; i++) {
			ir_tensor_read(m, t, (n - 64) / 64 * i, 64, w);
			h = mix(h, hash_bytes(w, 64));
		}
		/* a sample maps a whole folio of a file mapped on demand (external
		 * data; up to megabytes): the pages leave memory again, or hashing
		 * every weight of such a model held half of it resident */
		ir_tensor_evict_sampled(m, t);
	}
	h = mix(mix(h, (uint64_t)x->dtype), hash_bytes(x->dims, sizeof *x->dims * (size_t)x->rank));
	return rw->thash[t] = h ? h : 1;
}

static uint64_t hash_value(Rewriter *rw, ValueId v)
{
	if (!v)
		return 0;
	if (cse_const(rw->m, v))
		return tensor_hash(rw, ir_value(rw->m, v)->tensor);
	return mix(0x5151, v);
}

/* Same value, or constants with the same dtype, dims and bytes.  Bitwise, not
 * ==: -0.0 and 0.0 give different results (1/x), and equal bits are always
 * interchangeable, NaNs included. */
static bool same_value(IrModel *m, ValueId a, ValueId b)
{
	if (a == b)
		return true;
	if (!a || !b || !cse_const(m, a) || !cse_const(m, b))
		return false;
	IrTensor *ta = ir_tensor(m, ir_value(m, a)->tensor), *tb = ir_tensor(m, ir_value(m, b)->tensor);
	if (ta->dtype != tb->dtype || ta->rank != tb->rank ||
	    (ta->rank && memcmp(ta->dims, tb->dims, sizeof *ta->dims * (size_t)ta->rank)))
		return false;
	if (ta->nbytes != tb->nbytes)
		return false;
	const IrDeferred *da = ta->data ? NULL : ta->deferred, *db = tb->data ? NULL : tb->deferred;
	if (da && db && da->fill == db->fill && da->same && da->same(m, da, db))
		return true;  /* one recipe twice (two Transposes of one weight) */
	if (ta->deferred || tb->deferred) {
		/* compared a piece at a time: neither is computed whole */
		_Alignas(16) uint8_t pa[4096], pb[4096];
		for (size_t off = 0; off < ta->nbytes; off += sizeof pa) {
			size_t k = ta->nbytes - off < sizeof pa ? ta->nbytes - off : sizeof pa;
			ir_tensor_read(m, ir_value(m, a)->tensor, off, k, pa);
			ir_tensor_read(m, ir_value(m, b)->tensor, off, k, pb);
			if (memcmp(pa, pb, k))
				return false;
		}
		return true;
	}
	size_t na, nb;
	const uint8_t *pa = ir_tensor_raw(m, ir_value(m, a)->tensor, &na), *pb = ir_tensor_raw(m, ir_value(m, b)->tensor, &nb);
	return na == nb && (na == 0 || memcmp(pa, pb, na) == 0);
}

static bool same_attr(const IrAttr *a, const IrAttr *b)
{
	if (strcmp(a->name, b->name) != 0 || a->type != b->type)
		return false;
	switch (a->type) {
	case ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
	case ATTR_INT: return a->i == b->i;
	case ATTR_STRING: return a->s.len == b->s.len && (!a->s.len || memcmp(a->s.data, b->s.data, a->s.len) == 0);
	case ATTR_FLOATS: return a->n == b->n && (!a->n || memcmp(a->floats, b->floats, sizeof *a->floats * a->n) == 0);
	case ATTR_INTS: return a->n == b->n && (!a->n || memcmp(a->ints, b->ints, sizeof *a->ints * a->n) == 0);
	case ATTR_TENSOR: return a->t == b->t;
	default: return false;  /* graphs, strings lists, ...: never merged */
	}
}

static uint64_t cse_hash(Rewriter *rw, NodeId n)
{
	IrModel *m = rw->m;
	IrNode *node = ir_node(m, n);
	uint64_t h = mix(hash_bytes(node->op_type, strlen(node->op_type)), hash_bytes(node->domain, strlen(node->domain)));
	h = mix(h, node->graph);
	for (uint32_t i = 0; i < node->ninputs; i++)
		h = mix(h, hash_value(rw, node->inputs[i]));
	h = mix(h, node->noutputs);
	for (uint32_t a = 0; a < node->nattrs; a++)
		h = mix(h, hash_bytes(node->attrs[a].name, strlen(node->attrs[a].name)));
	return h ? h : 1;
}

static bool cse_eligible(IrModel *m, NodeId n)
{
	IrNode *node = ir_node(m, n);
	const OpSchema *s = node->domain[0] ? NULL : op_schema_lookup("", node->op_type, (int)ir_opset(m, ""));
	if (s && (s->flags & OPF_RANDOM))
		return false;
	if (!s && node->domain[0])
		return false; /* other domains: side effects unknown */
	for (uint32_t a = 0; a < node->nattrs; a++)
		if (node->attrs[a].type == ATTR_GRAPH || node->attrs[a].type == ATTR_GRAPHS)
			return false;
	return node->noutputs > 0;
}

static bool cse_equal(IrModel *m, NodeId a, NodeId b)
{
	IrNode *x = ir_node(m, a), *y = ir_node(m, b);
	if (x->dead || y->dead || x->graph != y->graph || strcmp(x->op_type, y->op_type) || strcmp(x->domain, y->domain) ||
	    x->ninputs != y->ninputs || x->noutputs != y->noutputs || x->nattrs != y->nattrs)
		return false;
	for (uint32_t i = 0; i < x->ninputs; i++)
		if (!same_value(m, x->inputs[i], y->inputs[i]))
			return false;
	for (uint32_t i = 0; i < x->nattrs; i++) {
		const IrAttr *o = ir_attr(m, b, x->attrs[i].name);
		if (!o || !same_attr(&x->attrs[i], o))
			return false;
	}
	return true;
}

static void cse_insert(Rewriter *rw, uint64_t h, NodeId n)
{
	if ((rw->ncse + 1) * 2 > rw->capcse) {
		uint32_t cap = rw->capcse ? rw->capcse * 2 : 1024;
		CseEntry *old = rw->cse;
		uint32_t oldcap = rw->capcse;
		rw->cse = calloc(cap, sizeof *rw->cse);
		rw->capcse = cap;
		rw->ncse = 0;
		for (uint32_t i = 0; i < oldcap; i++)
			if (old[i].node && !ir_node(rw->m, old[i].node)->dead)
				cse_insert(rw, old[i].hash, old[i].node);
		free(old);
	}
	uint32_t mask = rw->capcse - 1;
	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask)
		if (!rw->cse[i].node || ir_node(rw->m, rw->cse[i].node)->dead) {
			if (!rw->cse[i].node)
				rw->ncse++;
			rw->cse[i] = (CseEntry){h, n};
			return;
		}
}

static bool has_graph_output(IrModel *m, NodeId n)
{
	IrNode *node = ir_node(m, n);
	for (uint32_t o = 0; o < node->noutputs; o++)
		if (node->outputs[o] && ir_value(m, node->outputs[o])->is_output)
			return true;
	return false;
}

/* Merge n into an equal node seen before (or that one into n, where only n
 * writes a graph output); true if a node was removed. */
static bool try_cse(Rewriter *rw, NodeId n)
{
	IrModel *m = rw->m;
	if (!cse_eligible(m, n))
		return false;
	/* A twin reads the same values, so an input that only n reads (and that
	 * is not a constant a twin could read a copy of) rules one out: most
	 * nodes never touch the table. */
	IrNode *nn = ir_node(m, n);
	for (uint32_t i = 0; i < nn->ninputs; i++) {
		ValueId v = nn->inputs[i];
		if (v && ir_value(m, v)->nuses < 2 && !cse_const(m, v))
			return false;
	}
	uint64_t h = cse_hash(rw, n);
	if (rw->capcse) {
		uint32_t mask = rw->capcse - 1;
		for (uint32_t i = (uint32_t)h & mask; rw->cse[i].node; i = (i + 1) & mask) {
			NodeId e = rw->cse[i].node;
			if (rw->cse[i].hash != h || e == n || !cse_equal(m, n, e))
				continue;
			/* n's outputs become e's: interface names stay with graph
			 * outputs, so where only n has one, e goes instead */
			bool swapped = has_graph_output(m, n);
			if (swapped && has_graph_output(m, e))
				return false;
			if (swapped) {
				NodeId t = n;
				n = e;
				e = t;
			}
			IrNode *node = ir_node(m, n);
			for (uint32_t o = 0; o < node->noutputs; o++)
				if (node->outputs[o] && !ir_node(m, e)->outputs[o])
					return false; /* an output the one to go has and the other not */
			rw->cse[i].node = e;
			RwFiring *f = new_firing(rw, -1, "cse");
			add_name(&f->matched, &f->nmatched, firing_label(rw, n));
			add_name(&f->matched, &f->nmatched, firing_label(rw, e));
			for (uint32_t o = 0; o < node->noutputs; o++) {
				ValueId ov = node->outputs[o], ev = ir_node(m, e)->outputs[o];
				if (!ov)
					continue;
				push_consumers(rw, ov);
				ir_replace_all_uses(m, ov, ev);
				/* ev's readers now share an input: they may have twins too */
				push_consumers(rw, ev);
			}
			remove_if_dead(rw, n, f);
			if (swapped)
				push(rw, e); /* the node popped stays: its rules are still to try */
			rw->res->rewrites++;
			return true;
		}
	}
	cse_insert(rw, h, n);
	return false;
}

/* ---- rule enablement ---------------------------------------------------------------- */

/* The engine's levels are the rule language's (dsl/ast.h: one table of names). */
_Static_assert(RW_LEVEL_BASIC == (int)LEVEL_BASIC && RW_LEVEL_EXTENDED == (int)LEVEL_EXTENDED &&
               RW_LEVEL_LAYOUT == (int)LEVEL_LAYOUT, "RwLevel and the rule language's Level differ");

static const char *level_name(RwLevel l)
{
	return dsl_level_name((Level)l);
}

/* A name matches a rule by rule name, by rule file (path or its last part,
 * with or without .rules), or by level name. */
static bool names_rule(const char *name, const RwRule *r)
{
	if (strcmp(name, r->name) == 0 || strcmp(name, level_name(r->level)) == 0)
		return true;
	if (!r->file)
		return false;
	const char *base = strrchr(r->file, '/');
	base = base ? base + 1 : r->file;
	size_t n = strlen(name);
	return strcmp(name, r->file) == 0 || strcmp(name, base) == 0 ||
	       (strncmp(name, base, n) == 0 && strcmp(base + n, ".rules") == 0);
}

bool rw_name_known(const RwRuleSet *const *sets, int nsets, const char *name)
{
	static const char *const builtin[] = {"inline-if", "push-transpose", "split-slices", "concat-concat"};
	if (dsl_level_parse(name, strlen(name)) != LEVEL_NONE)
		return true;
	for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
		if (strcmp(name, builtin[i]) == 0)
			return true;
	for (int s = 0; s < nsets; s++)
		for (int i = 0; i < sets[s]->nrules; i++)
			if (names_rule(name, &sets[s]->rules[i]))
				return true;
	return false;
}

/* Every set's enabled rules sorted by priority, higher first, a tie to the
 * earlier set, cut into runs of one set: each run is a pass that matches
 * that set with only the priorities from the run's last to its first
 * (another set's priorities cannot fall strictly inside, or the run would
 * have been cut).  With only the library, or loaded rules at priorities no
 * lower than the library's, that is one pass per set, in order. */
static int by_priority(const void *a, const void *b)
{
	const int *x = a, *y = b;
	return x[0] != y[0] ? (x[0] < y[0]) - (x[0] > y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static void order_passes(Rewriter *rw)
{
	int n = 0;
	for (int s = 0; s < rw->nsets; s++)
		n += rw->sets[s]->nrules;
	int (*all)[2] = malloc(sizeof *all * (size_t)(n + 1)), k = 0;
	if (!all)
		abort();
	for (int s = 0; s < rw->nsets; s++)
		for (int i = 0; i < rw->sets[s]->nrules; i++)
			if (rw->enabled[s][i]) {
				all[k][0] = rw->sets[s]->rules[i].priority;
				all[k++][1] = s;
			}
	qsort(all, (size_t)k, sizeof *all, by_priority);
	rw->passes = calloc((size_t)k + 1, sizeof *rw->passes);
	if (!rw->passes)
		abort();
	for (int i = 0; i < k; i++) {
		struct RwPass *last = rw->npasses ? &rw->passes[rw->npasses - 1] : NULL;
		if (last && last->set == all[i][1])
			last->lo = all[i][0];
		else
			rw->passes[rw->npasses++] = (struct RwPass){all[i][1], all[i][0], all[i][0]};
	}
	free(all);
}

/* [override]: the rule of a set other than rw->sets[s] that takes the place
 * of its rules named `name` (a loaded rule marked [override]), asked of
 * each set's back end; NULL if none. */
static const RwRule *overrider(Rewriter *rw, int s, const char *name)
{
	for (int t = 0; t < rw->nsets; t++) {
		const RwBackEnd *be = t != s ? rw->sets[t]->back_end : NULL;
		const RwRule *o = be ? be->override_rule(rw->sets[t], name) : NULL;
		if (o)
			return o;
	}
	return NULL;
}

static void compute_enabled(Rewriter *rw)
{
	int opset = (int)ir_opset(rw->m, "");
	unsigned levels = rw->o.levels ? rw->o.levels : (1u << RW_LEVEL_BASIC) | (1u << RW_LEVEL_EXTENDED) | (1u << RW_LEVEL_LAYOUT);
	rw->enabled = calloc((size_t)rw->nsets + 1, sizeof *rw->enabled);
	for (int s = 0; s < rw->nsets; s++) {
		const RwRuleSet *set = rw->sets[s];
		rw->enabled[s] = calloc((size_t)set->nrules + 1, sizeof **rw->enabled);
		for (int i = 0; i < set->nrules; i++) {
			const RwRule *r = &set->rules[i];
			bool on = (levels & (1u << r->level)) && (!r->vendor || rw->o.allow_vendor_ops) &&
			          opset >= r->opset_min && (r->opset_max == 0 || opset <= r->opset_max);
			if (rw->o.nenabled) {
				bool listed = false;
				for (int k = 0; k < rw->o.nenabled && !listed; k++)
					listed = names_rule(rw->o.enabled[k], r);
				on = on && listed;
			}
			for (int k = 0; k < rw->o.ndisabled && on; k++)
				if (names_rule(rw->o.disabled[k], r))
					on = false;
			/* a loaded [override] rule of that name takes its place */
			if (on && overrider(rw, s, r->name))
				on = false;
			rw->enabled[s][i] = on;
		}
	}
	free(rw->passes);
	rw->passes = NULL;
	rw->npasses = 0;
	order_passes(rw);
}

/* ---- cycle detection ------------------------------------------------------------------ */

/* A fingerprint of the graph's structure, independent of value ids and of
 * the names rewrites invent: each node hashes its op, attributes and its
 * inputs' fingerprints, in topological order. */
static uint64_t fingerprint(Rewriter *rw)
{
	IrModel *m = rw->m;
	uint64_t *vh = calloc(m->nvalues + 1, sizeof *vh), total = 0;
	for (GraphId g = 1; g < m->ngraphs; g++) {
		if (ir_graph(m, g)->dead)
			continue;
		uint32_t count;
		Diag quiet;
		diag_init(&quiet, NULL);
		NodeId *order = ir_topo_order(m, g, &count, &quiet);
		for (uint32_t i = 0; order && i < count; i++) {
			IrNode *node = ir_node(m, order[i]);
			uint64_t h = hash_bytes(node->op_type, strlen(node->op_type));
			for (uint32_t k = 0; k < node->ninputs; k++) {
				ValueId v = node->inputs[k];
				/* constants by content: rewrites give them fresh names */
				h = mix(h, !v ? 0 : ir_value(m, v)->producer ? vh[v] : cse_const(m, v) ? hash_value(rw, v) :
				                   hash_bytes(ir_value(m, v)->name, strlen(ir_value(m, v)->name)));
			}
			for (uint32_t a = 0; a < node->nattrs; a++)
				h = mix(h, hash_bytes(node->attrs[a].name, strlen(node->attrs[a].name)) + node->attrs[a].i);
			for (uint32_t o = 0; o < node->noutputs; o++)
				if (node->outputs[o])
					vh[node->outputs[o]] = mix(h, o);
			total += h * 0x100000001b3ull; /* order-free sum over nodes */
		}
		free(order);
	}
	free(vh);
	return total;
}

static bool seen_before(Rewriter *rw)
{
	uint64_t f = fingerprint(rw);
	for (size_t i = 0; i < rw->nseen; i++)
		if (rw->seen[i] == f)
			return true;
	if (rw->nseen == rw->capseen) {
		rw->capseen = rw->capseen ? rw->capseen * 2 : 64;
		rw->seen = xrealloc(rw->seen, sizeof *rw->seen * rw->capseen);
	}
	rw->seen[rw->nseen++] = f;
	return false;
}

/* ---- the builder API ------------------------------------------------------------------- */

IrModel *rw_model(Rewriter *rw) { return rw->m; }
bool rw_computed_dim(Rewriter *rw, ValueId v, int i, Dim *out) { return infer_computed_dim(rw->infer, v, i, out); }
const RwRuleSet *rw_current_set(Rewriter *rw) { return rw->sets[rw->cur]; }
int rw_opset(Rewriter *rw) { return (int)ir_opset(rw->m, ""); }
bool rw_enabled(Rewriter *rw, int rule)
{
	int p = rw->sets[rw->cur]->rules[rule].priority;
	return rw->enabled[rw->cur][rule] && p >= rw->band_lo && p <= rw->band_hi;
}

/* ---- --why ------------------------------------------------------------------------------ */

const char *rw_why_kind_name(RwWhyKind k)
{
	static const char *const names[] = {
		[RW_WHY_FIRES] = "would fire",
		[RW_WHY_DISABLED] = "rule disabled",
		[RW_WHY_OPSET] = "opset out of range",
		[RW_WHY_PRODUCER] = "wrong producer op",
		[RW_WHY_ATTR] = "attribute mismatch",
		[RW_WHY_NOT_CONST] = "not constant",
		[RW_WHY_VALUE] = "other constant",
		[RW_WHY_OPERANDS] = "operand count",
		[RW_WHY_SAME] = "different values",
		[RW_WHY_EXTRA_CONSUMER] = "extra consumer",
		[RW_WHY_GRAPH_OUTPUT] = "graph output",
		[RW_WHY_GUARD] = "guard false",
		[RW_WHY_UNKNOWN] = "unknown shape or dtype",
		[RW_WHY_LOOP_BODY] = "into a loop body",
		[RW_WHY_TYPE] = "result type differs",
		[RW_WHY_SCHEMA] = "result does not fit the schema",
		[RW_WHY_KERNEL] = "no ORT kernel for the result",
	};
	return (unsigned)k < sizeof names / sizeof *names && names[k] ? names[k] : "?";
}

bool rw_why_fail(Rewriter *rw, int step, RwWhyKind kind, const char *detail, ...)
{
	if (step <= rw->why_step)
		return false;
	rw->why_step = step;
	rw->why_kind = kind;
	va_list ap;
	va_start(ap, detail);
	vsnprintf(rw->why_detail, sizeof rw->why_detail, detail, ap);
	va_end(ap);
	rw->why_values[0] = 0;
	return false;
}

bool rw_why_fail_values(Rewriter *rw, int step, RwWhyKind kind, const char *detail, const char *values)
{
	if (step <= rw->why_step)
		return false;
	rw_why_fail(rw, step, kind, "%s", detail);
	snprintf(rw->why_values, sizeof rw->why_values, "%s", values);
	return false;
}

const char *rw_node_label(Rewriter *rw, NodeId n)
{
	return ir_node_label(rw->m, n, rw->label, sizeof rw->label);
}

bool rw_why_disabled(Rewriter *rw, int rule)
{
	const RwRule *r = &rw->sets[rw->cur]->rules[rule];
	int opset = (int)ir_opset(rw->m, "");
	if (opset < r->opset_min || (r->opset_max && opset > r->opset_max)) {
		char hi[32] = "";
		if (r->opset_max)
			snprintf(hi, sizeof hi, "%d", r->opset_max);
		return rw_why_fail(rw, 1, RW_WHY_OPSET, "the model has opset %d; the rule applies at opsets %d..%s",
		                   opset, r->opset_min, hi);
	}
	if (r->vendor && !rw->o.allow_vendor_ops)
		return rw_why_fail(rw, 1, RW_WHY_DISABLED, "it emits com.microsoft ops: needs --allow-vendor-ops");
	const RwRule *o = overrider(rw, rw->cur, r->name);
	if (o)
		return rw_why_fail(rw, 1, RW_WHY_DISABLED, "overridden by %s:%d", o->file, o->line);
	return rw_why_fail(rw, 1, RW_WHY_DISABLED, "its level or --enable/--disable leave it off");
}

/* Run the asked rule's program in why mode at every live node with its root
 * op, in graph order. */
static bool why_pass(Rewriter *rw)
{
	IrModel *m = rw->m;
	int set = -1, rule = -1;
	for (int s = 0; s < rw->nsets && set < 0; s++)
		for (int i = 0; i < rw->sets[s]->nrules; i++)
			if (strcmp(rw->sets[s]->rules[i].name, rw->o.why_rule) == 0) {
				set = s, rule = i;
				break;
			}
	if (set < 0) {
		diag_error(rw->d, NULL, "--why: no rule named '%s' (graft optimize --list-rules)", rw->o.why_rule);
		return false;
	}
	const RwRule *r = &rw->sets[set]->rules[rule];
	if (!r->root_op) {
		diag_error(rw->d, NULL, "--why: rule set '%s' has no root ops (regenerate it with graftc)", rw->sets[set]->name);
		return false;
	}
	/* a compiled set answers through the interpreter, from its rules text:
	 * the same rules in the same order, so the engine's state for the set
	 * (enabled rules, overrides) holds for it */
	const RwBackEnd *be = rw->sets[set]->back_end;
	if (!be && rw->sets[set]->sources) {
		diag_error(rw->d, NULL, "rule set '%s' cannot be interpreted: this program links no rules interpreter "
		           "(rw_interp.h)", rw->sets[set]->name);
		return false;
	}
	if (!be) {
		diag_error(rw->d, NULL, "rule set '%s' cannot be interpreted: it carries no rules text (regenerate it "
		           "with this graftc)", rw->sets[set]->name);
		return false;
	}
	const RwRuleSet *rs = be->twin(rw->sets[set], rw->d);
	if (!rs)
		return false;
	const RwRuleSet *const *run_sets = rw->sets;
	const RwRuleSet *sets[rw->nsets];
	memcpy(sets, run_sets, sizeof sets);
	sets[set] = rs;
	rw->sets = sets;
	rw->cur = set;
	rw->why_active = true;
	for (GraphId g = 1; g < m->ngraphs; g++) {
		if (ir_graph(m, g)->dead)
			continue;
		uint32_t count;
		NodeId *order = ir_topo_order(m, g, &count, rw->d);
		for (uint32_t i = 0; order && i < count; i++) {
			IrNode *node = ir_node(m, order[i]);
			if (strcmp(node->op_type, r->root_op) || strcmp(node->domain, r->root_domain ? r->root_domain : ""))
				continue;
			rw->why_step = -1;
			rw->why_kind = RW_WHY_FIRES;
			rw->why_detail[0] = 0;
			rw->why_values[0] = 0;
			be->rule(rw, rule, order[i], true);
			RwResult *res = rw->res;
			res->why = xrealloc(res->why, sizeof *res->why * (size_t)(res->nwhy + 1));
			res->why[res->nwhy++] = (RwWhy){label_of(m, order[i]), rw->why_kind, strdup(rw->why_detail),
			                                   strdup(rw->why_values)};
		}
		free(order);
	}
	rw->why_active = false;
	rw->sets = run_sets;
	return true;
}

ValueId rw_input(Rewriter *rw, NodeId n, uint32_t i)
{
	IrNode *node = ir_node(rw->m, n);
	return i < node->ninputs ? node->inputs[i] : 0;
}

uint32_t rw_ninputs(Rewriter *rw, NodeId n) { return ir_node(rw->m, n)->ninputs; }

NodeId rw_producer(Rewriter *rw, ValueId v)
{
	return v ? ir_value(rw->m, v)->producer : 0;
}

bool rw_single_use(Rewriter *rw, ValueId v, const NodeId *within, int nwithin)
{
	IrValue *val = ir_value(rw->m, v);
	if (val->is_output)
		return false;
	for (uint32_t u = 0; u < val->nuses; u++) {
		bool inside = false;
		for (int k = 0; k < nwithin && !inside; k++)
			inside = val->uses[u].node == within[k];
		if (!inside)
			return false;
	}
	return true;
}

bool rw_is_const(Rewriter *rw, ValueId v) { return v && ir_is_constant(rw->m, v); }
bool rw_same_value(Rewriter *rw, ValueId a, ValueId b) { return same_value(rw->m, a, b); }

bool rw_literal_equal(double elem, double lit)
{
	return elem == lit || (isnan(lit) && isnan(elem));
}

bool rw_const_equals(Rewriter *rw, ValueId v, double x, double tol)
{
	if (!rw_is_const(rw, v))
		return false;
	EvValue *t = ev_value_from_ir_tensor(rw->m, ir_value(rw->m, v)->tensor);
	bool ok = t && t->kind == EV_TENSOR && t->dtype != DT_STRING && t->numel > 0;
	/* the literal as the constant's own dtype would store it */
	EvValue *lit = ok ? ev_scalar_f(t->dtype, x) : NULL;
	double want = lit ? ev_get_f(lit, 0) : 0;
	/* an integer constant holds the literal itself or does not match: 0.5
	 * is not the int 0, nor -1 the uint8 255 */
	if (ok && !ev_is_float(t->dtype) && tol == 0 && want != x)
		ok = false;
	for (int64_t i = 0; ok && i < t->numel; i++) {
		double e = ev_get_f(t, i);
		ok = tol > 0 ? (e >= x - tol && e <= x + tol) : rw_literal_equal(e, want);
	}
	ev_unref(lit);
	ev_unref(t);
	return ok;
}

void rw_begin(Rewriter *rw, int rule, NodeId root, const NodeId *matched, int nmatched)
{
	rw->tx = true;
	rw->tx_rule = rule;
	rw->tx_root = root;
	rw->tx_matched = xrealloc(rw->tx_matched, sizeof *rw->tx_matched * (size_t)(nmatched + 1));
	memcpy(rw->tx_matched, matched, sizeof *matched * (size_t)nmatched);
	rw->ntx_matched = nmatched;
	rw->ntx_created = 0;
	rw->ntx_consts = 0;
	const IrNode *rn = ir_node(rw->m, root);
	rw->ntx_repl = rw->ntx_root_outs = rn->noutputs;
	if (rw->ntx_repl + 8 > rw->captx_repl) {
		rw->captx_repl = rw->ntx_repl + 8;
		rw->tx_old = xrealloc(rw->tx_old, sizeof *rw->tx_old * rw->captx_repl);
		rw->tx_repl = xrealloc(rw->tx_repl, sizeof *rw->tx_repl * rw->captx_repl);
	}
	memcpy(rw->tx_old, rn->outputs, sizeof *rw->tx_old * rn->noutputs);
	memset(rw->tx_repl, 0, sizeof *rw->tx_repl * rw->ntx_repl);
}

NodeId rw_node_outs(Rewriter *rw, const char *domain, const char *op, const ValueId *inputs,
                    uint32_t ninputs, uint32_t used)
{
	IrModel *m = rw->m;
	GraphId g = ir_node(m, rw->tx_root)->graph;
	uint32_t noutputs = 0;
	while (noutputs < 32 && used >> noutputs)
		noutputs++;
	/* a node has its op's required outputs (com.microsoft.EmbedLayerNormalization's
	 * mask_index, which ONNX Runtime's type inference needs), unused */
	const OpSchema *sc = op_schema_lookup(domain, op, *domain ? 1 : (int)ir_opset(m, ""));
	uint32_t required = sc && sc->min_outputs > 0 ? (uint32_t)sc->min_outputs : 1;
	if (noutputs < required)
		noutputs = required;
	const char *names[32];
	for (uint32_t i = 0; i < noutputs; i++)
		names[i] = i < required || (used >> i & 1) ? NULL : ""; /* "": an omitted optional output */
	NodeId n = ir_node_new(m, g, rw->tx_root, domain, op, "", inputs, ninputs, names, noutputs);
	if (rw->ntx_created == rw->captx_created) {
		rw->captx_created = rw->captx_created ? rw->captx_created * 2 : 8;
		rw->tx_created = xrealloc(rw->tx_created, sizeof *rw->tx_created * (size_t)rw->captx_created);
	}
	rw->tx_created[rw->ntx_created++] = n;
	grow_node_tables(rw);
	return n;
}

NodeId rw_node_in(Rewriter *rw, const char *domain, const char *op, const ValueId *inputs,
                  uint32_t ninputs, uint32_t noutputs)
{
	return rw_node_outs(rw, domain, op, inputs, ninputs, noutputs >= 32 ? UINT32_MAX : (1u << noutputs) - 1);
}

NodeId rw_node(Rewriter *rw, const char *op, const ValueId *inputs, uint32_t ninputs, uint32_t noutputs)
{
	return rw_node_in(rw, "", op, inputs, ninputs, noutputs);
}

ValueId rw_output(Rewriter *rw, NodeId n, uint32_t i) { return ir_node(rw->m, n)->outputs[i]; }

void rw_copy_attrs(Rewriter *rw, NodeId to, NodeId from) { ir_copy_attrs(rw->m, to, from); }

static ValueId tx_const(Rewriter *rw, TensorId t)
{
	GraphId g = ir_node(rw->m, rw->tx_root)->graph;
	ValueId v = ir_add_initializer(rw->m, g, ir_fresh_name(rw->m, "const"), t);
	if (rw->ntx_consts == rw->captx_consts) {
		rw->captx_consts = rw->captx_consts ? rw->captx_consts * 2 : 8;
		rw->tx_consts = xrealloc(rw->tx_consts, sizeof *rw->tx_consts * (size_t)rw->captx_consts);
	}
	rw->tx_consts[rw->ntx_consts++] = v;
	return v;
}

ValueId rw_const_scalar(Rewriter *rw, int dtype, double x)
{
	EvValue *v = ev_scalar_f(dtype, x);
	TensorId t = ir_tensor_new(rw->m, dtype, NULL, 0, v->data, v->nbytes);
	ev_unref(v);
	return tx_const(rw, t);
}

ValueId rw_const_ints(Rewriter *rw, const int64_t *v, int n)
{
	int64_t dim = n;
	return tx_const(rw, ir_tensor_new(rw->m, DT_INT64, &dim, 1, v, sizeof *v * (size_t)n));
}

void rw_replace(Rewriter *rw, uint32_t out, ValueId v)
{
	if (out < rw->ntx_root_outs)
		rw->tx_repl[out] = v;
}

void rw_replace_also(Rewriter *rw, NodeId n, uint32_t out, ValueId v)
{
	const IrNode *node = ir_node(rw->m, n);
	if (out >= node->noutputs || !node->outputs[out] || !v)
		return;
	if (rw->ntx_repl == rw->captx_repl) {
		rw->captx_repl *= 2;
		rw->tx_old = xrealloc(rw->tx_old, sizeof *rw->tx_old * rw->captx_repl);
		rw->tx_repl = xrealloc(rw->tx_repl, sizeof *rw->tx_repl * rw->captx_repl);
	}
	rw->tx_old[rw->ntx_repl] = node->outputs[out];
	rw->tx_repl[rw->ntx_repl++] = v;
}

/* Does a node the result created read old, directly or through nodes
 * outside the match (a value computed from a shared node's output)?  Then
 * replacing old by what it creates would make a cycle. */
static bool created_read(Rewriter *rw, ValueId old)
{
	IrModel *m = rw->m;
	bool *seen = calloc(m->nnodes + 1, sizeof *seen);
	NodeId *stack = malloc(sizeof *stack * (m->nnodes + 1));
	if (!seen || !stack)
		abort();
	int sp = 0;
	bool found = false;
	for (int i = 0; i < rw->ntx_created; i++) {
		seen[rw->tx_created[i]] = true;
		stack[sp++] = rw->tx_created[i];
	}
	while (sp && !found) {
		const IrNode *node = ir_node(m, stack[--sp]);
		for (uint32_t k = 0; k < node->ninputs && !found; k++) {
			ValueId v = node->inputs[k];
			if (!v)
				continue;
			found = v == old;
			NodeId p = ir_value(m, v)->producer;
			if (p && !seen[p]) {
				seen[p] = true;
				stack[sp++] = p;
			}
		}
	}
	free(seen);
	free(stack);
	return found;
}

void rw_abort(Rewriter *rw)
{
	for (int i = rw->ntx_created; i-- > 0;) {
		NodeId n = rw->tx_created[i];
		if (!ir_node(rw->m, n)->dead && node_is_dead(rw->m, n))
			ir_node_remove(rw->m, n);
	}
	for (int i = 0; i < rw->ntx_consts; i++)
		if (!ir_value(rw->m, rw->tx_consts[i])->nuses)
			ir_value_remove(rw->m, rw->tx_consts[i]);
	rw->tx = false;
#ifdef GRAFT_DEBUG
	rw->naborts++;
#endif
}

/* Why value nv cannot become graph output `old` under old's name, or NULL if
 * it can.  ONNX Runtime refuses a subgraph output that is an outer-scope
 * value; an output that is a graph input (or another output) would lose its
 * name; and an output produced by a node of its own graph suits every
 * runtime.  See docs/engine.md, "Subgraphs and the interface". */
static const char *why_not_output(IrModel *m, const IrValue *old, ValueId nv)
{
	const IrValue *nval = ir_value(m, nv);
	if (nval->graph != old->graph)
		return "it is an outer-scope value";
	if (nval->is_input)
		return "it is a graph input";
	if (nval->is_output)
		return "it is another graph output";
	if (!nval->producer)
		return "it is an initializer";
	return NULL;
}

/* A matched node outside a Loop or Scan body that holds the root, or 0.  A
 * result built in the root's graph from such a match would run every
 * iteration what ran once. */
static NodeId outside_loop_body(IrModel *m, NodeId root, const NodeId *matched, int nmatched)
{
	GraphId rg = ir_node(m, root)->graph;
	for (int i = 0; i < nmatched; i++) {
		GraphId g = ir_node(m, matched[i])->graph;
		for (GraphId s = rg; s && s != g; s = ir_graph(m, s)->parent) {
			NodeId owner = ir_graph(m, s)->owner;
			if (owner && (ir_node(m, owner)->kind == OP_Loop || ir_node(m, owner)->kind == OP_Scan))
				return matched[i];
		}
	}
	return 0;
}

/* Are two dims shown equal: the same size, or the same symbolic name? */
static bool dims_shown_equal(const Dim *a, const Dim *b)
{
	if (a->size >= 0 || b->size >= 0)
		return a->size == b->size;
	return a->param && b->param && !strcmp(a->param, b->param);
}

/* Does the result's Reshape n compute what a Reshape already in the model
 * computes?  True when another Reshape, not built by this result, reads the
 * same target value (with allowzero 0, as n) over an input whose shape is
 * n's input's, every dim shown equal (the same size or the same symbolic
 * name): a 0 in the target then copies the same dim there as here.  That
 * is a rule passing a matched Reshape's target along, the way
 * rotary_embedding_heads_ort (rules/extended/vendor.rules) splits the heads
 * after the rotation instead of before it. */
static bool reshape_as_before(Rewriter *rw, NodeId n)
{
	IrModel *m = rw->m;
	const IrValue *x = ir_value(m, ir_node(m, n)->inputs[0]), *t = ir_value(m, ir_node(m, n)->inputs[1]);
	if (x->shape.rank < 0)
		return false;
	for (uint32_t u = 0; u < t->nuses; u++) {
		NodeId o = t->uses[u].node;
		bool created = false;
		for (int i = 0; i < rw->ntx_created && !created; i++)
			created = rw->tx_created[i] == o;
		const IrAttr *az = ir_attr(m, o, "allowzero");
		if (created || t->uses[u].slot != 1 || ir_node(m, o)->kind != OP_Reshape || (az && az->i))
			continue;
		const IrValue *y = ir_value(m, ir_node(m, o)->inputs[0]);
		bool same = y->shape.rank == x->shape.rank;
		for (int i = 0; same && i < x->shape.rank; i++)
			same = dims_shown_equal(&x->shape.dims[i], &y->shape.dims[i]);
		if (same)
			return true;
	}
	return false;
}

/* Could replacing old by nv change the dtype, rank or a dim?  Then a
 * description ("float[1] by float[]"), else NULL.  A dtype or rank inference
 * could not tell on either side is taken as the same; a dim must be shown
 * equal: the same size, or the same symbolic name.  A known dim against an
 * unknown or symbolic one is a change (Where(c, x, x) with c [3] and x
 * [4,S1] is [4,3], not x: make difftest found the rules that dropped such a
 * broadcast). */
static const char *type_change(IrModel *m, InferState *is, ValueId old, ValueId nv, char *buf, size_t size)
{
	const IrValue *a = ir_value(m, old), *b = ir_value(m, nv);
	bool differ = a->dtype && b->dtype && a->dtype != b->dtype;
	if (a->shape.rank >= 0 && b->shape.rank >= 0) {
		differ |= a->shape.rank != b->shape.rank;
		for (int i = 0; !differ && i < a->shape.rank; i++) {
			const Dim *x = &a->shape.dims[i], *y = &b->shape.dims[i];
			if (x->size >= 0 || y->size >= 0)
				differ |= x->size != y->size;
			else if (!dims_shown_equal(x, y)) {
				/* a graph output's declared symbol may rename what it computes */
				Dim c;
				differ |= !y->param || !infer_computed_dim(is, old, i, &c) || !c.param || strcmp(c.param, y->param) != 0;
			}
		}
	}
	if (!differ)
		return NULL;
	size_t o = 0;
	for (int k = 0; k < 2; k++) {
		const IrValue *v = k ? b : a;
		o += (size_t)snprintf(buf + o, size - o, "%s%s", k ? " by " : "", v->dtype ? dtype_name(v->dtype) : "?");
		if (v->shape.rank < 0) {
			o += (size_t)snprintf(buf + o, size - o, "[?]");
			continue;
		}
		o += (size_t)snprintf(buf + o, size - o, "[");
		for (int i = 0; i < v->shape.rank && o < size; i++) {
			const Dim *d = &v->shape.dims[i];
			if (d->size >= 0)
				o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "", (long long)d->size);
			else
				o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "," : "",
				                      ir_dim_label(d));
		}
		o += (size_t)snprintf(buf + o, size - o, "]");
		if (o >= size)
			break;
	}
	return buf;
}

/* A shared node's value a result replaces too (rw_replace_also) takes the
 * type the old value had, which type_change showed it agrees with: a graph
 * output keeps its declared symbols (LLaMA's present_key `total`, computed
 * past + seq). */
static void refine_type(IrModel *m, ValueId nv, ValueId old)
{
	const IrValue *a = ir_value(m, old);
	if (a->shape.rank < 0)
		return;
	Dim *d = arena_alloc(m->arena, sizeof *d * (size_t)(a->shape.rank + 1));
	memcpy(d, a->shape.dims, sizeof *d * (size_t)a->shape.rank);
	IrValue *b = ir_value(m, nv);
	b->shape.rank = a->shape.rank;
	b->shape.dims = d;
	if (!b->dtype)
		b->dtype = a->dtype;
}

bool rw_commit(Rewriter *rw)
{
	IrModel *m = rw->m;
	NodeId root = rw->tx_root;
	IrNode *rn = ir_node(m, root);
	NodeId outside = rw->ntx_created ? outside_loop_body(m, root, rw->tx_matched, rw->ntx_matched) : 0;
	if (outside) {
		if (rw->why_active) {
			char *l = label_of(m, outside);
			rw_why_fail(rw, INT_MAX - 1, RW_WHY_LOOP_BODY,
			            "matched node %s is outside the loop body the root is in: the result would run every iteration",
			            l);
			free(l);
		}
		rw_abort(rw);
		return false;
	}
	/* A shared node's output the result replaces as well must not feed
	 * what the result builds. */
	for (uint32_t o = rw->ntx_root_outs; o < rw->ntx_repl; o++)
		if (created_read(rw, rw->tx_old[o])) {
			if (rw->why_active)
				rw_why_fail(rw, INT_MAX - 1, RW_WHY_EXTRA_CONSUMER,
				            "the result reads %s, which it replaces", ir_value(m, rw->tx_old[o])->name);
			rw_abort(rw);
			return false;
		}
	/* Outputs of the root that are not replaced must be unused, and a graph
	 * output keeps its name: refuse what would change the interface. */
	for (uint32_t o = 0; o < rw->ntx_repl; o++) {
		ValueId ov = rw->tx_old[o], nv = rw->tx_repl[o];
		if (!ov)
			continue;
		IrValue *old = ir_value(m, ov);
		if (!nv && (old->nuses || old->is_output)) {
			if (rw->why_active)
				rw_why_fail(rw, INT_MAX - 1, old->is_output ? RW_WHY_GRAPH_OUTPUT : RW_WHY_EXTRA_CONSUMER,
				            "output %u of the root (%s) is used, and the rule does not replace it", o, old->name);
			rw_abort(rw);
			return false;
		}
		if (nv && old->is_output && why_not_output(m, old, nv)) {
			/* The output must stay produced by a node of its own graph:
			 * read the replacement through an Identity, unless the root
			 * already is that Identity (nothing to gain). */
			if (o < rw->ntx_root_outs && rn->kind == OP_Identity && rn->ninputs == 1 && rn->inputs[0] == nv) {
				if (rw->why_active)
					rw_why_fail(rw, INT_MAX - 1, RW_WHY_GRAPH_OUTPUT,
					            "output %u of the root is the graph output %s, and its replacement %s cannot take "
					            "that name (%s)", o, old->name, ir_value(m, nv)->name, why_not_output(m, old, nv));
				rw_abort(rw);
				return false;
			}
			if (!rw->why_active) {
				NodeId id = rw_node(rw, "Identity", &nv, 1, 1);
				rw->tx_repl[o] = ir_node(m, id)->outputs[0];
				rn = ir_node(m, root); /* rw_node may move the node table */
			}
		}
	}
	/* the types of what the result creates, for the checks below */
	if (rw->infer) {
		Diag quiet;
		diag_init(&quiet, NULL);
		for (int i = 0; i < rw->ntx_created; i++)
			infer_node(rw->infer, rw->tx_created[i], &quiet);
	}
	/* Every node the result creates must fit its op's schema at the
	 * model's opset (type constraints, counts, attributes and their
	 * ranges): a runtime refuses a model that does not. */
	for (int i = 0; i < rw->ntx_created; i++) {
		char buf[300];
		NodeId n = rw->tx_created[i];
		const char *why = ir_node(m, n)->dead ? NULL : ir_node_schema_error(m, n, buf, sizeof buf);
		if (why) {
			if (rw->why_active)
				rw_why_fail(rw, INT_MAX - 1, RW_WHY_SCHEMA, "the result's %s%s%s: %s",
				            *ir_node(m, n)->domain ? ir_node(m, n)->domain : "", *ir_node(m, n)->domain ? "." : "",
				            ir_node(m, n)->op_type, why);
			rw_abort(rw);
			return false;
		}
		/* A rule's reshape(x, s) means s literally: a 0 in a target the
		 * result built would copy a dim of x instead (allowzero 0), or make
		 * a model ONNX Runtime refuses (make difftest: a 0-element constant
		 * through transpose_div_transpose); unless a Reshape of the model
		 * reads that target over an input of x's shape (reshape_as_before). */
		const IrAttr *shape_attr = ir_node(m, n)->kind == OP_Reshape ? ir_attr(m, n, "shape") : NULL;
		bool zero = false, input_form = false;
		if (!why && shape_attr) { /* Reshape-1's target (opsets 1 to 4) */
			for (size_t k = 0; k < shape_attr->n; k++)
				zero |= shape_attr->ints[k] == 0;
		} else if (!why && rw->infer && ir_node(m, n)->kind == OP_Reshape && ir_node(m, n)->ninputs >= 2 &&
		           ir_node(m, n)->inputs[1] && !(ir_attr(m, n, "allowzero") && ir_attr(m, n, "allowzero")->i)) {
			int64_t vals[IR_MAX_RANK];
			const char *syms[IR_MAX_RANK];
			int len = infer_known_ints(rw->infer, ir_node(m, n)->inputs[1], vals, syms, IR_MAX_RANK);
			for (int k = 0; k < len; k++)
				zero |= !syms[k] && vals[k] == 0;
			input_form = true;
		}
		if (zero && !(input_form && reshape_as_before(rw, n)))
			why = "its target has a 0, which copies a dim of its input";
		if (why) {
			if (rw->why_active)
				rw_why_fail(rw, INT_MAX - 1, RW_WHY_SCHEMA, "the result's Reshape: %s", why);
			rw_abort(rw);
			return false;
		}
		/* no empty dim where ONNX Runtime's kernel refuses one (and so
		 * does graft's evaluator), and, where the input loads in ONNX
		 * Runtime, a CPU kernel there (HardSwish and Clip-11 on double
		 * have none) */
		why = ir_node(m, n)->dead ? NULL : ir_new_node_empty_gap(m, n, buf, sizeof buf);
		if (!why && rw->check_kernels && !ir_node(m, n)->dead)
			why = ir_new_node_kernel_gap(m, n, buf, sizeof buf);
		if (why) {
			if (rw->why_active)
				rw_why_fail(rw, INT_MAX - 1, RW_WHY_KERNEL, "the result's %s%s%s: %s",
				            *ir_node(m, n)->domain ? ir_node(m, n)->domain : "", *ir_node(m, n)->domain ? "." : "",
				            ir_node(m, n)->op_type, why);
			rw_abort(rw);
			return false;
		}
	}
	/* A result must have the dtype and shape of what it replaces: one that
	 * broadcasts a constant's shape in, or changes the element type, would
	 * change the model's outputs (graft verify finds such rules). */
	if (rw->infer) {
		for (uint32_t o = 0; o < rw->ntx_repl; o++) {
			char buf[200];
			const char *change = rw->tx_old[o] && rw->tx_repl[o] ? type_change(m, rw->infer, rw->tx_old[o], rw->tx_repl[o], buf, sizeof buf) : NULL;
			if (change) {
				if (rw->why_active && o >= rw->ntx_root_outs)
					rw_why_fail(rw, INT_MAX - 1, RW_WHY_TYPE, "the result would replace %s, %s",
					            ir_value(m, rw->tx_old[o])->name, change);
				else if (rw->why_active)
					rw_why_fail(rw, INT_MAX - 1, RW_WHY_TYPE, "the result would replace output %u of the root, %s",
					            o, change);
				rw_abort(rw);
				return false;
			}
		}
	}
	if (rw->why_active) {
		rw_abort(rw);
		return rw_why_fail(rw, INT_MAX, RW_WHY_FIRES, "every condition holds");
	}
	const RwRule *rule = &rw->sets[rw->cur]->rules[rw->tx_rule];
	RwFiring *f = new_firing(rw, rw->tx_rule, NULL);
	for (int i = 0; i < rw->ntx_matched; i++)
		add_name(&f->matched, &f->nmatched, firing_label(rw, rw->tx_matched[i]));
	/* provenance of the created nodes: every input node the match stands for */
	char **prov = NULL;
	int nprov = 0;
	for (int i = 0; i < rw->ntx_matched; i++)
		prov_of(rw, rw->tx_matched[i], &prov, &nprov);
	if (!rw->o.counts_only) {
		f->provenance = xrealloc(NULL, sizeof *f->provenance * (size_t)(rw->ntx_created + 1));
		f->nprovenance = xrealloc(NULL, sizeof *f->nprovenance * (size_t)(rw->ntx_created + 1));
	}
	for (int i = 0; i < rw->ntx_created; i++) {
		NodeId n = rw->tx_created[i];
		/* a name that says where the node came from, kept in the saved model
		 * so the audit's names can be found there */
		if (!*ir_node(m, n)->name)
			ir_node(m, n)->name = arena_printf(m->arena, "%s/%s_%u", rule->name, ir_node(m, n)->op_type, n);
		if (rw->o.counts_only)
			continue;
		add_name(&f->created, &f->ncreated, firing_label(rw, n));  /* its name */
		f->provenance[i] = xrealloc(NULL, sizeof **f->provenance * (size_t)(nprov + 1));
		f->nprovenance[i] = nprov;
		NodeId p = n - rw->prov_base;
		rw->prov[p] = xrealloc(NULL, sizeof **rw->prov * (size_t)(nprov + 1));
		rw->nprov[p] = nprov;
		for (int k = 0; k < nprov; k++) {
			f->provenance[i][k] = strdup(prov[k]);
			rw->prov[p][k] = strdup(prov[k]);
		}
	}
	for (int k = 0; k < nprov; k++)
		free(prov[k]);
	free(prov);
	/* rewire: consumers of the root's outputs read the replacements */
	const char **keep = calloc(rw->ntx_repl + 1, sizeof *keep);  /* any number of outputs */
	if (!keep)
		abort();
	for (uint32_t o = 0; o < rw->ntx_repl; o++) {
		ValueId ov = rw->tx_old[o], nv = rw->tx_repl[o];
		keep[o] = NULL;
		if (!ov || !nv)
			continue;
		if (o >= rw->ntx_root_outs)
			refine_type(m, nv, ov);
		ir_replace_all_uses(m, ov, nv);
		push_consumers(rw, nv); /* the old readers, and nv's own, which now share it */
		if (ir_value(m, ov)->is_output) {
			for (GraphId g = 1; g < m->ngraphs; g++)
				for (uint32_t k = 0; k < ir_graph(m, g)->noutputs; k++)
					if (ir_graph(m, g)->outputs[k] == ov)
						ir_set_output(m, g, k, nv);
			keep[o] = ir_value(m, ov)->name;
		}
		NodeId p = ir_value(m, nv)->producer;
		if (p)
			push(rw, p);
	}
	/* the operands' producers may match now, or die */
	for (int i = 0; i < rw->ntx_matched; i++) {
		IrNode *mn = ir_node(m, rw->tx_matched[i]);
		for (uint32_t k = 0; !mn->dead && k < mn->ninputs; k++)
			if (mn->inputs[k] && ir_value(m, mn->inputs[k])->producer)
				push(rw, ir_value(m, mn->inputs[k])->producer);
	}
	for (int i = 0; i < rw->ntx_matched; i++)
		remove_if_dead(rw, rw->tx_matched[i], f);
	/* the interface keeps its names */
	for (uint32_t o = 0; o < rw->ntx_repl; o++)
		if (keep[o] && rw->tx_repl[o])
			ir_value_rename(m, rw->tx_repl[o], keep[o]);
	free(keep);
	for (int i = 0; i < rw->ntx_created; i++) {
		NodeId n = rw->tx_created[i];
		const char *dom = ir_node(m, n)->domain;
		if (dom[0] && strcmp(dom, "ai.onnx") && !ir_opset(m, dom)) {
			ir_set_opset(m, dom, 1); /* a vendor op: its domain is imported (version 1, the only one) */
			rw->imported_vendor = true;
		}
		if (!ir_node(m, n)->dead) {
			push(rw, n);
			if (rw->infer)
				infer_node_and_consumers(rw->infer, n, rw->d);
		}
	}
	rw->tx = false;
	rw->res->rewrites++;
	rw->last_rules[rw->nlast++ % 8] = rule->name;
	if (rw->o.trace && rw->o.trace_out)
		fprintf(rw->o.trace_out, "fired %s (%s:%d) at %s\n", rule->name, rule->file ? rule->file : "?", rule->line,
		        f->nmatched ? f->matched[0] : "?");
#ifdef GRAFT_DEBUG
	char what[300];
	snprintf(what, sizeof what, "rule '%s'", rule->name);
	debug_validate(rw, what);
#endif
	return true;
}

/* ---- debug builds (GRAFT_DEBUG): pure matching, and a valid graph after every step ---------- */

#ifdef GRAFT_DEBUG
/* The graph around a node, hashed: the node, the producers of its inputs
 * to a small depth, the consumers of its outputs; for each node its op,
 * name, attributes, inputs, outputs and dead flag, and for each of those
 * values its use count and flags.  `counts` hashes the model's node, value
 * and tensor counts, which a refused commit (rw_abort) may leave grown. */
#define FP_DEPTH 3
#define FP_LIMIT 64

static uint64_t fp_value(IrModel *m, ValueId v, uint64_t h)
{
	if (!v)
		return mix(h, 0);
	IrValue *val = ir_value(m, v);
	h = mix(h, v);
	h = mix(h, hash_bytes(val->name, strlen(val->name)));
	h = mix(h, val->nuses);
	h = mix(h, (uint64_t)val->dead | (uint64_t)val->is_output << 1 | (uint64_t)val->is_input << 2);
	h = mix(h, val->producer);
	h = mix(h, val->tensor);
	return mix(h, (uint64_t)val->dtype);
}

static uint64_t fp_node(IrModel *m, NodeId n, uint64_t h)
{
	IrNode *node = ir_node(m, n);
	h = mix(h, n);
	h = mix(h, hash_bytes(node->op_type, strlen(node->op_type)));
	h = mix(h, hash_bytes(node->domain, strlen(node->domain)));
	h = mix(h, hash_bytes(node->name, strlen(node->name)));
	h = mix(h, node->dead);
	h = mix(h, node->ninputs);
	for (uint32_t i = 0; i < node->ninputs; i++)
		h = fp_value(m, node->inputs[i], h);
	h = mix(h, node->noutputs);
	for (uint32_t o = 0; o < node->noutputs; o++)
		h = fp_value(m, node->outputs[o], h);
	h = mix(h, node->nattrs);
	for (uint32_t a = 0; a < node->nattrs; a++) {
		const IrAttr *at = &node->attrs[a];
		uint32_t fbits;
		memcpy(&fbits, &at->f, sizeof fbits);
		h = mix(h, hash_bytes(at->name, strlen(at->name)));
		h = mix(h, at->type);
		h = mix(h, fbits);
		h = mix(h, (uint64_t)at->i);
		h = mix(h, at->s.len ? hash_bytes(at->s.data, at->s.len) : 0);
		h = mix(h, at->n);
		if (at->type == ATTR_INTS && at->n)
			h = mix(h, hash_bytes(at->ints, sizeof *at->ints * at->n));
		if (at->type == ATTR_FLOATS && at->n)
			h = mix(h, hash_bytes(at->floats, sizeof *at->floats * at->n));
		h = mix(h, at->t);
		h = mix(h, at->g);
	}
	return h;
}

static bool fp_has(const NodeId *list, int n, NodeId x)
{
	for (int i = 0; i < n; i++)
		if (list[i] == x)
			return true;
	return false;
}

static void fingerprint_around(IrModel *m, NodeId n, uint64_t *local, uint64_t *counts)
{
	NodeId list[FP_LIMIT];
	int nl = 0, start = 0;
	list[nl++] = n;
	for (int depth = 0; depth < FP_DEPTH; depth++) {
		int end = nl;
		for (int i = start; i < end; i++) {
			IrNode *x = ir_node(m, list[i]);
			for (uint32_t k = 0; k < x->ninputs && nl < FP_LIMIT; k++) {
				NodeId p = x->inputs[k] ? ir_value(m, x->inputs[k])->producer : 0;
				if (p && !fp_has(list, nl, p))
					list[nl++] = p;
			}
		}
		start = end;
	}
	IrNode *node = ir_node(m, n);
	for (uint32_t o = 0; o < node->noutputs; o++) {
		IrValue *val = node->outputs[o] ? ir_value(m, node->outputs[o]) : NULL;
		for (uint32_t u = 0; val && u < val->nuses && nl < FP_LIMIT; u++)
			if (!fp_has(list, nl, val->uses[u].node))
				list[nl++] = val->uses[u].node;
	}
	IrGraph *g = ir_graph(m, node->graph);
	uint64_t h = mix(mix(g->nnodes, g->ninits), g->ninputs);
	for (int i = 0; i < nl; i++)
		h = fp_node(m, list[i], h);
	*local = h;
	*counts = mix(mix(m->nnodes, m->nvalues), m->ntensors);
}

/* Run the IR validator after a step; on a problem, stop the run. */
static void debug_validate(Rewriter *rw, const char *what)
{
	Diag q;
	diag_init(&q, NULL);
	if (rw->debug_failed || ir_validate(rw->m, &q))
		return;
	const char *msg = q.first;
	size_t plen = rw->m->path ? strlen(rw->m->path) : 0;
	if (plen && strncmp(msg, rw->m->path, plen) == 0 && strncmp(msg + plen, ": ", 2) == 0)
		msg += plen + 2;
	diag_error(rw->d, rw->m->path, "%s left an invalid graph: %s", what, msg);
	rw->debug_failed = true;
}
#define DEBUG_VALIDATE(rw, what) debug_validate(rw, what)
#else
#define DEBUG_VALIDATE(rw, what) ((void)0)
#endif


/* ---- If with a constant condition (A13) --------------------------------------------------- */

/* The value body value v stands for in the enclosing graph: its copy, or v itself
 * when the body reads it from an outer scope. */
static ValueId inl_map(const ValueId *map, uint32_t nmap, ValueId v)
{
	return v < nmap && map[v] ? map[v] : v;
}

/* An If whose condition is a constant: the taken branch's nodes are copied in
 * front of it (bodies nested in them move along), its initializers become the
 * graph's, and the If's outputs are read from the branch's outputs.  A graph
 * output keeps its name through an Identity (also where the branch returns an
 * outer value, which a subgraph must not return directly); the identity rule
 * removes the Identity where the interface allows. */
static bool try_inline_if(Rewriter *rw, NodeId n)
{
	IrModel *m = rw->m;
	IrNode *node = ir_node(m, n);
	if (strcmp(node->op_type, "If") || node->domain[0] || node->ninputs != 1 || !ir_is_constant(m, node->inputs[0]))
		return false;
	IrTensor *t = ir_tensor(m, ir_value(m, node->inputs[0])->tensor);
	size_t nb;
	const uint8_t *bytes = ir_tensor_bytes(m, ir_value(m, node->inputs[0])->tensor, &nb);
	if (t->dtype != DT_BOOL || t->numel != 1 || !bytes || nb != 1)
		return false;
	const IrAttr *a = ir_attr(m, n, bytes[0] ? "then_branch" : "else_branch");
	if (!a || a->type != ATTR_GRAPH)
		return false;
	GraphId b = a->g, g = node->graph;
	IrGraph *bg = ir_graph(m, b);
	if (bg->ninputs || bg->nsparse || bg->noutputs != node->noutputs)
		return false;
	Diag quiet;
	diag_init(&quiet, NULL);
	uint32_t count;
	NodeId *order = ir_topo_order(m, b, &count, &quiet);
	if (!order)
		return false;
	uint32_t nmap = m->nvalues;
	ValueId *map = xrealloc(NULL, sizeof *map * nmap);
	memset(map, 0, sizeof *map * nmap);
	RwFiring *f = new_firing(rw, -1, "inline-if");
	add_name(&f->matched, &f->nmatched, firing_label(rw, n));
	for (uint32_t i = 0; i < bg->ninits; i++) {
		ValueId v = ir_graph(m, b)->inits[i];
		map[v] = ir_add_initializer(m, g, ir_fresh_name(m, ir_value(m, v)->name), ir_value(m, v)->tensor);
		/* readers in bodies nested in the branch move along with their nodes
		 * and keep reading by id: they must read the copy, or removing the If
		 * (and the branch with its initializers) leaves them a dead value */
		ir_replace_all_uses(m, v, map[v]);
	}
	for (uint32_t k = 0; k < count; k++) {
		NodeId bn = order[k];
		IrNode *src = ir_node(m, bn);
		uint32_t nin = src->ninputs, nout = src->noutputs;
		ValueId *ins = malloc(sizeof *ins * (nin + 1));           /* any number of */
		const char **names = malloc(sizeof *names * (nout + 1));  /* inputs and outputs */
		if (!ins || !names)
			abort();
		for (uint32_t i = 0; i < nin; i++)
			ins[i] = src->inputs[i] ? inl_map(map, nmap, src->inputs[i]) : 0;
		for (uint32_t i = 0; i < nout; i++)
			names[i] = src->outputs[i] ? ir_fresh_name(m, ir_value(m, src->outputs[i])->name) : "";
		NodeId c = ir_node_new(m, g, n, src->domain, src->op_type, src->name, ins, nin, names, nout);
		free(ins);
		free(names);
		src = ir_node(m, bn);
		rw_copy_attrs(rw, c, bn);
		/* the bodies move to c (which adopts them): the branch must not take them along */
		for (uint32_t i = ir_node(m, bn)->nattrs; i-- > 0;) {
			IrAttr at = ir_node(m, bn)->attrs[i];
			if (at.type == ATTR_GRAPH)
				ir_attr_set_graph(m, c, at.name, at.g);
			else if (at.type == ATTR_GRAPHS)
				ir_attr_set_graphs(m, c, at.name, at.graphs, at.n);
			else
				continue;
			ir_attr_remove(m, bn, at.name);
		}
		for (uint32_t i = 0; i < nout; i++) {
			ValueId old = ir_node(m, bn)->outputs[i], nv = ir_node(m, c)->outputs[i];
			if (!old)
				continue;
			map[old] = nv;
			ir_value_set_type(m, nv, ir_value(m, old)->dtype, &ir_value(m, old)->shape);
			ir_replace_all_uses(m, old, nv); /* readers in the moved bodies */
		}
		add_name(&f->created, &f->ncreated, firing_label(rw, c));
		infer_node(rw->infer, c, &quiet);
		push(rw, c);
	}
	free(order);
	uint32_t nout = ir_node(m, n)->noutputs;
	ValueId *renamed = calloc(nout + 1, sizeof *renamed);           /* any number */
	const char **names = calloc(nout + 1, sizeof *names);           /* of outputs */
	if (!renamed || !names)
		abort();
	for (uint32_t i = 0; i < nout; i++) {
		ValueId out = ir_node(m, n)->outputs[i];
		renamed[i] = 0;
		if (!out)
			continue;
		ValueId src = inl_map(map, nmap, ir_graph(m, b)->outputs[i]);
		if (ir_value(m, out)->is_output) {
			ValueId in[1] = {src};
			NodeId id = ir_node_new(m, g, n, "", "Identity", NULL, in, 1, NULL, 1);
			ValueId idv = ir_node(m, id)->outputs[0];
			ir_value_set_type(m, idv, ir_value(m, out)->dtype, &ir_value(m, out)->shape);
			IrGraph *gg = ir_graph(m, g);
			for (uint32_t j = 0; j < gg->noutputs; j++)
				if (gg->outputs[j] == out)
					ir_set_output(m, g, j, idv);
			add_name(&f->created, &f->ncreated, firing_label(rw, id));
			push(rw, id);
			renamed[i] = idv;
			names[i] = ir_value(m, out)->name;
			src = idv;
		}
		ir_replace_all_uses(m, out, src);
		push_consumers(rw, src);
	}
	free(map);
	add_name(&f->removed, &f->nremoved, firing_label(rw, n));
	ValueId cond = ir_node(m, n)->inputs[0];
	ir_node_remove(m, n);
	if (!ir_value(m, cond)->nuses && !ir_value(m, cond)->is_input)
		ir_value_remove(m, cond);
	/* the graph outputs keep their names */
	for (uint32_t i = 0; i < nout; i++)
		if (renamed[i])
			ir_value_rename(m, renamed[i], names[i]);
	free(renamed);
	free(names);
	rw->res->rewrites++;
	return true;
}

/* ---- the layout level: pushing Transposes (layout.c) ------------------------------------- */

static bool try_push_transpose(Rewriter *rw, NodeId n)
{
	IrModel *m = rw->m;
	if (!rw->layout || ir_node(m, n)->kind != OP_Transpose)
		return false;
	LayoutChange c;
	if (!layout_push_transpose(rw->layout, m, n, &c))
		return false;
	RwFiring *f = new_firing(rw, -1, "push-transpose");
	f->matched = c.matched;
	f->nmatched = c.nmatched;
	f->removed = c.removed;
	f->nremoved = c.nremoved;
	c.matched = c.removed = NULL;
	c.nmatched = c.nremoved = 0;
	Diag quiet;
	diag_init(&quiet, NULL);
	for (int i = 0; i < c.ncreated; i++) {
		NodeId k = c.created[i];
		add_name(&f->created, &f->ncreated, firing_label(rw, k));
		infer_node(rw->infer, k, &quiet);
		push(rw, k);
	}
	for (int i = 0; i < c.ncreated; i++)
		for (uint32_t o = 0; o < ir_node(m, c.created[i])->noutputs; o++)
			if (ir_node(m, c.created[i])->outputs[o])
				push_consumers(rw, ir_node(m, c.created[i])->outputs[o]);
	layout_change_free(&c);
	rw->res->rewrites++;
	return true;
}

/* ---- Slices that tile a value -> one Split (split_slices.c, B21) ----------------------------- */

static bool try_split_slices(Rewriter *rw, NodeId n)
{
	IrModel *m = rw->m;
	if (!rw->split_slices || ir_node(m, n)->kind != OP_Slice)
		return false;
	SplitPlan p;
	if (!split_slices_find(m, n, &p))
		return false;
	int k = p.npieces;
	int64_t nk = k;
	int64_t *sizes = malloc(sizeof *sizes * ((size_t)k + 1));  /* any number of pieces */
	const char **names = malloc(sizeof *names * ((size_t)k + 1));
	const char **keep = malloc(sizeof *keep * ((size_t)k + 1));
	if (!sizes || !names || !keep)
		abort();
	for (int i = 0; i < k; i++) {
		sizes[i] = p.pieces[i].end - p.pieces[i].start;
		names[i] = ir_fresh_name(m, ir_value(m, ir_node(m, p.pieces[i].slice)->outputs[0])->name);
	}
	GraphId g = ir_node(m, n)->graph;
	bool split_input = ir_opset(m, "") >= 13; /* Split-13 takes the sizes as an input */
	ValueId ins[2] = {p.x, 0};
	if (split_input)
		ins[1] = ir_add_initializer(m, g, ir_fresh_name(m, "split_sizes"),
		                            ir_tensor_new(m, DT_INT64, &nk, 1, sizes, sizeof *sizes * (size_t)k));
	NodeId c = ir_node_new(m, g, n, "", "Split", NULL, ins, split_input ? 2 : 1, names, (uint32_t)k);
	ir_attr_set_int(m, c, "axis", p.axis);
	if (!split_input)
		ir_attr_set_ints(m, c, "split", sizes, (size_t)k);
	RwFiring *f = new_firing(rw, -1, "split-slices");
	for (int i = 0; i < k; i++)
		add_name(&f->matched, &f->nmatched, firing_label(rw, p.pieces[i].slice));
	add_name(&f->created, &f->ncreated, firing_label(rw, c));
	/* a piece that is a graph output: the Split's output takes its place and its name */
	IrGraph *gr = ir_graph(m, g);
	for (int i = 0; i < k; i++) {
		ValueId old = ir_node(m, p.pieces[i].slice)->outputs[0], nv = ir_node(m, c)->outputs[i];
		ir_value_set_type(m, nv, ir_value(m, old)->dtype, &ir_value(m, old)->shape);
		ir_replace_all_uses(m, old, nv);
		keep[i] = ir_value(m, old)->is_output ? ir_value(m, old)->name : NULL;
		for (uint32_t j = 0; keep[i] && j < gr->noutputs; j++)
			if (gr->outputs[j] == old)
				ir_set_output(m, g, j, nv);
	}
	for (int i = 0; i < k; i++)
		remove_if_dead(rw, p.pieces[i].slice, f);
	for (int i = 0; i < k; i++)
		if (keep[i])
			ir_value_rename(m, ir_node(m, c)->outputs[i], keep[i]);
	Diag quiet;
	diag_init(&quiet, NULL);
	infer_node(rw->infer, c, &quiet);
	push(rw, c);
	for (int i = 0; i < k; i++)
		push_consumers(rw, ir_node(m, c)->outputs[i]);
	free(sizes);
	free(names);
	free(keep);
	split_plan_free(&p);
	rw->res->rewrites++;
	return true;
}

/* ---- --layout nhwc: channels-last forms at the fixpoint (nhwc.c) ------------------------- */

/* ---- a Concat of Concats on its axis -> one Concat (CATALOGUE.md D54) ---------------------- */

/* Concat's axis counted from 0 (rank: the output's; -1 unknown); false if
 * the node sets none (Concat-1's default of 1 is left alone). */
static bool concat_axis(IrModel *m, NodeId n, int64_t *axis)
{
	const IrAttr *a = ir_attr(m, n, "axis");
	if (!a || a->type != ATTR_INT)
		return false;
	*axis = a->i;
	int rank = ir_value(m, ir_node(m, n)->outputs[0])->shape.rank;
	if (*axis < 0 && rank > 0)
		*axis += rank;
	return true;
}

/* Input v of Concat n is a Concat on the same axis, in n's graph, read by
 * nothing but n (not a graph output, not an outer value of a body): its
 * inputs can take its place. */
static bool inner_concat(IrModel *m, NodeId n, ValueId v, int64_t axis)
{
	if (!v)
		return false;
	NodeId p = ir_value(m, v)->producer;
	IrNode *pn = p ? ir_node(m, p) : NULL;
	int64_t pa;
	if (!pn || pn->dead || pn->kind != OP_Concat || pn->domain[0] || pn->noutputs != 1 ||
	    pn->graph != ir_node(m, n)->graph || !concat_axis(m, p, &pa) || pa != axis || axis < 0)
		return false;
	IrValue *val = ir_value(m, v);
	if (val->is_output)
		return false;
	for (uint32_t u = 0; u < val->nuses; u++)
		if (val->uses[u].node != n)
			return false;
	return true;
}

/* v is known to have no elements along the axis: Concat can drop it. */
static bool empty_on_axis(IrModel *m, ValueId v, int64_t axis)
{
	const Shape *sh = v ? &ir_value(m, v)->shape : NULL;
	return sh && sh->rank > axis && sh->dims[axis].size == 0;
}

/* The pass (onnxoptimizer's fuse_consecutive_concats): every input of n that
 * is a Concat on n's axis, read only by n, is replaced by its inputs, in
 * place, and inputs known to be empty along the axis go (OnnxSlim's
 * concat_empty_input_elimination; all of them stay where all are); a new
 * Concat takes n's place.  Exact: the same elements in the
 * same order.  A rule cannot say it: its result would splice a list of
 * inputs into another at any position. */
static bool try_concat_concat(Rewriter *rw, NodeId n)
{
	IrModel *m = rw->m;
	IrNode *node = ir_node(m, n);
	int64_t axis;
	if (!rw->concat_concat || node->kind != OP_Concat || node->domain[0] || node->noutputs != 1 ||
	    !node->outputs[0] || !concat_axis(m, n, &axis) || axis < 0)
		return false;
	uint32_t total = 0, nempty = 0;
	bool any = false;
	for (uint32_t i = 0; i < node->ninputs; i++)
		if (inner_concat(m, n, node->inputs[i], axis)) {
			IrNode *p = ir_node(m, ir_value(m, node->inputs[i])->producer);
			total += p->ninputs;
			for (uint32_t j = 0; j < p->ninputs; j++)
				nempty += empty_on_axis(m, p->inputs[j], axis);
			any = true;
		} else {
			total++;
			nempty += empty_on_axis(m, node->inputs[i], axis);
		}
	if (nempty == total)
		nempty = 0; /* all empty: they stay (one would do, but rarely matters) */
	if (!any && !nempty)
		return false;
	ValueId *ins = malloc(sizeof *ins * ((size_t)total + 1));  /* any number of inputs */
	NodeId *inner = malloc(sizeof *inner * ((size_t)node->ninputs + 1));
	if (!ins || !inner)
		abort();
	uint32_t k = 0;
	int ninner = 0;
	for (uint32_t i = 0; i < node->ninputs; i++) {
		ValueId v = node->inputs[i];
		if (inner_concat(m, n, v, axis)) {
			NodeId p = ir_value(m, v)->producer;
			inner[ninner++] = p;
			for (uint32_t j = 0; j < ir_node(m, p)->ninputs; j++)
				if (!nempty || !empty_on_axis(m, ir_node(m, p)->inputs[j], axis))
					ins[k++] = ir_node(m, p)->inputs[j];
		} else if (!nempty || !empty_on_axis(m, v, axis)) {
			ins[k++] = v;
		}
	}
	GraphId g = node->graph;
	ValueId old = node->outputs[0];
	const char *name = ir_fresh_name(m, ir_value(m, old)->name);
	NodeId c = ir_node_new(m, g, n, "", "Concat", NULL, ins, k, &name, 1);
	ir_copy_attrs(m, c, n);
	ValueId nv = ir_node(m, c)->outputs[0];
	ir_value_set_type(m, nv, ir_value(m, old)->dtype, &ir_value(m, old)->shape);
	RwFiring *f = new_firing(rw, -1, "concat-concat");
	add_name(&f->matched, &f->nmatched, firing_label(rw, n));
	for (int i = 0; i < ninner; i++)
		add_name(&f->matched, &f->nmatched, firing_label(rw, inner[i]));
	add_name(&f->created, &f->ncreated, firing_label(rw, c));
	/* a graph output keeps its name: the new Concat's output takes it */
	ir_replace_all_uses(m, old, nv);
	const char *keep = ir_value(m, old)->is_output ? ir_value(m, old)->name : NULL;
	IrGraph *gr = ir_graph(m, g);
	for (uint32_t j = 0; keep && j < gr->noutputs; j++)
		if (gr->outputs[j] == old)
			ir_set_output(m, g, j, nv);
	remove_if_dead(rw, n, f);
	if (keep)
		ir_value_rename(m, nv, keep);
	Diag quiet;
	diag_init(&quiet, NULL);
	infer_node(rw->infer, c, &quiet);
	push(rw, c);
	push_consumers(rw, nv);
	free(ins);
	free(inner);
	rw->res->rewrites++;
	return true;
}

static void compute_enabled(Rewriter *rw);
static void seed(Rewriter *rw);

/* Once the worklist empties, the first time: every node with a channels-last
 * form takes it (one `layout-nhwc` firing each, --max-rewrites counting
 * them), the vendor rules held back so far are switched on (a FusedConv
 * would hide its Conv), and every node is queued again; push-transpose then
 * cancels the Transposes that meet.  Returns the next node to visit, or 0
 * when there is nothing more to do. */
static NodeId to_nhwc(Rewriter *rw, size_t *h, bool *pending)
{
	IrModel *m = rw->m;
	if (!*pending)
		return 0;
	*pending = false;
	uint32_t count = 0;
	NodeId *order = ir_topo_order(m, IR_MAIN_GRAPH, &count, rw->d);
	Diag quiet;
	diag_init(&quiet, NULL);
	for (uint32_t i = 0; order && i < count; i++) {
		LayoutChange c;
		if ((rw->o.max_rewrites || rw->o.limit_rewrites) && rw->res->rewrites >= rw->o.max_rewrites)
			break;
		if (ir_node(m, order[i])->dead || !layout_nhwc_node(m, order[i], &c))
			continue;
		RwFiring *f = new_firing(rw, -1, "layout-nhwc");
		f->removed = c.removed;
		f->nremoved = c.nremoved;
		for (int k = 0; k < c.ncreated; k++) {
			add_name(&f->created, &f->ncreated, firing_label(rw, c.created[k]));
			infer_node(rw->infer, c.created[k], &quiet);
		}
		NodeId t = c.created[c.ncreated - 1], moved[64];
		int nmoved = layout_nhwc_sink(m, t, moved, 64, &c);
		for (int k = 0; k < nmoved; k++)
			infer_node(rw->infer, moved[k], &quiet);
		if (nmoved)
			infer_node(rw->infer, t, &quiet);
		f->matched = c.matched;
		f->nmatched = c.nmatched;
		c.matched = c.removed = NULL;
		c.nmatched = c.nremoved = 0;
		layout_change_free(&c);
		rw->res->rewrites++;
		DEBUG_VALIDATE(rw, "layout-nhwc");
	}
	free(order);
	if (rw->o.allow_vendor_ops != rw->allow_vendor_ops_asked) {
		rw->o.allow_vendor_ops = rw->allow_vendor_ops_asked;
		for (int s = 0; s < rw->nsets; s++)
			free(rw->enabled[s]);
		free(rw->enabled);
		compute_enabled(rw);
	}
	seed(rw);
	return pop(rw, h);
}

/* Is a built-in pass of level `level` on: its level chosen, and the pass not
 * disabled (by its name or its level's), nor left out by --enable? */
static bool pass_enabled(const RwOptions *o, RwLevel level, const char *name)
{
	if (o->levels && !(o->levels & (1u << level)))
		return false;
	bool named = !o->nenabled;
	for (int k = 0; k < o->nenabled; k++)
		named |= !strcmp(o->enabled[k], name) || !strcmp(o->enabled[k], level_name(level));
	for (int k = 0; k < o->ndisabled; k++)
		if (!strcmp(o->disabled[k], name) || !strcmp(o->disabled[k], level_name(level)))
			return false;
	return named;
}

/* ---- the driver ------------------------------------------------------------------------- */

static uint32_t count_nodes(IrModel *m)
{
	uint32_t n = 0;
	for (GraphId g = 1; g < m->ngraphs; g++)
		n += ir_graph(m, g)->dead ? 0 : ir_graph(m, g)->nnodes;
	return n;
}

static bool try_fold(Rewriter *rw, NodeId n)
{
	IrModel *m = rw->m;
	IrNode *node = ir_node(m, n);
	uint32_t nout = node->noutputs, nin = node->ninputs;
	/* what fold_node removes, kept: on the heap, for any number of inputs and outputs */
	const char **names = malloc(sizeof *names * (nout + 1));
	ValueId *ins = malloc(sizeof *ins * (nin + 1));
	if (!names || !ins)
		abort();
	memcpy(ins, node->inputs, sizeof *ins * nin);
	for (uint32_t i = 0; i < nout; i++)
		names[i] = node->outputs[i] ? ir_value(m, node->outputs[i])->name : NULL;
	char *label = firing_label(rw, n);
	GraphId g = node->graph;
	FoldStats st = {0};
	bool done = fold_node(m, n, &rw->o.fold, &st, rw->d);
	if (!done) {
		free(label);
		rw->res->fold_over_budget += st.over_budget;
		if (st.reshapes) { /* the node stayed, with a constant shape: its old chain may be dead */
			RwFiring *f = new_firing(rw, -1, "fold");
			add_name(&f->matched, &f->nmatched, firing_label(rw, n));
			for (uint32_t i = 0; i < nin; i++)
				if (ins[i] && ir_value(m, ins[i])->producer)
					remove_if_dead(rw, ir_value(m, ins[i])->producer, f);
			rw->res->rewrites++;
			push(rw, n); /* its shape is a constant now: rules may match it */
			done = true;
		}
		free(names);
		free(ins);
		return done;
	}
	RwFiring *f = new_firing(rw, -1, "fold");
	add_name(&f->matched, &f->nmatched, label);
	add_name(&f->removed, &f->nremoved, label ? strdup(label) : NULL);
	for (uint32_t i = 0; i < nout; i++) {
		ValueId v = names[i] ? ir_lookup(m, g, names[i]) : 0;
		if (v)
			push_consumers(rw, v);
	}
	for (uint32_t i = 0; i < nin; i++) {
		if (!ins[i] || ir_value(m, ins[i])->dead)
			continue;
		if (ir_value(m, ins[i])->producer)
			remove_if_dead(rw, ir_value(m, ins[i])->producer, f);
		else if (ir_is_constant(m, ins[i]) && !ir_value(m, ins[i])->is_input && !ir_value(m, ins[i])->nuses)
			ir_value_remove(m, ins[i]);
	}
	free(names);
	free(ins);
	rw->res->rewrites++;
	return true;
}

/* Seed the worklist with every node, graph by graph in topological order,
 * and remove the nodes that are dead from the start (one "dce" firing), in
 * the same pass: on a big graph each pass over the nodes costs a cache miss
 * per node. */
static void seed(Rewriter *rw)
{
	IrModel *m = rw->m;
	RwFiring *f = NULL;
	for (GraphId g = 1; g < m->ngraphs; g++) {
		if (ir_graph(m, g)->dead)
			continue;
		uint32_t count;
		NodeId *order = ir_topo_order(m, g, &count, rw->d);
		for (uint32_t i = 0; order && i < count; i++) {
			NodeId n = order[i];
			if (ir_node(m, n)->dead)
				continue; /* removed with a dead consumer, or with its graph's owner */
			if (!rw->o.no_dce && node_is_dead(m, n)) {
				if (!f)
					f = new_firing(rw, -1, "dce");
				remove_if_dead(rw, n, f);
			} else {
				push(rw, n);
			}
		}
		free(order);
	}
	/* initializers no node reads (in any graph: a body's read of an outer
	 * value is a use) and no graph lists as output; graph inputs are the
	 * interface and stay, overridable initializers with them.  Below IR
	 * version 4 every initializer had to be listed as an input of the main
	 * graph without being one (ONNX Runtime does not list it among the
	 * session's inputs): such an entry goes with its initializer. */
	for (ValueId v = 1; !rw->o.no_dce && v < m->nvalues; v++) {
		IrValue *val = ir_value(m, v);
		bool ir3_listed = val->is_input && m->ir_version < 4 && val->graph == IR_MAIN_GRAPH;
		if (val->dead || (val->is_input && !ir3_listed) || !(val->tensor || val->sparse) ||
		    ir_graph(m, val->graph)->dead)
			continue;
		if (!val->nuses && !val->is_output && !val->producer) {
			if (!f)
				f = new_firing(rw, -1, "dce");
			ir_value_remove(m, v);
		}
	}
	if (f) {
		rw->res->rewrites++;
		DEBUG_VALIDATE(rw, "dce");
	}
}

/* When rewrites make two outputs of a graph one value, the first to commit
 * takes it and the other reads it through an Identity: which one depends on
 * the worklist's order.  Settle it so the fixpoint does not: the output
 * listed first holds the value, a later one the Identity.  Swapping the two
 * values' names and output slots (every slot each is listed in) changes
 * nothing a consumer sees. */
static void settle_outputs(IrModel *m)
{
	for (GraphId g = 1; g < m->ngraphs; g++) {
		IrGraph *gr = ir_graph(m, g);
		for (uint32_t j = 0; !gr->dead && j < gr->noutputs; j++) {
			ValueId y = gr->outputs[j];
			NodeId id = ir_value(m, y)->producer;
			if (!id || ir_node(m, id)->kind != OP_Identity || ir_node(m, id)->ninputs != 1)
				continue;
			ValueId x = ir_node(m, id)->inputs[0];
			IrValue *xv = ir_value(m, x);
			if (!x || xv->graph != g || !xv->producer || !xv->is_output)
				continue;
			uint32_t i = 0;
			while (i < gr->noutputs && gr->outputs[i] != x)
				i++;
			if (i <= j || i == gr->noutputs)
				continue;
			const char *xname = xv->name, *yname = ir_value(m, y)->name;
			ir_value_rename(m, x, ir_fresh_name(m, xname));
			ir_value_rename(m, y, xname);
			ir_value_rename(m, x, yname);
			/* every slot: a value listed twice keeps its name in both */
			for (uint32_t k = 0; k < gr->noutputs; k++)
				if (gr->outputs[k] == x || gr->outputs[k] == y)
					ir_set_output(m, g, k, gr->outputs[k] == x ? y : x);
		}
	}
}

bool rw_run(IrModel *m, const RwRuleSet *const *sets, int nsets, const RwOptions *o, RwResult *r, Diag *d)
{
	memset(r, 0, sizeof *r);
	r->why_rule = o->why_rule;
	for (int s = 0; s < nsets; s++)
		if (sets[s]->api_version != GRAFT_BUILDER_API_VERSION) {
			diag_error(d, NULL, "rule set '%s' was generated for builder API %d, libgraft has %d",
			           sets[s]->name, sets[s]->api_version, GRAFT_BUILDER_API_VERSION);
			r->stop = RW_ERROR;
			return false;
		}
	if (o->layout_nhwc && (!o->allow_vendor_ops || !pass_enabled(o, RW_LEVEL_LAYOUT, "push-transpose"))) {
		diag_error(d, m->path, "--layout nhwc needs %s", !o->allow_vendor_ops
		           ? "--allow-vendor-ops: standard ONNX has no channels-last Conv (it becomes com.microsoft NhwcConv)"
		           : "the layout level's push-transpose pass, which is off");
		r->stop = RW_ERROR;
		return false;
	}
	/* --match-each: a compiled set without rules in turn of its own runs
	 * interpreted from its rules text (tried in turn, as the interpreter does) */
	const RwRuleSet *each[nsets + 1];
	if (o->match_each) {
		for (int s = 0; s < nsets; s++) {
			each[s] = sets[s]->match_each || !sets[s]->back_end ? sets[s] : sets[s]->back_end->twin(sets[s], d);
			if (!each[s]) {
				r->stop = RW_ERROR;
				return false;
			}
		}
		sets = each;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	Rewriter rw = {.m = m, .sets = sets, .nsets = nsets, .o = *o, .d = d, .res = r};
	if (!rw.o.fold.max_bytes)
		rw.o.fold.max_bytes = FOLD_DEFAULT_MAX_BYTES;
	if (!rw.o.fold.max_total_bytes)
		rw.o.fold.max_total_bytes = fold_default_budget(m);
	rw.o.fold.added = &rw.fold_added;
	rw.o.fold.base_bytes = fold_base_bytes(m);
	rw.rng = o->shuffle_seed ? o->shuffle_seed : 1;
	long fuel = o->fuel ? o->fuel : DEFAULT_FUEL;
	r->nodes_before = count_nodes(m);
	for (int k = 0; k < rw.o.ndisabled; k++)
		if (strcmp(rw.o.disabled[k], "inline-if") == 0)
			rw.o.no_inline_if = true;
	Diag quiet;
	diag_init(&quiet, NULL);
	ir_name_anonymous_dims(m);
	rw.infer = infer_new(m);
	infer_name_unknown_dims(rw.infer, true);
	infer_model(rw.infer, &quiet);
	rw.check_kernels = ir_model_has_kernels(m);
	if (pass_enabled(o, RW_LEVEL_LAYOUT, "push-transpose"))
		rw.layout = layout_new();
	rw.split_slices = pass_enabled(o, RW_LEVEL_EXTENDED, "split-slices");
	rw.concat_concat = pass_enabled(o, RW_LEVEL_BASIC, "concat-concat");
	bool nhwc_pending = o->layout_nhwc;
	/* with --layout nhwc the vendor rules wait for the channels-last forms (to_nhwc) */
	rw.allow_vendor_ops_asked = o->allow_vendor_ops;
	if (nhwc_pending)
		rw.o.allow_vendor_ops = false;
	compute_enabled(&rw);
	rw.band_lo = INT_MIN, rw.band_hi = INT_MAX;
	rw.o.fold.infer = rw.infer;
	rw.prov_base = m->nnodes;
	grow_node_tables(&rw);
	seed(&rw);
	size_t h = 0;
	r->stop = RW_FIXPOINT;
	NodeId n;
	uint32_t since_sweep = 0;
	while ((n = pop(&rw, &h)) || (n = to_nhwc(&rw, &h, &nhwc_pending))) {
		/* now and then, inference forgets the values of removed values
		 * (folded chains' intermediates): a pass over the values every
		 * nvalues / 8 nodes popped */
		if (++since_sweep > 1024 && since_sweep > m->nvalues / 8) {
			infer_sweep(rw.infer);
			since_sweep = 0;
		}
#ifdef GRAFT_DEBUG
		if (rw.debug_failed)
			break;
#endif
		if ((o->max_rewrites || o->limit_rewrites) && r->rewrites >= o->max_rewrites) {
			r->stop = RW_MAX_REWRITES;
			break;
		}
		if (r->rewrites >= fuel) {
			r->stop = RW_OUT_OF_FUEL;
			break;
		}
		if (!o->no_fold && try_fold(&rw, n)) {
			DEBUG_VALIDATE(&rw, "fold");
			continue;
		}
		if (!o->no_fold && !rw.o.no_inline_if && try_inline_if(&rw, n)) {
			DEBUG_VALIDATE(&rw, "inline-if");
			continue;
		}
		if (ir_node(m, n)->dead)
			continue;
		if (!o->no_cse && try_cse(&rw, n)) {
			DEBUG_VALIDATE(&rw, "cse");
			continue;
		}
		if (try_push_transpose(&rw, n)) {
			DEBUG_VALIDATE(&rw, "push-transpose");
			continue;
		}
		if (try_split_slices(&rw, n)) {
			DEBUG_VALIDATE(&rw, "split-slices");
			continue;
		}
		if (try_concat_concat(&rw, n)) {
			DEBUG_VALIDATE(&rw, "concat-concat");
			continue;
		}
		for (int p = 0; p < rw.npasses && !ir_node(m, n)->dead; p++) {
			int s = rw.passes[p].set;
			rw.cur = s;
			rw.band_lo = rw.passes[p].lo, rw.band_hi = rw.passes[p].hi;
			RwMatchFn match = o->match_each && sets[s]->match_each ? sets[s]->match_each : sets[s]->match;
#ifdef GRAFT_DEBUG
			/* a failed match must change nothing: compare the graph around n */
			uint64_t local0, counts0, local1, counts1;
			long aborts0 = rw.naborts;
			fingerprint_around(m, n, &local0, &counts0);
			if (match(&rw, n))
				break;
			fingerprint_around(m, n, &local1, &counts1);
			if (local1 != local0 || (rw.naborts == aborts0 && counts1 != counts0)) {
				char label[300];
				diag_error(d, m->path, "rule set '%s': a failed match at node '%s' changed the graph",
				           sets[s]->name, ir_node_label(m, n, label, sizeof label));
				rw.debug_failed = true;
				break;
			}
#else
			if (match(&rw, n))
				break;
#endif
		}
		rw.band_lo = INT_MIN, rw.band_hi = INT_MAX;
		/* a long run is checked for a cycle: the same graph state again */
		if (r->rewrites > 2 * (long)r->nodes_before + 1000 && seen_before(&rw)) {
			r->stop = RW_CYCLE;
			break;
		}
		/* compact the worklist now and then */
		if (h > 4096 && h * 2 > rw.nwork) {
			memmove(rw.work, rw.work + h, sizeof *rw.work * (rw.nwork - h));
			rw.nwork -= h;
			h = 0;
		}
	}
#ifdef GRAFT_DEBUG
	if (rw.debug_failed)
		r->stop = RW_ERROR;
#endif
	if (r->stop == RW_OUT_OF_FUEL || r->stop == RW_CYCLE) {
		char rules[600] = "";
		int count = rw.nlast < 8 ? rw.nlast : 8;
		for (int i = 0; i < count; i++) {
			const char *name = rw.last_rules[i];
			if (name && !strstr(rules, name) && strlen(rules) + strlen(name) + 3 < sizeof rules) {
				if (*rules)
					strcat(rules, ", ");
				strcat(rules, name);
			}
		}
		diag_error(d, m->path, "%s after %ld rewrites; rules firing: %s",
		           r->stop == RW_CYCLE ? "stopped: the rules rewrite in a cycle" : "stopped: out of fuel",
		           r->rewrites, *rules ? rules : "(built-in passes)");
	}
	if (r->stop != RW_ERROR)
		settle_outputs(m);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	bool why_ok = !o->why_rule || why_pass(&rw);
	r->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	r->nodes_after = count_nodes(m);
	/* a vendor op the rules created and later fused away (a FusedMatMul
	 * into Attention) leaves no import behind */
	if (rw.imported_vendor)
		ir_drop_unused_opset(m, "com.microsoft");
	infer_free(rw.infer);
	layout_free(rw.layout);
	for (int s = 0; s < nsets; s++)
		free(rw.enabled[s]);
	free(rw.enabled);
	free(rw.passes);
	free(rw.work);
	free(rw.queued);
	for (uint32_t i = 0; i < rw.capprov; i++) {
		for (int k = 0; k < rw.nprov[i]; k++)
			free(rw.prov[i][k]);
		free(rw.prov[i]);
	}
	free(rw.prov);
	free(rw.nprov);
	free(rw.tx_matched);
	free(rw.tx_created);
	free(rw.tx_repl);
	free(rw.tx_old);
	free(rw.tx_consts);
	free(rw.cse);
	free(rw.thash);
	free(rw.seen);
	return why_ok && (r->stop == RW_FIXPOINT || r->stop == RW_MAX_REWRITES);
}

void rw_result_free(RwResult *r)
{
	for (size_t i = 0; i < r->nfirings; i++) {
		RwFiring *f = &r->firings[i];
		for (int k = 0; k < f->nmatched; k++)
			free(f->matched[k]);
		for (int k = 0; k < f->ncreated; k++) {
			free(f->created[k]);
			for (int j = 0; f->provenance && j < f->nprovenance[k]; j++)
				free(f->provenance[k][j]);
			if (f->provenance)
				free(f->provenance[k]);
		}
		for (int k = 0; k < f->nremoved; k++)
			free(f->removed[k]);
		free(f->matched);
		free(f->created);
		free(f->removed);
		free(f->provenance);
		free(f->nprovenance);
	}
	free(r->firings);
	for (int i = 0; i < r->nwhy; i++) {
		free(r->why[i].node);
		free(r->why[i].detail);
		free(r->why[i].values);
	}
	free(r->why);
	json_decref(r->nodes);
	json_decref(r->values);
	memset(r, 0, sizeof *r);
}

const char *rw_firing_name(const RwRuleSet *const *sets, const RwFiring *f)
{
	return f->rule >= 0 ? sets[f->set]->rules[f->rule].name : f->builtin;
}
