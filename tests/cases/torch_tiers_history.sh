# Memory by category with allocator history (GPUTRACE_TORCH=history): the blocks no optimizer
# holds are told apart by their Python frames: the forward's blocks (under Module.__call__) are
# activations, exactly what the forward left alive by PyTorch's memory_allocated(), named by
# their line (tiers.py's layer); the input and the loss, allocated outside any module, are other.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GPUTRACE_TORCH=history tiers_run "$PWD/t.trace" out.txt "$TORCH_PY" "$SRC/tests/torch/tiers.py" adamw pt.json ||
    { cat out.txt; fail "tiers.py adamw"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
# on a failure, also the batches of block events as written (snapshot, flags: 1 a gap in the
# events, entries) and the snapshots: CI's ASan suite failed twice on this case, never here
batches() {
    "$GT_REPORT" --dump t.trace | grep -E ' TORCH_(TRACE|SNAP begin) ' | cut -c1-120
}
"$PYTHON" "$SRC/tests/torch/tiers_check.py" --history adamw r.json pt.json > check.txt ||
    { cat check.txt; batches; fail "figures differ"; }
