#!/bin/sh
# Test runner: runs every tests/cases/*.sh (and the unit binaries) and ends with
# "N passed, N failed, N skipped". A case passes with exit 0, is skipped with exit 77
# (it must print why), and fails otherwise; a failing case's output is shown.
# Usage: O=build sh tests/run.sh [pattern]   (GT_KEEP_WORK=1: keep the work directories)
set -u
O=${O:-build}
case "$O" in /*) ;; *) O="$PWD/$O" ;; esac
export O
export GT_LIB="$O/libgputrace.so" GT_REPORT="$O/gputrace-report" GT_LAUNCHER="$O/gputrace"
export SIM_DIR="$O/sim" SIMCUPTI_DIR="$O/simcupti" PROGS="$O/tests" PYTHON="${PYTHON:-python3}" SRC="$PWD"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
pattern=${1:-} # run only the cases whose name matches (grep); several arguments: any of them
if [ $# -gt 0 ]; then shift; fi
for a in "$@"; do pattern="$pattern\|$a"; done
pass=0 fail=0 skip=0 failed=""
work=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-tests.XXXXXX") || exit 2
# GT_KEEP_WORK=1: keep the cases' directories (their traces and reports), e.g. to compare the
# reports of two builds on every trace the suite made (tests/report_diff.sh).
if [ "${GT_KEEP_WORK:-0}" = 1 ]; then
    trap 'echo "work directories kept in $work"' EXIT
else
    trap 'rm -rf "$work"' EXIT INT TERM
fi

run_case() { # name command...
    name=$1; shift
    if [ -n "$pattern" ] && ! echo "$name" | grep -q -- "$pattern"; then return; fi
    dir="$work/$name"; mkdir -p "$dir"
    start=$(date +%s)
    ( cd "$dir" && TMPDIR="$dir" "$@" ) >"$dir.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "PASS $name (${secs}s)"
    elif [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$dir.log")"
    else fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name (exit $rc)"; sed 's/^/    | /' "$dir.log" | tail -n 60
    fi
}

for u in "$O"/tests/unit_*; do
    [ -x "$u" ] || continue
    run_case "$(basename "$u")" "$u"
done
for c in "$SRC"/tests/cases/*.sh; do
    [ -f "$c" ] || continue
    run_case "$(basename "$c" .sh)" sh "$c"
done
if [ -n "$failed" ]; then
    # the failing checks again, last, where a truncated CI log still shows them
    for f in $failed; do grep -E '^(FAIL|not ok)' "$work/$f.log" | head -n 10 | sed "s/^/$f: /"; done
    echo "failed:$failed"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
