/* check_dsl_check.c - tests of the rule checker (dsl/check.c): one rule
 * text per diagnostic, asserting the exact message and position; the rule
 * library in rules/ checks clean; what the checker fills in (bindings,
 * expression types, schemas, the opset a result needs); and the pattern as
 * written that the lowering records beside the steps (MProg.pats, what
 * graft verify builds instances from). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/ast.h"
#include "dsl/mprog.h"

/* The diagnostics of checking one or more texts (file names t.rules,
 * u.rules, ...), all printed lines; the files stay alive until checked_free. */
typedef struct Checked {
	RuleFile *files[4];
	int nfiles;
	Diag d;
	char *out;
	size_t outlen;
	bool ok;
} Checked;

static void check_texts(Checked *c, const char *const *srcs, int n)
{
	static const char *const names[] = {"t.rules", "u.rules", "v.rules", "w.rules"};
	memset(c, 0, sizeof *c);
	FILE *out = open_memstream(&c->out, &c->outlen);
	diag_init(&c->d, out);
	for (int i = 0; i < n; i++)
		c->files[i] = dsl_parse(names[i], srcs[i], (uint32_t)strlen(srcs[i]), &c->d);
	c->nfiles = n;
	c->ok = dsl_check(c->files, n, &c->d);
	fclose(out);
}

static void checked_free(Checked *c)
{
	for (int i = 0; i < c->nfiles; i++)
		dsl_free(c->files[i]);
	free(c->out);
}

/* Does the output contain this line exactly? */
static bool has_line(const char *out, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = out; (p = strstr(p, line)) != NULL; p++)
		if ((p == out || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* One diagnostic class: the rule text, the message (with file:line:col)
 * that must appear, an optional second line (a note), and the counts. */
static const struct {
	const char *what, *src, *line, *line2;
	int nerrors, nwarnings;
} cases[] = {
	{"unknown op",
	 "rule sq: Squeeze(Unsqeeze(x, a), a) => x;\n",
	 "t.rules:1:18: error: unknown operator 'Unsqeeze' (did you mean 'Unsqueeze'?)", NULL, 1, 0},
	{"unknown op, nothing close",
	 "rule r: Frobnicate(x) => x;\n",
	 "t.rules:1:9: error: unknown operator 'Frobnicate'", NULL, 1, 0},
	{"misspelt domain",
	 "rule r: com.microsft.FusedMatMul(x, y) => Add(x, y);\n",
	 "t.rules:1:9: error: unknown domain 'com.microsft' (did you mean 'com.microsoft.FusedMatMul'?)", NULL, 1, 0},
	{"misspelt domain and op",
	 "rule r: Relu(x) => Com.Microsoft.Gelux(x);\n",
	 "t.rules:1:20: error: unknown domain 'Com.Microsoft' (did you mean 'com.microsoft.Gelu'?)", NULL, 1, 0},
	{"the default domain's long name",
	 "rule r: ai.onnx.Relu(x) => x;\n",
	 "t.rules:1:9: error: 'ai.onnx' is the default domain, which rules write without a prefix (did you mean 'Relu'?)",
	 NULL, 1, 0},
	{"unknown domain, nothing close",
	 "rule r: org.pytorch.Relu(x) => x;\n",
	 "t.rules:1:9: error: unknown domain 'org.pytorch' (graft knows the default domain, written without a prefix, "
	 "and com.microsoft)", NULL, 1, 0},
	{"an op of another domain",
	 "rule r: Relu(x) => FusedConv(x, x);\n",
	 "t.rules:1:20: error: unknown operator 'FusedConv' (did you mean 'com.microsoft.FusedConv'?)", NULL, 1, 0},
	{"unknown op of a domain",
	 "rule r: com.microsoft.FusedMatMull(x, y) => Add(x, y);\n",
	 "t.rules:1:9: error: unknown operator 'com.microsoft.FusedMatMull' (did you mean 'com.microsoft.FusedMatMul'?)",
	 NULL, 1, 0},
	{"arity, exact",
	 "rule r: Relu(x, x) => x;\n",
	 "t.rules:1:9: error: 'Relu' takes 1 input, got 2", NULL, 1, 0},
	{"arity, range",
	 "rule r: Conv(x) => x;\n",
	 "t.rules:1:9: error: 'Conv' takes 2 to 3 inputs, got 1", NULL, 1, 0},
	{"arity, variadic",
	 "rule r: Add(Concat(), y) => y;\n",
	 "t.rules:1:13: error: 'Concat' takes at least 1 input, got 0", NULL, 1, 0},
	{"arity, rest list",
	 "rule r: Relu(x, y, zs...) => x;\n",
	 "t.rules:1:9: error: 'Relu' takes 1 input, got at least 2", NULL, 1, 2},
	{"unknown attribute",
	 "rule r: Transpose[prem = [1, 0]](x) => x;\n",
	 "t.rules:1:19: error: unknown attribute 'prem' of 'Transpose' (did you mean 'perm'?)", NULL, 1, 0},
	{"wrong attribute type",
	 "rule r: Transpose[perm = 1.5](x) => x;\n",
	 "t.rules:1:26: error: attribute 'perm' of 'Transpose' is ints, got float", NULL, 1, 0},
	{"wrong attribute type in a result",
	 "rule r: Relu(x) => Transpose[perm = \"ab\"](x);\n",
	 "t.rules:1:37: error: attribute 'perm' of 'Transpose' is ints, got string", NULL, 1, 0},
	{"duplicate attribute",
	 "rule r: Transpose[perm = [1, 0], perm = [0, 1]](x) => x;\n",
	 "t.rules:1:34: error: attribute 'perm' is given twice",
	 "t.rules:1:19: note: first given here", 1, 0},
	{"unbound variable",
	 "rule r: Relu(x) => Add(x, y);\n",
	 "t.rules:1:27: error: 'y' is used on the right side but never bound on the left", NULL, 1, 0},
	{"'_' as the last input of a result op",
	 "rule r: Relu(x) => Clip(x, _);\n",
	 "t.rules:1:28: error: '_' leaves input 2 of 'Clip' (min) absent, which only an input before a given one needs", NULL, 1, 0},
	{"'_' for a required input",
	 "rule r: Relu(x) => Add(_, x);\n",
	 "t.rules:1:24: error: '_' leaves input 1 of 'Add' (A) absent, which it may not be", NULL, 1, 0},
	{"'_' outside a result op",
	 "rule r: Relu(x) => Neg(x) + _;\n",
	 "t.rules:1:29: error: '_' is used on the right side but never bound on the left", NULL, 1, 0},
	{"unbound variable in a guard",
	 "rule r: Relu(x) if rank(z) == 2 => x;\n",
	 "t.rules:1:25: error: 'z' is used in the guard but never bound on the left", NULL, 1, 0},
	{"unknown function",
	 "rule r: Transpose[perm = p](x) if is_identty(p) => x;\n",
	 "t.rules:1:35: error: unknown function 'is_identty' (did you mean 'is_identity'?)", NULL, 1, 0},
	{"comparison of int with float",
	 "rule r: Relu(x) if rank(x) == 2.0 => x;\n",
	 "t.rules:1:28: error: '==' compares int with float", NULL, 1, 0},
	{"a list compared with a float",
	 "rule r: Pad(x, p:const) if ints(p) < 0.5 => x;\n",
	 "t.rules:1:36: error: '<' compares ints with float: a list of ints compares element by element with an int, "
	 "or with another list", NULL, 1, 0},
	{"dims wants a list of axes",
	 "rule r: Pad(x, p:const) if ints(p) == 0 && dims(x, 1) == [] => x;\n",
	 "t.rules:1:52: error: 'dims' expects ints as argument 2, got int", NULL, 1, 0},
	{"operator on the wrong type",
	 "rule r: Relu(x) if shape(x) && true => x;\n",
	 "t.rules:1:20: error: operator '&&' needs bool, got ints", NULL, 1, 0},
	{"builtin arity",
	 "rule r: Relu(x) if rank(x, x) == 2 => x;\n",
	 "t.rules:1:20: error: 'rank' takes 1 argument, got 2", NULL, 1, 0},
	{"builtin argument type",
	 "rule r: Relu(x) if rank(2) == 2 => x;\n",
	 "t.rules:1:25: error: 'rank' expects a value, got int", NULL, 1, 0},
	{"guard not bool",
	 "rule r: Relu(x) if rank(x) => x;\n",
	 "t.rules:1:20: error: the guard must be bool, got int", NULL, 1, 0},
	{"value() of a non-constant",
	 "rule r: Relu(x) if scalar(x) == 0 && len(shape(value(x))) == 0 => x;\n",
	 "t.rules:1:54: error: 'value' expects a constant (c:const), got 'x'", NULL, 1, 0},
	{"extern argument type",
	 "extern bool f(tensor);\nrule r: Div(x, c:const) if f(c) => x;\n",
	 "t.rules:2:30: error: 'f' expects a tensor, got 'c'", NULL, 1, 0},
	{"a node built in a guard",
	 "rule r: Relu(x) if rank(Neg(x)) == 1 => x;\n",
	 "t.rules:1:25: error: 'Neg' builds an ONNX node, which only the result may do", NULL, 1, 0},
	{"duplicate rule names",
	 "rule a: Relu(x) => x;\nrule a: Neg(Neg(x)) => x;\n",
	 "t.rules:2:6: error: duplicate rule name 'a'",
	 "t.rules:1:6: note: 'a' is first defined here", 1, 0},
	{"unknown level in metadata",
	 "rule r [basik]: Relu(x) => x;\n",
	 "t.rules:1:9: error: unknown level 'basik' (expected basic, extended or layout)", NULL, 1, 0},
	{"unknown level line",
	 "level extendd;\nrule r: Relu(x) => x;\n",
	 "t.rules:1:7: error: unknown level 'extendd' (expected basic, extended or layout)", NULL, 1, 0},
	{"result op not in the opset range",
	 "rule g [opset 13..17]: Erf(x) => Gelu(x);\n",
	 "t.rules:1:34: error: 'Gelu' does not exist in opset 13..17 (it was added in opset 20)", NULL, 1, 0},
	{"pattern op not in the opset range",
	 "rule g [opset ..19]: Gelu(x) => x;\n",
	 "t.rules:1:22: error: 'Gelu' does not exist in opset ..19 (it was added in opset 20)", NULL, 1, 0},
	{"removed op",
	 "rule u [opset 11..]: Upsample(x, s) => x;\n",
	 "t.rules:1:22: error: 'Upsample' does not exist in opset 11.. (it was removed in opset 10)", NULL, 1, 1},
	{"output that does not exist",
	 "rule r: Relu(x)#1 => x;\n",
	 "t.rules:1:9: error: 'Relu' has 1 output: #1 does not exist", NULL, 1, 0},
	{"output of something not a node",
	 "rule r: Concat(s#1, s) => s;\n",
	 "t.rules:1:16: error: 's#1' needs a node binding, but 's' is a value", NULL, 1, 0},
	{"attributes copied into an op that lacks one",
	 "rule r: Relu(g @ Gemm(a, b)) => com.microsoft.FusedMatMul[..g](a, b);\n",
	 "t.rules:1:61: error: '..g' copies the attributes of 'Gemm' into 'FusedMatMul', which has no float 'beta'", NULL, 1, 0},
	{"input given both ways",
	 "rule r: ReduceMean[axes = [0]](x, a) => x;\n",
	 "t.rules:1:20: error: 'axes' of 'ReduceMean' is given both as an attribute and as input 2", NULL, 1, 1},
	{"emitting a removed op",
	 "rule r [opset 1..30]: Relu(x) => Upsample(x, x);\n",
	 "t.rules:1:34: error: 'Upsample' was removed in opset 10: a rule that emits it needs an opset range ending before 10", NULL, 1, 0},
	{"a comparison with nan",
	 "rule r: Max(x, c:const) if scalar(c) == nan => x;\n",
	 "t.rules:1:38: error: '==' with nan is always false: NaN equals nothing, itself included", NULL, 1, 0},
	{"a comparison with -nan",
	 "rule r: Max(x, c:const) if -nan != scalar(c) => x;\n",
	 "t.rules:1:33: error: '!=' with nan is always true: NaN equals nothing, itself included", NULL, 1, 0},
	{"a pattern attribute that matches only nodes that set it",
	 "rule r: Dropout[seed = s](x) => x;\n",
	 "t.rules:1:17: warning: attribute 'seed' of 'Dropout' has no default: the pattern matches only nodes that set it", NULL, 0, 2},
	{"a literal operand float32 rounds to 0",
	 "rule r: Add(x, 1e-50) => x;\n",
	 "t.rules:1:16: warning: 1e-50 is 0 in float32", NULL, 0, 1},
	{"a list item float32 rounds to -inf",
	 "rule r: Mul(x, [1.0, -3.5e38]) => x;\n",
	 "t.rules:1:22: warning: -3.5e38 is -inf in float32", NULL, 0, 1},
	{"a number beside a value in a result",
	 "rule r: Relu(x) => Relu(x) * 1e39;\n",
	 "t.rules:1:30: warning: 1e39 is inf in float32", NULL, 0, 1},
	{"an input of an op built",
	 "rule r: Relu(x) => Max(x, 1E-46);\n",
	 "t.rules:1:27: warning: 1E-46 is 0 in float32", NULL, 0, 1},
	{"the default of an optional input",
	 "rule r: Clip(x, lo?, hi) => Clip(x, lo ?? -1e-50, hi);\n",
	 "t.rules:1:43: warning: -1e-50 is 0 in float32", NULL, 0, 1},
	{"a float attribute is float32, whatever the guard says",
	 "rule r: Relu(x) if dtype(x) == float64 => LeakyRelu[alpha = 1e-60](x);\n",
	 "t.rules:1:61: warning: 1e-60 is 0 in float32", NULL, 0, 1},
	{"a float attribute in a pattern",
	 "rule r: LeakyRelu[alpha = 5e-324](x) => x;\n",
	 "t.rules:1:27: warning: 5e-324 is 0 in float32", NULL, 0, 1},
	{"unused variable",
	 "rule r: Add(x, q) => x;\n",
	 "t.rules:1:16: warning: 'q' is bound but never used", NULL, 0, 1},
	{"unused attribute binding",
	 "rule r: Transpose[perm = p](x) => x;\n",
	 "t.rules:1:26: warning: 'p' is bound but never used", NULL, 0, 1},
	/* negative patterns: x:!Op */
	{"a negative pattern's unknown op",
	 "rule r: Relu(x:!Conx) => x;\n",
	 "t.rules:1:17: error: unknown operator 'Conx' (did you mean 'Conv'?)", NULL, 1, 0},
	{"a negative pattern given twice",
	 "rule r: Relu(x:!Conv:!Conv) => x;\n",
	 "t.rules:1:23: error: ':!Conv' is given twice", NULL, 1, 0},
	{"a negative pattern's op outside the rule's opsets",
	 "rule r [opset 13..17]: Relu(x:!Gelu) => x;\n",
	 "t.rules:1:32: error: 'Gelu' does not exist in opset 13..17 (it was added in opset 20)", NULL, 1, 0},
	/* quantifiers: all(i in l: cond), any(...) */
	{"a quantifier over a number",
	 "rule r: Relu(x) if all(i in rank(x): i >= 0) => x;\n",
	 "t.rules:1:29: error: 'all' ranges over a list of ints, got int", NULL, 1, 0},
	{"a quantifier over floats",
	 "rule r: Relu(x) if any(f in [0.5, 1.5]: f > 0) => x;\n",
	 "t.rules:1:29: error: 'any' ranges over a list of ints, got floats", NULL, 1, 0},
	{"a quantifier's condition that is no bool",
	 "rule r: Relu(x) if all(i in range(rank(x)): dim(x, i)) => x;\n",
	 "t.rules:1:45: error: the condition of 'all' must be bool, got int", NULL, 1, 0},
	{"a quantifier's variable is an int",
	 "rule r: Relu(x) if all(i in shape(x): i == 1.5) => x;\n",
	 "t.rules:1:41: error: '==' compares int with float", NULL, 1, 0},
	{"a quantifier's variable taken from the pattern",
	 "rule r: Transpose[perm = p](x) if all(x in p: x >= 0) => x;\n",
	 "t.rules:1:39: error: 'x' is already bound: the variable of 'all' needs a new name",
	 "t.rules:1:29: note: 'x' is first bound here", 1, 0},
	{"nested quantifiers with one name",
	 "rule r: Transpose[perm = p](x) if all(i in p: any(i in p: i == 0)) => x;\n",
	 "t.rules:1:51: error: 'i' is already bound: the variable of 'any' needs a new name",
	 "t.rules:1:39: note: 'i' is first bound here", 1, 0},
	{"a quantifier's variable outside its condition",
	 "rule r: Transpose[perm = p](x) if all(i in p: i >= 0) && i == 0 => x;\n",
	 "t.rules:1:58: error: 'i' is used in the guard but never bound on the left", NULL, 1, 0},
	{"a quantifier's variable unused",
	 "rule r: Transpose[perm = p](x) if any(i in p: len(p) > 2) => x;\n",
	 "t.rules:1:39: warning: 'i' is bound but never used", NULL, 0, 1},
	/* "y @ Op(...), s => y#k": a shared node's value replaced by an output of the result */
	{"a named result that is no op",
	 "rule r: Relu(shared s @ Add(x, x)) => y @ x, s => y#0;\n",
	 "t.rules:1:39: error: 'y' names the result, which must then build an op", NULL, 1, 0},
	{"a result named like a pattern variable",
	 "rule r: Relu(shared s @ Add(x, b)) => x @ Add(x, b), s => x#0;\n",
	 "t.rules:1:39: error: 'x' is already bound", "t.rules:1:29: note: 'x' is first bound here", 1, 0},
	{"a replacement from an unnamed result",
	 "rule r: Relu(shared s @ Add(x, b)) => Add(x, b), s => y#0;\n",
	 "t.rules:1:55: error: 'y' is not the result's name: name it, as in '=> y @ Op(...)'", NULL, 1, 0},
	{"a replacement from another name",
	 "rule r: Relu(shared s @ Add(x, b)) => z @ Add(x, b), s => y#0;\n",
	 "t.rules:1:59: error: 'y' is not the result's name ('z')", NULL, 1, 0},
	{"a replaced value that is no node of the pattern",
	 "rule r: Relu(Add(x, b)) => y @ Add(x, b), x => y#0;\n",
	 "t.rules:1:43: error: 'x' must name a node of the pattern ('x @ Op(...)')", NULL, 1, 0},
	{"the root replaced as a shared node",
	 "rule r: s @ Relu(Add(x, b)) => y @ Add(x, b), s => y#0;\n",
	 "t.rules:1:47: error: 's' is the root: the result itself replaces it", NULL, 1, 0},
	{"a node replaced twice",
	 "rule r: Relu(shared s @ Add(x, b)) => y @ LayerNormalization(x, b), s => y#0, s => y#1;\n",
	 "t.rules:1:79: error: 's' is replaced twice", NULL, 1, 0},
	{"a result that reads what it replaces",
	 "rule r: Relu(shared s @ Add(x, x)) => y @ Add(s, x), s => y#0;\n",
	 "t.rules:1:54: error: the result reads 's', which it replaces", NULL, 1, 0},
	{"an output the result's op does not have",
	 "rule r: Relu(shared s @ Add(x, b)) => y @ Add(x, b), s => y#1;\n",
	 "t.rules:1:59: error: 'Add' has 1 output: y#1 is none of them", NULL, 1, 0},
	{"an output number out of range",
	 "rule r: Relu(shared s @ Add(x, b)) => y @ Add(x, b), s => y#40;\n",
	 "t.rules:1:61: error: 40 is out of range (0 to 31)", NULL, 1, 0},
	{"a named result nothing reads",
	 "rule r: Relu(Add(x, b)) => y @ Add(x, b);\n",
	 "t.rules:1:28: warning: 'y' names the result but nothing reads it: add ', s => y#k'", NULL, 0, 1},
	{"single-variable left side",
	 "rule r: x => x;\n",
	 "t.rules:1:9: warning: the left side of rule 'r' is a single variable: it would match every value", NULL, 0, 1},
};

START_TEST(diagnostic)
{
	Checked c;
	const char *src = cases[_i].src;
	check_texts(&c, &src, 1);
	ck_assert_msg(has_line(c.out, cases[_i].line), "%s: expected\n%s\ngot\n%s", cases[_i].what,
	              cases[_i].line, c.out);
	if (cases[_i].line2)
		ck_assert_msg(has_line(c.out, cases[_i].line2), "%s: expected\n%s\ngot\n%s", cases[_i].what,
		              cases[_i].line2, c.out);
	ck_assert_msg(c.d.nerrors == cases[_i].nerrors && c.d.nwarnings == cases[_i].nwarnings,
	              "%s: %d errors, %d warnings (expected %d, %d):\n%s", cases[_i].what, c.d.nerrors,
	              c.d.nwarnings, cases[_i].nerrors, cases[_i].nwarnings, c.out);
	/* dsl_check's own verdict (the parser reports unknown levels) */
	if (cases[_i].nerrors == 0)
		ck_assert(c.ok);
	checked_free(&c);
}
END_TEST

/* Texts that must check without any error or warning. */
static const char *const clean[] = {
	/* the rule language is written in the newest form; older forms are mapped */
	"rule s [opset 11..11]: Squeeze(Unsqueeze(x, a), a) => x;\n",
	"rule s [opset ..12]: Squeeze(x, a) => Unsqueeze(Squeeze(x, a), a);\n",
	"rule s [opset ..12]: Squeeze[axes = a](x) => Squeeze(x, a);\n",
	"rule m [opset 18..]: ReduceMean[axes = [-1]](x) => x;\n",
	"rule m: ReduceMean(x, _) => ReduceMean[axes = [0]](x);\n",
	"rule c [opset 6..10]: Clip(x, lo, hi) => Clip(x, lo, hi);\n",
	"rule d [opset ..11]: Dropout(x, 0.5) => x;\n",
	/* types */
	"rule t: Relu(x) if scalar(x) == 0 && dtype(x) == float32 && shape(x)[0] > 1 => x;\n",
	"rule t: Mul(x, c:const) if numel(c) == 1 => Mul(x, sqrt(c) * 2 + 1.0);\n",
	"rule t: Concat[axis = a](xs...) if len(xs) > 1 && a >= 0 => Concat[axis = a + 0](xs[0], xs[1]);\n",
	"rule t: Cast[to = t](x) if t == 1 => cast(x, float32);\n",
	"rule t: Gemm[transA = 0](a, b, c?) => Gemm(a, b, c ?? 0.0);\n",
	"rule t: Split(x)#1 => x;\n",
	"rule t [opset 13..17]: Erf(x) => LayerNormalization[axis = -1](x, x, x);\n",
	"rule t [extended, priority 3, opset 17..]: Erf(x) => Sqrt(x);\n",
	/* inf and nan are float literals, not variables */
	"rule t: Max(x, -inf) => x;\n",
	"rule t: Add(x, nan) => Mul(x, nan);\n",
	"rule t: Sum(x, c:const) if scalar(c) == -inf || scalar(c) > inf => Add(x, [inf, -inf, 1.0]);\n",
	"rule t: Relu(x) => LeakyRelu[alpha = inf](x);\n",
	/* literals float32 holds (a denormal, the largest float), or that stay float64: a guard
	 * computes in float64, a tolerance compares in it, a guard may require float64 */
	"rule t: Add(x, 1e-45) => Mul(x, [3.4028235e38, 0.0, -0.0]);\n",
	"rule t: Max(x, c:const) if scalar(c) < 1e-50 => x;\n",
	"rule t: Add(x, 1e-50 ~ 1e-6) => x;\n",
	"rule t: Add(x, 1e-50) if rank(x) > 0 && dtype(x) == float64 => Add(x, 1e-60);\n",
	"rule t: Relu(x) => Add(x, 1e-30 * 1e-30);\n",
};

START_TEST(checks_clean)
{
	Checked c;
	check_texts(&c, &clean[_i], 1);
	ck_assert_msg(c.ok && c.d.nerrors == 0 && c.d.nwarnings == 0, "%s\n%s", clean[_i], c.out);
	checked_free(&c);
}
END_TEST

START_TEST(duplicate_rule_names_across_files)
{
	const char *srcs[] = {
		"rule a: Relu(x) => x;\n",
		"// another file\nrule b: Neg(Neg(x)) => x;\n  rule a: Neg(Neg(x)) => x;\n",
	};
	Checked c;
	check_texts(&c, srcs, 2);
	ck_assert_msg(has_line(c.out, "u.rules:3:8: error: duplicate rule name 'a'"), "%s", c.out);
	ck_assert_msg(has_line(c.out, "t.rules:1:6: note: 'a' is first defined here"), "%s", c.out);
	ck_assert_int_eq(c.d.nerrors, 1);
	checked_free(&c);
}
END_TEST

/* Every rule file of rules/, given to one run as graftc gets them. */
START_TEST(rule_library_checks_clean)
{
	const char *dirs[] = {"rules/basic", "rules/extended"};
	char *srcs[64];
	const char *names[64];
	int n = 0;
	for (int k = 0; k < 2; k++) {
		DIR *dir = opendir(dirs[k]);
		ck_assert_msg(dir != NULL, "%s: run the tests from the top directory", dirs[k]);
		struct dirent *de;
		while ((de = readdir(dir)) != NULL && n < 64) {
			size_t len = strlen(de->d_name);
			if (len < 7 || strcmp(de->d_name + len - 6, ".rules") != 0)
				continue;
			char path[512];
			snprintf(path, sizeof path, "%s/%s", dirs[k], de->d_name);
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
	}
	ck_assert_int_ge(n, 8);
	RuleFile **files = calloc((size_t)n, sizeof *files);
	char *out = NULL;
	size_t outlen = 0;
	FILE *mem = open_memstream(&out, &outlen);
	Diag d;
	diag_init(&d, mem);
	int nrules = 0;
	for (int i = 0; i < n; i++) {
		files[i] = dsl_parse(names[i], srcs[i], (uint32_t)strlen(srcs[i]), &d);
		nrules += files[i] ? files[i]->nrules : 0;
	}
	bool ok = dsl_check(files, n, &d);
	fclose(mem);
	ck_assert_msg(ok && d.nerrors == 0 && d.nwarnings == 0, "%s", out);
	ck_assert_int_ge(nrules, 16);
	for (int i = 0; i < n; i++) {
		dsl_free(files[i]);
		free(srcs[i]);
		free((char *)names[i]);
	}
	free(files);
	free(out);
}
END_TEST

static Rule *rule_named(RuleFile *f, const char *name)
{
	for (int i = 0; i < f->nrules; i++)
		if (strcmp(f->rules[i]->name, name) == 0)
			return f->rules[i];
	ck_abort_msg("no rule %s", name);
	return NULL;
}

static Binding *binding_named(Rule *r, const char *name)
{
	for (int i = 0; i < r->nbindings; i++)
		if (strcmp(r->bindings[i].name, name) == 0)
			return &r->bindings[i];
	ck_abort_msg("rule %s binds no %s", r->name, name);
	return NULL;
}

/* What the checker fills in, on the examples. */
START_TEST(fills_bindings_types_and_opsets)
{
	const char *src =
		"rule conv_bn: BatchNormalization[epsilon = eps](c @ Conv(x, w:const, b:const?), s:const, t:const, m:const, v:const)\n"
		"    => Conv[..c](x, w * reshape(s / sqrt(v + eps), [-1] ++ ones(rank(w) - 1)),\n"
		"                 ((b ?? 0.0) - m) * s / sqrt(v + eps) + t);\n"
		"rule gelu: Mul(Mul(x, 0.5), Add(Erf(Div(x, 1.4142135)), 1.0)) => Gelu(x);\n"
		"rule ln: Add(Mul(Div(d @ Sub(x, ReduceMean[axes = [-1]](x)),\n"
		"                Sqrt(Add(ReduceMean[axes = [-1]](Pow(d, 2.0)), eps:const))), g:const), b:const)\n"
		"    => LayerNormalization[axis = -1, epsilon = scalar(eps)](x, g, b);\n"
		"rule cs: Concat[axis = a](s @ Split[axis = a](x, _?)#0, s#1) if outputs(s) == 2 => x;\n"
		"rule cat: Concat(xs...) if len(xs) == 1 => xs[0];\n";
	Checked c;
	check_texts(&c, &src, 1);
	ck_assert_msg(c.ok && c.d.nwarnings == 0, "%s", c.out);
	RuleFile *f = c.files[0];

	/* unused node bindings and optional operands are warned about like any other */
	const char *unused = "rule u: Add(m @ Relu(x), x) => x;\n"
	                     "rule v: Dropout(x, r?) => x;\n";
	Checked c2;
	check_texts(&c2, &unused, 1);
	ck_assert_int_eq(c2.d.nwarnings, 2);
	ck_assert_msg(strstr(c2.out, "t.rules:1:13: warning: 'm' is bound but never used") != NULL, "%s", c2.out);
	ck_assert_msg(strstr(c2.out, "t.rules:2:20: warning: 'r' is bound but never used") != NULL, "%s", c2.out);
	checked_free(&c2);

	Rule *r = rule_named(f, "conv_bn");
	ck_assert_int_eq(r->nbindings, 9);
	Binding *b = binding_named(r, "eps");
	ck_assert_int_eq(b->type, TY_FLOAT);
	ck_assert_int_eq(b->uses, 2);
	b = binding_named(r, "c");
	ck_assert_int_eq(b->type, TY_NODE);
	ck_assert_int_eq(b->uses, 1);
	b = binding_named(r, "b");
	ck_assert_int_eq(b->type, TY_VALUE);
	ck_assert(b->is_const && b->optional);
	ck_assert(binding_named(r, "w")->is_const && !binding_named(r, "w")->optional);
	ck_assert_ptr_nonnull(r->lhs->schema);
	ck_assert_str_eq(r->lhs->schema->name, "BatchNormalization");
	ck_assert_int_eq(r->rhs->type, TY_VALUE);
	ck_assert_ptr_nonnull(r->rhs->schema);
	ck_assert_str_eq(r->rhs->schema->name, "Conv");
	ck_assert_int_eq(r->min_opset_needed, 1);

	ck_assert_int_eq(rule_named(f, "gelu")->min_opset_needed, 20);

	r = rule_named(f, "ln");
	ck_assert_int_eq(r->min_opset_needed, 17);
	ck_assert_int_eq(binding_named(r, "d")->type, TY_NODE);
	ck_assert_int_eq(binding_named(r, "d")->uses, 1);
	/* ReduceMean's newest form in 1..23 takes axes as an input, written as
	 * the attribute of the older form. */
	Pattern *mean = r->lhs->args[0]->args[0]->args[0]->args[1];
	ck_assert_str_eq(mean->name, "ReduceMean");
	ck_assert_int_eq(mean->schema->since_version, 18);

	r = rule_named(f, "cs");
	ck_assert_int_eq(binding_named(r, "a")->type, TY_INT);
	ck_assert_int_eq(binding_named(r, "a")->uses, 1);
	ck_assert_int_eq(binding_named(r, "s")->type, TY_NODE);
	ck_assert_int_eq(r->guard->type, TY_BOOL);

	r = rule_named(f, "cat");
	ck_assert_int_eq(binding_named(r, "xs")->type, TY_VALUES);
	ck_assert_int_eq(r->rhs->type, TY_VALUE);
	checked_free(&c);
}
END_TEST

/* MProg.pats: every operand in written order, the optional _? that leaves
 * no step among them; the attributes in written order, one an older opset
 * spells as an input (ReduceMean's axes) with its literal, a variable by
 * its register; a literal operand as its check's constant. */
START_TEST(lowering_records_the_pattern)
{
	const char *src = "rule t: Mul(ReduceMean[axes = [-1], keepdims = k](x), Add(Clip(y, _?, _?), 0.5 ~ 0.01))\n"
	                  "    if k == 1 && rank(y) == 2 => x;\n";
	Checked c;
	check_texts(&c, &src, 1);
	ck_assert_msg(c.ok && c.d.nwarnings == 0, "%s", c.out);
	MRuleSet *set = dsl_lower(c.files, 1, &c.d);
	ck_assert_ptr_nonnull(set);
	const MProg *p = &set->rules[0].prog;
	ck_assert_int_eq(p->nnodes, 4);
	const MPatNode *mul = &p->pats[0], *rm = &p->pats[1], *add = &p->pats[2], *clip = &p->pats[3];
	ck_assert_int_eq(mul->reg, 0);
	ck_assert_str_eq(mul->op, "Mul");
	ck_assert_int_eq(mul->noperands, 2);
	ck_assert_int_eq(mul->operands[0].kind, MO_NODE);
	ck_assert_int_eq(mul->operands[0].node, 1);
	ck_assert_int_eq(mul->operands[1].node, 2);
	for (int i = 1; i < 4; i++)
		ck_assert_int_eq(p->pats[i].reg, p->nodes[i]);

	ck_assert_str_eq(rm->op, "ReduceMean");
	ck_assert_int_eq(rm->noperands, 1);
	ck_assert_int_eq(rm->operands[0].kind, MO_VAR);
	ck_assert_str_eq(p->vnames[rm->operands[0].reg], "x");
	ck_assert_int_eq(rm->nattrs, 2);
	ck_assert_str_eq(rm->attrs[0].name, "axes");
	ck_assert_int_eq(rm->attrs[0].reg, -1);
	ck_assert_int_eq(rm->attrs[0].value->kind, ME_LIST);
	ck_assert_int_eq(rm->attrs[0].value->nkids, 1);
	ck_assert_str_eq(rm->attrs[1].name, "keepdims");
	ck_assert_ptr_null(rm->attrs[1].value);
	ck_assert_str_eq(p->vnames[rm->attrs[1].reg], "k");

	ck_assert_str_eq(add->op, "Add");
	ck_assert_int_eq(add->operands[0].kind, MO_NODE);
	ck_assert_int_eq(add->operands[0].node, 3);
	ck_assert_int_eq(add->operands[1].kind, MO_LITERAL);
	ck_assert_int_eq(add->operands[1].lit->kind, ME_EQUALS);
	ck_assert(add->operands[1].lit->f == 0.5 && add->operands[1].lit->tol == 0.01);

	ck_assert_str_eq(clip->op, "Clip");
	ck_assert_int_eq(clip->noperands, 3);
	ck_assert_int_eq(clip->operands[0].kind, MO_VAR);
	ck_assert(!clip->operands[0].optional);
	for (int i = 1; i < 3; i++) {
		ck_assert_int_eq(clip->operands[i].kind, MO_ANY);
		ck_assert(clip->operands[i].optional);
	}
	/* the _? leave no step: only y is read of the Clip */
	int reads = 0;
	for (int i = 0; i < p->ninsns; i++)
		reads += (p->insns[i].kind == MI_INPUT || p->insns[i].kind == MI_ARG) && p->insns[i].src == clip->reg;
	ck_assert_int_eq(reads, 1);
	dsl_lower_free(set);
	checked_free(&c);
}
END_TEST

Suite *suite_dsl_check(void)
{
	Suite *s = suite_create("dsl_check");
	TCase *tc = tcase_create("diagnostics");
	tcase_add_loop_test(tc, diagnostic, 0, (int)(sizeof cases / sizeof cases[0]));
	tcase_add_loop_test(tc, checks_clean, 0, (int)(sizeof clean / sizeof clean[0]));
	tcase_add_test(tc, duplicate_rule_names_across_files);
	suite_add_tcase(s, tc);
	tc = tcase_create("library");
	tcase_add_test(tc, rule_library_checks_clean);
	tcase_add_test(tc, fills_bindings_types_and_opsets);
	tcase_add_test(tc, lowering_records_the_pattern);
	suite_add_tcase(s, tc);
	return s;
}
