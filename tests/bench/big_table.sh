#!/usr/bin/env bash
# big_table.sh - `make bench-big` (issue 29): graft optimize on models of
# 0.1-2.7 GB against `cp` and ONNX Runtime's first basic session creation,
# with peak RSS, and a check of every output in ONNX Runtime.
#
# The models are exported by tests/bench/export_big.py into DIR (random
# weights, fixed seeds; about 6 GB of disk, made once and reused).  Timing is
# corpus_speed.sh's (rounds outside, models inside, medians; graft and cp whole
# processes less /bin/true; ORT's own in-process creation time), the floor
# being cp then fsync of the copy (graft fsyncs what it saves), then:
#  - the disk's own speed: what writing bert_base_ext's output takes when
#    nothing is computed (dd from /dev/zero, O_DIRECT, fsync),
#  - the Llama-style decoder again with --report (the audit costs memory),
#  - bert_base_ext optimized with --external-data into another folder: the
#    data file holds only the tensors the output references,
#  - ONNX Runtime runs every input and output and compares them (one run each:
#    the big ones take a while).
#
# usage: tests/bench/big_table.sh [GRAFT] [DIR] [ORT_TOOLS] [ROUNDS]
set -euo pipefail
graft=${1:-build/graft}
dir=${2:-build/bench-big}
ort=${3:-build/ort-tools}
rounds=${4:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 tests/bench/export_big.py "$dir"
models=$(ls "$dir"/*/model.onnx)
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
MODELS="$models" CP_FSYNC=1 tests/bench/corpus_speed.sh "$graft" - "$ort" "$rounds"
echo
# the disk itself: bert_base_ext's 438 MB of output written from memory with
# O_DIRECT and fsync'ed (no computation at all), median of 5
for i in 1 2 3 4 5; do
	/usr/bin/time -f "%e" -o "$tmp/t" dd if=/dev/zero of="$tmp/zeros" bs=8M count=53 oflag=direct conv=fsync 2> /dev/null || echo "dd failed (no O_DIRECT here?)" > "$tmp/t"
	cat "$tmp/t"
	rm -f "$tmp/zeros"
done | sort -n | sed -n 3p | awk '{printf "disk: 438 MB of zeros written with O_DIRECT + fsync (dd bs=8M, median of 5): %.0f ms\n", $1 * 1000}'
echo
echo "with --report (peak RSS, wall s):"
for m in "$dir"/llama_ext/model.onnx "$dir"/transposes_ext/model.onnx; do
	/usr/bin/time -f "%M %e" -o "$tmp/t" "$graft" optimize "$m" -o "$tmp/out.onnx" --report "$tmp/r.json" > /dev/null 2>&1
	echo "  $(basename "$(dirname "$m")"): $(awk '{printf "%.0f MB, %.2f s", $1 / 1024, $2}' "$tmp/t")"
	rm -f "$tmp/out.onnx" "$tmp/out.onnx.data" "$tmp/r.json"
done
echo
echo "bert_base_ext with --external-data into another folder:"
mkdir "$tmp/other"
"$graft" optimize "$dir/bert_base_ext/model.onnx" -o "$tmp/other/opt.onnx" --external-data 2>&1 | tail -1
ls -l "$dir/bert_base_ext" "$tmp/other" | grep -v '^total'
node "$ort/ort-compare.mjs" "$dir/bert_base_ext/model.onnx" "$tmp/other/opt.onnx" --runs 1 | tail -1
rm -rf "$tmp/other"
echo
echo "ONNX Runtime on every output (one run each):"
for m in $models; do
	"$graft" optimize "$m" -o "$tmp/out.onnx" > /dev/null 2>&1
	echo "  $(basename "$(dirname "$m")"): $(node "$ort/ort-compare.mjs" "$m" "$tmp/out.onnx" --runs 1 2>&1 | tail -1)"
	rm -f "$tmp/out.onnx" "$tmp/out.onnx.data"
done
