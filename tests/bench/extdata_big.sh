#!/usr/bin/env bash
# extdata_big.sh - graft optimize on a ~400 MB model with external data (issue 29):
# 24 MatMuls by 2048x2048 float weights in model.data, every other one read through a
# Transpose (folded: 12 new 16 MiB tensors), bias Adds and Tanhs.  Runs cp of the two
# files, graft optimize (and BASE_GRAFT's, the "before", if set) ROUNDS times in
# alternation and prints the median wall time and peak RSS (/usr/bin/time) of each, then
# checks the output with ONNX Runtime if build/ort-tools is there.  Not a test: figures
# for BENCHMARKS.md ("External data at 400 MB").
#
# usage: tests/bench/extdata_big.sh [ROUNDS]   (env GRAFT, BASE_GRAFT)
set -euo pipefail
rounds=${1:-5}
graft=${GRAFT:-build/graft}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/in" "$tmp/out" "$tmp/cp"
/usr/bin/python3 - "$tmp/in" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
d, n, k = sys.argv[1], 2048, 24
rng = np.random.default_rng(29)
inits, nodes, x = [], [], "x"
for i in range(k):
    inits.append(numpy_helper.from_array(rng.standard_normal((n, n), dtype=np.float32) / np.float32(np.sqrt(n)), f"w{i}"))
    inits.append(numpy_helper.from_array(rng.standard_normal((n,), dtype=np.float32) * np.float32(0.1), f"b{i}"))
    w = f"w{i}"
    if i % 2:
        nodes.append(helper.make_node("Transpose", [w], [f"wT{i}"], perm=[1, 0]))
        w = f"wT{i}"
    nodes += [helper.make_node("MatMul", [x, w], [f"h{i}"]), helper.make_node("Add", [f"h{i}", f"b{i}"], [f"a{i}"]),
              helper.make_node("Tanh", [f"a{i}"], [f"r{i}"])]
    x = f"r{i}"
g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, n])],
                      [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4, n])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save_model(m, f"{d}/model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                location="model.data", size_threshold=1024)
PY
echo "model: $(stat -c %s "$tmp/in/model.data") bytes of external data"
# one run: "SECONDS KB" of the command
measure() { /usr/bin/time -f "%e %M" -o "$tmp/t" "$@" > /dev/null 2>&1; cat "$tmp/t"; }
declare -A t r
names=(cp graft)
[ -n "${BASE_GRAFT:-}" ] && names+=(before)
for ((i = 0; i < rounds; i++)); do
  for name in "${names[@]}"; do
    rm -f "$tmp/out/"* "$tmp/cp/"*
    case $name in
      cp) res=$(measure cp "$tmp/in/model.onnx" "$tmp/in/model.data" "$tmp/cp/") ;;
      graft) res=$(measure "$graft" optimize "$tmp/in/model.onnx" -o "$tmp/out/opt.onnx") ;;
      before) res=$(measure "$BASE_GRAFT" optimize "$tmp/in/model.onnx" -o "$tmp/out/opt.onnx") ;;
    esac
    t[$name]+="${res% *} "; r[$name]+="${res#* } "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for name in "${names[@]}"; do
  echo "$name: median $(echo "${t[$name]}" | median) s, peak RSS $(( $(echo "${r[$name]}" | median) / 1024 )) MB" \
       "(runs: ${t[$name]% })"
done
"$graft" optimize "$tmp/in/model.onnx" -o "$tmp/out/opt.onnx" 2>&1 | head -1
ls -l "$tmp/out" | tail -n +2
if [ -f build/ort-tools/ort-compare.mjs ]; then
  node build/ort-tools/ort-compare.mjs "$tmp/in/model.onnx" "$tmp/out/opt.onnx" --runs 1 | tail -1
fi
