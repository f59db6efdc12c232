#!/usr/bin/env bash
# tests/bench/corpus_pass.sh - one `graft optimize` process per corpus model,
# in turn: the "corpus pass" BENCHMARKS.md times two builds against each other
# with farm-bench (issue 28 against 7d27ce3), e.g.
#   farm-bench -n 10 --timeout 900 --vs 'tests/bench/corpus_pass.sh /tmp/graft-old' -- tests/bench/corpus_pass.sh build/graft
#   bash tests/bench/corpus_pass.sh GRAFT [CORPUS]
set -euo pipefail
graft=$1
corpus=${2:-$(dirname "$0")/../../../shared/corpus}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
find -L "$corpus" -name '*.onnx' | sort | while read -r f; do
  "$graft" optimize "$f" -o "$out/o.onnx" > /dev/null 2>&1 || true
done
