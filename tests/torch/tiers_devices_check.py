"""Checks a report of tiers_blocks.py devices / devices_late against PyTorch's own figures
(tests/cases/torch_tiers_devices.sh, torch_tiers_devices_late.sh).
Usage: tiers_devices_check.py REPORT.json PYTORCH.json; exit 1 when a figure differs."""
import json, sys
rep, pt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
allocs = {str(a["device"]): a for a in rep["memory"]["allocators"]}
bad = []
def eq(what, got, want):
    print(f"{what}: {got} (want {want})")
    if got != want: bad.append(what)
eq("one allocator per device", sorted(allocs), ["0", "1"])
for d, p in pt["devices"].items():
    a = allocs.get(d)
    if not a: continue
    pb = a["peak_breakdown"]
    cats = {c["category"]: c["bytes"] for c in pb["by_category"]}
    eq(f"cuda:{d}: peak allocated = max_memory_allocated({d})", a["peak_allocated_bytes"], p["max_memory_allocated"])
    eq(f"cuda:{d}: categories from the replay", pb["categories_source"], "replay")
    eq(f"cuda:{d}: every batch replayed", (pb["replay"]["replayed"], pb["replay"]["inconsistent"]), (pb["replay"]["batches"], 0))
    eq(f"cuda:{d}: allocated at the breakdown = max_memory_allocated({d})", pb["categories_allocated_bytes"], p["max_memory_allocated"])
    eq(f"cuda:{d}: weights = the device's parameters' blocks", cats["weights"], p["weight_blocks"])
    eq(f"cuda:{d}: optimizer state = the device's AdamW state blocks", cats["optimizer_state"], p["state_blocks"])
    eq(f"cuda:{d}: gradients made, at most the weights", 0 < cats["gradients"] <= p["weight_blocks"], True)
    eq(f"cuda:{d}: the categories add up to reserved then", sum(cats.values()), pb["categories_reserved_bytes"])
eq("cuda:1 holds twice cuda:0's weights", allocs["1"]["peak_breakdown"] and pt["devices"]["1"]["weight_blocks"], 2 * pt["devices"]["0"]["weight_blocks"])
# the process peak: PyTorch's segments split per device, not one pytorch_reserved line
m = rep["memory"]
pk = m["peak_breakdown"]
lines = pk["by_category"] or []
eq("no pytorch_reserved line at the process peak", [l for l in lines if l["category"] == "pytorch_reserved"], [])
eq("the lines add up to the peak", sum(l["bytes"] for l in lines), m["peak_bytes"])
split = {str(x["device"]): x for x in pk.get("by_category_devices") or []}
eq("both devices split", sorted(split), ["0", "1"])
want = {}
for d, a in allocs.items():
    b = a["peak_breakdown"]
    x = split.get(d, {})
    eq(f"cuda:{d}: split by its replay", x.get("source"), "replay")
    eq(f"cuda:{d}: at max_memory_allocated({d})", x.get("allocated_bytes"), pt["devices"][d]["max_memory_allocated"])
    eq(f"cuda:{d}: its segments then = its replayed reserved bytes", x.get("reserved_bytes"), b["categories_reserved_bytes"])
    for c in b["by_category"]:
        want[c["category"]] = want.get(c["category"], 0) + c["bytes"]
got = {}
for l in lines:
    if l["source"] == "replay":
        got[l["category"]] = got.get(l["category"], 0) + l["bytes"]
eq("each replayed line = the devices' replayed category summed", got, {c: b for c, b in want.items() if b})
r = pk.get("by_category_replay") or {}
eq("by_category_replay: both devices' bytes", (r.get("allocated_bytes"), r.get("reserved_bytes")),
   (sum(x["allocated_bytes"] for x in split.values()), sum(x["reserved_bytes"] for x in split.values())))
point = [q for q in m["category_series"] or [] if q["at"] == "peak"]
eq("the chart's point at the peak = the lines", point and {c: point[0][c] for c in got}, got)
sys.exit(1 if bad else 0)
