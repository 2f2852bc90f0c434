"""Cost per allocation of PyTorch's caching allocator as a program sees it (bench/torch_bridge.sh):
N pairs of torch.empty(4096 bytes) + del on the current CUDA device (cached blocks: no driver
call after the first), timed with perf_counter_ns after a warm-up. Prints "ns_per_alloc=X"; then,
with 1,000 tensors of 4096 bytes live, the time of one memory_stats() (median of 100) and of
one torch.cuda.memory._snapshot(): the first one, and the median of 10 later ones (what the
bridge's samples and snapshots cost the main thread).
Usage: torch_alloc.py N [history-python|history-default]"""
import sys
import time

import torch

n = int(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else ""
if mode == "history-python":  # what GPUTRACE_TORCH=history asks for
    torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python",
                                             max_entries=100000)
elif mode == "history-default":  # PyTorch's documented call (C++ and Python stacks, a ring)
    torch.cuda.memory._record_memory_history(max_entries=100000)
for _ in range(1000):  # warm-up: the segment exists, the bridge (if any) is installed
    x = torch.empty(4096, dtype=torch.uint8, device="cuda")
    del x
t0 = time.perf_counter_ns()
for _ in range(n):
    x = torch.empty(4096, dtype=torch.uint8, device="cuda")
    del x
t1 = time.perf_counter_ns()
print("ns_per_alloc=%.1f" % ((t1 - t0) / n))
keep = [torch.empty(4096, dtype=torch.uint8, device="cuda") for _ in range(1000)]


def timed(fn, k):
    xs = []
    for _ in range(k):
        a = time.perf_counter_ns()
        fn()
        xs.append(time.perf_counter_ns() - a)
    return sorted(xs)[len(xs) // 2]


print("us_snapshot_first=%.1f" % (timed(torch.cuda.memory._snapshot, 1) / 1e3))
print("us_snapshot=%.1f" % (timed(torch.cuda.memory._snapshot, 10) / 1e3))
print("us_memory_stats=%.1f" % (timed(torch.cuda.memory_stats, 100) / 1e3))
