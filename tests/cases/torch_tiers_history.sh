# Memory by category with allocator history (GPUTRACE_TORCH=history): the blocks no optimizer
# holds are told apart by their Python frames: the forward's blocks (under Module.__call__) are
# activations, exactly what the forward left alive by PyTorch's memory_allocated(), named by
# their line (tiers.py's layer); the input and the loss, allocated outside any module, are other.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
# Open defect (issue 21): under AddressSanitizer tiers.py aborts now and then at exit, after
# its last line ("terminate called without an active exception"; 2 of 8 cases in one .ci/run,
# 0 of 10 runs outside the runner); until it is understood these cases run in the plain build only.
[ -z "$asan_rt" ] || skip "AddressSanitizer build: tiers.py aborts intermittently at exit under ASan (std::terminate, open defect of issue 21); the plain build runs this case"
GPUTRACE_TORCH=history torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/tiers.py" adamw pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "tiers.py adamw"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/tiers_check.py" --history adamw r.json pt.json > check.txt || { cat check.txt; fail "figures differ"; }
