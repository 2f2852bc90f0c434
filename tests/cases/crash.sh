# A program that crashes leaves every record it made before the signal in the trace (issue 22):
# 10 allocations and 3 launches, then abort, a fault or an uncaught C++ exception, with a flush
# period (60 s) far longer than the run, so only the flush made on the signal can write them.
# Output and exit status are the untraced program's; the program's own handlers, installed before
# or after the tracer's, still run; a handler that recovers lets the program go on traced.
. "$SRC/tests/lib.sh"
export GPUTRACE_FLUSH_MS=60000
# Output and exit status (-N: killed by signal N, by its default action, not by an exit call).
status() { "$PYTHON" -c '
import subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
sys.stdout.write(p.stdout.decode())
print("rc=%d" % p.returncode)' "$@"; }
check() { # NAME ALLOCS LAUNCHES CLEAN PROGRAM ARGS...
    name=$1 allocs=$2 launches=$3 clean=$4; shift 4
    want=$(set +e; untraced status "$@")
    got=$(set +e; traced "$name.trace" status "$@")
    expect_eq "$name: output and exit status" "$got" "$want"
    "$GT_REPORT" --json "$name.trace" > "$name.json" 2> "$name.err" ||
        fail "$name: report failed: $(cat "$name.err")"
    j() { jget "$name.json" "$1"; }
    expect_eq "$name: allocations in the trace" "$(j "d['memory']['alloc_count']")" "$allocs"
    expect_eq "$name: launches in the trace" "$(j "d['timeline']['launch_count']")" "$launches"
    expect_eq "$name: lost records" "$(j "d['trace']['lost_records']")" 0
    expect_eq "$name: clean end" "$(j "d['trace']['clean_end']")" "$clean"
    echo "$name: $(echo "$got" | tr '\n' ' ') allocs=$(j "d['memory']['alloc_count']")"
}
for mode in abort segv bus fpe ill raise-segv before after ignore-abort; do
    check "$mode" 10 3 False "$PROGS/crash" "$mode"
done
check recover 15 3 True "$PROGS/crash" recover
traced again.trace "$PROGS/crash" recover | grep -q "action now: ours" ||
    fail "sigaction does not give back the program's own handler"
check terminate 10 3 False "$PROGS/crash_terminate"
# Python's faulthandler (installed before the tracer's handler) still prints the traceback, and
# the default action still ends the process.
cat > fh.py <<'PY'
import ctypes, os, sys
cuda = ctypes.CDLL("libcuda.so.1")
dev, ctx, p = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
cuda.cuInit(0)
cuda.cuDeviceGet(ctypes.byref(dev), 0)
cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
cuda.cuCtxSetCurrent(ctx)
for i in range(4):
    cuda.cuMemAlloc_v2(ctypes.byref(p), 1 << 20)
if sys.argv[1] == "abort":
    os.abort()
ctypes.string_at(0)
PY
for mode in abort segv; do
    got=$(set +e; traced "py_$mode.trace" status "$PYTHON" -X faulthandler -c \
        'import subprocess, sys; r = subprocess.run([sys.executable, "-X", "faulthandler", "fh.py", sys.argv[1]], stderr=subprocess.PIPE); print(r.stderr.decode().splitlines()[0]); sys.exit(-r.returncode)' "$mode")
    case $mode in abort) want="Fatal Python error: Aborted" sig=6 ;; *) want="Fatal Python error: Segmentation fault" sig=11 ;; esac
    expect_eq "python $mode: faulthandler's report and the exit status" "$got" "$want
rc=$sig"
    expect_eq "python $mode: allocations" \
        "$("$GT_REPORT" --json "py_$mode.trace" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["memory"]["alloc_count"])')" 4
done
# A crash inside the tracer's own flush (a test-only fault) neither hangs nor recurses: the
# program ends by its first signal, as without the tracer.
got=$(set +e; GPUTRACE_TEST_CRASH_FLUSH_FAULT=1 traced inner.trace timeout 20 "$PYTHON" -c '
import subprocess, sys
print(subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode)' "$PROGS/crash" abort)
expect_eq "a fault in the crash flush: the program's own signal" "$got" -6
# The GPU timeline is flushed too: the 3 kernels of the aborted run are in it.
expect_eq "abort: kernels on the GPU timeline" \
    "$(jget abort.json "d['timeline']['devices'][0]['kernel_count']")" 3
exit 0
