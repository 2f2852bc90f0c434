# GPU idle time by what the host was doing (issue 20 part 3): host stack samples joined with the
# gaps. Three loops that idle the GPU 30 ms between kernels: sleeping in load_batch (I/O or
# waiting, off CPU), computing in compute_features (on CPU), waiting in queue_get for a loader
# thread (data loading). Each comes out named after its function, with its class.
# test: alone (gaps of given lengths: cases beside it would stretch them)
. "$SRC/tests/lib.sh"
# Under ThreadSanitizer the sample signal's handler derives no unwind rule it lacks (it takes no
# lock: it may interrupt ThreadSanitizer's runtime); the sampler thread derives the ones it missed
# at its next tick (gt_unwind_learn), so only the first samples in new code stop at their first
# frame: compute_features kept 91-93% of cpuload's idle time there (3 runs), above the 80% asked.
modes="syncload load_batch io_wait off|queue queue_get data_loading off|cpuload compute_features cpu on"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
[ -r /proc/self/task/$$/syscall ] || skip "no /proc/PID/task/TID/syscall on this kernel"
IFS='|'
for m in $modes; do
    IFS=' '
    set -- $m
    got=$(GPUTRACE_SAMPLE_HZ=500 traced $1.trace "$PROGS/idle" $1) || fail "traced run failed: $got"
    expect_eq "output" "$got" "idle $1 ok"
    "$GT_REPORT" --json $1.trace > $1.json || fail "$1: report failed"
    "$PYTHON" "$SRC/tests/progs/hostidle_check.py" $1.json $2 $3 $4 || fail "$1: idle by host site"
done
unset IFS
"$GT_REPORT" syncload.trace > syncload.txt || fail "text report failed"
grep -q "GPU 0 idle [0-9]*%: [0-9.]*% while the host was in load_batch (idle.c:[0-9]*), blocked" \
    syncload.txt || fail "text report: no 'while the host was in load_batch ..., blocked'"
# without samples: no such fields
got=$(GPUTRACE_SAMPLE_HZ=0 traced off.trace "$PROGS/idle" syncload) || fail "traced run failed"
"$GT_REPORT" --json off.trace > off.json || fail "report failed"
[ "$(jget off.json 'd["timeline"]["devices"][0]["idle_by_host_site"]')" = None ] ||
    fail "idle_by_host_site without samples"
grep -q "host samples: [0-9]* in load_batch (idle.c:[0-9]*), blocked" syncload.txt ||
    fail "text report: the longest gaps do not show their host samples"
