# Memory by category under activation checkpointing (torch.utils.checkpoint per layer): the
# activations at the fullest snapshot shrink against the same model without it, both equal to
# PyTorch's own memory_allocated() minus the optimizer's storages (tests/torch/tiers_check.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
# Open defect (issue 21): under AddressSanitizer tiers.py aborts now and then at exit, after
# its last line ("terminate called without an active exception"; 2 of 8 cases in one .ci/run,
# 0 of 10 runs outside the runner); until it is understood these cases run in the plain build only.
[ -z "$asan_rt" ] || skip "AddressSanitizer build: tiers.py aborts intermittently at exit under ASan (std::terminate, open defect of issue 21); the plain build runs this case"
for c in adamw checkpoint; do
    torch_run -t "$PWD/$c.trace" "$TORCH_PY" "$SRC/tests/torch/tiers.py" $c $c.pt.json > $c.out 2>&1 ||
        { cat $c.out; fail "tiers.py $c"; }
    "$GT_REPORT" --json $c.trace > $c.json || fail "report $c"
done
"$PYTHON" "$SRC/tests/torch/tiers_check.py" checkpoint checkpoint.json checkpoint.pt.json adamw.pt.json adamw.json > check.txt ||
    { cat check.txt; fail "figures differ"; }
grep activations: check.txt
