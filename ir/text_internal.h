/* text_internal.h - what the ONNX text lexer (text_lexer.re), grammar
 * (text_grammar.y) and driver (text_parse.c) share.  The grammar only
 * builds small lists; every action that touches the IR is a text_* function
 * of text_parse.c, so the Lemon file reads as a grammar. */
#ifndef GRAFT_TEXT_INTERNAL_H
#define GRAFT_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ir.h"

/* A token: a span of the source text.  Not NUL-terminated!  n == 0 with
 * z != NULL is an empty span (used for "absent" in optional places). */
typedef struct Token {
	const char *z;
	unsigned n;
} Token;

typedef struct Lexer {
	const char *src, *cur, *end;   /* whole text, next char, end */
	const char *file;
	Diag *d;
} Lexer;

/* Returns a TK_ code, 0 at the end of the text, -1 after reporting a bad token. */
int text_next_token(Lexer *lx, Token *tok);

/* A literal or name as written: kind is the TK_ code (TK_INT, TK_FLOAT,
 * TK_STRING, TK_ID), or 0 for an empty place in a name list. */
typedef struct Lit {
	int kind;
	Token tok;
} Lit;

typedef struct LitList {
	Lit *v;
	unsigned n, cap;
} LitList;

LitList *lits_new(void);
LitList *lits_push(LitList *l, int kind, Token tok);
void lits_free(LitList *l);

/* A value type as written.  kind: TY_NONE (no type), TY_TENSOR (dtype,
 * rank, dims; rank -1 for "float[]"), TY_OTHER (seq/map/optional/sparse). */
enum { TY_NONE, TY_TENSOR, TY_OTHER };
typedef struct TypeSpec {
	int kind;
	int dtype;
	int rank;
	Dim *dims;
	Token *dimtok;      /* where each dim was written (for messages) */
	unsigned cap;
	Token at;           /* the type name */
} TypeSpec;

TypeSpec *type_new(void);
void type_free(TypeSpec *t);

/* A declared value: a graph output or a value_info entry. */
typedef struct Decl {
	TypeSpec *type;     /* NULL: untyped */
	Token name;
	int namekind;       /* TK_ID or TK_STRING */
} Decl;

typedef struct DeclList {
	Decl *v;
	unsigned n, cap;
} DeclList;

DeclList *decls_push(DeclList *l, TypeSpec *type, Lit name);
void decls_free(DeclList *l);

/* One element of an attribute value.  kind: TK_INT, TK_FLOAT, TK_STRING,
 * TK_ID (inf/nan, or an error) with tok valid; AV_TENSOR with t valid;
 * AV_GRAPH with g valid. */
enum { AV_TENSOR = 1000, AV_GRAPH };
typedef struct AttrItem {
	int kind;
	Token tok;
	TensorId t;
	GraphId g;
} AttrItem;

typedef struct ParsedAttr {
	Token name;
	Token type;         /* n == 0: not annotated */
	bool is_list;
	AttrItem *items;
	unsigned n, cap;
	Token at;           /* where the value starts (for messages) */
} ParsedAttr;

typedef struct AttrList {
	ParsedAttr *v;
	unsigned n, cap;
} AttrList;

ParsedAttr *attr_new(Token at);
ParsedAttr *attr_push(ParsedAttr *a, AttrItem it);
void attr_free(ParsedAttr *a);
AttrList *attrs_push(AttrList *l, ParsedAttr *a);   /* takes a */
void attrs_free(AttrList *l);

/* The parser's state (Lemon %extra_context). */
typedef struct TextParser {
	IrModel *m;
	Diag *d;
	const char *src;
	size_t len;
	const char *file;
	GraphId scope;          /* graph whose body is being read, 0 before the main graph */
	bool syntax_failed;     /* stop feeding tokens */
	bool have_opsets;       /* the header gave opset_import */
	int nerrors;
} TextParser;

/* Actions (text_parse.c). */
void text_error(TextParser *p, Token at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void text_syntax_error(TextParser *p, int major, Token tok);
void text_header_int(TextParser *p, Token key, Token val);
void text_header_string(TextParser *p, Token key, Token val);
void text_header_list(TextParser *p, Token key, LitList *kv);
GraphId text_graph_begin(TextParser *p, Lit name);
void text_graph_input(TextParser *p, TypeSpec *type, Lit name, LitList *init);
void text_graph_init(TextParser *p, TypeSpec *type, Lit name, LitList *data);
GraphId text_graph_end(TextParser *p, GraphId g, DeclList *outs, DeclList *infos);
TypeSpec *text_type(TextParser *p, Token name, TypeSpec *dims, bool has_brackets);
TypeSpec *text_type_other(TextParser *p, Token kw, Token key, TypeSpec *elem);
TypeSpec *text_dim(TextParser *p, TypeSpec *dims, Lit dim);
TensorId text_tensor(TextParser *p, TypeSpec *type, LitList *data, Token at);
void text_node(TextParser *p, Lit name, LitList *outs, LitList *op, AttrList *a1,
               LitList *ins, AttrList *a2);

#endif
