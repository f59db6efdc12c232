#!/usr/bin/env bash
# corpus_table.sh - the per-model table of BENCHMARKS.md: nodes before, after
# graft optimize and after ONNX Runtime's `basic` level (ort-optimize.mjs),
# and graft's load+optimize+save time next to ONNX Runtime's session creation
# at `basic` (ort-bench.mjs --iters 0), medians of 3, in one run; then the
# node counts against ORT `basic` on the onnx-backend models, as a tally.
# Usage: tests/bench/corpus_table.sh [CORPUS] [ORT_TOOLS]
set -euo pipefail
corpus=${1:-../shared/corpus}
ort=${2:-../shared/tools/ort}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median3() { sort -n | sed -n 2p; }
echo "| model | nodes | graft | ORT basic | graft load+optimize+save ms | ORT create (basic) ms |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for model in "$corpus"/torch/*/*/model.onnx; do
  name=$(echo "$model" | sed 's|.*/torch/||; s|/model.onnx||')
  before=$(node "$ort/onnx-stats.mjs" "$model" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"])')
  build/graft optimize "$model" -o "$tmp/g.onnx" 2>/dev/null
  after=$(node "$ort/onnx-stats.mjs" "$tmp/g.onnx" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"])')
  node "$ort/ort-optimize.mjs" "$model" "$tmp/o.onnx" --level basic > /dev/null 2>&1
  ortn=$(node "$ort/onnx-stats.mjs" "$tmp/o.onnx" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"])')
  gt=$(for i in 1 2 3; do t0=$(date +%s%N); build/graft optimize "$model" -o "$tmp/g.onnx" 2>/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 100000 )); done | median3)
  ot=$(node "$ort/ort-bench.mjs" "$model" --opt basic --iters 0 --creates 3 | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["create_ms"],1))')
  printf "| %s | %s | %s | %s | %s | %s |\n" "$name" "$before" "$after" "$ortn" "$(python3 -c "print($gt / 10)")" "$ot"
done

# The onnx-backend models (ONNX's own test models): node counts only, as a
# tally, with every model where graft ends with more nodes than ORT listed.
# ORT refuses some of them (ops or types it does not implement): skipped.
nodes() { node "$ort/onnx-stats.mjs" "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"])'; }
fewer=0; same=0; more=0; refused=0
echo
for model in $(find "$corpus/onnx-backend" -name '*.onnx' | sort); do
  if ! node "$ort/ort-optimize.mjs" "$model" "$tmp/o.onnx" --level basic > /dev/null 2>&1; then
    refused=$((refused + 1)); continue
  fi
  build/graft optimize "$model" -o "$tmp/g.onnx" 2>/dev/null
  g=$(nodes "$tmp/g.onnx"); o=$(nodes "$tmp/o.onnx")
  if [ "$g" -lt "$o" ]; then fewer=$((fewer + 1))
  elif [ "$g" -eq "$o" ]; then same=$((same + 1))
  else more=$((more + 1)); echo "more nodes than ORT basic: ${model#$corpus/} graft $g, ORT $o"
  fi
done
echo "onnx-backend models: graft fewer nodes than ORT basic on $fewer, the same on $same, more on $more (ORT refused $refused)"
