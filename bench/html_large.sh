#!/bin/sh
# The HTML page of large traces (issue 19): for each N (default 10 M and 100 M kernels),
# gen_trace --timeline N (3 records per kernel: launch, kernel, correlation), then
# gputrace-report --html under bench/rusage (wall time, CPU time, peak RSS), the page's size and
# its timeline view's share, and headless Chromium's time from navigation to drawn (the page's
# data-draw-ms, median of 3 loads), with --json on the same trace as the reference cost. Prints
# every command; writes bench/html_large.md, which bench/report.py puts into RESULTS.md. A
# 100 M-kernel trace takes 16 GB of disk (TMPDIR) for the time of its run.
# Usage: O=build sh bench/html_large.sh [N...]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$ROOT/$O" ;; esac
OUT=${HTML_BENCH_OUT:-$ROOT/bench/html_large.md}
CHROMIUM=$(command -v chromium || command -v chromium-browser) || { echo "html_large.sh: no chromium" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-html-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
[ -x "$O/bench/rusage" ] || { echo "html_large.sh: no $O/bench/rusage (make bench-progs)" >&2; exit 2; }
[ $# -gt 0 ] || set -- 10000000 100000000
cmd() { echo "$*" | sed "s|$ROOT/||g; s|$W|\$W|g" >&2; eval "$@"; }
field() { awk -F': ' -v k="$1" '$1 == k {print $2}' "$2"; }
rows=""
for n in "$@"; do
    cmd "$O/bench/gen_trace --timeline $n $W/t.trace > /dev/null"
    tbytes=$(wc -c < "$W/t.trace")
    cmd "$O/bench/rusage $W/json.txt $O/gputrace-report --json $W/t.trace -o $W/t.json"
    cmd "$O/bench/rusage $W/html.txt $O/gputrace-report --html $W/t.html $W/t.trace"
    ms=""
    for i in 1 2 3; do
        m=$(cmd "timeout 300 $CHROMIUM --headless --no-sandbox --disable-gpu --user-data-dir=$W/chrome --dump-dom file://$W/t.html 2> /dev/null" |
            grep -o 'data-draw-ms="[0-9]*"' | grep -o '[0-9]*')
        ms="$ms $m"
    done
    ms=$(echo $ms | tr ' ' '\n' | sort -n | sed -n 2p)
    page=$(wc -c < "$W/t.html")
    view=$(python3 -c "import re,sys; p=open(sys.argv[1]).read(); print(len(re.search(r'id=\"gt-events\">(.*?)</script>', p, re.S).group(1)))" "$W/t.html")
    row="| $n | $((tbytes / 1000000)) | $(field 'User time (seconds)' "$W/json.txt") | $(field 'Maximum resident set size (kbytes)' "$W/json.txt") | $(field 'User time (seconds)' "$W/html.txt") | $(field 'System time (seconds)' "$W/html.txt") | $(field 'Maximum resident set size (kbytes)' "$W/html.txt") | $page | $view | $ms |"
    echo "$row" >&2
    rows="$rows$row
"
    rm -f "$W/t.trace" "$W/t.json" "$W/t.html"
done
{
    echo "## HTML page of large traces (issue 19)"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(hostname), \`nproc\` $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); \`bench/html_large.sh\`: \`gen_trace --timeline N\` (N kernels, 3 records each), \`gputrace-report --json\` and \`--html\` under \`bench/rusage\`, the page drawn by headless Chromium ($($CHROMIUM --version 2>/dev/null | head -n 1)): time from navigation to drawn, median of 3 loads."
    echo
    echo "| kernels | trace MB | --json user s | --json peak RSS KB | --html user s | --html sys s | --html peak RSS KB | page bytes | timeline view bytes | drawn ms |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    printf '%s' "$rows"
    echo
    echo "\`--html\` writes the JSON report into the page and, beside it, the timeline view (analyzer/model/view_timeline.h): the difference to \`--json\` is the view's cost (and the page's). The page's size is bounded whatever the trace's: the view holds 16,384 busy columns per stream, 131,072 exact activities in 2,048 windows, the 1,000 longest activities, 5,000 longest gaps and 2,000 longest host calls."
} > "$OUT"
echo "html_large.sh: wrote $OUT" >&2
