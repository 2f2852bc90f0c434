"""The workload of the page's PyTorch drawings (tests/cases/torch_html.sh), run under gputrace with
GPUTRACE_TORCH=history on a 1 GiB simulated device: 300 tensors of 512 KiB (75 small-pool
segments of 2 MiB), then 120 tensors of 6 MiB from two Python lines (40 segments of 20 MiB), two
of every three large ones freed, then 96 MiB asked: a fragmentation OOM in a snapshot of 115
segments, more than the page draws. Writes PyTorch's own figures at the OOM (its snapshot after
the OOM, memory_allocated/reserved, max_memory_*) to argv[1] as JSON. With argv[2] "many": 18
requests of 2 GiB instead, each an allocator OOM (more than the page draws), their count in
argv[1] ({"ooms": N}, PyTorch's num_ooms)."""
import json
import sys
import time

import torch

MiB = 1 << 20
out = {}
torch.empty(1, device="cuda")  # the bridge installs at the first segment
if sys.argv[2:] == ["many"]:
    for _ in range(18):
        try:
            torch.empty(2048 * MiB, dtype=torch.uint8, device="cuda")
        except torch.OutOfMemoryError:
            pass
    json.dump({"ooms": torch.cuda.memory_stats()["num_ooms"]}, open(sys.argv[1], "w"))
    sys.exit(0)
time.sleep(0.25)
small = [torch.empty(512 * 1024, dtype=torch.uint8, device="cuda") for _ in range(300)]
time.sleep(0.25)
big = []
for i in range(120):
    if i % 2:
        big.append(torch.empty(6 * MiB, dtype=torch.uint8, device="cuda"))  # site A
    else:
        big.append(torch.empty(6 * MiB, dtype=torch.uint8, device="cuda"))  # site B
time.sleep(0.25)
for i in range(120):
    if i % 3:
        big[i] = None
time.sleep(0.25)
try:
    torch.empty(96 * MiB, dtype=torch.uint8, device="cuda")
    sys.exit("viz.py: no OOM")
except torch.OutOfMemoryError:
    pass
snap = torch.cuda.memory._snapshot()
segs = [g for g in snap["segments"] if g["device"] == 0]
blocks = [b for g in segs for b in g["blocks"]]
out = {
    "segments": len(segs),
    "large_segments": sum(g["segment_type"] == "large" for g in segs),
    "reserved": sum(g["total_size"] for g in segs),
    "allocated_blocks": sum(b["state"] == "active_allocated" for b in blocks),
    "free_blocks": sum(b["state"] == "inactive" for b in blocks),
    "large_allocated_blocks": sum(b["state"] == "active_allocated" for g in segs if g["segment_type"] == "large"
                                  for b in g["blocks"]),
    "large_free_blocks": sum(b["state"] == "inactive" for g in segs if g["segment_type"] == "large"
                             for b in g["blocks"]),
    "largest_free_large": max(b["size"] for g in segs if g["segment_type"] == "large" for b in g["blocks"]
                              if b["state"] == "inactive"),
    "memory_allocated": torch.cuda.memory_allocated(),
    "memory_reserved": torch.cuda.memory_reserved(),
    "max_memory_allocated": torch.cuda.max_memory_allocated(),
    "max_memory_reserved": torch.cuda.max_memory_reserved(),
    "requested": 96 * MiB,
}
json.dump(out, open(sys.argv[1], "w"))
print(out)
