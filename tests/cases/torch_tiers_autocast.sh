# Memory by category under mixed precision. The forward under torch.autocast(bfloat16): the
# categories stay exact against PyTorch's objects (fp32 master weights, AdamW's fp32 state). On
# the simulated stack the model is elementwise (no matmul), and autocast casts only matmul-like
# ops, so its activations stay fp32 here. The same model in bfloat16 (parameters and input): the
# report's weights and optimizer state are half of the fp32 run's, its activations half (but the
# loss's 512-byte minimum block), its dtypes 16-bit, each exact against PyTorch's own figures.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for c in autocast bf16; do
    tiers_run "$PWD/$c.trace" $c.out "$TORCH_PY" "$SRC/tests/torch/tiers.py" $c $c.pt.json ||
        { cat $c.out; fail "tiers.py $c"; }
    "$GT_REPORT" --json $c.trace > $c.json || fail "report $c"
    "$PYTHON" "$SRC/tests/torch/tiers_check.py" $c $c.json $c.pt.json > $c.check || { cat $c.check; fail "$c: figures differ"; }
done
"$PYTHON" - autocast.json bf16.json <<'PY' || fail "mixed precision"
import json, sys
def load(p):
    a = json.load(open(p))["memory"]["allocators"][0]
    return a["optimizers"][0], {c["category"]: c["bytes"] for c in a["peak_breakdown"]["by_category"]}
(o32, c32), (o16, c16) = load(sys.argv[1]), load(sys.argv[2])
checks = [
    ("autocast: fp32 weights and state", (o32["weight_dtype"], o32["state_dtype"]) == ("fp32", "fp32")),
    ("bf16: 16-bit weights and state", (o16["weight_dtype"], o16["state_dtype"]) == ("16-bit", "16-bit")),
    ("bf16: state still 2.0x weights", o16["state_to_weights"] == 2.0),
    ("weights halve", 2 * c16["weights"] == c32["weights"]),
    ("optimizer state halves", 2 * c16["optimizer_state"] == c32["optimizer_state"]),
    ("activations halve (the loss's block stays 512 bytes)",
     2 * (c16["activations"] - 512) == c32["activations"] - 512),
]
for name, ok in checks:
    print(("ok   " if ok else "FAIL ") + name)
print("fp32:", c32, "bf16:", c16)
sys.exit(0 if all(ok for _, ok in checks) else 1)
PY
