#!/usr/bin/env bash
# tests/attention_ort.sh - graft's Attention kernel (opset 23) against ONNX
# Runtime: one small model per feature (masks bool and float of ranks 2-4,
# is_causal, past key/value, grouped heads, softcap, the 3-D form, float16,
# float64, qk_matmul_output modes), each run on graft's evaluator and in ORT
# on the same inputs.  (A mask shorter than the keys, which ONNX pads with
# masked positions, ORT 1.30 refuses; check_eval tests it.)  Usage: tests/attention_ort.sh ORT_TOOLS_DIR
set -euo pipefail
ORT=${1:?usage: attention_ort.sh ORT_TOOLS_DIR}
GRAFT=${GRAFT:-build/graft}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# case NAME INPUTS OUTPUTS ATTRS ARGS [OUTS]
case_() {
	local name=$1 ins=$2 outs=$3 attrs=$4 args=$5 lhs=${6:-y}
	local f="$tmp/$name"
	printf '<ir_version: 10, opset_import: ["" : 23]>\ng (%s) => (%s) {\n  %s = Attention %s (%s)\n}\n' \
		"$ins" "$outs" "$lhs" "$attrs" "$args" > "$f.onnxtxt"
	"$GRAFT" roundtrip "$f.onnxtxt" -o "$f.onnx"
	node "$ORT/ort-run.mjs" "$f.onnx" --seed 3 --out "$f.ort" > /dev/null
	if "$GRAFT" run "$f.onnx" --inputs "$f.ort" --expect "$f.ort" > "$f.log" 2>&1; then
		pass=$((pass + 1))
	else
		echo "attention_ort: $name: graft and ONNX Runtime differ"; cat "$f.log"; fail=$((fail + 1))
	fi
}

Q4='float[2,2,5,4] q, float[2,2,6,4] k, float[2,2,6,3] v'
Y4='float[2,2,5,3] y'
case_ plain "$Q4" "$Y4" '' 'q, k, v'
case_ scale "$Q4" "$Y4" '<scale = 0.3>' 'q, k, v'
case_ float_mask "$Q4, float[1,2,5,6] m" "$Y4" '' 'q, k, v, m'
case_ mask_2d "$Q4, float[5,6] m" "$Y4" '' 'q, k, v, m'
case_ mask_3d_heads 'float[1,2,5,4] q, float[1,2,6,4] k, float[1,2,6,3] v, float[2,5,6] m' 'float[1,2,5,3] y' '' 'q, k, v, m'
case_ mask_3d_batch 'float[2,1,5,4] q, float[2,1,6,4] k, float[2,1,6,3] v, float[1,5,6] m' 'float[2,1,5,3] y' '' 'q, k, v, m'
case_ bool_mask "$Q4, bool[2,1,5,6] m" "$Y4" '' 'q, k, v, m'
case_ causal 'float[1,2,6,4] q, float[1,2,6,4] k, float[1,2,6,3] v' 'float[1,2,6,3] y' '<is_causal = 1>' 'q, k, v'
case_ causal_mask 'float[1,2,6,4] q, float[1,2,6,4] k, float[1,2,6,3] v, float[1,1,6,6] m' 'float[1,2,6,3] y' '<is_causal = 1>' 'q, k, v, m'
case_ past 'float[1,2,3,4] q, float[1,2,3,4] k, float[1,2,3,3] v, float[1,2,4,4] pk, float[1,2,4,3] pv' \
	'float[1,2,3,3] y, float[1,2,7,4] ok, float[1,2,7,3] ov' '' 'q, k, v, , pk, pv' 'y, ok, ov'
case_ past_causal 'float[1,2,3,4] q, float[1,2,3,4] k, float[1,2,3,3] v, float[1,2,4,4] pk, float[1,2,4,3] pv' \
	'float[1,2,3,3] y, float[1,2,7,4] ok, float[1,2,7,3] ov' '<is_causal = 1>' 'q, k, v, , pk, pv' 'y, ok, ov'
case_ gqa 'float[1,4,5,4] q, float[1,2,6,4] k, float[1,2,6,3] v' 'float[1,4,5,3] y' '' 'q, k, v'
case_ softcap "$Q4" "$Y4" '<softcap = 0.5>' 'q, k, v'
case_ three_d 'float[2,5,8] q, float[2,6,8] k, float[2,6,6] v' 'float[2,5,6] y' '<q_num_heads = 2, kv_num_heads = 2>' 'q, k, v'
case_ three_d_gqa 'float[2,5,8] q, float[2,6,4] k, float[2,6,6] v' 'float[2,5,12] y' '<q_num_heads = 4, kv_num_heads = 2>' 'q, k, v'
case_ float16 'float16[2,2,5,4] q, float16[2,2,6,4] k, float16[2,2,6,3] v, float16[1,1,5,6] m' 'float16[2,2,5,3] y' '' 'q, k, v, m'
case_ float64 'double[2,2,5,4] q, double[2,2,6,4] k, double[2,2,6,3] v' 'double[2,2,5,3] y' '' 'q, k, v'
for mode in 0 1 2 3; do
	case_ "qk_mode$mode" "$Q4, float[1,2,5,6] m" "$Y4, float[2,2,5,6] qk" "<qk_matmul_output_mode = $mode>" 'q, k, v, m' 'y, , , qk'
done
echo "attention_ort: $pass of $((pass + fail)) cases agree with ONNX Runtime"
[ "$fail" = 0 ]
