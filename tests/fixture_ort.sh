#!/usr/bin/env bash
# tests/fixture_ort.sh - the exported model fixtures of one directory
# (tests/llama/, tests/gpt2/, tests/vit/) through graft optimize at four
# configurations (default, --target-opset 23, --allow-vendor-ops, both),
# each output checked in ONNX Runtime on each set of dims (token ids within
# the fixtures' 64-word vocabulary; float16 at ort_gate.mjs's float16
# tolerance), its node count checked against DIR/expected.txt, and against
# ONNX Runtime's own extended level where a --bar says so.  The scripts of
# those directories call it (part of make ort-gate).
#   bash tests/fixture_ort.sh ORT_TOOLS DIR [--dims "n=1 m=2"]... [--bar CONFIG:PERCENT]...
#   (GRAFT=path/to/graft; GRAFT_UPDATE_EXPECTED=1 rewrites DIR/expected.txt)
# --bar vendor23:90: that configuration must end with at most 90% of the
# nodes ORT's extended level leaves.
set -euo pipefail
ort=${1:?usage: fixture_ort.sh ORT_TOOLS DIR [--dims D]... [--bar CONFIG:PERCENT]...}
dir=${2:?usage: fixture_ort.sh ORT_TOOLS DIR [--dims D]... [--bar CONFIG:PERCENT]...}
shift 2
dimsets=() bars=()
while [ $# -gt 0 ]; do
  case $1 in
    --dims) dimsets+=("$2"); shift 2 ;;
    --bar) bars+=("$2"); shift 2 ;;
    *) echo "fixture_ort.sh: unknown argument $1"; exit 2 ;;
  esac
done
[ ${#dimsets[@]} -gt 0 ] || dimsets=("")
graft=${GRAFT:-build/graft}
set_name=$(basename "$dir")
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
configs=("default:" "opset23:--target-opset 23" "vendor:--allow-vendor-ops" "vendor23:--allow-vendor-ops --target-opset 23")
fail=0
: > "$t/got.txt"
for f in "$dir"/*.onnx; do
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
    for dims in "${dimsets[@]}"; do
      args=(); for d in $dims; do args+=(--dim "$d"); done
      if ! node "$ort/ort-compare.mjs" "$f" "$t/g.onnx" --int-range 0:64 "${args[@]}" "${tol[@]}" > "$t/cmp" 2>&1; then
        echo "FAIL $name $cname ($dims): ONNX Runtime disagrees"; tail -3 "$t/cmp"; fail=1
      fi
    done
    for b in "${bars[@]}"; do
      [ "${b%%:*}" = "$cname" ] || continue
      pct=${b#*:}
      [ $((n * 100)) -le $((ext * pct)) ] ||
        { echo "FAIL $name: $cname ends at $n nodes, more than $pct% of ORT extended's $ext"; fail=1; }
    done
  done
  echo "$name: ORT extended $ext; graft $(grep "^$name " "$t/got.txt" | awk '{printf "%s %s  ", $2, $3}')"
done
if [ "${GRAFT_UPDATE_EXPECTED:-}" = 1 ]; then
  cp "$t/got.txt" "$dir/expected.txt"
elif ! diff -u "$dir/expected.txt" "$t/got.txt"; then
  echo "FAIL node counts differ from $dir/expected.txt (GRAFT_UPDATE_EXPECTED=1 rewrites it)"; fail=1
fi
[ $fail = 0 ] && echo "$set_name: all agree in ONNX Runtime, node counts as expected"
exit $fail
