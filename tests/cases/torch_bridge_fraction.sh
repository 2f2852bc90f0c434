# set_per_process_memory_fraction(0.25) refuses a request no driver call sees: an allocator OOM judged limit, with the fraction's maximum (tests/torch/bridge.py fraction; figures compared by tests/torch/bridge_check.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" fraction pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py fraction"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" fraction r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ"
