#!/usr/bin/env bash
# tests/difftest/cases.sh - replay the minimized make difftest repros in tests/difftest/cases/:
# each case's README starts with the command that shows the failure (graft optimize, then
# ort-compare.mjs on the case's inputs).  Prints 'fails' or 'passes' per case (a case that
# passes is fixed: its regression test in tests/check_*.c names it; the case stays as the
# record of what make difftest found); exit 0 always.
# Run from the top of the tree after make and make ort-tools.
cd "$(dirname "$0")/../.."
for d in tests/difftest/cases/*/; do
  n=$(basename "$d")
  if timeout 300 bash -c "$(head -1 "$d/README")" > /tmp/difftest-case-$$.log 2>&1; then
    echo "passes  $n"
  else
    echo "fails   $n   ($(sed -n 3p "$d/README" | cut -c3-120))"
  fi
done
rm -f /tmp/difftest-case-$$.log
