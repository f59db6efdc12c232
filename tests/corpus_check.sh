#!/usr/bin/env bash
# corpus_check.sh - whole-model checks on ../shared/corpus (run by .ci/run
# when the corpus exists):
#   1. graft run on every torch model reproduces the shipped outputs;
#   2. ONNX Runtime, fed the same inputs, agrees with graft's outputs;
#   3. graft shapes agrees with python3-onnx's shape inference;
#   5. so does graft optimize's (torch models);
#   4. graft fold's output agrees with the original under graft compare and
#      under ONNX Runtime (ort-compare.mjs), for torch and light models;
#   6. graft optimize gives the same bytes with graftc's decision trees and
#      with the rules tried in turn (--match-each), on every corpus model.
# Usage: tests/corpus_check.sh [CORPUS] [ORT_TOOLS]
set -euo pipefail
corpus=${1:-../shared/corpus}
ort=${2:-../shared/tools/ort}
graft=${GRAFT:-build/graft}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
have_ort=0
if command -v node >/dev/null && [ -d "$ort" ]; then
  if [ ! -d "$ort/node_modules/onnxruntime-node" ]; then
    cp -r "$ort" "$tmp/ort" && ort="$tmp/ort" && bash "$ort/install.sh" >/dev/null 2>&1 || true
  fi
  [ -d "$ort/node_modules/onnxruntime-node" ] && have_ort=1
fi
ortmsg=""
[ $have_ort = 1 ] && ortmsg=" and ONNX Runtime" || echo "note: ONNX Runtime tools not available; ORT checks skipped"

# shape inference: every value of every static-shape model gets a shape, equal
# to python3-onnx's wherever python has one; the dyn models keep their batch
static=$(ls "$corpus"/torch/*/{raw,eval,raw_opset17,raw_injected}/model.onnx 2>/dev/null)
if ! /usr/bin/python3 tests/shape_oracle.py --graft $graft --static $static > "$tmp/log" 2>&1; then
  echo "FAIL shape inference vs python3-onnx (static models)"; grep -v " 0 mismatch, 0 missing" "$tmp/log"; fail=1
else
  tail -1 "$tmp/log"
fi
if ! /usr/bin/python3 tests/shape_oracle.py --graft $graft "$corpus"/torch/*/dyn/model.onnx > "$tmp/log" 2>&1; then
  echo "FAIL shape inference vs python3-onnx (dyn models)"; cat "$tmp/log"; fail=1
fi

# generated inputs: graft run and ort-run.mjs feed identical numbers for a seed
if [ $have_ort = 1 ]; then
  for model in "$corpus"/torch/small_cnn/raw/model.onnx "$corpus"/torch/bert_h128_l2/dyn/model.onnx; do
    rm -rf "$tmp/gi" "$tmp/oi"
    node "$ort/ort-run.mjs" "$model" --seed 7 --out "$tmp/oi" > /dev/null
    $graft run "$model" --seed 7 -o "$tmp/gi" > /dev/null
    if ! /usr/bin/python3 -c 'import sys, onnx, numpy as np; from onnx import numpy_helper as nh
a, b = (nh.to_array(onnx.load_tensor(p)) for p in sys.argv[1:])
sys.exit(0 if a.dtype == b.dtype and np.array_equal(a, b) else 1)' "$tmp/oi/input_0.pb" "$tmp/gi/input_0.pb"; then
      echo "FAIL generated inputs differ from ort-run.mjs's: $model"; fail=1
    fi
  done
fi

n=0
for model in "$corpus"/torch/*/*/model.onnx; do
  dir=$(dirname "$model")
  for set in "$dir"/test_data_set_*; do
    out="$tmp/graft_out"
    rm -rf "$out"
    if ! $graft run "$model" --inputs "$set" --expect "$set" -o "$out" > "$tmp/log" 2>&1; then
      echo "FAIL graft run vs shipped outputs: $set"; cat "$tmp/log"; fail=1; continue
    fi
    if [ $have_ort = 1 ] && ! node "$ort/ort-run.mjs" "$model" --inputs "$set" --expect "$out" > "$tmp/log" 2>&1; then
      echo "FAIL ORT vs graft run: $set"; cat "$tmp/log"; fail=1
    fi
  done
  n=$((n + 1))
done
echo "corpus: $n torch models: graft run matches shipped outputs$ortmsg"

m=0
for model in "$corpus"/torch/*/*/model.onnx "$corpus"/onnx-backend/light/*.onnx; do
  folded="$tmp/folded.onnx"
  if ! $graft fold "$model" -o "$folded" 2> "$tmp/log"; then
    echo "FAIL graft fold: $model"; cat "$tmp/log"; fail=1; continue
  fi
  if ! $graft compare "$model" "$folded" --runs 2 > "$tmp/log" 2>&1; then
    echo "FAIL graft compare after fold: $model"; cat "$tmp/log"; fail=1
  fi
  if [ $have_ort = 1 ] && ! node "$ort/ort-compare.mjs" "$model" "$folded" --runs 2 > "$tmp/log" 2>&1; then
    echo "FAIL ort-compare after fold: $model"; cat "$tmp/log"; fail=1
  fi
  m=$((m + 1))
done
echo "corpus: $m models folded; graft compare${ortmsg:+ and ort-compare} agree"

k=0
for model in "$corpus"/torch/*/*/model.onnx; do
  opt="$tmp/optimized.onnx"
  if ! $graft optimize "$model" -o "$opt" --report "$tmp/report.json" 2> "$tmp/log"; then
    echo "FAIL graft optimize: $model"; cat "$tmp/log"; fail=1; continue
  fi
  if ! $graft compare "$model" "$opt" --runs 2 > "$tmp/log" 2>&1; then
    echo "FAIL graft compare after optimize: $model"; cat "$tmp/log"; fail=1
  fi
  if [ $have_ort = 1 ] && ! node "$ort/ort-compare.mjs" "$model" "$opt" --runs 2 > "$tmp/log" 2>&1; then
    echo "FAIL ort-compare after optimize: $model"; cat "$tmp/log"; fail=1
  fi
  k=$((k + 1))
done
echo "corpus: $k models optimized; graft compare${ortmsg:+ and ort-compare} agree"

# graftc's decision trees do exactly what trying the rules in turn does:
# the same bytes out, on every corpus model
t=0
while IFS=$'\t' read -r path _; do
  model="$corpus/$path"
  $graft optimize "$model" -o "$tmp/tree.onnx" 2>/dev/null && r1=0 || r1=$?
  $graft optimize "$model" -o "$tmp/each.onnx" --match-each 2>/dev/null && r2=0 || r2=$?
  if [ $r1 != $r2 ] || ! cmp -s "$tmp/tree.onnx" "$tmp/each.onnx"; then
    echo "FAIL decision tree vs --match-each: $model (exit $r1 vs $r2)"; fail=1
  fi
  t=$((t + 1))
done < <(tail -n +2 "$corpus/MANIFEST.tsv")
echo "corpus: $t models give the same bytes with the decision trees and with the rules in turn"
exit $fail
