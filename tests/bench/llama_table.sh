#!/usr/bin/env bash
# tests/bench/llama_table.sh - issue 27's LLM-decoder measure: a LLaMA-style
# decoder exported by tests/llama/export_llama.py (Debian's python3-torch,
# random weights, fixed seed; larger than the committed test fixtures), prefill
# and one decode step with a KV cache, float32 and float16, dynamic and static
# shapes; node counts after ONNX Runtime's basic and extended levels and after
# graft at four configurations, each graft output checked against the
# original in ONNX Runtime (float16 at rtol 1e-2, atol 1e-3).  Prints a
# Markdown table (BENCHMARKS.md).  `make bench-llama`.
#   bash tests/bench/llama_table.sh [GRAFT] [ORT_TOOLS] [HIDDEN] [LAYERS]
set -euo pipefail
graft=${1:-build/graft}
ort=${2:-build/ort-tools}
hidden=${3:-256}
layers=${4:-4}
here=$(cd "$(dirname "$0")/../llama" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for dt in float32 float16; do
  for st in "" --static; do
    /usr/bin/python3 "$here/export_llama.py" "$t" --hidden "$hidden" --layers "$layers" --heads 8 --kv-heads 2 \
      --vocab 1000 --dtype $dt $st > /dev/null 2>&1
  done
done
count() { node "$ort/onnx-stats.mjs" "$1" --json | /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['nodes'])"; }
echo "| model | nodes | ORT basic | ORT extended | graft | graft --target-opset 23 | graft --allow-vendor-ops | vendor ops + --target-opset 23 | outputs agree in ORT |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for m in prefill decode prefill_static decode_static prefill_fp16 decode_fp16 prefill_fp16_static decode_fp16_static; do
  f=$t/llama_$m.onnx
  tol=(); case $m in *fp16*) tol=(--rtol 1e-2 --atol 1e-3) ;; esac
  row="| $m | $(count "$f")"
  for level in basic extended; do
    node "$ort/ort-optimize.mjs" "$f" "$t/ort.onnx" --level $level > /dev/null
    row="$row | $(count "$t/ort.onnx")"
  done
  agree=yes
  for flags in "" "--target-opset 23" "--allow-vendor-ops" "--allow-vendor-ops --target-opset 23"; do
    # shellcheck disable=SC2086
    "$graft" optimize "$f" -o "$t/g.onnx" $flags > /dev/null 2>&1
    row="$row | $(count "$t/g.onnx")"
    node "$ort/ort-compare.mjs" "$f" "$t/g.onnx" --int-range 0:1000 --dim batch=2 --dim seq=3 --dim past=4 \
      "${tol[@]}" > /dev/null 2>&1 || agree="no ($flags)"
  done
  echo "$row | $agree |"
done
