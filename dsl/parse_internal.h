/* parse_internal.h - what the rule language's lexer (lexer.re), grammar
 * (grammar.y) and driver (parse.c) share.  The grammar's actions are small
 * calls of dsl_* builders in parse.c, so grammar.y reads as a grammar.
 *
 * Memory: every node and every list the grammar builds lives in the file's
 * arena, so Lemon's error recovery, which drops half-built nonterminals,
 * can leak nothing (see the note in grammar.y). */
#ifndef GRAFT_DSL_PARSE_INTERNAL_H
#define GRAFT_DSL_PARSE_INTERNAL_H

#include <stdbool.h>

#include "ast.h"

/* A token: a span of the source, not NUL-terminated!  pos is where it
 * starts (line, column, width in columns, byte offset).  s: for TK_STRING,
 * the decoded text (in the arena); NULL otherwise. */
typedef struct Token {
	const char *z;
	unsigned n;
	SrcPos pos;
	const char *s;
} Token;

/* The lexer's state.  src is a NUL-terminated copy of the text (re2c's
 * sentinel); positions are computed incrementally from `mark`, since tokens
 * and errors come in source order. */
typedef struct Lexer {
	const char *src, *cur, *end;
	const RuleFile *f;          /* for messages and the arena */
	Diag *d;
	int nerrors;                /* lexical errors so far */
	const char *mark;           /* position whose line/col is known: */
	int mark_line, mark_col;
} Lexer;

/* Returns a TK_ code, 0 at the end of the text, -1 after reporting a bad
 * token (the driver skips it). */
int dsl_next_token(Lexer *lx, Token *tok);
/* Line, column and caret width of [at, at+n) (n may be 0). */
SrcPos dsl_pos(Lexer *lx, const char *at, unsigned n);
/* Length of the UTF-8 sequence at s (s < end): sets *ok; when invalid, the
 * length of the maximal ill-formed part (Unicode's "maximal subpart"), >= 1. */
int dsl_utf8_len(const unsigned char *s, const unsigned char *end, bool *ok);

/* A growable array of pointers in the arena (old blocks are left to it). */
typedef struct PtrVec {
	void **v;
	int n, cap;
} PtrVec;

/* The left side of a rule: pattern and optional guard. */
typedef struct Lhs {
	Pattern *pat;
	Expr *guard;
} Lhs;

/* What may follow an op name in a result: [..d, attr = e, ...]. */
typedef struct OpAttrs {
	PtrVec *attrs;              /* of AttrArg *, NULL if none */
	Token copy;                 /* copy.z != NULL: [..d] */
} OpAttrs;

/* Maximum nesting of an expression (left-leaning chains such as
 * a + b + c ... do not grow the parser's stack, so they are counted here);
 * later passes recurse over the tree. */
#define DSL_MAX_DEPTH 200

/* The parser's state (Lemon %extra_context). */
typedef struct DslParser {
	RuleFile *f;
	Arena *a;
	Diag *d;
	Lexer *lx;
	PtrVec *rules, *externs;
	Level cur_level;            /* from the last 'level' line */
	SrcPos cur_level_pos;
	bool seen_level;
	Rule *rule;                 /* the rule being read (NULL between rules) */
	bool rule_bad;              /* it had an error that drops it (too deep) */
	bool in_error;              /* a syntax error is being recovered from */
	int lost;                   /* bad tokens the lexer dropped so far */
	int lost_at_item;           /* ... when the current item began */
	bool overflow;              /* the parser's stack overflowed: skip to the next item */
	Token look;                 /* the token being fed */
	Token prev;                 /* the previous token and its code */
	int prev_code;
	SrcPos prev_end;            /* just after the previous token */
	bool expected[128];         /* tokens the parser would have taken (set before an error) */
} DslParser;

/* Lemon's entry points (grammar.c) and the helpers in its %code section. */
void *DslParseAlloc(void *(*alloc)(size_t), DslParser *p);
void DslParse(void *parser, int major, Token minor);
void DslParseFree(void *parser, void (*dealloc)(void *));
bool dsl_parser_accepts(void *parser, int major);
int dsl_parser_ntokens(void);

/* Actions (parse.c). */
void dsl_syntax_error(DslParser *p, int major, Token tok);
void dsl_stack_overflow(DslParser *p);
void dsl_resynced(DslParser *p);
PtrVec *dsl_vec_push(DslParser *p, PtrVec *v, void *x);
void dsl_level_line(DslParser *p, Token name);
void dsl_extern(DslParser *p, Token ret, Token name, PtrVec *params, Token cname);
Rule *dsl_rule_begin(DslParser *p, Token name);
void dsl_rule_end(DslParser *p, Rule *r, Lhs lhs, Expr *rhs, Token arrow, Token semi);
/* "y @" before a rule's result; ", s => y#k" after it (dsl/ast.h, RuleAlso) */
void dsl_result_bind(DslParser *p, Token name);
void dsl_also(DslParser *p, Token s, Token y, Token k);
void dsl_meta_word(DslParser *p, Token key);
void dsl_meta_int(DslParser *p, Token key, Token minus, Token value);
void dsl_meta_float(DslParser *p, Token key, Token value);
void dsl_meta_range(DslParser *p, Token key, Token lo, Token hi);
void dsl_rule_doc(DslParser *p, Token doc);

Pattern *dsl_pat_op(DslParser *p, Token op, PtrVec *attrs, PtrVec *args, Token rparen, Token out);
Pattern *dsl_pat_bind(DslParser *p, Token shared, Token name, Pattern *node);
Pattern *dsl_pat_var(DslParser *p, Token name, bool is_const, bool optional);
Pattern *dsl_pat_rest(DslParser *p, Token name);
Pattern *dsl_pat_nots(DslParser *p, Pattern *var, PtrVec *ops);
Pattern *dsl_pat_output(DslParser *p, Token name, Token k);
Pattern *dsl_pat_literal(DslParser *p, Expr *lit);
Expr *dsl_lit_number(DslParser *p, Token minus, Token num, Token tilde, Token tol);

AttrArg *dsl_attr(DslParser *p, Token name, Expr *value);
Expr *dsl_num(DslParser *p, Token num, bool is_float);
Expr *dsl_bool(DslParser *p, Token t, bool v);
Expr *dsl_string(DslParser *p, Token t);
Expr *dsl_var(DslParser *p, Token name);
Expr *dsl_list(DslParser *p, Token lbracket, PtrVec *items, Token rbracket);
Expr *dsl_call(DslParser *p, Token name, PtrVec *args);
Expr *dsl_op(DslParser *p, Token op, OpAttrs attrs, PtrVec *args);
Expr *dsl_unary(DslParser *p, Token op, ExprOp kind, Expr *x);
Expr *dsl_binary(DslParser *p, Token op, ExprOp kind, Expr *l, Expr *r);
Expr *dsl_index(DslParser *p, Token lbracket, Expr *x, Expr *i);
Expr *dsl_default(DslParser *p, Token op, Expr *x, Expr *dflt);
Expr *dsl_tuple(DslParser *p, Token lparen, Expr *first, PtrVec *rest);
Expr *dsl_quant(DslParser *p, Token fn, Token var, Token in, Expr *list, Expr *body);
Expr *dsl_paren(DslParser *p, Token lparen, Expr *x);

#endif
