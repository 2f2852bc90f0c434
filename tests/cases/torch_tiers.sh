# Memory by category on the real PyTorch (tests/torch/tiers.py): AdamW, SGD with momentum and
# zero_grad(set_to_none=False) over 3 steps; the fullest snapshot's weights, gradients and
# optimizer state equal the storages of PyTorch's own objects, the remainder (activations) equals
# memory_allocated() minus their blocks, AdamW's state is 2.0x the weights and SGD's 1.0x, every
# step's figures are exact (tests/torch/tiers_check.py), and the text report says so.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for c in adamw sgd keepgrad; do
    tiers_run "$PWD/$c.trace" $c.out "$TORCH_PY" "$SRC/tests/torch/tiers.py" $c $c.pt.json ||
        { cat $c.out; fail "tiers.py $c"; }
    "$GT_REPORT" --json $c.trace > $c.json || fail "report $c"
    "$PYTHON" "$SRC/tests/torch/tiers_check.py" $c $c.json $c.pt.json > $c.check || { cat $c.check; fail "$c: figures differ"; }
    "$GT_REPORT" $c.trace > $c.txt || fail "text report $c"
done
grep -q 'optimizer state 8.00 MiB (2.0x weights: AdamW keeps 2 fp32 tensors per parameter)' adamw.txt ||
    { cat adamw.txt; fail "AdamW's text"; }
grep -q 'optimizer state 4.00 MiB (1.0x weights: SGD keeps 1 fp32 tensor per parameter)' sgd.txt ||
    { cat sgd.txt; fail "SGD's text"; }
# the set is written only when it changed: with the gradients kept (set_to_none=False) once for
# 3 steps (and the snapshots' re-reads find it unchanged); freed each step, again at every step
"$GT_REPORT" --dump keepgrad.trace > keepgrad.dump || fail "dump"
expect_eq "role sets written (keepgrad)" "$(grep -c ' TORCH_ROLES first optimizer=1 ' keepgrad.dump)" 1
expect_eq "steps written (keepgrad)" "$(grep -c ' TORCH_STEP - optimizer=1 ' keepgrad.dump)" 3
"$GT_REPORT" --dump adamw.trace > adamw.dump || fail "dump"
[ "$(grep -c ' TORCH_ROLES first optimizer=1 ' adamw.dump)" -ge 3 ] || fail "adamw: the sets with and without gradients were not all written"
