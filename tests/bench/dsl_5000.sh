#!/bin/sh
# dsl_5000.sh - graftc --check on a generated 5,000-line rule file with one
# syntax error near the end: the error must be reported at its exact
# line:col, and the run should take well under a second (issue 4).
# Usage: tests/bench/dsl_5000.sh [path/to/graftc]   (default build/graftc)
set -eu
graftc=${1:-build/graftc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
file=$tmp/bench.rules

# 5,000 lines: a level line, rules of one to three lines each, with distinct
# names; line 4990 holds the error (a missing ',' between two operands).
awk 'BEGIN {
	print "level basic;"
	n = 1; i = 0
	while (n < 4999) {
		i++
		if (n + 1 == 4990) {
			print "rule broken_" i ": Relu(x y) => x;"; n++; continue
		}
		k = i % 4
		if (k == 0 && n + 3 < 4999 && n + 3 < 4990 || k == 0 && n > 4990 && n + 3 < 4999) {
			print "rule r" i " [opset 13..] \"Squeeze undoes an Unsqueeze\":"
			print "    Squeeze(Unsqueeze(x, axes), axes)"
			print "    => x;"
			n += 3
		} else if (k == 1) {
			print "rule r" i ": Add(MatMul(a, b:const), c:const) if rank(a) == 2 && rank(b) == 2 => Gemm(a, b, c);"; n++
		} else if (k == 2) {
			print "rule r" i ": Transpose[perm = p](Transpose[perm = q](x)) => Transpose[perm = compose(q, p)](x);"; n++
		} else {
			print "rule r" i ": Mul(Mul(x, 0.5), Add(Erf(Div(x, 1.4142135 ~ 1e-6)), 1.0)) => Gelu(x); // gelu " i; n++
		}
	}
	print "rule last: Relu(Relu(x)) => Relu(x);"
}' > "$file"

lines=$(wc -l < "$file")
[ "$lines" -eq 5000 ] || { echo "generated $lines lines, not 5000" >&2; exit 1; }
grep -n 'broken_' "$file" | grep -q '^4990:' || { echo "the error is not on line 4990" >&2; exit 1; }

start=$(date +%s.%N)
status=0
"$graftc" --check "$file" > /dev/null 2> "$tmp/err" || status=$?
end=$(date +%s.%N)

[ "$status" -eq 1 ] || { echo "graftc exited $status, not 1" >&2; cat "$tmp/err" >&2; exit 1; }
errors=$(grep -c ': error: ' "$tmp/err" || true)
first=$(grep ': error: ' "$tmp/err" | head -1)
case "$first" in
"$file:4990:"*": error: unexpected 'y' (expected ',' or ')')") ;;
*) echo "unexpected diagnostics:" >&2; cat "$tmp/err" >&2; exit 1 ;;
esac
col=$(echo "$first" | sed "s|^$file:4990:\([0-9]*\):.*|\1|")
wantcol=$(awk 'NR == 4990 { print index($0, "x y)") + 2 }' "$file")
[ "$col" = "$wantcol" ] || { echo "error at column $col, want $wantcol" >&2; exit 1; }
[ "$errors" -eq 1 ] || { echo "$errors errors, want 1:" >&2; cat "$tmp/err" >&2; exit 1; }
echo "error at line 4990, column $col (exactly one error): ok"
awk -v s="$start" -v e="$end" -v l="$lines" 'BEGIN { printf "graftc --check on %d lines: %.3f s\n", l, e - s }'
