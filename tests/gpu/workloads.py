"""GPU kit workloads (run by tests/gpu/run.sh on a real NVIDIA GPU).

python3 workloads.py train STEPS        MLP training loop; prints one JSON line of facts
python3 workloads.py profile STEPS      the same loop under torch.profiler: kernel count
python3 workloads.py frag               a fragmentation OOM in PyTorch's caching allocator
python3 workloads.py cupy | jax         small pool-allocator snippets
"""
import json
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


def frag():
    """Alternate small and large blocks, free the large ones: reserved-but-unusable holes, then
    one request larger than any hole."""
    import torch
    free, total = torch.cuda.mem_get_info()
    chunk = (free // 2) // 64  # big blocks use ~half the card
    keep, holes = [], []
    try:
        for _ in range(64):
            holes.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
            keep.append(torch.empty(1 << 20, dtype=torch.uint8, device="cuda"))
        # Fill what is left so the driver cannot give a fresh segment.
        filler = []
        while True:
            try:
                filler.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
            except torch.OutOfMemoryError:
                break
        del holes  # free the big blocks: cached, each < the request below
        torch.empty(chunk * 3, dtype=torch.uint8, device="cuda")
        print(json.dumps({"oom": False}))
    except torch.OutOfMemoryError as e:
        msg = str(e)
        print(json.dumps({"oom": True, "message": msg[:2000],
                          "reserved_but_unallocated": "reserved but unallocated" in msg}))


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
        frag()
    elif what == "cupy":
        cupy_snippet()
    elif what == "jax":
        jax_snippet()
    else:
        sys.exit(f"unknown workload {what}")
