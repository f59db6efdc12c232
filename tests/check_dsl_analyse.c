/* check_dsl_analyse.c - tests of the compile-time analysis (dsl/analyse.c):
 * one rule text per diagnostic (shadowed rule, conflict at equal priority,
 * a result that recreates its left side), asserting the exact message and
 * position; look-alikes that must stay silent; the rules not analysed and
 * their summary; and the rule library, which analyses clean. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/analyse.h"

/* Parse, check and analyse texts t.rules, u.rules, ...; every printed line in out. */
typedef struct Analysed {
	RuleFile *files[4];
	int nfiles;
	Diag d;
	char *out;
	size_t outlen;
	bool checked, ok;
	DslAnalysis an;
} Analysed;

static void analyse_texts(Analysed *a, const char *const *srcs, int n)
{
	static const char *const names[] = {"t.rules", "u.rules", "v.rules", "w.rules"};
	memset(a, 0, sizeof *a);
	FILE *out = open_memstream(&a->out, &a->outlen);
	diag_init(&a->d, out);
	for (int i = 0; i < n; i++)
		a->files[i] = dsl_parse(names[i], srcs[i], (uint32_t)strlen(srcs[i]), &a->d);
	a->nfiles = n;
	a->checked = dsl_check(a->files, n, &a->d);
	if (a->checked)
		a->ok = dsl_analyse(a->files, n, &a->d, &a->an);
	fclose(out);
}

static void analysed_free(Analysed *a)
{
	for (int i = 0; i < a->nfiles; i++)
		dsl_free(a->files[i]);
	dsl_analysis_free(&a->an);
	free(a->out);
}

static bool has_line(const char *out, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = out; (p = strstr(p, line)) != NULL; p++)
		if ((p == out || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* One diagnostic: the rules, the message (with file:line:col), the counts. */
static const struct {
	const char *what, *src, *line;
	int nerrors, nwarnings;
} cases[] = {
	{"shadowed by an earlier, more general rule",
	 "rule a: Relu(x) => Neg(x);\nrule b: Relu(Neg(y)) => y;\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed by a later rule of higher priority",
	 "rule a: Relu(Neg(y)) => y;\nrule b [priority 2]: Relu(x) => Neg(x);\n",
	 "t.rules:1:6: warning: rule 'a' is shadowed by rule 'b' (t.rules:2), tried first with a left side as general: 'a' never fires",
	 0, 1},
	{"shadowed: the later rule's guard does not matter",
	 "rule a: Relu(x) => Neg(x);\nrule b: Relu(Neg(y)) if rank(y) == 2 => y;\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: distinct variables cover a repeated one",
	 "rule a: Max(x, y) => Sub(x, y);\nrule b: Max(p, p) => p;\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: a constant input, which older opsets than the rules' spell as an attribute",
	 "rule a [opset 13..]: Unsqueeze(x, c:const) if len(ints(c)) == 0 => x;\n"
	 "rule b [opset 13..]: Unsqueeze(y, d:const) if len(ints(d)) == 0 => y;\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: the same attribute literal",
	 "rule a: Transpose[perm = [1, 0]](x) => x;\nrule b: Transpose[perm = [1, 0]](Relu(x)) => Relu(x);\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: a literal is a constant",
	 "rule a: Mul(x, c:const) => Div(x, c);\nrule b: Mul(y, 2.0) => Add(y, y);\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed through a commutative op",
	 "rule a: Add(x, Relu(y)) => Sub(x, y);\nrule b: Add(Relu(p), q) => Sub(q, p);\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed across files",
	 NULL, "u.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"conflict at equal priority",
	 "rule a: Mul(x, 2.0) => Add(x, x);\nrule b: Mul(Sqrt(p), y) => Sqrt(Mul(p, y));\n",
	 "t.rules:2:6: warning: rules 'a' (t.rules:1) and 'b' have equal priority and rewrite the same match differently: 'a' wins by source order; give one of them a priority",
	 0, 1},
	{"conflict: Sub is not commutative",
	 "rule a: Sub(x, Relu(y)) => Sub(y, x);\nrule b: Sub(Relu(p), q) => Add(p, q);\n",
	 "t.rules:2:6: warning: rules 'a' (t.rules:1) and 'b' have equal priority and rewrite the same match differently: 'a' wins by source order; give one of them a priority",
	 0, 1},
	{"the result recreates the left side",
	 "rule r: Transpose[perm = p](x) => Transpose[perm = p](x);\n",
	 "t.rules:1:35: error: the result of rule 'r' matches its own left side again: it would rewrite forever", 1, 0},
	{"the result recreates the left side: an attribute list the program computes before building",
	 "rule r [opset ..16]: ReduceMean[axes = [-1], keepdims = 1](x) => ReduceMean[axes = [-1], keepdims = 1](x);\n",
	 "t.rules:1:66: error: the result of rule 'r' matches its own left side again: it would rewrite forever", 1, 0},
	{"the result recreates the left side, operands swapped",
	 "rule r: Add(a, b) => Add(b, a);\n",
	 "t.rules:1:22: error: the result of rule 'r' matches its own left side again: it would rewrite forever", 1, 0},
	{"the result recreates the left side, an attribute at its default",
	 "rule r: Gemm[transA = 0](a, b, c) => Gemm(a, b, c);\n",
	 "t.rules:1:38: error: the result of rule 'r' matches its own left side again: it would rewrite forever", 1, 0},
};

START_TEST(diagnostic)
{
	Analysed a;
	if (cases[_i].src) {
		const char *src = cases[_i].src;
		analyse_texts(&a, &src, 1);
	} else {
		const char *srcs[] = {"rule a: Relu(x) => Neg(x);\n", "// later\nrule b: Relu(Relu(y)) => y;\n"};
		analyse_texts(&a, srcs, 2);
	}
	ck_assert_msg(a.checked, "%s: the checker failed:\n%s", cases[_i].what, a.out);
	ck_assert_msg(has_line(a.out, cases[_i].line), "%s: expected\n%s\ngot\n%s", cases[_i].what, cases[_i].line,
	              a.out);
	ck_assert_msg(a.d.nerrors == cases[_i].nerrors && a.d.nwarnings == cases[_i].nwarnings,
	              "%s: %d errors, %d warnings (expected %d, %d):\n%s", cases[_i].what, a.d.nerrors, a.d.nwarnings,
	              cases[_i].nerrors, cases[_i].nwarnings, a.out);
	ck_assert(a.ok == (cases[_i].nerrors == 0));
	analysed_free(&a);
}
END_TEST

/* Look-alikes: no warning, no error, everything analysed. */
static const struct {
	const char *what, *src;
} silent[] = {
	{"a different attribute literal",
	 "rule a: Transpose[perm = [1, 0]](x) => x;\nrule b: Transpose[perm = [0, 1]](Relu(y)) => Neg(y);\n"},
	{"an attribute the later rule does not pin",
	 "rule a: Concat[axis = 1](x, y) => Add(x, y);\nrule b: Concat(p, q) => Sub(p, q);\n"},
	{"the earlier rule needs :const, the later one does not",
	 "rule a: Mul(x, c:const) => Div(x, c);\nrule b: Mul(y, z) => Add(y, z);\n"},
	{"the earlier rule repeats a variable, the later one does not",
	 "rule a: Add(x, x) => Neg(x);\nrule b: Add(p, q) => Sub(p, q);\n"},
	{"the earlier rule's opset range does not cover the later one's",
	 "rule a [opset 13..]: Relu(x) => Neg(x);\nrule b [opset 10..]: Relu(Neg(y)) => y;\n"},
	{"different levels",
	 "rule a [extended]: Relu(x) => Neg(x);\nrule b [basic]: Relu(Neg(y)) => y;\n"},
	{"a more general rule of lower priority",
	 "rule a: Relu(x) => Neg(x);\nrule b [priority 1]: Relu(Neg(y)) => y;\n"},
	{"overlapping rules of different priorities",
	 "rule a: Mul(x, 2.0) => Add(x, x);\nrule b [priority 1]: Mul(Sqrt(p), y) => Sqrt(Mul(p, y));\n"},
	{"a special case before the general rule",
	 "rule a: Mul(x, 2.0) => Add(x, x);\nrule b: Mul(p, y) => Div(p, y);\n"},
	{"overlapping rules that rewrite alike",
	 "rule a: Mul(x, 2.0) => Add(x, x);\nrule b: Mul(s @ Sqrt(_), _) => Add(s, s);\n"},
	{"literals that cannot both match",
	 "rule a: Mul(x, 2.0) => Add(x, x);\nrule b: Mul(Sqrt(p), 3.0) => Sqrt(p);\n"},
	{"a commutative pattern that does not fit either way",
	 "rule a: Add(x, Relu(y)) => Sub(x, y);\nrule b: Add(Sqrt(p), Neg(q)) => Sub(q, p);\n"},
	{"a result that builds something else",
	 "rule r: Transpose[perm = p](Transpose[perm = q](x)) => Transpose[perm = compose(q, p)](x);\n"},
	{"a result with the root op on other operands",
	 "rule r: Add(Neg(a), b) => Add(b, a);\n"},
	{"a result with an attribute the pattern excludes",
	 "rule r: Gemm[transA = 1](a, b, c) => Gemm(a, b, c);\n"},
};

START_TEST(stays_silent)
{
	Analysed a;
	analyse_texts(&a, &silent[_i].src, 1);
	ck_assert_msg(a.checked && a.ok && a.d.nerrors == 0 && a.d.nwarnings == 0, "%s:\n%s\n%s", silent[_i].what,
	              silent[_i].src, a.out);
	ck_assert_msg(a.an.nskipped == 0, "%s: %s not analysed", silent[_i].what,
	              a.an.nskipped ? a.an.skipped[0].rule->name : "");
	analysed_free(&a);
}
END_TEST

/* Rules the analysis cannot decide are listed, with their reasons; guards,
 * helpers, rest lists and negative patterns are analysed. */
START_TEST(not_analysed)
{
	const char *src = "extern bool f(int);\n"
	                  "rule g: Relu(x) if rank(x) == 2 => Neg(x);\n"
	                  "rule h: Transpose[perm = p](x) if f(len(p)) => x;\n"
	                  "rule c: Concat(xs...) => Neg(xs[0]);\n"
	                  "rule p: Sqrt(x) => Neg(Mul(x, 2.0));\n"
	                  "rule q: Sqrt(Neg(y)) => y;\n"
	                  "rule fine: Neg(Neg(x)) => x;\n"
	                  "rule n: Sub(x:!Conv, y) => Sub(y, x);\n"
	                  "rule hq: Transpose[perm = p](x) if all(i in p: f(i)) => x;\n";
	Analysed a;
	analyse_texts(&a, &src, 1);
	ck_assert_msg(a.ok && a.d.nerrors == 0 && a.d.nwarnings == 0, "%s", a.out);
	ck_assert_int_eq(a.an.nskipped, 1);
	char *sum = dsl_analysis_summary(&a.an);
	ck_assert_str_eq(sum, "not analysed (result that may not build): p");
	free(sum);
	char *lines = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&lines, &len);
	dsl_analysis_print(&a.an, a.files, a.nfiles, m);
	fclose(m);
	ck_assert_msg(has_line(lines, "t.rules:2: g: analysed"), "%s", lines);
	ck_assert_msg(has_line(lines, "t.rules:3: h: analysed"), "%s", lines);
	ck_assert_msg(has_line(lines, "t.rules:4: c: analysed"), "%s", lines);
	ck_assert_msg(has_line(lines, "t.rules:5: p: not analysed: its result may fail to build (a number, whose dtype is found at match time), so whether it shadows 'q' is not decided"),
	              "%s", lines);
	ck_assert_msg(has_line(lines, "t.rules:6: q: analysed"), "%s", lines);
	ck_assert_msg(has_line(lines, "t.rules:7: fine: analysed"), "%s", lines);
	/* Sub(y, x) need not match again: y is not known to be no Conv output */
	ck_assert_msg(has_line(lines, "t.rules:8: n: analysed"), "%s", lines);
	ck_assert_msg(has_line(lines, "t.rules:9: hq: analysed"), "%s", lines);
	free(lines);
	analysed_free(&a);
}
END_TEST

/* A construct the lowering refuses (a variable bound to an input that older opsets spell
 * as an attribute, read as ints: graftc's C used an undeclared variable) is not analysed. */
START_TEST(not_analysed_construct)
{
	const char *src = "rule s: Squeeze[axes = a](x) if len(a) == 1 => x;\n";
	Analysed a;
	analyse_texts(&a, &src, 1);
	ck_assert_msg(a.checked, "%s", a.out);
	ck_assert_int_eq(a.an.nskipped, 1);
	ck_assert_str_eq(a.an.skipped[0].reason,
	                 "it uses a construct the code generator does not support, which the analysis does not model");
	analysed_free(&a);
}
END_TEST

START_TEST(summary_when_all_analysed)
{
	const char *src = "rule a: Neg(Neg(x)) => x;\n";
	Analysed a;
	analyse_texts(&a, &src, 1);
	ck_assert_int_eq(a.an.nskipped, 0);
	ck_assert_ptr_null(dsl_analysis_summary(&a.an));
	analysed_free(&a);
}
END_TEST

/* The library analyses clean, as the Makefile gives it to graftc: one run
 * per level directory, and both together. */
static int read_dir(const char *dirname, char **srcs, const char **names, int n)
{
	DIR *dir = opendir(dirname);
	ck_assert_msg(dir != NULL, "%s: run the tests from the top directory", dirname);
	struct dirent *de;
	while ((de = readdir(dir)) != NULL && n < 32) {
		size_t len = strlen(de->d_name);
		if (len < 7 || strcmp(de->d_name + len - 6, ".rules") != 0)
			continue;
		char path[512];
		snprintf(path, sizeof path, "%s/%s", dirname, de->d_name);
		FILE *fp = fopen(path, "rb");
		ck_assert_ptr_nonnull(fp);
		char *buf = NULL;
		size_t cap = 0;
		FILE *mem = open_memstream(&buf, &cap);
		int ch;
		while ((ch = fgetc(fp)) != EOF)
			fputc(ch, mem);
		fclose(mem);
		fclose(fp);
		srcs[n] = buf;
		names[n] = strdup(path);
		n++;
	}
	closedir(dir);
	return n;
}

START_TEST(rule_library_analyses_clean)
{
	static const char *const sets[][2] = {{"rules/basic", NULL}, {"rules/extended", NULL},
	                                      {"rules/basic", "rules/extended"}};
	char *srcs[32];
	const char *names[32];
	int n = 0;
	for (int k = 0; k < 2 && sets[_i][k]; k++)
		n = read_dir(sets[_i][k], srcs, names, n);
	Diag d;
	char *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);
	diag_init(&d, mem);
	RuleFile *files[32];
	for (int i = 0; i < n; i++)
		files[i] = dsl_parse(names[i], srcs[i], (uint32_t)strlen(srcs[i]), &d);
	ck_assert(dsl_check(files, n, &d));
	DslAnalysis an;
	bool ok = dsl_analyse(files, n, &d, &an);
	fclose(mem);
	ck_assert_msg(ok && d.nerrors == 0 && d.nwarnings == 0, "%s", out);
	/* every rule of the library is analysed */
	for (int i = 0; i < an.nskipped; i++)
		ck_assert_msg(false, "%s: not analysed: %s", an.skipped[i].rule->name, an.skipped[i].reason);
	dsl_analysis_free(&an);
	for (int i = 0; i < n; i++) {
		dsl_free(files[i]);
		free(srcs[i]);
		free((char *)names[i]);
	}
	free(out);
}
END_TEST

/* Guards (issue 28): a guard is the conjunction of its && terms; the earlier
 * rule's terms must follow from the later one's for a shadow, and two rules
 * whose guards cannot both hold do not conflict. */
static const struct {
	const char *what, *src, *line;
	int nerrors, nwarnings;
} guarded[] = {
	{"shadowed: the same guard term, renamed",
	 "rule a: Relu(x) if rank(x) == 2 => Neg(x);\nrule b: Relu(y) if dtype(y) == float32 && rank(y) == 2 => Abs(y);\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: a comparison that implies the earlier one",
	 "rule a: Relu(x) if rank(x) >= 2 => Neg(x);\nrule b: Relu(y) if rank(y) == 3 => Abs(y);\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: one dtype of the earlier rule's set",
	 "rule a: Relu(x) if is_float(x) => Neg(x);\nrule b: Relu(y) if dtype(y) == float16 || dtype(y) == bfloat16 => Abs(y);\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: the same helper call, renamed",
	 "extern bool f(int);\nrule a: Transpose[perm = p](x) if f(len(p)) => x;\n"
	 "rule b: Transpose[perm = q](Relu(y)) if f(len(q)) && len(q) == 2 => Relu(y);\n",
	 "t.rules:3:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:2), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: the op's schema fixes the dtype",
	 "rule a: Relu(x) if is_float(x) => Neg(x);\nrule b: Relu(c @ Conv(_, _)) => c;\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: a Transpose's perm fixes the rank",
	 "rule a: Relu(x) if rank(x) == 2 => Neg(x);\nrule b: Relu(t @ Transpose[perm = [1, 0]](_)) => t;\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"shadowed: an attribute literal satisfies the guard",
	 "rule a: Softmax[axis = k](x) if k < 0 => Neg(x);\nrule b: Softmax[axis = -1](Relu(y)) => Relu(y);\n",
	 "t.rules:2:6: warning: rule 'b' is shadowed by rule 'a' (t.rules:1), tried first with a left side as general: 'b' never fires",
	 0, 1},
	{"conflict: guards that may both hold",
	 "rule a: Mul(x, 2.0) if rank(x) == 2 => Add(x, x);\nrule b: Mul(Sqrt(p), y) if rank(p) == 2 => Sqrt(Mul(p, y));\n",
	 "t.rules:2:6: warning: rules 'a' (t.rules:1) and 'b' have equal priority and rewrite the same match differently: 'a' wins by source order; give one of them a priority",
	 0, 1},
	{"conflict: different helpers are not exclusive",
	 "extern bool f(int);\nextern bool g(int);\n"
	 "rule a: Mul(x, 2.0) if f(rank(x)) => Add(x, x);\nrule b: Mul(s @ Sqrt(p), y) if !g(rank(s)) => Sqrt(Mul(p, y));\n",
	 "t.rules:4:6: warning: rules 'a' (t.rules:3) and 'b' have equal priority and rewrite the same match differently: 'a' wins by source order; give one of them a priority",
	 0, 1},
	{"the result recreates the left side through a negative pattern (Add tries both orders)",
	 "rule n: Add(x:!Conv, y) => Add(y, x);\n",
	 "t.rules:1:28: error: the result of rule 'n' matches its own left side again: it would rewrite forever", 1, 0},
	{"the result recreates the left side, the guard may hold again",
	 "rule r: Sub(x, y) if rank(x) == rank(y) => Sub(y, x);\n",
	 "t.rules:1:44: error: the result of rule 'r' matches its own left side again: it would rewrite forever", 1, 0},
};

START_TEST(guarded_diagnostic)
{
	Analysed a;
	analyse_texts(&a, &guarded[_i].src, 1);
	ck_assert_msg(a.checked, "%s: the checker failed:\n%s", guarded[_i].what, a.out);
	ck_assert_msg(has_line(a.out, guarded[_i].line), "%s: expected\n%s\ngot\n%s", guarded[_i].what, guarded[_i].line,
	              a.out);
	ck_assert_msg(a.d.nerrors == guarded[_i].nerrors && a.d.nwarnings == guarded[_i].nwarnings,
	              "%s: %d errors, %d warnings (expected %d, %d):\n%s", guarded[_i].what, a.d.nerrors, a.d.nwarnings,
	              guarded[_i].nerrors, guarded[_i].nwarnings, a.out);
	ck_assert_int_eq(a.an.nskipped, 0);
	analysed_free(&a);
}
END_TEST

/* Guarded look-alikes: no warning, no error, everything analysed. */
static const struct {
	const char *what, *src;
} guarded_silent[] = {
	{"not shadowed: the earlier guard does not follow from the later one",
	 "rule a: Relu(x) if rank(x) >= 2 => Neg(x);\nrule b: Relu(y) if rank(y) >= 1 => Abs(y);\n"},
	{"not shadowed: the earlier guard is about another value",
	 "rule a: Add(x, y) if rank(x) == 2 => Sub(x, y);\nrule b: Add(p, Relu(q)) if rank(q) == 2 => Sub(q, p);\n"},
	{"not shadowed: a helper the later rule does not call",
	 "extern bool f(int);\nrule a: Softmax[axis = k](x) if f(k) => Neg(x);\nrule b: Softmax[axis = j](Relu(y)) => Relu(Softmax[axis = j](y));\n"},
	{"no conflict: one dtype and its negation",
	 "rule a: Mul(x, 2.0) if dtype(x) == float32 => Add(x, x);\n"
	 "rule b: Mul(s @ Sqrt(p), y) if dtype(s) != float32 => Sqrt(Mul(p, y));\n"},
	{"no conflict: two literals for one attribute",
	 "rule a: Softmax[axis = k](x) if k == 1 => Neg(x);\nrule b: Softmax[axis = j](Relu(y)) if j == 2 => Abs(y);\n"},
	{"no conflict: is_int and is_float",
	 "rule a: Relu(x) if is_int(x) => Neg(x);\nrule b: Relu(n @ Abs(y)) if is_float(n) => Neg(y);\n"},
	{"no conflict: disjoint ranges",
	 "rule a: Softmax[axis = k](x) if k < 0 => Neg(x);\nrule b: Softmax[axis = j](Relu(y)) if j >= 0 => Abs(y);\n"},
	{"no conflict: a helper and its negation",
	 "extern bool f(int);\nrule a: Softmax[axis = k](x) if f(k) => Neg(x);\nrule b: Softmax[axis = j](Relu(y)) if !f(j) => Abs(y);\n"},
	{"no conflict: the op's schema excludes the dtype",
	 "rule a: Add(x, 0) if is_int(x) => x;\nrule b: Add(c @ Conv(_, _), q:const) => Sub(c, q);\n"},
	{"no conflict: an equality carries a guard term to another value",
	 "rule a: Unsqueeze(r @ ReduceSum[keepdims = 0](_, a:const), u:const) if len(ints(u)) == len(ints(a)) && len(ints(a)) > 0 => Relu(r);\n"
	 "rule b [opset 13..]: Unsqueeze(x, a:const) if len(ints(a)) == 0 => x;\n"},
	{"no conflict: a negative pattern excludes the other rule's op",
	 "rule a: Mul(x:!Sqrt, 2.0) => Add(x, x);\nrule b: Mul(Sqrt(p), y) => Sqrt(Mul(p, y));\n"},
	{"no conflict: rest lists of different lengths",
	 "rule a: Concat(xs...) if len(xs) == 1 => xs[0];\nrule b: Concat(ys...) if len(ys) == 2 => Neg(ys[0]);\n"},
	{"not recreated: the guard cannot hold on the result",
	 "rule r: Sub(x, y) if rank(x) == 2 && rank(y) == 3 => Sub(y, x);\n"},
	{"an output of an inner node",
	 "rule a: Concat[axis = k](s @ Split[axis = k](x, _?)#0, s#1) if outputs(s) == 2 => x;\n"
	 "rule b: Concat[axis = k](t @ Split[axis = k](x, _?)#1, t#0) => Neg(x);\n"},
};

START_TEST(guarded_silent_case)
{
	Analysed a;
	analyse_texts(&a, &guarded_silent[_i].src, 1);
	ck_assert_msg(a.checked && a.ok && a.d.nerrors == 0 && a.d.nwarnings == 0, "%s:\n%s\n%s",
	              guarded_silent[_i].what, guarded_silent[_i].src, a.out);
	ck_assert_msg(a.an.nskipped == 0, "%s: %s not analysed: %s", guarded_silent[_i].what,
	              a.an.nskipped ? a.an.skipped[0].rule->name : "", a.an.nskipped ? a.an.skipped[0].reason : "");
	analysed_free(&a);
}
END_TEST

Suite *suite_dsl_analyse(void)
{
	Suite *s = suite_create("dsl_analyse");
	TCase *tc = tcase_create("diagnostics");
	tcase_add_loop_test(tc, diagnostic, 0, (int)(sizeof cases / sizeof cases[0]));
	tcase_add_loop_test(tc, stays_silent, 0, (int)(sizeof silent / sizeof silent[0]));
	tcase_add_test(tc, not_analysed);
	tcase_add_test(tc, summary_when_all_analysed);
	tcase_add_test(tc, not_analysed_construct);
	tcase_add_loop_test(tc, guarded_diagnostic, 0, (int)(sizeof guarded / sizeof guarded[0]));
	tcase_add_loop_test(tc, guarded_silent_case, 0, (int)(sizeof guarded_silent / sizeof guarded_silent[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("library");
	tcase_add_loop_test(tc, rule_library_analyses_clean, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}
