#!/usr/bin/env bash
# layout_gate.sh - the layout level's promise on the corpus: `graft optimize`
# (every level) never leaves more Transposes than a model had, and where ONNX
# Runtime's transpose optimizer (in its `basic` level) takes some away, graft
# leaves no more than ORT does.  Transposes are counted in bodies too.  Prints
# one line per model that has any, and a summary; exits 1 on a violation.
# (Whether the outputs agree is tests/ort_gate.sh's job, on the same models.)
#
# usage: tests/layout_gate.sh ORT_TOOLS [CORPUS]
set -euo pipefail
ort=${1:?usage: tests/layout_gate.sh ORT_TOOLS [CORPUS]}
corpus=${2:-${GRAFT_CORPUS:-../shared/corpus}}
graft=${GRAFT:-build/graft}
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() {  # Transposes in a model, bodies included; "-" if it does not exist
  [ -f "$1" ] || { echo -; return; }
  "$python" - "$1" <<'EOF'
import sys, onnx
def count(g):
    n = 0
    for node in g.node:
        n += node.op_type == "Transpose" and node.domain in ("", "ai.onnx")
        for a in node.attribute:
            n += sum(count(b) for b in ([a.g] if a.HasField("g") else []) + list(a.graphs))
    return n
print(count(onnx.load(sys.argv[1], load_external_data=False).graph))
EOF
}

models=0 fail=0 raw_sum=0 graft_sum=0 ort_sum=0 ort_fewer=0
printf '%-64s %5s %6s %9s\n' model raw graft "ORT basic"
while read -r m; do
  models=$((models + 1))
  name=${m#"$corpus"/}
  raw=$(count "$m")
  [ "$raw" = 0 ] && continue
  "$graft" optimize "$m" -o "$tmp/g.onnx" > /dev/null 2> "$tmp/log" ||
    { echo "FAIL $name: graft optimize: $(head -1 "$tmp/log")"; fail=1; continue; }
  rm -f "$tmp/o.onnx"
  node "$ort/ort-optimize.mjs" "$m" "$tmp/o.onnx" --level basic > /dev/null 2>&1 || true
  g=$(count "$tmp/g.onnx") o=$(count "$tmp/o.onnx")
  printf '%-64s %5s %6s %9s\n' "$name" "$raw" "$g" "$o"
  raw_sum=$((raw_sum + raw)) graft_sum=$((graft_sum + g))
  if [ "$g" -gt "$raw" ]; then echo "FAIL $name: $raw Transposes became $g"; fail=1; fi
  if [ "$o" != - ]; then
    ort_sum=$((ort_sum + o))
    if [ "$o" -lt "$raw" ]; then
      ort_fewer=$((ort_fewer + 1))
      if [ "$g" -gt "$o" ]; then echo "FAIL $name: ORT's transpose optimizer leaves $o Transposes, graft $g"; fail=1; fi
    fi
  fi
done < <(find -L "$corpus" -name '*.onnx' | LC_ALL=C sort)
echo "layout: $models models; Transposes in those that have any: $raw_sum in the originals, $graft_sum after graft," \
     "$ort_sum after ORT basic (where ORT loads them); ORT removes some on $ort_fewer models"
exit $fail
