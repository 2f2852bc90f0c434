# GPU idle gaps (issue 6): a slow cuMemAlloc (GTSIM_ALLOC_LATENCY_NS=10 ms) stalls the stream: 3 gaps, cause allocation.
# Gaps, histogram, windows and HTA categories exact against the simulated GPU's ground truth
# (tests/progs/idle_check.py); causes and length bounds from the construction (tests/progs/idle.c).
# test: alone (gaps of given lengths: cases beside it would stretch them)
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
got=$(env GTSIM_ALLOC_LATENCY_NS=10000000 GTSIM_LOG="$PWD/sim.log" sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/idle" alloc') || fail "traced run failed: $got"
expect_eq "output" "$got" "idle alloc ok"
"$GT_REPORT" --json --all-gaps run.trace > run.json || fail "report failed"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" "$SRC/tests/progs/idle_check.py" alloc sim.log run.json run.dump || fail "idle gaps differ"
"$GT_REPORT" run.trace > run.txt || fail "text report failed"
grep -q "^gpu idle" run.txt || fail "text report has no idle section"
grep -q "allocation: after k_short" run.txt || fail "text report: no 'allocation: after k_short' gap"
