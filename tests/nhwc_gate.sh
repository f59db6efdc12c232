#!/usr/bin/env bash
# nhwc_gate.sh - `graft optimize --layout nhwc --allow-vendor-ops` on the
# corpus CNNs (J125): every Conv becomes com.microsoft NhwcConv, the output
# agrees with the original on graft's evaluator (NhwcConv included), ONNX
# Runtime's CPU provider refuses it for the reason we expect (it has no
# NhwcConv kernel: the output is for providers that have one, such as CUDA),
# and with each NhwcConv written back as Transpose+Conv+Transpose
# (build/nhwc-unvendor) ORT loads it and agrees with the original: the rest
# of the conversion is checked there.  Prints the Transposes before/after per
# model; exits 1 on a failure.
#
# usage: tests/nhwc_gate.sh ORT_TOOLS [CORPUS]
set -euo pipefail
ort=${1:?usage: tests/nhwc_gate.sh ORT_TOOLS [CORPUS]}
corpus=${2:-${GRAFT_CORPUS:-../shared/corpus}}
graft=${GRAFT:-build/graft}
unvendor=${UNVENDOR:-build/nhwc-unvendor}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() { "$graft" info "$1" | awk -v op="$2" '$1 == op { print $2; f = 1 } END { if (!f) print 0 }'; }

fail=0
printf '%-22s %6s %6s %9s %9s  %s\n' model Conv NhwcConv "T before" "T after" "ORT (unvendored)"
for name in resnet18 mobilenet_v2 small_cnn squeezenet1_1 densenet121 shufflenet_v2_x1_0 mnasnet0_5 \
            mobilenet_v3_small; do
  m=$corpus/torch/$name/raw/model.onnx
  [ -f "$m" ] || { echo "skip $name: no $m"; continue; }
  out=$tmp/$name.onnx
  "$graft" optimize "$m" -o "$out" --layout nhwc --allow-vendor-ops > /dev/null 2> "$tmp/log" ||
    { echo "FAIL $name: graft optimize: $(tail -1 "$tmp/log")"; fail=1; continue; }
  "$graft" compare "$m" "$out" --runs 2 > "$tmp/cmp" 2>&1 ||
    { echo "FAIL $name: graft compare: $(tail -1 "$tmp/cmp")"; fail=1; continue; }
  conv=$(count "$m" Conv) nhwc=$(count "$out" com.microsoft.NhwcConv)
  [ "$conv" = "$nhwc" ] && [ "$(count "$out" Conv)" = 0 ] ||
    { echo "FAIL $name: $conv Convs, $nhwc NhwcConvs after"; fail=1; }
  if node "$ort/ort-run.mjs" "$out" > "$tmp/run" 2>&1; then
    echo "note $name: ONNX Runtime's CPU provider ran NhwcConv (now it has a kernel: compare directly)"
  elif ! grep -q "Could not find an implementation for NhwcConv" "$tmp/run"; then
    echo "FAIL $name: ORT refuses the output for another reason: $(tail -1 "$tmp/run")"; fail=1
  fi
  "$unvendor" "$out" "$tmp/u.onnx" 2> /dev/null
  if node "$ort/ort-compare.mjs" "$m" "$tmp/u.onnx" --runs 2 > "$tmp/ort" 2>&1; then verdict=agree
  else verdict="DIFFER: $(tail -1 "$tmp/ort")"; fail=1; fi
  printf '%-22s %6s %6s %9s %9s  %s\n' "$name" "$conv" "$nhwc" "$(count "$m" Transpose)" \
         "$(count "$out" Transpose)" "$verdict"
done
exit $fail
