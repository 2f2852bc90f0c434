#!/bin/sh
# bench/size_codec.sh: trace size and launch overhead of compressed chunks (GPUTRACE_COMPRESS)
# against a shim built without them (BASE_LIB), the way bench/run.sh measures them.
#   O=build-dir BASE_LIB=/path/to/old/libgputrace.so [ROUNDS=7 N=1000000 KN=100000] sh bench/size_codec.sh
# (make O=build-dir all fixtures bench-progs first; a BASE_LIB from before compressed chunks:
#  git archive 6546ecc^ | tar -x -C DIR && make -C DIR O=build build/libgputrace.so)
# Variants: base (BASE_LIB), on (default: compressed), off (GPUTRACE_COMPRESS=0: chunks stored as
# they are, but still written by the flusher).
# Sizes: file bytes / count of traced runs against the simulated driver (+ simulated CUPTI for the
# launch + kernel pair), headers, watermarks, thread and name records included. Overhead:
# bench_launch launch N 1 WARM, variants interleaved round by round in rotating order; "added" is
# the median over rounds of (variant - no shim) of the same round.
set -eu
O=${O:-build}
case "$O" in /*) ;; *) O="$PWD/$O" ;; esac
: "${BASE_LIB:?BASE_LIB=path of the libgputrace.so to compare against}"
ROUNDS=${ROUNDS:-7} N=${N:-1000000} KN=${KN:-100000} WARM=${WARM:-100000} PYTHON=${PYTHON:-python3}
LIB=$O/libgputrace.so B=$O/bench
W=$(mktemp -d "${TMPDIR:-/tmp}/size_codec.XXXXXX")
trap 'rm -rf "$W"' EXIT
SIM="LD_LIBRARY_PATH=$O/simcupti:$O/sim GTSIM_KERNEL_NS=20 GTSIM_LAUNCH_LATENCY_NS=0 GTSIM_ACTIVITY_CAPACITY=65536 GTSIM_CUPTI_PERIOD_MS=10 GPUTRACE_FLUSH_MS=10"
counts() { # TRACE -> "launches kernels allocs frees lost"
    "$O/gputrace-report" --json "$1" | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
tl, m = d["timeline"], d["memory"]
print(tl["launch_count"], tl.get("kernel_count", 0), m["alloc_count"], m["free_count"], d["trace"]["lost_records"])'
}
echo "== sizes (bytes per event)"
for v in base on off; do
    case $v in
        base) lib=$BASE_LIB env= ;;
        on) lib=$LIB env= ;;
        off) lib=$LIB env=GPUTRACE_COMPRESS=0 ;;
    esac
    env $SIM $env GTSIM_ACTIVITY_CAPACITY=$((KN + 1000)) GPUTRACE_OUTPUT=$W/pair-$v.trace LD_PRELOAD=$lib $B/bench_launch launch $KN 1 0 >/dev/null
    env $SIM $env GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$W/alloc-$v.trace LD_PRELOAD=$lib $B/bench_launch alloc $N 1 $WARM >/dev/null
    env $SIM $env GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$W/launch-$v.trace LD_PRELOAD=$lib $B/bench_launch launch $N 1 $WARM >/dev/null
    env $SIM $env GPUTRACE_CUPTI=off GPUTRACE_OUTPUT=$W/allocstk-$v.trace LD_PRELOAD=$lib $B/bench_launch alloc $N 1 $WARM >/dev/null
    for t in pair alloc launch allocstk; do
        f=$W/$t-$v.trace
        set -- $(counts "$f")
        bytes=$(stat -c %s "$f")
        case $t in pair) k=$2 what="launch+kernel pair (CUPTI, default stacks; kernels $2 of $1 launches)" ;;
                   launch) k=$1 what="launch (no CUPTI, no stacks)" ;;
                   alloc) k=$3 what="alloc+free pair (no stacks; frees $4)" ;;
                   allocstk) k=$3 what="alloc+free pair (default stacks; frees $4)" ;; esac
        echo "size $v $t bytes=$bytes count=$k lost=$5 per=$(echo "$bytes $k" | awk '{printf "%.2f", $1 / $2}')  # $what"
    done
done
echo "== launch overhead: bench_launch launch $N 1 $WARM, $ROUNDS rounds"
vars="none base on off"
r=1
while [ $r -le "$ROUNDS" ]; do
    for v in $vars; do
        case $v in
            none) pre= env= ;;
            base) pre=$BASE_LIB env= ;;
            on) pre=$LIB env= ;;
            off) pre=$LIB env=GPUTRACE_COMPRESS=0 ;;
        esac
        rm -f "$W/o.trace"
        if [ -n "$pre" ]; then
            line=$(env $SIM $env GPUTRACE_CUPTI=off GPUTRACE_STACKS=none GPUTRACE_OUTPUT=$W/o.trace LD_PRELOAD=$pre $B/bench_launch launch $N 1 $WARM)
        else
            line=$(env $SIM $B/bench_launch launch $N 1 $WARM)
        fi
        echo "round=$r var=$v $line" >>"$W/raw"
    done
    vars="$(echo $vars | cut -d' ' -f2-) $(echo $vars | cut -d' ' -f1)" # rotate
    r=$((r + 1))
done
"$PYTHON" - "$W/raw" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    d = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    rows.setdefault(int(d["round"]), {})[d["var"]] = (float(d["ns_per_op"]), float(d["cpu_ns_per_op"]))
for v in ["none", "base", "on", "off"]:
    ns = [r[v][0] for r in rows.values()]
    cpu = [r[v][1] for r in rows.values()]
    add = [r[v][0] - r["none"][0] for r in rows.values()]
    addc = [r[v][1] - r["none"][1] for r in rows.values()]
    print("overhead %-4s ns/launch median %.1f (min %.1f max %.1f) added %.1f; cpu %.1f added %.1f"
          % (v, statistics.median(ns), min(ns), max(ns), statistics.median(add), statistics.median(cpu),
             statistics.median(addc)))
PY
