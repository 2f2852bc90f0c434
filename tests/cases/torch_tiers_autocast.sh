# Memory by category with the forward under torch.autocast(bfloat16): the categories stay exact
# against PyTorch's objects. On the simulated stack the model is elementwise (no matmul), and
# autocast casts only matmul-like ops, so the activations stay fp32 here: what this proves is
# that the roles (fp32 master weights, AdamW's fp32 state) are read right under autocast, not
# that activations halve (the GPU kit's transformer step is where that shows).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/tiers.py" autocast pt.json > out.txt 2>&1 ||
    { cat out.txt; fail "tiers.py autocast"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" "$SRC/tests/torch/tiers_check.py" autocast r.json pt.json > check.txt || { cat check.txt; fail "figures differ"; }
"$PYTHON" - r.json <<'PY' || fail "dtypes"
import json, sys
o = json.load(open(sys.argv[1]))["memory"]["allocators"][0]["optimizers"][0]
assert (o["weight_dtype"], o["state_dtype"]) == ("fp32", "fp32"), o
PY
