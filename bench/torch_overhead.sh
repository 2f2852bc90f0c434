#!/bin/sh
# Overhead on the real PyTorch (issue 23): bench/torch_overhead.py's three workloads (launch-bound
# elementwise loop per op, allocator loop per allocation, small autograd + AdamW step per step) on
# the simulated stack (tests/simrt/run-torch), each in variants run interleaved round by round in
# rotating order: no tracer; gputrace defaults; gputrace without stacks; gputrace without CUPTI
# (its stacks' cost apart from the simulated CUPTI's); gputrace with each
# GPUTRACE_TORCH level (where the bridge, python/gputrace_torch.py, is in the tree); torch.profiler
# with CUDA activities; the same with with_stack=True; _record_memory_history alone.
# Prints every command; writes a Markdown section (medians, and medians of the per-round ratios
# against no tracer) to $TORCH_BENCH_OUT (default bench/torch_overhead.md; for a partial run,
# one with TORCH_BENCH_VARIANTS or TORCH_BENCH_WORKLOADS, a file under TMPDIR, which it names).
# Usage: O=build GT_VENV=/path/to/venv sh bench/torch_overhead.sh [ROUNDS] [SCALE]
#   SCALE multiplies the loop lengths (launch 20,000 ops, alloc 20,000 pairs, step 300 steps).
set -eu
NAME=torch_overhead
. "$(dirname "$0")/torch_env.sh"
ROUNDS=${1:-5}
SCALE=${2:-1}
OUT=${TORCH_BENCH_OUT:-$ROOT/bench/torch_overhead.md}
# A partial run (some variants or workloads) does not replace the full section that
# bench/RESULTS.md is made of (bench/report.py): it was overwritten that way twice. Its section
# goes to a file under TMPDIR unless TORCH_BENCH_OUT names one.
if [ -z "${TORCH_BENCH_OUT:-}" ] && [ -n "${TORCH_BENCH_VARIANTS:-}${TORCH_BENCH_WORKLOADS:-}" ]; then
    OUT="${TMPDIR:-/tmp}/gputrace-torch_overhead-partial.md"
    echo "torch_overhead.sh: a partial run: its section goes to $OUT, not bench/torch_overhead.md (TORCH_BENCH_OUT=FILE to choose)"
fi
SCRIPT="$ROOT/bench/torch_overhead.py"
variants="none gputrace gputrace-nostacks gputrace-nocupti"
[ ! -f "$ROOT/python/gputrace_torch.py" ] ||
    variants="$variants gputrace-torch-off gputrace-torch-stats gputrace-torch-snapshots gputrace-torch-history"
variants="$variants profiler profiler-stack history"
# TORCH_BENCH_BEFORE=DIR: also gputrace's defaults from another build directory (an earlier
# libgputrace.so), in the same rounds: a change's before and after side by side.
[ -z "${TORCH_BENCH_BEFORE:-}" ] || variants="none gputrace-before ${variants#none }"
# TORCH_BENCH_VARIANTS / TORCH_BENCH_WORKLOADS: only these (names as above; launch alloc step).
variants=${TORCH_BENCH_VARIANTS:-$variants}
workloads=${TORCH_BENCH_WORKLOADS:-launch alloc step}
n_of() { # workload -> loop length
    case $1 in launch) echo $((20000 * SCALE)) ;; alloc) echo $((20000 * SCALE)) ;; step) echo $((300 * SCALE)) ;; esac
}
cmd_of() { # variant workload -> command line
    n=$(n_of "$2")
    case $1 in
    none | profiler | profiler-stack | history) echo "$RUN $PY $SCRIPT $2 $n $1" ;;
    gputrace) echo "$RUN -t $W/t.trace $PY $SCRIPT $2 $n" ;;
    gputrace-before) echo "$ROOT/tests/simrt/run-torch -b $TORCH_BENCH_BEFORE -t $W/t.trace $PY $SCRIPT $2 $n" ;;
    gputrace-nostacks) echo "env GPUTRACE_STACKS=none $RUN -t $W/t.trace $PY $SCRIPT $2 $n" ;;
    gputrace-nocupti) echo "env GPUTRACE_CUPTI=off $RUN -t $W/t.trace $PY $SCRIPT $2 $n" ;;
    gputrace-torch-*) echo "env GPUTRACE_TORCH=${1#gputrace-torch-} $RUN -t $W/t.trace $PY $SCRIPT $2 $n" ;;
    esac
}
: > "$W/raw.txt"
# the report gives the start and end of the run: "START to END", "load at start / at end"
export TORCH_BENCH_START="$(date -u '+%Y-%m-%d %H:%M UTC') to " TORCH_BENCH_START_LOAD="$(cut -d' ' -f1-3 /proc/loadavg) at start, at end "
for wl in $workloads; do
    for v in $variants; do cmd_of "$v" "$wl"; done
done
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for wl in $workloads; do
        set -- $variants
        i=1
        while [ $i -lt $r ]; do v=$1; shift; set -- "$@" "$v"; i=$((i + 1)); done
        for v in "$@"; do
            rm -f "$W"/t.trace*
            t0=$(date +%s%N)
            res=$(eval "$(cmd_of "$v" "$wl")" 2>"$W/err" | grep '=' | tr '\n' ' ') ||
                { echo "torch_overhead.sh: $v $wl failed:" >&2; cat "$W/err" >&2; exit 1; }
            t1=$(date +%s%N)
            # run_ns: the whole process, start to exit (what a tracer defers past the loop, such
            # as torch.profiler's trace collection at its stop, counts here)
            echo "round=$r workload=$wl variant=$v ${res}run_ns=$((t1 - t0))" | tee -a "$W/raw.txt"
        done
    done
    r=$((r + 1))
done
[ -z "${TORCH_BENCH_RAW:-}" ] || cp "$W/raw.txt" "$TORCH_BENCH_RAW"
"$PY" "$ROOT/bench/torch_overhead_report.py" "$W/raw.txt" "$OUT" "$ROUNDS" "$SCALE" "$variants"
