"""Two ranks of a data-parallel loop (torch.distributed, gloo, CUDA tensors) on the simulated
stack, for tests/cases/torch_collective.sh: every step computes, synchronizes, and all-reduces;
rank 1 sleeps 50 ms before each all-reduce (a slow rank), so rank 0's GPU idles while it waits
for rank 1 inside the collective. Usage: collective.py RANK STORE_FILE. Prints "rank R ok"."""
import sys
import time

import torch
import torch.distributed as dist

rank, store = int(sys.argv[1]), sys.argv[2]
dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=2)
x = torch.ones(1 << 16, device="cuda")
for step in range(8):
    y = x * (step + 1)
    torch.cuda.synchronize()
    if rank == 1:
        time.sleep(0.05)  # SLOW
    dist.all_reduce(y)  # COLLECTIVE
    y.sum().item()  # (the simulated GPU computes nothing: no value to check)
dist.destroy_process_group()
print("rank", rank, "ok")
