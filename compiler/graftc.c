/* graftc.c - the rule compiler's command line.
 *
 *   graftc --check FILE...      parse and check rule files, print every diagnostic
 *   graftc --dump-ast FILE...   the same, then print the checked syntax trees
 *   graftc -o OUT.c [-n SET] FILE...   check, then write the C matchers
 *                               (codegen.c) as rule set SET (default: from
 *                               OUT's name, rules_basic.c -> basic); with
 *                               --line, #line directives point the
 *                               generated functions at the rule files;
 *                               --sources FILE.c: the rules text (for
 *                               --why) in a second file
 *   --analysis                  (with any of them) one line per rule: analysed,
 *                               or why not (dsl/analyse.h)
 *
 * The pipeline reads like a script: read every file, parse each (dsl_parse,
 * which reports syntax errors and goes on), check them together
 * (dsl_check: rule names are unique across files), then, without errors,
 * analyse them (dsl_analyse: shadowed rules, conflicts, rules that recreate
 * their left side; a one-line note names the rules it could not decide),
 * then the chosen output.
 * Code generation (-o OUT.c) is one more output step, taken only when
 * there is no error, and the file is rewritten only when it changed.  Exit
 * status: 0 when there is no error, 1 when there are errors, 2 on a usage
 * problem. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/analyse.h"
#include "dsl/ast.h"
#include "codegen.h"
#include "ir/outfile.h"

typedef enum Mode { MODE_NONE, MODE_CHECK, MODE_DUMP, MODE_GEN } Mode;

typedef struct Options {
	Mode mode;
	const char *out;            /* -o: the C file to generate */
	const char *sources;        /* --sources: a second C file for the rules text */
	const char *set;            /* -n: the rule set's name */
	bool lines;                 /* --line: #line directives in the output */
	bool analysis;              /* --analysis: what the analysis did with each rule */
	const char **files;
	int nfiles;
} Options;

static void usage(FILE *to)
{
	fputs("usage: graftc --check FILE...      parse and check rule files\n"
	      "       graftc --dump-ast FILE...   check, then print the syntax trees\n"
	      "       graftc -o OUT.c [-n SET] [--line] [--sources FILE.c] FILE...\n"
	      "                                   check, then write C matchers exporting\n"
	      "                                   graft_rules_SET (default SET: OUT's name\n"
	      "                                   without 'rules_' and '.c'); --line adds\n"
	      "                                   #line directives naming the rule files;\n"
	      "                                   --sources FILE.c puts the rules text\n"
	      "                                   (for --why) in FILE.c, exporting\n"
	      "                                   graft_rules_SET_sources\n"
	      "       graftc --analysis ...       also say, one line per rule, whether the\n"
	      "                                   shadowing/conflict analysis decided it\n"
	      "       graftc --help\n"
	      "Diagnostics go to stderr as file:line:col: error: message, with the\n"
	      "source line and a caret; the exit status is 0 only without errors.\n"
	      "The rule language: docs/rule-language.md.\n", to);
}

/* Returns 0 to go on, else the exit status. */
static int parse_args(int argc, char **argv, Options *o)
{
	o->files = calloc((size_t)argc, sizeof *o->files);
	if (!o->files)
		abort();
	bool only_files = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_files || a[0] != '-' || a[1] == 0) {
			o->files[o->nfiles++] = a;
		} else if (!strcmp(a, "--")) {
			only_files = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return -1;
		} else if (!strcmp(a, "--check")) {
			o->mode = MODE_CHECK;
		} else if (!strcmp(a, "--dump-ast")) {
			o->mode = MODE_DUMP;
		} else if (!strcmp(a, "--line")) {
			o->lines = true;
		} else if (!strcmp(a, "--analysis")) {
			o->analysis = true;
		} else if (!strcmp(a, "--sources") && i + 1 < argc) {
			o->sources = argv[++i];
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "-n") || !strcmp(a, "--name")) &&
		           i + 1 < argc) {
			if (a[1] == 'o' || a[2] == 'o') {
				o->out = argv[++i];
				o->mode = MODE_GEN;
			} else {
				o->set = argv[++i];
			}
		} else {
			fprintf(stderr, "graftc: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (o->mode == MODE_NONE && o->analysis)
		o->mode = MODE_CHECK;
	if (o->mode == MODE_NONE) {
		fputs("graftc: say what to do: --check, --dump-ast or -o OUT.c\n", stderr);
		usage(stderr);
		return 2;
	}
	if (o->nfiles == 0) {
		fputs("graftc: no rule files given\n", stderr);
		usage(stderr);
		return 2;
	}
	if (o->set) {
		bool ok = (o->set[0] < '0' || o->set[0] > '9') && o->set[0];
		for (const char *p = o->set; *p; p++)
			ok = ok && (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'));
		if (!ok) {
			fprintf(stderr, "graftc: the set name '%s' is not a C identifier\n", o->set);
			return 2;
		}
	}
	return 0;
}

/* The set name from the output file: build/gen/rules_basic.c -> basic. */
static char *set_from_path(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!strncmp(base, "rules_", 6) && base[6])
		base += 6;
	char *s = strdup(base);
	if (!s)
		abort();
	char *dot = strrchr(s, '.');
	if (dot && dot != s)
		*dot = 0;
	for (char *p = s; *p; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			*p = '_';
	if (*s >= '0' && *s <= '9')
		*s = '_';
	return s;
}

/* The whole file, or NULL after a message. */
static char *read_all(const char *path, uint32_t *len)
{
	int err;
	char *text = dsl_read_file(path, len, &err);
	char buf[256];
	if (!text && err > 0)
		fprintf(stderr, "graftc: cannot read '%s': %s\n", path, strerror(err));
	else if (!text)
		fprintf(stderr, "graftc: %s: %s\n", path, dsl_read_strerror(err, buf, sizeof buf));
	return text;
}

int main(int argc, char **argv)
{
	out_catch_signals(); /* an interrupted build leaves no half-written matcher file */
	Options o = {0};
	int status = parse_args(argc, argv, &o);
	if (status) {
		free(o.files);
		return status < 0 ? 0 : status;
	}

	Diag d;
	diag_init(&d, stderr);
	char **texts = calloc((size_t)o.nfiles, sizeof *texts);
	RuleFile **files = calloc((size_t)o.nfiles, sizeof *files);
	if (!texts || !files)
		abort();
	int nfiles = 0;
	bool unreadable = false;

	/* 1. read and parse every file */
	for (int i = 0; i < o.nfiles; i++) {
		uint32_t len;
		char *text = read_all(o.files[i], &len);
		if (!text) {
			unreadable = true;
			continue;
		}
		texts[nfiles] = text;
		files[nfiles++] = dsl_parse(o.files[i], text, len, &d);
	}

	/* 2. check them together */
	dsl_check(files, nfiles, &d);

	/* 3. lower them to programs (errors only when writing C), and analyse
	 * those: shadowed and conflicting rules, results that recreate their
	 * left side (an error: no output is written) */
	MRuleSet *rs = NULL;
	if (!d.nerrors && !unreadable && o.mode != MODE_DUMP) {
		Diag quiet;
		diag_init(&quiet, NULL);
		int errors = d.nerrors;
		rs = dsl_lower_each(files, nfiles, o.mode == MODE_GEN ? &d : &quiet);
		bool lowered = d.nerrors == errors;
		DslAnalysis an;
		dsl_analyse_rules(rs, files, nfiles, &d, &an);
		if (o.analysis) {
			dsl_analysis_print(&an, files, nfiles, stdout);
		} else {
			char *note = dsl_analysis_summary(&an);
			if (note)
				fprintf(stderr, "graftc: note: %s\n", note);
			free(note);
		}
		dsl_analysis_free(&an);
		if (!lowered || o.mode != MODE_GEN) {
			dsl_lower_free(rs);
			rs = NULL;
		}
	}

	/* 4. output */
	if (o.mode == MODE_DUMP) {
		for (int i = 0; i < nfiles; i++) {
			if (i)
				fputc('\n', stdout);
			dsl_dump(files[i], stdout);
		}
	}

	bool write_failed = false;
	if (o.mode == MODE_GEN && !d.nerrors && !unreadable) { /* codegen_c frees rs */
		char *set = o.set ? strdup(o.set) : set_from_path(o.out);
		char *sources = NULL;
		char *text = codegen_c(files, nfiles, rs, set, o.lines ? o.out : NULL, o.sources ? &sources : NULL, &d);
		if (text && !codegen_write_if_changed(o.out, text))
			write_failed = true;
		if (sources && !codegen_write_if_changed(o.sources, sources))
			write_failed = true;
		free(text);
		free(sources);
		free(set);
	} else {
		dsl_lower_free(rs);
	}

	if (d.nerrors || d.nwarnings)
		fprintf(stderr, "graftc: %d error%s, %d warning%s\n", d.nerrors, d.nerrors == 1 ? "" : "s",
		        d.nwarnings, d.nwarnings == 1 ? "" : "s");
	for (int i = 0; i < nfiles; i++) {
		dsl_free(files[i]);
		free(texts[i]);
	}
	free(files);
	free(texts);
	free(o.files);
	return d.nerrors || unreadable || write_failed ? 1 : 0;
}
