"""The cost of the PyTorch bridge's allocated-high snapshots (issue 17) in their worst case: a
program whose allocated memory grows at every sample. N times: torch.empty(8 KiB) kept alive,
with a little Python work between allocations, so GPUTRACE_SAMPLE_MS samples land throughout
and each finds a new high of allocated memory over a growing number of blocks. Prints
"ns_per_alloc=X" (wall time over the loop / N) and "blocks=N".
Usage: torch_grow.py N (run traced and untraced: bench/RESULTS.md gives the commands)"""
import sys
import time

import torch

n = int(sys.argv[1])
torch.empty(1, device="cuda")
keep = []
t0 = time.perf_counter_ns()
for i in range(n):
    keep.append(torch.empty(8192, dtype=torch.uint8, device="cuda"))
    sum(range(1000))  # ~10 us of Python per allocation: a loop that runs long enough to be sampled
t1 = time.perf_counter_ns()
print("ns_per_alloc=%.1f" % ((t1 - t0) / n))
print("blocks=%d" % len(keep))
