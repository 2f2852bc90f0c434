# GPU idle gaps (issue 20): synchronize, then 30 ms loading the next batch, then launch: each gap
# is split into phases: host busy for the 30 ms (its cause), the synchronize's few microseconds and
# the launch latency apart. Gaps exact against the simulated GPU's ground truth
# (tests/progs/idle_check.py); phases from the construction (tests/progs/idle.c).
# test: alone (gaps of given lengths: cases beside it would stretch them)
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
got=$(env  GTSIM_LOG="$PWD/sim.log" sh -c '. "$SRC/tests/lib.sh"; traced run.trace "$PROGS/idle" syncload') || fail "traced run failed: $got"
expect_eq "output" "$got" "idle syncload ok"
"$GT_REPORT" --json --all-gaps run.trace > run.json || fail "report failed"
"$GT_REPORT" --dump run.trace > run.dump || fail "dump failed"
"$PYTHON" "$SRC/tests/progs/idle_check.py" syncload sim.log run.json run.dump || fail "idle gaps differ"
"$GT_REPORT" run.trace > run.txt || fail "text report failed"
grep -q "host busy: after k_work" run.txt || fail "text report: no 'host busy: after k_work' gap"
grep -q "in cuStreamSynchronize for .* of it, at sync_then_load" run.txt ||
    fail "text report: the synchronize inside the gap is not shown"
grep -q "phases: host busy [0-9.]* ms, synchronize" run.txt || fail "text report: no phases line"
