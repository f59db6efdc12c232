#!/usr/bin/env bash
# ort_gate.sh - the CI gate over everything graft writes: optimize every model
# of a set, load each output in ONNX Runtime wherever the original loads, and
# compare outputs on the models' test-data inputs (tests/ort_gate.mjs).  Models
# onnxruntime-node cannot feed (sequence, optional, map inputs or outputs) are
# run on graft's evaluator instead, against their expected outputs, and so
# are the models whose originals ORT refuses, wherever graft's evaluator
# reproduces the original's expected outputs.
# The summary is compared with tests/ort_gate.expected, so a model skipped
# silently, or one more refused, fails the gate.
#
# usage: tests/ort_gate.sh SET ORT_TOOLS [vendor]
#   SET: conformance (libonnx-testdata: node, simple, pytorch-converted,
#        pytorch-operator), fixtures (tests/data/control) or corpus (the
#        shared corpus, ../shared/corpus or $GRAFT_CORPUS)
#   vendor: optimize with --allow-vendor-ops (ONNX Runtime's fusions, as
#        com.microsoft ops); the summary's label is then SET+vendor
set -euo pipefail
set_name=${1:?usage: tests/ort_gate.sh conformance|fixtures|corpus ORT_TOOLS [vendor]}
ort=${2:?usage: tests/ort_gate.sh SET ORT_TOOLS [vendor]}
flags=() label=$set_name
if [ "${3:-}" = vendor ]; then flags=(--allow-vendor-ops); label=$set_name+vendor; fi
graft=${GRAFT:-build/graft}
corpus=${GRAFT_CORPUS:-../shared/corpus}
testdata=/usr/include/onnx/backend/test/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# NAME<TAB>MODEL<TAB>SET_DIR... for every model of the set
list_models() {
  local root
  case $set_name in
    conformance)
      for root in "$testdata"/{node,simple,pytorch-converted,pytorch-operator}; do
        for m in "$root"/*/model.onnx; do printf '%s\t%s\n' "${m#"$testdata"/}" "$m"; done
      done ;;
    fixtures)
      for m in tests/data/control/*/model.onnx; do printf '%s\t%s\n' "${m#tests/data/control/}" "$m"; done ;;
    corpus)
      find -L "$corpus" -name '*.onnx' | LC_ALL=C sort | while read -r m; do printf '%s\t%s\n' "${m#"$corpus"/}" "$m"; done ;;
    *) echo "unknown set '$set_name'" >&2; exit 2 ;;
  esac
}

fail=0
: > "$tmp/list"
i=0
while IFS=$'\t' read -r name model; do
  i=$((i + 1))
  out="$tmp/opt/$i.onnx"
  mkdir -p "$tmp/opt"
  rc=0
  $graft optimize "$model" ${flags[@]+"${flags[@]}"} -o "$out" > /dev/null 2> "$tmp/log" || rc=$?
  if [ $rc != 0 ]; then
    echo "FAIL $name: graft optimize exited $rc: $(head -1 "$tmp/log")"; fail=1; continue
  fi
  printf '%s\t%s\t%s' "$name" "$model" "$out" >> "$tmp/list"
  for s in "$(dirname "$model")"/test_data_set_*; do
    [ -d "$s" ] && printf '\t%s' "$s" >> "$tmp/list"
  done
  echo >> "$tmp/list"
done < <(list_models)

node tests/ort_gate.mjs "$ort" "$tmp/list" > "$tmp/gate" || fail=1
grep '^FAIL' "$tmp/gate" || true
summary=$(grep '^gate:' "$tmp/gate" || echo "gate: no summary")

# graft run MODEL on each test-data set SET...: 0 when every one reproduces
# its expected outputs; with a NAME, a FAIL line for each set that does not
expect_sets() {
  local model=$1 name=$2 s rc=0
  shift 2
  for s in "$@"; do
    if ! $graft run "$model" --inputs "$s" --expect "$s" > "$tmp/log" 2>&1; then
      rc=1
      [ -n "$name" ] || return 1
      echo "FAIL $name: graft run on graft's output, $(basename "$s"): $(grep -m1 -v '^ ' "$tmp/log")"
    fi
  done
  return $rc
}
# model NAME's line of the list: f=(name original optimized sets...), sets=(sets...)
fields() {
  IFS=$'\t' read -r -a f <<< "$(awk -F'\t' -v n="$1" '$1 == n' "$tmp/list")"
  sets=("${f[@]:3}")
}

# what onnxruntime-node cannot feed, graft's evaluator checks against the
# expected outputs the test data ships
nofeed=0 evaluated=0
while read -r _ name; do
  nofeed=$((nofeed + 1))
  fields "$name"
  [ ${#sets[@]} = 0 ] && continue
  if expect_sets "${f[2]}" "$name" "${sets[@]}"; then evaluated=$((evaluated + 1)); else fail=1; fi
done < <(grep '^NOFEED' "$tmp/gate" || true)
# the originals ORT refuses (old opsets, types it lacks): wherever graft's
# evaluator reproduces an original's expected outputs, graft's optimized
# model must too
runs=0 agree=0
while read -r _ name; do
  fields "$name"
  [ ${#sets[@]} = 0 ] && continue
  expect_sets "${f[1]}" "" "${sets[@]}" || continue
  runs=$((runs + 1))
  if expect_sets "${f[2]}" "$name" "${sets[@]}"; then agree=$((agree + 1)); else fail=1; fi
done < <(grep '^REFUSED' "$tmp/gate" || true)
summary="$label: $summary; graft's evaluator agrees on $evaluated of the $nofeed not feedable"
summary="$summary, and on $agree of the $runs originals ORT refuses that it runs"
echo "$summary"

want=$(grep "^$label: " tests/ort_gate.expected || true)
if [ "$summary" != "$want" ]; then
  echo "FAIL the counts changed; tests/ort_gate.expected says:"
  echo "${want:-(nothing for $label)}"
  fail=1
fi
exit $fail
