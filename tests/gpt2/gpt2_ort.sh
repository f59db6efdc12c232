#!/usr/bin/env bash
# tests/gpt2/gpt2_ort.sh - the small GPT-2 decoders of tests/gpt2/ (the
# causal mask computed in the graph and applied by masked_fill; static
# [1, 8] and dynamic batch/sequence; regenerate with export_gpt2.py) through
# tests/fixture_ort.sh: graft optimize at four configurations, each output
# checked in ONNX Runtime (the dynamic model on two sets of dims), the node
# counts against tests/gpt2/expected.txt and against ONNX Runtime's own
# extended level: the vendor ops (MultiHeadAttention) must end with at least
# 10% fewer nodes.  Part of make ort-gate.
#   bash tests/gpt2/gpt2_ort.sh [ORT_TOOLS]     (GRAFT=path/to/graft)
#   GRAFT_UPDATE_EXPECTED=1 ... rewrites expected.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../fixture_ort.sh" "${1:-build/ort-tools}" "$here" \
  --dims "batch=1 seq=8" --dims "batch=2 seq=5" --bar vendor:90
