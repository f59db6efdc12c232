#!/usr/bin/env bash
# tests/embed_layer_norm_ort.sh - ONNX Runtime's EmbedLayerNormFusion test
# graphs (rebuilt by tests/embed_layer_norm_fixtures.py) through graft
# optimize --allow-vendor-ops: which formats fuse into
# com.microsoft.EmbedLayerNormalization, and whether ONNX Runtime agrees with
# the originals on them (ids drawn in 0..1, inside every table).  Issue 27's
# measure of the peer suite; not part of make test.
#   bash tests/embed_layer_norm_ort.sh [GRAFT] [ORT_TOOLS]
set -euo pipefail
graft=${1:-build/graft}
ort=${2:-build/ort-tools}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
/usr/bin/python3 "$(dirname "$0")/embed_layer_norm_fixtures.py" "$t" > /dev/null
fused=0 agree=0 n=0
for f in "$t"/*.onnx; do
  name=$(basename "$f" .onnx)
  n=$((n + 1))
  "$graft" optimize "$f" -o "$t/$name.opt" --allow-vendor-ops > /dev/null 2>&1
  if "$graft" print "$t/$name.opt" | grep -q 'EmbedLayerNormalization'; then
    fused=$((fused + 1))
    if node "$ort/ort-compare.mjs" "$f" "$t/$name.opt" --int-range 0:2 --runs 3 > "$t/$name.cmp" 2>&1; then
      agree=$((agree + 1)); echo "fused, ORT agrees: $name"
    else
      echo "fused, ORT DIFFERS: $name"; tail -3 "$t/$name.cmp"
    fi
  else
    echo "not fused: $name"
  fi
done
echo "$fused of $n graphs fused, $agree agree in ONNX Runtime"
