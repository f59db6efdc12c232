/* mprog.h - checked rules lowered to matcher programs (dsl/lower.c).
 *
 * A program is what one rule does at a node, as data: the matching steps
 * in the order of its pattern (root, then each operand depth first, as the
 * checker binds), single use, deferred checks, the guard, the values the
 * result computes before building, and the result as a tree of values to
 * build.  One program per rule: at each commutative op of the pattern (a
 * swap site) a commute step (MI_COMMUTE) reads its two operands in order,
 * and when a later step fails, the other way round; a failure goes back to
 * the innermost site that has an order left, so the orders are tried as
 * nested loops (site 0 the outermost), like Go's rulegen commute loops.
 * Beside the steps, each program keeps its pattern as written (MProg.pats),
 * which graft verify builds instances from and no matcher reads.
 *
 * The run-time interpreter (runtime/engine/rw_interp.c, graft optimize
 * --rules) executes these programs through the same builder API
 * (rewrite.h, rw_gen.h) that graftc's generated C calls, so the language's
 * semantics (opset forms, commutativity, single use, literals with
 * tolerance, rest lists, externs) are decided once, here, and only run
 * there.  Steps carry their --why step numbers and messages: the
 * interpreter answers --why for every rule set, compiled ones included.
 *
 * Registers hold what matching binds (nodes, values, operands that older
 * opsets spell as attributes, rest lists, attribute values) and the
 * values computed before building.  Everything lives in the MRuleSet's
 * arena.
 *
 * graftc's C printer (compiler/codegen.c) prints each program once, a
 * commute step as a loop over both orders: as the decision-tree leaf
 * apply_<name>() without the steps marked as tests the tree shares (only
 * steps before the first commute step are).  For it the programs
 * also keep the C names of registers and temporaries (MProg.cnames,
 * MInsn.tmp, MVal.tmp), which the interpreter ignores. */
#ifndef GRAFT_DSL_MPROG_H
#define GRAFT_DSL_MPROG_H

#include <stdbool.h>
#include <stdint.h>

#include "ast.h"
#include "opset_forms.h"

typedef enum MType {
	MT_NONE, MT_NODE, MT_VALUE, MT_ARG, MT_REST,
	MT_INT, MT_FLOAT, MT_BOOL, MT_DTYPE, MT_STR, MT_INTS, MT_FLOATS,
} MType;

/* ---- expressions: guards, attribute values, checks -------------------------------- */

typedef enum MExprKind {
	ME_INT, ME_FLOAT, ME_BOOL, ME_DTYPE,    /* i / f */
	ME_STR,                 /* s */
	ME_LIST,                /* kids: an ints or floats literal (type says which) */
	ME_REG,                 /* register reg */
	ME_OUT,                 /* output i of the node in reg: a value */
	/* facts of a value (kid 0) */
	ME_RANK, ME_SHAPE, ME_DIM /* kid 1: index */, ME_NUMEL, ME_DTYPEOF, ME_USES,
	ME_SAME_DIM,            /* dim(kid 0, kid 1) == dim(kid 2, kid 3): the same size or the same symbol (else undecided) */
	ME_SCALAR, ME_INTSOF,   /* of a value; of an operand in reg when arg is set */
	ME_OUTPUTS,             /* outputs of the node in reg */
	ME_ABSENT,              /* the value (kid 0) is absent; of an operand in reg when arg */
	ME_REST_LEN, ME_REST_AT /* rest list in reg; kid 0: index */,
	ME_LEN,                 /* length of a list (kid 0) */
	ME_IS_IDENTITY, ME_COMPOSE, ME_ONES, ME_OPSET,
	ME_RANGE,               /* 0 .. kid 0 - 1 */
	ME_DIMS,                /* dims of value kid 0 at the axes kid 1 */
	ME_IS_FLOAT, ME_IS_INT, /* value kid 0's element type is a float / an integer type */
	ME_MERGE_AXES,          /* axes kid 0 of a rank-kid 2 tensor plus axes kid 1 of it with
	                           kid 0's removed, as one sorted list */
	ME_DISTINCT,            /* no element of ints kid 0 repeats */
	ME_FINITE, ME_MODERATE, /* every element of the constant value kid 0 is finite / moderate
	                           (rwg_moderate) */
	ME_EVERY,               /* every element of ints kid 0 compares (op) with kid 1: an int when
	                           i is set, else ints of the same length */
	ME_ALL, ME_ANY,         /* kid 1 holds for every / some element of ints kid 0, put in int
	                           register reg in turn, first to last, stopping at the first that
	                           decides; i numbers the quantifier in the program (graftc's l_<i>) */
	ME_MATH,                /* math(kids), fn its C name: fabs ceil floor erf exp log sqrt tanh
	                           fmax fmin pow, neg relu reciprocal sigmoid; to_int: the result is
	                           (int64_t) */
	ME_NOT, ME_NEG,
	ME_BIN,                 /* op (EX_*) on kids 0, 1; ints/floats/strings compare as lists */
	ME_INDEX,               /* kid 0 (ints or floats) at kid 1 */
	ME_TO_FLOATS,           /* ints as floats */
	ME_AS_FLOAT,            /* (double)(float)kid: a float attribute's precision */
	ME_EXTERN,              /* call extern `ext` with kids (value params: value exprs) */
	/* matching predicates */
	ME_IS_CONST,            /* value kid 0 (or operand in reg when arg) is a constant */
	ME_ABSENT_FROM,         /* inputs i on of the node in reg are absent */
	ME_SAME,                /* kids 0, 1 are the same value (args: rwg_arg_same when arg) */
	ME_EQUALS,              /* constant kid 0 (operand when arg) equals f within tol */
	ME_EQUALS_LIST,         /* constant kid 0 (operand when arg) is the 1-D list nums[0..nnums) */
	ME_ATTR_IS_SET,         /* the operand in reg is an attribute at this opset */
	ME_FROM,                /* the value in reg (an operand when arg; an attribute never is) is an
	                           output of a node of op s of domain ("": ONNX's): x:!Conv fails on it */
} MExprKind;

/* ME_MATH's function (fn holds the name graftc prints). */
typedef enum MMath {
	MM_FABS, MM_CEIL, MM_FLOOR, MM_ERF, MM_EXP, MM_LOG, MM_SQRT, MM_TANH,
	MM_FMAX, MM_FMIN, MM_POW, MM_NEG, MM_RELU, MM_RECIPROCAL, MM_SIGMOID,
} MMath;

typedef struct MExpr {
	MExprKind kind;
	MType type;             /* of the result */
	int op;                 /* ME_BIN: ExprOp; ME_MATH: the function's name in fn */
	const char *fn;
	MMath math;             /* ME_MATH */
	bool arg;               /* the operand is an RwgArg register (see the kinds) */
	bool to_int;            /* ME_MATH: truncate the result to int64 */
	int reg;
	int64_t i;
	double f, tol;
	const char *s;          /* ME_STR (not NUL-terminated beyond slen); ME_FROM: the op */
	const char *domain;     /* ME_FROM */
	size_t slen;
	const double *nums;     /* ME_EQUALS_LIST */
	int nnums;
	int ext;                /* ME_EXTERN: index into MRuleSet.externs */
	struct MExpr **kids;
	int nkids;
} MExpr;

/* ---- matching ------------------------------------------------------------------------- */

typedef enum MInsnKind {
	MI_INPUT,               /* reg = input `index` of node `src`; with swap, input index ^ the
	                           orientation of site swap - 1 */
	MI_COMMUTE,             /* swap site `index` (0, 1, ... in program order) of the commutative
	                           node src, whose operands the next two MI_INPUTs read: orientation
	                           0 (in order) first; when a later step fails, orientation 1 */
	MI_ARG,                 /* reg = operand `index` of node `src`, attribute forms[] at older opsets */
	MI_PRODUCER,            /* reg = the node making value src (arg: operand src's value) when it is
	                           op/domain, output `index`; else fail */
	MI_ATTR,                /* reg = attribute `name` of node src (its default); fail if neither */
	MI_REST,                /* reg = the inputs of node src from `index` on */
	MI_CHECK,               /* fail unless e (index 1: fail if e) */
	MI_SINGLE_USE,          /* node src is used only inside the match, as many times as the
	                           pattern reads it (index), and is no graph output */
	MI_GUARD,               /* fail unless e; index 1: and nothing e needed was unknown (then why
	                           starts with %s: "undecided, ..." or "") */
	MI_PRE,                 /* reg = e, before building */
	MI_PRE_KNOWN,           /* fail if something a MI_PRE needed was unknown */
	MI_LIKE,                /* fail unless the dtype of value e is known */
} MInsnKind;

/* A step a decision tree can make once for every rule of a root op that
 * needs it (graftc's match_<Op>(); the node must be the root or one such
 * a test fetched, and the step before the program's first MI_COMMUTE). */
typedef enum MTest {
	MTEST_NONE,
	MTEST_OP,               /* MI_PRODUCER of a default-domain op on an input */
	MTEST_PRESENT,          /* MI_CHECK: an input is present */
	MTEST_CONST,            /* MI_CHECK: an input is a constant */
	MTEST_ABSENT_FROM,      /* MI_CHECK: inputs i on are absent */
	MTEST_ATTR_INT,         /* MI_ATTR and its MI_CHECK: an int attribute is a literal */
} MTest;

typedef struct MForm {
	int input;
	const char *attr;
	int first, last;
} MForm;

/* What an unknown value lacked, of the value it is of: RwgNeed's order
 * (rw_gen.h; rw_interp.c asserts they agree). */
typedef enum MNeed { MN_NONE, MN_SHAPE, MN_DTYPE, MN_SCALAR, MN_INTS, MN_CONST } MNeed;

/* --why: a value of the rule that a failed guard shows ("numel(s) is 3"):
 * e and its source text; when it may be unknown, what it needs of the value
 * `of` (a value or an operand register; NULL: none), named of_text. */
typedef struct MShown {
	MExpr *e;
	const char *text;
	MNeed need;
	MExpr *of;
	const char *of_text;
} MShown;

/* --why: a guard split at its top-level &&s, part by part (or the value an
 * MI_PRE computes, as one part): e, its source text (whitespace collapsed)
 * and the values it shows, each once, in reading order. */
typedef struct MPart {
	MExpr *e;
	const char *text;
	MShown *shown;
	int nshown;
} MPart;

/* What a failed step says in a --why run: why_kind (RwWhyKind) and a
 * message; `%s` in it takes rwg_what() of value why_arg (MI_PRODUCER) or
 * the node's rw_node_label (MI_ATTR), or `%lld` the int why_arg.  A failed
 * MI_GUARD, and MI_PRE_KNOWN, say instead which part failed (parts). */
typedef struct MInsn {
	MInsnKind kind;
	int reg, src;
	int index;
	const char *op, *domain;    /* MI_PRODUCER: domain "" is ONNX's (then op_kind holds) */
	int op_kind;                /* OpKind of a default-domain op */
	const char *name;           /* MI_ATTR */
	AttrType attr_type;
	const MForm *forms;         /* MI_ARG */
	int nforms;
	MExpr *e;
	int step;                   /* --why: the step number graftc gives the same condition */
	int why_kind;
	const char *why;
	MExpr *why_arg;
	const char *desc;           /* MI_SINGLE_USE: "c (Conv)" */
	MPart *parts;               /* MI_GUARD: its parts (none from dsl_lower_each); MI_PRE: its value,
	                               when it may be unknown */
	int nparts;
	/* for the C printer: */
	MTest test;                 /* a test the decision tree can make instead */
	int swap, slot;             /* 1 + the commutative swap site whose operand `slot` (0, 1) this
	                               MI_INPUT reads or the why message starts with ("input 0 ..."), or 0;
	                               in orientation 1 the message names input 1 - slot */
	bool unused;                /* MI_INPUT: an operand `_?` lets be anything (read for the swap) */
	int tmp;                    /* MI_ATTR, MI_PRE: the register is a temporary, cname_<tmp> */
} MInsn;

/* ---- building ------------------------------------------------------------------------- */

typedef enum MValKind {
	MV_ABSENT,              /* no input */
	MV_EXPR,                /* a value e computes (a register, a node output, xs[i]) */
	MV_ARG,                 /* the operand in reg as a value (an attribute becomes a constant) */
	MV_SCALAR,              /* number e as a scalar constant of the dtype of value kid 0 */
	MV_INTS,                /* ints e as a 1-D int64 constant */
	MV_OP,                  /* op(kids): one output, no attributes (rwg_op1/rwg_op2) */
	MV_DEFAULT,             /* the optional value in reg, or kid 0 when absent */
	MV_EXTERN,              /* extern ext(args): kids for value params, exprs for the others */
	MV_NODE,                /* build op/domain on kids (forms[] at older opsets), copy the
	                           attributes of node reg (copy), set attrs; its output 0 */
} MValKind;

typedef struct MSetAttr {
	const char *name;
	AttrType type;
	MExpr *e;               /* literal or register */
	bool to_floats;
} MSetAttr;

typedef struct MVal {
	MValKind kind;
	const char *op, *domain;
	int reg;
	bool copy;
	MExpr *e;
	struct MVal **kids;     /* MV_EXTERN: NULL where the param is not a value */
	int nkids;
	MExpr **args;           /* MV_EXTERN: per param, when not a value */
	int ext;
	const MForm *forms;
	int nforms;
	MSetAttr *attrs;
	int nattrs;
	uint32_t outs;              /* MV_NODE: the outputs the rule reads (bit k: output k), made with
	                               the unread optional ones omitted; 0: output 0 only */
	int tmp;                    /* graftc's temporary: t_<tmp> (MV_NODE: k_<tmp>, in_<tmp + 1>,
	                               MV_EXTERN: x_<tmp>); 0 when the value is an expression */
} MVal;

/* ---- the pattern as written ------------------------------------------------------------ */

/* The steps say what a match checks; graft verify (runtime/verify/gen.c)
 * builds instances of the pattern, and needs what the steps leave out:
 * every operand in the order the rule writes it (an optional _? leaves no
 * step), the flags of a variable where it is used again (x? ... x), and
 * the attributes as written, those an older opset spells as inputs
 * ([axes = [1]]) among them.  One MPatNode per matched node, MProg.pats[i]
 * for MProg.nodes[i]; the matcher never reads them. */

typedef enum MOperandKind {
	MO_NODE,                /* an op: MProg.pats[node] */
	MO_VAR,                 /* a variable: reg, the register MProg.vnames names; a node's
	                           (s, s#k): the #k written in `output` (0 when none) */
	MO_ANY,                 /* _ */
	MO_LITERAL,             /* a constant: lit */
	MO_REST,                /* xs...: the rest list in reg */
} MOperandKind;

/* x:!Conv: the operand is no output of op/domain ("": ONNX's). */
typedef struct MNot {
	const char *op, *domain;
} MNot;

typedef struct MOperand {
	MOperandKind kind;
	int node;               /* MO_NODE */
	int reg;                /* MO_VAR, MO_REST */
	int output;             /* MO_VAR of a node: s#k's k */
	bool optional;          /* x?, _?: may be absent */
	bool is_const;          /* x:const */
	const MExpr *lit;       /* MO_LITERAL: the step's check, ME_EQUALS (f within tol) or
	                           ME_EQUALS_LIST (nums) */
	const MNot *nots;
	int nnots;
} MOperand;

/* [name = value]: a variable (reg, MProg.vnames names it) or a literal
 * (value: ME_INT, ME_FLOAT, ME_BOOL, ME_DTYPE, ME_STR, ME_LIST of numbers,
 * ME_NEG of one); reg -1 and value NULL for anything else. */
typedef struct MPatAttr {
	const char *name;
	int reg;
	const MExpr *value;
} MPatAttr;

typedef struct MPatNode {
	int reg;                /* the node's register (MProg.vnames names a bound one: d @ Op) */
	const char *op, *domain;
	const OpSchema *schema; /* the newest definition in the rule's opsets (input numbering) */
	int output;             /* #k: the output the pattern reads */
	MOperand *operands;
	int noperands;
	MPatAttr *attrs;
	int nattrs;
} MPatNode;

/* ---- rules ------------------------------------------------------------------------------ */

/* ", s => y#k" (RuleAlso): output `node_out` of the matched node in
 * register `reg` is replaced by output `out` of the node results[0] builds. */
typedef struct MAlso {
	int reg;
	int node_out;
	int out;
} MAlso;

/* How a rule matches: steps (straight-line but for the commute steps),
 * then the result. */
typedef struct MProg {
	MInsn *insns;
	int ninsns;
	int *nodes;             /* the matched nodes' registers, root (register 0) first */
	int nnodes;
	MVal **results;         /* replacing outputs out0, out0 + 1, ... of the root */
	int nresults;
	int out0;
	MAlso *also;            /* further values replaced (results[0] is then an MV_NODE) */
	int nalso;
	int build_step;         /* --why step of "building the result failed" */
	int nregs;
	const char **cnames;    /* per register: graftc's C name (v_0_1, n_0, x), the prefix of a
	                           temporary (a, axis), or NULL for an MI_ARG read in place */
	int nmatch;             /* insns[0 .. nmatch) match the pattern; then single use, ... */
	const char **vnames;    /* per register: the rule variable it binds, or NULL (dsl/analyse.c
	                           names the pattern's variables by them) */
	MPatNode *pats;         /* per node of nodes[]: the pattern as written (graft verify) */
} MProg;

typedef struct MRule {
	const RuleFile *file;
	const Rule *rule;
	const char *name;
	Level level;
	int line;
	int opset_min, opset_max;   /* opset_max 0: open */
	bool vendor;                /* emits com.microsoft ops */
	double tolerance;           /* [tolerance X] (0: exact) */
	bool finite_data, moderate_data, nonneg_indices;  /* the data graft verify spares the rule
	                               ([finite_data], [moderate_data], [nonnegative_indices]) */
	const char *root_domain, *root_op;
	int root_kind;              /* OpKind of a default-domain root */
	int nsites;                 /* its commute steps */
	const char *pat_text;       /* its text after ':' to 'if' or '=>', its guard (NULL: none) and its
	                               result, whitespace collapsed (dsl_rule_text) */
	const char *guard_text, *res_text;
	bool failed;                /* dsl_lower_each only: the lowering refused it (prog unusable) */
	MProg prog;
} MRule;

typedef struct MExtern {
	const Extern *decl;
	const char *c_name;
	const RuleFile *file;
	SrcPos pos;                 /* a call, for "unknown extern" */
} MExtern;

/* The rules of one run (one graftc invocation, or graft optimize --rules):
 * rules[] in source order across the files, which is the rule table's
 * order; `order` lists them as the engine tries them per root op (grouped
 * by root, higher priority first, then source order). */
typedef struct MRuleSet {
	Arena *arena;
	MRule *rules;
	int nrules;
	int *order;
	MExtern *externs;
	int nexterns;
} MRuleSet;

/* Lower checked files (dsl_check passed) to programs.  Constructs the
 * lowering cannot handle are errors at their position ("not supported by
 * the code generator yet: ..."); then NULL. */
MRuleSet *dsl_lower(RuleFile **files, int nfiles, Diag *d);
/* The same for graftc and the analysis: a rule the lowering refuses is
 * kept, marked failed, and the set is returned all the same; guards are not
 * split into their --why parts (MInsn.parts), which only the interpreter
 * shows. */
MRuleSet *dsl_lower_each(RuleFile **files, int nfiles, Diag *d);
void dsl_lower_free(MRuleSet *s);

/* Helpers of the lowering that other passes use too: the rule's text from
 * after its ':' to its ';' in three parts, whitespace collapsed (guard NULL
 * when none; malloc'd; graftc's comments and --why guards); graftc's C name
 * of a variable (malloc'd); an attribute's definition in s or an older
 * definition of the op. */
void dsl_rule_text(const RuleFile *f, const Rule *r, char **pat, char **guard, char **res);
char *dsl_c_name(const char *name);
const OpAttrDef *dsl_attr_def(const OpSchema *s, const char *name);
/* A number literal of a pattern (-2, 0.5, 1.4142135 ~ 1e-6, true): its value and tolerance. */
bool dsl_literal_value(const Expr *e, double *v, double *tol);
/* A literal of a result: a number, a string or a dtype name (computed at no cost). */
bool dsl_is_literal(const Expr *e);
/* Does canonical input `input` of op sit at another position in an opset of lo..hi? */
bool dsl_moved_form(const char *op, int input, int lo, int hi);

/* The rule's level with the file's default (basic when neither says). */
Level dsl_rule_level(const RuleFile *f, const Rule *r);
/* The opsets a rule runs at: its range, raised to what its result emits. */
int dsl_rule_opset_lo(const Rule *r);
int dsl_rule_opset_hi(const Rule *r);   /* OPSCHEMA_MAX_OPSET when open */

#endif
