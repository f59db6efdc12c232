#!/usr/bin/env bash
# extended_table.sh - issue 12's table: nodes after graft optimize (the
# model's own opset), after graft optimize --target-opset 20 (standard ops
# only), and after ONNX Runtime's `extended` level, with ORT's count "spelled
# in standard ops" (each vendor node plus the standard nodes it stands for:
# FusedConv, FusedGemm, FusedMatMul, BiasGelu, SkipLayerNormalization,
# SkipSimplifiedLayerNormalization +1, QuickGelu +2, FastGelu and Gelu 0).
# Every graft output is checked against its original with ort-compare.mjs.
# Usage: tests/bench/extended_table.sh [CORPUS] [ORT_TOOLS]
set -euo pipefail
corpus=${1:-../shared/corpus}
ort=${2:-../shared/tools/ort}
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
echo "| model | nodes | graft | graft --target-opset 20 | ORT extended | ORT extended in standard ops | outputs agree in ORT |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
for m in bert_h128_l2 gpt2_h128_l2 vit_b_16_narrow swin_t_narrow convnext_tiny_narrow resnet18 mobilenet_v2 small_cnn; do
  f="$corpus/torch/$m/raw/model.onnx"
  [ -f "$f" ] || continue
  build/graft optimize "$f" -o "$tmp/g.onnx" 2>/dev/null
  build/graft optimize "$f" --target-opset 20 -o "$tmp/g20.onnx" 2>/dev/null
  node "$ort/ort-optimize.mjs" "$f" "$tmp/o.onnx" --level extended > /dev/null 2>&1
  read -r before _ < <(count "$f"); read -r g _ < <(count "$tmp/g.onnx"); read -r g20 _ < <(count "$tmp/g20.onnx")
  read -r o os < <(count "$tmp/o.onnx")
  agree=no
  node "$ort/ort-compare.mjs" "$f" "$tmp/g.onnx" > /dev/null 2>&1 && node "$ort/ort-compare.mjs" "$f" "$tmp/g20.onnx" > /dev/null 2>&1 && agree=yes
  echo "| $m/raw | $before | $g | $g20 | $o | $os | $agree |"
done
