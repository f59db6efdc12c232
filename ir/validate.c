/* validate.c - the IR's invariants, checked for tests and debug builds, and
 * the topological order of a graph (which the loader uses to reject cycles).
 *
 * Invariants: the graph is acyclic; every node input is a live value defined
 * in the node's scope or an enclosing one, and produced by a node, a graph
 * input or an initializer; use lists match node inputs exactly (each use
 * once); output values point back at their producer; value names are unique
 * in their scope; the node list links are consistent. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

/* The node of graph g that contains node n (n itself, or the owner of the
 * body n lives in, recursively), or 0 if n is not inside g. */
static NodeId ancestor_in(IrModel *m, NodeId n, GraphId g)
{
	while (n && ir_node(m, n)->graph != g)
		n = ir_graph(m, ir_node(m, n)->graph)->owner;
	return n;
}

/* Is the node list of g in topological order (every producer in g before
 * its consumers, bodies included)?  index[n] is n's 1-based list position. */
static bool list_sorted(IrModel *m, GraphId g, const NodeId *nodes, const uint32_t *index, uint32_t total)
{
	for (uint32_t i = 0; i < total; i++) {
		IrNode *node = ir_node(m, nodes[i]);
		for (uint32_t o = 0; o < node->noutputs; o++) {
			ValueId v = node->outputs[o];
			if (!v)
				continue;
			IrValue *val = ir_value(m, v);
			for (uint32_t u = 0; u < val->nuses; u++) {
				NodeId c = ancestor_in(m, val->uses[u].node, g);
				if (c && index[c] <= i + 1)
					return false;
			}
		}
	}
	return true;
}

NodeId *ir_topo_order(IrModel *m, GraphId g, uint32_t *count, Diag *d)
{
	IrGraph *gr = ir_graph(m, g);
	uint32_t total = gr->nnodes;
	if (gr->topo_sorted) { /* known sorted: the list is the order */
		NodeId *order = malloc(sizeof *order * (total + 1));
		if (!order)
			abort();
		uint32_t k = 0;
		for (NodeId n = gr->first; n && k < total; n = ir_next(m, n))
			order[k++] = n;
		*count = k;
		return order;
	}
	/* local index of each node of g */
	uint32_t *index = calloc(m->nnodes, sizeof *index);
	NodeId *nodes = malloc(sizeof *nodes * (total + 1));
	uint32_t *pending = calloc(total + 1, sizeof *pending);
	NodeId *order = malloc(sizeof *order * (total + 1));
	if (!index || !nodes || !pending || !order)
		abort();
	uint32_t k = 0;
	for (NodeId n = gr->first; n; n = ir_next(m, n)) {
		index[n] = ++k;
		nodes[k - 1] = n;
	}
	/* Most lists are already in topological order: check that in one pass
	 * and return the list itself without sorting; graph.c keeps the answer
	 * until something might change it. */
	if (list_sorted(m, g, nodes, index, total)) {
		gr->topo_sorted = true;
		memcpy(order, nodes, sizeof *order * total);
		*count = total;
		free(index);
		free(nodes);
		free(pending);
		return order;
	}
	/* pending[i] = number of inputs of node i (including reads from inside
	 * its bodies) produced by nodes of g.  Each use is counted once per
	 * (consumer, use), so a value read twice counts twice. */
	for (ValueId v = 1; v < m->nvalues; v++) {
		IrValue *val = ir_value(m, v);
		if (val->dead || !val->producer || ir_node(m, val->producer)->graph != g)
			continue;
		for (uint32_t u = 0; u < val->nuses; u++) {
			NodeId c = ancestor_in(m, val->uses[u].node, g);
			if (c)
				pending[index[c] - 1]++;
		}
	}
	/* Kahn's algorithm; the ready set is a min-heap on list position, so the
	 * earliest ready node goes next and a sorted list keeps its order. */
	uint32_t *heap = malloc(sizeof *heap * (total + 1)), nheap = 0, tail = 0;
	if (!heap)
		abort();
	for (uint32_t i = 0; i < total; i++)
		if (!pending[i])
			heap[nheap++] = i; /* ascending: already a heap */
	while (nheap) {
		uint32_t top = heap[0];
		heap[0] = heap[--nheap];
		for (uint32_t i = 0;;) {  /* sift down */
			uint32_t l = 2 * i + 1, r = l + 1, s = i;
			if (l < nheap && heap[l] < heap[s]) s = l;
			if (r < nheap && heap[r] < heap[s]) s = r;
			if (s == i) break;
			uint32_t t = heap[i]; heap[i] = heap[s]; heap[s] = t;
			i = s;
		}
		NodeId n = nodes[top];
		order[tail++] = n;
		IrNode *node = ir_node(m, n);
		for (uint32_t o = 0; o < node->noutputs; o++) {
			ValueId v = node->outputs[o];
			if (!v)
				continue;
			IrValue *val = ir_value(m, v);
			for (uint32_t u = 0; u < val->nuses; u++) {
				NodeId c = ancestor_in(m, val->uses[u].node, g);
				if (c && --pending[index[c] - 1] == 0) {
					uint32_t i = nheap++;  /* sift up */
					heap[i] = index[c] - 1;
					while (i && heap[(i - 1) / 2] > heap[i]) {
						uint32_t t = heap[i]; heap[i] = heap[(i - 1) / 2]; heap[(i - 1) / 2] = t;
						i = (i - 1) / 2;
					}
				}
			}
		}
	}
	NodeId *result = order;
	if (tail < total) {
		char label[256];
		NodeId stuck = 0;
		for (uint32_t i = 0; i < total && !stuck; i++)
			if (pending[i])
				stuck = nodes[i];
		diag_error(d, m->path, "graph '%s': cycle through node '%s'", gr->name,
		           ir_node_label(m, stuck, label, sizeof label));
		free(order);
		result = NULL;
	}
	*count = tail;
	free(heap);
	free(index);
	free(nodes);
	free(pending);
	return result;
}

static bool in_scope(IrModel *m, GraphId g, ValueId v)
{
	for (; g; g = ir_graph(m, g)->parent)
		if (ir_value(m, v)->graph == g)
			return true;
	return false;
}

#define FAIL(...) do { diag_error(d, m->path, __VA_ARGS__); ok = false; if (d->nerrors > 10) return false; } while (0)

bool ir_validate(IrModel *m, Diag *d)
{
	bool ok = true;
	char label[256];
	for (GraphId g = 1; g < m->ngraphs; g++) {
		IrGraph *gr = ir_graph(m, g);
		if (gr->dead)
			continue;
		uint32_t count = 0;
		NodeId prev = 0;
		for (NodeId n = gr->first; n; prev = n, n = ir_next(m, n)) {
			IrNode *node = ir_node(m, n);
			count++;
			if (node->dead || node->graph != g || node->prev != prev)
				FAIL("graph '%s': node list broken at node %u", gr->name, n);
			ir_node_label(m, n, label, sizeof label);
			for (uint32_t i = 0; i < node->ninputs; i++) {
				ValueId v = node->inputs[i];
				if (!v)
					continue;
				IrValue *val = ir_value(m, v);
				if (val->dead)
					FAIL("node '%s': input %u reads removed value '%s'", label, i, val->name);
				else if (!in_scope(m, g, v))
					FAIL("node '%s': input '%s' is not in scope", label, val->name);
				else if (!val->producer && !val->is_input && !val->tensor && !val->sparse)
					FAIL("node '%s': input '%s' has no producer", label, val->name);
				uint32_t seen = 0;
				for (uint32_t u = 0; u < val->nuses; u++)
					seen += val->uses[u].node == n && val->uses[u].slot == i;
				if (seen != 1)
					FAIL("node '%s': input %u ('%s') appears %u times in its use list", label, i, val->name, seen);
			}
			for (uint32_t o = 0; o < node->noutputs; o++) {
				ValueId v = node->outputs[o];
				if (v && (ir_value(m, v)->producer != n || ir_value(m, v)->out_slot != o))
					FAIL("node '%s': output %u does not point back at it", label, o);
			}
		}
		if (count != gr->nnodes || prev != gr->last)
			FAIL("graph '%s': node count %u, list holds %u", gr->name, gr->nnodes, count);
		if (gr->topo_sorted && count == gr->nnodes) {
			/* the flag graph.c keeps must be true: check it the long way */
			uint32_t *index = calloc(m->nnodes + 1, sizeof *index);
			NodeId *nodes = malloc(sizeof *nodes * (count + 1));
			if (!index || !nodes)
				abort();
			uint32_t k = 0;
			for (NodeId x = gr->first; x; x = ir_next(m, x)) {
				index[x] = ++k;
				nodes[k - 1] = x;
			}
			bool sorted = list_sorted(m, g, nodes, index, count);
			free(index);
			free(nodes);
			if (!sorted)
				FAIL("graph '%s': marked topologically sorted, but a node reads a later node's output", gr->name);
		}
		uint32_t n;
		NodeId *order = ir_topo_order(m, g, &n, d);
		if (!order)
			ok = false;
		free(order);
	}
	for (ValueId v = 1; v < m->nvalues; v++) {
		IrValue *val = ir_value(m, v);
		if (val->dead)
			continue;
		if (ir_lookup(m, val->graph, val->name) != v)
			FAIL("value '%s' is not found under its own name", val->name);
		for (uint32_t u = 0; u < val->nuses; u++) {
			Use use = val->uses[u];
			IrNode *c = ir_node(m, use.node);
			if (c->dead || use.slot >= c->ninputs || c->inputs[use.slot] != v)
				FAIL("value '%s': stale use by node %u slot %u", val->name, use.node, use.slot);
		}
		if (val->producer && ir_node(m, val->producer)->dead)
			FAIL("value '%s': produced by a removed node", val->name);
	}
	return ok;
}
