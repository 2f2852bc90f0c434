# The GPU timeline from the (simulated) CUPTI matches the simulated GPU's ground truth to the
# nanosecond; without CUPTI, or with CUPTI owned by another profiler or failing, the program runs
# on unchanged and the memory report stays exact, with a plain notice (issue 3).
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
MiB=1048576
want=$(untraced "$PROGS/timeline") || fail "untraced run failed: $want"
check_memory() { # json
    expect_eq "$1 allocs" "$(jget "$1" "d['memory']['alloc_count']")" 2
    expect_eq "$1 peak" "$(jget "$1" "d['memory']['peak_bytes']")" $((4 * MiB))
    expect_eq "$1 leaked" "$(jget "$1" "d['memory']['leaked_bytes']")" $((3 * MiB))
    expect_eq "$1 launches" "$(jget "$1" "d['timeline']['launch_count']")" 13
}
got=$(GTSIM_LOG="$PWD/sim.log" traced on.trace "$PROGS/timeline") || fail "traced run failed"
expect_eq "output" "$got" "$want"
"$GT_REPORT" --json on.trace > on.json || fail "report failed"
check_memory on.json
"$PYTHON" "$SRC/tests/progs/timeline_check.py" sim.log on.json || fail "timeline differs from ground truth"
"$GT_REPORT" on.trace > on.txt || fail "text report failed"
grep -q "k_long(float\*)" on.txt || fail "text report does not show the demangled kernel name"

for case in off owned failed; do
    case $case in
      off) env="GPUTRACE_CUPTI=off"; notice="off" ;;
      owned) env="GTSIM_CUPTI_OWNER=nsys-test"; notice="nsys-test" ;;
      failed) env="GTSIM_CUPTI_FAIL=cuptiActivityRegisterCallbacks"; notice="cuptiActivityRegisterCallbacks" ;;
    esac
    got=$(env $env sh -c '. "$SRC/tests/lib.sh"; traced "$0.trace" "$PROGS/timeline"' "$case") || fail "$case: traced run failed"
    expect_eq "$case output" "$got" "$want"
    "$GT_REPORT" --json "$case.trace" > "$case.json" || fail "$case: report failed"
    check_memory "$case.json"
    status=$(jget "$case.json" "d['trace']['gpu_timeline']")
    case $status in unavailable*"$notice"*) echo "$case: $status" ;; *) fail "$case: gpu_timeline '$status'" ;; esac
    expect_eq "$case kernels" "$(jget "$case.json" "d['timeline']['kernel_count']")" 0
    "$GT_REPORT" "$case.trace" | grep -q "timeline unavailable" || fail "$case: text report has no notice"
done
