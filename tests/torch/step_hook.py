"""Optimizers whose sets the step hook must follow exactly, for tests/cases/torch_step_hook.sh.
Two phases of PHASE steps; every optimizer steps at every step.
  - "dense": AdamW over d (2 KiB), alone in the loss in the first phase (the fingerprint's
    shortcut; nothing else allocates, so its gradient keeps its address): a tensor put into its
    state at step EXTRA_ON and taken out at EXTRA_OFF (AdamW leaves keys it does not know
    alone), changes of its set that only the state's part of the fingerprint shows. Out of the
    loss in the second phase, its gradient set to None: the shortcut fails once, then is left.
  - "sparse": AdamW over a (4 KiB) and b (8 KiB): no gradient in the first phase; in the second
    a is in the loss at every step and b at every third only, so b's gradient is None at the
    other steps' hooks (zero_grad(set_to_none=True)) and its state exists from its first
    gradient on.
  - "oom": AdamW over e (1 KiB), in the loss at every step, zero_grad(set_to_none=True); at
    step OOM_AT, between zero_grad and the next forward, an allocation PyTorch cannot make: the
    bridge's OOM snapshot writes the set it finds then (no gradient), and the next step, whose
    set may be the very one of the step before, must write its set again.
  - "cpu": SGD with momentum over a CPU parameter: it holds nothing on a CUDA device, so its
    steps write no TORCH_STEP record.
After every step the program writes what each CUDA optimizer holds by PyTorch's own figures
(bytes of its parameters, of their gradients, of its state's CUDA tensors, and the storages'
addresses by role) to argv[1] as JSON: {"sparse": [[weights, gradients, state, {role:
[address, ...]}], ...], "dense": [...], "oom": [...]}. Then it runs on for QUIET
seconds with memory in use and no optimizer step: the bridge's periodic samples must go on."""
import json
import sys
import time

import torch

PHASE, EXTRA_ON, EXTRA_OFF, OOM_AT, QUIET = 30, 10, 20, 15, 1.0
a = torch.nn.Parameter(torch.rand(1024, device="cuda"))
b = torch.nn.Parameter(torch.rand(2048, device="cuda"))
d = torch.nn.Parameter(torch.rand(512, device="cuda"))
e = torch.nn.Parameter(torch.rand(256, device="cuda"))
c = torch.nn.Parameter(torch.rand(256))
sparse = torch.optim.AdamW([a, b], lr=1e-3)
dense = torch.optim.AdamW([d], lr=1e-3)
oom = torch.optim.AdamW([e], lr=1e-3)
cpu = torch.optim.SGD([c], lr=0.1, momentum=0.9)
x = torch.rand(1024, device="cuda")


def held(opt):
    def nbytes(t):
        return t.untyped_storage().nbytes() if t is not None and t.is_cuda else 0
    def addrs(ts):
        return sorted(t.untyped_storage().data_ptr() for t in ts if t is not None and t.is_cuda)
    ps = [p for g in opt.param_groups for p in g["params"]]
    state = [v for p in ps for v in opt.state.get(p, {}).values() if isinstance(v, torch.Tensor)]
    return [sum(nbytes(p) for p in ps), sum(nbytes(p.grad) for p in ps),
            sum(nbytes(v) for v in state),
            {"weights": addrs(ps), "gradients": addrs(p.grad for p in ps),
             "optimizer_state": addrs(state)}]


out = {"sparse": [], "dense": [], "oom": []}
for step in range(1, 2 * PHASE + 1):
    if step == OOM_AT:
        try:
            torch.empty(1 << 40, dtype=torch.uint8, device="cuda")
        except torch.cuda.OutOfMemoryError:
            pass
    if step <= PHASE:
        loss = (x[:512] * d).sum()
    else:
        loss = (x * a).sum()
        if step % 3 == 0:
            loss = loss + (x * b[:1024]).sum()
    loss = loss + (x[:256] * e).sum()
    loss.backward()
    if step == EXTRA_ON:
        dense.state[d]["extra"] = torch.zeros(256, device="cuda")
    if step == EXTRA_OFF:
        del dense.state[d]["extra"]
    sparse.step()
    dense.step()
    oom.step()
    out["sparse"].append(held(sparse))
    out["dense"].append(held(dense))
    out["oom"].append(held(oom))
    sparse.zero_grad(set_to_none=True)
    dense.zero_grad(set_to_none=step >= PHASE)
    oom.zero_grad(set_to_none=True)
    (c * 2).sum().backward()
    cpu.step()
    cpu.zero_grad()
json.dump(out, open(sys.argv[1], "w"))
end = time.monotonic() + QUIET
while time.monotonic() < end:
    y = x * 2
    time.sleep(0.01)
print("step_hook: ok")
