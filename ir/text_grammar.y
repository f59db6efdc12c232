/* text_grammar.y - Lemon grammar of ONNX's text syntax (see text.h).
 *
 * The tokenizer (text_lexer.re) drives this parser from text_parse.c.  The
 * rules only collect small lists; the IR is built by the text_* actions of
 * text_parse.c.  A graph is opened (its scope created) as soon as
 * "name (" is read, so its inputs, initializers and nodes go straight into
 * the IR, and a body can see the values of the graphs around it.  Graph
 * outputs and value_info entries name values defined later, so they are
 * kept until the closing "}".
 *
 * Error recovery: none inside a model; the first syntax error is reported
 * with its position and the driver stops feeding tokens.  Errors about
 * names and values (unknown value, duplicate name, bad literal) are
 * reported by the actions and parsing goes on, so one run shows them all. */

%name TextParse                       /* TextParse*: not to clash with the rule language's parser */
%token_prefix TK_                     /* TK_ID, TK_INT, ... in text_grammar.h */
%token_type {Token}                   /* spans of the source, see text_internal.h */
%extra_context {TextParser *p}        /* the driver's state; actions call text_*(p, ...) */
%syntax_error { text_syntax_error(p, yymajor, TOKEN); }
%stack_overflow { text_error(p, (Token){p->src, 0}, "text nested too deeply"); p->syntax_failed = true; }
%start_symbol model

%include {
#include <assert.h>
#include <stdlib.h>
#include "ir/text_internal.h"
}

/* Every token the lexer makes, in one place (also fixes their codes). */
%token ID INT FLOAT STRING ARROW LPAREN RPAREN LBRACKET RBRACKET LBRACE RBRACE
       LT GT COMMA COLON EQ DOT QUESTION AT.

/* Pointer nonterminals free what they hold when error handling pops them. */
%type lits {LitList *}
%destructor lits { lits_free($$); }
%type kvs {LitList *}
%destructor kvs { lits_free($$); }
%type tdata {LitList *}
%destructor tdata { lits_free($$); }
%type ids {LitList *}
%destructor ids { lits_free($$); }
%type opname {LitList *}
%destructor opname { lits_free($$); }
%type vtype {TypeSpec *}
%destructor vtype { type_free($$); }
%type ttype {TypeSpec *}
%destructor ttype { type_free($$); }
%type dims {TypeSpec *}
%destructor dims { type_free($$); }
%type outs {DeclList *}
%destructor outs { decls_free($$); }
%type olist {DeclList *}
%destructor olist { decls_free($$); }
%type ginfo {DeclList *}
%destructor ginfo { decls_free($$); }
%type gilist {DeclList *}
%destructor gilist { decls_free($$); }
%type attrs {AttrList *}
%destructor attrs { attrs_free($$); }
%type alist {AttrList *}
%destructor alist { attrs_free($$); }
%type attr {ParsedAttr *}
%destructor attr { attr_free($$); }
%type aval {ParsedAttr *}
%destructor aval { attr_free($$); }
%type aitems {ParsedAttr *}
%destructor aitems { attr_free($$); }
%type aitem {AttrItem}
%type name {Lit}
%type idopt {Lit}
%type nname {Lit}
%type lit {Lit}
%type ghead {GraphId}
%type graph {GraphId}
%type tensor {TensorId}

/* ---- model: optional header, then the main graph ----------------------- */
model ::= header graph.

header ::= .
header ::= LT hitems GT.
hitems ::= hitem.
hitems ::= hitems COMMA hitem.
hitem ::= ID(K) COLON INT(V).                    { text_header_int(p, K, V); }
hitem ::= ID(K) COLON STRING(V).                 { text_header_string(p, K, V); }
hitem ::= ID(K) COLON LBRACKET RBRACKET.         { text_header_list(p, K, NULL); }
hitem ::= ID(K) COLON LBRACKET kvs(L) RBRACKET.  { text_header_list(p, K, L); lits_free(L); }
kvs(A) ::= STRING(K) COLON lit(V).               { A = lits_push(lits_push(NULL, TK_STRING, K), V.kind, V.tok); }
kvs(A) ::= kvs(L) COMMA STRING(K) COLON lit(V).  { A = lits_push(lits_push(L, TK_STRING, K), V.kind, V.tok); }

/* ---- names and literals ------------------------------------------------ */
name(A) ::= ID(T).      { A = (Lit){TK_ID, T}; }
name(A) ::= STRING(T).  { A = (Lit){TK_STRING, T}; }
lit(A) ::= INT(T).      { A = (Lit){TK_INT, T}; }
lit(A) ::= FLOAT(T).    { A = (Lit){TK_FLOAT, T}; }
lit(A) ::= STRING(T).   { A = (Lit){TK_STRING, T}; }
lit(A) ::= ID(T).       { A = (Lit){TK_ID, T}; }

/* ---- types: float, float[], float[N,?,3], seq(...), map(k, v) ---------- */
vtype(A) ::= ttype(T).                                  { A = T; }
vtype(A) ::= ID(K) LPAREN vtype(E) RPAREN.              { A = text_type_other(p, K, (Token){0, 0}, E); }
vtype(A) ::= ID(K) LPAREN ID(KEY) COMMA vtype(E) RPAREN. { A = text_type_other(p, K, KEY, E); }
ttype(A) ::= ID(T).                                     { A = text_type(p, T, NULL, false); }
ttype(A) ::= ID(T) LBRACKET RBRACKET.                   { A = text_type(p, T, NULL, true); }
ttype(A) ::= ID(T) LBRACKET dims(D) RBRACKET.           { A = text_type(p, T, D, true); }
dims(A) ::= name(N).                   { A = text_dim(p, NULL, N); }
dims(A) ::= INT(T).                    { A = text_dim(p, NULL, (Lit){TK_INT, T}); }
dims(A) ::= QUESTION(T).               { A = text_dim(p, NULL, (Lit){TK_QUESTION, T}); }
dims(A) ::= dims(L) COMMA name(N).     { A = text_dim(p, L, N); }
dims(A) ::= dims(L) COMMA INT(T).      { A = text_dim(p, L, (Lit){TK_INT, T}); }
dims(A) ::= dims(L) COMMA QUESTION(T). { A = text_dim(p, L, (Lit){TK_QUESTION, T}); }

/* ---- graphs ------------------------------------------------------------ */
/* "name (" opens the graph's scope before anything inside it is read. */
ghead(A) ::= name(N) LPAREN.     { A = text_graph_begin(p, N); }
graph(A) ::= ghead(G) params RPAREN ARROW LPAREN outs(O) RPAREN ginfo(I) LBRACE nodes RBRACE.
	{ A = text_graph_end(p, G, O, I); }

params ::= .
params ::= plist.
plist ::= param.
plist ::= plist COMMA param.
param ::= name(N).                          { text_graph_input(p, NULL, N, NULL); }
param ::= vtype(T) name(N).                 { text_graph_input(p, T, N, NULL); }
param ::= vtype(T) name(N) EQ tdata(D).     { text_graph_input(p, T, N, D); }

outs(A) ::= .                               { A = NULL; }
outs(A) ::= olist(L).                       { A = L; }
olist(A) ::= name(N).                       { A = decls_push(NULL, NULL, N); }
olist(A) ::= vtype(T) name(N).              { A = decls_push(NULL, T, N); }
olist(A) ::= olist(L) COMMA name(N).        { A = decls_push(L, NULL, N); }
olist(A) ::= olist(L) COMMA vtype(T) name(N). { A = decls_push(L, T, N); }

/* "<float[2] w = {1.0, 2.0}, float[N] t>": initializers and value_info */
ginfo(A) ::= .                              { A = NULL; }
ginfo(A) ::= LT GT.                         { A = NULL; }
ginfo(A) ::= LT gilist(L) GT.               { A = L; }
gilist(A) ::= gitem.                        { A = NULL; }
gilist(A) ::= vtype(T) name(N).             { A = decls_push(NULL, T, N); }
gilist(A) ::= gilist(L) COMMA gitem.        { A = L; }
gilist(A) ::= gilist(L) COMMA vtype(T) name(N). { A = decls_push(L, T, N); }
gitem ::= vtype(T) name(N) EQ tdata(D).     { text_graph_init(p, T, N, D); }

tdata(A) ::= LBRACE RBRACE.                 { A = lits_new(); }
tdata(A) ::= LBRACE lits(L) RBRACE.         { A = L; }
lits(A) ::= lit(V).                         { A = lits_push(NULL, V.kind, V.tok); }
lits(A) ::= lits(L) COMMA lit(V).           { A = lits_push(L, V.kind, V.tok); }

/* ---- nodes: [name] outs = domain.Op <attrs> (ins) <attrs> ------------- */
nodes ::= .
nodes ::= nodes node.
node ::= nname(N) ids(O) EQ opname(OP) attrs(A1) LPAREN ids(I) RPAREN attrs(A2).
	{ text_node(p, N, O, OP, A1, I, A2); }

nname(A) ::= .                              { A = (Lit){0, {0, 0}}; }
nname(A) ::= LBRACKET name(N) RBRACKET.     { A = N; }

/* Names with empty places: "a, , c"; an empty last place is dropped by
 * text_node (ONNX: "Op(x,)" has one input), "" is always kept. */
ids(A) ::= idopt(V).                        { A = lits_push(NULL, V.kind, V.tok); }
ids(A) ::= ids(L) COMMA idopt(V).           { A = lits_push(L, V.kind, V.tok); }
idopt(A) ::= .                              { A = (Lit){0, {0, 0}}; }
idopt(A) ::= name(N).                       { A = N; }

opname(A) ::= ID(T).                        { A = lits_push(NULL, TK_ID, T); }
opname(A) ::= opname(L) DOT ID(T).          { A = lits_push(L, TK_ID, T); }

/* ---- attributes -------------------------------------------------------- */
attrs(A) ::= .                              { A = NULL; }
attrs(A) ::= LT alist(L) GT.                { A = L; }
alist(A) ::= attr(X).                       { A = attrs_push(NULL, X); }
alist(A) ::= alist(L) COMMA attr(X).        { A = attrs_push(L, X); }
attr(A) ::= ID(N) EQ aval(V).               { A = V; A->name = N; }
attr(A) ::= ID(N) COLON ID(T) EQ aval(V).   { A = V; A->name = N; A->type = T; }
attr(A) ::= ID(N) EQ AT(T) ID.              { A = attr_new(T); A->name = N; text_error(p, T, "attribute references ('@name') are not supported"); }
attr(A) ::= ID(N) COLON ID EQ AT(T) ID.     { A = attr_new(T); A->name = N; text_error(p, T, "attribute references ('@name') are not supported"); }

aval(A) ::= aitem(X).                       { A = attr_push(attr_new(X.tok), X); }
aval(A) ::= LBRACKET(T) RBRACKET.           { A = attr_new(T); A->is_list = true; }
aval(A) ::= LBRACKET(T) aitems(L) RBRACKET. { A = L; A->is_list = true; A->at = T; }
aitems(A) ::= aitem(X).                     { A = attr_push(attr_new(X.tok), X); }
aitems(A) ::= aitems(L) COMMA aitem(X).     { A = attr_push(L, X); }

aitem(A) ::= lit(V).                        { A = (AttrItem){V.kind, V.tok, 0, 0}; }
aitem(A) ::= tensor(T).                     { A = (AttrItem){AV_TENSOR, {0, 0}, T, 0}; }
aitem(A) ::= graph(G).                      { A = (AttrItem){AV_GRAPH, {0, 0}, 0, G}; }

/* "float[2] {1.0, 2.0}", with an optional tensor name and "=" (ignored: the
 * IR keeps no names for attribute tensors). */
tensor(A) ::= ttype(T) tdata(D).            { A = text_tensor(p, T, D, T->at); }
tensor(A) ::= ttype(T) name tdata(D).       { A = text_tensor(p, T, D, T->at); }
tensor(A) ::= ttype(T) EQ tdata(D).         { A = text_tensor(p, T, D, T->at); }
tensor(A) ::= ttype(T) name EQ tdata(D).    { A = text_tensor(p, T, D, T->at); }
