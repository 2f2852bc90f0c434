"""GPU kit workloads (run by tests/gpu/run.sh on a real NVIDIA GPU).

python3 workloads.py train STEPS        MLP training loop; prints one JSON line of facts
python3 workloads.py profile STEPS      the same loop under torch.profiler: kernel count
python3 workloads.py frag OUT.json      a fragmentation OOM in PyTorch's caching allocator;
                                        PyTorch's figures to OUT.json (tests/torch/bridge.py's form)
python3 workloads.py tiers CASE OUT.json   a training step by memory category (CASE adamw or
                                        autocast); PyTorch's figures to OUT.json (tests/torch/tiers.py's)
python3 workloads.py cupy | jax         small pool-allocator snippets
"""
import json
import os
import sys
import time


def mlp_loop(steps, profile=False):
    import torch
    dev = torch.device("cuda")
    torch.manual_seed(0)
    ctx = None
    if profile:
        from torch.profiler import ProfilerActivity, profile as prof
        ctx = prof(activities=[ProfilerActivity.CUDA])
        ctx.__enter__()
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096), torch.nn.GELU(),
        torch.nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(256, 1024, device=dev)
    y = torch.randn(256, 1024, device=dev)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    facts = {"steps": steps}
    if ctx is not None:
        ctx.__exit__(None, None, None)
        facts["profiler_kernels"] = sum(1 for e in ctx.events() if e.device_type.name == "CUDA")
    stats = torch.cuda.memory_stats()
    facts.update({
        "segment_allocs": stats.get("segment.all.allocated", 0),
        "segment_frees": stats.get("segment.all.freed", 0),
        "reserved_peak": stats.get("reserved_bytes.all.peak", 0),
        "allocated_peak": stats.get("allocated_bytes.all.peak", 0),
        "step_ms_median": sorted(times[len(times) // 4:])[len(times[len(times) // 4:]) // 2] * 1e3,
        "alloc_conf": __import__("os").environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
    })
    print(json.dumps(facts))


MiB = 1 << 20


def frag(out_path):
    """A fragmentation OOM raised by PyTorch's caching allocator, as tests/torch/bridge.py's frag
    case on its 1 GiB simulated device: memory outside PyTorch (one cuMemAlloc) leaves about
    1 GiB free, 6 MiB tensors fill it (three per 20 MiB segment) to within 30-50 MiB, two of every
    three are freed (each segment stays partly used: nothing to release), then 64 MiB is asked.
    Writes PyTorch's own figures (its OOM observer, memory_stats(), _snapshot(), the OOM message)
    to out_path in bridge.py's form, for tests/torch/bridge_check.py; prints a summary line."""
    import ctypes
    import re
    import torch
    out = {"observer_calls": [], "ooms": []}

    def observer(device, size, limit, free):
        s = torch.cuda.memory_stats(device)
        out["observer_calls"].append({
            "device": device, "requested": size, "limit": limit, "device_free": free,
            "allocated": s["allocated_bytes.all.current"],
            "reserved": s["reserved_bytes.all.current"]})

    torch._C._cuda_attach_out_of_memory_observer(observer)
    torch.empty(1, device="cuda")  # CUDA initialized (the bridge installs at the first segment)
    free = torch.cuda.mem_get_info()[0]
    cuda = ctypes.CDLL("libcuda.so.1")
    grab, held = ctypes.c_uint64(0), 0
    if free > (1 << 30) + 64 * MiB:  # a real card: hold all but 1 GiB outside PyTorch
        held = free - (1 << 30)
        rc = cuda.cuMemAlloc_v2(ctypes.byref(grab), ctypes.c_size_t(held))
        if rc:
            sys.exit("frag: cuMemAlloc_v2 of %d bytes failed: %d" % (held, rc))
        free = torch.cuda.mem_get_info()[0]
    segments = (free - 30 * MiB) // (20 * MiB)
    ts = [torch.empty(6 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3 * segments)]
    for i in range(len(ts)):
        if i % 3:
            ts[i] = None
    try:
        torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as e:
        size = r"([0-9.]+ (?:bytes|KiB|MiB|GiB))"
        m = re.search(r"Tried to allocate %s.*? of which %s is free.*?%s is allocated by PyTorch, "
                      r"and %s is reserved by PyTorch but unallocated" % (size, size, size, size),
                      str(e), re.S)
        snap = torch.cuda.memory._snapshot()
        sizes = [b["size"] for g in snap["segments"] for b in g["blocks"]
                 if b["state"] == "inactive" and g["segment_type"] == "large"]
        out["ooms"].append({"message": list(m.groups()) if m else None,
                            "largest_free": max(sizes) if sizes else 0})
    s = torch.cuda.memory_stats()
    for k in ("num_ooms", "num_alloc_retries", "allocated_bytes.all.current",
              "reserved_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.peak",
              "segment.all.current"):
        out[k] = s[k]
    out["max_memory_allocated"] = torch.cuda.max_memory_allocated()
    out["max_memory_reserved"] = torch.cuda.max_memory_reserved()
    out["held_outside_pytorch"] = held
    if grab.value:
        cuda.cuMemFree_v2(grab)
    json.dump(out, open(out_path, "w"), indent=1)
    print(json.dumps({"oom": bool(out["ooms"]), "segments": segments, "num_ooms": s["num_ooms"],
                      "allocated": s["allocated_bytes.all.current"],
                      "reserved": s["reserved_bytes.all.current"]}))


def tiers(case, out_path):
    """Memory by category on a training step: on a real GPU a transformer (4
    TransformerEncoderLayer of width 512, a linear head, AdamW, fp32; case autocast: the forward
    under torch.autocast(bfloat16)); on the simulated GPU, which has no matmul, tests/torch/tiers.py's
    elementwise layers. The loop and the JSON written to out_path are tiers.py's (3 steps, each
    holding its activations across a 1.1 s pause so that the bridge's peak snapshot sees them; PyTorch's
    figures read from its own objects), for tests/torch/tiers_check.py."""
    import torch
    sim = torch.cuda.get_device_name(0) == "gputrace simulated GPU"
    torch.manual_seed(0)
    if sim:
        N = 1 << 18

        class Elementwise(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ws = torch.nn.ParameterList(
                    [torch.nn.Parameter(torch.rand(N, device="cuda")) for _ in range(4)])

            def forward(self, x):
                for w in self.ws:
                    x = torch.sin(x * w)
                return x

        model = Elementwise()
        x = torch.rand(4, N, device="cuda")

        def objective(out):
            return out
    else:
        d, classes = 512, 128  # every storage a multiple of 512 bytes: blocks of the same size
        model = torch.nn.Sequential(
            *[torch.nn.TransformerEncoderLayer(d, 8, 2048, dropout=0.0, batch_first=True)
              for _ in range(4)], torch.nn.Linear(d, classes)).cuda()
        x = torch.randn(16, 64, d, device="cuda")
        y = torch.randint(0, classes, (16 * 64,), device="cuda")

        def objective(out):
            return torch.nn.functional.cross_entropy(out.reshape(-1, classes), y)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
    import tiers_steps  # the loop and its figures are tiers.py's
    points = tiers_steps.steps(model, opt, x, objective, case, 3, 1.1)
    json.dump({"case": case, "optimizer": type(opt).__name__, "points": points,
               "model": "elementwise (simulated GPU: no matmul)" if sim else "transformer",
               "max_memory_allocated": torch.cuda.max_memory_allocated()}, open(out_path, "w"))
    print(json.dumps({"model": "elementwise" if sim else "transformer", "case": case,
                      "weights": points[-1]["weights"],
                      "optimizer_state": points[-1]["after_step"]["optimizer_state"]}))
    return model, opt, x  # alive until exit, as tiers.py's: the exit snapshot still sees them


def cupy_snippet():
    """CuPy's own count of device allocations: a memory hook's alloc callbacks, which CuPy calls
    for each allocation its pool takes from the device (not for blocks reused from the pool)."""
    import cupy as cp
    from cupy.cuda import memory_hook

    class Count(memory_hook.MemoryHook):
        name = "GputraceCount"

        def __init__(self):
            self.n, self.bytes = 0, 0

        def alloc_postprocess(self, **kw):
            self.n += 1
            self.bytes += kw["mem_size"]

    hook = Count()
    with hook:
        a = cp.arange(1 << 24, dtype=cp.float32)
        b = (a * 2).sum()
        cp.cuda.Device().synchronize()
    pool = cp.get_default_memory_pool()
    print(json.dumps({"sum": float(b), "pool_used": pool.used_bytes(), "pool_total": pool.total_bytes(),
                      "device_allocs": hook.n, "device_alloc_bytes": hook.bytes}))


def jax_snippet():
    import jax
    import jax.numpy as jnp
    x = jnp.ones((4096, 4096))
    y = (x @ x).block_until_ready()
    stats = jax.devices()[0].memory_stats() or {}
    print(json.dumps({"value": float(y[0, 0]), "devices": [str(d) for d in jax.devices()],
                      "peak_bytes_in_use": stats.get("peak_bytes_in_use", 0),
                      "bytes_limit": stats.get("bytes_limit", 0)}))


if __name__ == "__main__":
    what = sys.argv[1]
    if what in ("train", "profile"):
        mlp_loop(int(sys.argv[2]), profile=(what == "profile"))
    elif what == "frag":
        frag(sys.argv[2])
    elif what == "tiers":
        alive = tiers(sys.argv[2], sys.argv[3])
    elif what == "cupy":
        cupy_snippet()
    elif what == "jax":
        jax_snippet()
    else:
        sys.exit(f"unknown workload {what}")
