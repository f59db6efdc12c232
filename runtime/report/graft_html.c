/* graft_html.c - graft-html REPORT.json OUT.html: the HTML audit report.
 *
 * Renders a JSON audit (graft optimize --report) as one self-contained page
 * that opens offline: inline CSS, JS and SVG, no network.  The page holds the
 * before/after op table, every firing (rule, level, file:line, the rule's
 * text, the nodes it matched and created with their types), each firing's
 * neighbourhood before and after, the whole optimized graph (loaded from the
 * audit's output model) with created nodes highlighted, and --why's answers.
 *
 * The drawings are laid out by Graphviz (libgvc, "dot") here, at report
 * time.  A model may fire thousands of times (mostly fold): the report draws
 * the first DRAW_PER_RULE firings of each rule or pass and at most DRAW_MAX
 * in all; the others list their nodes as text.  The page keeps the drawings
 * as strings and puts one in the document only when its firing is opened.
 *
 * A separate program, linked dynamically: graft itself is static, and
 * Graphviz loads its layout and render plugins at run time (graft runs
 * this one, see html_report.c). */
#include "ir/ir.h"
#include "ir/diag.h"
#include "ir/outfile.h"
#include "runtime/infer/infer.h"

#include <graphviz/gvc.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRAW_PER_RULE 20       /* neighbourhoods drawn per rule or pass ... */
#define DRAW_MAX 600           /* ... and in all */
#define GRAPH_MAX_NODES 5000   /* the whole graph is drawn up to this many nodes */
#define ROWS_AT_ONCE 500       /* firings listed as the page loads ... */
#define ROWS_PER_CHUNK 1000    /* ... the rest added this many at a time, right after */

static GVC_t *gvc;

/* ---- text escaping ------------------------------------------------------------ */

/* Text for HTML content or an attribute value. */
static void html(FILE *out, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
}

/* A DOT string, quoted. */
static void dot_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		if (*s == '\n') {
			fputs("\\n", out);  /* a line break in a label */
			continue;
		}
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* ---- layout: DOT text in, SVG text out ------------------------------------- */

/* The SVG Graphviz makes of DOT text (from "<svg" on), or NULL. */
static char *layout_svg(const char *dot)
{
	Agraph_t *g = agmemread(dot);
	if (!g)
		return NULL;
	char *svg = NULL, *res = NULL;
	unsigned int len = 0;
	if (gvLayout(gvc, g, "dot") == 0) {
		if (gvRenderData(gvc, g, "svg", &svg, &len) == 0 && svg) {
			char *start = strstr(svg, "<svg");
			res = start ? strdup(start) : NULL;
		}
		gvFreeRenderData(svg);
		gvFreeLayout(gvc, g);
	}
	agclose(g);
	return res;
}

/* ---- one firing's neighbourhood --------------------------------------------- */

/* One hop around a drawing, from a model (the input for "before", the
 * optimized model for "after"): each value's producer and consumers. */
typedef struct Context {
	json_t *producer;   /* value -> node name */
	json_t *consumers;  /* value -> [node name] */
	json_t *ops;        /* node name -> op */
} Context;

static void context_of(IrModel *m, Context *c)
{
	c->producer = json_object();
	c->consumers = json_object();
	c->ops = json_object();
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	for (NodeId n = g->first; n; n = ir_node(m, n)->next) {
		IrNode *x = ir_node(m, n);
		char buf[300];
		const char *name = ir_node_label(m, n, buf, sizeof buf);
		json_object_set_new(c->ops, name, json_string(x->op_type));
		for (uint32_t s = 0; s < x->noutputs; s++)
			if (x->outputs[s])
				json_object_set_new(c->producer, ir_value(m, x->outputs[s])->name, json_string(name));
		for (uint32_t s = 0; s < x->ninputs; s++) {
			if (!x->inputs[s])
				continue;
			const char *v = ir_value(m, x->inputs[s])->name;
			if (!json_object_get(c->consumers, v))
				json_object_set_new(c->consumers, v, json_array());
			json_array_append_new(json_object_get(c->consumers, v), json_string(name));
		}
	}
}

static void context_free(Context *c)
{
	json_decref(c->producer);
	json_decref(c->consumers);
	json_decref(c->ops);
}

/* A grey context node (once) and its edge to or from value id. */
static void context_node(FILE *f, const Context *ctx, json_t *drawn, const char *name, const char *value_id,
                         bool into_value)
{
	if (json_object_get(drawn, name))
		return;  /* a node of the drawing itself */
	char id[600], label[600];
	snprintf(id, sizeof id, "c:%s", name);
	if (!json_object_get(drawn, id)) {
		json_object_set_new(drawn, id, json_true());
		fprintf(f, " ");
		dot_str(f, id);
		fprintf(f, " [shape=box, style=\"rounded,dashed\", color=gray60, fontcolor=gray40, fontsize=10, label=");
		snprintf(label, sizeof label, "%s\n%s", str(ctx->ops, name), name);
		dot_str(f, label);
		fprintf(f, "];\n");
	}
	fprintf(f, " ");
	dot_str(f, into_value ? id : value_id);
	fprintf(f, " -> ");
	dot_str(f, into_value ? value_id : id);
	fprintf(f, " [style=dashed, color=gray60];\n");
}

/* The DOT of nodes (an array of names, or of {"node": name} objects): each
 * node a box "Op / name", each of its values an ellipse "name / type";
 * NULL if none of the nodes is known. */
static char *neighbourhood_dot(json_t *names, json_t *nodes, json_t *values, const char *fill, const Context *ctx)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	json_t *seen = json_object();   /* value -> true once drawn */
	json_t *made = json_object();   /* values the drawn nodes produce */
	json_t *drawn = json_object();  /* the drawn nodes (and context nodes, "c:name") */
	fprintf(f, "digraph n {\n graph [rankdir=TB, nodesep=0.25, ranksep=0.3, bgcolor=transparent];\n"
	           " node [fontname=\"Helvetica\", fontsize=12];\n edge [arrowsize=0.6];\n");
	size_t i;
	json_t *entry;
	json_array_foreach(names, i, entry) {
		const char *name = json_is_string(entry) ? json_string_value(entry) : str(entry, "node");
		json_t *node = json_object_get(nodes, name);
		if (!node)
			continue;
		json_object_set_new(drawn, name, json_true());
		fprintf(f, " ");
		dot_str(f, name);
		fprintf(f, " [shape=box, style=\"rounded,filled\", fillcolor=\"%s\", label=", fill);
		char label[600];
		snprintf(label, sizeof label, "%s\n%s", str(node, "op"), name);
		dot_str(f, label);
		fprintf(f, "];\n");
		for (int side = 0; side < 2; side++) {
			json_t *vals = json_object_get(node, side ? "outputs" : "inputs");
			size_t k;
			json_t *v;
			json_array_foreach(vals, k, v) {
				const char *vn = json_string_value(v);
				if (!vn || !*vn)
					continue;
				char id[600];
				snprintf(id, sizeof id, "v:%s", vn);
				if (side)
					json_object_set_new(made, vn, json_true());
				if (!json_object_get(seen, vn)) {
					json_object_set_new(seen, vn, json_true());
					const char *type = str(values, vn);
					bool constant = strncmp(type, "const ", 6) == 0;
					fprintf(f, " ");
					dot_str(f, id);
					fprintf(f, " [shape=ellipse, fontsize=10, %s label=",
					        constant ? "style=dashed, color=gray50, fontcolor=gray35," : "");
					snprintf(label, sizeof label, "%s\n%s", vn, type);
					dot_str(f, label);
					fprintf(f, "];\n");
				}
				fprintf(f, " ");
				dot_str(f, side ? name : id);
				fprintf(f, " -> ");
				dot_str(f, side ? id : name);
				fprintf(f, ";\n");
			}
		}
	}
	/* one hop of context, greyed: the producer of each value read from
	 * outside, and up to 3 consumers of each value made (not constants) */
	size_t ndrawn = json_object_size(drawn);
	const char *vn;
	json_t *unused;
	json_object_foreach(seen, vn, unused) {
		if (!ctx || strncmp(str(values, vn), "const ", 6) == 0)
			continue;
		char id[600];
		snprintf(id, sizeof id, "v:%s", vn);
		if (!json_object_get(made, vn)) {
			const char *p = json_string_value(json_object_get(ctx->producer, vn));
			if (p)
				context_node(f, ctx, drawn, p, id, true);
			continue;
		}
		json_t *users = json_object_get(ctx->consumers, vn);
		for (size_t k = 0; k < json_array_size(users) && k < 3; k++)
			context_node(f, ctx, drawn, json_string_value(json_array_get(users, k)), id, false);
	}
	fprintf(f, "}\n");
	fclose(f);
	json_decref(seen);
	json_decref(made);
	json_decref(drawn);
	if (!ndrawn) {
		free(text);
		return NULL;
	}
	return text;
}

static json_t *draw(json_t *names, json_t *nodes, json_t *values, const char *fill, const Context *ctx)
{
	char *dot = neighbourhood_dot(names, nodes, values, fill, ctx);
	char *svg = dot ? layout_svg(dot) : NULL;
	free(dot);
	json_t *s = svg ? json_string(svg) : json_null();
	free(svg);
	return s;
}

/* {"i": [before, after]} for the firings drawn (see DRAW_PER_RULE). */
static json_t *neighbourhoods(json_t *audit, const Context *before, const Context *after)
{
	json_t *out = json_object(), *per_rule = json_object();
	json_t *nodes = json_object_get(audit, "nodes"), *values = json_object_get(audit, "values");
	size_t i;
	json_t *f;
	int total = 0;
	json_array_foreach(json_object_get(audit, "firings"), i, f) {
		const char *rule = str(f, "rule");
		json_int_t n = json_integer_value(json_object_get(per_rule, rule));
		if (n >= DRAW_PER_RULE || total >= DRAW_MAX)
			continue;
		json_object_set_new(per_rule, rule, json_integer(n + 1));
		total++;
		json_t *pair = json_array();
		json_array_append_new(pair, draw(json_object_get(f, "matched"), nodes, values, "#f6d5d5", before));
		json_array_append_new(pair, draw(json_object_get(f, "created"), nodes, values, "#cfeccf", after));
		char key[32];
		snprintf(key, sizeof key, "%zu", i);
		json_object_set_new(out, key, pair);
	}
	json_decref(per_rule);
	return out;
}

/* ---- the whole optimized graph ----------------------------------------------- */

/* The optimized model's main graph: sets *svg (drawn by dot: node k has the
 * id "g<k>") and returns {"nodes": [{name, op, inputs, outputs}], "types":
 * {value: type}}, or NULL (with *why) if the model cannot be read. */
static json_t *whole_graph(const char *path, json_t *created, char **svg, char *why, size_t whylen, Context *ctx)
{
	*svg = NULL;
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = path && *path ? ir_load_file(path, NULL, &d) : NULL;
	if (!m) {
		snprintf(why, whylen, "the optimized model %s cannot be read%s%s", path && *path ? path : "(none)",
		         d.first[0] ? ": " : "", d.first);
		return NULL;
	}
	InferState *inf = infer_new(m);  /* the saved model may not declare every value's type */
	if (inf) {
		infer_model(inf, &d);
		infer_free(inf);
	}
	IrGraph *g = ir_graph(m, IR_MAIN_GRAPH);
	json_t *res = json_object(), *list = json_array(), *types = json_object();
	char *dot = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&dot, &len);
	/* dot's network simplex and crossing minimization limited: the corpus'
	 * DenseNet (368 nodes, every layer read by every later one of its block)
	 * took 4 min 39 s to lay out without the limits, 7.6 s with them */
	fprintf(f, "digraph g {\n graph [rankdir=TB, nodesep=0.2, ranksep=0.3, bgcolor=transparent,"
	           " nslimit=2, nslimit1=2, mclimit=0.1];\n"
	           " node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef2f7\", fontname=\"Helvetica\", fontsize=10];\n"
	           " edge [arrowsize=0.5, color=gray40];\n");
	for (uint32_t i = 0; i < g->ninputs; i++) {
		IrValue *v = ir_value(m, g->inputs[i]);
		if (v->tensor)
			continue;  /* an overridable initializer: a constant */
		fprintf(f, " ");
		dot_str(f, v->name);
		fprintf(f, " [id=\"in%u\", shape=ellipse, fillcolor=\"#fff7d6\"];\n", i);
	}
	int k = 0;
	for (NodeId n = g->first; n; n = ir_node(m, n)->next, k++) {
		IrNode *x = ir_node(m, n);
		char label[300];
		const char *name = ir_node_label(m, n, label, sizeof label);
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(name));
		char op[300];
		snprintf(op, sizeof op, "%s%s%s", x->domain, *x->domain ? "." : "", x->op_type);
		json_object_set_new(o, "op", json_string(op));
		json_t *ins = json_array(), *outs = json_array();
		for (uint32_t s = 0; s < x->ninputs + x->noutputs; s++) {
			ValueId vid = s < x->ninputs ? x->inputs[s] : x->outputs[s - x->ninputs];
			if (!vid)
				continue;
			IrValue *v = ir_value(m, vid);
			json_array_append_new(s < x->ninputs ? ins : outs, json_string(v->name));
			if (!json_object_get(types, v->name)) {
				char *t = NULL;
				size_t tl = 0;
				FILE *tf = open_memstream(&t, &tl);
				fprintf(tf, "%s", v->tensor ? "const " : "");
				ir_value_type_print(v, tf);
				fclose(tf);
				json_object_set_new(types, v->name, json_string(t));
				free(t);
			}
		}
		json_object_set_new(o, "inputs", ins);
		json_object_set_new(o, "outputs", outs);
		json_array_append_new(list, o);
		fprintf(f, " n%d [id=\"g%d\", label=", k, k);
		dot_str(f, op);
		fprintf(f, ", tooltip=");
		dot_str(f, name);
		if (json_object_get(created, name))
			fprintf(f, ", fillcolor=\"#bfe8bf\", color=\"#2e7d32\", penwidth=2");
		fprintf(f, "];\n");
	}
	/* edges: producer -> consumer, graph inputs -> consumers, producers -> outputs */
	json_t *producer = json_object();
	k = 0;
	for (NodeId n = g->first; n; n = ir_node(m, n)->next, k++) {
		IrNode *x = ir_node(m, n);
		for (uint32_t s = 0; s < x->noutputs; s++)
			if (x->outputs[s])
				json_object_set_new(producer, ir_value(m, x->outputs[s])->name, json_integer(k));
	}
	k = 0;
	for (NodeId n = g->first; n; n = ir_node(m, n)->next, k++) {
		IrNode *x = ir_node(m, n);
		for (uint32_t s = 0; s < x->ninputs; s++) {
			if (!x->inputs[s])
				continue;
			IrValue *v = ir_value(m, x->inputs[s]);
			json_t *p = json_object_get(producer, v->name);
			if (p)
				fprintf(f, " n%lld -> n%d [tooltip=", (long long)json_integer_value(p), k);
			else if (v->is_input && !v->tensor) {
				fprintf(f, " ");
				dot_str(f, v->name);
				fprintf(f, " -> n%d [tooltip=", k);
			} else
				continue;
			char tip[600];
			snprintf(tip, sizeof tip, "%s %s", v->name, str(types, v->name));
			dot_str(f, tip);
			fprintf(f, "];\n");
		}
	}
	for (uint32_t i = 0; i < g->noutputs; i++) {
		IrValue *v = ir_value(m, g->outputs[i]);
		char id[600];
		snprintf(id, sizeof id, "out:%s", v->name);
		fprintf(f, " ");
		dot_str(f, id);
		fprintf(f, " [id=\"out%u\", shape=ellipse, fillcolor=\"#fff7d6\", label=", i);
		dot_str(f, v->name);
		fprintf(f, "];\n");
		json_t *p = json_object_get(producer, v->name);
		if (p) {
			fprintf(f, " n%lld -> ", (long long)json_integer_value(p));
			dot_str(f, id);
			fprintf(f, ";\n");
		}
	}
	fprintf(f, "}\n");
	fclose(f);
	json_decref(producer);
	if (k <= GRAPH_MAX_NODES)
		*svg = layout_svg(dot);
	else
		snprintf(why, whylen, "the optimized graph has %d nodes: drawn up to %d", k, GRAPH_MAX_NODES);
	free(dot);
	json_object_set_new(res, "nodes", list);
	json_object_set_new(res, "types", types);
	context_of(m, ctx);
	ir_model_free(m);
	return res;
}

/* The context of the "before" drawings: the input model, if it can be read
 * (false if not: the drawings are made without). */
static bool input_context(const char *path, Context *ctx)
{
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = path && *path ? ir_load_file(path, NULL, &d) : NULL;
	if (!m)
		return false;
	context_of(m, ctx);
	ir_model_free(m);
	return true;
}

/* ---- the page ------------------------------------------------------------------ */

extern const char graft_html_css[], graft_html_js[];

/* A JSON value inside <script type="application/json">, every '<' written
 * \u003c (it occurs only inside JSON strings): no name in the audit can end
 * the script element or open an HTML comment inside it. */
static void script_json(FILE *out, const char *id, json_t *v)
{
	fprintf(out, "<script type=\"application/json\" id=\"%s\">", id);
	char *text = json_dumps(v, JSON_COMPACT);
	for (const char *c = text; c && *c; c++)
		if (*c == '<')
			fputs("\\u003c", out);
		else
			fputc(*c, out);
	free(text);
	fprintf(out, "</script>\n");
}

static void op_table(FILE *out, json_t *audit)
{
	json_t *hist = json_object_get(audit, "op_histogram");
	json_t *before = json_object_get(hist, "before"), *after = json_object_get(hist, "after");
	json_t *ops = json_object();
	const char *op;
	json_t *v;
	json_object_foreach(before, op, v)
		json_object_set_new(ops, op, json_true());
	json_object_foreach(after, op, v)
		json_object_set_new(ops, op, json_true());
	fprintf(out, "<table id=\"ops\"><thead><tr><th>op</th><th>before</th><th>after</th><th>change</th></tr></thead><tbody>\n");
	long tb = 0, ta = 0;
	json_object_foreach(ops, op, v) {
		long b = (long)json_integer_value(json_object_get(before, op));
		long a = (long)json_integer_value(json_object_get(after, op));
		tb += b;
		ta += a;
		fprintf(out, "<tr><td>");
		html(out, op);
		fprintf(out, "</td><td>%ld</td><td>%ld</td><td class=\"%s\">%+ld</td></tr>\n", b, a,
		        a < b ? "down" : a > b ? "up" : "", a - b);
	}
	fprintf(out, "</tbody><tfoot><tr><th>total</th><th>%ld</th><th>%ld</th><th>%+ld</th></tr></tfoot></table>\n",
	        tb, ta, ta - tb);
	json_decref(ops);
}

static void firing_row(FILE *out, size_t i, json_t *f)
{
	fprintf(out, "<tr class=\"firing\" id=\"f%zu\" data-rule=\"", i);
	html(out, str(f, "rule"));
	fprintf(out, "\" data-level=\"");
	html(out, str(f, "level"));
	fprintf(out, "\"><td>%zu</td><td>", i);
	html(out, str(f, "rule"));
	fprintf(out, "</td><td>");
	html(out, str(f, "level"));
	fprintf(out, "</td><td>");
	html(out, str(f, "source"));
	fprintf(out, "</td><td>");
	json_t *matched = json_object_get(f, "matched");
	size_t k;
	json_t *name;
	json_array_foreach(matched, k, name) {
		if (k == 3) {
			fprintf(out, " +%zu", json_array_size(matched) - 3);
			break;
		}
		fprintf(out, "%s", k ? ", " : "");
		html(out, json_string_value(name));
	}
	fprintf(out, "</td><td>%zu</td></tr>\n", json_array_size(json_object_get(f, "created")));
}

/* The first ROWS_AT_ONCE firings are rows of the table; the others are the
 * same rows as text in <script type="text/plain" class="rows"> blocks of
 * ROWS_PER_CHUNK, which the page adds once it is usable (parsing thousands
 * of rows was most of the time the largest corpus model's page took).
 * Names are escaped (html()), so no row text can end the block early. */
static void firing_rows(FILE *out, json_t *audit)
{
	fprintf(out, "<div id=\"firingsbox\"><table id=\"firings\"><thead><tr><th>#</th><th>rule</th><th>level</th><th>source</th>"
	             "<th>matched</th><th>created</th></tr></thead><tbody>\n");
	json_t *firings = json_object_get(audit, "firings");
	size_t n = json_array_size(firings);
	for (size_t i = 0; i < n && i < ROWS_AT_ONCE; i++)
		firing_row(out, i, json_array_get(firings, i));
	fprintf(out, "</tbody></table></div>\n");
	for (size_t i = ROWS_AT_ONCE; i < n; i++) {
		if ((i - ROWS_AT_ONCE) % ROWS_PER_CHUNK == 0)
			fprintf(out, "%s<script type=\"text/plain\" class=\"rows\">", i > ROWS_AT_ONCE ? "</script>\n" : "");
		firing_row(out, i, json_array_get(firings, i));
	}
	if (n > ROWS_AT_ONCE)
		fprintf(out, "</script>\n");
}

static void why_section(FILE *out, json_t *audit)
{
	json_t *why = json_object_get(audit, "why");
	if (!why)
		return;
	json_t *nodes = json_object_get(why, "nodes");
	fprintf(out, "<section id=\"why\"><h2>Why ");
	html(out, str(why, "rule"));
	fprintf(out, " did not fire</h2>\n<p>");
	if (!json_array_size(nodes)) {
		fprintf(out, "No ");
		html(out, str(why, "root_op"));
		fprintf(out, " node is left.</p>\n");
	} else {
		fprintf(out, "%zu ", json_array_size(nodes));
		html(out, str(why, "root_op"));
		fprintf(out, " node%s left; at each, the first condition that fails:</p>\n"
		             "<table><thead><tr><th>node</th><th>kind</th><th>detail</th><th>values</th></tr></thead><tbody>\n",
		        json_array_size(nodes) == 1 ? "" : "s");
		size_t i;
		json_t *w;
		json_array_foreach(nodes, i, w) {
			fprintf(out, "<tr class=\"why\"><td>");
			html(out, str(w, "node"));
			fprintf(out, "</td><td>");
			html(out, str(w, "kind"));
			fprintf(out, "</td><td>");
			html(out, str(w, "detail"));
			fprintf(out, "</td><td>");
			html(out, str(w, "values"));
			fprintf(out, "</td></tr>\n");
		}
		fprintf(out, "</tbody></table>\n");
	}
	json_t *rule = json_object_get(json_object_get(audit, "rules"), str(why, "rule"));
	if (rule && json_is_string(json_object_get(rule, "text"))) {
		fprintf(out, "<pre class=\"rule\">");
		html(out, str(rule, "text"));
		fprintf(out, "</pre>\n");
	}
	fprintf(out, "</section>\n");
}

static bool write_page(FILE *out, json_t *audit)
{
	json_t *created = json_object();
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(audit, "firings"), i, f) {
		size_t k;
		json_t *c;
		json_array_foreach(json_object_get(f, "created"), k, c)
			json_object_set_new(created, str(c, "node"), json_integer((json_int_t)i));
	}
	char *svg = NULL, why[1200] = "";
	Context in, out_ctx;
	json_t *graph = whole_graph(json_string_value(json_object_get(audit, "output")), created, &svg, why, sizeof why,
	                            &out_ctx);
	bool have_in = input_context(str(json_object_get(audit, "input"), "path"), &in);
	json_t *drawings = neighbourhoods(audit, have_in ? &in : NULL, graph ? &out_ctx : NULL);
	if (have_in)
		context_free(&in);
	if (graph)
		context_free(&out_ctx);

	const char *input = str(json_object_get(audit, "input"), "path");
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>graft audit: ");
	html(out, input);
	fprintf(out, "</title>\n<style>%s</style>\n</head><body>\n<header><h1>graft audit</h1><p>", graft_html_css);
	html(out, input);
	fprintf(out, " &rarr; ");
	html(out, str(audit, "output"));
	json_t *hist = json_object_get(audit, "op_histogram");
	long before = 0, after = 0;
	const char *op;
	json_t *v;
	json_object_foreach(json_object_get(hist, "before"), op, v)
		before += (long)json_integer_value(v);
	json_object_foreach(json_object_get(hist, "after"), op, v)
		after += (long)json_integer_value(v);
	fprintf(out, "</p><p class=\"summary\">%ld &rarr; %ld nodes; %zu firings; %s; graft %s</p></header>\n",
	        before, after, json_array_size(json_object_get(audit, "firings")), str(audit, "stop"),
	        str(audit, "graft_version"));
	fprintf(out, "<nav><a href=\"#ops\">ops</a> &middot; <a href=\"#firings\">firings</a> &middot; %s"
	             "<a href=\"#graph\">optimized graph</a></nav>\n",
	        json_object_get(audit, "why") ? "<a href=\"#why\">why</a> &middot; " : "");
	fprintf(out, "<section><h2>Ops before and after</h2>\n");
	op_table(out, audit);
	fprintf(out, "</section>\n<section><h2>Firings</h2>\n<p class=\"filters\">rule <select id=\"rule\"><option value=\"\">all</option></select>"
	             " level <select id=\"level\"><option value=\"\">all</option></select> <span id=\"shown\"></span></p>\n"
	             "<p class=\"note\">Click a firing for its rule, its nodes and its neighbourhood before and after. "
	             "The first %d firings of each rule or pass are drawn (at most %d in all); the others list their nodes.</p>\n",
	             DRAW_PER_RULE, DRAW_MAX);
	firing_rows(out, audit);
	fprintf(out, "</section>\n");
	why_section(out, audit);
	fprintf(out, "<section id=\"graph\"><h2>The optimized graph</h2>\n");
	if (svg) {
		fprintf(out, "<p class=\"filters\">find node <input id=\"find\" list=\"names\" size=\"40\"> "
		             "<button id=\"zin\">+</button> <button id=\"zout\">&minus;</button> "
		             "<span class=\"created-key\">created by a firing</span></p>\n"
		             "<div id=\"graphview\"><div id=\"graphsvg\">%s</div><aside id=\"info\">Click a node.</aside></div>\n", svg);
	} else {
		fprintf(out, "<p class=\"note\">Not drawn: ");
		html(out, why);
		fprintf(out, "</p>\n");
	}
	fprintf(out, "</section>\n");
	script_json(out, "audit", audit);
	if (graph)
		script_json(out, "graphdata", graph);
	script_json(out, "drawings", drawings);
	fprintf(out, "<script>%s</script>\n</body></html>\n", graft_html_js);
	free(svg);
	json_decref(graph);
	json_decref(drawings);
	json_decref(created);
	return !ferror(out);
}

/* Under AddressSanitizer (make sanitize): no leak report at exit, where
 * Graphviz, pango and fontconfig keep what they allocated for good. */
__attribute__((used)) const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: graft-html REPORT.json OUT.html\n"
		                "The HTML audit report of a JSON audit (graft optimize --report).\n");
		return 2;
	}
	json_error_t err;
	json_t *audit = json_load_file(argv[1], 0, &err);
	if (!audit || !json_is_array(json_object_get(audit, "firings"))) {
		fprintf(stderr, "graft: %s: not a graft audit: %s\n", argv[1], audit ? "no firings" : err.text);
		return 1;
	}
	Diag d;
	diag_init(&d, stderr);
	OutFile out;  /* written beside the target, then renamed over it (outfile.h) */
	if (!out_open(&out, argv[2], &d))
		return 1;
	FILE *f = out_stdio(&out);
	gvc = gvContext();
	bool ok = f && write_page(f, audit);
	if (ok)
		ok = out_commit(&out, &d);
	else
		out_abandon(&out);
	json_decref(audit);
	gvFreeContext(gvc);
	return ok ? 0 : 1;
}
