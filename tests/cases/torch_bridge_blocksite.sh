# Blocks without Python frames are named by the line that allocated their segment, and say so: two lines' tensors share a segment (tests/torch/bridge.py shared); at the default level (no block history) both are the segment's line, site_source "segment", with the bytes of the segment's live blocks from PyTorch's own _snapshot(); with GPUTRACE_TORCH=history each block's own line wins (site_source "block"); under expandable_segments:True the segment is named by the cuMemCreate mapped at its start.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/d.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" shared pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py shared"; }
"$GT_REPORT" --json d.trace > d.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" shared d.json pt.json "$SRC/tests/torch/bridge.py" ||
    fail "default level: figures differ"
"$GT_REPORT" d.trace > d.txt || fail "text report"
grep -q "held by: 12.0 MiB in segments allocated at .*bridge.py:" d.txt ||
    { cat d.txt; fail "text: the segment's site not said"; }
GPUTRACE_TORCH=history torch_run -t "$PWD/h.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" shared_history pth.json > outh.txt 2>&1 ||
    { cat outh.txt; fail "bridge.py shared_history"; }
"$GT_REPORT" --json h.trace > h.json || fail "report (history)"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" shared_history h.json pth.json "$SRC/tests/torch/bridge.py" ||
    fail "history: figures differ"
# expandable_segments:True: the segment is a VA range; its first physical allocation (cuMemCreate
# mapped at its start) names it
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True torch_run -t "$PWD/e.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" shared pte.json > oute.txt 2>&1 ||
    { cat oute.txt; fail "bridge.py shared (expandable segments)"; }
"$GT_REPORT" --json e.trace > e.json || fail "report (expandable segments)"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" shared e.json pte.json "$SRC/tests/torch/bridge.py" ||
    fail "expandable segments: figures differ"
