"""Training loops for memory by category (tests/cases/torch_tiers*.sh), on the simulated stack
under gputrace. An elementwise model (no matmul there): L parameters of N floats, a forward of
x * w -> sin per parameter, a sum as the loss, backward, an optimizer step.

Each step holds its activations across a pause at the end of the forward, so that the bridge's
peak snapshot (taken at the next tick, which the loss's launch after the pause queues) sees
them; the program writes PyTorch's own figures at that moment, read from its own objects, to
argv[2] as JSON: the storages of the parameters, their gradients and the optimizer's state, and
memory_allocated(), and what the forward left alive (memory_allocated() after it minus before).
Usage: tiers.py CASE OUT.json; CASE is adamw, sgd, keepgrad (zero_grad with
set_to_none=False), checkpoint (torch.utils.checkpoint per layer), autocast (the forward under
torch.autocast(bfloat16)) or bf16 (parameters and input in bfloat16)."""
import json
import sys
import time

import torch
import torch.utils.checkpoint

case, out_path = sys.argv[1], sys.argv[2]
N, L, B = 1 << 18, 4, 4  # 1 MiB per parameter, a batch of 4 rows
STEPS, PAUSE = 3, 1.1  # the bridge takes at most one peak snapshot per second
DTYPE = torch.bfloat16 if case == "bf16" else torch.float32


class Model(torch.nn.Module):
    def __init__(self, ckpt=False):
        super().__init__()
        self.ws = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.rand(N, device="cuda", dtype=DTYPE)) for _ in range(L)])
        self.ckpt = ckpt

    @staticmethod
    def layer(x, w):
        return torch.sin(x * w)

    def forward(self, x):
        for w in self.ws:
            if self.ckpt:
                x = torch.utils.checkpoint.checkpoint(self.layer, x, w, use_reentrant=False)
            else:
                x = self.layer(x, w)
        return x


def storages(tensors):
    """{data_ptr: nbytes} of the distinct CUDA storages among tensors."""
    out = {}
    for t in tensors:
        if t is not None and t.is_cuda:
            s = t.untyped_storage()
            out[s.data_ptr()] = s.nbytes()
    return out


def rounded(nbytes):
    """The caching allocator's block size for a request (c10 round_size: multiples of 512)."""
    return max(512, (nbytes + 511) // 512 * 512)


def roles(model, opt):
    params = list(model.parameters())
    w = storages(params)
    g = {k: v for k, v in storages(p.grad for p in params).items() if k not in w}
    st = {k: v for k, v in storages(t for s in opt.state.values() for t in s.values()
                                    if isinstance(t, torch.Tensor)).items()
          if k not in w and k not in g}
    return w, g, st


torch.manual_seed(0)
model = Model(ckpt=case == "checkpoint")
if case == "sgd":
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
else:
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
x = torch.rand(B, N, device="cuda", dtype=DTYPE)
points = []
for step in range(STEPS):
    before = torch.cuda.memory_allocated()
    if case == "autocast":
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
    else:
        out = model(x)
    forward_bytes = torch.cuda.memory_allocated() - before  # what the forward left alive
    time.sleep(PAUSE)
    loss = out.sum()  # its launch queues the due tick: the snapshot sees what lives now
    allocated = torch.cuda.memory_allocated()
    w, g, st = roles(model, opt)
    held = sum(rounded(v) for d in (w, g, st) for v in d.values())
    points.append({"step": step + 1, "allocated": allocated,
                   "weights": sum(w.values()), "gradients": sum(g.values()),
                   "optimizer_state": sum(st.values()), "rest_bytes": allocated - held,
                   "forward_bytes": forward_bytes})
    loss.backward()
    del out, loss
    opt.step()
    after = roles(model, opt)
    points[-1]["after_step"] = {"weights": sum(after[0].values()),
                                "gradients": sum(after[1].values()),
                                "optimizer_state": sum(after[2].values()),
                                "state_tensors": len(after[2]), "weight_tensors": len(after[0])}
    opt.zero_grad(set_to_none=case != "keepgrad")
json.dump({"case": case, "optimizer": type(opt).__name__, "points": points,
           "max_memory_allocated": torch.cuda.max_memory_allocated(),
           "max_memory_reserved": torch.cuda.max_memory_reserved()}, open(out_path, "w"))
print("tiers: ok", case)
