# GPU idle gaps ended by an async copy or memset (issue 20): each step is cuMemcpyHtoDAsync (or
# cuMemsetD8Async), a kernel, cuStreamSynchronize and 30 ms in load_batch. The copy (memset) is
# linked to its call through our correlation id like a launch: each gap is host busy for the 30
# ms, at the copy's call site (copy_then_load), not unknown. Gaps exact against the simulated
# GPU's ground truth (tests/progs/idle_check.py).
. "$SRC/tests/lib.sh"
[ -f "$SIMCUPTI_DIR/libcupti.so.13" ] || skip "simulated CUPTI not built"
for mode in copyload setload; do
    got=$(env GTSIM_LOG="$PWD/$mode.log" sh -c '. "$SRC/tests/lib.sh"; traced '$mode'.trace "$PROGS/idle" '$mode) ||
        fail "$mode: traced run failed: $got"
    expect_eq "$mode: output" "$got" "idle $mode ok"
    "$GT_REPORT" --json --all-gaps $mode.trace > $mode.json || fail "$mode: report failed"
    "$GT_REPORT" --dump $mode.trace > $mode.dump || fail "$mode: dump failed"
    "$PYTHON" "$SRC/tests/progs/idle_check.py" $mode $mode.log $mode.json $mode.dump ||
        fail "$mode: idle gaps differ"
    # not counted as launches: the calls table has them, the launches the 4 kernels only
    "$GT_REPORT" $mode.trace > $mode.txt || fail "$mode: text report failed"
done
