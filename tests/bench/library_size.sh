#!/bin/sh
# library_size.sh GRAFT GRAFTC [MODEL...] - `make bench`: what the size of the
# rule library costs.  (1) graftc compiling the whole library to C (both rule
# sets, as the build does), best of 3, goal under 0.5 s; (2) the engine's time
# on each model with the whole library against the 29 rules the library had
# before issue 11 (rules/ at commit 3f31983), both interpreted (`--no-library
# --rules`, so the same matcher runs both), best of 5, in one run.
set -eu
graft=${1:?usage: library_size.sh GRAFT GRAFTC [MODEL...]}
graftc=${2:?usage: library_size.sh GRAFT GRAFTC [MODEL...]}
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
best() { sort -n | head -1; }
now() { date +%s%N; }

mkdir -p "$tmp/old"
if git cat-file -e 3f31983 2>/dev/null; then
  for f in $(git ls-tree -r --name-only 3f31983 rules | grep '\.rules$'); do
    mkdir -p "$tmp/old/$(dirname "$f")"
    git show "3f31983:$f" > "$tmp/old/$f"
  done
fi
new_rules=$(ls rules/*/*.rules)
old_rules=$(ls "$tmp"/old/rules/*/*.rules 2>/dev/null || true)
count() { grep -ch '^rule ' "$@" | awk '{ s += $1 } END { print s }'; }

echo "graftc, whole library ($(count $new_rules) rules), best of 3:"
for set in basic extended; do
  t=$(for i in 1 2 3; do t0=$(now); "$graftc" -n "$set" -o "$tmp/$set.c" rules/$set/*.rules 2> /dev/null; t1=$(now); echo $(( (t1 - t0) / 1000000 )); done | best)
  echo "  $set: $t ms"
done

[ -n "$old_rules" ] || { echo "no git history: the 29-rule comparison is skipped"; exit 0; }
engine_ms() { # model rules... : engine seconds from the summary line, as ms
  m=$1; shift
  args=""
  for r in "$@"; do args="$args --rules $r"; done
  for i in 1 2 3 4 5; do
    "$graft" optimize "$m" -o "$tmp/out.onnx" --no-library $args --report "$tmp/r.json" > /dev/null 2>&1
    sed -n 's/.*"engine_seconds": *\([0-9.e-]*\).*/\1/p' "$tmp/r.json" | awk '{ printf "%.2f\n", $1 * 1000 }'
  done | best
}
echo "engine ms (interpreted, best of 5): whole library ($(count $new_rules) rules) vs the old $(count $old_rules)"
printf '| model | nodes | old rules ms | whole library ms | ratio |\n| --- | ---: | ---: | ---: | ---: |\n'
for m in "$@"; do
  [ -f "$m" ] || continue
  n=$("$graft" info "$m" | sed -n 's/^nodes  *\([0-9]*\).*/\1/p' | head -1)
  o=$(engine_ms "$m" $old_rules)
  w=$(engine_ms "$m" $new_rules)
  r=$(awk -v o="$o" -v w="$w" 'BEGIN { if (o > 0) printf "%.2f", w / o; else print "-" }')
  printf '| %s | %s | %s | %s | %s |\n' "$m" "$n" "$o" "$w" "$r"
done
