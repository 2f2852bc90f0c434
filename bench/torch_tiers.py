"""What the bridge's optimizer step hook costs per step (issue 21): the bridge module is loaded
from python/ with an emit that keeps the bytes (no shim), its hook is called as PyTorch calls it
after an optimizer step, on AdamW and SGD(momentum) optimizers over P parameters of 256 floats,
all with gradients and state. Prints, per P, the median of 200 steady-state calls (the set
unchanged: one walk of the tensors and one hash), the first call (the whole set written), and
the median of PyTorch's own opt.step() on the same parameters for scale (on the simulated stack
its kernels run on the CPU: a real GPU's step is shorter for small tensors, the hook's cost is
host Python either way). Run on the simulated stack: tests/simrt/run-torch python
bench/torch_tiers.py [P ...]"""
import importlib.util
import os
import statistics
import sys
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("gputrace_torch",
                                              os.path.join(here, "..", "python", "gputrace_torch.py"))
bridge = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bridge)
torch.empty(1, device="cuda")
sink = []
assert bridge.install(sink.append, "stats", 0)


def median_ns(fn, n):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    return statistics.median(ts)


for p in [int(a) for a in sys.argv[1:]] or [10, 100, 1000]:
    for cls in (torch.optim.AdamW, torch.optim.SGD):
        params = [torch.nn.Parameter(torch.rand(256, device="cuda")) for _ in range(p)]
        kw = {"momentum": 0.9} if cls is torch.optim.SGD else {}
        opt = cls(params, lr=0.01, **kw)
        for q in params:
            q.grad = torch.ones_like(q)
        opt.step()  # state made (the hook ran once: its set is written)
        sink.clear()
        opt2 = cls(params, lr=0.01, **kw)
        opt2.state = opt.state
        t0 = time.perf_counter_ns()
        bridge._on_step(opt2, (), {})  # a new optimizer: the whole set written
        first = time.perf_counter_ns() - t0
        written = sum(len(b) for b in sink)
        hook = median_ns(lambda: bridge._on_step(opt, (), {}), 200)
        step = median_ns(opt.step, 20)  # includes the hook itself once
        print("%-6s params=%-5d hook_ns=%-9.0f first_ns=%-9.0f first_bytes=%-7d step_ns=%.0f" %
              (cls.__name__, p, hook, first, written, step))
