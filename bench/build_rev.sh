#!/bin/sh
# bench/build_rev.sh REV DIR: builds gputrace-report as it was at commit REV, for the before/after
# columns of the analyzer benchmarks (BENCH_BASE=REV make bench). The tree of REV is exported with
# `git archive` into DIR/src (no checkout: the working tree and the index are left alone) and built
# there with its own Makefile into DIR/src/build. Prints the path of the binary. A DIR that already
# holds the binary for REV is reused.
set -eu
[ $# -eq 2 ] || { echo "usage: bench/build_rev.sh REV DIR" >&2; exit 2; }
rev=$(git rev-parse --verify "$1^{commit}")
dir=$2
bin=$dir/src/build/gputrace-report
if [ -x "$bin" ] && [ "$(cat "$dir/rev" 2>/dev/null)" = "$rev" ]; then
    echo "$bin"
    exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/src"
echo "+ git archive $rev | tar -x -C $dir/src" >&2
git archive "$rev" | tar -x -C "$dir/src"
echo "+ make -C $dir/src O=build -j$(nproc) build/gputrace-report" >&2
make -C "$dir/src" O=build -j"$(nproc)" build/gputrace-report >"$dir/build.log" 2>&1 ||
    { tail -20 "$dir/build.log" >&2; exit 1; }
echo "$rev" >"$dir/rev"
echo "$bin"
