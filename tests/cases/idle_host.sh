# GPU idle gaps (issue 6): host computation between launches: 3 gaps, cause host busy, >= 3 ms each.
# Gaps, histogram, windows and HTA categories exact against the simulated GPU's ground truth
# (tests/progs/idle_check.py); causes and length bounds from the construction (tests/progs/idle.c).
# test: alone (gaps of given lengths: cases beside it would stretch them)
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
got=$(env  GTSIM_LOG="$PWD/sim.log" sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/idle" host') || fail "traced run failed: $got"
expect_eq "output" "$got" "idle host ok"
"$GT_REPORT" --json --all-gaps run.trace > run.json || fail "report failed"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" "$SRC/tests/progs/idle_check.py" host sim.log run.json run.dump || fail "idle gaps differ"
"$GT_REPORT" run.trace > run.txt || fail "text report failed"
grep -q "^gpu idle" run.txt || fail "text report has no idle section"
grep -q "host busy: after k_work" run.txt || fail "text report: no 'host busy: after k_work' gap"
