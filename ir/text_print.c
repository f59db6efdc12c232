/* text_print.c - writes a model in ONNX's text syntax (see text.h for what
 * is written and why).  `graft print` calls it, and the tests print a model,
 * parse it back with text_parse.c and compare.
 *
 * Everything printed comes from the IR, except what the IR carries but does
 * not model: the header's producer fields (m->proto) and the non-tensor
 * types of graph inputs and outputs (seq, map, ...: the value's carried
 * ValueInfoProto).  Layout follows onnx.printer: three spaces per level,
 * one node per line. */
#include "text.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/onnx.pb-c.h"

typedef struct Printer {
	IrModel *m;
	FILE *out;
	Diag *d;
	bool ok;
} Printer;

/* ---- names, strings, numbers -------------------------------------------- */

static bool is_identifier(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* "..." with \ and " escaped (the only escapes ONNX's parser knows). */
static void print_quoted(Printer *p, const void *data, size_t len)
{
	const unsigned char *s = data;
	fputc('"', p->out);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' || s[i] == '"')
			fputc('\\', p->out);
		fputc(s[i], p->out);
	}
	fputc('"', p->out);
}

static void print_id(Printer *p, const char *name)
{
	if (is_identifier(name))
		fputs(name, p->out);
	else
		print_quoted(p, name, strlen(name));
}

/* The shortest decimal form that reads back to the same float (or double),
 * with a "." or an exponent so it reads as a float literal; integral values
 * below 1e16 in full ("100.0", not "1e+02"). */
static void format_real(char *buf, size_t size, double v, bool single)
{
	if (isnan(v)) {
		snprintf(buf, size, "%s", signbit(v) ? "-nan" : "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, size, "%s", v < 0 ? "-inf" : "inf");
		return;
	}
	int maxprec = single ? 9 : 17, prec;
	for (prec = 1; prec < maxprec; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
			break;
	}
	double a = fabs(v);
	if (a >= 1 && a < 1e16) {
		int digits = (int)floor(log10(a)) + 1;
		if (digits > prec)
			prec = digits;
	}
	snprintf(buf, size, "%.*g", prec, v);
	if (!strpbrk(buf, ".en"))
		strncat(buf, ".0", size - strlen(buf) - 1);
}

static void print_float(Printer *p, float f)
{
	char buf[64];
	format_real(buf, sizeof buf, f, true);
	fputs(buf, p->out);
}

static void print_double(Printer *p, double v)
{
	char buf[64];
	format_real(buf, sizeof buf, v, false);
	fputs(buf, p->out);
}

static void indent(Printer *p, int level)
{
	fprintf(p->out, "%*s", 3 * level, "");
}

/* ---- types ---------------------------------------------------------------- */

static void print_dims(Printer *p, const Dim *dims, int rank)
{
	if (rank < 0) {
		fputs("[]", p->out);
		return;
	}
	if (rank == 0)
		return;   /* a scalar: the type name alone */
	fputc('[', p->out);
	for (int i = 0; i < rank; i++) {
		if (i)
			fputc(',', p->out);
		if (dims[i].size >= 0)
			fprintf(p->out, "%" PRId64, dims[i].size);
		else if (dims[i].param)
			print_id(p, dims[i].param);
		else
			fputc('?', p->out);
	}
	fputc(']', p->out);
}

static void print_shape_proto(Printer *p, const Onnx__TensorShapeProto *s)
{
	if (!s) {
		fputs("[]", p->out);
		return;
	}
	Dim *dims = calloc(s->n_dim + 1, sizeof *dims);
	if (!dims)
		abort();
	for (size_t i = 0; i < s->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *dp = s->dim[i];
		dims[i].size = dp->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? dp->dim_value : -1;
		dims[i].param = dp->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? dp->dim_param : NULL;
	}
	print_dims(p, dims, (int)s->n_dim);
	free(dims);
}

/* A type the IR does not model, from the carried proto.  False if none. */
static bool print_type_proto(Printer *p, const Onnx__TypeProto *tp)
{
	if (!tp)
		return false;
	switch (tp->value_case) {
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
		fputs(dtype_name(tp->tensor_type->elem_type), p->out);
		print_shape_proto(p, tp->tensor_type->shape);
		return true;
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
		fputs("seq(", p->out);
		print_type_proto(p, tp->sequence_type->elem_type);
		fputc(')', p->out);
		return true;
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
		fputs("optional(", p->out);
		print_type_proto(p, tp->optional_type->elem_type);
		fputc(')', p->out);
		return true;
	case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
		fprintf(p->out, "map(%s, ", dtype_name(tp->map_type->key_type));
		print_type_proto(p, tp->map_type->value_type);
		fputc(')', p->out);
		return true;
	case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
		fprintf(p->out, "sparse_tensor(%s", dtype_name(tp->sparse_tensor_type->elem_type));
		print_shape_proto(p, tp->sparse_tensor_type->shape);
		fputc(')', p->out);
		return true;
	default:
		return false;
	}
}

/* "float[N,3] x", or just "x" when the type is unknown.  `info` is the
 * carried entry, consulted only for types the IR does not model. */
static void print_decl(Printer *p, ValueId v, const Onnx__ValueInfoProto *info)
{
	IrValue *val = ir_value(p->m, v);
	if (val->dtype) {
		fputs(dtype_name(val->dtype), p->out);
		print_dims(p, val->shape.dims, val->shape.rank);
		fputc(' ', p->out);
	} else if (info && info->type && info->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
	           print_type_proto(p, info->type)) {
		fputc(' ', p->out);
	}
	print_id(p, val->name);
}

/* ---- tensors -------------------------------------------------------------- */

static uint64_t read_le(const uint8_t *b, int nbytes)
{
	uint64_t u = 0;
	for (int i = nbytes - 1; i >= 0; i--)
		u = u << 8 | b[i];
	return u;
}

/* "float[2,3] {1.0, ...}"; with name: "float[2,3] w = {...}". */
static void print_tensor(Printer *p, TensorId id, const char *name)
{
	IrModel *m = p->m;
	IrTensor *t = ir_tensor(m, id);
	fputs(dtype_name(t->dtype), p->out);
	if (t->rank > 0) {
		fputc('[', p->out);
		for (int i = 0; i < t->rank; i++)
			fprintf(p->out, "%s%" PRId64, i ? "," : "", t->dims[i]);
		fputc(']', p->out);
	}
	if (name) {
		fputc(' ', p->out);
		print_id(p, name);
		fputs(" =", p->out);
	}
	fputs(" {", p->out);
	int dt = t->dtype;
	if (dt == DT_STRING) {
		const Onnx__TensorProto *tp = t->proto;
		for (size_t i = 0; tp && i < tp->n_string_data; i++) {
			if (i)
				fputs(", ", p->out);
			print_quoted(p, tp->string_data[i].data, tp->string_data[i].len);
		}
		fputc('}', p->out);
		return;
	}
	size_t nbytes;
	const uint8_t *b = ir_tensor_bytes(m, id, &nbytes);
	int bits = dtype_bits(dt);
	int64_t count = t->numel * (dt == DT_COMPLEX64 || dt == DT_COMPLEX128 ? 2 : 1);
	if (count > 0 && (!b || !bits || (size_t)((t->numel * bits + 7) / 8) > nbytes)) {
		diag_error(p->d, m->path, "tensor of type %s: its data cannot be printed", dtype_name(dt));
		p->ok = false;
		fputc('}', p->out);
		return;
	}
	for (int64_t i = 0; i < count; i++) {
		if (i)
			fputs(", ", p->out);
		switch (dt) {
		case DT_FLOAT: case DT_COMPLEX64: {
			float f;
			memcpy(&f, b + 4 * i, 4);
			print_float(p, f);
			break;
		}
		case DT_DOUBLE: case DT_COMPLEX128: {
			double v;
			memcpy(&v, b + 8 * i, 8);
			print_double(p, v);
			break;
		}
		case DT_INT8: fprintf(p->out, "%d", (int8_t)b[i]); break;
		case DT_INT16: fprintf(p->out, "%d", (int16_t)read_le(b + 2 * i, 2)); break;
		case DT_INT32: fprintf(p->out, "%" PRId32, (int32_t)read_le(b + 4 * i, 4)); break;
		case DT_INT64: fprintf(p->out, "%" PRId64, (int64_t)read_le(b + 8 * i, 8)); break;
		case DT_UINT32: fprintf(p->out, "%" PRIu64, read_le(b + 4 * i, 4)); break;
		case DT_UINT64: fprintf(p->out, "%" PRIu64, read_le(b + 8 * i, 8)); break;
		case DT_UINT16: case DT_FLOAT16: case DT_BFLOAT16:
			fprintf(p->out, "%" PRIu64, read_le(b + 2 * i, 2));
			break;
		case DT_INT4: {
			int v = (b[i / 2] >> (i % 2 ? 4 : 0)) & 15;
			fprintf(p->out, "%d", v >= 8 ? v - 16 : v);
			break;
		}
		case DT_UINT4: case DT_FLOAT4E2M1:
			fprintf(p->out, "%d", (b[i / 2] >> (i % 2 ? 4 : 0)) & 15);
			break;
		default: /* uint8, bool, float8 bit patterns */
			fprintf(p->out, "%u", b[i]);
			break;
		}
	}
	fputc('}', p->out);
}

/* ---- graphs, nodes, attributes ------------------------------------------- */

static void print_graph(Printer *p, GraphId g, int level);

static const char *attr_type_str(int t)
{
	static const char *const names[] = {
		[ATTR_FLOAT] = "float", [ATTR_INT] = "int", [ATTR_STRING] = "string",
		[ATTR_TENSOR] = "tensor", [ATTR_GRAPH] = "graph", [ATTR_FLOATS] = "floats",
		[ATTR_INTS] = "ints", [ATTR_STRINGS] = "strings", [ATTR_TENSORS] = "tensors",
		[ATTR_GRAPHS] = "graphs",
	};
	return t > 0 && t <= ATTR_GRAPHS ? names[t] : NULL;
}

static void print_attr(Printer *p, NodeId n, const IrAttr *a, int level)
{
	const char *tname = attr_type_str(a->type);
	if (!tname) {
		char label[128];
		diag_error(p->d, p->m->path, "node '%s': attribute '%s' of type %d cannot be printed",
		           ir_node_label(p->m, n, label, sizeof label), a->name, a->type);
		p->ok = false;
		tname = "undefined";
	}
	fprintf(p->out, "%s: %s = ", a->name, tname);
	switch (a->type) {
	case ATTR_FLOAT: print_float(p, a->f); break;
	case ATTR_INT: fprintf(p->out, "%" PRId64, a->i); break;
	case ATTR_STRING: print_quoted(p, a->s.data, a->s.len); break;
	case ATTR_TENSOR: print_tensor(p, a->t, NULL); break;
	case ATTR_GRAPH: print_graph(p, a->g, level); break;
	case ATTR_FLOATS: case ATTR_INTS: case ATTR_STRINGS: case ATTR_TENSORS: case ATTR_GRAPHS:
		fputc('[', p->out);
		for (size_t i = 0; i < a->n; i++) {
			if (i)
				fputs(", ", p->out);
			switch (a->type) {
			case ATTR_FLOATS: print_float(p, a->floats[i]); break;
			case ATTR_INTS: fprintf(p->out, "%" PRId64, a->ints[i]); break;
			case ATTR_STRINGS: print_quoted(p, a->strings[i].data, a->strings[i].len); break;
			case ATTR_TENSORS: print_tensor(p, a->tensors[i], NULL); break;
			case ATTR_GRAPHS: print_graph(p, a->graphs[i], level); break;
			}
		}
		fputc(']', p->out);
		break;
	default:
		break;
	}
}

static void print_attrs(Printer *p, NodeId n, int level)
{
	IrNode *node = ir_node(p->m, n);
	fputs(" <", p->out);
	for (uint32_t i = 0; i < node->nattrs; i++) {
		if (i)
			fputs(", ", p->out);
		print_attr(p, n, &node->attrs[i], level);
	}
	fputc('>', p->out);
}

/* Names of values; an omitted one is empty, or "" when last (ONNX reads
 * "Op(x,)" as one input). */
static void print_names(Printer *p, const ValueId *v, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++) {
		if (i)
			fputs(", ", p->out);
		if (v[i])
			print_id(p, ir_value(p->m, v[i])->name);
		else if (i + 1 == count)
			fputs("\"\"", p->out);
	}
}

static void print_node(Printer *p, NodeId n, int level)
{
	IrNode *node = ir_node(p->m, n);
	indent(p, level);
	if (node->name && *node->name) {
		fputc('[', p->out);
		print_id(p, node->name);
		fputs("] ", p->out);
	}
	print_names(p, node->outputs, node->noutputs);
	fputs(node->noutputs ? " = " : "= ", p->out);
	if (node->domain && *node->domain)
		fprintf(p->out, "%s.", node->domain);
	fputs(node->op_type, p->out);
	bool has_body = false;
	for (uint32_t i = 0; i < node->nattrs; i++)
		has_body |= node->attrs[i].type == ATTR_GRAPH || node->attrs[i].type == ATTR_GRAPHS;
	/* as onnx.printer: attributes holding bodies go after the inputs */
	if (node->nattrs && !has_body)
		print_attrs(p, n, level);
	fputs(" (", p->out);
	print_names(p, node->inputs, node->ninputs);
	fputc(')', p->out);
	if (node->nattrs && has_body)
		print_attrs(p, n, level);
	fputc('\n', p->out);
}

/* Node outputs of g whose type is known but that g's outputs do not show:
 * ONNX's value_info. */
static bool is_value_info(IrModel *m, GraphId g, ValueId v)
{
	IrValue *val = ir_value(m, v);
	if (val->dead || val->graph != g || !val->producer || !val->dtype)
		return false;
	IrGraph *gr = ir_graph(m, g);
	for (uint32_t i = 0; val->is_output && i < gr->noutputs; i++)
		if (gr->outputs[i] == v)
			return false;
	return true;
}

static void print_graph(Printer *p, GraphId g, int level)
{
	IrModel *m = p->m;
	IrGraph *gr = ir_graph(m, g);
	print_id(p, gr->name ? gr->name : "");
	fputs(" (", p->out);
	for (uint32_t i = 0; i < gr->ninputs; i++) {
		if (i)
			fputs(", ", p->out);
		print_decl(p, gr->inputs[i], ir_value(m, gr->inputs[i])->info);
	}
	fputs(") => (", p->out);
	for (uint32_t i = 0; i < gr->noutputs; i++) {
		if (i)
			fputs(", ", p->out);
		print_decl(p, gr->outputs[i], gr->output_info ? gr->output_info[i] : NULL);
	}
	fputs(")", p->out);
	if (gr->nsparse) {
		diag_error(p->d, m->path, "graph '%s': sparse initializers cannot be printed", gr->name);
		p->ok = false;
	}

	/* initializers, then value_info, one per line */
	uint32_t nitems = gr->ninits;
	for (NodeId n = ir_first(m, g); n; n = ir_next(m, n))
		for (uint32_t o = 0; o < ir_node(m, n)->noutputs; o++)
			nitems += ir_node(m, n)->outputs[o] && is_value_info(m, g, ir_node(m, n)->outputs[o]);
	if (nitems) {
		fputc('\n', p->out);
		indent(p, level + 1);
		fputc('<', p->out);
		uint32_t k = 0;
		for (uint32_t i = 0; i < gr->ninits; i++, k++) {
			fputs(k ? ",\n" : "", p->out);
			if (k)
				indent(p, level + 1), fputc(' ', p->out);
			IrValue *val = ir_value(m, gr->inits[i]);
			print_tensor(p, val->tensor, val->name);
		}
		for (NodeId n = ir_first(m, g); n; n = ir_next(m, n))
			for (uint32_t o = 0; o < ir_node(m, n)->noutputs; o++) {
				ValueId v = ir_node(m, n)->outputs[o];
				if (!v || !is_value_info(m, g, v))
					continue;
				fputs(k ? ",\n" : "", p->out);
				if (k++)
					indent(p, level + 1), fputc(' ', p->out);
				print_decl(p, v, NULL);
			}
		fputs(">\n", p->out);
		indent(p, level);
		fputc('{', p->out);
	} else {
		fputs(" {", p->out);
	}
	fputc('\n', p->out);
	for (NodeId n = ir_first(m, g); n; n = ir_next(m, n))
		print_node(p, n, level + 1);
	indent(p, level);
	fputc('}', p->out);
}

/* ---- model ---------------------------------------------------------------- */

static void print_header(Printer *p)
{
	IrModel *m = p->m;
	const Onnx__ModelProto *mp = m->proto;
	fprintf(p->out, "<\n   ir_version: %" PRId64 ",\n   opset_import: [", m->ir_version);
	for (uint32_t i = 0; i < m->nopsets; i++) {
		if (i)
			fputs(", ", p->out);
		print_quoted(p, m->opsets[i].domain, strlen(m->opsets[i].domain));
		fprintf(p->out, " : %" PRId64, m->opsets[i].version);
	}
	fputc(']', p->out);
	if (mp) {
		const char *keys[] = {"producer_name", "producer_version", "domain", "doc_string"};
		const char *vals[] = {mp->producer_name, mp->producer_version, mp->domain, mp->doc_string};
		for (int i = 0; i < 4; i++)
			if (vals[i] && *vals[i]) {
				fprintf(p->out, ",\n   %s: ", keys[i]);
				print_quoted(p, vals[i], strlen(vals[i]));
			}
		if (mp->has_model_version)
			fprintf(p->out, ",\n   model_version: %" PRId64, mp->model_version);
		if (mp->n_metadata_props) {
			fputs(",\n   metadata_props: [", p->out);
			for (size_t i = 0; i < mp->n_metadata_props; i++) {
				const char *k = mp->metadata_props[i]->key, *v = mp->metadata_props[i]->value;
				fputs(i ? ", " : "", p->out);
				print_quoted(p, k ? k : "", k ? strlen(k) : 0);
				fputs(": ", p->out);
				print_quoted(p, v ? v : "", v ? strlen(v) : 0);
			}
			fputc(']', p->out);
		}
	}
	fputs("\n>\n", p->out);
}

bool ir_print_model(IrModel *m, FILE *out, Diag *d)
{
	Printer p = {m, out, d, true};
	print_header(&p);
	if (m->ngraphs > IR_MAIN_GRAPH)
		print_graph(&p, IR_MAIN_GRAPH, 0);
	fputc('\n', out);
	if (ferror(out)) {
		diag_error(d, m->path, "cannot write the model's text");
		return false;
	}
	return p.ok;
}
