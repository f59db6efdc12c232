#!/usr/bin/env bash
# tests/vit/vit_ort.sh - the small ViT encoders of tests/vit/ (torchvision's
# blocks: nn.MultiheadAttention working sequence-first; static batch 1 and a
# dynamic batch; regenerate with export_vit.py) through tests/fixture_ort.sh:
# graft optimize at four configurations, each output checked in ONNX
# Runtime (the dynamic model on batches 1 and 3), the node counts against
# tests/vit/expected.txt and against ONNX Runtime's own extended level: the
# vendor ops (MultiHeadAttention) must end with at least 10% fewer nodes.
# Part of make ort-gate.
#   bash tests/vit/vit_ort.sh [ORT_TOOLS]     (GRAFT=path/to/graft)
#   GRAFT_UPDATE_EXPECTED=1 ... rewrites expected.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../fixture_ort.sh" "${1:-build/ort-tools}" "$here" \
  --dims "batch=1" --dims "batch=3" --bar vendor:90
