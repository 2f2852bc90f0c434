# The allocated peak inside cached memory (tests/torch/bridge.py cached_peak): reserved memory
# reached its high earlier, so no reserved-high snapshot comes at the allocated peak; the bridge's
# snapshot at a sample that finds allocated memory at max_memory_allocated() above every earlier
# snapshot makes the breakdown exact: it sums to max_memory_allocated and names the lines, at the
# default level (blocks named by their segments' lines: CB, CD) and with block history (the blocks'
# own lines: CC, CD).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for level in snapshots history; do
    GPUTRACE_TORCH=$level GPUTRACE_SAMPLE_MS=50 torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" cached_peak pt.json > out.txt 2>&1 ||
        { cat out.txt; fail "bridge.py cached_peak ($level)"; }
    "$GT_REPORT" --json t.trace > r.json || fail "report ($level)"
    "$PYTHON" "$SRC/tests/torch/bridge_check.py" cached_peak r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ ($level)"
    rm -f t.trace*
done
