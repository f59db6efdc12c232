#!/usr/bin/env bash
# interp_corpus.sh CORPUS - the interpreted rule library writes what the compiled
# one writes: for every model of CORPUS (../shared/corpus), `graft optimize M`
# and `graft optimize M --no-library --rules rules/*/*.rules` must give
# byte-identical files (issue 10).  Run from the repository root after make.
set -euo pipefail
corpus=${1:?usage: tests/interp_corpus.sh CORPUS}
graft=build/graft
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 bad=0
while IFS= read -r -d '' m; do
  "$graft" optimize "$m" -o "$tmp/c.onnx" > /dev/null 2>&1 || { echo "compiled: optimize failed: $m"; bad=$((bad + 1)); continue; }
  "$graft" optimize "$m" -o "$tmp/i.onnx" --no-library --rules rules/*/*.rules > /dev/null 2>&1 \
    || { echo "interpreted: optimize failed: $m"; bad=$((bad + 1)); continue; }
  cmp -s "$tmp/c.onnx" "$tmp/i.onnx" || { echo "differ: $m"; bad=$((bad + 1)); }
  n=$((n + 1))
done < <(find -L "$corpus" -name '*.onnx' -print0 | sort -z)
echo "interpreted vs compiled: $n models, $bad differ"
[ "$bad" -eq 0 ]
