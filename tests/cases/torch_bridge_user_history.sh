# The program records allocator history itself (enabled="all", its own ring) before the bridge
# starts, and GPUTRACE_TORCH=history asks for history too: the program's settings are kept (its
# ring still holds every allocation), the trace says so, and the bridge uses its frames.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GPUTRACE_TORCH=history torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" user_history pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py user_history"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" user_history r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ"
"$GT_REPORT" --dump t.trace | grep -q "records allocator history itself; its settings are kept" ||
    fail "no note that the program's history settings were kept"
