# The simulated CUPTI (tests/simcupti) driven through dlopen like any CUPTI client, against the
# simulated driver: record kinds and sizes, external correlation, GPU times to the nanosecond,
# flush semantics, the delivery thread, dropped records, graphs, the subscriber slot,
# GTSIM_CUPTI_OWNER / _FAIL / _VERSION, fork, and concurrent launches and flushes.
. "$SRC/tests/lib.sh"
[ -e "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built ($SIMCUPTI_DIR/libcupti.so.13)"
[ -x "$PROGS/simcupti_selftest" ] || skip "$PROGS/simcupti_selftest not built"
lp="$SIMCUPTI_DIR:$SIM_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
st() { env LD_LIBRARY_PATH="$lp" "$@"; }

st GTSIM_LAUNCH_LATENCY_NS=5000 GTSIM_CUPTI_PERIOD_MS=60000 GTSIM_LOG="$PWD/sim.log" timeout 120 "$PROGS/simcupti_selftest" main ||
    fail "main"
st GTSIM_CUPTI_OWNER="Nsight Systems" timeout 60 "$PROGS/simcupti_selftest" owner || fail "owner"
st GTSIM_CUPTI_FAIL=cuptiActivityEnable,cuptiSubscribe_v2 GTSIM_CUPTI_VERSION=120900 \
    timeout 60 "$PROGS/simcupti_selftest" fail || fail "fail"
GTSIM_FORK_KEEPS_DRIVER=1 st timeout 60 "$PROGS/simcupti_selftest" fork || fail "fork"
i=0
while [ $i -lt 5 ]; do
    st timeout 120 "$PROGS/simcupti_selftest" stress >/dev/null || fail "stress (run $i)"
    i=$((i + 1))
done
echo "simulated CUPTI: main, owner, fail, fork and 5 stress runs passed"
