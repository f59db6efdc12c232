#!/usr/bin/env bash
# extdata_ort.sh - issue 24's everyday case at size: a model of over 100 MB
# whose weights are in external data (model.onnx + model.data), optimized
# into its own folder.  The input's two files must be byte-identical after,
# the output's data must be OUT.data beside it, nothing else may appear in
# the folder, and ONNX Runtime must compute the same outputs from both.
# Part of make ort-gate.
#
# usage: tests/extdata_ort.sh ORT_TOOLS
set -euo pipefail
ort=${1:?usage: tests/extdata_ort.sh ORT_TOOLS}
graft=${GRAFT:-build/graft}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 3 x 32 MiB of weights plus folded ones: MatMul by W1, a Transpose of a
# constant (folded into a new 32 MiB tensor), a Conv-free BN-like scale
# (Mul, Add by constants), an Identity and a Dropout to remove.
/usr/bin/python3 - "$tmp" <<'EOF'
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
d = sys.argv[1]
rng = np.random.default_rng(24)
n, k = 1024, 8192
w1 = numpy_helper.from_array(rng.standard_normal((n, k), dtype=np.float32) * 0.02, "w1")
w2t = numpy_helper.from_array(rng.standard_normal((n, k), dtype=np.float32) * 0.02, "w2t")
w3 = numpy_helper.from_array(rng.standard_normal((n, k), dtype=np.float32) * 0.02, "w3")
s = numpy_helper.from_array(rng.uniform(0.5, 1.5, (k,)).astype(np.float32), "s")
b = numpy_helper.from_array(rng.standard_normal((k,), dtype=np.float32), "b")
nodes = [
    helper.make_node("MatMul", ["x", "w1"], ["h1"]),
    helper.make_node("Mul", ["h1", "s"], ["h2"]),
    helper.make_node("Add", ["h2", "b"], ["h3"]),
    helper.make_node("Relu", ["h3"], ["h4"]),
    helper.make_node("Identity", ["h4"], ["h5"]),
    helper.make_node("Transpose", ["w2t"], ["w2"], perm=[1, 0]),
    helper.make_node("MatMul", ["h5", "w2"], ["h6"]),
    helper.make_node("Dropout", ["h6"], ["h7"]),
    helper.make_node("MatMul", ["h7", "w3"], ["y"]),
]
g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, n])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, k])], [w1, w2t, w3, s, b])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save_model(m, f"{d}/model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                location="model.data", size_threshold=1024)
EOF
size=$(stat -c %s "$tmp/model.data")
[ "$size" -ge $((100 * 1000 * 1000)) ] || { echo "extdata_ort: model.data is only $size bytes"; exit 1; }
before=$(cd "$tmp" && sha256sum model.onnx model.data)

"$graft" optimize "$tmp/model.onnx" -o "$tmp/model.opt.onnx" 2> "$tmp/log" || { cat "$tmp/log"; exit 1; }
after=$(cd "$tmp" && sha256sum model.onnx model.data)
[ "$before" = "$after" ] || { echo "extdata_ort: the input model or its data changed"; echo "$before"; echo "$after"; exit 1; }
files=$(cd "$tmp" && ls -A | grep -v '^log$' | tr '\n' ' ')
[ "$files" = "model.data model.onnx model.opt.onnx model.opt.onnx.data " ] ||
  { echo "extdata_ort: unexpected files in the folder: $files"; exit 1; }
# the output's data holds what it refers to: w1, the folded w2, w3, s and b;
# the .onnx only the graph
out_size=$(stat -c %s "$tmp/model.opt.onnx.data")
[ "$out_size" -eq $((3 * 1024 * 8192 * 4 + 2 * 8192 * 4)) ] || { echo "extdata_ort: model.opt.onnx.data has $out_size bytes"; exit 1; }
[ "$(stat -c %s "$tmp/model.opt.onnx")" -lt 65536 ] || { echo "extdata_ort: tensors left inline in model.opt.onnx"; exit 1; }
echo "extdata_ort: model.data $size bytes, model.opt.onnx.data $out_size bytes; input files unchanged"
# ORT runs the input as it is now (after graft) against the output
node "$ort/ort-compare.mjs" "$tmp/model.onnx" "$tmp/model.opt.onnx" --runs 2 > "$tmp/cmp" 2>&1 ||
  { cat "$tmp/cmp"; echo "extdata_ort: ONNX Runtime finds the outputs differ"; exit 1; }
echo "extdata_ort: ONNX Runtime agrees on the original and the optimized model"
