# A catch-and-continue loop (OOM caught, request halved) gives one OOM per attempt, each with its own figures (tests/torch/bridge.py halving; figures compared by tests/torch/bridge_check.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" halving pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py halving"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" halving r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ"
