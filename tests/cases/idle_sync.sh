# GPU idle gaps (issue 6): cuStreamSynchronize then launch: 3 sync bubbles, cause synchronize at the sync's call site.
# Gaps, histogram, windows and HTA categories exact against the simulated GPU's ground truth
# (tests/progs/idle_check.py); causes and length bounds from the construction (tests/progs/idle.c).
# Each synchronize wakes 10 ms after the kernel ends (GTSIM_SYNC_WAKE_NS, as a blocking sync
# does): a gap takes its largest phase (issue 20), and without the wake-up the synchronize's few
# microseconds lost to the host's few microseconds between its return and the next launch
# whenever a loaded machine descheduled the thread there (.ci/run at a load of 8 saw it once).
# test: alone (gaps of given lengths: cases beside it would stretch them)
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
got=$(env GTSIM_SYNC_WAKE_NS=10000000 GTSIM_LOG="$PWD/sim.log" sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/idle" sync') || fail "traced run failed: $got"
expect_eq "output" "$got" "idle sync ok"
"$GT_REPORT" --json --all-gaps run.trace > run.json || fail "report failed"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" "$SRC/tests/progs/idle_check.py" sync sim.log run.json run.dump || fail "idle gaps differ"
"$GT_REPORT" run.trace > run.txt || fail "text report failed"
grep -q "^gpu idle" run.txt || fail "text report has no idle section"
grep -q "synchronize: after k_sync" run.txt || fail "text report: no 'synchronize: after k_sync' gap"
