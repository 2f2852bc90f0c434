# Live tensors fill the device: an allocator OOM judged exhausted, PyTorch's figures (tests/torch/bridge.py exhausted; figures compared by tests/torch/bridge_check.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" exhausted pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py exhausted"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" exhausted r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ"
