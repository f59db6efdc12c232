/* text_parse.c - reads ONNX's text syntax into the IR (see text.h).
 *
 * The driver loop feeds the tokens of text_lexer.re to the Lemon parser of
 * text_grammar.y; the grammar's actions are the text_* functions below,
 * which build the model through the IR's building API (ir_graph_new,
 * ir_add_input, ir_add_initializer, ir_node_new, ir_attr_set_*, ...).
 * Errors go to the Diag as "file:line:col: error: ..." with the line and a
 * caret; the model is only returned if there were none. */
#include "text.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "gen/onnx.pb-c.h"
#include "gen/text_grammar.h"
#include "text_internal.h"

/* A header-less model gets these (see text.h). */
enum { DEFAULT_IR_VERSION = 8, DEFAULT_OPSET = 17 };

/* Lemon's entry points (text_grammar.c). */
void *TextParseAlloc(void *(*alloc)(size_t), TextParser *p);
void TextParse(void *parser, int major, Token minor);
void TextParseFree(void *parser, void (*dealloc)(void *));

/* ---- small lists the grammar builds --------------------------------------- */

static void *grow(void *v, unsigned *cap, unsigned need, size_t elem)
{
	if (need <= *cap)
		return v;
	unsigned c = *cap ? *cap * 2 : 4;
	while (c < need)
		c *= 2;
	void *q = realloc(v, (size_t)c * elem);
	if (!q)
		abort();
	*cap = c;
	return q;
}

LitList *lits_new(void)
{
	LitList *l = calloc(1, sizeof *l);
	if (!l)
		abort();
	return l;
}

LitList *lits_push(LitList *l, int kind, Token tok)
{
	if (!l)
		l = lits_new();
	l->v = grow(l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = (Lit){kind, tok};
	return l;
}

void lits_free(LitList *l)
{
	if (l) {
		free(l->v);
		free(l);
	}
}

TypeSpec *type_new(void)
{
	TypeSpec *t = calloc(1, sizeof *t);
	if (!t)
		abort();
	return t;
}

void type_free(TypeSpec *t)
{
	if (t) {
		free(t->dims);
		free(t->dimtok);
		free(t);
	}
}

DeclList *decls_push(DeclList *l, TypeSpec *type, Lit name)
{
	if (!l) {
		l = calloc(1, sizeof *l);
		if (!l)
			abort();
	}
	l->v = grow(l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = (Decl){type, name.tok, name.kind};
	return l;
}

void decls_free(DeclList *l)
{
	if (!l)
		return;
	for (unsigned i = 0; i < l->n; i++)
		type_free(l->v[i].type);
	free(l->v);
	free(l);
}

ParsedAttr *attr_new(Token at)
{
	ParsedAttr *a = calloc(1, sizeof *a);
	if (!a)
		abort();
	a->at = at;
	return a;
}

ParsedAttr *attr_push(ParsedAttr *a, AttrItem it)
{
	a->items = grow(a->items, &a->cap, a->n + 1, sizeof *a->items);
	a->items[a->n++] = it;
	return a;
}

void attr_free(ParsedAttr *a)
{
	if (a) {
		free(a->items);
		free(a);
	}
}

AttrList *attrs_push(AttrList *l, ParsedAttr *a)
{
	if (!l) {
		l = calloc(1, sizeof *l);
		if (!l)
			abort();
	}
	l->v = grow(l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = *a;
	free(a);   /* its items now belong to l->v[n-1] */
	return l;
}

void attrs_free(AttrList *l)
{
	if (!l)
		return;
	for (unsigned i = 0; i < l->n; i++)
		free(l->v[i].items);
	free(l->v);
	free(l);
}

/* ---- messages ------------------------------------------------------------- */

static void position(const TextParser *p, const char *at, int *line, int *col)
{
	*line = 1;
	*col = 1;
	if (!at)
		return;
	for (const char *s = p->src; s < at && s < p->src + p->len; s++) {
		if (*s == '\n') {
			++*line;
			*col = 1;
		} else {
			++*col;
		}
	}
}

void text_error(TextParser *p, Token at, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	int line, col;
	position(p, at.z, &line, &col);
	diag_at(p->d, DIAG_ERROR, p->file, line, col, at.n ? (int)at.n : 1, p->src, p->len, "%s", msg);
	p->nerrors++;
}

void text_syntax_error(TextParser *p, int major, Token tok)
{
	if (p->syntax_failed)
		return;
	if (major == 0)
		text_error(p, (Token){p->src + p->len, 0}, "unexpected end of input");
	else
		text_error(p, tok, "unexpected '%.*s'", tok.n > 40 ? 40 : (int)tok.n, tok.z);
	p->syntax_failed = true;
}

/* ---- names and literals --------------------------------------------------- */

static bool tok_is(Token t, const char *s)
{
	return strlen(s) == t.n && memcmp(t.z, s, t.n) == 0;
}

/* The text of a string literal without quotes and escapes (into the model's
 * arena); *len receives its length (strings may hold NULs). */
static char *unquote(TextParser *p, Token t, size_t *len)
{
	char *s = arena_alloc(p->m->arena, t.n);
	size_t n = 0;
	for (unsigned i = 1; i + 1 < t.n; i++) {
		if (t.z[i] == '\\' && i + 2 < t.n)
			i++;
		s[n++] = t.z[i];
	}
	s[n] = 0;
	if (len)
		*len = n;
	return s;
}

/* A name (identifier or quoted) as a C string in the model's arena. */
static const char *lit_str(TextParser *p, Lit l)
{
	if (l.kind == TK_STRING)
		return unquote(p, l.tok, NULL);
	return arena_strndup(p->m->arena, l.tok.z, l.tok.n);
}

static bool is_special_float(Token t, double *v)
{
	const char *s = t.z;
	unsigned n = t.n;
	bool neg = n && *s == '-';
	if (neg)
		s++, n--;
	if ((n == 3 && strncasecmp(s, "inf", 3) == 0) || (n == 8 && strncasecmp(s, "infinity", 8) == 0))
		*v = neg ? -INFINITY : INFINITY;
	else if (n == 3 && strncasecmp(s, "nan", 3) == 0)
		*v = neg ? -NAN : NAN;
	else
		return false;
	return true;
}

/* A number literal as double (for float/double), exactly as strtod reads it. */
static bool lit_double(TextParser *p, Lit l, double *v)
{
	if ((l.kind == TK_ID || l.kind == TK_FLOAT) && is_special_float(l.tok, v))
		return true;
	if (l.kind != TK_INT && l.kind != TK_FLOAT) {
		text_error(p, l.tok, "expected a number, not '%.*s'", (int)l.tok.n, l.tok.z);
		return false;
	}
	char buf[128];
	snprintf(buf, sizeof buf, "%.*s", (int)l.tok.n, l.tok.z);
	*v = strtod(buf, NULL);
	if (isinf(*v)) {
		text_error(p, l.tok, "number out of range");
		return false;
	}
	return true;
}

static bool lit_float(TextParser *p, Lit l, float *v)
{
	double d;
	if ((l.kind == TK_ID || l.kind == TK_FLOAT) && is_special_float(l.tok, &d)) {
		*v = (float)d;
		return true;
	}
	if (l.kind != TK_INT && l.kind != TK_FLOAT) {
		text_error(p, l.tok, "expected a number, not '%.*s'", (int)l.tok.n, l.tok.z);
		return false;
	}
	/* strtof, not (float)strtod: rounding twice could miss the nearest float */
	char buf[128];
	snprintf(buf, sizeof buf, "%.*s", (int)l.tok.n, l.tok.z);
	*v = strtof(buf, NULL);
	if (isinf(*v)) {
		text_error(p, l.tok, "number out of range for float");
		return false;
	}
	return true;
}

/* An integer literal within [lo, hi] (signed) or, if is_unsigned, [0, UINT64_MAX]. */
static bool lit_int(TextParser *p, Lit l, int64_t lo, int64_t hi, bool is_unsigned, int64_t *v)
{
	if (l.kind != TK_INT) {
		text_error(p, l.tok, "expected an integer, not '%.*s'", (int)l.tok.n, l.tok.z);
		return false;
	}
	char buf[64];
	snprintf(buf, sizeof buf, "%.*s", (int)l.tok.n, l.tok.z);
	errno = 0;
	if (is_unsigned) {
		if (buf[0] == '-')
			goto range;
		uint64_t u = strtoull(buf, NULL, 10);
		if (errno)
			goto range;
		*v = (int64_t)u;
		return true;
	}
	long long x = strtoll(buf, NULL, 10);
	if (errno || x < lo || x > hi)
		goto range;
	*v = x;
	return true;
range:
	text_error(p, l.tok, "integer out of range");
	return false;
}

/* ---- header --------------------------------------------------------------- */

void text_header_int(TextParser *p, Token key, Token val)
{
	int64_t v;
	if (tok_is(key, "ir_version")) {
		if (lit_int(p, (Lit){TK_INT, val}, INT64_MIN, INT64_MAX, false, &v))
			p->m->ir_version = v;
	} else if (tok_is(key, "model_version")) {
		/* accepted, not kept: the IR has no place for it */
	} else {
		text_error(p, key, "unknown header field '%.*s'", (int)key.n, key.z);
	}
}

void text_header_string(TextParser *p, Token key, Token val)
{
	if (!tok_is(key, "producer_name") && !tok_is(key, "producer_version") &&
	    !tok_is(key, "domain") && !tok_is(key, "doc_string"))
		text_error(p, key, "unknown header field '%.*s'", (int)key.n, key.z);
}

void text_header_list(TextParser *p, Token key, LitList *kv)
{
	if (tok_is(key, "metadata_props"))
		return;
	if (!tok_is(key, "opset_import")) {
		text_error(p, key, "unknown header field '%.*s'", (int)key.n, key.z);
		return;
	}
	p->have_opsets = true;
	for (unsigned i = 0; kv && i + 1 < kv->n; i += 2) {
		int64_t version;
		if (!lit_int(p, kv->v[i + 1], 0, INT64_MAX, false, &version))
			continue;
		const char *domain = unquote(p, kv->v[i].tok, NULL);
		if (ir_opset(p->m, domain))
			text_error(p, kv->v[i].tok, "opset of domain '%s' imported twice", domain);
		else
			ir_set_opset(p->m, domain, version);
	}
}

/* ---- types ---------------------------------------------------------------- */

TypeSpec *text_type(TextParser *p, Token name, TypeSpec *dims, bool has_brackets)
{
	TypeSpec *t = dims ? dims : type_new();
	t->kind = TY_TENSOR;
	t->at = name;
	char buf[32];
	snprintf(buf, sizeof buf, "%.*s", name.n < 31 ? (int)name.n : 31, name.z);
	t->dtype = name.n < 31 ? dtype_from_name(buf) : DT_UNDEFINED;
	if (!t->dtype)
		text_error(p, name, "unknown type name '%.*s'", (int)name.n, name.z);
	if (!dims)
		t->rank = has_brackets ? -1 : 0;
	return t;
}

TypeSpec *text_type_other(TextParser *p, Token kw, Token key, TypeSpec *elem)
{
	bool ok = key.z ? tok_is(kw, "map")
	                : tok_is(kw, "seq") || tok_is(kw, "optional") || tok_is(kw, "sparse_tensor");
	if (!ok)
		text_error(p, kw, "unknown type name '%.*s'", (int)kw.n, kw.z);
	type_free(elem);
	TypeSpec *t = type_new();
	t->kind = TY_OTHER;
	t->rank = -1;
	t->at = kw;
	return t;
}

TypeSpec *text_dim(TextParser *p, TypeSpec *t, Lit dim)
{
	if (!t)
		t = type_new();
	if (t->rank == IR_MAX_RANK)   /* said once, at the first dim too many */
		text_error(p, dim.tok, "rank %d is over graft's limit of %d", t->rank + 1, IR_MAX_RANK);
	t->dims = grow(t->dims, &t->cap, (unsigned)t->rank + 1, sizeof *t->dims);
	t->dimtok = realloc(t->dimtok, sizeof *t->dimtok * t->cap);   /* grows alongside */
	if (!t->dimtok)
		abort();
	Dim *d = &t->dims[t->rank];
	t->dimtok[t->rank] = dim.tok;
	d->size = -1;
	d->param = NULL;
	if (dim.kind == TK_INT) {
		int64_t v;
		if (lit_int(p, dim, 0, INT64_MAX, false, &v))
			d->size = v;
	} else if (dim.kind != TK_QUESTION) {
		d->param = lit_str(p, dim);
	}
	t->rank++;
	return t;
}

/* ---- tensors -------------------------------------------------------------- */

/* A string tensor: the IR keeps strings in a TensorProto (see IrTensor), and
 * has no constructor for one, so build the proto in the model's arena. */
static TensorId string_tensor(TextParser *p, const int64_t *dims, int rank, LitList *data, const char *name)
{
	IrModel *m = p->m;
	Onnx__TensorProto *tp = arena_alloc(m->arena, sizeof *tp);
	onnx__tensor_proto__init(tp);
	tp->has_data_type = 1;
	tp->data_type = DT_STRING;
	tp->n_dims = (size_t)rank;
	tp->dims = arena_dup(m->arena, dims, sizeof *dims * (size_t)(rank ? rank : 1));
	tp->name = (char *)(name ? name : "");
	tp->n_string_data = data->n;
	tp->string_data = arena_alloc(m->arena, sizeof *tp->string_data * (data->n ? data->n : 1));
	for (unsigned i = 0; i < data->n; i++) {
		if (data->v[i].kind != TK_STRING) {
			text_error(p, data->v[i].tok, "expected a string, not '%.*s'",
			           (int)data->v[i].tok.n, data->v[i].tok.z);
			return 0;
		}
		size_t len;
		tp->string_data[i].data = (uint8_t *)unquote(p, data->v[i].tok, &len);
		tp->string_data[i].len = len;
	}
	TensorId t = ir_tensor_new(m, DT_STRING, dims, rank, NULL, 0);
	ir_tensor(m, t)->proto = tp;
	ir_tensor(m, t)->dirty = false;   /* the saver writes tp as it is */
	return t;
}

/* Convert one literal to element i of a tensor of type dt, stored at out. */
static bool store_elem(TextParser *p, int dt, Lit l, uint8_t *out, int64_t i)
{
	int64_t v = 0;
	float f;
	double d;
	switch (dt) {
	case DT_FLOAT: case DT_COMPLEX64:
		if (!lit_float(p, l, &f))
			return false;
		memcpy(out + 4 * i, &f, 4);
		return true;
	case DT_DOUBLE: case DT_COMPLEX128:
		if (!lit_double(p, l, &d))
			return false;
		memcpy(out + 8 * i, &d, 8);
		return true;
	case DT_INT8: if (!lit_int(p, l, INT8_MIN, INT8_MAX, false, &v)) return false; break;
	case DT_INT16: if (!lit_int(p, l, INT16_MIN, INT16_MAX, false, &v)) return false; break;
	case DT_INT32: if (!lit_int(p, l, INT32_MIN, INT32_MAX, false, &v)) return false; break;
	case DT_INT64: if (!lit_int(p, l, INT64_MIN, INT64_MAX, false, &v)) return false; break;
	case DT_UINT64: if (!lit_int(p, l, 0, 0, true, &v)) return false; break;
	case DT_UINT32: if (!lit_int(p, l, 0, UINT32_MAX, false, &v)) return false; break;
	case DT_UINT16: case DT_FLOAT16: case DT_BFLOAT16:
		if (!lit_int(p, l, 0, UINT16_MAX, false, &v)) return false;
		break;
	case DT_BOOL: if (!lit_int(p, l, 0, 1, false, &v)) return false; break;
	case DT_INT4: if (!lit_int(p, l, -8, 7, false, &v)) return false; break;
	case DT_UINT4: case DT_FLOAT4E2M1: if (!lit_int(p, l, 0, 15, false, &v)) return false; break;
	default: /* uint8 and the float8 types (bit patterns) */
		if (!lit_int(p, l, 0, UINT8_MAX, false, &v)) return false;
		break;
	}
	int bits = dtype_bits(dt);
	if (bits == 4) {
		/* two per byte, the first in the low nibble (as ONNX packs them) */
		out[i / 2] |= (uint8_t)((v & 15) << (i % 2 ? 4 : 0));
		return true;
	}
	uint64_t u = (uint64_t)v;
	for (int b = 0; b < bits / 8; b++)   /* little-endian, as raw_data */
		out[i * (bits / 8) + b] = (uint8_t)(u >> (8 * b));
	return true;
}

/* A tensor of type `type` holding `data`; takes both.  0 after an error. */
static TensorId make_tensor(TextParser *p, TypeSpec *type, LitList *data, Token at, const char *name)
{
	TensorId result = 0;
	int64_t *dims = NULL;
	if (!type || type->kind != TY_TENSOR) {
		text_error(p, type ? type->at : at, "a tensor value needs a tensor type");
		goto out;
	}
	if (!type->dtype)
		goto out;   /* reported */
	if (type->rank < 0) {
		text_error(p, type->at, "a tensor value needs its dimensions");
		goto out;
	}
	dims = calloc((size_t)type->rank + 1, sizeof *dims);
	if (!dims)
		abort();
	for (int i = 0; i < type->rank; i++) {
		if (type->dims[i].size < 0) {
			text_error(p, type->dimtok[i], "a tensor's dimensions must be numbers");
			goto out;
		}
		dims[i] = type->dims[i].size;
	}
	int64_t numel = ir_numel(dims, type->rank);
	if (numel < 0 || numel > (int64_t)1 << 40) {
		text_error(p, type->at, "tensor too large");
		goto out;
	}
	int dt = type->dtype;
	int64_t nvalues = numel * (dt == DT_COMPLEX64 || dt == DT_COMPLEX128 ? 2 : 1);
	if ((int64_t)data->n != nvalues) {
		text_error(p, type->at, "tensor of %" PRId64 " element%s has %u value%s", numel,
		           numel == 1 ? "" : "s", data->n, data->n == 1 ? "" : "s");
		goto out;
	}
	if (dt == DT_STRING) {
		result = string_tensor(p, dims, type->rank, data, name);
		goto out;
	}
	int bits = dtype_bits(dt);
	if (!bits) {
		text_error(p, type->at, "tensors of type %s are not supported", dtype_name(dt));
		goto out;
	}
	size_t nbytes = (size_t)((numel * bits + 7) / 8);
	uint8_t *bytes = calloc(nbytes ? nbytes : 1, 1);
	if (!bytes)
		abort();
	bool ok = true;
	for (unsigned i = 0; i < data->n; i++)
		ok = store_elem(p, dt, data->v[i], bytes, i) && ok;
	if (ok)
		result = ir_tensor_new(p->m, dt, dims, type->rank, bytes, nbytes);
	free(bytes);
out:
	free(dims);
	type_free(type);
	lits_free(data);
	return result;
}

TensorId text_tensor(TextParser *p, TypeSpec *type, LitList *data, Token at)
{
	return make_tensor(p, type, data, at, NULL);
}

/* ---- graphs --------------------------------------------------------------- */

GraphId text_graph_begin(TextParser *p, Lit name)
{
	GraphId g = ir_graph_new(p->m, p->scope, lit_str(p, name));
	p->scope = g;
	return g;
}

/* dtype and shape for the IR from a parsed type (NULL: untyped). */
static int ir_type(const TypeSpec *t, Shape *shape)
{
	shape->rank = -1;
	shape->dims = NULL;
	if (!t || t->kind != TY_TENSOR)
		return DT_UNDEFINED;
	shape->rank = t->rank;
	shape->dims = t->dims;
	return t->dtype;
}

/* A value defined in graph g itself (not an enclosing one). */
static ValueId own_value(TextParser *p, GraphId g, const char *name)
{
	ValueId v = ir_lookup(p->m, g, name);
	return v && ir_value(p->m, v)->graph == g ? v : 0;
}

void text_graph_input(TextParser *p, TypeSpec *type, Lit name, LitList *init)
{
	const char *nm = lit_str(p, name);
	Shape shape;
	int dt = ir_type(type, &shape);
	if (own_value(p, p->scope, nm)) {
		text_error(p, name.tok, "duplicate value name '%s'", nm);
	} else {
		ir_add_input(p->m, p->scope, nm, dt, &shape);
		if (init) {
			TensorId t = make_tensor(p, type, init, name.tok, nm);
			type = NULL;
			init = NULL;
			if (t)
				ir_add_initializer(p->m, p->scope, nm, t);
		}
	}
	type_free(type);
	lits_free(init);
}

void text_graph_init(TextParser *p, TypeSpec *type, Lit name, LitList *data)
{
	const char *nm = lit_str(p, name);
	ValueId v = own_value(p, p->scope, nm);
	if (v && (!ir_value(p->m, v)->is_input || ir_value(p->m, v)->tensor)) {
		text_error(p, name.tok, "duplicate value name '%s'", nm);
		type_free(type);
		lits_free(data);
		return;
	}
	TensorId t = make_tensor(p, type, data, name.tok, nm);
	if (t)
		ir_add_initializer(p->m, p->scope, nm, t);
}

GraphId text_graph_end(TextParser *p, GraphId g, DeclList *outs, DeclList *infos)
{
	IrModel *m = p->m;
	for (unsigned i = 0; outs && i < outs->n; i++) {
		Decl *o = &outs->v[i];
		const char *nm = lit_str(p, (Lit){o->namekind, o->name});
		ValueId v = ir_lookup(m, g, nm);
		if (!v) {
			text_error(p, o->name, "'%s' names no value", nm);
			continue;
		}
		ir_add_output(m, g, v);
		Shape shape;
		int dt = ir_type(o->type, &shape);
		if (dt)
			ir_value_set_type(m, v, dt, &shape);
	}
	for (unsigned i = 0; infos && i < infos->n; i++) {
		Decl *o = &infos->v[i];
		const char *nm = lit_str(p, (Lit){o->namekind, o->name});
		ValueId v = own_value(p, g, nm);
		if (!v) {
			text_error(p, o->name, "'%s' names no value", nm);
			continue;
		}
		Shape shape;
		int dt = ir_type(o->type, &shape);
		if (dt)
			ir_value_set_type(m, v, dt, &shape);
	}
	decls_free(outs);
	decls_free(infos);
	p->scope = ir_graph(m, g)->parent;
	return g;
}

/* ---- nodes and attributes ------------------------------------------------- */

static const char *const attr_type_names[] = {
	[ATTR_FLOAT] = "float", [ATTR_INT] = "int", [ATTR_STRING] = "string",
	[ATTR_TENSOR] = "tensor", [ATTR_GRAPH] = "graph", [ATTR_FLOATS] = "floats",
	[ATTR_INTS] = "ints", [ATTR_STRINGS] = "strings", [ATTR_TENSORS] = "tensors",
	[ATTR_GRAPHS] = "graphs", [ATTR_SPARSE_TENSOR] = "sparse_tensor",
	[ATTR_SPARSE_TENSORS] = "sparse_tensors", [ATTR_TYPE_PROTO] = "type_proto",
	[ATTR_TYPE_PROTOS] = "type_protos",
};

static int attr_type_lookup(Token t)
{
	for (int i = 1; i < (int)(sizeof attr_type_names / sizeof *attr_type_names); i++)
		if (attr_type_names[i] && tok_is(t, attr_type_names[i]))
			return i;
	return ATTR_UNDEFINED;
}

/* The attribute type of one item (FLOAT, INT, STRING, TENSOR, GRAPH), 0 if bad. */
static int item_type(TextParser *p, const AttrItem *it)
{
	double d;
	switch (it->kind) {
	case TK_INT: return ATTR_INT;
	case TK_FLOAT: return ATTR_FLOAT;
	case TK_STRING: return ATTR_STRING;
	case AV_TENSOR: return it->t ? ATTR_TENSOR : 0;
	case AV_GRAPH: return ATTR_GRAPH;
	case TK_ID:
		if (is_special_float(it->tok, &d))
			return ATTR_FLOAT;
		if (it->tok.n < 32) {
			char buf[32];
			snprintf(buf, sizeof buf, "%.*s", (int)it->tok.n, it->tok.z);
			if (dtype_from_name(buf)) {
				text_error(p, it->tok, "type_proto attributes are not supported");
				return 0;
			}
		}
		text_error(p, it->tok, "unexpected '%.*s' in an attribute value", (int)it->tok.n, it->tok.z);
		return 0;
	}
	return 0;
}

static int list_of(int t)
{
	switch (t) {
	case ATTR_FLOAT: return ATTR_FLOATS;
	case ATTR_INT: return ATTR_INTS;
	case ATTR_STRING: return ATTR_STRINGS;
	case ATTR_TENSOR: return ATTR_TENSORS;
	case ATTR_GRAPH: return ATTR_GRAPHS;
	default: return 0;
	}
}

static int elem_of(int t)
{
	switch (t) {
	case ATTR_FLOATS: return ATTR_FLOAT;
	case ATTR_INTS: return ATTR_INT;
	case ATTR_STRINGS: return ATTR_STRING;
	case ATTR_TENSORS: return ATTR_TENSOR;
	case ATTR_GRAPHS: return ATTR_GRAPH;
	default: return 0;
	}
}

/* Check one parsed attribute and set it on node n (n == 0: check only). */
static void set_attr(TextParser *p, NodeId n, const ParsedAttr *a)
{
	IrModel *m = p->m;
	char name[256];
	snprintf(name, sizeof name, "%.*s", (int)a->name.n, a->name.z);
	int want = ATTR_UNDEFINED;
	if (a->type.n) {
		want = attr_type_lookup(a->type);
		if (!want) {
			text_error(p, a->type, "unknown attribute type '%.*s'", (int)a->type.n, a->type.z);
			return;
		}
		if (want >= ATTR_SPARSE_TENSOR) {
			text_error(p, a->type, "%s attributes are not supported", attr_type_names[want]);
			return;
		}
	}
	/* the element type: the annotation's, else the first item's; an int
	 * literal where floats are wanted is a float (as in ONNX) */
	int elem = want ? (elem_of(want) ? elem_of(want) : want) : 0;
	if (want && !a->is_list && elem_of(want)) {
		text_error(p, a->at, "attribute '%s' of type %s needs a list [...]", name, attr_type_names[want]);
		return;
	}
	if (want && a->is_list && !elem_of(want)) {
		text_error(p, a->at, "attribute '%s' of type %s cannot be a list", name, attr_type_names[want]);
		return;
	}
	if (a->is_list && a->n == 0 && !want) {
		text_error(p, a->at, "empty list attribute value requires type annotation");
		return;
	}
	for (unsigned i = 0; i < a->n; i++) {
		int t = item_type(p, &a->items[i]);
		if (!t)
			return;
		if (!elem)
			elem = t;
		if (t == elem || (t == ATTR_INT && elem == ATTR_FLOAT))
			continue;
		if (t == ATTR_FLOAT && elem == ATTR_INT && !want) {
			elem = ATTR_FLOAT;   /* [1, 2.5]: floats */
			continue;
		}
		text_error(p, a->items[i].kind >= AV_TENSOR ? a->at : a->items[i].tok,
		           "attribute '%s': %s value where %s expected", name,
		           attr_type_names[t], attr_type_names[elem]);
		return;
	}
	size_t cnt = a->n;
	if (a->is_list) {
		int lt = list_of(elem);
		if (lt == ATTR_FLOATS) {
			float *v = calloc(cnt + 1, sizeof *v);
			bool ok = true;
			for (size_t i = 0; i < cnt; i++)
				ok = lit_float(p, (Lit){a->items[i].kind, a->items[i].tok}, &v[i]) && ok;
			if (ok && n)
				ir_attr_set_floats(m, n, name, v, cnt);
			free(v);
		} else if (lt == ATTR_INTS) {
			int64_t *v = calloc(cnt + 1, sizeof *v);
			bool ok = true;
			for (size_t i = 0; i < cnt; i++)
				ok = lit_int(p, (Lit){TK_INT, a->items[i].tok}, INT64_MIN, INT64_MAX, false, &v[i]) && ok;
			if (ok && n)
				ir_attr_set_ints(m, n, name, v, cnt);
			free(v);
		} else if (lt == ATTR_STRINGS) {
			IrBytes *v = calloc(cnt + 1, sizeof *v);
			for (size_t i = 0; i < cnt; i++) {
				size_t len;
				v[i].data = (const uint8_t *)unquote(p, a->items[i].tok, &len);
				v[i].len = len;
			}
			if (n)
				ir_attr_set_strings(m, n, name, v, cnt);
			free(v);
		} else if (lt == ATTR_TENSORS) {
			TensorId *v = calloc(cnt + 1, sizeof *v);
			for (size_t i = 0; i < cnt; i++)
				v[i] = a->items[i].t;
			if (n)
				ir_attr_set_tensors(m, n, name, v, cnt);
			free(v);
		} else if (lt == ATTR_GRAPHS) {
			GraphId *v = calloc(cnt + 1, sizeof *v);
			for (size_t i = 0; i < cnt; i++)
				v[i] = a->items[i].g;
			if (n)
				ir_attr_set_graphs(m, n, name, v, cnt);
			free(v);
		}
		return;
	}
	const AttrItem *it = &a->items[0];
	switch (elem) {
	case ATTR_FLOAT: {
		float f;
		if (lit_float(p, (Lit){it->kind, it->tok}, &f) && n)
			ir_attr_set_float(m, n, name, f);
		break;
	}
	case ATTR_INT: {
		int64_t v;
		if (lit_int(p, (Lit){TK_INT, it->tok}, INT64_MIN, INT64_MAX, false, &v) && n)
			ir_attr_set_int(m, n, name, v);
		break;
	}
	case ATTR_STRING: {
		size_t len;
		const char *s = unquote(p, it->tok, &len);
		if (n)
			ir_attr_set_string(m, n, name, s, len);
		break;
	}
	case ATTR_TENSOR:
		if (n)
			ir_attr_set_tensor(m, n, name, it->t);
		break;
	case ATTR_GRAPH:
		if (n)
			ir_attr_set_graph(m, n, name, it->g);
		break;
	}
}

/* Drop the empty last place of a name list ("Op(x,)" has one input, "()" none). */
static unsigned list_len(const LitList *l)
{
	if (!l)
		return 0;
	return l->n && l->v[l->n - 1].kind == 0 ? l->n - 1 : l->n;
}

void text_node(TextParser *p, Lit name, LitList *outs, LitList *op, AttrList *a1,
               LitList *ins, AttrList *a2)
{
	IrModel *m = p->m;
	GraphId g = p->scope;
	int errors = p->nerrors;
	unsigned nout = list_len(outs), nin = list_len(ins);
	const char **onames = calloc(nout + 1, sizeof *onames);
	ValueId *inputs = calloc(nin + 1, sizeof *inputs);
	if (!onames || !inputs)
		abort();

	/* op: the last identifier; the domain: the ones before it */
	const char *op_type = arena_strndup(m->arena, op->v[op->n - 1].tok.z, op->v[op->n - 1].tok.n);
	char *domain = arena_alloc(m->arena, op->v[op->n - 1].tok.z - op->v[0].tok.z + 1);
	for (unsigned i = 0; i + 1 < op->n; i++) {
		if (i)
			strcat(domain, ".");
		strncat(domain, op->v[i].tok.z, op->v[i].tok.n);
	}

	bool clash = false;
	for (unsigned i = 0; i < nout; i++) {
		Lit o = outs->v[i];
		onames[i] = o.kind ? lit_str(p, o) : "";
		if (!*onames[i])
			continue;
		bool dup = own_value(p, g, onames[i]) != 0;
		for (unsigned j = 0; j < i && !dup; j++)
			dup = strcmp(onames[j], onames[i]) == 0;
		if (dup)
			text_error(p, o.tok, "duplicate value name '%s'", onames[i]);
		clash |= dup;
	}
	for (unsigned i = 0; i < nin; i++) {
		Lit in = ins->v[i];
		const char *nm = in.kind ? lit_str(p, in) : "";
		if (!*nm)
			continue;
		if (!(inputs[i] = ir_lookup(m, g, nm)))
			text_error(p, in.tok, "'%s' names no value", nm);
	}

	/* attributes may come before or after the inputs (both: merged) */
	AttrList *lists[2] = {a1, a2};
	for (int k = 0; k < 2; k++)
		for (unsigned i = 0; lists[k] && i < lists[k]->n; i++) {
			const ParsedAttr *a = &lists[k]->v[i];
			bool dup = false;
			for (int k2 = 0; k2 <= k; k2++)
				for (unsigned j = 0; lists[k2] && j < (k2 == k ? i : lists[k2]->n); j++)
					dup = dup || (a->name.n == lists[k2]->v[j].name.n &&
					              memcmp(a->name.z, lists[k2]->v[j].name.z, a->name.n) == 0);
			if (dup)
				text_error(p, a->name, "duplicate attribute '%.*s'", (int)a->name.n, a->name.z);
			else
				set_attr(p, 0, a);   /* check now, set once the node exists */
		}

	/* After an error the model is thrown away, but the node is still made
	 * (unless its outputs clash) so later uses of its outputs do not
	 * report errors of their own. */
	if (!clash) {
		const char *nname = name.kind ? lit_str(p, name) : "";
		NodeId n = ir_node_new(m, g, 0, domain, op_type, nname, inputs, nin, onames, nout);
		if (n) /* a node of the input, like a loaded file's: its position names it */
			ir_node(m, n)->orig_index = ir_graph(m, g)->nnodes - 1;
		if (!n)
			text_error(p, op->v[0].tok, "node outputs clash with existing names");
		else if (p->nerrors == errors)
			for (int k = 0; k < 2; k++)
				for (unsigned i = 0; lists[k] && i < lists[k]->n; i++)
					set_attr(p, n, &lists[k]->v[i]);
	}
	free(onames);
	free(inputs);
	lits_free(outs);
	lits_free(op);
	lits_free(ins);
	attrs_free(a1);
	attrs_free(a2);
}

/* ---- driver --------------------------------------------------------------- */

IrModel *ir_parse_model(const char *text, size_t len, const char *filename, Diag *d)
{
	/* the lexer wants a NUL after the text */
	char *src = malloc(len + 1);
	if (!src)
		abort();
	memcpy(src, text, len);
	src[len] = 0;

	TextParser p = {0};
	p.m = ir_model_new();
	p.m->ir_version = DEFAULT_IR_VERSION;
	p.m->path = arena_strdup(p.m->arena, filename ? filename : "<text>");
	p.d = d;
	p.src = src;
	p.len = len;
	p.file = filename ? filename : "<text>";
	Lexer lx = {src, src, src + len, p.file, d};

	void *parser = TextParseAlloc(malloc, &p);
	if (!parser)
		abort();
	for (;;) {
		Token tok;
		int t = text_next_token(&lx, &tok);
		if (t < 0) {
			p.nerrors++;
			break;
		}
		TextParse(parser, t, tok);
		if (t == 0 || p.syntax_failed)
			break;
	}
	TextParseFree(parser, free);

	if (!p.nerrors && !p.have_opsets)
		ir_set_opset(p.m, "", DEFAULT_OPSET);
	free(src);
	if (p.nerrors || !ir_check_declarations(p.m, d)) {
		ir_model_free(p.m);
		return NULL;
	}
	return p.m;
}
