#!/usr/bin/env bash
# convert_gate.sh - graft convert checked by running the models: every model
# of a set is converted to every opset above its own, up to 23, and each
# converted model must
#   - reproduce the expected outputs of the model's test data on graft's
#     evaluator wherever the original does (without test data: agree with the
#     original under graft compare), and
#   - load in ONNX Runtime and agree with the original there, wherever the
#     original loads (tests/ort_gate.mjs), unless ORT has no kernel for an
#     op at the converted version (NOKERNEL, counted: ORT lags the standard).
# Models at opsets 1..6 are converted too (to 7 and up): ORT refuses most of
# those originals (it has no kernel for Add-6 and the like), so there each
# output must reproduce the test data's output_K.pb in ORT as well
# (ort_gate.mjs --expect-refused).
# A conversion graft refuses is listed with its message (REFUSED); the summary
# line is compared with tests/convert_gate.expected, so a new refusal or a
# model skipped silently fails the gate.  With --down, conversions to every
# opset below the model's own (down to 1) are tried too and counted (refusals
# are expected there: ops that did not exist yet).
#
# usage: tests/convert_gate.sh SET ORT_TOOLS [--down]
#   SET: conformance (libonnx-testdata's node, simple, pytorch-converted and
#        pytorch-operator models) or corpus (../shared/corpus or $GRAFT_CORPUS)
set -euo pipefail
set_name=${1:?usage: tests/convert_gate.sh conformance|corpus ORT_TOOLS [--down]}
ort=${2:?usage: tests/convert_gate.sh SET ORT_TOOLS [--down]}
down=${3:-}
graft=${GRAFT:-build/graft}
corpus=${GRAFT_CORPUS:-../shared/corpus}
testdata=/usr/include/onnx/backend/test/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

list_models() {
  case $set_name in
    conformance)
      for root in "$testdata"/{node,simple,pytorch-converted,pytorch-operator}; do
        for m in "$root"/*/model.onnx; do printf '%s\t%s\n' "${m#"$testdata"/}" "$m"; done
      done ;;
    corpus)
      find -L "$corpus" -name '*.onnx' | LC_ALL=C sort | while read -r m; do printf '%s\t%s\n' "${m#"$corpus"/}" "$m"; done ;;
    *) echo "unknown set '$set_name'" >&2; exit 2 ;;
  esac
}

opset_of() { $graft info "$1" 2>/dev/null | awk '$1 == "opsets" { for (i = 2; i <= NF; i++) if ($i == "ai.onnx") { v = $(i + 1); sub(",", "", v); print v } }'; }

fail=0 models=0 old=0 below=0 conversions=0 refused=0 evaluated=0 agree=0 down_ok=0 down_refused=0
: > "$tmp/list"
: > "$tmp/refused"
i=0
while IFS=$'\t' read -r name model; do
  models=$((models + 1))
  from=$(opset_of "$model")
  if [ -z "$from" ]; then below=$((below + 1)); continue; fi
  [ "$from" -lt 7 ] && old=$((old + 1))
  sets=()
  for s in "$(dirname "$model")"/test_data_set_*; do [ -d "$s" ] && sets+=("$s"); done
  # does graft's evaluator reproduce the original on its test data?
  orig_ok=1
  for s in "${sets[@]}"; do
    $graft run "$model" --inputs "$s" --expect "$s" > /dev/null 2>&1 || { orig_ok=0; break; }
  done
  targets=$(seq $((from + 1)) 23)
  [ "$down" = --down ] && targets="$targets $(seq 1 $((from - 1)))"
  for t in $targets; do
    i=$((i + 1))
    out="$tmp/c/$i.onnx"
    mkdir -p "$tmp/c"
    if ! $graft convert "$model" --opset "$t" -o "$out" > /dev/null 2> "$tmp/log"; then
      if [ "$t" -lt "$from" ]; then down_refused=$((down_refused + 1)); continue; fi
      refused=$((refused + 1))
      echo "REFUSED $name -> $t: $(head -1 "$tmp/log")" >> "$tmp/refused"
      continue
    fi
    [ "$t" -lt "$from" ] && down_ok=$((down_ok + 1))
    conversions=$((conversions + 1))
    if [ $orig_ok = 1 ]; then
      evaluated=$((evaluated + 1))
      ok=1
      if [ ${#sets[@]} -gt 0 ]; then
        for s in "${sets[@]}"; do
          $graft run "$out" --inputs "$s" --expect "$s" > "$tmp/log" 2>&1 || { ok=0; break; }
        done
      else
        $graft compare "$model" "$out" > "$tmp/log" 2>&1 || ok=0
      fi
      if [ $ok = 1 ]; then agree=$((agree + 1)); else
        echo "FAIL $name -> $t: graft's evaluator: $(grep -m1 -v '^ ' "$tmp/log")"; fail=1
      fi
    fi
    printf '%s\t%s\t%s' "$name@$t" "$model" "$out" >> "$tmp/list"
    for s in "${sets[@]}"; do printf '\t%s' "$s" >> "$tmp/list"; done
    echo >> "$tmp/list"
  done
done < <(list_models)

cat "$tmp/refused"
node tests/ort_gate.mjs "$ort" "$tmp/list" --no-kernel-ok --expect-refused > "$tmp/gate" || fail=1
grep '^FAIL\|^NOKERNEL' "$tmp/gate" | sed 's/^\(NOKERNEL [^:]*\):.*\(implementation for [^ ]*\).*/\1: ORT has no \2/' || true
gate=$(grep '^gate:' "$tmp/gate" || echo "gate: no summary")
summary="$set_name: $models models ($old at opsets 1-6, $below without the ONNX domain); $conversions conversions, $refused upgrades refused;"
summary="$summary graft's evaluator agrees on $agree of $evaluated; ONNX Runtime $gate"
[ "$down" = --down ] && summary="$summary; downgrades: $down_ok converted, $down_refused refused"
echo "$summary"
if [ "$down" != --down ]; then
  want=$(grep "^$set_name: " tests/convert_gate.expected || true)
  if [ "$summary" != "$want" ]; then
    echo "FAIL the counts changed; tests/convert_gate.expected says:"
    echo "${want:-(nothing for $set_name)}"
    fail=1
  fi
fi
exit $fail
