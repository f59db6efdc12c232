#!/usr/bin/env bash
# tests/llama/llama_ort.sh - the LLaMA-style decoders of tests/llama/ (prefill
# and one decode step with a KV cache, dynamic batch/sequence/past, float32
# and float16; regenerate with export_llama.py) through graft optimize at
# four configurations, each output checked in ONNX Runtime on two sets of
# dims (token ids within the 64-word vocabulary;
# float16 at ort_gate.mjs's float16 tolerance), its node count checked
# against tests/llama/expected.txt, and against ONNX Runtime's own extended
# level: --target-opset 23 must end with no more nodes, the vendor ops with
# --target-opset 23 at least 10% fewer (issue 27's measure).  Part of make
# ort-gate.
#   bash tests/llama/llama_ort.sh [ORT_TOOLS]     (GRAFT=path/to/graft)
#   GRAFT_UPDATE_EXPECTED=1 ... rewrites expected.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
graft=${GRAFT:-build/graft}
ort=${1:-build/ort-tools}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
configs=("default:" "opset23:--target-opset 23" "vendor:--allow-vendor-ops" "vendor23:--allow-vendor-ops --target-opset 23")
fail=0
: > "$t/got.txt"
for f in "$here"/llama_*.onnx; do
  name=$(basename "$f" .onnx)
  tol=(); case $name in *fp16*) tol=(--rtol 1e-2 --atol 1e-3) ;; esac
  ext=$(node "$ort/ort-optimize.mjs" "$f" "$t/ort.onnx" --level extended --json |
        /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['after']['nodes'])")
  for c in "${configs[@]}"; do
    cname=${c%%:*}; flags=${c#*:}
    # shellcheck disable=SC2086
    out=$("$graft" optimize "$f" -o "$t/g.onnx" $flags 2>&1) || { echo "FAIL $name $cname: graft: $out"; fail=1; continue; }
    n=$(grep -o '[0-9]* nodes; fixpoint' <<< "$out" | cut -d' ' -f1)
    echo "$name $cname $n" >> "$t/got.txt"
    for dims in "batch=1 seq=5 past=3" "batch=2 seq=1 past=6"; do
      args=(); for d in $dims; do args+=(--dim "$d"); done
      if ! node "$ort/ort-compare.mjs" "$f" "$t/g.onnx" --int-range 0:64 "${args[@]}" "${tol[@]}" > "$t/cmp" 2>&1; then
        echo "FAIL $name $cname ($dims): ONNX Runtime disagrees"; tail -3 "$t/cmp"; fail=1
      fi
    done
    case $cname in
      opset23) [ "$n" -le "$ext" ] || { echo "FAIL $name: --target-opset 23 ends at $n nodes, ORT extended at $ext"; fail=1; } ;;
      vendor23) [ $((n * 10)) -le $((ext * 9)) ] || { echo "FAIL $name: vendor ops at 23 end at $n nodes, not 10% under ORT extended's $ext"; fail=1; } ;;
    esac
  done
  echo "$name: ORT extended $ext; graft $(grep "^$name " "$t/got.txt" | awk '{printf "%s %s  ", $2, $3}')"
done
if [ "${GRAFT_UPDATE_EXPECTED:-}" = 1 ]; then
  cp "$t/got.txt" "$here/expected.txt"
elif ! diff -u "$here/expected.txt" "$t/got.txt"; then
  echo "FAIL node counts differ from tests/llama/expected.txt (GRAFT_UPDATE_EXPECTED=1 rewrites it)"; fail=1
fi
[ $fail = 0 ] && echo "llama: all agree in ONNX Runtime, node counts as expected"
exit $fail
