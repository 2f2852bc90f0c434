# PyTorch's cache held the memory: the driver refused a new segment, PyTorch released its cache and the retry succeeded: one driver-level failure judged cached (allocator pytorch), no allocator OOM (tests/torch/bridge.py cached; figures compared by tests/torch/bridge_check.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" cached pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py cached"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" cached r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ"
