# Memory by category beside PyTorch's own memory profiler (torch.profiler, profile_memory=True,
# its MemoryProfile categories; tests/torch/memprof_categories.py run under gputrace): the
# weights and the optimizer state gputrace reads from the optimizer at each step equal PyTorch's
# PARAMETER and OPTIMIZER_STATE at its peak (AdamW 2x, SGD 1x), and the gradients, where
# zero_grad keeps them, its GRADIENT. Where the two differ (printed side by side, docs/ANALYSES.md
# "Memory by category"): PyTorch tells INPUT, ACTIVATION, TEMPORARY and AUTOGRAD_DETAIL apart
# from the profiled operators' data flow, which needs the program run under its profiler;
# gputrace, without frames, reports their sum as the remainder.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
for spec in optim=adamw optim=sgd optim=adamw,set_to_none=0; do
    rm -f t.trace
    torch_run -t "$PWD/t.trace" "$TORCH_PY" "$SRC/tests/torch/memprof_categories.py" "$spec" > pt.json 2> err.txt ||
        { cat err.txt; fail "memprof_categories.py $spec"; }
    "$GT_REPORT" --json t.trace > r.json || fail "report $spec"
    "$PYTHON" - "$spec" pt.json r.json <<'PY' || fail "$spec: gputrace's categories differ from PyTorch's memory profiler"
import json, sys
spec, pt, rep = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
a = rep["memory"]["allocators"][0]
o = a["optimizers"][0]
at = pt["peak"]["by_category"]
print(spec)
print("  %-16s %12s   %-18s %12s" % ("PyTorch profiler", "at its peak", "gputrace", "per step"))
for theirs, ours in (("PARAMETER", "weights_bytes"), ("OPTIMIZER_STATE", "optimizer_state_bytes"),
                     ("GRADIENT", "gradients_bytes")):
    print("  %-16s %12d   %-18s %12d" % (theirs, at[theirs], ours, o[ours]))
rest = sum(at[k] for k in ("INPUT", "ACTIVATION", "TEMPORARY", "AUTOGRAD_DETAIL", "None"))
print("  %-16s %12d   %-18s" % ("INPUT+ACT+TEMP+AUTOGRAD+None", rest, "remainder (snapshots)"))
checks = [
    ("weights = PARAMETER", o["weights_bytes"] == at["PARAMETER"] == pt["expected"]["parameter_bytes"]),
    ("optimizer_state = OPTIMIZER_STATE", o["optimizer_state_bytes"] == at["OPTIMIZER_STATE"]),
    ("state / weights", o["state_to_weights"] == at["OPTIMIZER_STATE"] / at["PARAMETER"]
     == (2.0 if pt["spec"]["optim"] == "adamw" else 1.0)),
    # set_to_none=0: the gradients live through the forward (PyTorch's peak); =1: PyTorch sees
    # none at its peak (freed before the next forward), gputrace sees them after each step
    ("gradients", o["gradients_bytes"] == (at["GRADIENT"] if not pt["spec"]["set_to_none"]
                                           else at["PARAMETER"])),
    ("steps (the profiled ones and the warm-up)", o["steps"] >= pt["spec"]["steps"]),
]
bad = [n for n, ok in checks if not ok]
sys.exit("failed: " + "; ".join(bad) if bad else 0)
PY
done
