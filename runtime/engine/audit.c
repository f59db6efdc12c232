/* audit.c - what `graft optimize` tells its user: the before/after op table
 * and per-rule counts on stderr, and the JSON report (--report), written
 * with libjansson.  The report's schema is versioned (AUDIT_SCHEMA); it
 * records graft's version, a hash of the rule set, the input's sha256, the
 * op histograms and every firing in order with its provenance. */
#include "audit.h"
#include "dsl/ast.h"
#include "ir/outfile.h"

#include "sha256.h"

#include <jansson.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void audit_histogram(IrModel *m, AuditHist *h)
{
	memset(h, 0, sizeof *h);
	for (GraphId g = 1; g < m->ngraphs; g++) {
		if (ir_graph(m, g)->dead)
			continue;
		for (NodeId n = ir_first(m, g); n; n = ir_next(m, n)) {
			IrNode *node = ir_node(m, n);
			char name[256];
			snprintf(name, sizeof name, "%s%s%s", node->domain, *node->domain ? "." : "", node->op_type);
			size_t i;
			for (i = 0; i < h->n; i++)
				if (strcmp(h->ops[i].op, name) == 0)
					break;
			if (i == h->n) {
				h->ops = realloc(h->ops, sizeof *h->ops * (h->n + 1));
				h->ops[h->n].op = strdup(name);
				h->ops[h->n].count = 0;
				h->n++;
			}
			h->ops[i].count++;
			h->total++;
			for (uint32_t a = 0; a < node->nattrs; a++)
				if (node->attrs[a].type == ATTR_TENSOR)
					h->const_bytes += ir_tensor(m, node->attrs[a].t)->nbytes;
		}
		const IrGraph *gr = ir_graph(m, g);
		for (uint32_t i = 0; i < gr->ninits; i++)
			h->const_bytes += ir_tensor(m, ir_value(m, gr->inits[i])->tensor)->nbytes;
	}
}

/* 1536 -> "1.5 KB" */
static const char *human_bytes(uint64_t n, char *buf, size_t len)
{
	static const char *unit[] = {"bytes", "KB", "MB", "GB"};
	double v = (double)n;
	int u = 0;
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

void audit_hist_free(AuditHist *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->ops[i].op);
	free(h->ops);
	json_decref(h->memory);
	memset(h, 0, sizeof *h);
}

static unsigned count_of(const AuditHist *h, const char *op)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->ops[i].op, op) == 0)
			return h->ops[i].count;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void audit_print_summary(FILE *out, const AuditHist *before, const AuditHist *after,
                         const RwRuleSet *const *sets, const RwResult *r)
{
	/* every op of either histogram, sorted by name */
	const char **ops = malloc(sizeof *ops * (before->n + after->n + 1));
	size_t n = 0;
	for (size_t i = 0; i < before->n; i++)
		ops[n++] = before->ops[i].op;
	for (size_t i = 0; i < after->n; i++)
		if (!count_of(before, after->ops[i].op))
			ops[n++] = after->ops[i].op;
	qsort(ops, n, sizeof *ops, cmp_name);
	int w = 2;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(ops[i]) > w)
			w = (int)strlen(ops[i]);
	fprintf(out, "%-*s  %7s  %7s  %7s\n", w, "op", "before", "after", "change");
	for (size_t i = 0; i < n; i++) {
		unsigned b = count_of(before, ops[i]), a = count_of(after, ops[i]);
		if (a == b)
			fprintf(out, "%-*s  %7u  %7u  %7s\n", w, ops[i], b, a, "");
		else
			fprintf(out, "%-*s  %7u  %7u  %+7d\n", w, ops[i], b, a, (int)a - (int)b);
	}
	fprintf(out, "%-*s  %7u  %7u  %+7d\n", w, "total", before->total, after->total, (int)after->total - (int)before->total);
	free(ops);
	/* folding trades nodes for bytes: say so when the constants grew */
	if (after->const_bytes > before->const_bytes + (1u << 20)) {
		char b[32], a[32];
		fprintf(out, "constants grew from %s to %s (a folded tensor is at most --max-bytes, all of them --max-fold-bytes)\n",
		        human_bytes(before->const_bytes, b, sizeof b), human_bytes(after->const_bytes, a, sizeof a));
	}
	/* fire counts per rule or pass, in order of first firing */
	const char **names = malloc(sizeof *names * (r->nfirings + 1));
	unsigned *counts = calloc(r->nfirings + 1, sizeof *counts);
	size_t k = 0;
	for (size_t i = 0; i < r->nfirings; i++) {
		const char *name = rw_firing_name(sets, &r->firings[i]);
		size_t j;
		for (j = 0; j < k && strcmp(names[j], name) != 0; j++)
			;
		if (j == k)
			names[k++] = name;
		counts[j]++;
	}
	if (k) {
		int rw = w;     /* the op column's width, or the longest rule name's */
		for (size_t j = 0; j < k; j++)
			if ((int)strlen(names[j]) > rw)
				rw = (int)strlen(names[j]);
		fprintf(out, "\n%-*s  %7s\n", rw, "rule", "fired");
		for (size_t j = 0; j < k; j++)
			fprintf(out, "%-*s  %7u\n", rw, names[j], counts[j]);
	}
	free(names);
	free(counts);
}

static bool sha256_file(const char *path, char hex[65])
{
	struct stat st;
	int err;
	int fd = ir_open_regular(path, &st, &err);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	Sha256 ctx;
	sha256_init(&ctx);
	unsigned char buf[1 << 16];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		sha256_update(&ctx, buf, n);
	unsigned char md[32];
	sha256_final(&ctx, md);
	fclose(f);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	return true;
}

/* The same for bytes in memory. */
static bool sha256_hex(const void *data, size_t len, char hex[65])
{
	Sha256 ctx;
	sha256_init(&ctx);
	sha256_update(&ctx, data, len);
	unsigned char md[32];
	sha256_final(&ctx, md);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	return true;
}

/* FNV-1a over every rule's name, level, file:line and metadata: a rule-set
 * identity that changes when the rules change. */
static unsigned long long ruleset_hash(const RwRuleSet *const *sets, int nsets)
{
	unsigned long long h = 1469598103934665603ull;
	for (int s = 0; s < nsets; s++)
		for (int i = 0; i < sets[s]->nrules; i++) {
			const RwRule *r = &sets[s]->rules[i];
			char buf[1024];
			snprintf(buf, sizeof buf, "%s|%d|%s|%d|%d|%d|%d|%d", r->name, r->level, r->file ? r->file : "", r->line,
			         r->priority, r->opset_min, r->opset_max, r->vendor);
			for (const char *c = buf; *c; c++)
				h = (h ^ (unsigned char)*c) * 1099511628211ull;
		}
	return h;
}

static json_t *hist_json(const AuditHist *h)
{
	json_t *o = json_object();
	for (size_t i = 0; i < h->n; i++)
		json_object_set_new(o, h->ops[i].op, json_integer(h->ops[i].count));
	return o;
}

static json_t *names_json(char **names, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_string(names[i]));
	return a;
}

/* A rule's source text: its file from the line of `rule` to the line that
 * ends it with ';'.  The file is looked for as named (relative to the
 * working directory), then from the graft binary's folder: in .. (a
 * checkout's build/graft finds rules/ there) and in ../share/graft (make
 * install puts rules/ there).  NULL if not found. */
static json_t *rule_text(const RwRule *rule)
{
	if (!rule->file || rule->line < 1)
		return NULL;
	FILE *f = fopen(rule->file, "r");
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (!f && rule->file[0] != '/' && n > 0) {
		exe[n] = 0;
		for (int up = 0; up < 2; up++) {
			char *slash = strrchr(exe, '/');
			if (slash)
				*slash = 0;
		}
		static const char *const under[] = {"", "/share/graft"};
		for (int i = 0; i < 2 && !f; i++) {
			char path[8192];
			snprintf(path, sizeof path, "%s%s/%s", exe, under[i], rule->file);
			f = fopen(path, "r");
		}
	}
	if (!f)
		return NULL;
	char *text = NULL, line[1024];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	for (int no = 1; out && fgets(line, sizeof line, f); no++) {
		if (no < rule->line)
			continue;
		fputs(line, out);
		char *comment = strstr(line, "//");  /* "=> x;  // a note" ends it too */
		size_t k = comment ? (size_t)(comment - line) : strcspn(line, "\n");
		while (k > 0 && (line[k - 1] == ' ' || line[k - 1] == '\t' || line[k - 1] == '\r'))
			k--;
		if ((k > 0 && line[k - 1] == ';') || no >= rule->line + 60)
			break;
	}
	fclose(f);
	if (!out)
		return NULL;
	fclose(out);
	json_t *j = json_string(text);
	free(text);
	return j;
}

static const RwRule *rule_named(const RwRuleSet *const *sets, int nsets, const char *name)
{
	for (int s = 0; s < nsets; s++)
		for (int i = 0; i < sets[s]->nrules; i++)
			if (strcmp(sets[s]->rules[i].name, name) == 0)
				return &sets[s]->rules[i];
	return NULL;
}


/* The report's "rules": each rule that fired or was asked --why, with its
 * level, source and text (the page shows them). */
static void add_rule(json_t *rules, const RwRule *rule)
{
	if (json_object_get(rules, rule->name))
		return;
	json_t *o = json_object();
	json_object_set_new(o, "level", json_string(dsl_level_name((Level)rule->level)));
	char where[512];
	snprintf(where, sizeof where, "%s:%d", rule->file ? rule->file : "?", rule->line);
	json_object_set_new(o, "source", json_string(where));
	json_object_set_new(o, "doc", rule->doc ? json_string(rule->doc) : json_null());
	json_t *text = rule_text(rule);
	json_object_set_new(o, "text", text ? text : json_null());
	json_object_set_new(rules, rule->name, o);
}

static const char *stop_name(RwStop s)
{
	switch (s) {
	case RW_FIXPOINT: return "fixpoint";
	case RW_OUT_OF_FUEL: return "out_of_fuel";
	case RW_CYCLE: return "cycle";
	case RW_MAX_REWRITES: return "max_rewrites";
	default: return "error";
	}
}

/* The report's JSON; input_data: the input's bytes when it came from memory. */
static json_t *report_json(const char *input, const void *input_data, size_t input_size, const char *output,
                           const AuditHist *before, const AuditHist *after, const RwRuleSet *const *sets, int nsets,
                           const RwResult *r)
{
	json_t *root = json_object();
	json_object_set_new(root, "schema", json_string("graft-audit/" AUDIT_SCHEMA));
	json_object_set_new(root, "graft_version", json_string(GRAFT_VERSION));
	char hex[65] = "";
	json_t *in = json_object();
	json_object_set_new(in, "path", json_string(input));
	if (input_data ? sha256_hex(input_data, input_size, hex) : sha256_file(input, hex))
		json_object_set_new(in, "sha256", json_string(hex));
	json_object_set_new(root, "input", in);
	json_object_set_new(root, "output", output ? json_string(output) : json_null());
	char rh[32];
	snprintf(rh, sizeof rh, "%016llx", ruleset_hash(sets, nsets));
	json_object_set_new(root, "rule_set_hash", json_string(rh));
	json_object_set_new(root, "stop", json_string(stop_name(r->stop)));
	json_object_set_new(root, "rewrites", json_integer(r->rewrites));
	json_object_set_new(root, "engine_seconds", json_real(r->seconds));
	json_t *hist = json_object();
	json_object_set_new(hist, "before", hist_json(before));
	json_object_set_new(hist, "after", hist_json(after));
	json_object_set_new(root, "op_histogram", hist);
	json_t *cb = json_object();
	json_object_set_new(cb, "before", json_integer((json_int_t)before->const_bytes));
	json_object_set_new(cb, "after", json_integer((json_int_t)after->const_bytes));
	json_object_set_new(root, "constant_bytes", cb);
	if (before->memory || after->memory) {
		json_t *mp = json_object();
		json_object_set(mp, "before", before->memory ? (json_t *)before->memory : json_null());
		json_object_set(mp, "after", after->memory ? (json_t *)after->memory : json_null());
		json_object_set_new(root, "memory_plan", mp);
	}
	json_t *firings = json_array();
	for (size_t i = 0; i < r->nfirings; i++) {
		const RwFiring *f = &r->firings[i];
		json_t *o = json_object();
		json_object_set_new(o, "rule", json_string(rw_firing_name(sets, f)));
		if (f->rule >= 0) {
			const RwRule *rule = &sets[f->set]->rules[f->rule];
			json_object_set_new(o, "level", json_string(dsl_level_name((Level)rule->level)));
			char where[512];
			snprintf(where, sizeof where, "%s:%d", rule->file ? rule->file : "?", rule->line);
			json_object_set_new(o, "source", json_string(where));
		} else {
			json_object_set_new(o, "level", json_string("builtin"));
		}
		json_object_set_new(o, "matched", names_json(f->matched, f->nmatched));
		json_t *created = json_array();
		for (int k = 0; k < f->ncreated; k++) {
			json_t *c = json_object();
			json_object_set_new(c, "node", json_string(f->created[k]));
			json_object_set_new(c, "provenance", names_json(f->provenance ? f->provenance[k] : NULL,
			                                               f->provenance ? f->nprovenance[k] : 0));
			json_array_append_new(created, c);
		}
		json_object_set_new(o, "created", created);
		json_object_set_new(o, "removed", names_json(f->removed, f->nremoved));
		json_array_append_new(firings, o);
	}
	json_object_set_new(root, "firings", firings);
	/* what the HTML report draws: the rules' text, the nodes the firings
	 * name (op and values, as first named) and those values' types */
	json_t *rules = json_object();
	for (size_t i = 0; i < r->nfirings; i++)
		if (r->firings[i].rule >= 0)
			add_rule(rules, &sets[r->firings[i].set]->rules[r->firings[i].rule]);
	const RwRule *why = r->why_rule ? rule_named(sets, nsets, r->why_rule) : NULL;
	if (why)
		add_rule(rules, why);
	json_object_set_new(root, "rules", rules);
	json_object_set_new(root, "nodes", r->nodes ? json_incref((json_t *)r->nodes) : json_object());
	json_object_set_new(root, "values", r->values ? json_incref((json_t *)r->values) : json_object());
	if (why) {
		json_t *w = json_object(), *nodes = json_array();
		json_object_set_new(w, "rule", json_string(why->name));
		json_object_set_new(w, "root_op", json_string(why->root_op));
		for (int i = 0; i < r->nwhy; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "node", json_string(r->why[i].node));
			json_object_set_new(o, "kind", json_string(rw_why_kind_name(r->why[i].kind)));
			json_object_set_new(o, "detail", json_string(r->why[i].detail));
			json_object_set_new(o, "values", json_string(r->why[i].values));
			json_array_append_new(nodes, o);
		}
		json_object_set_new(w, "nodes", nodes);
		json_object_set_new(root, "why", w);
	}
	return root;
}

char *audit_report_text(const char *input, const void *input_data, size_t input_size, const char *output,
                        const AuditHist *before, const AuditHist *after, const RwRuleSet *const *sets, int nsets,
                        const RwResult *r)
{
	json_t *root = report_json(input, input_data, input_size, output, before, after, sets, nsets, r);
	char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return text;
}

bool audit_write_report(const char *path, const char *input, const char *output, const AuditHist *before,
                        const AuditHist *after, const RwRuleSet *const *sets, int nsets, const RwResult *r, Diag *d)
{
	json_t *root = report_json(input, NULL, 0, output, before, after, sets, nsets, r);
	/* through outfile.c, like every other output */
	OutFile out;
	bool ok = out_open(&out, path, d);
	if (ok) {
		if (json_dumpfd(root, out.fd, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0 && !out.failed) {
			out.failed = true;
			out.err = errno ? errno : EIO;
		}
		ok = out_commit(&out, d);
	}
	json_decref(root);
	return ok;
}

/* ---- graft explain: where a node came from ---------------------------------------- */

static bool in_array(json_t *arr, const char *node)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), node) == 0)
			return true;
	return false;
}

static void print_names(FILE *out, const char *what, json_t *arr)
{
	if (!json_array_size(arr))
		return;
	fprintf(out, "    %s:", what);
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
		fprintf(out, " %s", json_string_value(v));
	fprintf(out, "\n");
}

int audit_explain(const char *report, const char *node, FILE *out, Diag *d)
{
	json_error_t err;
	struct stat st;
	int oerr;
	int fd = ir_open_regular(report, &st, &oerr);
	if (fd < 0) {
		if (oerr == IR_OPEN_NOT_REGULAR)
			diag_error(d, report, "not a regular file");
		else
			diag_error(d, report, "cannot open: %s", strerror(oerr));
		return -1;
	}
	json_t *root = json_loadfd(fd, 0, &err);
	close(fd);
	if (!root) {
		diag_error(d, report, "%d:%d: not a graft report: %s", err.line, err.column, err.text);
		return -1;
	}
	json_t *firings = json_object_get(root, "firings");
	const char *schema = json_string_value(json_object_get(root, "schema"));
	if (!json_is_array(firings) || !schema || strncmp(schema, "graft-audit/", 12) != 0) {
		diag_error(d, report, "not a graft report (no schema graft-audit/N and firings)");
		json_decref(root);
		return -1;
	}
	int hits = 0;
	size_t i;
	json_t *f;
	json_array_foreach(firings, i, f) {
		json_t *created = json_object_get(f, "created"), *matched = json_object_get(f, "matched"),
		       *removed = json_object_get(f, "removed");
		json_t *made = NULL;
		size_t k;
		json_t *c;
		json_array_foreach(created, k, c)
			if (strcmp(json_string_value(json_object_get(c, "node")), node) == 0)
				made = c;
		if (!made && !in_array(matched, node) && !in_array(removed, node))
			continue;
		hits++;
		const char *src = json_string_value(json_object_get(f, "source"));
		fprintf(out, "#%zu %s%s%s%s: %s\n", i + 1, json_string_value(json_object_get(f, "rule")), src ? " (" : "",
		        src ? src : "", src ? ")" : "",
		        made ? "created it" : in_array(removed, node) ? "removed it" : "matched it");
		print_names(out, "matched", matched);
		json_array_foreach(created, k, c)
			fprintf(out, "    created: %s\n", json_string_value(json_object_get(c, "node")));
		print_names(out, "removed", removed);
		if (made)
			print_names(out, "it stands for", json_object_get(made, "provenance"));
	}
	if (!hits)
		fprintf(out, "%s: no rule touched '%s'\n", report, node);
	json_decref(root);
	return hits;
}

/* ---- --dot: the graph for Graphviz, rewritten nodes highlighted ------------------- */

static void dot_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

bool audit_write_dot(IrModel *m, const RwResult *r, const char *path, Diag *d)
{
	OutFile of;
	if (!out_open(&of, path, d))
		return false;
	FILE *out = out_stdio(&of);
	if (!out)
		return out_commit(&of, d);
	fprintf(out, "digraph graft {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white];\n");
	for (NodeId n = ir_first(m, IR_MAIN_GRAPH); n; n = ir_next(m, n)) {
		IrNode *node = ir_node(m, n);
		bool created = false;
		for (size_t i = 0; i < r->nfirings && !created; i++)
			for (int k = 0; k < r->firings[i].ncreated && !created; k++)
				created = strcmp(r->firings[i].created[k], node->name) == 0;
		fprintf(out, "  n%u [label=\"", n);
		dot_escape(out, node->op_type);
		if (*node->name) {
			fputs("\\n", out);
			dot_escape(out, node->name);
		}
		fprintf(out, "\"%s];\n", created ? ", fillcolor=\"#ffd27f\"" : "");
		for (uint32_t i = 0; i < node->ninputs; i++) {
			ValueId v = node->inputs[i];
			if (v && ir_value(m, v)->producer && ir_node(m, ir_value(m, v)->producer)->graph == IR_MAIN_GRAPH)
				fprintf(out, "  n%u -> n%u;\n", ir_value(m, v)->producer, n);
		}
	}
	fprintf(out, "}\n");
	return out_commit(&of, d);
}
