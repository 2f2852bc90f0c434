"""The PyTorch bridge's optimizer step hook alone (issue 23), two versions side by side.
Usage (on the simulated stack): tests/simrt/run-torch python bench/torch_step_hook.py BEFORE.py
[ROUNDS [CALLS]]
  BEFORE.py  an earlier python/gputrace_torch.py (e.g. git show REV:python/gputrace_torch.py)
Builds the step workload's optimizer (bench/torch_overhead.py: AdamW over 6 parameters of 256
floats, one real step made so that its state exists) and calls each version's _on_step(opt)
CALLS times in a row per round, versions interleaved in rotating order, with a state that emits
nowhere; also torch.cuda.memory_stats_as_nested_dict(0) alone. Back-to-back calls are steps
shorter than any gap: this version then reads memory_stats at the rate its rule allows
("after"); "after, read every step" sets STEP_STATS_COST_RATIO = 0; "after, its fingerprint
alone" calls _fingerprint; "after, fingerprint precomputed" the hook with a _fingerprint that
returns the key it took once (what the hook costs around it). Prints ns per call, median
over rounds, and the per-round ratio to BEFORE."""
import importlib.util
import statistics
import sys
import time

import torch

before_path = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 5000


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    m._S = m._State(torch, lambda b: None, "snapshots", 100)
    return m


here = __file__.rsplit("/", 2)[0] if "/" in __file__ else ".."
before = load("bridge_before", before_path)
after = load("bridge_after", here + "/python/gputrace_torch.py")
every = load("bridge_every", here + "/python/gputrace_torch.py")
every.STEP_STATS_COST_RATIO = 0
nofp = load("bridge_nofp", here + "/python/gputrace_torch.py")
_fp, _key = nofp._fingerprint, []


def _fp_once(s, o, e):  # "after, fingerprint precomputed": the hook around the fingerprint
    if not _key:
        _key.append(_fp(s, o, e))
    return _key[0]


nofp._fingerprint = _fp_once
reads = [0]


def counted(d):
    reads[0] += 1
    return torch.cuda.memory_stats_as_nested_dict(d)


class _Cuda:  # what the hook asks of torch.cuda, counted for "after"
    memory_stats_as_nested_dict = staticmethod(counted)


class _Torch:
    Tensor = torch.Tensor
    cuda = _Cuda


after._S.torch = _Torch

params = [torch.nn.Parameter(torch.randn(256, device="cuda")) for _ in range(6)]
opt = torch.optim.AdamW(params, lr=1e-3)
for p in params:
    p.grad = torch.ones_like(p)
opt.step()


def hook(m):
    return lambda: m._on_step(opt, (), {})


variants = [("before", hook(before)), ("after", hook(after)),
            ("after, read every step", hook(every)),
            ("after, its fingerprint alone",
             lambda: after._fingerprint(after._S, opt, after._S.optimizers[id(opt)])),
            ("after, fingerprint precomputed", hook(nofp)),
            ("memory_stats_as_nested_dict alone", lambda: torch.cuda.memory_stats_as_nested_dict(0))]
for _, f in variants:  # warm: first steps write the roles
    for _ in range(20):
        f()
res = {n: [] for n, _ in variants}
for r in range(rounds):
    k = r % len(variants)
    for n, f in variants[k:] + variants[:k]:
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            f()
        res[n].append((time.perf_counter_ns() - t0) / calls)
for n, _ in variants:
    ratios = [a / b for a, b in zip(res[n], res["before"])]
    print("%-36s %8.0f ns per call (rounds %s), x before %.3f" %
          (n, statistics.median(res[n]), " ".join("%.0f" % v for v in res[n]),
           statistics.median(ratios)))
print("after: memory_stats read at %d of %d calls" % (reads[0], after._S.optimizers[id(opt)][1]))
