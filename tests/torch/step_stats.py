"""Short optimizer steps for tests/cases/torch_step_stats.sh: AdamW over two small parameters,
STEPS steps with no pause (launch-bound, well under a millisecond each on the simulated stack),
a third parameter added as a new group at step ADD_AT. After each step the program writes
PyTorch's own memory_allocated() and memory_reserved() (nothing runs on the GPU between the
optimizer's step post-hook and these reads) to argv[1] as JSON: {"points": [[allocated,
reserved], ...], "add_at": ADD_AT}."""
import json
import sys

import torch

STEPS, ADD_AT = 400, 250
ps = [torch.nn.Parameter(torch.rand(1024, device="cuda")) for _ in range(2)]
extra = torch.nn.Parameter(torch.rand(1024, device="cuda"))
opt = torch.optim.AdamW(ps, lr=1e-3)
x = torch.rand(1024, device="cuda")
points = []
for step in range(1, STEPS + 1):
    if step == ADD_AT:
        opt.add_param_group({"params": [extra]})
    loss = sum(((x * p).sin()).sum() for g in opt.param_groups for p in g["params"])
    loss.backward()
    del loss
    opt.step()
    points.append([torch.cuda.memory_allocated(), torch.cuda.memory_reserved()])
    opt.zero_grad(set_to_none=True)
json.dump({"points": points, "add_at": ADD_AT}, open(sys.argv[1], "w"))
print("step_stats: ok")
