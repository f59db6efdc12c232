#!/usr/bin/env bash
# tests/llama/llama_ort.sh - the LLaMA-style decoders of tests/llama/ (prefill
# and one decode step with a KV cache, dynamic batch/sequence/past, float32
# and float16; regenerate with export_llama.py) through tests/fixture_ort.sh:
# graft optimize at four configurations, each output checked in ONNX Runtime
# on two sets of dims, the node counts against tests/llama/expected.txt and
# against ONNX Runtime's own extended level: --target-opset 23 must end with
# no more nodes, the vendor ops with --target-opset 23 at least 10% fewer
# (issue 27's measure).  Part of make ort-gate.
#   bash tests/llama/llama_ort.sh [ORT_TOOLS]     (GRAFT=path/to/graft)
#   GRAFT_UPDATE_EXPECTED=1 ... rewrites expected.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../fixture_ort.sh" "${1:-build/ort-tools}" "$here" \
  --dims "batch=1 seq=5 past=3" --dims "batch=2 seq=1 past=6" --bar opset23:100 --bar vendor23:90
