# The simulated driver on its own (no shim): exact memory accounting, error codes, resolver rules,
# stream/event timing, activity log, call counts, GTSIM_DISTINCT_POINTERS (tests/progs/sim_selftest.c).
. "$SRC/tests/lib.sh"
[ -x "$PROGS/sim_selftest" ] || fail "$PROGS/sim_selftest not built (make fixtures)"
if ! untraced "$PROGS/sim_selftest" > selftest.out 2>&1; then
    grep -v '^ok ' selftest.out
    fail "sim_selftest failed"
fi
tail -n 1 selftest.out
grep -q '^[0-9]* checks, 0 failed$' selftest.out || fail "no summary line"
