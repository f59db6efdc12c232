/* grammar.y - Lemon grammar of the rule language (docs/rule-language.md).
 *
 * The tokenizer (lexer.re) drives this parser from parse.c.  Actions only
 * call the dsl_* builders of parse.c, which allocate the syntax tree of
 * ast.h in the file's arena.
 *
 * Error recovery, so one run reports several errors: a syntax error pops
 * back to the list of items, shifts `error`, and skips tokens up to the
 * next ';'.  The driver also resynchronizes at the next 'rule', 'level' or
 * 'extern' keyword (and at the end) by feeding a ';' first, so a missing
 * ';' loses no following rule.  After each resync the error count is reset,
 * so the next error is reported however close it is.
 *
 * Nonterminals hold arena pointers (nodes and PtrVec lists), never malloc'd
 * memory: the nodes Lemon drops while recovering are freed with the arena,
 * so no %destructor is needed (SQLite needs them because it mallocs). */

%name DslParse                        /* DslParse*: not to clash with the ONNX text parser's TextParse */
%token_prefix TK_                     /* TK_RULE, TK_NAME, ... in dsl_grammar.h */
%token_type {Token}                   /* spans of the source with positions, see parse_internal.h */
%extra_context {DslParser *p}         /* the driver's state; actions call dsl_*(p, ...) */
%syntax_error { dsl_syntax_error(p, yymajor, TOKEN); }
%stack_overflow { dsl_stack_overflow(p); yypParser->yyerrcnt = -1; }
%stack_size 1000                      /* about 250 nested parentheses; more is reported */
%start_symbol file

%include {
#include <assert.h>
#include <stdlib.h>
#include "dsl/parse_internal.h"

static const Token NOTOKEN;             /* an absent optional token (z == NULL) */
}

/* Every token the lexer makes, in one place (also fixes their codes). */
%token RULE LEVEL EXTERN IF SHARED CONST TRUE FALSE NAME OP INT FLOAT STRING
       ARROW DOTDOT ELLIPSIS QQ CONCAT ANDAND OROR EQEQ NE LE GE LT GT ASSIGN NOT
       PLUS MINUS STAR SLASH COMMA LPAREN RPAREN LBRACKET RBRACKET COLON SEMI
       AT HASH TILDE QUESTION.

/* Precedence, loosest first (as in the reference). */
%right QQ.
%left OROR.
%left ANDAND.
%right NOT.
%nonassoc EQEQ NE LT LE GT GE.
%left CONCAT.
%left PLUS MINUS.
%left STAR SLASH.
%right UMINUS.
%left LBRACKET.

%type rulehead {Rule *}
%type lhs {Lhs}
%type pat {Pattern *}
%type node {Pattern *}
%type parg {Pattern *}
%type pargs {PtrVec *}
%type parglist {PtrVec *}
%type pattrs {PtrVec *}
%type poutput {Token}
%type plit {Expr *}
%type plits {PtrVec *}
%type expr {Expr *}
%type result {Expr *}
%type exprs {PtrVec *}
%type attrs {PtrVec *}
%type attr {AttrArg *}
%type eattrs {OpAttrs}
%type types {PtrVec *}
%type cname {Token}

/* ---- file: a list of items ------------------------------------------------ */
file ::= items.
items ::= .
items ::= items item.

item ::= LEVEL NAME(L) SEMI.                               { dsl_level_line(p, L); }
item ::= EXTERN NAME(T) NAME(N) LPAREN RPAREN cname(C) SEMI. { dsl_extern(p, T, N, NULL, C); }
item ::= EXTERN NAME(T) NAME(N) LPAREN types(L) RPAREN cname(C) SEMI. { dsl_extern(p, T, N, L, C); }
item ::= rule.
/* Resynchronization point; reporting starts again at once. */
item ::= error SEMI.                                      { dsl_resynced(p); yypParser->yyerrcnt = -1; }

types(A) ::= NAME(T).                   { A = dsl_vec_push(p, NULL, arena_dup(p->a, &T, sizeof T)); }
types(A) ::= types(L) COMMA NAME(T).    { A = dsl_vec_push(p, L, arena_dup(p->a, &T, sizeof T)); }
cname(A) ::= .                          { A = NOTOKEN; }
cname(A) ::= ASSIGN STRING(S).          { A = S; }

/* ---- rules ---------------------------------------------------------------- */
rule ::= rulehead(R) lhs(L) ARROW(T) result(E) also SEMI(S).  { dsl_rule_end(p, R, L, E, T, S); }
rule ::= rulehead(R) lhs(L) SEMI(S).                     { dsl_rule_end(p, R, L, NULL, NOTOKEN, S); }

rulehead(A) ::= ruleword(R) meta doc COLON.    { A = R; }
%type ruleword {Rule *}
ruleword(A) ::= RULE NAME(N).                  { A = dsl_rule_begin(p, N); }

meta ::= .
meta ::= LBRACKET metas RBRACKET.
metas ::= metaitem.
metas ::= metas COMMA metaitem.
metaitem ::= NAME(K).                          { dsl_meta_word(p, K); }
metaitem ::= NAME(K) INT(V).                   { dsl_meta_int(p, K, NOTOKEN, V); }
metaitem ::= NAME(K) MINUS(M) INT(V).          { dsl_meta_int(p, K, M, V); }
metaitem ::= NAME(K) FLOAT(V).                 { dsl_meta_float(p, K, V); }
metaitem ::= NAME(K) INT(LO) DOTDOT.           { dsl_meta_range(p, K, LO, NOTOKEN); }
metaitem ::= NAME(K) INT(LO) DOTDOT INT(HI).   { dsl_meta_range(p, K, LO, HI); }
metaitem ::= NAME(K) DOTDOT INT(HI).           { dsl_meta_range(p, K, NOTOKEN, HI); }

doc ::= .
doc ::= STRING(S).                             { dsl_rule_doc(p, S); }

lhs(A) ::= parg(P).                            { A = (Lhs){P, NULL}; }
lhs(A) ::= parg(P) IF expr(G).                 { A = (Lhs){P, G}; }

/* ---- patterns ------------------------------------------------------------- */
pat(A) ::= node(N).                            { A = N; }
pat(A) ::= SHARED(S) node(N).                  { A = dsl_pat_bind(p, S, NOTOKEN, N); }
pat(A) ::= NAME(B) AT node(N).                 { A = dsl_pat_bind(p, NOTOKEN, B, N); }
pat(A) ::= SHARED(S) NAME(B) AT node(N).       { A = dsl_pat_bind(p, S, B, N); }

node(A) ::= OP(O) pattrs(T) LPAREN pargs(X) RPAREN(R) poutput(K). { A = dsl_pat_op(p, O, T, X, R, K); }
pattrs(A) ::= .                                { A = NULL; }
pattrs(A) ::= LBRACKET attrs(L) RBRACKET.      { A = L; }
poutput(A) ::= .                               { A = NOTOKEN; }
poutput(A) ::= HASH INT(K).                    { A = K; }

pargs(A) ::= .                                 { A = NULL; }
pargs(A) ::= parglist(L).                      { A = L; }
parglist(A) ::= parg(X).                       { A = dsl_vec_push(p, NULL, X); }
parglist(A) ::= parglist(L) COMMA parg(X).     { A = dsl_vec_push(p, L, X); }

parg(A) ::= pat(X).                            { A = X; }
parg(A) ::= NAME(N).                           { A = dsl_pat_var(p, N, false, false); }
parg(A) ::= NAME(N) QUESTION.                  { A = dsl_pat_var(p, N, false, true); }
parg(A) ::= NAME(N) COLON CONST.               { A = dsl_pat_var(p, N, true, false); }
parg(A) ::= NAME(N) COLON CONST QUESTION.      { A = dsl_pat_var(p, N, true, true); }
parg(A) ::= NAME(N) ELLIPSIS.                  { A = dsl_pat_rest(p, N); }
parg(A) ::= NAME(N) HASH INT(K).               { A = dsl_pat_output(p, N, K); }
parg(A) ::= NAME(N) nots(L).                   { A = dsl_pat_nots(p, dsl_pat_var(p, N, false, false), L); }
parg(A) ::= NAME(N) nots(L) QUESTION.          { A = dsl_pat_nots(p, dsl_pat_var(p, N, false, true), L); }
parg(A) ::= plit(L).                           { A = dsl_pat_literal(p, L); }

/* Negative patterns: x:!Conv:!Gemm (the ops' tokens, copied). */
%type nots {PtrVec *}
nots(A) ::= COLON NOT OP(O).                   { A = dsl_vec_push(p, NULL, arena_dup(p->a, &O, sizeof O)); }
nots(A) ::= nots(L) COLON NOT OP(O).           { A = dsl_vec_push(p, L, arena_dup(p->a, &O, sizeof O)); }

/* Literal operands: numbers (with a tolerance), lists, booleans. */
plit(A) ::= INT(V).                            { A = dsl_lit_number(p, NOTOKEN, V, NOTOKEN, NOTOKEN); }
plit(A) ::= FLOAT(V).                          { A = dsl_lit_number(p, NOTOKEN, V, NOTOKEN, NOTOKEN); }
plit(A) ::= MINUS(M) INT(V).                   { A = dsl_lit_number(p, M, V, NOTOKEN, NOTOKEN); }
plit(A) ::= MINUS(M) FLOAT(V).                 { A = dsl_lit_number(p, M, V, NOTOKEN, NOTOKEN); }
plit(A) ::= INT(V) TILDE(T) tol(E).            { A = dsl_lit_number(p, NOTOKEN, V, T, E); }
plit(A) ::= FLOAT(V) TILDE(T) tol(E).          { A = dsl_lit_number(p, NOTOKEN, V, T, E); }
plit(A) ::= MINUS(M) INT(V) TILDE(T) tol(E).   { A = dsl_lit_number(p, M, V, T, E); }
plit(A) ::= MINUS(M) FLOAT(V) TILDE(T) tol(E). { A = dsl_lit_number(p, M, V, T, E); }
plit(A) ::= LBRACKET(L) RBRACKET(R).           { A = dsl_list(p, L, NULL, R); }
plit(A) ::= LBRACKET(L) plits(X) RBRACKET(R).  { A = dsl_list(p, L, X, R); }
plit(A) ::= TRUE(T).                           { A = dsl_bool(p, T, true); }
plit(A) ::= FALSE(T).                          { A = dsl_bool(p, T, false); }
%type tol {Token}
tol(A) ::= INT(V).                             { A = V; }
tol(A) ::= FLOAT(V).                           { A = V; }
plits(A) ::= plit(X).                          { A = dsl_vec_push(p, NULL, X); }
plits(A) ::= plits(L) COMMA plit(X).           { A = dsl_vec_push(p, L, X); }

/* Attributes, in patterns and results: name = expr. */
attrs(A) ::= attr(X).                          { A = dsl_vec_push(p, NULL, X); }
attrs(A) ::= attrs(L) COMMA attr(X).           { A = dsl_vec_push(p, L, X); }
attr(A) ::= NAME(N) ASSIGN expr(E).            { A = dsl_attr(p, N, E); }

/* ---- expressions: guards, attribute values, results ----------------------- */
result(A) ::= expr(E).                                   { A = E; }
result(A) ::= LPAREN(L) expr(E) COMMA exprs(R) RPAREN.   { A = dsl_tuple(p, L, E, R); }
result(A) ::= NAME(B) AT expr(E).                       { A = E; dsl_result_bind(p, B); }
/* ", s => y#3": the value of node pattern s is replaced by output 3 of result y too */
also ::= .
also ::= also COMMA NAME(S) ARROW NAME(Y) HASH INT(K). { dsl_also(p, S, Y, K); }

expr(A) ::= expr(X) QQ(O) expr(Y).             { A = dsl_default(p, O, X, Y); }
expr(A) ::= expr(X) OROR(O) expr(Y).           { A = dsl_binary(p, O, EX_OR, X, Y); }
expr(A) ::= expr(X) ANDAND(O) expr(Y).         { A = dsl_binary(p, O, EX_AND, X, Y); }
expr(A) ::= NOT(O) expr(X).                    { A = dsl_unary(p, O, EX_NOT, X); }
expr(A) ::= expr(X) EQEQ(O) expr(Y).           { A = dsl_binary(p, O, EX_EQ, X, Y); }
expr(A) ::= expr(X) NE(O) expr(Y).             { A = dsl_binary(p, O, EX_NE, X, Y); }
expr(A) ::= expr(X) LT(O) expr(Y).             { A = dsl_binary(p, O, EX_LT, X, Y); }
expr(A) ::= expr(X) LE(O) expr(Y).             { A = dsl_binary(p, O, EX_LE, X, Y); }
expr(A) ::= expr(X) GT(O) expr(Y).             { A = dsl_binary(p, O, EX_GT, X, Y); }
expr(A) ::= expr(X) GE(O) expr(Y).             { A = dsl_binary(p, O, EX_GE, X, Y); }
expr(A) ::= expr(X) CONCAT(O) expr(Y).         { A = dsl_binary(p, O, EX_CONCAT, X, Y); }
expr(A) ::= expr(X) PLUS(O) expr(Y).           { A = dsl_binary(p, O, EX_ADD, X, Y); }
expr(A) ::= expr(X) MINUS(O) expr(Y).          { A = dsl_binary(p, O, EX_SUB, X, Y); }
expr(A) ::= expr(X) STAR(O) expr(Y).           { A = dsl_binary(p, O, EX_MUL, X, Y); }
expr(A) ::= expr(X) SLASH(O) expr(Y).          { A = dsl_binary(p, O, EX_DIV, X, Y); }
expr(A) ::= MINUS(O) expr(X). [UMINUS]         { A = dsl_unary(p, O, EX_NEG, X); }
expr(A) ::= expr(X) LBRACKET(O) expr(I) RBRACKET. { A = dsl_index(p, O, X, I); }

expr(A) ::= NAME(N).                           { A = dsl_var(p, N); }
expr(A) ::= INT(V).                            { A = dsl_num(p, V, false); }
expr(A) ::= FLOAT(V).                          { A = dsl_num(p, V, true); }
expr(A) ::= STRING(S).                         { A = dsl_string(p, S); }
expr(A) ::= TRUE(T).                           { A = dsl_bool(p, T, true); }
expr(A) ::= FALSE(T).                          { A = dsl_bool(p, T, false); }
expr(A) ::= LBRACKET(L) RBRACKET(R).           { A = dsl_list(p, L, NULL, R); }
expr(A) ::= LBRACKET(L) exprs(X) RBRACKET(R).  { A = dsl_list(p, L, X, R); }
expr(A) ::= NAME(N) LPAREN RPAREN.             { A = dsl_call(p, N, NULL); }
expr(A) ::= NAME(N) LPAREN exprs(X) RPAREN.    { A = dsl_call(p, N, X); }
/* all(i in l: cond), any(i in l: cond): the words are checked in dsl_quant */
expr(A) ::= NAME(F) LPAREN NAME(V) NAME(I) expr(L) COLON expr(B) RPAREN. { A = dsl_quant(p, F, V, I, L, B); }
expr(A) ::= OP(O) eattrs(T) LPAREN RPAREN.     { A = dsl_op(p, O, T, NULL); }
expr(A) ::= OP(O) eattrs(T) LPAREN exprs(X) RPAREN. { A = dsl_op(p, O, T, X); }
expr(A) ::= LPAREN(L) expr(X) RPAREN.          { A = dsl_paren(p, L, X); }

exprs(A) ::= expr(X).                          { A = dsl_vec_push(p, NULL, X); }
exprs(A) ::= exprs(L) COMMA expr(X).           { A = dsl_vec_push(p, L, X); }

/* Op[..d, attr = e](...): copy node d's attributes, then override. */
eattrs(A) ::= .                                { A = (OpAttrs){NULL, NOTOKEN}; }
eattrs(A) ::= LBRACKET attrs(L) RBRACKET.      { A = (OpAttrs){L, NOTOKEN}; }
eattrs(A) ::= LBRACKET DOTDOT NAME(D) RBRACKET. { A = (OpAttrs){NULL, D}; }
eattrs(A) ::= LBRACKET DOTDOT NAME(D) COMMA attrs(L) RBRACKET. { A = (OpAttrs){L, D}; }

%code {
/* ---- what the parser would accept (for "expected ..." in messages) ----------
 * Lemon's compressed tables reduce by default on tokens that are errors, so
 * by the time %syntax_error runs the state no longer tells what was
 * expected.  The driver asks before feeding each token: this simulates the
 * reductions a token would cause on a copy of the top of the stack. */
bool dsl_parser_accepts(void *parser, int major)
{
	yyParser *pp = parser;
	YYACTIONTYPE virt[64];              /* states pushed above the real stack */
	int nvirt = 0;
	yyStackEntry *top = pp->yytos;
	YYACTIONTYPE state = top->stateno;
	for (;;) {
		YYACTIONTYPE act = yy_find_shift_action((YYCODETYPE)major, state);
		if (act == YY_ERROR_ACTION)
			return false;
		if (act < YY_MIN_REDUCE)        /* shift, shift-reduce, accept */
			return true;
		unsigned rule = act - YY_MIN_REDUCE;
		int pop = -yyRuleInfoNRhs[rule];
		if (pop <= nvirt) {
			nvirt -= pop;
		} else {
			top -= pop - nvirt;
			nvirt = 0;
			if (top < pp->yystack)
				return false;
		}
		YYACTIONTYPE below = nvirt ? virt[nvirt - 1] : top->stateno;
		if (nvirt == (int)(sizeof virt / sizeof virt[0]))
			return true;                /* cannot happen in this grammar; assume yes */
		state = virt[nvirt++] = yy_find_reduce_action(below, yyRuleInfoLhs[rule]);
	}
}

int dsl_parser_ntokens(void)
{
	return YYNTOKEN;
}
}
