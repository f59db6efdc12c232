/* check_internal.h - what check.c shares with builtins.c: the table of
 * builtin functions of guards and results, and "did you mean" suggestions. */
#ifndef GRAFT_DSL_CHECK_INTERNAL_H
#define GRAFT_DSL_CHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ast.h"

/* What a builtin's parameter accepts. */
typedef enum ParamClass {
	P_VT,          /* a value, node binding or tensor: rank(x), shape(value(c)) */
	P_VALUE,       /* a value or node binding: uses(x) */
	P_NODE,        /* a node binding: outputs(d) */
	P_CONST,       /* a :const variable: value(c) */
	P_OPTIONAL,    /* an optional variable x?: absent(x) */
	P_INT,
	P_INTS,
	P_DTYPE,
	P_LIST,        /* ints, floats, strings or a rest list: len(l) */
	P_NUMV,        /* a number, value, node binding or tensor: sqrt(v + eps) */
	P_SHAPE,       /* ints, or a value holding them: reshape(x, s) */
} ParamClass;

/* How a builtin's result type is found. */
typedef enum RetRule {
	RET_FIXED,     /* Builtin.ret */
	RET_MATH_F,    /* value if an argument is a value, else float: sqrt(2.0) */
	RET_MATH_J,    /* value if an argument is a value, else int if all are ints, else float */
} RetRule;

typedef struct Builtin {
	const char *name;
	int nparams;
	uint8_t params[3];     /* ParamClass */
	uint8_t rule;          /* RetRule */
	DslType ret;           /* RET_FIXED */
	const char *op;        /* the ONNX op it builds on values (result side), or NULL */
	const char *doc;
} Builtin;

/* builtins.c */
const Builtin *dsl_builtins(size_t *count);
const Builtin *dsl_builtin_lookup(const char *name);
/* The dtype names of the language (float32, int64, ...), or false. */
bool dsl_is_dtype_name(const char *name);

/* "Did you mean": feed candidates, then take the closest one, if it is close
 * enough to be a likely typo (case-insensitive optimal string alignment
 * distance, so a swap of two letters costs 1). */
typedef struct Suggest {
	const char *name;
	const char *best;
	int dist;
} Suggest;
void suggest_init(Suggest *s, const char *name);
void suggest_add(Suggest *s, const char *candidate);
const char *suggest_result(const Suggest *s);     /* NULL if none is close */
int dsl_edit_distance(const char *a, const char *b);

/* The ONNX op an arithmetic operator builds on values: + Add, - Sub, * Mul,
 * / Div, unary - Neg; NULL for the others. */
const char *dsl_exop_onnx(ExprOp op);

#endif
