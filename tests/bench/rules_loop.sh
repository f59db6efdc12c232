#!/bin/sh
# rules_loop.sh GRAFT [MODEL...] - `make bench`: the rule author's loop, from a
# saved rules file to seeing its rule fire: `graft optimize MODEL --rules
# FILE -o OUT` wall time (load the rules, load the model, optimize with the
# rules interpreted beside the compiled library, save), best of 5, on the
# bundled example and on the corpus models given.  The goal is under 1 s.
set -eu
graft=${1:?usage: rules_loop.sh GRAFT [MODEL...]}
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/mine.rules" <<'RULES'
level basic;

rule mine_relu_relu "Relu is idempotent":
    Relu(Relu(x)) => Relu(x);

rule mine_erf_scale "Erf of x / sqrt(2) as a product":
    Erf(Div(x, 1.4142135)) => Erf(Mul(x, 0.70710677));
RULES
printf '%-60s %10s %8s\n' "model" "best ms" "fired"
for m in examples/tiny_cnn.onnx "$@"; do
  [ -f "$m" ] || continue
  best=
  for i in 1 2 3 4 5; do
    t0=$(date +%s%N)
    "$graft" optimize "$m" --rules "$tmp/mine.rules" -o "$tmp/out.onnx" 2> "$tmp/log"
    t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  fired=$(awk '/^mine_/ {n += $2} END {print n + 0}' "$tmp/log")
  printf '%-60s %10d %8d\n' "$m" "$best" "$fired"
done
