"""Workloads for the PyTorch allocator bridge (tests/cases/torch_bridge_*.sh), run on a 1 GiB
simulated device under gputrace. Each writes PyTorch's own figures, taken by the program itself
(its own OOM observer, memory_stats(), _snapshot(), the OOM message), to argv[2] as JSON, for
the test to compare with the report. Usage: bridge.py CASE OUT.json"""
import json
import os
import re
import sys
import time

import torch

MiB = 1 << 20
case, out_path = sys.argv[1], sys.argv[2]
out = {"observer_calls": [], "ooms": []}


def observer(device, size, limit, free):
    """The program's own OOM observer: PyTorch's figures at the moment it raises."""
    s = torch.cuda.memory_stats(device)
    out["observer_calls"].append({
        "device": device, "requested": size, "limit": limit, "device_free": free,
        "allocated": s["allocated_bytes.all.current"],
        "reserved": s["reserved_bytes.all.current"]})


def message_figures(msg):
    """PyTorch's message: requested, free, allocated, unallocated, as printed ("306.00 MiB")."""
    size = r"([0-9.]+ (?:bytes|KiB|MiB|GiB))"
    m = re.search(r"Tried to allocate %s.*? of which %s is free.*?%s is allocated by PyTorch, "
                  r"and %s is reserved by PyTorch but unallocated" % (size, size, size, size),
                  msg, re.S)
    return list(m.groups()) if m else None


def try_alloc(nbytes):
    try:
        return torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as e:
        out["ooms"].append({"message": message_figures(str(e)),
                            "largest_free": largest_free()})
        return None


def largest_free():
    snap = torch.cuda.memory._snapshot()
    sizes = [b["size"] for g in snap["segments"] for b in g["blocks"] if b["state"] == "inactive"
             and g["segment_type"] == "large"]
    return max(sizes) if sizes else 0


torch._C._cuda_attach_out_of_memory_observer(observer)
if case == "user_history":  # the program's own history settings, made before the bridge starts
    torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python",
                                             max_entries=100000)
torch.empty(1, device="cuda")  # CUDA initialized: the bridge installs at this first segment

if case == "frag":
    # 153 x 6 MiB (51 segments of 20 MiB), two of every three freed, 64 MiB asked.
    ts = [torch.empty(6 * MiB, dtype=torch.uint8, device="cuda") for _ in range(153)]  # line S
    for i in range(153):
        if i % 3:
            ts[i] = None
    try_alloc(64 * MiB)
elif case == "cached":
    # The cache holds 900 MiB of free segments; a 200 MiB tensor needs a new segment: the driver
    # refuses, PyTorch releases its cache and the retry succeeds.
    ts = [torch.empty(100 * MiB, dtype=torch.uint8, device="cuda") for _ in range(9)]
    del ts
    keep = try_alloc(200 * MiB)
    assert keep is not None
elif case == "exhausted":
    ts = [torch.empty(100 * MiB, dtype=torch.uint8, device="cuda") for _ in range(9)]
    try_alloc(200 * MiB)
elif case == "fraction":
    torch.cuda.set_per_process_memory_fraction(0.25)
    a = torch.empty(100 * MiB, dtype=torch.uint8, device="cuda")
    try_alloc(200 * MiB)
elif case == "halving":
    # catch-and-continue: halve the batch until it fits
    keep = torch.empty(600 * MiB, dtype=torch.uint8, device="cuda")
    n = 1024 * MiB
    while try_alloc(n) is None:
        n //= 2
    out["fitted"] = n
elif case == "peak":
    a = [torch.empty(100 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3)]  # line A
    b = [torch.empty(50 * MiB, dtype=torch.uint8, device="cuda") for _ in range(2)]  # line B
    out["sites"] = {"A": 3 * 100 * MiB, "B": 2 * 50 * MiB}
elif case == "sampled_peak":
    # a peak that lasts 1.5 s of a loop launching kernels (GPUTRACE_SAMPLE_MS=50), then is freed
    p = [torch.empty(100 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3)]  # line P
    x = torch.zeros(1024, device="cuda")
    t_end = time.monotonic() + 1.5
    while time.monotonic() < t_end:
        x.add_(1)
    torch.cuda.synchronize()
    del p
    q = torch.empty(10 * MiB, dtype=torch.uint8, device="cuda")
    out["sites"] = {"P": 3 * 100 * MiB}
elif case == "cached_peak":
    # reserved memory reaches its high first (CB, 300 MiB, held over samples, then freed: cached);
    # the allocated peak comes later inside that cached segment (CC) plus a 2 MiB tensor (CD, a
    # 20 MiB segment: reserved grows by under 10 %), lasts 1 s of samples, and is freed before
    # exit: only a snapshot at the allocated high sees it (GPUTRACE_SAMPLE_MS=50)
    x = torch.zeros(1024, device="cuda")

    def spin(seconds):
        t_end = time.monotonic() + seconds
        while time.monotonic() < t_end:
            x.add_(1)
        torch.cuda.synchronize()

    b = torch.empty(300 * MiB, dtype=torch.uint8, device="cuda")  # line CB
    spin(1.0)
    del b
    c = [torch.empty(100 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3)]  # line CC
    d = torch.empty(2 * MiB, dtype=torch.uint8, device="cuda")  # line CD
    spin(1.0)
    del c, d
    # with block history each block is named by its own line; without it, by its segment's
    # (CC's blocks lie in CB's cached segment)
    history = os.environ.get("GPUTRACE_TORCH") == "history"
    out["sites"] = {"CC" if history else "CB": 3 * 100 * MiB, "CD": 2 * MiB}
elif case == "user_history":
    a = [torch.empty(10 * MiB, dtype=torch.uint8, device="cuda") for _ in range(4)]  # line H
    del a[0]
    traces = torch.cuda.memory._snapshot()["device_traces"][0]
    out["user_trace_allocs"] = sum(e["action"] == "alloc" for e in traces)
    out["sites"] = {"H": 3 * 10 * MiB}
elif case in ("shared", "shared_history"):
    # two lines' tensors in one segment: X's 6 MiB makes a 20 MiB segment, Y's 6 MiB is split
    # from its free rest (the same workload at the default level and at GPUTRACE_TORCH=history)
    a = torch.empty(6 * MiB, dtype=torch.uint8, device="cuda")  # line X
    b = torch.empty(6 * MiB, dtype=torch.uint8, device="cuda")  # line Y
    snap = torch.cuda.memory._snapshot()
    seg = next(g for g in snap["segments"]
               if g["address"] <= a.data_ptr() < g["address"] + g["total_size"])
    out["same_segment"] = seg["address"] <= b.data_ptr() < seg["address"] + seg["total_size"]
    out["segment_active"] = sum(x["size"] for x in seg["blocks"] if x["state"] != "inactive")
    out["sites"] = {"X": a.numel(), "Y": b.numel()}
elif case == "broken":
    # the program breaks _snapshot: the bridge's OOM observer fails inside, PyTorch still raises
    def broken(*args, **kwargs):
        raise RuntimeError("snapshots are off in this program")
    torch.cuda.memory._snapshot = broken
    ts = [torch.empty(100 * MiB, dtype=torch.uint8, device="cuda") for _ in range(9)]
    try:
        torch.empty(200 * MiB, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as e:
        out["ooms"].append({"message": message_figures(str(e)), "largest_free": None})
else:
    sys.exit("bridge.py: unknown case " + case)

s = torch.cuda.memory_stats()
for k in ("num_ooms", "num_alloc_retries", "allocated_bytes.all.current",
          "reserved_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.peak",
          "segment.all.current", "active_bytes.all.current", "inactive_split_bytes.all.current",
          "requested_bytes.all.current"):
    out[k] = s[k]
out["max_memory_allocated"] = torch.cuda.max_memory_allocated()
out["max_memory_reserved"] = torch.cuda.max_memory_reserved()
out["total"] = torch.cuda.get_device_properties(0).total_memory
json.dump(out, open(out_path, "w"), indent=1)
