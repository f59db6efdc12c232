/* rewrite.h - the rewrite engine and the builder API that generated matchers
 * call (see docs/engine.md).
 *
 * The engine runs a worklist over the graph until nothing more applies:
 * popping a node runs the built-in constant folder, then CSE, then the
 * matchers for the node's op (compiled from rules by graftc).  A match
 * builds its replacement through rw_* calls inside a transaction
 * (rw_begin ... rw_commit); the engine then re-infers shapes of what
 * changed, pushes the new nodes, the consumers of replaced values and the
 * producers of their operands, and removes nodes as they die.  Every firing
 * is recorded for the audit: rule, matched, created and removed nodes, and
 * the provenance of each created node. */
#ifndef GRAFT_REWRITE_H
#define GRAFT_REWRITE_H

#include <stdio.h>

#include "runtime/eval/eval.h"
#include "fold.h"

/* Generated matchers check this at build time against the version they were
 * generated for (graftc writes a static assertion). */
#define GRAFT_BUILDER_API_VERSION 2

typedef enum RwLevel {
	RW_LEVEL_BASIC = 1,
	RW_LEVEL_EXTENDED = 2,
	RW_LEVEL_LAYOUT = 3,
} RwLevel;

/* One rule, as the generated rule table describes it. */
typedef struct RwRule {
	const char *name;
	RwLevel level;
	const char *file;       /* rule file, for the audit: rules/basic/squeeze.rules */
	int line;
	const char *doc;
	int priority;
	int opset_min, opset_max;   /* default-domain opsets where it applies (after the ops it emits) */
	bool vendor;            /* emits com.microsoft ops: needs allow_vendor_ops */
	const char *root_domain, *root_op;  /* the op the rule's pattern is rooted at ("" domain: ONNX) */
} RwRule;

typedef struct Rewriter Rewriter;

/* Try the rules rooted at node n's op; apply at most one.  True if the graph
 * changed.  A failed match must change nothing. */
typedef bool (*RwMatchFn)(Rewriter *rw, NodeId n);

typedef struct RwRuleSet {
	const char *name;           /* "graft-basic" */
	int api_version;            /* GRAFT_BUILDER_API_VERSION it was generated for */
	const RwRule *rules;
	int nrules;
	RwMatchFn match;            /* the decision tree graftc builds over each root op's rules */
	RwMatchFn match_each;       /* the same rules tried one after another (NULL: the interpreter
	                               over sources, or match without them) */
	const struct RwSources *sources;  /* a compiled set's rules text and C helpers: --why and
	                               --match-each run it in the interpreter (rw_interp.h), so
	                               the compiled code is only the decision trees; NULL: none
	                               (no --why) */
	const struct RwInterp *interp;  /* rules loaded at run time (rw_interp.h), run by the
	                               interpreter; NULL (graftc leaves it out) for compiled sets */
	const struct RwBackEnd *back_end;  /* what runs the set's rules one at a time for --why,
	                               --match-each and [override] (graftc and the loader put the
	                               interpreter's, rw_interp.h; graftc's by a weak reference,
	                               NULL in a program without the interpreter); NULL: none
	                               (no --why) */
} RwRuleSet;

/* A back end that runs a set's rules one at a time: what the engine asks
 * of a set beyond its match functions.  The engine reaches it only through
 * the set (RwRuleSet.back_end) and names no back end; the interpreter
 * (rw_interp.c) is the one there is. */
typedef struct RwBackEnd {
	/* Set s as this back end runs it: s itself if it runs s already, else
	 * one made from s (RwRuleSet.sources) with the same rules in the same
	 * order, kept; NULL with an error on d. */
	const RwRuleSet *(*twin)(const RwRuleSet *s, Diag *d);
	/* Run rule `rule` of the set being matched (a set twin gave) at node n;
	 * why: record why it does not fire (rw_why_fail).  True if it fired. */
	bool (*rule)(Rewriter *rw, int rule, NodeId n, bool why);
	/* The rule of set s marked [override] that is named `name`, or NULL:
	 * it takes the place of the other sets' rules of that name. */
	const RwRule *(*override_rule)(const RwRuleSet *s, const char *name);
} RwBackEnd;

/* Why a rule did not fire at a node: the kind of the first condition that failed. */
typedef enum RwWhyKind {
	RW_WHY_FIRES,               /* every condition holds: the rule would fire */
	RW_WHY_DISABLED,            /* its level, --enable/--disable or vendor ops keep it off */
	RW_WHY_OPSET,               /* the model's opset is out of the rule's range */
	RW_WHY_PRODUCER,            /* an operand is not produced by the op the pattern names */
	RW_WHY_ATTR,                /* an attribute has another value */
	RW_WHY_NOT_CONST,           /* an operand that must be a constant is not */
	RW_WHY_VALUE,               /* a constant operand holds other values than the pattern's literal */
	RW_WHY_OPERANDS,            /* an operand is missing, or there are too many */
	RW_WHY_SAME,                /* a variable used twice sees different values */
	RW_WHY_EXTRA_CONSUMER,      /* a matched node's output has a consumer outside the match */
	RW_WHY_GRAPH_OUTPUT,        /* a matched node's output is a graph output */
	RW_WHY_GUARD,               /* the if-condition is false (or depends on something unknown) */
	RW_WHY_UNKNOWN,             /* building the result needs a shape or dtype that is unknown */
	RW_WHY_LOOP_BODY,           /* the result would move work from outside into a Loop/Scan body */
	RW_WHY_TYPE,                /* the result's dtype or shape is not that of the output it replaces */
	RW_WHY_SCHEMA,              /* a node of the result does not fit its op's schema (types, counts,
	                               attributes): a runtime would refuse the model */
	RW_WHY_KERNEL,              /* a node of the result has no ONNX Runtime CPU kernel (the input's do) */
} RwWhyKind;
const char *rw_why_kind_name(RwWhyKind k);

/* The answer for one node, in graph order. */
typedef struct RwWhy {
	char *node;                 /* ir_node_label */
	RwWhyKind kind;
	char *detail;               /* which operand, attribute or condition */
	char *values;               /* what the condition saw ("numel(s) is 3"), or "": apart from
	                               detail so that counting details (graft verify) does not
	                               split them by value */
} RwWhy;

/* ---- running ------------------------------------------------------------------ */

typedef struct RwOptions {
	unsigned levels;            /* bit (1 << RwLevel); 0: basic|extended|layout */
	bool allow_vendor_ops;
	long fuel;                  /* most rewrites before stopping (0: default, 1,000,000) */
	long max_rewrites;          /* apply only the first N (bisection; 0: no limit, unless limit_rewrites) */
	bool limit_rewrites;        /* max_rewrites holds even when 0: then nothing is applied */
	uint64_t shuffle_seed;      /* randomize the worklist order (0: topological) */
	bool trace;                 /* print each firing to trace_out as it happens */
	FILE *trace_out;
	const char *const *disabled;    /* rule names, rule file names, level names, or inline-if */
	int ndisabled;
	const char *const *enabled;     /* if any: only these (same kinds of names) */
	int nenabled;
	bool no_fold, no_cse, no_dce;   /* switch the built-in passes off */
	bool no_inline_if;              /* keep If nodes with a constant condition (inlined as part of fold) */
	bool match_each;            /* try each rule in turn instead of the decision tree (compiled
	                               sets: interpreted from their sources) */
	bool layout_nhwc;           /* --layout nhwc: at the fixpoint, Convs to com.microsoft NhwcConv
	                               between Transposes, then on to a new fixpoint (nhwc.c); vendor
	                               rules wait until then.  Needs allow_vendor_ops and push-transpose */
	const char *why_rule;       /* after the run, ask this rule why it did not fire (RwResult.why) */
	bool counts_only;           /* firings say only which rule or pass fired: no node labels, no
	                               provenance (when no report, graph or trace will show them) */
	FoldOptions fold;
} RwOptions;

typedef enum RwStop {
	RW_FIXPOINT = 0,            /* the worklist emptied */
	RW_OUT_OF_FUEL,             /* fuel ran out: a rule set that does not converge */
	RW_CYCLE,                   /* the same graph state came back */
	RW_MAX_REWRITES,            /* --max-rewrites reached */
	RW_ERROR,                   /* a rewrite failed (message in the Diag) */
} RwStop;

/* One firing, for the audit.  Nodes are named by ir_node_label: their name,
 * or Op#index for unnamed nodes of the input file. */
typedef struct RwFiring {
	int set, rule;              /* rule = -1: a built-in pass, named by builtin */
	const char *builtin;        /* "fold", "cse", "dce" */
	char **matched;  int nmatched;
	char **created;  int ncreated;
	char **removed;  int nremoved;
	char ***provenance;         /* per created node: the input-file nodes it stands for */
	int *nprovenance;
} RwFiring;

typedef struct RwResult {
	RwStop stop;
	long rewrites;
	RwFiring *firings;
	size_t nfirings;
	double seconds;             /* engine time, without load and save */
	uint32_t nodes_before, nodes_after;
	RwWhy *why;                 /* why_rule: one entry per node with the rule's root op */
	int nwhy;
	unsigned fold_over_budget;  /* times fold left a node alone: over the fold budget (fold.h) */
	const char *why_rule;       /* RwOptions.why_rule, for the audit */
	void *nodes;                /* json_t *, unless counts_only: each node a firing names, as it was
	                               when first named: label -> {"op", "inputs", "outputs"} */
	void *values;               /* json_t *: the values of those nodes, name -> "float[1,3]" */
} RwResult;

bool rw_run(IrModel *m, const RwRuleSet *const *sets, int nsets, const RwOptions *o,
            RwResult *r, Diag *d);
void rw_result_free(RwResult *r);
/* Does name, as RwOptions.enabled/disabled take it, name something of these
 * sets: a rule, a rule file (path, file name, or file name without
 * .rules), a level, or a built-in pass they switch (inline-if,
 * push-transpose, split-slices, concat-concat)?  For the CLI to refuse a typo. */
bool rw_name_known(const RwRuleSet *const *sets, int nsets, const char *name);
/* The name of the rule or pass of a firing. */
const char *rw_firing_name(const RwRuleSet *const *sets, const RwFiring *f);

/* ---- the builder API for generated matchers --------------------------------------- */

IrModel *rw_model(Rewriter *rw);
/* Dim i of graph output v as its inputs compute it, where the output's
 * declared symbol renamed it (infer_computed_dim); false otherwise. */
bool rw_computed_dim(Rewriter *rw, ValueId v, int i, Dim *out);
/* The rule set whose rules are being tried. */
const RwRuleSet *rw_current_set(Rewriter *rw);
int rw_opset(Rewriter *rw);
/* Is rule `rule` of the set being run enabled for this model (level,
 * --enable/--disable, opset range, vendor ops)?  Generated code tests it first. */
bool rw_enabled(Rewriter *rw, int rule);

/* --why: record that the condition at `step` (its place in the rule's
 * matcher) failed, with a detail; keeps the furthest step (a commutative
 * op tries both orders; on a tie, the order the rule is written in).  Returns false, for `return rw_why_fail(...)`. */
bool rw_why_fail(Rewriter *rw, int step, RwWhyKind kind, const char *detail, ...)
	__attribute__((format(printf, 4, 5)));
/* The same with the values the condition saw apart (RwWhy.values); neither is a format. */
bool rw_why_fail_values(Rewriter *rw, int step, RwWhyKind kind, const char *detail, const char *values);
/* n's name, or "Op#id" when it has none (ir_node_label), for a message: valid
 * until the next call. */
const char *rw_node_label(Rewriter *rw, NodeId n);
/* --why: rule `rule` is not enabled: record whether by opset or by choice. */
bool rw_why_disabled(Rewriter *rw, int rule);

/* Matching (pure: nothing changes). */
ValueId rw_input(Rewriter *rw, NodeId n, uint32_t i);    /* 0 when absent */
uint32_t rw_ninputs(Rewriter *rw, NodeId n);
/* The node producing v, or 0 (graph input, initializer, absent). */
NodeId rw_producer(Rewriter *rw, ValueId v);
/* v may be fused away: every consumer is a node of the match so far and v
 * is not a graph output.  `within` lists the match's nodes. */
bool rw_single_use(Rewriter *rw, ValueId v, const NodeId *within, int nwithin);
bool rw_is_const(Rewriter *rw, ValueId v);
/* Same value, or equal constants (bitwise for integers, == for floats). */
bool rw_same_value(Rewriter *rw, ValueId a, ValueId b);
/* A constant all of whose elements equal x after conversion to its dtype
 * (tol 0), or lie within tol of it. */
bool rw_const_equals(Rewriter *rw, ValueId v, double x, double tol);
/* Does an element (of a constant or an attribute) equal a pattern literal,
 * both as doubles?  ==, except that the literal nan matches any NaN (sign
 * and payload aside): the rule language's nan (docs/rule-language.md). */
bool rw_literal_equal(double elem, double lit);

/* Building (between rw_begin and rw_commit). */
void rw_begin(Rewriter *rw, int rule, NodeId root, const NodeId *matched, int nmatched);
NodeId rw_node(Rewriter *rw, const char *op, const ValueId *inputs, uint32_t ninputs, uint32_t noutputs);
NodeId rw_node_in(Rewriter *rw, const char *domain, const char *op, const ValueId *inputs,
                  uint32_t ninputs, uint32_t noutputs);
/* The same with outputs 0 .. the highest bit set in `used`: an output whose
 * bit is clear is omitted where the op's schema lets it be (a rule reads
 * output 3 of SkipSimplifiedLayerNormalization, not its mean and inv_std_var). */
NodeId rw_node_outs(Rewriter *rw, const char *domain, const char *op, const ValueId *inputs,
                    uint32_t ninputs, uint32_t used);
ValueId rw_output(Rewriter *rw, NodeId n, uint32_t i);
void rw_copy_attrs(Rewriter *rw, NodeId to, NodeId from);
/* Constants: a scalar of dtype, or a 1-D int64 vector. */
ValueId rw_const_scalar(Rewriter *rw, int dtype, double x);
ValueId rw_const_ints(Rewriter *rw, const int64_t *v, int n);
/* Output `out` of the root is replaced by v.  Outputs not replaced must be unused. */
void rw_replace(Rewriter *rw, uint32_t out, ValueId v);
/* Output `out` of matched node n (a shared one, "s => y#k") is replaced by v
 * too; refused at commit if what the result built reads it. */
void rw_replace_also(Rewriter *rw, NodeId n, uint32_t out, ValueId v);
/* Finish the rewrite: rewire, remove what died, fold the new constant nodes,
 * record the firing.  True on success (then the match function returns true). */
bool rw_commit(Rewriter *rw);
/* Abandon a rewrite begun with rw_begin (nodes created are removed). */
void rw_abort(Rewriter *rw);

#endif
