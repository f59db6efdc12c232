/* mtree.h - one decision tree per root op over a rule set's programs
 * (dsl/mprog.h), as data: what graftc prints as match_<Op>() and what the
 * interpreter (runtime/engine/rw_interp.c) walks.
 *
 * A rule's tree tests are the steps of its program marked MInsn.test (the
 * op producing an operand, an int attribute's literal, an operand present
 * or constant, inputs absent), all before its first commute step, on the
 * root or on a node an op test above fetched.  The tree holds a root op's
 * rules in the order they are tried (priority, then source order): a rule
 * shares the tests of the rule before it as far as they are the same, and
 * op tests of one operand, which exclude each other, may be shared by any
 * of the trailing siblings.  A leaf is a rule, whose program then runs
 * whole; walking the tree and running the leaves reached, in order, until
 * one fires, fires what trying the rules in turn would. */
#ifndef GRAFT_DSL_MTREE_H
#define GRAFT_DSL_MTREE_H

#include "mprog.h"

/* One test on the match state: node `node` (a slot: 0 the root, k the
 * node an op test above put in slot k). */
typedef struct MTreeTest {
	MTest kind;
	int node;
	int index;                  /* the input (OP, PRESENT, CONST); the first absent input (ABSENT_FROM) */
	const char *op;             /* MTEST_OP: a default-domain op, its OpKind, the output the input is */
	int op_kind, out;
	int slot;                   /* MTEST_OP: where the producer goes */
	const char *attr;           /* MTEST_ATTR_INT: attribute attr (or its default) is value */
	int64_t value;
	const char *path;           /* the node tested as inputs from the root: "" the root, "_1_0" */
	const char *key;            /* equal keys: the same test */
} MTreeTest;

/* A test, whose children run in order when it holds, or a leaf (test NULL):
 * rule index `rule` of the MRuleSet. */
typedef struct MTreeNode {
	const MTreeTest *test;
	int rule;
	int run;                    /* an op test: it and the run - 1 siblings after it test the op of
	                               the same output of the same input (at most one holds) */
	struct MTreeNode **kids;
	int nkids;
} MTreeNode;

/* The tree of the rules rooted at one op (domain "" is ONNX's, kind its OpKind). */
typedef struct MRoot {
	const char *domain, *op;
	int kind;
	MTreeNode *tree;            /* the root: no test */
	int nslots;                 /* node slots the tests fill, the root's included */
} MRoot;

typedef struct MTrees {
	MRoot *roots;               /* by domain, then op (MRuleSet.order's grouping) */
	int nroots;
} MTrees;

/* The trees of set s, in s's arena. */
MTrees *dsl_trees(const MRuleSet *s);

/* Two tests of the op of the same input: at most one holds. */
bool dsl_tree_same_input(const MTreeTest *a, const MTreeTest *b);

#endif
