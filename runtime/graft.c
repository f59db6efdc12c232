/* graft.c - the `graft` command line: one verb per job, each a short script
 * over libgraft.  Errors go to stderr as one line naming the file (and the
 * node or tensor); exit codes are documented in usage() and the README. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "text.h"

/* Exit codes. */
enum {
	EXIT_OK = 0,
	EXIT_INPUT = 1,   /* bad or unreadable input, or a failed save */
	EXIT_USAGE = 2,   /* bad command line */
};

static const char *const usage_text =
	"usage: graft <command> [options] MODEL\n"
	"\n"
	"commands:\n"
	"  info MODEL                 producer, IR version, opsets, counts and an op histogram\n"
	"  print MODEL                the graph in ONNX's textual syntax\n"
	"  roundtrip MODEL -o OUT     load and save through the IR (byte-identical if unchanged)\n"
	"\n"
	"Run 'graft <command> --help' for a command's options.\n"
	"\n"
	"exit status: 0 success, 1 bad input or failed save, 2 bad command line\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "graft: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(run 'graft --help' for usage)\n");
	return EXIT_USAGE;
}

static IrModel *load(const char *path)
{
	Diag d;
	diag_init(&d, stderr);
	return ir_load_file(path, NULL, &d);
}

/* ---- info -------------------------------------------------------------- */

typedef struct OpCount {
	const char *domain, *op;
	unsigned count;
} OpCount;

static int cmp_count(const void *a, const void *b)
{
	const OpCount *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	int c = strcmp(x->domain, y->domain);
	return c ? c : strcmp(x->op, y->op);
}

static void human_bytes(char *buf, size_t size, double b)
{
	const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

static int cmd_info(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: graft info MODEL\n"
		       "Prints the producer, IR version, opset imports, node and initializer\n"
		       "counts, initializer bytes and an op-type histogram (nodes in subgraphs\n"
		       "included).\n");
		return EXIT_OK;
	}
	if (argc != 2)
		return usage_error("info: expected one MODEL%s", "");
	IrModel *m = load(argv[1]);
	if (!m)
		return EXIT_INPUT;
	uint32_t nodes = 0, sub_nodes = 0, inits = 0, graphs = 0;
	size_t init_bytes = 0;
	OpCount *hist = NULL;
	size_t nhist = 0;
	for (GraphId g = 1; g < m->ngraphs; g++) {
		IrGraph *gr = ir_graph(m, g);
		if (gr->dead)
			continue;
		graphs++;
		for (NodeId n = gr->first; n; n = ir_next(m, n)) {
			IrNode *node = ir_node(m, n);
			if (g == IR_MAIN_GRAPH)
				nodes++;
			else
				sub_nodes++;
			size_t i;
			for (i = 0; i < nhist; i++)
				if (strcmp(hist[i].op, node->op_type) == 0 && strcmp(hist[i].domain, node->domain) == 0)
					break;
			if (i == nhist) {
				hist = realloc(hist, sizeof *hist * (nhist + 1));
				hist[nhist++] = (OpCount){node->domain, node->op_type, 0};
			}
			hist[i].count++;
		}
		for (uint32_t i = 0; i < gr->ninits; i++) {
			IrValue *v = ir_value(m, gr->inits[i]);
			if (v->dead || !v->tensor)
				continue;
			inits++;
			init_bytes += ir_tensor(m, v->tensor)->nbytes;
		}
	}
	qsort(hist, nhist, sizeof *hist, cmp_count);

	printf("model         %s\n", argv[1]);
	char producer[256];
	printf("producer      %s\n", ir_model_producer(m, producer, sizeof producer));
	printf("ir_version    %lld\n", (long long)m->ir_version);
	printf("opsets       ");
	for (uint32_t i = 0; i < m->nopsets; i++)
		printf(" %s %lld%s", *m->opsets[i].domain ? m->opsets[i].domain : "ai.onnx",
		       (long long)m->opsets[i].version, i + 1 < m->nopsets ? "," : "");
	printf("\n");
	IrGraph *main = ir_graph(m, IR_MAIN_GRAPH);
	printf("graph         '%s': %u inputs, %u outputs\n", main->name, main->ninputs, main->noutputs);
	printf("nodes         %u", nodes);
	if (graphs > 1)
		printf(" (+%u in %u subgraphs)", sub_nodes, graphs - 1);
	char hb[32];
	human_bytes(hb, sizeof hb, (double)init_bytes);
	printf("\ninitializers  %u, %zu bytes (%s)\n", inits, init_bytes, hb);
	int w = 2;
	for (size_t i = 0; i < nhist; i++) {
		int len = (int)(strlen(hist[i].op) + (*hist[i].domain ? strlen(hist[i].domain) + 1 : 0));
		if (len > w)
			w = len;
	}
	printf("\n%-*s  %6s\n", w, "op", "count");
	for (size_t i = 0; i < nhist; i++) {
		char name[512];
		snprintf(name, sizeof name, "%s%s%s", hist[i].domain, *hist[i].domain ? "." : "", hist[i].op);
		printf("%-*s  %6u\n", w, name, hist[i].count);
	}
	free(hist);
	ir_model_free(m);
	return EXIT_OK;
}

/* ---- print ------------------------------------------------------------- */

static int cmd_print(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: graft print MODEL\n"
		       "Prints the model in ONNX's textual syntax (the one onnx.parser reads).\n");
		return EXIT_OK;
	}
	if (argc != 2)
		return usage_error("print: expected one MODEL%s", "");
	IrModel *m = load(argv[1]);
	if (!m)
		return EXIT_INPUT;
	Diag d;
	diag_init(&d, stderr);
	bool ok = ir_print_model(m, stdout, &d);
	ir_model_free(m);
	return ok ? EXIT_OK : EXIT_INPUT;
}

/* ---- roundtrip --------------------------------------------------------- */

static int cmd_roundtrip(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"external-data", no_argument, NULL, 'x'},
		{"overwrite", no_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	SaveOptions so = {0};
	const char *out = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'x': so.external = EXT_ALL; break;
		case 'w': so.overwrite_input = true; break;
		case 'h':
			printf("usage: graft roundtrip MODEL -o OUT [--external-data] [--overwrite]\n"
			       "Loads MODEL into the IR and saves it from the IR.  Unchanged, the output\n"
			       "is byte-identical to the input.\n"
			       "  -o, --output OUT   where to write (required)\n"
			       "  --external-data    write tensors of 1 KiB or more to OUT.data\n"
			       "  --overwrite        allow OUT to be MODEL itself\n");
			return EXIT_OK;
		default:
			return usage_error("roundtrip: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("roundtrip: expected one MODEL%s", "");
	if (!out)
		return usage_error("roundtrip: missing -o OUT%s", "");
	IrModel *m = load(argv[optind]);
	if (!m)
		return EXIT_INPUT;
	Diag d;
	diag_init(&d, stderr);
	bool ok = ir_save_file(m, out, &so, &d);
	ir_model_free(m);
	return ok ? EXIT_OK : EXIT_INPUT;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("missing command%s", "");
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage_text, stdout);
		return EXIT_OK;
	}
	if (strcmp(cmd, "info") == 0)
		return cmd_info(argc - 1, argv + 1);
	if (strcmp(cmd, "print") == 0)
		return cmd_print(argc - 1, argv + 1);
	if (strcmp(cmd, "roundtrip") == 0)
		return cmd_roundtrip(argc - 1, argv + 1);
	return usage_error("unknown command '%s'", cmd);
}
