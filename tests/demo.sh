#!/bin/sh
# make demo: trace a small CUDA-style workload on the simulated GPU and print the report.
set -eu
O=${O:-build}
case "$O" in /*) ;; *) O="$PWD/$O" ;; esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-demo.XXXXXX")
echo "== running the demo workload on the simulated GPU and CUPTI (tests/progs/demo.c, tests/sim, tests/simcupti) under gputrace"
echo "   $O/gputrace -o $dir/demo.trace -- $O/tests/demo"
LD_LIBRARY_PATH="$O/simcupti:$O/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GTSIM_MEM_BYTES=$((2 << 30)) \
    "$O/gputrace" -o "$dir/demo.trace" -- "$O/tests/demo"
echo
echo "== $O/gputrace-report $dir/demo.trace"
"$O/gputrace-report" "$dir/demo.trace"
echo
echo "== $O/gputrace-report --html $O/demo.html $dir/demo.trace"
"$O/gputrace-report" --html "$O/demo.html" "$dir/demo.trace"
echo "demo.html written: $O/demo.html (open it in a browser; it needs no network)"
echo "(trace kept at $dir/demo.trace; try --json, --dump, --chrome-trace demo.json or --folded peak)"
