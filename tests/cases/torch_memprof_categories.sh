# PyTorch's own memory profiler (torch.profiler with profile_memory=True, MemoryProfile's
# categories) on the real PyTorch over the simulated stack, through tests/torch/memprof_categories.py
# (the comparison point for issue 21's categories): at the peak of its timeline, PARAMETER equals
# the parameters' storage, OPTIMIZER_STATE the optimizer's state tensors on the GPU (AdamW: 2x the
# weights, SGD with momentum: 1x), INPUT the input batch, GRADIENT the .grad tensors when
# zero_grad keeps them (0 when it sets them to None: they are freed before the next forward),
# ACTIVATION > 0; and the categorised total at that peak equals torch.cuda.max_memory_allocated()
# (every tensor here is a multiple of the allocator's 512-byte rounding).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for spec in optim=adamw optim=sgd optim=adamw,set_to_none=0; do
    torch_run "$TORCH_PY" "$SRC/tests/torch/memprof_categories.py" "$spec" > out.json 2> err.txt ||
        { cat err.txt; fail "memprof_categories.py $spec"; }
    "$TORCH_PY" - "$spec" out.json <<'PY' || fail "$spec: PyTorch's categories disagree with its objects"
import json, sys
spec, d = sys.argv[1], json.load(open(sys.argv[2]))
at, exp = d["peak"]["by_category"], d["expected"]
p = exp["parameter_bytes"]
print(spec, "peak", d["peak"]["total_bytes"], "max_memory_allocated", d["max_memory_allocated"],
      {k: v for k, v in at.items() if v})
checks = [
    ("PARAMETER = parameters' storage", at["PARAMETER"] == p and p == 3 * 2 * 65536 * 4),
    ("OPTIMIZER_STATE = optimizer's state on the GPU", at["OPTIMIZER_STATE"] == exp["optimizer_state_bytes"]),
    ("state / weights", exp["optimizer_state_bytes"] == (2 if d["spec"]["optim"] == "adamw" else 1) * p),
    ("INPUT = the batch", at["INPUT"] == exp["input_bytes"] == 4 * 65536 * 4),
    ("GRADIENT", at["GRADIENT"] == (p if not d["spec"]["set_to_none"] else 0) == exp["gradient_bytes"]),
    ("ACTIVATION > 0", at["ACTIVATION"] > 0),
    ("peak total = max_memory_allocated", d["peak"]["total_bytes"] == d["max_memory_allocated"]),
]
bad = [name for name, ok in checks if not ok]
if bad:
    sys.exit("failed: " + "; ".join(bad))
PY
done
