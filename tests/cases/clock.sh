# The shim's clock end to end: launch records carry CLOCK_MONOTONIC times. Two Python threads
# launch through ctypes, each reading CLOCK_MONOTONIC just before and just after every launch;
# each launch record's ts and ts + dur_ns must lie between the two readings, give or take
# GT_CLOCK_MAX_ERR_NS (2 us; preload/clock.h). Run with the automatic clock, which must be the
# counter where /proc/cpuinfo and the kernel's clocksource say it is usable (checked through the
# GPUTRACE_DEBUG log), and with GPUTRACE_CLOCK=monotonic.
. "$SRC/tests/lib.sh"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON"
E=2000
N=1500 # launches per thread, 0.2 ms apart: well past the first anchor (50 ms) with 10 ms flushes

cat > launches.py <<'EOF'
import ctypes, sys, threading, time
cu = ctypes.CDLL("libcuda.so.1")
def check(r, what):
    if r != 0:
        sys.exit(f"{what} returned {r}")
check(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
mod = ctypes.c_void_p()
check(cu.cuModuleLoadData(ctypes.byref(mod), b"kernel clk_kernel 1000\n"), "cuModuleLoadData")
fn = ctypes.c_void_p()
check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"clk_kernel"), "cuModuleGetFunction")
n = int(sys.argv[1])
out = {}
def worker():
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    one = ctypes.c_uint(1)
    mono = time.CLOCK_MONOTONIC
    ab = []
    for _ in range(n):
        a = time.clock_gettime_ns(mono)
        r = cu.cuLaunchKernel(fn, one, one, one, one, one, one, ctypes.c_uint(0), None, None, None)
        b = time.clock_gettime_ns(mono)
        check(r, "cuLaunchKernel")
        ab.append((a, b))
        time.sleep(0.0002)
    out[threading.get_native_id()] = ab
ts = [threading.Thread(target=worker) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
with open("brackets.txt", "w") as f:
    for tid, ab in out.items():
        for k, (a, b) in enumerate(ab):
            f.write(f"{tid} {k + 1} {a} {b}\n")
print("ok")
EOF

# check TRACE: every launch record inside its bracket; prints launches, within, outside.
check() {
    "$GT_REPORT" --dump "$1" > dump.txt || fail "dump of $1 failed"
    "$PYTHON" - "$1" "$E" <<'EOF'
import re, struct, sys
trace, e = sys.argv[1], int(sys.argv[2])
with open(trace, "rb") as f:
    start = struct.unpack_from("<Q", f.read(64), 40)[0]  # gt_file_header.start_monotonic_ns
br = {}
for line in open("brackets.txt"):
    tid, k, a, b = map(int, line.split())
    br[(tid, k)] = (a, b)
n = inside = 0
worst = 0
for line in open("dump.txt"):
    m = re.match(r"(\d+) tid=(\d+) LAUNCH \S+ .*corr=0x([0-9a-f]+) .*dur_ns=(\d+)", line)
    if not m:
        continue
    rel, tid, corr, dur = int(m[1]), int(m[2]), int(m[3], 16), int(m[4])
    ts = start + rel
    a, b = br[(tid, corr & ((1 << 40) - 1))]
    n += 1
    off = max(a - ts, ts + dur - b, 0)
    worst = max(worst, off)
    inside += off <= e
print(n, inside, n - inside, worst)
EOF
}

# What the automatic clock must be here (the shim's own rule, preload/clock.c).
want=monotonic
if [ "$(uname -m)" = x86_64 ] &&
    [ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)" = tsc ] &&
    grep -m1 '^flags' /proc/cpuinfo | grep -qw constant_tsc &&
    grep -m1 '^flags' /proc/cpuinfo | grep -qw nonstop_tsc; then
    want=tsc
elif [ "$(uname -m)" = aarch64 ]; then
    want=cntvct
fi

for mode in auto monotonic; do
    rm -f t.trace brackets.txt
    if [ $mode = auto ]; then
        out=$(GPUTRACE_DEBUG=1 GPUTRACE_FLUSH_MS=10 traced t.trace "$PYTHON" launches.py $N 2> log.txt) ||
            fail "$mode: script failed: $out $(tail -5 log.txt)"
        expect_clock=$want
    else
        out=$(GPUTRACE_CLOCK=monotonic GPUTRACE_DEBUG=1 GPUTRACE_FLUSH_MS=10 traced t.trace "$PYTHON" launches.py $N 2> log.txt) ||
            fail "$mode: script failed: $out $(tail -5 log.txt)"
        expect_clock=monotonic
    fi
    expect_eq "$mode: output" "$out" ok
    if [ $expect_clock = monotonic ]; then
        grep -q "gputrace: clock: clock_gettime" log.txt || fail "$mode: log says $(grep 'clock:' log.txt)"
        ! grep -q "from now on" log.txt || fail "$mode: the counter was used: $(grep 'clock:' log.txt)"
    else
        grep -q "gputrace: clock: $expect_clock from now on" log.txt ||
            fail "$mode: the counter line never went live: $(grep 'clock:' log.txt)"
        ! grep -q "clock_gettime from now on" log.txt || fail "$mode: gave up: $(grep 'clock:' log.txt)"
    fi
    set -- $(check t.trace)
    echo "$mode ($expect_clock): $1 launches, $3 outside their bracket by more than $E ns (worst $4 ns beyond)"
    expect_eq "$mode: launches" "$1" $((2 * N))
    expect_eq "$mode: launches outside their CLOCK_MONOTONIC bracket" "$3" 0
done
