#!/usr/bin/env bash
# interp_cost.sh GRAFT CORPUS - the interpreted library's matching against the
# compiled one's, in instructions (valgrind's callgrind; deterministic, so one
# run each and no noise from the machine): for each model of CORPUS, `graft
# optimize M` and `graft optimize M --no-library --rules rules/*/*.rules`, and
# of each the instructions spent inside the rule sets' match functions (the
# generated match() of each compiled set, rw_interp_match), their callees
# included: the tree, the leaves, building and committing what fires.  The
# rest of the engine (folding, CSE, the worklist) is the same for both and
# left out.  Prints a line per model (compiled, interpreted, ratio), then the
# median ratio and the sums.  Run from the repository root; takes minutes.
set -euo pipefail
graft=${1:?usage: tests/bench/interp_cost.sh GRAFT CORPUS}
corpus=${2:?usage: tests/bench/interp_cost.sh GRAFT CORPUS}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# instructions inside the matchers, callees included
cost() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2> /dev/null | grep -v '=>' |
    awk '{ x = $1; gsub(",", "", x) } / [^ ]*rules_[a-z0-9_]*\.c:match / || / [^ ]*:rw_interp_match / { s += x } END { print s + 0 }'
}
while IFS= read -r -d '' m; do
  valgrind --tool=callgrind --callgrind-out-file="$tmp/c.out" "$graft" optimize "$m" -o "$tmp/c.onnx" > /dev/null 2>&1
  valgrind --tool=callgrind --callgrind-out-file="$tmp/i.out" "$graft" optimize "$m" -o "$tmp/i.onnx" \
    --no-library --rules rules/*/*.rules > /dev/null 2>&1
  c=$(cost "$tmp/c.out") i=$(cost "$tmp/i.out")
  awk -v m="$m" -v c="$c" -v i="$i" 'BEGIN { printf "%-70s %14d %14d %6.3f\n", m, c, i, (c > 0 ? i / c : 1) }'
done < <(find -L "$corpus" -name '*.onnx' -print0 | sort -z) | tee "$tmp/lines"
sort -n -k4 "$tmp/lines" | awk '{ c += $2; i += $3; r[NR] = $4 }
  END { med = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
        printf "%d models: interpreted/compiled median %.3f; sums %d / %d instructions (%.3f)\n", NR, med, i, c, i / c }'
