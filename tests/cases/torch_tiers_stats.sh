# Memory by category at GPUTRACE_TORCH=stats (no snapshots): no breakdown of a snapshot
# (by_category null, the text says nothing of categories), but the optimizer's reads are there:
# AdamW's state is 2.0x its weights and every step read is there with PyTorch's figures of that step
# (tests/torch/tiers.py).
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GPUTRACE_TORCH=stats tiers_run "$PWD/t.trace" out.txt "$TORCH_PY" "$SRC/tests/torch/tiers.py" adamw pt.json ||
    { cat out.txt; fail "tiers.py adamw"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$GT_REPORT" t.trace > r.txt || fail "text report"
! grep -q 'by category' r.txt || fail "a breakdown without snapshots"
"$PYTHON" - r.json pt.json <<'PY' || fail "figures differ"
import json, sys
a = json.load(open(sys.argv[1]))["memory"]["allocators"][0]
pt = json.load(open(sys.argv[2]))
o = a["optimizers"][0]
assert a["peak_breakdown"]["by_category"] is None, a["peak_breakdown"]
assert o["state_to_weights"] == 2.0 and o["steps"] == len(pt["points"]), o
# one point per step whose hook read memory_stats(): the first always, the others when the time
# since the last read is 1,000x that read's own (a step read or not depends on the machine's
# speed: under ASan with CI's load a 3-step run once had steps 1 and 2 only)
steps = [p["step"] for p in a["category_series"]]
assert steps and steps[0] == 1 and steps == sorted(set(steps)) and steps[-1] <= len(pt["points"]), steps
got = [[p["weights"], p["gradients"], p["optimizer_state"]] for p in a["category_series"]]
want = [[pt["points"][n - 1]["after_step"][k] for k in ("weights", "gradients", "optimizer_state")]
        for n in steps]
assert got == want, (steps, got, want)
print("stats level: series at steps", steps, got)
PY
