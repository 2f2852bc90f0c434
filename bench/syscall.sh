#!/bin/sh
# Cost of the shim's syscall(2) wrapper (preload/waits.c, issue 20): bench/bench_syscall.c
# untraced and traced (samples at the default rate), interleaved, ROUNDS rounds; prints the
# medians in ns per call and the differences. Usage: O=build sh bench/syscall.sh (after make all
# fixtures).
set -eu
O=${O:-build}
ROUNDS=${ROUNDS:-5}
N=${N:-1000000}
mkdir -p "$O/bench"
cc -O2 -D_GNU_SOURCE -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$O/bench/bench_syscall" \
    bench/bench_syscall.c -L"$O/sim" -Wl,-rpath-link,"$O/sim" -lcuda
out=$O/bench/syscall.raw
: > "$out"
for r in $(seq "$ROUNDS"); do
    echo "untraced $(LD_LIBRARY_PATH="$O/simcupti:$O/sim" "$O/bench/bench_syscall" "$N")" >> "$out"
    rm -f "$O/bench/syscall.trace"*
    echo "traced $(LD_LIBRARY_PATH="$O/simcupti:$O/sim" GPUTRACE_OUTPUT="$O/bench/syscall.trace" \
        LD_PRELOAD="$O/libgputrace.so" "$O/bench/bench_syscall" "$N")" >> "$out"
done
rm -f "$O/bench/syscall.trace"*
python3 - "$out" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    how, _, g, _, s = line.split()
    rows.setdefault(how, []).append((float(g), float(s)))
med = {k: [statistics.median(x[i] for x in v) for i in (0, 1)] for k, v in rows.items()}
print("| call | untraced (ns) | traced (ns) | added (ns) |")
print("|---|---:|---:|---:|")
for i, name in enumerate(("syscall(SYS_getpid)", "syscall(SYS_ppoll, zero time)")):
    u, t = med["untraced"][i], med["traced"][i]
    print(f"| {name} | {u:.1f} | {t:.1f} | {t - u:+.1f} |")
PY
