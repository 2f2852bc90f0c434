# The peak in the last step, and the memory chart's point at the peak (GPUTRACE_TORCH=history).
# tests/torch/tiers_blocks.py last (real PyTorch on the simulated stack): 4 AdamW steps, the last
# one with a batch 4 times larger, so PyTorch's peak comes after every peak snapshot; the bridge's
# exit snapshot writes the events since the last one (atexit), and the report replays that batch:
# the breakdown is at max_memory_allocated() to the byte, between the last peak snapshot and the
# exit one. The process peak's categories (memory.peak_breakdown.by_category) and the chart's
# point at the peak (memory.category_series, at: peak) split PyTorch's segments by that replayed
# moment (its segments then held the peak's bytes), not by the exit snapshot, whose blocks are
# all cache: each category of the point equals the replayed breakdown's.
. "$SRC/tests/lib.sh"
. "$SRC/tests/torch/env.sh"
GPUTRACE_TORCH=history tiers_run "$PWD/t.trace" out.txt "$TORCH_PY" "$SRC/tests/torch/tiers_blocks.py" last pt.json ||
    { cat out.txt; fail "tiers_blocks.py last"; }
"$GT_REPORT" --json t.trace > r.json || fail "report"
"$PYTHON" - r.json pt.json <<'PY' || fail "the peak of the last step, or the chart's point at the peak, differs"
import json, sys
rep, pt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
m, p = rep["memory"], pt["devices"]["0"]
a = m["allocators"][0]
pb = a["peak_breakdown"]
cats = {c["category"]: c["bytes"] for c in pb["by_category"]}
snaps = a["category_snapshots"]
bad = []
def eq(what, got, want):
    print(f"{what}: {got} (want {want})")
    if got != want: bad.append(what)
eq("the fullest snapshot is below the peak", pb["snapshot_allocated_bytes"] < p["max_memory_allocated"], True)
eq("categories from the replay", pb["categories_source"], "replay")
eq("every batch ends in its snapshot's state", pb["replay"]["inconsistent"], 0)
eq("allocated at the breakdown = max_memory_allocated()", pb["categories_allocated_bytes"], p["max_memory_allocated"])
eq("the last snapshot is the exit one", snaps[-1]["why"], "exit")
eq("the breakdown lies after every other snapshot", all(s["time_ns"] < pb["categories_time_ns"] < snaps[-1]["time_ns"] for s in snaps[:-1]), True)
eq("weights = the parameters' blocks", cats["weights"], p["weight_blocks"])
eq("optimizer state = AdamW's state blocks", cats["optimizer_state"], p["state_blocks"])
# the process peak: PyTorch's segments split by the replayed moment
lines = m["peak_breakdown"]["by_category"]
rp = m["peak_breakdown"].get("by_category_replay")
eq("PyTorch's lines at the process peak come from the replay", {l["source"] for l in lines if l["category"] in cats}, {"replay"})
eq("... at PyTorch's peak", rp and rp["allocated_bytes"], p["max_memory_allocated"])
eq("... in segments holding the process peak's PyTorch bytes", rp and rp["reserved_bytes"], pb["categories_reserved_bytes"])
replayed = {l["category"]: l["bytes"] for l in lines if l["source"] == "replay"}
eq("each replayed line = the allocator's replayed category", replayed, {c: b for c, b in cats.items() if b})
point = [q for q in m["category_series"] if q["at"] == "peak"]
eq("one chart point at the peak", len(point), 1)
if point:
    q = point[0]
    eq("the chart's point at the peak adds up to the peak", q["total_bytes"], m["peak_bytes"])
    for c, b in cats.items():
        other = sum(l["bytes"] for l in lines if l["category"] == c and l["source"] == "library")
        eq(f"chart at the peak: {c} = the replayed {c} (+ libraries' {other})", q[c], b + other)
sys.exit(1 if bad else 0)
PY
# the text says which moment PyTorch's part is from
"$GT_REPORT" t.trace > r.txt || fail "text report"
grep -q "PyTorch's segments at its peak, .* (block events replayed)" r.txt ||
    fail "text: the process peak's line does not say the replay split it: $(grep -A1 'by what' r.txt)"
