#!/bin/sh
# Test runner: runs every tests/cases/*.sh (and the unit binaries) and ends with
# "N passed, N failed, N skipped". A case passes with exit 0, is skipped with exit 77
# (it must print why), and fails otherwise; a failing case's output is shown at the end.
# Usage: O=build sh tests/run.sh [pattern...]
#   GT_JOBS=N      run N cases at a time (default: the number of CPUs; 1: one after another)
#   GT_KEEP_WORK=1 keep the work directories (their traces and reports)
# A case whose file has a line "# test: alone" runs by itself, after the others: it measures
# time (a gap, a rate, a sampling period), which cases running beside it would stretch, or it
# runs make in the build directory. The PyTorch cases, the longest, start first.
set -u
O=${O:-build}
case "$O" in /*) ;; *) O="$PWD/$O" ;; esac
export O
export GT_LIB="$O/libgputrace.so" GT_REPORT="$O/gputrace-report" GT_LAUNCHER="$O/gputrace"
export SIM_DIR="$O/sim" SIMCUPTI_DIR="$O/simcupti" PROGS="$O/tests" PYTHON="${PYTHON:-python3}" SRC="$PWD"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"

# run.sh --one NAME KIND: run one case into $GT_RUN_WORK/NAME.log and NAME.rc (xargs calls this).
if [ "${1:-}" = --one ]; then
    name=$2 kind=$3 work=$GT_RUN_WORK
    if [ "$kind" = unit ]; then set -- "$O/tests/$name"; else set -- sh "$SRC/tests/cases/$name.sh"; fi
    dir="$work/$name"; mkdir -p "$dir"
    start=$(date +%s)
    # GT_CASE_NOTES: what a case's helpers say beside its output (tests/torch/env.sh torch_run's
    # retry of a known abort): shown on the case's PASS line, and in its log
    ( cd "$dir" && TMPDIR="$dir" GT_CASE_NOTES="$dir.notes" "$@" ) >"$dir.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    echo "$rc $secs" > "$dir.rc"
    [ ! -s "$dir.notes" ] || { echo "---- notes"; cat "$dir.notes"; } >> "$dir.log"
    if [ $rc -eq 0 ] && [ -s "$dir.notes" ]; then echo "PASS $name (${secs}s; $(head -n 1 "$dir.notes"))"
    elif [ $rc -eq 0 ]; then echo "PASS $name (${secs}s)"
    elif [ $rc -eq 77 ]; then echo "SKIP $name: $(tail -n 1 "$dir.log")"
    else echo "FAIL $name (exit $rc, ${secs}s)"
    fi
    exit 0
fi

pattern=${1:-} # run only the cases whose name matches (grep); several arguments: any of them
if [ $# -gt 0 ]; then shift; fi
for a in "$@"; do pattern="$pattern\|$a"; done
jobs=${GT_JOBS:-$(nproc 2>/dev/null || echo 1)}
case "$jobs" in ''|*[!0-9]*|0) echo "run.sh: GT_JOBS must be a positive number, not '$jobs'" >&2; exit 2 ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/gputrace-tests.XXXXXX") || exit 2
export GT_RUN_WORK="$work"
if [ "${GT_KEEP_WORK:-0}" = 1 ]; then
    trap 'echo "work directories kept in $work"' EXIT
else
    trap 'rm -rf "$work"' EXIT
    trap 'exit 130' INT TERM
fi

# The lists: NAME KIND per line. first: PyTorch cases; rest: the others; alone: one at a time.
: > "$work/first"; : > "$work/rest"; : > "$work/alone"; : > "$work/all"
want() { [ -z "$pattern" ] || echo "$1" | grep -q -- "$pattern"; }
for u in "$O"/tests/unit_*; do
    [ -x "$u" ] || continue
    n=$(basename "$u"); want "$n" || continue
    echo "$n unit" >> "$work/rest"; echo "$n" >> "$work/all"
done
for c in "$SRC"/tests/cases/*.sh; do
    [ -f "$c" ] || continue
    n=$(basename "$c" .sh); want "$n" || continue
    if grep -q '^# test: alone' "$c"; then echo "$n case" >> "$work/alone"
    elif case "$n" in torch_*) true ;; *) false ;; esac; then echo "$n case" >> "$work/first"
    else echo "$n case" >> "$work/rest"
    fi
    echo "$n" >> "$work/all"
done
total=$(wc -l < "$work/all")
echo "running $total cases, $jobs at a time ($(wc -l < "$work/alone") of them alone, last)"
cat "$work/first" "$work/rest" | xargs -r -n 2 -P "$jobs" sh "$SRC/tests/run.sh" --one
xargs -r -n 2 -P 1 sh "$SRC/tests/run.sh" --one < "$work/alone"

pass=0 fail=0 skip=0 failed=""
while read -r name; do
    rc=; [ -f "$work/$name.rc" ] && read -r rc secs < "$work/$name.rc"
    case "$rc" in
        0) pass=$((pass + 1)) ;;
        77) skip=$((skip + 1)) ;;
        *) fail=$((fail + 1)); failed="$failed $name" ;;
    esac
done < "$work/all"
if [ -n "$failed" ]; then
    for f in $failed; do
        echo "---- $f"; sed 's/^/    | /' "$work/$f.log" 2>/dev/null | tail -n 60
    done
    # the failing checks again, last, where a truncated CI log still shows them (with the rows
    # a figures check printed as DIFFERS: the log's tail may not reach them)
    for f in $failed; do grep -E '^(FAIL|not ok)|DIFFERS' "$work/$f.log" 2>/dev/null | head -n 10 | sed "s/^/$f: /"; done
    echo "failed:$failed"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
