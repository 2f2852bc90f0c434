# memory_stats() samples every GPUTRACE_SAMPLE_MS and a snapshot at the new high of reserved
# memory (GPUTRACE_TORCH=history): a peak that lasts 1.5 s and is freed before exit is caught by
# that snapshot, so its breakdown by Python line is exact and names the line that holds it.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GPUTRACE_SAMPLE_MS=50 GPUTRACE_TORCH=history torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" sampled_peak pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py sampled_peak"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" sampled_peak r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ"
