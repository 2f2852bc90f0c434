# Temporaries inside PyTorch's segments, at the true peak (GPUTRACE_TORCH=history: the report
# replays PyTorch's block events between snapshots). tests/torch/tiers.py temp (real PyTorch on
# the simulated stack): the forward ends with temporaries (its last output repeated 8 times,
# 32 MiB, and summed; none saved for backward), the highest point of the run, inside the forward
# and between two snapshots. At PyTorch's peak to the byte, `temporary` holds exactly what the
# forward made after its saved tensors: max_memory_allocated() - (memory_allocated() before the
# repeat - the last output's block), the repeat's and the sum's blocks among them; weights and
# AdamW's state equal its objects; the saved tensors stay activations.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GPUTRACE_TORCH=history tiers_run "$PWD/t.trace" out.txt "$TORCH_PY" "$SRC/tests/torch/tiers.py" temp pt.json ||
    { cat out.txt; fail "tiers.py temp"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" - r.json pt.json <<'PY' || fail "the temporaries at the peak differ from PyTorch's figures"
import json, sys
rep, pt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
pb = rep["memory"]["allocators"][0]["peak_breakdown"]
cats = {c["category"]: c for c in pb["by_category"]}
bad = []
def eq(what, got, want):
    print(f"{what}: {got} (want {want})")
    if got != want: bad.append(what)
pts = pt["points"]
eq("the program's peak is inside a forward (not raised by any backward)",
   all(p["max_after_backward"] == p["max_before_backward"] for p in pts[1:]), True)
tf = pt["temp"]
eq("the step's peak, right after the sum, is the run's", tf["max_after_sum"], pt["max_memory_allocated"])
eq("the repeat's block: 32 MiB", tf["repeat"], 32 * 1048576)
eq("categories from the replay", pb["categories_source"], "replay")
eq("allocated at the breakdown = max_memory_allocated()", pb["categories_allocated_bytes"], pt["max_memory_allocated"])
want = tf["max_after_sum"] - (tf["before"] - tf["last_output"])
eq("temporary = what the forward made after its saved tensors", cats["temporary"]["bytes"], want)
eq("... the repeat's, the sum's and the last output's blocks among them",
   cats["temporary"]["bytes"] >= tf["repeat"] + tf["sum"] + tf["last_output"], True)
eq("... basis exact", cats["temporary"]["basis"], "exact")
after = pts[0]["after_step"]
eq("weights = the parameters' storages", cats["weights"]["bytes"], after["weights"])
eq("optimizer state = AdamW's state tensors", cats["optimizer_state"]["bytes"], after["optimizer_state"])
eq("no gradients (set_to_none: freed before the forward)", cats["gradients"]["bytes"], 0)
eq("activations: what the forward keeps for backward", cats["activations"]["bytes"] > 0, True)
eq("the categories add up to reserved then", sum(c["bytes"] for c in cats.values()), pb["categories_reserved_bytes"])
sys.exit(1 if bad else 0)
PY
