# Memory by category under activation checkpointing (torch.utils.checkpoint per layer): the
# activations at the fullest snapshot shrink against the same model without it, both equal to
# PyTorch's own memory_allocated() minus the optimizer's storages (tests/torch/tiers_check.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for c in adamw checkpoint; do
    tiers_run "$PWD/$c.trace" $c.out "$TORCH_PY" "$SRC/tests/torch/tiers.py" $c $c.pt.json ||
        { cat $c.out; fail "tiers.py $c"; }
    "$GT_REPORT" --json $c.trace > $c.json || fail "report $c"
done
"$PYTHON" "$SRC/tests/torch/tiers_check.py" checkpoint checkpoint.json checkpoint.pt.json adamw.pt.json adamw.json > check.txt ||
    { cat check.txt; fail "figures differ"; }
grep activations: check.txt
