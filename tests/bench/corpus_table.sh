#!/usr/bin/env bash
# corpus_table.sh - the per-model table of BENCHMARKS.md: nodes before, after
# graft optimize and after ONNX Runtime's `basic` level (ort-optimize.mjs),
# and graft's load+optimize+save time next to ONNX Runtime's session creation
# at `basic` (ort-bench.mjs --iters 0), medians of 3, in one run.
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
