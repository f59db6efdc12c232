/* fuzz_rules.c - libFuzzer target for `graft optimize --rules`: any bytes are
 * loaded as a rules file (rw_rules_load_text: parse, check, analyse, lower,
 * resolve externs); when they load, the interpreter runs the rules on a
 * small graph holding many ops (with fuel, so a rule set that never
 * converges stops), and the graph must still be valid; then graft verify
 * tries every rule on a few generated instances (gen.c walks any pattern
 * the checker accepts).  No crash, hang or leak; every refusal comes with
 * a message.
 * `make fuzz-rules` runs it (FUZZ_RULES_SECONDS=60) from the rule-language
 * seeds in tests/fuzz/dsl-seeds/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine/rw_interp.h"
#include "ir/text.h"
#include "runtime/verify/verify.h"

static FILE *devnull;

static const char *const graph =
	"<ir_version: 8, opset_import: [\"\" : 13]>\n"
	"g (float[1,2,4,4] x, float[2,3] p) => (float[1,4,2,2] y, float[3,2] q, float[2,3] r) "
	"<float[4,2,3,3] w = {1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9,"
	"1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9}, "
	"float[4] s = {1,2,3,4}, float[4] t = {0,1,0,1}, float[4] m = {0,0,1,1}, float[4] v = {1,1,2,2}, "
	"int64[1] a = {0}, int64[2] sh = {3,2}, float c = {2}> {\n"
	"  i = Identity (x)\n  d = Dropout (i)\n  cv = Conv (d, w)\n"
	"  bn = BatchNormalization (cv, s, t, m, v)\n  e = Erf (bn)\n  mu = Mul (e, c)\n  ad = Add (mu, bn)\n"
	"  y = MaxPool <kernel_shape = [2, 2], strides = [1, 1]> (ad)\n"
	"  u = Unsqueeze (p, a)\n  sq = Squeeze (u, a)\n  t1 = Transpose <perm = [1, 0]> (sq)\n"
	"  t2 = Transpose <perm = [1, 0]> (t1)\n  re = Reshape (t2, sh)\n  q = Relu (re)\n"
	"  ca = Cast <to = 1> (p)\n  n1 = Neg (ca)\n  n2 = Neg (n1)\n  sm = Sum (n2, p)\n  r = Div (sm, c)\n"
	"}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > UINT32_MAX)
		return 0;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	Diag d;
	diag_init(&d, devnull);
	RwRuleSet *set = rw_rules_load_text("fuzz.rules", (const char *)data, (uint32_t)size, "fuzz", &d);
	if (!set) {
		if (!d.nerrors || !d.first[0])
			abort();   /* refused without a message */
		return 0;
	}
	IrModel *m = ir_parse_model(graph, strlen(graph), "fuzz-graph", &d);
	if (!m)
		abort();
	const RwRuleSet *sets[] = {set};
	RwOptions o = {.fuel = 200};
	RwResult r;
	rw_run(m, sets, 1, &o, &r, &d);
	if (r.stop != RW_ERROR && !ir_validate(m, &d))
		abort();   /* a rewrite left an invalid graph */
	rw_result_free(&r);
	ir_model_free(m);
	VerifyOptions vo = {.instances = 2, .tries = 20, .out = devnull, .no_save = true};
	VerifyCounts vc;
	verify_rules(set, &vo, &vc, &d);
	rw_rules_free(set);
	return 0;
}
