# Which of PyTorch's allocator events the bridge writes with the next snapshot (GPUTRACE_TORCH=history):
# PyTorch lists them all anew in every snapshot, with their times converted anew (they can move by
# a microsecond or more), so the bridge finds where it stopped by the events' action, address and
# size, with their times within a bound. tests/torch/trace_tail.py checks that on the real caching
# allocator's events: times rounded and slewed, a clock step, the list wrapped, the history cleared,
# the last window of events repeated.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run "$TORCH_PY" "$SRC/tests/torch/trace_tail.py" "$SRC" > out.txt 2>&1 || { cat out.txt; fail "trace_tail.py"; }
cat out.txt
grep -q '^trace_tail: ok' out.txt || fail "trace_tail.py did not finish"
