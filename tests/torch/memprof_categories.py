"""PyTorch's own memory-profiler categories for a small elementwise training run.

Runs a training step function several times under
    torch.profiler.profile(activities=[CPU, CUDA], profile_memory=True, record_shapes=True,
                           with_stack=True)
and reports PyTorch's categorisation of the CUDA memory
(torch.profiler._memory_profiler.MemoryProfile, i.e. prof._memory_profile(): PARAMETER,
OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL, and None for memory it
could not categorise) as JSON, next to the figures read from PyTorch's own objects.

Command line:
    python memprof_categories.py [MODEL_SPEC] > out.json
MODEL_SPEC is comma-separated key=value (defaults in brackets): optim=adamw|sgd [adamw] (sgd uses
momentum 0.9), layers=N [3], width=N [65536] floats per parameter, batch=N [4], steps=N [3],
set_to_none=0|1 [1] (zero_grad's argument), dtype=float32|float16|bfloat16 [float32].

Importable: categories(step, steps, device="cuda:0", expected=None) profiles `steps` calls of
`step()` and returns the same dict; make_model(spec) builds the model, its optimizer and a step.

Output (bytes everywhere; times in microseconds, PyTorch's memory-timeline clock):
    torch                 torch.__version__
    spec                  the parsed MODEL_SPEC
    categories            the category names, in PyTorch's order, "None" last
    peak                  {time_us, total_bytes, by_category}: the moment the categorised total
                          is highest (PyTorch's timeline, the profiled window only)
    max_by_category       each category's own maximum over the window
    series                {times_us, by_category: {category: [bytes...]}} PyTorch's coalesced
                          timeline for the device
    expected              from PyTorch's objects: parameter_bytes (sum of the parameters'
                          storage), optimizer_state_bytes (sum of the optimizer's state tensors
                          on the device), gradient_bytes (sum of .grad), input_bytes
    max_memory_allocated  torch.cuda.max_memory_allocated() over the profiled window (reset at
                          its start)
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile
from torch.profiler._memory_profiler import _CATEGORY_TO_INDEX, MemoryProfileTimeline

DEFAULTS = {"optim": "adamw", "layers": 3, "width": 65536, "batch": 4, "steps": 3,
            "set_to_none": 1, "dtype": "float32"}


def parse_spec(text):
    spec = dict(DEFAULTS)
    for item in filter(None, (text or "").split(",")):
        key, sep, value = item.partition("=")
        if not sep or key not in DEFAULTS:
            raise SystemExit(f"memprof_categories: bad MODEL_SPEC item {item!r} (keys: {', '.join(DEFAULTS)})")
        spec[key] = value if isinstance(DEFAULTS[key], str) else int(value)
    if spec["optim"] not in ("adamw", "sgd"):
        raise SystemExit(f"memprof_categories: optim={spec['optim']}: adamw or sgd")
    return spec


class Elementwise(torch.nn.Module):
    """Layers of h = tanh(h * w + b): parameters, activations saved for backward, no matmul (the
    simulated runtime has no cuBLAS)."""

    def __init__(self, layers, width, dtype):
        super().__init__()
        self.w = torch.nn.ParameterList(torch.nn.Parameter(torch.ones(width, dtype=dtype)) for _ in range(layers))
        self.b = torch.nn.ParameterList(torch.nn.Parameter(torch.zeros(width, dtype=dtype)) for _ in range(layers))

    def forward(self, x):
        for w, b in zip(self.w, self.b):
            x = torch.tanh(x * w + b)
        return x


def make_model(spec, device="cuda:0"):
    dtype = getattr(torch, spec["dtype"])
    model = Elementwise(spec["layers"], spec["width"], dtype).to(device)
    if spec["optim"] == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.ones(spec["batch"], spec["width"], dtype=dtype, device=device)

    def step():
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=bool(spec["set_to_none"]))

    def expected():
        on_dev = lambda t: torch.is_tensor(t) and t.device == torch.device(device)
        params = list(model.parameters())
        return {
            "parameter_bytes": sum(p.untyped_storage().nbytes() for p in params),
            "optimizer_state_bytes": sum(t.untyped_storage().nbytes() for s in opt.state.values()
                                         for t in s.values() if on_dev(t)),
            "gradient_bytes": sum(p.grad.untyped_storage().nbytes() for p in params if p.grad is not None),
            "input_bytes": x.untyped_storage().nbytes(),
        }

    return model, opt, step, expected


def categories(step, steps, device="cuda:0", expected=None):
    names = [c.name if c is not None else "None" for c in _CATEGORY_TO_INDEX]
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True,
                 record_shapes=True, with_stack=True) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    times, sizes = MemoryProfileTimeline(prof._memory_profile())._coalesce_timeline(device)
    # sizes[i] = [unused slot, then one column per category in _CATEGORY_TO_INDEX order]
    rows = [row[1:] for row in sizes]
    series = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    peak = max(range(len(rows)), key=lambda i: sum(rows[i])) if rows else None
    out = {
        "torch": torch.__version__,
        "categories": names,
        "peak": None if peak is None else {
            "time_us": times[peak],
            "total_bytes": sum(rows[peak]),
            "by_category": dict(zip(names, rows[peak])),
        },
        "max_by_category": {n: max(v, default=0) for n, v in series.items()},
        "series": {"times_us": times, "by_category": series},
        "max_memory_allocated": torch.cuda.max_memory_allocated(device),
    }
    if expected is not None:
        out["expected"] = expected()
    return out


def main(argv):
    spec = parse_spec(argv[1] if len(argv) > 1 else "")
    _, _, step, expected = make_model(spec)
    step()  # the optimizer's state exists before the profiled window, as in a running job
    out = categories(step, spec["steps"], expected=expected)
    out["spec"] = spec
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv)
