# GPU idle gaps (issue 6): 200 tiny kernels launched back to back: gaps under 10 us are launch latency.
# Gaps, histogram, windows and HTA categories exact against the simulated GPU's ground truth
# (tests/progs/idle_check.py); causes and length bounds from the construction (tests/progs/idle.c).
# test: alone (gaps of given lengths: cases beside it would stretch them)
. "$SRC/tests/lib.sh"
[ -z "$tsan_rt" ] || skip "under ThreadSanitizer the host runs 5-15x slower, so gaps between back-to-back launches get host-busy phases this case excludes; it runs in the plain and ASan builds"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
# Under a sanitizer the host may be too slow for launches within 10 us (the checker says so).
[ -z "$asan_rt$tsan_rt" ] || export IDLE_SANITIZED=1
got=$(env GPUTRACE_STACKS=none GTSIM_LOG="$PWD/sim.log" sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/idle" tiny') || fail "traced run failed: $got"
expect_eq "output" "$got" "idle tiny ok"
"$GT_REPORT" --json --all-gaps run.trace > run.json || fail "report failed"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" "$SRC/tests/progs/idle_check.py" tiny sim.log run.json run.dump || fail "idle gaps differ"
"$GT_REPORT" run.trace > run.txt || fail "text report failed"
grep -q "^gpu idle" run.txt || fail "text report has no idle section"
[ -n "${IDLE_SANITIZED:-}" ] || grep -q "launch latency" run.txt || fail "text report: no 'launch latency' gap"
