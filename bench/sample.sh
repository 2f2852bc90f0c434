#!/bin/sh
# Cost of host stack samples per second per thread (issue 20 part 2): bench_sample traced with
# GPUTRACE_SAMPLE_HZ=0 and with samples at 100, 250 and 1000 Hz, interleaved, ROUNDS rounds of SECS s.
# sleep: process CPU time per second (the sampler's /proc reads and walks of the blocked thread);
# spin: work per second lost by the computing thread (signal, handler walk). Medians.
# Usage: O=build sh bench/sample.sh  (after make all fixtures); prints a Markdown table.
set -eu
O=${O:-build}
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-2}
cc -O2 -D_GNU_SOURCE -Iinclude -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$O/bench/bench_sample" \
    bench/bench_sample.c -L"$O/sim" -Wl,-rpath-link,"$O/sim" -lcuda
run() { # mode hz
    rm -f "$O/bench/sample.trace"*
    LD_LIBRARY_PATH="$O/simcupti:$O/sim" GPUTRACE_OUTPUT="$O/bench/sample.trace" \
        GPUTRACE_SAMPLE_HZ=$2 LD_PRELOAD="$O/libgputrace.so" "$O/bench/bench_sample" $1 "$SECS"
}
out=$O/bench/sample.raw
: > "$out"
for r in $(seq "$ROUNDS"); do
    for mode in sleep spin; do
        for hz in 0 100 250 1000; do
            echo "$mode $hz $(run $mode $hz)" >> "$out"
        done
    done
done
python3 - "$out" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, hz, w, c = line.split()
    rows.setdefault((mode, int(hz)), []).append((float(w.split("=")[1]), float(c.split("=")[1])))
med = {k: (statistics.median(a for a, _ in v), statistics.median(b for _, b in v))
       for k, v in rows.items()}
print("| thread | rate | added CPU (% of one core) | work lost |")
print("|---|---:|---:|---:|")
for mode in ("sleep", "spin"):
    w0, c0 = med[(mode, 0)]
    for hz in (100, 250, 1000):
        w, c = med[(mode, hz)]
        if mode == "sleep":
            print("| blocked (sleep) | %d Hz | %.3f%% | - |" % (hz, (c - c0) / 1e7))
        else:
            print("| running (spin) | %d Hz | %.3f%% | %.2f%% |" % (hz, (c - c0) / 1e7,
                                                               100 * (w0 - w) / w0))
PY
