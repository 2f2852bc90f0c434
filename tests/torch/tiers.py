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
torch.autocast(bfloat16)), bf16 (parameters and input in bfloat16) or temp (the forward ends
with temporaries: its last output repeated 8 times (32 MiB) and summed, none saved for
backward, more than the rest of the step ever holds: the peak; PyTorch's figures around them
are written as "temp": memory_allocated() before the repeat, the blocks of the last output, of
the repeat and of the sum, max_memory_allocated() after the sum)."""
import json
import sys

import torch
import torch.utils.checkpoint

import tiers_steps  # the steps and the figures, shared with the GPU kit

case, out_path = sys.argv[1], sys.argv[2]
N, L, B = 1 << 18, 4, 4  # 1 MiB per parameter, a batch of 4 rows
STEPS, PAUSE = 3, 1.1  # the bridge takes at most one peak snapshot per second
DTYPE = torch.bfloat16 if case == "bf16" else torch.float32


class Model(torch.nn.Module):
    def __init__(self, ckpt=False, temp=False):
        super().__init__()
        self.temp, self.temp_figures = temp, None
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
        if self.temp:  # neither the last output, nor repeat's, nor the sum is saved for backward
            before = torch.cuda.memory_allocated()
            big = x.repeat(8, 1)
            s = big.sum()
            self.temp_figures = {
                "before": before, "last_output": tiers_steps.rounded(x.untyped_storage().nbytes()),
                "repeat": tiers_steps.rounded(big.untyped_storage().nbytes()),
                "sum": tiers_steps.rounded(s.untyped_storage().nbytes()),
                "max_after_sum": torch.cuda.max_memory_allocated()}
            del big
            x = x + s
        return x


torch.manual_seed(0)
model = Model(ckpt=case == "checkpoint", temp=case == "temp")
if case == "sgd":
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
else:
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
x = torch.rand(B, N, device="cuda", dtype=DTYPE)
points = tiers_steps.steps(model, opt, x, lambda out: out, case, STEPS, PAUSE,
                           set_to_none=case != "keepgrad")
json.dump({"case": case, "optimizer": type(opt).__name__, "points": points,
           "max_memory_allocated": torch.cuda.max_memory_allocated(),
           "temp": model.temp_figures,
           "max_memory_reserved": torch.cuda.max_memory_reserved()}, open(out_path, "w"))
print("tiers: ok", case)
