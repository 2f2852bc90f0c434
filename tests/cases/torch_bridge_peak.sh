# GPUTRACE_TORCH=history: the allocator-level peak equals max_memory_allocated / max_memory_reserved and its breakdown names the Python lines that hold it (tests/torch/bridge.py peak; figures compared by tests/torch/bridge_check.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GPUTRACE_TORCH=history torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" peak pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py peak"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" peak r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ"
