/* mtree.c - the decision tree per root op over a rule set's programs (mtree.h). */
#include "mtree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"

/* Building the trees of one set: the slots' paths of the root in hand. */
typedef struct B {
	Arena *a;
	const char **slots;         /* per slot: the path of its node */
	int nslots, capslots;
} B;

static char *afmt(Arena *a, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *afmt(Arena *a, const char *f, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, f);
	vsnprintf(buf, sizeof buf, f, ap);
	va_end(ap);
	return arena_strdup(a, buf);
}

/* The slot of the node at path (a new one the first time). */
static int slot_of(B *b, const char *path)
{
	for (int i = 0; i < b->nslots; i++)
		if (!strcmp(b->slots[i], path))
			return i;
	if (b->nslots == b->capslots) {
		b->capslots = b->capslots ? 2 * b->capslots : 8;
		b->slots = realloc(b->slots, sizeof *b->slots * (size_t)b->capslots);
		if (!b->slots)
			abort();
	}
	b->slots[b->nslots] = path;
	return b->nslots++;
}

/* The tests of program p, in order (*n of them; arena). */
static MTreeTest *tests_of(B *b, const MProg *p, int *n)
{
	Arena *a = b->a;
	const char **paths = calloc((size_t)p->nregs + 1, sizeof *paths);
	int *from_node = calloc((size_t)p->nregs + 1, sizeof *from_node);
	int *from_input = calloc((size_t)p->nregs + 1, sizeof *from_input);
	MTreeTest *t = arena_alloc(a, sizeof *t * (size_t)(p->ninsns + 1));
	if (!paths || !from_node || !from_input)
		abort();
	paths[0] = "";
	int nt = 0;
	for (int i = 0; i < p->ninsns; i++) {
		const MInsn *x = &p->insns[i];
		if (x->kind == MI_INPUT || x->kind == MI_ARG) {
			from_node[x->reg] = x->src;
			from_input[x->reg] = x->index;
			paths[x->reg] = afmt(a, "%s_%d", paths[x->src] ? paths[x->src] : "", x->index);
		}
		if (x->kind == MI_PRODUCER)
			paths[x->reg] = paths[x->src] ? paths[x->src] : "";
		MTreeTest y = {.kind = x->test};
		switch (x->test) {
		case MTEST_OP: {
			int v = x->src;
			y.path = paths[from_node[v]];
			y.index = from_input[v];
			y.op = x->op;
			y.op_kind = x->op_kind;
			y.out = x->index;
			y.key = afmt(a, "op%s:%d=%s/%d", y.path, y.index, y.op, y.out);
			y.slot = slot_of(b, paths[x->reg]);
			break;
		}
		case MTEST_PRESENT:
		case MTEST_CONST: {
			int v = x->e->kids[0]->reg; /* ME_ABSENT or ME_IS_CONST of an input */
			y.path = paths[from_node[v]];
			y.index = from_input[v];
			y.key = afmt(a, "%s%s:%d", x->test == MTEST_PRESENT ? "present" : "const", y.path, y.index);
			break;
		}
		case MTEST_ABSENT_FROM:
			y.path = paths[x->e->reg];
			y.index = (int)x->e->i;
			y.key = afmt(a, "absent%s:%d", y.path, y.index);
			break;
		case MTEST_ATTR_INT: /* the attribute's read and, next, its check */
			y.path = paths[x->src];
			y.attr = x->name;
			y.value = p->insns[i + 1].e->kids[1]->i;
			y.key = afmt(a, "attr%s:%s=%lld", y.path, y.attr, (long long)y.value);
			i++;
			break;
		default:
			continue;
		}
		y.node = slot_of(b, y.path);
		/* a constant is present: the const test makes the present test before it */
		MTreeTest *last = nt ? &t[nt - 1] : NULL;
		if (y.kind == MTEST_CONST && last && last->kind == MTEST_PRESENT && last->index == y.index &&
		    !strcmp(last->path, y.path))
			nt--;
		t[nt++] = y;
	}
	free(paths);
	free(from_node);
	free(from_input);
	*n = nt;
	return t;
}

static MTreeNode *tnode(Arena *a, const MTreeTest *t, int rule)
{
	MTreeNode *n = arena_alloc(a, sizeof *n);
	n->test = t;
	n->rule = rule;
	return n;
}

/* Children arrays grow to the next power of two (the arena keeps the old). */
static void add_kid(Arena *a, MTreeNode *t, MTreeNode *k)
{
	if (!(t->nkids & (t->nkids - 1))) {
		MTreeNode **kids = arena_alloc(a, sizeof *kids * (size_t)(t->nkids ? 2 * t->nkids : 1));
		if (t->nkids)
			memcpy(kids, t->kids, sizeof *kids * (size_t)t->nkids);
		t->kids = kids;
	}
	t->kids[t->nkids++] = k;
}

bool dsl_tree_same_input(const MTreeTest *a, const MTreeTest *b)
{
	return a->kind == MTEST_OP && b->kind == MTEST_OP && a->index == b->index && !strcmp(a->path, b->path);
}

/* Insert rule `rule`'s tests t[k..n) under node: a rule joins only the last
 * child, or whichever of the trailing op tests of one input tests its op. */
static void insert(Arena *a, MTreeNode *node, const MTreeTest *t, int k, int n, int rule)
{
	if (k == n) {
		add_kid(a, node, tnode(a, NULL, rule));
		return;
	}
	const MTreeTest *x = &t[k];
	for (int j = node->nkids - 1; j >= 0 && node->kids[j]->test; j--) {
		const MTreeTest *y = node->kids[j]->test;
		if (!strcmp(y->key, x->key)) {
			insert(a, node->kids[j], t, k + 1, n, rule);
			return;
		}
		if (!dsl_tree_same_input(x, y))
			break;
	}
	MTreeNode *c = tnode(a, x, -1);
	add_kid(a, node, c);
	insert(a, c, t, k + 1, n, rule);
}

/* MTreeNode.run of t's children and below. */
static void runs(MTreeNode *t)
{
	for (int i = t->nkids - 1; i >= 0; i--) {
		MTreeNode *k = t->kids[i];
		runs(k);
		if (k->test && k->test->kind == MTEST_OP) {
			const MTreeTest *y = i + 1 < t->nkids ? t->kids[i + 1]->test : NULL;
			k->run = y && dsl_tree_same_input(k->test, y) && y->out == k->test->out ? 1 + t->kids[i + 1]->run : 1;
		}
	}
}

MTrees *dsl_trees(const MRuleSet *s)
{
	Arena *a = s->arena;
	MTrees *T = arena_alloc(a, sizeof *T);
	T->roots = arena_alloc(a, sizeof *T->roots * (size_t)(s->nrules + 1));
	B b = {.a = a};
	for (int i = 0; i < s->nrules;) {
		const MRule *r0 = &s->rules[s->order[i]];
		MRoot *root = &T->roots[T->nroots++];
		root->domain = r0->root_domain;
		root->op = r0->root_op;
		root->kind = r0->root_kind;
		root->tree = tnode(a, NULL, -1);
		b.nslots = 0;
		slot_of(&b, "");
		for (; i < s->nrules; i++) {
			const MRule *m = &s->rules[s->order[i]];
			if (strcmp(m->root_domain, r0->root_domain) || strcmp(m->root_op, r0->root_op))
				break;
			int n;
			MTreeTest *t = tests_of(&b, &m->prog, &n);
			insert(a, root->tree, t, 0, n, s->order[i]);
		}
		root->nslots = b.nslots;
		runs(root->tree);
	}
	free(b.slots);
	return T;
}
