/* check_dsl_parse.c - the rule language's front end (dsl/lexer.re,
 * dsl/grammar.y, dsl/parse.c, dsl/dump.c) and the graftc command:
 * every rule file under rules/ parses without errors; golden --dump-ast
 * texts (tests/data/dsl/NAME.ast; GRAFT_UPDATE_GOLDEN=1 rewrites them);
 * every syntax diagnostic with its exact text, line and column; several
 * errors reported in one run; trees as parsed (precedence, literals,
 * metadata); graftc run as a subprocess (env GRAFTC) for exit codes and its
 * stderr with the caret lines. */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsl/ast.h"
#include "testutil.h"

/* Parse text as t.rules; the diagnostics printed (with source lines and
 * carets) go to *out (caller frees), counts to *d. */
static RuleFile *parse_text(const char *text, size_t len, Diag *d, char **out)
{
	size_t outlen;
	FILE *fp = open_memstream(out, &outlen);
	diag_init(d, fp);
	RuleFile *f = dsl_parse("t.rules", text, (uint32_t)len, d);
	fclose(fp);
	return f;
}

/* Every rule file of the library, sorted. */
static char **rule_files(size_t *n)
{
	static glob_t g;
	globfree(&g);
	memset(&g, 0, sizeof g);
	glob("rules/*/*.rules", 0, NULL, &g);
	glob("rules/*.rules", GLOB_APPEND, NULL, &g);
	*n = g.gl_pathc;
	return g.gl_pathv;
}

/* ---- the rule library parses ------------------------------------------------- */

START_TEST(library_parses)
{
	size_t n;
	char **paths = rule_files(&n);
	ck_assert_msg(n >= 8, "only %zu rule files under rules/", n);
	int nrules = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len;
		char *text = (char *)read_file(paths[i], &len);
		ck_assert_ptr_nonnull(text);
		Diag d;
		char *out;
		size_t outlen;
		FILE *fp = open_memstream(&out, &outlen);
		diag_init(&d, fp);
		RuleFile *f = dsl_parse(paths[i], text, (uint32_t)len, &d);
		fclose(fp);
		ck_assert_msg(d.nerrors == 0 && d.nwarnings == 0, "%s:\n%s", paths[i], out);
		ck_assert_msg(f->nrules > 0, "%s has no rules", paths[i]);
		for (int k = 0; k < f->nrules; k++)
			ck_assert_msg(f->rules[k]->has_arrow && f->rules[k]->lhs && f->rules[k]->rhs, "%s", f->rules[k]->name);
		nrules += f->nrules;
		dsl_free(f);
		free(out);
		free(text);
	}
	ck_assert_int_ge(nrules, 15);
}
END_TEST

/* ---- golden dumps ------------------------------------------------------------ */

static const char *const golden_names[] = {
	"basic/arith", "basic/const", "basic/dropout", "basic/squeeze", "basic/transpose", "basic/variadic",
	"extended/attention", "extended/gelu", "extended/helpers", "extended/norm",
};

START_TEST(golden_dump)
{
	const char *name = golden_names[_i];
	char path[256], gold[256];
	snprintf(path, sizeof path, "rules/%s.rules", name);
	snprintf(gold, sizeof gold, "tests/data/dsl/%s.ast", strchr(name, '/') + 1);
	size_t len;
	char *text = (char *)read_file(path, &len);
	ck_assert_ptr_nonnull(text);
	Diag d;
	diag_init(&d, NULL);
	RuleFile *f = dsl_parse(path, text, (uint32_t)len, &d);
	dsl_check(&f, 1, &d);     /* as graftc --dump-ast does */
	ck_assert_msg(d.nerrors == 0, "%s: %s", path, d.first);
	char *dump;
	size_t dumplen;
	FILE *fp = open_memstream(&dump, &dumplen);
	dsl_dump(f, fp);
	fclose(fp);
	if (getenv("GRAFT_UPDATE_GOLDEN") && strcmp(getenv("GRAFT_UPDATE_GOLDEN"), "1") == 0) {
		ck_assert(write_file(gold, dump, dumplen));
		fprintf(stderr, "note: wrote %s\n", gold);
	} else {
		size_t glen;
		char *want = (char *)read_file(gold, &glen);
		ck_assert_msg(want != NULL, "missing %s (run with GRAFT_UPDATE_GOLDEN=1)", gold);
		if (glen != dumplen || memcmp(want, dump, dumplen) != 0) {
			/* show the first line that differs */
			size_t i = 0, line = 1, bol = 0;
			while (i < glen && i < dumplen && want[i] == dump[i]) {
				if (want[i] == '\n') {
					line++;
					bol = i + 1;
				}
				i++;
			}
			int wl = (int)(strcspn(want + bol, "\n")), gl = (int)(strcspn(dump + bol, "\n"));
			ck_abort_msg("%s differs from %s at line %zu:\n  want: %.*s\n  got:  %.*s\n"
			             "(GRAFT_UPDATE_GOLDEN=1 rewrites the golden files)",
			             path, gold, line, wl, want + bol, gl, dump + bol);
		}
		free(want);
	}
	free(dump);
	dsl_free(f);
	free(text);
}
END_TEST

/* ---- diagnostics: exact text, line and column -------------------------------- */

typedef struct DiagCase {
	const char *name;
	const char *text;
	size_t len;          /* 0: strlen(text) (texts with NUL bytes give it) */
	int nerrors;
	const char *first;   /* the first error as "line:col: error: message" */
} DiagCase;

static const DiagCase diag_cases[] = {
	{"unterminated comment", "level basic;\nrule a: Relu(x) => x;\n  /* never closed\nrule b: Relu(y) => y;\n", 0, 1,
	 "3:3: error: unterminated comment"},
	{"unterminated string", "rule a \"doc: Relu(x) => x;\nrule b: Relu(y) => y;\n", 0, 1,
	 "1:8: error: unterminated string"},
	{"no arrow before ;", "rule a: Relu(x);\n", 0, 1, "1:16: error: rule 'a' has no '=>'"},
	{"no arrow after guard", "rule a: Relu(x) if rank(x) == 2;\n", 0, 1, "1:32: error: rule 'a' has no '=>'"},
	{"no arrow before next rule", "rule a: Relu(x)\nrule b: Relu(y) => y;\n", 0, 1, "1:16: error: rule 'a' has no '=>'"},
	{"no arrow at the end", "rule a: Relu(x) if rank(x) == 2", 0, 1, "1:32: error: rule 'a' has no '=>'"},
	{"invalid UTF-8 in a comment", "// caf\xff\nrule a: Relu(x) => x;\n", 0, 1, "1:7: error: invalid UTF-8 byte 0xff"},
	{"invalid UTF-8 in a string", "rule a \"\xc3\xa9\xe2\x82\": Relu(x) => x;\n", 0, 1, "1:10: error: invalid UTF-8 byte 0xe2"},
	{"invalid UTF-8 outside", "rule a: Relu(x) \xfe => x;\n", 0, 1, "1:17: error: invalid UTF-8 byte 0xfe"},
	{"overlong encoding", "// \xc0\xaf\n", 0, 2, "1:4: error: invalid UTF-8 byte 0xc0"},
	{"surrogate", "// \xed\xa0\x80\n", 0, 3, "1:4: error: invalid UTF-8 byte 0xed"},
	{"stray continuation", "\x80rule a: Relu(x) => x;", 0, 1, "1:1: error: invalid UTF-8 byte 0x80"},
	{"unexpected token", "rule a: Relu(x y) => x;\n", 0, 1, "1:16: error: unexpected 'y' (expected ',' or ')')"},
	{"unexpected token after a pattern", "rule a: Relu(x) x => x;\n", 0, 1, "1:17: error: unexpected 'x' (expected 'if' or '=>')"},
	{"missing colon", "rule a Relu(x) => x;\n", 0, 1, "1:8: error: unexpected 'Relu' (expected a string, '[' or ':')"},
	{"missing expression", "rule a: Relu(x) => ;\n", 0, 1, "1:20: error: unexpected ';' (expected an expression)"},
	{"missing semicolon", "rule a: Relu(x) => x\nrule b: Relu(y) => y;\n", 0, 1, "2:1: error: unexpected 'rule' (expected ';')"},
	{"unexpected end", "rule a: Relu(x) => x", 0, 1, "1:21: error: unexpected end of input (expected ';')"},
	{"unexpected character", "rule a: Relu(x) => x $;\n", 0, 1, "1:22: error: unexpected character '$'"},
	{"non-ASCII outside strings", "rule \xc3\xa9: Relu(x) => x;\n", 0, 1, "1:6: error: unexpected character '\xc3\xa9'"},
	{"NUL byte", "rule a: Relu(x)\0 => x;\n", 23, 1, "1:16: error: unexpected NUL character"},
	{"columns count characters", "rule a \"\xc3\xa9t\xc3\xa9 \xe2\x9c\x93\": Relu(x y) => x;\n", 0, 1,
	 "1:24: error: unexpected 'y' (expected ',' or ')')"},
	{"unknown escape", "rule a \"a\\qb\": Relu(x) => x;\n", 0, 1,
	 "1:10: error: unknown escape '\\q' in a string (expected \\n \\t \\r \\\\ \\\" \\' or \\u{HEX})"},
	{"unknown level line", "level basik;\n", 0, 1, "1:7: error: unknown level 'basik' (expected basic, extended or layout)"},
	{"unknown level meta", "rule a [extendd]: Relu(x) => x;\n", 0, 1,
	 "1:9: error: unknown level 'extendd' (expected basic, extended or layout)"},
	{"unknown metadata", "rule a [prio 2]: Relu(x) => x;\n", 0, 1,
	 "1:9: error: unknown metadata 'prio' (expected basic, extended, layout, opset, priority, tolerance, finite_data, moderate_data, nonnegative_indices or override)"},
	{"opset without range", "rule a [opset 13]: Relu(x) => x;\n", 0, 1,
	 "1:15: error: 'opset' needs a range: 'opset 13..', 'opset ..12' or 'opset 13..17'"},
	{"tolerance out of range", "rule a [tolerance 2]: Relu(x) => x;\n", 0, 1,
	 "1:19: error: a tolerance is a number between 0 and 1 (exclusive), as in 'tolerance 1e-6'"},
	{"tolerance given twice", "rule a [tolerance 1e-6, tolerance 1e-5]: Relu(x) => x;\n", 0, 1,
	 "1:25: error: the tolerance of rule 'a' is given twice"},
	{"tolerance without a number", "rule a [tolerance]: Relu(x) => x;\n", 0, 1,
	 "1:9: error: 'tolerance' needs a number, as in 'tolerance 1e-6'"},
	{"empty opset range", "rule a [opset 17..13]: Relu(x) => x;\n", 0, 1, "1:15: error: empty opset range 17..13"},
	{"override given twice", "rule a [override, override]: Relu(x) => x;\n", 0, 1,
	 "1:19: error: 'override' of rule 'a' is given twice"},
	{"level given twice", "rule a [basic, layout]: Relu(x) => x;\n", 0, 1, "1:16: error: the level of rule 'a' is given twice"},
	{"integer too large", "rule a: Relu(x) if rank(x) == 99999999999999999999 => x;\n", 0, 1,
	 "1:31: error: integer 99999999999999999999 is too large"},
	{"unknown extern type", "extern bool f(tensr);\n", 0, 1,
	 "1:15: error: unknown type 'tensr' (expected bool, int, float, string, ints, floats, dtype, value or tensor)"},
	{"bad C name", "extern bool f(tensor) = \"not a name\";\n", 0, 1, "1:25: error: 'not a name' is not a C function name"},
	{"lowercase op in a pattern", "rule a: Relu(relu(x)) => x;\n", 0, 1,
	 "1:14: error: 'relu' is not an op: op names start with a capital letter (did you mean 'Relu'?)"},
	{"wildcard const", "rule a: Relu(_:const) => x;\n", 0, 1, "1:14: error: '_' matches any value: it cannot be ':const'"},
	/* quantifiers */
	{"no quantifier", "rule a: Relu(x) if each(i in shape(x): i == 1) => x;\n", 0, 1,
	 "1:20: error: 'each(i in ...: ...)' is no quantifier: write all(i in LIST: COND) or any(...)"},
	{"quantifier without in", "rule a: Relu(x) if all(i of shape(x): i == 1) => x;\n", 0, 1,
	 "1:26: error: expected 'in' after 'i', got 'of'"},
	{"quantifier over _", "rule a: Relu(x) if any(_ in shape(x): true) => x;\n", 0, 1,
	 "1:24: error: 'any' needs a name for the element, not '_'"},
	{"quantifier without a colon", "rule a: Relu(x) if all(i in shape(x) i == 1) => x;\n", 0, 1,
	 "1:38: error: unexpected 'i' (expected ':')"},
	/* inf and nan are numbers */
	{"inf as a name", "rule inf: Relu(x) => x;\n", 0, 1, "1:6: error: 'inf' is a number (a float constant), not a name"},
	{"NaN", "rule a: Add(x, NaN) => x;\n", 0, 1, "1:16: error: 'NaN' is written nan in rules"},
	{"Infinity", "rule a: Add(x, -Infinity) => x;\n", 0, 1, "1:17: error: 'Infinity' is written inf in rules"},
	{"nan with a tolerance", "rule a: Add(x, -nan ~ 1e-3) => x;\n", 0, 1,
	 "1:16: error: 'nan' cannot have a tolerance: '~' needs a finite number"},
	{"an infinite tolerance", "rule a: Add(x, 1 ~ inf) => x;\n", 0, 1, "1:20: error: a tolerance must be positive and finite"},
	/* malformed numbers: one error at the whole literal, saying what is wrong */
	{"two dots", "rule a: Add(x, 0.5.1) => x;\n", 0, 1, "1:16: error: malformed number '0.5.1' (more than one '.')"},
	{"exponent without digits", "rule a: Add(x, 1e) => x;\n", 0, 1,
	 "1:16: error: malformed number '1e' (the exponent has no digits)"},
	{"signed exponent without digits", "rule a: Relu(x) if scalar(x) < 2.5E- => x;\n", 0, 1,
	 "1:32: error: malformed number '2.5E-' (the exponent has no digits)"},
	{"hexadecimal", "rule a: Add(x, 0x1F) => x;\n", 0, 1,
	 "1:16: error: malformed number '0x1F' (hexadecimal is not supported; write 31)"},
	{"no digit after the dot", "rule a: Add(x, 2.) => x;\n", 0, 1,
	 "1:16: error: malformed number '2.' (no digit after '.'; write 2.0)"},
	{"no digit after the dot, exponent", "rule a: Add(x, -1.e5) => x;\n", 0, 1,
	 "1:17: error: malformed number '1.e5' (no digit after '.'; write 1.0e5)"},
	{"no digit before the dot", "rule a: Add(x, .5) => x;\n", 0, 1,
	 "1:16: error: malformed number '.5' (no digit before '.'; write 0.5)"},
	{"letters after the digits", "rule a: Add(x, 2x) => x;\n", 0, 1, "1:16: error: malformed number '2x'"},
	{"a range is no number", "rule a [opset 13..17]: Add(x, 2.) => x;\n", 0, 1,
	 "1:31: error: malformed number '2.' (no digit after '.'; write 2.0)"},
};

START_TEST(diagnostic)
{
	const DiagCase *c = &diag_cases[_i];
	Diag d;
	char *out;
	size_t len = c->len ? c->len : strlen(c->text);
	RuleFile *f = parse_text(c->text, len, &d, &out);
	char want[512];
	snprintf(want, sizeof want, "t.rules:%s", c->first);
	ck_assert_msg(strcmp(d.first, want) == 0, "%s:\n  want: %s\n  got:  %s\n--- all:\n%s", c->name, want, d.first, out);
	ck_assert_msg(d.nerrors == c->nerrors, "%s: %d errors, want %d:\n%s", c->name, d.nerrors, c->nerrors, out);
	/* the message is followed by the source line and a caret */
	ck_assert_msg(strstr(out, "\n      | ") && strchr(out, '^'), "%s: no caret line:\n%s", c->name, out);
	dsl_free(f);
	free(out);
}
END_TEST

/* Three separate syntax errors in one file: all three reported, and the
 * rules between and after them still parsed. */
START_TEST(several_errors)
{
	const char *text =
		"level basic;\n"
		"rule a: Relu(x y) => x;\n"                 /* 2:16 */
		"rule ok1: Relu(x) => x;\n"
		"rule b Relu(x) => x;\n"                    /* 4:8 */
		"rule ok2: Abs(x) => x;\n"
		"rule c: Relu(x) => Add(x,, x);\n"          /* 6:26 */
		"rule ok3: Neg(Neg(x)) => x;\n";
	Diag d;
	char *out;
	RuleFile *f = parse_text(text, strlen(text), &d, &out);
	ck_assert_msg(d.nerrors == 3, "%d errors:\n%s", d.nerrors, out);
	ck_assert_msg(strstr(out, "t.rules:2:16: error: unexpected 'y' (expected ',' or ')')\n"
	                          "    2 | rule a: Relu(x y) => x;\n"
	                          "      |                ^\n"), "%s", out);
	ck_assert_msg(strstr(out, "t.rules:4:8: error: unexpected 'Relu' (expected a string, '[' or ':')\n"
	                          "    4 | rule b Relu(x) => x;\n"
	                          "      |        ^~~~\n"), "%s", out);
	ck_assert_msg(strstr(out, "t.rules:6:26: error: unexpected ',' (expected an expression)\n"), "%s", out);
	ck_assert_int_eq(f->nrules, 3);
	ck_assert_str_eq(f->rules[0]->name, "ok1");
	ck_assert_str_eq(f->rules[1]->name, "ok2");
	ck_assert_str_eq(f->rules[2]->name, "ok3");
	dsl_free(f);
	free(out);
}
END_TEST

/* A missing ';' or '=>' loses no following rule, and errors right after a
 * resynchronization are still reported. */
START_TEST(recovery_keeps_next_rule)
{
	const char *text =
		"rule a: Relu(x) => x\n"        /* missing ';' */
		"rule b: Relu(x)\n"             /* no '=>' */
		"rule c x;\n"                   /* error right at the start of a rule */
		"rule d: Relu(x);\n"            /* no '=>', parsed, kept with has_arrow false */
		"rule e: Relu(x) => x;\n";
	Diag d;
	char *out;
	RuleFile *f = parse_text(text, strlen(text), &d, &out);
	ck_assert_msg(d.nerrors == 4, "%d errors:\n%s", d.nerrors, out);
	ck_assert_msg(strstr(out, "t.rules:2:1: error: unexpected 'rule' (expected ';')"), "%s", out);
	ck_assert_msg(strstr(out, "t.rules:2:16: error: rule 'b' has no '=>'"), "%s", out);
	ck_assert_msg(strstr(out, "t.rules:3:8: error: unexpected 'x' (expected a string, '[' or ':')"), "%s", out);
	ck_assert_msg(strstr(out, "t.rules:4:16: error: rule 'd' has no '=>'"), "%s", out);
	ck_assert_int_eq(f->nrules, 2);
	ck_assert_str_eq(f->rules[0]->name, "d");
	ck_assert(!f->rules[0]->has_arrow);
	ck_assert_ptr_null(f->rules[0]->rhs);
	ck_assert_str_eq(f->rules[1]->name, "e");
	ck_assert(f->rules[1]->has_arrow);
	dsl_free(f);
	free(out);
}
END_TEST

/* Nesting beyond the parser's stack, and left-leaning chains beyond
 * DSL_MAX_DEPTH, are errors, not crashes; the next rule still parses. */
START_TEST(deep_nesting)
{
	char *text = malloc(20000);
	size_t n = 0;
	n += (size_t)sprintf(text + n, "rule a: ");
	for (int i = 0; i < 600; i++)
		n += (size_t)sprintf(text + n, "Neg(");
	n += (size_t)sprintf(text + n, "x");
	for (int i = 0; i < 600; i++)
		text[n++] = ')';
	n += (size_t)sprintf(text + n, " => x;\nrule b: Relu(x) if rank(x)");
	for (int i = 0; i < 300; i++)
		n += (size_t)sprintf(text + n, " + 1");
	n += (size_t)sprintf(text + n, " > 0 => x;\nrule c: Relu(x) => x;\n");
	Diag d;
	char *out;
	RuleFile *f = parse_text(text, n, &d, &out);
	ck_assert_msg(d.nerrors == 2, "%d errors:\n%.2000s", d.nerrors, out);
	ck_assert_msg(strstr(d.first, "error: rule nested too deeply"), "%s", d.first);
	ck_assert_msg(strstr(out, "error: expression nested too deeply (more than 200 levels)"), "%.2000s", out);
	ck_assert_int_eq(f->nrules, 1);
	ck_assert_str_eq(f->rules[0]->name, "c");
	dsl_free(f);
	free(out);
	free(text);
}
END_TEST

/* ---- trees as parsed ------------------------------------------------------------ */

static RuleFile *parse_ok(const char *text)
{
	Diag d;
	char *out;
	RuleFile *f = parse_text(text, strlen(text), &d, &out);
	ck_assert_msg(d.nerrors == 0, "%s\n--- text:\n%s", out, text);
	free(out);
	return f;
}

/* The parse-only dump of one rule, without the "rule" and metadata lines. */
static char *dump_of(RuleFile *f)
{
	char *buf;
	size_t len;
	FILE *fp = open_memstream(&buf, &len);
	dsl_dump(f, fp);
	fclose(fp);
	char *m = strstr(buf, "  match\n");
	ck_assert_ptr_nonnull(m);
	memmove(buf, m, strlen(m) + 1);
	return buf;
}

typedef struct TreeCase {
	const char *text;
	const char *dump;
} TreeCase;

static const TreeCase tree_cases[] = {
	/* precedence: ?? < || < && < ! < comparisons < ++ < + - < * / < unary - < [i] */
	{"rule r: F(a) if !a == b && c < d || e ?? f => a;",
	 "  match\n    op F @1:9\n      var a @1:11\n  guard\n"
	 "    default '?\?' @1:39\n"
	 "      binary '||' @1:34\n"
	 "        binary '&&' @1:25\n"
	 "          unary '!' @1:17\n"
	 "            binary '==' @1:20\n              var a @1:18\n              var b @1:23\n"
	 "          binary '<' @1:30\n            var c @1:28\n            var d @1:32\n"
	 "        var e @1:37\n"
	 "      var f @1:42\n"
	 "  result\n    var a @1:47\n"},
	{"rule r: F(a) => a ++ b + c * -d[0] - 2;",
	 "  match\n    op F @1:9\n      var a @1:11\n  result\n"
	 "    binary '++' @1:19\n      var a @1:17\n"
	 "      binary '-' @1:36\n"
	 "        binary '+' @1:24\n          var b @1:22\n"
	 "          binary '*' @1:28\n            var c @1:26\n"
	 "            unary '-' @1:30\n              index @1:32\n                var d @1:31\n                int 0 @1:33\n"
	 "        int 2 @1:38\n"},
	/* pattern forms: shared, bindings, outputs, consts, optionals, rest, wildcards, literals */
	{"rule r: shared d @ com.microsoft.Foo[k = 1, s = \"a\\n\"](x:const?, y?, _, _?, -1.5 ~ 1e-3, [1, -2], true, s#1, xs...)#2 => d;",
	 "  match\n    op com.microsoft.Foo #2 @1:20 shared bind d @1:16\n"
	 "      attr k @1:38\n        int 1 @1:42\n"
	 "      attr s @1:45\n        string \"a\\n\" @1:49\n"
	 "      var x :const ? @1:56\n      var y ? @1:66\n      any _ @1:70\n      any _? @1:73\n"
	 "      literal @1:77\n        float -1.5 ~ 0.001 @1:77\n"
	 "      literal @1:90\n        list of 2 @1:90\n          int 1 @1:91\n          int -2 @1:94\n"
	 "      literal @1:99\n        bool true @1:99\n"
	 "      var s #1 @1:105\n      rest xs... @1:110\n"
	 "  result\n    var d @1:122\n"},
	/* inf and nan are float literals, in patterns, guards and results; info and nano are names */
	{"rule r: F(inf, -nan, [-inf]) if g == -inf || info > nano => H(nan, -inf);",
	 "  match\n    op F @1:9\n      literal @1:11\n        float inf @1:11\n      literal @1:16\n        float -nan @1:16\n"
	 "      literal @1:22\n        list of 1 @1:22\n          float -inf @1:23\n"
	 "  guard\n    binary '||' @1:43\n      binary '==' @1:35\n        var g @1:33\n        float -inf @1:38\n"
	 "      binary '>' @1:51\n        var info @1:46\n        var nano @1:53\n"
	 "  result\n    op H @1:61\n      float nan @1:63\n      float -inf @1:68\n"},
	/* negative patterns x:!Op (any domain, several, optional, on _) and quantifiers; in is no keyword */
	{"rule r: F(x:!G:!com.microsoft.H, _:!G?) if all(i in in: any(j in [i]: j > 0)) => x;",
	 "  match\n    op F @1:9\n      var x not G not com.microsoft.H @1:11\n      any _? not G @1:34\n"
	 "  guard\n    all i in @1:44\n      var in @1:53\n      any j in @1:57\n        list of 1 @1:66\n          var i @1:67\n"
	 "        binary '>' @1:73\n          var j @1:71\n          int 0 @1:75\n"
	 "  result\n    var x @1:82\n"},
	/* results: ops with copied attributes, tuples, calls, lists, strings */
	{"rule r: F(c @ G(x), y) => (H[..c, a = [1, 2]](x), concat(\"s\", y), []);",
	 "  match\n    op F @1:9\n      op G @1:15 bind c @1:11\n        var x @1:17\n      var y @1:21\n"
	 "  result\n    tuple of 3 @1:27\n"
	 "      op H [..c @1:32] @1:28\n        attr a @1:35\n          list of 2 @1:39\n            int 1 @1:40\n            int 2 @1:43\n"
	 "        var x @1:47\n"
	 "      call concat @1:51\n        string \"s\" @1:58\n        var y @1:63\n"
	 "      list of 0 @1:67\n"},
};

START_TEST(tree)
{
	RuleFile *f = parse_ok(tree_cases[_i].text);
	ck_assert_int_eq(f->nrules, 1);
	char *got = dump_of(f);
	ck_assert_msg(strcmp(got, tree_cases[_i].dump) == 0, "text: %s\nwant:\n%sgot:\n%s", tree_cases[_i].text,
	              tree_cases[_i].dump, got);
	free(got);
	dsl_free(f);
}
END_TEST

START_TEST(metadata)
{
	RuleFile *f = parse_ok(
		"level extended;\n"
		"extern bool reciprocal_exact(tensor) = \"graft_reciprocal_exact\";\n"
		"extern ints perm2(ints, int);\n"
		"rule a [opset 13..17, priority -2, layout] \"doc \\u{2713}\": Relu(x) => x;\n"
		"rule b [opset ..12]: Relu(x) => x;\n"
		"rule c [opset 18.., override]: Relu(x) => x;\n"
		"level basic;\n"
		"rule d: Relu(x) => x;\n");
	ck_assert_int_eq(f->default_level, LEVEL_EXTENDED);
	ck_assert_int_eq(f->nexterns, 2);
	ck_assert_str_eq(f->externs[0]->name, "reciprocal_exact");
	ck_assert_str_eq(f->externs[0]->c_name, "graft_reciprocal_exact");
	ck_assert_int_eq(f->externs[0]->ret, TY_BOOL);
	ck_assert_int_eq(f->externs[0]->nparams, 1);
	ck_assert_int_eq(f->externs[0]->params[0], TY_TENSOR);
	ck_assert_str_eq(f->externs[1]->c_name, "perm2");
	ck_assert_int_eq(f->externs[1]->nparams, 2);
	ck_assert_int_eq(f->nrules, 4);
	Rule *a = f->rules[0], *b = f->rules[1], *c = f->rules[2], *d = f->rules[3];
	ck_assert_int_eq(a->opset_min, 13);
	ck_assert_int_eq(a->opset_max, 17);
	ck_assert(a->has_priority);
	ck_assert_int_eq(a->priority, -2);
	ck_assert_int_eq(a->level, LEVEL_LAYOUT);
	ck_assert_int_eq(a->level_pos.line, 4);
	ck_assert_int_eq(a->level_pos.col, 36);
	ck_assert_str_eq(a->doc, "doc \xe2\x9c\x93");
	ck_assert_int_eq(a->pos.line, 4);
	ck_assert_int_eq(a->pos.col, 6);
	ck_assert_int_eq(b->opset_min, 0);
	ck_assert_int_eq(b->opset_max, 12);
	ck_assert_int_eq(b->level, LEVEL_NONE);   /* the file's default */
	ck_assert_int_eq(c->opset_min, 18);
	ck_assert_int_eq(c->opset_max, INT32_MAX);
	ck_assert(!c->has_priority);
	ck_assert(c->override && !a->override);
	ck_assert_int_eq(c->override_pos.col, 21);
	ck_assert_int_eq(d->level, LEVEL_BASIC);  /* after a second level line */
	ck_assert_int_eq(d->opset_min, 0);
	ck_assert_int_eq(d->opset_max, INT32_MAX);
	dsl_free(f);
}
END_TEST

/* Every prefix of a valid file, and the file with each byte replaced, must
 * parse without crashing (errors are fine); a cheap, deterministic cousin
 * of the fuzzer (tests/fuzz/fuzz_dsl.c). */
START_TEST(prefixes_and_mutations)
{
	size_t len;
	char *text = (char *)read_file("rules/basic/const.rules", &len);
	ck_assert_ptr_nonnull(text);
	char *copy = malloc(len);
	static const char subst[] = {'(', ')', ';', '"', '/', '*', '[', ']', '\xff', '\0', 'x', '.'};
	for (size_t i = 0; i < len; i += 3) {
		Diag d;
		diag_init(&d, NULL);
		dsl_free(dsl_parse("t.rules", text, (uint32_t)i, &d));
		memcpy(copy, text, len);
		copy[i] = subst[i % sizeof subst];
		diag_init(&d, NULL);
		RuleFile *f = dsl_parse("t.rules", copy, (uint32_t)len, &d);
		dsl_check(&f, 1, &d);
		FILE *null = fopen("/dev/null", "w");
		dsl_dump(f, null);
		fclose(null);
		dsl_free(f);
	}
	free(copy);
	free(text);
}
END_TEST

/* ---- graftc as a command -------------------------------------------------------- */

/* Runs "GRAFTC args" with stderr (and stdout, if out) captured; returns the
 * exit status, or -1 if GRAFTC is not set. */
static int run_graftc(const char *args, char **err, char **out)
{
	const char *graftc = getenv("GRAFTC");
	if (!graftc) {
		fprintf(stderr, "note: GRAFTC not set; graftc tests skipped\n");
		return -1;
	}
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s %s >/tmp/graftc-test-%d.out 2>/tmp/graftc-test-%d.err", graftc, args,
	         (int)getpid(), (int)getpid());
	int status = system(cmd);
	char path[64];
	size_t len;
	snprintf(path, sizeof path, "/tmp/graftc-test-%d.err", (int)getpid());
	char *text = (char *)read_file(path, &len);
	*err = strndup(text ? text : "", text ? len : 0);
	free(text);
	remove(path);
	snprintf(path, sizeof path, "/tmp/graftc-test-%d.out", (int)getpid());
	text = (char *)read_file(path, &len);
	if (out)
		*out = strndup(text ? text : "", text ? len : 0);
	free(text);
	remove(path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

START_TEST(graftc_library_checks)
{
	size_t n;
	char **paths = rule_files(&n);
	char args[4096] = "--check";
	for (size_t i = 0; i < n; i++) {
		strcat(args, " ");
		strcat(args, paths[i]);
	}
	char *err;
	int rc = run_graftc(args, &err, NULL);
	if (rc < 0)
		return;
	ck_assert_msg(rc == 0, "graftc --check exited %d:\n%s", rc, err);
	ck_assert_msg(!strstr(err, "error:"), "%s", err);
	free(err);
}
END_TEST

START_TEST(graftc_reports_errors)
{
	char *dir = temp_dir();
	char path[512];
	snprintf(path, sizeof path, "%s/bad.rules", dir);
	const char *text = "level basic;\n"
	                   "rule a: Relu(x);\n"
	                   "rule b: Relu(x y) => x;\n"
	                   "/* unterminated\n";
	ck_assert(write_file(path, text, strlen(text)));
	char args[1024], *err, *out;
	snprintf(args, sizeof args, "--check %s", path);
	int rc = run_graftc(args, &err, &out);
	if (rc < 0) {
		rm_rf(dir);
		free(dir);
		return;
	}
	ck_assert_int_eq(rc, 1);
	char want[2048];
	snprintf(want, sizeof want,
	         "%s:2:16: error: rule 'a' has no '=>'\n"
	         "    2 | rule a: Relu(x);\n"
	         "      |                ^\n", path);
	ck_assert_msg(strstr(err, want), "want:\n%sgot:\n%s", want, err);
	snprintf(want, sizeof want,
	         "%s:3:16: error: unexpected 'y' (expected ',' or ')')\n"
	         "    3 | rule b: Relu(x y) => x;\n"
	         "      |                ^\n", path);
	ck_assert_msg(strstr(err, want), "want:\n%sgot:\n%s", want, err);
	snprintf(want, sizeof want,
	         "%s:4:1: error: unterminated comment\n"
	         "    4 | /* unterminated\n"
	         "      | ^~\n", path);
	ck_assert_msg(strstr(err, want), "want:\n%sgot:\n%s", want, err);
	ck_assert_str_eq(out, "");
	free(err);
	free(out);

	/* --dump-ast prints the trees on stdout, errors or not */
	snprintf(args, sizeof args, "--dump-ast %s rules/basic/squeeze.rules", path);
	rc = run_graftc(args, &err, &out);
	ck_assert_int_eq(rc, 1);
	ck_assert_msg(strstr(out, "rule squeeze_unsqueeze @11:6\n"), "%s", out);
	ck_assert_msg(strstr(out, "rule a @2:6\n"), "%s", out);
	free(err);
	free(out);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(graftc_command_line)
{
	char *err, *out;
	int rc = run_graftc("--help", &err, &out);
	if (rc < 0)
		return;
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(strstr(out, "usage: graftc --check FILE..."), "%s", out);
	free(err);
	free(out);
	rc = run_graftc("--dump-ast rules/basic/squeeze.rules", &err, &out);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(err, "");
	ck_assert_msg(strncmp(out, "file rules/basic/squeeze.rules\nlevel basic\n", 43) == 0, "%s", out);
	free(err);
	free(out);
	rc = run_graftc("", &err, NULL);
	ck_assert_int_eq(rc, 2);
	free(err);
	rc = run_graftc("--frobnicate x.rules", &err, NULL);
	ck_assert_int_eq(rc, 2);
	ck_assert_msg(strstr(err, "graftc: unknown option '--frobnicate'"), "%s", err);
	free(err);
	rc = run_graftc("--check", &err, NULL);
	ck_assert_int_eq(rc, 2);
	free(err);
	rc = run_graftc("--check /nonexistent/x.rules", &err, NULL);
	ck_assert_int_eq(rc, 1);
	ck_assert_msg(strstr(err, "graftc: cannot read '/nonexistent/x.rules': No such file or directory"), "%s", err);
	free(err);
}
END_TEST

Suite *suite_dsl_parse(void)
{
	Suite *s = suite_create("dsl_parse");
	TCase *tc = tcase_create("parse");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, library_parses);
	tcase_add_loop_test(tc, golden_dump, 0, (int)(sizeof golden_names / sizeof golden_names[0]));
	tcase_add_loop_test(tc, diagnostic, 0, (int)(sizeof diag_cases / sizeof diag_cases[0]));
	tcase_add_test(tc, several_errors);
	tcase_add_test(tc, recovery_keeps_next_rule);
	tcase_add_test(tc, deep_nesting);
	tcase_add_loop_test(tc, tree, 0, (int)(sizeof tree_cases / sizeof tree_cases[0]));
	tcase_add_test(tc, metadata);
	tcase_add_test(tc, prefixes_and_mutations);
	suite_add_tcase(s, tc);
	TCase *cli = tcase_create("graftc");
	tcase_set_timeout(cli, 60);
	tcase_add_test(cli, graftc_library_checks);
	tcase_add_test(cli, graftc_reports_errors);
	tcase_add_test(cli, graftc_command_line);
	suite_add_tcase(s, cli);
	return s;
}
