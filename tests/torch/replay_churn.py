"""Random allocator churn for the replay of PyTorch's block events (tests/cases/torch_replay_churn.sh),
on the simulated stack under gputrace with GPUTRACE_TORCH=history: the real caching allocator
splits, rounds, merges and caches blocks as it does on a GPU, and the report's replay must end
every batch of events in the state of the snapshot that closes it.

Usage: replay_churn.py SEED PHASES OPS OUT.json
Each phase makes OPS random allocations and frees (torch.empty of uint8 tensors: sizes in the
small pool (up to 1 MiB), in the large pool's 20 MiB segments (up to 10 MiB) and above, in random
order, the live total kept under LIVE_MAX), sometimes torch.cuda.empty_cache(), then asks for
more than the device holds: the allocator frees its cached segments and fails, and the bridge's
OOM observer writes a snapshot, which closes the phase's batch of events. A small model takes
one AdamW step first (the report breaks memory down by category, with its replay counts, for a
program with an optimizer). Writes PyTorch's own figures: the number of OOMs and
max_memory_allocated()."""
import json
import random
import sys

import torch

seed, phases, ops, out_path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
MiB = 1 << 20
LIVE_MAX = 400 * MiB  # of the simulated device's 1 GiB (tests/torch/env.sh)
rng = random.Random(seed)


def size():
    r = rng.random()
    if r < 0.5:
        return rng.randint(1, MiB)  # small pool, 2 MiB segments
    if r < 0.85:
        return rng.randint(MiB + 1, 10 * MiB)  # large pool, 20 MiB segments
    return rng.randint(10 * MiB, 48 * MiB)  # segments of their own (rounded to 2 MiB)


w = torch.nn.Parameter(torch.rand(1024, device="cuda"))
opt = torch.optim.AdamW([w], lr=0.01)
(w * 2).sum().backward()
opt.step()
opt.zero_grad()

live, ooms, churn_ooms = [], 0, 0
for phase in range(phases):
    for _ in range(ops):
        if live and (rng.random() < 0.45 or sum(t.numel() for t in live) > LIVE_MAX):
            del live[rng.randrange(len(live))]
            continue
        try:
            live.append(torch.empty(size(), dtype=torch.uint8, device="cuda"))
        except torch.cuda.OutOfMemoryError:  # fragmentation can make one here too: a snapshot
            churn_ooms += 1
    if rng.random() < 0.2:
        torch.cuda.empty_cache()
    try:
        torch.empty(4 << 30, dtype=torch.uint8, device="cuda")
    except torch.cuda.OutOfMemoryError:
        ooms += 1
json.dump({"ooms": ooms + churn_ooms, "max_memory_allocated": torch.cuda.max_memory_allocated()},
          open(out_path, "w"))
print("replay_churn: ok", seed, "ooms", ooms, "in churn", churn_ooms)
