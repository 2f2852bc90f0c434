"""Compares gputrace's report (--json) with PyTorch's own figures that tests/torch/bridge.py wrote.
Usage: bridge_check.py CASE REPORT.json PYTORCH.json [SCRIPT]; prints each comparison, exit 1 on
any difference."""
import json
import re
import sys

case, rep, pt = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
script = sys.argv[4] if len(sys.argv) > 4 else None
mem = rep["memory"]
bad = 0
MiB = 1 << 20


def eq(what, got, want):
    global bad
    ok = got == want
    bad += not ok
    print("%-4s %-52s gputrace %-22r pytorch %r" % ("ok" if ok else "FAIL", what, got, want))


def format_size(n):
    """c10's format_size, which PyTorch's OOM message uses."""
    if n <= 1024:
        return "%d bytes" % n
    if n <= 1 << 20:
        return "%.2f KiB" % (n / 1024)
    if n <= 1 << 30:
        return "%.2f MiB" % (n / MiB)
    return "%.2f GiB" % (n / (1 << 30))


allocator_ooms = [o for o in mem["ooms"] if o["level"] == "allocator"]
driver_ooms = [o for o in mem["ooms"] if o["level"] == "driver"]
(alloc_dev,) = mem["allocators"]
eq("peak allocated = max_memory_allocated", alloc_dev["peak_allocated_bytes"],
   pt["max_memory_allocated"])
eq("peak reserved = max_memory_reserved", alloc_dev["peak_reserved_bytes"],
   pt["max_memory_reserved"])
eq("allocator OOMs = num_ooms", len(allocator_ooms), pt["num_ooms"])
eq("the program's own observer calls = num_ooms", len(pt["observer_calls"]), pt["num_ooms"])
for i, (o, call) in enumerate(zip(allocator_ooms, pt["observer_calls"])):
    eq("oom %d allocator" % i, o["allocator"], "pytorch")
    eq("oom %d requested (observer)" % i, o["requested_bytes"], call["requested"])
    eq("oom %d allocated (memory_stats in observer)" % i, o["allocated_bytes"], call["allocated"])
    eq("oom %d reserved (memory_stats in observer)" % i, o["reserved_bytes"], call["reserved"])
    eq("oom %d device free (observer)" % i, o["device_free_bytes"], call["device_free"])
    eq("oom %d limit (observer)" % i, o["limit_bytes"], call["limit"])
    msg = pt["ooms"][i]["message"]
    eq("oom %d message found" % i, msg is not None, True)
    msg = msg or [None] * 4
    eq("oom %d message: Tried to allocate" % i, format_size(o["requested_bytes"]), msg[0])
    eq("oom %d message: of which ... is free" % i, format_size(o["device_free_bytes"]), msg[1])
    eq("oom %d message: ... is allocated by PyTorch" % i, format_size(o["allocated_bytes"]),
       msg[2])
    eq("oom %d message: ... reserved by PyTorch but unallocated" % i,
       format_size(o["free_in_segments_bytes"]), msg[3])
    eq("oom %d largest free block (program's _snapshot)" % i, o.get("largest_free_block_bytes"),
       pt["ooms"][i]["largest_free"])

# gpu_frag: the GPU kit's frag workload (tests/gpu/workloads.py), the frag case on any device
want = {"broken": "exhausted", "frag": "fragmentation", "gpu_frag": "fragmentation",
        "exhausted": "exhausted", "fraction": "limit", "halving": "exhausted"}
if case in want:
    for i, o in enumerate(allocator_ooms):
        eq("oom %d verdict" % i, o["verdict"], want[case])
    eq("driver failures left unmerged", len(driver_ooms), 0)
if case in ("frag", "gpu_frag"):
    eq("merged driver failures (cudaMalloc, then again after the cache release)",
       allocator_ooms[0]["driver_failures_merged"], 2)
    # PyTorch released every free segment before raising: each one left is partly used
    eq("partly used segments = segments", allocator_ooms[0]["partly_used_segments"],
       pt["segment.all.current"])
if case == "fraction":
    eq("driver failures merged (none: the allocator refused)",
       allocator_ooms[0]["driver_failures_merged"], 0)
    eq("memory fraction set", allocator_ooms[0]["memory_fraction_set"], True)
if case == "cached":
    eq("allocator OOMs", len(allocator_ooms), 0)
    eq("num_alloc_retries", pt["num_alloc_retries"], 1)
    eq("driver failures", len(driver_ooms), 1)
    eq("driver failure verdict", driver_ooms[0]["verdict"], "cached")
    eq("driver failure allocator", driver_ooms[0].get("allocator"), "pytorch")
if case == "halving":
    eq("OOMs until it fitted", len(allocator_ooms), 2)
    eq("requests halved", [o["requested_bytes"] for o in allocator_ooms], [1024 * MiB, 512 * MiB])
if case == "user_history":
    # 5 allocations (1 byte, 4 x 10 MiB): the program's ring ("all") is intact, not replaced by
    # the bridge's "state"
    eq("the program's own history ring: allocations recorded", pt["user_trace_allocs"], 5)
if case == "sampled_peak":
    series = alloc_dev["fragmentation"]["series"]
    periodic = [p for p in series if p["largest_free_block_bytes"] is None]
    # 1.5 s at 50 ms: up to 30, but the first snapshot alone can take most of a second on a
    # loaded 2-core VM, and the flusher that marks samples due shares the cores
    print("periodic samples: %d" % len(periodic))
    eq("periodic samples over 1.5 s at 50 ms (at least 3)", len(periodic) >= 3, True)
    eq("a snapshot at the peak (reserved = max_memory_reserved)",
       alloc_dev["fragmentation"]["at_peak"]["reserved_bytes"], pt["max_memory_reserved"])
if case == "cached_peak":
    eq("max_memory_allocated (300 MiB + 2 MiB + x)", pt["max_memory_allocated"] - 302 * MiB < MiB, True)
if case in ("peak", "user_history", "sampled_peak", "cached_peak"):
    lines = open(script).read().splitlines()
    where = {k: next(i + 1 for i, l in enumerate(lines) if l.endswith("# line " + k))
             for k in pt.get("sites", {})}
    got = {s["site"]: s["bytes"] for s in alloc_dev["peak_breakdown"]["by_site"]}
    for k, n in pt.get("sites", {}).items():
        # "bridge.py:N name" (a block's own frame) or "name (bridge.py:N)" (its segment's site)
        label = [s for s in got if re.search(r"\bbridge\.py:%d\b" % where[k], s)]
        eq("peak held by line %s" % k, got[label[0]] if label else None, n)
    # the peak case keeps its tensors to the end: the exit snapshot is at the peak; the
    # user_history case freed one before: its breakdown is of the fullest snapshot, and says so
    eq("breakdown exact (a snapshot at the peak)", alloc_dev["peak_breakdown"]["exact"],
       case in ("peak", "sampled_peak", "cached_peak"))
    if alloc_dev["peak_breakdown"]["exact"]:
        eq("breakdown sums to max_memory_allocated",
           sum(s["bytes"] for s in alloc_dev["peak_breakdown"]["by_site"]), pt["max_memory_allocated"])
if case in ("frag", "shared", "shared_history"):
    lines = open(script).read().splitlines()
    line_of = {k: next(i + 1 for i, l in enumerate(lines) if l.endswith("# line " + k))
               for k in ("S", "X", "Y")}
if case == "frag":
    # the default level records no block history: the blocks pinning the segments are named by
    # the line that allocated their segments (the driver allocations' call site)
    pinned = allocator_ooms[0].get("pinned_by") or [{}]
    eq("pinned by one site", len(pinned), 1)
    eq("pinned by: the segments' site", pinned[0].get("site_source"), "segment")
    eq("pinned by: the line that allocated the segments",
       "bridge.py:%d)" % line_of["S"] in pinned[0].get("site", ""), True)
    eq("pinned by: bytes = allocated (memory_stats in observer)", pinned[0].get("bytes"),
       pt["observer_calls"][0]["allocated"])
if case in ("shared", "shared_history"):
    eq("Y's tensor split from X's segment (program's _snapshot)", pt["same_segment"], True)
    by_site = alloc_dev["peak_breakdown"]["by_site"]
    for s in by_site:
        print("     by_site %r" % s)
    if case == "shared":
        # the limit: without history, Y's bytes are named by the line that made the segment
        eq("one site: the segment's", [(s["site_source"], "bridge.py:%d)" % line_of["X"] in
                                        s["site"]) for s in by_site], [("segment", True)])
        eq("its bytes = the segment's live blocks (program's _snapshot)", by_site[0]["bytes"],
           pt["segment_active"])
    else:
        # with history each block's own line wins
        got = {s["site"]: (s["site_source"], s["bytes"]) for s in by_site}
        for k, n in pt["sites"].items():
            label = [s for s in got if s.startswith("bridge.py:%d " % line_of[k])]
            eq("held by line %s (its own frames)" % k, got[label[0]] if label else None,
               ("block", n))
eq("cached at exit = reserved", alloc_dev["cached_at_exit_bytes"],
   pt["reserved_bytes.all.current"])
# which driver allocations are PyTorch's segments comes from the exit snapshot (the broken case
# has none: its segments stay counted as live)
eq("driver segments cached at exit, not leaked", mem["allocator_cached_bytes"],
   0 if case == "broken" else pt["reserved_bytes.all.current"])
sys.exit(1 if bad else 0)
