# A failure inside the bridge (here the program broke torch.cuda.memory._snapshot) is swallowed
# and noted in the trace: PyTorch still raises its OOM with the same figures, the program's own
# observer is still called, and the OOM record written before the failure is reported.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" broken pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py broken"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" broken r.json pt.json || fail "figures differ"
"$GT_REPORT" --dump t.trace | grep -q "PyTorch bridge: the OOM observer failed: RuntimeError: snapshots are off" ||
    fail "the failure is not noted in the trace"
