/* builtins.c - the builtin functions of guards and results, as a table the
 * checker (check.c) types calls with, and the "did you mean" helper its
 * messages use.  docs/rule-language.md lists the same builtins for people;
 * keep the two together. */
#include "check_internal.h"

#include <ctype.h>
#include <string.h>

#define FIXED(name, ret, doc, ...) \
	{ name, sizeof((uint8_t[]){__VA_ARGS__}), {__VA_ARGS__}, RET_FIXED, ret, NULL, doc }
#define UNARY(name, rule, op)  { name, 1, {P_NUMV}, rule, TY_UNKNOWN, op, NULL }
#define BINARY(name, rule, op) { name, 2, {P_NUMV, P_NUMV}, rule, TY_UNKNOWN, op, NULL }

static const Builtin builtins[] = {
	/* guards: facts about the match */
	FIXED("rank", TY_INT, "rank of v", P_VT),
	FIXED("shape", TY_INTS, "dims of v", P_VT),
	FIXED("dim", TY_INT, "one dim of v", P_VT, P_INT),
	FIXED("dtype", TY_DTYPE, "element type of v", P_VT),
	FIXED("numel", TY_INT, "element count of v", P_VT),
	FIXED("uses", TY_INT, "number of consumers of v", P_VALUE),
	FIXED("outputs", TY_INT, "number of outputs of the node bound to d", P_NODE),
	FIXED("value", TY_TENSOR, "the tensor of a :const", P_CONST),
	FIXED("scalar", TY_FLOAT, "the single element of a one-element constant", P_VT),
	FIXED("ints", TY_INTS, "the elements of an integer constant", P_VT),
	FIXED("absent", TY_BOOL, "an optional input is absent", P_OPTIONAL),
	FIXED("len", TY_INT, "length of a list or of xs...", P_LIST),
	FIXED("is_identity", TY_BOOL, "p is 0, 1, ..., n-1", P_INTS),
	FIXED("compose", TY_INTS, "Transpose[q] then Transpose[p] as one permutation", P_INTS, P_INTS),
	FIXED("ones", TY_INTS, "n ones", P_INT),
	FIXED("range", TY_INTS, "0, 1, ..., n-1", P_INT),
	FIXED("dims", TY_INTS, "the dims of v at axes (negative axes count from the end)", P_VT, P_INTS),
	FIXED("is_float", TY_BOOL, "v's element type is a floating-point type (float8 and float4 kinds too)", P_VT),
	FIXED("is_int", TY_BOOL, "v's element type is an integer type (signed or unsigned; not bool)", P_VT),
	FIXED("merge_axes", TY_INTS, "axes o of a rank-n tensor plus axes i counted with o's removed, sorted", P_INTS, P_INTS, P_INT),
	FIXED("distinct", TY_BOOL, "no element of l repeats", P_INTS),
	FIXED("finite", TY_BOOL, "every element of the :const c is finite (no inf, no NaN)", P_CONST),
	FIXED("moderate", TY_BOOL, "every element of the :const c is 0, or finite with a magnitude within 2^-k .. 2^k (k = 50 for float32, 409 for float64, 6 for float16)", P_CONST),
	{ "opset", 0, {0}, RET_FIXED, TY_INT, NULL, "the model's default-domain opset" },
	/* results: on values these build the ONNX op named; on numbers they compute */
	UNARY("abs", RET_MATH_J, "Abs"),
	UNARY("ceil", RET_MATH_J, "Ceil"),
	UNARY("erf", RET_MATH_F, "Erf"),
	UNARY("exp", RET_MATH_F, "Exp"),
	UNARY("floor", RET_MATH_J, "Floor"),
	UNARY("log", RET_MATH_F, "Log"),
	UNARY("neg", RET_MATH_J, "Neg"),
	UNARY("reciprocal", RET_MATH_F, "Reciprocal"),
	UNARY("relu", RET_MATH_J, "Relu"),
	UNARY("sigmoid", RET_MATH_F, "Sigmoid"),
	UNARY("sqrt", RET_MATH_F, "Sqrt"),
	UNARY("tanh", RET_MATH_F, "Tanh"),
	BINARY("max", RET_MATH_J, "Max"),
	BINARY("min", RET_MATH_J, "Min"),
	BINARY("pow", RET_MATH_F, "Pow"),
	{ "reshape", 2, {P_VT, P_SHAPE}, RET_FIXED, TY_VALUE, "Reshape", "x reshaped to s" },
	{ "cast", 2, {P_VT, P_DTYPE}, RET_FIXED, TY_VALUE, "Cast", "x converted to a dtype" },
};

const Builtin *dsl_builtins(size_t *count)
{
	*count = sizeof builtins / sizeof builtins[0];
	return builtins;
}

const Builtin *dsl_builtin_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

bool dsl_is_dtype_name(const char *name)
{
	static const char *const names[] = {
		"float32", "float16", "float64", "bfloat16", "int8", "int16", "int32", "int64",
		"uint8", "uint16", "uint32", "uint64", "bool",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* ---- did you mean -------------------------------------------------------- */

/* Optimal string alignment distance, ignoring case; long names are never
 * close (the caller only wants typos), so they get a large distance. */
int dsl_edit_distance(const char *a, const char *b)
{
	enum { MAXLEN = 63 };
	size_t m = strlen(a), n = strlen(b);
	if (m > MAXLEN || n > MAXLEN)
		return 1000;
	int dp[MAXLEN + 1][MAXLEN + 1];
	for (size_t i = 0; i <= m; i++)
		dp[i][0] = (int)i;
	for (size_t j = 0; j <= n; j++)
		dp[0][j] = (int)j;
	for (size_t i = 1; i <= m; i++) {
		for (size_t j = 1; j <= n; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			int cost = ca != cb;
			int best = dp[i - 1][j] + 1;
			if (dp[i][j - 1] + 1 < best)
				best = dp[i][j - 1] + 1;
			if (dp[i - 1][j - 1] + cost < best)
				best = dp[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && dp[i - 2][j - 2] + 1 < best)
				best = dp[i - 2][j - 2] + 1;
			dp[i][j] = best;
		}
	}
	return dp[m][n];
}

void suggest_init(Suggest *s, const char *name)
{
	s->name = name;
	s->best = NULL;
	s->dist = 1000;
}

void suggest_add(Suggest *s, const char *candidate)
{
	if (strcmp(candidate, s->name) == 0)
		return;
	int d = dsl_edit_distance(s->name, candidate);
	if (d < s->dist) {
		s->dist = d;
		s->best = candidate;
	}
}

const char *suggest_result(const Suggest *s)
{
	/* About one typo per three letters: 'prem' -> 'perm' (a swap) but not
	 * 'foo' -> 'Abs'. */
	size_t len = strlen(s->name);
	int limit = len <= 3 ? 1 : len <= 8 ? 2 : 3;
	if (s->best && s->dist <= limit && (size_t)s->dist < len)
		return s->best;
	return NULL;
}
