#!/usr/bin/env bash
# verify_ort.sh - graft verify's instances in ONNX Runtime: the first
# instances where each library rule fires, before and after the rewrite,
# must load in ORT wherever the original loads and agree there too (on
# ORT's generated inputs, with tests/ort_gate.mjs's tolerances).  graft
# verify proves the rules on graft's evaluator; this shows ORT accepts
# and computes the same.  verify draws inf and NaN into constants too; an
# instance whose outputs differ only where one side is inf or NaN (a fusion
# meets them in another order: docs/evaluator.md) is counted apart.  A rule
# with a declared [tolerance X] is held to it as graft verify holds it
# (ort_gate.mjs --tolerances), where the gate's own tolerances are tighter.
#
# usage: tests/verify_ort.sh ORT_TOOLS [KEEP]   (KEEP instances per rule, default 10)
set -euo pipefail
ort=${1:?usage: tests/verify_ort.sh ORT_TOOLS [KEEP]}
keep=${2:-10}
graft=${GRAFT:-build/graft}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! $graft verify rules/*/*.rules --keep "$keep" -o "$tmp/inst" > "$tmp/report"; then
  cat "$tmp/report"; echo "FAIL graft verify"; exit 1
fi
for b in "$tmp"/inst/*.rewritten.onnx; do
  a=${b%.rewritten.onnx}.onnx
  printf '%s\t%s\t%s\n' "$(basename "$a" .onnx)" "$a" "$b"
done > "$tmp/list"
# each rule's declared tolerance, from verify's lines "... (tolerance X)"
sed -n 's/^verified  *\([a-z0-9_]*\) .*(tolerance \([0-9.e+-]*\))$/\1\t\2/p' "$tmp/report" > "$tmp/tolerances"
fail=0
node tests/ort_gate.mjs "$ort" "$tmp/list" --nonfinite-ok --tolerances "$tmp/tolerances" --model-seconds 30 > "$tmp/gate" || fail=1
grep '^FAIL' "$tmp/gate" || true
echo "verify instances in ORT: $(grep '^gate:' "$tmp/gate" || echo 'no summary')"
exit $fail
