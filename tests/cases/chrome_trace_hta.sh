# Holistic Trace Analysis reads our --chrome-trace export (issue 19): its temporal breakdown
# (idle / compute / non-compute) and its per-stream idle breakdown (host wait / kernel wait /
# other) equal the report's own figures, exactly when HTA keeps nanoseconds and within its
# microsecond rounding by default; compute time equals the simulated GPU's ground truth. On the
# idle scenarios (host busy, synchronize, allocation, back-to-back tiny kernels), on kernels
# queued on three streams with copies, memsets and graph launches (every HTA category) and on
# three ranks with NCCL kernels (non-compute time), loaded as ranks.
# HTA comes from the test virtualenv (GT_VENV, default .venv in the source tree: make torch-env).
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
VPY="${GT_VENV:-$SRC/.venv}/bin/python"
"$VPY" -c "import hta" 2>/dev/null || skip "holistictraceanalysis not installed in ${GT_VENV:-$SRC/.venv}: run 'make torch-env' (GT_VENV= for another virtualenv)"
# HTA_ROUND=0: not with HTA's default rounding, which gives kernels under 1 us a negative length
# and then fails its own assertion (idle_time <= kernel_time) in the temporal breakdown.
hta() { # EXPORT_DIR REPORT_JSON [SIM_LOG...]: both ways HTA reads times
    HTA_DISABLE_NS_ROUNDING=1 "$VPY" "$SRC/tests/progs/hta_check.py" "$@" > hta.out 2>&1 ||
        fail "HTA (ns) on $1: $(tail -n 3 hta.out)"
    grep -q "figures equal (exact)" hta.out || fail "HTA (ns) on $1: $(tail -n 1 hta.out)"
    [ "${HTA_ROUND:-1}" = 0 ] && return
    "$VPY" "$SRC/tests/progs/hta_check.py" "$@" > hta.out 2>&1 ||
        fail "HTA (us) on $1: $(tail -n 3 hta.out)"
}
# the sync scenario also with NVML's samples (the simulated NVML, where built): their counters
# sit on the device's pid, beside its GPU work, and must change none of HTA's figures
nvml=
[ -f "$O/simnvml/libnvidia-ml.so.1" ] && nvml="LD_LIBRARY_PATH=$O/simnvml GPUTRACE_NVML_MS=5"
for mode in host sync alloc tiny; do
    mkdir "$mode"
    env $([ $mode = sync ] && echo $nvml) GTSIM_ALLOC_LATENCY_NS=10000000 GTSIM_LOG="$PWD/$mode.log" sh -c \
        '. "$SRC/tests/lib.sh"; traced "$1.trace" "$PROGS/idle" "$1"' - "$mode" > /dev/null ||
        fail "traced run ($mode) failed"
    "$GT_REPORT" --json "$mode.trace" > "$mode.json" || fail "report ($mode) failed"
    "$GT_REPORT" --chrome-trace "$mode/$mode.json" "$mode.trace" || fail "export ($mode) failed"
    HTA_ROUND=$([ $mode = tiny ] && echo 0 || echo 1) hta "$mode" "$mode.json" "$mode.log"
done
if [ -n "$nvml" ]; then
    n=$(grep -o '"name":"SM clock (NVML)","pid":0' sync/sync.json | wc -l)
    [ "$n" -ge 2 ] || fail "the sync scenario's export has $n SM clock counters on device 0's pid"
    echo "HTA with $n NVML samples' counters on device 0: figures unchanged"
fi
# kernels queued on three streams, copies, memsets and a graph launched twice (tests/progs/timeline.c)
mkdir timeline
GTSIM_LOG="$PWD/timeline.log" traced timeline.trace "$PROGS/timeline" > /dev/null || fail "timeline run failed"
"$GT_REPORT" --json timeline.trace > timeline.json || fail "report (timeline) failed"
"$GT_REPORT" --chrome-trace timeline/timeline.json timeline.trace || fail "export (timeline) failed"
hta timeline timeline.json timeline.log

# three ranks with NCCL-named kernels (tests/cases/multi_collective.sh's construction)
pids=
for r in 0 1 2; do
    GTSIM_LOG="$PWD/r$r.log" traced "r$r.trace" "$PROGS/multi_rank" gpu $r 3 1 2 . > "r$r.out" &
    pids="$pids $!"
done
for p in $pids; do wait $p || fail "a rank failed"; done
"$GT_REPORT" --json r0.trace r1.trace r2.trace > all.json || fail "report failed"
"$GT_REPORT" --chrome-trace ranks r0.trace r1.trace r2.trace || fail "export of the ranks failed"
[ -f ranks/rank-0.json ] && [ -f ranks/rank-1.json ] && [ -f ranks/rank-2.json ] ||
    fail "export: $(ls ranks)"
hta ranks all.json r0.log r1.log r2.log
nc=$(jget all.json "d['processes'][0]['timeline']['devices'][0]['span_ns'] - d['processes'][0]['timeline']['devices'][0]['compute_ns'] - d['processes'][0]['timeline']['devices'][0]['idle_ns']")
[ "$nc" -ge 2 ] || fail "rank 0 has no non-compute (NCCL) time: $nc ns"
# the categories seen: the scenarios must exercise each of HTA's three
"$PYTHON" - host.json sync.json alloc.json tiny.json timeline.json all.json <<'PY' || fail "an HTA category is never exercised"
import json, sys
seen = set()
for p in sys.argv[1:]:
    d = json.load(open(p))
    for s in [x for r in d.get("processes", [d]) for x in r["timeline"]["hta"]["streams"]]:
        seen |= {c for c in ("host_wait", "kernel_wait", "other") if s[c + "_count"]}
sys.exit(0 if seen == {"host_wait", "kernel_wait", "other"} else f"seen only {sorted(seen)}")
PY

