# The peak inside backward, exactly (GPUTRACE_TORCH=history: the bridge writes PyTorch's block
# events before each snapshot; the report replays them between snapshots). tests/torch/tiers.py
# adamw (real PyTorch on the simulated stack): its peak falls inside a backward (activations
# still held while gradients are made: max_memory_allocated() grows during backward). The
# breakdown by category is the replay's, at PyTorch's own peak to the byte; weights and the
# optimizer's state equal PyTorch's objects' storages; gradients are at most the parameters'
# and some exist; activations hold the rest; the categories add up to reserved at that moment.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GPUTRACE_TORCH=history tiers_run "$PWD/t.trace" out.txt "$TORCH_PY" "$SRC/tests/torch/tiers.py" adamw pt.json ||
    { cat out.txt; fail "tiers.py adamw"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" - r.json pt.json <<'PY' || fail "the breakdown at the peak inside backward differs from PyTorch's figures"
import json, sys
rep, pt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a = rep["memory"]["allocators"][0]
pb = a["peak_breakdown"]
cats = {c["category"]: c["bytes"] for c in pb["by_category"]}
bad = []
def eq(what, got, want):
    print(f"{what}: {got} (want {want})")
    if got != want: bad.append(what)
pts = pt["points"]
eq("the program's peak is inside a backward", any(p["max_after_backward"] > p["max_before_backward"] for p in pts), True)
eq("the fullest snapshot is below the peak", pb["snapshot_allocated_bytes"] < pt["max_memory_allocated"], True)
eq("categories from the replay", pb["categories_source"], "replay")
eq("replayed batches all end in their snapshot's state", pb["replay"]["inconsistent"], 0)
eq("allocated at the breakdown = max_memory_allocated()", pb["categories_allocated_bytes"], pt["max_memory_allocated"])
eq("... = the report's peak", pb["categories_allocated_bytes"], a["peak_allocated_bytes"])
after = pts[0]["after_step"]  # the optimizer's storages, the same at every later step
eq("weights = the parameters' storages", cats["weights"], after["weights"])
eq("optimizer state = AdamW's state tensors", cats["optimizer_state"], after["optimizer_state"])
eq("gradients made, at most the parameters'", 0 < cats["gradients"] <= after["gradients"] + 512, True)
eq("activations held at the peak", cats["activations"] > 0, True)
eq("the categories add up to reserved then", sum(cats.values()), pb["categories_reserved_bytes"])
eq("without cache: allocated then", sum(v for c, v in cats.items() if c != "cache"), pb["categories_allocated_bytes"])
sys.exit(1 if bad else 0)
PY
# the text report says which moment its categories are from
"$GT_REPORT" t.trace > r.txt || fail "text report"
grep -q "by category at the peak (block events replayed)" r.txt ||
    fail "text: no line of the replayed peak: $(grep 'by category' r.txt)"
