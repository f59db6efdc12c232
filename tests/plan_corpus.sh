#!/bin/sh
# plan_corpus.sh - the memory plan on every torch model of the corpus (raw and
# eval): `graft plan --json --repeat 5` for naive / planned / lower bound and the
# planning time (the fastest of 5 plans), then `graft run --plan --inputs test_data_set_0 --expect
# test_data_set_0`, which runs inside the planned arena and checks the outputs
# are bit-identical to a run without the plan and agree with the shipped ones.
# Prints one Markdown table row per model (BENCHMARKS.md has the table).
# Exit 1 if a planned arena is more than 5% over its lower bound or a run
# inside the plan fails.
#
#   GRAFT=build/graft sh tests/plan_corpus.sh [CORPUS]
set -u
GRAFT=${GRAFT:-build/graft}
CORPUS=${1:-${GRAFT_CORPUS:-../shared/corpus}}
[ -d "$CORPUS/torch" ] || { echo "plan_corpus: no corpus at $CORPUS"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
printf '| model | nodes | tensors (in place, views) | naive bytes | planned (peak_bytes) | lower bound | over the bound | planning ms (fastest of 5) | run --plan |\n'
printf '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n'
for dir in "$CORPUS"/torch/*/raw "$CORPUS"/torch/*/eval; do
	[ -f "$dir/model.onnx" ] || continue
	name=$(basename "$(dirname "$dir")")/$(basename "$dir")
	if ! "$GRAFT" plan "$dir/model.onnx" --json --summary --repeat 5 > "$tmp/plan.json" 2> "$tmp/plan.err"; then
		printf '| %s | plan failed: %s |\n' "$name" "$(head -1 "$tmp/plan.err")"
		status=1
		continue
	fi
	row=$(python3 - "$tmp/plan.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
over = 100.0 * (j["peak_bytes"] - j["lower_bound_bytes"]) / j["lower_bound_bytes"] if j["lower_bound_bytes"] else 0.0
print("%d|%d (%d, %d)|%d|%d|%d|%.2f%%|%.2f|%d" % (j["nsteps"], j["tensors"], j["in_place"], j["views"], j["naive_bytes"],
      j["peak_bytes"], j["lower_bound_bytes"], over, j["planning_ms"], 1 if over > 5.0 else 0))
EOF
)
	bad=${row##*|}
	row=${row%|*}
	[ "$bad" = 1 ] && status=1
	if "$GRAFT" run "$dir/model.onnx" --plan --inputs "$dir/test_data_set_0" --expect "$dir/test_data_set_0" \
		> "$tmp/run.out" 2> "$tmp/run.err" && grep -q "bit-identical" "$tmp/run.out"; then
		run="identical, agrees"
	else
		run="FAILED: $(cat "$tmp/run.err" | head -1)"
		status=1
	fi
	printf '| %s | %s | %s |\n' "$name" "$(echo "$row" | sed 's/|/ | /g')" "$run"
done
exit $status
