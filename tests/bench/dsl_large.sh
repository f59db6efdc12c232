#!/bin/sh
# dsl_large.sh - the rule language front end at sizes generated files reach
# (issue 24: graftc and --rules linear in the size of a rules file).  Times
# graftc --check and graft optimize --rules on: one rule binding 5,000
# variables of which 4,999 are unused (a warning each), 15,000 copies of one
# rule (shadowed warnings), and one rule of 40,000 operands (refused when
# loaded: over the 4,096 limit, after checking and lowering).
# Usage: tests/bench/dsl_large.sh [build dir]   (default build)
set -eu
b=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk 'BEGIN { printf "level basic;\nrule many_vars: Relu(Sum(x0"; for (i = 1; i < 5000; i++) printf ", x%d", i;
             print ")) => x0;" }' > "$tmp/vars.rules"
awk 'BEGIN { print "level basic;"; for (i = 1; i <= 15000; i++) print "rule r" i ": Relu(Relu(x)) => Relu(x);" }' \
	> "$tmp/many.rules"
awk 'BEGIN { printf "level basic;\nrule wide: Sum(x0"; for (i = 1; i < 40000; i++) printf ", x%d", i;
             printf ") => Max(x0"; for (i = 1; i < 40000; i++) printf ", x%d", i; print ");" }' > "$tmp/wide.rules"
for f in vars many wide; do
	s=$(date +%s.%N)
	"$b/graftc" --check "$tmp/$f.rules" > /dev/null 2>&1 || true
	m=$(date +%s.%N)
	"$b/graft" optimize examples/tiny_cnn.onnx -o "$tmp/o.onnx" --no-library --rules "$tmp/$f.rules" > /dev/null 2>&1 || true
	e=$(date +%s.%N)
	awk -v f="$f" -v s="$s" -v m="$m" -v e="$e" \
		'BEGIN { printf "%s.rules: graftc --check %.2f s, optimize --rules %.2f s\n", f, m - s, e - m }' </dev/null
done
