# A fragmentation OOM raised by the real PyTorch (153 x 6 MiB, two of three freed, 64 MiB asked) is one allocator-level OOM judged fragmentation, merged with the driver failures PyTorch retried, with PyTorch's own figures (its observer, memory_stats, its message, its snapshot) (tests/torch/bridge.py frag; figures compared by tests/torch/bridge_check.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/bridge.py" frag pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "bridge.py frag"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/bridge_check.py" frag r.json pt.json "$SRC/tests/torch/bridge.py" || fail "figures differ"
