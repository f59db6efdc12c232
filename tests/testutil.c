/* testutil.c - helpers shared by the Check suites (see testutil.h). */
#include "testutil.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "gen/onnx.pb-c.h"
#include "ir/text.h"

static void collect(const char *dir, const char *suffix, char ***paths, size_t *n, size_t *cap)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return;
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = malloc(strlen(dir) + strlen(de->d_name) + 2);
		sprintf(p, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			collect(p, suffix, paths, n, cap);
			free(p);
			continue;
		}
		size_t len = strlen(p), slen = strlen(suffix);
		if (len < slen || strcmp(p + len - slen, suffix) != 0) {
			free(p);
			continue;
		}
		if (*n + 2 > *cap) {
			*cap = *cap ? *cap * 2 : 256;
			*paths = realloc(*paths, sizeof **paths * *cap);
		}
		(*paths)[(*n)++] = p;
	}
	closedir(dp);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **find_models(const char *dir, size_t *count)
{
	return find_files(dir, ".onnx", count);
}

char **find_files(const char *dir, const char *suffix, size_t *count)
{
	char **paths = NULL;
	size_t n = 0, cap = 0;
	collect(dir, suffix, &paths, &n, &cap);
	if (!paths)
		paths = calloc(1, sizeof *paths);
	qsort(paths, n, sizeof *paths, cmp_str);
	paths[n] = NULL;
	*count = n;
	return paths;
}

void paths_free(char **paths)
{
	for (char **p = paths; p && *p; p++)
		free(*p);
	free(paths);
}

void assert_same_file(const char *a, const char *b)
{
	size_t na, nb;
	uint8_t *x = read_file(a, &na), *y = read_file(b, &nb);
	ck_assert_msg(x && y, "%s or %s unreadable", a, b);
	ck_assert_msg(na == nb && !memcmp(x, y, na), "%s (%zu bytes) and %s (%zu) differ", a, na, b, nb);
	free(x);
	free(y);
}

uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (n < 0) {
		fclose(f);
		return NULL;
	}
	uint8_t *buf = malloc((size_t)n + 1);
	if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = 0; /* text files read as strings */
	*len = (size_t)n;
	return buf;
}

bool write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

const char *corpus_dir(void)
{
	const char *env = getenv("GRAFT_CORPUS");
	const char *dir = env && *env ? env : CORPUS_DIR;
	struct stat st;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

char *temp_dir(void)
{
	char *t = strdup("/tmp/graft-test-XXXXXX");
	if (!mkdtemp(t)) {
		free(t);
		return NULL;
	}
	return t;
}

void rm_rf(const char *path)
{
	DIR *dp = opendir(path);
	if (dp) {
		struct dirent *de;
		while ((de = readdir(dp))) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			char *p = malloc(strlen(path) + strlen(de->d_name) + 2);
			sprintf(p, "%s/%s", path, de->d_name);
			rm_rf(p);
			free(p);
		}
		closedir(dp);
		rmdir(path);
	} else {
		unlink(path);
	}
}

const char *load_error(const char *path)
{
	static char msg[1024];
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(path, NULL, &d);
	if (m) {
		ir_model_free(m);
		return "(loaded without error)";
	}
	snprintf(msg, sizeof msg, "%s", d.first);
	return msg;
}

/* ---- comparing models ------------------------------------------------------ */


static char diff_msg[1024];

static const char *differ(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(diff_msg, sizeof diff_msg, fmt, ap);
	va_end(ap);
	return diff_msg;
}

static const char *vname(IrModel *m, ValueId v)
{
	return v ? ir_value(m, v)->name : "";
}

static bool same_type(IrModel *a, ValueId va, IrModel *b, ValueId vb)
{
	IrValue *x = ir_value(a, va), *y = ir_value(b, vb);
	if (x->dtype != y->dtype)
		return false;
	if (!x->dtype)
		return true;   /* untyped: the shape means nothing */
	if (x->shape.rank != y->shape.rank)
		return false;
	for (int i = 0; i < x->shape.rank; i++) {
		Dim p = x->shape.dims[i], q = y->shape.dims[i];
		if (p.size != q.size || !p.param != !q.param || (p.param && strcmp(p.param, q.param) != 0))
			return false;
	}
	return true;
}

static const char *tensor_diff(IrModel *a, TensorId ta, IrModel *b, TensorId tb)
{
	IrTensor *x = ir_tensor(a, ta), *y = ir_tensor(b, tb);
	if (x->dtype != y->dtype)
		return differ("dtype %d vs %d", x->dtype, y->dtype);
	if (x->rank != y->rank || (x->rank > 0 && memcmp(x->dims, y->dims, sizeof *x->dims * (size_t)x->rank) != 0))
		return differ("dims differ");
	if (x->dtype == DT_STRING) {
		const Onnx__TensorProto *p = x->proto, *q = y->proto;
		size_t n = p ? p->n_string_data : 0;
		if (n != (q ? q->n_string_data : 0))
			return differ("string count differs");
		for (size_t i = 0; i < n; i++)
			if (p->string_data[i].len != q->string_data[i].len ||
			    memcmp(p->string_data[i].data, q->string_data[i].data, p->string_data[i].len) != 0)
				return differ("string %zu differs", i);
		return NULL;
	}
	size_t nx, ny;
	const uint8_t *bx = ir_tensor_bytes(a, ta, &nx), *by = ir_tensor_bytes(b, tb, &ny);
	if (nx != ny)
		return differ("%zu bytes vs %zu", nx, ny);
	if (nx && memcmp(bx, by, nx) != 0) {
		size_t i = 0;
		while (bx[i] == by[i])
			i++;
		return differ("bytes differ at %zu", i);
	}
	return NULL;
}

static const char *graph_diff(IrModel *a, GraphId ga, IrModel *b, GraphId gb);

static const char *attr_diff(IrModel *a, const IrAttr *x, IrModel *b, const IrAttr *y)
{
	if (strcmp(x->name, y->name) != 0)
		return differ("attribute '%s' vs '%s'", x->name, y->name);
	if (x->type != y->type)
		return differ("attribute '%s': type %d vs %d", x->name, x->type, y->type);
	const char *why = NULL;
	switch (x->type) {
	case ATTR_FLOAT:
		if (memcmp(&x->f, &y->f, sizeof x->f) != 0)
			why = differ("%.9g vs %.9g", x->f, y->f);
		break;
	case ATTR_INT:
		if (x->i != y->i)
			why = differ("%lld vs %lld", (long long)x->i, (long long)y->i);
		break;
	case ATTR_STRING:
		if (x->s.len != y->s.len || (x->s.len && memcmp(x->s.data, y->s.data, x->s.len) != 0))
			why = differ("strings differ");
		break;
	case ATTR_TENSOR:
		why = tensor_diff(a, x->t, b, y->t);
		break;
	case ATTR_GRAPH:
		why = graph_diff(a, x->g, b, y->g);
		break;
	default:
		if (x->n != y->n) {
			why = differ("%zu vs %zu elements", x->n, y->n);
			break;
		}
		for (size_t i = 0; i < x->n && !why; i++) {
			switch (x->type) {
			case ATTR_FLOATS:
				if (memcmp(&x->floats[i], &y->floats[i], sizeof(float)) != 0)
					why = differ("element %zu: %.9g vs %.9g", i, x->floats[i], y->floats[i]);
				break;
			case ATTR_INTS:
				if (x->ints[i] != y->ints[i])
					why = differ("element %zu differs", i);
				break;
			case ATTR_STRINGS:
				if (x->strings[i].len != y->strings[i].len ||
				    (x->strings[i].len && memcmp(x->strings[i].data, y->strings[i].data, x->strings[i].len) != 0))
					why = differ("element %zu differs", i);
				break;
			case ATTR_TENSORS:
				why = tensor_diff(a, x->tensors[i], b, y->tensors[i]);
				break;
			case ATTR_GRAPHS:
				why = graph_diff(a, x->graphs[i], b, y->graphs[i]);
				break;
			default:
				why = differ("type %d not compared", x->type);
				break;
			}
		}
	}
	if (why && strncmp(why, "attribute '", 11) != 0) {
		char tmp[sizeof diff_msg];
		snprintf(tmp, sizeof tmp, "%s", why);
		return differ("attribute '%s': %s", x->name, tmp);
	}
	return why;
}

/* Prefix the current difference with where it is. */
static const char *within(const char *fmt, const char *what, const char *why)
{
	char tmp[sizeof diff_msg];
	snprintf(tmp, sizeof tmp, "%s", why);
	char where[256];
	snprintf(where, sizeof where, fmt, what);
	return differ("%s: %s", where, tmp);
}

static const char *values_diff(IrModel *a, const ValueId *x, uint32_t nx, IrModel *b, const ValueId *y,
                               uint32_t ny, const char *what, bool types)
{
	if (nx != ny)
		return differ("%u vs %u %s", nx, ny, what);
	for (uint32_t i = 0; i < nx; i++) {
		if (!x[i] != !y[i] || strcmp(vname(a, x[i]), vname(b, y[i])) != 0)
			return differ("%s %u: '%s' vs '%s'", what, i, vname(a, x[i]), vname(b, y[i]));
		if (types && x[i] && !same_type(a, x[i], b, y[i]))
			return differ("%s '%s': types differ", what, vname(a, x[i]));
	}
	return NULL;
}

static const char *graph_diff(IrModel *a, GraphId ga, IrModel *b, GraphId gb)
{
	IrGraph *x = ir_graph(a, ga), *y = ir_graph(b, gb);
	const char *gname = x->name ? x->name : "";
	const char *why;
	if (strcmp(gname, y->name ? y->name : "") != 0)
		return differ("graph '%s' vs '%s'", gname, y->name);
	if ((why = values_diff(a, x->inputs, x->ninputs, b, y->inputs, y->ninputs, "inputs", true)) ||
	    (why = values_diff(a, x->outputs, x->noutputs, b, y->outputs, y->noutputs, "outputs", true)) ||
	    (why = values_diff(a, x->inits, x->ninits, b, y->inits, y->ninits, "initializers", true)))
		return within("graph '%s'", gname, why);
	if (x->nsparse != y->nsparse)
		return differ("graph '%s': %u vs %u sparse initializers", gname, x->nsparse, y->nsparse);
	for (uint32_t i = 0; i < x->ninits; i++) {
		IrValue *p = ir_value(a, x->inits[i]), *q = ir_value(b, y->inits[i]);
		if ((why = tensor_diff(a, p->tensor, b, q->tensor)))
			return within("initializer '%s'", p->name, why);
	}
	if (x->nnodes != y->nnodes)
		return differ("graph '%s': %u vs %u nodes", gname, x->nnodes, y->nnodes);
	for (NodeId n = ir_first(a, ga), k = ir_first(b, gb); n && k; n = ir_next(a, n), k = ir_next(b, k)) {
		IrNode *p = ir_node(a, n), *q = ir_node(b, k);
		char label[160];
		snprintf(label, sizeof label, "graph '%s': node %s#%u '%s'", gname, p->op_type, p->orig_index, p->name);
		if (strcmp(p->op_type, q->op_type) != 0 || strcmp(p->domain, q->domain) != 0 ||
		    strcmp(p->name, q->name) != 0)
			return within("%s", label, differ("is %s.%s '%s'", q->domain, q->op_type, q->name));
		if ((why = values_diff(a, p->inputs, p->ninputs, b, q->inputs, q->ninputs, "inputs", false)) ||
		    (why = values_diff(a, p->outputs, p->noutputs, b, q->outputs, q->noutputs, "outputs", true)))
			return within("%s", label, why);
		if (p->nattrs != q->nattrs)
			return within("%s", label, differ("%u vs %u attributes", p->nattrs, q->nattrs));
		for (uint32_t i = 0; i < p->nattrs; i++)
			if ((why = attr_diff(a, &p->attrs[i], b, &q->attrs[i])))
				return within("%s", label, why);
	}
	return NULL;
}

const char *model_diff(IrModel *a, IrModel *b)
{
	if (a->ir_version != b->ir_version)
		return differ("ir_version %lld vs %lld", (long long)a->ir_version, (long long)b->ir_version);
	if (a->nopsets != b->nopsets)
		return differ("%u vs %u opset imports", a->nopsets, b->nopsets);
	for (uint32_t i = 0; i < a->nopsets; i++)
		if (strcmp(a->opsets[i].domain, b->opsets[i].domain) != 0 || a->opsets[i].version != b->opsets[i].version)
			return differ("opset import %u: '%s' %lld vs '%s' %lld", i, a->opsets[i].domain,
			              (long long)a->opsets[i].version, b->opsets[i].domain, (long long)b->opsets[i].version);
	if ((a->ngraphs > IR_MAIN_GRAPH) != (b->ngraphs > IR_MAIN_GRAPH))
		return differ("only one model has a graph");
	if (a->ngraphs <= IR_MAIN_GRAPH)
		return NULL;
	return graph_diff(a, IR_MAIN_GRAPH, b, IR_MAIN_GRAPH);
}

const char *cli_graft(void)
{
	const char *graft = getenv("GRAFT");
	if (!graft)
		fprintf(stderr, "note: GRAFT not set; CLI test skipped\n");
	return graft;
}

bool heavy_skipped(void)
{
	const char *s = getenv("GRAFT_SKIP_HEAVY");
	return s && *s && strcmp(s, "0") != 0;
}

IrModel *parse_text_model(const char *text)
{
	Diag d;
	diag_init(&d, stderr);
	IrModel *m = ir_parse_model(text, strlen(text), "t.onnx", &d);
	ck_assert_msg(m != NULL, "%s", d.first);
	return m;
}

char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char *s = NULL;
	ck_assert_int_ge(vasprintf(&s, f, ap), 0);
	va_end(ap);
	return s;
}

int run_shell(const char *cmd, char **out)
{
	size_t n = strlen(cmd) + 16;
	char *full = malloc(n);
	ck_assert_ptr_nonnull(full);
	snprintf(full, n, "(%s) 2>&1", cmd);
	FILE *p = popen(full, "r");
	ck_assert_ptr_nonnull(p);
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	for (size_t got; (got = fread(buf + len, 1, cap - len - 1, p)) > 0;) {
		len += got;
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	buf[len] = 0;
	int st = pclose(p);
	free(full);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
}
