/* ast.h - the rule language's syntax tree (see docs/rule-language.md).
 *
 * The parser (grammar.y) builds it; the checker (check.c) resolves ops
 * against the schema table, types every expression and reports errors; the
 * compiler (compiler/, next issue) lowers checked rules to decision trees.
 * Every node carries its source position, so every message can point at it.
 *
 * All nodes of one file live in the file's arena and are freed with it. */
#ifndef GRAFT_DSL_AST_H
#define GRAFT_DSL_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/diag.h"
#include "ir/opschema.h"

typedef struct SrcPos {
	int line, col;      /* 1-based */
	int len;            /* columns the construct spans on its first line (caret width) */
	uint32_t offset;    /* byte offset into the source */
} SrcPos;

/* ---- expressions: guards, attribute values, results ----------------------------- */

typedef enum ExprKind {
	EXPR_INT,           /* i */
	EXPR_FLOAT,         /* f (tol: match tolerance when used as a pattern literal, 0: exact) */
	EXPR_BOOL,          /* i (0/1) */
	EXPR_STRING,        /* s */
	EXPR_LIST,          /* items[n]: [1, 2, 3] */
	EXPR_VAR,           /* name: a pattern variable, attribute binding or node binding */
	EXPR_CALL,          /* name(items[n]): builtin or extern (lowercase names) */
	EXPR_OP,            /* an ONNX op to build on the right side: op(items[n]) with attrs */
	EXPR_UNARY,         /* op (EX_NEG, EX_NOT) applied to items[0] */
	EXPR_BINARY,        /* items[0] op items[1] */
	EXPR_INDEX,         /* items[0][items[1]] */
	EXPR_DEFAULT,       /* items[0] ?? items[1]: items[1] when the optional items[0] is absent */
	EXPR_TUPLE,         /* (a, b): results for several outputs of the root */
	EXPR_QUANT,         /* all(s in items[0]: items[1]) (op EX_AND) or any(...) (op EX_OR):
	                       the int variable s takes each element of the ints items[0] */
} ExprKind;

typedef enum ExprOp {
	EX_NONE, EX_NEG, EX_NOT,
	EX_ADD, EX_SUB, EX_MUL, EX_DIV, EX_CONCAT /* ++ */,
	EX_EQ, EX_NE, EX_LT, EX_LE, EX_GT, EX_GE, EX_AND, EX_OR,
} ExprOp;

/* Types the checker gives expressions. */
typedef enum DslType {
	TY_UNKNOWN = 0,
	TY_INT, TY_FLOAT, TY_BOOL, TY_STRING,
	TY_INTS, TY_FLOATS, TY_STRINGS,
	TY_DTYPE,           /* dtype(x), compared with float32, int64, ... */
	TY_VALUE,           /* a value of the graph (pattern variable or built node output) */
	TY_TENSOR,          /* a constant tensor: value(c) */
	TY_GRAPH,           /* a graph attribute (only bound and passed on) */
	TY_NODE,            /* a node binding (d @ Op(...)), used as a value or for ..d */
	TY_VALUES,          /* a rest list xs...: len(xs), xs[i] */
} DslType;

typedef struct AttrArg AttrArg;

typedef struct Expr {
	ExprKind kind;
	SrcPos pos;
	ExprOp op;
	int64_t i;
	double f;
	double tol;
	const char *s;              /* strings (decoded), var, call and op names */
	const char *domain;         /* EXPR_OP: "" or "com.microsoft" ... */
	struct Expr **items;
	int n;
	AttrArg *attrs;             /* EXPR_OP */
	int nattrs;
	const char *copy_attrs;     /* EXPR_OP: [..d] copies node d's attributes */
	SrcPos copy_pos;            /* EXPR_OP: of d; EXPR_QUANT: of the variable */
	/* filled by the checker */
	DslType type;
	const OpSchema *schema;     /* EXPR_OP */
	struct Binding *binding;    /* EXPR_VAR; EXPR_QUANT: its variable's */
	/* filled by the parser */
	int depth;                  /* 1 + the deepest item's (the parser bounds it) */
} Expr;

struct AttrArg {
	const char *name;
	SrcPos pos;
	Expr *value;
};

/* ---- patterns: the left side ------------------------------------------------------ */

typedef enum PatKind {
	PAT_OP,             /* op[attrs](args)#output */
	PAT_VAR,            /* x, x:const, x? */
	PAT_WILDCARD,       /* _ or _? */
	PAT_REST,           /* xs...: the remaining inputs (variadic), zero or more */
	PAT_LITERAL,        /* a constant operand equal to lit (scalar or list, within tol) */
} PatKind;

/* x:!Conv: the operand is no output of this op (a negative pattern). */
typedef struct PatNot {
	const char *domain, *name;  /* "" or "com.microsoft"; the op */
	SrcPos pos;
} PatNot;

typedef struct Pattern {
	PatKind kind;
	SrcPos pos;
	const char *name;           /* PAT_VAR, PAT_REST: variable; PAT_OP: the op */
	const char *domain;         /* PAT_OP */
	const char *bind;           /* PAT_OP: "d @ Op(...)" binds d to the node's output */
	SrcPos bind_pos;
	bool shared;                /* PAT_OP: "shared Op(...)": may have consumers outside the match */
	int output;                 /* PAT_OP: which output of the node ("#k"), default 0;
	                               PAT_VAR: "s#k", output k of the node bound to s */
	bool has_output;            /* "#k" was written (s#0 is output 0 even when s binds #1) */
	bool is_const;              /* PAT_VAR: x:const (a non-overridable initializer) */
	bool optional;              /* PAT_VAR, PAT_WILDCARD: x? / _? may be absent */
	AttrArg *attrs;             /* PAT_OP: [name = expr]: a variable binds, else must equal */
	int nattrs;
	struct Pattern **args;      /* PAT_OP */
	int nargs;
	Expr *lit;                  /* PAT_LITERAL */
	PatNot *nots;               /* PAT_VAR, PAT_WILDCARD: x:!Conv:!Gemm, no output of these ops */
	int nnots;
	/* filled by the checker */
	const OpSchema *schema;     /* PAT_OP: the newest definition in the rule's opset range */
} Pattern;

/* ---- rules and files ------------------------------------------------------------- */

typedef enum Level { LEVEL_NONE = 0, LEVEL_BASIC, LEVEL_EXTENDED, LEVEL_LAYOUT } Level;

/* A variable of a rule, made by the checker: where it is bound and its type. */
typedef struct Binding {
	const char *name;
	SrcPos pos;                 /* first binding occurrence */
	DslType type;
	bool is_const;
	bool optional;
	int uses;                   /* occurrences outside its first binding */
} Binding;

/* ", s => y#3" after a rule's result: the value bound to node pattern s is
 * replaced too, by output 3 of the node the result builds and names y. */
typedef struct RuleAlso {
	const char *name;           /* s: a node binding of the pattern, not the root */
	SrcPos pos;
	const char *node;           /* y: the result's name (Rule.rhs_bind) */
	SrcPos node_pos;
	int output;                 /* 3 */
} RuleAlso;

typedef struct Rule {
	const char *name;
	SrcPos pos;                 /* the name */
	Level level;                /* LEVEL_NONE: the file's default */
	SrcPos level_pos;
	int opset_min, opset_max;   /* default-domain opset range; 0 / INT32_MAX when open */
	bool has_priority;
	int priority;
	double tolerance;           /* [tolerance X]: approximate within X (graft verify); 0: exact */
	bool finite_data;           /* [finite_data]: known to differ where data holds inf or NaN;
	                               graft verify draws finite data only */
	bool override;              /* [override]: a rule loaded with graft optimize --rules that takes
	                               the place of the library rule of its name */
	SrcPos override_pos;
	bool moderate_data;         /* [moderate_data]: known to differ where data comes near the
	                               dtype's overflow or underflow; graft verify draws none of
	                               its largest, tiny or denormal values */
	bool nonneg_indices;        /* [nonnegative_indices]: known to differ where a Gather's indices
	                               in the data are negative (a fused kernel that refuses them);
	                               graft verify draws them >= 0 */
	const char *doc;
	Pattern *lhs;
	Expr *guard;                /* may be NULL */
	Expr *rhs;                  /* EXPR_TUPLE for several outputs */
	const char *rhs_bind;       /* "y @ Op(...)": the name of the node the result builds, or NULL */
	SrcPos rhs_bind_pos;
	RuleAlso *also;             /* ", s => y#k": further values the result replaces */
	int nalso;
	bool has_arrow;             /* false: a parse error was recovered */
	/* filled by the checker */
	Binding *bindings;
	int nbindings;
	int min_opset_needed;       /* from the ops the right side emits */
} Rule;

typedef struct Extern {
	const char *name;           /* as called in rules */
	SrcPos pos;
	DslType ret;
	DslType *params;
	int nparams;
	const char *c_name;         /* the C function; default: name */
} Extern;

typedef struct RuleFile {
	const char *path;
	const char *src;            /* the whole text (not copied; must outlive the AST) */
	uint32_t srclen;
	Arena *arena;
	Level default_level;
	Rule **rules;
	int nrules;
	Extern **externs;
	int nexterns;
} RuleFile;

/* parse.c: text -> AST, reporting syntax errors (several per run, with Lemon's
 * error recovery).  Returns the file even with errors (what could be parsed). */
RuleFile *dsl_parse(const char *path, const char *src, uint32_t len, Diag *d);
void dsl_free(RuleFile *f);

/* A rules file's (or a text model's) whole text (malloc'd; path "-":
 * standard input), or NULL with *err an errno value from opening it,
 * DSL_READ_TOO_LARGE (over DSL_MAX_FILE: refused from the file's size
 * before anything is read), DSL_READ_FAILED or DSL_READ_NOT_REGULAR (a
 * FIFO, a device: refused at once, see ir_open_regular).
 * dsl_read_strerror gives the message that goes after "PATH: ". */
#define DSL_MAX_FILE ((size_t)64 << 20)
enum { DSL_READ_TOO_LARGE = -1, DSL_READ_FAILED = -2, DSL_READ_NOT_REGULAR = -3 };
char *dsl_read_file(const char *path, uint32_t *len, int *err);
/* "too large (over 64 MiB)", "cannot read", "not a regular file" or
 * "cannot open: <strerror>" (static or strerror's buffer). */
const char *dsl_read_strerror(int err, char *buf, size_t size);

/* check.c: resolve and type every rule against the schema table; report
 * errors and warnings.  True if there is no error. */
bool dsl_check(RuleFile **files, int nfiles, Diag *d);

/* dump.c: the AST as readable text (graftc --dump-ast), one rule after another. */
void dsl_dump(const RuleFile *f, FILE *out);

/* diagnostics at a position of a file, GCC style with the source line and a caret */
void dsl_error(Diag *d, const RuleFile *f, SrcPos pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void dsl_warning(Diag *d, const RuleFile *f, SrcPos pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void dsl_note(Diag *d, const RuleFile *f, SrcPos pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The letter a C helper's signature spells type t with (rw_register_extern's
 * sig: b bool, i int, f float, d dtype, s string, I ints, F floats,
 * v value, t tensor); '?' for a type a helper cannot take. */
char dsl_type_letter(DslType t);
const char *dsl_type_name(DslType t);
/* Does the result expression build an op of another domain than ONNX's
 * (com.microsoft), in its operands or attribute values? */
bool dsl_expr_emits_vendor(const Expr *e);
const char *dsl_level_name(Level l);
/* The level named by name[0..len) ("basic", "extended", "layout"), or
 * LEVEL_NONE. */
Level dsl_level_parse(const char *name, size_t len);

#endif
