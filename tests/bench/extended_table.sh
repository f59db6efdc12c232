#!/usr/bin/env bash
# extended_table.sh - issue 12's table: nodes after graft optimize (the
# model's own opset), after graft optimize --target-opset 20 (standard ops
# only) and --target-opset 23 (standard ops, with Attention and RMSNormalization), after graft optimize --allow-vendor-ops (ONNX Runtime's fusions as
# com.microsoft ops), and after ONNX Runtime's `basic` and `extended` levels,
# with ORT extended's count "spelled in standard ops" (each vendor node plus
# the standard nodes it stands for: FusedConv, FusedGemm, FusedMatMul,
# BiasGelu, SkipLayerNormalization, SkipSimplifiedLayerNormalization +1,
# QuickGelu +2, FastGelu and Gelu 0).  Every graft output is checked against
# its original with ort-compare.mjs.  A second table gives ONNX Runtime's
# inference latency (ort-bench.mjs, optimizations disabled, median of
# ITERS runs after 3 warm-ups, 1 thread) of the original, of graft's outputs
# and of ORT's own `extended` model, measured one model after the other in
# one run.
# Usage: tests/bench/extended_table.sh [CORPUS] [ORT_TOOLS] [ITERS]
set -euo pipefail
corpus=${1:-../shared/corpus}
ort=${2:-../shared/tools/ort}
iters=${3:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count() {
  /usr/bin/python3 - "$1" <<'PY'
import collections, sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
extra = {"FusedConv": 1, "FusedGemm": 1, "SkipLayerNormalization": 1, "SkipSimplifiedLayerNormalization": 1,
         "BiasGelu": 1, "FusedMatMul": 1, "QuickGelu": 2, "FastGelu": 0, "Gelu": 0}
vendor = collections.Counter(n.op_type for n in m.graph.node if n.domain == "com.microsoft")
print(len(m.graph.node), len(m.graph.node) + sum(extra.get(op, 0) * k for op, k in vendor.items()))
PY
}
lat() { node "$ort/ort-bench.mjs" "$1" --opt disabled --iters "$iters" | sed -E 's/.*"median_ms":([0-9.]+).*/\1/'; }
models="bert_h128_l2 gpt2_h128_l2 vit_b_16_narrow swin_t_narrow convnext_tiny_narrow resnet18 mobilenet_v2 small_cnn"
echo "| model | nodes | graft | graft --target-opset 20 | graft --target-opset 23 | graft --allow-vendor-ops | ORT basic | ORT extended | ORT extended in standard ops | outputs agree in ORT |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
: > "$tmp/lat"
for m in $models; do
  f="$corpus/torch/$m/raw/model.onnx"
  [ -f "$f" ] || continue
  build/graft optimize "$f" -o "$tmp/g.onnx" 2>/dev/null
  build/graft optimize "$f" --target-opset 20 -o "$tmp/g20.onnx" 2>/dev/null
  build/graft optimize "$f" --target-opset 23 -o "$tmp/g23.onnx" 2>/dev/null
  build/graft optimize "$f" --allow-vendor-ops -o "$tmp/gv.onnx" 2>/dev/null
  node "$ort/ort-optimize.mjs" "$f" "$tmp/ob.onnx" --level basic > /dev/null 2>&1
  node "$ort/ort-optimize.mjs" "$f" "$tmp/o.onnx" --level extended > /dev/null 2>&1
  read -r before _ < <(count "$f"); read -r g _ < <(count "$tmp/g.onnx"); read -r g20 _ < <(count "$tmp/g20.onnx")
  read -r g23 _ < <(count "$tmp/g23.onnx")
  read -r gv _ < <(count "$tmp/gv.onnx"); read -r ob _ < <(count "$tmp/ob.onnx"); read -r o os < <(count "$tmp/o.onnx")
  agree=yes
  for out in g g20 g23 gv; do
    node "$ort/ort-compare.mjs" "$f" "$tmp/$out.onnx" > /dev/null 2>&1 || agree="no ($out)"
  done
  echo "| $m/raw | $before | $g | $g20 | $g23 | $gv | $ob | $o | $os | $agree |"
  echo "| $m/raw | $(lat "$f") | $(lat "$tmp/g20.onnx") | $(lat "$tmp/g23.onnx") | $(lat "$tmp/gv.onnx") | $(lat "$tmp/ob.onnx") | $(lat "$tmp/o.onnx") |" >> "$tmp/lat"
done
echo
echo "ONNX Runtime inference latency, ms (optimizations disabled, median of $iters):"
echo
echo "| model | original | graft --target-opset 20 | graft --target-opset 23 | graft --allow-vendor-ops | ORT basic | ORT extended |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
cat "$tmp/lat"
