#!/bin/sh
# Host-sample stress (issue 20): the real PyTorch (tests/torch/traced.py) traced on the simulated
# stack with GPUTRACE_SAMPLE_HZ high, JOBS runs at once for SECONDS, beside BUSY busy loops; counts
# runs that died of a signal and keeps their output and core (ulimit -c) under DIR.
# Usage: GT_VENV=/work/venv O=build sh bench/sample_stress.sh [SECONDS] [HZ] [JOBS] [BUSY] [DIR]
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-build}
secs=${1:-60} hz=${2:-2000} jobs=${3:-2} busy=${4:-1} dir=${5:-/tmp/gt-sample-stress}
py=${GT_VENV:?set GT_VENV to the torch virtualenv}/bin/python
mkdir -p "$dir"
ulimit -c unlimited 2>/dev/null || true
bpids=""
i=0
while [ $i -lt "$busy" ]; do (while :; do :; done) & bpids="$bpids $!"; i=$((i + 1)); done
end=$(($(date +%s) + secs))
worker() {
    w=$1 n=0 bad=0
    while [ "$(date +%s)" -lt "$end" ]; do
        n=$((n + 1))
        d=$dir/w$w.$n
        mkdir -p "$d"
        (cd "$d" && GPUTRACE_SAMPLE_HZ=$hz GTSIM_MEM_BYTES=1073741824 \
            "$src/tests/simrt/run-torch" -b "$src/$O" -t "$d/t.trace" "$py" \
            "$src/tests/torch/traced.py" "$d/stats.json" > "$d/out.txt" 2>&1)
        rc=$?
        if [ $rc -ge 128 ]; then bad=$((bad + 1)); echo "w$w run $n: rc $rc ($d)"; else rm -rf "$d"; fi
    done
    echo "worker $w: $n runs, $bad died of a signal"
}
i=0
wp=""
while [ $i -lt "$jobs" ]; do worker $i & wp="$wp $!"; i=$((i + 1)); done
wait $wp
for p in $bpids; do kill "$p"; done
