#!/usr/bin/env bash
# corpus_speed.sh - `make bench-corpus`: graft's whole process against ONNX
# Runtime's session creation, model by model, measured side by side.
#
# REPS rounds (default 5) over every corpus torch model, each model running
# back to back: /bin/true (the cost of any process), `cp` of the model (the
# floor: reading and writing its bytes), `graft optimize MODEL -o OUT`, and
# ort-bench.mjs --opt basic --iters 0 (ORT's in-process session creation, as
# it reports it).  Interleaving puts all four under the same load, and each
# figure is a median over the rounds.  graft's and cp's times are whole
# processes less the median of /bin/true over the whole run; ORT's is its own
# in-process time.
# Printed: a Markdown table with the ratio ORT/graft (the issue's goal: at
# least 2x), graft/cp, graft's peak RSS and how far it is above the input's
# size plus the output's (MiB), then the median ratio over the models.
#
# With BASE_GRAFT=another/graft in the environment, that binary runs in the
# same rounds too and a "before" column compares it (a change's effect).
# With MODELS="a/model.onnx b/model.onnx ..." those models run instead of the
# corpus (`make bench-big`; named by their folder).  A model with external
# data (MODEL.data beside it) is copied with it, and its size counts the data.
# GRAFT_FLAGS are added to every graft optimize (e.g. --report r.json).
# CP_FSYNC=1: the floor is cp then fsync of the copy (`sync FILE`), as graft
# fsyncs what it saves before renaming it into place.
#
# Usage: tests/bench/corpus_speed.sh [GRAFT] [CORPUS] [ORT_TOOLS] [REPS]
set -euo pipefail
graft=${1:-build/graft}
corpus=${2:-../shared/corpus}
ort=${3:-build/ort-tools}
reps=${4:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# microseconds elapsed running "$@" (bash's own clock: no process to read it)
us() {
	local t0=$EPOCHREALTIME
	"$@" > /dev/null 2>&1 || { echo "corpus_speed.sh: failed: $*" >&2; exit 1; }
	local t1=$EPOCHREALTIME
	echo $(( (${t1/./} - ${t0/./}) ))
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

base=${BASE_GRAFT:-}
models=${MODELS:-$(find -L "$corpus/torch" -name model.onnx | sort)}
flags=${GRAFT_FLAGS:-}
# a model's bytes: the file, and its external data file if it has one
files() { echo "$1"; [ -f "$1.data" ] && echo "$1.data"; return 0; }
copy_model() { cp $(files "$1") "$tmp/copy/" && { [ -z "${CP_FSYNC:-}" ] || sync "$tmp/copy/"*; }; }
size() { [ -f "$1" ] || { echo 0; return; }; stat -L -c %s $(files "$1") | awk '{s += $1} END {print s}'; }
: > "$tmp/true"; : > "$tmp/rows"
# rounds outside, models inside: a burst of load on the machine lands on
# different models in different rounds, and each model's median drops it
for ((r = 0; r < reps; r++)); do
	i=0
	for model in $models; do
		i=$((i + 1))
		us /bin/true >> "$tmp/true"
		mkdir -p "$tmp/copy"
		us copy_model "$model" >> "$tmp/cp.$i"
		rm -rf "$tmp/copy"
		us "$graft" optimize "$model" -o "$tmp/out.onnx" $flags >> "$tmp/graft.$i"
		rm -f "$tmp/out.onnx" "$tmp/out.onnx.data"
		if [ -n "$base" ]; then us "$base" optimize "$model" -o "$tmp/out.onnx" $flags >> "$tmp/base.$i"; rm -f "$tmp/out.onnx" "$tmp/out.onnx.data"; fi
		node "$ort/ort-bench.mjs" "$model" --opt basic --iters 0 |
			sed 's/.*"create_ms":\([0-9.]*\).*/\1/' >> "$tmp/ort.$i"
	done
done
i=0
for model in $models; do
	i=$((i + 1))
	if [ -n "${MODELS:-}" ]; then name=$(basename "$(dirname "$model")"); else name=$(echo "$model" | sed 's|.*/torch/||; s|/model.onnx||'); fi
	rss=$( { /usr/bin/time -f '%M' "$graft" optimize "$model" -o "$tmp/out.onnx" $flags > /dev/null 2> "$tmp/err" && tail -1 "$tmp/err"; } || echo '?')
	outbytes=$(size "$tmp/out.onnx")
	rm -f "$tmp/out.onnx" "$tmp/out.onnx.data"
	echo "$name $(size "$model") $(median < "$tmp/cp.$i") $(median < "$tmp/graft.$i") $(median < "$tmp/ort.$i") $rss $( [ -n "$base" ] && median < "$tmp/base.$i" || echo -) $outbytes" >> "$tmp/rows"
done

# /bin/true's median over every round of the run: the cost of any process
t=$(median < "$tmp/true")
cpname=${CP_FSYNC:+cp+fsync}
cpname=${cpname:-cp}
printf "| model | MB | %s ms |%s graft ms | ORT create ms | ORT / graft | graft / %s | graft peak RSS MB | RSS - in - out MB |\n" "$cpname" "${base:+ before ms |}" "$cpname"
printf "| --- | ---: | ---: |%s ---: | ---: | ---: | ---: | ---: | ---: |\n" "${base:+ ---: |}"
awk -v t="$t" '
{
	name = $1; bytes = $2; cp = $3; g = $4; o = $5; rss = $6; b = $7; out = $8
	cpms = (cp - t) / 1000; gms = (g - t) / 1000
	if (cpms < 0.05) cpms = 0.05
	if (gms < 0.05) gms = 0.05
	before = b == "-" ? "" : sprintf(" %.1f |", (b - t) / 1000)
	printf "| %s | %.1f | %.1f |%s %.1f | %.1f | %.1fx | %.1fx | %s | %s |\n", name, bytes / 1e6, cpms, before, gms, o, o / gms, gms / cpms,
	       rss == "?" ? "?" : sprintf("%.1f", rss / 1024), rss == "?" ? "?" : sprintf("%.1f", (rss * 1024 - bytes - out) / 1048576)
	printf "%f\n", o / gms > ratios
	if (rss != "?")
		printf "%f %s\n", (rss * 1024 - bytes - out) / 1048576, name > excess
}' ratios="$tmp/ratios" excess="$tmp/excess" "$tmp/rows"
echo
echo "models: $(wc -l < "$tmp/ratios"); ORT / graft: median $(median < "$tmp/ratios" | awk '{printf "%.1fx", $1}')," \
     "smallest $(sort -n "$tmp/ratios" | head -1 | awk '{printf "%.1fx", $1}'); graft and cp are whole processes" \
     "less /bin/true (median $(echo "$t" | awk '{printf "%.2f", $1 / 1000}') ms over the run; below 0.05 ms shown as 0.05)"
echo "peak RSS above input + output: at most 4 MiB on $(awk '$1 <= 4' "$tmp/excess" | wc -l) of $(wc -l < "$tmp/excess") models;" \
     "largest $(sort -n "$tmp/excess" | tail -1 | awk '{printf "%.1f MiB (%s)", $1, $2}')"
