"""Training loops whose peak the report finds only by replaying PyTorch's block events
(GPUTRACE_TORCH=history; tests/cases/torch_tiers_blocks.sh, torch_tiers_devices.sh), on the
simulated stack: an elementwise model (x * w -> sin per parameter, a sum as the loss), backward,
AdamW's step, zero_grad.

Usage: tiers_blocks.py CASE OUT.json; CASE:
  unsplit   tensors of 11.25 MiB: each request gets a 12 MiB segment (or a cached 12 MiB block)
            and the 0.75 MiB left is not split off (the large pool splits only when more than
            1 MiB remains): every block is bigger than its rounded request;
  maxsplit  (run with PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:32) tensors of 40.5 MiB: 42 MiB
            segments, 1.5 MiB left, which PyTorch would split but not for a request above
            max_split_size: every block is 42 MiB;
  roundup   (run with PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4, or a list form)
            parameters of 1,200,000 bytes and inputs of 2,400,000: PyTorch rounds them to the next
            quarter of their power-of-2 interval (1,310,720 and 2,621,440 bytes) where the
            default rounds to 512 (1,200,128 and 2,400,256);
  last      the last of 4 steps runs a batch 4 times larger: its peak comes after every peak
            snapshot, in the batch the exit snapshot closes;
  last_exit the same, then os._exit(3) (no atexit): the exit snapshot is the one the shim asks
            the bridge for at _exit;
  devices   (2 devices: GTSIM_DEVICES=2) the same model on cuda:0 and, twice as large, on
            cuda:1, one AdamW over both.
  devices_late  the same, its cuda:1 parameters made first: PyTorch's first CUDA call makes
            cuda:1's first block, so the bridge (a pending call, run at the next bytecode)
            installs when cuda:1 already holds memory and cuda:0 none.
OUT.json: PyTorch's own figures per device: max_memory_allocated(), and after the last step the
storages of the parameters and the optimizer's state (tiers_steps.roles) and the sizes of their
blocks in PyTorch's snapshot."""
import json
import sys

import torch

import tiers_steps

case, out_path = sys.argv[1], sys.argv[2]
MiB = 1 << 20

if case == "unsplit":
    shapes, batches = [(0, (11 * MiB + MiB // 4) // 4)] * 2, [1] * 3
elif case == "maxsplit":
    shapes, batches = [(0, (40 * MiB + MiB // 2) // 4)] * 2, [1] * 3
elif case == "roundup":
    shapes, batches = [(0, 300000)] * 2, [2] * 3
elif case in ("last", "last_exit"):
    shapes, batches = [(0, 1 << 18)] * 4, [2, 2, 2, 8]
elif case == "devices":
    shapes, batches = [(0, 1 << 18)] * 2 + [(1, 1 << 19)] * 2, [2] * 3
elif case == "devices_late":
    shapes, batches = [(1, 1 << 19)] * 2 + [(0, 1 << 18)] * 2, [2] * 3
else:
    sys.exit("tiers_blocks.py: unknown case " + case)

torch.manual_seed(0)
ws = [torch.nn.Parameter(torch.rand(n, device="cuda:%d" % d)) for d, n in shapes]
opt = torch.optim.AdamW(ws, lr=0.01)


class Holder(torch.nn.Module):  # tiers_steps.roles reads model.parameters()
    def __init__(self):
        super().__init__()
        self.ws = torch.nn.ParameterList(ws)


for b in batches:
    loss = 0
    for dev in sorted({d for d, _ in shapes}):
        x = torch.rand(b, max(n for d, n in shapes if d == dev), device="cuda:%d" % dev)
        for (d, n), w in zip(shapes, ws):
            if d == dev:
                x = torch.sin(x[:, :n] * w)
        loss = loss + x.sum().to("cuda:0")
    loss.backward()
    del x, loss
    opt.step()
    opt.zero_grad()

blocks = {b["address"]: b["size"] for g in torch.cuda.memory._snapshot()["segments"]
          for b in g["blocks"] if b["state"] == "active_allocated"}
out = {"case": case, "devices": {}}
w_all, _, st_all = tiers_steps.roles(Holder(), opt)
for dev in sorted({d for d, _ in shapes}):
    ptrs = {t.untyped_storage().data_ptr() for d_, t in zip([d for d, _ in shapes], ws) if d_ == dev}
    state = [t for p in ws if p.device.index == dev for t in opt.state[p].values()
             if isinstance(t, torch.Tensor) and t.is_cuda]
    state_ptrs = set(tiers_steps.storages(state))
    out["devices"][str(dev)] = {
        "weight_blocks": sum(blocks[p] for p in ptrs),  # the allocator's block sizes
        "state_blocks": sum(blocks[p] for p in state_ptrs),
        "max_memory_allocated": torch.cuda.max_memory_allocated(dev),
        "max_memory_reserved": torch.cuda.max_memory_reserved(dev),
        "weights": sum(v for k, v in w_all.items() if k in ptrs),
        "optimizer_state": sum(tiers_steps.storages(state).values()),
        "rounded_request": tiers_steps.rounded(shapes[0][1] * 4)}
with open(out_path, "w") as f:
    json.dump(out, f)
print("tiers_blocks: ok", case, "max_memory_allocated", torch.cuda.max_memory_allocated(0))
if case == "last_exit":
    import os
    sys.stdout.flush()
    os._exit(3)
